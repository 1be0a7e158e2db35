"""Every answer is right, flagged or refused: bad input of every kind gets a one-line error naming
the file or option, the field and what was expected (never a traceback); results carry their units
and say when a model left its range."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from jaxmbd.cli import main
from jaxmbd.hydro import bem
from jaxmbd.hydro.bem import HydroDataError
from jaxmbd.io.system_file import SystemFileError, load_system
from jaxmbd.netcdf import open_result

HERE = Path(__file__).resolve().parent
BARGE = (HERE.parent / "jaxmbd" / "data" / "barge_hydro.nc").as_posix()

# A cargo on a wire rope under a fixed crane tip: small, fast, and slack when the tip drops.
ROPE = """
name = "{name}"

[[bodies]]
name = "cargo"
joint = "free"
mass = 1000.0
radii_of_gyration = [0.5, 0.5, 0.5]
q0_xyz = [0.0, 0.0, -10.0]

[[forces]]
kind = "wire_rope"
name = "hoist"
body_a = "world"
point_a = [0.0, 0.0, 0.0]
body_b = "cargo"
point_b = [0.0, 0.0, 0.0]
EA = 1.0e7
length = {length}
damping = 1.0e3

[simulation]
duration = 4.0
save_dt = 0.05
method = "rk4"
dt = 0.005
"""


def _rope_file(tmp_path, name="cargo", length=9.99):
    path = tmp_path / f"{name}.toml"
    path.write_text(ROPE.format(name=name, length=length))
    return path


def _rope_for_phases(name, length=9.99):
    """The rope's file for a [scenario]: the phases set the run's length, so [simulation] gives no duration."""
    return ROPE.format(name=name, length=length).replace("duration = 4.0\n", "")


def _one_line_error(capsys, rc, expected_rc=2):
    err = capsys.readouterr().err.strip()
    assert rc == expected_rc, err
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


# --------------------------------------------------------------------------- command line
CLI_CASES = [
    (["run", "{file}", "--realisations", "0"], "--realisations"),
    (["run", "{file}", "--realisations", "1.5"], "--realisations"),
    (["run", "{file}", "--duration", "0"], "--duration"),
    (["run", "{file}", "--duration", "-3"], "--duration"),
    (["run", "{file}", "--duration", "nan"], "--duration"),
    (["run", "{file}", "--seed", "-1"], "--seed"),
    (["run", "{file}", "--out", "{existing_file}"], "--out"),
    (["run", "{file}", "--bogus"], "unrecognized"),
    (["sweep", "{file}", "--hs", "-1"], "--hs"),
    (["sweep", "{file}", "--tp", "0"], "--tp"),
    (["sweep", "{file}", "--realisations", "0"], "--realisations"),
    (["sweep", "{file}", "--num-processes", "0"], "--num-processes"),
    (["demo", "--hs", "-1"], "--hs"),
    (["demo", "--realisations", "0"], "--realisations"),
    (["demo", "--chunk", "x"], "--chunk"),
    (["tune", "{file}", "--steps", "0"], "--steps"),
    ([], "command"),
    (["frobnicate"], "invalid choice"),
    (["run"], "system"),
    (["sweep", "{file}", "--process-id", "-1"], "--process-id"),
    (["plot", "{existing_file}", "--out", "{existing_file}"], "--out"),
    (["demo", "--duration", "1e400"], "--duration"),
]


@pytest.mark.parametrize("argv, named", CLI_CASES, ids=[" ".join(a[:1] + a[2:]) or "nothing" for a, _ in CLI_CASES])
def test_bad_options_are_one_line(tmp_path, capsys, argv, named):
    existing = tmp_path / "taken"
    existing.write_text("x")
    argv = [a.format(file=_rope_file(tmp_path), existing_file=existing) for a in argv]
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = _one_line_error(capsys, info.value.code)
    assert named in err


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and re.fullmatch(r"jaxmbd \d+\.\d+\.\d+\S*", capsys.readouterr().out.strip())


def test_every_option_has_help():
    import argparse

    from jaxmbd import cli

    parsers = []
    real = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = lambda self, *a, **k: parsers.append(self) or (_ for _ in ()).throw(SystemExit(0))
    try:
        with pytest.raises(SystemExit):
            cli.main(["demo"])
    finally:
        argparse.ArgumentParser.parse_args = real
    sub = next(a for a in parsers[0]._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {a.option_strings or a.dest}" for name, p in sub.choices.items() for a in p._actions
               if not isinstance(a, argparse._HelpAction) and not a.help]
    assert not missing


PLOT_CASES = ["missing", "text", "truncated", "hydro", "unknown_variable", "netcdf_not_result"]


@pytest.fixture(scope="module")
def rope_result(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rope")
    assert main(["run", str(_rope_file(tmp)), "--out", str(tmp / "out")]) == 0
    return tmp / "out" / "result.nc"


@pytest.mark.parametrize("case", PLOT_CASES)
def test_plot_of_a_bad_file_or_variable_is_one_line(tmp_path, capsys, rope_result, case):
    capsys.readouterr()
    target, extra = tmp_path / "x.nc", []
    if case == "text":
        target.write_text("not netcdf")
    elif case == "truncated":
        target.write_bytes(rope_result.read_bytes()[:2000])
    elif case == "hydro":
        target = Path(BARGE)
    elif case == "unknown_variable":
        target, extra = rope_result, ["hoist/tensoin"]
    elif case == "netcdf_not_result":
        xr.Dataset({"a": ("x", np.arange(3.0))}).to_netcdf(target, engine="h5netcdf")
    err = _one_line_error(capsys, main(["plot", str(target), *extra, "--out", str(tmp_path / "p")]))
    assert str(target) in err or target.name in err


def test_plot_takes_the_names_run_prints(tmp_path, capsys, rope_result):
    """run prints hoist/tension, the file stores hoist/tension (a group), plot takes it and writes
    hoist/tension.png; a name the file does not have is one line listing those it has."""
    assert main(["plot", str(rope_result), "hoist/tension", "hoist/length", "--out", str(tmp_path)]) == 0
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png")) == ["hoist/length.png", "hoist/tension.png"]
    capsys.readouterr()
    assert main(["plot", str(rope_result), "hoist_tension", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no output 'hoist_tension'" in err and "hoist/tension" in err


# --------------------------------------------------------------------------- system files
SYSTEM_CASES = {
    "name_with_folders": ('name = "../../escape"\n', "name"),
    "name_absolute": ('name = "/tmp/x"\n', "name"),
    "hydro_name_with_folders": (None, "hydro[0].name"),
    "box_hull_omega_max": (None, "hydro[0].omega_max"),
}


@pytest.mark.parametrize("case", SYSTEM_CASES)
def test_names_and_ignored_keys_are_refused(tmp_path, case):
    prefix, field = SYSTEM_CASES[case]
    if prefix is not None:
        text = prefix + ROPE.format(name="x", length=9.99).replace('name = "x"\n', "", 1)
    elif case == "hydro_name_with_folders":
        text = ('[[bodies]]\nname = "barge"\njoint = "free"\nmass = 4.1e5\nradii_of_gyration = [3.5, 5, 5.2]\n'
                f'[[hydro]]\nname = "a/../../b"\nfile = "{BARGE}"\nradiation = false\n[simulation]\nduration = 1.0\n')
    else:
        text = ('[[bodies]]\nname = "barge"\njoint = "free"\nmass = 4.1e5\nradii_of_gyration = [3.5, 5, 5.2]\n'
                '[[hydro]]\nbox = { length = 20.0, beam = 10.0, draught = 2.0 }\nomega_range = [0.2, 2.0, 10]\n'
                'omega_max = 3.0\n[simulation]\nduration = 1.0\n')
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(SystemFileError) as info:
        load_system(path)
    assert info.value.field == field and "\n" not in str(info.value)


def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + ROPE.format(name="bom", length=9.99).encode())
    assert load_system(path).system.name == "bom"


URDF = """<robot name="r"><link name="base"><inertial><mass {mass}/><inertia ixx="1" iyy="1" izz="{izz}"/></inertial></link>
<link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>"""


@pytest.mark.parametrize("mass, izz, named", [('value="10 kg"', "1", "<mass value>"), ("", "1", "<mass value>"),
                                              ('value="nan"', "1", "<mass value>"), ('value="1"', "x", "izz")])
def test_urdf_numbers_are_checked(tmp_path, mass, izz, named):
    from jaxmbd.joints import ModelError
    from jaxmbd.model import load_urdf

    path = tmp_path / "r.urdf"
    path.write_text(URDF.format(mass=mass, izz=izz))
    with pytest.raises(ModelError, match=re.escape(named)) as info:
        load_urdf(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_urdf_with_byte_order_mark(tmp_path):
    from jaxmbd.model import load_urdf

    path = tmp_path / "r.urdf"
    path.write_bytes(b"\xef\xbb\xbf" + URDF.format(mass='value="1"', izz="1").encode())
    assert load_urdf(path).body_names[-1] == "arm"


# --------------------------------------------------------------------------- hydrodynamic files
def _rm3_with(shared_data, tmp_path, edit):
    lines = (shared_data / "rm3.out").read_text().splitlines()
    lines = edit(lines)
    path = tmp_path / "rm3.out"
    path.write_text("\n".join(lines) + "\n")
    return path


def _first_row(lines, header, i, j):
    start = next(k for k, line in enumerate(lines) if line.strip().startswith(header))
    return next(k for k in range(start, len(lines)) if lines[k].split()[:2] == [str(i), str(j)])


@pytest.mark.parametrize("value", ["NaN", "1.9x9E+06", "*********"])
def test_wamit_row_that_cannot_be_read_is_an_error(shared_data, tmp_path, value):
    """Before, the table ended at the row and A33 at the first frequency became 0 (exit 0)."""
    def edit(lines):
        k = _first_row(lines, "ADDED-MASS AND DAMPING", 3, 3)
        tok = lines[k].split()
        lines[k] = f"     3     3   {value}   {tok[3]}"
        return lines

    path = _rm3_with(shared_data, tmp_path, edit)
    with pytest.raises(HydroDataError, match=r"line \d+: cannot read") as info:
        bem.read_wamit(path)
    assert str(path) in str(info.value)


def test_negative_heave_stiffness_is_refused(shared_data, tmp_path):
    def edit(lines):
        k = next(i for i, line in enumerate(lines) if line.strip().startswith("C(3,3),C(3,4),C(3,5):"))
        lines[k] = lines[k].replace("285.52", "-285.52")
        return lines

    with pytest.raises(HydroDataError, match="heave stiffness .* negative"):
        bem.read_wamit(_rm3_with(shared_data, tmp_path, edit))


# --------------------------------------------------------------------------- results
def test_result_file_is_self_describing(rope_result):
    ds = open_result(rope_result)
    for name, var in ds.variables.items():
        if name in ("q_coord", "v_coord"):
            continue
        assert var.attrs.get("units") not in (None, "", "unknown"), name
    for name in ds.data_vars:
        assert ds[name].attrs.get("long_name"), name
    assert ds["hoist/tension"].attrs["units"] == "N" and ds["hoist/sway"].attrs["units"] == "rad"
    for key in ("Conventions", "jaxmbd_version", "history", "system_file_text", "seed", "validity"):
        assert key in ds.attrs, key
    # one name for one thing: the table's hoist/tension is that path in the file (a NetCDF-4 group), with the
    # root's time coordinate
    with xr.open_datatree(rope_result, engine="h5netcdf") as tree:
        tension = tree["hoist/tension"]
        assert tension.attrs["long_name"] == "hoist/tension" and "time" in tension.coords
        np.testing.assert_array_equal(tension.values, ds["hoist/tension"].values)
        assert "tension" in tree["hoist"].dataset.data_vars and "hoist_tension" not in tree.dataset
        assert "[[forces]]" in ds.attrs["system_file_text"]


def test_units_of_every_shipped_element():
    """Every output of every element the library and its studies build has units."""
    import jaxmbd.examples as ex
    from studies.crane_vessel_mc.system import build

    import jax

    from jaxmbd.simulation import initial_state

    systems = [ex.floating_crane()[0], build("on", "I")[0]]
    for system in systems:
        y = initial_state(system, system.model.neutral())
        outputs = jax.eval_shape(lambda y: system.outputs(0.0, y), y)  # the names, without computing them
        units = system.output_units()
        assert set(outputs) <= set(units), sorted(set(outputs) - set(units))


def test_a_slack_rope_is_flagged_and_strict_fails(tmp_path, capsys):
    """The cargo starts 1 cm below the rope's length and is thrown up by the stretch: the rope goes
    slack (tension < 10 % of the start's) and the run says so, in its summary and its file."""
    path = tmp_path / "slack.toml"
    path.write_text(ROPE.format(name="slack", length=9.5))  # 5 % stretch at the start: it bounces
    assert main(["run", str(path), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("WARNING: the run left the range of validity") and "hoist: tension" in out
    with xr.open_dataset(tmp_path / "o" / "result.nc", engine="h5netcdf") as ds:
        found = json.loads(ds.attrs["validity"])
    assert [e["element"] for e in found] == ["hoist"] and found[0]["first_time"] > 0
    # the snap as it comes tight again (the tension plot shows 4.5e5 N at 3.25 s against 5.26e5 N at the
    # start: saved every 0.05 s, the peak itself falls between saves)
    assert 0.5 < found[0]["after_exit"] < 1.0 and "snap loads" in out
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--strict"]) == 3


def test_one_realisation_gives_no_fitted_extreme(rope_result, capsys):
    """With fewer than 5 maxima no Gumbel fit is shown (before: an MPM equal to the single maximum)."""
    assert main(["run", str(rope_result.parent.parent / "cargo.toml"), "--out", str(rope_result.parent)]) == 0
    out = capsys.readouterr()
    assert "n/a" in out.out and "at least 5 realisations" in out.out
    assert "is replaced" in out.err  # the earlier result.nc


def test_hydro_roll_beyond_range_is_flagged():
    from jaxmbd import validity
    from sweep_system import moored_barge

    system = moored_barge()
    t = np.linspace(0.0, 10.0, 11)
    eta = np.zeros((2, 11, 6))
    eta[1, 6:, 3] = np.radians(20.0)  # realisation 1 rolls to 20° from t = 6 s
    found = validity.check(system, t, {"hydro/eta": eta}, batched=True)
    assert len(found) == 1
    e = found[0]
    assert (e.quantity, e.realisations, e.n_realisations, e.first_time) == ("roll of barge", 1, 2, 6.0)
    assert e.fraction == pytest.approx(5 / 22) and not e.everywhere


def test_the_library_runs_a_scenario_file_by_its_phases(tmp_path):
    """loaded.run() (and jaxmbd.simulate(loaded)) simulated a file's system and left its [scenario]
    out without a word; then it refused it.  Now it runs the phases, as the command line does: one run path."""
    text = _rope_for_phases("phased") + """
[scenario]
name = "hold"
[[scenario.phases]]
name = "hold"
max_duration = 1.0
"""
    (tmp_path / "phased.toml").write_text(text)
    res = load_system(tmp_path / "phased.toml").run()
    assert res.phase_names == ("hold",) and res.events[0].trigger == "duration"
    assert float(res.time[-1]) == pytest.approx(1.0)


def test_run_runs_the_files_scenario(tmp_path, capsys):
    """Before, run ignored a [scenario] table without a word; now its phases run, their ends are in
    the summary and the result file."""
    text = _rope_for_phases("lowering").replace("damping = 1.0e3", "damping = 1.0e3\nwinch = true")
    text += """
[scenario]
name = "lowering"
[[scenario.phases]]
name = "hold"
max_duration = 1.0
[[scenario.phases]]
name = "lower"
set = { hoist = { payout_rate = 1.0 } }
until = { output = "cargo/z", op = "<=", value = -11.0 }
max_duration = 5.0
"""
    path = tmp_path / "lowering.toml"
    path.write_text(text)
    assert main(["run", str(path), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "hold" in out and "lower" in out
    # the per-phase table of the rope's tension, with its units, and the plot against time
    assert "hoist/tension max (kN)" in out and "hoist/tension min (kN)" in out
    assert "hoist/tension slack spells" in out and "hoist/tension largest snap (kN)" in out
    assert (tmp_path / "o" / "scenario.png").stat().st_size > 0
    with xr.open_dataset(tmp_path / "o" / "result.nc", engine="h5netcdf") as ds:
        events = json.loads(ds.attrs["events"])
        # the phase names once, on the phase index they name (they were also two global attributes)
        assert json.loads(ds["phase"].attrs["phase_names"]) == ["hold", "lower"]
        assert "phases" not in ds.attrs and "phase_names" not in ds.attrs
        z = ds["q"].values[:, 2]
    assert len(events) == 2 and 1.9 < events[1]["time"] < 3.0  # about 1 m at 1 m/s after the 1 s hold
    assert z.min() <= -11.0 + 1e-6
    # a scenario's phases set its duration: --duration is refused in one line
    err = _one_line_error(capsys, main(["run", str(path), "--out", str(tmp_path / "o"), "--duration", "5"]))
    assert "--duration" in err and "[scenario]" in err
    # an output to report that no element has: one line naming it
    path.write_text(text.replace('name = "lowering"\n[[scenario.phases]]', 'name = "lowering"\nreport = ["hoist/tenson"]\n[[scenario.phases]]', 1))
    err = _one_line_error(capsys, main(["run", str(path), "--out", str(tmp_path / "o")]))
    assert "scenario.report" in err and "hoist/tenson" in err


def test_readme_library_example_runs_as_written(tmp_path, monkeypatch):
    """The README's Library block, shortened in time (2 s, 2 realisations) and nothing else."""
    text = (HERE.parent / "README.md").read_text()
    block = text.split("## Library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    short = block.replace("duration=600.0,", "duration=2.0,").replace("n_realisations=16", "n_realisations=2")
    assert short != block
    monkeypatch.chdir(tmp_path)
    exec(compile(short, "README.md", "exec"), {})
    with xr.open_datatree(tmp_path / "out.nc", engine="h5netcdf") as ds:
        assert ds.sizes["realisation"] == 2 and ds["hoist1/tension"].attrs["units"] == "N"


@pytest.mark.parametrize("simulation, problem", [
    ("duration = 10.0\nsave_dt = 0.3\nmethod = 'rk4'\ndt = 0.1\n", "must divide the duration"),
    ("duration = 10.0\nsave_dt = 0.25\nmethod = 'rk4'\ndt = 0.1\n", "multiple of dt"),
])
def test_save_step_that_would_change_silently_is_refused(tmp_path, simulation, problem):
    text = ROPE.format(name="s", length=9.99).split("[simulation]")[0] + "[simulation]\n" + simulation
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(SystemFileError, match=problem) as info:
        load_system(tmp_path / "s.toml")
    assert info.value.field == "simulation.save_dt"


@pytest.mark.parametrize("duration, dt, expected", [(600.0, 0.05, 0.3), (10800.0, 0.05, 0.5), (4.0, 0.005, 0.005),
                                                    (1000.3, 0.1, 0.1)])
def test_default_save_step_keeps_about_2000_states(tmp_path, duration, dt, expected):
    """Before, a file without save_dt kept every step: 186 MB for a small 600 s case."""
    # a rope soft enough for the coarsest step (its bounce 3.2 rad/s: ω dt 0.32 at dt 0.1)
    text = ROPE.format(name="s", length=9.99).split("[simulation]")[0].replace("EA = 1.0e7", "EA = 1.0e5")
    text += f"[simulation]\nduration = {duration}\nmethod = 'rk4'\ndt = {dt}\n"
    (tmp_path / "s.toml").write_text(text)
    assert load_system(tmp_path / "s.toml").save_dt == pytest.approx(expected)


def test_progress_bar_only_on_a_terminal():
    import io

    from jaxmbd.cli import Progress

    log = io.StringIO()
    Progress("x", stream=log)(1, 2)
    assert log.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    Progress("x", stream=tty)(2, 2)
    assert "2/2" in tty.getvalue()
    # the bar's clock starts when the work does (the first step's compile in its rate), not at its first report
    bar = Progress("x", stream=Terminal())
    bar.started -= 100.0
    bar(1, 4)
    assert bar.bar.start_t == bar.started and bar.bar.format_dict["elapsed"] >= 100.0


def test_wave_elevation_at_the_reference_is_an_output():
    """The incident elevation the run saw, from the same tables as its excitation (the fixed-step
    run tabulates them), against the wave components' own elevation formula."""
    import jax

    from jaxmbd.hydro.waves import elevation
    from jaxmbd.simulation import simulate
    from sweep_system import INTEGRATOR, moored_barge

    system = moored_barge()
    res = simulate(system, 6.0, save_dt=0.5, integrator=INTEGRATOR, key=jax.random.key(5), n_realisations=2)
    zeta = np.asarray(res.outputs["hydro/wave_elevation"])
    keys = jax.random.split(jax.random.key(5), 2)
    for r in range(2):
        comps = system.waves.realise(keys[r])
        ref = np.asarray(elevation(comps, 0.0, 0.0, jax.numpy.asarray(res.time)))
        np.testing.assert_allclose(zeta[r], ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert 0.3 < 4 * zeta.std() < 2.0  # Hs 1 m
    assert system.output_units()["hydro/wave_elevation"] == "m"


def test_an_exhausted_step_budget_is_not_called_a_divergence():
    """Before, the inf diffrax leaves after it stops was reported as "the state became non-finite ...
    the run diverged"."""
    import jax.numpy as jnp

    from jaxmbd.examples import simple_pendulum
    from jaxmbd.simulation import Integrator, SimulationError, simulate
    from jaxmbd.system import System

    with pytest.raises(SimulationError, match="step budget ran out") as info:
        simulate(System(simple_pendulum(), ()), 10.0, save_dt=0.1, q0=jnp.array([1.0]),
                 integrator=Integrator("tsit5", max_steps=8))
    assert "diverged" not in str(info.value) and "after t = " in str(info.value)


def test_two_files_with_one_name_do_not_overwrite_each_other(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = _rope_file(tmp_path / "a", name="same"), _rope_file(tmp_path / "b", name="same")
    assert main(["run", str(a)]) == 0
    capsys.readouterr()
    err = _one_line_error(capsys, main(["run", str(b)]))
    assert "--out" in err and str(a) in err
    assert main(["run", str(a)]) == 0  # the same file again: replaced, with a note
    assert "is replaced" in capsys.readouterr().err


def test_run_table_gives_the_dynamic_amplification_only_from_a_static_start(tmp_path, capsys):
    """A DAF is the maximum over the static load.  From the static equilibrium the rope rests: 1.000.
    Started elsewhere (1 cm of stretch released), the value at the start is no static load, and a steady
    pull read so gave a 'DAF' of 202: the column is then blank and the note says why."""
    static = tmp_path / "static.toml"
    static.write_text(ROPE.format(name="static", length=9.99).replace("dt = 0.005\n", "dt = 0.005\nstatic_equilibrium = true\n"))
    assert main(["run", str(static), "--out", str(tmp_path / "s")]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.strip().startswith("output")).split()
    row = next(line for line in lines if line.strip().startswith("hoist/tension")).split()
    assert header[7] == "DAF" and float(row[5]) == pytest.approx(1.0, abs=1e-3)
    assert main(["run", str(_rope_file(tmp_path)), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("hoist/tension")).split()
    assert len(row) == 7 and "no DAF: the run did not start from its static equilibrium" in out


def test_each_component_of_a_vector_output_gets_its_own_unit():
    from jaxmbd.report import component_unit as _unit_for

    hydro = "N (surge sway heave), N m (roll pitch yaw)"
    assert [_unit_for(hydro, lab) for lab in ("heave", "pitch", "roll1")] == ["N", "N m", "N m"]
    assert _unit_for("N (fx fy fz), N m (mx my mz)", "mz") == "N m" and _unit_for("m", None) == "m"


def test_box_hull_deck_edge_and_bilge_are_checked(tmp_path):
    """A 20 x 10 m box of draught 2 m and depth 3 m (freeboard 1 m): the deck edge reaches the still
    waterline at atan(2 x 1 / 10) = 11.3 deg of roll, before the 15 deg of the roll range, and the bilge
    emerges at atan(2 x 2 / 10) = 21.8 deg; a heave of -1.1 m immerses the deck with no roll."""
    from jaxmbd import validity
    from jaxmbd.hydro import HydroBody, read_capytaine, test_barge_path
    from sweep_system import moored_barge

    base = moored_barge()
    hb = HydroBody.create(base.model, read_capytaine(test_barge_path()), bodies=("barge",), radiation=False,
                          hull_boxes=[(20.0, 10.0, 2.0, 3.0)])
    system = base.__class__(base.model, (hb,), waves=None, name="box")
    t = np.arange(4.0)
    eta = np.zeros((3, 4, 6))
    eta[0, 1:, 3] = np.radians(12.0)  # deck edge in, bilge still under
    eta[1, 2:, 3] = np.radians(23.0)  # both, and the roll range
    eta[2, 3:, 2] = -1.1  # sunk by 1.1 m, level
    found = {e.quantity: e for e in validity.check(system, t, {"hydro/eta": eta}, batched=True)}
    assert set(found) == {"deck edge of barge", "bilge of barge", "roll of barge"}
    assert found["deck edge of barge"].realisations == 3 and found["deck edge of barge"].first_time == 1.0
    assert found["bilge of barge"].realisations == 1 and found["bilge of barge"].first_time == 2.0
    no_depth = HydroBody.create(base.model, read_capytaine(test_barge_path()), bodies=("barge",), radiation=False,
                                hull_boxes=[(20.0, 10.0, 2.0)])
    assert [r.quantity for r in no_depth.valid_ranges(base.model)][-1] == "bilge of barge"


@pytest.mark.parametrize("tp", [3.5, 4.0, 6.0, 25.0])
def test_the_sea_modelled_is_the_sea_asked_for_or_the_run_says_so(tp):
    """Asked for Hs 2 m, the default band (0.2-2.5 rad/s) carried 1.78 m at Tp 3.5 s and 1.88 m at 4 s and
    the file said 2.0.  The band's share of the spectrum's energy and the Hs the realisations carry are
    now part of the sea state (written with the result), and below 99 % of the energy the run reports it
    as a range left.  The modelled Hs is what a realisation carries: 4 √(Σ a²/2) of one realisation
    within 5 % (its frequencies are drawn inside their bins)."""
    import jax

    from jaxmbd import validity
    from jaxmbd.hydro import JONSWAP, SeaState

    sea = SeaState(spectrum=JONSWAP(2.0, tp))
    fraction, modelled = sea.energy_fraction(), sea.modelled_hs()
    found = validity.check_sea(sea, 4)
    if abs(modelled / 2.0 - 1.0) > 0.005:
        assert found and found[0].extreme == fraction and f"{modelled:.3g} m modelled" in found[0].model
        assert found[0].realisations == 4 and "widen omega_min, omega_max" in found[0].line()
    else:
        assert not found
    a = np.asarray(sea.realise(jax.random.key(7)).amplitude)
    assert abs(4.0 * np.sqrt(np.sum(a**2) / 2.0) / modelled - 1.0) < 0.05
    assert SeaState(spectrum=JONSWAP(2.0, tp), omega_min=0.05, omega_max=12.0, n_frequencies=600).energy_fraction() > 0.999


def test_a_fixed_step_beyond_the_stiffest_mode_is_refused_or_reported(tmp_path, capsys):
    """A rope whose bounce is beyond what the step resolves gave peaks several per cent off and said nothing
    of the step.  The stiffest mode the elements state (here the rope's bounce: √(k/m) = √(EA/(L m)) for a
    cargo hung at its centre of mass on a free joint, to 1e-12) is held against the fixed step: beyond RK4's
    stability bound (ω dt > 2√2) the file is refused with the largest stable step; beyond ω dt = 1 the run
    reports it."""
    from jaxmbd import validity

    path = _rope_file(tmp_path)
    loaded = load_system(path)
    w = np.sqrt(1.0e7 / 9.99 / 1000.0)
    assert loaded.stiffest[1] == "hoist" and loaded.stiffest[0] == pytest.approx(w, rel=1e-12)
    path.write_text(path.read_text().replace("save_dt = 0.05", "save_dt = 0.1").replace("dt = 0.005", "dt = 0.1"))
    with pytest.raises(SystemFileError, match=r"simulation\.dt: dt 0\.1 s is beyond RK4's stability bound .*'hoist' "
                       rf"at {w:.3g} rad/s.*the largest stable step is {validity.RK4_STABLE / w:.3g} s"):
        load_system(path)
    path.write_text(path.read_text().replace("\ndt = 0.1", "\ndt = 0.05"))
    rc = main(["run", str(path), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0 and "hoist: the fixed step (rk4, dt 0.05 s) against its stiffest mode (31.6 rad/s)" in out, out
    assert f"dt <= {1.0 / w:.2g} s" in out


def test_a_run_too_large_for_the_machine_is_refused_up_front(tmp_path, capsys):
    """A duration of years (or a million realisations) started, compiled and ran for hours before running out
    of memory.  The results a run keeps are estimated before anything is compiled (states and outputs at
    every save of every realisation) and a run beyond 80 % of the machine's memory is refused in one line
    with the numbers."""
    from jaxmbd.run import RunSettings, size_problem

    path = _rope_file(tmp_path)
    rc = main(["run", str(path), "--duration", "1e11", "--out", str(tmp_path / "out")])
    err = _one_line_error(capsys, rc)
    assert "would keep about" in err and "fewer realisations, a longer save_dt or a shorter duration" in err
    system = load_system(path).system
    # 1,000 realisations of 2,001 saves of the rope's 13 states + 3 x its outputs: 0.5 GB, refused at 0.5 GB of memory
    values = 7 + 6 + system.n_states + 3 * len(system.output_units())
    settings = RunSettings(duration=100.0, save_dt=0.05, n_realisations=1000)
    need = 1000 * 2001 * values * 8
    assert size_problem(system, settings, memory=need / 0.8 * 1.01) is None
    assert f"{need / 1e9:.3g} GB" in size_problem(system, settings, memory=need / 0.8 * 0.99)


def test_a_time_budget_projects_from_the_units_after_the_first(monkeypatch):
    """The first unit (it carries the compile) only starts the clock; from the second on, elapsed + units
    left x the time per unit since the first is held against the limit.  A fake clock: 100 s for the first
    unit, then 10 s a unit: 10 units project to 100 + 9 x 10 = 190 s."""
    import itertools

    import jaxmbd.run as run_module

    clock = itertools.chain([0.0, 100.0, 110.0, 120.0], itertools.repeat(130.0))
    monkeypatch.setattr(run_module.time, "perf_counter", lambda: next(clock))
    budget = run_module.TimeBudget(200.0, "the job")
    budget(1, 10)
    budget(2, 10)  # 110 + 8 x 10 = 190 s: within 200 s
    with pytest.raises(run_module.RunError, match=r"the job would take about 3 min on this machine \(3 of 10 done in 120 s\): "
                                                  r"--yes runs it$"):
        budget.limit_s = 150.0
        budget(3, 10)  # 120 + 7 x 10 = 190 s > 150 s
    run_module.TimeBudget(None, "unlimited")(5, 10)  # no limit: nothing measured or raised


def test_an_out_of_memory_error_names_the_keys_that_size_the_run(tmp_path, capsys, monkeypatch):
    """XLA's out-of-memory error came through as an internal error naming an allocation; it now names the
    keys the run's memory grows with and their values.  (The allocation failure is simulated: a real one
    needs more memory than the test machine has.)"""
    import jaxmbd.run as run_module

    def exhausted(*args, **kwargs):
        raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 81920000000 bytes.")

    monkeypatch.setattr(run_module, "simulate", exhausted)
    rc = main(["run", str(_rope_file(tmp_path)), "--out", str(tmp_path / "out")])
    err = _one_line_error(capsys, rc)
    assert "out of memory while running" in err and "simulation.n_realisations = 1" in err, err
    assert "simulation.duration / dt = 4 s / 0.005 s = 800 steps" in err and "lower the largest" in err, err


@pytest.mark.parametrize("count, index", [(2, 5), (2, -1), (None, 3)])
def test_a_process_id_outside_the_process_count_is_refused(count, index):
    """A process index beyond the run's count was passed on to the distributed runtime (which waited for
    processes that never come) or, for one process, ignored; now one line before anything starts."""
    from jaxmbd.sweep import SweepError, initialise_distributed

    with pytest.raises(SweepError, match=rf"process id {index} .* is outside the {count or 1} process"):
        initialise_distributed("localhost:1", count, index)


# --------------------------------------------------------------------------- held-out input, round three
def test_a_body_name_that_differs_from_world_in_case_gets_a_hint(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(ROPE.format(name="w", length=9.99).replace('body_a = "world"', 'body_a = "World"'))
    with pytest.raises(SystemFileError, match=r"forces\[0\].body_a: unknown body 'World' \(names are case-sensitive: "
                                              r"did you mean 'world'\?\)") as info:
        load_system(path)
    assert "\n" not in str(info.value)


def test_a_file_nested_too_deeply_is_one_line(tmp_path, capsys):
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    err = _one_line_error(capsys, main(["run", str(path)]))
    assert "deep.toml" in err and "nested too deeply" in err


def test_a_urdf_joint_without_a_name_is_refused(tmp_path):
    from jaxmbd import load_urdf
    from jaxmbd.model import ModelError

    inertial = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    xml = (f'<robot name="r"><link name="a">{inertial}</link><link name="b">{inertial}</link>'
           '<joint type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>')
    with pytest.raises(ModelError, match=r"a <joint> \(child link 'b'\) has no name"):
        load_urdf(None, xml=xml)


@pytest.mark.parametrize("field, value, expected", [
    ("max_duration", '"30 s"', r"phase 0 \(hold\): max_duration: expected a number \(s\), got '30 s' \(write the number alone"),
    ("max_duration", '"thirty"', r"max_duration: expected a number \(s\), got 'thirty'"),
    ("set", '{ hoist = { length = "10 m" } }', r"hoist.length: expected a number or a list of numbers in SI units, got '10 m'"),
])
def test_a_scenario_value_written_with_its_unit_or_as_a_word_is_named(tmp_path, field, value, expected):
    text = _rope_for_phases("sc") + '\n[scenario]\nname = "s"\n[[scenario.phases]]\nname = "hold"\n'
    text += f"max_duration = {value}\n" if field == "max_duration" else f"max_duration = 1.0\nset = {value}\n"
    path = tmp_path / "sc.toml"
    path.write_text(text)
    with pytest.raises(SystemFileError, match=expected) as info:
        load_system(path)
    assert "\n" not in str(info.value)


def test_the_run_table_prints_degrees_and_the_files_load_unit(tmp_path, capsys):
    """The run table in display units: a rope's tension in the file's ``display_loads`` (kN by default, t on
    request: N / (1000 g) with the model's g), equal to the result file's SI figures (to the 4 printed digits),
    an angle in degrees; a value that is round-off (1e-16 m) prints 0; an unknown unit is one line."""
    import math

    base = ROPE.format(name="s", length=9.99).replace("dt = 0.005\n", "dt = 0.005\nstatic_equilibrium = true\n")
    for loads, factor in (("kN", 1e-3), ("t", 1.0 / (1000.0 * 9.81))):
        path = tmp_path / f"{loads}.toml"
        path.write_text(base if loads == "kN" else f'display_loads = "{loads}"\n' + base)
        assert main(["run", str(path), "--out", str(tmp_path / loads)]) == 0
        out = capsys.readouterr().out
        row = next(line for line in out.splitlines() if line.strip().startswith("hoist/tension")).split()
        ds = open_result(tmp_path / loads / "result.nc")
        peak = float(ds["hoist/tension_max_between"].max()) if "hoist/tension_max_between" in ds else float(ds["hoist/tension"].max())
        assert row[1] == loads and float(row[2]) == pytest.approx(peak * factor, rel=5e-4), (row, peak)
        assert f"forces in {loads}" in out
        sway = next(line for line in out.splitlines() if line.strip().startswith("hoist/sway")).split()
        assert sway[1] == "deg" and sway[2] == "0"  # a rope hanging plumb: its sway is round-off, printed 0
    bad = tmp_path / "bad.toml"
    bad.write_text('display_loads = "kips"\n' + base)
    with pytest.raises(SystemFileError) as info:
        load_system(bad)
    assert info.value.field == "display_loads" and "\n" not in str(info.value)
    from jaxmbd.units import display_unit, figure

    assert display_unit("rad") == ("deg", 180.0 / math.pi) and display_unit("N m", "MN") == ("MN m", 1e-6)
    assert figure(1.5e-16) == "0" and figure(0.5, 180.0 / math.pi) == "28.65" and figure(None) == "n/a"
