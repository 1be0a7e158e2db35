"""Mooring analysis (jaxmbd.mooring): a four-line spread's restoring force over offset against MoorPy,
and the static offset under a steady load against that curve."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd import Body, ModelBuilder, System
from jaxmbd.forces.spread import MooringSpread
from jaxmbd.forces.steady import SteadyForce
from jaxmbd.mooring import MooringError, restoring_curve, static_offset

moorpy = pytest.importorskip("moorpy")

DEPTH, L, EA, W, RA, RF = 100.0, 600.0, 1.5e9, 1000.0, 580.0, 20.0
HEADS = np.radians([30.0, 150.0, 210.0, 330.0])


def _spread(extra=()):
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    spread = MooringSpread(name="spread", body="hull", headings=jnp.asarray(HEADS), fairlead_radius=jnp.asarray(RF),
                           fairlead_z=jnp.asarray(0.0), anchor_radius=jnp.asarray(RA), anchor_z=jnp.asarray(-DEPTH),
                           length=jnp.asarray(L), EA=jnp.asarray(EA), weight=jnp.asarray(W))
    return System(b.build(), (spread, *extra)), jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def _moorpy_forces(offsets):
    import moorpy as mp

    ms = mp.System(depth=DEPTH)
    d_vol = 0.1
    ms.setLineType(dnommm=100.0, d_vol=d_vol, mass=W / 9.81 + 1025.0 * np.pi / 4 * d_vol**2, w=W, EA=EA, name="chain")
    ms.addBody(-1, [0, 0, 0, 0, 0, 0])
    for h in HEADS:
        ms.addPoint(1, [RA * np.cos(h), RA * np.sin(h), -DEPTH])
        ms.addPoint(1, [RF * np.cos(h), RF * np.sin(h), 0.0])
        ms.bodyList[0].attachPoint(len(ms.pointList), [RF * np.cos(h), RF * np.sin(h), 0.0])
        ms.addLine(L, "chain", pointA=len(ms.pointList) - 1, pointB=len(ms.pointList))
    ms.initialize()
    out = []
    for s in offsets:
        ms.bodyList[0].setPosition([s, 0, 0, 0, 0, 0])
        for line in ms.lineList:  # MoorPy's default tolerance is 1e-4 (relative); solve to 1e-10 as we do
            line.staticSolve(tol=1e-10)
        out.append(ms.bodyList[0].getForces(lines_only=True))
    return np.array(out)


def test_the_restoring_curve_against_moorpy():
    """Surge offsets 0-40 m of an unsymmetric spread (lines at ±30° and 180 ± 30°): the world force and
    yaw moment on the hull against MoorPy's body forces (lines only) within 1e-6 of the largest force."""
    offsets = np.linspace(0.0, 40.0, 9)
    system, q0 = _spread()
    force, yaw, outs = restoring_curve(system, "hull", q0, offsets)
    ref = _moorpy_forces(offsets)
    scale = np.abs(ref[:, :3]).max()
    np.testing.assert_allclose(force, ref[:, :3], rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(yaw, ref[:, 5], rtol=0, atol=1e-6 * scale * RF)
    assert outs["spread/fairlead_tension"].shape == (9, 4) and force[-1, 0] < force[1, 0] < 0.0


@pytest.mark.slow  # 17 s; the mooring curve against MoorPy stays in the default suite
def test_the_static_offset_balances_a_steady_load():
    """A steady 500 kN along +x: the hull settles where the spread pulls back 500 kN (the restoring curve
    at the offset found, to 1e-6 of the load), without sway or yaw (symmetric about x, 1e-6 m / rad)."""
    F = 5.0e5
    system, q0 = _spread((SteadyForce(name="drift", body="hull", force=jnp.asarray([F, 0.0, 0.0])),))
    q, offset = static_offset(system, "hull", q0)
    assert offset[0] > 0.0 and abs(offset[1]) < 1e-6 and abs(offset[2]) < 1e-6
    bare, _ = _spread()
    force, _, _ = restoring_curve(bare, "hull", q0, [offset[0]])
    assert abs(force[0, 0] + F) < 1e-6 * F


@pytest.mark.slow  # 20 s: two equilibrium programs
def test_the_static_offset_with_a_hanging_cargo_agrees_with_the_restoring_curve():
    """A 20 t cargo hanging from a post on the hull: the static offset held the cargo where it started, so its
    rope held the hull back (an offset far short of where the curve balances the load), while the curve
    moved the cargo with nothing.  Now the other bodies settle in both: the curve at the static offset
    balances the steady load (1e-6), the cargo hangs plumb under the post there (1e-6 m), and the offset
    is the bare spread's within 1 % (the cargo's weight on the hull changes nothing horizontal)."""
    from jaxmbd.forces import WireRope

    F = 5.0e5
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    b.add_body("cargo", body=Body(2.0e4, (0.0, 0.0, 0.0), np.eye(3) * 2e4), joint=mbd.Free())
    spread, _ = _spread()
    rope = WireRope(name="hoist", body_a="hull", point_a=jnp.asarray([0.0, 0.0, 20.0]), body_b="cargo", point_b=jnp.zeros(3),
                    EA=jnp.asarray(1.0e8), length=jnp.asarray(10.0), damping=jnp.asarray(1.0e4))
    model = b.build()
    drift = SteadyForce(name="drift", body="hull", force=jnp.asarray([F, 0.0, 0.0]))
    loaded = System(model, (spread.forces[0], rope, drift))
    q0 = jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.99, 1.0, 0.0, 0.0, 0.0])
    q, offset = static_offset(loaded, "hull", q0)
    force, _, _ = restoring_curve(System(model, (spread.forces[0], rope)), "hull", q0, [offset[0]])
    assert abs(force[0, 0] + F) < 1e-6 * F
    assert abs(float(q[7]) - float(q[0])) < 1e-6 and abs(float(q[8]) - float(q[1])) < 1e-6  # plumb under the post
    bare, bq0 = _spread((drift,))
    _, alone = static_offset(bare, "hull", bq0)
    assert offset[0] == pytest.approx(alone[0], rel=0.01)



def test_an_offset_of_a_body_not_free_is_refused():
    b = ModelBuilder()
    b.add_body("pile", body=Body(1.0, (0.0, 0.0, 0.0), np.eye(3)), joint=mbd.Fixed())
    with pytest.raises(MooringError, match="Fixed joint"):
        restoring_curve(System(b.build(), ()), "pile", jnp.zeros(0), [0.0])


SPREAD = """
name = "spread"
[[bodies]]
name = "hull"
joint = "free"
mass = 1.0e6
inertia = [1e8, 1e8, 1e8]
[[forces]]
kind = "mooring_spread"
body = "hull"
headings_deg = [30, 150, 210, 330]
fairlead_radius = 20.0
fairlead_z = 0.0
anchor_radius = 580.0
anchor_z = -100.0
length = 600.0
EA = 1.5e9
weight = 1000.0
[[forces]]
kind = "steady_force"
body = "hull"
force = [5.0e5, 0, 0]
[simulation]
duration = 1.0
save_dt = 0.5
"""


@pytest.mark.slow  # 16 s; the curve against MoorPy and the static offset stay in the default suite
def test_the_mooring_command_writes_the_curve_and_the_offset(tmp_path, capsys):
    from jaxmbd.cli import main

    path = tmp_path / "spread.toml"
    path.write_text(SPREAD)
    assert main(["mooring", str(path), "--out", str(tmp_path / "o"), "--max-offset", "40", "--points", "5"]) == 0
    out = capsys.readouterr().out
    assert "static offset under the steady loads: surge" in out
    table = (tmp_path / "o" / "restoring.txt").read_text().splitlines()
    assert table[0].startswith("offset (m)\trestoring along the offset (N)") and len(table) == 6
    assert (tmp_path / "o" / "restoring.png").stat().st_size > 0


def test_the_restoring_curve_compiles_once_per_system_structure():
    """It compiled again on every call (about 23 s a call for one line): now other offsets and another
    direction reuse the program (nothing traced on the second and third calls, so nothing compiled, from
    the disk cache or not)."""
    import jax

    system, q0 = _spread()
    # nine offsets, as the curve against MoorPy: the first call finds that test's program where it ran before
    restoring_curve(system, "hull", q0, np.linspace(0.0, 40.0, 9))
    compiles = []
    listener = lambda event, duration, **kw: compiles.append(event) if "jaxpr_trace" in event else None  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        restoring_curve(system, "hull", q0, np.linspace(5.0, 20.0, 9))
        restoring_curve(system, "hull", q0, np.linspace(5.0, 20.0, 9), direction=(0.0, 1.0))
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert compiles == []


def test_a_moored_hull_in_a_current_rests_where_the_spread_holds_the_current_load():
    """The spread's hull with a hull current load (the coefficients of tests/test_current_load.py) and a
    submerged Morison object whose drag fades in over 30 s, in a 1.5 m/s current 60° off its bow: the static
    offset holds the current's steady load on both (the spread's pull at the offset
    equals minus the element's load there, its angle of attack taken at the turned hull: 1e-6 of the load; the
    offset nil without the current's load, which is how it was missed); a run of the moored hull, damped, from
    rest in the same current settles there (its last 200 s within 1 % of the offset's size in x and y, 1 % of
    the yaw; measured 0.05 % and 0.04 %)."""
    import math

    from test_current_load import ANGLES, AX, AY, CN, CX, CY, L

    from jaxmbd.forces.current_load import HullCurrentLoad
    from jaxmbd.forces.mooring import LinearMooring
    from jaxmbd.hydro import SeaState
    from jaxmbd.hydro.waves import Current
    from jaxmbd.simulation import Integrator, simulate

    load = HullCurrentLoad(name="current", body="hull", angles=jnp.asarray(ANGLES), Cx=jnp.asarray(CX), Cy=jnp.asarray(CY),
                           Cn=jnp.asarray(CN), area_x=jnp.asarray(AX), area_y=jnp.asarray(AY), length=jnp.asarray(L))
    # damped in surge, sway and yaw; held in heave, roll and pitch as a hull's buoyancy would (2.7 cm of sag under
    # the hull's weight and the lines' pull, where the static offset holds the heave at rest: 0.05 % of the offset)
    damper = LinearMooring(name="damper", body="hull", point=jnp.zeros(3), reference=jnp.zeros(3),
                           stiffness=jnp.diag(jnp.asarray([0.0, 0.0, 4e8, 4e10, 4e10, 0.0])),
                           damping=jnp.diag(jnp.asarray([3e5, 3e5, 4e7, 4e9, 4e9, 3e8])))
    from jaxmbd.forces.morison import MorisonObject

    # a submerged object on the hull whose drag in the current fades in over 30 s: the offset takes it in full; its
    # added mass 6 m down couples sway to the roll its drag would turn, which the offset holds (the free directions'
    # forces balance, not their accelerations with the roll let go: 0.6 % of the load apart here)
    pod = MorisonObject(name="pod", body="hull", volume=jnp.asarray(10.0), area=jnp.asarray(20.0), height=jnp.asarray(2.0),
                        Cd=jnp.asarray(1.0), Ca=jnp.asarray(1.0), point=jnp.asarray([0.0, 0.0, -6.0]), ramp_time=jnp.asarray(30.0))
    base, q0 = _spread((load, damper, pod))
    sea = SeaState(current=Current(1.5, math.radians(60.0)))
    with pytest.warns(UserWarning, match="the current does not act on the quasi-static lines spread"):
        system = System(base.model, base.forces, waves=sea, name="in_current")
    q, offset = static_offset(system, "hull", q0)
    assert np.hypot(offset[0], offset[1]) > 1.0  # the current moves it
    out = system.outputs(100.0, (q, jnp.zeros(6), jnp.zeros(0)), system.inputs(sea.realise(None)))
    spread_only, _ = _spread()
    f_ext, _, _, _ = spread_only.loads(0.0, q, jnp.zeros(6), jnp.zeros(0))
    R = np.asarray(mbd.spatial.quat_to_matrix(q[3:7]))
    pull = R @ np.asarray(f_ext[0, :3])
    pull_yaw = (R @ np.asarray(f_ext[0, 3:]))[2]
    current = np.asarray(out["current/force"]) + np.asarray(out["pod/force"])
    assert np.linalg.norm(np.asarray(out["pod/force"])[:2]) > 0.05 * np.linalg.norm(current[:2])  # it counts
    np.testing.assert_allclose(pull[:2], -current[:2], rtol=0, atol=1e-6 * np.linalg.norm(current))
    assert abs(pull_yaw + float(out["current/moment"])) < 1e-6 * np.linalg.norm(current) * L
    res = simulate(system, 1200.0, save_dt=1.0, integrator=Integrator("rk4", dt=0.05), q0=q0, key=jax.random.key(0))
    qs = np.asarray(res.q)[0] if np.asarray(res.q).ndim == 3 else np.asarray(res.q)
    late = qs[-200:]
    yaw_late = np.asarray(jax.vmap(lambda x: mbd.spatial.matrix_to_rpy(mbd.spatial.quat_to_matrix(x)))(jnp.asarray(late[:, 3:7])))[:, 2]
    np.testing.assert_allclose(late[:, :2].mean(axis=0), offset[:2], rtol=0, atol=0.01 * np.hypot(offset[0], offset[1]))
    assert abs(yaw_late.mean() - offset[2]) < 0.01 * abs(offset[2])


def test_a_pendulum_on_the_held_hull_hangs_plumb_along_the_restoring_curve():
    """A 20 t pendulum hinged on the hull (a child joint: the tree's mass matrix couples it to the hull's surge)
    at 30 m of offset, where the spread pulls the held hull back by some hundreds of kN: the hull is held, so the
    pendulum settles plumb (its angle 1e-9 rad).  Letting the held directions go instead (each direction's
    acceleration of the unconstrained system) swung it out to where its own acceleration vanished with the
    hull's let go: 1.02 rad."""
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    b.add_body("load", body=Body(2.0e4, (0.0, 0.0, -10.0), np.eye(3) * 1e3), joint=mbd.Revolute((0, 1, 0)), parent="hull",
               placement=mbd.Placement(p=(0.0, 0.0, 20.0)))
    spread, _ = _spread()
    system = System(b.build(), (spread.forces[0],))
    force, _, _ = restoring_curve(system, "hull", jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]), [30.0])
    assert abs(force[0, 0]) > 1e5
    from jaxmbd.simulation import static_equilibrium

    q30 = jnp.asarray([30.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    free = np.zeros(7, bool)
    free[6] = True
    settled = np.asarray(static_equilibrium(system, q30, free=free))
    assert abs(settled[7]) < 1e-9
