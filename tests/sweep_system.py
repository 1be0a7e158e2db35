"""A small moored barge in irregular waves, shared by the batch, sweep and multi-process tests."""

import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd.forces import SpringDamper
from jaxmbd.hydro import JONSWAP, HydroBody, SeaState, read_capytaine, test_barge_path
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator
from jaxmbd.system import System

MASS = 1025.0 * 400.0


def moored_barge():
    b = ModelBuilder(source="moored_barge")
    b.add_body("barge", body=Body(MASS, (0, 0, 0), np.diag([MASS * 3.5**2, MASS * 25.0, MASS * 27.0])), joint=mbd.Free())
    model = b.build()
    hb = HydroBody.create(model, read_capytaine(test_barge_path()), bodies=("barge",), ramp_time=5.0)
    lines = tuple(
        SpringDamper(name=f"line{k}", body_a="world", point_a=jnp.asarray([x, 0.0, -30.0]), body_b="barge",
                     point_b=jnp.asarray([x / 10, 0.0, 0.0]), stiffness=jnp.asarray(2e4), damping=jnp.asarray(1e4),
                     rest_length=jnp.asarray(40.0))
        for k, x in ((1, 60.0), (2, -60.0))
    )
    sea = SeaState(spectrum=JONSWAP(1.0, 6.0), n_frequencies=20, omega_min=0.4, omega_max=2.4)
    return System(model, (hb, *lines), waves=sea, name="moored_barge")


INTEGRATOR = Integrator("rk4", dt=0.1)
