"""A free-floating box barge in the time domain against linear frequency-domain theory.

The same BEM data (the cached Capytaine run of a 20 x 10 x 2 m box) feed both
sides: the time domain through A(∞), the fitted radiation state space, the
excitation RAO and the buoyancy stiffness; the frequency domain through A(ω),
B(ω), F̂(ω) and C.  Differences come from the radiation fit (2 % on K(t)) and
from the transient left after 300 s (the excitation ramps up over the first 60 s).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces import LinearMooring
from jaxmbd.hydro import WaveComponents, rao, read_capytaine, test_barge_path, wavenumber
from jaxmbd.hydro.body import HydroBody
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, simulate, solve, initial_state
from jaxmbd.system import System

MASS = 1025.0 * 400.0
INERTIA = np.diag([MASS * 3.5**2, MASS * 5.0**2, MASS * 5.2**2])


@pytest.fixture(scope="module")
def barge():
    hd = read_capytaine(test_barge_path())
    b = ModelBuilder(source="barge")
    b.add_body("barge", body=Body(MASS, (0, 0, 0), INERTIA), joint=mbd.Free())
    model = b.build()
    return model, hd, HydroBody.create(model, hd, bodies=("barge",), ramp_time=60.0)


AMP = 0.05  # wave amplitude (m): steepness below 1/100 at every frequency tested, the linear regime


def regular(omega, beta, amplitude=AMP):
    w = jnp.atleast_1d(omega)
    return WaveComponents(amplitude=jnp.full(1, amplitude), omega=w, wavenumber=wavenumber(w), direction=jnp.full(1, beta),
                          phase=jnp.zeros(1))


def steady_amplitude(ts, x, omega, window=30.0):
    """Complex amplitude X with x ≈ Re(X e^{−iωt}) over the last ``window`` seconds (least squares;
    a fixed window, so that the fit is a smooth function of ω)."""
    late = ts > ts[-1] - window
    w = late.astype(x.dtype)
    c, s = jnp.cos(omega * ts), jnp.sin(omega * ts)
    G = jnp.array([[jnp.sum(w * c * c), jnp.sum(w * c * s)], [jnp.sum(w * c * s), jnp.sum(w * s * s)]])
    r = jnp.array([jnp.sum(w * c * x), jnp.sum(w * s * x)])
    a, b = jnp.linalg.solve(G, r)
    return a + 1j * b


def test_rao_matches_frequency_domain(barge):
    """Heave and pitch in head seas (β = 0), roll in beam seas (β = 90°), at six BEM frequencies
    across the heave and roll resonances (1.33 and 1.25 rad/s): amplitude within 2 %, phase within 5°."""
    model, hd, hb = barge
    sys = System(model, (hb,), name="barge")
    idx = [5, 10, 13, 14, 15, 20]  # ω = 0.58, 0.88, 1.15, 1.23, 1.31, 1.71 rad/s
    omegas = np.asarray(hd.omega)[idx]
    ts = np.arange(0.0, 300.0 + 1e-9, 0.05)
    y0 = initial_state(sys)
    integ = Integrator("rk4", dt=0.05)

    def run(omega, beta):
        ys = solve(sys, y0, ts, integrator=integ, waves=regular(omega, beta)).ys
        eta = jax.vmap(lambda t, q, v, z: sys.outputs(t, (q, v, z))["hydro/eta"])(ts, *ys)
        return jax.vmap(lambda x: steady_amplitude(ts, x, omega), in_axes=1)(eta) / AMP

    batch = jax.jit(jax.vmap(run))
    Xh = np.asarray(batch(jnp.asarray(omegas), jnp.zeros(len(idx))))
    Xb = np.asarray(batch(jnp.asarray(omegas), jnp.full(len(idx), np.pi / 2)))
    M = np.zeros((6, 6))
    M[:3, :3] = MASS * np.eye(3)
    M[3:, 3:] = INERTIA
    Rh = np.asarray(rao(hd, M, wave_direction=0.0))[idx]
    Rb = np.asarray(rao(hd, M, wave_direction=np.pi / 2))[idx]
    for X, R, dof in ((Xh, Rh, 2), (Xh, Rh, 4), (Xb, Rb, 3)):
        amp = np.abs(X[:, dof]) / np.abs(R[:, dof])
        assert np.all(np.abs(amp - 1) < 0.02), (dof, amp)
        dphi = np.degrees(np.angle(X[:, dof] / R[:, dof]))
        assert np.all(np.abs(dphi) < 5), (dof, dphi)


def test_free_heave_decay_period(barge):
    """Damped heave period from a 0.1 m drop within 2 % of 2π/ω_n with ω_n² = C33/(m + A33(ω_n))."""
    model, hd, hb = barge
    sys = System(model, (hb,), name="barge")
    q0 = model.neutral().at[2].set(0.1)
    res = simulate(sys, 40.0, save_dt=0.02, q0=q0, integrator=Integrator("tsit5", rtol=1e-8, atol=1e-8))
    z = res.q[:, 2]
    k = np.where((z[:-1] > 0) & (z[1:] <= 0))[0]
    tc = res.time[k] - z[k] * (res.time[k + 1] - res.time[k]) / (z[k + 1] - z[k])
    T = np.mean(np.diff(tc[:3]))
    w = 1.3
    for _ in range(50):
        A33 = np.interp(w, np.asarray(hd.omega), np.asarray(hd.added_mass[:, 2, 2]))
        w = np.sqrt(float(hd.hydrostatic_stiffness[2, 2]) / (MASS + A33))
    assert abs(T / (2 * np.pi / w) - 1) < 0.02, (T, 2 * np.pi / w)


@pytest.mark.slow  # 19 s; gradients through the solver stay in the default suite (tests/test_dynamics.py)
def test_heave_amplitude_gradients(barge):
    """d|X_heave|/dT and d|X_heave|/dk_moor by reverse mode through the solver against central
    differences (relative step 1e-4): within 1e-4 relative (the fixed step makes the map smooth)."""
    model, hd, hb = barge
    ts = np.arange(0.0, 150.0 + 1e-9, 0.05)
    integ = Integrator("rk4", dt=0.05)

    def amplitude(period, k_moor):
        moor = LinearMooring(name="moor", body="barge", point=jnp.zeros(3), reference=jnp.zeros(3),
                             stiffness=jnp.diag(jnp.array([1e4, 1e4, 0.0, 0.0, 0.0, 0.0]) + jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0]) * k_moor),
                             damping=jnp.zeros((6, 6)))
        sys = System(model, (hb, moor), name="moored_barge")
        omega = 2 * jnp.pi / period
        ys = solve(sys, initial_state(sys), ts, integrator=integ, waves=regular(omega, 0.0)).ys
        return jnp.abs(steady_amplitude(ts, ys[0][:, 2], omega)) / AMP

    f = jax.jit(amplitude)
    g = jax.jit(jax.grad(amplitude, argnums=(0, 1)))
    x = (6.0, 3e5)
    ga = g(*x)
    for i in range(2):
        h = 1e-4 * x[i]
        xp, xm = list(x), list(x)
        xp[i] += h
        xm[i] -= h
        gn = (f(*xp) - f(*xm)) / (2 * h)
        assert abs(ga[i] / gn - 1) < 1e-4, (i, ga[i], gn)


@pytest.mark.slow  # 11 s; the excitation stays in the default suite through the RAO against the frequency domain
def test_tabulated_excitation_equals_direct_evaluation(barge, monkeypatch):
    """Fixed-step RK4 looks the wave excitation up in a per-run table (phasors by blocks); the table
    equals the direct sum Σ Re(c_j e^{iω_j t}) to 1e-12 of its largest value (products of unit
    phasors: rounding only), and a 60 s irregular-sea run agrees with the untabulated one to 1e-9."""
    model, hd, hb = barge
    sea = mbd.hydro.SeaState(spectrum=mbd.hydro.JONSWAP(2.0, 8.0), n_frequencies=50, omega_min=0.3, omega_max=2.0)
    system = System(model, (hb,), waves=sea)
    waves = sea.realise(jax.random.key(3))
    prepared = system.prepare(waves)["hydro"]
    h, n = 0.025, 2403
    table = hb.tabulate(prepared, 1.5, h, n)
    ts = 1.5 + h * np.arange(n + 1)
    direct = jax.vmap(lambda t: hb.excitation_force(t, prepared))(jnp.asarray(ts))
    looked_up = jax.vmap(lambda t: hb.excitation_force(t, table))(jnp.asarray(ts))
    assert table.values.shape == (n + 1, 7)  # the six loads and the incident elevation at the origin
    assert np.max(np.abs(looked_up - direct)) < 1e-12 * np.max(np.abs(direct))
    zeta_direct = jax.vmap(lambda t: hb.wave_elevation(t, prepared))(jnp.asarray(ts))
    zeta_table = jax.vmap(lambda t: hb.wave_elevation(t, table))(jnp.asarray(ts))
    assert np.max(np.abs(zeta_table - zeta_direct)) < 1e-12 * np.max(np.abs(zeta_direct))

    q0 = model.neutral()
    y0 = initial_state(system, q0)
    grid = np.arange(0.0, 60.01, 0.5)
    run = lambda: solve(system, y0, grid, integrator=Integrator("rk4", dt=0.05), waves=waves)[0]  # noqa: E731
    ys = run()
    monkeypatch.setattr(HydroBody, "tabulate", lambda self, p, t0, h, n: p)
    ys_direct = run()
    for a, b in zip(ys, ys_direct):
        assert np.max(np.abs(a - b)) <= 1e-9 * max(1.0, float(np.max(np.abs(b))))


def test_data_without_a_displaced_volume_take_the_mass_or_are_refused(barge):
    """Data without a volume (a Capytaine file without disp_mass, a WAMIT file without VOL) gave zero
    buoyancy while the heave stiffness stayed: the weight fell unbalanced, without a word.  Now a body
    with a known mass floats on it (buoyancy m g exactly, 1e-12), and one with neither is refused."""
    model, hd, full = barge
    no_volume = eqx.tree_at(lambda h: h.displaced_volume, hd, jnp.full(1, jnp.nan))
    with_mass = HydroBody.create(model, no_volume, bodies=("barge",), mass=MASS, radiation=False)
    np.testing.assert_allclose(float(with_mass.buoyancy_wrench[2]), MASS * float(hd.g), rtol=1e-12)
    neither = eqx.tree_at(lambda h: h.mass_matrix, no_volume, jnp.full((6, 6), jnp.nan))
    with pytest.raises(mbd.JaxmbdError, match="neither its displaced volume .* nor its mass"):
        HydroBody.create(model, neither, bodies=("barge",), radiation=False)
