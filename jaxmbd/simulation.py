"""Time integration with diffrax, batches of wave realisations, and results.

``simulate(system, duration, ...)`` is the user's entry point; ``solve`` is the
pure, differentiable core it calls (one realisation, no Python-side checks),
which optimisation code calls directly under ``jax.grad``.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any, NamedTuple

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._xla import system_jit
from .equilibrium import EQUILIBRIUM_FD_STEP, rest_accelerations, static_equilibrium  # noqa: F401  (their home before)
from .errors import InputError, SimulationError
from .results import Result
from .system import Inputs, System, drive_saves
from .validity import SLACK_FRACTION

FIXED_STEP_METHODS = ("rk4", "tsit5", "dopri5", "heun", "euler")  # the methods jaxmbd's fixed-step scan runs when given a dt

SOLVERS = {
    "tsit5": diffrax.Tsit5,
    "dopri5": diffrax.Dopri5,
    "dopri8": diffrax.Dopri8,
    "heun": diffrax.Heun,
    "euler": diffrax.Euler,
    "rk4": None,  # classical RK4, below
}


class _RK4(diffrax.AbstractERK):
    """Classical fourth-order Runge-Kutta (fixed steps; four evaluations per step)."""

    tableau = diffrax.ButcherTableau(
        c=np.array([0.5, 0.5, 1.0]),
        b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
        b_error=np.array([0.0, 0.0, 0.0, 0.0]),
        a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
    )
    interpolation_cls = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms):
        return 4


def _tableau(method: str):
    """(c, a_lower, b) of an explicit Runge-Kutta method, without FSAL stages that b does not use."""
    if method == "euler":
        return np.zeros(0), (), np.array([1.0])
    tab = (_RK4 if method == "rk4" else SOLVERS[method]).tableau
    b = np.asarray(tab.b_sol)
    n = len(b)
    while n > 1 and b[n - 1] == 0.0:  # an FSAL stage feeds only the error estimate
        n -= 1
    return np.asarray(tab.c)[: n - 1], tuple(np.asarray(x) for x in tab.a_lower[: n - 1]), b[:n]


def _rk_step(f, t, y, dt, tableau, aux=None):
    """One explicit Runge-Kutta step, its stages in a ``lax.scan``.

    The stage loop is a scan over a buffer of stage derivatives (row i of the
    Butcher matrix picks the earlier ones), so the right-hand side is traced
    and compiled once, not once per stage: a third of the compile time of an
    unrolled RK4 for the same arithmetic.

    ``aux``: a pytree of zeros shaped like the second output of ``f``, which then returns
    (dy/dt, aux); the step returns (y_next, (dy/dt, aux) of the first stage, at (t, y)).
    """
    c, a_lower, b = tableau
    s = len(b)
    A = np.zeros((s, s))
    for i, row in enumerate(a_lower):
        A[i + 1, : len(row)] = row
    cs = np.concatenate([[0.0], c])
    leaves, treedef = jax.tree_util.tree_flatten(y)
    flat = jnp.concatenate([jnp.ravel(x) for x in leaves])
    sizes = [x.size for x in leaves]
    splits = np.cumsum(sizes)[:-1]

    def unflat(v):
        parts = jnp.split(v, splits)
        return jax.tree_util.tree_unflatten(treedef, [p.reshape(x.shape) for p, x in zip(parts, leaves)])

    def stage(carry, inputs):
        K, first = carry
        i, a_row, ci = inputs
        yi = flat + dt * (a_row @ K)
        out = f(t + ci * dt, unflat(yi))
        if aux is not None:
            out, extra = out
            first = jax.tree_util.tree_map(lambda new, old: jnp.where(i == 0, new, old), extra, first)
        k = jnp.concatenate([jnp.ravel(x) for x in jax.tree_util.tree_leaves(out)])
        return (K.at[i].set(k), first), None

    K0 = jnp.zeros((s, flat.size), dtype=flat.dtype)
    xs = (jnp.arange(s), jnp.asarray(A, dtype=flat.dtype), jnp.asarray(cs, dtype=flat.dtype))
    (K, first), _ = jax.lax.scan(stage, (K0, aux), xs)
    y_next = unflat(flat + dt * (jnp.asarray(b, dtype=flat.dtype) @ K))
    return y_next if aux is None else (y_next, (unflat(K[0]), first))


def _stage_bytes(y0, n_steps, n_stages):
    """Bytes reverse mode stores to keep every stage's state of a fixed-step run (one trajectory), with the
    joint accelerations each stage's checkpoint keeps (:data:`_SAVED`: v's size again; an upper bound where the
    right-hand side does not take the dense rule and nothing is named)."""
    per = sum(x.size * x.dtype.itemsize for x in jax.tree_util.tree_leaves(y0))
    v = y0[1]
    return n_steps * n_stages * (per + v.size * v.dtype.itemsize)


# what a checkpointed right-hand side keeps for reverse mode beyond its input state (see f below)
_SAVED = jax.checkpoint_policies.save_only_these_names("joint_accelerations")


def _fixed_step_solve(system, y0, t0, dt, n_windows, steps_per_window, forcing, method, dynamics=False,
                      checkpoint="auto", track=()):
    """Fixed-step explicit Runge-Kutta in nested ``lax.scan``s; the outer scan saves one state per
    window (``steps_per_window`` steps).

    Reverse mode: each right-hand side is ``jax.checkpoint``-ed (below), so the backward pass keeps
    its input state, not its intermediates.  ``checkpoint`` (see :class:`Integrator`): ``"steps"``
    keeps those inputs for every stage of every step (memory O(steps x stages)); ``"saves"``
    checkpoints the outer scan as well, so only the saved states are kept and each window's steps
    run again in the backward pass (memory O(saves + steps per window), one more forward run);
    ``"auto"`` takes ``"steps"`` when they need at most :data:`STAGE_MEMORY_BUDGET` bytes.

    ``dynamics``: also return, at every save, the right-hand side there and the external wrenches
    (``(dy/dt, f_ext)``, what joint-wrench outputs need), taken from the first stage of the step
    that starts at the save; after the last save one more window runs with a zero step (its
    stages all evaluate the final state), so no second call site of the right-hand side is compiled.

    ``track`` (with ``dynamics``): output names (:meth:`~jaxmbd.system.System.tracked_outputs`) whose
    largest and smallest values are taken at every step, from the first stage's evaluation of the
    right-hand side (at the step's start), and whose entries into slack (below :data:`SLACK_FRACTION` of
    their value at the start of the run; tensions and hook loads) and time slack are counted: a third
    output, per save k, ``{name: (max, min, mean, states, entries, seconds slack, max once slack)}`` over the
    ``states`` steps' states in [t_k, t_k+1) (the last save: its own state; the last three None for outputs
    that are no tension; "max once slack": the largest value from the run's first slack step on, -inf
    before it)."""
    tableau = _tableau(method)
    model = system.model
    c = tableau[0]
    if np.allclose(2 * c, np.round(2 * c)):
        # every evaluation time lies on the grid t0 + k dt/2 (RK4, midpoint, Euler): forcing that
        # depends on time only (wave excitation) is tabulated once per run instead of per evaluation
        waves, prepared, params = forcing
        prepared = system.tabulate(prepared, t0, 0.5 * dt, 2 * n_windows * steps_per_window)  # t0 .. t_end
        forcing = Inputs(waves, prepared, params)

    # Each right-hand side is checkpointed: reverse mode keeps only its inputs (one state per
    # stage) and evaluates it again before its VJP, instead of stacking its hundreds of small
    # intermediates per stage and step (crane vessel, 600 s, with the window checkpoint: 4.1x the
    # forward run against 6.1x).  prevent_cse=False: inside a scan the recomputation cannot be merged with the
    # forward pass anyway, and the optimisation barrier that prevents it costs time.
    track = tuple(track) if dynamics else ()

    # One intermediate is kept, not recomputed: the joint accelerations of the dense rule
    # (jaxmbd.dynamics.dense, named "joint_accelerations"; nv numbers a stage; the articulated-body
    # recursion's value, so the forward pass runs no factor or solve).  Its backward pass then
    # linearises the loads and the inverse dynamics at the saved v̇ instead of factoring and solving again:
    # crane vessel, 200 s, four processes per code in turn, reverse mode 0.549-0.668 -> 0.401-0.472 s
    # (benchmarks/NOTES.md, "The joint accelerations kept by each checkpoint").
    # Keeping the mass matrix's factor as well gained nothing and cost 11 MB.
    @functools.partial(jax.checkpoint, prevent_cse=False, policy=_SAVED)
    def f(t, y):
        return system.rhs_and_loads(t, y, forcing) if dynamics else system.rhs(t, y, forcing)

    # with ``dynamics``, one more window closes the run: on = 0 makes its steps zero, so every stage
    # evaluates the final state (the same compiled right-hand side, no second call site)
    n_out = n_windows + 1 if dynamics else n_windows
    aux0 = None
    if dynamics:  # shapes of f's second output; the time built as in the loop, so dtypes match it
        aux0 = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype),
                                      jax.eval_shape(lambda k, y: f(t0 + k * dt, y)[1], jnp.zeros((), int), y0))
    zero = jax.eval_shape(lambda k, y: system.tracked_values(t0 + k * dt, y, forcing, track), jnp.zeros((), int), y0) if track else {}
    names = tuple(zero)
    slack = tuple(n for n in names if n.endswith(("/tension", "/hook_load")))

    def window(carry, ks):
        y, first, was = carry  # first: the tracked values at the run's start; was: (slack at the last step, ever slack)
        k, on = ks
        h = jnp.where(on == 1, dt, 0.0)  # weakly typed, as dt: a float32 state stays float32

        def inner(carry, j):
            y, d, first, was, ext = carry
            t = t0 + (k * steps_per_window + j * on) * dt
            yn = _rk_step(f, t, y, h, tableau, aux0)
            if dynamics:  # keep the derivatives of the window's first step: those at its start
                yn, dj = yn
                d = jax.tree_util.tree_map(lambda new, old: jnp.where(j == 0, new, old), dj, d)
            if names:  # this step's start: every tracked value, and the slack entries
                x = system.tracked_values(t, y, forcing, names)
                first = {n: jnp.where((k == 0) & (j == 0), x[n], first[n]) for n in names}
                now = {n: (x[n] < SLACK_FRACTION * first[n]) & (first[n] > 0) for n in slack}
                ever = {n: was[1][n] | now[n] for n in slack}
                mx, mn, entries, steps, total, count, after = ext
                w = (on == 1) | (j == 0)  # every step's start once; the closing window its one state
                ext = ({n: jnp.maximum(mx[n], x[n]) for n in names}, {n: jnp.minimum(mn[n], x[n]) for n in names},
                       {n: entries[n] + (now[n] & ~was[0][n]) for n in slack},
                       {n: steps[n] + (now[n] & (on == 1)) for n in slack},
                       {n: total[n] + jnp.where(w, x[n], 0.0) for n in names}, count + w,
                       {n: jnp.maximum(after[n], jnp.where(ever[n], x[n], -jnp.inf)) for n in slack})
                was = (now, ever)
            q, v, z = yn
            return ((model.normalise(q), v, z), d, first, was, ext), None

        d0 = (jax.tree_util.tree_map(jnp.zeros_like, y), aux0) if dynamics else None
        ext0 = ({n: jnp.full((), -jnp.inf, zero[n].dtype) for n in names}, {n: jnp.full((), jnp.inf, zero[n].dtype) for n in names},
                {n: jnp.zeros((), jnp.int32) for n in slack}, {n: jnp.zeros((), jnp.int32) for n in slack},
                {n: jnp.zeros((), zero[n].dtype) for n in names}, jnp.zeros((), jnp.int32),
                {n: jnp.full((), -jnp.inf, zero[n].dtype) for n in slack})
        (y, d, first, was, ext), _ = jax.lax.scan(inner, (y, d0, first, was, ext0), jnp.arange(steps_per_window))
        return (y, first, was), (y, d, ext)

    ks = (jnp.arange(n_out), jnp.asarray([1] * n_windows + [0] * (n_out - n_windows)))
    if checkpoint == "auto":
        checkpoint = "steps" if _stage_bytes(y0, n_windows * steps_per_window, len(tableau[2])) <= STAGE_MEMORY_BUDGET else "saves"
    start = ({n: jnp.zeros((), zero[n].dtype) for n in names}, ({n: jnp.zeros((), bool) for n in slack},) * 2)
    _, (ys, ds, ext) = jax.lax.scan(jax.checkpoint(window) if checkpoint == "saves" else window, (y0, *start), ks)
    ys = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a[None], b[:n_windows]]), y0, ys)
    if track:
        mx, mn, entries, steps, total, count, after = ext
        return ys, ds, {n: (mx[n], mn[n], total[n] / count, count)
                        + ((entries[n], steps[n] * jnp.asarray(dt, mx[n].dtype), after[n]) if n in entries else (None, None, None))
                        for n in names}
    return (ys, ds) if dynamics else ys



# "auto" checkpointing keeps every stage's state for reverse mode up to this many bytes per trajectory
# (a vmapped batch of realisations multiplies it); beyond, one state per save (Integrator.checkpoint).
STAGE_MEMORY_BUDGET = 256 * 2**20

CHECKPOINT_MODES = ("auto", "steps", "saves")


@dataclasses.dataclass(frozen=True)
class Integrator:
    """How to integrate: a solver by name, a fixed step ``dt`` (s) or adaptive tolerances,
    and the step budget.

    Adaptive steps go through diffrax (``PIDController``).  Fixed steps (``dt``)
    suit batches (adaptive steps under ``vmap`` advance in lockstep, so a batch
    pays for its slowest member) and run in jaxmbd's own nested ``lax.scan``,
    with the same Butcher tableaus (``rk4``, ``tsit5``, ``dopri5``,
    ``heun``, ``euler``); ``use_diffrax=True`` sends them through diffrax
    instead.  Save times must then be multiples of ``dt``.

    ``checkpoint``: what reverse mode (``jax.grad``) keeps of a fixed-step run.
    ``"steps"``: the state at every stage of every step (memory grows with the
    steps: 600 s of Cibicik et al. (2019)'s crane vessel at 0.1 s, RK4, 77 states: 15 MB); ``"saves"``:
    one state per save, each save interval's steps run again in the backward pass
    (memory grows with the saves; the gradient costs about one forward run more:
    4.2x the forward run instead of 3.0x for that crane vessel); ``"auto"``
    (default): ``"steps"`` up to :data:`STAGE_MEMORY_BUDGET` bytes per trajectory
    (about 3 hours of that crane vessel), else ``"saves"``.  Adaptive and diffrax
    runs use ``checkpoints`` (diffrax's ``RecursiveCheckpointAdjoint``)."""

    method: str = "tsit5"
    dt: float | None = None
    rtol: float = 1e-7
    atol: float = 1e-7
    max_steps: int | None = None
    checkpoints: int | None = None
    use_diffrax: bool = False
    checkpoint: str = "auto"

    def __post_init__(self):
        if self.checkpoint not in CHECKPOINT_MODES:
            raise InputError(f"Integrator.checkpoint: expected one of {CHECKPOINT_MODES}, got {self.checkpoint!r}")

    def solver(self):
        if self.method not in SOLVERS:
            raise InputError(f"integrator method {self.method!r}: expected one of {sorted(SOLVERS)}")
        return _RK4() if self.method == "rk4" else SOLVERS[self.method]()

    def controller(self):
        if self.dt is not None:
            return diffrax.ConstantStepSize()
        return diffrax.PIDController(rtol=self.rtol, atol=self.atol)

    def steps_for(self, duration: float) -> int:
        if self.max_steps is not None:
            return self.max_steps
        if self.dt is not None:
            return int(np.ceil(duration / self.dt)) + 4
        return 100_000


def divides(duration: float, step: float) -> bool:
    """Whether ``step`` divides ``duration`` (to 1e-6 of the count)."""
    return abs(duration / step - round(duration / step)) <= 1e-6 * max(duration / step, 1.0)


def default_save_dt(duration: float, dt: float | None = None) -> float:
    """The save step when none is given: about ``duration`` / 2000 and at most 0.5 s apart, on the step
    grid of a fixed step ``dt``, dividing the duration (one state per step kept every state: 186 MB for a
    small case).  :func:`simulate`, the system file and every command take it."""
    step = dt if dt is not None else duration / 2000.0
    k = max(1, round(min(max(duration / 2000.0, step), max(0.5, step)) / step))
    while k > 1 and not divides(duration, k * step):
        k -= 1
    return k * step


class Solution(NamedTuple):
    """What :func:`solve` returns: the states ``ys = (q, v, z)`` at the save times (each with the
    times as its leading axis), ``ok`` (whether the solver reached the last save), and ``derivatives``
    ``(dy/dt, f_ext)`` at every save when asked for (``dynamics=True`` on the fixed-step path), else None."""

    ys: Any
    ok: Any
    derivatives: Any = None


def solve(system: System, y0, ts, *, integrator: Integrator = Integrator(), waves=None, params=None,
          dynamics: bool = False) -> Solution:
    """Integrate ``system`` from ``y0 = (q, v, z)`` to the save times ``ts``: a :class:`Solution`.

    ``ts`` (save times) must be concrete (a numpy array or a tuple); under ``jax.jit`` pass it
    as a static argument.

    Pure and differentiable: reverse mode keeps the states that ``integrator.checkpoint`` says
    (fixed steps), or goes through diffrax's recursive checkpointing with
    ``integrator.checkpoints`` checkpoints (adaptive steps, ``use_diffrax``).

    ``dynamics``: also keep ``(dy/dt, f_ext)`` at every save (``Solution.derivatives``), from the
    solver's own evaluations (fixed steps; None on the adaptive path), for
    ``System.outputs(..., dynamics=...)``.
    """
    return solve_with_extremes(system, y0, ts, integrator, waves, params, dynamics, ())[0]


def solve_with_extremes(system, y0, ts, integrator, waves, params, dynamics, track):
    """``(Solution, extremes)``: :func:`solve`, and with fixed steps and ``dynamics`` the outputs that
    ``track`` names (scalar outputs of force elements) at every step, ``{name: (max, min, mean, states,
    slack entries, seconds slack, max once slack)}`` per save over the ``states`` steps from it to the next
    (the last save: its own state; the slack figures None for outputs that are no tension or hook load),
    else None.
    Pure and differentiable, as :func:`solve`."""
    try:
        duration = float(ts[-1] - ts[0])
    except (TypeError, jax.errors.ConcretizationTypeError):
        duration = 1e4  # traced time grid: fall back to the adaptive budget
    if integrator.dt is not None and integrator.method in FIXED_STEP_METHODS and not integrator.use_diffrax:
        ts_np = np.asarray(ts, dtype=float)
        per = (ts_np[1] - ts_np[0]) / integrator.dt if ts_np.size > 1 else 1.0
        if ts_np.size < 2 or abs(per - round(per)) > 1e-6 or not np.allclose(np.diff(ts_np), ts_np[1] - ts_np[0], rtol=1e-9, atol=1e-9):
            raise InputError(
                f"fixed-step integration saves on its own grid: the save times must be evenly spaced by a multiple "
                f"of dt = {integrator.dt} s"
            )
        forcing = system.inputs(waves, params)
        ys = _fixed_step_solve(system, y0, ts_np[0], integrator.dt, ts_np.size - 1, int(round(per)), forcing,
                               integrator.method, dynamics, integrator.checkpoint, track)
        ext, ds = None, None
        if dynamics and track:
            ys, ds, ext = ys
        elif dynamics:
            ys, ds = ys
        return Solution(drive_saves(system, ts_np, ys, forcing), jnp.asarray(True), ds), ext
    max_steps = integrator.steps_for(duration)
    ts = jnp.asarray(ts)
    with warnings.catch_warnings():
        # the states are real; complex leaves are constant tables of the system (BEM excitation), which
        # diffrax's dtype check flags as "complex support is a work in progress"
        warnings.filterwarnings("ignore", message="Complex dtype support in Diffrax")
        sol = _diffrax_solve(system, integrator, ts, y0, waves, params, max_steps)
    ys = drive_saves(system, ts, sol.ys, system.inputs(waves, params)) if system.drivers else sol.ys
    return Solution(ys, sol.result == diffrax.RESULTS.successful), None


def _diffrax_solve(system, integrator, ts, y0, waves, params, max_steps):
    return diffrax.diffeqsolve(
        diffrax.ODETerm(system.rhs),
        integrator.solver(),
        t0=ts[0],
        t1=ts[-1],
        dt0=integrator.dt,
        y0=y0,
        args=(waves, system.prepare(waves), params),
        saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=integrator.controller(),
        max_steps=max_steps,
        adjoint=diffrax.RecursiveCheckpointAdjoint(checkpoints=integrator.checkpoints),
        throw=False,
    )


def initial_state(system: System, q0=None, v0=None, z0=None):
    """(q, v, z) at the start: neutral configuration at rest and the elements' own initial states
    unless given (``z0``: e.g. the bent shape of a flexible boom, or a winch's length)."""
    model = system.model
    q = model.neutral() if q0 is None else jnp.asarray(q0, dtype=model.inertia.dtype)
    v = jnp.zeros(model.nv, dtype=model.inertia.dtype) if v0 is None else jnp.asarray(v0, dtype=model.inertia.dtype)
    if q.shape != (model.nq,):
        raise InputError(f"q0 has shape {q.shape}; the model has nq = {model.nq}")
    if v.shape != (model.nv,):
        raise InputError(f"v0 has shape {v.shape}; the model has nv = {model.nv}")
    q = model.normalise(q)
    if z0 is None:
        return q, v, system.initial_states(q, v)
    z = jnp.asarray(z0, dtype=model.inertia.dtype)
    if z.shape != (system.n_states,):
        raise InputError(f"z0 has shape {z.shape}; the system has {system.n_states} internal states")
    return q, v, z


def _check_finite(system: System, ts, ys, result_code):
    """Raise a SimulationError naming the first time and body whose state is not finite."""
    q, v, _ = ys
    bad_q = ~np.all(np.isfinite(q), axis=-1)
    bad_v = ~np.all(np.isfinite(v), axis=-1)
    bad = bad_q | bad_v
    model = system.model
    if not bool(np.all(np.asarray(result_code))):
        # an adaptive solver that stops fills the saves after it with inf: that is not yet a divergence
        k = int(np.argmax(bad)) if np.any(bad) else len(ts) - 1
        t_ok = float(ts[max(k - 1, 0)])
        vmax = float(np.max(np.abs(np.asarray(v[max(k - 1, 0)])))) if np.size(v) else 0.0
        raise SimulationError(
            f"{system.name}: the integrator stopped before the end, after t = {t_ok:.6g} s (the last state it saved; "
            f"largest |v| there {vmax:.3g}): its step budget ran out (raise max_steps, loosen the tolerances or use "
            "a fixed step) or its step size collapsed, which a diverging state also causes"
        )
    if np.any(bad):
        k = int(np.argmax(bad))
        row_q, row_v = np.asarray(q[k]), np.asarray(v[k])
        names = []
        for i, j in enumerate(model.joints):
            sq = slice(model.q_start[i], model.q_start[i] + j.nq)
            sv = slice(model.v_start[i], model.v_start[i] + j.nv)
            if (j.nq and not np.all(np.isfinite(row_q[sq]))) or (j.nv and not np.all(np.isfinite(row_v[sv]))):
                names.append(model.body_names[i])
        t_ok = float(ts[k - 1]) if k > 0 else float(ts[0])
        raise SimulationError(
            f"{system.name}: the state became non-finite between t = {t_ok:.6g} s and t = {float(ts[k]):.6g} s "
            f"in body {', '.join(repr(n) for n in names) or '(internal states)'}; the run diverged "
            "(look at the step size, the rope stiffness or the controller gains)"
        )


# Default batch on the CPU (Cibicik et al. 2019's crane vessel, 256 x 600 s on two cores, back to back: 0.208 s
# per realisation in one batch of 256, 0.248 s in batches of 128, 0.254 s in batches of 64).  With
# XLA's YNN fusions on (before ``import jaxmbd`` switched them off) 64 had been best: 0.175 s against
# 0.33 s in one batch, on a quieter machine.
CPU_CHUNK = 256


def simulate(
    system: System,
    duration: float,
    *,
    save_dt: float | None = None,
    integrator: Integrator | None = None,
    q0=None,
    v0=None,
    z0=None,
    key=None,
    n_realisations: int | None = None,
    chunk_size: int | None = None,
    params=None,
    t0: float = 0.0,
    progress=None,
    between: bool = True,
) -> Result:
    """Simulate ``system`` for ``duration`` seconds from ``(q0, v0)`` (default: neutral, at rest).

    With ``key`` and a wave field on the system, ``n_realisations`` wave
    realisations are drawn from the key and run as vmapped batches of
    ``chunk_size`` (default: all at once on accelerators, at most
    :data:`CPU_CHUNK` on the CPU), each batch spread over all local
    devices (``jax.sharding``); ``progress(done, total)`` is called after each
    batch.  Realisation r always gets the r-th key of ``jax.random.split(key,
    n_realisations)``, whatever the chunking, so results do not depend on it.

    ``between`` (fixed steps): the tensions, hook loads and every output (or component) a range of validity
    bounds are also taken at every step (:meth:`~jaxmbd.system.System.tracked_outputs`): their largest and
    smallest values, mean and slack spells between the saves (``Result.between``), so that maxima and ranges
    do not depend on the save step; False: at the saves only.
    """
    integrator = integrator or Integrator()
    if not duration > 0:
        raise InputError(f"duration must be > 0 s, got {duration}")
    ts = _save_times(duration, save_dt, integrator, t0)
    y0 = initial_state(system, q0, v0, z0)
    integrator = dataclasses.replace(integrator, max_steps=integrator.steps_for(duration))
    track = system.tracked_outputs() if integrator.dt is not None and between else ()
    if n_realisations is None:
        waves = system.waves.realise(key) if (system.waves is not None and key is not None) else None
        (ys, code, ds), ext = _solve_jit(system, y0, tuple(map(float, ts)), integrator=integrator, waves=waves, params=params,
                                         track=track)
        ys = jax.tree_util.tree_map(np.asarray, ys)
        _check_finite(system, np.asarray(ts), ys, code)
        outs = _outputs(system, ts, ys, waves, params, ds)
        return Result(system, np.asarray(ts), ys[0], ys[1], ys[2], outs, batched=False, between=_between(ext))
    if key is None:
        raise InputError("n_realisations needs a PRNG key, e.g. key=jax.random.key(0)")
    keys = jax.random.split(key, n_realisations)
    if chunk_size is None and jax.default_backend() == "cpu":
        chunk_size = CPU_CHUNK
    chunk = min(chunk_size or n_realisations, n_realisations)
    parts = []
    for start in range(0, n_realisations, chunk):
        k = keys[start : start + chunk]
        n_real = k.shape[0]
        if n_real < chunk:  # pad the last batch so that it reuses the compiled function
            k = jnp.concatenate([k, jnp.repeat(k[-1:], chunk - n_real, axis=0)])
        solve_batch = _solve_batch_of_one if chunk == 1 else _solve_batch
        ys, ok, outs, ext = solve_batch(system, y0, tuple(map(float, ts)), _shard(k), integrator=integrator, params=params,
                                        track=track)
        ys = jax.tree_util.tree_map(lambda a: np.asarray(a)[:n_real], ys)
        outs = {name: np.asarray(val)[:n_real] for name, val in outs.items()}
        ext = jax.tree_util.tree_map(lambda a: np.asarray(a)[:n_real], ext)
        for r in range(n_real):
            try:
                _check_finite(system, np.asarray(ts), jax.tree_util.tree_map(lambda a: a[r], ys), np.asarray(ok)[r])
            except SimulationError as e:
                raise SimulationError(f"realisation {start + r}: {e}") from None
        parts.append((ys, outs, ext))
        if progress is not None:
            progress(start + n_real, n_realisations)
    ys = jax.tree_util.tree_map(lambda *a: np.concatenate(a), *[p[0] for p in parts])
    outs = {name: np.concatenate([p[1][name] for p in parts]) for name in parts[0][1]}
    ext = jax.tree_util.tree_map(lambda *a: np.concatenate(a), *[p[2] for p in parts]) if parts[0][2] is not None else None
    return Result(system, np.asarray(ts), ys[0], ys[1], ys[2], outs, batched=True, between=_between(ext))


def _save_times(duration: float, save_dt, integrator: Integrator, t0: float = 0.0) -> np.ndarray:
    """The save times of a run: every ``save_dt`` (None: :func:`default_save_dt`; a multiple of a fixed step)."""
    save_dt = save_dt or default_save_dt(duration, integrator.dt)
    if integrator.dt:
        save_dt = max(1, int(round(save_dt / integrator.dt))) * integrator.dt
    return t0 + save_dt * np.arange(int(np.floor(duration / save_dt + 1e-9)) + 1)


def sea_state_leaves(system: System, hs, tp, heading) -> System:
    """``system`` with its irregular sea's significant wave height ``hs`` (m), peak period ``tp`` (s) and mean
    direction ``heading`` (rad) replaced: array leaves only (traced values too), no checks
    (:func:`jaxmbd.run.with_sea_state` checks them first)."""
    w = system.waves
    cast = lambda x, like: jnp.asarray(x, dtype=jnp.result_type(like))  # noqa: E731  (a float32 sea stays float32)
    waves = eqx.tree_at(lambda w: (w.spectrum.hs, w.spectrum.tp, w.mean_direction), w,
                        (cast(hs, w.spectrum.hs), cast(tp, w.spectrum.tp), cast(heading, w.mean_direction)))
    return eqx.tree_at(lambda s: s.waves, system, waves)


def simulate_sea_states(system: System, duration: float, hs, tp, heading, *, key, n_realisations: int, save_dt=None,
                        integrator: Integrator | None = None, q0=None, v0=None, z0=None, between: bool = True) -> list:
    """:func:`simulate` at several sea states in one compiled program: the same ``n_realisations`` (those of
    ``key``: common random numbers) at every sea state ``hs[i]`` (m), ``tp[i]`` (s), ``heading[i]`` (rad)
    (:func:`sea_state_leaves`), vmapped over the sea states and the realisations; one batched
    :class:`~jaxmbd.results.Result` per sea state, each equal to its own :func:`simulate` to round-off.  For
    accelerators, where a batch of a few hundred trajectories costs about one (a CPU gains nothing)."""
    integrator = integrator or Integrator()
    if system.waves is None or system.waves.spectrum is None:
        raise InputError(f"{system.name}: sea states need irregular waves (a spectrum) on the system")
    if integrator.dt is None:
        raise InputError(f"{system.name}: sea states run in one program with a fixed step (dt)")
    hs, tp, heading = (np.atleast_1d(np.asarray(x, float)) for x in (hs, tp, heading))
    ts = _save_times(duration, save_dt, integrator)
    y0 = initial_state(system, q0, v0, z0)
    integrator = dataclasses.replace(integrator, max_steps=integrator.steps_for(duration))
    track = system.tracked_outputs() if between else ()
    keys = jax.random.split(key, n_realisations)
    like = jnp.result_type(system.waves.spectrum.hs)  # the sea's own float type: a float32 system stays float32
    ys, ok, outs, ext = _solve_seas(system, y0, tuple(map(float, ts)), keys, *(jnp.asarray(x, like) for x in (hs, tp, heading)),
                                    integrator=integrator, params=None, track=track)
    ys, ok, outs, ext = jax.tree_util.tree_map(np.asarray, (ys, ok, outs, ext))
    results = []
    for i in range(hs.size):
        one = jax.tree_util.tree_map(lambda a: a[i], (ys, ok, outs, ext))
        for r in range(n_realisations):
            try:
                _check_finite(system, ts, jax.tree_util.tree_map(lambda a: a[r], one[0]), one[1][r])
            except SimulationError as e:
                raise SimulationError(f"Hs {hs[i]:g} m, Tp {tp[i]:g} s, realisation {r}: {e}") from None
        results.append(Result(sea_state_leaves(system, hs[i], tp[i], heading[i]), ts, *one[0], one[2], batched=True,
                              between=_between(one[3])))
    return results


def _between(ext) -> dict:
    """The run's extremes between the saves as plain arrays: ``{name: {"max", "min", "mean", "states"[,
    "slack_entries", "slack_seconds", "max_once_slack"]}}``."""
    if not ext:
        return {}
    out = {}
    for name, (mx, mn, mean, states, entries, seconds, after) in ext.items():
        out[name] = {"max": np.asarray(mx), "min": np.asarray(mn), "mean": np.asarray(mean), "states": np.asarray(states)}
        if entries is not None:
            out[name] |= {"slack_entries": np.asarray(entries), "slack_seconds": np.asarray(seconds),
                          "max_once_slack": np.asarray(after)}
    return out


def _shard(keys):
    """Spread a batch of keys over the local devices (a no-op on one device)."""
    devices = jax.local_devices()
    if len(devices) < 2 or keys.shape[0] % len(devices):
        return keys
    mesh = jax.sharding.Mesh(np.asarray(devices), ("realisation",))
    return jax.device_put(keys, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("realisation")))


def _solve_run(system, y0, ts, *, integrator, waves, params, track):
    return solve_with_extremes(system, y0, ts, integrator, waves, params, True, track)


_solve_jit = system_jit(_solve_run, forward=True)


def _solve_one(system, y0, ts, key, integrator, params, track):
    waves = system.waves.realise(key) if system.waves is not None else None
    (ys, code, ds), ext = solve_with_extremes(system, y0, ts, integrator, waves, params, True, track)
    return ys, code, _outputs_jax(system, jnp.asarray(ts), ys, waves, params, ds), ext


def _solve_batch_fn(system, y0, ts, keys, *, integrator, params, track=()):
    return jax.vmap(lambda key: _solve_one(system, y0, ts, key, integrator, params, track))(keys)


def _solve_batch_of_one_fn(system, y0, ts, keys, *, integrator, params, track=()):
    # not vmapped over the one key: a batch axis of size 1 costs about 12 % of a 600 s crane-vessel run
    out = _solve_one(system, y0, ts, keys[0], integrator, params, track)
    return jax.tree_util.tree_map(lambda x: x[None], out)


def _solve_seas_fn(system, y0, ts, keys, hs, tp, heading, *, integrator, params, track=()):
    def one(h, p, d):
        return _solve_batch_fn(sea_state_leaves(system, h, p, d), y0, ts, keys, integrator=integrator, params=params, track=track)

    return jax.vmap(one)(hs, tp, heading)


# One trajectory is a chain of tiny kernels, which XLA's memory-optimised schedule runs faster (jaxmbd._xla);
# vmapped batches keep XLA's default schedule (a batch of 256 runs about 25 % slower with the other).
_solve_batch = system_jit(_solve_batch_fn)
_solve_batch_of_one = system_jit(_solve_batch_of_one_fn, forward=True)
_solve_seas = system_jit(_solve_seas_fn)


def _outputs_jax(system: System, ts, ys, waves, params, ds=None):
    """Outputs at the saves; ``ds``: the solver's (dy/dt, f_ext) there (fixed steps), else None."""
    forcing = system.inputs(waves, params)
    return jax.vmap(lambda t, y, d: system.outputs(t, y, forcing, dynamics=d))(ts, tuple(ys), ds)


_outputs_jit = system_jit(_outputs_jax)


def _outputs(system, ts, ys, waves, params, ds=None):
    outs = _outputs_jit(system, ts, ys, waves, params, ds)
    return {k: np.asarray(v) for k, v in outs.items()}
