"""The mean wind's height profile: at a point z above the still water the drag is ½ ρ C_d S U(z)², with
U(z) the power law U(H) (z/H)^α or the logarithmic U(H) ln(z/z₀)/ln(H/z₀) (closed forms, 1e-12: the same
arithmetic); the uniform wind is the element's former one; a point below the sea is the profile's range left."""

import math

import numpy as np
import pytest

import jaxmbd
import jaxmbd.io.system_file
from jaxmbd.run import run, settings_of, start_of
from jaxmbd.simulation import initial_state

FILE = """
name = "wind_on_a_module"
[[bodies]]
name = "module"
joint = "fixed"
xyz = [0.0, 0.0, {z}]
mass = 1.0e4
radii_of_gyration = [1.0, 1.0, 1.0]
[[forces]]
kind = "wind"
body = "module"
point = [0.0, 0.0, 0.0]
area = 50.0
speed = 20.0
drag_coefficient = 1.2
{profile}
[simulation]
duration = 1.0
method = "rk4"
dt = 0.1
"""


def _force(tmp_path, z, profile):
    path = tmp_path / f"wind_{z}_{abs(hash(profile))}.toml"
    path.write_text(FILE.format(z=z, profile=profile))
    loaded = jaxmbd.load_system(path)
    system = loaded.system
    outs = system.outputs(0.0, initial_state(system, loaded.q0))
    return loaded, np.asarray(outs["wind/force"]), float(outs["wind/speed"])


@pytest.mark.parametrize("z", [5.0, 10.0, 40.0])
def test_the_drag_at_a_height_is_the_profiles(tmp_path, z):
    q = 0.5 * 1.225 * 1.2 * 50.0
    for profile, U in (("", 20.0),
                       ('profile = "power_law"\nexponent = 0.12', 20.0 * (z / 10.0) ** 0.12),
                       ('profile = "logarithmic"\nroughness = 1.0e-3\nreference_height = 10.0',
                        20.0 * math.log(z / 1e-3) / math.log(10.0 / 1e-3))):
        _, force, speed = _force(tmp_path, z, profile)
        assert speed == pytest.approx(U, rel=1e-12)
        np.testing.assert_allclose(force, [q * U * U, 0.0, 0.0], rtol=1e-12, atol=1e-9)


def test_a_point_under_the_sea_is_the_profiles_range_left(tmp_path):
    loaded, _, speed = _force(tmp_path, -1.0, 'profile = "logarithmic"')
    assert speed == 0.0  # taken at z₀, where the profile is zero
    res = run(loaded, start_of(loaded), settings=settings_of(loaded))
    found = [e for e in res.excursions if e.element == "wind"]
    assert found and found[0].quantity == "height of the wind's point" and "height >= 0.0001 m" in found[0].limit


COEFFICIENTS = """
[[forces]]
kind = "wind_coefficients"
body = "module"
angles_deg = [-180.0, -90.0, 0.0, 90.0, 180.0]
Cx = [-0.9, 0.0, 0.9, 0.0, -0.9]
Cy = [0.0, -0.8, 0.0, 0.8, 0.0]
Cn = [0.0, -0.1, 0.0, 0.1, 0.0]
area_x = 30.0
area_y = 60.0
length = 12.0
speed = 20.0
direction_deg = 30.0
profile = "power_law"
"""


@pytest.mark.parametrize("yaw_deg", [0.0, 90.0])
def test_a_lifted_objects_wind_coefficients_by_heading(tmp_path, yaw_deg):
    """A module at 25 m, turned by ``yaw_deg``, in a 20 m/s wind (at 10 m, power law) blowing towards 30°: the
    angle of attack in its axes is 30° − yaw, the coefficients linear between the table's rows, the force
    ½ ρ C A U(z)² turned back to the world and the yaw moment ½ ρ C_n A_y L U(z)² (closed form, 1e-12)."""
    text = FILE.format(z=25.0, profile="").replace('xyz = [0.0, 0.0, 25.0]', f'xyz = [0.0, 0.0, 25.0]\nrpy_deg = [0.0, 0.0, {yaw_deg}]')
    path = tmp_path / "coefficients.toml"
    path.write_text(text.replace("[simulation]", COEFFICIENTS + "\n[simulation]"))
    loaded = jaxmbd.load_system(path)
    outs = loaded.system.outputs(0.0, initial_state(loaded.system, loaded.q0))
    a = math.radians(30.0 - yaw_deg)
    table = np.radians([-180.0, -90.0, 0.0, 90.0, 180.0])
    cx, cy, cn = (np.interp(a, table, c) for c in ([-0.9, 0.0, 0.9, 0.0, -0.9], [0.0, -0.8, 0.0, 0.8, 0.0], [0.0, -0.1, 0.0, 0.1, 0.0]))
    U = 20.0 * (25.0 / 10.0) ** 0.12
    q = 0.5 * 1.225 * U * U
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    fx, fy = q * cx * 30.0, q * cy * 60.0
    assert float(outs["wind_coefficients/angle"]) == pytest.approx(a, rel=1e-12)
    np.testing.assert_allclose(outs["wind_coefficients/force"], [c * fx - s * fy, s * fx + c * fy, 0.0], rtol=1e-12, atol=1e-9)
    assert float(outs["wind_coefficients/moment"]) == pytest.approx(q * cn * 60.0 * 12.0, rel=1e-12)
    assert float(outs["wind_coefficients/speed"]) == pytest.approx(U, rel=1e-12)


def test_a_logarithmic_profile_under_its_roughness_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(FILE.format(z=10.0, profile='profile = "logarithmic"\nroughness = 0.1\nreference_height = 0.05'))
    with pytest.raises(jaxmbd.io.system_file.SystemFileError, match=r"forces\[0\]\.reference_height: must lie above the roughness"):
        jaxmbd.load_system(path)


GUSTY = FILE.format(z=30.0, profile='gust = "npd"') + "\n[current]\nspeed = 0.0\n"


def test_gusts_have_the_npd_spectrums_variance_and_are_drawn_with_each_realisation(tmp_path):
    """The NPD gust at 30 m in a 20 m/s wind (at 10 m): the components' variance Σ a²/2 is the spectrum's over
    the band (trapezoidal rule on 20,000 points, 1 %: the bins' midpoint rule); over 16,000 realisations the
    gust at a fixed time has mean 0 and that variance (Monte-Carlo: 5 %, about 4.5 standard errors of the
    estimate); two realisations differ and one realisation is the same each time; a run without a sea state
    to draw gusts from is refused."""
    import jax

    from jaxmbd.forces.wind import GUST_BAND_HZ, gust_components, npd_spectrum

    f, a = gust_components(20.0, 30.0)
    fine = np.geomspace(*GUST_BAND_HZ, 20000)
    band = float(np.trapezoid(np.asarray(npd_spectrum(fine, 20.0, 30.0)), fine))
    assert float(np.sum(np.asarray(a) ** 2) / 2) == pytest.approx(band, rel=0.01)
    path = tmp_path / "gusty.toml"
    path.write_text(GUSTY)
    loaded = jaxmbd.load_system(path)
    system = loaded.system
    assert system.waves.gust_frequencies == f.size
    y0 = initial_state(system, loaded.q0)
    keys = jax.random.split(jax.random.key(0), 16000)
    speed = jax.vmap(lambda k: system.outputs(123.0, y0, system.inputs(system.waves.realise(k)))["wind/speed"])(keys)
    mean_wind = 20.0  # uniform profile: the same at 30 m
    gust = np.asarray(speed) - mean_wind
    assert abs(gust.mean()) < 4 * np.sqrt(band / gust.size)
    assert gust.var() == pytest.approx(float(np.sum(np.asarray(a) ** 2) / 2), rel=0.05)
    one = [float(system.outputs(123.0, y0, system.inputs(system.waves.realise(jax.random.key(5))))["wind/speed"]) for _ in range(2)]
    assert one[0] == one[1] and gust[0] != gust[1]
    path.write_text(FILE.format(z=30.0, profile='gust = "npd"'))
    with pytest.raises(jaxmbd.io.system_file.SystemFileError, match="the wind's gusts are drawn with each realisation of the sea"):
        jaxmbd.load_system(path)


@pytest.mark.parametrize("kind, extra", [("npd", ""), ("api", ""), ("kaimal", "turbulence_intensity = 0.12")])
def test_a_long_realisation_has_its_gust_spectrums_moments(tmp_path, kind, extra):
    """Each gust spectrum at 30 m in a 20 m/s wind, one realisation of 24 hours sampled every second at the module: the
    gust's variance (m0) and its rate's (m2, the time derivative in forward mode) within 3 % of the components'
    Σ a²/2 and Σ a² (2πf)²/2 (what the band holds; the realisation's cross terms between neighbouring frequencies
    are what is left); API's and Kaimal's spectra integrate to σ² = (I U)² over all frequencies (1e-3: the f^−5/3
    tail beyond 10⁴ Hz); ``turbulence_intensity`` without the Kaimal spectrum is one line."""
    import jax
    import jax.numpy as jnp

    from jaxmbd.forces.wind import API_PEAK, gust_components, gust_spectrum

    path = tmp_path / f"{kind}.toml"
    path.write_text(FILE.format(z=30.0, profile=f'gust = "{kind}"\n{extra}') + "\n[current]\nspeed = 0.0\n")
    system = jaxmbd.load_system(path).system
    y0 = initial_state(system)
    forcing = system.inputs(system.waves.realise(jax.random.key(11)))

    def speed(t):
        return system.outputs(t, y0, forcing)["wind/speed"]

    ts = jnp.arange(0.0, 24 * 3600.0, 1.0)
    u, du = jax.vmap(lambda t: jax.jvp(speed, (t,), (jnp.ones_like(t),)))(ts)
    f, a = gust_components(20.0, 30.0, kind=kind, intensity=0.12)
    a = np.asarray(a)
    assert float(np.var(np.asarray(u))) == pytest.approx(float(np.sum(a**2) / 2), rel=0.03)
    assert float(np.mean(np.asarray(du) ** 2)) == pytest.approx(float(np.sum(a**2 * (2 * np.pi * f) ** 2) / 2), rel=0.03)
    if kind != "npd":
        fine = np.geomspace(1e-7, 1e4, 400001)
        total = float(np.trapezoid(np.asarray(gust_spectrum(kind, fine, 20.0, 20.0, 30.0, 0.12)), fine))
        sigma = (0.12 if kind == "kaimal" else 0.15 * (30.0 / 20.0) ** -0.275) * 20.0
        assert total == pytest.approx(sigma**2, rel=1e-3) and API_PEAK == 0.025
    if kind == "kaimal":
        path.write_text(FILE.format(z=30.0, profile='gust = "api"\nturbulence_intensity = 0.12') + "\n[current]\nspeed = 0.0\n")
        with pytest.raises(jaxmbd.io.system_file.SystemFileError, match=r"forces\[0\]\.turbulence_intensity: the Kaimal spectrum's"):
            jaxmbd.load_system(path)
