"""The barge-heel study (smoke form), its system file through `jaxmbd stability`, and a capsize report.

References: the wall-sided formula (exact for the box until its deck edge immerses at 11.31°) and,
for the linear model at small heel, tan φ = (w y / Δ) / GM of the same restoring matrix.
"""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from jaxmbd.cli import main as cli
from jaxmbd.io.system_file import load_system
from jaxmbd.run import Start

STUDY = Path(__file__).parents[1] / "studies" / "barge_heel"


def load():
    spec = importlib.util.spec_from_file_location("barge_heel_run", STUDY / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nonlinear_heel_follows_the_wall_sided_formula_until_the_deck_edge_immerses():
    # the bound is 0.2°; the pressure integration of a box is exact, so the static equilibria
    # agree to the solver's tolerance (1e-9 in acceleration: ~1e-6 deg)
    study = load()
    rows, deck_edge = study.main(["--smoke"])  # lift at y = 0, 2.5, 5 m
    y, ws, lin, nl = rows.T
    before = np.abs(ws) < deck_edge
    assert before.sum() == 2
    np.testing.assert_allclose(nl[before], ws[before], atol=1e-4)
    # beyond (y = 5 m: 14.3° by the wall-sided formula) the immersed deck edge costs righting arm
    assert nl[2] < ws[2] - 1.0
    # the linear model: its buoyancy moment is linear, −ρ g (I + V z_B) φ, and the model turns the weights
    # exactly, Δ g (a cos φ + z_G sin φ): so (BM + z_B) φ − z_G sin φ = a cos φ (BM + z_B − z_G = GM);
    # this holds only with the file's weight term −Δ g z_G taken out of its restoring matrix once
    from scipy.optimize import brentq

    _, gm, bm = study.wall_sided_heel(0.0)
    zb, zg = -study.T / 2, study.centred_kg()
    a = study.LIFT * y[1] / study.DISPLACEMENT
    phi = brentq(lambda p: (bm + zb) * p - zg * math.sin(p) - a * math.cos(p), 0.0, 1.0)
    assert -lin[1] == pytest.approx(math.degrees(phi), rel=1e-6)


@pytest.mark.slow  # 9 s; the heel against the wall-sided formula stays in the default suite
def test_stability_command_writes_the_curve(tmp_path, capsys):
    code = cli(["stability", str(STUDY / "system.toml"), "--out", str(tmp_path), "--step", "5", "--axis", "roll"])
    assert code == 0
    text = capsys.readouterr().out
    # static list and deck-edge immersion by linear interpolation between 5° samples: the study's
    # −15.75° and the box's 11.31° to half a degree
    listed = float(text.split("static list ")[1].split(" deg")[0])
    deck = float(text.split("deck-edge immersion ")[1].split(" deg")[0])
    assert listed == pytest.approx(-15.75, abs=0.5) and abs(deck) == pytest.approx(11.31, abs=0.5)  # either side
    table = (tmp_path / "hydro_barge_roll.txt").read_text()
    assert table.startswith("# GZ curve (roll)") and (tmp_path / "hydro_barge_roll.png").stat().st_size > 10_000
    rows = np.loadtxt(tmp_path / "hydro_barge_roll.txt")
    assert rows[0, 0] == -90.0 and rows[-1, 0] == 90.0 and np.all(np.isfinite(rows))


def test_stability_command_refuses_a_file_without_a_hull(tmp_path, capsys):
    text = (STUDY / "system.toml").read_text()
    text = text.replace('hydrostatics = "nonlinear"\n', "").replace(
        "hull = { length = 20.0, beam = 10.0, depth = 3.0, draught = 2.0, panel_size = 2.5 }  # exact in still water at any size\n", "")
    text = text.replace('"../../jaxmbd/data/barge_hydro.nc"', '"' + str(STUDY.parents[1] / "jaxmbd" / "data" / "barge_hydro.nc") + '"')
    path = tmp_path / "linear.toml"
    path.write_text(text)
    assert cli(["stability", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'hydrostatics = "nonlinear"' in err and str(path) in err


@pytest.mark.slow  # 16 s; the heel against the wall-sided formula stays in the default suite
def test_a_run_past_the_angle_of_vanishing_stability_reports_a_capsize():
    """The loaded barge started at 50° towards the lift, beyond its 37.8° of vanishing stability on that
    side, capsizes, and the run says when.  The study's file is what it says: started at its static list
    (its [simulation] solves it) it stays there (15.7°, the stability command's 15.8° to its 0.1° step),
    while released upright it capsizes within 8 s (the lift's moment applied at once; README)."""
    loaded = load_system(STUDY / "system.toml")
    q0 = np.array(loaded.q0, float)
    half = math.radians(-50.0) / 2
    q0[3:7] = [math.cos(half), math.sin(half), 0.0, 0.0]

    def capsize(res):
        return [e for e in res.excursions if e.model == "intact stability (capsize)" and e.quantity == "roll of barge"]

    found = capsize(loaded.run(Start(q0), duration=8.0))
    assert len(found) == 1 and found[0].first_time == 0.0 and found[0].extreme > math.radians(50.0)
    upright = capsize(loaded.run(Start(loaded.q0), duration=8.0))
    assert len(upright) == 1 and 0.0 < upright[0].first_time < 8.0
    res = loaded.run(duration=8.0)
    roll = np.degrees(np.asarray(res.outputs["hydro/eta"])[..., 3])
    assert not capsize(res) and np.all(np.abs(roll + 15.75) < 0.05), (roll.min(), roll.max())
