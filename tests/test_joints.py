"""Joint kinds: each compound joint equals the same motion built from revolute and
prismatic joints with massless intermediate frames, and the spherical joint equals
Pinocchio's.  Tolerance 1e-10 relative (exact recursions in float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.model import Body, ModelBuilder, Placement

RTOL = 1e-10


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


def heavy(rng):
    d = rng.uniform(0.2, 1.0, 3)
    return Body(mass=2.0, com=rng.uniform(-0.3, 0.3, 3), inertia=np.diag([d[1] + d[2], d[0] + d[2], d[0] + d[1]]))


def two_models(first, second_pair, rng):
    """Link → compound joint → tip, and the same with the compound joint split in two."""
    base = heavy(rng)
    tip = heavy(rng)
    pl = Placement.from_xyz_rpy(rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3))
    a = ModelBuilder()
    a.add_body("base", body=base, joint=mbd.Revolute((0.0, 0.6, 0.8)))
    a.add_body("tip", body=tip, joint=first, parent="base", placement=pl)
    b = ModelBuilder()
    b.add_body("base", body=base, joint=mbd.Revolute((0.0, 0.6, 0.8)))
    b.add_body("mid", body=Body(0.0), joint=second_pair[0], parent="base", placement=pl)
    b.add_body("tip", body=tip, joint=second_pair[1], parent="mid")
    return a.build(), b.build()


@pytest.mark.parametrize(
    "compound, pair",
    [
        (mbd.Universal((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), (mbd.Revolute((1.0, 0.0, 0.0)), mbd.Revolute((0.0, 0.0, 1.0)))),
        (mbd.Cylindrical((0.0, 1.0, 0.0)), (mbd.Prismatic((0.0, 1.0, 0.0)), mbd.Revolute((0.0, 1.0, 0.0)))),
    ],
)
def test_compound_joint_equals_its_parts(compound, pair):
    rng = np.random.default_rng(3)
    ma, mb = two_models(compound, pair, rng)
    q = jnp.asarray(rng.uniform(-1, 1, 3))
    v = jnp.asarray(rng.normal(size=3))
    tau = jnp.asarray(rng.normal(size=3))
    assert rel(mbd.mass_matrix(ma, q), mbd.mass_matrix(mb, q)) < RTOL
    assert rel(mbd.forward_dynamics(ma, q, v, tau), mbd.forward_dynamics(mb, q, v, tau)) < RTOL
    assert rel(mbd.forward_kinematics(ma, q)[1][-1], mbd.forward_kinematics(mb, q)[1][-1]) < RTOL


def test_spherical_joint_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(5)
    body = heavy(rng)
    b = ModelBuilder()
    b.add_body("ball", body=body, joint=mbd.Spherical(), placement=Placement(p=np.array([0.1, 0.2, 0.3])))
    model = b.build()
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelSpherical(), pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.3])), "ball")
    I = np.asarray(model.inertia[0])
    m, c, Ic = (float(x) if np.ndim(x) == 0 else np.asarray(x) for x in mbd.spatial.inertia_parts(model.inertia[0]))
    pm.appendBodyToJoint(jid, pin.Inertia(m, c, Ic), pin.SE3.Identity())
    pd = pm.createData()
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    q = jnp.asarray(quat)
    v = jnp.asarray(rng.normal(size=3))
    tau = jnp.asarray(rng.normal(size=3))
    qp = np.concatenate([quat[1:], quat[:1]])
    a = mbd.forward_dynamics(model, q, v, tau)
    ap = pin.aba(pm, pd, qp, np.asarray(v), np.asarray(tau))
    assert rel(a, ap) < RTOL
    assert I.shape == (6, 6)


def test_free_joint_qdot_is_body_velocity_in_world():
    q = jnp.array([1.0, 2.0, 3.0, np.cos(0.3), 0.0, 0.0, np.sin(0.3)])  # yaw 0.6 rad
    v = jnp.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.5])
    qd = mbd.Free().qdot(q, v)
    np.testing.assert_allclose(qd[:3], [np.cos(0.6), np.sin(0.6), 0.0], rtol=1e-14, atol=1e-14)
    # q̇ = ½ q ⊗ (0, ω): for a pure yaw quaternion, q̇_w = −½ sin(0.3) 0.5
    np.testing.assert_allclose(qd[3], -0.25 * np.sin(0.3), rtol=1e-14)
