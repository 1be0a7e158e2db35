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
