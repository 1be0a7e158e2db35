"""Wave-drift damping (``wave_drift`` with ``damping``): Aranha's change of the drift coefficients with the body's
slow velocity through the water, against two walls whose drift is known at speed, a moored body's free decay, and
the mean drift of a body at rest in a current."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.errors import InputError
from jaxmbd.forces.pto import JointPTO
from jaxmbd.hydro import DriftTable, SeaState, WaveComponents, WaveDrift
from jaxmbd.hydro.waves import JONSWAP, Current
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, initial_state, solve
from jaxmbd.system import System

RHO, G = 1025.0, 9.81


def wall_table():
    """A long wall along the body's x axis, per metre of its length: full reflection of deep-water waves, the normal
    drift ½ ρ g sin²β (β from the wall's direction), nothing along it; headings every degree over the circle."""
    omega, heads = np.linspace(0.2, 2.0, 10), np.radians(np.arange(0.0, 360.0, 1.0))
    T = np.zeros((10, heads.size, 3))
    T[:, :, 1] = 0.5 * RHO * G * np.sin(heads)[None] ** 2 * np.sign(np.sin(heads))[None]
    return DriftTable.of(omega, heads, T)


def on_slide(axis, table, **extra):
    b = ModelBuilder(source="slide")
    b.add_body("wall", body=Body(1.0e6, (0, 0, 0), np.eye(3) * 1e6), joint=mbd.Prismatic(axis))
    drift = WaveDrift(name="drift", body="wall", table=table, damping=True, **extra)
    return System(b.build(), (drift,), name="slide")


def regular(a, w, beta, current=None):
    return WaveComponents(amplitude=jnp.array([a]), omega=jnp.array([w]), wavenumber=jnp.array([w * w / G]),
                          direction=jnp.array([beta]), phase=jnp.array([0.4]), current=current)


def drift_at(system, waves, velocity):
    q, v, z = initial_state(system)
    return np.asarray(system.outputs(0.0, (q, jnp.full_like(v, velocity), z), system.inputs(waves))["drift/force"])


def receding_wall_drift(a, w, V):
    """The drift per metre of a wall receding at V from deep-water waves (a, ω) it reflects wholly, by hand: the
    reflected wave's frequency from the wall's frame (ω_r + k_r V = ω − k V), its amplitude from the conservation of
    wave action E/ω times the group velocity relative to the wall, the force from the mean momentum flux through the
    moving wall (radiation stress E/2 of each wave, less V times the momentum density E/c)."""
    w_r = (-1 + math.sqrt(1 + 4 * V / G * (w - w * w * V / G))) / (2 * V / G)
    E = 0.5 * RHO * G * a * a
    E_r = E * (w_r / w) * (G / (2 * w) - V) / (G / (2 * w_r) + V)
    return E / 2 * (1 - 2 * w * V / G) + E_r / 2 * (1 + 2 * w_r * V / G)


def test_a_wall_receding_from_the_waves_and_a_wall_sliding_along_its_length():
    """Beam seas on a wall moving along its normal at ±0.05 m/s (ωV/g = 0.005): the drift is the hand-derived receding
    wall's (5e-4: the formula is first order in ωV/g, the exact one differs by about 10 (ωV/g)²); at rest the table's
    ½ ρ g a² (1e-12).  Waves at 60° on the wall sliding along its length at 0.05 m/s: the drift does not change (a
    smooth wall moving along itself does not disturb potential flow): within 1e-5 of it, where the speed term alone
    would change it by 1 % (the heading term cancels it, to the table's central difference)."""
    a, w = 1.5, 1.0
    beam = on_slide((0, 1, 0), wall_table())
    at_rest = drift_at(beam, regular(a, w, np.pi / 2), 0.0)
    assert at_rest[1] == pytest.approx(0.5 * RHO * G * a * a, rel=1e-12)
    for V in (0.05, -0.05):
        got = drift_at(beam, regular(a, w, np.pi / 2), V)
        assert got[1] == pytest.approx(receding_wall_drift(a, w, V), rel=5e-4)
        assert got[1] / at_rest[1] == pytest.approx(1 - 4 * w * V / G, rel=1e-12)  # the formula, first order
    sliding = on_slide((1, 0, 0), wall_table())
    beta = np.radians(60.0)
    still, moving = drift_at(sliding, regular(a, w, beta), 0.0), drift_at(sliding, regular(a, w, beta), 0.05)
    assert abs(moving[1] / still[1] - 1) < 1e-5
    assert 4 * w * 0.05 / G * abs(math.cos(beta)) == pytest.approx(0.0102, rel=1e-2)  # what the speed term alone gives


def test_a_moored_body_decays_at_the_wave_drift_damping_rate():
    """A 1,000 t body on a surge spring (ω_n = 0.05 rad/s, no other damping) in a regular head wave (2 m, 0.8 rad/s)
    with surge drift 2,000 N/m², released 10 m from its mean offset: its surge is the damped oscillator's closed form
    with B = 4 (ω/g) a² T (1e-6 of the release: RK4 at 0.1 s over 600 s, 0.5 % of a 126 s period)."""
    m, wn, a, w, C = 1.0e6, 0.05, 2.0, 0.8, 2.0e3
    b = ModelBuilder(source="moored")
    b.add_body("hull", body=Body(m, (0, 0, 0), np.eye(3) * m), joint=mbd.Prismatic((1, 0, 0)))
    omega = np.array([0.3, 0.8, 1.5])
    T = np.zeros((3, 1, 3))
    T[:, 0, 0] = C
    drift = WaveDrift(name="drift", body="hull", table=DriftTable.of(omega, [0.0], T), damping=True)
    k = m * wn**2
    system = System(b.build(), (drift, JointPTO(name="mooring", joint="hull", stiffness=jnp.asarray(k), damping=jnp.asarray(0.0))),
                    name="moored")
    B, mean = 4 * w / G * a * a * C, a * a * C / k
    q0, v0, z0 = initial_state(system)
    ts = np.arange(0.0, 600.0 + 1e-9, 1.0)
    ys = solve(system, (q0 + mean + 10.0, v0, z0), ts, integrator=Integrator("rk4", dt=0.1), waves=regular(a, w, 0.0)).ys
    zeta = B / (2 * m * wn)
    wd = wn * math.sqrt(1 - zeta**2)
    want = mean + 10.0 * np.exp(-zeta * wn * ts) * (np.cos(wd * ts) + zeta * wn / wd * np.sin(wd * ts))
    assert zeta == pytest.approx(0.0261, rel=1e-2)
    np.testing.assert_allclose(np.asarray(ys[0])[:, 0], want, rtol=0, atol=1e-6 * 10.0)


def test_a_body_at_rest_in_a_current_and_its_mean_drift_without_drawing_the_sea():
    """A body at rest in a 1 m/s current along its x axis feels the drift of one moving at −1 m/s through still
    water (1e-12); the mean drift of a JONSWAP sea computed without drawing it, with the current, is what a
    realisation averages to (1e-3: the two quadratures), and differs from the still-water mean by Aranha's change."""
    omega, heads = np.linspace(0.2, 2.5, 24), np.radians(np.arange(0.0, 360.0, 15.0))
    T = np.stack([2e4 * np.cos(heads)[None] * omega[:, None], 3e4 * np.sin(heads)[None] * omega[:, None] ** 2,
                  1e5 * np.sin(2 * heads)[None] * np.ones_like(omega)[:, None]], -1)
    table = DriftTable.of(omega, heads, T)
    current = Current(1.0, 0.0)
    system = on_slide((1, 0, 0), table)
    beta = np.radians(40.0)
    np.testing.assert_allclose(drift_at(system, regular(1.0, 0.9, beta, current), 0.0),
                               drift_at(system, regular(1.0, 0.9, beta), -1.0), rtol=1e-12)
    drift = WaveDrift(name="drift", body="wall", table=table, damping=True)
    sea = SeaState(spectrum=JONSWAP(3.0, 8.0), n_frequencies=2000, n_directions=7, omega_min=0.3, omega_max=2.4,
                   mean_direction=jnp.asarray(0.6), random_frequencies=False, current=current)
    c = sea.realise(jax.random.key(0))
    dx, dy = drift.aranha(c.omega, c.wavenumber, c.direction)
    realised = np.sum(np.asarray(c.amplitude)[:, None] ** 2 * np.asarray(table.at(c.omega, c.direction) - dx), axis=0)
    np.testing.assert_allclose(drift.mean_in(sea), realised, rtol=1e-3)
    still = WaveDrift(name="drift", body="wall", table=table).mean_in(sea)
    assert np.all(np.abs(drift.mean_in(sea) - still) > 1e-3 * np.abs(still))


def test_damping_in_shallow_water_is_refused():
    """Aranha's formula is deep water: a sea whose longest waves have kh < π is one line when the system is built."""
    drift = WaveDrift(name="drift", body="wall", table=wall_table(), damping=True)
    sea = SeaState(spectrum=JONSWAP(2.0, 8.0), n_frequencies=50, omega_min=0.3, omega_max=2.0, water_depth=20.0)
    with pytest.raises(InputError, match=r"damping \(Aranha's formula\) is for deep water, kh >= pi; .* kh = 0.442 in 20 m"):
        drift.check_sea(sea)


def test_the_file_key_turns_it_on(tmp_path, capsys):
    """``damping = true`` on a ``wave_drift`` entry builds the element with wave-drift damping (off by default), and
    a run of it goes through (the coefficients' slopes taken inside the run's compiled program)."""
    from jaxmbd.cli import main

    from test_wave_drift import SYSTEM

    omega, heads = np.linspace(0.2, 2.0, 10), np.array([0.0, 45.0, 90.0])
    rows = ["omega,heading_deg,surge,sway,yaw"] + [f"{w},{h},{3e4 * w:.6g},0.0,0.0" for w in omega for h in heads]
    (tmp_path / "drift.csv").write_text("\n".join(rows) + "\n")
    path = tmp_path / "drift.toml"
    for text, want in ((SYSTEM, False), (SYSTEM.replace("ramp_time = 10.0", "ramp_time = 10.0\ndamping = true"), True)):
        path.write_text(text)
        (drift,) = [f for f in mbd.load_system(path).system.forces if f.kind == "wave_drift"]
        assert drift.damping is want
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--realisations", "1", "--duration", "10", "--yes"]) == 0, capsys.readouterr().err
    force = np.asarray(mbd.open_result(out / "result.nc")["drift/force"].values)
    assert np.all(np.isfinite(force)) and np.any(force != 0.0)


def test_the_heading_slope_at_the_ends_of_a_half_circle_table():
    """A table over 0-180° (7.5° apart) does not go round: at its ends the heading slope is one-sided within it (the
    table's own values, 1e-9), not wrapped to the far end (at 0° that had mixed in T(180°): a sway speed of 0.1 m/s
    moved the surge drift of following seas by 12 %); inside it stays central."""
    heads = np.radians(np.arange(0.0, 180.0 + 1e-9, 7.5))
    omega = np.linspace(0.2, 2.0, 10)
    T = np.zeros((10, heads.size, 3))
    T[:, :, 0] = 1e4 * np.cos(heads)[None]
    drift = WaveDrift(name="drift", body="wall", table=DriftTable.of(omega, heads, T), damping=True)
    w = jnp.full(3, 0.8)
    beta = jnp.radians(jnp.array([0.0, 180.0, 7.5]))
    dx, dy = drift.aranha(w, w**2 / G, beta)
    r, h = 0.8 / G, np.radians(3.75)
    t = lambda b: float(np.asarray(drift.table.at(jnp.array([0.8]), jnp.array([b])))[0, 0])  # noqa: E731
    slopes = [(t(h) - t(0.0)) / h, (t(np.pi) - t(np.pi - h)) / h, (t(np.radians(7.5) + h) - t(np.radians(7.5) - h)) / (2 * h)]
    want = [-4 * r * np.sin(b) * t(b) - 2 * r * np.cos(b) * s for b, s in zip(np.asarray(beta), slopes)]
    np.testing.assert_allclose(np.asarray(dy)[:, 0], want, rtol=1e-9, atol=1e-9)
    # following seas: 3.3 % of the speed term's 4 (ω/g) T, the one-sided slope of the table's first 7.5° (nil by symmetry)
    assert abs(float(dy[0, 0])) < 0.04 * 4 * r * 1e4
