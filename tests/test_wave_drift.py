"""Mean and slow wave drift by Newman's approximation: a moored body's response in a bichromatic sea against the
closed form, and the coefficient tables (WAMIT .8, CSV, a system file) read to their scale or refused in one line."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.errors import InputError
from jaxmbd.forces.pto import JointPTO
from jaxmbd.hydro import DriftTable, WaveComponents, WaveDrift, read_drift
from jaxmbd.io.system_file import SystemFileError
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, initial_state, solve
from jaxmbd.system import System


def test_a_moored_body_in_a_bichromatic_sea_drifts_as_newmans_closed_form():
    """Surge of a 1,000 t body on a spring (natural frequency 0.06 rad/s, 10 % damping) in two waves (1 m at
    0.80 rad/s, 0.8 m at 0.85 rad/s) with coefficients T(ω) that differ at the two frequencies: the force is
    a₁²T₁ + a₂²T₂ + a₁a₂(T₁ + T₂) cos(Δω t + Δφ) (Newman: T₁₂ = (T₁ + T₂)/2; 1e-9 of its mean), and after the start
    has died away (1,500 s, e^−9) the surge is the spring-mass response to it, mean and difference-frequency
    amplitude within 2 % (measured: the fixed step's error, below 1e-5)."""
    m, wn, zeta = 1.0e6, 0.06, 0.1
    b = ModelBuilder(source="moored")
    b.add_body("hull", body=Body(m, (0, 0, 0), np.eye(3) * m), joint=mbd.Prismatic((1, 0, 0)))
    model = b.build()
    k, c = m * wn**2, 2 * zeta * m * wn
    omega = np.array([0.3, 0.8, 0.85, 1.5])
    T = np.zeros((4, 1, 3))
    T[:, 0, 0] = 2.0e4 * (omega / 0.8) ** 2  # N/m²
    drift = WaveDrift(name="drift", body="hull", table=DriftTable.of(omega, [0.0], T))
    system = System(model, (drift, JointPTO(name="mooring", joint="hull", stiffness=jnp.asarray(k), damping=jnp.asarray(c))), name="moored")
    a, w, phi = np.array([1.0, 0.8]), np.array([0.80, 0.85]), np.array([0.3, 1.1])
    waves = WaveComponents(amplitude=jnp.asarray(a), omega=jnp.asarray(w), wavenumber=jnp.asarray(w**2 / 9.81),
                           direction=jnp.zeros(2), phase=jnp.asarray(phi))
    ts = np.arange(0.0, 2000.0 + 1e-9, 0.5)
    ys = solve(system, initial_state(system), ts, integrator=Integrator("rk4", dt=0.1), waves=waves).ys
    forcing = system.inputs(waves)
    force = np.asarray(jax.vmap(lambda t, q, v, z: system.outputs(t, (q, v, z), forcing)["drift/force"])(ts, *ys))
    T1, T2 = 2.0e4, 2.0e4 * (0.85 / 0.8) ** 2
    mean, amp, dw, dphi = a[0] ** 2 * T1 + a[1] ** 2 * T2, a[0] * a[1] * (T1 + T2), w[1] - w[0], phi[1] - phi[0]
    np.testing.assert_allclose(force[:, 0], mean + amp * np.cos(dw * ts + dphi), rtol=0, atol=1e-9 * mean)
    np.testing.assert_array_equal(force[:, 1:], 0.0)
    late = ts >= 1500.0
    x = np.asarray(ys[0])[late, 0]
    H = 1.0 / (k - m * dw**2 - 1j * c * dw)  # e^{−iΔωt} convention below
    want = mean / k + np.real(amp * H * np.exp(-1j * (dw * ts[late] + dphi)))
    assert np.mean(x) == pytest.approx(mean / k, rel=0.02)
    assert np.max(np.abs(x - want)) < 0.02 * amp * abs(H)


def _write_wamit_8(path, periods, headings_deg, T, rho, g, length):
    """Rows as WAMIT writes them: nondimensional by ρ g L (forces) and ρ g L² (the yaw moment), every (β₁, β₂) pair
    of headings and the heave mode too (both left out on reading)."""
    lines = []
    for i, per in enumerate(periods):
        for j1, b1 in enumerate(headings_deg):
            for j2, b2 in enumerate(headings_deg):
                for mode in (1, 2, 3, 6):
                    d = {1: 0, 2: 1, 6: 2}.get(mode)
                    value = 0.123 if d is None or j1 != j2 else T[i, j1, d] / (rho * g * (length**2 if mode == 6 else length))
                    lines.append(f"{per:.6e} {b1:.3f} {b2:.3f} {mode} {abs(value):.9e} {0.0 if value >= 0 else 180.0:.3f} {value:.9e} 0.0")
    path.write_text("\n".join(lines) + "\n")


def test_wamit_8_and_csv_tables_read_to_their_scale(tmp_path):
    """A .8 file of three periods and two headings (with cross-heading rows and heave, both ignored), ULEN 2 m,
    ρ 1025 kg/m³: the diagonal in surge, sway and yaw made dimensional (1e-8 of the largest: nine printed digits);
    the same table as CSV; a mode missing at one heading and a CSV without its yaw column are one line each."""
    periods, heads = np.array([12.0, 8.0, 6.0]), np.array([0.0, 45.0])
    rng = np.random.default_rng(2)
    T = rng.normal(size=(3, 2, 3)) * np.array([3e4, 2e4, 5e5])
    _write_wamit_8(tmp_path / "hull.8", periods, heads, T, 1025.0, 9.81, 2.0)
    table = read_drift(tmp_path / "hull.8", rho=1025.0, g=9.81, length=2.0)
    np.testing.assert_allclose(np.asarray(table.omega), 2 * np.pi / periods, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(table.heading), np.radians(heads), atol=1e-9)
    np.testing.assert_allclose(np.asarray(table.values), T, rtol=0, atol=1e-8 * np.abs(T).max())
    rows = ["period,heading_deg,surge,sway,yaw"] + [f"{p},{h},{T[i, j, 0]:.17g},{T[i, j, 1]:.17g},{T[i, j, 2]:.17g}"
                                                     for i, p in enumerate(periods) for j, h in enumerate(heads)]
    (tmp_path / "hull.csv").write_text("\n".join(rows) + "\n")
    np.testing.assert_allclose(np.asarray(read_drift(tmp_path / "hull.csv").values), T, rtol=1e-12)
    text = (tmp_path / "hull.8").read_text().splitlines()
    (tmp_path / "gap.8").write_text("\n".join(line for line in text if not (line.split()[1] == line.split()[2] == "45.000" and line.split()[3] == "2")) + "\n")
    with pytest.raises(mbd.JaxmbdError, match=r"gap.8: no sway drift coefficient at .* heading 45 deg"):
        read_drift(tmp_path / "gap.8")
    (tmp_path / "bad.csv").write_text("\n".join(r.rsplit(",", 1)[0] for r in rows).replace("sway,yaw", "sway") + "\n")
    with pytest.raises(mbd.JaxmbdError, match=r"bad.csv: missing column 'yaw'"):
        read_drift(tmp_path / "bad.csv")


SYSTEM = """
name = "drifting"
[[bodies]]
name = "hull"
joint = "planar"
axis = [0, 0, 1]
mass = 1.0e6
radii_of_gyration = [10.0, 20.0, 20.0]
[[forces]]
kind = "wave_drift"
name = "drift"
body = "hull"
file = "drift.csv"
ramp_time = 10.0
[[forces]]
kind = "linear_mooring"
name = "mooring"
body = "hull"
point = [0.0, 0.0, 0.0]
reference = [0.0, 0.0, 0.0]
stiffness = [[4e3, 0, 0, 0, 0, 0], [0, 4e3, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 4e7]]
damping = [[1e4, 0, 0, 0, 0, 0], [0, 1e4, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1e8]]
[waves]
type = "jonswap"
hs = 3.0
tp = 9.0
direction_deg = 30.0
n_frequencies = 50
omega_min = 0.3
omega_max = 2.0
[simulation]
duration = 60.0
method = "rk4"
dt = 0.1
"""


def test_a_system_file_drifts_a_moored_hull_and_refuses_a_sea_beyond_its_table(tmp_path, capsys):
    """``[[forces]] kind = "wave_drift"`` with a CSV table: a run pushes the hull down-wave (the mean surge and sway
    force of the realisation positive along the waves) and reports the yaw it checks; a band beyond the table and a
    heading outside it are one line each."""
    from jaxmbd.cli import main

    omega, heads = np.linspace(0.2, 2.0, 10), np.array([0.0, 45.0, 90.0])
    rows = ["omega,heading_deg,surge,sway,yaw"] + [f"{w},{h},{3e4 * math.cos(math.radians(h)) * w:.6g},"
                                                   f"{3e4 * math.sin(math.radians(h)) * w:.6g},0.0" for w in omega for h in heads]
    (tmp_path / "drift.csv").write_text("\n".join(rows) + "\n")
    path = tmp_path / "drift.toml"
    path.write_text(SYSTEM)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--realisations", "1", "--yes"]) == 0, capsys.readouterr().err
    ds = mbd.open_result(tmp_path / "out" / "result.nc")
    force = np.asarray(ds["drift/force"].values)
    assert force.mean(axis=-2)[..., 0].item() > 0 and force.mean(axis=-2)[..., 1].item() > 0 and "drift/yaw" in ds
    dim = ds["drift/force"].dims[-1]  # its components named as its units name them
    assert list(ds[dim].values) == ["surge", "sway", "yaw"]
    table = capsys.readouterr().out
    assert "drift/force[surge]     kN" in table and "drift/force[yaw]   kN m" in table
    path.write_text(SYSTEM.replace('file = "drift.csv"', 'file = "drift.csv"\nwamit_length = 2.0'))
    with pytest.raises(SystemFileError, match=r"forces\[0\]\.wamit_length: scales a WAMIT file; a CSV table is dimensional"):
        mbd.load_system(path)
    for old, new, message in (("omega_max = 2.0", "omega_max = 2.5", r"the sea's frequencies 0.3-2.5 rad/s leave the drift coefficients'"),
                              ("direction_deg = 30.0", "direction_deg = 150.0", r"wave heading .* deg lies outside the drift coefficients' headings 0-90 deg")):
        path.write_text(SYSTEM.replace(old, new))
        with pytest.raises(SystemFileError, match=message) as err:
            mbd.load_system(path)
        assert "\n" not in str(err.value)


def havelock_drift(ka, rho=1025.0, g=9.81, a=1.0):
    """The mean drift coefficient (N/m² per squared amplitude) of a fixed vertical cylinder of radius a through deep
    water, from MacCamy and Fuchs' scattered wave in the far field: F̄x = ρ g/k · (1/2π)∫|F(θ)|²(1 − cos θ) dθ with
    F(θ) = −Σ ε_n J'_n(ka)/H'_n(ka) cos nθ (the momentum the scattered waves carry away; its short-wave limit is
    geometric optics' 2/3 ρ g a, and (1/2π)∫|F|² = −Re F(0), the optical theorem, holds to 1e-12)."""
    from scipy.special import h1vp, jvp

    theta = np.linspace(0.0, 2 * np.pi, 20001)
    n = np.arange(int(ka + 20) + 1)
    c = -np.where(n == 0, 1.0, 2.0) * jvp(n, ka) / h1vp(n, ka)
    f = (c[:, None] * np.cos(np.outer(n, theta))).sum(0)
    return rho * g * a / ka * np.trapezoid(np.abs(f) ** 2 * (1 - np.cos(theta)), theta) / (2 * np.pi)


@pytest.mark.slow  # 35 s: Capytaine on 5,300 panels at four frequencies
def test_capytaines_far_field_drift_of_a_fixed_cylinder_against_maccamy_and_fuchs():
    """A fixed vertical cylinder (radius 1 m, 8 m deep, deep water: e^−2kd below 1e-7 at every ka) in head seas at
    ka = 0.5, 1, 2, 3: the surge drift by :func:`capytaine_drift` (Capytaine's far-field formula) within 2 % of the
    analytic far-field drift, sway and yaw nil (1e-3 of it).  The panels: 160 round, 6 cm tall at the waterline and
    12 % taller each row down (where the waves have died away), no lid.  Measured +1.03, +0.54, +0.27, −0.03 %; the
    residual falls with the panels round the circumference (at ka = 0.5: +3.6 % on 52 uniform 0.12 m panels round,
    +2.4, +1.5, +1.0 % on 80, 128, 160 graded ones); with a lid against irregular frequencies (the first at ka =
    2.405, between two of the points) +1.07, +0.70, +0.34, 0.00 %.  The reference's short-wave limit is checked too
    (ka = 80: 2/3 ρ g a within 0.2 %)."""
    import warnings

    from jaxmbd.hydro.capytaine_run import capytaine_drift, cylinder

    assert havelock_drift(80.0) == pytest.approx(2 / 3 * 1025.0 * 9.81, rel=2e-3)
    ka = np.array([0.5, 1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Capytaine's notes on the mesh
        pile = cylinder(1.0, 8.0, panel_size=0.06, n_around=160, growth=1.12, name="pile", lid=False)
        table = capytaine_drift(pile, omegas=np.sqrt(9.81 * ka), wave_directions=[0.0], fixed=True, name="pile")
    got = np.asarray(table.values)[:, 0]
    want = np.array([havelock_drift(x) for x in ka])
    np.testing.assert_allclose(got[:, 0], want, rtol=0.02)
    assert np.all(np.abs(got[:, 1:]) < 1e-3 * want[:, None])


def test_the_mean_drift_in_a_sea_state_and_the_static_offset_it_gives():
    """The mean drift of a short-crested JONSWAP sea computed without drawing it (∫ 2 S Σ w_d T dω) equals what a
    realisation on fine fixed bins averages to, Σ a_j² T_j (1e-3: the two quadratures); as a steady load it moves a
    hull on a linear mooring by F/k in surge and sway and M/k_ψ in yaw (1e-6)."""
    from jaxmbd.forces import LinearMooring
    from jaxmbd.hydro import JONSWAP, SeaState
    from jaxmbd.mooring import static_offset, with_mean_drift

    omega, heads = np.linspace(0.2, 2.5, 24), np.radians(np.arange(0.0, 360.0, 30.0))
    T = np.stack([2e4 * np.cos(heads)[None] * omega[:, None], 3e4 * np.sin(heads)[None] * omega[:, None] ** 2,
                  1e5 * np.sin(2 * heads)[None] * np.ones_like(omega)[:, None]], -1)
    drift = WaveDrift(name="drift", body="hull", table=DriftTable.of(omega, heads, T))
    sea = SeaState(spectrum=JONSWAP(3.0, 8.0), n_frequencies=2000, n_directions=7, omega_min=0.3, omega_max=2.4,
                   mean_direction=jnp.asarray(0.6), random_frequencies=False)
    c = sea.realise(jax.random.key(0))
    realised = np.sum(np.asarray(c.amplitude)[:, None] ** 2 * np.asarray(drift.table.at(c.omega, c.direction)), axis=0)
    mean = drift.mean_in(sea)
    np.testing.assert_allclose(mean, realised, rtol=1e-3)
    b = ModelBuilder(source="moored")
    b.add_body("hull", body=Body(1.0e6, (0, 0, 0), np.eye(3) * 1e8), joint=mbd.Free())
    k = np.array([5e3, 8e3, 0.0, 0.0, 0.0, 2e7])
    mooring = LinearMooring(name="mooring", body="hull", point=jnp.zeros(3), reference=jnp.zeros(3), stiffness=jnp.diag(jnp.asarray(k)),
                            damping=jnp.zeros((6, 6)))
    system = System(b.build(), (drift, mooring), waves=sea, name="moored")
    steady = with_mean_drift(system)
    assert [f.kind for f in steady.forces] == ["steady_force", "linear_mooring"]
    _, offset = static_offset(steady, "hull", system.model.neutral())
    np.testing.assert_allclose(offset, mean / k[[0, 1, 5]], rtol=1e-6)


@pytest.mark.slow  # 4 s of Capytaine
def test_a_long_wall_in_short_waves_reaches_the_2d_full_reflection_drift():
    """A fixed box 60 m long, 6 m wide and 6 m deep in beam seas of 1.5-2.5 rad/s (waves of 10-27 m, the keel at 1-2
    wavelengths' e-folding depths): its sway drift by :func:`capytaine_drift` lies between 90 % and 100 % of the 2-D
    full-reflection drift ½ ρ g L per squared amplitude (measured 98.7, 98.7, 95.8 %: the ends and the waves passing
    under the keel take the rest), surge and yaw nil by symmetry."""
    import warnings

    from jaxmbd.hydro.capytaine_run import box, capytaine_drift

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = capytaine_drift(box(60.0, 6.0, 6.0, panel_size=1.0, name="wall"), omegas=[1.5, 2.0, 2.5],
                                wave_directions=[np.pi / 2], fixed=True, name="wall")
    v = np.asarray(table.values)[:, 0]
    ratio = v[:, 1] / (0.5 * 1025.0 * 9.81 * 60.0)
    assert np.all((ratio > 0.9) & (ratio <= 1.0)), ratio
    assert np.all(np.abs(v[:, [0, 2]]) < 1e-6 * v[:, 1:2] * np.array([1.0, 60.0]))



def test_a_directional_table_a_regular_wave_and_a_turned_hull_against_the_drift_table():
    """The mean drift of a directional spectrum table's sea is its realisation's mean (the table's own spreading over
    the whole circle, 1e-3); a regular wave beyond the table's frequencies and a hull resting turned by 30° are one
    line each, when the system is built."""
    from jaxmbd.hydro import JONSWAP, RegularWave, SeaState
    from jaxmbd.hydro.waves import TabulatedSpectrum, spreading_function

    omega, heads = np.linspace(0.2, 2.5, 24), np.radians(np.arange(0.0, 360.0, 30.0))
    T = np.stack([2e4 * np.cos(heads)[None] * omega[:, None], 3e4 * np.sin(heads)[None] * omega[:, None],
                  np.zeros((24, 12))], -1)
    drift = WaveDrift(name="drift", body="hull", table=DriftTable.of(omega, heads, T))
    w, theta = np.linspace(0.1, 4.0, 1000), np.radians(np.arange(0.0, 360.0, 5.0))
    spec = TabulatedSpectrum(w, np.asarray(JONSWAP(3.0, 8.0).density(w))[:, None]
                             * np.asarray(spreading_function(theta, 0.6, 2.0, "cos2s_full"))[None], theta)
    sea = SeaState(spectrum=spec, n_frequencies=1000, n_directions=36, omega_min=0.3, omega_max=2.4, mean_direction=jnp.asarray(0.6),
                   random_frequencies=False)
    c = sea.realise(jax.random.key(0))
    realised = np.sum(np.asarray(c.amplitude)[:, None] ** 2 * np.asarray(drift.table.at(c.omega, c.direction)), axis=0)
    np.testing.assert_allclose(drift.mean_in(sea)[:2], realised[:2], rtol=1e-3)
    b = ModelBuilder(source="hull")
    b.add_body("hull", body=Body(1.0e6, (0, 0, 0), np.eye(3) * 1e8), joint=mbd.Free())
    with pytest.raises(mbd.JaxmbdError, match=r"the sea's frequencies 3.142-3.142 rad/s leave the drift coefficients'") as err:
        System(b.build(), (drift,), waves=SeaState(regular=RegularWave(1.0, 2.0)))
    assert "\n" not in str(err.value)
    b = ModelBuilder(source="hull")
    b.add_body("hull", body=Body(1.0e6, (0, 0, 0), np.eye(3) * 1e8), joint=mbd.Free(), placement=mbd.Placement.from_xyz_rpy(rpy=(0.0, 0.0, np.radians(30.0))))
    with pytest.raises(mbd.JaxmbdError, match=r"rests at a yaw of 30 deg"):
        System(b.build(), (drift,), waves=SeaState(regular=RegularWave(1.0, 8.0)))


def test_a_graded_cylinder_mesh_and_a_growth_below_one():
    """``cylinder(..., growth=1.12)``: the side's rows 6 cm tall at the waterline, each 12 % taller than the one
    above, down to the bottom; its wetted area that of the polygonal cylinder (1e-12); a growth below 1 is one line."""
    from jaxmbd.hydro.capytaine_run import cylinder

    body = cylinder(1.0, 8.0, panel_size=0.06, n_around=160, growth=1.12, lid=False)
    z = np.unique(np.round(body.mesh.vertices[:, 2], 12))[::-1]
    h = -np.diff(z)
    assert h[0] == pytest.approx(0.06, rel=1e-12) and np.allclose(h[1:-2] / h[:-3], 1.12, rtol=1e-12) and z[-1] == -8.0
    side = 160 * 2 * np.sin(np.pi / 160)  # the polygon's perimeter
    assert body.mesh.faces_areas.sum() == pytest.approx(side * 8.0 + 160 * 0.5 * np.sin(2 * np.pi / 160), rel=1e-12)
    with pytest.raises(InputError, match="growth is the ratio of successive panel rows downwards, expected >= 1, got 0.9"):
        cylinder(1.0, 8.0, panel_size=0.06, growth=0.9)
