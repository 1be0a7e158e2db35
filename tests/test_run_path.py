"""One run path: ``jaxmbd run``, a scenario, a sweep cell and ``simulate`` of a file go through
``jaxmbd.run.run``, start from one solve of the static equilibrium, and return one result type."""

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import jaxmbd as mbd
import jaxmbd.run as run_module
import jaxmbd.simulation as simulation_module
from jaxmbd.cli import main as cli
from jaxmbd.results import Result
from jaxmbd.sweep import SweepSettings, run_cell

# A cantilever boom (six elements, four modes) bending under its own weight, in a sea it does not feel:
# the waves make it a case a sweep can run.  Its bent rest shape is solved with the joints.
BOOM = """
name = "cantilever"
[[bodies]]
name = "frame"
joint = "fixed"
mass = 0.0
[[forces]]
kind = "flexible_beam"
name = "boom"
body = "frame"
end = [10.0, 0.0, 0.0]
elements = 6
E = 210e9
G = 80.77e9
A = 0.01
Iy = 8.33e-6
Iz = 8.33e-6
J = 1.666e-5
density = 7850.0
modes = 4
[waves]
type = "jonswap"
hs = 1.0
tp = 8.0
n_frequencies = 4
[simulation]
duration = 10.0
save_dt = 0.5
method = "rk4"
dt = 0.0025
static_equilibrium = true
n_realisations = 1
"""

SCENARIO = """
[scenario]
[[scenario.phases]]
name = "hold"
max_duration = 10.0
"""

SWEEP = """
[sweep]
hs = [1.0]
tp = [8.0]
n_realisations = 1
[sweep.limits]
"boom/strain_energy" = 1.0e6
"""


@pytest.fixture
def solves(monkeypatch):
    """Counts the static-equilibrium solves, wherever they are called from."""
    calls = []
    real = simulation_module.static_equilibrium

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "static_equilibrium", counting)
    monkeypatch.setattr(simulation_module, "static_equilibrium", counting)
    return calls


def _phased(text):
    """A file's text for a scenario: its phases set the length, so [simulation] has no duration."""
    return text.replace("duration = 10.0\n", "")


def _file(tmp_path, text, name="boom.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_one_static_equilibrium_solve_per_run_scenario_and_sweep(tmp_path, solves):
    """`jaxmbd run` solved its start twice (once in the command, once in the loaded file's run); a sweep
    solved it once, but a scenario and a sweep cell then started the boom straight.  Now: one solve each."""
    plain = _file(tmp_path, BOOM.replace("duration = 10.0", "duration = 0.5"))
    assert cli(["run", str(plain), "--out", str(tmp_path / "plain")]) == 0
    assert len(solves) == 1
    scenario = _file(tmp_path, _phased(BOOM) + SCENARIO.replace("10.0", "0.5"), "scenario.toml")
    assert cli(["run", str(scenario), "--out", str(tmp_path / "scenario")]) == 0
    assert len(solves) == 2
    sweep = _file(tmp_path, BOOM.replace("duration = 10.0", "duration = 0.5") + SWEEP.replace("[1.0]", "[1.0, 2.0]"),
                  "sweep.toml")
    assert cli(["sweep", str(sweep), "--out", str(tmp_path / "sweep")]) == 0  # two cells, one start
    assert len(solves) == 3


def test_a_flexible_boom_starts_bent_in_a_plain_run_a_scenario_and_a_sweep_cell(tmp_path):
    """The same bent rest state (its tip deflection) starts all three, and the first 10 s agree: the boom
    stays at rest in each, where a straight start swung by millimetres.  Tolerance 1e-12 m: the start is
    one object and the runs differ only by the integrators' rounding on a motion of the solve's residual."""
    loaded = mbd.load_system(_file(tmp_path, BOOM))
    start = loaded.start()
    assert start.equilibrium and start.z is not None
    plain = loaded.run(start)
    with_phases = mbd.load_system(_file(tmp_path, _phased(BOOM) + SCENARIO, "scenario.toml")).run(start)
    settings = SweepSettings(hs=[1.0], tp=[8.0], limits={}, duration=10.0, n_realisations=1, save_dt=0.5,
                             integrator=loaded.integrator)
    cell = run_cell(loaded.system, start, settings, 0, 0)
    for res in (plain, with_phases, cell):
        assert isinstance(res, Result)
    tip = [np.asarray(r.realisation(0).outputs["boom/tip_deflection"])[:, 2] for r in (plain, with_phases, cell)]
    times = [np.asarray(r.realisation(0).time) for r in (plain, with_phases, cell)]
    sag = -7850.0 * 0.01 * 9.81 * 10.0**4 / (8 * 210e9 * 8.33e-6)
    assert abs(tip[0][0] / sag - 1) < 5e-3  # bent at the start: qL⁴/(8EI) with four modes
    assert tip[1][0] == tip[0][0] and tip[2][0] == tip[0][0]
    on_grid = np.isin(times[1], times[0])  # the scenario also saves its phase's end
    np.testing.assert_allclose(tip[1][on_grid][: tip[0].size], tip[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(tip[2], tip[0], rtol=0, atol=1e-12)
    assert np.max(np.abs(tip[0] - tip[0][0])) < 1e-9


def test_a_scenario_of_several_realisations_is_one_batched_result(tmp_path):
    """Each realisation keeps its own time grid inside one result (padded with NaN), and its file holds the
    sea state once, with the run's attributes."""
    loaded = mbd.load_system(_file(tmp_path, _phased(BOOM).replace("n_realisations = 1", "n_realisations = 2")
                                   + SCENARIO.replace("10.0", "0.5"), "scenario.toml"))
    res = loaded.run()
    assert res.batched and res.n_realisations == 2 and np.asarray(res.time).ndim == 2
    assert res.phase_names == ("hold",) and len(res.events) == 2
    one = res.realisation(1)
    assert not one.batched and np.all(np.isfinite(one.time)) and one.events[0].name == "hold"
    ds = res.to_dataset()
    assert ds["time"].dims == ("realisation", "sample") and "phase" in ds
    path = tmp_path / "both.nc"
    res.to_netcdf(path)
    with xr.open_dataset(path, engine="h5netcdf") as back:
        attrs = dict(back.attrs)
    assert attrs["realisations"] == 2 and '"hs": 1.0' in attrs["sea_state"]
    assert sum("hs" in k for k in attrs) == 0  # the sea state is in one attribute, not spread over several


def test_sea_state_overrides_are_data(tmp_path):
    """hs, tp and heading change only the system's arrays: the run is the file's otherwise."""
    loaded = mbd.load_system(_file(tmp_path, BOOM.replace("duration = 10.0", "duration = 0.5")))
    res = loaded.run(loaded.start(), hs=2.5, tp=6.0, heading=0.5)
    spec = res.system.waves.spectrum
    assert float(spec.hs) == 2.5 and float(spec.tp) == 6.0 and float(res.system.waves.mean_direction) == 0.5
    assert float(loaded.system.waves.spectrum.hs) == 1.0  # the loaded case is unchanged
    with pytest.raises(mbd.JaxmbdError, match="needs irregular waves"):
        run_module.with_sea_state(loaded.system.__class__(loaded.system.model, loaded.system.forces), hs=1.0)
    assert jnp.isfinite(res.q).all()


def test_a_run_says_what_it_cannot_take(tmp_path):
    """A duration given to a scenario (its phases set it), a heading the hydrodynamic data do not cover (the
    table would clamp it inside the run), an unknown setting: one line each."""
    from jaxmbd.hydro import JONSWAP, SeaState, read_capytaine, test_barge_path
    from jaxmbd.hydro.body import HydroBody
    from jaxmbd.model import Body, ModelBuilder

    scenario = mbd.load_system(_file(tmp_path, _phased(BOOM) + SCENARIO.replace("10.0", "0.5"), "scenario.toml"))
    with pytest.raises(run_module.RunError, match="leave duration out"):
        scenario.run(duration=3.0)
    with pytest.raises(mbd.JaxmbdError, match="unknown setting"):
        scenario.run(hz=1.0)
    b = ModelBuilder(source="barge")
    b.add_body("barge", body=Body(410e3, (0, 0, 0), np.eye(3) * 1e7), joint=mbd.Free())
    model = b.build()
    hydro = read_capytaine(test_barge_path())
    system = mbd.System(model, (HydroBody.create(model, hydro, bodies=("barge",), radiation=False),),
                        waves=SeaState(spectrum=JONSWAP(1.0, 8.0), n_frequencies=4))
    assert not hydro.heading_periodic  # the test barge's table covers part of the circle
    outside = float(hydro.heading_range[1] + np.radians(30.0))
    run_module.with_sea_state(system, heading=float(hydro.heading_range[0]))  # inside: taken
    with pytest.raises(run_module.RunError, match="heading"):
        run_module.with_sea_state(system, heading=outside)


def test_simulate_of_a_loaded_file_takes_a_start(tmp_path):
    """jaxmbd.simulate(loaded, q0=...) passed q0 to the simulator; it still starts there (no equilibrium)."""
    loaded = mbd.load_system(_file(tmp_path, BOOM.replace("duration = 10.0", "duration = 0.5")))
    res = mbd.simulate(loaded, q0=loaded.q0, n_realisations=1)
    assert res.attrs["start"] == "as given"
    tip = np.asarray(res.realisation(0).outputs["boom/tip_deflection"])[:, 2]
    assert tip[0] == 0.0 and tip[-1] < 0.0  # straight at the start, and it falls


def test_a_scenario_file_needs_no_duration_and_refuses_one_it_would_not_use(tmp_path):
    """A scenario's phases set its length, yet [simulation] required a duration that the run then left unused
    without a word.  Now it is optional there, refused where nothing takes it, and kept for a [sweep]'s plain
    runs (which say so when it is missing)."""
    text = BOOM.replace("static_equilibrium = true\n", "")
    with pytest.raises(mbd.SystemFileError, match=r"simulation.duration: not used: the \[scenario\]'s phases"):
        mbd.load_system(_file(tmp_path, text + SCENARIO), validate=False)
    loaded = mbd.load_system(_file(tmp_path, _phased(text) + SCENARIO), validate=False)
    assert loaded.simulation.duration is None
    swept = mbd.load_system(_file(tmp_path, text + SCENARIO + SWEEP), validate=False)
    assert swept.simulation.duration == 10.0
    assert cli(["sweep", str(_file(tmp_path, _phased(text) + SCENARIO + SWEEP)), "--out", str(tmp_path / "s")]) == 2
