"""Waves: spectra normalisation, realisations, spreading, phase convention."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.signal

import jaxmbd  # noqa: F401  (float64)
from jaxmbd.hydro import waves as W

# Fine grid for independent quadratures (scipy Simpson on 600k points; the JONSWAP tail beyond
# 60 rad/s holds < 1e-9 of m0 for the periods used here).
OMEGA_FINE = np.linspace(1e-3, 60.0, 600_001)


def _m0(spec, lo=1e-3, hi=60.0):
    w = OMEGA_FINE[(OMEGA_FINE >= lo) & (OMEGA_FINE <= hi)]
    return scipy.integrate.simpson(np.asarray(jax.jit(lambda s, x: s.density(x))(spec, w)), x=w)


_realise = jax.jit(W.realise, static_argnames=(
    "n_frequencies", "omega_min", "omega_max", "n_directions", "mean_direction", "spreading",
    "random_frequencies", "random_directions", "water_depth", "g"))


@pytest.mark.parametrize("gamma", [1.0, 2.0, 3.3, 7.0])
def test_spectrum_hs(gamma):
    # 4 sqrt(m0) = Hs to 1e-3, with m0 integrated independently by adaptive quadrature.
    spec = W.JONSWAP(hs=3.0, tp=9.0, gamma=gamma)
    m0 = _m0(spec)
    assert abs(4.0 * np.sqrt(m0) - 3.0) < 1e-3 * 3.0


def test_pierson_moskowitz_is_jonswap_gamma_one_and_peaks_at_tp():
    pm = W.PiersonMoskowitz(2.0, 10.0)
    w = jnp.linspace(0.2, 3.0, 2801)
    s = pm.density(w)
    assert abs(float(w[jnp.argmax(s)]) - 2 * np.pi / 10.0) < 2e-3
    np.testing.assert_allclose(s, W.JONSWAP(2.0, 10.0, gamma=1.0).density(w), rtol=1e-12)
    # Cibicik et al. (2019)'s closed-form factor 0.2053 for gamma = 3.3 is within ~1 % of the numeric one.
    c = float(W.JONSWAP(1.0, 1.0).normalisation()) * 5 / 16
    assert abs(c - 0.2053) / 0.2053 < 0.01


def test_long_realisation_hs_and_welch():
    # One 3-hour record (10,800 s), 2000 random-frequency bins; 4 sqrt(var) within 3 % of Hs and the
    # Welch spectrum within 10 % of the target over the peak region (statistical tolerance: with
    # 64 Welch segments the relative standard error of each estimate is about 1/sqrt(64) = 12 %
    # per bin, so we compare the average over the +-15 % band around the peak, about 40 bins).
    hs, tp = 2.5, 8.0
    spec = W.JONSWAP(hs, tp)
    comp = _realise(spec, jax.random.key(3), n_frequencies=2000, omega_min=0.2, omega_max=4.0)
    dt = 0.5
    t = jnp.arange(0.0, 10800.0, dt)
    zeta = np.asarray(jax.jit(lambda tt: W.elevation(comp, 0.0, 0.0, tt))(t))
    assert abs(4.0 * zeta.std() - hs) / hs < 0.03
    f, pxx = scipy.signal.welch(zeta, fs=1 / dt, nperseg=2048)
    omega = 2 * np.pi * f
    s_welch = pxx / (2 * np.pi)  # one-sided per Hz -> per rad/s
    wp = 2 * np.pi / tp
    band = (omega > 0.85 * wp) & (omega < 1.15 * wp)
    target = np.asarray(spec.density(omega[band]))
    assert abs(s_welch[band].mean() / target.mean() - 1.0) < 0.10


def test_realise_is_pure_in_key_and_vmaps():
    spec = W.JONSWAP(2.0, 8.0)
    kw = dict(n_frequencies=64, omega_min=0.3, omega_max=2.5, n_directions=3)
    a = _realise(spec, jax.random.key(0), **kw)
    b = _realise(spec, jax.random.key(0), **kw)
    c = _realise(spec, jax.random.key(1), **kw)
    np.testing.assert_array_equal(a.phase, b.phase)
    assert not np.allclose(a.phase, c.phase)
    batch = jax.jit(jax.vmap(lambda k: W.realise(spec, k, **kw)))(jax.random.split(jax.random.key(0), 5))
    np.testing.assert_allclose(batch.phase[0], _realise(spec, jax.random.split(jax.random.key(0), 5)[0], **kw).phase)
    assert batch.amplitude.shape == (5, 64 * 3)
    # Bins: each frequency inside its own bin.
    d = (2.5 - 0.3) / 64
    idx = (np.asarray(a.omega[::3]) - 0.3) // d
    np.testing.assert_array_equal(idx, np.arange(64))
    # Bin centres when not random.
    centres = _realise(spec, jax.random.key(0), random_frequencies=False, **kw)
    np.testing.assert_allclose(centres.omega[::3], 0.3 + d * (np.arange(64) + 0.5))


def test_energy_and_directional_spreading_recovered():
    # Energy per direction from the components = spreading weights; weights sum to 1 and follow
    # (2/pi) cos^2 (Cibicik et al. 2019 eq. 3) at the bin centres to 1e-12 (deterministic directions).
    spec = W.JONSWAP(3.0, 10.0)
    m = 12
    comp = _realise(spec, jax.random.key(5), n_frequencies=300, omega_min=0.1, omega_max=4.0,
                     n_directions=m, mean_direction=0.3, spreading=1, random_directions=False)
    a2 = np.asarray(comp.amplitude).reshape(300, m) ** 2
    theta = np.asarray(comp.direction[:m])
    share = a2.sum(axis=0) / a2.sum()
    expected = (2 / np.pi) * np.cos(theta - 0.3) ** 2 * (np.pi / m)
    np.testing.assert_allclose(share, expected / expected.sum(), rtol=1e-10)
    assert abs(expected.sum() - 1.0) < 0.01  # the midpoint rule of the continuous D is already ~1
    # Total energy: sum a^2/2 = m0 of the spectrum over the band, to 1 %.
    m0 = _m0(spec, 0.1, 4.0)
    assert abs(0.5 * a2.sum() / m0 - 1.0) < 0.01
    # The continuous spreading function integrates to 1 for several s.
    th = np.linspace(0.7 - np.pi, 0.7 + np.pi, 200_001)
    for s in (1, 2, 5):
        val = scipy.integrate.simpson(np.asarray(W.spreading_function(th, 0.7, s)), x=th)
        assert abs(val - 1.0) < 1e-8
    assert float(W.spreading_function(0.3 + 1.7, 0.3)) == 0.0


def test_phase_convention_and_complex_amplitudes():
    # zeta = Re sum A_j exp(i(k x' - w t)), A_j = a_j exp(-i phi_j); checked at random points.
    comp = _realise(W.JONSWAP(2.0, 8.0), jax.random.key(2), n_frequencies=20, omega_min=0.3, omega_max=2.0,
                     n_directions=4)
    rng = np.random.default_rng(0)
    x, y, t = rng.normal(size=(3, 7)) * np.array([[50.0], [50.0], [20.0]])
    A = np.asarray(W.complex_amplitudes(comp))
    xp = x[:, None] * np.cos(comp.direction) + y[:, None] * np.sin(comp.direction)
    ref = np.real(np.sum(A * np.exp(1j * (comp.wavenumber * xp - comp.omega * t[:, None])), axis=1))
    np.testing.assert_allclose(jax.jit(W.elevation)(comp, x, y, t), ref, atol=1e-12)
    # Regular wave: crest at the origin at t = 0 for phase 0, travelling along beta.
    reg = W.RegularWave(2.0, 10.0, direction=np.pi / 2).components()
    assert float(W.elevation(reg, 0.0, 0.0, 0.0)) == pytest.approx(1.0)
    k = float(reg.wavenumber[0])
    # After a quarter period the crest has moved a quarter wavelength along +y.
    assert float(W.elevation(reg, 0.0, np.pi / (2 * k), 2.5)) == pytest.approx(1.0)


def test_finite_depth_dispersion():
    w = jnp.array([0.0, 0.2, 0.8, 2.0])
    for h in (5.0, 30.0, 200.0):
        k = W.wavenumber(w, h)
        np.testing.assert_allclose(9.81 * k * jnp.tanh(k * h), w**2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(W.wavenumber(w, 1e4)[1:], w[1:] ** 2 / 9.81, rtol=1e-12)
    # Differentiable through the Newton iteration: dk/dh < 0 in shallow water.
    assert float(jax.grad(lambda h: W.wavenumber(0.5, h))(5.0)) < 0


def test_spectrum_gradient():
    # m0 = Hs^2/16 analytically, so d(m0)/dHs = Hs/8 through the numeric normalisation.
    def m0(hs):
        w = jnp.linspace(0.05, 12.0, 20001)
        return jnp.trapezoid(W.JONSWAP(hs, 8.0).density(w), w)
    assert float(jax.grad(m0)(2.0)) == pytest.approx(2.0 / 8.0, rel=1e-4)
