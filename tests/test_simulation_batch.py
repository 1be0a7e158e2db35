"""Monte-Carlo batches: reproducible, independent of chunking; sweeps resume; statistics."""

import jax
import numpy as np
import pytest

from jaxmbd.simulation import simulate
from jaxmbd.statistics import ExtremeStatistics, Gumbel
from jaxmbd.sweep import SweepSettings, run_sweep
from sweep_system import INTEGRATOR, moored_barge


@pytest.fixture(scope="module")
def system():
    return moored_barge()


@pytest.mark.slow  # 19 s, three compiled batch sizes; the reuse of one compiled run across sea states stays in the default suite
def test_same_key_same_result_whatever_the_chunking(system):
    """Bit-for-bit: the r-th realisation always gets the r-th key."""
    a = simulate(system, 20.0, save_dt=0.5, integrator=INTEGRATOR, key=jax.random.key(3), n_realisations=4)
    b = simulate(system, 20.0, save_dt=0.5, integrator=INTEGRATOR, key=jax.random.key(3), n_realisations=4)
    c = simulate(system, 20.0, save_dt=0.5, integrator=INTEGRATOR, key=jax.random.key(3), n_realisations=4,
                 chunk_size=3)
    # chunks of one run unbatched (no vmap): the same arithmetic up to XLA's fusion choices
    d = simulate(system, 20.0, save_dt=0.5, integrator=INTEGRATOR, key=jax.random.key(3), n_realisations=4,
                 chunk_size=1)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_allclose(a.q, c.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.q, d.q, rtol=0, atol=1e-12)
    for k in a.outputs:
        np.testing.assert_allclose(a.outputs[k], d.outputs[k], rtol=1e-10, atol=1e-10 * np.max(np.abs(a.outputs[k])), err_msg=k)
    assert not np.allclose(a.q[0], a.q[1])  # different realisations do differ
    assert a.outputs["line1/force"].shape == (4, 41)


def test_interrupted_sweep_resumes_without_recomputing(system, tmp_path, monkeypatch):
    import jaxmbd.sweep as sweep

    settings = SweepSettings(hs=[0.5, 1.0], tp=[5.0, 7.0], limits={"line1/force": 1e6}, duration=10.0,
                             n_realisations=2, save_dt=0.5, integrator=INTEGRATOR)
    q0 = system.model.neutral()
    full = run_sweep(system, q0, settings, tmp_path / "full")

    calls = []
    real = sweep.run_cell

    def counting(*a, **k):
        calls.append(a[-2:])
        if len(calls) == 3:
            raise KeyboardInterrupt  # the run is killed during its third cell
        return real(*a, **k)

    monkeypatch.setattr(sweep, "run_cell", counting)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(system, q0, settings, tmp_path / "resumed")
    assert len(list((tmp_path / "resumed").glob("cell_*.nc"))) == 2
    calls.clear()
    monkeypatch.setattr(sweep, "run_cell", real)
    monkeypatch.setattr(sweep, "run_cell", lambda *a, **k: calls.append(a[-2:]) or real(*a, **k))
    resumed = run_sweep(system, q0, settings, tmp_path / "resumed")
    assert calls == [(1, 0), (1, 1)]  # only the cells that were missing
    np.testing.assert_array_equal(full["line1/force"].values, resumed["line1/force"].values)
    np.testing.assert_array_equal(full["operable"].values, resumed["operable"].values)
    # the table carries its units, and its report (jaxmbd report FOLDER) holds its figures (1e-12)
    import re

    from jaxmbd.report import write_report

    assert full["line1/force"].attrs["units"] == "N" and full["line1/force"].attrs["limit"] == 1e6
    page = write_report([tmp_path / "resumed"], tmp_path / "sweep.html").read_text()
    table = page[page.index('<table class="sweep"'):]
    got = [float(v) for v in re.findall(r'data-value="([^"]+)"', table[: table.index("</table>")])]
    np.testing.assert_allclose(got, full["line1/force"].values.ravel(), rtol=1e-12)
    assert "line1/force (N)" in page


def test_gumbel_fit_recovers_its_parameters():
    """Method of moments on 20,000 samples: μ and β within 2 % (sampling error ~1 %)."""
    rng = np.random.default_rng(0)
    x = rng.gumbel(10.0, 2.0, 20_000)
    g = Gumbel.fit(x)
    assert abs(g.mu / 10.0 - 1) < 0.02 and abs(g.beta / 2.0 - 1) < 0.02
    s = ExtremeStatistics.of(x[:, None])
    assert s.mpm == pytest.approx(g.mu) and s.maxima.shape == (20_000,)


def _count_compiles():
    """A list that grows by one for every XLA compile from now on, and a function that stops counting."""
    from jax import monitoring

    events = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            events.append(duration)

    monitoring.register_event_duration_secs_listener(listener)
    return events, lambda: monitoring.unregister_event_duration_listener(listener)


def test_new_sea_states_and_parameters_reuse_the_compiled_run(system):
    """A sweep cell, a new wave key, a new line stiffness or a new initial pose changes array
    leaves only: the static equilibrium and the simulation, batched or single, compile once for all
    of them.  The weakly typed stiffness takes the system's float type (float32 stays float32)."""
    import equinox as eqx
    import jax.numpy as jnp

    from jaxmbd._xla import strong_types
    from jaxmbd.simulation import static_equilibrium
    from jaxmbd.run import with_sea_state

    made = strong_types((jnp.ones(3, dtype=jnp.float32), jnp.asarray(2e4), jnp.asarray(3)))
    assert [(x.dtype, x.weak_type) for x in made] == [(jnp.float32, False), (jnp.float32, False), (jnp.asarray(3).dtype, False)]

    def runs(sys_, key, q0):
        static_equilibrium(sys_, q0)
        simulate(sys_, 10.0, save_dt=0.5, integrator=INTEGRATOR, key=key, n_realisations=2, q0=q0)
        simulate(sys_, 10.0, save_dt=0.5, integrator=INTEGRATOR, key=key, q0=q0)

    q0 = system.model.neutral()
    runs(system, jax.random.key(0), q0)  # compiles
    # made before counting (their own small eager ops compile); the system's stiffness is weakly
    # typed (jnp.asarray(2e4)), the new one strongly
    stiffer = eqx.tree_at(lambda s: s.forces[1].stiffness, system, jnp.asarray(4e4, dtype=jnp.float64))
    lower = q0.at[2].set(0.1)
    events, stop = _count_compiles()
    try:
        runs(with_sea_state(system, hs=2.0, tp=9.0), jax.random.key(1), q0)
        runs(stiffer, jax.random.key(0), lower)
    finally:
        stop()
    assert events == [], f"{len(events)} recompiles"
