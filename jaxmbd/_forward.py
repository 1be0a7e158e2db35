"""Whether a program is being traced for forward-mode derivatives, where the faster form of a derivative rule
depends on the mode (read at trace time; set by :func:`jaxmbd.dynamics.dense.dense_value`)."""

from __future__ import annotations

import contextvars

FORWARD_MODE = contextvars.ContextVar("jaxmbd_forward_mode", default=False)
