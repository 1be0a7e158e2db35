"""Catenary mooring line per evaluation: jaxmbd's solve (Newton with its bisection start) in a vmapped
batch and in a sequential scan, beside MoorPy's catenary called from Python, on the same line and
fairlead positions.

    python -m benchmarks.mooring            # 5 processes; writes benchmarks/results/mooring.md, BENCHMARKS.md
    python -m benchmarks.mooring --quick    # 2 processes

Each figure is the median over processes (one fresh process per case and round, the cases in turn) of
that process's median over repeated calls; the spread is the range over processes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import date

from .report import RESULTS, assemble
from .timing import spawn_child, spread

CASES = ("jaxmbd-vmap", "jaxmbd-scan", "moorpy")
N = 1000  # fairlead positions of one line: 100 m deep, 600 m, lying on the seabed to nearly lifted off
Z, L, EA, W = 100.0, 600.0, 1.5e9, 1000.0


def _positions():
    import numpy as np

    return np.linspace(505.0, 575.0, N)


def _case(case: str) -> dict:
    X = _positions()
    if case == "moorpy":
        from moorpy.Catenary import catenary

        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            for x in X:
                catenary(float(x), Z, L, EA, W, Tol=1e-10, MaxIter=200)
            times.append((time.perf_counter() - t0) / N)
        return {"case": case, "seconds": statistics.median(times)}
    import jax
    import jax.numpy as jnp

    import jaxmbd  # noqa: F401  (float64)
    from jaxmbd.forces.catenary import solve_catenary

    from .timing import time_call

    def one(x):
        H, V, _ = solve_catenary(x, Z, L, EA, W)
        return H + V

    if case == "jaxmbd-vmap":
        fn = jax.jit(jax.vmap(one))
    else:  # a scan: one line at a time, each evaluation after the previous (a time-stepping loop)
        def fn(xs):
            def step(c, x):
                return c + one(x + 1e-12 * c), None

            return jax.lax.scan(step, 0.0, xs)[0]

        fn = jax.jit(fn)
    return {"case": case, "seconds": time_call(fn, jnp.asarray(X)).median / N}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument("--child", metavar="CASE")
    args = ap.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(_case(args.child)))
        return
    n = args.processes or (2 if args.quick else 5)
    us = {c: [] for c in CASES}
    for _ in range(n):
        for c in CASES:
            us[c].append(spawn_child("benchmarks.mooring", c)["seconds"] * 1e6)
    from importlib.metadata import version

    import jax

    peer = statistics.median(us["moorpy"])
    lines = [
        "## Catenary mooring line per evaluation (`python -m benchmarks.mooring`)",
        "",
        f"{date.today().isoformat()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}, MoorPy {version('moorpy')}; median over {n} processes (min-max), "
        "the cases' processes in turn.",
        "",
        f"One line (600 m, 100 m deep, EA 1.5 GN, 1 kN/m in water) at {N} fairlead positions from lying on the "
        "seabed to nearly lifted off; fairlead tensions to 1e-10:",
        "",
        "| case | µs per line evaluation | against MoorPy |",
        "|---|---|---|",
    ]
    labels = {"jaxmbd-vmap": f"jaxmbd, {N} positions in one vmapped call", "jaxmbd-scan": f"jaxmbd, {N} in a scan, one after another",
              "moorpy": "MoorPy `catenary` from Python, one call each"}
    for c in CASES:
        med = statistics.median(us[c])
        lines.append(f"| {labels[c]} | {spread(us[c])} | {peer / med:.0f}x faster |" if c != "moorpy"
                     else f"| {labels[c]} | {spread(us[c])} | 1 |")
    lines.append("")
    lines.append("jaxmbd's figure includes the bisection start (60 halvings) and Newton's steps to 1e-12; MoorPy's, its "
                 "Newton iteration and the Python call.  Inside a simulation the line is one more element of the "
                 "compiled right-hand side.")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mooring.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
