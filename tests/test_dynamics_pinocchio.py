"""The rigid-body algorithms against Pinocchio on random URDF trees.

Tolerance 1e-10 relative: both sides are float64 implementations of exact
recursions, so the only difference is rounding (a few hundred flops per entry,
condition numbers of M below 1e4 for these trees).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from urdf_trees import random_urdf

pin = pytest.importorskip("pinocchio")

RTOL = 1e-10


class PinMap:
    """Maps jaxmbd's q, v to Pinocchio's, joint by joint, by name."""

    def __init__(self, model, pmodel):
        self.model, self.pmodel = model, pmodel
        self.moving = [i for i, j in enumerate(model.joints) if j.nv]

    def q(self, q):
        qp = np.zeros(self.pmodel.nq)
        for i in self.moving:
            jn = self.model.joint_names[i]
            jid = self.pmodel.getJointId(jn)
            jm = self.pmodel.joints[jid]
            qi = np.asarray(q[self.model.q_slice(jn)])
            if jm.nq == 7:  # free flyer: quaternion scalar last in Pinocchio
                qi = np.concatenate([qi[:3], qi[4:7], qi[3:4]])
            elif jm.nq == 2 and jm.nv == 1:  # unbounded revolute: (cos, sin)
                qi = np.array([np.cos(qi[0]), np.sin(qi[0])])
            qp[jm.idx_q : jm.idx_q + jm.nq] = qi
        return qp

    def v(self, v):
        vp = np.zeros(self.pmodel.nv)
        for i in self.moving:
            jn = self.model.joint_names[i]
            jm = self.pmodel.joints[self.pmodel.getJointId(jn)]
            vp[jm.idx_v : jm.idx_v + jm.nv] = np.asarray(v[self.model.v_slice(jn)])
        return vp

    def perm(self):
        """Indices p with ours[k] = pin[p[k]] for v-sized vectors."""
        p = np.zeros(self.model.nv, dtype=int)
        for i in self.moving:
            jn = self.model.joint_names[i]
            jm = self.pmodel.joints[self.pmodel.getJointId(jn)]
            p[self.model.v_slice(jn)] = np.arange(jm.idx_v, jm.idx_v + jm.nv)
        return p


def random_state(model, rng):
    q = np.asarray(model.neutral(), dtype=float).copy()
    for i, j in enumerate(model.joints):
        s = slice(model.q_start[i], model.q_start[i] + j.nq)
        if isinstance(j, mbd.Free):
            quat = rng.normal(size=4)
            q[s] = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
        elif j.nq:
            q[s] = rng.uniform(-2, 2, j.nq)
    return jnp.asarray(q), jnp.asarray(rng.normal(size=model.nv)), jnp.asarray(rng.normal(size=model.nv))


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_algorithms_match_pinocchio_on_random_trees(seed, floating):
    rng = np.random.default_rng(seed)
    xml = random_urdf(rng, n_links=9)
    model = mbd.load_urdf(None, xml=xml, floating=floating)
    pmodel = (
        pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(xml)
    )
    pdata = pmodel.createData()
    pm = PinMap(model, pmodel)
    perm = pm.perm()
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        fext = np.zeros((model.n_bodies, 6))
        pfext = [pin.Force.Zero() for _ in range(pmodel.njoints)]
        for i in pm.moving:
            w = rng.normal(size=6)
            fext[i] = w
            pfext[pmodel.getJointId(model.joint_names[i])] = pin.Force(w)
        qp, vp, taup = pm.q(q), pm.v(v), pm.v(tau)

        M = mbd.mass_matrix(model, q)
        Mp = pin.crba(pmodel, pdata, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert rel(M, Mp[np.ix_(perm, perm)]) < RTOL

        a = mbd.forward_dynamics(model, q, v, tau, jnp.asarray(fext))
        ap = pin.aba(pmodel, pdata, qp, vp, taup, pfext)
        assert rel(a, ap[perm]) < RTOL

        t = mbd.inverse_dynamics(model, q, v, a, jnp.asarray(fext))
        tp = pin.rnea(pmodel, pdata, qp, vp, pm.v(a), pfext)
        assert rel(t, tp[perm]) < RTOL
        assert rel(t, tau) < RTOL

        W = mbd.joint_wrenches(model, q, v, a, jnp.asarray(fext))
        for i in pm.moving:
            jid = pmodel.getJointId(model.joint_names[i])
            assert rel(W[i], pdata.f[jid].vector) < RTOL


def test_algorithms_agree_with_each_other():
    """ABA = CRBA + Cholesky = velocity-transformation route; RNEA(ABA(τ)) = τ, all to 1e-10."""
    rng = np.random.default_rng(11)
    model = mbd.load_urdf(None, xml=random_urdf(rng, n_links=10), floating=True)
    q, v, tau = random_state(model, rng)
    M = mbd.mass_matrix(model, q)
    Mvt = mbd.mass_matrix_velocity_transformation(model, q)
    assert rel(Mvt, M) < RTOL
    h = mbd.nonlinear_effects(model, q, v)
    a_crba = jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), tau - h)
    a_aba = mbd.forward_dynamics(model, q, v, tau)
    assert rel(a_aba, a_crba) < RTOL
    assert rel(mbd.inverse_dynamics(model, q, v, a_aba), tau) < RTOL


@pytest.mark.slow  # implied by the contract test (scanned runs = reference) and the Pinocchio test above
@pytest.mark.parametrize("floating", [False, True])
def test_scanned_serial_runs_match_pinocchio(floating):
    """ABA with every serial run of two or more 1-DOF joints walked by ``lax.scan`` (the deep-chain
    path) against Pinocchio, same trees and tolerance as above."""
    from jaxmbd.dynamics.options import ALL_RUNS_SCANNED
    from jaxmbd.dynamics.tree import segments

    n_runs = 0
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        xml = random_urdf(rng, n_links=12)
        model = mbd.load_urdf(None, xml=xml, floating=floating)
        n_runs += sum(e - s > 1 for s, e in segments(model, ALL_RUNS_SCANNED))
        pmodel = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(xml)
        pdata = pmodel.createData()
        pm = PinMap(model, pmodel)
        q, v, tau = random_state(model, rng)
        fext = rng.normal(size=(model.n_bodies, 6))
        pfext = [pin.Force.Zero() for _ in range(pmodel.njoints)]
        for i in pm.moving:
            pfext[pmodel.getJointId(model.joint_names[i])] = pin.Force(fext[i])
        fext[[i for i in range(model.n_bodies) if i not in pm.moving]] = 0.0
        a = mbd.forward_dynamics(model, q, v, tau, jnp.asarray(fext), options=ALL_RUNS_SCANNED)
        ap = pin.aba(pmodel, pdata, pm.q(q), pm.v(v), pm.v(tau), pfext)
        assert rel(a, ap[pm.perm()]) < RTOL
    assert n_runs >= 3  # the trees do contain scanned runs


@pytest.mark.parametrize("floating", [False, True])
def test_gravity_torques_equal_rnea_at_rest(floating):
    """``gravity_torques`` (subtree weights from world placements) = RNEA(q, 0, 0) to 1e-10 on random trees."""
    for seed in range(3):
        rng = np.random.default_rng(200 + seed)
        model = mbd.load_urdf(None, xml=random_urdf(rng, n_links=10), floating=floating)
        q, _, _ = random_state(model, rng)
        z = jnp.zeros(model.nv)
        assert rel(mbd.dynamics.gravity_torques(model, q), mbd.inverse_dynamics(model, q, z, z)) < RTOL


def test_free_bodies_solved_together():
    """Every free body's 6x6 solve in one batched elimination (a vessel, a free-floating cargo and a
    free body below the vessel, which the batch takes as well: a = IA⁻¹ u whatever the parent), against
    the mass-matrix route (M = Σ Jᵀ I J, Cholesky), an independent algorithm: 1e-10 relative
    (rounding of two different eliminations of the same 24 x 24 system)."""
    from jaxmbd.dynamics import DEFAULT_OPTIONS, articulated, dense
    from jaxmbd.examples import rod
    from jaxmbd.joints import Fixed, Free, Revolute
    from jaxmbd.model import Body, ModelBuilder, Placement

    b = ModelBuilder(source="two vessels")
    b.add_body("barge", body=Body(mass=2e6, com=(1.0, 0.0, -2.0), inertia=np.array([2e8, 9e8, 9e8])), joint=Free())
    b.add_body("crane", body=rod(5e4, 10.0, axis=2, radius=1.0), joint=Fixed(), parent="barge",
               placement=Placement(p=np.array([20.0, 0.0, 3.0])))
    b.add_body("boom", body=rod(2e4, 30.0), joint=Revolute((0.0, 1.0, 0.0)), parent="crane",
               placement=Placement(p=np.array([0.0, 0.0, 5.0])))
    b.add_body("cargo", body=Body(mass=1e5, com=(0.0, 0.0, 0.0), inertia=np.array([1e6, 2e6, 2e6])), joint=Free())
    b.add_body("buoy", body=Body(mass=3e3, com=(0.0, 0.0, 0.2), inertia=np.array([5e3, 5e3, 8e3])), joint=Free(),
               parent="barge", placement=Placement(p=np.array([-30.0, 5.0, 0.0])))
    model = b.build()
    frees = [i for i, j in enumerate(model.joints) if isinstance(j, Free)]
    assert len(frees) == 3
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        fext = jnp.asarray(rng.normal(size=(model.n_bodies, 6)) * 1e4)
        A = rng.normal(size=(model.n_bodies, 6, 6))
        extra = jnp.asarray(np.einsum("nij,nkj->nik", A, A) * 1e3)
        aba = articulated.forward_dynamics(model, jnp.asarray(q), jnp.asarray(v), tau, fext, extra, DEFAULT_OPTIONS)
        a_dense, _ = dense.dense_solve(model, jnp.asarray(q), jnp.asarray(v), tau, fext, extra)
        assert rel(aba, a_dense) < 1e-10, rel(aba, a_dense)
