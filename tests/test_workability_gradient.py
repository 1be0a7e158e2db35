"""The gradient of the design decision: the derivative of a limiting sea state and of a month's workability at
the site with respect to a design value (the hoist rope's stiffness and damping of the packaged small lift),
by implicit differentiation at the root, against central finite differences of the whole chain (each a
root search to 1e-9 m with the static equilibrium re-solved), 1e-4 relative."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from jaxmbd.errors import InputError
from jaxmbd.io.system_file import load_system
from jaxmbd.operability.hindcast import sample_hindcast
from jaxmbd.operability.job import OperationPhase, site_series, spectrum_gamma
from jaxmbd.operability.limiting import Search
from jaxmbd.optim.workability import LimitingHsModel, workability_gradient

pytestmark = pytest.mark.slow
SMALL_LIFT = Path(__file__).resolve().parents[1] / "jaxmbd" / "data" / "small_lift.toml"
TIGHT = Search(tolerance=1e-9, max_evaluations=80, secant=True)  # roots to 1e-9 m: differences of step 1e-4 read 1e-5


@pytest.fixture(scope="module")
def lift():
    loaded = load_system(SMALL_LIFT)
    loaded.operability = dataclasses.replace(loaded.operability, n_realisations=4, duration=100.0, search=TIGHT)
    return loaded


def test_limiting_hs_gradient_against_central_differences(lift):
    m = LimitingHsModel(lift, "lift", 8.0, 180.0, ("hoist.EA", "hoist.damping"))
    found = m.limiting_hs()
    assert found.status == "root"
    grad = m.gradient(found)
    for path, x0 in m.initial.items():
        h = 1e-4 * x0
        fd = (m.limiting_hs({path: x0 + h}).hs - m.limiting_hs({path: x0 - h}).hs) / (2 * h)
        assert grad[path] == pytest.approx(fd, rel=1e-4), path


def test_workability_gradient_against_central_differences(lift):
    """July's smoothed workability (width 0.05 m) of the 3-hour lift over Tp 6-10 s, the better of two headings
    (135 and 180 deg) at each hour."""
    models = [LimitingHsModel(lift, "lift", tp, h, ("hoist.EA",)) for h in (135.0, 180.0) for tp in (6.0, 8.0, 10.0)]
    series = site_series(sample_hindcast(), gamma=spectrum_gamma(lift))
    w, grad = workability_gradient(models, series, 7, durations=(3,))
    assert 0.0 < w < 1.0
    x0 = models[0].initial["hoist.EA"]
    h = 1e-4 * x0
    wp, _ = workability_gradient(models, series, 7, durations=(3,), values={"hoist.EA": x0 + h})
    wm, _ = workability_gradient(models, series, 7, durations=(3,), values={"hoist.EA": x0 - h})
    assert grad["hoist.EA"] == pytest.approx((wp - wm) / (2 * h), rel=1e-4)


def test_workability_gradient_of_phases_in_sequence_against_central_differences(lift):
    """An operation of two phases with their own criteria and hours (the lift 2 h held to a lower capacity, then
    1 h with the slack criterion alone, its limits at other periods): the workability of July through both phases'
    limits, each the better of two headings at each hour, against central differences of the whole chain (1e-4);
    and with a contingency of 2 h after them under the least of their limits (NaN, a no-go, where the hour's Tp is
    outside either phase's periods: the gradient stays finite), lower, and against central differences too."""
    hook, slack = lift.operability.phases[0].criteria
    phases = (OperationPhase("lift", 2, (dataclasses.replace(hook, upper=2.6e5, name="tension <= 2.6e5 (lift)"),)),
              OperationPhase("hold", 1, (dataclasses.replace(slack, name="no slack (hold)"),)))
    loaded = dataclasses.replace(lift)
    loaded.operability = dataclasses.replace(lift.operability, phases=phases)
    periods = {"lift": (6.0, 10.0), "hold": (6.0, 8.0)}
    models = [LimitingHsModel(loaded, p.name, tp, h, ("hoist.EA",)) for p in phases for h in (135.0, 180.0) for tp in periods[p.name]]
    series = site_series(sample_hindcast(), gamma=spectrum_gamma(lift))
    with pytest.raises(InputError, match="1 durations for the 2 phases"):
        workability_gradient(models, series, 7, durations=(3,))
    x0 = models[0].initial["hoist.EA"]
    h = 1e-4 * x0
    found = {x: [m.limiting_hs({"hoist.EA": x}) for m in models] for x in (x0, x0 + h, x0 - h)}
    w = {}
    for spare in (0, 2):
        def at(x, spare=spare):
            return workability_gradient(models, series, 7, durations=(2, 1), values={"hoist.EA": x}, found=found[x], contingency_hours=spare)

        w[spare], grad = at(x0)
        assert 0.0 < w[spare] < 1.0 and grad["hoist.EA"] != 0.0 and np.isfinite(grad["hoist.EA"])
        assert grad["hoist.EA"] == pytest.approx((at(x0 + h)[0] - at(x0 - h)[0]) / (2 * h), rel=1e-4)
    assert w[2] < w[0]
