"""Realisations per second of Cibicik et al. (2019)'s crane vessel on one accelerator: batches up to 10^4, float32 and float64.

    python -m benchmarks.gpu            # 600 s per realisation, batches 1, 10, 100, 1000, 10000; writes BENCHMARKS_gpu.md
    python -m benchmarks.gpu --quick    # 10 s, batches 1 and 4: checks that the script runs (the CPU is fine)
    python -m benchmarks.gpu --sizes 1,100 --dtypes float32 --duration 120 --chunk 2500 --out table.md

System: ``studies/crane_vessel_mc`` (MC on, location I; 8 bodies, 13 DOF, 50
radiation states, 540 wave components), as in ``benchmarks/simulation.py``.
Each (dtype, batch size) calls ``jaxmbd.simulate`` (RK4 at 0.1 s, states and
outputs saved every ``--save-dt`` s, default 1 s) twice: the first call
compiles and runs, the second is the timed one.  Its wall time is what a user
waits for: the integration, the outputs at the saves, the copy of the results
to the host and the per-realisation finiteness checks.  Realisations per second
= batch size / wall time.  A batch larger than ``--chunk`` runs in chunks of
that size (one compiled program); a chunk that runs out of device memory is
halved and the batch retried, and the table gives the chunk that ran.

float32: the system's arrays cast to float32 (the BEM table to complex64) and
the runs made inside ``jax.enable_x64(False)``, so that every intermediate is
float32.  Its wave realisations differ from float64's for the same keys (the
random draws depend on the dtype); that does not matter for timing, and
``benchmarks/simulation.py`` reports the float32 error on the same realisations.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmbd
from jaxmbd.simulation import Integrator, simulate

from .numpy_crane_vessel import build_system
from .simulation import DT, cast
from .timing import processor

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1, 10, 100, 1000, 10000)


def _out_of_memory(e: Exception) -> bool:
    s = str(e)
    return "RESOURCE_EXHAUSTED" in s or "out of memory" in s.lower()


def device_info():
    d = jax.devices()[0]
    kind = getattr(d, "device_kind", str(d))
    try:
        backend = f"{d.platform} ({d.client.platform_version})"
    except Exception:  # noqa: BLE001
        backend = d.platform
    return kind, backend, len(jax.devices())


def run_batch(system, q0, *, duration, n, chunk, save_dt, dtype, key):
    """(first call s, wall s, chunk that ran) for ``n`` realisations of ``duration`` seconds."""
    ctx = jax.enable_x64(False) if dtype == "float32" else contextlib.nullcontext()
    with ctx:
        if dtype == "float32":
            system, q0 = cast(system), jnp.asarray(q0, jnp.float32)
        while True:
            c = min(chunk, n)
            kw = dict(save_dt=save_dt, integrator=Integrator("rk4", dt=DT), q0=q0, key=key, n_realisations=n,
                      chunk_size=c)
            try:
                t0 = time.perf_counter()
                res = simulate(system, duration, **kw)
                first = time.perf_counter() - t0
                del res
                t0 = time.perf_counter()
                res = simulate(system, duration, **kw)
                wall = time.perf_counter() - t0
                if res.q.dtype != np.dtype(dtype):
                    raise RuntimeError(f"expected {dtype} states, got {res.q.dtype}")
                return first, wall, c
            except Exception as e:  # noqa: BLE001
                if not _out_of_memory(e) or c == 1:
                    raise
                chunk = max(1, c // 2)
                print(f"  out of memory with chunks of {c}; retrying with {chunk}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 s, batches 1 and 4 (a check that the script runs)")
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds per realisation (600)")
    ap.add_argument("--sizes", default=None, help="comma-separated batch sizes (1,10,100,1000,10000)")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--chunk", type=int, default=10000, help="largest batch run as one program")
    ap.add_argument("--save-dt", type=float, default=1.0, help="seconds between saved states and outputs")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS_gpu.md"))
    args = ap.parse_args(argv)
    duration = args.duration or (10.0 if args.quick else 600.0)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else ((1, 4) if args.quick else SIZES)
    dtypes = tuple(args.dtypes.split(","))
    for d in dtypes:
        if d not in ("float32", "float64"):
            raise SystemExit(f"--dtypes: expected float32 and/or float64, got {d!r}")
    log = lambda s: print(s, flush=True)  # noqa: E731
    kind, backend, n_dev = device_info()
    log(f"device: {kind}, {backend}, {n_dev} device(s)")
    system, q0 = build_system("on", "I")
    rows = []
    for dtype in dtypes:
        for n in sizes:
            first, wall, c = run_batch(system, q0, duration=duration, n=n, chunk=args.chunk, save_dt=args.save_dt,
                                       dtype=dtype, key=jax.random.key(0))
            rows.append((dtype, n, c, first, wall))
            log(f"{dtype} batch {n} (chunks of {c}): first call {first:.1f} s, then {wall:.2f} s, "
                f"{n / wall:.3g} realisations/s")
            # the table so far, so that a run stopped at a time limit keeps the rows it measured
            write_table(args, argv, rows, duration, kind, backend, n_dev, complete=False)
    text = write_table(args, argv, rows, duration, kind, backend, n_dev, complete=True)
    log(text)
    return rows


def write_table(args, argv, rows, duration, kind, backend, n_dev, *, complete):
    try:
        import jaxlib

        jaxlib_v = jaxlib.__version__
    except Exception:  # noqa: BLE001
        jaxlib_v = "?"
    lines = [
        f"## Realisations per second: crane vessel (Cibicik et al. 2019), {duration:.0f} s each",
        "",
        f"Generated by `python -m benchmarks.gpu {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip()
        + f" on {datetime.datetime.now().isoformat(timespec='seconds')}.",
        "",
        f"- Device: {kind}, {backend}, {n_dev} device(s) visible (batches shard over all of them); host "
        f"{processor()}",
        f"- Versions: python {platform.python_version()}, jax {jax.__version__}, jaxlib {jaxlib_v}, "
        f"jaxmbd {jaxmbd.__version__}, numpy {np.__version__}",
        f"- Run: `simulate`, RK4 at {DT} s ({int(round(duration / DT))} steps), saves every {args.save_dt:g} s; "
        "first call = compile + run; wall = the second call (integration, outputs, copy to the host, checks); "
        "compile ≈ first call − wall",
        "",
        "| dtype | batch | chunk | first call (s) | compile ≈ (s) | wall (s) | realisations/s | simulated s per wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dtype, n, c, first, wall in rows:
        lines.append(f"| {dtype} | {n} | {c} | {first:.1f} | {max(first - wall, 0.0):.1f} | {wall:.2f} | "
                     f"{n / wall:.3g} | {n * duration / wall:.3g} |")
    if not complete:
        lines += ["", "(stopped before the last batch: the rows above are the ones measured)"]
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    return text


if __name__ == "__main__":
    main()
