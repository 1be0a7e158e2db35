"""The gradient of the installation's limiting sea state with respect to its rigging (the hoist rope's
stiffness), through its phases (studies/subsea_installation): the differentiable model's margins are the
operability command's runs', its limit's derivative by the implicit-function theorem at the root (reverse mode
through the phases' solves and the event times that end them) against central differences of two root
searches, and a limit where the margin jumps (a phase's end moving by a wave) refused."""

import dataclasses
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxmbd.errors import InputError  # noqa: E402
from jaxmbd.operability.job import _Runs  # noqa: E402
from jaxmbd.operability.limiting import Search  # noqa: E402
from jaxmbd.optim.workability import LimitingHsModel  # noqa: E402
from jaxmbd.run import settings_of  # noqa: E402
from studies.subsea_installation.operability import smoke  # noqa: E402

pytestmark = pytest.mark.slow  # about 7 minutes: root searches to 1e-9 m of runs of the six phases, and a gradient's compile
TIGHT = Search(hs_start=1.0, hs_max=6.0, tolerance=1e-9, max_evaluations=80)  # roots to 1e-9 m: differences of 1e-4 read 1e-5


@pytest.fixture(scope="module")
def installation():
    case, table = smoke()  # head seas, two realisations of 30 wave components
    case.operability = dataclasses.replace(table, search=TIGHT)
    return case


def test_the_models_margins_are_the_operability_commands(installation):
    """At Hs 2 m, Tp 11 s: every criterion of the splash zone and of the landing (the hook load tracked at every
    step, the mudmats' loads at the saves) as the command's run reads them, to round-off (1e-9 relative; the
    phases before the model's run in a loop of one compiled segment, the command's one program a phase)."""
    table = installation.operability
    runs = _Runs(installation, installation.start(), dataclasses.replace(settings_of(installation), tp=11.0, heading=math.pi),
                 table.criteria)
    job = runs(2.0)
    for phase in ("splash zone", "landing"):
        model = LimitingHsModel(installation, phase, 11.0, 180.0, ("hoist.EA",))
        got = model.margins(2.0)
        assert set(got) == {c.name for p in table.phases if p.name == phase for c in p.criteria}
        for name, value in got.items():
            assert value == pytest.approx(job[name], rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize("phase", ["splash zone", "landing"])
def test_the_limit_gradient_against_central_differences(installation, phase):
    """Tp 11 s: dHs*/dEA of the splash zone and of the landing (the hook load governs both) against the central
    difference of two searches at EA (1 +- 1e-4) (1e-4 relative; measured 7e-7 and 2e-6).  One compiled
    program serves both phases' margins and gradients."""
    m = LimitingHsModel(installation, phase, 11.0, 180.0, ("hoist.EA",))
    found = m.limiting_hs()
    assert found.status == "root" and f"hook load <= 1.3 x weight ({phase})" == found.governing
    grad = m.gradient(found)["hoist.EA"]
    x0 = m.initial["hoist.EA"]
    h = 1e-4 * x0
    fd = (m.limiting_hs({"hoist.EA": x0 + h}).hs - m.limiting_hs({"hoist.EA": x0 - h}).hs) / (2 * h)
    assert grad > 0 and grad == pytest.approx(fd, rel=1e-4)


def test_a_limit_where_the_margin_jumps_is_refused(installation):
    """Tp 7 s: the splash zone's hook-load margin jumps from +0.3 % to -0.4 % across its limit (the load, lowered
    slower than the crane tip heaves, reaches the phase's end depth a wave earlier); the gradient says so."""
    m = LimitingHsModel(installation, "splash zone", 7.0, 180.0, ("hoist.EA",))
    found = m.limiting_hs()
    assert found.status == "root"
    with pytest.raises(InputError, match="jumps across zero"):
        m.gradient(found)


def test_a_design_value_a_phase_sets_is_refused(installation):
    with pytest.raises(InputError, match="set by the \\[scenario\\]'s phase 'lift-off'"):
        LimitingHsModel(installation, "splash zone", 11.0, 180.0, ("hoist.heave_compensation",))
