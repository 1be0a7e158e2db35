"""``jaxmbd operability`` on the packaged small lift at the packaged site: every step runs, the tables agree
with each other and with their definitions, and a file's [operability] table is checked key by key."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from jaxmbd.cli import main
from jaxmbd.io.system_file import SystemFileError, load_system
from jaxmbd.operability.alpha import alpha_factor
from jaxmbd.operability.hindcast import sample_hindcast
from jaxmbd.operability.job import limiting_table, operation, site_series, site_table, spectrum_gamma
from jaxmbd.operability.windows import go

SMALL_LIFT = Path(__file__).resolve().parents[1] / "jaxmbd" / "data" / "small_lift.toml"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("operability")
    assert main(["operability", str(SMALL_LIFT), "--smoke", "--out", str(out), "--report"]) == 0
    return out


def test_the_report_holds_the_limits_and_the_months_of_the_files(smoke):
    """report.html: every limit and every month's workability equal to limits.nc's and site.nc's (1e-12, the
    page keeps the full figure), the verdict names the worst month, and the ranges the searches left are shown."""
    import html as markup
    import re

    html = markup.unescape((smoke / "report.html").read_text())
    lim, site = xr.open_dataset(smoke / "limits.nc"), xr.open_dataset(smoke / "site.nc")
    table = html[html.index('<table class="limits">'):]
    values = [float(v) for v in re.findall(r'data-value="([^"]+)"', table[: table.index("</table>")])]
    np.testing.assert_allclose(values[0::2], lim["limiting_hs"].values.ravel(), rtol=1e-12)
    np.testing.assert_allclose(values[1::2], lim["operational_hs"].values.ravel(), rtol=1e-12)
    months = html[html.index('<table class="months">'):]
    work = [float(v) for v in re.findall(r'data-value="([^"]+)"', months[: months.index("</table>")])]
    np.testing.assert_allclose(work, site["workability"].values, rtol=1e-12)
    worst = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")[int(np.nanargmin(work))]
    assert f"of {worst} (its worst month)" in html and "spectrum's energy" in html and html.count("<img") >= 4


def test_the_command_writes_its_tables_with_units_and_plots(smoke):
    limits = xr.open_dataset(smoke / "limits.nc")
    site = xr.open_dataset(smoke / "site.nc")
    for name in ("limiting_hs", "limiting_hs_low", "limiting_hs_high", "operational_hs"):
        assert limits[name].attrs["units"] == "m"
    assert limits["tp"].attrs["units"] == "s" and limits["heading"].attrs["units"] == "deg"
    assert site["workability"].attrs["units"] == "1" and site["waiting"].attrs["units"] == "h"
    assert (smoke / "limits.png").stat().st_size > 10_000 and (smoke / "site.png").stat().st_size > 10_000
    rows = (smoke / "limits.csv").read_text().splitlines()
    assert rows[0] == ("phase,heading_deg,tp_s,limiting_hs_m,band_low_m,band_high_m,alpha,operational_hs_m,alpha_below_table,"
                       "status,governing") and len(rows) == 1 + limits["limiting_hs"].size


def test_limits_are_roots_with_their_band_and_alpha(smoke):
    """Tp 6 s has a root; at Tp 4 s every criterion holds up to the breaking Hs (1.665 m: DNV-RP-C205's steepness
    1/15), which is the search's ceiling there; the operational limit is alpha x the limit (1e-12), alpha
    DNV-OS-H101's at the limit and the operation's 3 h; the governing criterion is one of the file's.  Two
    realisations (the smoke form) give no band: a bootstrap of two says nothing (tests/test_limiting.py holds the
    band)."""
    lim = xr.open_dataset(smoke / "limits.nc")
    hs = lim["limiting_hs"].values
    assert list(lim["tp"].values) == [4.0, 6.0] and list(lim["status"].values.ravel()) == ["above", "root"]
    np.testing.assert_allclose(lim["hs_ceiling"].values, [1.6654, 3.7471], atol=1e-4)
    assert hs[0, 0, 0] == lim["hs_ceiling"].values[0] and 0.3 < hs[0, 0, 1] < 3.0
    assert np.all(np.isnan(lim["limiting_hs_low"].values)) and lim.attrs["n_realisations"] == 2
    np.testing.assert_allclose(lim["operational_hs"].values, lim["alpha"].values * hs, rtol=1e-12)
    for a, h in zip(lim["alpha"].values.ravel(), hs.ravel()):
        assert a == alpha_factor(3, max(h, 1.0))
    assert set(lim["governing"].values.ravel()) <= {"hoist/tension <= 300000", "hoist/tension >= 0.1 x static"}
    # the spectrum of Tp 4 s reaches beyond the hydrodynamic data's 2.5 rad/s: the table says so
    assert "spectrum's energy" in str(lim["validity"].values[0, 0])


def test_a_phase_failing_at_the_floor_is_a_no_go_and_alpha_below_1_m_is_marked(tmp_path):
    """Cells on disk (as a study leaves them): at Tp 4 s the phase fails at the search's floor (0.1 m), at Tp 6 s
    its limit is 0.8 m.  The first is a no-go (operational limit 0, not alpha x 0.1 m); both lie below the alpha
    table's 1 m column: the limit's alpha is taken there and marked."""
    import dataclasses

    from jaxmbd.operability.cells import cell_key, cell_path, write_cell
    from jaxmbd.run import settings_of, start_of

    loaded = load_system(SMALL_LIFT)
    op = dataclasses.replace(loaded.operability, headings_deg=(180.0,), tp=(4.0, 6.0), n_realisations=2)
    start = start_of(loaded)
    base = settings_of(loaded, n_realisations=op.n_realisations, seed=op.seed, duration=op.duration)
    for j, (hs, status) in enumerate(((0.1, "below"), (0.8, "root"))):
        phase = {"hs": hs, "low": float("nan"), "high": float("nan"), "status": status, "governing": op.criteria[0].name}
        write_cell(cell_path(tmp_path, 0, j), cell_key(loaded.system, start, op, 0, j, settings=base, scenario=None),
                   {"phases": [phase], "runs": 3, "validity": ""})
    lim = limiting_table(loaded, op, start=start, out_dir=tmp_path)
    assert list(lim["operational_hs"].values.ravel()) == [0.0, alpha_factor(3, 1.0) * 0.8]
    assert list(lim["alpha_below_table"].values.ravel()) == [0, 1]  # the no-go takes no alpha
    assert operation(lim, op)[0].limit(np.array([4.0, 5.0])).tolist() == [0.0, 0.5 * alpha_factor(3, 1.0) * 0.8]


def test_a_heading_the_hull_table_does_not_cover_is_refused_before_any_cell_runs(tmp_path):
    """The packaged barge's table holds headings 0-180 deg: a table asking 180 and 225 deg stops at once with one
    line naming 225 deg, the file and the remedy, and leaves no cell on disk (before, the 180 deg cells ran first)."""
    import dataclasses

    from jaxmbd.run import RunError

    loaded = load_system(SMALL_LIFT)
    op = dataclasses.replace(loaded.operability, headings_deg=(180.0, 225.0), tp=(6.0,), n_realisations=2)
    with pytest.raises(RunError, match=r"heading 225 deg: .*barge_hydro.nc.*outside the excitation table.*xz_symmetry"):
        limiting_table(loaded, op, out_dir=tmp_path)
    assert not (tmp_path / "cells").exists() or not any((tmp_path / "cells").iterdir())


def test_the_site_table_is_the_weather_windows_of_the_limits(smoke):
    """The site's go count per month equals the weather windows recomputed here from the limits file."""
    lim, site = xr.open_dataset(smoke / "limits.nc"), xr.open_dataset(smoke / "site.nc")
    loaded = load_system(SMALL_LIFT, validate=False)
    op = loaded.operability
    series = site_series(sample_hindcast(), gamma=spectrum_gamma(loaded))
    starts = go(series, operation(lim, op))
    month = series.month
    counts = [int(np.sum(starts.go & (month == m))) for m in range(1, 13)]
    assert counts == [int(x) for x in site["go"].values]
    assert int(site["duration"]) == op.hours == 3
    assert site.attrs["max_gap_hours"] == 24 and site.attrs["include_gap_waits"] == 0 and "rule" in site.attrs


@pytest.mark.slow
def test_the_root_search_agrees_with_a_fine_grid_of_hs():
    """One period and heading of the small lift: the root of the margin interpolated on a grid of 0.05 m
    (the same realisations at every Hs) equals the search's limiting Hs within 1 %."""
    import dataclasses

    from jaxmbd.operability.job import _Runs
    from jaxmbd.run import settings_of, start_of

    loaded = load_system(SMALL_LIFT)
    op = dataclasses.replace(loaded.operability, headings_deg=(180.0,), tp=(8.0,), n_realisations=4)
    lim = limiting_table(loaded, op)
    found = float(lim["limiting_hs"].values[0, 0, 0])
    runs = _Runs(loaded, start_of(loaded), settings_of(loaded, n_realisations=4, seed=op.seed, duration=op.duration,
                                                      tp=8.0, heading=np.pi), op.criteria)
    grid = np.round(np.arange(found - 0.3, found + 0.3001, 0.05), 6)
    g = np.array([min(runs(h).values()) for h in grid])
    k = int(np.argmax(g < 0))
    root = grid[k - 1] - g[k - 1] * (grid[k] - grid[k - 1]) / (g[k] - g[k - 1])
    assert found == pytest.approx(root, rel=0.01)


def _lift_text(replace=None, append=""):
    text = SMALL_LIFT.read_text()
    for a, b in (replace or {}).items():
        assert a in text, a
        text = text.replace(a, b)
    return text.replace('file = "barge_hydro.nc"', f'file = "{(SMALL_LIFT.parent / "barge_hydro.nc").as_posix()}"') + append


@pytest.mark.parametrize("replace, field, message", [
    ({'output = "hoist/tension"\nupper': 'output = "hoist/tensoin"\nupper'}, "operability.phases[0].criteria[0].output",
     "unknown output 'hoist/tensoin'; scalar outputs:"),
    ({"upper = 3.0e5 ": "upper = 3.0e5\nlower = 1.0 "}, "operability.phases[0].criteria[0]", "give exactly one of upper"),
    ({'statistic = "mpm"\nexposure = 3600.0                         # s': 'statistic = "max"\nexposure = 3600.0 # s'},
     "operability.phases[0].criteria[0]", "statistic must be 'mpm', 'mean' or 'p<NN>'"),
    ({"lower_fraction = 0.1 ": "lower_fraction = 1.1 "}, "operability.phases[0].criteria[1]", "lower_fraction must lie in (0, 1)"),
    ({"hours = 3": "hours = 100"}, "operability.phases", "exceed the alpha table's last row (72 h)"),
    ({"hours = 3": "hours = 0"}, "operability.phases[0].hours", "must be >= 1"),
    ({"tp = [4.0, 6.0, 8.0, 10.0, 12.0]": "tp = [4.0, 4.0]"}, "operability.tp", "distinct values"),
    ({"tp = [4.0, 6.0, 8.0, 10.0, 12.0]": "tp = [6.0]"}, "operability.tp", "at least two periods"),
    ({"tp = [4.0, 6.0, 8.0, 10.0, 12.0]": "tp = [6.0, 4.0]"}, "operability.tp", "expected increasing periods"),
    ({'forecast_level = "base"': 'forecast_level = "base"\nalpha = 0.8'}, "operability.alpha", "not both"),
    ({'forecast_level = "base"': 'forecast_level = "Z"'}, "operability.forecast_level", "unknown value 'Z'"),
    ({"duration = 200.0                          # s per realisation\n": ""}, "operability.duration", "missing"),
    ({"seed = 1\nhs_max": "sed = 1\nhs_max"}, "operability.sed", "unknown key"),
    ({"n_realisations = 8": "n_realisations = 1"}, "operability.n_realisations", "expected 2 or more: an exposure"),
    ({'name = "lift"': 'name = "contingency"'}, "operability.phases[0].name", "names the windows' contingency slot"),
    ({}, "operability.phases[1].criteria[0]", "named 'hoist/tension <= 300000' like operability.phases[0].criteria[0]"),
])
def test_a_bad_operability_table_is_one_line_naming_the_key(tmp_path, replace, field, message):
    path = tmp_path / "lift.toml"
    # a second phase: the crane's limit again, over another exposure (without a [scenario], under the same name)
    other = ('\n[[operability.phases]]\nname = "set"\nhours = 1\n[[operability.phases.criteria]]\noutput = "hoist/tension"\n'
             'upper = 3.0e5\nexposure = 600.0\n' if "phases[1]" in field else "")
    path.write_text(_lift_text(replace, other))
    with pytest.raises(SystemFileError) as info:
        load_system(path, validate=False)
    assert info.value.field == field and message in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_the_forecast_level_left_out_is_dnvs_base_case(tmp_path):
    path = tmp_path / "lift.toml"
    path.write_text(_lift_text({'forecast_level = "base"': ""}))
    assert load_system(path, validate=False).operability.forecast_level == "base"


def test_a_criterion_named_in_the_file_keeps_its_own_margin(tmp_path):
    path = tmp_path / "lift.toml"
    path.write_text(_lift_text(append='\n[[operability.phases]]\nname = "set"\nhours = 1\n[[operability.phases.criteria]]\n'
                                      'output = "hoist/tension"\nupper = 3.0e5\nexposure = 600.0\nname = "crane, 10 min"\n'))
    op = load_system(path, validate=False).operability
    assert [c.name for c in op.criteria] == ["hoist/tension <= 300000", "hoist/tension >= 0.1 x static", "crane, 10 min"]


def test_the_sites_tp_is_read_for_the_studys_own_spectrum(tmp_path):
    """The hindcast gives Tz; the limits are curves in the Tp of the file's spectrum, so its hours are read as
    that spectrum's Tp: Pierson-Moskowitz (gamma 1) gives Tp = 1.405 Tz, against 1.286 Tz at gamma 3.3 (DNV-RP-C205's
    ratio, tests/test_hindcast.py)."""
    from jaxmbd.operability.hindcast import tp_from_tz

    path = tmp_path / "lift.toml"
    path.write_text(_lift_text({'type = "jonswap"\nhs = 1.0': 'type = "pierson_moskowitz"\nhs = 1.0', "gamma = 3.3\n": ""}))
    assert spectrum_gamma(load_system(path, validate=False)) == 1.0 and spectrum_gamma(load_system(SMALL_LIFT, validate=False)) == 3.3
    site = sample_hindcast()
    series = site_series(site, gamma=1.0)
    np.testing.assert_array_equal(series.tp[series.present], tp_from_tz(site.tz, 1.0))
    assert np.all(series.tp[series.present] > 1.09 * site_series(site, gamma=3.3).tp[series.present])


def test_phases_out_of_the_scenarios_order_are_refused(tmp_path):
    path = tmp_path / "lift.toml"
    scenario = ('\n[scenario]\nname = "s"\n[[scenario.phases]]\nname = "hold"\nmax_duration = 10.0\n'
                '[[scenario.phases]]\nname = "lift"\nmax_duration = 10.0\n')
    hold = '\n[[operability.phases]]\nname = "hold"\nhours = 1\n[[operability.phases.criteria]]\noutput = "hoist/tension"\nupper = 3.0e5\n'
    path.write_text(_lift_text({"duration = 200.0                          # s per realisation\n": "",
                                "duration = 200.0                          # s\n": ""}, hold + scenario))
    with pytest.raises(SystemFileError, match=r"operability.phases\[1\].name: phase 'hold' comes before 'lift' in the \[scenario\]"):
        load_system(path, validate=False)


def test_the_contingency_spans_the_windows_to_the_reference_period(smoke):
    """contingency_hours = T_C: the site table's windows span T_POP + T_C, the contingency's limit the least of
    the phases'; the go count is the brute recount of that operation; T_POP (alpha's row, the total) unchanged."""
    import dataclasses

    lim = xr.open_dataset(smoke / "limits.nc")
    loaded = load_system(SMALL_LIFT, validate=False)
    op = dataclasses.replace(loaded.operability, contingency_hours=3)
    ops = operation(lim, op)
    assert [p.name for p in ops] == ["lift", "contingency"] and ops[1].duration == 3
    site = site_table(lim, op, sample_hindcast(), gamma=3.3)
    series = site_series(sample_hindcast(), gamma=3.3)
    starts = go(series, ops)
    assert [int(x) for x in site["go"].values] == [int(np.sum(starts.go & (series.month == m))) for m in range(1, 13)]
    assert int(site["duration"]) == 3 and int(site["reference_period"]) == 6 and site.attrs["tp_from_tz_gamma"] == 3.3
    plain = site_table(lim, loaded.operability, sample_hindcast(), gamma=3.3)
    assert np.all(site["go"].values <= plain["go"].values) and site["go"].values.sum() < plain["go"].values.sum()
    np.testing.assert_array_equal(site["total"].values, site["waiting"].values + 3)


def test_a_phase_that_the_scenario_does_not_have_is_named(tmp_path):
    path = tmp_path / "lift.toml"
    scenario = '\n[scenario]\nname = "s"\n[[scenario.phases]]\nname = "hold"\nmax_duration = 10.0\n'
    path.write_text(_lift_text({"duration = 200.0                          # s per realisation\n": "",
                                "duration = 200.0                          # s\n": ""}, scenario))
    with pytest.raises(SystemFileError, match=r"operability.phases\[0\].name: no phase 'lift' in the \[scenario\]; its phases: hold"):
        load_system(path, validate=False)


def test_a_file_without_an_operability_table_is_one_line(tmp_path, capsys):
    path = tmp_path / "lift.toml"
    path.write_text(_lift_text()[: _lift_text().index("[operability]")])
    assert main(["operability", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "expected an [operability] table" in err and "\n" not in err


@pytest.fixture(scope="module")
def two_cells(tmp_path_factory):
    """A small study of two cells, one process, kept in a folder: (loaded, table, its result, the folder)."""
    import dataclasses

    loaded = load_system(SMALL_LIFT)
    op = dataclasses.replace(loaded.operability, headings_deg=(180.0,), tp=(6.0, 10.0), n_realisations=2, duration=60.0)
    out = tmp_path_factory.mktemp("two_cells")
    return loaded, op, limiting_table(loaded, op, out_dir=out / "one"), out


def test_cells_split_over_two_processes_or_resumed_give_bitwise_the_same_table(two_cells):
    """One process; two processes taking every other cell (the first returns None, the second the table); and
    one run killed after its first cell (the file of the second removed) and resumed: every variable bitwise."""
    import dataclasses

    loaded, op, one, tmp_path = two_cells
    assert limiting_table(loaded, op, out_dir=tmp_path / "two", process_index=0, process_count=2) is None
    two = limiting_table(loaded, op, out_dir=tmp_path / "two", process_index=1, process_count=2)
    (tmp_path / "one" / "cells" / "cell_h00_t001.json").unlink()
    resumed = limiting_table(loaded, op, out_dir=tmp_path / "one")
    for other in (two, resumed):
        for name in one.data_vars:
            assert np.array_equal(one[name].values, other[name].values, equal_nan=one[name].dtype.kind == "f"), name
    changed = dataclasses.replace(op, seed=2)
    with pytest.raises(ValueError, match=r"cell_h00_t000.json: computed for another study \(changed: seed 1 -> 2\)"):
        limiting_table(loaded, changed, out_dir=tmp_path / "one")
    # what decides a run beyond the table: the integrator and save step, and the [scenario]'s phases
    finer = dataclasses.replace(loaded, integrator=dataclasses.replace(loaded.integrator, dt=loaded.integrator.dt / 2))
    with pytest.raises(ValueError, match=r"computed for another study \(changed: integrator\)"):
        limiting_table(finer, op, out_dir=tmp_path / "one")
    phased = dataclasses.replace(loaded, scenario={"name": "s", "phases": [{"name": "lift", "max_duration": 60.0}]})
    with pytest.raises(ValueError, match=r"computed for another study \(changed: duration 60.0 -> None; scenario\)"):
        limiting_table(phased, dataclasses.replace(op, duration=None), out_dir=tmp_path / "one")


def test_the_cells_in_lock_step_agree_with_one_at_a_time_and_split_bitwise(two_cells, tmp_path):
    """Every cell's searches in lock-step, each round's runs as one program (``together``, an accelerator's
    default): the same searches as one run at a time (same run counts and governing criteria; limits and
    bands to 1e-9 relative, the round-off of a vmapped program against a single one), and split over two
    processes the same bits as one process."""
    loaded, op, one, _ = two_cells
    both = limiting_table(loaded, op, together=2, out_dir=tmp_path / "one")
    for name in ("runs", "governing", "status"):
        assert np.array_equal(one[name].values, both[name].values), name
    for name in ("limiting_hs", "limiting_hs_low", "limiting_hs_high", "operational_hs"):
        np.testing.assert_allclose(both[name].values, one[name].values, rtol=1e-9, err_msg=name)
    assert limiting_table(loaded, op, together=2, out_dir=tmp_path / "two", process_index=0, process_count=2) is None
    two = limiting_table(loaded, op, together=2, out_dir=tmp_path / "two", process_index=1, process_count=2)
    for name in both.data_vars:
        assert np.array_equal(both[name].values, two[name].values, equal_nan=both[name].dtype.kind == "f"), name


_PHASED = ("\n[scenario]\nname = \"lift\"\n"
           "[[scenario.phases]]\nname = \"hang\"\nmax_duration = 40.0\n"
           "[[scenario.phases]]\nname = \"lower\"\nset = { hoist = { payout_rate = 0.1 } }\nmax_duration = 20.0\n"
           "[[scenario.phases]]\nname = \"hold\"\nset = { hoist = { payout_rate = 0.0 } }\nmax_duration = 40.0\n")
_HOLD = ('\n[[operability.phases]]\nname = "hold"\nhours = 1\n[[operability.phases.criteria]]\n'
         'output = "hoist/tension"\nupper = 3.0e5\nstatistic = "mpm"\nexposure = 3600.0\n')


@pytest.mark.slow  # about 2 min: searches of a three-phase scenario (one cell at a time, in lock-step) and of the lift without phases
def test_a_scenarios_phases_have_their_own_limits_and_its_first_phase_is_the_plain_run(tmp_path):
    """The small lift as an operation of three phases (hang 40 s, lower 2 m, hold 40 s), saved at every step,
    its realisations batched: the first phase is the plain 40 s run of the same realisations (RK4 at the same
    step from the same start; the hook load to 1e-9 relative, round-off of two solvers' sums), so its limiting
    Hs is the plain run's (1e-6 m: the searches take the same steps on margins equal to round-off); a batch
    of realisations is each realisation run alone (1e-9); the held phase, on 2 m more rope, has its own; the
    two periods' searches in lock-step (their runs one program) are the one-at-a-time searches (1e-9 m)."""
    import jax

    from jaxmbd.run import run, settings_of, start_of

    common = {"dt = 0.04                                 # s\n": "dt = 0.04\nsave_dt = 0.04\n",
               "headings_deg = [135.0, 180.0]": "headings_deg = [180.0]",
               "tp = [4.0, 6.0, 8.0, 10.0, 12.0]": "tp = [6.0, 8.0]", "n_realisations = 8\nduration": "n_realisations = 3\nduration"}
    plain_path, phased_path = tmp_path / "plain.toml", tmp_path / "phased.toml"
    plain_path.write_text(_lift_text(common | {"duration = 200.0                          # s per realisation":
                                               "duration = 40.0"}))
    phased_path.write_text(_lift_text(common | {
        "duration = 200.0                          # s per realisation\n": "",
        "duration = 200.0                          # s\n": "",
        "damping = 2.0e4                           # N s/m\n": "damping = 2.0e4\nwinch = true\n",
        'name = "lift"\nhours = 3': 'name = "hang"\nhours = 3'}, _PHASED + _HOLD))
    plain, phased = load_system(plain_path), load_system(phased_path)
    start = start_of(plain)
    one = run(plain, start, hs=1.0, tp=8.0, n_realisations=3, duration=40.0)
    many = run(phased, start, hs=1.0, tp=8.0, n_realisations=3)
    hang = np.asarray(many.phase)[0] == 0  # 0, 0.04, ..., 40 s as the plain run's saves
    np.testing.assert_allclose(np.asarray(many.outputs["hoist/tension"])[:, hang], one.outputs["hoist/tension"], rtol=1e-9)
    scenario, system = phased.build_scenario(), many.system
    keys = jax.random.split(settings_of(phased, n_realisations=3).prng_key(), 3)
    alone = scenario.run(system, y0=start.state(system), save_dt=0.04, integrator=phased.integrator,
                         waves=system.waves.realise(keys[2]))
    np.testing.assert_allclose(np.asarray(many.outputs["hoist/tension"])[2][: alone.time.size],
                               alone.outputs["hoist/tension"], rtol=1e-9)
    assert [e.name for e in many.events[2]] == ["hang", "lower", "hold"]
    lim_plain, lim = limiting_table(plain, plain.operability), limiting_table(phased, phased.operability)
    assert list(lim["phase"].values) == ["hang", "hold"] and np.all(lim["status"].values == "root")
    np.testing.assert_allclose(lim["limiting_hs"].values[0], lim_plain["limiting_hs"].values[0], rtol=0, atol=1e-6)
    assert np.all(np.abs(lim["limiting_hs"].values[1] - lim["limiting_hs"].values[0]) > 0.01)
    both = limiting_table(phased, phased.operability, together=2)  # the two periods' searches in lock-step
    np.testing.assert_allclose(both["limiting_hs"].values, lim["limiting_hs"].values, rtol=0, atol=1e-9)
    assert (both["runs"].values == lim["runs"].values).all() and (both["governing"].values == lim["governing"].values).all()


def test_a_phase_some_realisation_never_reached_fails_and_governs():
    """An earlier phase that hit its time limit stops a realisation there: the phases after it are not reached.
    A run of three realisations in two phases whose third stops in the first: the first phase's criterion is
    its margin as ever; the second phase fails by the fraction that missed it (-1/3), its criterion too, and
    the run's validity names it.  Searched, the second phase's limit is where the realisations stop reaching it,
    governed by that (the search takes its name first, so it governs a tie); the first phase's by its load."""
    from jaxmbd.operability.criteria import Criterion, extremes_of, margin_of
    from jaxmbd.operability.job import OperationPhase, _Runs, reached_name, search_names
    from jaxmbd.operability.limiting import Search, limiting_hs
    from jaxmbd.results import Result

    t = np.array([[0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, np.nan, np.nan]])
    phase = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, -1, -1]])
    load = np.array([[1.0, 2.0, 2.0, 3.0], [1.0, 1.5, 1.5, 2.5], [1.0, 4.0, np.nan, np.nan]])
    result = Result(None, t, np.zeros((3, 4, 1)), np.zeros((3, 4, 1)), np.zeros((3, 4, 0)), {"x": load}, batched=True,
                    phase=phase, phase_names=("a", "b"))
    first, second = (Criterion("x", upper=10.0, statistic="mean", phase=p, name=f"x in {p}") for p in ("a", "b"))
    runs = _Runs(None, None, None, (first, second))
    found = runs.record(1.0, result)
    assert found["x in a"] == pytest.approx(float(margin_of(first, *extremes_of((first,), result)["x in a"])))
    assert found["x in a"] == pytest.approx((10.0 - (2.0 + 1.5 + 4.0) / 3) / 10.0)
    assert found["x in b"] == found[reached_name("b")] == pytest.approx(-1.0 / 3.0)
    assert found[reached_name("a")] == np.inf
    assert any("'b' not reached" in what for what in runs.left)
    op = OperationPhase("b", 1, (second,))
    assert search_names(op) == (reached_name("b"), "x in b")

    def margins_at(hs):  # the load grows with Hs; above 2 m one realisation of three stops before "b"
        return {"x in a": 1.0 - hs / 3.0, "x in b": 1.0 - hs / 4.0 if hs <= 2.0 else -1.0 / 3.0,
                reached_name("a"): np.inf, reached_name("b"): np.inf if hs <= 2.0 else -1.0 / 3.0}

    search = Search(hs_start=1.0, hs_max=6.0, tolerance=0.01)
    in_b = limiting_hs(margins_at, search_names(op), search)
    assert in_b.status == "root" and abs(in_b.hs - 2.0) < 0.01 and in_b.governing == reached_name("b")
    in_a = limiting_hs(margins_at, search_names(OperationPhase("a", 1, (first,))), search)
    assert abs(in_a.hs - 3.0) < 0.01 and in_a.governing == "x in a"


def test_a_realisation_that_diverges_fails_its_phase_and_the_run_says_so():
    """A realisation whose state became non-finite in phase b stopped at its last finite save (a 'diverged'
    event): of three, phase b fails by 1/3, its criterion and its margin 'reached and run without diverging' alike,
    phase a keeps its own margin, and the run's validity names the phase it diverged in."""
    from jaxmbd.operability.criteria import Criterion
    from jaxmbd.operability.job import _Runs, reached_name
    from jaxmbd.results import Result
    from jaxmbd.scenario import PhaseEvent

    t = np.array([[0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 1.0, np.nan]])
    phase = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, -1]])
    load = np.array([[1.0, 2.0, 2.0, 3.0], [1.0, 1.5, 1.5, 2.5], [1.0, 4.0, 4.0, np.nan]])
    ends = [PhaseEvent(1.0, 0, "a", "duration", "1 s elapsed"), PhaseEvent(2.0, 1, "b", "duration", "1 s elapsed")]
    broke = [ends[0], PhaseEvent(1.0, 1, "b", "diverged", "the state became non-finite between t = 1 s and 1.5 s")]
    result = Result(None, t, np.zeros((3, 4, 1)), np.zeros((3, 4, 1)), np.zeros((3, 4, 0)), {"x": load}, batched=True,
                    phase=phase, phase_names=("a", "b"), events=[ends, ends, broke])
    first, second = (Criterion("x", upper=10.0, statistic="mean", phase=p, name=f"x in {p}") for p in ("a", "b"))
    runs = _Runs(None, None, None, (first, second))
    found = runs.record(1.0, result)
    assert found["x in a"] == pytest.approx((10.0 - (2.0 + 1.5 + 4.0) / 3) / 10.0)
    assert found["x in b"] == found[reached_name("b")] == pytest.approx(-1.0 / 3.0) and found[reached_name("a")] == np.inf
    assert [what for what in runs.left] == ["runs diverged in phase 'b' (the state became non-finite: those realisations fail it)"]


def test_a_batch_of_phases_goes_on_when_one_realisation_diverges():
    """examples/lift_in_phases.toml, two realisations as one batch, the second's waves of infinite amplitude: with
    diverged='stop' the first runs its three phases as it runs alone (to 1e-9: a batch of one against two), the second
    stops in the first phase at its last finite save with a 'diverged' event; with 'raise' (the default) the batch
    stops with the error naming the realisation."""
    import equinox as eqx
    import jax

    from jaxmbd.errors import SimulationError

    loaded = load_system(Path(__file__).resolve().parents[1] / "examples" / "lift_in_phases.toml")
    scenario = loaded.build_scenario()
    y0 = loaded.start().state(loaded.system)
    calm = loaded.system.waves.realise(jax.random.key(0))
    wild = eqx.tree_at(lambda w: w.amplitude, calm, calm.amplitude * np.inf)
    kw = {"integrator": loaded.integrator, "save_dt": loaded.simulation.save_dt}
    both = scenario.run_many(loaded.system, y0, [calm, wild], diverged="stop", **kw)
    alone = scenario.run(loaded.system, y0=y0, waves=calm, **kw)
    assert [e.trigger for e in both[1].events] == ["diverged"] and both[1].events[0].phase == 0
    assert np.all(np.isfinite(both[1].q)) and [e.name for e in both[0].events] == ["hang", "lower", "hold"]
    np.testing.assert_allclose(both[0].q, alone.q, rtol=0, atol=1e-9)
    with pytest.raises(SimulationError, match="realisation 1: the state became non-finite"):
        scenario.run_many(loaded.system, y0, [calm, wild], **kw)


def test_the_gradient_model_takes_a_phase_some_realisation_never_reached_as_the_study_does():
    """The limiting-Hs model of `jaxmbd tune` (its margins from one compiled program of the phases) reads a run
    as the study does: of four realisations, one whose first phase hit its time limit never reaches the second,
    so the second phase's criteria and its 'reached' margin are -1/4 (the study's rule), where all four reach it
    the criteria's own margins and +inf; a solver that stopped inside a phase is still an error."""
    from types import SimpleNamespace

    from jaxmbd.operability.job import reached_name
    from jaxmbd.optim.workability import LimitingHsModel
    from jaxmbd.simulation import SimulationError

    phases = [SimpleNamespace(until=object(), on_time_limit="stop", name=n) for n in ("first", "second")]
    margins = np.array([0.4, 0.3])  # the program's margins: every phase's criteria; this model's are both
    ended = np.array([[True, True], [True, True], [False, False], [True, True]])
    ok = np.ones((4, 2), bool)
    criteria = (SimpleNamespace(name="a", phase="second"), SimpleNamespace(name="b", phase="second"))
    model = SimpleNamespace(tp=7.0, heading_deg=0.0, phase="second", _reads={"second": 1}, _own=[0, 1], names=("a", "b"),
                            criteria=criteria, scenario=SimpleNamespace(phases=phases), _args=lambda: (),
                            _values=lambda v: {}, _margins_of=lambda *a: (margins, ok, ended))
    model._checked = lambda *a: LimitingHsModel._checked(model, *a)
    found = LimitingHsModel.margins(model, 2.0)
    assert found == {reached_name("second"): -0.25, "a": -0.25, "b": -0.25}
    model._margins_of = lambda *a: (margins, ok, np.ones((4, 2), bool))
    assert LimitingHsModel.margins(model, 2.0) == {reached_name("second"): np.inf, "a": 0.4, "b": 0.3}
    bad = ok.copy()
    bad[1, 0] = False
    model._margins_of = lambda *a: (margins, bad, np.ones((4, 2), bool))
    with pytest.raises(SimulationError, match="realisation 1, phase 0 .* the integrator stopped"):
        LimitingHsModel.margins(model, 2.0)


def test_the_gradient_model_of_a_table_phase_reading_two_scenario_phases_gives_each_its_reached_margin():
    """A table phase (built in Python) whose criteria read two scenario phases: the model's margins hold a
    'reached' margin for each (the names its search takes the least of, jaxmbd.operability.job.search_names),
    and a phase that one of four realisations never reached fails only its own criteria, by -1/4, as the
    study's runs read it (jaxmbd.operability.job._Runs.record); all reached, the criteria's own margins."""
    from types import SimpleNamespace

    from jaxmbd.operability.job import reached_name, search_names
    from jaxmbd.optim.workability import LimitingHsModel

    phases = [SimpleNamespace(until=object(), on_time_limit="stop", name=n) for n in ("lower", "splash", "land")]
    criteria = (SimpleNamespace(name="sling", phase="lower"), SimpleNamespace(name="slack", phase="splash"))
    margins = np.array([0.9, 0.4, 0.3])  # the program's: every criterion of the file; this model's are 1 and 2
    ended = np.ones((4, 3), bool)
    ended[2, 0] = False  # realisation 2's first phase hit its time limit: it never reaches "splash"
    ok = np.ones((4, 3), bool)
    model = SimpleNamespace(tp=7.0, heading_deg=0.0, phase="over the side", _reads={"lower": 0, "splash": 1},
                            _own=[1, 2], names=("sling", "slack"), criteria=criteria,
                            scenario=SimpleNamespace(phases=phases), _args=lambda: (), _values=lambda v: {},
                            _margins_of=lambda *a: (margins, ok, ended))
    model._checked = lambda *a: LimitingHsModel._checked(model, *a)
    found = LimitingHsModel.margins(model, 2.0)
    assert found == {reached_name("lower"): np.inf, reached_name("splash"): -0.25, "sling": 0.4, "slack": -0.25}
    assert set(search_names(SimpleNamespace(criteria=criteria))) == set(found)
    model._margins_of = lambda *a: (margins, ok, np.ones((4, 3), bool))
    assert LimitingHsModel.margins(model, 2.0) == {reached_name("lower"): np.inf, reached_name("splash"): np.inf,
                                                   "sling": 0.4, "slack": 0.3}


def test_cells_of_a_processor_that_rounds_differently_are_taken_and_a_changed_system_refused(tmp_path):
    """A cell written under the key of the same system with every array moved by 3 ulps (what another kind of
    processor makes of the same file) is this study's: taken, with one warning that the table is this study's
    to round-off.  A cell of a system with one mass 1e-6 heavier is refused, naming the leaf."""
    import dataclasses
    import warnings

    import equinox as eqx

    from jaxmbd.operability.cells import cell_key, cell_path, write_cell
    from jaxmbd.operability.windows import OperabilityError
    from jaxmbd.run import settings_of, start_of
    from test_sweep_integrity import _ulps

    loaded = load_system(SMALL_LIFT)
    op = dataclasses.replace(loaded.operability, headings_deg=(180.0,), tp=(6.0,), n_realisations=2)
    start = start_of(loaded)
    base = settings_of(loaded, n_realisations=op.n_realisations, seed=op.seed, duration=op.duration)
    phase = {"hs": 0.8, "low": float("nan"), "high": float("nan"), "status": "root", "governing": op.criteria[0].name}
    cell = {"phases": [phase], "runs": 3, "validity": ""}
    elsewhere = dataclasses.replace(start, q=_ulps(start.q))
    write_cell(cell_path(tmp_path, 0, 0), cell_key(_ulps(loaded.system), elsewhere, op, 0, 0, settings=base, scenario=None), cell)
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        lim = limiting_table(loaded, op, start=start, out_dir=tmp_path)
    assert float(lim["limiting_hs"].values.ravel()[0]) == 0.8
    assert any("processor that rounds differently" in str(w.message) for w in heard)

    heavier = eqx.tree_at(lambda s: s.model.inertia, loaded.system, loaded.system.model.inertia.at[1, 5, 5].multiply(1 + 1e-6))
    write_cell(cell_path(tmp_path, 0, 0), cell_key(heavier, start, op, 0, 0, settings=base, scenario=None), cell)
    with pytest.raises(OperabilityError, match=r"computed for another study \(changed: system \(0.*inertia"):
        limiting_table(loaded, op, start=start, out_dir=tmp_path)
