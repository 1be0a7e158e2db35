"""The static equilibrium of a system: the joint coordinates (and elastic coordinates) at which it rests,
v = 0 and v̇ = 0, by Newton's method with a damped least-squares step; the start of a run
(:func:`jaxmbd.run.solve_start`) and of its derivatives (:func:`jaxmbd.optim.rollout.equilibrate`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._xla import system_jit
from .dynamics.coupled import mass_matrix_equations
from .dynamics.linalg import small_spd_solve
from .errors import SimulationError
from .system import Inputs, System, driven_dofs


def _flex_parts(system):
    """(start in z, n_flex) of every flexible element's elastic coordinates."""
    return [(s.start, f.n_flex) for f, s in zip(system.forces, system.state_slices()) if f.n_flex]


def _rest_states(system, q, qf):
    """Internal states at rest: initial values, elastic coordinates q_f (velocities zero)."""
    v = jnp.zeros(system.model.nv, dtype=q.dtype)
    z = system.initial_states(q, v)
    off = 0
    for start, k in _flex_parts(system):
        z = z.at[start : start + 2 * k].set(jnp.concatenate([qf[off : off + k], jnp.zeros(k, dtype=q.dtype)]))
        off += k
    return z


def rest_accelerations(system: System, q, qf=None, mask=None, params=None, forcing=None, t=0.0, held: bool = False):
    """The residual of static equilibrium: [v̇ (times ``mask``, (nv,)); q̈_f] of ``system`` at rest at
    ``q`` (v = 0, the elements' states at their initial values, the flexible bodies' elastic
    coordinates at ``qf`` with q̇_f = 0).  Both equilibrium solvers drive it to zero: the robust
    :func:`static_equilibrium` (least squares, line search) and the differentiable
    :func:`jaxmbd.optim.rollout.equilibrate` (a fixed number of Newton steps).  ``forcing`` (an
    :class:`~jaxmbd.system.Inputs`, default calm water) and ``t``: the sea the system rests in, at time ``t``.

    ``held`` (static): the directions ``mask`` leaves out are held where they are, not let go: the free ones'
    accelerations with the held ones' zero (M_ff v̇_f = b_f), so that they vanish where the free directions'
    forces do, whatever the mass matrix couples (a hull held in roll whose added mass couples roll and sway; a
    cargo hanging from a hull held away from its balance hangs plumb).  Without ``held``, every direction's
    acceleration of the unconstrained system, as at a run's start.  Trees without loops, flexible bodies or
    prescribed motions only (for those the unconstrained accelerations are taken)."""
    qf = jnp.zeros(sum(k for _, k in _flex_parts(system)), dtype=q.dtype) if qf is None else qf
    mask = 1.0 if mask is None else mask
    v = jnp.zeros(system.model.nv, dtype=q.dtype)
    z = _rest_states(system, q, qf)
    inputs = Inputs(params=params) if forcing is None else forcing
    if held and not (system.loops or system.drivers or _flex_parts(system)):
        f_ext, tau, _, ctx = system.loads(t, system.model.normalise(q), v, z, inputs)
        M, b = mass_matrix_equations(system.model, ctx, tau, f_ext, system.extra_inertia(ctx), system.coupled_inertia(ctx))
        m = jnp.broadcast_to(jnp.asarray(mask, dtype=q.dtype), (system.model.nv,))
        vdot = small_spd_solve(M * m[:, None] * m[None, :] + jnp.diag(1.0 - m), b * m)  # the held rows: identity
        return vdot * m
    _, vdot, zdot = system.rhs(t, (q, v, z), inputs)
    return jnp.concatenate([vdot * mask] + [zdot[start + k : start + 2 * k] for start, k in _flex_parts(system)])


def _residual(system, q, qf, mask, params, forcing, t, held):
    return rest_accelerations(system, q, qf, mask, params, forcing, t, held)


EQUILIBRIUM_FD_STEP = 1e-6
"""The step (m, rad, and the flexible bodies' elastic coordinates) of the equilibrium's Jacobian by central
differences."""


def _newton_at(system, q, qf, delta, lam, mask, params, exact, forcing=None, t=0.0, held=False):
    """At the trial point (q ⊕ λ δ, q_f + λ δ_f): the point, the largest residual there and the Newton step
    from there (least squares).  One program serves the first step (λ = 0), the line search and the next
    step, so a system's equilibrium compiles one program, not a step's and a trial's.

    The Jacobian is by central differences (step :data:`EQUILIBRIUM_FD_STEP`) from one batched evaluation
    of the residual at the point and its 2n neighbours, so the residual's program is all that is compiled
    (forward mode compiles the right-hand side's tangent beside it: 12.6 s against 5.0 s on the floating
    crane); its error, of order h² and ε/h (1e-10 relative), leaves Newton's convergence to the 1e-10
    tolerance as it was (the floating crane's and the tuning barge's equilibria agree with forward mode's
    to 3e-14 m).  ``exact``: forward-mode derivatives, which :func:`static_equilibrium` takes for systems
    with an element not smooth at rest (:attr:`~jaxmbd.system.ForceElement.smooth_at_rest`: a hull's
    pressure clipped at the waterline, where the differences stalled Newton at 2.5e-3 m/s²) and turns to
    when the differences give no descent."""
    model = system.model
    nv = model.nv
    q, qf = model.integrate(q, delta[:nv], lam), qf + lam * delta[nv:]

    def r_of(d):
        return _residual(system, model.integrate(q, d[:nv] * mask), qf + d[nv:], mask, params, forcing, t, held)

    n = nv + qf.shape[0]
    if exact:
        d0 = jnp.zeros(n, dtype=q.dtype)
        r, J = r_of(d0), jax.jacfwd(r_of)(d0)
    else:
        E = EQUILIBRIUM_FD_STEP * jnp.eye(n, dtype=q.dtype)
        R = jax.vmap(r_of)(jnp.concatenate([jnp.zeros((1, n), q.dtype), E, -E]))
        r, J = R[0], (R[1 : n + 1] - R[n + 1 :]).T / (2.0 * EQUILIBRIUM_FD_STEP)
        # a column within the differences' roundoff of zero is a direction the residual does not depend on
        # (the surge of a free-floating hull): zero, as forward mode gives it, or least squares would move along
        # it by the roundoff's inverse
        norms = jnp.sqrt(jnp.sum(J * J, axis=0))
        J = jnp.where(norms[None, :] > 1e-6 * jnp.max(norms), J, 0.0)
    step = -jnp.linalg.lstsq(J, r, rcond=1e-12)[0]
    return q, qf, jnp.max(jnp.abs(r)), jnp.concatenate([step[:nv] * mask, step[nv:]])


_newton_step = system_jit(lambda system, q, qf, delta, lam, mask, params, forcing, t, held:
                          _newton_at(system, q, qf, delta, lam, mask, params, False, forcing, t, held), one_off=True)
_newton_step_exact = system_jit(lambda system, q, qf, delta, lam, mask, params, forcing, t, held:
                                _newton_at(system, q, qf, delta, lam, mask, params, True, forcing, t, held), one_off=True)


def steady_sea(system: System, params=None):
    """The steady part of ``system``'s sea, for a system at rest in it: (Inputs, t), the current alone (calm water, no
    gusts) at a time past every element's fade-in (``ramp_time``), so that the current acts in full; (None, 0.0) for
    a system without a current."""
    current = getattr(system.waves, "current", None)
    if current is None:
        return None, 0.0
    from .hydro.sea import SeaState

    t = max([float(np.max(np.asarray(getattr(f, "ramp_time", 0.0)))) for f in system.forces] + [0.0])
    return system.inputs(SeaState(current=current).realise(None), params), t + 1.0


def holds(free) -> bool:
    """Whether ``free`` (nv,) leaves directions out: they are then held where they are, not let go
    (:func:`rest_accelerations`' ``held``)."""
    return free is not None and not bool(np.all(np.asarray(free)))


def static_equilibrium(system: System, q0=None, *, free=None, tol: float = 1e-10, max_iter: int = 50, params=None,
                       return_states: bool = False, exact: bool | None = None, current: bool = False):
    """Configuration where the system rests (v = 0): ropes carry the weight, springs and hydrostatics balance it.

    Newton's method on the joint accelerations v̇(q, v = 0) = 0 over the
    increments δ of the joint coordinates (q ⊕ δ), solved by least squares so
    that directions with no restoring force (surge of an unmoored vessel) stay
    where they are, with a backtracking line search.  ``free`` (nv,) of bools
    limits which velocity directions move (default: all).  Flexible bodies
    (elements with elastic coordinates q_f) are solved together with the
    joints: [v̇; q̈_f](q ⊕ δ, q_f) = 0, so a boom under a hanging load rests
    bent.  Other internal states are at their initial values.

    The Jacobian is by central differences (one compiled program of the residual), or by forward mode
    with ``exact`` (default: where an element is not smooth at rest; see :func:`_newton_at`).

    ``current``: the system rests in its sea's current, in full (:func:`steady_sea`: a mooring's static
    offset); by default without it, as a run starts (where the current then acts from the first step on the
    elements that feel it without a fade-in: a hull current load, ropes, lumped lines and beams in it).  The
    elements' internal states stay at their initial values: a lumped line rests in its still-water shape,
    and its drag enters only through its fairlead's segment.

    Returns q, or ``(q, z0)`` with ``return_states=True``: the internal states
    at rest (the bent shape of each flexible body), to pass to
    ``simulate(..., z0=z0)``.  Raises SimulationError when it does not converge
    to ``tol`` (m/s², rad/s², and the elastic accelerations).
    """
    model = system.model
    q = model.normalise(model.neutral() if q0 is None else jnp.asarray(q0, dtype=model.inertia.dtype))
    q = q.astype(model.inertia.dtype)
    mask = jnp.ones(model.nv, dtype=q.dtype) if free is None else jnp.asarray(free, dtype=q.dtype)
    mask = mask.at[driven_dofs(system)].set(0.0)  # a prescribed body rests where its motion puts it
    qf = jnp.zeros(sum(k for _, k in _flex_parts(system)), dtype=q.dtype)
    zero = jnp.zeros(model.nv + qf.shape[0], dtype=q.dtype)
    if exact is None:
        exact = not all(f.smooth_at_rest for f in system.forces)
    forcing, t = steady_sea(system, params) if current else (None, 0.0)
    held = holds(free)
    t = jnp.asarray(t, dtype=q.dtype)
    step = _newton_step_exact if exact else _newton_step
    q, qf, rn_arr, delta = step(system, q, qf, zero, jnp.asarray(0.0, dtype=q.dtype), mask, params, forcing, t, held)
    rn = r0 = float(rn_arr)
    for _ in range(max_iter):
        if not np.isfinite(rn):
            break
        if rn < tol:
            return (q, _rest_states(system, q, qf)) if return_states else q
        lam, descent = 1.0, False
        for _ in range(20):  # backtracking: the first trial point whose residual is smaller
            out = step(system, q, qf, delta, jnp.asarray(lam, dtype=q.dtype), mask, params, forcing, t, held)
            if float(out[2]) < rn:
                descent = True
                break
            lam *= 0.5
        if not descent and step is _newton_step:  # the differences' step does not descend: exact derivatives
            step = _newton_step_exact
            q, qf, rn_arr, delta = step(system, q, qf, zero, jnp.asarray(0.0, dtype=q.dtype), mask, params, forcing, t, held)
            rn = float(rn_arr)
            continue
        q, qf, rn_arr, delta = out
        rn = float(rn_arr)
    if rn < tol:  # the last line search's point
        return (q, _rest_states(system, q, qf)) if return_states else q
    raise SimulationError(
        f"{system.name}: no static equilibrium found after {max_iter} Newton steps "
        f"(largest residual acceleration {rn:.3g}, from {r0:.3g}); check that every free direction "
        "has a restoring force (rope, mooring, hydrostatics) or fix it with `free`"
    )
