"""An operability study on a two-worker Dask ``LocalCluster`` against the same study in one process, on this
machine: what the cluster's path costs where it cannot gain (two cores, two cells).

    python -m benchmarks.operability_dask            # the subsea installation; 3 processes per case
    python -m benchmarks.operability_dask --lift     # examples/lift_in_phases.toml instead
    python -m benchmarks.operability_dask --quick    # 1 process per case

The installation: ``studies/subsea_installation/operability.py`` in its smoke form (the six-phase operation
with the criteria of three phases, head seas, Tp 7 and 11 s, two realisations a run, 30 wave components: two
cells).  The lift: ``examples/lift_in_phases.toml``'s in its smoke form (three phases, two periods, one heading,
two realisations a run: two cells).  Each into a fresh folder, no persistent compilation cache.  "one
process": ``limiting_table`` in the timed process.  "Dask": a ``LocalCluster`` of two worker processes (one
thread each) started inside the timed region, the cells sent to it (``client=``), each worker compiling its
cell's programs; the figure includes the cluster's start and stop.  Cases alternate between processes; the
figure is the median over processes and the range.  Writes ``benchmarks/results/operability_dask.md`` (the
installation) or ``operability_dask_lift.md``.
"""

from __future__ import annotations

import os
import statistics
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

FILE = "examples/lift_in_phases.toml"
STUDY = "studies/subsea_installation/operability.py"
CASES = ("local", "dask")


def _case(arg: str) -> dict:
    import dataclasses
    import tempfile
    import time

    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    import numpy as np

    import jaxmbd
    from jaxmbd.operability.job import limiting_table

    arg, study = arg.split(":")
    if study == "lift":
        loaded = jaxmbd.load_system(Path(ROOT) / FILE)
        op = loaded.operability
        op = dataclasses.replace(op, tp=op.tp[:2], headings_deg=op.headings_deg[:1], n_realisations=2)
    else:
        import sys

        sys.path.insert(0, str(ROOT))
        from studies.subsea_installation.operability import smoke

        loaded, op = smoke()
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        if arg == "dask":
            import distributed

            with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                          env={"JAX_PLATFORMS": "cpu", "JAXMBD_CACHE_DIR": "off",
                                               "PYTHONPATH": str(ROOT)}) as cluster, \
                    distributed.Client(cluster) as client:
                started = time.perf_counter() - t
                table = limiting_table(loaded, op, out_dir=out, client=client)
        else:
            started = 0.0
            table = limiting_table(loaded, op, out_dir=out)
        wall = time.perf_counter() - t
    return {"seconds": wall, "cluster_start": started, "runs": int(table["runs"].sum()),
            "limits": np.asarray(table["limiting_hs"].values).ravel().tolist(), "cells": int(table["runs"].size)}


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=1, full=3, options=("--lift",))
    if got_args is None:
        return
    args, n = got_args
    study = "lift" if args.lift else "installation"
    import jax

    got = {c: [] for c in CASES}
    for k in range(n):
        for c in (CASES if k % 2 == 0 else CASES[::-1]):
            got[c].append(spawn_child("benchmarks.operability_dask", f"{c}:{study}"))
    local, dask = got["local"], got["dask"]
    import numpy as np

    same = all(np.array_equal(r["limits"], local[0]["limits"], equal_nan=True) for r in local + dask)
    ratio = statistics.median([r["seconds"] for r in dask]) / statistics.median([r["seconds"] for r in local])
    lines = [
        "## An operability study on a two-worker Dask cluster (`python -m benchmarks.operability_dask"
        + (" --lift`)" if args.lift else "`): the subsea installation"),
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes per case (min-max), the cases in turn, no compilation cache.",
        "",
        (f"`{FILE}` in its smoke form: three phases, {local[0]['cells']} cells (one heading x two periods), two realisations "
         f"a run, {local[0]['runs']} runs in all; the whole study timed, from a fresh folder." if args.lift else
         f"The subsea installation (`{STUDY} --smoke`): the six-phase operation (each realisation the whole 6-7 minutes from "
         f"deck to seabed, RK4 at 0.02 s, 30 wave components) with the criteria of three phases (lift-off, splash zone, landing), "
         f"{local[0]['cells']} cells (head seas x Tp 7 and 11 s), two realisations a run, {local[0]['runs']} runs in all; the whole "
         "study timed, from a fresh folder."),
        "",
        "| case | study (s) | of which the cluster's start (s) |",
        "|---|---|---|",
        f"| one process | {spread([r['seconds'] for r in local])} | |",
        f"| LocalCluster, 2 worker processes | {spread([r['seconds'] for r in dask])} | {spread([r['cluster_start'] for r in dask])} |",
        f"| Dask / one process | {ratio:.2f} | |",
        "",
        ("The limits are the same in every process of both cases (bit for bit). " if same else
         "THE LIMITS DIFFER between processes or cases. ")
        + "On two cores the two workers share the cores the one process had, and each compiles the cell's programs "
        "itself: the figure is the cluster path's overhead (its start, the second compile, sending the system), "
        "not a speed-up; on a cluster of several nodes the cells divide over them.",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / ("operability_dask_lift.md" if args.lift else "operability_dask.md")).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


if __name__ == "__main__":
    main()
