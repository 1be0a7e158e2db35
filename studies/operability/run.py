"""Operability of a module lift at the NDBC 44007 site: limiting sea states, workability and waiting time per
month with and without heave compensation, then the compensation and the rigging tuned by the gradient of the
worst month's workability on the first five years of the hindcast, checked on the last five.

    python studies/operability/run.py                  # the study (about 4 minutes on the 2-core machine)
    python studies/operability/run.py --smoke          # every step on two periods, two realisations (CI)
    python studies/operability/run.py --hindcast FILE  # another hourly hindcast (default: the ten-year file)

Writes results.json and the plots beside this file (--smoke: into out/operability_smoke)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from jaxmbd.io.system_file import load_system  # noqa: E402
from jaxmbd.operability.hindcast import read_hindcast, sample_hindcast  # noqa: E402
from jaxmbd.operability.job import OUTAGE_HOURS, site_series, spectrum_gamma  # noqa: E402
from jaxmbd.operability.limiting import Search, site_limit  # noqa: E402
from jaxmbd.operability.windows import LimitCurve, Phase, waiting_time, workability  # noqa: E402
from jaxmbd.optim.workability import LimitingHsModel, alpha_of, workability_gradient  # noqa: E402

TEN_YEARS = HERE.parents[2] / "shared" / "data" / "hindcast" / "ndbc44007_1996_2005_hs_tz.txt"
TUNE_YEARS, CHECK_YEARS = range(1996, 2001), range(2001, 2006)
PATHS = ("hoist.heave_compensation", "hoist.EA")
HC_BOUNDS, EA_SCALE_BOUNDS = (0.0, 0.95), (0.3, 3.0)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def settings(smoke: bool) -> dict:
    if smoke:
        return dict(tp=(6.0, 8.0), n_realisations=2, duration=60.0, steps=1)
    return dict(tp=(4.0, 6.0, 8.0, 10.0, 12.0, 14.0), n_realisations=6, duration=200.0, steps=6)


def design_limits(models, values) -> dict:
    """Limiting Hs (m) per period of a design, the operational limit (alpha x), the governing criterion."""
    found = [m.limiting_hs(values) for m in models]
    hs = np.array([f.hs for f in found])
    alpha = np.asarray(alpha_of(hs, 3.0))
    return {"tp": [m.tp for m in models], "limiting_hs": hs.tolist(), "alpha": alpha.tolist(),
            "operational_hs": site_limit(alpha * hs, [f.status for f in found]).tolist(), "status": [f.status for f in found],
            "governing": [f.governing for f in found], "runs": sum(len(f.history) for f in found)}


def site(limits: dict, series) -> dict:
    """Workability per month and waiting time P50/P90 per month of the 3-hour lift at the operational limits."""
    ops = [Phase("lift", 3, LimitCurve(np.asarray(limits["tp"]), np.asarray(limits["operational_hs"])))]
    work, wait = workability(series, ops), waiting_time(series, ops, include_gap_waits=False, max_gap=OUTAGE_HOURS)
    return {"workability": work["workability"].values.tolist(), "wait_p50_h": wait["waiting"].values[:, 0].tolist(),
            "wait_p90_h": wait["waiting"].values[:, 1].tolist(), "outside_curve": int(work["outside_curve"].values.sum()),
            "waits_through_outages": wait["crossed_gap"].values.tolist()}


def tune(models, series, month: int, start: dict, steps: int, log) -> tuple[dict, list]:
    """Projected gradient ascent on the smoothed workability of ``month``: x = (compensation, EA / EA_0),
    a step of 0.1 in x along the gradient's direction, halved when the workability does not rise."""
    ea0 = models[0].initial["hoist.EA"]
    x = np.array([start["hoist.heave_compensation"], start["hoist.EA"] / ea0])
    lo, hi = np.array([HC_BOUNDS[0], EA_SCALE_BOUNDS[0]]), np.array([HC_BOUNDS[1], EA_SCALE_BOUNDS[1]])

    def values(x):
        return {"hoist.heave_compensation": float(x[0]), "hoist.EA": float(x[1] * ea0)}

    w, g = workability_gradient(models, series, month, durations=(3,), values=values(x))
    history, step = [dict(values(x), workability=w)], 0.1
    for k in range(steps):
        d = np.array([g["hoist.heave_compensation"], g["hoist.EA"] * ea0])
        if not np.any(d):
            break
        trial = np.clip(x + step * d / np.max(np.abs(d)), lo, hi)
        wt, gt = workability_gradient(models, series, month, durations=(3,), values=values(trial))
        log(f"  step {k + 1}: compensation {trial[0]:.3f}, EA {trial[1]:.3f} x, smoothed workability {wt:.4f} "
            f"({'kept' if wt > w else 'step halved'})")
        if wt > w:
            x, w, g = trial, wt, gt
            history.append(dict(values(x), workability=w))
        else:
            step *= 0.5
    return values(x), history


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--hindcast", default=None)
    args = p.parse_args(argv)
    cfg = settings(args.smoke)
    out = HERE if not args.smoke else Path("out/operability_smoke")
    out.mkdir(parents=True, exist_ok=True)
    clock = {}
    t0 = time.perf_counter()
    if args.hindcast:
        hind = read_hindcast(args.hindcast)
    elif TEN_YEARS.exists():
        hind = read_hindcast(TEN_YEARS)
    else:
        print(f"note: {TEN_YEARS} is not here: the packaged year 2004 stands in for both halves (a smoke check only)")
        hind = sample_hindcast()
    years = set(np.unique(hind.years()).tolist())
    tune_years, check_years = ([y for y in TUNE_YEARS if y in years], [y for y in CHECK_YEARS if y in years])
    if not tune_years or not check_years:
        tune_years = check_years = sorted(years)
    loaded = load_system(HERE / "system.toml")
    gamma = spectrum_gamma(loaded)
    tune_series, check_series = (site_series(hind.select(years=y), gamma=gamma) for y in (tune_years, check_years))
    loaded.operability = dataclasses.replace(loaded.operability, n_realisations=cfg["n_realisations"],
                                             duration=cfg["duration"], search=Search(hs_start=1.0, hs_max=5.0, tolerance=0.01))
    models = [LimitingHsModel(loaded, "lift", tp, 180.0, PATHS) for tp in cfg["tp"]]
    for m in models:
        for e in m.excursions:
            print(f"WARNING: Tp {m.tp:g} s: {e.line()}")
    ea0 = models[0].initial["hoist.EA"]
    designs = {"without compensation": {"hoist.heave_compensation": 0.0, "hoist.EA": ea0},
               "with compensation (hand, 0.5)": {"hoist.heave_compensation": 0.5, "hoist.EA": ea0}}
    clock["setup"] = time.perf_counter() - t0
    results = {"settings": dict(cfg, tune_years=tune_years, check_years=check_years, hindcast=hind.source,
                                heading_deg=180.0, operation_hours=3), "designs": {},
               "validity": {f"Tp {m.tp:g} s": [e.line() for e in m.excursions] for m in models if m.excursions}}
    for name, values in designs.items():
        t = time.perf_counter()
        lim = design_limits(models, values)
        results["designs"][name] = {"values": values, "limits": lim, "tune_years": site(lim, tune_series),
                                    "check_years": site(lim, check_series)}
        clock[f"limits: {name}"] = time.perf_counter() - t
        print(f"{name}: operational Hs {np.round(lim['operational_hs'], 2).tolist()} m at Tp {list(cfg['tp'])} s")
    hand = results["designs"]["with compensation (hand, 0.5)"]
    worst = int(np.nanargmin(hand["tune_years"]["workability"])) + 1
    print(f"the worst month of the hand design on {tune_years[0]}-{tune_years[-1]}: {MONTHS[worst - 1]} "
          f"({100 * np.nanmin(hand['tune_years']['workability']):.1f} %); tuning compensation and rope stiffness for it")
    t = time.perf_counter()
    tuned, history = tune(models, tune_series, worst, hand["values"], cfg["steps"], print)
    clock["tuning"] = time.perf_counter() - t
    t = time.perf_counter()
    lim = design_limits(models, tuned)
    results["designs"]["tuned"] = {"values": tuned, "limits": lim, "tune_years": site(lim, tune_series),
                                   "check_years": site(lim, check_series), "history": history}
    clock["limits: tuned"] = time.perf_counter() - t
    results["worst_month"] = worst
    results["seconds"] = clock
    _report(results, worst, print)
    path = out / "results.json"
    path.write_text(json.dumps(results, indent=1))
    _plot(results, out)
    print(f"wrote {path}, {out / 'limits.png'}, {out / 'workability.png'}")
    return 0


def _report(results, worst, log):
    log(f"\nworkability of {MONTHS[worst - 1]} (the month tuned for) and waiting time, per design:")
    log(f"{'design':<32} {'tune years':>11} {'check years':>12} {'check P50 wait (h)':>19} {'check P90 wait (h)':>19}")
    for name, d in results["designs"].items():
        tw, cw = d["tune_years"]["workability"][worst - 1], d["check_years"]["workability"][worst - 1]
        log(f"{name:<32} {100 * tw:10.1f}% {100 * cw:11.1f}% {d['check_years']['wait_p50_h'][worst - 1]:19.0f} "
            f"{d['check_years']['wait_p90_h'][worst - 1]:19.0f}")
    log("seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in results["seconds"].items()))


def _plot(results, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, d in results["designs"].items():
        ax.plot(d["limits"]["tp"], d["limits"]["operational_hs"], "o-", label=name)
    ax.set_xlabel("peak period Tp (s)")
    ax.set_ylabel("operational limit, alpha x limiting Hs (m)")
    ax.set_title("the lift's operational limit, head seas", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "limits.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    months = np.arange(1, 13)
    names = list(results["designs"])
    for k, name in enumerate(names):
        w = np.asarray(results["designs"][name]["check_years"]["workability"])
        ax.bar(months + (k - 1) * 0.27, 100 * w, 0.27, label=name)
    ax.set_xticks(months, MONTHS, fontsize=8)
    ax.set_ylabel("workability (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"workability on the check years {results['settings']['check_years'][0]}-"
                 f"{results['settings']['check_years'][-1]} (never seen by the tuning)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "workability.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
