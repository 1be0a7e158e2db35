"""Scenarios: an operation as an ordered sequence of phases, each started by a command and ended by a
time or a state.

A shipyard lift (Ku et al. 2012) is hoisting-up, transport, turn-over, hoisting-down: each phase gives new
values to parameters of force elements and controllers (a winch's pay-out rate, a trolley's set
point) and lasts until a real-valued condition on the state crosses zero (the block is 2 m up; the
gantry is at the dock and has stopped) or until its time limit.

Continuous dynamics, discrete commands
--------------------------------------
Inside phase k the system is the ODE ẏ = f_k(t, y) with y = (q, v, z), the parameters of phase k
substituted into the named array leaves of the named elements (``equinox.tree_at``).  The phase ends
at the first time t_k > t_{k-1} where its condition margin g_k(t, y(t)) crosses zero upwards (g < 0:
not yet; g ≥ 0: done), found by ``diffrax.Event`` with a bisection root finder on the solver's dense
output, so t_k is accurate to the root-finder tolerance rather than to a step, and it carries
gradients by the implicit-function theorem,

    dt_k/dθ = −(∂g_k/∂θ + ∂g_k/∂y · ∂y/∂θ) / (dg_k/dt),

which is what ``jax.grad`` of an event time returns.  The next phase restarts the solve at
(t_k, y(t_k)): the state is carried over, the parameters change.  A condition that already holds
when its phase starts ends the phase at once (zero length).  A phase with no condition lasts
``max_duration`` s; a phase whose condition does not fire within ``max_duration`` ends there with a
``"time limit"`` event and a :class:`ScenarioTimeLimit` warning, and the run stops there unless the
phase says ``on_time_limit = "continue"``: a lift does not go on to transport a block that never
left the ground.

Schedules
---------
A set value is either a constant (applied from the phase start) or a ramp ``{"target": x, "rate":
r}``: the leaf moves from its value at the phase start towards ``target`` at ``r`` units per second
(element-wise) and stays there,

    θ(t) = θ_start + clip(target − θ_start, −r (t − t_start), r (t − t_start)),

the usual rate-limited command of a crane drive (a PD controller following a ramped set point
travels at the ramp speed instead of lunging at a distant target).

Dict schema (``Scenario.from_dict(d, system)``; a system file's ``[[scenario.phases]]`` tables)
--------------------------------------------------------------------------------------------------
::

    {"name": "block lifting",                      # optional
     "phases": [                                    # or pass the list of phases itself
       {"name": "hoisting-up",                      # required, unique
        "set": {                                    # element name (fnmatch pattern allowed) -> field -> value
            "hoist_*":   {"payout_rate": -0.1},                        # constant, from the phase start
            "gantry_pd": {"setpoint": {"target": [120.0], "rate": 0.5}}},  # ramp (units/s)
        "until": {"output": "block/z", "op": ">=", "value": 21.0},     # optional condition
        "max_duration": 600.0,                      # s, required: the time limit (or the duration)
        "on_time_limit": "stop"},                   # or "continue"; default "stop"
       ...],
     "report": ["hoist_1/tension"]}                 # optional: element outputs tabulated per phase and
                                                    # plotted by `jaxmbd run` (default: every wire rope's
                                                    # hook load or tension, every Morison object's depth)

A condition is one of::

    {"output": NAME, "op": ">=" | ">" | "<=" | "<", "value": x}      g = out − x  or  x − out
    {"output": NAME, "op": "near", "value": x, "tol": ε}             g = ε − |out − x|
    {"all": [cond, ...]}                                              g = min g_i  (every one holds)
    {"any": [cond, ...]}                                              g = max g_i  (one holds)
    a Python callable fn(t, y, probe) -> real                         g = fn(...)

with an optional ``"index": i`` for vector outputs.  Output names (``probe[NAME]``):
``time``; ``<body>/x|y|z`` (world position of the body frame, m), ``<body>/vx|vy|vz|speed``
(world velocity of the frame origin, m/s), ``<body>/wx|wy|wz`` (world angular velocity, rad/s),
``<body>/roll|pitch|yaw`` (z-y-x Euler, rad), ``<body>/tilt`` (angle between the body z axis and
world z, rad, in [0, π]: 0 level, π upside down; free of the ±π wrap of roll); ``<joint>/q``,
``<joint>/v`` (a joint or the body hanging from it; ``index`` for multi-coordinate joints);
``<element>/<output>`` (any force-element output, e.g. ``hoist_1/tension``).  ``block_z`` is read
as ``block/z``.  Values are SI (m, s, rad, N); degrees are the caller's conversion.

Results
-------
:meth:`Scenario.run` returns a :class:`~jaxmbd.results.Result` with phases: the
time series of all phases concatenated on the save grid ``t0 + n·save_dt`` plus every phase's
start and end, ``phase`` (index per saved time), ``events`` (one :class:`PhaseEvent` per finished
phase: time, phase, what ended it).  A phase boundary appears twice, as the last sample of phase k
and the first of phase k + 1, so an output that jumps when the commands change (a PD torque) plots
as a step.  :meth:`Scenario.solve` is the pure, differentiable core (no Python-side checks; all
phases run): differentiate event times or final states with respect to anything in the system or
the scenario.  With a fixed step the tensions, hook loads and outputs a range of validity bounds are also
taken at every step (``Result.between``, as :func:`jaxmbd.simulate` takes them), so their maxima, minima and
slack spells per phase do not depend on ``save_dt``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from typing import Any, Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._xla import ONE_OFF_JIT_OPTIONS, system_jit
from .conditions import (
    AllOf,
    AnyOf,
    Condition,
    Never,
    Probe,
    ScenarioError,
    Threshold,
    When,
    check_signal,
    condition_from_dict,
    phase_settings,
    setting_leaf,
    setting_number,
)
from .events import ROOT_TOL, EndpointBisection
from .paths import element_index, element_of
from .results import PhaseRecord, Result
from .simulation import Integrator, SimulationError, initial_state
from .system import System

__all__ = ["Scenario", "Phase", "PhaseEvent", "ScenarioSolution", "ScenarioError", "ScenarioTimeLimit", "Condition",
           "Threshold", "AllOf", "AnyOf", "When", "Never", "Probe", "condition_from_dict"]


TRACK_BYTES = 512 * 2**20  # a phase's outputs at every step, kept for the extremes between the saves: at most this


def default_save_dt(scenario) -> float:
    """The saves' step of a scenario run without ``save_dt``: its longest phase over 200 (s)."""
    return max(p.max_duration for p in scenario.phases) / 200


def track_steps(scenario, dt: float) -> int:
    """The buffer, in steps, that an output tracked at every step takes per realisation at the fixed step ``dt``
    (the scenario's longest phase's)."""
    return int(math.ceil(max(p.max_duration for p in scenario.phases) / dt)) + 2


def tracks_every_step(scenario, names, dt: float, n: int) -> bool:
    """Whether ``names`` taken at every step for ``n`` realisations at once stay within :data:`TRACK_BYTES`
    (otherwise a run reads its maxima and ranges at the saves only)."""
    return track_steps(scenario, dt) * len(names) * 8 * n <= TRACK_BYTES


class ScenarioTimeLimit(UserWarning):
    """A phase's condition did not fire within its ``max_duration``."""


# ---------------------------------------------------------------------------------------------
# Phases and scenarios


class Phase(eqx.Module):
    """One phase: new values for element leaves, an end condition and a time limit (s).

    ``targets[i]`` is the value of leaf ``leaves[i] = (element, field)``; ``rates[i]`` is ``None``
    for a constant, else the ramp rate (units/s, > 0) towards the target.
    """

    name: str = eqx.field(static=True)
    leaves: tuple = eqx.field(static=True)
    targets: tuple
    rates: tuple
    until: Condition | None
    max_duration: float = eqx.field(static=True)
    on_time_limit: str = eqx.field(static=True, default="stop")

    def __check_init__(self):
        if not (isinstance(self.max_duration, (int, float)) and math.isfinite(self.max_duration)
                and self.max_duration > 0):
            raise ScenarioError(f"phase {self.name!r}: max_duration must be a finite number of seconds > 0, "
                                f"got {self.max_duration!r}")
        if self.on_time_limit not in ("stop", "continue"):
            raise ScenarioError(f"phase {self.name!r}: on_time_limit must be 'stop' or 'continue'")


class Scenario(eqx.Module):
    """An ordered list of :class:`Phase` es (see the module docstring for semantics and schema)."""

    phases: tuple
    name: str = eqx.field(static=True, default="scenario")
    report: tuple = eqx.field(static=True, default=())

    def __check_init__(self):
        names = [p.name for p in self.phases]
        if not names:
            raise ScenarioError(f"{self.name}: a scenario needs at least one phase")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ScenarioError(f"{self.name}: duplicate phase names {dup}")

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, d, system: System) -> "Scenario":
        """Build and check a scenario against ``system`` from the dict schema of the module docstring."""
        name = "scenario"
        if isinstance(d, dict):
            unknown = set(d) - {"name", "phases", "report"}
            if unknown or "phases" not in d:
                raise ScenarioError(f"scenario: expected keys 'phases' (and 'name', 'report'), got {sorted(d)}")
            name, plist = str(d.get("name", name)), d["phases"]
            report = d.get("report", ())
            if not (isinstance(report, (list, tuple)) and all(isinstance(r, str) for r in report)):
                raise ScenarioError(f"scenario.report: expected a list of output names, got {report!r}")
            known = system.output_units()
            for r in report:
                if r not in known:
                    raise ScenarioError(f"scenario.report: {r!r} is not an element output; known: {sorted(known)}")
        else:
            plist = d
        if not isinstance(plist, (list, tuple)):
            raise ScenarioError("scenario: 'phases' must be a list of phase tables")
        phases = []
        for k, p in enumerate(plist):
            where = f"scenario phase {k} ({p.get('name', '?') if isinstance(p, dict) else '?'})"
            if not isinstance(p, dict):
                raise ScenarioError(f"{where}: a phase is a dict")
            unknown = set(p) - {"name", "set", "until", "max_duration", "on_time_limit"}
            if unknown:
                raise ScenarioError(f"{where}: unknown keys {sorted(unknown)}")
            if "name" not in p or "max_duration" not in p:
                raise ScenarioError(f"{where}: 'name' and 'max_duration' are required")
            leaves, targets, rates = phase_settings(system, p.get("set") or {}, where)
            until = p.get("until")
            if until is not None:
                until = condition_from_dict(until)
            phases.append(Phase(name=str(p["name"]), leaves=tuple(leaves), targets=tuple(targets),
                                rates=tuple(rates), until=until, max_duration=setting_number(p["max_duration"], f"{where}: max_duration", "s"),
                                on_time_limit=str(p.get("on_time_limit", "stop"))))
        sc = cls(tuple(phases), name=name, report=tuple(report) if isinstance(d, dict) else ())
        sc.check(system)
        return sc

    def report_outputs(self, system: System) -> tuple:
        """The outputs a run tabulates per phase and plots: ``report`` when given, else every wire rope's
        hook load (its tension with one fall) and every Morison object's depth."""
        if self.report:
            return self.report
        names = []
        for f in system.forces:
            if f.kind == "wire_rope":
                names.append(f"{f.name}/{'hook_load' if f.falls > 1 else 'tension'}")
            elif f.kind == "morison_object":
                names.append(f"{f.name}/depth")
        return tuple(names)

    def check(self, system: System):
        """Raise :class:`ScenarioError` if an element, field or output named here is not in ``system``."""
        for p in self.phases:
            for el, field in p.leaves:
                setting_leaf(system, el, field)
            if p.until is None:
                continue
            for name in p.until.outputs():
                check_signal(name, system)
        return self

    # -- the plan of leaf values the compiled segment reads -----------------------------------

    def leaves(self) -> tuple:
        """Every (element, field) that some phase sets, in first-use order."""
        out = []
        for p in self.phases:
            out += [l for l in p.leaves if l not in out]
        return tuple(out)

    def _plan(self, system: System) -> "_Plan":
        leaves = self.leaves()
        target, rate, touched, ramped = [], [], [], []
        for el, field in leaves:
            like = setting_leaf(system, el, field)
            tg, rt, to, rp = [], [], [], []
            for p in self.phases:
                if (el, field) in p.leaves:
                    j = p.leaves.index((el, field))
                    tg.append(p.targets[j])
                    rt.append(p.rates[j] if p.rates[j] is not None else jnp.zeros_like(like))
                    to.append(True)
                    rp.append(p.rates[j] is not None)
                else:
                    tg.append(like)
                    rt.append(jnp.zeros_like(like))
                    to.append(False)
                    rp.append(False)
            target.append(jnp.stack(tg))
            rate.append(jnp.stack(rt))
            touched.append(jnp.asarray(to))
            ramped.append(jnp.asarray(rp))
        conds = tuple(p.until if p.until is not None else Never() for p in self.phases)
        getters = tuple((element_index(system, el), field) for el, field in leaves)
        return _Plan(getters, tuple(target), tuple(rate), tuple(touched), tuple(ramped), conds)

    def start_values(self, system: System) -> tuple:
        return tuple(setting_leaf(system, el, field) for el, field in self.leaves())

    # -- solving -------------------------------------------------------------------------------

    def solve(self, system: System, y0, t0=0.0, *, integrator: Integrator = Integrator(), save_dt: float | None = None,
              waves=None, params=None, root_tol: float = ROOT_TOL) -> "ScenarioSolution":
        """Run every phase in order from ``y0 = (q, v, z)`` at ``t0``; pure and differentiable.

        Returns a :class:`ScenarioSolution`: ``t_end[k]`` the time phase k ended (its event time),
        ``y_end`` the final state, ``fired[k]`` whether phase k's condition ended it, and the saved
        segments.  No Python-side checks run, so it can sit under ``jax.grad``/``jax.vmap``; a phase
        that times out simply hands over to the next one.  ``root_tol`` (s) is the root finder's tolerance
        on event times.
        """
        plan = self._plan(system)
        forcing = system.inputs(waves, params)
        grid = self._grid(save_dt)
        starts = self.start_values(system)
        t = jnp.asarray(t0, dtype=system.model.inertia.dtype)
        y = y0
        t_end, fired, ok, segs = [], [], [], []
        for k, p in enumerate(self.phases):
            seg = _segment(system, plan, jnp.asarray(k), starts, t, t + p.max_duration, y, forcing, grid,
                           integrator, root_tol)
            segs.append(seg)
            t_end.append(seg.t_end)
            fired.append(seg.fired)
            ok.append(seg.ok)
            starts = _leaf_values(plan, jnp.asarray(k), starts, t, seg.t_end)
            t, y = seg.t_end, seg.y_end
        return ScenarioSolution(jnp.stack(t_end), y, jnp.stack(fired), jnp.stack(ok), tuple(segs))

    def solve_phases(self, system: System, y0, *, integrator: Integrator, save_dt: float | None = None, waves=None,
                     params=None, root_tol: float = ROOT_TOL, track: tuple = (), outputs: tuple = ()):
        """Every phase of a run from ``y0`` at t = 0 as :meth:`run` records it, pure and differentiable, one compiled
        segment in a loop: (start times, end times, whether the solver finished each phase, whether each ended by
        its condition, ``outputs`` at the samples :meth:`run` keeps of each phase (times, whether each is in the
        phase, values), ``track``'s outputs at every step of each (times, inf after the last; values) or None),
        each with a leading phase axis."""
        plan, forcing, grid = self._plan(system), system.inputs(waves, params), self._grid(save_dt)
        steps = (tuple(track), track_steps(self, integrator.dt)) if track else None
        limits = jnp.asarray([p.max_duration for p in self.phases], dtype=system.model.inertia.dtype)

        def phase(carry, j):
            starts, t, y = carry
            seg = _segment_one(system, plan, j, starts, t, t + limits[j], y, forcing, grid, integrator, root_tol, steps)
            saved = _saved_outputs(system, plan, j, starts, t, y, seg, forcing, tuple(outputs))
            return ((_leaf_values(plan, j, starts, t, seg.t_end), seg.t_end, seg.y_end),
                    (t, seg.t_end, seg.ok, seg.fired | (seg.g0 >= 0), saved, seg.steps))

        carry = (self.start_values(system), jnp.zeros((), system.model.inertia.dtype), y0)
        return jax.lax.scan(phase, carry, jnp.arange(len(self.phases)))[1]

    def _grid(self, save_dt):
        if save_dt is None:
            save_dt = default_save_dt(self)
        n = int(math.ceil(max(p.max_duration for p in self.phases) / save_dt)) + 2
        return (float(save_dt), n)

    def run(self, system: System, *, q0=None, v0=None, y0=None, t0: float = 0.0, save_dt: float | None = None,
            integrator: Integrator | None = None, waves=None, params=None, root_tol: float = ROOT_TOL,
            progress: Callable[[str], None] | None = None, between: bool = True) -> Result:
        """Simulate the scenario phase by phase and collect a :class:`~jaxmbd.results.Result` with its phases.

        Starts from ``y0`` or from ``(q0, v0)`` with the elements' initial states.  After each phase
        the result code is checked (a SimulationError names the phase if the solver failed), the
        event is recorded, and a timed-out condition stops the run with a :class:`ScenarioTimeLimit`
        warning unless the phase says ``on_time_limit = "continue"``.  ``progress`` receives one line
        per finished phase.  ``between``: with a fixed step, the outputs :meth:`System.tracked_outputs
        <jaxmbd.system.System.tracked_outputs>` names are also taken at every step (``Result.between``: their
        maxima, minima and slack spells do not depend on ``save_dt``), as :func:`jaxmbd.simulate` takes them.
        """
        self.check(system)
        y = initial_state(system, q0, v0) if y0 is None else y0
        return self._run(system, y, [waves], t0, save_dt, integrator or Integrator(), params, root_tol, progress, between)[0]

    def run_many(self, system: System, y0, waves: list, *, t0: float = 0.0, save_dt: float | None = None,
                 integrator: Integrator | None = None, params=None, root_tol: float = ROOT_TOL, between: bool = True,
                 diverged: str = "raise") -> list[Result]:
        """:meth:`run` from ``y0`` in every wave realisation of ``waves`` at once: each phase one compiled
        program over the realisations (``jax.vmap``; each realisation ends the phase at its own event
        time, the finished ones wait for the rest).  One :class:`~jaxmbd.results.Result` per realisation,
        equal to :meth:`run`'s to round-off; an error names the realisation (its index in ``waves``).
        ``diverged``: ``"raise"``, a realisation whose state becomes non-finite is a SimulationError;
        ``"stop"``, it stops at its last finite save with a ``"diverged"`` event saying between which times
        (a study of many sea states records it and goes on)."""
        self.check(system)
        if diverged not in ("raise", "stop"):
            raise ScenarioError(f"run_many: diverged must be 'raise' or 'stop', got {diverged!r}")
        if len(waves) < 2 and diverged == "raise":
            return [self.run(system, y0=y0, t0=t0, save_dt=save_dt, integrator=integrator, waves=w, params=params,
                             root_tol=root_tol, between=between) for w in waves]
        return self._run(system, y0, list(waves), t0, save_dt, integrator or Integrator(), params, root_tol, None, between,
                         diverged)

    def _run(self, system, y, waves, t0, save_dt, integrator, params, root_tol, progress, between,
             diverged="raise") -> list[Result]:
        """The phases of every realisation of ``waves``: one at a time for one, batched (vmap) for several."""
        plan = self._plan(system)
        names = system.tracked_outputs() if between and integrator.dt is not None else ()
        track = (names, track_steps(self, integrator.dt)) if names else None
        if track and not tracks_every_step(self, names, integrator.dt, len(waves)):
            warnings.warn(f"{system.name}: scenario {self.name!r}: its outputs at every step of its longest phase ({track[1]} "
                          f"steps x {len(names)} outputs x {len(waves)} realisations, {track[1] * len(names) * len(waves) / 2**17:.3g} "
                          f"MB) exceed {TRACK_BYTES / 2**20:.3g} MB: its maxima and ranges are read at the saves only (a shorter "
                          "max_duration, or fewer realisations at once, takes them at every step)", stacklevel=3)
            track = None
        many = len(waves) > 1
        forcing = system.inputs(waves[0], params)
        if many:
            forcing = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *[system.inputs(w, params) for w in waves])
        batch = (lambda a: jnp.broadcast_to(jnp.asarray(a), (len(waves),) + jnp.shape(a))) if many else jnp.asarray
        grid = self._grid(save_dt)
        starts = jax.tree_util.tree_map(batch, self.start_values(system))
        t = batch(jnp.asarray(t0, dtype=system.model.inertia.dtype))
        y = jax.tree_util.tree_map(batch, y)
        runs = [PhaseRecord() for _ in waves]
        for k, p in enumerate(self.phases):
            kk = jnp.asarray(k)
            seg = (_segments if many else _segment)(system, plan, kk, starts, t, t + p.max_duration, y, forcing, grid,
                                                    integrator, root_tol, track)
            live = [r for r, rec in enumerate(runs) if not rec.stopped]
            pieces = {r: self._piece(system, k, _take(seg, r, many), _take((t, y), r, many), r if many else None, diverged)
                      for r in live}
            every = [pieces.get(r, pieces[live[0]]) for r in range(len(runs))]  # a stopped one's outputs unused
            ts_k, ys_k = _padded([piece[0] for piece in every], [piece[1] for piece in every], grid[1] + 2)
            outs = (_outputs_many if many else _outputs_padded)(
                system, plan, kk, starts, t, ts_k if many else ts_k[0],
                ys_k if many else jax.tree_util.tree_map(lambda a: a[0], ys_k), forcing)
            for r in live:
                ts_r, ys_r, event = pieces[r]
                runs[r].add(ts_r, ys_r, {key: np.asarray(val)[r if many else ...][: ts_r.size] for key, val in outs.items()},
                            k, event, None if track is None else jax.tree_util.tree_map(np.asarray, _take(seg.steps, r, many)))
                if progress is not None:
                    progress(f"phase {k} {p.name!r}: {float(_take(t, r, many)):.6g} s -> {event.time:.6g} s, "
                             f"ended by {event.trigger}: {event.detail}")
                runs[r].stopped = _time_limit(self, k, event, r if many else None) or event.trigger == "diverged"
            starts = _next_starts(plan, kk, starts, t, seg.t_end, many)
            dead = [r for r in live if pieces[r][2].trigger == "diverged"]
            if dead and many:  # a diverged realisation waits for the rest from its phase's (finite) start: no NaN in the batch
                out = jnp.zeros(len(runs), bool).at[jnp.asarray(dead)].set(True)
                keep = lambda a, b: jnp.where(out.reshape((-1,) + (1,) * (jnp.ndim(a) - 1)), a, b)  # noqa: E731
                t, y = keep(t, seg.t_end), jax.tree_util.tree_map(keep, y, seg.y_end)
            else:
                t, y = seg.t_end, seg.y_end
            if all(rec.stopped for rec in runs):
                break
        names = tuple(p.name for p in self.phases)
        return [rec.result(system, names, self.name) for rec in runs]

    def _piece(self, system, k, seg, start, realisation, diverged="raise"):
        """One realisation's phase k: its saved times and states (start, grid, end) and its :class:`PhaseEvent`."""
        p = self.phases[k]
        (t, y), which = start, "" if realisation is None else f", realisation {realisation}"
        t_s, t_e = float(t), float(seg.t_end)
        if not bool(seg.ok):
            raise SimulationError(
                f"{system.name}: scenario {self.name!r}, phase {k} ({p.name!r}){which} started at t = {t_s:.6g} s: "
                f"the integrator stopped at t = {t_e:.6g} s: {_solver_message(seg.result)}")
        gts = np.asarray(seg.ts)
        keep = np.isfinite(gts) & (gts > t_s) & (gts < t_e)
        ts_k = np.concatenate([[t_s], gts[keep], [t_e]])
        ys_k = jax.tree_util.tree_map(
            lambda a, b, c: np.concatenate([np.asarray(a)[None], np.asarray(b)[keep], np.asarray(c)[None]]),
            y, seg.ys, seg.y_end)
        finite = np.all([np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1) for a in ys_k], axis=0)
        if not finite.all() and diverged == "raise":
            raise SimulationError(f"{system.name}: scenario {self.name!r}, phase {k} ({p.name!r}){which}: the state became "
                                  f"non-finite between t = {t_s:.6g} s and {t_e:.6g} s; the run diverged")
        if not finite.all():  # its last finite save ends it
            return _until_diverged(ts_k, ys_k, finite, k, p.name)
        if p.until is None:
            trigger, detail = "duration", f"{p.max_duration:g} s elapsed"
        elif bool(seg.fired):
            trigger, detail = "condition", p.until.describe()
        elif bool(seg.g0 >= 0):
            trigger, detail = "condition", p.until.describe() + " (already met when the phase started)"
        else:
            trigger = "time limit"
            detail = f"{p.until.describe()} not reached within max_duration = {p.max_duration:g} s"
        return ts_k, ys_k, PhaseEvent(time=t_e, phase=k, name=p.name, trigger=trigger, detail=detail)


def _time_limit(scenario: Scenario, k, event, realisation) -> bool:
    """Warn of a phase that hit its time limit; whether the run stops there."""
    if event.trigger != "time limit":
        return False
    p = scenario.phases[k]
    which = "" if realisation is None else f" (realisation {realisation})"
    msg = f"scenario {scenario.name!r}{which}: phase {k} ({p.name!r}) hit its time limit at t = {event.time:.6g} s: {event.detail}"
    if p.on_time_limit == "stop":
        rest = [q.name for q in scenario.phases[k + 1:]]
        msg += "; the run stops here" + (f" (phases not run: {rest})" if rest else "")
        warnings.warn(msg, ScenarioTimeLimit, stacklevel=4)
        return True
    warnings.warn(msg + "; going on (on_time_limit = 'continue')", ScenarioTimeLimit, stacklevel=4)
    return False


def _until_diverged(ts, ys, finite, k: int, name: str):
    """A phase's saves up to its last finite one (its start is finite), with the ``"diverged"`` event there."""
    i = int(np.argmin(finite))
    detail = f"the state became non-finite between t = {ts[i - 1]:.6g} s and {ts[i]:.6g} s"
    return ts[:i], tuple(a[:i] for a in ys), PhaseEvent(float(ts[i - 1]), k, name, "diverged", detail)


def _take(tree, r: int, many: bool):
    """Realisation ``r`` of a batched pytree; the tree itself when not batched."""
    return jax.tree_util.tree_map(lambda a: a[r], tree) if many else tree


def _padded(ts: list, ys: list, n: int):
    """Saved times and states of each realisation, padded to ``n`` samples by repeating the last, stacked."""
    def pad(a):
        return np.concatenate([a, np.repeat(a[-1:], n - a.shape[0], axis=0)]) if a.shape[0] < n else a

    return (jnp.asarray(np.stack([pad(a) for a in ts])),
            tuple(jnp.asarray(np.stack([pad(y[i]) for y in ys])) for i in range(3)))


def _solver_message(result) -> str:
    """What diffrax's result code says, in one line, with what to do about it."""
    text = " ".join(str(diffrax.RESULTS[result]).split())
    if bool(result == diffrax.RESULTS.max_steps_reached):
        return text + " (raise max_steps, loosen the tolerances or shorten the phase)"
    if "nonlinear" in text.lower():
        return ("the root finder for the phase's end condition did not converge (" + text + "); a condition on an output "
                "that oscillates fast near its threshold: end the phase on a steadier output, or raise root_tol")
    return text


# ---------------------------------------------------------------------------------------------
# The compiled phase segment


class _Plan(eqx.Module):
    """Per-leaf values of every phase, stacked on a leading phase axis, so that one compiled segment
    serves all phases (the phase index is traced)."""

    getters: tuple = eqx.field(static=True)   # (element index, field) per leaf
    target: tuple                             # (n_phases, *leaf shape) per leaf
    rate: tuple
    touched: tuple                            # (n_phases,) bools: the phase sets this leaf
    ramped: tuple                             # (n_phases,) bools: ... as a ramp
    conds: tuple                              # one Condition per phase (Never for duration phases)


def _leaf_values(plan: _Plan, k, starts, t_start, t):
    """Leaf values in phase k at time t: constant targets, ramps from the values at the phase start."""
    out = []
    tau = t - t_start
    for start, tg, rt, to, rp in zip(starts, plan.target, plan.rate, plan.touched, plan.ramped):
        tgt, rate = tg[k], rt[k]
        ramp = start + jnp.clip(tgt - start, -rate * tau, rate * tau)
        out.append(jnp.where(to[k], jnp.where(rp[k], ramp, tgt), start))
    return tuple(out)


@functools.partial(eqx.filter_jit, compiler_options=dict(ONE_OFF_JIT_OPTIONS) or None)
def _next_starts(plan: _Plan, k, starts, t_start, t_end, many: bool):
    """The leaves' values where phase k ends (the next phase's starts), over the realisations when ``many``: one
    program for every phase (op by op, some tens of small ones to compile)."""
    one = functools.partial(_leaf_values, plan, k)
    return (jax.vmap(one) if many else one)(starts, t_start, t_end)


def _system_at(system: System, plan: _Plan, k, starts, t_start, t) -> System:
    if not plan.getters:
        return system
    vals = _leaf_values(plan, k, starts, t_start, t)
    n = len(system.forces)
    return eqx.tree_at(lambda s: [getattr(element_of(s, i, n), f) for i, f in plan.getters], system, list(vals))


class _Segment(eqx.Module):
    ts: Any
    ys: Any
    t_end: Any
    y_end: Any
    fired: Any
    ok: Any
    g0: Any
    result: Any = None
    steps: Any = None  # (the start and every step's end, inf after the last; the tracked outputs there)
    saved: Any = None  # (the start, the grid, the end; whether each is in the phase; the outputs there)


def _saved_outputs(system, plan, k, starts, t_start, y_start, seg, forcing, names):
    """(times, in the phase, {name: values}) at phase k's start, its save grid and its end: the samples
    :meth:`Scenario.run` keeps of the phase (the grid's points strictly between its start and end)."""
    ts = jnp.concatenate([t_start[None], seg.ts, seg.t_end[None]])
    ys = jax.tree_util.tree_map(lambda a, b, c: jnp.concatenate([a[None], b, c[None]]), y_start, seg.ys, seg.y_end)
    inside = jnp.isfinite(seg.ts) & (seg.ts > t_start) & (seg.ts < seg.t_end)
    keep = jnp.concatenate([jnp.ones(1, bool), inside, jnp.ones(1, bool)])
    # the grid past the phase's end holds no state (inf): the start's stands in, so no NaN reaches a derivative
    ys = jax.tree_util.tree_map(lambda a, b: jnp.where(keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b[None]), ys, y_start)
    ts = jnp.where(keep, ts, t_start)

    def one(t, q, v, z):
        out = _system_at(system, plan, k, starts, t_start, t).outputs(t, (q, v, z), forcing)
        return {n: out[n.partition("[")[0]][int(n[n.index("[") + 1:-1])] if "[" in n else out[n] for n in names}

    return ts, keep, jax.vmap(one)(ts, *ys)


def _segment_one(system, plan, k, starts, t_start, t_limit, y0, forcing, grid, integrator, root_tol, track=None):
    """Solve phase k from (t_start, y0) until its condition crosses zero upwards or t_limit; ``track``:
    (output names, most steps of a phase): those outputs at every step as well (:class:`_Segment`)."""

    def f(t, y, args):
        return _system_at(system, plan, k, starts, t_start, t).rhs(t, y, forcing)

    def margin(t, y):
        s = _system_at(system, plan, k, starts, t_start, t)
        branches = [lambda t, y, c=c: c.margin(Probe(s, t, y, forcing)) for c in plan.conds]
        g = jax.lax.switch(k, branches, t, y) if len(branches) > 1 else branches[0](t, y)
        return jnp.asarray(g, dtype=t_start.dtype)

    g0 = margin(t_start, y0)
    # a condition that already holds ends the phase at once: diffrax only sees sign changes
    t1 = jnp.where(g0 >= 0, t_start, t_limit)
    # the root finder stops on |g| < root_tol as well as on the step in t: in the margin's own units
    # (N for a hook load) that cannot be met in float64, so it sees g over its size at the phase start
    # (a constant: the root and dt/dθ are unchanged)
    scale = jax.lax.stop_gradient(jnp.maximum(jnp.abs(g0), 1e-12))
    save_dt, n = grid
    k0 = jnp.ceil(t_start / save_dt)
    ts = jnp.clip(k0 * save_dt + save_dt * jnp.arange(n), t_start, t1)
    event = diffrax.Event(lambda t, y, args, **kw: margin(t, y) / scale,
                          root_finder=EndpointBisection(rtol=root_tol, atol=root_tol), direction=True)
    max_steps = integrator.max_steps if integrator.max_steps is not None else 100_000
    subs = [diffrax.SubSaveAt(ts=ts), diffrax.SubSaveAt(t1=True)]
    if track:  # the tracked outputs (not the state) at the start and every step's end, as many as the longest phase's steps
        max_steps = min(max_steps, track[1])
        subs.append(diffrax.SubSaveAt(t0=True, steps=True, fn=lambda t, y, args: _system_at(
            system, plan, k, starts, t_start, t).tracked_values(t, y, forcing, track[0])))
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(f), integrator.solver(), t0=t_start, t1=t1, dt0=integrator.dt, y0=y0,
        saveat=diffrax.SaveAt(subs=subs),
        stepsize_controller=integrator.controller(), max_steps=max_steps, event=event,
        adjoint=diffrax.RecursiveCheckpointAdjoint(checkpoints=integrator.checkpoints), throw=False)
    fired = sol.result == diffrax.RESULTS.event_occurred
    ok = fired | (sol.result == diffrax.RESULTS.successful)
    y_end = jax.tree_util.tree_map(lambda a: a[0], sol.ys[1])
    q, v, z = y_end
    y_end = (system.model.normalise(q), v, z)
    return _Segment(sol.ts[0], sol.ys[0], sol.ts[1][0], y_end, fired, ok, g0, sol.result, (sol.ts[2], sol.ys[2]) if track else None)


def _outputs_one(system, plan, k, starts, t_start, ts, ys, forcing):
    """The outputs at the saved times ``ts`` (padded to a fixed length, so one compile serves every phase)."""
    def one(t, q, v, z):
        return _system_at(system, plan, k, starts, t_start, t).outputs(t, (q, v, z), forcing)

    return jax.vmap(one)(ts, *ys)


def _segments_over(system, plan, k, starts, t_start, t_limit, y0, forcing, grid, integrator, root_tol, track=None):
    """:func:`_segment_one` over a leading axis of realisations (their starts, times, states and forcing)."""
    one = lambda s, t0, t1, y, f: _segment_one(system, plan, k, s, t0, t1, y, f, grid, integrator, root_tol, track)  # noqa: E731
    return jax.vmap(one)(starts, t_start, t_limit, y0, forcing)


def _outputs_over(system, plan, k, starts, t_start, ts, ys, forcing):
    """:func:`_outputs_one` over a leading axis of realisations."""
    one = lambda s, t0, t, y, f: _outputs_one(system, plan, k, s, t0, t, y, f)  # noqa: E731
    return jax.vmap(one)(starts, t_start, ts, ys, forcing)


_segment = system_jit(_segment_one, forward=True)
_segments = system_jit(_segments_over, forward=True)
_outputs_padded = system_jit(_outputs_one, one_off=True)
_outputs_many = system_jit(_outputs_over, one_off=True)


# ---------------------------------------------------------------------------------------------
# Results


class ScenarioSolution(eqx.Module):
    """What :meth:`Scenario.solve` returns (JAX arrays, differentiable): ``t_end`` (n_phases,) end time of
    each phase (s), ``y_end`` the final state (q, v, z), ``fired`` (n_phases,) whether each phase's
    condition ended it, ``ok`` (n_phases,) whether the solver succeeded, ``segments`` the saved grid of
    each phase (times padded with inf / clipped to the phase end)."""

    t_end: Any
    y_end: Any
    fired: Any
    ok: Any
    segments: tuple


@dataclasses.dataclass(frozen=True)
class PhaseEvent:
    """The end of one phase: ``time`` (s), ``phase`` (index), ``name``, ``trigger`` (``"condition"``,
    ``"duration"``, ``"time limit"``, or ``"diverged"``: its last finite save, :meth:`Scenario.run_many`) and a
    readable ``detail``."""

    time: float
    phase: int
    name: str
    trigger: str
    detail: str
