"""The subsea installation study (studies/subsea_installation) in its --smoke form: one realisation of
the whole operation, deck to seabed.  The full form (16 realisations, with and without heave
compensation) runs with ``pytest -m studies`` and ``python studies/subsea_installation/run.py``."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studies.subsea_installation import run  # noqa: E402
from studies.subsea_installation.system import G, SUBMERGED_WEIGHT, TONNE, WEIGHT  # noqa: E402

PHASES = ["lift-off", "over-boarding", "lowering to the water", "splash zone", "water column", "landing"]


@pytest.fixture(scope="module")
def smoke():
    return run.main(["--smoke"])


@pytest.mark.slow  # the smoke form's three checks share one 50 s run; CI runs them with -m slow
def test_every_phase_ends_by_its_condition_and_the_table_has_every_figure(smoke):
    (row,) = smoke["without heave compensation"]["realisations"]
    assert [e["name"] for e in row["events"]] == PHASES
    assert all(e["trigger"] == "condition" for e in row["events"]), row["events"]
    summary = smoke["without heave compensation"]["summary"]
    assert [s["phase"] for s in summary] == PHASES
    for s in summary:
        assert np.isfinite(s["daf"]["mean"]) and s["daf"]["mean"] >= 1.0
    landing = summary[-1]
    assert 0.0 < landing["impact_velocity_ms"]["mean"] < 2.0
    # at the end the seabed carries the submerged weight: the largest seabed force is at least that
    # (less the 10 % the hook may still hold when the phase ends)
    assert landing["max_seabed_force_t"]["mean"] >= 0.9 * SUBMERGED_WEIGHT / G / TONNE


@pytest.mark.slow  # with the smoke run above
def test_the_quasi_static_hook_load_is_the_weight_in_air_and_less_the_buoyancy_in_water(smoke):
    """In air the hook carries the manifold and half the falls' weight (a few tonnes of wire);
    fully submerged, less the steel's buoyancy (22.3 m³, 22.8 t): within the rope's weight, 2 %."""
    summary = {s["phase"]: s for s in smoke["without heave compensation"]["summary"]}
    assert abs(summary["over-boarding"]["static_t"] / (WEIGHT / G / TONNE) - 1) < 0.02
    assert abs(summary["water column"]["static_t"] / (SUBMERGED_WEIGHT / G / TONNE) - 1) < 0.02


@pytest.mark.slow  # with the smoke run above
def test_the_simplified_method_is_evaluated_for_the_same_sea_and_crane_tip(smoke):
    """DNV-RP-H103's characteristic force: its parts add up as the method says (to 1e-12)."""
    d = smoke["dnv_splash_zone"]
    assert d["F_hyd"] == pytest.approx(np.hypot(d["F_D"] + d["F_slam"], d["F_M"] - d["F_rho"]), rel=1e-12)
    assert d["tz"] == pytest.approx(run.tz_of_tp(run.TP), rel=1e-12)
    assert d["v_ct"] > 0 and d["a_ct"] > 0


@pytest.mark.studies
def test_full_study(tmp_path):
    assert run.main([]) == 0
