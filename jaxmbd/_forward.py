"""Whether a program is being traced for forward-mode derivatives, where the faster form of a derivative rule
depends on the mode: read at trace time by the rules (:mod:`jaxmbd.spatial`'s cross product,
:mod:`jaxmbd.dynamics.dense`), set by :func:`forward_mode` (``jaxmbd.dynamics.dense.dense_value``)."""

from __future__ import annotations

import contextlib
import contextvars

FORWARD_MODE = contextvars.ContextVar("jaxmbd_forward_mode", default=False)


@contextlib.contextmanager
def forward_mode():
    """Within it, programs are traced for forward-mode derivatives, and two rules take the forms that suit
    a program which runs the value and the tangents together:

    - the dynamics rule's value v̇ is solved from the joint-space inertia's factor that its tangents
      need anyway (two triangular solves) instead of the articulated-body recursion (the crane vessel's
      forward-mode stage: 232 kernels against 311 with the recursion).  Reverse mode wants the recursion:
      its forward pass runs only the value (the factor is formed in the backward pass, where the tangents
      are), and the recursion is the cheaper value (the crane vessel's tuning objective over 200 s: forward
      pass 1.15x the forward run against 1.50x, the gradient 4.5-4.7x against 5.0-5.2x; benchmarks/NOTES.md,
      "The rule's value");
    - the cross products' tangents (:func:`jaxmbd.spatial.cross`) are written component by component,
      which XLA fuses with their neighbours, instead of as products with the Levi-Civita symbol, whose
      transposes suit reverse mode (benchmarks/NOTES.md, "Cross products' tangents by mode").

    Read when a program is traced: :func:`jaxmbd.optim.value_and_grad` traces forward mode within it.
    Both forms give the same numbers to roundoff."""
    token = FORWARD_MODE.set(True)
    try:
        yield
    finally:
        FORWARD_MODE.reset(token)
