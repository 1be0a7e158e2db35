"""Non-linear hydrostatics against the linear element: cost per evaluation and end to end.

    python -m benchmarks.hydrostatics            # 5 processes per figure; writes benchmarks/results/hydrostatics.md
    python -m benchmarks.hydrostatics --quick    # 2 processes, shorter runs (a check of the command)

Per evaluation: the right-hand side of the packaged test barge (20 x 10 x 2 m, free, radiation memory
on) with the linear hydrodynamic element, and with non-linear hydrostatics on a closed box hull of
about 500 and 2,000 panels (still water), and with the non-linear Froude-Krylov force too in a
100-component sea; each a jitted function timed in its own process.  End to end: one 600 s
realisation of the floating crane (Ham et al. 2009, the demo's system, JONSWAP Hs 2.5 m, Tp 9 s, RK4
at 0.05 s) with linear and with non-linear hydrostatics (box hull 110 x 46 x 9 m: one rectangle per face,
exact for a box in still water, and 5 m panels as a general hull would need): the
wall time of `simulate` in a fresh process, compilation included, and of a second call (compiled).
Every figure is the median over the processes, with their spread (min-max); the processes of the
cases run in turn, so a drift of the machine's speed reaches every case alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import date

from .report import RESULTS, assemble
from .timing import processor

CASES_RHS = ("linear", "nonlinear-500", "nonlinear-2000", "nonlinear-fk-2000")
CASES_E2E = ("linear", "nonlinear-faces", "nonlinear-5m")


def _barge_rhs(case: str) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxmbd as mbd
    from jaxmbd.hydro import JONSWAP, HydroBody, SeaState, read_capytaine, test_barge_path
    from jaxmbd.hydro.hull import box_hull
    from jaxmbd.simulation import initial_state

    from .timing import time_call

    hd = read_capytaine(test_barge_path())
    m = 1025.0 * 400.0
    b = mbd.ModelBuilder(source="barge")
    b.add_body("barge", body=mbd.Body(m, (0, 0, 0), np.diag([m * 3.5**2, m * 5.0**2, m * 5.2**2])), joint=mbd.Free())
    model = b.build()
    kw = {}
    if case != "linear":
        panels = int(case.rsplit("-", 1)[1])
        size = {500: 1.55, 2000: 0.77}[panels]  # panel size giving about that many triangles on 20 x 10 x 4 m
        kw = dict(hulls=(box_hull(20.0, 10.0, 4.0, 2.0, panel_size=size),), hydrostatics="nonlinear",
                  froude_krylov="nonlinear" if "fk" in case else "linear")
    hb = HydroBody.create(model, hd, bodies=("barge",), **kw)
    sea = SeaState(spectrum=JONSWAP(1.0, 7.0), n_frequencies=100)
    system = mbd.System(model, (hb,), waves=sea)
    waves = sea.realise(jax.random.key(0))
    inputs = system.inputs(waves)
    y = initial_state(system)
    q = y[0].at[2].set(0.1).at[3:7].set(jnp.array([np.cos(0.05), np.sin(0.05), 0.0, 0.0]))
    y = (q, y[1], y[2])
    f = jax.jit(lambda t, y: system.rhs(t, y, inputs))
    timing = time_call(f, 12.3, y)
    return {"case": case, "seconds": timing.median, "panels": hb.hulls[0].n_panels if hb.hulls else 0}


def _crane_e2e(case: str, duration: float) -> dict:
    import jax

    from jaxmbd.examples import floating_crane
    from jaxmbd.hydro import JONSWAP, SeaState
    from jaxmbd.simulation import Integrator, simulate, static_equilibrium

    sea = SeaState(spectrum=JONSWAP(2.5, 9.0), n_frequencies=100)
    if case == "linear":
        system, guess = floating_crane(waves=sea)
    else:  # one rectangle per face (exact for a box in still water), or 5 m panels as a general hull would need
        system, guess = floating_crane(waves=sea, hydrostatics="nonlinear", hull_panel_size=None if case.endswith("faces") else 5.0)
    q0 = static_equilibrium(system, guess)
    integ = Integrator("rk4", dt=0.05)
    out = {}
    for label in ("first", "second"):
        t0 = time.perf_counter()
        res = simulate(system, duration, save_dt=0.5, integrator=integ, q0=q0, key=jax.random.key(1), n_realisations=1)
        jax.block_until_ready(res.outputs["hoist1/tension"])
        out[label] = time.perf_counter() - t0
    out["max_hook_t"] = float((res.outputs["hoist1/tension"] + res.outputs["hoist2/tension"]).max()) / 9.81e3
    hulls = system.forces[0].hulls
    return {"case": case, "panels": hulls[0].n_panels if hulls else 0, **out}


def _child(kind: str, case: str, duration: float) -> None:
    result = _barge_rhs(case) if kind == "rhs" else _crane_e2e(case, duration)
    print("RESULT " + json.dumps(result))


def _spawn(kind, case, duration):
    cmd = [sys.executable, "-m", "benchmarks.hydrostatics", "--child", kind, case, "--duration", str(duration)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])


def _spread(xs, scale=1.0, fmt="{:.3g}"):
    xs = [x * scale for x in xs]
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--child", nargs=2, metavar=("KIND", "CASE"))
    args = ap.parse_args(argv)
    duration = args.duration or (60.0 if args.quick else 600.0)
    if args.child:
        _child(*args.child, duration)
        return
    n = args.processes or (2 if args.quick else 5)
    rhs = {c: [] for c in CASES_RHS}
    e2e = {c: [] for c in CASES_E2E}
    for _ in range(n):  # the cases in turn, so that the machine's drift reaches each alike
        for c in CASES_RHS:
            rhs[c].append(_spawn("rhs", c, duration))
        for c in CASES_E2E:
            e2e[c].append(_spawn("e2e", c, duration))
    import jax

    lines = [
        "## Non-linear hydrostatics (`python -m benchmarks.hydrostatics`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {_cores()} cores, jax {jax.__version__}; "
        f"median over {n} processes (min-max), the cases' processes in turn.",
        "",
        "Right-hand side of the free test barge (20 x 10 x 2 m, radiation memory: 55 states), one evaluation, jitted:",
        "",
        "| hydrostatics | panels | µs per evaluation | over linear |",
        "|---|---|---|---|",
    ]
    base = statistics.median(r["seconds"] for r in rhs["linear"])
    for c in CASES_RHS:
        secs = [r["seconds"] for r in rhs[c]]
        label = {"linear": "linear (restoring matrix)", "nonlinear-500": "non-linear, still water",
                 "nonlinear-2000": "non-linear, still water", "nonlinear-fk-2000": "non-linear + Froude-Krylov, 100 wave components"}[c]
        lines.append(f"| {label} | {rhs[c][0]['panels'] or '-'} | {_spread(secs, 1e6)} | {statistics.median(secs) / base:.1f}x |")
    lines += ["", f"Floating crane (Ham et al. 2009), one realisation of {duration:g} s, JONSWAP Hs 2.5 m Tp 9 s, RK4 at 0.05 s, "
              "wall time of `simulate` (s):", "",
              "| hydrostatics | fresh process (compile included) | compiled | over linear (fresh / compiled) | largest hook load (t) |",
              "|---|---|---|---|---|"]
    f0 = statistics.median(r["first"] for r in e2e["linear"])
    s0 = statistics.median(r["second"] for r in e2e["linear"])
    for c in CASES_E2E:
        first, second = [r["first"] for r in e2e[c]], [r["second"] for r in e2e[c]]
        lines.append(f"| {c.split('-')[0]}" + (f", box hull of {e2e[c][0]['panels']} panels" if e2e[c][0]["panels"] else ""))
        lines[-1] += (f" | {_spread(first)} | {_spread(second)} | {statistics.median(first) / f0:.2f}x / "
                      f"{statistics.median(second) / s0:.2f}x | {e2e[c][0]['max_hook_t']:.1f} |")
    lines += ["", "The issue's target: at most 3x the linear end-to-end time on this CPU."]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        (RESULTS / "hydrostatics.md").write_text(text)
        assemble()


def _cores():
    import os

    return os.cpu_count()


if __name__ == "__main__":
    main()
