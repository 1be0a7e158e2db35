"""Mooring analysis: the restoring force of a moored body over its offset, and its static offset under a
steady environmental load (the quasi-static design checks of a spread, as MoorPy and OrcaFlex give them)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import spatial
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


def _others(model, i):
    """(nv,) bools: every velocity direction but those of body ``i``'s joint (the other bodies, which settle)."""
    free = np.ones(model.nv, bool)
    free[model.v_start[i] : model.v_start[i] + model.joints[i].nv] = False
    return free


def restoring_curve(system: System, body: str, q0, offsets, direction=(1.0, 0.0)):
    """The world force (n, 3) N and yaw moment (n,) N m on ``body`` (every element's load on it) with the
    body moved from ``q0`` by each horizontal offset (m) along ``direction`` (x, y), at rest; and each
    element's outputs there (a dict of (n, …) arrays).  At each offset the other bodies settle (their
    static equilibrium with the body held there: a cargo hangs under its crane tip again), in calm water
    (:func:`static_offset` adds the sea's current); the body's own heave, roll and pitch stay at ``q0``'s."""
    from .simulation import static_equilibrium

    i = _free_body(system, body)
    model = system.model
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    q0 = np.asarray(q0, float)
    others = _others(model, i)
    qs, last, q = [], 0.0, q0
    for s in np.asarray(offsets, float).reshape(-1):  # each from the last one settled, moved on (the others carried)
        q = _posed(model, q, i, np.array([*((s - last) * d), 0.0]))
        if others.any():
            q = np.asarray(static_equilibrium(system, q, free=others))
        qs.append(q)
        last = s
    force, yaw, outs = _curve(system, jnp.asarray(np.stack(qs), dtype=model.inertia.dtype), i)
    return np.asarray(force), np.asarray(yaw), {k: np.asarray(v) for k, v in outs.items()}


@system_jit
def _curve(system: System, qs, i: int, forcing=None, t=0.0):
    """One compiled program per system structure and number of offsets (the configurations are an argument);
    ``forcing`` and ``t``: the sea the system rests in (default calm water)."""
    nv = system.model.nv

    def at(q):
        v = jnp.zeros(nv, q.dtype)
        z = system.initial_states(q, v)
        f_ext, _, _, ctx = system.loads(t, q, v, z, forcing)
        R = ctx.kin.rotation(i)
        force, moment = R @ f_ext[i, :3], R @ f_ext[i, 3:]
        return force, moment[2], system.outputs(t, (q, v, z), forcing)

    return jax.vmap(at)(qs)


def _posed(model, q0, i, x):
    """``q0`` with body ``i`` (on a free joint) moved by (dx, dy) (world) and turned by dyaw about the world's z;
    the other bodies on free joints of their own are carried along by (dx, dy), as a start for their settling."""
    q = np.asarray(q0, float).copy()
    for k, j in enumerate(model.joints):
        if k != i and isinstance(j, Free) and model.parents[k] < 0:
            q[model.q_start[k] : model.q_start[k] + 2] += x[:2]
    s = model.q_start[i]
    q[s : s + 2] += x[:2]
    turn = np.array([np.cos(x[2] / 2), 0.0, 0.0, np.sin(x[2] / 2)])  # about the world's z, then q0's rotation
    q[s + 3 : s + 7] = np.asarray(spatial.quat_multiply(turn, q[s + 3 : s + 7]))
    return q


def static_offset(system: System, body: str, q0, *, tol: float = 1e-6, max_iter: int = 50):
    """The body's equilibrium in surge, sway and yaw under everything in ``system``, a steady load included
    (``steady_force``) and the sea's current in full (past every element's fade-in; a lumped line in its
    still-water shape, its drag only through its fairlead's segment), with the other bodies settling with it
    (a hanging cargo follows its crane tip) and the body's heave, roll and pitch held at ``q0``'s, as
    :func:`restoring_curve` holds them: the configuration q and the body's offset (x, y, yaw) from ``q0``.

    With other bodies, Newton's method on the body's (x, y, yaw) over its settled configurations (the
    others' static equilibrium at each), its Jacobian by differences: solving all of them at once, the
    merit was the stiff cargo's acceleration and the line search stalled far from the offset.  ``tol``:
    the largest force over the body's mass (m/s²) and yaw moment over its yaw inertia (rad/s²) left."""
    from .equilibrium import steady_sea
    from .simulation import static_equilibrium

    i = _free_body(system, body)
    model = system.model
    others = _others(model, i)
    start = model.q_start[i]
    if not others.any():
        free = np.zeros(model.nv, bool)
        v0 = model.v_start[i]
        free[[v0, v0 + 1, v0 + 5]] = True  # the Free joint's velocity: linear then angular, body axes
        q = static_equilibrium(system, q0, free=free, tol=tol, max_iter=max_iter, current=True)
    else:
        scale = np.array([1.0 / float(model.inertia[i, 0, 0])] * 2 + [1.0 / float(model.inertia[i, 5, 5])])  # 1/m, 1/I_zz
        forcing, t = steady_sea(system)
        steady = (forcing, jnp.asarray(t, dtype=model.inertia.dtype))

        last = {"x": np.zeros(3), "q": np.asarray(q0, float)}

        def settled(x):  # from the last settled configuration, moved to x
            q = np.asarray(static_equilibrium(system, _posed(model, last["q"], i, x - last["x"]), free=others, current=True))
            last.update(x=x, q=q)
            force, yaw, _ = _curve(system, jnp.asarray(q[None], dtype=model.inertia.dtype), i, *steady)
            return q, np.array([float(force[0, 0]), float(force[0, 1]), float(yaw[0])]) * scale

        x = np.zeros(3)
        q, r = settled(x)
        for _ in range(max_iter):
            if np.max(np.abs(r)) < tol:
                break
            h = np.array([1e-4, 1e-4, 1e-6])
            J = np.stack([(settled(x + h[k] * np.eye(3)[k])[1] - r) / h[k] for k in range(3)], axis=1)
            dx = -np.linalg.lstsq(J, r, rcond=1e-12)[0]
            lam = 1.0
            for _ in range(30):
                qn, rn = settled(x + lam * dx)
                if np.max(np.abs(rn)) < np.max(np.abs(r)):
                    break
                lam *= 0.5
            x, q, r = x + lam * dx, qn, rn
        else:
            raise MooringError(f"{system.name}: no static offset of {body!r} found after {max_iter} Newton steps "
                               f"(largest residual {np.max(np.abs(r)):.3g})")
        q = jnp.asarray(q)
    dq = np.asarray(q[start:start + 2]) - np.asarray(q0)[start:start + 2]
    w, x, y, z = np.asarray(q[start + 3:start + 7])
    yaw = float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))
    return q, np.array([dq[0], dq[1], yaw])


def with_mean_drift(system: System, report=None) -> System:
    """``system`` with each wave-drift element (:class:`~jaxmbd.hydro.drift.WaveDrift`) replaced by its mean drift in
    the system's sea as a steady load (body axes at rest), for :func:`static_offset`; unchanged without one or
    without an irregular sea.  ``report(line)``: told each element's mean."""
    from .forces.steady import SteadyForce

    drifts = [f for f in system.forces if getattr(f, "kind", None) == "wave_drift"]
    if not drifts or system.waves is None or getattr(system.waves, "spectrum", None) is None:
        return system
    forces = []
    for f in system.forces:
        if f not in drifts:
            forces.append(f)
            continue
        m = f.mean_in(system.waves)
        if report is not None:
            report(f"{f.name}: mean wave drift in the sea state: surge {m[0] / 1e3:.4g} kN, sway {m[1] / 1e3:.4g} kN, "
                   f"yaw {m[2] / 1e3:.4g} kN m (body axes at rest)")
        forces.append(SteadyForce(name=f.name, body=f.body, force=jnp.asarray([m[0], m[1], 0.0]), point=jnp.asarray(f.point),
                                  moment=jnp.asarray([0.0, 0.0, m[2]])))
    return System(system.model, tuple(forces), waves=system.waves, loops=system.loops, name=system.name)
