"""Differentiable runs: parameters -> system -> (equilibrium) -> fixed-step solve -> outputs -> objective.

Everything here is pure JAX on top of :func:`jaxmbd.simulation.solve` (the
fixed-step path: nested ``lax.scan``s, every right-hand side ``jax.checkpoint``-ed; reverse mode
keeps every stage's state or, with ``Integrator(checkpoint="saves")`` or beyond the memory budget,
one state per save and runs each save interval again).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.dense import dense_value
from ..equilibrium import holds
from ..simulation import Integrator, rest_accelerations, solve, solve_with_extremes
from ..system import Inputs
from . import objectives as obj


def outputs_of(system, ts, ys, waves=None, params=None, *, lazy: bool = False, dynamics=None):
    """Named outputs at every saved state (``system.outputs`` vmapped over time).

    ``dynamics``: the solver's ``(dy/dt, f_ext)`` at the saves (``solve(..., dynamics=True)``), which
    the joint wrenches then use instead of evaluating the right-hand side again.

    ``lazy``: a :class:`LazyOutputs` mapping instead of a dict, which computes each group of outputs
    (one force element's, or the joint wrenches) when it is first read: an objective then traces and
    differentiates only the outputs it uses (for the tuning study's objective, a third less tracing
    and compile time).  It lives inside one trace: read it in the function that made it."""
    forcing = system.inputs(waves, params)
    if lazy:
        return LazyOutputs(system, ts, ys, forcing, dynamics)
    return jax.vmap(lambda t, y, d: system.outputs(t, y, forcing, dynamics=d))(jnp.asarray(ts), tuple(ys), dynamics)


class LazyOutputs(Mapping):
    """The outputs of a run as a read-only mapping, each group computed on first use (see
    :func:`outputs_of`); iterating over it or asking its length computes all of them."""

    def __init__(self, system, ts, ys, forcing, dynamics=None):
        self._system, self._ts, self._ys, self._forcing = system, jnp.asarray(ts), tuple(ys), forcing
        self._dynamics = dynamics
        self._groups = system.output_groups()
        self._values: dict = {}
        self.computed: set = set()

    def _compute(self, groups):
        groups = [g for g in groups if g not in self.computed]
        if groups:
            sys_, forcing = self._system, self._forcing
            self._values.update(jax.vmap(lambda t, y, d: sys_.outputs(t, y, forcing, only=groups, dynamics=d))(
                self._ts, self._ys, self._dynamics))
            self.computed.update(groups)

    def __getitem__(self, key):
        if key not in self._values:
            self._compute([g for g in self._groups if isinstance(key, str) and key.startswith(g + "/")])
        return self._values[key]

    def __iter__(self):
        self._compute(self._groups)
        return iter(self._values)

    def __len__(self):
        self._compute(self._groups)
        return len(self._values)


def rollout(system, y0, ts, *, integrator: Integrator, waves=None, params=None, lazy: bool = False):
    """Solve and return the outputs dict (n_t leading axis); pure and differentiable.
    ``lazy``: a :class:`LazyOutputs` instead (see :func:`outputs_of`)."""
    ys, _, ds = solve(system, y0, ts, integrator=integrator, waves=waves, params=params, dynamics=True)
    return outputs_of(system, ts, ys, waves, params, lazy=lazy, dynamics=ds)


# A direction of the static equilibrium's Newton step whose row of the Jacobian is all below this fraction of
# its largest entry is held (:func:`equilibrate`): round-off is some 1e-15 of it, the softest restoring force
# of a moored hull or a hanging load some 1e-7 and more
INERT_FRACTION = 1e-10


def equilibrate(system, q_guess, *, free=None, n_newton: int = 3, params=None):
    """A few Newton steps towards the static equilibrium (v = 0, v̇ = 0), unrolled so that the
    result is differentiable in the system's parameters (the derivative converges with the
    iterate: start from an equilibrium of nearby parameters, from
    :func:`jaxmbd.simulation.static_equilibrium`, and 2-3 steps reach machine precision).

    Damped least-squares steps (directions without restoring force stay put; a direction whose
    acceleration nothing acts on, its row of the Jacobian at round-off (:data:`INERT_FRACTION`), is
    held exactly); ``free`` (nv,) masks them.
    """
    model = system.model
    mask = jnp.ones(model.nv) if free is None else jnp.asarray(free, dtype=float)
    held = holds(free)  # as static_equilibrium: the directions left out held

    def residual(q):  # the joints' part: elastic coordinates stay at their initial values here
        return rest_accelerations(system, q, mask=mask, params=params, held=held)[: model.nv]

    def step(_, q):
        r = residual(q)
        with dense_value():  # forward mode: the dynamics' rule solves its value with the factor its tangents need
            J = jax.jacfwd(lambda d: residual(model.integrate(q, d * mask)))(jnp.zeros(model.nv, dtype=q.dtype))
        # Newton with a tiny diagonal shift, (J + λI) δ = −r, instead of lstsq: lstsq differentiates
        # through an SVD, whose derivative is NaN where singular values repeat (directions without
        # restoring force, e.g. a free payload's rotations, give zero rows of J, held below); normal
        # equations (JᵀJ) would square J's condition number and add round-off noise to the derivative
        a = jnp.abs(J)
        scale = jnp.max(a)
        lam = 1e-12 * scale + 1e-300
        # A direction whose acceleration nothing acts on at rest (its row of J at round-off: the rotations
        # of a payload hung at its centre of gravity) is held: its residual is round-off too, and the shift
        # alone would turn it into a step of round-off / λ (1e-5 rad from 1e-14 rad/s², where the
        # mass-matrix route that the derivatives take leaves such noise and the articulated-body
        # recursion none), so that the start, and its derivative, would depend on the route
        inert = jax.lax.stop_gradient(jnp.max(a, axis=1) <= INERT_FRACTION * scale)
        keep = jnp.where(inert, 0.0, 1.0).astype(q.dtype)
        Jk = J * keep[:, None] + jnp.diag(1.0 - keep)
        delta = -jnp.linalg.solve(Jk + lam * jnp.eye(model.nv, dtype=q.dtype), r * keep) * mask
        return model.normalise(model.integrate(q, delta))

    return jax.lax.fori_loop(0, n_newton, step, jnp.asarray(q_guess))


@dataclasses.dataclass(frozen=True)
class Problem:
    """A tuning problem: a base system, its tunable parameters, the run, the objective and how
    realisations combine.

    ``q0``: the initial configuration at the initial parameters (static equilibrium);
    ``equilibrium_newton`` > 0 re-solves it for every parameter value with that many
    differentiable Newton steps (so changing a rope's stiffness does not start a transient);
    ``keys``: PRNG keys of the training realisations (one run each; None: one deterministic run,
    e.g. a regular wave); ``aggregate``: ``"mean"``, ``"max"`` or ``("cvar", alpha)``.
    """

    system: Any
    parameters: Any  # ParameterSet
    objective: Callable
    q0: Any
    ts: Any
    integrator: Integrator
    keys: Any = None
    aggregate: Any = "mean"
    equilibrium_newton: int = 0
    equilibrium_free: Any = None
    params: Any = None  # run-time params passed to the solver

    def system_at(self, u):
        return self.parameters.apply(self.system, self.parameters.values(u))

    def initial_state(self, system):
        q = self.q0
        if self.equilibrium_newton:
            q = equilibrate(system, q, free=self.equilibrium_free, n_newton=self.equilibrium_newton, params=self.params)
        v = jnp.zeros(system.model.nv, dtype=q.dtype)
        return q, v, system.initial_states(q, v)

    def equilibrium_residual(self, u):
        """max |v̇| (m/s², rad/s²) at the initial state of the run at u, over the free directions.

        Near zero when the run starts at rest in equilibrium.  Check it at the tuned parameters:
        Newton steps that have not converged (the parameters moved far from those of ``q0``) start
        the run with a transient, and an optimiser can exploit that (a first save above the static
        load lowers a dynamic amplification factor); raise ``equilibrium_newton`` then."""
        system = self.system_at(u)
        return self.start_residual(system, self.initial_state(system))

    def start_residual(self, system, y0):
        """max |v̇| over the free directions at the state ``y0`` of ``system`` (see :meth:`equilibrium_residual`)."""
        _, vdot, _ = system.rhs(0.0, y0, Inputs(params=self.params))
        mask = 1.0 if self.equilibrium_free is None else jnp.asarray(self.equilibrium_free, dtype=vdot.dtype)
        return jnp.max(jnp.abs(vdot * mask))

    def run_one(self, system, y0, key, *, lazy: bool = False):
        """The outputs of one run (a dict; ``lazy``: a :class:`LazyOutputs` for an objective to read)."""
        waves = None
        if system.waves is not None:
            waves = system.waves.realise(key) if key is not None else system.waves.realise(jax.random.key(0))
        return rollout(system, y0, self.ts, integrator=self.integrator, waves=waves, params=self.params, lazy=lazy)

    def run_extremes(self, system, y0, key, names, track):
        """{name: (samples, max, min, mean, states)} of the outputs ``names`` of one run, each (n_saves,): the
        values at the saves and, for those in ``track`` (taken at every step: ``names`` that
        :meth:`jaxmbd.system.System.tracked_outputs` gives, found before ``system`` is traced), their largest,
        smallest and mean values over the ``states`` steps from each save to the next (the others: the samples,
        and one state)."""
        waves = None
        if system.waves is not None:
            waves = system.waves.realise(key) if key is not None else system.waves.realise(jax.random.key(0))
        track = tuple(n for n in names if n in track)
        (ys, _, ds), ext = solve_with_extremes(system, y0, self.ts, self.integrator, waves, self.params, True, track)
        outs = outputs_of(system, self.ts, ys, waves, self.params, lazy=True, dynamics=ds)
        ext = ext or {}
        return {n: (outs[n],) + (ext[n][:4] if n in ext else (outs[n], outs[n], outs[n], jnp.ones(outs[n].shape, jnp.int32)))
                for n in names}

    def per_realisation(self, u, keys=None):
        """Objective value of every realisation (n_keys,) at u."""
        system = self.system_at(u)
        y0 = self.initial_state(system)
        keys = self.keys if keys is None else keys
        if keys is None:
            return self.objective(self.run_one(system, y0, None, lazy=True))[None]
        return jax.vmap(lambda k: self.objective(self.run_one(system, y0, k, lazy=True)))(keys)

    def loss(self, u, keys=None):
        return obj.aggregate(self.per_realisation(u, keys), self.aggregate)

    def outputs(self, u, key=None):
        """Outputs of one run at u (for plots and reports)."""
        system = self.system_at(u)
        return self.run_one(system, self.initial_state(system), key)


def time_grid(duration: float, save_dt: float, dt: float):
    """Save times 0, save_dt, ..., with save_dt rounded to a multiple of dt."""
    save_dt = max(1, int(round(save_dt / dt))) * dt
    n = int(np.floor(duration / save_dt + 1e-9)) + 1
    return save_dt * np.arange(n)
