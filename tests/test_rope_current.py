"""A wire rope in a current: ½ ρ C_d D n l_wet |u_n| u_n across its submerged falls, shared by its ends by where
the wet part lies (closed forms, 1e-12: the same arithmetic); off by default (no output, no load); a diameter
without current_drag, or current_drag without a diameter, is one line."""

import jax
import numpy as np
import pytest

import jaxmbd
from jaxmbd.io.system_file import SystemFileError
from jaxmbd.simulation import initial_state

FILE = """
name = "rope_in_current"
[[bodies]]
name = "block"
joint = "free"
mass = 1.0e4
radii_of_gyration = [0.5, 0.5, 0.5]
q0_xyz = [0.0, 0.0, {zb}]
[[forces]]
kind = "wire_rope"
name = "hoist"
body_a = "world"
point_a = [0.0, 0.0, {za}]
body_b = "block"
point_b = [0.0, 0.0, 0.0]
EA = 1.0e9
length = 9.99
falls = 2
{drag}
[current]
speed = 1.5
direction_deg = 90.0
[simulation]
duration = 1.0
method = "rk4"
dt = 0.01
"""


def _outputs(tmp_path, za, zb, drag):
    path = tmp_path / "rope.toml"
    path.write_text(FILE.format(za=za, zb=zb, drag=drag))
    loaded = jaxmbd.load_system(path)
    system = loaded.system
    y0 = initial_state(system, loaded.q0)
    return system, system.outputs(0.0, y0, system.inputs(system.waves.realise(jax.random.key(0)))), y0


@pytest.mark.parametrize("za, wet", [(-1.0, 1.0), (4.0, 0.6)])  # all under water; the upper 4 m in air
def test_the_current_drags_the_ropes_wet_length(tmp_path, za, wet):
    system, outs, y0 = _outputs(tmp_path, za, za - 10.0, 'current_drag = true\ndiameter = 0.05\ndrag_coefficient = 1.1')
    F = 0.5 * 1025.0 * 1.1 * 0.05 * 2 * 10.0 * wet * 1.5 * 1.5
    np.testing.assert_allclose(outs["hoist/drag"], [0.0, F, 0.0], rtol=1e-12, atol=1e-9)
    rope = system.forces[0]
    ctx = system.context(0.0, y0[0], y0[1], system.waves.realise(jax.random.key(0)))
    _, share_a = rope.drag(ctx)
    assert float(share_a) == pytest.approx(0.5 * wet, rel=1e-12)  # the wet part's centre from the lower end


def test_off_by_default_and_the_keys_that_need_each_other(tmp_path):
    _, outs, _ = _outputs(tmp_path, -1.0, -11.0, "")
    assert "hoist/drag" not in outs
    for drag, field in (("diameter = 0.05", "diameter: not used without current_drag"),
                        ("current_drag = true", "diameter: must be > 0 with current_drag")):
        with pytest.raises(SystemFileError, match=rf"forces\[0\]\.{field}"):
            _outputs(tmp_path, -1.0, -11.0, drag)
