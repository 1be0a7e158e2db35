"""WEC-Sim's RM3 (studies/rm3) from its WAMIT file: time domain against the frequency domain of the
same model, and the spar free in surge and pitch against the spar held to heave.

The fast test runs the heave-only case for 380 s (ramp 100 s) and compares 300-380 s
with the constrained frequency-domain solution: within 1 % in amplitude (measured 0.16-0.25 %; the
residual is the radiation fit, 0.5 % on K(t)) and 1° in phase.  The full test (-m studies) runs both
cases for 800 s: the spar's mean surge moves less than 1 m between 150 s and 800 s (0.006 m
measured) and over 300-380 s the planar case's heave amplitudes are within 2 % of the heave-only
case's (0.04 % measured); later the pitch mode's parametric resonance grows (README).
"""

import importlib.util
from pathlib import Path

import pytest

import jaxmbd  # noqa: F401  (float64)

RUN = Path(__file__).resolve().parents[1] / "studies" / "rm3" / "run.py"


def _load():
    spec = importlib.util.spec_from_file_location("_study_rm3", RUN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rm3_heave_matches_frequency_domain(shared_data):
    rm3 = _load()
    rows = rm3.main(["--smoke", "--data", str(shared_data)])
    assert {r["quantity"] for r in rows} == {"float heave", "spar heave", "relative heave", "mean PTO power"}
    for r in rows:
        assert abs(r["difference_percent"]) < 1.0, r
        if r["quantity"] != "mean PTO power":
            assert abs(r["phase_difference_deg"]) < 1.0, r


@pytest.mark.studies
def test_rm3_planar_spar_keeps_station_and_heave(shared_data, tmp_path, monkeypatch):
    rm3 = _load()
    monkeypatch.setattr(rm3, "HERE", tmp_path)  # results and plots into the test's folder
    rows = rm3.main(["--data", str(shared_data)])
    import json

    summary = json.loads((tmp_path / "results.json").read_text())
    assert abs(summary["planar_surge"]["travel_150_800s_m"]) < 1.0
    for n, diff in summary["heave_amplitude_planar_vs_heave_only_percent"]["300-380 s"].items():
        assert abs(diff) < 2.0, (n, diff)
    early = [r for r in rows if r["window"] == "300-380 s"]
    assert all(abs(r["difference_percent"]) < 2.0 for r in early)
