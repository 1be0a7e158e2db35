"""The static equilibrium's first solve (trace, compile, Newton iterations) by central differences against
the same Newton iteration with forward-mode derivatives, its reference (``exact=True``), on the studies'
files whose run starts from it.  The first solve is what every ``jaxmbd run``, sweep and scenario of a
new system pays once; it is dominated by compiling the Newton step's program.

    python -m benchmarks.equilibrium            # 5 processes; writes benchmarks/results/equilibrium.md, BENCHMARKS.md
    python -m benchmarks.equilibrium --quick    # 2 processes

Each figure is the median over processes (one fresh process per case and round, the cases in turn, no
persistent compilation cache); the spread is the range over processes.  XLA's default options (the
tests turn the backend's optimisations off, which the commands do not).
"""

from __future__ import annotations

import os
import statistics
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

FILES = {"floating_crane": "studies/floating_crane/system.toml", "tuning_barge": "studies/tuning/barge_cargo.toml"}
CASES = tuple(f"{name}:{how}" for name in FILES for how in ("differences", "exact"))


def _case(case: str) -> dict:
    import time

    import jax
    import numpy as np

    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    jax.config.update("jax_enable_compilation_cache", False)
    import jaxmbd
    from jaxmbd.simulation import static_equilibrium

    name, how = case.split(":")
    loaded = jaxmbd.load_system(Path(ROOT) / FILES[name])
    t = time.perf_counter()
    q = static_equilibrium(loaded.system, loaded.q0, exact=how == "exact")
    jax.block_until_ready(q)
    return {"seconds": time.perf_counter() - t, "q": np.asarray(q).tolist()}


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=2, full=5)
    if got_args is None:
        return
    args, n = got_args
    import jax
    import numpy as np

    secs, qs = {c: [] for c in CASES}, {}
    for _ in range(n):
        for c in CASES:
            r = spawn_child("benchmarks.equilibrium", c)
            secs[c].append(r["seconds"])
            qs[c] = np.asarray(r["q"])
    lines = [
        "## Static equilibrium, the first solve (`python -m benchmarks.equilibrium`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes (min-max), the cases' processes in turn, no compilation cache.",
        "",
        "The Newton step's Jacobian by central differences from one batched residual (what `static_equilibrium` "
        "does for systems smooth at rest) against forward mode (`exact=True`, the reference, which a hull with "
        "non-linear hydrostatics keeps); seconds for the first solve of a file's start, compile included:",
        "",
        "| system | differences (s) | forward mode (s) | ratio | equilibria apart (m, rad) |",
        "|---|---|---|---|---|",
    ]
    for name in FILES:
        d, e = f"{name}:differences", f"{name}:exact"
        apart = float(np.max(np.abs(qs[d] - qs[e])))
        lines.append(f"| `{FILES[name]}` | {spread(secs[d])} | {spread(secs[e])} | "
                     f"{statistics.median(secs[d]) / statistics.median(secs[e]):.2f}x | {apart:.1e} |")
    lines += ["", "Below 1x the differences are faster.  The programs' run time is milliseconds; the rest is tracing and "
              "compiling one residual (2n + 1 evaluations batched) against the residual and its forward-mode tangent."]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "equilibrium.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


if __name__ == "__main__":
    main()
