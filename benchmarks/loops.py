"""Closed loops per evaluation: the four-bar linkage of ``tests/test_loops.py`` (ball-closed), its open
tree (the loop removed), and MuJoCo's ``mj_forward`` on the same linkage closed by an equality
``connect``, from Python (``mj_step`` rollout is not used: one forward pass is the comparable unit), with
``mj_forward`` on an empty model beside it: the call's fixed cost.  Also the luffing-cylinder crane of
``jaxmbd.examples`` (a cylinder element) and the A-frame vessel of ``studies/a_frame``.

    python -m benchmarks.loops            # 5 processes; writes benchmarks/results/loops.md, BENCHMARKS.md
    python -m benchmarks.loops --quick    # 2 processes

Each figure is the median over processes (one fresh process per case and round, the cases in turn) of
that process's median; the spread is the range over processes.
"""

from __future__ import annotations

import os
import statistics
from datetime import date

from .report import RESULTS, assemble
from .timing import processes_or_child, processor, spawn_child, spread

CASES = ("tree", "four_bar", "luffing_cylinder", "mujoco", "mujoco_empty", "a_frame_tree", "a_frame", "a_frame_mujoco",
         "a_frame_waves", "a_frame_waves_loops")
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


def _a_frame_geometry():
    """What both A-frame models need (vessel frame, the frame at its study's start, 25° inboard): the study's
    A-frame with its cylinders as bodies (``studies/a_frame/system.py``, ``cylinders="bodies"``) on its
    free vessel, in air."""
    import math

    from studies.a_frame import system as af
    from studies.osv_lift.system import DISPLACEMENT

    m_hull = DISPLACEMENT - af.M_FRAME - af.M_LOAD - 2 * (af.BARREL[0] + af.ROD[0])
    return dict(af=af, a0=math.radians(af.START_DEG), cyl=af.cylinder_poses(af.START_DEG), m_hull=m_hull,
                hull_I=af.hull_inertia(m_hull), frame_I=af.FRAME_INERTIA, load=af.load_position(af.START_DEG))


def _a_frame_system():
    """(System, q0): the A-frame vessel with cylinder bodies and two ball loops, in air (MuJoCo has no
    hydrodynamics): the vessel free, the load on its wire, the cylinders' length control."""
    import jax.numpy as jnp
    import numpy as np

    import jaxmbd as mbd
    from jaxmbd.forces import WireRope
    from jaxmbd.forces.cylinder import Cylinder
    from jaxmbd.model import Body, ModelBuilder, Placement
    from studies.osv_lift.system import _box_inertia

    g = _a_frame_geometry()
    af = g["af"]
    b = ModelBuilder(source="a_frame_loops")
    b.add_body("vessel", body=Body(g["m_hull"], (0.0, 0.0, 2.25), np.diag(g["hull_I"])), joint=mbd.Free())
    b.add_body("aframe", body=Body(af.M_FRAME, (0.0, 0.0, af.FRAME_HEIGHT / 2), np.diag(g["frame_I"])),
               joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="vessel", placement=Placement(p=af.HINGE), joint_name="tilt")
    loops, place = af.add_cylinder_bodies(b, af.START_DEG)
    b.add_body("load", body=Body(af.M_LOAD, (0.0, 0.0, 0.0), _box_inertia(af.M_LOAD, np.full(3, af.LOAD_SIDE))), joint=mbd.Free(),
               joint_name="load")
    model = b.build()
    q0 = np.array(model.neutral(), dtype=float)
    q0[model.q_slice("tilt")] = g["a0"]
    q0[model.q_slice("load")] = [*g["load"], 1.0, 0.0, 0.0, 0.0]
    q0 = place(model, q0)
    rope = WireRope(name="hoist", body_a="aframe", point_a=jnp.asarray([0.0, 0.0, af.FRAME_HEIGHT]), body_b="load",
                    point_b=jnp.asarray([0.0, 0.0, af.LOAD_SIDE / 2]), EA=jnp.asarray(af.ROPE_EA), length=jnp.asarray(af.ROPE_REST),
                    damping=jnp.asarray(af.ROPE_DAMPING), transition=jnp.asarray(1e3))
    cylinders = tuple(Cylinder(name=f"cylinder_{side}", body_a="vessel", point_a=jnp.asarray(af.CYL_BASE[k]), body_b="aframe",
                               point_b=jnp.asarray(af.CYL_PIN[k]), target=jnp.asarray(af.cylinder_length(af.END_DEG, k)),
                               max_force=jnp.asarray(af.CYL_FORCE), min_length=jnp.asarray(af.CYL_STROKE[0]),
                               max_length=jnp.asarray(af.CYL_STROKE[1]), kp=jnp.asarray(af.CYL_KP), kd=jnp.asarray(af.CYL_KD),
                               max_speed=jnp.asarray(af.CYL_SPEED), settle_rate=jnp.asarray(0.2), preload=jnp.asarray(0.0))
                      for k, side in enumerate(af.SIDES))
    return mbd.System(model, (rope, *cylinders), name="a_frame_loops", loops=tuple(loops)), jnp.asarray(q0)


def _a_frame_mjcf():
    """The same A-frame vessel in MJCF: the cylinders' pins closed by equality ``connect``s, the wire a
    spatial tendon with its stiffness and damping, each cylinder a PD actuator on its slide joint."""
    import math

    g = _a_frame_geometry()
    af = g["af"]

    def v(x):
        return " ".join(repr(float(c)) for c in x)

    def inertial(m, com, I):
        return f'<inertial pos="{v(com)}" mass="{m!r}" diaginertia="{v(I)}"/>'

    h = g["a0"] / 2
    frame = (f'<body name="aframe" pos="{v(af.HINGE)}" quat="{math.cos(h)!r} 0 {math.sin(h)!r} 0">'
             f'<joint name="tilt" type="hinge" axis="0 1 0"/>{inertial(af.M_FRAME, (0, 0, af.FRAME_HEIGHT / 2), g["frame_I"])}'
             f'<site name="top" pos="0 0 {af.FRAME_HEIGHT!r}"/></body>')
    cyls = ""
    for k, (base, beta, length) in enumerate(g["cyl"]):
        cyls += (f'<body name="barrel{k}" pos="{v(base)}" quat="{math.cos(beta / 2)!r} 0 {math.sin(beta / 2)!r} 0">'
                 f'<joint name="swing{k}" type="hinge" axis="0 1 0"/><joint name="yaw{k}" type="hinge" axis="0 0 1"/>'
                 f'{inertial(af.BARREL[0], (af.BARREL[1], 0, 0), af.BARREL[2])}'
                 f'<body name="rod{k}" pos="{length!r} 0 0"><joint name="slide{k}" type="slide" axis="1 0 0"/>'
                 f'{inertial(af.ROD[0], (af.ROD[1], 0, 0), af.ROD[2])}</body></body>')
    side = af.LOAD_SIDE
    load_I = af.M_LOAD * 2 * side**2 / 12
    vessel = (f'<body name="vessel"><freejoint/>{inertial(g["m_hull"], (0, 0, 2.25), g["hull_I"])}{frame}{cyls}</body>'
              f'<body name="load" pos="{v(g["load"])}"><freejoint/>{inertial(af.M_LOAD, (0, 0, 0), (load_I,) * 3)}'
              f'<site name="hook" pos="0 0 {side / 2!r}"/></body>')
    equality = "".join(f'<connect body1="rod{k}" body2="aframe" anchor="0 0 0"/>' for k in range(2))
    actuators = "".join(f'<general joint="slide{k}" biastype="affine" gainprm="{af.CYL_KP!r}" biasprm="0 {-af.CYL_KP!r} {-af.CYL_KD!r}"/>'
                        for k in range(2))
    return (f'<mujoco><option gravity="0 0 -9.81" timestep="0.01"/><worldbody>{vessel}</worldbody>'
            f'<tendon><spatial stiffness="{af.ROPE_STIFFNESS!r}" damping="{af.ROPE_DAMPING!r}" springlength="{af.ROPE_REST!r}">'
            f'<site site="top"/><site site="hook"/></spatial></tendon>'
            f'<equality>{equality}</equality><actuator>{actuators}</actuator></mujoco>')


def _mj_forward_seconds(xml, qpos=None):
    """Median seconds of one ``mj_forward`` over 7 rounds of 2,000 calls from Python."""
    import time

    import mujoco

    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if qpos is not None:
        d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(2000):
            mujoco.mj_forward(m, d)
        times.append((time.perf_counter() - t0) / 2000)
    return statistics.median(times), m, d


def _case(case: str) -> dict:
    import numpy as np

    if case == "a_frame_mujoco":
        seconds, m, d = _mj_forward_seconds(_a_frame_mjcf())
        assert m.nv == 6 + 1 + 2 * 3 + 6 and d.efc_pos.size >= 6
        assert float(np.max(np.abs(d.efc_pos[:6]))) < 1e-9  # the pins close in the model's own pose
        return {"case": case, "seconds": seconds}
    if case in ("a_frame_waves", "a_frame_waves_loops"):  # the study's A-frame vessel in waves: no MuJoCo peer
        from jaxmbd.simulation import initial_state
        from studies.a_frame.system import build

        from .timing import rhs_seconds

        system, q0 = build(2.0, 8.0, 0.0, cylinders="bodies" if case == "a_frame_waves_loops" else "forces")
        y = initial_state(system, q0=q0)  # t0 = 30 s: past the waves' 20 s ramp
        return {"case": case, "seconds": rhs_seconds(system, y, None, t0=30.0)}
    if case == "mujoco":
        return {"case": case, "seconds": _mj_forward_seconds(_mjcf(), _q0())[0]}
    if case == "mujoco_empty":  # no bodies: the binding's call and the pipeline's fixed steps
        return {"case": case, "seconds": _mj_forward_seconds("<mujoco><worldbody/></mujoco>")[0]}
    import jax.numpy as jnp

    import jaxmbd as mbd
    from jaxmbd.examples import luffing_crane
    from jaxmbd.loops import Loop
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.simulation import initial_state

    from .timing import rhs_seconds

    if case == "luffing_cylinder":
        system, q0 = luffing_crane()
    elif case in ("a_frame", "a_frame_tree"):
        from jaxmbd.loops import check_closure

        system, q0 = _a_frame_system()
        assert all(check_closure(lp, system.model, q0, 1e-9) is None for lp in system.loops)
        if case == "a_frame_tree":  # the same tree and elements, the loops cut
            system = mbd.System(system.model, system.forces)
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
        system = mbd.System(model, loops=(loop,) if case == "four_bar" else ())
        q0 = jnp.asarray(_q0())
    y = initial_state(system, q0=q0)
    return {"case": case, "seconds": rhs_seconds(system, y, None)}


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=2, full=5)
    if got_args is None:
        return
    args, n = got_args
    us = {c: [] for c in CASES}
    for _ in range(n):
        for c in CASES:
            us[c].append(spawn_child("benchmarks.loops", c)["seconds"] * 1e6)
    from importlib.metadata import version

    import jax

    labels = {
        "tree": "jaxmbd, the open tree (no loop): ABA",
        "four_bar": "jaxmbd, the four-bar (ball loop): mass matrix, Lagrange multipliers",
        "luffing_cylinder": "jaxmbd, the luffing-cylinder crane (1 joint, a cylinder element)",
        "mujoco": "MuJoCo `mj_forward`, the four-bar (equality connect), from Python",
        "mujoco_empty": "MuJoCo `mj_forward` on an empty model (no bodies), from Python: the call's fixed cost",
        "a_frame_tree": "jaxmbd, the A-frame vessel's open tree (its loops cut): ABA",
        "a_frame": "jaxmbd, the A-frame vessel in air (19 degrees of freedom in the tree, two ball loops, the wire, two cylinders)",
        "a_frame_mujoco": "MuJoCo `mj_forward`, the same A-frame vessel (two equality connects, a tendon, two actuators)",
        "a_frame_waves": "jaxmbd, `studies/a_frame` in waves (cylinders as force elements; hull hydrodynamics, 100 wave "
                         "components, radiation states)",
        "a_frame_waves_loops": "jaxmbd, `studies/a_frame` in waves with its cylinders as bodies closed by two ball loops",
    }
    peer = {"tree": "mujoco", "four_bar": "mujoco", "luffing_cylinder": "mujoco", "mujoco": "mujoco",
            "a_frame_tree": "a_frame_mujoco", "a_frame": "a_frame_mujoco", "a_frame_mujoco": "a_frame_mujoco"}
    lines = [
        "## Closed loops per evaluation (`python -m benchmarks.loops`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}, MuJoCo {version('mujoco')}; median over {n} processes (min-max), the cases' processes in turn.",
        "",
        "The planar four-bar of `tests/test_loops.py` (three hinges, one loop) and the stern A-frame of `studies/a_frame` "
        "on its free vessel with its cylinders as bodies (a barrel on a universal joint, a rod sliding in it, its end "
        "on the frame's pin by a ball loop); jaxmbd's right-hand side in one jitted loop run for 200 and for 1,000 "
        "evaluations, the difference of the two calls per evaluation (so the call's own fixed cost, 0.1-0.2 ms on "
        "CPU, cancels), MuJoCo's `mj_forward` 2,000 times from Python:",
        "",
        "| case | µs per evaluation | against MuJoCo's `mj_forward` on the same mechanism, its loops closed, from "
        "Python | against the same less an empty model's `mj_forward` (a bound: most of the empty model's figure is "
        "MuJoCo's pipeline, which a C loop pays too) |",
        "|---|---|---|---|",
    ]
    empty = statistics.median(us["mujoco_empty"])
    for c in CASES:
        med = statistics.median(us[c])
        if c == "mujoco_empty":
            ratios = "", ""
        elif c in peer:
            ref = statistics.median(us[peer[c]])
            ratios = f"{med / ref:.2g}x", f"{med / (ref - empty):.2g}x" if c not in ("mujoco", "a_frame_mujoco") else "1x"
        else:
            ratios = ("no peer: MuJoCo has no hydrodynamics",) * 2
        lines.append(f"| {labels[c]} | {spread(us[c])} | {ratios[0]} | {ratios[1]} |")
    lines += [
        "",
        "Above 1x is slower than MuJoCo.  MuJoCo's figure includes its Python call and the fixed steps of its "
        "pipeline (the empty model's row, which the last column takes off: a bound from below on MuJoCo's cost, since its "
        "binding's call is about 0.1-0.15 µs of it and the rest its pipeline's fixed work, paid in C as well)"
        " and its whole forward pass (collision detection with no geoms, its soft-constraint solver); jaxmbd's the loop's "
        "rows written out from the tree's kinematics, the mass matrix and bias forces (CRBA and RNEA up to 12 "
        "coordinates; beyond, one product over the bodies' world-frame Jacobians and inertias, which also give the loops' "
        "Jacobian columns and bias accelerations), its solve (elimination written out up to 12 coordinates, LAPACK's "
        "Cholesky beyond) and the multipliers' proximal solve.  A tree without "
        "loops takes the articulated-body path unchanged.  The A-frame "
        "in air is the mechanism both programs can hold; the study's vessel in waves adds what only jaxmbd "
        "computes (its cost is the hull's radiation and wave forces, not the frame's joint).",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "loops.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
