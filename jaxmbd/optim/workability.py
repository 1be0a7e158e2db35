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

:func:`workability_gradient` carries these through the operational limit α(Hs*)·Hs* (α linear between
DNV's columns) and the curve over the periods to the smoothed workability of a month
(:func:`jaxmbd.operability.windows.smooth_workability`, the smoothing width stated there): the
derivative of a month's workability at a site with respect to each design value.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import validity
from ..errors import InputError
from ..operability.alpha import HS_COLUMNS, LEVELS, TABLES
from ..operability.criteria import extremes, margin_of
from ..operability.limiting import Search, below_breaking, limiting_hs
from ..operability.windows import SMOOTH_WIDTH, smooth_workability
from ..paths import get_leaf, set_leaf
from ..run import with_sea_state
from ..simulation import Integrator
from .rollout import Problem, time_grid


@dataclasses.dataclass
class LimitingHsModel:
    """One phase of a loaded file's ``[operability]`` at period ``tp`` (s) and heading ``heading_deg``, as
    a differentiable function of the design values at ``paths``.  ``dt``: the RK4 step (s; default the
    file's fixed step); ``equilibrium_newton``: Newton steps re-solving the start for each design."""

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
        if self.loaded.scenario:
            raise InputError(f"{self.loaded.path}: the gradient of a limiting sea state is for runs without phases; "
                             "this file has a [scenario]")
        phases = {p.name: p for p in op.phases}
        if self.phase not in phases:
            raise InputError(f"limiting Hs model: no phase {self.phase!r} in [operability]; its phases: {list(phases)}")
        self.criteria = phases[self.phase].criteria
        self.names = tuple(c.name for c in self.criteria)
        system = with_sea_state(self.loaded.system, tp=self.tp, heading=math.radians(self.heading_deg))
        self.paths = tuple(self.paths)
        self.initial = {p: float(np.asarray(get_leaf(system, p)).reshape(-1)[0]) for p in self.paths}
        dt = self.dt or self.loaded.integrator.dt
        if dt is None:
            raise InputError(f"{self.loaded.path}: a fixed step dt is needed (give dt or [simulation] dt)")
        ts = time_grid(op.duration, self.save_dt or dt * max(1, round(0.2 / dt)), dt)
        keys = jax.random.split(jax.random.key(op.seed), op.n_realisations)
        start = self.loaded.start()
        self.problem = Problem(system, None, None, jnp.asarray(start.q), ts, Integrator("rk4", dt=dt), keys=keys,
                               equilibrium_newton=self.equilibrium_newton,
                               equilibrium_free=self.loaded.simulation.equilibrium_free)
        self.seconds = float(ts[-1] - ts[0])
        # the sea's range of validity (the spectrum's energy the discretisation and the hydrodynamic data hold)
        # depends on the period, not on Hs: checked once here, as every run of jaxmbd.run checks it; its steepness
        # depends on Hs, and the search stays below the breaking Hs (below_breaking), so it is not checked at the file's Hs
        self.excursions = validity.check_sea(system.waves, len(keys), steepness=False)
        # one compiled program for every period and heading (their sea states are array leaves of the system)
        free = self.problem.equilibrium_free
        shape = (self.criteria, self.paths, system.tracked_outputs(), float(ts[0]), float(ts[-1]), len(ts), float(dt), len(keys),
                 self.equilibrium_newton, self.seconds, None if free is None else tuple(np.asarray(free).tolist()))
        if shape not in _COMPILED:
            _COMPILED[shape] = _compile(self.problem, self.criteria, self.paths, self.seconds)
        self._margins_of, self._jacobian_of = _COMPILED[shape]

    # -- the function and its root ----------------------------------------------------------------------

    def _margins(self, hs, values):
        p = self.problem
        return self._margins_of(p.system, p.q0, p.keys, hs, values)

    def margins(self, hs: float, values: dict | None = None) -> dict:
        """{criterion: relative margin} at ``hs`` (m) and the design ``values`` (None: the file's)."""
        m = self._margins(jnp.asarray(hs, float), self._values(values))
        return dict(zip(self.names, (float(x) for x in m)))

    def _values(self, values):
        values = dict(self.initial) if values is None else {**self.initial, **values}
        return {p: jnp.asarray(values[p], float) for p in self.paths}

    def limiting_hs(self, values: dict | None = None, search: Search | None = None):
        """The root search (:func:`jaxmbd.operability.limiting.limiting_hs`) on this model's margins, below the
        breaking Hs of its period as the study's (:func:`jaxmbd.operability.limiting.below_breaking`)."""
        op = self.loaded.operability
        return limiting_hs(lambda hs: self.margins(hs, values), self.names, below_breaking(search or op.search, self.tp))

    def gradient(self, found, values: dict | None = None) -> dict:
        """{path: dHs*/dp} at the root ``found`` (a :class:`~jaxmbd.operability.limiting.LimitingHs` of
        :meth:`limiting_hs` at the same ``values``)."""
        if found.status != "root":
            raise InputError(f"limiting Hs gradient: the search found no root (status {found.status!r}): the limit "
                             "is the search's range, which does not move with the design")
        k = self.names.index(found.governing)
        vals = self._values(values)
        x0 = jnp.concatenate([jnp.asarray([found.hs], float), jnp.stack([vals[p] for p in self.paths])])

        p = self.problem
        d = self._jacobian_of(p.system, p.q0, p.keys, x0)[k]
        if not float(d[0]) < 0:
            raise InputError(f"limiting Hs gradient: the governing margin does not fall with Hs at the root "
                             f"(dg/dHs = {float(d[0]):g})")
        return {p: float(-d[1 + i] / d[0]) for i, p in enumerate(self.paths)}


_COMPILED: dict = {}


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

    def jacobian(system, q0, keys, x):
        return jax.jacfwd(lambda y: margins(system, q0, keys, y[0], {p: y[1 + i] for i, p in enumerate(paths)}))(x)

    return jax.jit(margins), jax.jit(jacobian)


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
                         alpha=None, forecast_level: str = "base", found=None):
    """(smoothed workability of ``month``, {path: its derivative}) of a one-phase operation whose limit is
    given by ``models``: one :class:`LimitingHsModel` per period, or per heading and period, where the
    operation takes the best heading at each period (as the command's site table does, where the hindcast
    has no direction): the limit at a period is the largest of its headings', its derivative that heading's.
    The operational limit α·Hs* is interpolated linearly in Tp at each hour of ``series``; Tp outside the
    periods is a no-go.  ``durations``: the phases' hours (one phase); ``alpha``: a number, or None for
    DNV's at T_POP = the sum of ``durations``; ``found``: the models' searches at ``values`` where the caller
    has them (:meth:`LimitingHsModel.limiting_hs`), else they are run here."""
    if len(durations) != 1:
        raise InputError("workability_gradient: one phase (durations of length 1)")
    tps = np.unique([m.tp for m in models])
    if tps.size < 2:
        raise InputError("workability_gradient: models at two periods or more (the limit is a curve in Tp)")
    found = found if found is not None else [m.limiting_hs(values) for m in models]
    # a search that found no root sits at its range's end, which does not move with the design: derivative 0
    best = [max((k for k, m in enumerate(models) if m.tp == tp), key=lambda k: found[k].hs) for tp in tps]
    hs = jnp.asarray([found[k].hs for k in best])
    grads = [models[k].gradient(found[k], values) if found[k].status == "root" else dict.fromkeys(models[k].paths, 0.0)
             for k in best]
    paths = models[0].paths
    t_pop = float(sum(durations))
    tp_hours = np.where(series.present, series.tp, np.nan)
    inside = np.isfinite(tp_hours) & (tp_hours >= tps[0]) & (tp_hours <= tps[-1])

    def work(limits_at_tp):
        a = alpha if alpha is not None else alpha_of(limits_at_tp, t_pop, forecast_level)
        op = a * limits_at_tp
        at_hour = jnp.interp(jnp.asarray(np.where(inside, tp_hours, tps[0])), jnp.asarray(tps), op)
        limits = jnp.where(jnp.asarray(inside), at_hour, jnp.nan)[None, :]
        return smooth_workability(series, durations, limits, month, width=width)

    w, dw = jax.value_and_grad(work)(hs)
    return float(w), {p: float(sum(float(dw[j]) * grads[j][p] for j in range(len(tps)))) for p in paths}
