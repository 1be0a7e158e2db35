"""The first result from an empty compilation cache, two checkouts back to back: ``jaxmbd demo`` and the subsea
installation study's run (``studies/subsea_installation/run.py --smoke``: the six-phase operation, one realisation).

    python -m benchmarks.cold_start --base DIR [--processes 3]

``DIR``: another checkout (e.g. ``git worktree add /tmp/base <commit>``).  Each process runs the job with its own
checkout first on ``sys.path``, in an empty temporary folder, with JAX's persistent compilation cache in a new empty
folder (every program cached, whatever its compile time): the first run is cold (everything traced and compiled),
the second, on the same cache, warm (traced, its programs read from the disk).  Cold less warm is the compile the
cache saves.  The codes and jobs are taken in turn, so both codes see the same machine; medians over the processes
with their range.  Writes ``benchmarks/results/cold_start.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from .report import RESULTS, assemble
from .timing import processor, spread

ROOT = Path(__file__).resolve().parents[1]
JOBS = {
    "demo": "import sys; sys.path.insert(0, {root!r}); from jaxmbd.cli import main; sys.exit(main(['demo']))",
    "installation": ("import sys, runpy; sys.path.insert(0, {root!r}); sys.argv = ['run.py', '--smoke']; "
                     "runpy.run_path({root!r} + '/studies/subsea_installation/run.py', run_name='__main__')"),
}


def _wall(code: Path, job: str, cache: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAXMBD_CACHE"))}
    env.update(JAX_COMPILATION_CACHE_DIR=cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
               JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1", MPLBACKEND="Agg", PYTHONPATH=str(code))
    with tempfile.TemporaryDirectory() as cwd:
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", JOBS[job].format(root=str(code))], cwd=cwd, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{job} in {code} failed:\n{done.stderr[-3000:]}")
    return wall


def _commit(code: Path) -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True).stdout.strip()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, type=Path, help="the other checkout")
    ap.add_argument("--processes", type=int, default=3)
    args = ap.parse_args(argv)
    codes = {"base": args.base.resolve(), "this": ROOT}
    got = {(c, j, k): [] for c in codes for j in JOBS for k in ("cold", "warm")}
    for r in range(args.processes):
        for job in JOBS:
            for c, code in codes.items():
                with tempfile.TemporaryDirectory() as cache:
                    cold = _wall(code, job, cache)
                    warm = _wall(code, job, cache)
                got[c, job, "cold"].append(cold)
                got[c, job, "warm"].append(warm)
                print(f"round {r + 1}: {job} {c} cold {cold:.1f} s, warm {warm:.1f} s", flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    lines = [
        "## The first result from an empty compilation cache (`python -m benchmarks.cold_start --base DIR`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores; base {_commit(codes['base'])}, "
        f"this {_commit(ROOT)}; median over {args.processes} processes per code and job (min-max), taken in turn.",
        "",
        "Wall time of the whole command in a fresh process (imports, the static equilibrium, tracing, compiling, "
        "running, writing): cold with an empty compilation cache, warm on the cache the cold run filled; their "
        "difference is the compile the cache saves.",
        "",
        "| job | code | cold (s) | warm (s) | cold less warm (s) | cold against the base's |",
        "|---|---|---|---|---|---|",
    ]
    for job in JOBS:
        for c in codes:
            diff = [a - b for a, b in zip(got[c, job, "cold"], got[c, job, "warm"], strict=True)]
            ratio = med[c, job, "cold"] / med["base", job, "cold"]
            lines.append(f"| {job} | {c} ({_commit(codes[c])}) | {spread(got[c, job, 'cold'])} | {spread(got[c, job, 'warm'])} | "
                         f"{spread(diff)} | {ratio:.2f}x |")
    lines += ["", "`demo`: `jaxmbd demo` (the floating crane, 16 realisations of 600 s, its tables and plots).  `installation`: "
              "`python studies/subsea_installation/run.py --smoke` (build, the static equilibrium on deck, the six phases "
              "of one realisation, 30 wave components)."]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cold_start.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
