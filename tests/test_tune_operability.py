"""``jaxmbd tune`` with the operation's objective: the workability of a month at the site, or a phase's limiting
Hs, maximised over design values by projected ascent on their implicit gradients; its table checked key by key."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from jaxmbd.cli import main
from jaxmbd.io.system_file import SystemFileError, load_system
from jaxmbd.optim import tune_from_file

SMALL_LIFT = Path(__file__).resolve().parents[1] / "jaxmbd" / "data" / "small_lift.toml"
HYDRO = (SMALL_LIFT.parent / "barge_hydro.nc").as_posix()

TUNE = """
[tune]
steps = 2
[[tune.parameters]]
path = "hoist.EA"
lower = 2.0e7
upper = 1.2e8
[[tune.objective]]
maximise = "workability"
month = 7
"""


def _file(tmp_path, tune=TUNE, replace=None):
    text = SMALL_LIFT.read_text().replace('file = "barge_hydro.nc"', f'file = "{HYDRO}"')
    for a, b in (replace or {}).items():
        assert a in text, a
        text = text.replace(a, b)
    path = tmp_path / "lift.toml"
    path.write_text(text + tune)
    return path


@pytest.mark.parametrize("change, field, message", [
    ({'maximise = "workability"': 'maximise = "workabilty"'}, "tune.objective[0].maximise", "unknown value 'workabilty'"),
    ({"month = 7": "month = 13"}, "tune.objective[0].month", "expected a month 1-12"),
    ({"month = 7": 'month = 7\nphase = "lower"'}, "tune.objective[0].phase", "no phase 'lower' in [operability]; its phases: lift"),
    ({"month = 7": "month = 7\ntp = 6.0"}, "tune.objective[0].tp", "not used by maximise = 'workability'"),
    ({'maximise = "workability"\nmonth = 7': 'maximise = "limiting_hs"\ntp = 7.0'}, "tune.objective[0].tp",
     "expected one of the [operability] periods [4.0, 6.0, 8.0, 10.0, 12.0], got 7"),
    ({"lower = 2.0e7\n": ""}, "tune.parameters[0]", "give lower and upper"),
    ({"steps = 2": "steps = 2\nmethod = \"adam\""}, "tune.method", "unknown key 'method'"),
    ({"month = 7": 'month = 7\nhindcast = "nowhere.txt"'}, "tune.objective[0].hindcast", "does not exist"),
    ({"month = 7": "month = 7\nyears = [2005, 2001]"}, "tune.objective[0].years", "expected [first, last] years"),
    ({"month = 7": "month = 7\nheading_deg = 180.0"}, "tune.objective[0].heading_deg", "give headings_deg"),
    ({"month = 7": "month = 7\nheadings_deg = [180.0, 180.0]"}, "tune.objective[0].headings_deg", "distinct headings"),
])
def test_a_bad_operability_tune_table_is_one_line_naming_the_key(tmp_path, change, field, message):
    tune = TUNE
    for a, b in change.items():
        tune = tune.replace(a, b)
    loaded = load_system(_file(tmp_path, tune), validate=False)
    with pytest.raises(SystemFileError) as info:
        tune_from_file(loaded, tmp_path / "out")
    assert info.value.field == field and message in str(info.value) and "\n" not in str(info.value), str(info.value)


@pytest.mark.slow  # about two minutes: root searches and their gradients on 2 headings x 3 periods, then on one
def test_jaxmbd_tune_raises_a_months_workability_and_a_limiting_hs(tmp_path):
    """July's smoothed workability at the packaged year, Tp 6-10 s, the best of the file's two headings at each
    period (as the command's site table), over the heave compensation of the hoist's winch: each kept
    step raises it, the file's figures are those of the chain recomputed at the tuned design (1e-12), and the
    counted workability is written beside the smoothed one; then a limiting Hs, the same way."""
    from jaxmbd.operability.hindcast import sample_hindcast
    from jaxmbd.operability.job import site_series, spectrum_gamma
    from jaxmbd.optim.workability import LimitingHsModel, workability_gradient

    short = {"tp = [4.0, 6.0, 8.0, 10.0, 12.0]": "tp = [6.0, 8.0, 10.0]", "n_realisations = 8\nduration": "n_realisations = 3\nduration",
             "duration = 200.0                          # s per realisation": "duration = 60.0",
             "damping = 2.0e4                           # N s/m\n":
             "damping = 2.0e4\nwinch = true\nheave_compensation = 0.3\nmax_speed = 1.5\n"}
    design = {'path = "hoist.EA"\nlower = 2.0e7\nupper = 1.2e8': 'path = "hoist.heave_compensation"\nlower = 0.0\nupper = 0.95'}
    tune = TUNE
    for a, b in design.items():
        tune = tune.replace(a, b)
    path = _file(tmp_path, tune=tune, replace=short)
    assert main(["tune", str(path), "--out", str(tmp_path / "w")]) == 0
    got = json.loads((tmp_path / "w" / "tune.json").read_text())
    w = [h["objective"] for h in got["history"]]
    assert len(w) > 1 and np.all(np.diff(w) > 0) and got["attrs"]["objective"]["after"] == w[-1] >= got["attrs"]["objective"]["before"]
    assert all(0.0 <= h["workability"] <= 1.0 for h in got["history"]) and (tmp_path / "w" / "tune_history.png").exists()
    # the runs' sea left its range at Tp 6 s (the hydrodynamic data end at 2.5 rad/s): said, and kept in tune.json
    assert any(line.startswith("Tp 6 s") and "spectrum's energy" in line for line in got["attrs"]["validity"])
    loaded = load_system(path)
    hc = {"hoist.heave_compensation": got["values"]["hoist.heave_compensation"]}
    models = [LimitingHsModel(loaded, "lift", tp, h, tuple(hc)) for h in (135.0, 180.0) for tp in (6.0, 8.0, 10.0)]
    search = dataclasses.replace(loaded.operability.search, tolerance=1e-4, max_evaluations=60)
    found = [m.limiting_hs(hc, search) for m in models]
    again, _ = workability_gradient(models, site_series(sample_hindcast(), gamma=spectrum_gamma(loaded)), 7, durations=(3,), values=hc, found=found)
    assert again == pytest.approx(w[-1], rel=1e-12, abs=1e-12)

    path = _file(tmp_path, tune=tune.replace('maximise = "workability"\nmonth = 7', 'maximise = "limiting_hs"\ntp = 8.0\nheading_deg = 180.0'),
                 replace=short)
    assert main(["tune", str(path), "--out", str(tmp_path / "h")]) == 0
    got = json.loads((tmp_path / "h" / "tune.json").read_text())
    hs = [h["objective"] for h in got["history"]]
    assert len(hs) > 1 and np.all(np.diff(hs) > 0) and got["attrs"]["objective"]["unit"] == "m"
    model = LimitingHsModel(load_system(path), "lift", 8.0, 180.0, tuple(hc))
    found = model.limiting_hs({k: got["values"][k] for k in hc}, dataclasses.replace(model.loaded.operability.search,
                                                                                      tolerance=1e-4, max_evaluations=60))
    assert found.hs == pytest.approx(hs[-1], rel=1e-12)


PHASED = Path(__file__).resolve().parents[1] / "examples" / "lift_in_phases.toml"


@pytest.mark.slow  # about three minutes: the gradient's compile through the phases, then searches to 1e-9 m
def test_the_workability_of_an_operation_in_phases_its_gradient_and_jaxmbd_tune(tmp_path):
    """examples/lift_in_phases.toml (hang, lower 2 m, hold; each phase its own criteria and hours), shortened: July's
    smoothed workability through the three phases' limits at Tp 6 and 8 s in head seas, its derivative in the
    hoist rope's stiffness (reverse mode through the phases, the start re-solved for each design) against central
    differences of the whole chain (1e-4), then ``jaxmbd tune`` maximising it: each kept step raises it."""
    from jaxmbd.operability.hindcast import sample_hindcast
    from jaxmbd.operability.job import site_series, spectrum_gamma
    from jaxmbd.operability.limiting import Search
    from jaxmbd.optim.workability import LimitingHsModel, workability_gradient

    text = PHASED.read_text().replace('file = "../jaxmbd/data/barge_hydro.nc"', f'file = "{HYDRO}"')
    for a, b in (("max_duration = 100.0", "max_duration = 40.0"), ("max_duration = 80.0", "max_duration = 30.0"),
                 ("headings_deg = [180.0, 157.5, 135.0, 112.5, 90.0, 67.5, 45.0, 22.5]", "headings_deg = [180.0]"),
                 ("tp = [4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0]", "tp = [6.0, 8.0]"),
                 ("n_realisations = 20\nseed = 1\nhs_max", "n_realisations = 3\nseed = 1\nhs_max")):
        assert a in text, a
        text = text.replace(a, b)
    path = tmp_path / "phases.toml"
    path.write_text(text + TUNE)
    loaded = load_system(path)
    loaded.operability = dataclasses.replace(loaded.operability, search=Search(hs_max=5.0, tolerance=1e-9, max_evaluations=80, secant=True))
    phases = loaded.operability.phases
    _margins_are_the_commands(loaded, [p.name for p in phases])
    # a file without save_dt whose longest phase comes after the last with criteria: its saves are the whole scenario's
    bare = tmp_path / "bare.toml"
    bare.write_text(text.replace("save_dt = 0.04", "").replace("max_duration = 30.0", "max_duration = 90.0")
                    .split('[[operability.phases]]\nname = "hold"')[0])
    _margins_are_the_commands(load_system(bare), ["hang", "lower"])
    models = [LimitingHsModel(loaded, p.name, tp, 180.0, ("hoist.EA",)) for p in phases for tp in (6.0, 8.0)]
    series, hours = site_series(sample_hindcast(), gamma=spectrum_gamma(loaded)), tuple(p.hours for p in phases)
    w, grad = workability_gradient(models, series, 7, durations=hours)
    assert 0.0 < w < 1.0 and grad["hoist.EA"] != 0.0
    x0 = models[0].initial["hoist.EA"]
    h = 1e-4 * x0
    wp, _ = workability_gradient(models, series, 7, durations=hours, values={"hoist.EA": x0 + h})
    wm, _ = workability_gradient(models, series, 7, durations=hours, values={"hoist.EA": x0 - h})
    assert grad["hoist.EA"] == pytest.approx((wp - wm) / (2 * h), rel=1e-4)

    assert main(["tune", str(path), "--out", str(tmp_path / "w")]) == 0
    got = json.loads((tmp_path / "w" / "tune.json").read_text())
    w = [h["objective"] for h in got["history"]]
    assert len(w) > 1 and np.all(np.diff(w) > 0) and got["attrs"]["objective"]["after"] == w[-1]


def _margins_are_the_commands(loaded, phases):
    """Every phase's margins at Hs 1.5 m, Tp 8 s, head seas, equal those of the operability command's runs (1e-9
    relative: one compiled segment in a loop against one program a phase); the slack criteria (a fraction of the
    mean over every step) and the exposures (the phases' durations) among them."""
    import math

    from jaxmbd.operability.job import _Runs
    from jaxmbd.optim.workability import LimitingHsModel
    from jaxmbd.run import settings_of

    op = loaded.operability
    runs = _Runs(loaded, loaded.start(), settings_of(loaded, n_realisations=op.n_realisations, seed=op.seed, tp=8.0,
                                                     heading=math.pi), op.criteria)
    job = runs(1.5)
    for phase in phases:
        got = LimitingHsModel(loaded, phase, 8.0, 180.0, ("hoist.EA",)).margins(1.5)
        off = {name: (value, job[name]) for name, value in got.items() if value != pytest.approx(job[name], rel=1e-9, abs=1e-12)}
        assert got and not off, f"the model's margins against the command's: {off}"
