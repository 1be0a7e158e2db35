"""The operability study (studies/operability) in its --smoke form: every step (limits with and without heave
compensation, the site's windows on two halves of the hindcast, one tuning step) runs and its tables agree.
The full form runs with ``pytest -m studies`` and ``python studies/operability/run.py``."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studies.operability import run  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("operability_study"))
    try:
        assert run.main(["--smoke"]) == 0
        return json.loads(Path("out/operability_smoke/results.json").read_text())
    finally:
        os.chdir(cwd)


def test_compensation_raises_the_limits_and_the_tuning_does_not_lose_the_month_it_was_tuned_for(smoke):
    d = smoke["designs"]
    without = np.asarray(d["without compensation"]["limits"]["limiting_hs"])
    hand = np.asarray(d["with compensation (hand, 0.5)"]["limits"]["limiting_hs"])
    assert np.all(hand > without)  # paying out with the sheave's heave takes the bounce out of the hook load
    m = smoke["worst_month"] - 1
    assert d["tuned"]["tune_years"]["workability"][m] >= d["with compensation (hand, 0.5)"]["tune_years"]["workability"][m]
    for design in d.values():
        lim = design["limits"]
        np.testing.assert_allclose(lim["operational_hs"], np.asarray(lim["alpha"]) * np.asarray(lim["limiting_hs"]), rtol=1e-12)


@pytest.mark.studies
def test_full_study():
    assert run.main([]) == 0
