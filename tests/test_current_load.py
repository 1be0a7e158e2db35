"""Current load on a hull (jaxmbd/forces/current_load.py): the tabulated coefficients at the current's
angle of attack, turned with the hull, against the formula written here; read from a file."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd import Body, ModelBuilder, System
from jaxmbd.forces.current_load import HullCurrentLoad
from jaxmbd.hydro import SeaState
from jaxmbd.hydro.waves import Current

RHO, U = 1025.0, 1.5
ANGLES = np.radians([-180.0, -90.0, 0.0, 90.0, 180.0])
CX, CY, CN = [-0.05, 0.0, 0.06, 0.0, -0.05], [0.0, -0.8, 0.0, 0.8, 0.0], [0.0, -0.02, 0.0, 0.02, 0.0]
AX, AY, L = 46.0 * 4.0, 110.0 * 4.0, 110.0


def _hull(yaw_deg, current_dir_deg=0.0, v=None):
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    el = HullCurrentLoad(name="current", body="hull", angles=jnp.asarray(ANGLES), Cx=jnp.asarray(CX), Cy=jnp.asarray(CY),
                         Cn=jnp.asarray(CN), area_x=jnp.asarray(AX), area_y=jnp.asarray(AY), length=jnp.asarray(L))
    sea = SeaState(current=Current(U, math.radians(current_dir_deg)))
    system = System(b.build(), (el,), waves=sea)
    h = math.radians(yaw_deg) / 2
    q = jnp.asarray([0.0, 0.0, 0.0, math.cos(h), 0.0, 0.0, math.sin(h)])
    vel = jnp.zeros(6) if v is None else jnp.asarray(v)
    return {k.split("/")[1]: np.asarray(x) for k, x in
            system.outputs(0.0, (q, vel, jnp.zeros(0)), mbd.Inputs(sea.realise(None))).items()}


def test_head_on_beam_on_and_between():
    """α = 0 (the current from astern along the hull): F_x = ½ ρ C_x(0) A_x U²; the hull turned 90°
    (the current on its starboard side, α = −90°): F = ½ ρ |C_y| A_y U² along the current and
    M_z = ½ ρ C_n(−90°) A_y L U²; turned 45°: the coefficients halfway between the rows (linear);
    all to 1e-12."""
    q = 0.5 * RHO * U * U
    out = _hull(0.0)
    np.testing.assert_allclose(out["force"], [q * CX[2] * AX, 0.0, 0.0], rtol=1e-12, atol=1e-9)
    out = _hull(90.0)
    assert abs(float(out["angle"]) + math.pi / 2) < 1e-12
    np.testing.assert_allclose(out["force"], [q * 0.8 * AY, 0.0, 0.0], rtol=1e-12, atol=1e-6)
    assert abs(float(out["moment"]) - q * CN[1] * AY * L) < 1e-12 * q * AY * L
    out = _hull(-45.0)  # the current at α = +45°
    fx, fy = q * 0.5 * (CX[2] + CX[3]) * AX, q * 0.5 * (CY[2] + CY[3]) * AY
    c, s = math.cos(-math.pi / 4), math.sin(-math.pi / 4)
    np.testing.assert_allclose(out["force"][:2], [c * fx - s * fy, s * fx + c * fy], rtol=1e-12)


def test_a_hull_moving_through_still_water_meets_the_current_from_ahead():
    """Surging at U in calm water with the current 0: the water comes from ahead, α = ±180°, F_x =
    ½ ρ C_x(180°) A_x U² (a resistance, C_x < 0), to 1e-12."""
    b_out = _hull(0.0, v=[U, 0.0, 0.0, 0.0, 0.0, 0.0])  # the current U along x and the hull at U: no load
    assert np.allclose(b_out["force"], 0.0, atol=1e-9)
    out = _hull(0.0, current_dir_deg=180.0, v=[0.0] * 6)  # the current against the bow
    np.testing.assert_allclose(out["force"], [0.5 * RHO * U * U * CX[0] * AX, 0.0, 0.0], rtol=1e-12, atol=1e-9)


TEXT = """
name = "hull"
[[bodies]]
name = "hull"
joint = "free"
mass = 1.0e6
inertia = [1e8, 1e8, 1e8]
[[forces]]
kind = "hull_current_load"
body = "hull"
angles_deg = [-180, -90, 0, 90, 180]
Cx = CXS
Cy = [0.0, -0.8, 0.0, 0.8, 0.0]
Cn = [0.0, -0.02, 0.0, 0.02, 0.0]
area_x = 184.0
area_y = 440.0
length = 110.0
[current]
speed = 1.0
[simulation]
duration = 1.0
save_dt = 0.5
"""


def test_a_current_load_is_read_from_a_system_file(tmp_path):
    path = tmp_path / "hull.toml"
    path.write_text(TEXT.replace("CXS", "[-0.05, 0.0, 0.06, 0.0, -0.05]"))
    el = mbd.load_system(path).system.forces[0]
    assert isinstance(el, HullCurrentLoad) and np.allclose(np.degrees(np.asarray(el.angles)), [-180, -90, 0, 90, 180])
    path.write_text(TEXT.replace("CXS", "[-0.05, 0.0, 0.06, 0.0]"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.Cx: expected one coefficient per angle \(5\), got 4") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
