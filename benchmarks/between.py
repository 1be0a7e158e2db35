"""What tracking the tensions and the ranges between the saves costs: the floating crane's run as its file
gives it (16 realisations of 600 s, RK4 at 0.05 s, saves every 0.25 s) with the tracked outputs taken at
every step (``simulate(..., between=True)``, the default) against the saves only (``between=False``).

    python -m benchmarks.between            # 3 processes per case; writes benchmarks/results/between.md, BENCHMARKS.md
    python -m benchmarks.between --quick    # 1 process per case, 60 s runs

Each process compiles its case, then times three runs and keeps their median; the figure is the median
over processes (a fresh process per case and round, the cases in turn, no persistent compilation cache),
the spread the range.
"""

from __future__ import annotations

import os
import statistics
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

FILE = "studies/floating_crane/system.toml"
CASES = ("between", "saves")


def _case(arg: str) -> dict:
    import time

    import jax
    import numpy as np

    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    jax.config.update("jax_enable_compilation_cache", False)
    import jaxmbd
    from jaxmbd.run import start_of
    from jaxmbd.simulation import simulate

    case, duration = arg.split(":")
    loaded = jaxmbd.load_system(Path(ROOT) / FILE)
    start = start_of(loaded)

    def once():
        t = time.perf_counter()
        r = simulate(loaded.system, float(duration), save_dt=loaded.save_dt, integrator=loaded.integrator, q0=start.q,
                     v0=start.v, z0=start.z, key=jax.random.key(0), n_realisations=loaded.simulation.n_realisations,
                     between=case == "between")
        return time.perf_counter() - t, r

    first, r = once()
    walls = [once()[0] for _ in range(3)]
    tension = np.asarray(r.outputs["hoist1/tension"])
    tracked = r.between.get("hoist1/tension", {}).get("max")
    return {"first": first, "seconds": statistics.median(walls), "tracked": sorted(r.between),
            "saved_max": float(tension.max(axis=-1).mean()),
            "between_max": None if tracked is None else float(np.asarray(tracked).max(axis=-1).mean()),
            "n_realisations": int(tension.shape[0])}


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=1, full=3)
    if got_args is None:
        return
    args, n = got_args
    import jax

    duration = 60.0 if args.quick else 600.0
    got = {c: [] for c in CASES}
    for k in range(n):
        for c in (CASES if k % 2 == 0 else CASES[::-1]):
            got[c].append(spawn_child("benchmarks.between", f"{c}:{duration:g}"))
    on, off = got["between"], got["saves"]
    ratio = statistics.median([r["seconds"] for r in on]) / statistics.median([r["seconds"] for r in off])
    overlap = min(r["seconds"] for r in on) <= max(r["seconds"] for r in off) and min(r["seconds"] for r in off) <= max(r["seconds"] for r in on)
    lines = [
        "## Maxima and ranges between the saves (`python -m benchmarks.between`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes per case (min-max), the cases in turn, no compilation cache; each process the median of "
        "3 runs after its compile.",
        "",
        f"`{FILE}`: {on[0]['n_realisations']} realisations of {duration:g} s, RK4 at 0.05 s, saves every 0.25 s (5 steps).  "
        f"Tracked at every step: {', '.join(on[0]['tracked'])} (largest, smallest and mean value between the saves, "
        "slack entries and time).",
        "",
        "| case | run (s) | first call with compile (s) | mean of the maxima of hoist1/tension (N) |",
        "|---|---|---|---|",
        f"| tracked at every step (default) | {spread([r['seconds'] for r in on])} | {spread([r['first'] for r in on])} | "
        f"{on[0]['between_max']:.6g} |",
        f"| saves only (`between=False`) | {spread([r['seconds'] for r in off])} | {spread([r['first'] for r in off])} | "
        f"{off[0]['saved_max']:.6g} |",
        f"| tracked / saves | {ratio:.3f} | | |",
        "",
        ("The two cases' ranges of run time overlap: the difference is within this machine's noise between processes, and "
         "tracking costs no run time that this measurement can resolve. " if overlap else "")
        + f"Its compile is {statistics.median([r['first'] for r in on]) - statistics.median([r['first'] for r in off]):.1f} s "
        "longer (medians of the first calls).  The maxima at every step are the table's since tracking; at the saves only "
        "they read lower by what falls between them (the last column, at a save step of five integration steps).",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "between.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


if __name__ == "__main__":
    main()
