"""The subsea installation's whole operability end to end: 3 phases x 8 headings x 10 peak periods x the root
search x 20 realisations of the whole operation (``studies/subsea_installation/operability.py``'s full form).

    python -m benchmarks.operability_installation                 # every cell (80), in a fresh folder: hours on a CPU
    python -m benchmarks.operability_installation --cells 2       # the first cells only (heading 0, Tp 5 and 6 s)
    python -m benchmarks.operability_installation --out DIR       # every cell, kept in DIR: run it again to resume
    python -m benchmarks.operability_installation --out DIR --report   # the table so far, nothing run
    python -m benchmarks.operability_installation --out DIR --process 0/2 &   # two processes, one a core,
    python -m benchmarks.operability_installation --out DIR --process 1/2     # each every other cell

One process, no compilation cache; the compile included.  Reports the wall time, the runs, the realisations a
second, and, for a part of the table, the whole table's time at the rate of the cells done (a projection, said
as one).  Beside them, a plain run of the same case (one sea state, 20 realisations) timed in the same process:
the search's own cost is the difference.

``--out``: the cells go to DIR as the study writes them (``jaxmbd.operability.cells``: a killed run loses at
most the cell it was in) and each cell's time to ``DIR/timings.jsonl`` as it ends, wall and the process's CPU
time: a table taken in several sittings is summed over them, each sitting's first cell carrying that sitting's
compile; with ``--process``, several processes share the cells (the wall is then each process's own, summed).
The CPU time is the figure where a process was stopped for a while (the wall then counts the pause); it is
not immune to sharing: on a machine busy with other work a process's CPU time grows too (the plain run below:
21.4 s alone, 26.4 s of CPU beside two other processes), so a sitting to report runs on an otherwise idle
machine.  The cells' key holds jaxmbd's code digest: the sittings run one commit's code (a checkout of its own),
or the cells are refused.  On an accelerator ``limiting_table`` runs every cell's searches
in lock-step, the sea states of a round as one program.  Writes ``benchmarks/results/operability_installation.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processor

PLAIN = (2.0, 9.0, 180.0)  # the plain run's sea state: Hs (m), Tp (s), heading (deg)


def _table(cells):
    from studies.subsea_installation.operability import HEADINGS, PERIODS, criteria_table

    table = criteria_table()
    total = len(HEADINGS) * len(PERIODS)
    n = min(cells or total, total)
    if n < total:  # the first n cells: whole headings' periods, then the first periods of the next heading
        if n <= len(PERIODS):
            table = dataclasses.replace(table, headings_deg=HEADINGS[:1], tp=PERIODS[:max(n, 1)])
        else:
            table = dataclasses.replace(table, headings_deg=HEADINGS[: n // len(PERIODS)])
            n = len(table.headings_deg) * len(PERIODS)
    return table, n, total


def _plain(c, out: Path | None) -> dict:
    """A plain run of the case at one sea state, timed after its compile: realisations per second."""
    import math

    from jaxmbd.run import run, settings_of, start_of

    path = out / "plain.json" if out is not None else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    start = start_of(c)
    hs, tp, heading = PLAIN
    settings = dataclasses.replace(settings_of(c, n_realisations=20), tp=tp, heading=math.radians(heading))
    run(c, start, settings=settings, hs=hs)
    t0, c0 = time.perf_counter(), time.process_time()
    run(c, start, settings=settings, hs=hs)
    found = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "realisations": 20,
             "sea_state": list(PLAIN)}
    if path is not None:
        path.write_text(json.dumps(found))
    return found


def _commit() -> str:
    try:
        return subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _sittings(out: Path) -> list:
    path = out / "timings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _hs_tables(lim) -> list:
    """Per phase, the limiting Hs (m) by heading (rows) and Tp (columns); "above" marked ">"."""
    lines = []
    tps = lim["tp"].values
    for k, phase in enumerate(lim["phase"].values):
        legend = "`>`: holds up to the search's ceiling; `<`: fails at its floor; `~`: bracket wider than the tolerance"
        lines += ["", f"Limiting Hs (m), {phase} ({legend}):", "",
                  "| heading (deg) | " + " | ".join(f"Tp {t:g} s" for t in tps) + " |",
                  "|---|" + "---|" * len(tps)]
        for h, head in enumerate(lim["heading"].values):
            cells = []
            for j in range(len(tps)):
                st = lim["status"].values[k, h, j]
                cells.append({"above": ">", "below": "<", "unconverged": "~"}.get(st, "") + f"{lim['limiting_hs'].values[k, h, j]:.2f}")
            lines.append(f"| {head:g} | " + " | ".join(cells) + " |")
    return lines


def _site(c, table, lim, out: Path) -> list:
    """The whole table's files, as ``jaxmbd operability`` writes them (limits.nc and .csv, site.nc and .csv, the
    limits over the site's scatter diagram and the workability by month), at NDBC buoy 44007's ten years where
    they are at hand (the packaged year 2004 otherwise); the site's table as report lines."""
    import numpy as np

    # the command's own writers, so the files are the command's (private names: the table runs on c1b0a99's jaxmbd/,
    # where they are not public)
    from jaxmbd.operability.command import MONTHS, _plots, _write
    from jaxmbd.operability.hindcast import read_hindcast, sample_hindcast
    from jaxmbd.operability.job import site_table, spectrum_gamma
    from studies.operability.run import TEN_YEARS

    site = read_hindcast(TEN_YEARS) if TEN_YEARS.exists() else sample_hindcast()
    gamma = spectrum_gamma(c)
    ds = site_table(lim, table, site, gamma=gamma)
    written = _write(lim, ds, out) + _plots(lim, ds, site, table, out, gamma=gamma)
    t_pop, t_r = int(ds["duration"]), int(ds["reference_period"])
    lines = ["", f"The site ({site.source}, {len(site)} hours, {site.time[0]} to {site.time[-1]}, {100 * site.coverage:.1f} % of "
             f"the hours recorded; Tz read as the Tp of the installation's JONSWAP, gamma {gamma:g}): each phase at its best "
             f"heading, the operational limit alpha x limiting Hs, the operation {t_pop} h, the windows over T_R = {t_r} h; "
             "starts by month (`" + "`, `".join(p.name for p in written) + "` in the folder):", "",
             "| month | workability | wait P50 (h) | wait P90 (h) | unknown starts |", "|---|---|---|---|---|"]
    work = ds["workability"].values
    for i, m in enumerate(ds["month"].values):  # as the command prints them
        lines.append(f"| {MONTHS[m - 1]} | {f'{100 * work[i]:.0f} %' if np.isfinite(work[i]) else '--'} | "
                     f"{ds['waiting'].values[i, 0]:.0f} | {ds['waiting'].values[i, 1]:.0f} | {int(ds['unknown'].values[i])} |")
    if t_r == t_pop:
        lines += ["", "The windows cover the planned hours only: DNV-OS-H101 (Section 4 B402) asks the forecast limit to hold "
                  "over T_R = T_POP + T_C, and the study states no contingency T_C."]
    return lines


def _adopt(pairs):
    """Read a cell whose key names one of ``pairs``' (system, start) digests as if it named this run's: the same
    code's cells from a processor whose rounding gives the built hull and its equilibrium other bits (a digest is
    bitwise).  Every other field of the key must still agree."""
    from jaxmbd.operability import cells  # the table's reader imports it from there at each call

    known = [tuple(p.split(":")) for p in pairs]
    if any(len(p) != 2 for p in known):
        raise SystemExit(f"--same-study-as: expected SYSTEM:START, got {pairs}")
    plain = cells.read_cell

    def read_cell(path, key, *, force=False):
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            old = data["key"]
        except (OSError, ValueError, KeyError, TypeError):
            return plain(path, key, force=force)
        if (old.get("system"), old.get("start")) in known and {k: v for k, v in old.items() if k not in ("system", "start")} == \
                {k: v for k, v in key.items() if k not in ("system", "start")}:
            return data["cell"]
        return plain(path, key, force=force)

    cells.read_cell = read_cell


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=None,
                    help="the first N cells only: up to one heading's periods, the first N periods of the first heading; "
                         "more, whole headings (N rounded down to a multiple of the periods)")
    ap.add_argument("--out", default=None, help="keep the cells and their times in this folder (resumable)")
    ap.add_argument("--report", action="store_true", help="with --out: report the cells done, run nothing")
    ap.add_argument("--sitting", default=date.today().isoformat(), help="with --out: the sitting's name (default: the date)")
    ap.add_argument("--process", default="0/1", help="with --out: INDEX/COUNT, this process takes the cells k with k mod COUNT = INDEX")
    ap.add_argument("--same-study-as", action="append", default=[], metavar="SYSTEM:START",
                    help="with --out: take the cells whose key differs from this run's only in its system and start digests, "
                         "and holds these two, as this study's (computed by the same code on a processor that rounds the "
                         "built system differently; the folder's README gives the check that allows it)")
    args = ap.parse_args(argv)
    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    sys.path.insert(0, str(ROOT))
    from jaxmbd.operability.job import limiting_table
    from studies.subsea_installation.operability import case

    c = case()
    if args.same_study_as:
        _adopt(args.same_study_as)
    table, n, total = _table(args.cells)
    out = Path(args.out).resolve() if args.out else None
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory()
        folder = Path(tmp.name)
    else:
        folder = out
        folder.mkdir(parents=True, exist_ok=True)
    index, count = (int(x) for x in args.process.split("/"))
    plain = _plain(c, out) if index == 0 else None  # the first process times it
    sitting = args.sitting
    if not args.report:
        t0 = last = time.perf_counter()
        c_last = time.process_time()

        def progress(k, m):
            nonlocal last, c_last
            now, cpu = time.perf_counter(), time.process_time()
            with open(folder / "timings.jsonl", "a") as f:
                f.write(json.dumps({"sitting": sitting, "process": f"{index}/{count}", "commit": _commit(),
                                    "date": date.today().isoformat(), "cell": k, "of": m, "wall": now - last,
                                    "cpu": cpu - c_last}) + "\n")
            last, c_last = now, cpu
            print(f"cell {k}/{m}: {now - t0:.0f} s", flush=True)

        limiting_table(c, table, out_dir=folder, progress=progress, process_index=index, process_count=count)
    from jaxmbd.operability.cells import cell_path

    done = [p for p in (cell_path(folder, h, j) for h in range(len(table.headings_deg)) for j in range(len(table.tp))) if p.exists()]
    runs = sum(json.loads(p.read_text())["cell"]["runs"] for p in done)
    kinds = {}  # the processors' (system, start) digests: the same study to round-off where --same-study-as says so
    for p in done:
        key = json.loads(p.read_text())["key"]
        kinds[(key["system"], key["start"])] = kinds.get((key["system"], key["start"]), 0) + 1
    times = _sittings(folder)
    wall, cpu = sum(t["wall"] for t in times), sum(t["cpu"] for t in times)
    real = runs * table.n_realisations
    sittings = sorted({t["sitting"] for t in times})
    commits = sorted({t["commit"] for t in times})
    processes = sorted({t.get("process", "0/1") for t in times})
    # end to end: each sitting as long as its slowest process (the processes run side by side)
    elapsed = sum(max(sum(t["wall"] for t in times if t["sitting"] == st and t.get("process", "0/1") == pr) for pr in processes)
                  for st in sittings)
    complete = len(done) == n
    lim = limiting_table(c, table, out_dir=folder) if complete else None
    site_lines = _site(c, table, lim, out) if lim is not None and out is not None and n == total else []
    if tmp is not None:
        tmp.cleanup()
    whole = (f"{elapsed / 3600:.2f} h end to end ({cpu / 3600:.2f} h CPU)" if complete and n == total else
             f"{cpu / len(done) * total / 3600:.1f} h projected at the CPU rate of the cells done (not measured)" if done else "-")
    if plain is None and out is not None and (out / "plain.json").exists():
        plain = json.loads((out / "plain.json").read_text())
    lines = [
        "## The subsea installation's whole operability (`python -m benchmarks.operability_installation`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, {jax.default_backend()}, "
        f"jax {jax.__version__}; no compilation cache, compile included; code {', '.join(commits) or _commit()}.",
        "",
        f"`studies/subsea_installation/operability.py`'s full form: the six-phase operation (RK4 at 0.02 s, 100 wave components, "
        f"each realisation the whole 6-7 minutes from deck to seabed) with the criteria of three phases, {table.n_realisations} "
        f"realisations a run, the searches to {table.search.tolerance:g} m; {len(done)} of the {n} cells asked for "
        f"(the whole table: {total}, 8 headings x 10 periods)"
        + (f", computed in {len(sittings)} sitting(s) (`--out`: resumed) by {len(processes)} process(es) sharing the cells "
           "(`--process`), each process's first cell of a sitting with its compile; wall: the processes' walls summed; end to "
           f"end: each sitting as long as its slowest process, {elapsed:.0f} s." if out else ".")
        + (f"  The cells come from {len(kinds)} kinds of processor, whose round-off builds the hull and its equilibrium "
           "to other bits (system:start digests " + ", ".join(f"{a}:{b} {n} cells" for (a, b), n in sorted(kinds.items()))
           + "): the same study to round-off, one cell computed on both agreeing to 8e-13 (the folder's README)."
           if len(kinds) > 1 else ""),
        "",
        "| cells | runs | realisations | wall (s) | CPU (s) | realisations / s (wall) | realisations / s (CPU) | the whole table |",
        "|---|---|---|---|---|---|---|---|",
        f"| {len(done)} | {runs} | {real} | {wall:.0f} | {cpu:.0f} | {real / wall if wall else float('nan'):.2f} | "
        f"{real / cpu if cpu else float('nan'):.2f} | {whole} |",
    ]
    if plain is not None:
        lines += [
        "",
        f"A plain run of the same case in the same process (Hs {plain['sea_state'][0]:g} m, Tp {plain['sea_state'][1]:g} s, heading "
        f"{plain['sea_state'][2]:g} deg, 20 realisations, after its compile): {plain['wall']:.1f} s wall, {plain['cpu']:.1f} s CPU, "
        f"{plain['realisations'] / plain['wall']:.2f} realisations / s; the table's rate against it is what the searches' "
        "bookkeeping and the compiles cost.",
        ]
    if lim is not None:
        lines += _hs_tables(lim)
    lines += site_lines
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "operability_installation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
