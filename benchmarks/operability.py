"""A whole operability study end to end against a plain sea-state sweep of the same system: the packaged small
lift (``jaxmbd/data/small_lift.toml``), its ``[operability]`` table as written (1 phase x 2 headings x 5 peak
periods, a root search in Hs each, 8 realisations of 200 s a run) and the site's weather windows on the
packaged year; beside it, ``jaxmbd sweep``'s path over a 6 x 5 grid of Hs x Tp with the same realisations.

    python -m benchmarks.operability            # 3 processes; writes benchmarks/results/operability.md, BENCHMARKS.md
    python -m benchmarks.operability --quick    # 1 process
    python -m benchmarks.operability --gpu      # on an accelerator: the cells in lock-step too, and the same
                                                # machine's CPU (one process each); appends to BENCHMARKS_gpu.md

The study runs its cells one at a time (each search's runs batching their realisations, the CPU's way) and,
as ``together``, every cell's searches in lock-step with each round's runs as one program (an
accelerator's way, :func:`jaxmbd.operability.job.limiting_table`).

Each figure is the median over processes (a fresh process per case and round, the cases in turn, no persistent
compilation cache; the spread the range); realisations per second count every realisation simulated (of
``duration`` seconds), compile included, as a user waits for them.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

FILE = "jaxmbd/data/small_lift.toml"
CASES = ("operability", "sweep")
GPU_CASES = ("together", "operability", "sweep")
HS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)


def _case(case: str) -> dict:
    import time

    import jax

    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    jax.config.update("jax_enable_compilation_cache", False)
    import jaxmbd
    from jaxmbd.operability.hindcast import sample_hindcast
    from jaxmbd.operability.job import limiting_table, site_table, spectrum_gamma
    from jaxmbd.run import start_of

    loaded = jaxmbd.load_system(Path(ROOT) / FILE)
    op = loaded.operability
    t = time.perf_counter()
    start = start_of(loaded)
    programs = []
    if case == "together":  # count the programs: each runs `together` sea states (the last round's padded)
        import jaxmbd.operability.job as job

        plain = job.run_sea_states
        job.run_sea_states = lambda *a, **k: programs.append(len(a[3])) or plain(*a, **k)
    if case in ("operability", "together"):
        limits = limiting_table(loaded, op, start=start, together=1 if case == "operability" else len(op.headings_deg) * len(op.tp))
        site_table(limits, op, sample_hindcast(), gamma=spectrum_gamma(loaded))
        runs = int(limits["runs"].sum())
        extra = {"cells": int(limits["runs"].size), "searches": int(limits["limiting_hs"].size)}
    else:
        runs = sweep_peer(loaded, start, op.tp, op.n_realisations, op.duration, op.seed)
        extra = {"cells": runs}
    seconds = time.perf_counter() - t
    return dict(extra, seconds=seconds, runs=runs, realisations=runs * op.n_realisations, duration=op.duration,
                programs=len(programs), simulated=sum(programs) * op.n_realisations if programs else runs * op.n_realisations,
                backend=jax.default_backend(), device=str(jax.devices()[0].device_kind))


def sweep_peer(loaded, start, tp, n_realisations: int, duration: float, seed: int) -> int:
    """The peer of an operability study: ``jaxmbd sweep``'s path over :data:`HS` x ``tp`` of the lift without
    phases (``loaded``), the hook load against the crane's 300 kN; the cells it ran."""
    from jaxmbd.sweep import SweepSettings, run_sweep

    settings = SweepSettings(hs=list(HS), tp=list(tp), limits={"hoist/tension": 3.0e5}, duration=duration,
                             n_realisations=n_realisations, save_dt=loaded.save_dt, integrator=loaded.integrator,
                             seed=seed, statistic="mpm")
    with tempfile.TemporaryDirectory() as d:
        run_sweep(loaded.system, start, settings, d)
    return len(HS) * len(tp)


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=1, full=3, options=("--gpu",))
    if got_args is None:
        return
    args, n = got_args
    import jax

    if args.gpu:
        return _gpu()

    got = {c: [] for c in CASES}
    for _ in range(n):
        for c in CASES:
            got[c].append(spawn_child("benchmarks.operability", c))
    op, sw = got["operability"], got["sweep"]
    rate = {c: [r["realisations"] / r["seconds"] for r in got[c]] for c in CASES}
    lines = [
        "## An operability study end to end (`python -m benchmarks.operability`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes (min-max), the cases' processes in turn, no compilation cache, compile included.",
        "",
        f"`{FILE}`: a 20 t module on 8 m of rope under a fixed crane on a 380 t barge; {op[0]['duration']:.0f} s a realisation, "
        "RK4 at 0.04 s.  The study: the limiting Hs of its one phase at 2 headings x 5 peak periods (a root search in Hs "
        "each, common random numbers), alpha, and the weather windows of the packaged year (8,740 hours).  The sweep: "
        f"`jaxmbd sweep`'s path over {len(HS)} Hs x 5 Tp cells of the same realisations.",
        "",
        "| job | runs | realisations | seconds | realisations / s |",
        "|---|---|---|---|---|",
        f"| operability study | {statistics.median([r['runs'] for r in op]):.0f} | "
        f"{statistics.median([r['realisations'] for r in op]):.0f} | {spread([r['seconds'] for r in op])} | {spread(rate['operability'])} |",
        f"| plain sweep | {sw[0]['runs']} | {sw[0]['realisations']} | {spread([r['seconds'] for r in sw])} | {spread(rate['sweep'])} |",
        "",
        f"The study's {statistics.median([r['runs'] for r in op]):.0f} runs (about "
        f"{statistics.median([r['runs'] for r in op]) / op[0]['cells']:.1f} a heading and period, shared by the phases) "
        "answer the limit to 0.05 m where a grid would need one run per 0.05 m.  Both are one compiled program reused "
        "for every sea state; the runs are sequential per cell (each batches its realisations).",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "operability.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


def _gpu():
    """One process per case on the accelerator and on the same machine's CPU (``JAX_PLATFORMS=cpu``), in turn."""
    import jax

    rows = []
    for platform_ in ("gpu", "cpu"):
        if platform_ == "cpu":
            os.environ["JAX_PLATFORMS"] = "cpu"  # the children inherit it
        for c in (GPU_CASES if platform_ == "gpu" else CASES):
            r = spawn_child("benchmarks.operability", c)
            rows.append((platform_, c, r))
            print(platform_, c, r, flush=True)
    dev = next(r["device"] for p, _, r in rows if p == "gpu")
    label = {"together": "study, cells in lock-step (10 a program)", "operability": "study, cells one at a time",
             "sweep": "plain sweep (6 Hs x 5 Tp)"}
    lines = [
        "",
        "## An operability study end to end on the accelerator (`python -m benchmarks.operability --gpu`)",
        "",
        f"{date.today().isoformat()}, {dev}, jax {jax.__version__}; one process per case, compile included, no compilation "
        f"cache; the CPU rows on the same machine's {os.cpu_count()} cores (`JAX_PLATFORMS=cpu`) in the same call.",
        "",
        f"`{FILE}` (BENCHMARKS.md: a 20 t module on 8 m of rope on a 380 t barge, 200 s a realisation, RK4 at 0.04 s): "
        "the limiting Hs of its one phase at 2 headings x 5 peak periods (8 realisations a run), alpha and the "
        "weather windows of the packaged year; the sweep `jaxmbd sweep`'s path over the same realisations.",
        "",
        "| device | job | runs | realisations | simulated (padding included) | seconds | realisations / s |",
        "|---|---|---|---|---|---|---|",
    ]
    for p, c, r in rows:
        runs = f"{r['runs']} in {r['programs']} programs" if r["programs"] else str(r["runs"])
        lines.append(f"| {p.upper()} | {label[c]} | {runs} | {r['realisations']} | {r['simulated']} | {r['seconds']:.1f} | "
                     f"{r['realisations'] / r['seconds']:.2f} |")
    text = "\n".join(lines) + "\n"
    out = Path(ROOT) / "BENCHMARKS_gpu.md"
    out.write_text(out.read_text().rstrip() + "\n" + text if out.exists() else text)
    print(text)


if __name__ == "__main__":
    main()
