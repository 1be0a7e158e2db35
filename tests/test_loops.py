"""Closed kinematic loops: a four-bar linkage against Pinocchio's constrained dynamics, energy and
constraint drift, constraint forces against statics, and the loops' errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

import jaxmbd as mbd
from jaxmbd.dynamics.constrained import loop_terms
from jaxmbd.loops import Loop
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System

# a planar four-bar in the x-z plane, joints about y, gravity along −z: crank a from the origin, coupler
# b, rocker c from the ground pivot at (d, 0, 0); masses and lengths as given
A, B, C, D = 1.0, 2.5, 1.5, 2.0
MASS = (2.0, 3.0, 1.5)
LENGTH = (A, B, C)


def rod(m, L):
    return Body(m, (L / 2, 0.0, 0.0), np.diag([1e-3 * m * L**2, m * L**2 / 12, m * L**2 / 12]))


def four_bar(joint="ball"):
    b = ModelBuilder()
    b.add_body("crank", body=rod(MASS[0], A), joint=mbd.Revolute((0.0, 1.0, 0.0)))
    b.add_body("coupler", body=rod(MASS[1], B), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="crank",
               placement=Placement(p=np.array([A, 0.0, 0.0])))
    b.add_body("rocker", body=rod(MASS[2], C), joint=mbd.Revolute((0.0, 1.0, 0.0)), placement=Placement(p=np.array([D, 0.0, 0.0])))
    model = b.build()
    loop = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 0.0, 0.0]),
                joint=joint, axis_a=jnp.array([0.0, 1.0, 0.0]), axis_b=jnp.array([0.0, 1.0, 0.0]))
    return model, loop


def closed_q(theta1):
    """Coupler and rocker angles that close the linkage at crank angle theta1 (rotations about +y)."""
    def tip(q):  # coupler tip minus rocker tip, x and z
        t1, t2, t3 = theta1, q[0], q[1]
        x = A * np.cos(t1) + B * np.cos(t1 + t2) - (D + C * np.cos(t3))
        z = -A * np.sin(t1) - B * np.sin(t1 + t2) + C * np.sin(t3)
        return [x, z]

    sol = fsolve(tip, [-1.0, 1.6], xtol=1e-13)
    assert np.max(np.abs(tip(sol))) < 1e-12
    return np.array([theta1, *sol])


def pinocchio_four_bar():
    pin = pytest.importorskip("pinocchio")
    model = pin.Model()
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    ids = []
    for k, (parent, where) in enumerate([(0, (0, 0, 0)), (1, (A, 0, 0)), (0, (D, 0, 0))]):
        parent_id = 0 if parent == 0 else ids[parent - 1]
        jid = model.addJoint(parent_id, pin.JointModelRY(), pin.SE3(np.eye(3), np.array(where, float)), f"j{k}")
        m, L = MASS[k], LENGTH[k]
        model.appendBodyToJoint(jid, pin.Inertia(m, np.array([L / 2, 0.0, 0.0]), np.diag([1e-3 * m * L**2, m * L**2 / 12, m * L**2 / 12])),
                                pin.SE3.Identity())
        ids.append(jid)
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, ids[1], pin.SE3(np.eye(3), np.array([B, 0.0, 0.0])),
                                  ids[2], pin.SE3(np.eye(3), np.array([C, 0.0, 0.0])), pin.ReferenceFrame.LOCAL)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    cms.append(cm)
    cds.append(cm.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    prox = pin.ProximalSettings(1e-14, 1e-12, 50)

    def vdot(q, v):
        return pin.constraintDynamics(model, data, q, v, np.zeros(3), cms, cds, prox).copy()

    return vdot


def null_velocity(model, loop, q, speed):
    """A joint velocity that keeps the loop closed, crank rate ``speed``."""
    _, J, _ = loop_terms((loop,), model, jnp.asarray(q), jnp.zeros(3))
    J = np.asarray(J)
    ns = np.linalg.svd(J)[2][-1]  # the one free direction of a four-bar
    return ns * speed / ns[0]


def test_four_bar_accelerations_match_pinocchio():
    """At five closed configurations and velocities along the mechanism's free direction, the joint
    accelerations of the ball-closed and the revolute-closed linkage equal Pinocchio's constrained
    dynamics (its CONTACT_3D, proximal solve) to 1e-10 of their size."""
    ref = pinocchio_four_bar()
    for joint in ("ball", "revolute"):
        model, loop = four_bar(joint)
        system = System(model, loops=(loop,))
        rhs = jax.jit(lambda y, system=system: system.rhs(0.0, y))
        for theta in np.radians([20.0, 60.0, 100.0, 150.0, 200.0]):
            q = closed_q(theta)
            v = null_velocity(model, loop, q, 1.3)
            _, vdot, _ = rhs((jnp.asarray(q), jnp.asarray(v), jnp.zeros(0)))
            expected = ref(q, v)
            assert np.max(np.abs(np.asarray(vdot) - expected)) < 1e-10 * np.max(np.abs(expected)), (joint, theta)


@pytest.mark.slow  # 12 s; the four-bar's accelerations against Pinocchio stay in the default suite
def test_four_bar_motion_matches_pinocchio_and_conserves_energy():
    """Released from rest at a crank angle of 30°, 2 s under gravity: our motion (Tsit5, tolerances
    1e-12) and Pinocchio's constrained dynamics integrated by SciPy's DOP853 (tolerances 1e-12) agree to
    1e-8 rad; the energy drifts by under 1e-8 of the motion's largest kinetic energy and the loop stays
    closed within 1e-9 m."""
    model, loop = four_bar()
    system = System(model, loops=(loop,))
    q0 = closed_q(np.radians(30.0))
    ts = np.linspace(0.0, 2.0, 21)
    res = simulate(system, 2.0, save_dt=0.1, integrator=Integrator("tsit5", rtol=1e-12, atol=1e-12), q0=jnp.asarray(q0))
    ref = pinocchio_four_bar()
    sol = solve_ivp(lambda t, y: np.concatenate([y[3:], ref(y[:3], y[3:])]), (0.0, 2.0), np.concatenate([q0, np.zeros(3)]),
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=ts)
    q = np.asarray(res.q)
    assert np.max(np.abs(q - sol.y[:3].T)) < 1e-8, np.max(np.abs(q - sol.y[:3].T))
    energy = np.array([float(mbd.total_energy(model, jnp.asarray(qq), jnp.asarray(vv))) for qq, vv in zip(res.q, res.v)])
    kinetic = np.array([float(mbd.kinetic_energy(model, jnp.asarray(qq), jnp.asarray(vv))) for qq, vv in zip(res.q, res.v)])
    assert np.max(np.abs(energy - energy[0])) < 1e-8 * kinetic.max(), np.max(np.abs(energy - energy[0])) / kinetic.max()
    assert np.max(np.asarray(res.outputs["pin/error"])) < 1e-9
    assert kinetic.max() > 1.0  # it moved


def test_a_frame_pin_force_against_the_truss_by_hand():
    """An A-frame: two 20 t legs pinned to the deck at x = ±4 m, meeting at the apex 9 m up (a ball loop
    closes it: the structure has no freedom), 50 t hung at the apex from leg 1.  By hand (moments of
    each leg about its foot): the apex pin pushes leg 1 with F_z = W/2 and F_x = −(s/h)(W + w)/2, with s
    the half-span, h the height, W the load's weight and w a leg's.  The loop's force matches to 1e-9, the
    legs do not accelerate (1e-9 rad/s²), and leg 1's foot pin (its joint wrench, the loop's force on
    the leg included) carries the rest of its loads to 1e-9."""
    from jaxmbd.forces.steady import SteadyForce

    s, h, m_leg, m_load, g = 4.0, 9.0, 20.0e3, 50.0e3, 9.81
    L = float(np.hypot(s, h))
    b = ModelBuilder()
    b.add_body("leg1", body=rod(m_leg, L), joint=mbd.Revolute((0.0, 1.0, 0.0)), placement=Placement(p=np.array([-s, 0.0, 0.0])))
    b.add_body("leg2", body=rod(m_leg, L), joint=mbd.Revolute((0.0, 1.0, 0.0)), placement=Placement(p=np.array([s, 0.0, 0.0])))
    model = b.build()
    apex = Loop(name="apex", body_a="leg1", body_b="leg2", point_a=jnp.array([L, 0.0, 0.0]), point_b=jnp.array([L, 0.0, 0.0]))
    load = SteadyForce(name="load", body="leg1", force=jnp.array([0.0, 0.0, -m_load * g]), point=jnp.array([L, 0.0, 0.0]))
    system = System(model, (load,), report_joints=("leg1",), loops=(apex,))
    q = jnp.array([-np.arctan2(h, s), np.arctan2(-h, -s)])
    y = (q, jnp.zeros(2), jnp.zeros(0))
    force = np.asarray(system.outputs(0.0, y)["apex/force"])
    W, w = m_load * g, m_leg * g
    expected = np.array([-(s / h) * (W + w) / 2, 0.0, W / 2])
    np.testing.assert_allclose(force, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    assert np.max(np.abs(np.asarray(system.rhs(0.0, y)[1]))) < 1e-9
    # the deck's pin on leg 1 carries the rest: (s/h)(W + w)/2 along +x and W/2 + w up
    R1 = np.asarray(mbd.forward_kinematics(model, q)[0][0])
    foot = R1 @ np.asarray(system.outputs(0.0, y)["joint/leg1/wrench"])[:3]
    np.testing.assert_allclose(foot, [(s / h) * (W + w) / 2, 0.0, W / 2 + w], rtol=0, atol=1e-9 * (W + w))


@pytest.mark.parametrize("kw, message", [
    (dict(body_b="coupler"), "body_a and body_b are both 'coupler'"),
    (dict(joint="hinge"), "joint must be one of ball, revolute, prismatic, weld, distance"),
])
def test_bad_loops_are_refused(kw, message):
    args = dict(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 0.0, 0.0]))
    with pytest.raises(ValueError, match=message):
        Loop(**(args | kw))


def test_a_tree_without_loops_is_unchanged():
    """Without loops the right-hand side is the tree's (bitwise: the loops' branch is not taken)."""
    model, _ = four_bar()
    q = jnp.asarray(closed_q(0.4))
    v = jnp.asarray([0.3, -0.2, 0.1])
    a = System(model, ()).rhs(0.0, (q, v, jnp.zeros(0)))[1]
    b = mbd.forward_dynamics(model, q, v, jnp.zeros(3))
    assert np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.slow
def test_loop_gradient_matches_finite_differences():
    """d(crank angle at 0.5 s)/d(rocker length in the loop's point): jax.grad through the constrained
    dynamics against central differences: 1e-6."""
    from jaxmbd.paths import set_leaf
    from jaxmbd.simulation import initial_state, solve

    model, loop = four_bar()
    q0 = closed_q(np.radians(30.0))
    system = System(model, loops=(loop,))
    y0 = initial_state(system, q0=jnp.asarray(q0))

    def final(x):
        s = set_leaf(system, "pin.point_a", jnp.array([x, 0.0, 0.0]))
        return solve(s, y0, np.linspace(0.0, 0.5, 6), integrator=Integrator("rk4", dt=0.001)).ys[0][-1, 0]

    g = float(jax.jit(jax.grad(final))(B))
    h = 1e-5
    fd = (float(final(B + h)) - float(final(B - h))) / (2 * h)
    assert abs(g - fd) < 1e-6 * abs(fd), (g, fd)


FOUR_BAR_FILE = """
name = "four_bar"
[[bodies]]
name = "crank"
joint = "revolute"
axis = [0.0, 1.0, 0.0]
mass = 2.0
com = [0.5, 0.0, 0.0]
inertia = [0.002, 0.16666666666666666, 0.16666666666666666]
q0 = [Q1]
[[bodies]]
name = "coupler"
parent = "crank"
joint = "revolute"
axis = [0.0, 1.0, 0.0]
xyz = [1.0, 0.0, 0.0]
mass = 3.0
com = [1.25, 0.0, 0.0]
inertia = [0.01875, 1.5625, 1.5625]
q0 = [Q2]
[[bodies]]
name = "rocker"
joint = "revolute"
axis = [0.0, 1.0, 0.0]
xyz = [2.0, 0.0, 0.0]
mass = 1.5
com = [0.75, 0.0, 0.0]
inertia = [0.003375, 0.28125, 0.28125]
q0 = [Q3]
[[loops]]
name = "pin"
body_a = "coupler"
body_b = "rocker"
point_a = [2.5, 0.0, 0.0]
point_b = [1.5, 0.0, 0.0]
EXTRA
[simulation]
duration = 0.2
save_dt = 0.1
"""


def four_bar_file(tmp_path, q=None, extra=""):
    q = closed_q(np.radians(30.0)) if q is None else q
    text = FOUR_BAR_FILE.replace("Q1", repr(float(q[0]))).replace("Q2", repr(float(q[1]))).replace("Q3", repr(float(q[2])))
    path = tmp_path / "four_bar.toml"
    path.write_text(text.replace("EXTRA", extra))
    return path


def test_a_four_bar_is_read_from_a_system_file(tmp_path):
    """``[[loops]]`` needs no kind; the file's linkage is the Python one (same accelerations, 1e-12)."""
    loaded = mbd.load_system(four_bar_file(tmp_path))
    loop = loaded.system.loops[0]
    assert isinstance(loop, Loop) and loop.joint == "ball"
    q = jnp.asarray(closed_q(np.radians(30.0)))
    model, ref_loop = four_bar()
    a = loaded.system.rhs(0.0, (q, jnp.zeros(3), jnp.zeros(0)))[1]
    b = System(model, loops=(ref_loop,)).rhs(0.0, (q, jnp.zeros(3), jnp.zeros(0)))[1]
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-12 * np.abs(np.asarray(b)).max())


@pytest.mark.parametrize("q, extra, message", [
    (np.array([0.5, -1.0, 1.6]), "", r"loops\[0\]: loop 'pin' does not close at q0: its points are .* m apart"),
    (None, '[[loops]]\nname = "self"\nbody_a = "crank"\nbody_b = "crank"\npoint_a = [0, 0, 0]\npoint_b = [1, 0, 0]',
     r"loops\[1\]: loop 'self': body_a and body_b are both 'crank'"),
    (None, '[[loops]]\nname = "hold"\nbody_a = "coupler"\nbody_b = "world"\npoint_a = [0, 0, 0]\npoint_b = [0.8660254037844387, 0, -0.5]',
     r"loops: the loops are over-constrained at q0: 4 constraint rows of rank 3"),
    (None, '[[loops]]\nname = "strut"\nbody_a = "crank"\nbody_b = "world"\npoint_a = [0, 0, 0]\npoint_b = [0, 0, 0]\nlength = 1.0',
     r'loops\[1\]\.length: only a "distance" loop has a length'),
    (None, '[[loops]]\nname = "strut"\nbody_a = "crank"\nbody_b = "world"\njoint = "distance"\npoint_a = [1, 0, 0]\n'
     'point_b = [0, 0, 0]\nlength = 2.0', r"loops\[1\]: loop 'strut' does not close at q0: its points are 1 m off its length 2 m"),
])
def test_bad_loops_in_a_file_are_one_line(tmp_path, q, extra, message):
    """A loop that does not close at q0, a loop between a body and itself, an over-constrained set (the
    coupler's base also pinned to the world: the linkage cannot move): one line naming the loop."""
    with pytest.raises(mbd.SystemFileError, match=message) as err:
        mbd.load_system(four_bar_file(tmp_path, q, extra))
    assert "\n" not in str(err.value)


def test_conflicting_loops_are_reported_not_nan():
    """The four-bar with a second loop pinning the coupler's base 1 mm from where it is: two loops that
    cannot both hold.  The accelerations stay finite, the solve's residual output says so (above 1e-6),
    and a run's range check reports it."""
    from jaxmbd.validity import check

    model, loop = four_bar()
    q = closed_q(np.radians(30.0))
    base = np.array([A * np.cos(q[0]), 0.0, -A * np.sin(q[0]) + 1e-3])
    pin = Loop(name="pin2", body_a="coupler", body_b="world", point_a=jnp.zeros(3), point_b=jnp.asarray(base))
    system = System(model, loops=(loop, pin))
    y = (jnp.asarray(q), jnp.zeros(3), jnp.zeros(0))
    assert np.all(np.isfinite(np.asarray(system.rhs(0.0, y)[1])))
    out = system.outputs(0.0, y)
    assert float(out["pin2/residual"]) > 1e-6
    series = {k: np.asarray(v)[None] for k, v in out.items()}
    assert any(e.element in ("pin", "pin2") for e in check(system, np.zeros(1), series, False))


def test_an_out_of_plane_gap_gives_no_out_of_plane_force():
    """The planar four-bar closed by a ball whose points are 10 nm apart out of the plane (inside the
    1 µm a file accepts): the out-of-plane row is empty (the tree cannot move that way), so it carries
    no force, and the in-plane force is the closed linkage's (1e-6)."""
    model, loop = four_bar()
    q = jnp.asarray(closed_q(np.radians(30.0)))
    y = (q, jnp.zeros(3), jnp.zeros(0))
    exact = np.asarray(System(model, loops=(loop,)).outputs(0.0, y)["pin/force"])
    gap = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 1e-8, 0.0]))
    force = np.asarray(System(model, loops=(gap,)).outputs(0.0, y)["pin/force"])
    assert abs(force[1]) < 1e-6 * np.abs(exact).max(), force
    np.testing.assert_allclose(force, exact, rtol=0, atol=1e-6 * np.abs(exact).max())


@pytest.mark.slow
def test_the_floating_crane_closed_by_a_cut_joint_carries_its_cargo():
    """Ham et al. (2009)'s floating crane with its loop closed by a cut joint (rigid links): at the static
    equilibrium each link carries half of the 1,000 t cargo (1e-6), the loop closed (1e-8 m).  The equilibrium
    is solved to 1e-9: at 1e-7 the solve may stop where the closure is 3e-8 m (LLVM at level 0 on a Zen 5
    host) or 7e-10 m (the suite's options); at 1e-9 it is 2e-12 m or less under every option."""
    from jaxmbd.examples import floating_crane
    from jaxmbd.simulation import initial_state, static_equilibrium

    system, q = floating_crane(hoist="links")
    q0 = static_equilibrium(system, q, tol=1e-9)
    out = system.outputs(0.0, initial_state(system, q0=q0))
    half = 500.0e3 * 9.81
    assert abs(float(np.linalg.norm(np.asarray(out["cut/force"]))) / half - 1) < 1e-6
    assert abs(float(np.linalg.norm(np.asarray(out["joint/cargo_hook/wrench"])[:3])) / half - 1) < 1e-6
    assert float(out["cut/error"]) < 1e-8  # the equilibrium's 1e-9 m/s² over Baumgarte's ω² = 100 1/s², with room


def test_the_written_out_loop_terms_equal_automatic_differentiation():
    """φ, J_c and J̇_c v of ball, revolute, prismatic, weld and distance loops, and of a loop to the world, written out from the
    kinematics (Loop.terms, what the solve uses) against their automatic derivatives (loop_terms), at a
    moving, closed and an unclosed state: 1e-12 of their size."""
    from jaxmbd.dynamics.constrained import loop_terms_from
    from jaxmbd.kinematics import Kinematics

    rng = np.random.default_rng(3)
    for joint in ("ball", "revolute", "prismatic", "weld", "distance"):
        model, loop = four_bar(joint)
        world = Loop(name="w", body_a="crank", body_b="world", point_a=jnp.array([0.5, 0.1, -0.2]), point_b=jnp.array([0.3, 0.0, 0.4]),
                     joint=joint, axis_a=jnp.array([0.0, 1.0, 0.0]), axis_b=jnp.array([0.2, 1.0, 0.1]), length=jnp.asarray(0.7),
                     reference_a=jnp.array([0.3, 0.1, 1.0]), reference_b=jnp.array([1.0, -0.2, 0.4]))
        if joint == "distance":  # the linkage closed by a strut of the coupler-rocker tip gap instead
            loop = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]),
                        point_b=jnp.array([C, 0.0, 0.0]), joint="distance", length=jnp.asarray(0.3))
        for q in (closed_q(0.7), closed_q(0.7) + rng.normal(0, 0.1, 3)):
            q, v = jnp.asarray(q), jnp.asarray(rng.normal(0, 1.0, 3))
            ref = loop_terms((loop, world), model, q, v)
            ours = loop_terms_from((loop, world), model, q, v, Kinematics.compute(model, q, v))
            for a, b in zip(ours, ref):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-12 * max(1.0, np.abs(np.asarray(b)).max()))


def test_a_distance_loop_is_a_pendulum():
    """A body free in space held at its centre of mass by a 2 m strut (a distance loop) to a world point
    swings as the point-mass pendulum on a revolute joint (same mass, no rotational inertia of its own):
    the centre of mass's path over 3 s within 1e-8 m (Tsit5 at 1e-12), the strut's force its tension."""
    ell, m, th0 = 2.0, 5.0, 0.5
    b = ModelBuilder()
    b.add_body("bob", body=Body(m, (0.0, 0.0, 0.0), np.eye(3)), joint=mbd.Free())
    free = b.build()
    strut = Loop(name="strut", body_a="bob", body_b="world", point_a=jnp.zeros(3), point_b=jnp.zeros(3), joint="distance",
                 length=jnp.asarray(ell))
    q0 = jnp.asarray([ell * np.sin(th0), 0.0, -ell * np.cos(th0), 1.0, 0.0, 0.0, 0.0])
    tight = Integrator("tsit5", rtol=1e-12, atol=1e-12)
    res = simulate(System(free, loops=(strut,)), 3.0, save_dt=0.1, integrator=tight, q0=q0)
    b = ModelBuilder()
    b.add_body("bob", body=Body(m, (0.0, 0.0, -ell), np.zeros((3, 3))), joint=mbd.Revolute((0.0, 1.0, 0.0)))
    tree = b.build()
    ref = simulate(System(tree, ()), 3.0, save_dt=0.1, integrator=tight, q0=jnp.asarray([-th0]))
    th = np.asarray(ref.q)[:, 0]
    path = np.stack([-ell * np.sin(th), -ell * np.cos(th)], -1)
    got = np.asarray(res.q)[:, [0, 2]]
    assert np.max(np.abs(got - path)) < 1e-8, np.max(np.abs(got - path))
    # at the start (at rest) the strut carries the weight's component along it: m g cos θ0, pulling the bob in
    force = np.asarray(res.outputs["strut/force"])[0]
    np.testing.assert_allclose(np.linalg.norm(force), m * 9.81 * np.cos(th0), rtol=1e-9)


def test_unused_loop_keys_are_refused(tmp_path):
    """Axes on a ball loop and references on a revolute would be ignored, and a prismatic's reference
    along its axis fixes nothing: one line naming the key."""
    head = '[[loops]]\nname = "w"\nbody_a = "crank"\nbody_b = "world"\npoint_a = [0, 0, 0]\npoint_b = [0, 0, 0]\n'
    for extra, message in ((head + 'axis_a = [0, 1, 0]', r'loops\[1\]\.axis_a: only a "revolute", "prismatic" or "weld" loop has axes'),
                           (head + 'joint = "revolute"\nreference_a = [1, 0, 0]',
                            r'loops\[1\]\.reference_a: only a "prismatic" or "weld" loop has references'),
                           (head + 'joint = "prismatic"\naxis_b = [2, 0, 0]',
                            r'loops\[1\]\.reference_b: expected a direction across axis_b \(it is along it or zero\)')):
        with pytest.raises(mbd.SystemFileError, match=message) as err:
            mbd.load_system(four_bar_file(tmp_path, None, extra))
        assert "\n" not in str(err.value)


def test_a_weld_moves_as_one_body():
    """A block free in space welded to a pendulum's arm (its frame turned 90° about z and 30° about x from
    the arm's, so the axes and references differ in the two bodies) swings as the same block fixed to the
    arm in the tree: both angles over 2 s within 1e-8 (Tsit5 at 1e-12).  Welded to the world instead,
    at rest, the weld carries the block's weight and its moment about the weld's point (1e-9)."""
    from scipy.spatial.transform import Rotation

    arm = Body(4.0, (0.0, 0.0, -0.6), np.diag([0.5, 0.5, 0.01]))
    block = Body(7.0, (0.3, -0.2, 0.1), np.array([[0.4, 0.05, 0.0], [0.05, 0.3, 0.02], [0.0, 0.02, 0.2]]))
    tip = np.array([0.0, 0.0, -1.2])
    R_rel = Rotation.from_euler("zx", [90.0, 30.0], degrees=True).as_matrix()  # the block's frame in the arm's
    th0 = 0.7
    tight = Integrator("tsit5", rtol=1e-12, atol=1e-12)

    b = ModelBuilder()
    b.add_body("arm", body=arm, joint=mbd.Revolute((0.0, 1.0, 0.0)))
    b.add_body("block", body=block, joint=mbd.Fixed(), parent="arm", placement=Placement(R=R_rel, p=tip))
    ref = simulate(System(b.build(), ()), 2.0, save_dt=0.1, integrator=tight, q0=jnp.asarray([th0]))

    b = ModelBuilder()
    b.add_body("arm", body=arm, joint=mbd.Revolute((0.0, 1.0, 0.0)))
    b.add_body("block", body=block, joint=mbd.Free())
    model = b.build()
    R_arm = Rotation.from_rotvec([0.0, th0, 0.0]).as_matrix()
    q_block = Rotation.from_matrix(R_arm @ R_rel).as_quat()  # x, y, z, w
    q0 = jnp.asarray([th0, *(R_arm @ tip), q_block[3], *q_block[:3]])
    axis_a, ref_a = np.array([0.3, 1.0, -0.2]), np.array([1.0, 0.0, 0.5])
    weld = Loop(name="weld", body_a="arm", body_b="block", point_a=jnp.asarray(tip), point_b=jnp.zeros(3), joint="weld",
                axis_a=jnp.asarray(axis_a), axis_b=jnp.asarray(R_rel.T @ axis_a),
                reference_a=jnp.asarray(ref_a), reference_b=jnp.asarray(R_rel.T @ ref_a))
    res = simulate(System(model, loops=(weld,)), 2.0, save_dt=0.1, integrator=tight, q0=q0)
    th = np.asarray(ref.q)[:, 0]
    assert np.ptp(th) > 1.0  # it swung
    assert np.max(np.abs(np.asarray(res.q)[:, 0] - th)) < 1e-8
    R_block = Rotation.from_quat(np.asarray(res.q)[:, [5, 6, 7, 4]]).as_matrix()
    R_expected = Rotation.from_rotvec(np.outer(th, [0.0, 1.0, 0.0])).as_matrix() @ R_rel
    assert np.max(np.abs(R_block - R_expected)) < 1e-8
    assert np.max(np.asarray(res.outputs["weld/error"])) < 1e-9

    # welded to the world at rest: force and moment on the block hold its weight
    b = ModelBuilder()
    b.add_body("block", body=block, joint=mbd.Free())
    alone = b.build()
    p_weld = np.array([0.5, 0.2, 1.0])
    held = Loop(name="weld", body_a="block", body_b="world", point_a=jnp.zeros(3), point_b=jnp.asarray(p_weld), joint="weld",
                axis_b=jnp.asarray(R_rel @ [0.0, 0.0, 1.0]), reference_b=jnp.asarray(R_rel @ [1.0, 0.0, 0.0]))
    q = jnp.asarray([*p_weld, *Rotation.from_matrix(R_rel).as_quat()[[3, 0, 1, 2]]])
    system = System(alone, loops=(held,))
    y = (q, jnp.zeros(6), jnp.zeros(0))
    out = system.outputs(0.0, y)
    W = np.array([0.0, 0.0, -7.0 * 9.81])
    c = R_rel @ np.asarray(block.com)  # the centre of mass from the weld's point, world axes
    np.testing.assert_allclose(np.asarray(out["weld/force"]), -W, rtol=0, atol=1e-9 * 7.0 * 9.81)
    np.testing.assert_allclose(np.asarray(out["weld/moment"]), -np.cross(c, W), rtol=0, atol=1e-9 * 7.0 * 9.81)
    assert np.max(np.abs(np.asarray(system.rhs(0.0, y)[1]))) < 1e-9


def test_a_prismatic_loop_is_a_frictionless_rail():
    """A body free in space on a prismatic loop along a rail inclined at 25°, its centre of mass 0.4 m off
    the rail: from rest it slides as s = g sin α t²/2 without turning (1e-9 m, 1e-9 rad over 1.5 s), and the
    rail's force and moment on the world are, in closed form, minus the normal force m g cos α and the
    moment that keeps the body from turning (1e-8 of m g)."""
    from scipy.spatial.transform import Rotation

    alpha, m, h, g = np.radians(25.0), 3.0, 0.4, 9.81
    along = np.array([np.cos(alpha), 0.0, -np.sin(alpha)])
    normal = np.array([np.sin(alpha), 0.0, np.cos(alpha)])
    b = ModelBuilder()
    b.add_body("slider", body=Body(m, tuple(h * normal), np.diag([0.2, 0.3, 0.25])), joint=mbd.Free())
    model = b.build()
    rail = Loop(name="rail", body_a="world", body_b="slider", point_a=jnp.zeros(3), point_b=jnp.zeros(3), joint="prismatic",
                axis_a=jnp.asarray(along), axis_b=jnp.asarray(along), reference_a=jnp.asarray(normal), reference_b=jnp.asarray(normal))
    res = simulate(System(model, loops=(rail,)), 1.5, save_dt=0.1, integrator=Integrator("tsit5", rtol=1e-12, atol=1e-12),
                   q0=jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))
    t = np.asarray(res.time)
    s = 0.5 * g * np.sin(alpha) * t**2
    np.testing.assert_allclose(np.asarray(res.q)[:, :3], s[:, None] * along, rtol=0, atol=1e-9)
    assert np.max(np.abs(Rotation.from_quat(np.asarray(res.q)[:, [4, 5, 6, 3]]).as_rotvec())) < 1e-9
    # on the slider: F + m g = m a and, about its point, M + c × m g = c × m a (it does not turn)
    acc = g * np.sin(alpha) * along
    gvec = np.array([0.0, 0.0, -g])
    F = m * (acc - gvec)
    np.testing.assert_allclose(F, m * g * np.cos(alpha) * normal, atol=1e-12)
    M = np.cross(h * normal, m * (acc - gvec))
    for k in (0, 10):  # the world's point is the rail's origin; the slider is s_k down the rail
        d = s[k] * along
        np.testing.assert_allclose(np.asarray(res.outputs["rail/force"])[k], -F, rtol=0, atol=1e-8 * m * g)
        np.testing.assert_allclose(np.asarray(res.outputs["rail/moment"])[k], -M - np.cross(d, F), rtol=0, atol=1e-8 * m * g)


def slider_crank(closure):
    """A slider-crank in the x-z plane: a 0.3 m crank about y at the origin, a 1 m rod, a 2 kg slider on x.
    ``closure="tree"``: the slider on a prismatic joint of the tree, the rod hung from it and pinned to the
    crank's tip by a revolute loop; ``"prismatic"``: crank, rod and slider a chain of the tree, the slider
    kept on its line by a prismatic loop to the world."""
    r, ell = 0.3, 1.0
    crank, rod_ = rod(1.0, r), Body(1.5, (0.5, 0.0, 0.0), np.diag([1e-3, 0.125, 0.125]))
    slider = Body(2.0, (0.0, 0.0, 0.0), np.diag([0.01, 0.02, 0.01]))
    yaxis = jnp.array([0.0, 1.0, 0.0])
    b = ModelBuilder()
    b.add_body("crank", body=crank, joint=mbd.Revolute((0.0, 1.0, 0.0)))
    if closure == "tree":
        b.add_body("slider", body=slider, joint=mbd.Prismatic((1.0, 0.0, 0.0)))
        b.add_body("rod", body=rod_, joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="slider")
        loop = Loop(name="pin", body_a="rod", body_b="crank", point_a=jnp.array([ell, 0.0, 0.0]), point_b=jnp.array([r, 0.0, 0.0]),
                    joint="revolute", axis_a=yaxis, axis_b=yaxis)
    else:
        b.add_body("rod", body=rod_, joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="crank", placement=Placement(p=np.array([r, 0.0, 0.0])))
        b.add_body("slider", body=slider, joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="rod", placement=Placement(p=np.array([ell, 0.0, 0.0])))
        loop = Loop(name="rail", body_a="world", body_b="slider", point_a=jnp.zeros(3), point_b=jnp.zeros(3), joint="prismatic",
                    axis_a=jnp.array([1.0, 0.0, 0.0]), axis_b=jnp.array([1.0, 0.0, 0.0]),
                    reference_a=jnp.array([0.0, 0.0, 1.0]), reference_b=jnp.array([0.0, 0.0, 1.0]))
    return b.build(), loop, r, ell


@pytest.mark.slow  # 9 s; the default suite checks the prismatic loop on the rail (closed form) and in 3-D
def test_a_slider_crank_on_a_prismatic_loop_moves_as_on_a_prismatic_joint():
    """The slider-crank closed by a prismatic loop (the slider's rail cut) and with the slider on the
    tree's prismatic joint (the crank pin cut) move alike: the crank angle over 2 s from rest at 60° under
    gravity within 1e-8 rad (Tsit5 at 1e-12), the slider on its line within 1e-9 m."""
    th0 = np.radians(60.0)
    tight = Integrator("tsit5", rtol=1e-12, atol=1e-12)
    model, loop, r, ell = slider_crank("tree")
    tip = np.array([r * np.cos(th0), -r * np.sin(th0)])  # crank tip (x, z)
    phi = np.arcsin(tip[1] / ell)  # the rod's angle below x, from the slider at (x_s, 0)
    xs = tip[0] - ell * np.cos(phi)
    # the rod's frame turned about +y by β puts its x-axis at (cos β, −sin β): it points from the slider to the tip
    beta = -phi
    ref = simulate(System(model, loops=(loop,)), 2.0, save_dt=0.1, integrator=tight, q0=jnp.asarray([th0, xs, beta]))
    model, loop, _, _ = slider_crank("prismatic")
    # the chain: the rod's angle relative to the crank, the slider's relative to the rod (back to level)
    res = simulate(System(model, loops=(loop,)), 2.0, save_dt=0.1, integrator=tight,
                   q0=jnp.asarray([th0, np.pi + beta - th0, -(np.pi + beta)]))
    th_ref, th = np.asarray(ref.q)[:, 0], np.asarray(res.q)[:, 0]
    assert np.ptp(th_ref) > 1.0  # it turned
    assert np.max(np.abs(th - th_ref)) < 1e-8, np.max(np.abs(th - th_ref))
    assert np.max(np.asarray(res.outputs["rail/error"])) < 1e-9


def between_struts(delta):
    """A 50 kg body free in space at the origin, held by two 2 m struts (distance loops) from world points on
    either side, each rising at ``delta`` above the horizontal: in line at delta = 0."""
    b = ModelBuilder()
    b.add_body("mass", body=Body(50.0, (0.0, 0.0, 0.0), np.diag([1.0, 1.0, 1.0])), joint=mbd.Free())
    struts = tuple(Loop(name=f"strut{k}", body_a="mass", body_b="world", point_a=jnp.zeros(3),
                        point_b=jnp.asarray([s * 2.0 * np.cos(delta), 0.0, 2.0 * np.sin(delta)]), joint="distance",
                        length=jnp.asarray(2.0)) for k, s in enumerate((-1.0, 1.0)))
    return System(b.build(), loops=struts), (jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), jnp.zeros(6), jnp.zeros(0))


def test_singular_configurations_are_reported_not_nan():
    """A body hung between two struts: at 30° each carries W / (2 sin 30°) by hand (1e-9) and the rows are
    well conditioned; 1e-5 rad from in line the rows are nearly the same (the struts' forces, W / (2 sin δ),
    lose digits): the conditioning output falls below 1e-8 and the run's range check says so, with the
    accelerations and forces finite.  A pendulum whose tip is also held by a strut along it (a dead point:
    the strut's row has no stiffness there) passing through with speed cannot keep the strut's length: the
    residual is O(1), reported, and nothing is NaN."""
    from jaxmbd.validity import check

    W = 50.0 * 9.81
    system, y = between_struts(np.radians(30.0))
    out = system.outputs(0.0, y)
    assert float(out["strut0/conditioning"]) > 0.1
    for k in (0, 1):
        np.testing.assert_allclose(np.linalg.norm(np.asarray(out[f"strut{k}/force"])), W / (2 * np.sin(np.radians(30.0))), rtol=1e-9)
    system, y = between_struts(1e-5)
    out = system.outputs(0.0, y)
    assert float(out["strut0/conditioning"]) < 1e-8
    assert np.all(np.isfinite(np.asarray(system.rhs(0.0, y)[1]))) and np.all(np.isfinite(np.asarray(out["strut0/force"])))
    series = {k: np.asarray(v)[None] for k, v in out.items()}
    assert any(e.element.startswith("strut") and "singular" in e.limit for e in check(system, np.zeros(1), series, False))

    b = ModelBuilder()
    b.add_body("arm", body=rod(2.0, 1.0), joint=mbd.Revolute((0.0, 1.0, 0.0)))
    strut = Loop(name="strut", body_a="arm", body_b="world", point_a=jnp.array([1.0, 0.0, 0.0]), point_b=jnp.array([2.0, 0.0, 0.0]),
                 joint="distance", length=jnp.asarray(1.0))
    system = System(b.build(), loops=(strut,))
    y = (jnp.zeros(1), jnp.ones(1), jnp.zeros(0))
    out = system.outputs(0.0, y)
    assert float(out["strut/residual"]) > 0.5
    assert np.all(np.isfinite(np.asarray(system.rhs(0.0, y)[1])))
    series = {k: np.asarray(v)[None] for k, v in out.items()}
    assert any(e.element == "strut" and "dead point" in e.limit for e in check(system, np.zeros(1), series, False))


def rod_link(name, m, L):
    I = np.diag([1e-3 * m * L**2, m * L**2 / 12, m * L**2 / 12])
    return (f'<link name="{name}"><inertial><origin xyz="{L / 2} 0 0"/><mass value="{m}"/>'
            f'<inertia ixx="{float(I[0, 0])!r}" iyy="{float(I[1, 1])!r}" izz="{float(I[2, 2])!r}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def four_bar_urdf(closure):
    """The four-bar as a URDF, closed by a cut joint (a revolute joint to a link that already hangs from
    another: a massless frame at the rocker's tip) or by Drake's ball constraint."""
    cut = {"joint": '<link name="rocker_tip"/>'
                    f'<joint name="tip" type="fixed"><parent link="rocker"/><child link="rocker_tip"/><origin xyz="{C} 0 0"/></joint>'
                    f'<joint name="pin" type="revolute"><parent link="coupler"/><child link="rocker_tip"/><origin xyz="{B} 0 0"/>'
                    '<axis xyz="0 1 0"/></joint>',
           "drake": '<drake:ball_constraint><drake:ball_constraint_body_A name="coupler"/><drake:ball_constraint_body_B name="rocker"/>'
                    f'<drake:ball_constraint_p_AP value="{B} 0 0"/><drake:ball_constraint_p_BQ value="{C} 0 0"/></drake:ball_constraint>'}[closure]
    return ('<robot name="four_bar" xmlns:drake="http://drake.mit.edu"><link name="ground"/>'
            + rod_link("crank", MASS[0], A) + rod_link("coupler", MASS[1], B) + rod_link("rocker", MASS[2], C)
            + '<joint name="j1" type="revolute"><parent link="ground"/><child link="crank"/><axis xyz="0 1 0"/></joint>'
            f'<joint name="j2" type="revolute"><parent link="crank"/><child link="coupler"/><origin xyz="{A} 0 0"/><axis xyz="0 1 0"/></joint>'
            f'<joint name="j3" type="revolute"><parent link="ground"/><child link="rocker"/><origin xyz="{D} 0 0"/><axis xyz="0 1 0"/></joint>'
            + cut + "</robot>")


def test_loops_are_read_from_urdf(tmp_path):
    """A URDF four-bar closed by a revolute joint to a link that already hangs from another (SDFormat's
    convention) and by Drake's <drake:ball_constraint>: the loops read (revolute, ball) give the Python
    linkage's accelerations (1e-12), also through a system file's [model] urdf.  Read by load_urdf (a tree),
    or with a cut joint of a kind no loop has, the file is refused in one line."""
    q = jnp.asarray(closed_q(np.radians(40.0)))
    v = jnp.asarray(null_velocity(four_bar()[0], four_bar()[1], np.asarray(q), 0.8))
    for closure, joint in (("joint", "revolute"), ("drake", "ball")):
        path = tmp_path / f"{closure}.urdf"
        path.write_text(four_bar_urdf(closure))
        model, loops = mbd.load_urdf_with_loops(path)
        assert [lp.joint for lp in loops] == [joint]
        ref_model, ref_loop = four_bar(joint)
        a = System(model, loops=tuple(loops)).rhs(0.0, (q, v, jnp.zeros(0)))[1]
        b = System(ref_model, loops=(ref_loop,)).rhs(0.0, (q, v, jnp.zeros(0)))[1]
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-12 * np.abs(np.asarray(b)).max())
        with pytest.raises(mbd.ModelError, match="closed loop|closes a loop") as err:
            mbd.load_urdf(path)
        assert "\n" not in str(err.value) and "load_urdf_with_loops" in str(err.value)
    toml = tmp_path / "urdf_four_bar.toml"
    toml.write_text(f'name = "urdf_four_bar"\n[model]\nurdf = "joint.urdf"\n[model.q0]\nj1 = [{float(q[0])!r}]\n'
                    f'j2 = [{float(q[1])!r}]\nj3 = [{float(q[2])!r}]\n[simulation]\nduration = 0.1\nsave_dt = 0.1\n')
    loaded = mbd.load_system(toml)
    assert [lp.name for lp in loaded.system.loops] == ["pin"]
    a = loaded.system.rhs(0.0, (q, v, jnp.zeros(0)))[1]
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-12 * np.abs(np.asarray(b)).max())
    (tmp_path / "joint.urdf").write_text(four_bar_urdf("joint").replace('name="pin" type="revolute"', 'name="pin" type="planar"'))
    with pytest.raises(mbd.SystemFileError, match=r"model\.urdf: .*joint 'pin': a joint closing a loop .* must be revolute") as err:
        mbd.load_system(toml)
    assert "\n" not in str(err.value)


def spatial_tree(floating: bool = False):
    """A tree that moves in 3-D: a free base, a spherical arm on it, a universal joint and a prismatic one;
    with ``floating`` a second free body (18 coordinates)."""
    b = ModelBuilder()
    b.add_body("base", body=Body(5.0, (0.1, -0.2, 0.3), np.diag([0.4, 0.5, 0.6])), joint=mbd.Free())
    b.add_body("arm", body=Body(2.0, (0.5, 0.1, 0.0), np.diag([0.05, 0.3, 0.3])), joint=mbd.Spherical(), parent="base",
               placement=Placement(p=np.array([0.3, 0.2, -0.1])))
    b.add_body("fork", body=Body(1.0, (0.0, 0.3, 0.1), np.diag([0.1, 0.02, 0.1])), joint=mbd.Universal((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
               parent="arm", placement=Placement(p=np.array([1.0, 0.0, 0.0])))
    b.add_body("slide", body=Body(0.5, (0.0, 0.0, 0.2), np.diag([0.01, 0.01, 0.01])), joint=mbd.Prismatic((0.0, 0.6, 0.8)),
               parent="fork", placement=Placement(p=np.array([0.0, 0.5, 0.0])))
    if floating:
        b.add_body("float", body=Body(3.0, (0.2, 0.0, -0.1), np.diag([0.3, 0.2, 0.4])), joint=mbd.Free())
    return b.build()


def spatial_loops(joint):
    return (Loop(name="l1", body_a="slide", body_b="base", point_a=jnp.array([0.1, -0.3, 0.2]), point_b=jnp.array([-0.4, 0.5, 0.3]),
                 joint=joint, axis_a=jnp.array([0.2, 0.9, -0.3]), axis_b=jnp.array([1.0, 0.1, 0.4]),
                 reference_a=jnp.array([0.7, 0.1, 0.5]), reference_b=jnp.array([-0.2, 0.3, 1.0]),
                 length=jnp.asarray(0.8 if joint == "distance" else 0.0)),
            Loop(name="l2", body_a="world", body_b="fork", point_a=jnp.array([0.5, 0.2, -0.4]), point_b=jnp.array([0.2, 0.1, 0.3]),
                 joint=joint, axis_a=jnp.array([0.0, 0.3, 1.0]), axis_b=jnp.array([0.4, -0.1, 0.9]),
                 reference_a=jnp.array([1.0, 0.0, 0.2]), reference_b=jnp.array([0.1, 1.0, 0.0]),
                 length=jnp.asarray(1.1 if joint == "distance" else 0.0)))


@pytest.mark.slow  # 12 s; the written-out loop terms against automatic differentiation stay in the default suite
def test_written_out_rows_and_loop_wrenches_in_three_dimensions():
    """On a tree moving in 3-D (a free base, a spherical, a universal and a prismatic joint; random q and v,
    the loops not closed): each kind's written-out φ, J_c and J̇_c v equal their automatic derivatives
    (1e-12 of their size), and the wrenches loop_wrenches puts on the bodies for random multipliers give
    the generalised force J_cᵀ λ through the bodies' Jacobians, Σ J_iᵀ W_i (1e-12): the split of each
    loop's force and moments between its bodies is the rows' own."""
    from jaxmbd.dynamics.constrained import loop_terms_from, loop_wrenches
    from jaxmbd.kinematics import Kinematics

    model = spatial_tree()
    rng = np.random.default_rng(7)
    q = np.asarray(model.neutral(), float) + rng.normal(0.0, 0.4, model.nq)
    q = jnp.asarray(model.normalise(jnp.asarray(q)))
    v = jnp.asarray(rng.normal(0.0, 1.0, model.nv))
    kin = Kinematics.compute(model, q, v)
    for joint in ("ball", "revolute", "prismatic", "weld", "distance"):
        loops = spatial_loops(joint)
        ref = loop_terms(loops, model, q, v)
        ours = loop_terms_from(loops, model, q, v, kin)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-12 * max(1.0, np.abs(np.asarray(b)).max()))
        lam = jnp.asarray(rng.normal(0.0, 10.0, sum(lp.n_rows for lp in loops)))
        W = loop_wrenches(loops, model, kin, lam)
        generalised = sum(np.asarray(mbd.body_jacobian(model, q, name)).T @ np.asarray(W[i]) for i, name in enumerate(model.body_names))
        expected = np.asarray(ref[1]).T @ np.asarray(lam)
        np.testing.assert_allclose(generalised, expected, rtol=0, atol=1e-12 * np.abs(expected).max(), err_msg=joint)


def test_the_world_frame_route_equals_the_recursions():
    """Trees of more than linalg.SMALL coordinates take M, b and the loops' Jacobian columns and bias
    accelerations from the world-frame terms (coupled.world_equations); smaller ones the recursions (CRBA,
    RNEA, bias_accelerations).  On the 3-D tree with a second free body (18 coordinates; random q, v,
    external wrenches, extra inertia and a coupled inertia between the free bodies) both routes give M, b
    and every kind's φ, J_c, J̇_c v to 1e-12
    of their size: the same quantities summed in another order."""
    from types import SimpleNamespace

    from jaxmbd.dynamics.constrained import loop_terms_from
    from jaxmbd.dynamics.coupled import mass_matrix_equations, world_equations
    from jaxmbd.dynamics.linalg import SMALL
    from jaxmbd.kinematics import Kinematics

    model = spatial_tree(floating=True)
    assert model.nv > SMALL
    rng = np.random.default_rng(11)
    q = jnp.asarray(model.normalise(jnp.asarray(np.asarray(model.neutral(), float) + rng.normal(0.0, 0.4, model.nq))))
    v = jnp.asarray(rng.normal(0.0, 1.0, model.nv))
    tau = jnp.asarray(rng.normal(0.0, 1.0, model.nv))
    f_ext = jnp.asarray(rng.normal(0.0, 1.0, (model.n_bodies, 6)))
    A = rng.normal(0.0, 0.3, (model.n_bodies, 6, 6))
    extra = jnp.asarray(A @ np.swapaxes(A, 1, 2))
    ctx = SimpleNamespace(q=q, v=v, kin=Kinematics.compute(model, q, v))
    world = world_equations(model, ctx, f_ext, extra)
    assert world is not None
    C = rng.normal(0.0, 0.3, (6, 6))
    coupled = ((0, 4, jnp.asarray(C)), (4, 0, jnp.asarray(C.T)))  # a coupled inertia between the two free bodies
    ours = mass_matrix_equations(model, ctx, tau, f_ext, extra, coupled, world)
    ref = mass_matrix_equations(model, ctx, tau, f_ext, extra, coupled, None)
    for a, r in zip(ours, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(r), rtol=0, atol=1e-12 * np.abs(np.asarray(r)).max())
    for joint in ("ball", "revolute", "prismatic", "weld", "distance"):
        loops = spatial_loops(joint)
        ours = loop_terms_from(loops, model, q, v, ctx.kin, world)
        ref = loop_terms_from(loops, model, q, v, ctx.kin)
        for a, r in zip(ours, ref):
            np.testing.assert_allclose(np.asarray(a), np.asarray(r), rtol=0, atol=1e-12 * max(1.0, np.abs(np.asarray(r)).max()), err_msg=joint)


@pytest.mark.parametrize("kw, message", [
    (dict(joint="prismatic", reference_b=jnp.zeros(3)), "reference_b: expected a direction across axis_b"),
    (dict(joint="weld", axis_a=jnp.zeros(3)), "axis_a: expected a non-zero direction"),
    (dict(joint="ball", length=jnp.asarray(1.0)), 'length: only a "distance" loop has a length'),
    (dict(joint="revolute", axis_a=jnp.array([0.0, 1.0, 0.0]), axis_b=jnp.array([0.0, -1.0, 0.0])), "axis_b points against axis_a"),
])
def test_bad_loop_directions_in_python_are_one_line(kw, message):
    """A loop built in Python with a zero reference or axis, a key its joint does not use, or an axis
    pointing against the other (the rows alone would accept it: another joint than the one given):
    check_closure names the loop and the key in one line; nothing is NaN."""
    from jaxmbd.loops import check_closure

    model, _ = four_bar()
    args = dict(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 0.0, 0.0]))
    problem = check_closure(Loop(**(args | kw)), model, closed_q(np.radians(30.0)))
    assert problem is not None and message in problem and "'pin'" in problem and "\n" not in problem, problem


def parallelogram():
    """The four-bar above with a parallelogram's proportions (crank = rocker, coupler = ground), no gravity: at
    crank angle θ it closes at q = (θ, −θ, θ), and at θ = 0 and π it lies flat along x, its dead points, where
    the x row of the loop's Jacobian vanishes (every lever arm lies along x)."""
    L, d = 1.0, 2.0
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("crank", body=rod(1.0, L), joint=mbd.Revolute((0.0, 1.0, 0.0)))
    b.add_body("coupler", body=rod(2.0, d), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="crank",
               placement=Placement(p=np.array([L, 0.0, 0.0])))
    b.add_body("rocker", body=rod(1.0, L), joint=mbd.Revolute((0.0, 1.0, 0.0)), placement=Placement(p=np.array([d, 0.0, 0.0])))
    loop = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([d, 0.0, 0.0]), point_b=jnp.array([L, 0.0, 0.0]),
                joint="revolute", axis_a=jnp.array([0.0, 1.0, 0.0]), axis_b=jnp.array([0.0, 1.0, 0.0]))
    return System(b.build(), loops=(loop,))


def test_a_parallelogram_passing_its_dead_point_is_reported():
    """Before, the loop's conditioning scaled every row to a unit diagonal, so a row that vanishes (the
    parallelogram flat at its dead point) looked as strong as the others: it never fell below 0.74 and the
    singularity warning could not fire.  Rows of one kind (the points', the axes') now share one scale: the
    vanishing x row takes the conditioning to zero as θ² (1e-3 rad: below 1e-5), and a run that turns the
    crank through θ = 0 is reported with its first time, while the motion stays finite."""
    from jaxmbd.validity import check

    system = parallelogram()

    def conditioning(theta):
        y = (jnp.asarray([theta, -theta, theta]), jnp.zeros(3), jnp.zeros(0))
        return float(system.outputs(0.0, y)["pin/conditioning"])

    assert conditioning(np.pi / 3) > 0.1
    assert conditioning(1e-3) < 1e-5
    assert conditioning(np.pi - 1e-3) < 1e-5
    w = 2.0  # rad/s: from θ = π/2 the crank reaches the dead point at θ = 0 at about 0.79 s
    res = simulate(system, 1.5, save_dt=0.01, integrator=Integrator("rk4", dt=0.001),
                   q0=jnp.asarray([np.pi / 2, -np.pi / 2, np.pi / 2]), v0=jnp.asarray([-w, w, -w]))
    out = {k: np.asarray(v) for k, v in res.outputs.items()}
    assert np.all(np.isfinite(out["pin/force"]))
    found = [e for e in check(system, np.asarray(res.time), out, False) if e.element == "pin"]
    assert any("dead point" in e.limit for e in found), [e.line() for e in found]
    first = min(e.first_time for e in found)
    assert 0.7 < first < 0.85


def test_loops_are_their_own_kind_of_element():
    """A loop adds constraints, not loads: a System holds it apart from its force elements (``loops=``), refuses
    it among them with the way to give it, and reports its outputs, units and ranges with the elements'."""
    model, loop = four_bar()
    with pytest.raises(mbd.ModelError, match=r"'pin' is a Loop, not a force element; a loop closes the tree: give it as "
                       r"System\(\.\.\., loops=\(\.\.\.\)\)"):
        System(model, (loop,))
    system = System(model, loops=(loop,))
    assert system.forces == () and system.elements == (loop,) and system.n_states == 0
    assert system.output_groups() == ("pin",)
    assert system.output_units()["pin/conditioning"] == "" and system.output_units()["pin/force"] == "N"
