"""One run path from a system to a :class:`~jaxmbd.results.Result`.

Every command goes through :func:`run`: ``jaxmbd run`` (plain or with a scenario's phases), a sweep cell,
the demo and :func:`jaxmbd.simulate` of a loaded file; ``jaxmbd tune`` takes its start from
:func:`solve_start`.  The start of a run is solved once (:func:`solve_start`: the static equilibrium,
the flexible bodies' bent rest states included) and carried as a :class:`Start` to every run that
shares it, as Pinocchio keeps a computed quantity in its Data for the next algorithm to read: a sweep
solves it once, not once a cell, and a scenario, a sweep cell and a plain run of a flexible boom start
from the same bent shape.

A run's variations are data, not code paths: the sea state (``hs``, ``tp``, ``heading``), the
``seed`` (or a PRNG ``key``), the ``duration``, the realisations and the save step are arguments that
override the case's own settings.  A scenario is a run with phases: the same function runs each
realisation through the phases and returns the same :class:`Result`, with its ``phase``, ``events``
and ``phase_names``.  The result's attributes are assembled here, once.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from . import validity
from .errors import InputTypeError, JaxmbdError
from .hydro.spectra import HsTpSpectrum, Torsethaugen
from .results import Result
from .simulation import (
    CHECKPOINT_MODES,
    SOLVERS,
    Integrator,
    default_save_dt,
    divides,
    initial_state,
    sea_state_leaves,
    simulate,
    simulate_sea_states,
    static_equilibrium,
)
from .system import System
from .tables import REQUIRED, Key, default_of, describe_value, keys


class RunError(JaxmbdError, ValueError):
    """A run asked for something the system cannot do (a sea-state override without a spectrum, a
    scenario given a duration)."""


@dataclasses.dataclass(frozen=True)
class Start:
    """Where every run of a case starts: joint coordinates ``q`` (nq,), velocities ``v`` (nv,; None: at
    rest) and the force elements' internal states ``z`` (None: each element's own initial state; after a
    static-equilibrium solve of a system with flexible bodies, their elastic coordinates at rest, the
    bent boom under its hanging load).  ``equilibrium``: whether :func:`solve_start` solved it."""

    q: Any
    v: Any = None
    z: Any = None
    equilibrium: bool = False

    def state(self, system: System):
        """(q, v, z) of ``system`` at this start."""
        return initial_state(system, self.q, self.v, self.z)


def solve_start(system: System, q0=None, *, equilibrium: bool = True, free=None, params=None) -> Start:
    """The start of ``system``'s runs: ``q0`` as it is, or (``equilibrium``) the static equilibrium found
    from it, with the flexible bodies' bent rest states (:func:`jaxmbd.simulation.static_equilibrium`;
    ``free``: the velocity directions it may move, (nv,) bools)."""
    if not equilibrium:
        return Start(system.model.neutral() if q0 is None else jnp.asarray(q0))
    if any(f.n_flex for f in system.forces):
        q, z = static_equilibrium(system, q0, free=free, params=params, return_states=True)
        return Start(q, None, z, True)
    return Start(static_equilibrium(system, q0, free=free, params=params), None, None, True)


def start_of(case) -> Start:
    """The start a loaded system file asks for (``[simulation] static_equilibrium``, ``equilibrium_free``)."""
    s = case.simulation
    return solve_start(case.system, case.q0, equilibrium=s.static_equilibrium, free=s.equilibrium_free)


def with_sea_state(system: System, *, hs=None, tp=None, heading=None) -> System:
    """The same system in another sea state: significant wave height ``hs`` (m), peak period ``tp`` (s),
    mean wave direction ``heading`` (rad, direction of travel from +x towards +y).  Only array leaves
    change, so a compiled run is reused."""
    if hs is None and tp is None and heading is None:
        return system
    waves = system.waves
    if waves is None or (waves.spectrum is None and (hs is not None or tp is not None)):
        raise RunError(f"{system.name}: a sea-state override (hs, tp) needs irregular waves (a spectrum) on the system")
    if heading is not None:
        _check_heading(system, waves, float(heading))
        if waves.regular is not None:
            waves = eqx.tree_at(lambda w: w.regular.direction, waves, jnp.asarray(heading, dtype=jnp.result_type(waves.regular.direction)))
            system = eqx.tree_at(lambda s: s.waves, system, waves)
    if waves.spectrum is None:
        return system
    spec = waves.spectrum
    if not HsTpSpectrum.of(spec):  # a tabulated spectrum: its Hs and Tp are the table's
        if hs is not None or tp is not None:
            raise RunError(f"{system.name}: a tabulated or two-peaked wave spectrum has the Hs and Tp of its table or its parts; "
                           "a sweep, a search or an override of Hs or Tp needs a JONSWAP, Pierson-Moskowitz or Torsethaugen [waves]")
        return eqx.tree_at(lambda s: s.waves.mean_direction, system, jnp.asarray(heading, dtype=jnp.result_type(waves.mean_direction)))
    hs_new, tp_new = spec.hs if hs is None else hs, spec.tp if tp is None else tp
    if isinstance(spec, Torsethaugen) and (hs is not None or tp is not None):  # a fitted model: its range of Tp
        problem = Torsethaugen.range_problem(hs_new, tp_new)
        if problem:
            raise RunError(f"{system.name}: a Torsethaugen sea needs {problem}")
    return sea_state_leaves(system, hs_new, tp_new, waves.mean_direction if heading is None else heading)


def check_headings(system: System, headings_rad) -> None:
    """Every heading (rad) of a study against the system's hydrodynamic tables, before anything runs: a
    :class:`RunError` naming the first heading a table does not cover (a table covers the circle, or its
    hull's symmetry mirrors it there: ``xz_symmetry``)."""
    for heading in np.atleast_1d(np.asarray(headings_rad, dtype=float)).tolist():
        _check_heading(system, system.waves, heading)


def _check_heading(system: System, waves, heading: float):
    """A new heading against every hydrodynamic table: inside the run it is traced, and a table would clamp
    a heading it does not cover without a word (the file's own heading is checked when it is read)."""
    dirs = waves.headings(heading)
    for f in system.forces:
        hydro = getattr(f, "hydro", None) or getattr(f, "rao", None) or getattr(f, "table", None)  # hydrodynamic data, RAOs, drift
        if hydro is not None and hasattr(hydro, "check_headings"):
            try:
                hydro.check_headings(dirs)
            except ValueError as exc:
                raise RunError(f"{system.name}: heading {np.degrees(heading):g} deg: {exc} (element {f.name!r})") from None


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """How long and how to run: ``duration`` (s; a scenario's phases set their own), ``save_dt`` (s;
    None: the simulator's default), the ``integrator``, ``n_realisations`` wave realisations (None: one
    unbatched run), the ``seed`` or an explicit PRNG ``key`` (which wins), the sea-state overrides
    ``hs`` (m), ``tp`` (s), ``heading`` (rad), the realisations per compiled batch ``chunk_size``
    (None: :func:`jaxmbd.simulation.simulate`'s default), and what a run in phases does with a realisation
    whose state becomes non-finite, ``diverged``: ``"raise"`` (a SimulationError) or ``"stop"`` (it stops there
    with a ``"diverged"`` event: :meth:`jaxmbd.scenario.Scenario.run_many`)."""

    duration: float | None = None
    save_dt: float | None = None
    integrator: Integrator = Integrator()
    n_realisations: int | None = None
    seed: int = 0
    key: Any = None
    hs: float | None = None
    tp: float | None = None
    heading: float | None = None
    chunk_size: int | None = None
    diverged: str = "raise"

    def prng_key(self):
        return self.key if self.key is not None else jax.random.key(self.seed)


def settings_of(case, **overrides) -> RunSettings:
    """The run settings of a loaded system file, with keyword overrides (None: the file's)."""
    s = case.simulation
    n = overrides.pop("n_realisations", None)
    n = s.n_realisations if n is None else n
    base = RunSettings(duration=s.duration, save_dt=s.save_dt, integrator=case.integrator,
                       n_realisations=(n or 1) if case.system.waves is not None else None, seed=s.seed)
    return _replace(base, overrides)


def _replace(settings: RunSettings, overrides: dict) -> RunSettings:
    """``settings`` with the overrides that are not None; an unknown name is one line."""
    names = [f.name for f in dataclasses.fields(RunSettings)]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise InputTypeError(f"run: unknown setting(s) {unknown}; expected {names}")
    return dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v is not None})


def run(case, start: Start | None = None, *, settings: RunSettings | None = None, scenario=None, source=None,
        progress=None, check: bool = True, time_limit: float | None = None, **overrides) -> Result:
    """Run ``case`` (a loaded system file, or a :class:`~jaxmbd.system.System` with ``settings``) from
    ``start`` (None: solved here, :func:`start_of` / :func:`solve_start`) and return its :class:`Result`.

    Keyword ``overrides`` (``hs``, ``tp``, ``heading``, ``seed``, ``key``, ``duration``, ``n_realisations``,
    ``save_dt``, ``integrator``) replace the file's settings.  A loaded file with a ``[scenario]`` (or a
    ``scenario`` given) runs its phases in every realisation (:data:`SCENARIO_BATCH` realisations as one
    program) into one result with phases (each realisation padded to the longest).  ``check``: hold the outputs against every element's
    range of validity (:mod:`jaxmbd.validity`; the excursions go to ``result.excursions`` and the
    attributes).  ``progress(done, total)`` after each batch of realisations.
    ``time_limit`` (s): stop with the estimate where the realisations done project the run past it
    (:class:`TimeBudget`; the command line's limit is :data:`TIME_LIMIT_S`, lifted by ``--yes``)."""
    system = getattr(case, "system", case)
    if scenario is None and getattr(case, "scenario", None):
        scenario = case.build_scenario()
    if scenario is not None and overrides.get("duration") is not None:
        raise RunError(f"{system.name}: a [scenario]'s phases set its duration (each phase's max_duration and "
                       "condition); leave duration out (--duration)")
    if settings is None:
        settings = settings_of(case, **overrides) if hasattr(case, "simulation") else _replace(RunSettings(), overrides)
    elif overrides:
        settings = _replace(settings, overrides)
    if scenario is None and settings.diverged != "raise":
        raise RunError(f"{system.name}: diverged = 'stop' applies to a run in phases (a [scenario]); a plain run that "
                       "diverges says where")
    if start is None:
        start = start_of(case) if hasattr(case, "simulation") else Start(system.model.neutral())
    elif not isinstance(start, Start):
        start = Start(start)  # a configuration q0
    system = with_sea_state(system, hs=settings.hs, tp=settings.tp, heading=settings.heading)
    stiffest = getattr(case, "stiffest", None)
    problem = validity.step_problem(stiffest, settings.integrator)
    if problem:  # a file's own step was refused when it was read: this is an override's
        raise RunError(f"{system.name}: {problem}")
    record = getattr(system.waves, "regular", None)
    if hasattr(record, "elevation"):  # a recorded sea repeats after its record: a run (or the phases' limits) within it
        seconds = sum(p.max_duration for p in scenario.phases) if scenario is not None else settings.duration
        if seconds is not None and seconds > record.duration + 1e-9:
            raise RunError(f"{system.name}: a run of up to {seconds:g} s (the duration, or the phases' max_duration) is longer "
                           f"than the recorded wave ({record.duration:g} s): its components would repeat the record")
    budget = TimeBudget(time_limit, f"{system.name}: the run of {settings.n_realisations or 1} realisation(s)")

    def report(done, total):
        budget(done, total)
        if progress is not None:
            progress(done, total)

    if scenario is not None:
        result = _run_phases(system, start, settings, scenario, report, check)
    else:
        result = _run_plain(system, start, settings, report, check)
    if check:
        result.excursions = (result.excursions + validity.check_sea(system.waves, result.n_realisations)
                             + validity.check_step(stiffest, settings.integrator, result.n_realisations))
    result.attrs.update(run_attrs(case, settings, result, start, source))
    return result


def run_sea_states(case, start: Start, settings: RunSettings, seas) -> list[Result]:
    """:func:`run` at every sea state ``(hs m, tp s, heading rad)`` of ``seas`` in one compiled program
    (:func:`jaxmbd.simulation.simulate_sea_states`; a file with a [scenario]: its phases in every realisation
    of every sea state, :meth:`jaxmbd.scenario.Scenario.run_many`), each result checked against the ranges of
    validity as :func:`run` checks its own; equal to one :func:`run` per sea state to round-off."""
    system = getattr(case, "system", case)
    hs, tp, heading = (np.asarray([float(x[k]) for x in seas]) for k in range(3))
    for h in sorted(set(heading.tolist())):
        _check_heading(system, system.waves, h)
    stiffest = getattr(case, "stiffest", None)
    problem = validity.step_problem(stiffest, settings.integrator)
    if problem:
        raise RunError(f"{system.name}: {problem}")
    n = settings.n_realisations or 1
    if getattr(case, "scenario", None):
        return _phases_at_sea_states(case, start, settings, seas, stiffest)
    if not settings.duration or not settings.duration > 0:
        raise RunError(f"{system.name}: a run needs a duration > 0 s, got {settings.duration}")
    everything = dataclasses.replace(settings, n_realisations=n * len(seas))  # one program holds them all
    problem = size_problem(system, everything)
    if problem:
        raise RunError(f"{system.name}: {len(seas)} sea states x {n} realisations in one program: {problem}")
    try:
        results = simulate_sea_states(system, settings.duration, hs, tp, heading, key=settings.prng_key(), n_realisations=n,
                                      save_dt=settings.save_dt, integrator=settings.integrator, q0=start.q, v0=start.v, z0=start.z)
    except Exception as exc:
        if not out_of_memory(exc):
            raise
        raise RunError(f"{system.name}: out of memory running {len(seas)} sea states x {n} realisations in one program "
                       f"(fewer together: limiting_table(together=...)); {run_sizes(system, everything)}") from None
    for r in results:
        r.excursions = (validity.check(r.system, r.time, r.outputs, True, r.between) + validity.check_sea(r.system.waves, n)
                        + validity.check_step(stiffest, settings.integrator, n))
    return results


def _phases_at_sea_states(case, start: Start, settings: RunSettings, seas, stiffest) -> list[Result]:
    """A scenario's phases in the realisations of every sea state of ``seas`` (the same keys at each: common
    random numbers), as one batch; one stacked result per sea state."""
    n = settings.n_realisations or 1
    keys = jax.random.split(settings.prng_key(), n)
    systems = [with_sea_state(case.system, hs=h, tp=t, heading=d) for h, t, d in seas]
    waves = [s.waves.realise(key) for s in systems for key in keys]
    runs = case.build_scenario().run_many(case.system, start.state(case.system), waves, save_dt=settings.save_dt,
                                          integrator=settings.integrator, diverged=settings.diverged)
    results = []
    for i, system in enumerate(systems):
        part = runs[i * n : (i + 1) * n]
        for r in part:
            r.system = system
        found = validity.merge([validity.check(system, r.time, r.outputs, False) for r in part])
        results.append(_stack(part, found + validity.check_sea(system.waves, n)
                              + validity.check_step(stiffest, settings.integrator, n)))
    return results


TIME_LIMIT_S = 3600.0
"""What a command runs without being asked: a run, sweep or study projected to take longer stops after its
first batches (or cells) with the estimate, and runs on with ``--yes``."""


class TimeBudget:
    """Projects a job's wall time from the units (batches of realisations, cells) done so far and stops it
    where the projection passes ``limit_s`` (None: never).  The first unit carries the compilation, so the
    projection starts at the second: elapsed + (units left) x (time per unit since the first)."""

    def __init__(self, limit_s: float | None, what: str, resumable: bool = False):
        self.limit_s, self.what, self.resumable = limit_s, what, resumable
        self.start = time.perf_counter()
        self.first = None  # (units done, time) at the first unit's end

    def __call__(self, done: int, total: int) -> None:
        if self.limit_s is None or done >= total:
            return
        now = time.perf_counter()
        if self.first is None:
            self.first = (done, now)
            return
        rate = (now - self.first[1]) / max(done - self.first[0], 1)
        projected = now - self.start + rate * (total - done)
        if projected > self.limit_s:
            kept = "; the work done is kept and a rerun resumes it" if self.resumable else ""
            raise RunError(f"{self.what} would take about {_hours(projected)} on this machine ({done} of {total} done in "
                           f"{now - self.start:.0f} s): --yes runs it{kept}")


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


MEMORY_SHARE = 0.8
"""The share of the machine's memory a run's results may take before it is refused up front."""


def machine_memory() -> float | None:
    """The machine's physical memory (bytes), None where the system does not say."""
    import os

    try:
        return float(os.sysconf("SC_PAGE_SIZE")) * float(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def size_problem(system: System, settings: RunSettings, memory: float | None = None) -> str | None:
    """Why a run cannot fit in the machine's memory, with the estimate, or None: the results it keeps are
    every realisation's state and outputs at every save (8 bytes a value; the outputs counted as three
    values each, most being scalars or 3-vectors), and they must fit in :data:`MEMORY_SHARE` of
    ``memory`` (default: this machine's).  Checked before anything is compiled: a size off by orders of
    magnitude (a million realisations, a duration of years) is refused in a second, not after hours."""
    memory = machine_memory() if memory is None else memory
    if memory is None:
        return None
    _, saves = _saves(settings)
    realisations = float(settings.n_realisations or 1)
    model = system.model
    values = model.nq + model.nv + system.n_states + 3 * len(system.output_units())
    need = realisations * saves * values * 8.0
    if need <= MEMORY_SHARE * memory:
        return None
    return (f"the run would keep about {need / 1e9:.3g} GB of results ({realisations:.0f} realisations x {saves:.4g} saves "
            f"x about {values} values), more than {100 * MEMORY_SHARE:.0f} % of this machine's {memory / 1e9:.3g} GB: "
            "fewer realisations, a longer save_dt or a shorter duration")


def _run_plain(system: System, start: Start, settings: RunSettings, progress, check: bool) -> Result:
    """A run without phases: its size checked before anything compiles, the realisations in batches."""
    if not settings.duration or not settings.duration > 0:
        raise RunError(f"{system.name}: a run needs a duration > 0 s, got {settings.duration}")
    problem = size_problem(system, settings)
    if problem:
        raise RunError(f"{system.name}: {problem}")
    key = settings.prng_key() if (system.waves is not None or settings.n_realisations) else None
    try:
        result = simulate(system, settings.duration, save_dt=settings.save_dt, integrator=settings.integrator,
                          q0=start.q, v0=start.v, z0=start.z, key=key, n_realisations=settings.n_realisations,
                          chunk_size=settings.chunk_size, progress=progress)
    except Exception as exc:
        if not out_of_memory(exc):
            raise
        raise RunError(f"{system.name}: out of memory while running; {run_sizes(system, settings)}") from None
    if check:
        result.excursions = validity.check(system, result.time, result.outputs, result.batched, result.between)
    return result


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the host's or XLA's out-of-memory error."""
    text = str(exc)
    return isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in text or "Out of memory" in text


def _saves(settings: RunSettings) -> tuple[float, float]:
    """The save step (s) a run takes and the number of saves it keeps per realisation."""
    save = settings.save_dt or default_save_dt(settings.duration, settings.integrator.dt)
    return float(save), float(settings.duration) / float(save) + 1.0


def run_sizes(system: System, settings: RunSettings) -> str:
    """The sizes a run's memory grows with, by the keys that set them: what an out-of-memory error names."""
    parts = [f"simulation.n_realisations = {settings.n_realisations or 1}"
             + (f" (run {settings.chunk_size} at a time)" if settings.chunk_size else "")]
    if settings.integrator.dt:
        parts.append(f"simulation.duration / dt = {settings.duration:g} s / {settings.integrator.dt:g} s = "
                     f"{settings.duration / settings.integrator.dt:.4g} steps")
    save, saves = _saves(settings)
    parts.append(f"saves every {save:g} s (simulation.save_dt): {saves:.4g} saves")
    waves = system.waves
    if waves is not None and waves.spectrum is not None:
        parts.append(f"waves.n_frequencies x n_directions = {waves.n_frequencies} x {waves.n_directions} components")
    return "the sizes it grows with: " + ", ".join(parts) + "; lower the largest"


SCENARIO_BATCH = 16
"""Realisations of a scenario run as one program (:meth:`jaxmbd.scenario.Scenario.run_many`); the progress
and the time budget are reported after each such batch."""


def _run_phases(system: System, start: Start, settings: RunSettings, scenario, progress, check: bool) -> Result:
    """The realisations through the scenario's phases, batched (their ends are events of the state, so each
    has its own time grid); one realisation: an unbatched result, several: padded and stacked."""
    n = settings.n_realisations
    if system.waves is None:
        keys = [None]
    else:  # one realisation without a count: the seed's own key, as a plain run takes it
        keys = jax.random.split(settings.prng_key(), n) if n else [settings.prng_key()]
    y0 = start.state(system)
    runs, found = [], []
    for n0 in range(0, len(keys), SCENARIO_BATCH):
        waves = [system.waves.realise(key) if key is not None else None for key in keys[n0 : n0 + SCENARIO_BATCH]]
        for res in scenario.run_many(system, y0, waves, save_dt=settings.save_dt, integrator=settings.integrator,
                                     diverged=settings.diverged):
            if check:
                found.append(validity.check(system, res.time, res.outputs, False, res.between))
            runs.append(res)
        if progress is not None:
            progress(len(runs), len(keys))
    excursions = validity.merge(found) if found else []
    if len(runs) == 1 and n is None:
        runs[0].excursions = excursions
        return runs[0]
    return _stack(runs, excursions)


def _stack(runs: list[Result], excursions) -> Result:
    """Realisations of a scenario as one batched result, each padded to the longest with NaN (phase -1)."""
    n_t = max(r.time.size for r in runs)

    def pad(a, fill):
        a = np.asarray(a)
        dtype = a.dtype if np.issubdtype(a.dtype, np.floating) else np.result_type(a.dtype, type(fill))
        out = np.full((n_t,) + a.shape[1:], fill, dtype=dtype)
        out[: a.shape[0]] = a
        return out

    stack = lambda get, fill=np.nan: np.stack([pad(get(r), fill) for r in runs])  # noqa: E731
    first = runs[0]
    return Result(first.system, stack(lambda r: r.time), stack(lambda r: r.q), stack(lambda r: r.v),
                  stack(lambda r: r.z), {k: stack(lambda r, k=k: r.outputs[k]) for k in first.outputs}, batched=True,
                  attrs=dict(first.attrs), excursions=excursions, phase=stack(lambda r: r.phase, -1),
                  events=[r.events for r in runs], phase_names=first.phase_names,
                  between={n: {k: stack(lambda r, n=n, k=k: r.between[n][k], 0 if k in ("states", "slack_entries") else np.nan)
                               for k in b} for n, b in first.between.items()}
                  if all(r.between.keys() == first.between.keys() for r in runs) else {})  # batches tracked alike, or none


def run_attrs(case, settings: RunSettings, result: Result, start: Start, source=None) -> dict:
    """The attributes of a run's result, in one place: the system file (path and text), the seed, the
    realisations, the duration and the ranges of validity left.  The sea state that ran and the version
    are written with the dataset (:func:`jaxmbd.results.result_to_dataset`), from the result's system."""
    path = source if source is not None else getattr(case, "path", None)
    attrs = {"start": "static equilibrium" if start.equilibrium else "as given",
             "seed": int(settings.seed) if settings.key is None else "explicit key",
             "realisations": int(result.n_realisations),
             "duration_s": float(settings.duration) if result.phase is None else float(
                 np.nanmax(result.time) - np.nanmin(result.time)),
             "display_loads": getattr(case, "display_loads", "kN")}  # the unit of force the tables print (report, terminal)
    if path:
        attrs["system_file"] = str(path)
        try:
            attrs["system_file_text"] = Path(path).read_text(encoding="utf-8-sig")
        except OSError:
            pass
    return attrs | validity.to_attrs(result.excursions)


__all__ = ["Start", "RunSettings", "RunError", "TimeBudget", "TIME_LIMIT_S", "run", "solve_start", "start_of", "settings_of",
           "with_sea_state", "run_attrs"]


# --------------------------------------------------------------------------- the file form

@dataclasses.dataclass(frozen=True)
class SimulationSettings:
    """``[simulation]``: run length ``duration`` (s), save interval ``save_dt`` (s, None: the
    simulator's default), ``n_realisations`` wave realisations (None: one unbatched run), PRNG
    ``seed``, whether to start from the static equilibrium and which velocity directions it may
    move (``equilibrium_free``, (nv,) bools; None: all).  With a scenario ``duration`` may be None (its
    phases set the length)."""

    duration: float | None
    save_dt: float | None = None
    n_realisations: int | None = None
    seed: int = 0
    static_equilibrium: bool = False
    equilibrium_free: np.ndarray | None = None


SIMULATION_KEYS = keys(
    Key("duration", "number", "s", doc="> 0; with a `[scenario]` its phases set a run's length and this key is "
        "only the length of a `[sweep]`'s plain runs (refused without a `[sweep]`)", default_text="required (but with a "
        "`[scenario]`)"),
    Key("save_dt", "number", "s", None, "output interval: a multiple of `dt` that divides the duration.  In a run "
        "with a fixed step (with or without phases), the tensions, hook loads and every output a range of validity "
        "bounds are also taken at every step (their largest, smallest and mean values and slack spells between the "
        "saves; the largest and smallest, slack entries and time in the result file, `<output>_max_between` etc.): "
        "their maxima, ranges and slack counts do not depend on it; other outputs' maxima (and a range on a function "
        "of a whole vector output) are taken over the saved states, so a coarse interval clips their peaks (a 9 s wave "
        "sampled every 0.5 s: up to 1.5 % of the wave-induced part)",
        "about duration / 2000, at most 0.5 s, a multiple of `dt` dividing the duration (`jaxmbd.simulation.default_save_dt`)"),
    Key("method", "string", "", default_of(Integrator, "method"), "`rk4`, `tsit5`, `dopri5`, `dopri8`, `heun`, `euler`"),
    Key("dt", "number", "s", default_of(Integrator, "dt"), "fixed step (required for `rk4`), held against the stiffest mode "
        "the elements state at q0 (a rope's bounce, a fender's or a linear mooring's stiffness on the masses they move, "
        "a lumped line's segments): beyond RK4's stability bound (ω dt > 2√2) the file is refused with the largest "
        "stable step; beyond ω dt = 1 the run reports it", "adaptive"),
    Key("rtol", "number", "", default_of(Integrator, "rtol"), "adaptive relative tolerance"),
    Key("atol", "number", "", default_of(Integrator, "atol"), "adaptive absolute tolerance"),
    Key("max_steps", "integer", "", default_of(Integrator, "max_steps"), "step budget (adaptive steps)",
        "duration / dt + 4, or 100,000 adaptive"),
    Key("checkpoints", "integer", "", default_of(Integrator, "checkpoints"), "adjoint checkpoints (adaptive steps, diffrax)",
        "diffrax's"),
    Key("checkpoint", "string", "", default_of(Integrator, "checkpoint"), "what gradients of a fixed-step run keep: "
        "`steps` (every stage's state: fastest), `saves` (one state per save, the steps run again: less memory), "
        "`auto` (`steps` up to 256 MiB per trajectory)"),
    Key("use_diffrax", "bool", "", default_of(Integrator, "use_diffrax"), "fixed steps through diffrax"),
    Key("n_realisations", "integer", "", default_of(SimulationSettings, "n_realisations"), "wave realisations",
        "one unbatched run"),
    Key("seed", "integer", "", default_of(SimulationSettings, "seed"), "PRNG seed, 0 to 2⁶³ − 1"),
    Key("static_equilibrium", "bool", "", default_of(SimulationSettings, "static_equilibrium"),
        "start from the static equilibrium near q0 (and the flexible bodies' bent rest shapes), solved once per run, "
        "sweep or scenario"),
    Key("equilibrium_free", "list of joint names, or table joint → list of directions", "", None,
        "velocity directions the equilibrium search may move (0-based within the joint; a free joint: 0-2 translation, "
        "3-5 rotation)", "all"),
)


def read_simulation(reader, cfg):
    r = reader.r
    f = "simulation"
    s = r.table(r.get(cfg, "", "simulation"), f, tuple(SIMULATION_KEYS))
    K = {k: v.default for k, v in SIMULATION_KEYS.items()}
    phases = "scenario" in cfg  # a scenario's phases set its length; a [sweep] of its plain runs may still need one
    duration = r.number(s, f, "duration", None if phases else REQUIRED, gt=0.0)
    if phases and duration is not None and "sweep" not in cfg:
        r.fail(f"{f}.duration", "not used: the [scenario]'s phases set the run's length (each phase's max_duration and "
               "condition); only a [sweep]'s plain runs take a duration. Leave it out")
    save_dt = r.number(s, f, "save_dt", K["save_dt"], gt=0.0, le=duration if duration is not None else math.inf)
    method = r.string(s, f, "method", K["method"], choices=tuple(SOLVERS))
    dt = r.number(s, f, "dt", K["dt"], gt=0.0, le=duration)
    if method == "rk4" and dt is None:
        r.fail(f"{f}.dt", "method 'rk4' has no error estimate: give a fixed step dt (s)")
    if dt is not None and save_dt is not None and save_dt < dt:
        r.fail(f"{f}.save_dt", f"must be >= dt = {dt:g} s (states are saved on the step grid), got {save_dt:g}")
    if dt is not None and save_dt is not None and abs(save_dt / dt - round(save_dt / dt)) > 1e-6:
        r.fail(f"{f}.save_dt", f"must be a multiple of dt = {dt:g} s (states are saved on the step grid), got {save_dt:g}")
    if save_dt is not None and duration is not None and not divides(duration, save_dt):
        r.fail(f"{f}.save_dt", f"must divide the duration {duration:g} s (the last save would fall at "
               f"{math.floor(duration / save_dt + 1e-9) * save_dt:g} s), got {save_dt:g}")
    if save_dt is None and duration is not None:
        save_dt = default_save_dt(duration, dt)
    integrator = Integrator(
        method=method,
        dt=dt,
        rtol=r.number(s, f, "rtol", K["rtol"], gt=0.0),
        atol=r.number(s, f, "atol", K["atol"], gt=0.0),
        max_steps=r.integer(s, f, "max_steps", K["max_steps"], ge=1),
        checkpoints=r.integer(s, f, "checkpoints", K["checkpoints"], ge=1),
        use_diffrax=r.boolean(s, f, "use_diffrax", K["use_diffrax"]),
        checkpoint=r.string(s, f, "checkpoint", K["checkpoint"], choices=CHECKPOINT_MODES),
    )
    n_real = r.integer(s, f, "n_realisations", K["n_realisations"], ge=1)
    seed = r.integer(s, f, "seed", K["seed"], ge=0)
    if seed >= 2**63:
        r.fail(f"{f}.seed", "must be < 2**63")
    eq = r.boolean(s, f, "static_equilibrium", K["static_equilibrium"])
    free = None
    if "equilibrium_free" in s:
        if not eq:
            r.fail(f"{f}.equilibrium_free", "only used with static_equilibrium = true")
        free = _free_mask(reader, s["equilibrium_free"], f"{f}.equilibrium_free")
    return integrator, SimulationSettings(duration, save_dt, n_real, seed, eq, free)


def _free_mask(reader, v, where):
    """``["hinge", "barge"]`` (all directions of these joints) or ``{barge = [2, 3, 4]}``
    (those velocity directions of the joint, 0-based: for a free joint 0-2 translations,
    3-5 rotations) -> an (nv,) bool mask."""
    model = reader.model
    r = reader.r
    mask = np.zeros(model.nv, dtype=bool)
    if isinstance(v, list):
        if not all(isinstance(x, str) for x in v):
            r.fail(where, f"expected a list of joint names or a table joint = [directions], got {describe_value(v)}")
        v = {n: None for n in v}
    if not isinstance(v, dict):
        r.fail(where, f"expected a list of joint names or a table joint = [directions], got {describe_value(v)}")
    for n, dirs in v.items():
        reader.names(n, f"{where}.{n}" if isinstance(n, str) else where, what="joint")
        sl = model.v_slice(n)
        nv = sl.stop - sl.start
        if dirs is None:
            mask[sl] = True
            continue
        if not isinstance(dirs, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dirs):
            r.fail(f"{where}.{n}", f"expected a list of velocity directions (integers 0..{nv - 1}), got {describe_value(dirs)}")
        for d in dirs:
            if not 0 <= d < nv:
                r.fail(f"{where}.{n}", f"direction {d} out of range: joint {n!r} has {nv} velocity directions (0..{nv - 1})")
            mask[sl.start + d] = True
    return mask
