"""The water belongs to the sea: one density for every element that touches it, the model's gravity in
the waves' dispersion, one fade-in."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces.morison import MorisonObject
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.hydro.waves import ramp
from jaxmbd.model import Body, ModelBuilder


def _buoy(gravity=(0.0, 0.0, -9.81)):
    b = ModelBuilder(gravity=gravity, source="buoy")
    b.add_body("buoy", body=Body(1000.0, (0, 0, 0), np.eye(3) * 100.0), joint=mbd.Free())
    return b.build()


def _object(name, rho):
    one = jnp.asarray(1.0)
    return MorisonObject(name=name, body="buoy", volume=one, area=one, height=one, Cd=one, Ca=one, rho=jnp.asarray(rho))


def test_two_elements_in_one_sea_cannot_disagree_on_its_density():
    model = _buoy()
    mbd.System(model, (_object("a", 1025.0), _object("b", 1025.0)))
    with pytest.raises(mbd.ModelError, match=r"one water density.*'a' 1025.*'b' 1000"):
        mbd.System(model, (_object("a", 1025.0), _object("b", 1000.0)))


def test_the_model_s_gravity_reaches_the_waves():
    """Deep-water dispersion k = ω²/g with the model's g (9.0 here, not the 9.81 the sea defaults to):
    to rounding, 1e-12."""
    sea = SeaState(spectrum=JONSWAP(2.0, 8.0), n_frequencies=8)
    system = mbd.System(_buoy((0.0, 0.0, -9.0)), (_object("a", 1025.0),), waves=sea)
    assert system.waves.g == 9.0
    c = system.waves.realise(jax.random.key(0))
    np.testing.assert_allclose(np.asarray(c.wavenumber), np.asarray(c.omega) ** 2 / 9.0, rtol=1e-12)


def test_one_fade_in():
    """The hydrodynamic body's static ramp and the elements' array ramp are the same function."""
    t = jnp.linspace(0.0, 12.0, 25)
    np.testing.assert_array_equal(ramp(t, 10.0), ramp(t, jnp.asarray(10.0)))
    assert ramp(t, 0.0) == 1.0 and np.all(np.asarray(ramp(t, jnp.asarray(0.0))) == 1.0)
    assert float(ramp(5.0, 10.0)) == pytest.approx(0.5 * (1 - math.cos(math.pi / 2)), abs=1e-15)


FILE = """
name = "buoys"
[[bodies]]
name = "buoy"
joint = "free"
mass = 1000.0
inertia = [100.0, 100.0, 100.0]
[[forces]]
kind = "morison_object"
name = "a"
body = "buoy"
volume = 1.0
area = 1.0
height = 1.0
Cd = 1.0
Ca = 1.0
[[forces]]
kind = "morison_object"
name = "b"
body = "buoy"
volume = 1.0
area = 1.0
height = 1.0
Cd = 1.0
Ca = 1.0
B_RHO
WATER
[simulation]
duration = 1.0
"""


def test_a_file_s_water_density_is_every_element_s(tmp_path):
    path = tmp_path / "buoys.toml"
    path.write_text(FILE.replace("B_RHO", "").replace("WATER", "[water]\ndensity = 1000.0"))
    forces = mbd.load_system(path).system.forces
    assert [float(f.rho) for f in forces] == [1000.0, 1000.0]
    path.write_text(FILE.replace("B_RHO", "rho = 1025.0").replace("WATER", "[water]\ndensity = 1000.0"))
    with pytest.raises(mbd.SystemFileError, match="one water density") as err:
        mbd.load_system(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
