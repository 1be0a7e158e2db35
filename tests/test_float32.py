"""A float32 system stays float32 in every force element: the solvers pass the time in float64 (a
precise clock and excitation lookup) and draw the waves in float64, and neither may promote an
element's loads or warn (JAX's "scatter inputs have incompatible types", an error in future JAX).

Each system is cast to float32 and its right-hand side and outputs evaluated with warnings as
errors, against the same system in float64 at the same state: agreement to 1e-3 of each array's
largest entry (float32's 6e-8 rounding grown through the recursions, with a wide margin)."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd.examples import floating_crane
from jaxmbd.forces import SpringDamper, WindDrag, WireRope
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.system import System


def _cast(x):
    if isinstance(x, (jax.Array, np.ndarray)) and jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jnp.asarray(x, jnp.complex64)
    if isinstance(x, (jax.Array, np.ndarray)) and jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.asarray(x, jnp.float32)
    return x


def _floating_crane_with_every_element(sea):
    """Ham et al. (2009)'s crane (hydrodynamics with radiation memory, two ropes, mooring) plus wind on the
    barge, a spring-damper to the cargo and a winch rope paying out with heave compensation."""
    system, q0 = floating_crane(sea)
    extra = (
        WindDrag(name="wind", body="barge", point=jnp.asarray([0.0, 0.0, 20.0]), area=jnp.asarray(2000.0),
                 speed=jnp.asarray(15.0), direction=jnp.asarray(0.5)),
        SpringDamper(name="tugger", body_a="barge", point_a=jnp.asarray([60.0, 10.0, 5.0]), body_b="cargo",
                     point_b=jnp.asarray([0.0, 6.0, 0.0]), stiffness=jnp.asarray(1e4), damping=jnp.asarray(1e3),
                     rest_length=jnp.asarray(5.0)),
        WireRope(name="winch", body_a="boom1", point_a=jnp.asarray([30.0, -6.0, 77.0]), body_b="cargo",
                 point_b=jnp.asarray([0.0, 0.0, 5.0]), EA=jnp.asarray(1e8), length=jnp.asarray(61.0),
                 damping=jnp.asarray(1e4), payout_rate=jnp.asarray(0.1), heave_compensation=jnp.asarray(0.5),
                 hook_gain=jnp.asarray(0.01), winch=True),
    )
    return System(system.model, system.forces + extra, waves=system.waves, name="crane_every_element",
                  report_joints=system.report_joints), q0


@pytest.mark.slow  # 15 s; float32 kernels stay in the default suite through tests/test_dynamics*.py
def test_float32_system_stays_float32():
    """Every library force element (the controllers are covered by test_optim's float32 run)."""
    sea = SeaState(spectrum=JONSWAP(3.0, 9.0), n_frequencies=20, mean_direction=jnp.asarray(0.3))
    system, q0 = _floating_crane_with_every_element(sea)
    _check_float32(system, q0)


@pytest.mark.slow  # 8 s; test_float32_system_stays_float32 keeps a float32 run in the default suite
def test_float32_nonlinear_hydrostatics_and_froude_krylov_stay_float32():
    """The pressure integration over the wetted hull (its clipping, the wave's pressure and the
    linear Froude-Krylov force taken out of the excitation)."""
    from jaxmbd.hydro import HydroBody
    from jaxmbd.hydro.hull import box_hull

    sea = SeaState(spectrum=JONSWAP(3.0, 9.0), n_frequencies=20, mean_direction=jnp.asarray(0.3))
    system, q0 = floating_crane(sea)
    hb = system.forces[0]
    nl = HydroBody.create(system.model, hb.hydro, bodies=hb.bodies, ramp_time=30.0, hydrostatics="nonlinear",
                          froude_krylov="nonlinear", hulls=(box_hull(110.0, 46.0, 9.0, 3.56, panel_size=8.0),))
    _check_float32(System(system.model, (nl,) + system.forces[1:], waves=sea, name="crane_nonlinear"), q0)


def _check_float32(system, q0):
    waves = system.waves.realise(jax.random.key(1))  # float64, as simulate draws them
    rng = np.random.default_rng(0)
    v = 0.05 * rng.standard_normal(system.model.nv)
    z = system.initial_states(q0, jnp.asarray(v))
    z = z + 1e-2 * jnp.asarray(rng.standard_normal(z.shape))
    t = jnp.asarray(37.3, jnp.float64)  # as the solvers pass it; inside the ramps: the time enters the loads

    def evaluate(s, y, t):
        forcing = (waves, s.prepare(waves), None)
        (dq, dv, dz), f_ext = s.rhs_and_loads(t, y, forcing)
        return (dq, dv, dz, f_ext), s.outputs(t, y, forcing)

    ref = jax.jit(evaluate)(system, (q0, jnp.asarray(v), z), t)
    s32 = jax.tree_util.tree_map(_cast, system)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = jax.jit(evaluate)(s32, jax.tree_util.tree_map(_cast, (q0, jnp.asarray(v), z)), t)
    for path, a in jax.tree_util.tree_leaves_with_path(got):
        assert a.dtype == jnp.float32, (jax.tree_util.keystr(path), a.dtype)
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(got), jax.tree_util.tree_leaves(ref)):
        b = np.asarray(b)
        assert np.max(np.abs(np.asarray(a, float) - b), initial=0.0) <= 1e-3 * (np.max(np.abs(b), initial=0.0) + 1e-12), \
            jax.tree_util.keystr(path)
