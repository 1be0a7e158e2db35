"""A hull's quadratic drag acts on its velocity through the water: in a current, a barge that only the drag
moves (a surge slide, no waves, no radiation memory) is carried to the current's speed along the closed form
of (m + A11) ẍ = B |U − ẋ| (U − ẋ):  ẋ(t) = U − 1 / (1/U + k t),  x(t) = U t − ln(1 + k U t) / k,  k = B / (m + A11)."""

from pathlib import Path

import numpy as np

import jaxmbd
from jaxmbd.run import run, settings_of, start_of

DATA = Path(jaxmbd.__file__).parent / "data" / "barge_hydro.nc"
U, B = 1.5, 4.0e4  # m/s, N s²/m²

FILE = f"""
name = "drifting_barge"
[[bodies]]
name = "barge"
joint = "prismatic"
axis = [1, 0, 0]
mass = 380.0e3
com = [0.0, 0.0, -0.5]
radii_of_gyration = [3.5, 5.8, 5.8]
[[hydro]]
name = "hull"
file = "{DATA.as_posix()}"
bodies = ["barge"]
radiation = false
quadratic_drag = [{B}, 0, 0, 0, 0, 0]
[current]
speed = {U}
[simulation]
duration = 60.0
method = "rk4"
dt = 0.05
save_dt = 1.0
static_equilibrium = false
"""


def test_a_barge_in_a_current_is_carried_to_its_speed_along_the_closed_form(tmp_path):
    """RK4 at 0.05 s against the closed form over 60 s (k U t reaches 0.9): 1e-8 relative in the velocity and
    the position (RK4's error at this step, (k U dt)^4, is far below it); without the current the drag holds
    the barge at rest."""
    path = tmp_path / "drift.toml"
    path.write_text(FILE)
    loaded = jaxmbd.load_system(path)
    hull = loaded.system.forces[0]
    M = 380.0e3 + float(hull.added_mass_inf[0, 0])
    k = B / M
    res = run(loaded, start_of(loaded), settings=settings_of(loaded)).realisation(0)
    t = np.asarray(res.time)
    x, v = np.asarray(res.q)[:, 0], np.asarray(res.v)[:, 0]
    np.testing.assert_allclose(v, U - 1.0 / (1.0 / U + k * t), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x, U * t - np.log1p(k * U * t) / k, rtol=1e-8, atol=1e-10)
    assert k * U * t[-1] > 0.5 and v[-1] > 0.4 * U
    (tmp_path / "still.toml").write_text(FILE.replace(f"speed = {U}", "speed = 0.0"))
    still = jaxmbd.load_system(tmp_path / "still.toml")
    rest = run(still, start_of(still), settings=settings_of(still)).realisation(0)
    assert np.max(np.abs(np.asarray(rest.q)[:, 0])) == 0.0


def test_a_hulls_drag_given_twice_is_refused(tmp_path):
    """The hull's quadratic drag in surge, sway or yaw and a hull current load on the same body both take its
    drag through the water: one line names both."""
    import pytest

    from jaxmbd.io.system_file import SystemFileError

    load = ('\n[[forces]]\nkind = "hull_current_load"\nbody = "barge"\nangles_deg = [-180.0, 180.0]\nCx = [0.1, 0.1]\n'
            'Cy = [0.0, 0.0]\nCn = [0.0, 0.0]\narea_x = 20.0\narea_y = 40.0\nlength = 20.0\n')
    path = tmp_path / "twice.toml"
    path.write_text(FILE.replace("[current]", load + "\n[current]"))
    with pytest.raises(SystemFileError, match=r"hydro\[0\]\.quadratic_drag: body 'barge' also has a hull_current_load \(forces\[0\]\)"):
        jaxmbd.load_system(path)
    path.write_text(FILE.replace(f"[{B}, 0, 0, 0, 0, 0]", "[0, 0, 0, 1.0e6, 0, 0]").replace("[current]", load + "\n[current]"))
    jaxmbd.load_system(path)  # roll drag beside the current load: no conflict
