"""A(∞) in the equilibrium (seakeeping) frame: the conservation laws and symmetries of the linear model.

A body with only A(∞) acting on it (no gravity, buoyancy, memory or waves) obeys
(M_RB + T(q)ᵀ A T(q)) a + T(q)ᵀ A Ṫ V + V ×* M_RB V = 0 with ν = T V the reference
point's velocity and the angular velocity in world axes.  Its exact invariants are
the energy ½ Vᵀ M_RB V + ½ νᵀ A ν and the linear momentum p_RB + (A ν)_lin; the
angular momentum about the world origin changes at the rate ṗ_ref × (A ν)_lin (the
linear model is not invariant under rotations of the body against the fixed
equilibrium frame), which vanishes for an A(∞) that no rotation changes.
Tolerances: Tsit5 at 2 ms over 100 s conserves these to about 1e-12 relative; 1e-10
leaves room for rounding on other machines.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd import spatial
from jaxmbd.hydro import HydroBody
from jaxmbd.hydro.bem import HydroData
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System

REF = (0.3, -0.2, 0.1)  # reference point in body coordinates, off the centre of mass on purpose


def synthetic_hydro(A, ref=REF):
    n = A.shape[0] // 6
    w = np.array([0.5, 1.0, 2.0])
    return HydroData(
        omega=w, added_mass=np.broadcast_to(A, (3,) + A.shape).copy(), radiation_damping=np.zeros((3,) + A.shape),
        added_mass_inf=A, excitation=np.zeros((3, 1, 6 * n), complex), wave_direction=np.zeros(1),
        hydrostatic_stiffness=np.zeros_like(A), displaced_volume=np.zeros(n), centre_of_buoyancy=np.zeros((n, 3)),
        reference_point=np.tile(np.asarray(ref, float), (n, 1)), rho=1025.0, g=9.81, water_depth=np.inf,
        body_names=tuple(f"b{k}" for k in range(n)), source="synthetic",
    )


def free_body(A, *, com=(0.1, 0.05, -0.2), gravity=False):
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3, com, np.diag([500.0, 800.0, 900.0])), joint=mbd.Free())
    model = b.build()
    if not gravity:
        model = eqx.tree_at(lambda m: m.gravity, model, jnp.zeros(3))
    hb = HydroBody.create(model, synthetic_hydro(A), radiation=False, excitation=False, added_mass_inf="file")
    return System(model, (hb,)), hb


def general_added_mass(seed=0):
    L = np.random.default_rng(seed).normal(size=(6, 6))
    return L @ L.T * 1e3 + np.diag([2e3, 3e3, 5e3, 1e3, 2e3, 1.5e3])


def invariants(system, hb, A, q, v):
    """Linear momentum, angular momentum about the world origin, energy; and the rate ṗ_ref × (Aν)_lin."""
    ctx = system.context(0.0, q, v)
    R, p, V = ctx.R[0], ctx.p[0], ctx.twist[0]
    I = system.model.inertia[0]
    h = spatial.act_force(R, p, I @ V)  # the rigid body's momentum, world axes, about the origin
    nu = hb._reference_map(ctx, 0) @ V
    An = A @ nu
    pref = ctx.point_position(0, hb.ref_body[0])
    P = h[:3] + An[:3]
    L = h[3:] + An[3:] + jnp.cross(pref, An[:3])
    E = 0.5 * V @ I @ V + 0.5 * nu @ A @ nu
    return P, L, E, jnp.cross(nu[:3], An[:3])


def run(system, v0, duration=100.0, dt=0.002, save_dt=1.0, q0=None):
    q0 = system.model.neutral() if q0 is None else q0
    return simulate(system, duration, q0=q0, v0=jnp.asarray(v0), integrator=Integrator("tsit5", dt=dt), save_dt=save_dt)


def test_free_body_keeps_linear_momentum_and_energy():
    A = general_added_mass()
    system, hb = free_body(A)
    res = run(system, [0.5, -0.2, 0.3, 0.4, -0.3, 0.6])
    P0, _, E0, _ = invariants(system, hb, A, res.q[0], res.v[0])
    P1, _, E1, _ = invariants(system, hb, A, res.q[-1], res.v[-1])
    assert float(jnp.max(jnp.abs(P1 - P0)) / jnp.max(jnp.abs(P0))) < 1e-10
    assert abs(float((E1 - E0) / E0)) < 1e-10


def test_angular_momentum_changes_only_by_the_frame_torque():
    """L(T) − L(0) = ∫ ṗ_ref × (A ν)_lin dt (trapezoidal rule on 1 ms saves: 1e-6 of the change)."""
    A = general_added_mass(1)
    system, hb = free_body(A)
    res = run(system, [0.5, -0.2, 0.3, 0.4, -0.3, 0.6], duration=20.0, dt=0.001, save_dt=0.001)
    inv = jax.vmap(lambda q, v: invariants(system, hb, A, q, v))(res.q, res.v)
    L, rate = inv[1], inv[3]
    integral = jnp.sum(0.5 * (rate[1:] + rate[:-1]) * 0.001, axis=0)
    change = L[-1] - L[0]
    assert float(jnp.max(jnp.abs(change - integral)) / jnp.max(jnp.abs(change))) < 1e-6


def test_spun_and_pushed_sphere_flies_straight():
    """A sphere's A(∞) (a 1 in translation, nothing in rotation, about its centre): linear and angular
    momentum conserved to 1e-10, and the centre moves on a straight line at constant speed."""
    A = np.diag([4e3, 4e3, 4e3, 0.0, 0.0, 0.0])
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3, (0, 0, 0), np.diag([600.0, 600.0, 600.0])), joint=mbd.Free())
    model = eqx.tree_at(lambda m: m.gravity, b.build(), jnp.zeros(3))
    hb = HydroBody.create(model, synthetic_hydro(A, ref=(0, 0, 0)), radiation=False, excitation=False,
                          added_mass_inf="file")
    system = System(model, (hb,))
    res = run(system, [1.0, 0.5, -0.2, 0.3, 1.2, -0.7])
    P0, L0, E0, _ = invariants(system, hb, A, res.q[0], res.v[0])
    P1, L1, E1, _ = invariants(system, hb, A, res.q[-1], res.v[-1])
    assert float(jnp.max(jnp.abs(P1 - P0)) / jnp.max(jnp.abs(P0))) < 1e-10
    # the centre ends 110 m from the origin, where L = r × P + h sums terms of |r| |P| = 6e5 N m s to
    # |L| = 720: relative to those terms (rounding grows with them, not with |L|)
    scale = float(jnp.linalg.norm(L0) + jnp.linalg.norm(res.q[-1, :3]) * jnp.linalg.norm(P0))
    assert float(jnp.max(jnp.abs(L1 - L0))) / scale < 1e-10
    x = res.q[:, :3]
    straight = x[0] + jnp.asarray(res.time)[:, None] * (x[1] - x[0]) / (res.time[1] - res.time[0])
    assert float(jnp.max(jnp.abs(x - straight))) < 1e-9 * 100.0  # 100 m travelled


@pytest.mark.parametrize("com", [(0.0, 0.0, -0.2), (0.0, 0.0, 0.4)])
def test_pure_heave_push_makes_no_surge_or_pitch(com):
    """A barge-like A(∞) with surge-pitch and sway-roll coupling, the centre of mass and the reference
    point on one vertical: a vertical force through them heaves the body and nothing else (1e-12 m, rad)."""
    A = np.diag([3e3, 5e3, 2e4, 4e3, 6e3, 2e3])
    A[0, 4] = A[4, 0] = 1.5e3
    A[1, 3] = A[3, 1] = -1.0e3
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3, com, np.diag([500.0, 800.0, 900.0])), joint=mbd.Free())
    model = eqx.tree_at(lambda m: m.gravity, b.build(), jnp.zeros(3))
    hb = HydroBody.create(model, synthetic_hydro(A, ref=(0, 0, 0)), radiation=False, excitation=False,
                          added_mass_inf="file")

    class Push(mbd.system.ForceElement):
        name: str = "push"

        def contribution(self, ctx, z):
            f = 1e4 * jnp.sin(2.0 * ctx.t)
            return mbd.system.Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), "b0", ctx.p[0] * 0.0,
                                                                      jnp.array([0.0, 0.0, 1.0]) * f))

    res = run(System(model, (hb, Push())), np.zeros(6), duration=30.0, dt=0.005)
    assert float(jnp.max(jnp.abs(res.q[:, 2]))) > 0.1  # it does heave
    assert float(jnp.max(jnp.abs(res.q[:, [0, 1]]))) < 1e-12
    assert float(jnp.max(jnp.abs(res.q[:, 4:7]))) < 1e-12  # quaternion vector part


def test_coupled_bodies_keep_linear_momentum_and_energy():
    """Two free bodies with A(∞) coupling blocks (the mass-matrix route): the same invariants."""
    L = np.random.default_rng(3).normal(size=(12, 12))
    A = L @ L.T * 1e3 + 5e3 * np.eye(12)
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3, (0.1, 0.0, -0.1), np.diag([500.0, 800.0, 900.0])), joint=mbd.Free())
    b.add_body("b1", body=Body(2.0e3, (0.0, 0.2, 0.1), np.diag([700.0, 600.0, 500.0])), joint=mbd.Free())
    model = eqx.tree_at(lambda m: m.gravity, b.build(), jnp.zeros(3))
    hb = HydroBody.create(model, synthetic_hydro(A), radiation=False, excitation=False, added_mass_inf="file")
    assert hb.coupled_pairs
    system = System(model, (hb,))
    v0 = jnp.array([0.5, -0.2, 0.3, 0.4, -0.3, 0.6, -0.1, 0.4, 0.2, -0.5, 0.2, 0.3])
    q0 = model.neutral().at[7].set(5.0)

    def inv(q, v):
        ctx = system.context(0.0, q, v)
        P, E = 0.0, 0.0
        nu = jnp.concatenate([hb._reference_map(ctx, k) @ ctx.twist[k] for k in range(2)])
        for k in range(2):
            I = model.inertia[k]
            P = P + spatial.act_force(ctx.R[k], ctx.p[k], I @ ctx.twist[k])[:3]
            E = E + 0.5 * ctx.twist[k] @ I @ ctx.twist[k]
        An = A @ nu
        return P + An[:3] + An[6:9], E + 0.5 * nu @ An

    res = run(system, v0, duration=50.0, q0=q0)
    (P0, E0), (P1, E1) = inv(res.q[0], res.v[0]), inv(res.q[-1], res.v[-1])
    assert float(jnp.max(jnp.abs(P1 - P0)) / jnp.max(jnp.abs(P0))) < 1e-10
    assert abs(float((E1 - E0) / E0)) < 1e-10


def test_body_to_body_false_drops_the_coupling_blocks():
    L = np.random.default_rng(4).normal(size=(12, 12))
    A = L @ L.T
    h = synthetic_hydro(A).without_body_coupling()
    assert np.all(np.asarray(h.added_mass_inf)[:6, 6:] == 0) and np.all(np.asarray(h.added_mass)[:, 6:, :6] == 0)
    assert np.array_equal(np.asarray(h.added_mass_inf)[:6, :6], A[:6, :6])
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3), joint=mbd.Free())
    b.add_body("b1", body=Body(1.0e3), joint=mbd.Free())
    model = b.build()
    hb = HydroBody.create(model, synthetic_hydro(A), radiation=False, added_mass_inf="file", body_to_body=False)
    assert hb.coupled_pairs == ()


@pytest.mark.slow  # 10 s; momentum and energy with the turning added mass stay in the default suite
def test_rhs_derivatives_with_the_turning_added_mass():
    """The right-hand side of a body with A(∞) (its inertia T(q)ᵀ A T(q) depends on q) under a child
    pendulum: forward- and reverse-mode derivatives with respect to (q, v) against central differences
    (step 1e-6, truncation about 1e-11 relative) to 1e-7; the closed-form JVP rule handles the
    configuration-dependent extra inertia."""
    A = general_added_mass(5)
    b = ModelBuilder()
    b.add_body("b0", body=Body(1.0e3, (0.1, 0.05, -0.2), np.diag([500.0, 800.0, 900.0])), joint=mbd.Free())
    b.add_body("arm", body=Body(2.0e2, (0.0, 0.0, -1.0), np.diag([20.0, 20.0, 5.0])), joint=mbd.Revolute((1, 0, 0)),
               parent="b0")
    model = b.build()
    hb = HydroBody.create(model, synthetic_hydro(A), bodies=("b0",), radiation=False, excitation=False,
                          added_mass_inf="file")
    system = System(model, (hb,))
    q = model.neutral().at[3:7].set(jnp.array([0.9, 0.2, -0.3, 0.25]) / jnp.linalg.norm(jnp.array([0.9, 0.2, -0.3, 0.25])))
    q = q.at[7].set(0.4)
    v = jnp.array([0.3, -0.2, 0.1, 0.5, -0.4, 0.2, 0.7])

    @jax.jit
    def vdot(q, v):
        return system.rhs(0.0, (q, v, jnp.zeros(0)))[1]

    dq = jnp.array([0.1, -0.2, 0.3, 0.0, 0.1, 0.2, -0.1, 0.3])
    dv = jnp.array([0.2, 0.1, -0.3, 0.4, 0.1, -0.2, 0.5])
    _, t = jax.jit(lambda q, v: jax.jvp(vdot, (q, v), (dq, dv)))(q, v)
    h = 1e-6
    fd = (vdot(q + h * dq, v + h * dv) - vdot(q - h * dq, v - h * dv)) / (2 * h)
    assert float(jnp.max(jnp.abs(t - fd)) / jnp.max(jnp.abs(fd))) < 1e-7
    w = jnp.arange(1.0, 8.0)
    gq, gv = jax.jit(jax.grad(lambda q, v: vdot(q, v) @ w, argnums=(0, 1)))(q, v)
    assert abs(float(gq @ dq + gv @ dv - t @ w)) < 1e-7 * float(jnp.abs(t @ w) + 1)
