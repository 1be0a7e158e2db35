"""A sea state's limiting steepness (DNV-RP-C205 3.5.5): the breaking Hs by period, a run at a steeper sea
saying so among its ranges left, and an operability search that stops at it."""

import math

import numpy as np
import pytest

from jaxmbd import validity
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.hydro.spectra import breaking_hs, steepness, steepness_limit
from jaxmbd.operability.criteria import Criterion
from jaxmbd.operability.job import OperabilityTable, OperationPhase, search_at
from jaxmbd.operability.limiting import Search


def test_the_limiting_steepness_and_the_breaking_hs_by_period():
    """Sp = 2π Hs/(g Tp²) at most 1/15 to Tp 8 s, 1/25 from 15 s, linear in Tp between: the breaking Hs is
    Sp g Tp²/2π written out (1e-12) at 5, 8, 11.5, 15 and 20 s."""
    g = 9.81
    for tp, sp in ((5.0, 1 / 15), (8.0, 1 / 15), (11.5, 0.5 * (1 / 15 + 1 / 25)), (15.0, 1 / 25), (20.0, 1 / 25)):
        assert float(steepness_limit(tp)) == pytest.approx(sp, rel=1e-12)
        assert float(breaking_hs(tp)) == pytest.approx(sp * g * tp**2 / (2 * math.pi), rel=1e-12)
        assert float(steepness(breaking_hs(tp), tp)) == pytest.approx(sp, rel=1e-12)
    assert float(breaking_hs(5.0)) == pytest.approx(2.602, abs=1e-3)


def test_a_steeper_sea_is_a_range_left_and_a_milder_one_is_not():
    """Hs 4 m at Tp 5 s (Sp 1/9.8) is reported with its steepness and the breaking Hs; Hs 2 m at Tp 5 s and Hs 4 m at
    Tp 9 s are not."""
    (e,) = validity.check_sea(SeaState(spectrum=JONSWAP(4.0, 5.0), n_frequencies=50, omega_min=0.3, omega_max=6.0), 4)
    assert e.element == "waves" and "steepness 2π Hs/(g Tp²) = 1/9.76" in e.quantity and "breaks above 2.6 m" in e.model
    assert e.realisations == 4 and e.fraction == 1.0
    for hs, tp in ((2.0, 5.0), (4.0, 9.0)):
        assert validity.check_sea(SeaState(spectrum=JONSWAP(hs, tp), n_frequencies=50, omega_min=0.2, omega_max=6.0), 4) == []


def test_the_search_stops_at_the_breaking_hs_of_each_period():
    """An operability table searched to 6 m: at Tp 5 s the ceiling is the breaking Hs (2.60 m) and the start
    stays within it; at Tp 10 s it is the table's 6 m."""
    phase = OperationPhase("lift", 1, (Criterion("hoist/tension", upper=1e5),))
    table = OperabilityTable((phase,), (180.0,), (5.0, 10.0), search=Search(hs_start=3.0, hs_max=6.0))
    low, high = search_at(table, 0), search_at(table, 1)
    assert low.hs_max == pytest.approx(float(breaking_hs(5.0)), rel=1e-12) and low.hs_start == low.hs_max
    assert (high.hs_max, high.hs_start) == (6.0, 3.0)
    assert np.isclose(low.hs_max, 2.602, atol=1e-3)


def test_a_run_that_fails_inside_a_study_names_its_sea_state(monkeypatch):
    """A run of an operability search that fails says at which Hs, Tp and heading, one run at a time and in a
    round of sea states run together (the failure itself monkeypatched in: no solve)."""
    import jaxmbd.operability.job as job
    from jaxmbd.errors import SimulationError
    from jaxmbd.run import RunSettings

    def fail(*args, **kwargs):
        raise SimulationError("phase 5 ('landing'), realisation 13: the root finder did not converge")

    monkeypatch.setattr(job, "run", fail)
    monkeypatch.setattr(job, "run_sea_states", fail)
    phase = OperationPhase("lift", 1, (Criterion("hoist/tension", upper=1e5),))
    table = OperabilityTable((phase,), (180.0,), (5.0, 10.0), search=Search(hs_start=1.0, hs_max=6.0))
    runs = job._Runs(None, None, RunSettings(tp=5.0, heading=math.pi), table.criteria)
    with pytest.raises(SimulationError, match=r"^operability run at Hs 1.5 m, Tp 5 s, heading 180 deg: phase 5 \('landing'\)"):
        runs(1.5)
    with pytest.raises(SimulationError, match=r"^operability runs at one of Hs 1 m, Tp 5 s, heading 180 deg; Hs 1 m, Tp 10 s, "
                                              r"heading 180 deg: phase 5"):
        list(job._cells_together(None, None, RunSettings(), table, [(0, 0), (0, 1)], 2))
