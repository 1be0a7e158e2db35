"""The limiting sea state against closed forms: a linear system's response in a JONSWAP sea is Gaussian,
its maxima over a duration follow from Rice's up-crossing rate, so its limiting Hs is known; the root
search with common random numbers finds it, its band covers it, and the criteria's statistics and
errors behave as documented."""

import dataclasses
import math

import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd.operability.criteria import Criterion, extremes_of, margins, statistic_of
from jaxmbd.operability.limiting import Evaluations, LimitingHs, Search, bootstrap_band, limiting_hs, limiting_hs_gradient
from jaxmbd.results import Result
from jaxmbd.statistics import EULER_GAMMA

T = 600.0  # s, one realisation
M = 4096  # samples per realisation (dt = 0.146 s, a twentieth of the response's up-crossing period and less)
WN, ZETA = 1.1, 0.1  # rad/s, the oscillator's natural frequency and damping ratio
N_REAL = 1500


def _jonswap_unit(w, tp=8.0, gamma=3.3):
    """JONSWAP of Hs = 1 m (DNV-RP-C205's normalisation A_γ = 1 − 0.287 ln γ)."""
    wp = 2 * np.pi / tp
    sigma = np.where(w <= wp, 0.07, 0.09)
    pm = 5 / 16 * wp**4 * w**-5 * np.exp(-1.25 * (wp / w) ** 4)
    return (1 - 0.287 * np.log(gamma)) * pm * gamma ** np.exp(-0.5 * ((w - wp) / (sigma * wp)) ** 2)


def _response_spectrum():
    """Amplitudes (per unit Hs) of a linear oscillator's response on the periodic grid ω_k = 2πk/T."""
    k = np.arange(1, M // 2)
    w = 2 * np.pi * k / T
    h = 1.0 / np.sqrt((1 - (w / WN) ** 2) ** 2 + (2 * ZETA * w / WN) ** 2)  # |H(ω)|, a unit static gain
    s = _jonswap_unit(w) * h**2
    dw = 2 * np.pi / T
    return k, np.sqrt(2 * s * dw), w, s * dw


@pytest.fixture(scope="module")
def unit_response():
    """(N_REAL, M) response of Hs = 1 m, random phases (seed fixed): common random numbers for every Hs."""
    k, amp, _, _ = _response_spectrum()
    rng = np.random.default_rng(7)
    phases = rng.uniform(0, 2 * np.pi, size=(N_REAL, k.size))
    coef = np.zeros((N_REAL, M // 2 + 1), complex)
    coef[:, k] = amp * np.exp(1j * phases) * (M / 2)
    return np.fft.irfft(coef, n=M, axis=1)


def _closed_form_mpm(sigma, tz, seconds):
    """The moments-Gumbel mode of the largest value over ``seconds`` under Poisson up-crossings of a Gaussian
    process: P(max < x) = exp(−(seconds/Tz) exp(−x²/2σ²)); its mean and deviation by quadrature."""
    x = np.linspace(0.0, 8.0 * sigma, 200001)
    cdf = np.exp(-(seconds / tz) * np.exp(-(x**2) / (2 * sigma**2)))
    pdf = np.gradient(cdf, x)
    mean = np.trapezoid(x * pdf, x)
    std = math.sqrt(np.trapezoid((x - mean) ** 2 * pdf, x))
    beta = std * math.sqrt(6) / math.pi
    return mean - EULER_GAMMA * beta


def _result(x):
    n = x.shape[0]
    return Result(system=None, time=np.linspace(0.0, T, M, endpoint=False), q=np.zeros((n, 1, 1)), v=np.zeros((n, 1, 1)),
                  z=np.zeros((n, 1, 0)), outputs={"x": x}, batched=True)


def _moments():
    _, _, w, s = _response_spectrum()
    m0, m2 = float(np.sum(s)), float(np.sum(w**2 * s))
    return math.sqrt(m0), 2 * np.pi * math.sqrt(m0 / m2)


@pytest.mark.parametrize("exposure", [None, 3 * 3600.0])
def test_limiting_hs_of_a_linear_oscillator_equals_the_closed_form(unit_response, exposure):
    """Limit 1.0 on the response's maxima (MPM over one realisation, and over a 3-hour exposure): the root
    search's Hs equals limit / MPM(Hs = 1 m) of the closed form within 1 % (the Monte-Carlo error of the
    Gumbel mode from 1500 realisations is about 0.4 %, the sampling of the peaks at dt = 0.15 s 0.2 %), and
    the 90 % band from the realisations covers it over one realisation's duration.  Over 3 hours the
    statistic extrapolates the Gumbel fitted to 10-minute maxima (k = 18 windows), whose shape differs from
    the up-crossing distribution's: 0.25 % here, outside the Monte-Carlo band, inside the 1 %."""
    sigma, tz = _moments()
    limit = 1.0
    expected = limit / _closed_form_mpm(sigma, tz, exposure or T)
    crit = Criterion("x", upper=limit, exposure=exposure)
    runs = {}

    def margins_at(hs):
        runs[hs] = _result(hs * unit_response)
        return margins([crit], runs[hs])

    found = limiting_hs(margins_at, search=Search(hs_start=0.5, tolerance=1e-3))
    assert found.status == "root" and found.governing == crit.name
    assert found.hs == pytest.approx(expected, rel=0.01)
    assert len(found.history) <= 8  # linear in Hs: regula falsi lands in a step or two after the bracket
    near = min(runs, key=lambda h: abs(h - found.hs))
    lo, hi = bootstrap_band([crit], extremes_of([crit], runs[near]), found, at=near)
    assert lo < found.hs < hi and hi - lo < 0.05 * expected
    if exposure is None:  # extrapolated to 3 h, the fitted Gumbel's own shape error (0.25 % here) exceeds the band
        assert lo < expected < hi


def test_band_is_centred_on_the_root_from_a_run_off_it(unit_response):
    """The band's resamples move the run they come from (here 0.3 m below the root) to their own roots: with every
    realisation alike, each resample is that run and its root the root itself (a margin linear in Hs: exact to
    1e-12), not the run's mirror image about the root."""
    x = np.repeat(unit_response[:1], 8, axis=0)  # eight realisations alike
    crit = Criterion("x", upper=1.0, statistic="mean")
    peak = float(np.max(x))
    root, at = 1.0 / peak, 0.7 / peak
    found = LimitingHs(root, "root", crit.name, {}, -peak, (root - 0.01, root + 0.01), ())
    lo, hi = bootstrap_band([crit], extremes_of([crit], _result(at * x)), found, at=at)
    assert lo == pytest.approx(root, rel=1e-12) and hi == pytest.approx(root, rel=1e-12)


def test_search_that_runs_out_of_evaluations_says_so():
    """A bracket still wider than the tolerance when the runs allowed end is reported "unconverged" with that
    bracket, not as a root."""
    found = limiting_hs(lambda hs: {"g": float(np.tanh(3.0 - hs))}, search=Search(hs_start=1.0, tolerance=1e-9, max_evaluations=6))
    a, b = found.bracket
    assert found.status == "unconverged" and b - a > 1e-9 and a <= found.hs <= b
    assert limiting_hs(lambda hs: {"g": float(np.tanh(3.0 - hs))}, search=Search(hs_start=1.0, tolerance=1e-3)).status == "root"


@pytest.mark.parametrize("root", [0.3, 3.7, 8.2])
def test_the_secant_step_finds_the_same_root_in_fewer_runs(root):
    """A margin nearly linear in Hs (a linear response's is linear, with common random numbers; here 1 % of a
    square besides): with ``secant`` the ladder's second run steps to the root, half a tolerance past it, and the
    bracket closes in a run or two more (4-5 runs in all, against 5-9 on the ladder's rungs); the root is the
    ladder's to the tolerance.  Up from a margin that holds and down from one that fails alike; a margin that holds
    to the ceiling is "above" in three runs."""
    g = lambda hs: {"g": 1.0 - hs / root - 0.01 * (hs / root) ** 2 + 0.01}  # noqa: E731
    plain = limiting_hs(g, search=Search(hs_start=1.0, tolerance=0.02))
    fast = limiting_hs(g, search=Search(hs_start=1.0, tolerance=0.02, secant=True))
    assert plain.status == fast.status == "root"
    assert fast.hs == pytest.approx(root, abs=0.02) and abs(fast.hs - plain.hs) <= 0.02
    assert len(fast.history) <= min(5, len(plain.history) - 1), (fast.history, plain.history)
    above = limiting_hs(lambda hs: {"g": 1.0 - hs / 40.0}, search=Search(hs_start=1.0, hs_max=6.0, secant=True))
    assert above.status == "above" and above.hs == 6.0 and len(above.history) == 3


def test_the_secant_step_on_a_curved_margin_still_closes_the_bracket():
    """tanh(3 − Hs), whose secant from the ladder's first runs overshoots: the bracket the step leaves is closed by
    regula falsi as before, to the tolerance, the root 3 within it."""
    found = limiting_hs(lambda hs: {"g": float(np.tanh(3.0 - hs))}, search=Search(hs_start=1.0, tolerance=1e-3, secant=True))
    a, b = found.bracket
    assert found.status == "root" and abs(b - a) <= 1e-3 and a <= 3.0 <= b


def test_common_random_numbers_make_the_margin_linear_in_hs(unit_response):
    """The same phases at every Hs: an upper margin of a linear response is 1 − c Hs exactly (to 1e-12),
    so the search's secant slope is the exact derivative."""
    crit = Criterion("x", upper=2.0)
    m = [float(margins([crit], _result(h * unit_response[:50]))[crit.name]) for h in (0.5, 1.0, 2.0)]
    assert (m[1] - m[0]) / 0.5 == pytest.approx((m[2] - m[1]) / 1.0, rel=1e-12)


def test_slack_criterion_is_a_fraction_of_the_static_value():
    """DNV's slack rule on a tension oscillating about 100 kN with amplitude 95 kN: the minimum 5 kN is
    below 10 % of the static, margin (5 − 10) / 10 = −0.5 (mean statistic, exact)."""
    t = np.linspace(0.0, T, M, endpoint=False)
    tension = 1e5 + 9.5e4 * np.sin(2 * np.pi * t / 10.0)
    r = _result(np.stack([tension, tension]))
    crit = Criterion("x", lower_fraction=0.1, statistic="mean")
    assert float(margins([crit], r)[crit.name]) == pytest.approx(-0.5, abs=1e-3)  # the sampled minimum: 5 kN within 0.01 %


def test_statistics_by_their_definitions():
    x = np.array([[1.0, 2.0, 3.0, 4.0, 10.0]])
    beta = np.std(x, ddof=1) * math.sqrt(6) / math.pi
    assert float(statistic_of(x, "mpm")[0]) == pytest.approx(np.mean(x) - EULER_GAMMA * beta, rel=1e-14)
    assert float(statistic_of(x, "mpm", k=10.0)[0]) == pytest.approx(np.mean(x) - EULER_GAMMA * beta + beta * math.log(10), rel=1e-14)
    assert float(statistic_of(x, "p90")[0]) == pytest.approx(np.percentile(x, 90), rel=1e-14)
    assert float(statistic_of(x, "mean")[0]) == pytest.approx(4.0, rel=1e-14)


def test_search_says_when_the_range_ends():
    """Every criterion holds to hs_max: status 'above' at hs_max; one fails at hs_min: 'below'."""
    up = limiting_hs(lambda hs: {"a": 1.0 - hs / 100.0}, search=Search(hs_max=6.0))
    assert (up.status, up.hs) == ("above", 6.0)
    down = limiting_hs(lambda hs: {"a": -1.0}, search=Search(hs_min=0.2))
    assert (down.status, down.hs) == ("below", 0.2)


def test_two_criteria_the_first_to_fail_governs_and_evaluations_are_shared():
    calls = []

    def f(hs):
        calls.append(hs)
        return {"load": 1.0 - hs / 3.0, "sway": 1.0 - (hs / 2.5) ** 2}

    ev = Evaluations(f)
    found = limiting_hs(ev, search=Search(tolerance=1e-6))
    assert found.governing == "sway" and found.hs == pytest.approx(2.5, rel=1e-6)
    n = len(calls)
    again = limiting_hs(ev, names=["load"], search=Search(tolerance=1e-6))  # a second phase's search, same runs
    assert again.hs == pytest.approx(3.0, rel=1e-9) and len(calls) - n < len(again.history)


def test_gradient_of_the_limiting_hs_by_implicit_differentiation():
    """g(Hs, k) = 1 − Hs² / k: Hs* = √k, dHs*/dk = 1 / (2√k) (to 1e-12)."""
    k = 6.25
    d = limiting_hs_gradient(lambda hs, p: 1.0 - hs**2 / p["k"], math.sqrt(k), {"k": jnp.asarray(k)})
    assert float(d["k"]) == pytest.approx(1 / (2 * math.sqrt(k)), rel=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({}, "exactly one of upper, lower, lower_fraction"),
    ({"upper": 1.0, "lower": 0.5}, "exactly one of"),
    ({"upper": 0.0}, "a bound of 0 has no relative margin"),
    ({"lower_fraction": 1.5}, r"lower_fraction must lie in \(0, 1\)"),
    ({"upper": 1.0, "statistic": "p100"}, "statistic must be 'mpm', 'mean' or 'p<NN>'"),
    ({"upper": 1.0, "statistic": "max"}, "statistic must be"),
    ({"upper": 1.0, "exposure": -1.0}, "exposure must be > 0 s"),
    ({"upper": 1.0, "statistic": "p90", "exposure": 3600.0}, "an exposure applies to the statistic 'mpm' only"),
    ({"upper": float("nan")}, "upper must be a finite number"),
])
def test_a_bad_criterion_is_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match) as info:
        Criterion("hoist/tension", **kwargs)
    assert "\n" not in str(info.value)


def test_unknown_output_or_phase_is_named():
    r = _result(np.zeros((2, M)))
    with pytest.raises(KeyError if False else ValueError, match="no such output; scalar outputs: x"):
        margins([Criterion("y", upper=1.0)], r)
    with pytest.raises(ValueError, match="the run has no such phase"):
        margins([Criterion("x", upper=1.0, phase="lowering")], r)


def test_limiting_hs_record_is_plain_data():
    found = limiting_hs(lambda hs: {"a": 1.0 - hs / 2.0}, search=Search(tolerance=1e-9))
    assert isinstance(found, LimitingHs) and found.hs == pytest.approx(2.0, rel=1e-9) and found.slope == pytest.approx(-0.5)


def test_a_root_where_the_margin_jumps_across_zero_has_no_gradient():
    """The refusal of a limit at a jump of its margin (LimitingHsModel._smooth: a phase's end, an event, moving by
    a wave as Hs grows): the search to 1e-7 m on a margin of slope -0.1/m crossing zero at 2.3 m is accepted with
    its derivative; the same margin with a step of -0.7 % at 2.3 m (from +0.3 % to -0.4 %, as a lowering reaching
    its phase's end depth a wave earlier does) is refused, whether the search's last secant shows the jump or, on a
    tangent's derivative given as the step's size, the tangent from the bracket's kept end misses the bracket; a
    bracket wider than SMOOTH_BRACKET is refused, asking for a finer search."""
    from jaxmbd.errors import InputError
    from jaxmbd.optim.workability import SMOOTH_BRACKET, LimitingHsModel

    fine = Search(hs_start=1.0, hs_max=6.0, tolerance=1e-7, max_evaluations=80, secant=True)
    smooth = limiting_hs(lambda hs: {"m": 0.1 * (2.3 - hs)}, ("m",), fine)
    assert smooth.status == "root" and smooth.hs == pytest.approx(2.3, abs=1e-7)
    LimitingHsModel._smooth(smooth, -0.1)  # accepted

    def stepped(hs):
        return {"m": 0.003 + 0.1 * (2.3 - hs) if hs < 2.3 else -0.004 + 0.1 * (2.3 - hs)}

    jump = limiting_hs(stepped, ("m",), fine)
    assert jump.status == "root" and abs(jump.hs - 2.3) < 1e-7 and abs(jump.slope) > 1e3  # the secant across the step
    with pytest.raises(InputError, match="jumps across zero at Hs 2.3 m"):
        LimitingHsModel._smooth(jump, -0.1)
    # a search whose last secant reads the tangent (its ends within the step's flanks) still has the tangent from the
    # kept end (+0.3 %) cross zero 3 cm beyond the bracket
    flank = dataclasses.replace(jump, slope=-0.1)
    with pytest.raises(InputError, match="jumps across zero"):
        LimitingHsModel._smooth(flank, -0.1)
    wide = dataclasses.replace(smooth, bracket=(2.29, 2.29 + 2 * SMOOTH_BRACKET))
    with pytest.raises(InputError, match="wider than"):
        LimitingHsModel._smooth(wide, -0.1)
