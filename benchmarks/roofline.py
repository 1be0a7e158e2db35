"""How far one right-hand side is from this machine's limit: its floating-point operations and bytes
(XLA's cost analysis of the compiled program), the rate they run at in a scan, in a vmapped batch and in a
whole run, against the machine's measured peak (a large double-precision matrix product, one core and
both) and its memory bandwidth (a large copy).

    python -m benchmarks.roofline            # 3 processes; writes benchmarks/results/roofline.md, BENCHMARKS.md
    python -m benchmarks.roofline --quick    # 1 process

Systems: the crane vessel (``studies/crane_vessel_mc``, MC on, location I), the floating crane (the demo's
system) and the subsea installation (``studies/subsea_installation``), each in its irregular sea with the
excitation tabulated as a fixed-step run tabulates it.  "scan": right-hand sides in one loop, each on the
state the last one moved (none hoisted), the loop run for 200 and for 1,000 of them and the difference per right-hand
side, so that the call's own fixed cost cancels (``benchmarks.timing.rhs_seconds``); "batch": 200 over 256 states at
once (a ``vmap`` of a ``lax.scan``: one call of 51,200 right-hand sides);
"run": ``simulate``'s 600 s with RK4 (16 realisations), its time over 4 right-hand sides a step.  The flops
of a batch are 256 times one's (XLA's count of the batched program, checked); those of a run are its right-
hand sides' (the integrator's own arithmetic is a few additions a state entry).  The peak is what NumPy's
BLAS reaches on a 2000 x 2000 product in a process of its own (its threads limited to one for the one-core figure),
not the processor's nominal figure.
"""

from __future__ import annotations

import os
import statistics
from datetime import date

from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

SYSTEMS = ("crane_vessel", "floating_crane", "installation")
BATCH = 256


def _machine() -> dict:
    import time

    import numpy as np

    a, b = np.random.default_rng(0).random((2, 2000, 2000))
    a @ b
    walls = []
    for _ in range(5):
        t = time.perf_counter()
        a @ b
        walls.append(time.perf_counter() - t)
    gflops = 2 * 2000**3 / statistics.median(walls) / 1e9

    x = np.ones(2**25)  # 256 MiB
    y = np.empty_like(x)
    walls = []
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(y, x)
        walls.append(time.perf_counter() - t)
    return {"peak": gflops, "bandwidth": 2 * x.nbytes / statistics.median(walls) / 1e9}


class _one_thread:
    """The BLAS of a child process limited to one thread (its environment, read when NumPy loads)."""

    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

    def __enter__(self):
        self.old = {k: os.environ.get(k) for k in self.names}
        os.environ.update({k: "1" for k in self.names})

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _system(name):
    import sys

    import jax

    import jaxmbd as mbd
    import jaxmbd.examples
    from jaxmbd import Integrator, static_equilibrium

    sys.path.insert(0, str(ROOT))
    if name == "crane_vessel":
        from studies.crane_vessel_mc.system import build

        system, q0 = build("on", "I")
        dt = 0.1
    elif name == "floating_crane":
        system, guess = mbd.examples.floating_crane(waves=mbd.hydro.SeaState(
            spectrum=mbd.hydro.JONSWAP(2.5, 9.0), n_frequencies=80, omega_min=0.2, omega_max=1.8))
        q0, dt = static_equilibrium(system, guess), 0.05
    else:
        from studies.subsea_installation.system import build

        system, q0 = build()
        dt = 0.02
    return system, q0, Integrator("rk4", dt=dt), jax.random.key(2024)


def _case(name: str) -> dict:
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np

    if name == "machine":
        return _machine()
    from jaxmbd.simulation import initial_state, simulate
    from jaxmbd.system import Inputs

    from .timing import rhs_seconds

    system, q0, integrator, key = _system(name)
    y0 = initial_state(system, q0)
    waves = system.waves.realise(key)
    forcing = system.inputs(waves)
    n, n_long = 200, 1000
    forcing = Inputs(waves, system.tabulate(forcing.prepared, 0.0, 0.5 * integrator.dt, 2 * n_long), None)

    def scan(y):
        def step(y, t):
            dy = system.rhs(t, y, forcing)
            return jax.tree_util.tree_map(lambda a, d: a + 1e-9 * d, y, dy), None

        return jax.lax.scan(step, y, 0.5 * integrator.dt * jnp.arange(n))[0]

    ys = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (BATCH,) + a.shape), y0)
    one = jax.jit(lambda t, y: system.rhs(t, y, forcing)).lower(0.0, y0).compile()
    many = jax.jit(jax.vmap(lambda y: system.rhs(0.0, y, forcing))).lower(ys).compile()
    cost, cost_many = one.cost_analysis(), many.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    cost_many = cost_many[0] if isinstance(cost_many, list) else cost_many
    batch_j = jax.jit(jax.vmap(scan))

    def median_time(f, x, reps=5):
        jax.block_until_ready(f(x))
        walls = []
        for _ in range(reps):
            t = time.perf_counter()
            jax.block_until_ready(f(x))
            walls.append(time.perf_counter() - t)
        return statistics.median(walls)

    # the scan's figure without the call's own fixed cost (benchmarks/NOTES.md, "The call's fixed cost"): one loop
    # run for n and n_long evaluations on the table's grid, the difference per evaluation
    t_scan = rhs_seconds(system, y0, forcing, n=n, n_long=n_long, h=0.5 * integrator.dt)
    t_batch = median_time(batch_j, ys, reps=3) / (n * BATCH)
    kw = dict(save_dt=0.5, integrator=integrator, q0=q0, key=key, n_realisations=16)
    simulate(system, 600.0, **kw)
    walls = []
    for _ in range(3):
        t = time.perf_counter()
        simulate(system, 600.0, **kw)
        walls.append(time.perf_counter() - t)
    steps = 600.0 / integrator.dt
    t_run = statistics.median(walls) / (16 * steps * 4)
    return {"flops": float(cost.get("flops", np.nan)), "bytes": float(cost.get("bytes accessed", np.nan)),
            "transcendentals": float(cost.get("transcendentals", 0.0)), "flops_batch": float(cost_many.get("flops", np.nan)),
            "scan": t_scan, "batch": t_batch, "run": t_run, "dt": integrator.dt, "nq": int(system.model.nq)}


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=1, full=3)
    if got_args is None:
        return
    args, n = got_args
    import jax

    got = {c: [] for c in ("machine",) + SYSTEMS}
    one_core = []
    for _ in range(n):
        for c in got:
            got[c].append(spawn_child("benchmarks.roofline", c))
        with _one_thread():
            one_core.append(spawn_child("benchmarks.roofline", "machine")["peak"])
    m = got["machine"]
    peak1 = statistics.median(one_core)
    lines = [
        "## The right-hand side against this machine's limit (`python -m benchmarks.roofline`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes (min-max).",
        "",
        f"The machine, measured: a 2000 x 2000 double-precision product reaches {spread(one_core)} GFLOP/s on one core (BLAS "
        f"limited to one thread) and {spread([r['peak'] for r in m])} on all; a 256 MiB copy moves "
        f"{spread([r['bandwidth'] for r in m])} GB/s.",
        "",
        "| system | flops / RHS (XLA) | transcendentals / RHS | bytes / RHS | flop/byte | scan: µs / RHS | GFLOP/s (% of one "
        "core's peak) | batch of 256: µs / RHS | GFLOP/s (%) | 600 s run, 16 realisations: µs / RHS | GFLOP/s (%) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in SYSTEMS:
        rs = got[name]
        f, b = rs[0]["flops"], rs[0]["bytes"]
        row = [name, f"{f:,.0f}", f"{rs[0]['transcendentals']:,.0f}", f"{b:,.0f}", f"{f / b:.2f}"]
        for key in ("scan", "batch", "run"):
            us = [r[key] * 1e6 for r in rs]
            rate = [f / (r[key] * 1e9) for r in rs]
            row += [spread(us), f"{statistics.median(rate):.2f} ({100 * statistics.median(rate) / peak1:.1f} %)"]
        lines.append("| " + " | ".join(row) + " |")
    ratio = [got[s][0]["flops_batch"] / (BATCH * got[s][0]["flops"]) for s in SYSTEMS]
    lines += [
        "",
        f"XLA's count of the batched program over 256 times one's: {', '.join(f'{x:.3f}' for x in ratio)}.  One right-hand "
        "side is a chain of hundreds of small operations (3x3 and 6x6 products, a few per body and element): its arithmetic "
        "intensity is low and its time is the chain's latency and the loop's overhead, not arithmetic; a batch gives each "
        "operation 256 independent lanes, which is where the rate rises towards the peak (a program runs on one "
        "runtime thread, jaxmbd's default unless PJRT_NPROC is set, so the percentages are of one core's peak; with a pool "
        "of threads XLA may spread a batch and a run over both cores, against whose peak they halve).  XLA's bytes are every operation's "
        "operands and results, not memory traffic (one right-hand side's working set stays in the caches): by them the "
        "programs would sit under the copy's bandwidth roof (flop/byte x GB/s), which the batch exceeds, so the limit is "
        "neither the memory nor the arithmetic units but the number of small dependent operations.  The flops leave out the "
        f"transcendentals (the installation's Morison wave kinematics: {got['installation'][0]['transcendentals']:,.0f} a right-hand "
        "side, each some tens of operations), "
        "so its rate is understated.  These are the limits the other figures of this file are measured against.",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "roofline.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


if __name__ == "__main__":
    main()
