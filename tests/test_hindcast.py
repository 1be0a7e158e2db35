"""The site's wave climate from a hindcast: reading, gaps, periods (DNV-RP-C205 §3.5.5), scatter diagrams,
subsets, files, and a one-line error for every kind of bad input."""

import datetime
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from jaxmbd.errors import InputError, JaxmbdError
from jaxmbd.operability.hindcast import (
    Hindcast,
    HindcastError,
    Scatter,
    dnv_gamma,
    read_hindcast,
    sample_hindcast,
    tp_from_tz,
    tz_from_tp,
)

TEN_YEARS = Path(__file__).resolve().parents[2] / "shared" / "data" / "hindcast" / "ndbc44007_1996_2005_hs_tz.txt"
SAMPLE = Path(__file__).resolve().parents[1] / "jaxmbd" / "data" / "hindcast_ndbc44007_2004.txt"
HEADER = "time (YYYY-MM-DD-HH); significant wave height (m); zero-up-crossing period (s)"


@pytest.fixture(scope="module")
def ten_years():
    if not TEN_YEARS.is_file():
        pytest.skip("../shared/data/hindcast is not present")
    return read_hindcast(TEN_YEARS)


@pytest.fixture(scope="module")
def sample():
    return sample_hindcast()


def _hours_from_text(path):
    """Record times of a benchmark-style file, parsed with plain Python (independent of the reader)."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    return [datetime.datetime.strptime(ln.split(";")[0].strip(), "%Y-%m-%d-%H") for ln in lines[1:]]


# -- the shipped sample and the ten-year file ----------------------------------------------------------------


def test_sample_records_and_gaps_match_the_raw_text(sample):
    times = _hours_from_text(SAMPLE)
    steps = [(b - a) // datetime.timedelta(hours=1) for a, b in zip(times, times[1:])]
    missing, stretches = sum(s - 1 for s in steps), sum(s > 1 for s in steps)
    assert len(sample) == len(times) == 8740
    assert sample.time[0] == np.datetime64("2004-01-01T00", "h") and sample.time[-1] == np.datetime64("2004-12-31T23")
    gaps = sample.gaps()
    assert len(gaps) == stretches and sum(g.hours for g in gaps) == missing
    assert all(g.hours == int((g.end - g.start).astype(int)) + 1 for g in gaps)
    grid, present = sample.hourly_grid()
    assert grid.size == 8740 + missing and present.sum() == 8740
    assert np.array_equal(grid[present], sample.time)
    assert sample.coverage == pytest.approx(8740 / (8740 + missing), rel=1e-15)  # a ratio of two integers
    assert sample.source == SAMPLE.name and sample.tp is None and sample.direction is None
    assert sample.hs.dtype == np.float64 and sample.tz.dtype == np.float64


def test_ten_years_read_with_their_gaps(ten_years):
    h = ten_years
    assert len(h) == 82805
    assert h.time[0] == np.datetime64("1996-01-01T00") and h.time[-1] == np.datetime64("2005-12-31T23")
    assert h.gaps()[0] == (np.datetime64("1996-01-01T08"), np.datetime64("1996-01-01T08"), 1)
    assert np.array_equal(h.select(years=2004).hs, sample_hindcast().hs)  # the sample is its most complete year


def test_arrays_are_read_only_and_calendar_fields(sample):
    with pytest.raises(ValueError):
        sample.hs[0] = 1.0
    assert set(np.unique(sample.years())) == {2004}
    # every month of 2004 has records; its 38 gaps are short, the longest six hours on 12 April
    assert set(np.unique(sample.months())) == set(range(1, 13))
    longest = max(sample.gaps(), key=lambda g: g.hours)
    assert longest == (np.datetime64("2004-04-12T11"), np.datetime64("2004-04-12T16"), 6)


# -- periods -------------------------------------------------------------------------------------------------


def _jonswap(w, gamma, wp=1.0):
    sigma = np.where(w <= wp, 0.07, 0.09)
    return w**-5 * np.exp(-1.25 * (wp / w) ** 4) * gamma ** np.exp(-0.5 * ((w - wp) / (sigma * wp)) ** 2)


def _tz_over_tp_from_moments(gamma):
    """2π√(m0/m2) / Tp of the JONSWAP spectrum (ωp = 1), by numerical integration."""
    pieces = [(1e-3, 0.7), (0.7, 1.0), (1.0, 1.5), (1.5, np.inf)]
    m0 = sum(quad(lambda w: _jonswap(w, gamma), a, b, limit=500, epsabs=0, epsrel=1e-12)[0] for a, b in pieces)
    m2 = sum(quad(lambda w: w * w * _jonswap(w, gamma), a, b, limit=500, epsabs=0, epsrel=1e-12)[0] for a, b in pieces)
    return np.sqrt(m0 / m2)


def test_pierson_moskowitz_tz_over_tp():
    closed = (1.25 * np.pi) ** -0.25  # 0.7104: m2/m0 = √(5π/4) ωp² for S ∝ ω⁻⁵ exp(−5/4 (ωp/ω)⁴)
    # The integration itself: to 1e-8 (quad's tolerance is 1e-12; the cut at ω = 1e-3 drops < e^-1e12).
    assert _tz_over_tp_from_moments(1.0) == pytest.approx(closed, rel=1e-8)
    # DNV's fit at γ = 1 is Tp = 1.4049 Tz, 0.7118 against the moments' 0.7104: 2e-3 is the fit's own
    # accuracy (its largest error over 1 ≤ γ ≤ 7, 1.4e-3 relative, is here), not a reading error.
    assert tz_from_tp(1.0, 1.0) == pytest.approx(closed, rel=2e-3)
    assert tz_from_tp(1.0, 1.0) == pytest.approx(1 / 1.4049, abs=1e-4)  # DNV quotes 4 digits


def test_jonswap_tz_over_tp():
    # γ = 3.3: DNV quotes Tp = 1.2859 Tz (4 digits, so 1e-4); the fit gives 0.7777, the moments 0.7774.
    assert tz_from_tp(1.0, 3.3) == pytest.approx(1 / 1.2859, abs=1e-4)
    assert tz_from_tp(1.0, 3.3) == pytest.approx(_tz_over_tp_from_moments(3.3), abs=5e-4)  # the fit's accuracy
    for gamma in np.arange(1.0, 7.01, 0.5):  # the whole range the fit is offered for: within 0.2 %
        assert tz_from_tp(1.0, gamma) == pytest.approx(_tz_over_tp_from_moments(gamma), rel=2e-3), gamma


def test_tp_and_tz_are_inverse():
    rng = np.random.default_rng(3)
    tz, gamma = rng.uniform(2.0, 15.0, 1000), rng.uniform(1.0, 7.0, 1000)
    # a division then a multiplication by the same ratio: a few rounding errors
    np.testing.assert_allclose(tz_from_tp(tp_from_tz(tz, gamma), gamma), tz, rtol=1e-12, atol=0)
    assert isinstance(tp_from_tz(6.0), float)
    with pytest.raises(InputError, match="1 ≤ γ ≤ 7"):
        tp_from_tz(6.0, 0.5)


def test_dnv_gamma_branches():
    hs = np.array([4.0, 4.0, 4.0, 4.0, 4.0, 0.0])
    tp = 2.0 * np.array([3.0, 3.6, 4.0, 4.999, 5.0, 1.0])  # Tp/√Hs = 3, 3.6, 4, 4.999, 5; a calm sea
    expected = [5.0, 5.0, np.exp(5.75 - 1.15 * 4.0), np.exp(5.75 - 1.15 * 4.999), 1.0, 1.0]
    np.testing.assert_allclose(dnv_gamma(hs, tp), expected, rtol=1e-15)  # the same expressions


def _fixed_point(hs, tz, iterations=200):
    """Plain iteration Tp ← Tz / ratio(γ(Hs, Tp)): contracts by ≤ 0.41 a step where DNV's γ is continuous."""
    tp = tp_from_tz(tz, 3.3)
    for _ in range(iterations):
        tp = tp_from_tz(tz, dnv_gamma(hs, tp))
    return tp


def test_peak_period_with_dnv_gamma_is_the_fixed_point(sample):
    tp = sample.peak_period(None)
    hs, tz = sample.hs, sample.tz
    at_step = np.abs(tp / np.sqrt(hs) - 3.6) < 1e-3
    own = tp_from_tz(tz, dnv_gamma(hs, tp))
    # Solved to 1e-10 of Tp; the map's slope is ≤ 0.41, so its residual is ≤ 1.41e-10 Tp.
    np.testing.assert_allclose(own[~at_step], tp[~at_step], rtol=2e-10, atol=0)
    np.testing.assert_allclose(_fixed_point(hs, tz)[~at_step], tp[~at_step], rtol=1e-9, atol=0)
    assert np.all((tp >= tp_from_tz(tz, 5.0) * (1 - 1e-9)) & (tp <= tp_from_tz(tz, 1.0) * (1 + 1e-9)))
    np.testing.assert_array_equal(sample.peak_period(3.3), tp_from_tz(tz, 3.3))


def test_peak_period_where_dnv_gamma_steps():
    # Tp/√Hs just above 3.6 gives γ = 5.003 > 5: this Tz has no exact fixed point; the answer is the step.
    ratio5 = tz_from_tp(1.0, 5.0)
    h = Hindcast(np.array(["2005-01-01T00"], "datetime64[h]"), np.array([1.0]), tz=np.array([3.60001 * ratio5]))
    assert h.peak_period(None)[0] == pytest.approx(3.6, rel=1e-9)  # to the solver's 1e-10


def test_given_tp_is_used_and_tz_follows():
    t = np.arange(np.datetime64("2001-03-01T00"), np.datetime64("2001-03-01T03"))
    h = Hindcast(t, np.array([1.0, 2.0, 3.0]), tp=np.array([8.0, 9.0, 10.0]))
    np.testing.assert_array_equal(h.peak_period(), [8.0, 9.0, 10.0])
    np.testing.assert_array_equal(h.zero_crossing_period(1.0), tz_from_tp(np.array([8.0, 9.0, 10.0]), 1.0))
    np.testing.assert_array_equal(h.zero_crossing_period(None), tz_from_tp(h.tp, dnv_gamma(h.hs, h.tp)))


# -- scatter diagrams and subsets -----------------------------------------------------------------------------


def test_scatter_counts_every_record(ten_years):
    h = ten_years
    s = h.scatter(np.arange(0.0, 5.01, 0.5), np.arange(3.0, 10.01, 1.0))
    assert isinstance(s, Scatter) and s.counts.shape == (10, 7) and s.outside > 0  # edges narrower than the data
    assert s.counts.sum() + s.outside == len(h) == s.total
    months = h.months()
    for m in range(1, 13):
        sm = h.scatter(np.arange(0.0, 5.01, 0.5), np.arange(3.0, 10.01, 1.0), period="tp", month=m)
        assert sm.counts.sum() + sm.outside == np.sum(months == m) and sm.month == m
    ds = s.to_dataset()
    assert ds["counts"].attrs["units"] == "h" and ds["hs"].attrs["units"] == "m" and ds.attrs["outside"] == s.outside


def test_scatter_bins_are_closed_below_and_open_above():
    t = np.arange(np.datetime64("2001-01-01T00"), np.datetime64("2001-01-01T05"))
    h = Hindcast(t, np.array([0.0, 0.5, 0.99, 1.0, 2.0]), tz=np.array([4.0, 5.0, 5.5, 6.0, 6.0]))
    s = h.scatter([0.0, 0.5, 1.0], [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(s.counts, [[1, 0], [0, 2]])
    assert s.outside == 2  # Hs = 1.0 and 2.0 at or above the last edge
    with pytest.raises(InputError, match="hs_edges"):
        h.scatter([1.0, 0.5], [4.0, 5.0])
    with pytest.raises(InputError, match="period"):
        h.scatter([0.0, 1.0], [4.0, 5.0], period="t1")


def test_select_years_and_months(ten_years):
    h = ten_years
    tune, check = h.select(years=range(1996, 2001)), h.select(years=[2001, 2002, 2003, 2004, 2005])
    assert len(tune) + len(check) == len(h) and tune.time[-1] < check.time[0]
    winter = check.select(months=[12, 1, 2])
    assert set(np.unique(winter.months())) == {12, 1, 2} and len(winter) == np.isin(check.months(), [12, 1, 2]).sum()
    with pytest.raises(HindcastError, match="no records"):
        h.select(years=1990)


# -- files ---------------------------------------------------------------------------------------------------


def _synthetic():
    rng = np.random.default_rng(7)
    t = np.arange(np.datetime64("2010-02-27T00"), np.datetime64("2010-03-03T00"))
    t = np.delete(t, [5, 6, 40])  # with gaps
    n = t.size
    return Hindcast(t, rng.uniform(0, 6, n), tz=rng.uniform(3, 12, n), tp=rng.uniform(4, 18, n),
                    direction=rng.uniform(0, 360, n), source="synthetic")


@pytest.mark.parametrize("sep, fmt", [(",", "%Y-%m-%d %H:%M"), (";", "%Y-%m-%dT%H"), (",", "%Y-%m-%d-%H")])
def test_csv_round_trip_is_exact(tmp_path, sep, fmt):
    h = _synthetic()
    rows = [sep.join(["Time", "Hs", "Tz", "Tp", "Dir"])]
    for k in range(len(h)):
        when = h.time[k].astype(datetime.datetime).strftime(fmt)
        rows.append(sep.join([when] + [repr(float(getattr(h, c)[k])) for c in ("hs", "tz", "tp", "direction")]))
    path = tmp_path / "site.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    back = read_hindcast(path)
    for name in ("time", "hs", "tz", "tp", "direction"):
        assert getattr(back, name).tobytes() == getattr(h, name).tobytes(), name  # bitwise: repr round-trips
    assert back.source == "site.csv"


def test_columns_named_by_keyword(tmp_path):
    path = tmp_path / "named.csv"
    path.write_text("date,Hm0,T02,Tpeak,mdir\n2020-01-01 00:00,1.5,6.5,8.0,270\n", encoding="utf-8")
    h = read_hindcast(path, time="date", hs="hm0", tz="T02", tp="Tpeak", direction="MDIR")
    assert (h.hs[0], h.tz[0], h.tp[0], h.direction[0]) == (1.5, 6.5, 8.0, 270.0)


def test_netcdf_round_trip_is_exact(tmp_path, sample):
    for h in (sample, _synthetic()):
        path = h.to_netcdf(tmp_path / f"{h.source}.nc")
        ds = h.to_dataset()
        assert ds["hs"].attrs["units"] == "m" and ds["tz"].attrs["units"] == "s"
        back = read_hindcast(path)
        for name in ("time", "hs", "tz", "tp", "direction"):
            a, b = getattr(h, name), getattr(back, name)
            assert (a is None and b is None) or a.tobytes() == b.tobytes(), name
    assert _synthetic().to_dataset()["direction"].attrs["units"] == "deg"


# -- bad input: one-line HindcastError naming the file and the column or row -----------------------------------


BAD = {  # name: (file text, words the message must hold besides the file name)
    "missing column": ("time,height,foo\n2001-01-01T00,1,5\n", ["column for hs", "foo"]),
    "non-monotonic": (f"{HEADER}\n2001-01-01-01; 1; 5\n2001-01-01-00; 1; 5\n", ["line 3", "2001-01-01T00", "time"]),
    "duplicate": (f"{HEADER}\n2001-01-01-00; 1; 5\n2001-01-01-00; 1; 5\n", ["line 3", "repeats", "time"]),
    "negative hs": (f"{HEADER}\n2001-01-01-00; -0.5; 5\n", ["line 2", "significant wave height", "-0.5"]),
    "nan hs": (f"{HEADER}\n2001-01-01-00; nan; 5\n", ["line 2", "significant wave height", "nan"]),
    "missing-value code": (f"{HEADER}\n2001-01-01-00; 1; 5\n2001-01-01-01; 99.0; 5\n",
                           ["line 3", "99.0", "above any measured sea", "[0, 30] m"]),
    "tz too long": (f"{HEADER}\n2001-01-01-00; 1; 5\n2001-01-01-01; 1; 41\n",
                    ["line 3", "zero-up-crossing period", "41.0", "above any plausible period"]),
    "tp zero": ("time;hs;tp\n2001-01-01-00; 1; 0\n", ["line 2", "'tp'", "(0, 40] s"]),
    "bad number": (f"{HEADER}\n2001-01-01-00; 1; 5\n2001-01-01-01; 1.2.3; 5\n", ["line 3", "1.2.3"]),
    "bad time": (f"{HEADER}\n2001-13-01-00; 1; 5\n", ["line 2", "2001-13-01-00"]),
    "bad time text": (f"{HEADER}\nyesterday; 1; 5\n", ["line 2", "yesterday"]),
    "fields": (f"{HEADER}\n2001-01-01-00; 1\n", ["line 2", "2 fields"]),
    "no period": ("time,hs\n2001-01-01 00:00,1\n", ["Tz", "Tp", "hs"]),
    "not hourly": ("time,hs,tz\n2001-01-01 00:30,1,5\n", ["line 2", "whole hour", "time"]),
    "empty": ("", ["empty"]),
    "only comments": ("# nothing here\n\n", ["empty"]),
    "only header": (f"# a comment\n{HEADER}\n", ["no records"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line(tmp_path, case):
    text, words = BAD[case]
    path = tmp_path / f"bad_{case.replace(' ', '_')}.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HindcastError) as err:
        read_hindcast(path)
    msg = str(err.value)
    assert "\n" not in msg and path.name in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    assert isinstance(err.value, JaxmbdError) and isinstance(err.value, ValueError)


def test_missing_file_and_missing_named_columns(tmp_path):
    with pytest.raises(HindcastError, match="nowhere.txt: no such file"):
        read_hindcast(tmp_path / "nowhere.txt")
    path = tmp_path / "site.csv"
    path.write_text("time,hs,tz\n2001-01-01 00,1,5\n", encoding="utf-8")
    with pytest.raises(HindcastError, match=r"site.csv: no column 'Hm0' for hs .*\['time', 'hs', 'tz'\]"):
        read_hindcast(path, hs="Hm0")
    nc = tmp_path / "site.nc"
    sample_hindcast().to_netcdf(nc)
    with pytest.raises(HindcastError, match=r"site.nc: no variable 'swh' for hs; the file has \['hs', 'time', 'tz'\]"):
        read_hindcast(nc, hs="swh")
    with pytest.raises(HindcastError, match="site.nc: no variable 'tp' for tp"):
        read_hindcast(nc, tp="tp")


def test_records_built_in_code_are_checked_too():
    t = np.array(["2001-01-01T00:00", "2001-01-01T00:30"], "datetime64[m]")
    with pytest.raises(HindcastError, match=r"here: record 1, column 'time': time 2001-01-01T00:30 is not on a whole"):
        Hindcast(t, np.array([1.0, 1.0]), tz=np.array([5.0, 5.0]), source="here")
    with pytest.raises(HindcastError, match="neither"):
        Hindcast(t.astype("datetime64[h]"), np.array([1.0, 1.0]), source="here")
