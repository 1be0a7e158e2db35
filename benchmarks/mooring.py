"""Mooring lines per evaluation.

Quasi-static: jaxmbd's catenary solve (Newton with its bisection start) in a vmapped batch and in a
sequential scan, beside MoorPy's catenary called from Python, on the same line and fairlead positions.

Dynamic: a 20-segment lumped-mass chain with its fairlead moved in surge and heave, RK4 at 2 ms: an
integration step of jaxmbd's ``lumped_line`` in a compiled scan, alone and 64 lines vmapped, beside
MoorDyn 2 (C++, the same step and scheme, stepped from Python every 10 ms).

    python -m benchmarks.mooring            # 5 processes; writes benchmarks/results/mooring.md, BENCHMARKS.md
    python -m benchmarks.mooring --quick    # 2 processes

Each figure is the median over processes (one fresh process per case and round, the cases in turn) of
that process's median over repeated calls; the spread is the range over processes.
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import date

from .report import RESULTS, assemble
from .timing import processes_or_child, processor, spawn_child, spread

CASES = ("jaxmbd-vmap", "jaxmbd-scan", "moorpy")
LUMPED_CASES = ("lumped-scan", "lumped-vmap", "moordyn")
LUMPED_DT, LUMPED_STEPS, LUMPED_BATCH = 0.002, 5000, 64
MOORDYN_FILE = """--------------------- MoorDyn Input File ------------------------------------
benchmark chain
----------------------- LINE TYPES ------------------------------------------
TypeName   Diam    Mass/m     EA         BA/-zeta    EI         Cd     Ca     CdAx    CaAx
(name)     (m)     (kg/m)     (N)        (N-s/-)     (N-m^2)    (-)    (-)    (-)     (-)
chain      0.1     150.0      6.0E8      5.0E6       0          1.2    1.0    0.008   0.0
---------------------- POINT PROPERTIES --------------------------------
ID    Type      X       Y       Z       Mass   Volume  CdA    Ca
(#)   (-)       (m)     (m)     (m)     (kg)   (m^3)   (m^2)  (-)
1     Fixed     -400.0  0.0     -100.0  0      0       0      0
2     Vessel    0.0     0.0     -5.0    0      0       0      0
---------------------- LINES ----------------------------------------
ID   LineType   AttachA  AttachB  UnstrLen  NumSegs  LineOutputs
(#)   (name)     (#)      (#)       (m)       (-)     (-)
1     chain      1        2         420.0     20      -
---------------------- OPTIONS -----------------------------------------
0             writeLog
0.002         dtM
RK4           tScheme
3.0e6         kBot
3.0e5         cBot
1025.0        WtrDnsty
100           WtrDpth
9.81          g
1             disableOutTime
------------------------- need this line --------------------------------------
"""


def _fairlead(t, xp):
    w = 2 * xp.pi / 8.0
    s, c = xp.sin(w * t), xp.cos(w * t)
    return (4.0 * s, 0.0, -5.0 + s), (4.0 * w * c, 0.0, w * c)


def _lumped_case(case: str) -> dict:
    """Seconds per RK4 step of one line."""
    if case == "moordyn":
        import tempfile

        import moordyn
        import numpy as np

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "line.txt")
            with open(path, "w") as f:
                f.write(MOORDYN_FILE)
            system = moordyn.Create(path)
            x, v = _fairlead(0.0, np)
            moordyn.Init(system, list(x), list(v))
            times, t = [], 0.0
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(100):  # 1 s in 10 ms calls, 5 steps each
                    x, v = _fairlead(t, np)
                    moordyn.Step(system, list(x), list(v), t, 0.01)
                    t += 0.01
                times.append((time.perf_counter() - t0) / 500)
            moordyn.Close(system)
        return {"case": case, "seconds": statistics.median(times)}
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxmbd as mbd
    from jaxmbd.forces.lumped import LumpedLine
    from jaxmbd.model import Body, ModelBuilder
    from jaxmbd.system import System

    from .timing import time_call

    b = ModelBuilder()
    b.add_body("vessel", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    model = b.build()

    def make(EA):
        return LumpedLine(name="line", body="vessel", segments=20, fairlead=jnp.zeros(3), anchor=jnp.asarray([-400.0, 0.0, -100.0]),
                          length=jnp.asarray(420.0), diameter=jnp.asarray(0.1), mass_per_length=jnp.asarray(150.0), EA=EA,
                          damping=jnp.asarray(5.0e6), Cd_normal=jnp.asarray(1.2), Cd_axial=jnp.asarray(0.008),
                          Ca_normal=jnp.asarray(1.0), Ca_axial=jnp.asarray(0.0))

    def run(EA):
        line = make(EA)
        system = System(model, (line,))

        def qv(t):
            (x, y, z), (u, _, w) = _fairlead(t, jnp)
            return jnp.stack([x, 0.0 * x, z, 1.0 + 0 * x, 0 * x, 0 * x, 0 * x]), jnp.stack([u, 0 * u, w, 0 * u, 0 * u, 0 * u])

        def f(t, zz):
            return line.contribution(system.context(t, *qv(t)), zz).zdot

        def step(zz, k):
            t, dt = k * LUMPED_DT, LUMPED_DT
            k1 = f(t, zz)
            k2 = f(t + dt / 2, zz + dt / 2 * k1)
            k3 = f(t + dt / 2, zz + dt / 2 * k2)
            k4 = f(t + dt, zz + dt * k3)
            return zz + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None

        z0 = line.initial_state(model, *qv(0.0))
        return jax.lax.scan(step, z0, jnp.arange(LUMPED_STEPS))[0]

    if case == "lumped-scan":
        fn, arg, lines = jax.jit(run), jnp.asarray(6.0e8), 1
    else:
        fn, arg, lines = jax.jit(jax.vmap(run)), jnp.linspace(5.0e8, 7.0e8, LUMPED_BATCH), LUMPED_BATCH
    return {"case": case, "seconds": time_call(fn, arg, repeats=5, number=1).median / (LUMPED_STEPS * lines)}
N = 1000  # fairlead positions of one line: 100 m deep, 600 m, lying on the seabed to nearly lifted off
Z, L, EA, W = 100.0, 600.0, 1.5e9, 1000.0


def _positions():
    import numpy as np

    return np.linspace(505.0, 575.0, N)


def _case(case: str) -> dict:
    if case in LUMPED_CASES:
        return _lumped_case(case)
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
    got_args = processes_or_child(argv, _case, quick=2, full=5)
    if got_args is None:
        return
    args, n = got_args
    us = {c: [] for c in CASES + LUMPED_CASES}
    for _ in range(n):
        for c in CASES + LUMPED_CASES:
            us[c].append(spawn_child("benchmarks.mooring", c)["seconds"] * 1e6)
    from importlib.metadata import version

    import jax

    peer = statistics.median(us["moorpy"])
    lines = [
        "## Catenary mooring line per evaluation (`python -m benchmarks.mooring`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}, MoorPy {version('moorpy')}, MoorDyn {version('moordyn')}; median over {n} processes (min-max), "
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
    lines.append("jaxmbd's figure includes the bisection start (60 halvings), Newton's steps to 1e-12 and the "
                 "Levenberg-Marquardt finish that makes nearly taut lines converge (1.79 and 7.68 µs without it, "
                 "the run before); MoorPy's, its "
                 "Newton iteration and the Python call.  Inside a simulation the line is one more element of the "
                 "compiled right-hand side.")
    md = statistics.median(us["moordyn"])
    lines += [
        "",
        f"A lumped-mass chain (420 m, 20 segments, the MoorDyn comparison of `tests/test_lumped_line.py`) with its "
        f"fairlead moved in surge and heave, RK4 at {LUMPED_DT * 1e3:g} ms, {LUMPED_STEPS} steps:",
        "",
        "| case | µs per line and RK4 step | against MoorDyn |",
        "|---|---|---|",
        f"| jaxmbd `lumped_line`, one line in a compiled scan | {spread(us['lumped-scan'])} | "
        f"{md / statistics.median(us['lumped-scan']):.2g}x |",
        f"| jaxmbd, {LUMPED_BATCH} lines vmapped (per line) | {spread(us['lumped-vmap'])} | "
        f"{md / statistics.median(us['lumped-vmap']):.2g}x |",
        f"| MoorDyn 2 (C++), stepped from Python every 10 ms | {spread(us['moordyn'])} | 1 |",
        "",
        "Above 1x jaxmbd is faster.  MoorDyn's figure includes its Python call every five steps; jaxmbd's, the "
        "fairlead's prescribed motion.  In a simulation the line's step is part of the system's step.",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mooring.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
