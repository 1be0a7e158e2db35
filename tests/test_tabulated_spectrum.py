"""Seas beyond JONSWAP: a tabulated wave spectrum (a buoy's, a hindcast's, a two-peaked sea): a JONSWAP written as a table gives the
JONSWAP's realisations (their amplitudes to the table's linear interpolation, 1e-3 on a fine table; the same
random phases, the same key), its Hs and Tp are the table's, a two-peaked table realises both peaks, and what a
table cannot be (a sweep over Hs, a bad row) is refused in one line."""

import jax
import numpy as np
import pytest
from test_spectra import buoy

import jaxmbd
from jaxmbd.hydro.sea import SeaState
from jaxmbd.hydro.waves import JONSWAP, TabulatedSpectrum
from jaxmbd.io.system_file import SystemFileError


def test_a_jonswap_written_as_a_table_realises_as_the_jonswap():
    j = JONSWAP(2.0, 8.0)
    omega = np.linspace(0.1, 4.0, 4000)
    table = TabulatedSpectrum(omega, np.asarray(j.density(omega)))
    assert float(table.hs) == pytest.approx(2.0, rel=1e-3)  # the table holds all but the tails beyond 0.1-4 rad/s
    assert float(table.tp) == pytest.approx(8.0, rel=1e-3)
    key = jax.random.key(7)
    a, b = (SeaState(spectrum=s, n_frequencies=60).realise(key) for s in (j, table))
    np.testing.assert_array_equal(a.phase, b.phase)
    # the far tail, e^{-1/ω⁴} interpolated linearly, to the largest amplitude's 1e-6
    np.testing.assert_allclose(b.amplitude, a.amplitude, rtol=1e-3, atol=1e-6 * float(np.max(a.amplitude)))


def test_two_peaks_and_the_files_form(tmp_path):
    """Wind sea (Tp 6 s) and swell (Tp 14 s) as one table: the modelled Hs is the two's in quadrature (1 %:
    the band's discretisation); an Hs override, a bad row and a sweep are refused in one line."""
    omega = np.linspace(0.2, 2.5, 400)
    sea, swell = JONSWAP(2.0, 6.0), JONSWAP(1.5, 14.0, gamma=5.0)
    density = np.asarray(sea.density(omega)) + np.asarray(swell.density(omega))
    text = buoy("two_peaks") + f"""
[waves]
type = "tabulated"
omega = {omega.tolist()}
density = {density.tolist()}
n_frequencies = 200
[simulation]
duration = 10.0
method = "rk4"
dt = 0.1
"""
    path = tmp_path / "two.toml"
    path.write_text(text)
    loaded = jaxmbd.load_system(path)
    waves = loaded.system.waves
    assert waves.modelled_hs() == pytest.approx(float(np.hypot(2.0, 1.5)), rel=0.01)
    assert float(waves.spectrum.tp) == pytest.approx(14.0, rel=0.02)  # the swell's peak is the higher
    from jaxmbd.run import RunError, with_sea_state

    with pytest.raises(RunError, match="a tabulated or two-peaked wave spectrum has the Hs and Tp of its table"):
        with_sea_state(loaded.system, hs=1.0)
    assert float(with_sea_state(loaded.system, heading=0.5).waves.mean_direction) == 0.5
    for bad, field, message in (("omega = [", "waves.omega", "increasing"), ("density = [", "waves.density", ">= 0")):
        broken = text.replace(bad, bad + ("-1.0, " if "omega" in bad else "-1.0, "))
        path.write_text(broken)
        with pytest.raises(SystemFileError, match=rf"{field}: expected .*{message}"):
            jaxmbd.load_system(path)
    path.write_text(text + '\n[sweep]\nhs = [1.0]\ntp = [8.0]\n')
    with pytest.raises(SystemFileError, match=r"sweep: a sea-state sweep needs \[waves\] with type = 'jonswap'"):
        jaxmbd.load_system(path)


def test_ochi_hubble_is_exact_where_a_closed_form_exists(tmp_path):
    """Ochi-Hubble's two parts: with λ = 1 a part is the Pierson-Moskowitz spectrum (1e-12 of its peak); the
    spectrum holds (H₁² + H₂²)/16 (trapezoidal rule on 400,001 points to 30 rad/s: 1e-9); in a file, its
    realisations' modelled Hs is the parts' in quadrature within the band's share (the run's own figure), and a
    part that is not positive is one line."""
    from jaxmbd.hydro.waves import OchiHubble, PiersonMoskowitz

    w = np.linspace(0.01, 30.0, 400001)
    pm = np.asarray(PiersonMoskowitz(2.0, 8.0).density(w))
    one = np.asarray(OchiHubble([[2.0, 8.0, 1.0], [1e-300, 14.0, 1.0]]).density(w))
    np.testing.assert_allclose(one, pm, rtol=0, atol=1e-12 * pm.max())
    two = OchiHubble([[3.0, 7.0, 2.7], [2.0, 15.0, 6.5]])
    assert float(np.trapezoid(np.asarray(two.density(w)), w)) == pytest.approx((9.0 + 4.0) / 16.0, rel=1e-9)
    assert float(two.hs) == pytest.approx(np.hypot(3.0, 2.0)) and float(two.tp) == 7.0
    text = buoy("north_atlantic") + """
[waves]
type = "ochi_hubble"
parts = [[3.0, 7.0, 2.7], [2.0, 15.0, 6.5]]
n_frequencies = 300
omega_min = 0.2
omega_max = 3.0
[simulation]
duration = 10.0
method = "rk4"
dt = 0.1
"""
    path = tmp_path / "oh.toml"
    path.write_text(text)
    waves = jaxmbd.load_system(path).system.waves
    assert waves.modelled_hs() == pytest.approx(np.hypot(3.0, 2.0) * np.sqrt(waves.energy_fraction()), rel=0.01)
    path.write_text(text.replace("[2.0, 15.0, 6.5]", "[2.0, -15.0, 6.5]"))
    with pytest.raises(SystemFileError, match=r"waves.parts: expected rows of \[Hs \(m\), Tp \(s\), λ\], every one > 0"):
        jaxmbd.load_system(path)


@pytest.mark.parametrize("s", [1.0, 2.5, 10.0])
def test_both_spreading_functions_hold_the_seas_energy(s):
    """cos^{2s}(θ − θ̄) over the half plane and cos^{2s}((θ − θ̄)/2) over the whole circle each integrate to 1
    (trapezoidal rule on 200,001 points: 1e-9); a short-crested realisation of the full form spans θ̄ ± π and its
    weights are D(θ_j) renormalised; an unknown kind is one line."""
    from jaxmbd.hydro.waves import spreading_function

    theta = np.linspace(-np.pi, np.pi, 200001)
    for kind in ("cos2s", "cos2s_full"):
        assert float(np.trapezoid(np.asarray(spreading_function(theta, 0.3, s, kind)), theta)) == pytest.approx(1.0, abs=1e-9)
    sea = SeaState(spectrum=JONSWAP(2.0, 8.0), n_frequencies=4, n_directions=12, spreading=s, spreading_kind="cos2s_full",
                   random_frequencies=False, mean_direction=0.3)
    c = sea.realise(jax.random.key(1))
    dirs = np.asarray(c.direction)[:12]
    np.testing.assert_allclose(dirs, 0.3 - np.pi + 2 * np.pi / 12 * (np.arange(12) + 0.5), atol=1e-12)
    d = np.asarray(spreading_function(dirs, 0.3, s, "cos2s_full"))
    a2 = np.asarray(c.amplitude).reshape(4, 12) ** 2
    np.testing.assert_allclose(a2 / a2.sum(axis=1, keepdims=True), np.tile(d / d.sum(), (4, 1)), rtol=1e-12)
    with pytest.raises(ValueError, match="spreading_kind must be one of cos2s, cos2s_full"):
        SeaState(spectrum=JONSWAP(2.0, 8.0), spreading_kind="cos4s")


def test_a_directional_table_realises_its_own_spreading(tmp_path):
    """S(ω, θ) tabulated every 5° from a JONSWAP with full-circle cos⁴ spreading about 0.5 rad realises as that sea
    does (the same key: the same phases; amplitudes to 2e-3 of the largest, the table's linear interpolation in ω and
    θ); its Hs and Tp are the table's (1e-3); in a file, `directions_deg` with rows of S(ω, θ) reads the same, and a
    directional table with one direction, or rows of the wrong length, is one line each."""
    from jaxmbd.hydro.waves import spreading_function

    j = JONSWAP(2.0, 8.0)
    omega = np.linspace(0.1, 4.0, 2000)
    theta = np.radians(np.arange(0.0, 360.0, 5.0))
    d = np.asarray(spreading_function(theta, 0.5, 2.0, "cos2s_full"))
    table = np.asarray(j.density(omega))[:, None] * d[None, :]
    spec = TabulatedSpectrum(omega, table, theta)
    assert float(spec.hs) == pytest.approx(2.0, rel=1e-3) and float(spec.tp) == pytest.approx(8.0, rel=2e-3)
    kw = dict(n_frequencies=40, n_directions=24, omega_min=0.3, omega_max=2.5, mean_direction=0.5, random_frequencies=False)
    a = SeaState(spectrum=j, spreading=2.0, spreading_kind="cos2s_full", **kw).realise(jax.random.key(3))
    b = SeaState(spectrum=spec, **kw).realise(jax.random.key(3))
    np.testing.assert_array_equal(a.phase, b.phase)
    np.testing.assert_allclose(b.direction, a.direction, atol=1e-12)
    np.testing.assert_allclose(b.amplitude, a.amplitude, rtol=0, atol=2e-3 * float(np.max(a.amplitude)))
    rows = ",\n".join("[" + ", ".join(f"{x:.10g}" for x in row) + "]" for row in table[::20])
    text = buoy("directional") + f"""
[waves]
type = "tabulated"
omega = {omega[::20].tolist()}
directions_deg = {np.degrees(theta).tolist()}
density = [{rows}]
n_frequencies = 40
n_directions = 24
[simulation]
duration = 10.0
method = "rk4"
dt = 0.1
"""
    path = tmp_path / "dir.toml"
    path.write_text(text)
    waves = jaxmbd.load_system(path).system.waves
    assert waves.spectrum.directions.shape == (72,) and waves.headings().max() - waves.headings().min() == pytest.approx(2 * np.pi)
    path.write_text(text.replace("n_directions = 24", "n_directions = 1"))
    with pytest.raises(SystemFileError, match=r"waves.n_directions: .*give n_directions > 1"):
        jaxmbd.load_system(path)
    path.write_text(text.replace(f"directions_deg = {np.degrees(theta).tolist()}", f"directions_deg = {np.degrees(theta[:-1]).tolist()}"))
    with pytest.raises(SystemFileError, match=r"waves.density: expected rows of S\(ω, θ\)"):
        jaxmbd.load_system(path)
