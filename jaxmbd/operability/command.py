"""``jaxmbd operability SYSTEM.toml [--hindcast FILE]``: the limiting sea states of the file's operation,
its operational limits, and the workability and waiting time at a site; tables printed, written to
NetCDF (with units) and CSV, and plotted."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import time
from pathlib import Path

import numpy as np

from ..errors import InputError
from .hindcast import GAMMA_RANGE, read_hindcast, sample_hindcast
from .job import CONTINGENCY, limiting_table, search_names, site_table, spectrum_gamma

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


SMALL_LIFT = Path(__file__).resolve().parents[1] / "data" / "small_lift.toml"
"""The packaged small lift of ``jaxmbd demo operability``."""
SMOKE_DURATION = 60.0
"""s: the longest realisation of ``--smoke`` (a run without phases; a scenario's phases keep their own)."""


def demo(args, loaded, progress, table_text) -> int:
    """``jaxmbd demo operability``: the packaged small lift (``loaded``, read from :data:`SMALL_LIFT`) at the
    packaged site (NDBC buoy 44007, 2004), head seas only, six realisations of 150 s a run: under a minute on a CPU."""
    loaded.operability = dataclasses.replace(loaded.operability, headings_deg=(180.0,), duration=150.0)
    out = str(Path(args.out).parent / "demo_operability") if args.out == "out/demo" else args.out
    ns = argparse.Namespace(hindcast=None, out=out, realisations=6, smoke=False, force=True, process_id=0, num_processes=1,
                            yes=False, report=False)
    return operability_command(ns, loaded, progress, table_text)


def add_parser(sub, func, *, out, count, index):
    """The command's options (``out``, ``count``, ``index``: the command line's argument types)."""
    op = sub.add_parser("operability", help="limiting sea states per phase, heading and period; workability and waiting "
                                            "time at a site (resumes an interrupted study)")
    op.add_argument("system", help="the system file (TOML) with an [operability] table")
    op.add_argument("--hindcast", help="hourly sea states of the site (NDBC text, CSV or NetCDF; default: the packaged "
                                       "2004 sample)")
    op.add_argument("--out", type=out, help="output folder (default out/<name>_operability)")
    op.add_argument("--realisations", type=count, help="wave realisations per run (default: the file's [operability])")
    op.add_argument("--smoke", action="store_true",
                    help="two periods, one heading, two realisations of at most 60 s (a run without phases; an operation in "
                         "phases keeps its phases' lengths): checks every step")
    op.add_argument("--force", action="store_true", help="recompute the cells of the output folder computed for another study")
    op.add_argument("--num-processes", type=count, default=1, help="processes sharing the study's cells (default 1)")
    op.add_argument("--process-id", type=index, default=0, help="this process's index, 0 .. num-processes - 1")
    op.add_argument("--dask", metavar="SCHEDULER_ADDRESS", help="run the cells as tasks on this Dask cluster (tcp://host:8786)")
    op.add_argument("--yes", action="store_true", help="run on where the first cells project the study over an hour")
    op.add_argument("--report", action="store_true", help="also write report.html (jaxmbd report) in the output folder")
    op.set_defaults(func=func)
    return op


def operability_command(args, loaded, progress, table_text) -> int:
    """The command: ``loaded`` the system file read, ``progress(label)`` a progress bar, ``table_text(rows,
    header)`` the command line's table layout."""
    op = loaded.operability
    if op is None:
        raise InputError(f"{loaded.path}: operability: expected an [operability] table with its phases and criteria "
                         "(docs/operability.md)")
    if args.realisations:
        op = dataclasses.replace(op, n_realisations=args.realisations)
    if args.smoke:  # the table's layout and every step, in seconds: two periods, one heading, two realisations
        op = dataclasses.replace(op, tp=op.tp[:2], headings_deg=op.headings_deg[:1], n_realisations=2,
                                 duration=None if op.duration is None else min(op.duration, SMOKE_DURATION))
    site = read_hindcast(args.hindcast) if args.hindcast else sample_hindcast()
    gamma = spectrum_gamma(loaded)
    if site.tp is None and not GAMMA_RANGE[0] <= gamma <= GAMMA_RANGE[1]:  # said before the search, not after it
        raise InputError(f"{loaded.path}: waves.gamma: {gamma:g}; the hindcast {site.source} gives Tz, read as Tp by "
                         f"DNV-RP-C205's fit for {GAMMA_RANGE[0]:g} <= gamma <= {GAMMA_RANGE[1]:g}")
    out = Path(args.out or f"out/{loaded.system.name}_operability")
    out.mkdir(parents=True, exist_ok=True)
    print(f"jaxmbd operability: {loaded.system.name}: {len(op.phases)} phase(s) x {len(op.headings_deg)} heading(s) x "
          f"{len(op.tp)} period(s), {op.n_realisations} realisations a run; site {site.source} "
          f"({len(site)} hours, {site.time[0]} to {site.time[-1]}, {100 * site.coverage:.1f} % of the hours recorded)")
    t0 = time.perf_counter()
    from ..cluster import dask_client
    from ..run import TIME_LIMIT_S

    limits = limiting_table(loaded, op, progress=progress("limiting sea states"), out_dir=out,
                            time_limit=None if getattr(args, "yes", False) else TIME_LIMIT_S,
                            process_index=args.process_id, process_count=args.num_processes, force=args.force,
                            client=dask_client(getattr(args, "dask", None), args.num_processes))
    t1 = time.perf_counter()
    if limits is None:
        print(f"computed process {args.process_id}'s cells in {t1 - t0:.0f} s ({out / 'cells'}); the others' are not all "
              "there yet: the table is assembled by the process that finds every cell (run the command again)")
        return 0
    _print_limits(limits, op, table_text)
    print(f"({int(limits['runs'].sum())} runs in {t1 - t0:.0f} s)")
    _print_validity(limits)
    site_ds = site_table(limits, op, site, gamma=gamma)
    _print_site(site_ds, table_text)
    written = _write(limits, site_ds, out)
    written += _plots(limits, site_ds, site, op, out, gamma=gamma)
    if getattr(args, "report", False):
        from ..report import write_report

        written.append(write_report([out], out / "report.html"))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _print_limits(limits, op, table_text):
    names = list(dict.fromkeys(n for p in op.phases for n in search_names(p)))  # the criteria, and "phase 'P' reached ..."
    print(f"operational Hs (m) = alpha x limiting Hs (alpha {'given' if op.alpha is not None else 'from DNV-OS-H101, ' + str(op.forecast_level)}"
          f", planned operation {op.hours} h); in brackets the governing criterion:")
    for i, n in enumerate(names):
        print(f"  [{i + 1}] {n}")
    rows = []
    for k, phase in enumerate(limits["phase"].values):
        for h, heading in enumerate(limits["heading"].values):
            row = [str(phase), f"{heading:g}"]
            for j in range(limits.sizes["tp"]):
                hs, st = float(limits["operational_hs"][k, h, j]), str(limits["status"].values[k, h, j])
                mark = {"above": ">", "below": "<", "unconverged": "~"}.get(st, "")
                gov = str(limits["governing"].values[k, h, j])
                row.append(f"{mark}{hs:.2f} [{names.index(gov) + 1 if gov in names else '?'}]")
            rows.append(row)
    print(table_text(rows, ["phase", "heading (deg)"] + [f"Tp {t:g} s" for t in limits["tp"].values]))
    below = int(np.sum(limits["alpha_below_table"].values))
    if below:
        print(f"note: {below} limit(s) below 1 m, where DNV's alpha tables start: alpha taken at the 1 m column (DNV: to be "
              "assessed case by case; limits.nc's alpha_below_table marks them)")
    if np.any(limits["status"].values == "below"):
        print("note: '<': the phase fails already at the search's floor: a no-go at that period (operational limit 0)")
    if np.any(limits["status"].values != "root"):
        print("(>: every criterion holds up to the search's ceiling, hs_max or the steepest sea of the period that does not "
              "break; <: one fails already at the smallest Hs searched; ~: the search's runs ended before its bracket was as narrow as its "
              "tolerance)")


def _print_validity(limits):
    left = sorted({w for w in np.asarray(limits["validity"].values).ravel() for w in str(w).split("; ") if w})
    if left:
        print("WARNING: runs of the search left the range of validity of their models:")
        for w in left:
            print(f"  - {w}")


def _print_site(ds, table_text):
    work = ds["workability"].values
    rows = [[MONTHS[m - 1], f"{100 * work[i]:.0f} %" if np.isfinite(work[i]) else "--",
             f"{ds['waiting'].values[i, 0]:.0f}", f"{ds['waiting'].values[i, 1]:.0f}", str(int(ds["unknown"].values[i]))]
            for i, m in enumerate(ds["month"].values)]
    t_pop, t_r = int(ds["duration"]), int(ds["reference_period"])
    print(f"the site: workability (starts that are a go) and waiting time for weather, by month of the start; operation "
          f"{t_pop} h, the windows over T_R = {t_r} h" + (f" (contingency {t_r - t_pop} h: the least of the phases' limits)"
                                                           if t_r > t_pop else ""))
    print(table_text(rows, ["month", "workability", "wait P50 (h)", "wait P90 (h)", "unknown starts"]))
    if t_r == t_pop:
        print("note: the windows cover the planned hours only; DNV-OS-H101 (Section 4 B402) asks the forecast limit to hold "
              "over T_R = T_POP + T_C (T_C not assessed: T_R = 2 T_POP): [operability] contingency_hours")
    outside = {str(p): int(n) for p, n in zip(ds["phase"].values, ds["outside_curve"].values) if n and str(p) != CONTINGENCY}
    if outside:
        print("note: hours whose Tp lies outside the periods searched count as not workable: "
              + ", ".join(f"{n} in phase {p}" for p, n in outside.items()))


def _write(limits, site_ds, out: Path) -> list:
    paths = [out / "limits.nc", out / "site.nc"]
    limits.to_netcdf(paths[0], engine="h5netcdf")
    site_ds.to_netcdf(paths[1], engine="h5netcdf")
    csv_path = out / "limits.csv"
    with open(csv_path, "w", encoding="utf-8", newline="") as fh:
        rows = csv.writer(fh)  # quotes a criterion's name as it needs (the file may name it)
        rows.writerow(["phase", "heading_deg", "tp_s", "limiting_hs_m", "band_low_m", "band_high_m", "alpha", "operational_hs_m",
                       "alpha_below_table", "status", "governing"])
        for k, ph in enumerate(limits["phase"].values):
            for h, hd in enumerate(limits["heading"].values):
                for j, tp in enumerate(limits["tp"].values):
                    v = [float(limits[n].values[k, h, j]) for n in ("limiting_hs", "limiting_hs_low", "limiting_hs_high",
                                                                     "alpha", "operational_hs")]
                    rows.writerow([ph, f"{hd:g}", f"{tp:g}", *(f"{x:.4f}" for x in v), int(limits["alpha_below_table"].values[k, h, j]),
                                   limits["status"].values[k, h, j], limits["governing"].values[k, h, j]])
    site_csv = out / "site.csv"
    with open(site_csv, "w", encoding="utf-8") as fh:
        fh.write("month,workability_fraction,wait_p50_h,wait_p90_h,wait_mean_h,go,no_go,unknown,censored,crossed_gap\n")
        for i, m in enumerate(site_ds["month"].values):
            counts = (int(site_ds[n].values[i]) for n in ("go", "no_go", "unknown", "censored", "crossed_gap"))
            fh.write(f"{m},{site_ds['workability'].values[i]:.4f},{site_ds['waiting'].values[i, 0]:.1f},"
                     f"{site_ds['waiting'].values[i, 1]:.1f},{site_ds['waiting_mean'].values[i]:.1f}," + ",".join(map(str, counts)) + "\n")
    return paths + [csv_path, site_csv]


def _plots(limits, site_ds, site, op, out: Path, *, gamma: float) -> list:
    import matplotlib

    from ..hydro.spectra import breaking_hs

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tp = limits["tp"].values
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    t_edges = np.arange(2.0, 20.5, 1.0)
    hs_edges = np.arange(0.0, max(6.0, float(np.nanmax(site.hs)) + 0.5), 0.5)
    sc = site.scatter(hs_edges, t_edges, period="tp", gamma=gamma)
    counts = np.where(sc.counts > 0, sc.counts, np.nan)
    mesh = ax.pcolormesh(t_edges, hs_edges, counts, cmap="Blues", shading="flat")
    fig.colorbar(mesh, ax=ax, label="hours in the hindcast")
    for k, ph in enumerate(limits["phase"].values):
        best = np.nanmax(limits["operational_hs"].values[k], axis=0)
        line, = ax.plot(tp, best, "o-", lw=2, label=f"{ph}: operational limit, alpha x limiting Hs (best heading)")
        ax.plot(tp, np.nanmax(limits["limiting_hs"].values[k], axis=0), "--", color=line.get_color(), lw=1,
                label=f"{ph}: limiting Hs (design)")
        if np.all(np.isnan(limits["limiting_hs_low"].values[k])):
            continue  # too few realisations for a band
        at = np.argmax(np.nan_to_num(limits["limiting_hs"].values[k], nan=-np.inf), axis=0)[None]  # the best heading's band at each period
        lo = np.take_along_axis(limits["limiting_hs_low"].values[k], at, axis=0)[0]
        hi = np.take_along_axis(limits["limiting_hs_high"].values[k], at, axis=0)[0]
        ax.fill_between(tp, lo, hi, color=line.get_color(), alpha=0.2, label=f"{ph}: limiting Hs, 90 % band of the realisations")
    t_fine = np.linspace(t_edges[0], t_edges[-1], 200)
    ax.plot(t_fine, breaking_hs(t_fine), ":", color="0.3", lw=1.2,
            label="breaking: DNV-RP-C205's limiting steepness (the searches' ceiling, with hs_max)")
    ax.set_ylim(0.0, max(float(hs_edges[-1]), float(np.nanmax(limits["limiting_hs"].values)) + 0.5))
    ax.set_xlabel("peak period Tp (s)")
    ax.set_ylabel("significant wave height Hs (m)")
    ax.set_title(f"limiting sea states over the site's scatter diagram ({site.source})", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    p1 = out / "limits.png"
    fig.savefig(p1, dpi=110)
    plt.close(fig)

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    months = site_ds["month"].values
    a1.bar(months, 100 * site_ds["workability"].values, color="tab:green")
    a1.set_xticks(months, [MONTHS[m - 1] for m in months], fontsize=8)
    a1.set_ylabel("workability (%)")
    a1.set_ylim(0, 100)
    a1.set_title(f"starts that are a go ({int(site_ds['duration'])} h operation)", fontsize=9)
    w = site_ds["waiting"].values
    a2.bar(months - 0.2, w[:, 0], 0.4, label="P50")
    a2.bar(months + 0.2, w[:, 1], 0.4, label="P90")
    a2.set_xticks(months, [MONTHS[m - 1] for m in months], fontsize=8)
    a2.set_ylabel("waiting for weather (h)")
    a2.set_title("waiting time by month of readiness", fontsize=9)
    a2.legend(fontsize=8)
    fig.tight_layout()
    p2 = out / "site.png"
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return [p1, p2]
