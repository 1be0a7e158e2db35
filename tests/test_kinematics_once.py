"""One right-hand side computes the tree's kinematics once: the force elements, the forward dynamics
and the joint wrenches all read the same :class:`jaxmbd.kinematics.Kinematics`."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd import examples, joints
from jaxmbd.dynamics import DynamicsOptions, forward_dynamics, inverse_dynamics, joint_wrenches, mass_matrix
from jaxmbd.dynamics.reference import aba
from jaxmbd.forces import SpringDamper
from jaxmbd.kinematics import Kinematics
from jaxmbd.system import System


@pytest.fixture
def placements(monkeypatch):
    """Counts the joint placements computed while a function is traced."""
    calls = []
    for cls in {c for c in vars(joints).values() if isinstance(c, type) and "placed_transform" in vars(c)}:
        original = vars(cls)["placed_transform"]

        def counted(self, R0, p0, q, _original=original):
            calls.append(type(self).__name__)
            return _original(self, R0, p0, q)

        monkeypatch.setattr(cls, "placed_transform", counted)
    return calls


def _chain_system():
    model = examples.chain(4)
    spring = SpringDamper(name="spring", body_a="world", point_a=jnp.zeros(3), body_b=model.body_names[-1],
                          point_b=jnp.asarray([0.5, 0.0, 0.0]), stiffness=jnp.asarray(10.0), damping=jnp.asarray(1.0),
                          rest_length=jnp.asarray(0.0))
    return System(model, (spring,), report_joints=(model.joint_names[1],)), jnp.asarray(np.linspace(0.1, 0.4, model.nq))


def _floating_crane():
    system, q0 = examples.floating_crane()
    return system, q0


@pytest.mark.parametrize("make", [_chain_system, _floating_crane], ids=["chain", "floating_crane"])
def test_a_right_hand_side_places_every_joint_once(make, placements):
    """Before the shared kinematics the context and the ABA each placed every joint (2 n per
    right-hand side); the outputs with joint wrenches placed them twice again."""
    system, q0 = make()
    model = system.model
    y = (q0, jnp.full(model.nv, 0.1), system.initial_states(q0, jnp.zeros(model.nv)))
    placements.clear()  # building the system placed the bodies too
    jax.make_jaxpr(lambda y: system.rhs(0.0, y))(y)
    assert len(placements) == model.n_bodies, placements
    placements.clear()
    jax.make_jaxpr(lambda y: system.outputs(0.0, y))(y)
    assert len(placements) == model.n_bodies, placements


@pytest.mark.parametrize("options", [pytest.param(DynamicsOptions(), marks=pytest.mark.slow),  # 13 s
                                     DynamicsOptions(dense_max_nv=0)], ids=["dense rule", "recursion"])
def test_dynamics_given_the_kinematics_equal_the_dynamics_without(options):
    """Values and JVPs to 1e-12 (the same arithmetic: only where the placements come from changes)."""
    model = examples.crane_vessel()
    rng = np.random.default_rng(3)
    q = jnp.asarray(rng.normal(size=model.nq)) * 0.3
    q = model.normalise(q)
    v, tau = (jnp.asarray(rng.normal(size=model.nv)) for _ in range(2))
    f_ext = jnp.asarray(rng.normal(size=(model.n_bodies, 6)))
    dq, dv = jnp.asarray(rng.normal(size=model.nq)), jnp.asarray(rng.normal(size=model.nv))

    def with_kin(q, v):
        return forward_dynamics(model, q, v, tau, f_ext, options=options, kinematics=Kinematics.compute(model, q, v))

    def without(q, v):
        return forward_dynamics(model, q, v, tau, f_ext, options=options)

    a, da = jax.jvp(with_kin, (q, v), (dq, dv))
    b, db = jax.jvp(without, (q, v), (dq, dv))
    scale = float(jnp.max(jnp.abs(b)))
    assert float(jnp.max(jnp.abs(a - b))) <= 1e-12 * scale
    assert float(jnp.max(jnp.abs(da - db))) <= 1e-12 * float(jnp.max(jnp.abs(db)))
    kin = Kinematics.compute(model, q, v)
    np.testing.assert_allclose(aba(model, q, v, tau, f_ext, kinematics=kin), b, rtol=0, atol=1e-12 * scale)
    vdot = b
    np.testing.assert_allclose(inverse_dynamics(model, q, v, vdot, f_ext, kinematics=kin), inverse_dynamics(model, q, v, vdot, f_ext),
                               rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(tau))))
    np.testing.assert_allclose(mass_matrix(model, q, kinematics=kin), mass_matrix(model, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(joint_wrenches(model, q, v, vdot, f_ext, kinematics=kin), joint_wrenches(model, q, v, vdot, f_ext),
                               rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(f_ext))) * 10)


def test_qdot_from_the_kinematics_equals_the_joints_own():
    """A free joint's q̇ = [R_J v_lin; q̇_quat] with R_J read from the placed joint of the kinematics (R0ᵀ (R0 R_J))
    equals the joint's own, placement rotated and quaternion unnormalised, in value and derivative (roundoff)."""
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.spatial import rot_x, rot_z

    b = ModelBuilder()
    body = Body(2.0, (0.1, 0.2, 0.3), np.diag([1.0, 2.0, 3.0]))
    b.add_body("hull", body=body, joint=joints.Free(), placement=Placement(R=np.asarray(rot_z(0.4) @ rot_x(0.3)), p=np.array([1.0, 2.0, 3.0])))
    b.add_body("arm", body=body, joint=joints.Revolute((0.0, 1.0, 0.0)), parent="hull")
    model = b.build()
    q = jnp.asarray([0.3, -0.2, 0.5, 0.9, 0.2, -0.3, 0.25, 0.7])  # |quaternion| ≠ 1
    v = jnp.asarray([0.1, -0.4, 0.2, 0.3, -0.1, 0.5, 0.6])

    def with_kin(q):
        return model.qdot(q, v, Kinematics.compute(model, q, v))

    np.testing.assert_allclose(with_kin(q), model.qdot(q, v), rtol=0, atol=1e-15)
    np.testing.assert_allclose(jax.jacfwd(with_kin)(q), jax.jacfwd(lambda q: model.qdot(q, v))(q), rtol=0, atol=1e-14)


def test_the_bodies_rows_carry_the_stacks_values_and_derivatives(monkeypatch):
    """Elements read a body's rotation, origin and twist from its own row of the kinematics (``Kinematics.rows``,
    so that reverse mode sums their cotangents before the stack); the right-hand side and its reverse-mode
    derivative are those of the stacked arrays' slices to roundoff (1e-12 relative: the same numbers, summed
    in another order), on the floating crane (hull, mooring, crane, ropes)."""
    system, q0 = examples.floating_crane()
    model = system.model
    y = (q0, jnp.full(model.nv, 0.05), system.initial_states(q0, jnp.zeros(model.nv)))

    def value_and_vjp(y):
        dy, vjp = jax.vjp(lambda y: system.rhs(0.3, y), y)
        return dy, vjp(jax.tree_util.tree_map(lambda a: jnp.cos(jnp.arange(a.size, dtype=a.dtype)).reshape(a.shape), dy))

    rows = jax.jit(lambda y: value_and_vjp(y))(y)  # a new function each: traced again, not taken from the cache
    compute = Kinematics.compute.__func__
    monkeypatch.setattr(Kinematics, "compute", classmethod(lambda cls, *a: compute(cls, *a)._replace(rows=None)))
    stacks = jax.jit(lambda y: value_and_vjp(y))(y)
    for a, b in zip(jax.tree_util.tree_leaves(rows), jax.tree_util.tree_leaves(stacks)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.max(np.abs(b)) + 1e-300))
