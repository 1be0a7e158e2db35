"""Controllers: PD with gravity compensation holds an arm; without it the sag is g(q)/K_p."""

import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd.control import JointPD
from jaxmbd.examples import rod
from jaxmbd.model import ModelBuilder, Placement
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System


def arm():
    b = ModelBuilder()
    b.add_body("boom1", body=rod(400.0, 4.0), joint=mbd.Revolute((0.0, 1.0, 0.0)), joint_name="luff1")
    b.add_body("boom2", body=rod(200.0, 3.0), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="boom1",
               placement=Placement(p=np.array([4.0, 0, 0])), joint_name="luff2")
    return b.build()


def run(gc):
    model = arm()
    ref = jnp.array([-0.6, 0.9])
    pd = JointPD(name="pd", joints=("luff1", "luff2"), setpoint=ref, kp=jnp.array([2e5, 1e5]),
                 kd=jnp.array([4e4, 1.5e4]), gravity_compensation=gc)
    res = simulate(System(model, (pd,)), 20.0, save_dt=0.05, q0=jnp.zeros(2),
                   integrator=Integrator("tsit5", rtol=1e-9, atol=1e-9))
    return model, ref, res


def test_pd_with_gravity_compensation_holds_the_set_point():
    """Exact compensation leaves no steady-state error: 1e-6 rad after 20 s (decay time ~0.5 s)."""
    _, ref, res = run(True)
    assert np.max(np.abs(res.q[-1] - np.asarray(ref))) < 1e-6
    assert res.outputs["pd/torque"].shape == (401, 2)


def test_pd_without_compensation_sags_by_gravity_over_gain():
    """Without compensation the arm settles where K_p e = g(q): predicted from the final state to 1e-6."""
    model, ref, res = run(False)
    q = jnp.asarray(res.q[-1])
    g = mbd.inverse_dynamics(model, q, jnp.zeros(2), jnp.zeros(2))
    e = np.asarray(ref) - res.q[-1]
    np.testing.assert_allclose(np.array([2e5, 1e5]) * e, np.asarray(g), rtol=1e-6)
    assert np.min(np.abs(e)) > 1e-3  # the sag is real, not a tolerance artefact
