"""``jaxmbd tune SYSTEM.toml`` end to end: a small floating system with a [tune] table, tuned for two
iterations on 4 s runs (compile time dominates: about a minute of CPU); bad [tune] tables give one
line naming the file and the field, before anything is compiled."""

import json
import math

import numpy as np
import pytest

from jaxmbd.cli import main
from jaxmbd.hydro import test_barge_path

# The packaged 20 x 10 x 2 m test barge (no radiation memory: fewer states, a shorter compile) with
# 20 t of cargo on a wire rope from a post on deck, moored, in a long-crested JONSWAP sea of
# eight components.  Barge + cargo = the displaced 410 t, so the equilibrium is near q0.
SYSTEM = """
name = "barge_cargo"

[[bodies]]
name = "barge"
joint = "free"
mass = 390.0e3
com = [0.0, 0.0, -0.5]
radii_of_gyration = [3.5, 5.8, 5.8]

[[bodies]]
name = "cargo"
joint = "free"
mass = 20.0e3
radii_of_gyration = [1.0, 1.0, 1.0]
q0_xyz = [4.0, 0.0, 1.93]

[[hydro]]
file = "{hydro}"
bodies = ["barge"]
radiation = false
ramp_time = 1.0

[[forces]]
kind = "wire_rope"
name = "hoist"
body_a = "barge"
point_a = [4.0, 0.0, 10.0]
body_b = "cargo"
point_b = [0.0, 0.0, 1.0]
EA = 2.0e7
length = 7.0
damping = 2.0e4

[[forces]]
kind = "linear_mooring"
name = "mooring"
body = "barge"
point = [0.0, 0.0, 0.0]
reference = [0.0, 0.0, 0.0]
stiffness = [[2e4, 0, 0, 0, 0, 0], [0, 2e4, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0],
             [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 5e6]]
damping = [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]

[waves]
type = "jonswap"
hs = 2.0
tp = 5.0
direction_deg = 45.0
n_frequencies = 8

[simulation]
duration = 60.0
save_dt = 0.2
method = "rk4"
dt = 0.1
static_equilibrium = true
equilibrium_free = {{ barge = [2, 3, 4], cargo = [0, 1, 2, 3, 4, 5] }}
"""

TUNE = """
[tune]
steps = 2
learning_rate = 0.3
gradient = "forward"
duration = 4.0
n_train = 2
n_test = 3
seed = 5

[[tune.parameters]]
name = "EA"
path = "hoist.EA"
lower = 5.0e6
upper = 1.0e8

[[tune.parameters]]
path = "hoist.damping"
lower = 1.0e3
upper = 2.0e5

[[tune.objective]]
output = "hoist/tension"
measure = "smooth_max"
scale = "initial"
sharpness = 50
start_time = 1.0
"""


def _write(tmp_path, tune=TUNE, name="barge.toml"):
    path = tmp_path / name
    path.write_text(SYSTEM.format(hydro=test_barge_path().as_posix()) + tune)
    return path


@pytest.mark.slow
def test_tune_cli_writes_history_and_held_out(tmp_path, capsys):
    path = _write(tmp_path)
    out = tmp_path / "out"
    assert main(["tune", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "held-out objective: before" in printed and "tune.json" in printed

    res = json.loads((out / "tune.json").read_text())
    assert (out / "tune_history.png").stat().st_size > 0
    for key in ("method", "gradient_mode", "parameters", "initial_values", "values", "u", "initial_loss", "loss",
                "history", "attrs"):
        assert key in res, key
    assert res["parameters"] == ["EA", "hoist.damping"]  # the second is named after its path
    assert res["method"] == "adam" and res["gradient_mode"] == "forward"
    assert res["initial_values"] == {"EA": 2.0e7, "hoist.damping": 2.0e4}  # from the system

    # two iterations: three rows, finite losses and gradients, every iterate inside the bounds
    hist = res["history"]
    assert [h["iteration"] for h in hist] == [0, 1, 2]
    assert all(math.isfinite(h["loss"]) and math.isfinite(h["grad_norm"]) for h in hist)
    bounds = {"EA": (5.0e6, 1.0e8), "hoist.damping": (1.0e3, 2.0e5)}
    for h in hist + [{"values": res["values"]}]:
        for name, (lo, hi) in bounds.items():
            assert lo < h["values"][name] < hi, (name, h["values"][name])
    assert hist[1]["values"] != hist[0]["values"]  # it moved
    # scale = "initial": the term is 1 at the initial parameters, by construction
    assert res["initial_loss"] == pytest.approx(1.0, abs=1e-9)
    assert res["loss"] <= res["initial_loss"]

    attrs = res["attrs"]
    s = attrs["settings"]
    assert (s["duration"], s["n_train"], s["n_test"], s["steps"], s["dt"]) == (4.0, 2, 3, 2, 0.1)
    assert [p["transform"] for p in attrs["parameters"]] == ["sigmoid", "sigmoid"]
    assert attrs["system_file"] == str(path)
    held = attrs["held_out"]
    assert held["n"] == 3 and len(held["before"]) == 3 and len(held["after"]) == 3
    assert np.all(np.isfinite(held["before"] + held["after"]))
    assert held["objective_before"] == pytest.approx(np.mean(held["before"]))
    assert held["objective_after"] == pytest.approx(np.mean(held["after"]))
    assert held["improvement"] == pytest.approx(1 - held["objective_after"] / held["objective_before"])
    # the runs start at rest at both parameter sets
    assert attrs["equilibrium_residual"]["before"] < 1e-6 and attrs["equilibrium_residual"]["after"] < 1e-6


BAD_TABLES = [
    # (replace this, with this, the field named, words in the message)
    ('path = "hoist.EA"', 'path = "hoist.stiffness"', "tune.parameters[0].path", "no field 'stiffness'"),
    ('path = "hoist.EA"', 'path = "rope.EA"', "tune.parameters[0].path", "no element 'rope'"),
    ('path = "hoist.EA"', 'path = "hoist.EA[2]"', "tune.parameters[0].path", "out of range"),
    ('path = "hoist.EA"', 'path = "hydro.ramp_time"', "tune.parameters[0].path", "static field"),
    ('path = "hoist.EA"', 'path = "mooring.stiffness"', "tune.parameters[0].path", "values that differ"),
    ("lower = 5.0e6", "lower = 2.0e8", "tune.parameters[0].lower", "below upper"),
    ("lower = 1.0e3", "lower = 3.0e4", "tune.parameters[1].path", "must lie above lower"),
    ('measure = "smooth_max"', 'measure = "peak"', "tune.objective[0].measure", "'peak'"),
    ('output = "hoist/tension"', 'output = "hoist/force"', "tune.objective[0].output", "hoist/tension"),
    ('output = "hoist/tension"', 'output = "mooring/force"', "tune.objective[0].component", "give component"),
    ("start_time = 1.0", "start_time = 9.0", "tune.objective[0].start_time", "leaves no saves"),
    ("steps = 2", "iterations = 2", "tune.iterations", "unknown key"),
    ('gradient = "forward"', 'gradient = "adjoint"', "tune.gradient", "'reverse'"),
]


@pytest.mark.parametrize("old, new, field, words", BAD_TABLES, ids=[b[2] + ":" + b[1] for b in BAD_TABLES])
def test_bad_tune_table_is_one_line_naming_file_and_field(tmp_path, capsys, old, new, field, words):
    assert old in TUNE
    path = _write(tmp_path, TUNE.replace(old, new), name="bad_tune.toml")
    assert main(["tune", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert f"{path}: {field}:" in err and words in err, err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_missing_tune_table(tmp_path, capsys):
    path = _write(tmp_path, "")
    assert main(["tune", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "[tune]" in err
