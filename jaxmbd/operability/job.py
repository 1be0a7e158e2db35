"""An operability study of a system file: limiting sea states per phase, heading and period, the
operational limits (the alpha factor), and the site's workability and waiting time.

The file's ``[operability]`` table (docs/operability.md gives the schema)::

    [operability]
    headings_deg = [180.0]        # waves' direction of travel, deg from +x towards +y (the [waves] convention)
    tp = [5.0, 7.0, 9.0]          # s, peak periods
    n_realisations = 8            # per run (the same seed at every Hs: common random numbers)
    duration = 300.0              # s per realisation of a run without phases (a scenario sets its own)
    seed = 1
    hs_max = 6.0                  # m, the top of the search (default 10 m)
    tolerance = 0.02              # m, the final bracket's width (the default)
    forecast_level = "base"       # DNV's alpha factor (a table, jaxmbd.operability.alpha), or alpha = 1.0
    contingency_hours = 3         # T_C: the windows span T_R = T_POP + T_C, the least of the phases' limits after them

    [[operability.phases]]        # the operation's phases, in sequence, with their planned hours
    name = "lift"                 # a phase of the [scenario] (every phase of a run without one: any name)
    hours = 2
    [[operability.phases.criteria]]
    output = "hoist/tension"
    upper = 4.0e5                 # N; or lower = ..., or lower_fraction = 0.1 (DNV's slack rule)
    statistic = "mpm"             # of the per-realisation maxima; "mean", "p90"
    exposure = 3600.0             # s: the MPM over this exposure (Gumbel, k = exposure / window)
    name = "hook load"            # how tables call it (default: the output and its bound, and the phase)

The study (:func:`limiting_table`) solves the start once and, for each heading and period, searches the
limiting Hs of every phase on shared runs (:class:`jaxmbd.operability.limiting.Evaluations`): one
compiled program serves every Hs, period and heading (only the sea state's array leaves change).  The
operational limit is α · limiting Hs, α looked up at the limiting Hs and the operation's planned hours
(T_POP, the sum of its phases'); a limit the search did not reach (every criterion holds at its ceiling)
is taken as the ceiling and flagged.  The ceiling is ``hs_max``, or lower where a sea of the period would be
steeper than DNV-RP-C205's limiting steepness (:func:`search_at`): such a sea breaks and is not searched.
:func:`site_table` runs the weather windows of :mod:`jaxmbd.operability.windows` on a hindcast: the heading
is the operation's choice, the best of the headings at each hour (as a vessel on DP would take).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np

from ..cluster import as_tasks
from ..errors import InputError, SimulationError
from ..hydro.waves import JONSWAP
from ..run import RunSettings, TimeBudget, check_headings, run, run_sea_states, settings_of, start_of
from .alpha import LEVELS, TABLES, alpha_factor
from .criteria import Criterion, extremes_of, margin_of, reached_fraction
from .limiting import Evaluations, LimitingHs, Search, below_breaking, bootstrap_band, limiting_hs, search_steps, site_limit
from .windows import HourlySeries, LeastOf, LimitCurve, Phase, best_of, waiting_time, workability


@dataclasses.dataclass(frozen=True)
class OperationPhase:
    """A phase of the operation: its ``name``, planned ``hours`` and ``criteria``."""

    name: str
    hours: int
    criteria: tuple


@dataclasses.dataclass(frozen=True)
class OperabilityTable:
    """The ``[operability]`` table of a file, read (see the module docstring)."""

    phases: tuple
    headings_deg: tuple
    tp: tuple
    n_realisations: int = 8
    duration: float | None = None
    seed: int = 0
    search: Search = Search()
    forecast_level: str | None = "base"
    alpha: float | None = None
    contingency_hours: int = 0

    def __post_init__(self):
        named = {}
        for p in self.phases:
            for c in p.criteria:
                if named.setdefault(c.name, c) != c:
                    raise InputError(f"operability: two different criteria are both named {c.name!r} (a margin is kept by "
                                     "name: one would stand for the other); give each its own name")
        if any(b <= a for a, b in zip(self.tp, self.tp[1:])):
            raise InputError(f"operability: tp must be increasing periods (s), got {list(self.tp)}")
        if self.n_realisations < 2 and any(c.exposure is not None for c in self.criteria):
            raise InputError(f"operability: an exposure needs 2 realisations or more (the Gumbel it extrapolates is fitted to "
                             f"their maxima), got {self.n_realisations}")

    @property
    def hours(self) -> int:
        """T_POP (h): the planned operation period, the sum of the phases' hours."""
        return sum(p.hours for p in self.phases)

    @property
    def criteria(self) -> tuple:
        return tuple(c for p in self.phases for c in p.criteria)


_KEYS = ("headings_deg", "tp", "n_realisations", "duration", "seed", "hs_start", "hs_max", "tolerance", "secant",
         "forecast_level", "alpha", "contingency_hours", "phases")
_PHASE_KEYS = ("name", "hours", "criteria")
_CRITERION_KEYS = ("output", "upper", "lower", "lower_fraction", "statistic", "exposure", "name")


def read_operability(reader, cfg, system, scenario) -> OperabilityTable | None:
    """The file's ``[operability]`` table, every key checked against the system (its outputs and the
    scenario's phases), or None without one."""
    if "operability" not in cfg:
        return None
    r, f = reader.r, "operability"
    s = r.table(cfg[f], f, _KEYS)
    grids = {}
    for key, lo, hi in (("headings_deg", -360.0, 360.0), ("tp", 1.0, 40.0)):
        arr = r.array(r.get(s, f, key), f"{f}.{key}", None).reshape(-1)
        if arr.size == 0 or np.any(arr < lo) or np.any(arr > hi) or np.unique(arr).size != arr.size:
            r.fail(f"{f}.{key}", f"expected a non-empty list of distinct values in [{lo:g}, {hi:g}], got {arr.tolist()}")
        if key == "tp" and np.any(np.diff(arr) <= 0):
            r.fail(f"{f}.tp", f"expected increasing periods (the limit is a curve in Tp), got {arr.tolist()}")
        if key == "tp" and arr.size < 2:
            r.fail(f"{f}.tp", f"expected at least two periods (the limit is a curve in Tp over the site's hours), got {arr.tolist()}")
        grids[key] = tuple(float(x) for x in arr)
    if system.waves is None or not isinstance(system.waves.spectrum, JONSWAP):  # a parametric spectrum's Hs and Tp
        r.fail(f, "an operability study needs [waves] with type = 'jonswap' or 'pierson_moskowitz'")
    duration = r.number(s, f, "duration", None, gt=0.0)
    if scenario is not None and duration is not None:
        r.fail(f"{f}.duration", "the scenario's phases set the run's duration; leave it out")
    if scenario is None and duration is None:
        r.fail(f"{f}.duration", "missing: the duration (s) of each realisation of a run without phases")
    search = _search(r, s, f)
    level, alpha = r.string(s, f, "forecast_level", None, choices=tuple(LEVELS) + tuple(TABLES)), r.number(s, f, "alpha", None, gt=0.0, le=1.0)
    if level is not None and alpha is not None:
        r.fail(f"{f}.alpha", "give forecast_level (alpha from DNV's table) or alpha (a number), not both")
    phases = _phases(r, s, f, reader.output_shapes(system), scenario)
    n_realisations = r.integer(s, f, "n_realisations", 8, ge=1)
    if n_realisations < 2 and any(c.exposure is not None for p in phases for c in p.criteria):
        r.fail(f"{f}.n_realisations", "expected 2 or more: an exposure extrapolates a Gumbel fitted to the realisations' maxima")
    table = OperabilityTable(phases, grids["headings_deg"], grids["tp"], n_realisations,
                             duration, r.integer(s, f, "seed", 0, ge=0), search,
                             (level or "base") if alpha is None else None, alpha, r.integer(s, f, "contingency_hours", 0, ge=0))
    if table.alpha is None:
        rows = TABLES[LEVELS.get(table.forecast_level or "base", table.forecast_level or "base")]
        if table.hours > max(rows):
            r.fail(f"{f}.phases", f"the operation's planned hours ({table.hours} h) exceed the alpha table's last row "
                   f"({max(rows)} h): give alpha, or a level whose table covers them")
    return table


def _search(r, s, f) -> Search:
    hs_max = r.number(s, f, "hs_max", 10.0, gt=0.0, le=30.0)
    hs_start = r.number(s, f, "hs_start", min(1.0, hs_max), gt=0.0, le=hs_max)
    tol = r.number(s, f, "tolerance", 0.02, gt=0.0, le=hs_max)
    return Search(hs_start=hs_start, hs_min=min(0.1, hs_start), hs_max=hs_max, tolerance=tol,
                  secant=r.boolean(s, f, "secant", False))


def _phases(r, s, f, outputs, scenario) -> tuple:
    scalar = sorted(k for k, shape in outputs.items() if shape == ())
    names = [p.get("name") for p in (scenario or {}).get("phases", [])]
    phases, seen, named = [], set(), {}
    for k, p in enumerate(r.tables(r.get(s, f, "phases"), f"{f}.phases")):
        w = f"{f}.phases[{k}]"
        p = r.table(p, w, _PHASE_KEYS)
        name = r.string(p, w, "name")
        if name == CONTINGENCY:
            r.fail(f"{w}.name", f"{CONTINGENCY!r} names the windows' contingency slot (contingency_hours): give the phase another name")
        if name in seen:
            r.fail(f"{w}.name", f"phase {name!r} given twice")
        seen.add(name)
        if scenario is not None and name not in names:
            r.fail(f"{w}.name", f"no phase {name!r} in the [scenario]; its phases: {', '.join(map(str, names))}")
        if scenario is not None and phases and names.index(name) < names.index(phases[-1].name):
            r.fail(f"{w}.name", f"phase {name!r} comes before {phases[-1].name!r} in the [scenario]: the weather windows take the "
                   "phases in the order given, which must be the scenario's")
        hours = r.integer(p, w, "hours", ge=1)
        crit = []
        for j, c in enumerate(r.tables(r.get(p, w, "criteria"), f"{w}.criteria")):
            crit.append(_criterion(r, r.table(c, f"{w}.criteria[{j}]", _CRITERION_KEYS), f"{w}.criteria[{j}]",
                                   outputs, scalar, name if scenario is not None else None))
            other = named.setdefault(crit[-1].name, (crit[-1], f"{w}.criteria[{j}]"))
            if other[0] != crit[-1]:
                r.fail(f"{w}.criteria[{j}]", f"named {crit[-1].name!r} like {other[1]}, which differs from it; "
                       "give one a name (key 'name')")
        if not crit:
            r.fail(f"{w}.criteria", "a phase needs at least one criterion")
        phases.append(OperationPhase(name, hours, tuple(crit)))
    if not phases:
        r.fail(f"{f}.phases", "expected at least one phase")
    return tuple(phases)


def _criterion(r, c, w, outputs, scalar, phase) -> Criterion:
    out = r.string(c, w, "output")
    if out not in outputs:
        r.fail(f"{w}.output", f"unknown output {out!r}; scalar outputs: {', '.join(scalar)}")
    if outputs[out] != ():
        r.fail(f"{w}.output", f"output {out!r} has shape {outputs[out]}; criteria apply to scalar outputs")
    kw = {k: r.number(c, w, k, None) for k in ("upper", "lower", "lower_fraction")}
    try:
        return Criterion(out, **kw, statistic=r.string(c, w, "statistic", "mpm"),
                         exposure=r.number(c, w, "exposure", None, gt=0.0), phase=phase, name=r.string(c, w, "name", ""))
    except InputError as exc:
        r.fail(w, str(exc).split(": ", 1)[-1])


# --------------------------------------------------------------------------- the limiting sea states


@dataclasses.dataclass
class _Runs:
    """Runs of one heading and period, by Hs: the margins of every criterion and what a band needs."""

    case: object
    start: object
    settings: RunSettings
    criteria: tuple
    extremes: dict = dataclasses.field(default_factory=dict)
    count: int = 0
    left: dict = dataclasses.field(default_factory=dict)  # model's range left -> smallest Hs (m) where it was

    def __call__(self, hs: float) -> dict:
        try:
            result = run(self.case, self.start, settings=self.settings, hs=hs)
        except SimulationError as exc:  # where in the study: the sea state the run was at
            raise type(exc)(f"operability run at Hs {hs:.4g} m, Tp {self.settings.tp:g} s, heading "
                            f"{math.degrees(self.settings.heading):g} deg: {exc}") from exc
        return self.record(hs, result)

    def record(self, hs: float, result) -> dict:
        """Keep what the band and the table need of the run at ``hs``; its margins.  A phase that some
        realisation never reached (an earlier phase hit its time limit or diverged: the operation stopped there), or
        in which its state became non-finite (the model diverged: it stopped there), fails: its :func:`reached_name`
        margin is minus the fraction of realisations that did not reach it or diverged in it, and so are its
        criteria's; reached and run through by all, that margin is infinite (it never governs)."""
        self.count += 1
        for e in result.excursions:
            what = f"{e.element}: {e.quantity} outside {e.limit}"
            self.left[what] = min(self.left.get(what, math.inf), hs)
        phases = {c.phase for c in self.criteria if c.phase is not None}
        broke = {}  # phase -> the realisations whose state became non-finite in it (they stopped there)
        for r, events in enumerate(result.events if result.batched else [result.events]):
            for e in events:
                if e.trigger == "diverged":
                    broke.setdefault(e.name, set()).add(r)
                    what = f"runs diverged in phase {e.name!r} (the state became non-finite: those realisations fail it)"
                    self.left[what] = min(self.left.get(what, math.inf), hs)
        short = {}  # phase -> the fraction of realisations that never reached it or diverged in it, where some did
        for name in phases:
            missed = 1.0 - reached_fraction(result, name)
            if missed > 0:
                what = f"phase {name!r} not reached (an earlier phase hit its time limit or diverged)"
                self.left[what] = min(self.left.get(what, math.inf), hs)
            missed += len(broke.get(name, ())) / result.n_realisations
            if missed > 0:
                short[name] = missed
        counted = [c for c in self.criteria if c.phase not in short]
        kept = extremes_of(counted, result)
        self.extremes[hs] = kept
        found = {c.name: float(margin_of(c, *kept[c.name])) for c in counted}
        found |= {c.name: -short[c.phase] for c in self.criteria if c.phase in short}
        found |= {reached_name(p): -short[p] if p in short else math.inf for p in phases}
        return found


def reached_name(phase: str) -> str:
    """The search's name for "every realisation reached ``phase`` and ran it without diverging" (a margin of
    :meth:`_Runs.record`)."""
    return f"phase {phase!r} reached and run without diverging in every realisation"


def search_names(phase: OperationPhase) -> tuple:
    """The margins a phase's search takes the least of: its criteria's, and first (so that they govern a tie)
    whether every realisation reached the scenario phases its criteria are in."""
    reached = tuple(reached_name(p) for p in sorted({c.phase for c in phase.criteria if c.phase is not None}))
    return reached + tuple(c.name for c in phase.criteria)


def _band(runs: _Runs, criteria, found: LimitingHs):
    if found.status != "root" or not runs.extremes:
        return (math.nan, math.nan)
    near = min(runs.extremes, key=lambda h: abs(h - found.hs))
    # a limit set where realisations stop reaching the phase is a jump, not a statistic's root: no band
    reached = {reached_name(c.phase) for c in criteria if c.phase is not None}
    if found.governing in reached or any(c.name not in runs.extremes[near] for c in criteria):
        return (math.nan, math.nan)
    return bootstrap_band(criteria, runs.extremes[near], found, at=near)


def _runs(case, start, base, table: OperabilityTable, h: int, j: int) -> _Runs:
    return _Runs(case, start, dataclasses.replace(base, tp=table.tp[j], heading=math.radians(table.headings_deg[h])),
                 table.criteria)


def _cell_data(runs: _Runs, table: OperabilityTable, found: list) -> dict:
    """A cell's plain numbers (a cell file's data) from its phases' searches ``found``."""
    phases = []
    for phase, f in zip(table.phases, found):
        lo, hi = _band(runs, phase.criteria, f)
        phases.append({"hs": f.hs, "low": lo, "high": hi, "status": f.status, "governing": f.governing})
    left = "; ".join(f"{what} (from Hs {hs_at:.2f} m)" for what, hs_at in sorted(runs.left.items()))
    return {"phases": phases, "runs": runs.count, "validity": left}


def search_at(table: OperabilityTable, j: int) -> Search:
    """The search at period j: ``table.search`` with its ceiling lowered to the Hs at which a sea of that period
    reaches DNV-RP-C205's limiting steepness (:func:`jaxmbd.hydro.spectra.breaking_hs`): a steeper sea breaks,
    and no run of linear waves is asked for there."""
    return below_breaking(table.search, table.tp[j])


def _cell(case, start, base, table: OperabilityTable, h: int, j: int) -> dict:
    """Every phase's search at heading h and period j, on shared runs, one run at a time."""
    runs = _runs(case, start, base, table, h, j)
    ev = Evaluations(runs)
    return _cell_data(runs, table, [limiting_hs(ev, search_names(p), search_at(table, j)) for p in table.phases])


def _cells_together(case, start, base, table: OperabilityTable, cells: list, together: int):
    """Every phase's search of every cell ``(h, j)`` in ``cells`` in lock-step: each round, the Hs the searches
    wait for, over all the cells, run as one program (:func:`jaxmbd.run.run_sea_states`) of ``together`` sea
    states (the last padded, so one compiled program serves every round).  The same searches as
    :func:`_cell`'s; the runs agree with its to round-off.  Yields ``(cell, data)`` as each cell's searches
    end, after the round that ends them."""
    runs = {c: _runs(case, start, base, table, *c) for c in cells}
    cache: dict = {c: {} for c in cells}
    waiting, found = [], {}  # waiting: [cell, phase index, search, the Hs (m) it waits for]
    for c in cells:
        for k, phase in enumerate(table.phases):
            steps = search_steps(search_names(phase), search_at(table, c[1]))
            waiting.append([c, k, steps, round(next(steps), 12)])
    while waiting:
        still = []
        for item in waiting:
            c, k, steps, hs = item
            try:
                while hs in cache[c]:
                    hs = round(steps.send(cache[c][hs]), 12)
            except StopIteration as stop:
                found[(c, k)] = stop.value
                continue
            item[3] = hs
            still.append(item)
        waiting = still
        busy = {item[0] for item in waiting}
        for c in [c for c in runs if c not in busy]:  # every phase of the cell has its answer
            yield c, _cell_data(runs.pop(c), table, [found[(c, k)] for k in range(len(table.phases))])
        asked = sorted({(item[0], item[3]) for item in waiting})
        for n in range(0, len(asked), together):
            part = asked[n : n + together]
            seas = [(hs, table.tp[j], math.radians(table.headings_deg[h])) for (h, j), hs in part]
            try:
                results = run_sea_states(case, start, base, seas + [seas[-1]] * (together - len(seas)))
            except SimulationError as exc:  # where in the study: the round's sea states, run as one program
                where = "; ".join(f"Hs {hs:.4g} m, Tp {tp:g} s, heading {math.degrees(b):g} deg" for hs, tp, b in seas)
                raise type(exc)(f"operability runs at one of {where}: {exc}") from exc
            for (c, hs), result in zip(part, results):
                cache[c][hs] = runs[c].record(hs, result)


def limiting_table(case, table: OperabilityTable, *, start=None, progress=None, out_dir=None, process_index: int = 0,
                   process_count: int = 1, force: bool = False, time_limit: float | None = None, together: int | None = None,
                   client=None):
    """The limiting Hs (m) of every phase at every heading and period of ``table`` for a loaded file
    ``case``, with the governing criterion, the 90 % band from the realisations, the status of each
    search, its runs, and the operational limit (alpha applied); an ``xarray.Dataset``.

    ``out_dir``: keep each cell (heading, period) in a file there (:mod:`jaxmbd.operability.cells`) and
    take the cells already computed for the same study: a study resumes.  ``process_index`` of
    ``process_count`` processes computes the cells k with k mod count = index; the table comes back (from
    any process) once every cell is on disk, else None.  ``time_limit`` (s): stop with the estimate where the
    cells computed so far project this process's share past it (:class:`jaxmbd.run.TimeBudget`).

    ``together``: the sea states run as one program.  1 (the default on a CPU, which gains nothing from
    batching, and for a file without a fixed step dt): each cell's searches one run at a time; n > 1 (the
    default otherwise, on an accelerator: every cell of the table, n = headings x periods; with a [scenario],
    n sea states x the realisations in one batch): every cell's searches in lock-step (:func:`_cells_together`), each round's runs n at a time.
    Either way a cell's file is written, the progress reported and the time budget checked as each cell
    ends.  Both give the same table to round-off; within one setting a split over processes and a resume
    give the same bits.  ``client``: a ``distributed.Client``; each cell to compute is a task on its Dask
    cluster (:mod:`jaxmbd.cluster`, its searches one run at a time as ``together = 1``), written here as it ends."""
    import xarray as xr

    from .cells import cell_key, cell_path, mine, read_cell, write_cell

    start = start if start is not None else start_of(case)
    base = settings_of(case, n_realisations=table.n_realisations, seed=table.seed, duration=table.duration)
    if getattr(case, "scenario", None):  # a realisation that diverges stops there and fails its phase (_Runs.record)
        base = dataclasses.replace(base, diverged="stop")
    total = len(table.headings_deg) * len(table.tp)
    check_headings(case.system, np.radians(table.headings_deg))  # before any cell runs, not at the first that needs it, hours in
    where = [divmod(k, len(table.tp)) for k in range(total)]
    keys = [cell_key(case.system, start, table, h, j, settings=base, scenario=getattr(case, "scenario", None))
            if out_dir is not None else None for h, j in where]

    def read(k, force=force):
        return read_cell(cell_path(out_dir, *where[k]), keys[k], force=force) if out_dir is not None else None

    found = [read(k) for k in range(total)]  # every cell decided before any is computed, as a sweep does
    todo = [k for k in range(total) if found[k] is None and mine(k, process_index, process_count)]
    budget = TimeBudget(time_limit, f"the study's {len(todo)} cell(s) to compute (heading x period)", resumable=out_dir is not None)
    if together is None:
        together = total if base.integrator.dt is not None and jax.default_backend() != "cpu" else 1
    index = {where[k]: k for k in todo}
    if client is not None:
        ending = as_tasks(client, _cell, (case, start, base, table), [where[k] for k in todo])
    elif together > 1 and todo:
        ending = _cells_together(case, start, base, table, list(index), together)
    else:
        ending = ((where[k], _cell(case, start, base, table, *where[k])) for k in todo)
    for n, (cell, data) in enumerate(ending, 1):
        k = index[cell]
        found[k] = data
        if out_dir is not None:
            write_cell(cell_path(out_dir, *where[k]), keys[k], found[k])
            found[k] = read(k, force=False)  # as every later reader sees it
        budget(n, len(todo))
        if progress is not None:
            progress(n, len(todo))
    found = [cell if cell is not None else read(k) for k, cell in enumerate(found)]  # other processes' cells meanwhile
    cells = {where[k]: cell for k, cell in enumerate(found) if cell is not None}
    if len(cells) < total:
        return None
    shape = (len(table.phases), len(table.headings_deg), len(table.tp))
    hs, lo, hi = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    status, governing, runs_count = np.empty(shape, object), np.empty(shape, object), np.zeros(shape[1:], int)
    left = np.full(shape[1:], "", object)
    for (h, j), cell in cells.items():
        for k, ph in enumerate(cell["phases"]):
            hs[k, h, j], lo[k, h, j], hi[k, h, j] = ph["hs"], ph["low"], ph["high"]
            status[k, h, j], governing[k, h, j] = ph["status"], ph["governing"]
        runs_count[h, j], left[h, j] = cell["runs"], cell["validity"]
    alpha = _alpha(table, hs)
    below_table = (table.alpha is None) & np.isfinite(hs) & (hs < 1.0) & (status != "below")
    operational = site_limit(alpha * hs, status)
    coords = {"phase": [p.name for p in table.phases], "heading": ("heading", np.asarray(table.headings_deg), {"units": "deg"}),
              "tp": ("tp", np.asarray(table.tp), {"units": "s"})}
    dims = ("phase", "heading", "tp")
    return xr.Dataset({
        "limiting_hs": (dims, hs, {"units": "m", "long_name": "largest Hs at which every criterion of the phase holds"}),
        "limiting_hs_low": (dims, lo, {"units": "m", "long_name": "90 % band over the realisations, low end"}),
        "limiting_hs_high": (dims, hi, {"units": "m", "long_name": "90 % band over the realisations, high end"}),
        "alpha": (dims, alpha, {"units": "1", "long_name": "alpha factor (DNV-OS-H101 Section 4 B700)"}),
        "operational_hs": (dims, operational, {"units": "m", "long_name": "operational limit, alpha x limiting Hs (0 where the "
                                                                       "phase fails at the search's floor: a no-go)"}),
        "alpha_below_table": (dims, below_table.astype(np.int8), {"units": "1", "long_name": "1 where the limiting Hs is below "
                                                                  "the alpha table's first column (1 m): alpha taken there, "
                                                                  "DNV: to be assessed case by case"}),
        "status": (dims, status.astype(str), {"long_name": "root: found; above: holds up to the search's ceiling (hs_ceiling); "
                                                           "below: fails at hs_min; unconverged: a root, its bracket "
                                                           "wider than the search's tolerance after max_evaluations runs"}),
        "hs_ceiling": ("tp", np.array([search_at(table, j).hs_max for j in range(len(table.tp))]),
                       {"units": "m", "long_name": "the search's ceiling: hs_max, or lower where a sea of the period would be "
                                                   "steeper than DNV-RP-C205's limit (1/15 to Tp 8 s, 1/25 from 15 s)"}),
        "governing": (dims, governing.astype(str), {"long_name": "criterion with the least margin at the limit"}),
        "runs": (("heading", "tp"), runs_count, {"units": "1", "long_name": "runs of the searches (shared by the phases)"}),
        "validity": (("heading", "tp"), left.astype(str), {"long_name": "ranges of validity the searches' runs left, "
                                                                          "and the smallest Hs where they did"}),
    }, coords=coords, attrs={"planned_operation_hours": table.hours, "n_realisations": table.n_realisations,
                             "seed": table.seed, "forecast_level": table.forecast_level or "",
                             "alpha_given": table.alpha if table.alpha is not None else np.nan,
                             "hs_max": table.search.hs_max, "tolerance_m": table.search.tolerance})


def _alpha(table: OperabilityTable, hs: np.ndarray) -> np.ndarray:
    if table.alpha is not None:
        return np.full(hs.shape, table.alpha)
    level = table.forecast_level or "base"
    return np.vectorize(lambda x: alpha_factor(table.hours, max(x, 1.0), forecast_level=level) if np.isfinite(x) else np.nan)(hs)


# --------------------------------------------------------------------------- the site


def operation(limits, table: OperabilityTable, *, variable: str = "operational_hs") -> list:
    """The operation's phases for the weather windows: each phase's limit the best over the headings of
    ``variable`` (m) as a curve in Tp; then, where the table has ``contingency_hours`` (T_C), a slot of that many
    hours whose limit is the least of the phases' (an overrun may fall in any of them): the windows span the
    reference period T_R = T_POP + T_C (DNV-OS-H101 Section 4 B402)."""
    tp = limits["tp"].values
    phases = [Phase(p.name, p.hours, best_of([LimitCurve(tp, limits[variable].values[k, h])
                                              for h in range(limits.sizes["heading"])]))
              for k, p in enumerate(table.phases)]
    if table.contingency_hours:
        phases.append(Phase(CONTINGENCY, table.contingency_hours, LeastOf(tuple(p.limit for p in phases))))
    return phases


CONTINGENCY = "contingency"
"""The name of the weather windows' contingency slot (:func:`operation`)."""


def spectrum_gamma(case) -> float:
    """The peak enhancement γ of a loaded file's wave spectrum (1 for Pierson-Moskowitz): the limits are computed
    in seas of that shape, so a hindcast's Tz is read as the Tp of that shape too."""
    return float(case.system.waves.spectrum.gamma)


def site_series(hindcast, *, gamma: float) -> HourlySeries:
    """The hindcast on a full hourly grid (gaps as missing hours), Tp from Tz where it has no Tp, for a JONSWAP
    of peak enhancement ``gamma`` (:func:`spectrum_gamma`: the study's own; DNV-RP-C205's Tp/Tz ratio)."""
    grid, present = hindcast.hourly_grid()
    hs, tp = np.full(grid.size, np.nan), np.full(grid.size, np.nan)
    hs[present], tp[present] = hindcast.hs, hindcast.peak_period(gamma)
    return HourlySeries.from_times(grid, hs, tp, present)


OUTAGE_HOURS = 24
"""A stretch of more than this many hours without a record is an outage of the instrument, not weather: a wait
through it is left out of the waiting-time statistics (and counted); shorter gaps are waited through."""


def site_table(limits, table: OperabilityTable, hindcast, *, gamma: float, quantiles=(0.5, 0.9)):
    """Workability per month and waiting time (P50/P90 per month) of the operation at the site; ``gamma``: the
    spectrum's peak enhancement, for the hindcast's Tz to Tp (:func:`spectrum_gamma`)."""
    import xarray as xr

    series = site_series(hindcast, gamma=gamma)
    ops = operation(limits, table)
    work = workability(series, ops)
    wait = waiting_time(series, ops, quantiles=quantiles, include_gap_waits=False, max_gap=OUTAGE_HOURS)
    ds = xr.merge([work, wait.drop_vars("duration")])
    ds.attrs.update({**work.attrs, **wait.attrs})  # merge keeps the first dataset's only
    # the windows span T_R; the operation takes T_POP (the contingency is a reserve)
    ds["total"], ds["total_mean"] = ds["waiting"] + table.hours, ds["waiting_mean"] + table.hours
    ds["total"].attrs.update(units="h", long_name="waiting plus the planned operation period")
    ds["total_mean"].attrs.update(units="h", long_name="mean waiting plus the planned operation period")
    ds["duration"] = ((), table.hours, {"units": "h", "long_name": "planned operation period T_POP (the phases' hours)"})
    ds["reference_period"] = ((), table.hours + table.contingency_hours,
                              {"units": "h", "long_name": "the weather windows' span T_R = T_POP + contingency_hours"})
    ds.attrs.update({"hindcast": hindcast.source, "hindcast_coverage": float(hindcast.coverage),
                     "tp_from_tz_gamma": gamma if hindcast.tp is None else np.nan,
                     "hindcast_first": str(hindcast.time[0]), "hindcast_last": str(hindcast.time[-1])})
    return ds
