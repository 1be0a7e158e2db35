"""Conservation, analytic periods, gradients, jit/vmap and float32 for the rigid kernel."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.examples import crane_vessel, four_link, simple_pendulum
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System


@pytest.mark.slow  # 11 s; the four-link study's smoke checks energy to 1e-8 in the default suite
def test_four_link_energy_is_conserved():
    """Tolerance 1e-8 of the largest kinetic energy: Dopri8 at rtol = atol = 1e-12 keeps the
    local error near 1e-12 per step, a few thousand steps over 20 s."""
    model = four_link()
    sys = System(model)
    q0 = jnp.array([0.3, -0.2, 0.5, 0.1])
    res = simulate(sys, 20.0, save_dt=0.01, q0=q0,
                   integrator=Integrator("dopri8", rtol=1e-12, atol=1e-12, max_steps=200_000))
    E = np.array([float(mbd.total_energy(model, q, v)) for q, v in zip(res.q[::20], res.v[::20])])
    KE = np.array([float(mbd.kinetic_energy(model, q, v)) for q, v in zip(res.q[::20], res.v[::20])])
    drift = np.max(np.abs(E - E[0])) / np.max(KE)
    assert drift < 1e-8, drift


def test_small_angle_pendulum_period():
    """Tolerance 1e-6 relative: θ0 = 1e-4 rad changes the period by θ0²/16 ≈ 6e-10 from
    2π√(l/g); crossings are located by cubic interpolation of states saved every 1 ms."""
    l, g = 1.0, 9.81
    model = simple_pendulum(l)
    res = simulate(System(model), 20.0, save_dt=1e-3, q0=jnp.array([1e-4]),
                   integrator=Integrator("dopri8", rtol=1e-12, atol=1e-14, max_steps=100_000))
    th, om = res.q[:, 0], res.v[:, 0]
    t = res.time
    k = np.where((th[:-1] > 0) & (th[1:] <= 0))[0]
    crossings = []
    for i in k:
        # Hermite cubic through the two samples (values and derivatives)
        h = t[i + 1] - t[i]
        p = np.polynomial.Polynomial
        s = p([0, 1])
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
        cub = h00 * th[i] + h10 * h * om[i] + h01 * th[i + 1] + h11 * h * om[i + 1]
        r = [x.real for x in cub.roots() if abs(x.imag) < 1e-12 and -1e-9 <= x.real <= 1 + 1e-9]
        crossings.append(t[i] + h * r[0])
    T = np.mean(np.diff(crossings))
    assert abs(T / (2 * np.pi * np.sqrt(l / g)) - 1) < 1e-6


def _scalar(model, q, v, tau):
    a = mbd.forward_dynamics(model, q, v, tau)
    return jnp.sum(a * jnp.arange(1, a.size + 1))


def test_gradients_match_finite_differences():
    """Central differences with h = 1e-6 have truncation ~h² |f'''| ≈ 1e-12 and rounding
    ~1e-16/h ≈ 1e-10 relative; 1e-6 relative leaves a wide margin for both."""
    model = four_link()
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.uniform(-1, 1, 4))
    v = jnp.asarray(rng.normal(size=4))
    tau = jnp.asarray(rng.normal(size=4))

    def fd(f, x, h=1e-6):
        x = np.asarray(x, dtype=float)
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = h
            g[idx] = (f(jnp.asarray(x + e)) - f(jnp.asarray(x - e))) / (2 * h)
        return g

    def check(f, x):
        f = jax.jit(f)  # one program for the differences and one for the gradient (op by op: hundreds of compiles)
        ga = np.asarray(jax.jit(jax.grad(f))(x))
        gn = fd(f, x)
        assert np.max(np.abs(ga - gn)) <= 1e-6 * max(1.0, np.max(np.abs(gn))), (ga, gn)

    check(lambda x: _scalar(model, x, v, tau), q)
    check(lambda x: _scalar(model, q, x, tau), v)
    scale_mass = lambda s: eqx.tree_at(lambda m: m.inertia, model, model.inertia * s[:, None, None])
    check(lambda s: _scalar(scale_mass(s), q, v, tau), jnp.ones(4))
    with_p = lambda p: eqx.tree_at(lambda m: m.placement_p, model, p)
    check(lambda p: _scalar(with_p(p), q, v, tau), model.placement_p)


def test_jit_vmap_and_float32():
    """float32 forward dynamics of the crane-vessel model agrees with float64 to 1e-3
    relative (single precision with condition number of M around 1e3)."""
    model = crane_vessel()
    rng = np.random.default_rng(1)
    qs = np.tile(np.asarray(model.neutral()), (8, 1))
    qs[:, 7:] = rng.uniform(-0.5, 0.5, (8, model.nq - 7))
    vs = rng.normal(size=(8, model.nv)) * 0.1
    taus = np.zeros((8, model.nv))
    f = jax.jit(jax.vmap(lambda q, v, t: mbd.forward_dynamics(model, q, v, t)))
    a64 = np.asarray(f(qs, vs, taus))
    single = np.stack([np.asarray(mbd.forward_dynamics(model, jnp.asarray(q), jnp.asarray(v), jnp.asarray(t)))
                       for q, v, t in zip(qs, vs, taus)])
    np.testing.assert_allclose(a64, single, rtol=1e-12, atol=1e-12)
    m32 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if eqx.is_inexact_array(x) else x, model)
    f32 = jax.jit(jax.vmap(lambda q, v, t: mbd.forward_dynamics(m32, q, v, t)))
    a32 = np.asarray(f32(qs.astype(np.float32), vs.astype(np.float32), taus.astype(np.float32)))
    assert a32.dtype == np.float32
    err = np.max(np.abs(a32 - a64)) / np.max(np.abs(a64))
    assert err < 1e-3, err


def test_deep_chain_float32():
    """chain(100) on the scanned path (one frame for the whole run): float32 v̇ agrees with float64 to
    1e-3 of its largest entry over 16 random states.  Measured 1.1e-4 at worst over 64 states: float32's
    6e-8 grown by a 100-body recursion whose inertias carry lever arms of up to 25 m against 0.5 m links."""
    from jaxmbd.dynamics import DEFAULT_OPTIONS
    from jaxmbd.dynamics.tree import segments
    from jaxmbd.examples import chain

    model = chain(100)
    assert [e - s for s, e in segments(model, DEFAULT_OPTIONS)] == [100]
    rng = np.random.default_rng(5)
    qs = rng.uniform(-np.pi, np.pi, (16, model.nq))
    vs, taus = rng.normal(size=(2, 16, model.nv))
    f = jax.jit(jax.vmap(mbd.forward_dynamics, (None, 0, 0, 0)))
    a64 = np.asarray(f(model, qs, vs, taus))
    m32 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if eqx.is_inexact_array(x) else x, model)
    a32 = np.asarray(f(m32, *(x.astype(np.float32) for x in (qs, vs, taus))))
    assert a32.dtype == np.float32
    err = np.max(np.abs(a32 - a64), axis=1) / np.max(np.abs(a64), axis=1)
    assert err.max() < 1e-3, err.max()
