"""``jaxmbd tune`` for the operation's decision: maximise a month's workability at a site, or a phase's
limiting Hs, over design values, with the gradients of :mod:`jaxmbd.optim.workability`.

The ``[tune]`` table of such a file::

    [tune]
    steps = 6                       # ascent steps (each a root search per period and its gradient)
    step = 0.1                      # first step, as a fraction of each parameter's range (upper - lower)
    tolerance = 1e-4                # m, the roots' bracket (the [operability] table's is for its table: a
                                    # design's effect on a limit is often smaller than that)

    [[tune.parameters]]
    path = "hoist.heave_compensation"    # one element leaf per parameter
    lower = 0.0                     # both bounds are required: the ascent is projected on them
    upper = 1.0

    [[tune.objective]]
    maximise = "workability"        # the smoothed workability of `month` at the site: the operation's phases
                                    # in sequence, each with its own limit
    month = 1                       # 1-12
    headings_deg = [135.0, 180.0]   # the headings the operation may take, the best at each hour
                                    # (default: the [operability] table's, as the command's site table)
    hindcast = "site.txt"           # hourly sea states (NDBC text, CSV, NetCDF); default the packaged year
    years = [1996, 2000]            # first and last year of the hindcast to tune on (default: all)

    # or
    [[tune.objective]]
    maximise = "limiting_hs"        # the limiting Hs (m) of `phase` at period `tp` and `heading_deg`
    phase = "lift"
    tp = 6.0                        # s, one of the [operability] table's periods
    heading_deg = 180.0             # default: the [operability] table's first heading

The runs are the ``[operability]`` table's (realisations, duration, seed, the search, with its tolerance tightened),
each a fixed-step RK4 rollout from the static equilibrium re-solved for the design, or, in a file with a
``[scenario]``, its phases as ``jaxmbd operability`` runs them (:class:`~jaxmbd.optim.workability.LimitingHsModel`;
a value a phase sets is the phase's, not a design parameter).  The ascent: each parameter scaled by its range, a step
along the gradient's direction of ``step`` times the range in its largest component, projected on the bounds;
a step that does not raise the objective is not taken and the next is half as long.  The history, the design
before and after and the objective's value at each are written to ``tune.json``.  The workability is the
smoothed one (:func:`jaxmbd.operability.windows.smooth_workability`): the ascent raises the smooth count, the
counts before and after are written beside it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..operability.hindcast import read_hindcast, sample_hindcast
from ..operability.job import CONTINGENCY, site_series, spectrum_gamma
from ..operability.limiting import site_limit
from ..operability.windows import SMOOTH_WIDTH, LeastOf, LimitCurve, Phase, best_of, workability
from .tuning import TuneResult
from .workability import LimitingHsModel, alpha_of, workability_gradient

_KEYS = ("steps", "step", "tolerance", "parameters", "objective")
_TERM_KEYS = ("maximise", "month", "phase", "heading_deg", "headings_deg", "tp", "hindcast", "years")
GOALS = ("workability", "limiting_hs")


def is_operability_table(table) -> bool:
    """Whether a ``[tune]`` table's objective is the operation's (a term with ``maximise``)."""
    terms = table.get("objective") if isinstance(table, dict) else None
    return isinstance(terms, list) and any(isinstance(t, dict) and "maximise" in t for t in terms)


def read_operability_tune(r, loaded, table: dict, read_parameters) -> dict:
    """The ``[tune]`` table of an operability objective, checked against the file's ``[operability]``; every
    problem one line naming the key (``r`` a :class:`~jaxmbd.io.system_file.TableReader`)."""
    f = "tune"
    t = r.table(table, f, _KEYS)
    op = loaded.operability
    if op is None:
        r.fail(f"{f}.objective", "maximise needs the file's [operability] table (its phases, periods and runs)")
    if loaded.integrator.dt is None:
        r.fail(f"{f}.objective", "maximise needs a fixed step ([simulation] dt)")
    out = {"steps": r.integer(t, f, "steps", 6, ge=0), "step": r.number(t, f, "step", 0.1, gt=0.0, le=1.0),
           "tolerance": r.number(t, f, "tolerance", 1e-4, gt=0.0, le=op.search.tolerance)}
    params = read_parameters(r, loaded.system, r.tables(r.get(t, f, "parameters"), f"{f}.parameters"))
    for i, p in enumerate(params):
        w = f"{f}.parameters[{i}]"
        if len(p["paths"]) != 1:
            r.fail(f"{w}.paths", "one path per parameter when maximising the operation's objective")
        if p.get("lower") is None or p.get("upper") is None:
            r.fail(w, "give lower and upper: the ascent is projected on them and steps in their range")
        if "transform" in p:
            r.fail(f"{w}.transform", "not used: the ascent steps in the parameter itself, projected on its bounds")
    out["parameters"] = params
    terms = r.tables(r.get(t, f, "objective"), f"{f}.objective")
    if len(terms) != 1:
        r.fail(f"{f}.objective", f"expected one term with maximise, got {len(terms)}")
    out["objective"] = _read_term(r, loaded, r.table(terms[0], f"{f}.objective[0]", _TERM_KEYS), "tune.objective[0]", op)
    return out


def _read_term(r, loaded, term, f, op) -> dict:
    goal = r.string(term, f, "maximise", choices=GOALS)
    names = [p.name for p in op.phases]
    if goal == "workability" and "phase" in term and len(names) > 1:
        r.fail(f"{f}.phase", f"not used by maximise = 'workability': the workability is the operation's, its {len(names)} "
               "phases in sequence")
    if goal == "limiting_hs" and "phase" not in term and len(names) > 1:
        r.fail(f"{f}.phase", f"missing: the [operability] table has {len(names)} phases ({', '.join(names)}); name one")
    phase = r.string(term, f, "phase", names[0])
    if phase not in names:
        r.fail(f"{f}.phase", f"no phase {phase!r} in [operability]; its phases: {', '.join(names)}")
    out = {"maximise": goal, "phase": phase}
    if goal == "limiting_hs":
        out["heading_deg"] = r.number(term, f, "heading_deg", op.headings_deg[0])
        for k in ("month", "hindcast", "years", "headings_deg"):
            if k in term:
                r.fail(f"{f}.{k}", "not used by maximise = 'limiting_hs' (a period and a heading)")
        tp = r.number(term, f, "tp")
        if not any(abs(tp - x) < 1e-9 for x in op.tp):
            r.fail(f"{f}.tp", f"expected one of the [operability] periods {list(op.tp)}, got {tp:g}")
        return out | {"tp": tp}
    for k, why in (("tp", "it runs every [operability] period"), ("heading_deg", "give headings_deg, the headings the "
                                                                       "operation may take (the best at each hour)")):
        if k in term:
            r.fail(f"{f}.{k}", f"not used by maximise = 'workability' ({why})")
    heads = r.array(r.get(term, f, "headings_deg", list(op.headings_deg)), f"{f}.headings_deg", None).reshape(-1)
    if heads.size == 0 or np.unique(heads).size != heads.size:
        r.fail(f"{f}.headings_deg", f"expected a non-empty list of distinct headings (deg), got {heads.tolist()}")
    out["headings_deg"] = tuple(float(h) for h in heads)
    out["month"] = r.integer(term, f, "month", ge=1)
    if out["month"] > 12:
        r.fail(f"{f}.month", f"expected a month 1-12, got {out['month']}")
    out["hindcast"] = str(r.path(term, f, "hindcast")) if "hindcast" in term else None
    years = term.get("years")
    if years is not None and not (isinstance(years, list) and len(years) == 2 and all(isinstance(y, int) for y in years)
                                  and years[0] <= years[1]):
        r.fail(f"{f}.years", f"expected [first, last] years, got {years!r}")
    out["years"] = years
    return out


def tune_operability(loaded, cfg: dict, out_dir, *, steps: int | None = None, smoke: bool = False, progress=print) -> TuneResult:
    """Projected gradient ascent of the ``[tune]`` table ``cfg`` (:func:`read_operability_tune`); writes
    ``out_dir/tune.json`` and returns the :class:`~jaxmbd.optim.tuning.TuneResult` (``loss`` the objective's
    negative, as the other tuning minimises; ``attrs["objective"]`` the values, with units)."""
    term, params = cfg["objective"], cfg["parameters"]
    paths = tuple(p["paths"][0] for p in params)
    names = [p["name"] for p in params]
    lo, hi = np.array([p["lower"] for p in params], float), np.array([p["upper"] for p in params], float)
    scale = hi - lo
    n_steps = 1 if smoke else int(steps if steps is not None else cfg["steps"])
    op = loaded.operability
    if term["maximise"] == "limiting_hs":
        models = [LimitingHsModel(loaded, term["phase"], term["tp"], term["heading_deg"], paths)]
        series, unit = None, "m"
    else:
        tps = sorted(op.tp)[:2] if smoke else sorted(op.tp)
        models = [LimitingHsModel(loaded, p.name, tp, h, paths) for p in op.phases for h in term["headings_deg"] for tp in tps]
        hind = read_hindcast(term["hindcast"]) if term["hindcast"] else sample_hindcast()
        if term["years"]:
            hind = hind.select(years=range(term["years"][0], term["years"][1] + 1))
        series, unit = site_series(hind, gamma=spectrum_gamma(loaded)), "1"
    # the sea's range (the spectrum's energy the discretisation and the hydrodynamic data hold), per period and heading
    left = [f"Tp {m.tp:g} s, heading {m.heading_deg:g} deg: {e.line()}" for m in models for e in m.excursions]
    for line in left if progress is not None else ():
        progress(f"[tune] WARNING: {line}")
    hours = tuple(p.hours for p in op.phases)  # the workability's phases in sequence
    # the roots far tighter than the table's: a design's effect on a limit is often below its tolerance
    search = dataclasses.replace(op.search, tolerance=cfg["tolerance"], max_evaluations=max(op.search.max_evaluations, 60))
    x0 = np.array([p["initial"] for p in params], float)
    level = {"alpha": op.alpha, "forecast_level": op.forecast_level or "base"}

    def value_and_grad(x):
        values = dict(zip(paths, map(float, x)))
        if series is None:
            found = models[0].limiting_hs(values, search)
            if found.status == "unconverged":
                raise InputError(f"tune: the limiting Hs search's bracket {found.bracket} m is wider than its tolerance after "
                                 f"{search.max_evaluations} runs: raise [tune] tolerance")
            # at the search's ceiling or floor the limit is the range's end, which does not move with the design
            g = models[0].gradient(found, values) if found.status == "root" else dict.fromkeys(paths, 0.0)
            return found.hs, np.array([g[p] for p in paths]), {"status": found.status, "governing": found.governing}
        found = [m.limiting_hs(values, search) for m in models]
        w, g = workability_gradient(models, series, term["month"], durations=hours, values=values, found=found,
                                    contingency_hours=op.contingency_hours, **level)
        return w, np.array([g[p] for p in paths]), {"workability": _count(models, found, series, term["month"], hours,
                                                                          contingency_hours=op.contingency_hours, **level),
                                                     "limiting_hs": [fd.hs for fd in found]}

    t0 = time.perf_counter()
    x, step = x0, cfg["step"]
    f, g, info = value_and_grad(x)
    f0 = f
    history = [_row(0, f, g, names, x, t0, info)]
    for k in range(n_steps):
        d = g * scale
        if not np.any(d):
            break
        trial = np.clip(x + step * scale * d / np.max(np.abs(d)), lo, hi)
        ft, gt, it = value_and_grad(trial)
        kept = ft > f
        if progress is not None:
            progress(f"[tune] step {k + 1}: " + ", ".join(f"{n} {v:.6g}" for n, v in zip(names, trial))
                     + f": {term['maximise']} {ft:.5g} {unit} ({'kept' if kept else 'not higher: the next step halved'})")
        if kept:
            x, f, g, info = trial, ft, gt, it
            history.append(_row(k + 1, f, g, names, x, t0, info))
        else:
            step *= 0.5
    values = dict(zip(names, map(float, x)))
    res = TuneResult(names, x, values, dict(zip(names, map(float, x0))), -f, -f0, history, "projected ascent", "implicit")
    res.attrs = {"objective": dict(term, unit=unit, before=f0, after=f,
                                   smoothing=f"logistic of width {SMOOTH_WIDTH:g} m per hour (jaxmbd.operability.windows)"
                                   if series is not None else None),
                 "parameters": {n: {"path": p, "lower": float(a), "upper": float(b)} for n, p, a, b in zip(names, paths, lo, hi)},
                 "operability": {"n_realisations": op.n_realisations, "duration_s": op.duration, "seed": op.seed,
                                 "periods_s": sorted({m.tp for m in models}), "tolerance_m": search.tolerance},
                 "validity": left, "system_file": str(getattr(loaded, "path", "") or "")}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res.to_json(out / "tune.json")
    if progress is not None:
        what = term["phase"] if series is None else "the operation" if len(op.phases) > 1 else op.phases[0].name
        progress(f"[tune] {term['maximise']} ({what}): {f0:.5g} -> {f:.5g} {unit}")
    return res


def _row(k, f, g, names, x, t0, info) -> dict:
    # "loss" and "values" as the gradient tuning's history (its plot reads them); the objective itself beside
    return {"iteration": k, "loss": -float(f), "objective": float(f), "gradient": dict(zip(names, map(float, g))),
            "values": dict(zip(names, map(float, x))), "seconds": time.perf_counter() - t0} | info


def _count(models, found, series, month: int, hours: tuple, *, alpha, forecast_level, contingency_hours: int = 0) -> float:
    """The month's workability as counted (each start a go or not) at the limits ``found``: each phase's limit at
    each hour the best heading's, as the command's site table and the gradient take it, the phases in sequence."""
    phases = []
    for k, name in enumerate(dict.fromkeys(m.phase for m in models)):
        curves = []
        for h in dict.fromkeys(m.heading_deg for m in models if m.phase == name):
            at = sorted((m.tp, float(site_limit(fd.hs, fd.status))) for m, fd in zip(models, found) if m.phase == name and m.heading_deg == h)
            tps, hs = np.array([t for t, _ in at]), np.array([x for _, x in at])
            a = np.full(hs.shape, alpha) if alpha is not None else np.asarray(alpha_of(hs, float(sum(hours)), forecast_level))
            curves.append(LimitCurve(tps, a * hs))
        phases.append(Phase(name, hours[k], best_of(curves)))
    if contingency_hours:
        phases.append(Phase(CONTINGENCY, contingency_hours, LeastOf(tuple(p.limit for p in phases))))
    return float(workability(series, phases)["workability"].values[month - 1])
