"""Mooring analysis: the restoring force of a moored body over its offset, and its static offset under a
steady environmental load (the quasi-static design checks of a spread, as MoorPy and OrcaFlex give them)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._xla import system_jit
from .errors import JaxmbdError
from .joints import Free
from .system import System


class MooringError(JaxmbdError, ValueError):
    """A mooring analysis asked of a body it cannot move (not on a free joint, or unknown)."""


def _free_body(system: System, body: str):
    model = system.model
    if body not in model.body_names:
        raise MooringError(f"mooring analysis: no body {body!r}; bodies: {list(model.body_names)}")
    i = model.index(body)
    if not isinstance(model.joints[i], Free):
        raise MooringError(f"mooring analysis: body {body!r} is on a {type(model.joints[i]).__name__} joint; "
                           "offsets move a body on a free joint")
    return i


def restoring_curve(system: System, body: str, q0, offsets, direction=(1.0, 0.0)):
    """The world force (n, 3) N and yaw moment (n,) N m on ``body`` (every element's load on it) with the
    body moved from ``q0`` by each horizontal offset (m) along ``direction`` (x, y), at rest; and each
    element's outputs there (a dict of (n, …) arrays)."""
    i = _free_body(system, body)
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    q0 = jnp.asarray(q0)
    force, yaw, outs = _curve(system, q0, jnp.asarray(offsets, dtype=q0.dtype), jnp.asarray(d, dtype=q0.dtype), i)
    return np.asarray(force), np.asarray(yaw), {k: np.asarray(v) for k, v in outs.items()}


@system_jit
def _curve(system: System, q0, offsets, d, i: int):
    """One compiled program per system structure (the offsets, the direction and the start are arguments)."""
    start = system.model.q_start[i]
    nv = system.model.nv

    def at(s):
        q = q0.at[start].add(s * d[0]).at[start + 1].add(s * d[1])
        v = jnp.zeros(nv, q.dtype)
        z = system.initial_states(q, v)
        f_ext, _, _, ctx = system.loads(0.0, q, v, z)
        R = ctx.R[i]
        force, moment = R @ f_ext[i, :3], R @ f_ext[i, 3:]
        return force, moment[2], system.outputs(0.0, (q, v, z))

    return jax.vmap(at)(offsets)


def static_offset(system: System, body: str, q0, *, tol: float = 1e-6, max_iter: int = 50):
    """The body's equilibrium in surge, sway and yaw (its other joints' coordinates and the other bodies
    held) under everything in ``system``, a steady load included (``steady_force``): the configuration
    q and the body's offset (x, y, yaw) from ``q0``."""
    from .simulation import static_equilibrium

    i = _free_body(system, body)
    model = system.model
    free = np.zeros(model.nv, bool)
    v0 = model.v_start[i]
    free[[v0, v0 + 1, v0 + 5]] = True  # the Free joint's velocity: linear then angular, body axes
    q = static_equilibrium(system, q0, free=free, tol=tol, max_iter=max_iter)
    start = model.q_start[i]
    dq = np.asarray(q[start:start + 2]) - np.asarray(q0)[start:start + 2]
    w, x, y, z = np.asarray(q[start + 3:start + 7])
    yaw = float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))
    return q, np.array([dq[0], dq[1], yaw])
