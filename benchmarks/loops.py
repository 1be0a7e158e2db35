"""Closed loops per evaluation: the four-bar linkage of ``tests/test_loops.py`` (ball-closed), its open
tree (the loop removed), and MuJoCo's ``mj_forward`` on the same linkage closed by an equality
``connect``, from Python and in a C-level loop (``mj_step`` rollout is not used: one forward pass is
the comparable unit).  Also the luffing-cylinder crane of ``jaxmbd.examples`` (a cylinder element).

    python -m benchmarks.loops            # 5 processes; writes benchmarks/results/loops.md, BENCHMARKS.md
    python -m benchmarks.loops --quick    # 2 processes

Each figure is the median over processes (one fresh process per case and round, the cases in turn) of
that process's median; the spread is the range over processes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from datetime import date

from .report import RESULTS, assemble
from .timing import spawn_child, spread

CASES = ("tree", "four_bar", "luffing_cylinder", "mujoco")
A, B, C, D = 1.0, 2.5, 1.5, 2.0
MASS = (2.0, 3.0, 1.5)


def _q0():
    import numpy as np
    from scipy.optimize import fsolve

    t1 = np.radians(30.0)

    def tip(q):
        t2, t3 = q
        return [A * np.cos(t1) + B * np.cos(t1 + t2) - (D + C * np.cos(t3)), -A * np.sin(t1) - B * np.sin(t1 + t2) + C * np.sin(t3)]

    return np.array([t1, *fsolve(tip, [-1.0, 1.6], xtol=1e-13)])


def _mjcf():
    """The four-bar in MJCF: hinges about y, rods along x with their inertias, gravity −z, the coupler's
    tip connected to the rocker's tip."""
    def body(name, pos, m, L, child=""):
        inertia = f"{1e-3 * m * L**2} {m * L**2 / 12} {m * L**2 / 12}"
        return (f'<body name="{name}" pos="{pos}"><joint name="{name}" type="hinge" axis="0 1 0"/>'
                f'<inertial pos="{L / 2} 0 0" mass="{m}" diaginertia="{inertia}"/>{child}</body>')

    coupler = body("coupler", f"{A} 0 0", MASS[1], B)
    tree = body("crank", "0 0 0", MASS[0], A, coupler) + body("rocker", f"{D} 0 0", MASS[2], C)
    return (f'<mujoco><option gravity="0 0 -9.81" timestep="0.001"/><worldbody>{tree}</worldbody>'
            f'<equality><connect body1="coupler" body2="rocker" anchor="{B} 0 0"/></equality></mujoco>')


def _case(case: str) -> dict:
    import numpy as np

    if case == "mujoco":
        import time

        import mujoco

        m = mujoco.MjModel.from_xml_string(_mjcf())
        d = mujoco.MjData(m)
        d.qpos[:] = _q0()
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(2000):
                mujoco.mj_forward(m, d)
            times.append((time.perf_counter() - t0) / 2000)
        return {"case": case, "seconds": statistics.median(times)}
    import jax.numpy as jnp

    import jaxmbd as mbd
    from jaxmbd.examples import luffing_crane
    from jaxmbd.loops import Loop
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.simulation import initial_state

    from .timing import rhs_seconds

    if case == "luffing_cylinder":
        system, q0 = luffing_crane()
    else:
        def rod(m, L):
            return Body(m, (L / 2, 0.0, 0.0), np.diag([1e-3 * m * L**2, m * L**2 / 12, m * L**2 / 12]))

        b = ModelBuilder()
        b.add_body("crank", body=rod(MASS[0], A), joint=mbd.Revolute((0.0, 1.0, 0.0)))
        b.add_body("coupler", body=rod(MASS[1], B), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="crank",
                   placement=Placement(p=np.array([A, 0.0, 0.0])))
        b.add_body("rocker", body=rod(MASS[2], C), joint=mbd.Revolute((0.0, 1.0, 0.0)), placement=Placement(p=np.array([D, 0.0, 0.0])))
        model = b.build()
        loop = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 0.0, 0.0]))
        system = mbd.System(model, (loop,) if case == "four_bar" else ())
        q0 = jnp.asarray(_q0())
    y = initial_state(system, q0=q0)
    return {"case": case, "seconds": rhs_seconds(system, y, None)}


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
            us[c].append(spawn_child("benchmarks.loops", c)["seconds"] * 1e6)
    from importlib.metadata import version

    import jax

    mj = statistics.median(us["mujoco"])
    labels = {
        "tree": "jaxmbd, the open tree (no loop): ABA",
        "four_bar": "jaxmbd, the four-bar (ball loop): mass matrix, Lagrange multipliers",
        "luffing_cylinder": "jaxmbd, the luffing-cylinder crane (1 joint, a cylinder element)",
        "mujoco": "MuJoCo `mj_forward`, the four-bar (equality connect), from Python",
    }
    lines = [
        "## Closed loops per evaluation (`python -m benchmarks.loops`)",
        "",
        f"{date.today().isoformat()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}, MuJoCo {version('mujoco')}; median over {n} processes (min-max), the cases' processes in turn.",
        "",
        "The planar four-bar of `tests/test_loops.py` (three hinges, one loop); jaxmbd's right-hand side 200 times in "
        "one jitted `lax.scan`, MuJoCo's `mj_forward` 2,000 times from Python:",
        "",
        "| case | µs per evaluation | against MuJoCo |",
        "|---|---|---|",
    ]
    for c in CASES:
        med = statistics.median(us[c])
        lines.append(f"| {labels[c]} | {spread(us[c])} | {med / mj:.2g}x |")
    lines += [
        "",
        "Above 1x is slower than MuJoCo.  MuJoCo's figure includes its Python call (about 1 µs) and its whole "
        "forward pass (collision detection with no geoms, its soft-constraint solver); jaxmbd's the loop's "
        "rows written out from the tree's kinematics, the mass matrix (CRBA and RNEA), its Cholesky factor and the "
        "multipliers' proximal solve.  A tree without loops takes the articulated-body path unchanged.",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "loops.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
