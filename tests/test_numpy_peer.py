"""The NumPy peer of the end-to-end benchmark (benchmarks/numpy_crane_vessel.py) is the same model.

Cibicik et al. (2019)'s crane vessel, one wave realisation.  The right-hand sides agree to
roundoff: jaxmbd takes the joint accelerations from the articulated-body
algorithm, the peer from a mass-matrix solve (condition number about 3e4), and
both sum 540 wave components of up to 2e7 N; at random states each block of
dy/dt (q̇, v̇, ż) differs by about 1e-15 of its largest entry.  We allow 1e-10.
A 20 s run with the same fixed-step RK4 as ``simulate`` then gives the same
states to 1e-11 of each one's scale and the same outputs to 1e-9, and SciPy's adaptive RK45 (rtol 1e-6) the same
maxima to 1e-2 (they differ by RK4's step error at 0.1 s, about 1e-3 on the
king's small roll moment).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.numpy_crane_vessel import CraneVesselNumpy, build_system, run_rk4, run_rk45  # noqa: E402
from jaxmbd.simulation import Integrator, simulate  # noqa: E402

KEY = jax.random.key(2024)


@pytest.fixture(scope="module")
def case():
    system, q0 = build_system("on", "I", n_frequencies=60, n_directions=9)
    key = jax.random.split(KEY, 1)[0]  # realisation 0 of simulate(..., key=KEY, n_realisations=1)
    waves = system.waves.realise(key)
    return system, q0, waves, CraneVesselNumpy(system).set_waves(waves)


def _random_states(q0, n_rad, rng, n):
    for k in range(n):
        q = np.asarray(q0, float).copy()
        q[:3] += rng.normal(size=3)
        q[3:7] = np.concatenate([[1.0], 0.05 * rng.normal(size=3)]) * (1 + 0.01 * rng.normal())  # not unit
        q[7:] += 0.2 * rng.normal(size=7)
        v = 0.3 * rng.normal(size=13)
        z = 300.0 * rng.normal(size=n_rad) if k % 2 else np.zeros(n_rad)
        yield rng.uniform(0.0, 60.0), q, v, z


def test_numpy_rhs_equals_jax_rhs(case):
    system, q0, waves, peer = case
    forcing = (waves, system.prepare(waves), None)
    f = jax.jit(lambda t, y: system.rhs(t, y, forcing))
    rng = np.random.default_rng(0)
    nq, nv = system.model.nq, system.model.nv
    assert peer.n_state == nq + nv + system.n_states
    for t, q, v, z in _random_states(q0, peer.n_rad, rng, 6):
        ref = np.concatenate([np.asarray(a) for a in f(t, (jnp.asarray(q), jnp.asarray(v), jnp.asarray(z)))])
        got = peer.rhs(t, np.concatenate([q, v, z]))
        for s in (slice(0, nq), slice(nq, nq + nv), slice(nq + nv, None)):
            assert np.max(np.abs(got[s] - ref[s])) <= 1e-10 * np.max(np.abs(ref[s])), (t, s)


def _maxima(outputs, time, skip):
    sel = time >= skip
    return np.array([np.max(np.abs(outputs["sway/theta1"][sel])), np.max(np.abs(outputs["sway/theta2"][sel])),
                     np.max(np.abs(outputs["joint/q3/wrench"][sel, 3])), np.max(np.abs(outputs["joint/q1/wrench"][sel, 3]))])


@pytest.mark.slow  # 17 s; the NumPy right-hand side against jaxmbd's stays in the default suite
@pytest.mark.level0  # 1e-11 over 20 s; 7.3e-10 with XLA's defaults and with the suite's options
def test_numpy_peer_runs_like_simulate(case):
    """20 s (the excitation ramps in over the first 20 s), maxima over t >= 10 s.  The same RK4 gives
    the same states (to 1e-11 of each one's scale) and outputs (payload sway, joint reaction wrenches, to
    1e-9) at every save."""
    system, q0, waves, peer = case
    duration, dt, skip = 20.0, 0.1, 10.0
    res = simulate(system, duration, save_dt=dt, integrator=Integrator("rk4", dt=dt), q0=q0, key=KEY,
                   n_realisations=1)
    ref_out = {k: v[0] for k, v in res.outputs.items()}
    y0 = peer.initial_state(q0)
    ts, ys, _ = run_rk4(peer, y0, duration, dt, dt)
    np.testing.assert_allclose(ts, res.time, atol=1e-12)
    ours = np.concatenate([res.q[0], res.v[0], res.z[0]], axis=1)
    # each state against its own scale over the run (an entry-by-entry relative test fails where a state
    # crosses zero): 1.4e-13 measured, whatever XLA's CPU options (they change its summation order)
    scale = np.max(np.abs(ours), axis=0) + 1e-300
    assert np.max(np.abs(ys - ours) / scale) < 1e-11
    out = peer.output_series(ts, ys)
    for name, val in out.items():
        np.testing.assert_allclose(val, ref_out[name], rtol=0, atol=1e-9 * np.max(np.abs(ref_out[name])), err_msg=name)
    ref = _maxima(ref_out, res.time, skip)
    np.testing.assert_allclose(_maxima(out, ts, skip), ref, rtol=1e-9)
    # SciPy's adaptive RK45: the difference is RK4's own step error at 0.1 s (largest on the king's
    # small roll moment, about 1e-3 of it, with the platform level)
    ts45, ys45, _ = run_rk45(peer, y0, duration, dt, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_maxima(peer.output_series(ts45, ys45), ts45, skip), ref, rtol=1e-2)
