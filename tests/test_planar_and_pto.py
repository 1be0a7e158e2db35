"""The planar joint against the same motion through a prismatic-prismatic-revolute chain, and the
joint PTO against the closed form of a damped oscillator."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.dynamics import forward_dynamics, inverse_dynamics
from jaxmbd.forces import JointPTO
from jaxmbd.joints import plane_axes
from jaxmbd.kinematics import forward_kinematics
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System

HULL = Body(3.0e3, (0.2, -0.1, 0.3), np.diag([1.0e3, 2.0e3, 3.0e3]))
ARM = Body(5.0e2, (0.0, 0.0, -1.5), np.diag([50.0, 60.0, 20.0]))


def planar_model(normal):
    b = ModelBuilder()
    b.add_body("hull", body=HULL, joint=mbd.Planar(normal))
    b.add_body("arm", body=ARM, joint=mbd.Revolute(tuple(np.round(np.cross(normal, plane_axes(normal)[0]), 12))),
               parent="hull")
    return b.build()


def chain_model(normal):
    a, bb = plane_axes(normal)
    b = ModelBuilder()
    b.add_body("x", body=Body(0.0), joint=mbd.Prismatic(tuple(a)))
    b.add_body("y", body=Body(0.0), joint=mbd.Prismatic(tuple(bb)), parent="x")
    b.add_body("hull", body=HULL, joint=mbd.Revolute(tuple(normal)), parent="y")
    b.add_body("arm", body=ARM, joint=mbd.Revolute(tuple(np.round(np.cross(normal, a), 12))), parent="hull")
    return b.build()


@pytest.mark.parametrize("normal", [pytest.param((0.0, 1.0, 0.0), marks=pytest.mark.slow),  # 11 s; the two others stay
                                    (0.0, 0.0, 1.0), (0.6, 0.0, 0.8)])
def test_planar_joint_moves_like_the_chain(normal):
    """Same initial state (the chain's world-frame rates mapped to the planar joint's body-frame ones):
    the arm's world position agrees to 1e-9 m after 3 s of a swinging pendulum under gravity (Tsit5 at
    rtol 1e-11: both runs are converged; the bodies are the same, only the coordinates differ)."""
    mp, mc = planar_model(normal), chain_model(normal)
    qc = jnp.array([0.3, -0.2, 0.7, 0.4])
    vc = jnp.array([0.5, -0.3, 0.8, 0.2])
    c, s = math.cos(0.7), math.sin(0.7)
    sig = float(np.dot(np.cross(normal, plane_axes(normal)[0]), plane_axes(normal)[1]))
    u = c * vc[0] + sig * s * vc[1]
    w = -sig * s * vc[0] + c * vc[1]
    vp = jnp.array([u, w, vc[2], vc[3]])
    integ = Integrator("tsit5", rtol=1e-11, atol=1e-11)
    rp = simulate(System(mp, ()), 3.0, q0=qc, v0=vp, integrator=integ, save_dt=1.0)
    rc = simulate(System(mc, ()), 3.0, q0=qc, v0=vc, integrator=integ, save_dt=1.0)
    pp = forward_kinematics(mp, rp.q[-1])[1][1]
    pc = forward_kinematics(mc, rc.q[-1])[1][3]
    assert float(jnp.max(jnp.abs(pp - pc))) < 1e-9
    assert float(jnp.max(jnp.abs(rp.q[-1] - rc.q[-1]))) < 1e-9  # the same coordinates q = [x, y, θ]


def test_planar_dynamics_round_trip_and_derivatives():
    """RNEA(ABA(τ)) = τ to 1e-10 relative; the JVP of the dynamics against central differences
    (step 1e-6: truncation about 1e-10 relative) to 1e-7."""
    m = planar_model((0.0, 1.0, 0.0))
    q, v, tau = jnp.array([0.3, -0.2, 0.7, 0.4]), jnp.array([0.5, -0.3, 0.8, 0.2]), jnp.array([1e3, -2e3, 5e2, 1e2])
    a = forward_dynamics(m, q, v, tau)
    assert float(jnp.max(jnp.abs(inverse_dynamics(m, q, v, a) - tau))) < 1e-10 * 2e3
    f = lambda q: forward_dynamics(m, q, v, tau)
    dq = jnp.array([0.1, 0.2, -0.3, 0.1])
    _, t = jax.jvp(f, (q,), (dq,))
    fd = (f(q + 1e-6 * dq) - f(q - 1e-6 * dq)) / 2e-6
    assert float(jnp.max(jnp.abs(t - fd)) / jnp.max(jnp.abs(fd))) < 1e-7


def test_urdf_planar_joint():
    xml = """<robot name="r"><link name="base"/><link name="hull"><inertial><mass value="2"/>
    <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="p" type="planar"><parent link="base"/><child link="hull"/><axis xyz="0 1 0"/></joint></robot>"""
    m = mbd.load_urdf(None, xml=xml)
    assert m.joints[1] == mbd.Planar((0.0, 1.0, 0.0)) and m.nq == 3


def test_pto_damps_a_heaving_mass_like_the_closed_form():
    """m ẍ = −k x − c ẋ from x0 = 0.1 m: x(t) = e^{−ζω t}(x0 cos ω_d t + x0 ζω/ω_d sin ω_d t) to 1e-8 m;
    the PTO is the only force on the mass, so the energy it takes, ∫ power dt, is the kinetic energy the
    mass loses (its spring's stored energy included), to 1e-6 of the initial energy (trapezoid on 1 ms
    samples)."""
    mass, k, c = 1.0e3, 4.0e4, 2.0e3
    b = ModelBuilder()
    b.add_body("float", body=Body(mass), joint=mbd.Prismatic((0.0, 0.0, 1.0)), joint_name="slide")
    model = b.build()
    import equinox as eqx

    model = eqx.tree_at(lambda m: m.gravity, model, jnp.zeros(3))
    pto = JointPTO(name="pto", joint="slide", stiffness=jnp.asarray(k), damping=jnp.asarray(c))
    res = simulate(System(model, (pto,)), 5.0, q0=jnp.array([0.1]), integrator=Integrator("tsit5", rtol=1e-12, atol=1e-12),
                   save_dt=0.001)
    t = np.asarray(res.time)
    wn, zeta = math.sqrt(k / mass), c / (2 * math.sqrt(k * mass))
    wd = wn * math.sqrt(1 - zeta**2)
    x = np.exp(-zeta * wn * t) * (0.1 * np.cos(wd * t) + 0.1 * zeta * wn / wd * np.sin(wd * t))
    assert np.max(np.abs(np.asarray(res.q[:, 0]) - x)) < 1e-8
    p = np.asarray(res.outputs["pto/power"])
    from scipy.integrate import simpson

    absorbed = simpson(p, x=t)
    kinetic = 0.5 * mass * np.asarray(res.v[:, 0]) ** 2
    assert abs(absorbed - (kinetic[0] - kinetic[-1])) < 1e-6 * 0.5 * k * 0.1**2
    np.testing.assert_allclose(res.outputs["pto/force"], -k * res.q[:, 0] - c * res.v[:, 0], rtol=0, atol=1e-9)


def test_pto_force_limit_and_joint_check():
    b = ModelBuilder()
    b.add_body("float", body=Body(1.0e3), joint=mbd.Prismatic((0.0, 0.0, 1.0)), joint_name="slide")
    b.add_body("free", body=Body(1.0e3), joint=mbd.Free())
    model = b.build()
    pto = JointPTO(name="pto", joint="slide", damping=jnp.asarray(1e6), force_limit=jnp.asarray(5e3))
    system = System(model, (pto,))
    ctx = system.context(0.0, model.neutral(), jnp.zeros(model.nv).at[0].set(1.0))
    assert float(pto.outputs(ctx, None)["force"]) == -5e3
    bad = JointPTO(name="pto", joint="free", damping=jnp.asarray(1.0))
    with pytest.raises(ValueError, match="one-coordinate joint"):
        bad.contribution(ctx, None)


PLANAR_PTO_FILE = """
name = "float_on_spar"
[[bodies]]
name = "spar"
joint = "planar"
axis = [0, 1, 0]
mass = 1000.0
radii_of_gyration = [2.0, 2.0, 1.0]
q0 = [0.0, 0.0, 0.05]

[[bodies]]
name = "float"
parent = "spar"
joint = "prismatic"
joint_name = "slide"
axis = [0, 0, 1]
mass = 500.0
radii_of_gyration = [1.0, 1.0, 1.0]
q0 = [0.2]

[[forces]]
kind = "pto"
name = "pto"
joint = "slide"
stiffness = 1.0e4
damping = 2.0e3
force_limit = 1.0e5

[simulation]
duration = 0.1
save_dt = 0.05
method = "rk4"
dt = 0.05
"""


def test_planar_joint_and_pto_from_a_system_file(tmp_path):
    from jaxmbd.io.system_file import SystemFileError, load_system

    (tmp_path / "s.toml").write_text(PLANAR_PTO_FILE)
    loaded = load_system(tmp_path / "s.toml")
    assert loaded.model.joints[0] == mbd.Planar((0.0, 1.0, 0.0))
    np.testing.assert_allclose(loaded.q0, [0.0, 0.0, 0.05, 0.2])
    res = loaded.run()
    np.testing.assert_allclose(res.outputs["pto/force"][0], -1.0e4 * 0.2)
    (tmp_path / "bad.toml").write_text(PLANAR_PTO_FILE.replace('joint = "slide"', 'joint = "spar"'))
    with pytest.raises(SystemFileError, match="forces\\[0\\]"):
        load_system(tmp_path / "bad.toml")
    (tmp_path / "bad2.toml").write_text(PLANAR_PTO_FILE.replace("damping = 2.0e3", "damping = -2.0e3"))
    with pytest.raises(SystemFileError, match="damping"):
        load_system(tmp_path / "bad2.toml")
