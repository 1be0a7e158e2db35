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
        system = System(model, (loop,))
        rhs = jax.jit(lambda y, system=system: system.rhs(0.0, y))
        for theta in np.radians([20.0, 60.0, 100.0, 150.0, 200.0]):
            q = closed_q(theta)
            v = null_velocity(model, loop, q, 1.3)
            _, vdot, _ = rhs((jnp.asarray(q), jnp.asarray(v), jnp.zeros(0)))
            expected = ref(q, v)
            assert np.max(np.abs(np.asarray(vdot) - expected)) < 1e-10 * np.max(np.abs(expected)), (joint, theta)


def test_four_bar_motion_matches_pinocchio_and_conserves_energy():
    """Released from rest at a crank angle of 30°, 2 s under gravity: our motion (Tsit5, tolerances
    1e-12) and Pinocchio's constrained dynamics integrated by SciPy's DOP853 (tolerances 1e-12) agree to
    1e-8 rad; the energy drifts by under 1e-8 of the motion's largest kinetic energy and the loop stays
    closed within 1e-9 m."""
    model, loop = four_bar()
    system = System(model, (loop,))
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
    system = System(model, (apex, load), report_joints=("leg1",))
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
    (dict(joint="weld"), "joint must be one of ball, revolute"),
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
    system = System(model, (loop,))
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
    b = System(model, (ref_loop,)).rhs(0.0, (q, jnp.zeros(3), jnp.zeros(0)))[1]
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
    system = System(model, (loop, pin))
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
    exact = np.asarray(System(model, (loop,)).outputs(0.0, y)["pin/force"])
    gap = Loop(name="pin", body_a="coupler", body_b="rocker", point_a=jnp.array([B, 0.0, 0.0]), point_b=jnp.array([C, 1e-8, 0.0]))
    force = np.asarray(System(model, (gap,)).outputs(0.0, y)["pin/force"])
    assert abs(force[1]) < 1e-6 * np.abs(exact).max(), force
    np.testing.assert_allclose(force, exact, rtol=0, atol=1e-6 * np.abs(exact).max())


@pytest.mark.slow
def test_the_floating_crane_closed_by_a_cut_joint_carries_its_cargo():
    """Ham et al. (2009)'s floating crane with its loop closed by a cut joint (rigid links): at the static
    equilibrium each link carries half of the 1,000 t cargo (1e-6), the loop closed (1e-8 m)."""
    from jaxmbd.examples import floating_crane
    from jaxmbd.simulation import initial_state, static_equilibrium

    system, q = floating_crane(hoist="links")
    q0 = static_equilibrium(system, q, tol=1e-7)
    out = system.outputs(0.0, initial_state(system, q0=q0))
    half = 500.0e3 * 9.81
    assert abs(float(np.linalg.norm(np.asarray(out["cut/force"]))) / half - 1) < 1e-6
    assert abs(float(np.linalg.norm(np.asarray(out["joint/cargo_hook/wrench"])[:3])) / half - 1) < 1e-6
    assert float(out["cut/error"]) < 1e-8  # the equilibrium's 1e-7 m/s² over Baumgarte's ω² = 100 1/s²


def test_the_written_out_loop_terms_equal_automatic_differentiation():
    """φ, J_c and J̇_c v of ball and revolute loops, and of a loop to the world, written out from the
    kinematics (Loop.terms, what the solve uses) against their automatic derivatives (loop_terms), at a
    moving, closed and an unclosed state: 1e-12 of their size."""
    from jaxmbd.dynamics.constrained import loop_terms_from
    from jaxmbd.kinematics import Kinematics

    rng = np.random.default_rng(3)
    for joint in ("ball", "revolute", "distance"):
        model, loop = four_bar(joint)
        world = Loop(name="w", body_a="crank", body_b="world", point_a=jnp.array([0.5, 0.1, -0.2]), point_b=jnp.array([0.3, 0.0, 0.4]),
                     joint=joint, axis_a=jnp.array([0.0, 1.0, 0.0]), axis_b=jnp.array([0.2, 1.0, 0.1]), length=jnp.asarray(0.7))
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
    res = simulate(System(free, (strut,)), 3.0, save_dt=0.1, integrator=tight, q0=q0)
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
    """Axes on a ball loop would be ignored: one line naming the key."""
    extra = '[[loops]]\nname = "w"\nbody_a = "crank"\nbody_b = "world"\npoint_a = [0, 0, 0]\npoint_b = [0, 0, 0]\naxis_a = [0, 1, 0]'
    with pytest.raises(mbd.SystemFileError, match=r'loops\[1\]\.axis_a: only a "revolute" loop has axes'):
        mbd.load_system(four_bar_file(tmp_path, None, extra))
