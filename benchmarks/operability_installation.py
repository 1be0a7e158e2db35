"""The subsea installation's whole operability end to end: 3 phases x 8 headings x 10 peak periods x the root
search x 20 realisations of the whole operation (``studies/subsea_installation/operability.py``'s full form).

    python -m benchmarks.operability_installation                 # every cell (80): hours on a CPU
    python -m benchmarks.operability_installation --cells 2       # the first cells only (heading 0, Tp 5 and 6 s)

One process, no compilation cache, into a fresh folder; the compile included.  Reports the wall time, the runs,
the realisations a second, and, for a part of the table, the whole table's time at the rate of the cells done (a
projection, said as one).  On an accelerator ``limiting_table`` runs every cell's searches in lock-step, the
sea states of a round as one program.  Writes ``benchmarks/results/operability_installation.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import tempfile
import time
from datetime import date

from .report import RESULTS, ROOT, assemble


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=None, help="the first N cells (heading-major) only")
    args = ap.parse_args(argv)
    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    sys.path.insert(0, str(ROOT))
    from jaxmbd.operability.job import limiting_table
    from studies.subsea_installation.operability import HEADINGS, PERIODS, case, criteria_table

    c, table = case(), criteria_table()
    total = len(HEADINGS) * len(PERIODS)
    n = min(args.cells or total, total)
    if n < total:  # the first n cells: whole headings' periods, then the first periods of the next heading
        if n <= len(PERIODS):
            table = dataclasses.replace(table, headings_deg=HEADINGS[:1], tp=PERIODS[:max(n, 1)])
        else:
            table = dataclasses.replace(table, headings_deg=HEADINGS[: n // len(PERIODS)])
            n = len(table.headings_deg) * len(PERIODS)
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        lim = limiting_table(c, table, out_dir=out, progress=lambda k, m: print(f"cell {k}/{m}: {time.perf_counter() - t:.0f} s",
                                                                                   flush=True))
        wall = time.perf_counter() - t
    runs = int(lim["runs"].sum())
    real = runs * table.n_realisations
    whole = f"{wall:.0f} s" if n == total else f"{wall / n * total / 3600:.1f} h projected at this rate (not measured)"
    rows = []
    for k, phase in enumerate(lim["phase"].values):
        for h, head in enumerate(lim["heading"].values):
            rows.append(f"{phase}, heading {head:g} deg: " + ", ".join(
                f"Tp {tp:g} s {lim['limiting_hs'].values[k, h, j]:.2f} m ({lim['status'].values[k, h, j]})"
                for j, tp in enumerate(lim["tp"].values)))
    lines = [
        "## The subsea installation's whole operability (`python -m benchmarks.operability_installation`)",
        "",
        f"{date.today().isoformat()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, {jax.default_backend()}, "
        f"jax {jax.__version__}; one process, no compilation cache, compile included.",
        "",
        f"`studies/subsea_installation/operability.py`'s full form: the six-phase operation (RK4 at 0.02 s, 100 wave components, "
        f"each realisation the whole 6-7 minutes from deck to seabed) with the criteria of three phases, {table.n_realisations} "
        f"realisations a run, the searches to {table.search.tolerance:g} m; {n} of the table's {total} cells (8 headings x 10 periods).",
        "",
        "| cells | runs | realisations | wall (s) | realisations / s | the whole table |",
        "|---|---|---|---|---|---|",
        f"| {n} | {runs} | {real} | {wall:.0f} | {real / wall:.2f} | {whole} |",
        "",
        "Limiting Hs: " + "; ".join(rows) + ".",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "operability_installation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
