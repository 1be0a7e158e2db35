"""Every wave spectrum's moments against its published parameters, and Torsethaugen's two-peaked sea against
DNV-RP-C205's formulas written out here (Torsethaugen and Haver 2004, as DNV-RP-C205 (2010) 3.5.6 gives them)."""

import math

import jax
import numpy as np
import pytest
from scipy import integrate

import jaxmbd
from jaxmbd.hydro.sea import SeaState
from jaxmbd.hydro.spectra import Torsethaugen
from jaxmbd.hydro.waves import JONSWAP, OchiHubble, PiersonMoskowitz
from jaxmbd.io.system_file import SystemFileError

# ω from 0.01 to 10⁴ rad/s, log-spaced: the ω⁻⁴ and ω⁻⁵ tails of m2 hold below 1e-6 of it beyond
W = np.logspace(-2, 4, 600001)


def buoy(name: str) -> str:
    """The head of a small system file: a 1 t buoy on a vertical slide, to hang a [waves] table under."""
    return (f'name = "{name}"\n[[bodies]]\nname = "buoy"\njoint = "prismatic"\naxis = [0, 0, 1]\nmass = 1000.0\n'
            "radii_of_gyration = [1.0, 1.0, 1.0]\n")


def moment(spectrum, n):
    return float(np.trapezoid(np.asarray(spectrum.density(W)) * W**n, W))


@pytest.mark.parametrize("gamma", [1.0, 2.0, 3.3, 5.0, 7.0])
def test_jonswap_moments_against_dnv_period_ratios(gamma):
    """4√m0 = Hs (1e-6: the quadrature); Tz = 2π√(m0/m2) and T1 = 2π m0/m1 against DNV-RP-C205's fits in γ
    (3.5.5.4; the fits' own error is below 0.3 % here: 1 %)."""
    j = JONSWAP(2.0, 10.0, gamma)
    m0, m1, m2 = (moment(j, n) for n in range(3))
    assert 4 * math.sqrt(m0) == pytest.approx(2.0, rel=1e-6)
    tz = 0.6673 + 0.05037 * gamma - 0.006230 * gamma**2 + 0.0003341 * gamma**3
    t1 = 0.7303 + 0.04936 * gamma - 0.006556 * gamma**2 + 0.0003610 * gamma**3
    assert 2 * math.pi * math.sqrt(m0 / m2) == pytest.approx(10.0 * tz, rel=0.01)
    assert 2 * math.pi * m0 / m1 == pytest.approx(10.0 * t1, rel=0.01)


def test_pierson_moskowitz_and_ochi_hubble_moments_in_closed_form():
    """m_n = Σ H_j²/16 ω_j^n c_j^(n/4) Γ(λ_j − n/4)/Γ(λ_j), c = (4λ + 1)/4 (λ = 1: Pierson-Moskowitz), n = 0, 1, 2:
    1e-6 (the quadrature)."""
    for spectrum, parts in ((PiersonMoskowitz(2.0, 10.0), [[2.0, 10.0, 1.0]]),
                            (OchiHubble([[3.0, 7.0, 2.7], [2.0, 15.0, 6.5]]), [[3.0, 7.0, 2.7], [2.0, 15.0, 6.5]])):
        for n in range(3):
            exact = sum(h * h / 16 * (2 * math.pi / t) ** n * ((4 * lam + 1) / 4) ** (n / 4) * math.gamma(lam - n / 4) / math.gamma(lam)
                        for h, t, lam in parts)
            assert moment(spectrum, n) == pytest.approx(exact, rel=1e-6), (spectrum, n)


def dnv_parts(hs, tp, g=9.81):
    """(H, T, γ) of the primary and secondary peaks, DNV-RP-C205 3.5.6 line by line."""
    tf, tl, tu = 6.6 * hs ** (1 / 3), 2.0 * hs**0.5, 25.0
    if tp <= tf:  # wind dominated
        eps = (tf - tp) / (tf - tl)
        r = 0.7 + 0.3 * math.exp(-((2.0 * eps) ** 2))
        h1, h2 = r * hs, math.sqrt(1 - r * r) * hs
        return [(h1, tp, max(35.0 * (2 * math.pi * h1 / (g * tp**2)) ** 0.857, 1.0)), (h2, tf + 2.0, 1.0)]
    eps = (tp - tf) / (tu - tf)  # swell dominated
    r = 0.6 + 0.4 * math.exp(-((eps / 0.3) ** 2))
    h1, h2 = r * hs, math.sqrt(1 - r * r) * hs
    gamma = max(35.0 * (2 * math.pi * hs / (g * tf**2)) ** 0.857 * (1 + 6 * eps), 1.0)
    return [(h1, tp, gamma), (h2, 6.6 * h2 ** (1 / 3), 1.0)]


def part_density(omega, h, t, gamma):
    """One peak, normalised here by adaptive quadrature to hold h²/16."""
    def shape(x):
        sigma = 0.07 if x <= 1 else 0.09
        return x**-4 * math.exp(-(x**-4)) * gamma ** math.exp(-((x - 1) ** 2) / (2 * sigma**2))

    area = sum(integrate.quad(shape, a, b, epsabs=0, epsrel=1e-12, limit=200)[0] for a, b in ((0.05, 1.0), (1.0, 3.0), (3.0, np.inf)))
    return np.array([h * h / 16 * t / (2 * math.pi) * shape(w * t / (2 * math.pi)) / area for w in omega])


@pytest.mark.parametrize("hs, tp", [(4.0, 8.0), (4.0, 16.0), (1.0, 3.0), (6.0, 12.0), (2.5, 20.0)])
def test_torsethaugen_is_dnv_rp_c205s_two_peaks(hs, tp):
    """Wind-dominated (Tp ≤ 6.6 Hs^⅓) and swell-dominated seas: the two peaks' H, T, γ are the standard's (1e-12), the
    density their sum (1e-8 of its largest value), and 4√m0 = Hs (1e-6: the quadrature)."""
    t = Torsethaugen(hs, tp)
    want = dnv_parts(hs, tp)
    got = [np.asarray(a) for a in t.parts()]
    np.testing.assert_allclose(np.transpose(got), want, rtol=1e-12)
    omega = np.linspace(0.05, 4.0, 397)
    ref = sum(part_density(omega, *p) for p in want)
    np.testing.assert_allclose(np.asarray(t.density(omega)), ref, rtol=0, atol=1e-8 * ref.max())
    assert 4 * math.sqrt(moment(t, 0)) == pytest.approx(hs, rel=1e-6)


def test_torsethaugen_at_the_fully_developed_sea_is_one_closed_form_peak():
    """At Tp = Tf = 6.6 s for Hs = 1 m the swell's share is nil and γ falls to 1: one peak x⁻⁴ exp(−x⁻⁴), whose
    moments are m_n = Hs²/16 (2π/Tp)^n Γ((3 − n)/4)/Γ(3/4) (1e-6); the density is continuous across Tf (the two
    branches meet: 1e-9), its normalisation at γ = 1 is 4/Γ(3/4) (1e-9), and the standard's closed form G₀ A_γ stays
    within 3.6 % of it over 1 ≤ γ ≤ 7 (3.56 % at γ = 2.47)."""
    tf = 6.6
    t = Torsethaugen(1.0, tf)
    for n in range(3):
        exact = 1 / 16 * (2 * math.pi / tf) ** n * math.gamma((3 - n) / 4) / math.gamma(0.75)
        # beyond the grid's last ω the ω⁻⁴ tail, S → 1/16 N(1) (2π/Tp)³ ω⁻⁴, adds to m2 its closed form
        tail = 1 / 16 * 4 / math.gamma(0.75) * (2 * math.pi / tf) ** 3 / W[-1] if n == 2 else 0.0
        assert moment(t, n) + tail == pytest.approx(exact, rel=1e-6), n
    omega = np.linspace(0.1, 3.0, 300)
    below, above = (np.asarray(Torsethaugen(1.0, tf * (1 + s)).density(omega)) for s in (-1e-12, 1e-12))
    np.testing.assert_allclose(below, above, rtol=0, atol=1e-9 * below.max())
    assert float(Torsethaugen.normalisation(1.0)) == pytest.approx(4 / math.gamma(0.75), rel=1e-9)
    for gamma in np.linspace(1.0, 7.0, 25):
        closed = 3.26 * (1 + 1.1 * math.log(gamma) ** 1.19) / gamma
        assert closed == pytest.approx(float(Torsethaugen.normalisation(gamma)), rel=0.036)


def test_a_realised_torsethaugen_sea_has_both_peaks_and_its_hs(tmp_path):
    """A swell-dominated sea (Hs 4 m, Tp 16 s: swell at 16 s, wind sea at 9.4 s) realised on 600 fixed
    frequencies: the squared amplitudes over 2Δω are the density (1e-12), its two local maxima lie at the
    spectrum's within a bin (the swell's at 16 s), and the modelled Hs is Hs times the band's share of the energy (1e-3)."""
    sea = SeaState(spectrum=Torsethaugen(4.0, 16.0), n_frequencies=600, omega_min=0.2, omega_max=2.5, random_frequencies=False)
    c = sea.realise(jax.random.key(0))
    omega, a = np.asarray(c.omega), np.asarray(c.amplitude)
    dw = omega[1] - omega[0]
    s = a**2 / (2 * dw)
    np.testing.assert_allclose(s, np.asarray(sea.spectrum.density(omega)), rtol=1e-12)
    def maxima(x, y):
        return [x[k] for k in range(1, len(y) - 1) if y[k] > y[k - 1] and y[k] > y[k + 1]]

    fine = np.linspace(0.2, 2.5, 200001)
    want = maxima(fine, np.asarray(sea.spectrum.density(fine)))  # the sum's two maxima (each part's tail shifts the other's)
    got = maxima(omega, s)
    assert len(want) == len(got) == 2 and np.all(np.abs(np.subtract(got, want)) <= dw)
    assert 2 * math.pi / got[0] == pytest.approx(16.0, rel=0.01) and 2 * math.pi / got[1] < 11.0  # swell, then wind sea
    assert sea.modelled_hs() == pytest.approx(4.0 * math.sqrt(sea.energy_fraction()), rel=1e-3)


def test_torsethaugen_in_a_file_a_sweep_and_an_override(tmp_path):
    """``type = "torsethaugen"``: read, swept and overridden in Hs and Tp like a JONSWAP sea (the override's
    spectrum is Torsethaugen's at the new Hs and Tp, 1e-12); a Tp outside [2 √Hs, 25] s is one line, in the file, in a
    sweep's grid and in an override."""
    from jaxmbd.run import with_sea_state

    text = buoy("north_sea") + """
[waves]
type = "torsethaugen"
hs = 4.0
tp = 16.0
[simulation]
duration = 10.0
method = "rk4"
dt = 0.1
[sweep]
hs = [1.0, 2.0]
tp = [8.0, 12.0]
"""
    path = tmp_path / "t.toml"
    path.write_text(text)
    loaded = jaxmbd.load_system(path)
    assert isinstance(loaded.system.waves.spectrum, Torsethaugen) and loaded.sweep is not None
    other = with_sea_state(loaded.system, hs=3.0, tp=9.0).waves.spectrum
    omega = np.linspace(0.2, 2.5, 50)
    np.testing.assert_allclose(np.asarray(other.density(omega)), np.asarray(Torsethaugen(3.0, 9.0).density(omega)), rtol=1e-12)
    from jaxmbd.run import RunError

    with pytest.raises(RunError, match=r"a Torsethaugen sea needs a peak period within Torsethaugen's range .* got 2"):
        with_sea_state(loaded.system, hs=3.0, tp=2.0)  # below 2 √3 = 3.46 s: outside the fitted model, not clamped
    path.write_text(text.replace("tp = [8.0, 12.0]", "tp = [2.5, 12.0]"))
    with pytest.raises(SystemFileError, match=r"sweep.tp: expected a peak period within Torsethaugen's range .* for Hs 2 m; got 2.5"):
        jaxmbd.load_system(path)
    path.write_text(text.replace("tp = 16.0", "tp = 3.0"))
    with pytest.raises(SystemFileError, match=r"waves.tp: expected a peak period within Torsethaugen's range .* \[4, 25\] s "
                                              r"for Hs 4 m; got 3") as err:
        jaxmbd.load_system(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("sigma_deg", [10.0, 30.0, 60.0])
def test_the_wrapped_normal_spreading(tmp_path, sigma_deg):
    """D(θ) of a normal distribution σ wrapped round the circle: ∫ D dθ = 1 and ∫ D cos(θ − θ̄) dθ = exp(−σ²/2), its
    mean resultant length (trapezoidal rule on 200,001 points: 1e-9); a realisation's directions span θ̄ ± π; in a file
    ``spreading_sigma_deg`` sets σ, and a cos²ˢ exponent beside it is one line."""
    from jaxmbd.hydro.waves import spreading_function

    sigma = math.radians(sigma_deg)
    theta = np.linspace(-np.pi, np.pi, 200001) + 0.4
    d = np.asarray(spreading_function(theta, 0.4, sigma, "wrapped_normal"))
    assert float(np.trapezoid(d, theta)) == pytest.approx(1.0, abs=1e-9)
    assert float(np.trapezoid(d * np.cos(theta - 0.4), theta)) == pytest.approx(math.exp(-0.5 * sigma**2), abs=1e-9)
    sea = SeaState(spectrum=JONSWAP(2.0, 8.0), n_frequencies=4, n_directions=12, spreading=sigma, spreading_kind="wrapped_normal",
                   random_frequencies=False, mean_direction=0.4)
    dirs = np.asarray(sea.realise(jax.random.key(0)).direction)[:12]
    np.testing.assert_allclose(dirs, 0.4 - np.pi + 2 * np.pi / 12 * (np.arange(12) + 0.5), atol=1e-12)
    text = buoy("spread") + f"""
[waves]
type = "jonswap"
hs = 2.0
tp = 8.0
n_directions = 9
spreading_kind = "wrapped_normal"
spreading_sigma_deg = {sigma_deg}
[simulation]
duration = 10.0
method = "rk4"
dt = 0.1
"""
    path = tmp_path / "w.toml"
    path.write_text(text)
    waves = jaxmbd.load_system(path).system.waves
    assert waves.spreading == pytest.approx(sigma) and waves.spreading_kind == "wrapped_normal"
    path.write_text(text.replace("n_directions = 9", "n_directions = 9\nspreading = 2.0"))
    with pytest.raises(SystemFileError, match=r"waves.spreading: .*the wrapped normal takes spreading_sigma_deg"):
        jaxmbd.load_system(path)
