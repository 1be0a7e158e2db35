"""Weather windows: go, no-go and unknown starts, workability per month and waiting time against a
brute-force count (plain loops over start hours and phases), known answers on constructed series, and
the smoothed workability's limit and gradient."""

import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd.operability.windows import (
    ConstantLimit,
    HourlySeries,
    LeastOf,
    LimitCurve,
    OperabilityError,
    Phase,
    best_of,
    go,
    known_starts,
    phase_limits,
    smooth_workability,
    waiting_time,
    waits,
    workability,
)

HINDCAST = Path(__file__).resolve().parents[2] / "shared" / "data" / "hindcast" / "ndbc44007_1996_2005_hs_tz.txt"


def _series(hs, tp=None, present=None, start="2001-01-01T00"):
    hs = np.asarray(hs, float)
    tp = np.full(hs.size, 8.0) if tp is None else np.asarray(tp, float)
    if present is not None:
        hs = np.where(present, hs, np.nan)
    time_ = np.datetime64(start, "h") + np.arange(hs.size)
    return HourlySeries.from_times(time_, hs, tp)


def _random_case(seed=1, n=24 * 75, gap_fraction=0.03):
    """A series across three months with gaps (single hours and runs), Tp partly outside the curves, and an
    operation of three phases with different limits and durations."""
    rng = np.random.default_rng(seed)
    hs = rng.gamma(3.0, 0.5, n)
    tp = rng.uniform(3.0, 16.0, n)
    present = rng.random(n) > gap_fraction
    present[500:530] = False
    hs[~present] = np.nan
    heading_a = LimitCurve([4.0, 8.0, 14.0], [1.2, 2.2, 1.6])
    heading_b = LimitCurve([5.0, 10.0, 15.0], [1.8, 1.4, 2.4])
    phases = [Phase("lift off", 2, LimitCurve([4.0, 9.0, 13.0], [1.5, 2.5, 2.0])),
              Phase("splash zone", 1, ConstantLimit(1.4)),
              Phase("lowering", 5, best_of([heading_a, heading_b]))]
    return _series(hs, tp, start="2003-01-20T00"), phases


def _brute_starts(series, phases):
    """'go', 'no_go' or 'unknown' for each start hour, by loops; and per phase the recorded hours whose
    limit is NaN."""
    n, total = series.n, sum(p.duration for p in phases)
    out = []
    for s in range(n):
        if s + total > n or not all(series.present[s:s + total]):
            out.append("unknown")
            continue
        ok, h = True, s
        for phase in phases:
            for j in range(h, h + phase.duration):
                limit = float(phase.limit(np.array([series.tp[j]]))[0])
                if not series.hs[j] <= limit:
                    ok = False
            h += phase.duration
        out.append("go" if ok else "no_go")
    outside = [sum(1 for j in range(n) if series.present[j] and np.isnan(p.limit(np.array([series.tp[j]]))[0]))
               for p in phases]
    return np.array(out), outside


def _brute_waits(series, kinds):
    n = series.n
    hours, censored, crossed = [], [], []
    for t0 in range(n):
        s = t0
        while s < n and kinds[s] != "go":
            s += 1
        if s == n:
            hours.append(np.nan), censored.append(True), crossed.append(False)
        else:
            hours.append(float(s - t0)), censored.append(False), crossed.append(not all(series.present[t0:s]))
    return np.array(hours), np.array(censored), np.array(crossed)


def test_go_equals_the_brute_force_count():
    series, phases = _random_case()
    st = go(series, phases)
    kinds, outside = _brute_starts(series, phases)
    assert np.array_equal(st.go, kinds == "go")
    assert np.array_equal(st.unknown, kinds == "unknown")
    assert np.array_equal(st.no_go, kinds == "no_go")
    assert st.outside_curve.tolist() == outside
    assert min(outside) == 0 and max(outside) > 0  # the constant limit is defined everywhere, the curves are not
    assert 0 < np.count_nonzero(kinds == "go") < np.count_nonzero(kinds == "no_go")
    assert st.duration == 8 and st.phases == ("lift off", "splash zone", "lowering")


def test_workability_per_month_equals_the_brute_force_count():
    series, phases = _random_case(seed=2)
    kinds, _ = _brute_starts(series, phases)
    ds = workability(series, phases)
    for m in range(1, 13):
        sel = series.month == m
        n_go, n_no = np.count_nonzero(sel & (kinds == "go")), np.count_nonzero(sel & (kinds == "no_go"))
        assert int(ds.go.sel(month=m)) == n_go
        assert int(ds.no_go.sel(month=m)) == n_no
        assert int(ds.unknown.sel(month=m)) == np.count_nonzero(sel & (kinds == "unknown"))
        if n_go + n_no:
            assert float(ds.workability.sel(month=m)) == n_go / (n_go + n_no)
        else:
            assert np.isnan(float(ds.workability.sel(month=m)))
    assert ds.year.values.tolist() == [2003]
    assert np.array_equal(ds.go_by_year.sel(year=2003).values, ds.go.values, equal_nan=True)
    assert ds.workability.attrs["units"] == "1" and ds.outside_curve.attrs["units"] == "h"
    assert ds.duration.attrs["units"] == "h" and int(ds.duration) == 8


def test_waits_equal_the_brute_force_scan():
    series, phases = _random_case(seed=3)
    kinds, _ = _brute_starts(series, phases)
    w = waits(series, phases)
    hours, censored, crossed = _brute_waits(series, kinds)
    assert np.array_equal(w.hours, hours, equal_nan=True)
    assert np.array_equal(w.censored, censored)
    assert np.array_equal(w.crossed_gap, crossed)
    assert crossed.any() and censored.any()
    ds = waiting_time(series, phases, quantiles=(0.5, 0.9))
    for m in (1, 2, 3):
        x = hours[(series.month == m) & ~censored]
        assert np.array_equal(ds.waiting.sel(month=m).values, np.quantile(x, [0.5, 0.9]))
        assert float(ds.waiting_mean.sel(month=m)) == x.mean()
        assert np.array_equal(ds.total.sel(month=m).values, np.quantile(x, [0.5, 0.9]) + 8)
        assert int(ds.n.sel(month=m)) == x.size
        assert int(ds.censored.sel(month=m)) == np.count_nonzero((series.month == m) & censored)
        assert int(ds.crossed_gap.sel(month=m)) == np.count_nonzero((series.month == m) & crossed)
    assert ds.waiting.attrs["units"] == "h" and ds.n.attrs["units"] == "1"
    no_gaps = waiting_time(series, phases, include_gap_waits=False)
    for m in (1, 2, 3):
        x = hours[(series.month == m) & ~censored & ~crossed]
        assert int(no_gaps.n.sel(month=m)) == x.size
        assert np.array_equal(no_gaps.waiting_mean.sel(month=m), x.mean() if x.size else np.nan, equal_nan=True)
    assert int(no_gaps.n.sum()) > 0


def test_a_calm_sea_is_always_workable_and_never_waits():
    n, phases = 24 * 59, [Phase("a", 3, ConstantLimit(2.0)), Phase("b", 4, ConstantLimit(1.5))]  # January, February
    series = _series(np.full(n, 0.5))
    ds = workability(series, phases)
    assert np.all(ds.workability.sel(month=[1, 2]).values == 1.0)
    assert np.all(np.isnan(ds.workability.sel(month=[3, 12]).values))
    assert int(ds.unknown.sum()) == 6  # the last starts run past the end
    wt = waiting_time(series, phases)
    assert np.all(wt.waiting.sel(month=[1, 2]).values == 0.0)
    assert np.all(wt.waiting_mean.sel(month=[1, 2]).values == 0.0)
    assert np.all(wt.total.sel(month=[1, 2]).values == 7.0)
    assert int(wt.censored.sum()) == 6 and int(wt.crossed_gap.sum()) == 0


def test_a_storm_of_known_length_gives_the_known_wait():
    n, storm_start, storm = 400, 200, 30
    hs = np.full(n, 1.0)
    hs[storm_start:storm_start + storm] = 4.0
    phases = [Phase("a", 5, ConstantLimit(2.0)), Phase("b", 7, ConstantLimit(3.0))]
    series = _series(hs)
    w = waits(series, phases)
    first_touch = storm_start - 12 + 1  # the first start whose 12 h span reaches the storm
    for t0 in range(n - 12 + 1):
        expect = storm_start + storm - t0 if first_touch <= t0 < storm_start + storm else 0
        assert w.hours[t0] == expect
    assert w.hours[first_touch] == storm + 11 and not w.crossed_gap.any()


def test_each_phase_meets_its_own_limit_in_its_own_slot():
    """Hs 2.5 m is within phase b's limit (3 m), not phase a's (2 m): a start is a go exactly when the
    2.5 m hour falls in b's slot."""
    hs = np.full(60, 1.0)
    hs[30] = 2.5
    phases = [Phase("a", 5, ConstantLimit(2.0)), Phase("b", 7, ConstantLimit(3.0))]
    st = go(_series(hs), phases)
    for s in range(49):
        assert st.go[s] == (not s <= 30 < s + 5)


def test_a_start_is_counted_in_its_own_month():
    """Starts on 31 January whose span reaches into a February storm are January's no-go starts."""
    hs = np.full(24 * 4, 1.0)  # 30 Jan 00:00 .. 2 Feb 23:00
    hs[48 + 6:] = 3.0  # from 1 February 06:00
    phases = [Phase("a", 10, ConstantLimit(2.0))]
    series = _series(hs, start="2004-01-30T00")
    ds = workability(series, phases)
    # January: starts 30 Jan 00:00 .. 31 Jan 23:00 (48); those from 31 Jan 21:00 reach 1 Feb 06:00
    assert int(ds.go.sel(month=1)) == 48 - 3 and int(ds.no_go.sel(month=1)) == 3
    assert int(ds.go.sel(month=2)) == 0 and int(ds.unknown.sel(month=2)) == 9
    assert ds.year.values.tolist() == [2004]


def test_waits_running_past_the_end_are_censored():
    hs = np.full(24 * 40, 1.0)
    hs[-100:] = 5.0  # a storm to the end of the record
    phases = [Phase("a", 6, ConstantLimit(2.0))]
    series = _series(hs, start="2002-03-05T00")
    w = waits(series, phases)
    last_go = series.n - 100 - 6
    assert not w.censored[:last_go + 1].any() and w.censored[last_go + 1:].all()
    wt = waiting_time(series, phases)
    assert int(wt.censored.sum()) == 100 + 5
    assert int(wt.n.sum()) == series.n - 105


def test_a_gap_makes_its_starts_unknown_and_waits_run_through_it():
    hs = np.full(100, 1.0)
    present = np.ones(100, bool)
    present[40:43] = False
    phases = [Phase("a", 4, ConstantLimit(2.0))]
    series = _series(hs, present=present)
    st = go(series, phases)
    assert np.flatnonzero(st.unknown).tolist() == list(range(37, 43)) + [97, 98, 99]
    w = waits(series, phases)
    assert w.hours[37] == 43 - 37 and w.crossed_gap[37] and w.crossed_gap[42] and not w.crossed_gap[36]
    assert np.isnan(w.hours[97]) and w.censored[97]


def test_a_curve_outside_its_range_is_not_workable_and_counted():
    curve = LimitCurve([5.0, 10.0], [1.0, 2.0])
    assert curve(np.array([5.0, 7.5, 10.0])).tolist() == [1.0, 1.5, 2.0]
    assert np.isnan(curve(np.array([4.99, 10.01]))).all()
    tp = np.full(30, 7.0)
    tp[10] = 12.0
    st = go(_series(np.full(30, 0.1), tp), [Phase("a", 3, curve)])
    assert st.outside_curve.tolist() == [1]
    assert not st.go[8:11].any() and st.go[:8].all() and st.go[11:28].all()


def test_a_contingency_after_the_phases_equals_the_brute_force_count():
    """T_C hours after the phases under the least of their limits (NaN where any is): the brute-force count of the
    same slots, exact; a window now needs more calm hours, so no start is a go that was not one without it."""
    series, phases = _random_case(seed=3)
    spare = Phase("contingency", 4, LeastOf(tuple(p.limit for p in phases)))
    tp = np.array([3.0, 4.5, 9.0, 14.0])
    expected = np.min(np.stack([p.limit(tp) for p in phases]), axis=0)
    assert np.array_equal(spare.limit(tp), expected, equal_nan=True) and np.isnan(expected[0])
    st, without = go(series, phases + [spare]), go(series, phases)
    kinds, _ = _brute_starts(series, phases + [spare])
    assert np.array_equal(st.go, kinds == "go") and np.array_equal(st.unknown, kinds == "unknown")
    assert not np.any(st.go & ~without.go) and np.count_nonzero(st.go) < np.count_nonzero(without.go)


def test_best_of_takes_the_best_heading():
    a = LimitCurve([4.0, 10.0], [1.0, 2.0])
    b = LimitCurve([6.0, 12.0], [2.5, 0.5])
    best = best_of([a, b])
    tp = np.array([3.0, 4.0, 6.0, 9.0, 11.0, 13.0])
    expected = [np.nan, 1.0, 2.5, max(1.0 + 5 / 6, 2.5 - 2 * 3 / 6), 2.5 - 2 * 5 / 6, np.nan]
    assert np.allclose(best(tp), expected, equal_nan=True, rtol=0, atol=1e-15)
    with pytest.raises(OperabilityError):
        best_of([])


def test_from_times_derives_the_calendar_and_the_gaps():
    t = np.datetime64("1999-12-31T22", "h") + np.arange(4)
    s = HourlySeries.from_times(t, [1.0, np.nan, 1.0, 1.0], [8.0, 8.0, 8.0, np.nan])
    assert s.year.tolist() == [1999, 1999, 2000, 2000] and s.month.tolist() == [12, 12, 1, 1]
    assert s.present.tolist() == [True, False, True, False]


@pytest.mark.parametrize("build,field", [
    (lambda: HourlySeries.from_times(np.datetime64("2000-01-01T00", "h") + np.array([0, 1, 3]), [1.0] * 3, [8.0] * 3),
     "consecutive"),
    (lambda: HourlySeries(np.array([1.0, np.nan]), np.ones(2), np.ones(2, bool), np.ones(2, int), np.ones(2, int)),
     "marked present"),
    (lambda: HourlySeries(np.ones(2), np.ones(2), np.ones(2, bool), np.ones(2, int), np.array([0, 13])),
     "HourlySeries.month"),
    (lambda: HourlySeries(np.ones(2), np.ones(2), np.ones(2), np.ones(2, int), np.ones(2, int)),
     "HourlySeries.present"),
    (lambda: Phase("a", 0, ConstantLimit(1.0)), "duration"),
    (lambda: Phase("a", 1.5, ConstantLimit(1.0)), "duration"),
    (lambda: Phase("a", True, ConstantLimit(1.0)), "duration"),
    (lambda: Phase("a", 2, 1.5), "limit"),
    (lambda: LimitCurve([5.0, 5.0], [1.0, 2.0]), "strictly increasing"),
    (lambda: LimitCurve([5.0], [1.0]), "length >= 2"),
    (lambda: go(_series(np.ones(5)), [Phase("a", 1, ConstantLimit(1)), Phase("a", 1, ConstantLimit(1))]), "differ"),
    (lambda: waiting_time(_series(np.ones(5)), [Phase("a", 1, ConstantLimit(1))], quantiles=(0.5, 90)), "quantiles"),
    (lambda: workability(_series(np.ones(5)), [Phase("a", 1, ConstantLimit(1))],
                         starts=go(_series(np.ones(6)), [Phase("a", 1, ConstantLimit(1))])), "starts"),
    (lambda: ConstantLimit(float("nan")), "ConstantLimit.hs_limit"),
    (lambda: LimitCurve(["a", "b"], [1.0, 2.0]), "LimitCurve.tp"),
])
def test_bad_inputs_are_refused_in_one_line(build, field):
    with pytest.raises(OperabilityError) as err:
        build()
    assert field in str(err.value) and "\n" not in str(err.value)


# ---- the smoothed workability ----

def _smooth_case(margin=0.05):
    """Hs never within ``margin`` of either phase's limit, so the exact indicator is unambiguous."""
    rng = np.random.default_rng(7)
    n = 24 * 40
    hs = rng.uniform(0.2, 2.6, n)
    tp = rng.uniform(5.0, 11.0, n)
    phases = [Phase("a", 3, LimitCurve([5.0, 11.0], [1.6, 2.0])), Phase("b", 4, ConstantLimit(1.9))]
    present = rng.random(n) > 0.02
    series = _series(hs, tp, present=present, start="2005-01-15T00")
    limits = phase_limits(series, phases)
    keep = np.all(np.isnan(limits) | (np.abs(limits - series.hs) >= margin), axis=0)
    series = _series(np.where(keep, hs, 0.1), tp, present=present, start="2005-01-15T00")
    return series, phases, phase_limits(series, phases)


def test_the_smoothed_workability_tends_to_the_exact_one():
    series, phases, limits = _smooth_case()
    exact = workability(series, phases)
    for m in (1, 2):
        target = float(exact.workability.sel(month=m))
        assert 0.05 < target < 0.95
        errors = [abs(float(smooth_workability(series, [3, 4], limits, m, width=w)) - target)
                  for w in (0.05, 0.01, 0.002, 0.0005)]
        assert all(b <= a for a, b in zip(errors, errors[1:])) and errors[1] > 0
        assert errors[-1] < 1e-12  # every hour at least 0.05 m from its limit: 100 widths


def test_the_smoothed_workability_averages_the_known_starts():
    series, phases, limits = _smooth_case()
    st = go(series, phases)
    assert np.array_equal(known_starts(series.present, [3, 4]), ~st.unknown)
    hs = jnp.asarray(series.hs)
    value = float(smooth_workability(series, [3, 4], limits, 1, width=0.1))
    starts = np.flatnonzero(~st.unknown & (series.month == 1))
    p = jax.nn.sigmoid((jnp.asarray(limits) - hs[None, :]) / 0.1)
    brute = np.mean([float(jnp.prod(p[0, s:s + 3]) * jnp.prod(p[1, s + 3:s + 7])) for s in starts])
    assert value == pytest.approx(brute, rel=1e-12)


@pytest.mark.parametrize("phase", [0, 1])
def test_the_gradient_of_a_uniform_limit_shift_matches_central_differences(phase):
    series, phases, limits = _smooth_case()
    base = jnp.asarray(limits)
    shift = jnp.zeros((2, 1)).at[phase].set(1.0)

    def f(delta):
        return smooth_workability(series, [3, 4], base + delta * shift, 2, width=0.05)

    grad = float(jax.grad(f)(0.0))
    h = 1e-5
    fd = (float(f(h)) - float(f(-h))) / (2 * h)
    assert grad > 0
    assert grad == pytest.approx(fd, rel=1e-6)


def test_smooth_workability_refusals():
    series, phases, limits = _smooth_case()
    with pytest.raises(OperabilityError, match="limits must have shape"):
        smooth_workability(series, [3, 4], limits[:1], 1)
    with pytest.raises(OperabilityError, match="width"):
        smooth_workability(series, [3, 4], limits, 1, width=0.0)
    with pytest.raises(OperabilityError, match="month 7"):
        smooth_workability(series, [3, 4], limits, 7)


# ---- the real hindcast: speed ----

def test_ten_years_of_hours_in_well_under_a_second():
    if not HINDCAST.is_file():
        pytest.skip(f"{HINDCAST} is not present")
    rows = [line.split(";") for line in HINDCAST.read_text().splitlines()[1:] if line.strip()]
    stamps = np.array([r[0].strip()[:10] + "T" + r[0].strip()[11:13] for r in rows], dtype="datetime64[h]")
    grid = np.arange(stamps[0], stamps[-1] + 1)
    index = (stamps - stamps[0]).astype(np.int64)
    hs, tz = np.full(grid.size, np.nan), np.full(grid.size, np.nan)
    hs[index] = [float(r[1]) for r in rows]
    tz[index] = [float(r[2]) for r in rows]
    series = HourlySeries.from_times(grid, hs, 1.3 * tz)  # a Tp for the speed check only
    phases = [Phase("lift", 6, LimitCurve([3.0, 8.0, 14.0], [1.5, 2.5, 2.0])), Phase("lower", 18, ConstantLimit(2.0))]
    t0 = time.perf_counter()
    st = go(series, phases)
    ds = workability(series, phases, starts=st)
    wt = waiting_time(series, phases, starts=st)
    elapsed = time.perf_counter() - t0
    assert elapsed < 0.5, elapsed
    assert series.n == 3653 * 24 and np.count_nonzero(~series.present) == series.n - len(rows)
    assert int(ds.go.sum() + ds.no_go.sum() + ds.unknown.sum()) == series.n
    assert np.all((ds.workability.values > 0) & (ds.workability.values < 1))
    assert float(wt.waiting.sel(month=1, quantile=0.9)) > float(wt.waiting.sel(month=7, quantile=0.9))


def test_waits_through_a_long_outage_are_told_apart_from_a_missing_hour():
    """Ready at hour 0 of a calm-free series whose first go is at hour 10: a 1-hour gap at hour 2 is waited
    through (max_gap = 24), a 30-hour outage is not; brute force over the gap stretches."""
    import numpy as np

    from jaxmbd.operability.windows import ConstantLimit, HourlySeries, Phase, waits

    n = 80
    hs = np.full(n, 3.0)
    hs[10:13] = hs[60:] = 0.5
    present = np.ones(n, bool)
    present[2] = False
    present[20:50] = False
    t = np.datetime64("2001-01-01T00", "h") + np.arange(n)
    s = HourlySeries.from_times(t, np.where(present, hs, np.nan), np.full(n, 8.0), present)
    w_any, w_long = waits(s, [Phase("a", 1, ConstantLimit(1.0))]), waits(s, [Phase("a", 1, ConstantLimit(1.0))], max_gap=24)
    first = [10 if t0 <= 10 else (11 if t0 <= 11 else (12 if t0 <= 12 else 60)) for t0 in range(n)]
    assert np.array_equal(w_long.hours[:60], np.array(first[:60]) - np.arange(60))
    crossed_any = [any(not present[h] for h in range(t0, f)) for t0, f in zip(range(n), first)]
    crossed_long = [any(20 <= h < 50 for h in range(t0, f)) for t0, f in zip(range(n), first)]
    assert w_any.crossed_gap.tolist() == crossed_any and w_long.crossed_gap.tolist() == crossed_long
