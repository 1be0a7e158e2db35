"""The gradient of an operation's limiting sea state and of its workability with respect to the design.

:class:`LimitingHsModel` writes one phase's criteria at one heading and period as a differentiable
function g(Hs, p) of Hs and of design values p (element leaves named by path, ``"hoist.EA"``,
``"mc.kp[0]"``): the margins of :mod:`jaxmbd.operability.criteria` over a fixed set of realisations
(common random numbers), each run a fixed-step RK4 rollout from the static equilibrium re-solved for p by
differentiable Newton steps (:func:`jaxmbd.optim.rollout.equilibrate`), so that a stiffer rope starts
from its own stretched rest.  Its limiting Hs is the root search of :mod:`jaxmbd.operability.limiting`
on that very function, and the derivative of the root is the implicit-function theorem's,
dHs*/dp = −(∂g/∂p) / (∂g/∂Hs), with g the governing criterion's margin, its partial derivatives by
forward-mode differentiation (one tangent for Hs and one per design value).

A file with a ``[scenario]``: each run is the file's phases up to the model's (the runs of ``jaxmbd
operability``: its fixed step and saves, its start, re-solved only where the file solves it), the phase's
margins read as the command reads them (bit for bit the command's), and the partial derivatives by reverse
mode through the phases' solves (the event times that end them differentiated by the implicit-function
theorem, :mod:`jaxmbd.scenario`).  Such a margin can jump: when Hs grows, the first crossing of a phase's
end condition can move by a wave period (the load, lowered slower than the crane tip heaves, touches the
depth a wave earlier); a limit at a jump has no derivative, and :meth:`LimitingHsModel.gradient` refuses it.
A design value a phase sets (a winch speed, a compensation) is the phase's, not the design's: refused.

:func:`workability_gradient` carries these through the operational limit α(Hs*)·Hs* (α linear between
DNV's columns) and the curve over the periods to the smoothed workability of a month
(:func:`jaxmbd.operability.windows.smooth_workability`, the smoothing width stated there): the
derivative of a month's workability at a site with respect to each design value.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import validity
from ..dynamics.dense import dense_value
from ..errors import InputError, SimulationError
from ..operability.alpha import HS_COLUMNS, LEVELS, TABLES
from ..operability.criteria import extremes, margin_of
from ..operability.job import reached_name, search_names
from ..operability.limiting import Search, below_breaking, limiting_hs, site_limit
from ..operability.windows import SMOOTH_WIDTH, smooth_workability
from ..paths import get_leaf, set_leaf
from ..run import SCENARIO_BATCH, with_sea_state
from ..scenario import default_save_dt, tracks_every_step
from ..simulation import FIXED_STEP_METHODS, Integrator
from .rollout import Problem, time_grid


@dataclasses.dataclass
class LimitingHsModel:
    """One phase of a loaded file's ``[operability]`` at period ``tp`` (s) and heading ``heading_deg``, as
    a differentiable function of the design values at ``paths``.  ``dt``: the RK4 step (s; default the
    file's fixed step); ``equilibrium_newton``: Newton steps re-solving the start for each design (a file with
    a ``[scenario]`` and ``static_equilibrium = false`` starts where the file says)."""

    loaded: object
    phase: str
    tp: float
    heading_deg: float
    paths: tuple
    dt: float | None = None
    save_dt: float | None = None
    equilibrium_newton: int = 2

    def __post_init__(self):
        op = self.loaded.operability
        if op is None:
            raise InputError(f"{self.loaded.path}: no [operability] table")
        phases = {p.name: p for p in op.phases}
        if self.phase not in phases:
            raise InputError(f"limiting Hs model: no phase {self.phase!r} in [operability]; its phases: {list(phases)}")
        self.criteria = phases[self.phase].criteria
        self.names = tuple(c.name for c in self.criteria)
        # what the search takes the least of: as the study's (jaxmbd.operability.job.search_names), whether every
        # realisation reached the phase first
        self.search_names = search_names(phases[self.phase])
        system = with_sea_state(self.loaded.system, tp=self.tp, heading=math.radians(self.heading_deg))
        self.paths = tuple(self.paths)
        self.initial = {p: float(np.asarray(get_leaf(system, p)).reshape(-1)[0]) for p in self.paths}
        dt = self.dt or self.loaded.integrator.dt
        if dt is None:
            raise InputError(f"{self.loaded.path}: a fixed step dt is needed (give dt or [simulation] dt)")
        keys = jax.random.split(jax.random.key(op.seed), op.n_realisations)
        start = self.loaded.start()
        if start.z is not None:  # the Newton steps move the joints only: the runs would not start as the command's
            raise InputError(f"{self.loaded.path}: limiting Hs model: a system with flexible bodies starts from their bent "
                             "rest states, which the model's start does not hold; not supported")
        self._reads = {}  # a run in phases: the scenario phases the criteria read (_phases)
        self.scenario = self._phases(op) if self.loaded.scenario else None
        # the file's fixed-step method (as `jaxmbd operability` runs it) at dt; RK4 where the file's is adaptive
        method = self.loaded.integrator.method if self.loaded.integrator.method in FIXED_STEP_METHODS else "rk4"
        if self.scenario is None:
            ts = time_grid(op.duration, self.save_dt or dt * max(1, round(0.2 / dt)), dt)
            integrator, newton = Integrator(method, dt=dt), self.equilibrium_newton
        else:  # the file's own runs: its fixed-step integrator and saves; its start re-solved if the file solves it
            ts, integrator = None, self.loaded.integrator if self.dt is None else Integrator(method, dt=dt)
            newton = self.equilibrium_newton if self.loaded.simulation.static_equilibrium else 0
        self.problem = Problem(system, None, None, jnp.asarray(start.q), ts, integrator, keys=keys, equilibrium_newton=newton,
                               equilibrium_free=self.loaded.simulation.equilibrium_free)
        self.seconds = None if ts is None else float(ts[-1] - ts[0])
        # the sea's range of validity (the spectrum's energy the discretisation and the hydrodynamic data hold)
        # depends on the period, not on Hs: checked once here, as every run of jaxmbd.run checks it; its steepness
        # depends on Hs, and the search stays below the breaking Hs (below_breaking), so it is not checked at the file's Hs
        self.excursions = validity.check_sea(system.waves, len(keys), steepness=False)
        # one compiled program for every period and heading (their sea states are array leaves of the system)
        free = self.problem.equilibrium_free
        shape = (self.criteria, self.paths, system.tracked_outputs(), float(dt), len(keys), newton,
                 None if free is None else tuple(np.asarray(free).tolist()))
        if self.scenario is None:
            shape += (float(ts[0]), float(ts[-1]), len(ts), self.seconds)
            if shape not in _COMPILED:
                _COMPILED[shape] = _compile(self.problem, self.criteria, self.paths, self.seconds)
        else:  # every phase's criteria in one program, shared by the phases' models
            save_dt = self.save_dt or self.loaded.simulation.save_dt or self._save_dt
            track = self._tracked(system, integrator, len(keys))
            shape = (op.criteria,) + shape[1:] + (jax.tree_util.tree_structure(self.scenario), save_dt, integrator, track)
            if shape not in _COMPILED:
                _COMPILED[shape] = _compile_phases(self.problem, self.scenario, op.criteria, self.paths, save_dt, track)
        self._margins_of, self._row_of = _COMPILED[shape]

    def _tracked(self, system, integrator, n: int) -> tuple:
        """The outputs the command's runs take at every step: every tracked one, unless they would exceed its
        memory bound for a batch of realisations (then the saves only, as :meth:`jaxmbd.scenario.Scenario.run_many`)."""
        names = system.tracked_outputs()
        return names if tracks_every_step(self._full, names, integrator.dt, min(n, SCENARIO_BATCH)) else ()

    def _phases(self, op):
        """The file's [scenario] up to the last phase with criteria (the later ones change no margin); a design
        value that a phase up to this model's sets is refused (the phase's setting would replace it)."""
        scenario = self.loaded.build_scenario()
        names = [p.name for p in scenario.phases]
        for c in op.criteria:
            if c.phase not in names:
                raise InputError(f"limiting Hs model: criterion {c.name!r} reads phase {c.phase!r}, which is not a phase of "
                                 f"the [scenario] ({names})")
        # the scenario phases this model's criteria read (a table phase's criteria may read several), by their index
        self._reads = {n: names.index(n) for n in sorted({c.phase for c in self.criteria}, key=names.index)}
        if not self._reads:
            raise InputError(f"limiting Hs model: the [operability] phase {self.phase!r} has no criteria")
        self._own = [i for i, c in enumerate(op.criteria) if any(c is mine for mine in self.criteria)]
        self._full = scenario  # the command's save grid, when the file gives none, is its whole scenario's
        self._save_dt = default_save_dt(scenario)
        kept = scenario.phases[: max(names.index(c.phase) for c in op.criteria) + 1]
        for path in self.paths:
            setters = [p.name for p in kept[: max(self._reads.values()) + 1]
                       if any(path.partition("[")[0] == f"{el}.{field}" for el, field in p.leaves)]
            if setters:
                raise InputError(f"limiting Hs model: design value {path!r} is set by the [scenario]'s phase "
                                 f"{setters[0]!r}; the phase's setting would replace the design's")
        return type(scenario)(kept, name=scenario.name)

    # -- the function and its root ----------------------------------------------------------------------

    def _args(self):
        p = self.problem
        return (p.system, p.q0, p.keys) if self.scenario is None else (p.system, self.scenario, p.q0, p.keys)

    def margins(self, hs: float, values: dict | None = None) -> dict:
        """{criterion: relative margin} at ``hs`` (m) and the design ``values`` (None: the file's)."""
        m = self._margins_of(*self._args(), jnp.asarray(hs, float), self._values(values))
        if self.scenario is None:
            return dict(zip(self.names, (float(x) for x in m)))
        m, short = self._checked(hs, *m)
        own = np.asarray(m)[np.asarray(self._own)]
        # as the study's runs (jaxmbd.operability.job._Runs.record): a scenario phase that some realisation never
        # reached fails its criteria and its "reached" margin by the fraction of realisations that did not reach it
        found = {n: -short[c.phase] if c.phase in short else float(x) for n, c, x in zip(self.names, self.criteria, own)}
        return {reached_name(p): -short[p] if p in short else math.inf for p in self._reads} | found

    def _checked(self, hs, m, ok, ended):
        """(the margins, {scenario phase this model reads: the fraction of realisations that never reached it},
        where some did not) of a run in phases, after the checks :func:`jaxmbd.run.run` makes of its
        realisations: the solver finished each phase the operation reached (it stops after a phase that hit its
        time limit, unless the phase says continue)."""
        where = f"limiting Hs model at Hs {float(hs):.4g} m, Tp {self.tp:g} s, heading {self.heading_deg:g} deg"
        stops = np.array([p.until is not None and p.on_time_limit == "stop" for p in self.scenario.phases])
        lasts = []
        for r, (fine, end) in enumerate(zip(np.asarray(ok), np.asarray(ended))):
            stopped = np.flatnonzero(stops & ~end)
            last = stopped[0] if stopped.size else len(stops) - 1
            for j in np.flatnonzero(~fine[: last + 1]):
                raise SimulationError(f"{where}: realisation {r}, phase {j} ({self.scenario.phases[j].name!r}): the "
                                      "integrator stopped before the phase's end")
            lasts.append(last)
        lasts = np.asarray(lasts)
        short = {p: float(np.mean(lasts < k)) for p, k in self._reads.items() if np.any(lasts < k)}
        counted = [x for x, c in zip(np.asarray(m)[np.asarray(self._own)], self.criteria) if c.phase not in short]
        if not np.all(np.isfinite(counted)):
            raise SimulationError(f"{where}: a margin of {self.phase!r} is not finite (the run diverged)")
        return m, short

    def _values(self, values):
        values = dict(self.initial) if values is None else {**self.initial, **values}
        return {p: jnp.asarray(values[p], float) for p in self.paths}

    def limiting_hs(self, values: dict | None = None, search: Search | None = None):
        """The root search (:func:`jaxmbd.operability.limiting.limiting_hs`) on this model's margins, below the
        breaking Hs of its period as the study's (:func:`jaxmbd.operability.limiting.below_breaking`)."""
        op = self.loaded.operability
        return limiting_hs(lambda hs: self.margins(hs, values), self.search_names, below_breaking(search or op.search, self.tp))

    def gradient(self, found, values: dict | None = None) -> dict:
        """{path: dHs*/dp} at the root ``found`` (a :class:`~jaxmbd.operability.limiting.LimitingHs` of
        :meth:`limiting_hs` at the same ``values``)."""
        if found.status != "root":
            raise InputError(f"limiting Hs gradient: the search found no root (status {found.status!r}): the limit "
                             "is the search's range, which does not move with the design")
        if found.governing not in self.names:
            where = next((p for p in self._reads if reached_name(p) == found.governing), self.phase)
            raise InputError(f"limiting Hs gradient: the limit ({found.hs:.6g} m) is where realisations stop reaching phase "
                             f"{where!r} (an earlier phase hits its time limit): a jump of the margin, with no derivative")
        k = self.names.index(found.governing)
        vals = self._values(values)
        x0 = jnp.concatenate([jnp.asarray([found.hs], float), jnp.stack([vals[p] for p in self.paths])])

        if self.scenario is None:
            d = self._row_of(*self._args(), x0, jnp.zeros(len(self.names)).at[k].set(1.0))
        else:  # the program's margins are every phase's; the runs at the root checked as the search's were
            d, (_, ok, ended) = self._row_of(*self._args(), x0, self._own[k])
            short = self._checked(found.hs, np.zeros(len(self.loaded.operability.criteria)), ok, ended)[1]
            if short:
                raise InputError(f"limiting Hs gradient: at the root ({found.hs:.6g} m) a realisation does not reach phase "
                                 f"{next(iter(short))!r} (an earlier phase hits its time limit): no derivative there")
        if not float(d[0]) < 0:
            raise InputError(f"limiting Hs gradient: the governing margin does not fall with Hs at the root "
                             f"(dg/dHs = {float(d[0]):g})")
        if self.scenario is not None:  # a phase's margin can jump (its window's end is an event): see _smooth
            self._smooth(found, float(d[0]))
        return {p: float(-d[1 + i] / d[0]) for i, p in enumerate(self.paths)}

    @staticmethod
    def _smooth(found, slope: float):
        """Refuse a root where the governing margin jumps across zero (a phase whose end, an event of the state,
        moves by a wave as Hs grows): its derivative ``slope`` at the root must give the search's last secant
        within half of itself, and its tangent from the bracket's end nearer zero must cross zero in the bracket
        (widened by its width, or a micrometre), which is at most :data:`SMOOTH_BRACKET` wide.  A jump smaller than about
        |slope| x the bracket's width is not seen."""
        lo, hi = found.bracket
        if hi - lo > SMOOTH_BRACKET:
            raise InputError(f"limiting Hs gradient: the search's bracket [{lo:.6g}, {hi:.6g}] m is wider than "
                             f"{SMOOTH_BRACKET:g} m: the gradient of an operation in phases needs its root finer, to tell a "
                             "jump of its margin from a crossing (search with a tolerance of 1e-4 m, as jaxmbd tune does)")
        g = found.margins[found.governing]
        near = lo if g >= 0 else hi  # the bracket's end whose margins the search kept
        linear = near - g / slope
        # the secant only where its ends differ by more than round-off (a bracket of 1e-12 m reads noise)
        secant = abs(found.slope) * (hi - lo) > 1e-8 and abs(found.slope - slope) > 0.5 * abs(slope)
        widen = max(hi - lo, 1e-6)
        if secant or not lo - widen <= linear <= hi + widen:
            raise InputError(f"limiting Hs gradient: {found.governing!r} jumps across zero at Hs {found.hs:.6g} m (its "
                             f"derivative there {slope:.4g}/m, the search's last secant over [{lo:.6g}, {hi:.6g}] m "
                             f"{found.slope:.4g}/m): a limit at a jump of the margin (an end of a phase that moves by a wave "
                             "period) has no derivative")


_COMPILED: dict = {}
SMOOTH_BRACKET = 0.01
"""m: the widest bracket of a root whose gradient an operation in phases gives (:meth:`LimitingHsModel._smooth`)."""


def _compile(problem: Problem, criteria, paths, seconds):
    """(margins(system, q0, keys, hs, values), jacobian(system, q0, keys, [hs, values...])), jitted; the save
    times and the step are the problem's (the compile's key holds them)."""
    outputs = sorted({c.output for c in criteria})
    track = problem.system.tracked_outputs()  # of the concrete system: its ranges read numbers

    def margins(system, q0, keys, hs, values):
        for path in paths:
            system = set_leaf(system, path, values[path])
        prob = dataclasses.replace(problem, system=system, q0=q0, keys=keys)
        system = with_sea_state(system, hs=hs)
        y0 = prob.initial_state(system)

        # the criteria's outputs at the saves and, where tracked, their extremes at every step (as jaxmbd.run's)
        runs = jax.vmap(lambda key: prob.run_extremes(system, y0, key, outputs, track))(keys)
        return jnp.stack([margin_of(c, *extremes(c, runs[c.output][0], jnp.ones(runs[c.output][0].shape, bool),
                                                 between=runs[c.output][1:]), seconds)
                          for c in criteria])

    def row(system, q0, keys, x, weights):  # the weighted margins' derivatives in [hs, values...], forward mode
        with dense_value():  # the dynamics' rule solves its value with the factor its tangents need
            return weights @ jax.jacfwd(lambda y: margins(system, q0, keys, y[0], {p: y[1 + i] for i, p in enumerate(paths)}))(x)

    return jax.jit(margins), jax.jit(row)


def _compile_phases(problem: Problem, scenario, criteria, paths, save_dt: float, track: tuple):
    """:func:`_compile`'s pair for a run in phases, every phase's criteria in one program: (margins(system,
    scenario, q0, keys, hs, values) -> (the margins of ``criteria``, whether the solver finished each phase of
    each realisation, whether each ended by its condition), row(system, scenario, q0, keys, [hs, values...],
    index)), each phase read as :func:`jaxmbd.operability.criteria.extremes_of` reads a run's result; the
    row in reverse mode (one pass back through the phases' solves, their event times differentiated by the
    implicit-function theorem)."""
    outputs = tuple(sorted({c.output for c in criteria}))
    tracked = tuple(n for n in outputs if n in track)
    names = [p.name for p in scenario.phases]
    integrator = problem.integrator

    def runs(system, scenario, q0, keys, hs, values, each):
        for path in paths:
            system = set_leaf(system, path, values[path])
        prob = dataclasses.replace(problem, system=system, q0=q0, keys=keys)
        system = with_sea_state(system, hs=hs)
        y0 = prob.initial_state(system)
        return each(lambda key: scenario.solve_phases(system, y0, integrator=integrator, save_dt=save_dt,
                                                      waves=system.waves.realise(key), track=tracked, outputs=outputs))(keys)

    def margin(c, start, end, saved, steps):
        k = names.index(c.phase)
        phase = jax.tree_util.tree_map(lambda a: a[:, k], (saved, steps))
        return margin_of(c, *_phase_extremes(c, *phase), jnp.mean(end[:, k] - start[:, k]))

    def margins(system, scenario, q0, keys, hs, values):
        start, end, ok, ended, saved, steps = runs(system, scenario, q0, keys, hs, values, jax.vmap)
        return jnp.stack([margin(c, start, end, saved, steps) for c in criteria]), ok, ended

    def row(system, scenario, q0, keys, x, index):
        """(d margin[index] / d[hs, values...], (the margins, ok, ended)): the realisations one after another (the
        derivative of a duration phase's end, batched, does not compile), only the criterion's own margin traced
        back (another's, infinite or not a number, would spoil the derivative)."""
        def one(y):
            start, end, ok, ended, saved, steps = runs(system, scenario, q0, keys, y[0], {p: y[1 + i] for i, p in enumerate(paths)},
                                                       lambda f: functools.partial(jax.lax.map, f))
            m = jax.lax.switch(index, [functools.partial(margin, c) for c in criteria], start, end, saved, steps)
            return m, (m, ok, ended)

        return jax.grad(one, has_aux=True)(x)

    return jax.jit(margins), jax.jit(row)


def _phase_extremes(criterion, saved, steps):
    """(per-realisation extreme, static value or None) of a phase as :func:`jaxmbd.operability.criteria.extremes_of`
    takes them from a run's result: an output tracked at every step from its values at the phase's start and
    every step's end (a step that ends twice counted once) and at those saves whose window, from the save to the
    next less a microsecond, holds no step (:func:`jaxmbd.results._between_from_states`); another output from its
    values at the saves."""
    ts, keep, values = saved
    x = values[criterion.output]
    if steps is None or criterion.output not in steps[1]:
        return extremes(criterion, x, keep)
    t, at = steps
    done = jnp.isfinite(t) & (t > jnp.concatenate([jnp.full(t.shape[:-1] + (1,), -jnp.inf), t[..., :-1]], axis=-1))
    t_done = jnp.where(done, t, jnp.inf)  # ascending: only a phase's last step repeats
    nxt = jnp.flip(jax.lax.cummin(jnp.flip(jnp.where(keep, ts, jnp.inf), -1), axis=ts.ndim - 1), -1)
    nxt = jnp.concatenate([nxt[..., 1:], jnp.full(ts.shape[:-1] + (1,), jnp.inf)], axis=-1)
    lo = jax.vmap(lambda a, v: jnp.searchsorted(a, v))(t_done, ts - 1e-6)
    hi = jax.vmap(lambda a, v: jnp.searchsorted(a, v))(t_done, nxt - 1e-6)
    alone = keep & (hi <= lo)
    mask = jnp.concatenate([done, alone], axis=-1)
    return extremes(criterion, jnp.concatenate([at[criterion.output], x], axis=-1), mask)


# --------------------------------------------------------------------------- workability


def alpha_of(hs, t_pop_hours: float, forecast_level: str = "base"):
    """DNV's alpha (``jnp``, differentiable in ``hs``): the row of ``t_pop_hours``, linear between the
    columns, the first column below 1 m (where the table gives nothing: the command flags it)."""
    table = TABLES[LEVELS.get(forecast_level, forecast_level)]
    rows = sorted(table)
    row = next((r for r in rows if t_pop_hours <= r), None)
    if row is None:
        raise InputError(f"alpha: {t_pop_hours:g} h is beyond the table's rows (<= {rows[-1]} h)")
    return jnp.interp(hs, jnp.asarray(HS_COLUMNS), jnp.asarray(table[row]))


def workability_gradient(models, series, month: int, *, durations, values=None, width: float = SMOOTH_WIDTH,
                         alpha=None, forecast_level: str = "base", found=None, contingency_hours: int = 0):
    """(smoothed workability of ``month``, {path: its derivative}) of an operation whose phases' limits are given
    by ``models``: :class:`LimitingHsModel` s per phase (the phases in the order of ``durations``, each model's
    ``phase`` naming its own), each phase at two periods or more, at one heading or several, where the operation
    takes the best heading at each hour (as the command's site table does, where the hindcast has no
    direction): each heading's operational limit α·Hs* interpolated linearly in Tp at each hour of ``series``,
    the largest of them the phase's limit that hour (its derivative that heading's), Tp outside its periods a
    no-go, and the phases follow each other in each start's weather window
    (:func:`jaxmbd.operability.windows.smooth_workability`).  ``durations``: the phases' hours; ``alpha``: a
    number, or None for DNV's at T_POP = the sum of ``durations``; ``found``: the models' searches at
    ``values`` where the caller has them (:meth:`LimitingHsModel.limiting_hs`), else they are run here;
    ``contingency_hours``: T_C, a slot after the phases whose limit is the least of theirs, as the command's
    :func:`jaxmbd.operability.job.operation` takes it (α stays at T_POP)."""
    phases = list(dict.fromkeys(m.phase for m in models))
    if len(durations) != len(phases):
        raise InputError(f"workability_gradient: {len(durations)} durations for the {len(phases)} phases of the models "
                         f"({phases}); one duration (h) a phase, in the phases' order")
    found = found if found is not None else [m.limiting_hs(values) for m in models]
    paths = models[0].paths
    t_pop = float(sum(durations))
    tp_hours = np.where(series.present, series.tp, np.nan)
    curves = []  # per phase: its periods, and per heading the model index at each period
    for name in phases:
        mine = [k for k, m in enumerate(models) if m.phase == name]
        tps = np.unique([models[k].tp for k in mine])
        if tps.size < 2:
            raise InputError(f"workability_gradient: phase {name!r} needs models at two periods or more (its limit is a curve in Tp)")
        rows = []
        for h in dict.fromkeys(models[k].heading_deg for k in mine):
            at = {models[k].tp: k for k in mine if models[k].heading_deg == h}
            if sorted(at) != list(tps):
                raise InputError(f"workability_gradient: phase {name!r} at heading {h:g} deg has models at Tp {sorted(at)} s, "
                                 f"its other headings at {list(tps)} s: one set of periods for every heading")
            rows.append([at[tp] for tp in tps])
        curves.append((tps, rows))
    loose = [f"{models[k].phase!r} at Tp {models[k].tp:g} s, heading {models[k].heading_deg:g} deg"
             for _, rows in curves for row in rows for k in row if found[k].status == "unconverged"]
    if loose:
        raise InputError(f"workability_gradient: the search's bracket is wider than its tolerance after max_evaluations runs "
                         f"({', '.join(loose)}): raise max_evaluations")
    hs = [jnp.asarray([[float(site_limit(found[k].hs, found[k].status)) for k in row] for row in rows]) for _, rows in curves]

    def work(limits):
        rows = []
        for (tps, _), lim in zip(curves, limits):  # lim: (headings, periods)
            a = alpha if alpha is not None else alpha_of(lim, t_pop, forecast_level)
            inside = np.isfinite(tp_hours) & (tp_hours >= tps[0]) & (tp_hours <= tps[-1])
            at = jnp.asarray(np.where(inside, tp_hours, tps[0]))
            best = jnp.max(jax.vmap(lambda op: jnp.interp(at, jnp.asarray(tps), op))(a * lim), axis=0)  # each hour's best heading
            rows.append(jnp.where(jnp.asarray(inside), best, jnp.nan))
        if contingency_hours:  # the least of the phases' limits, NaN (a no-go) where any phase's is; no NaN in its gradient
            stack = jnp.stack(rows)
            finite = jnp.isfinite(stack)
            rows.append(jnp.where(jnp.all(finite, axis=0), jnp.min(jnp.where(finite, stack, jnp.inf), axis=0), jnp.nan))
        return smooth_workability(series, tuple(durations) + ((contingency_hours,) if contingency_hours else ()),
                                  jnp.stack(rows), month, width=width)

    w, dw = jax.value_and_grad(work)(hs)
    total = dict.fromkeys(paths, 0.0)
    for (_, rows), d in zip(curves, dw):
        for h, row in enumerate(rows):
            for j, k in enumerate(row):
                # a limit no hour takes (another heading is better) adds nothing; a search that found no root sits at
                # its range's end, which does not move with the design: derivative 0
                if float(d[h, j]) != 0.0 and found[k].status == "root":
                    g = models[k].gradient(found[k], values)
                    total = {p: total[p] + float(d[h, j]) * g[p] for p in paths}
    return float(w), total
