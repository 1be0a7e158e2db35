"""Weather windows of a marine operation on an hourly sea-state series: go or no-go per start hour,
workability per month, waiting time, and a smoothed workability whose gradient reaches the limits.

The series
----------
A full hourly grid (:class:`HourlySeries`): significant wave height ``hs`` (m), peak period ``tp`` (s),
a boolean ``present`` that is False at the hours with no record (the gaps), and each hour's calendar
``year`` and ``month``.  Nothing is filled in: a gap stays a gap, and every result says how many start
hours it made unknown.

The operation
-------------
An ordered sequence of :class:`Phase`: phase k lasts d_k whole hours (d_k >= 1) and has an operational
limit, a function of Tp giving the largest Hs at which the phase may go on (a :class:`LimitCurve`, linear
in Tp; :func:`best_of` takes the best of several headings' curves, as a vessel on dynamic positioning
picks its heading).  The phases follow each other: phase k starts o_k = d_1 + ... + d_(k-1) hours after
the operation, which lasts D = d_1 + ... + d_n hours.

Rules
-----
*Start hour.*  The operation started at hour s occupies the hours s .. s + D - 1, phase k the hours
[s + o_k, s + o_k + d_k).  The start is

- **unknown** when an hour of [s, s + D) has no record, or when s + D is past the end of the series;
- a **go** (workable) when it is not unknown and, at every hour h of each phase's slot, Hs(h) <= that
  phase's limit at Tp(h);
- a **no-go** (not workable) otherwise.

A start whose span touches a gap is unknown even where a recorded hour of it already exceeds a limit:
keeping those as no-go while the gap-touching starts that would have been workable cannot be counted
would bias workability down.  A limit that is NaN at an hour (a :class:`LimitCurve` at a Tp outside its
range) fails the comparison: that hour is not workable for that phase, and the recorded hours where it
happens are counted per phase (``outside_curve``).

*Workability* of a calendar month: go / (go + no-go) over the start hours in that month (the month of
hour s), over all the years pooled and per year; unknown starts are counted and left out; a month with no
known start gets NaN.

*Waiting time.*  The operation is ready at hour t0 (every hour of the grid); it waits until the first go
start s >= t0: waiting = s - t0 hours, total = waiting + D.  A start touching a gap is never a go, so a
wait runs on through gaps and counts their hours as waiting (an upper bound: the weather in the gap may
have been workable); such waits are flagged (``crossed_gap``), and may be left out.  A wait with no go
start before the series ends is censored: left out of the statistics and counted (``censored``).  Per
calendar month of t0, over the years pooled: the mean and the quantiles (P50, P90; numpy's linear
interpolation between order statistics), as weather-downtime studies report them.

*Smoothed workability.*  For gradients, the indicator 1[Hs <= limit] becomes the logistic
sigmoid((limit - Hs) / w) of a width w (m, 0.05 by default), the go of a start the product of these over
the operation's hours (each hour against its phase's limit), and the month's workability their mean over
the month's known starts (the same starts as the exact count).  As w -> 0 it tends to the exact value
wherever no hour sits exactly on its limit (there the sigmoid is 1/2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from ..errors import JaxmbdError

SMOOTH_WIDTH = 0.05
"""m: default width of the logistic step in :func:`smooth_workability`."""
LOG_FLOOR = -60.0
"""The smoothed log-indicator of one hour is kept above this (e^-60 ~ 1e-26: a certain no-go)."""


class OperabilityError(JaxmbdError, ValueError):
    """An operability input that cannot be used (a series, a phase, a limit curve, a table's range); the
    message names the field and what was expected.  Still a ``ValueError`` for callers that catch that."""


def _vector(name: str, x, dtype=float) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError):
        raise OperabilityError(f"{name}: expected a 1-D array of numbers, got {type(x).__name__}") from None
    if a.ndim != 1:
        raise OperabilityError(f"{name}: expected a 1-D array, got shape {a.shape}")
    return a


def _integers(name: str, x, n: int) -> np.ndarray:
    a = np.asarray(x)
    if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
        raise OperabilityError(f"{name}: expected {n} integers (one per hour), got {a.dtype} of shape {a.shape}")
    return a.astype(np.int64)


@dataclasses.dataclass(frozen=True, eq=False)
class HourlySeries:
    """Sea states on a full hourly grid: ``hs`` (m), ``tp`` (s), ``present`` (False where the hour has no
    record), ``year`` and ``month`` (1-12) of each hour.  All 1-D of one length n; ``hs`` and ``tp`` must be
    finite where ``present`` (their values elsewhere are never read)."""

    hs: np.ndarray
    tp: np.ndarray
    present: np.ndarray
    year: np.ndarray
    month: np.ndarray

    def __post_init__(self):
        hs = _vector("HourlySeries.hs", self.hs)
        n = hs.size
        if n == 0:
            raise OperabilityError("HourlySeries.hs: expected at least one hour, got an empty array")
        tp = _vector("HourlySeries.tp", self.tp)
        present = np.asarray(self.present)
        if present.dtype != bool or present.shape != (n,):
            raise OperabilityError(f"HourlySeries.present: expected {n} booleans, got {present.dtype} "
                                   f"of shape {present.shape}")
        if tp.shape != (n,):
            raise OperabilityError(f"HourlySeries.tp: expected {n} values (as hs), got {tp.size}")
        year = _integers("HourlySeries.year", self.year, n)
        month = _integers("HourlySeries.month", self.month, n)
        if month.min() < 1 or month.max() > 12:
            raise OperabilityError(f"HourlySeries.month: expected 1-12, got values from {month.min()} to {month.max()}")
        bad = np.flatnonzero(present & ~(np.isfinite(hs) & np.isfinite(tp)))
        if bad.size:
            raise OperabilityError(f"HourlySeries: hour {bad[0]} is marked present but its hs or tp is not finite "
                                   f"({bad.size} such hours); mark them present=False")
        for name, value in (("hs", hs), ("tp", tp), ("present", present), ("year", year), ("month", month)):
            object.__setattr__(self, name, value)

    @classmethod
    def from_times(cls, time, hs, tp, present=None) -> "HourlySeries":
        """The series on the hours ``time`` (numpy datetime64, consecutive whole hours); ``present``
        defaults to the hours where both ``hs`` and ``tp`` are finite (NaN marks a gap)."""
        t = np.asarray(time)
        if t.ndim != 1 or not np.issubdtype(t.dtype, np.datetime64):
            raise OperabilityError(f"HourlySeries.from_times: time must be a 1-D datetime64 array, got {t.dtype} "
                                   f"of shape {t.shape}")
        th = t.astype("datetime64[h]")
        if np.any(th != t):
            raise OperabilityError("HourlySeries.from_times: time must be whole hours (minutes and seconds zero)")
        step = np.diff(th.astype(np.int64))
        if np.any(step != 1):
            k = int(np.flatnonzero(step != 1)[0])
            raise OperabilityError(f"HourlySeries.from_times: time must be consecutive hours (a full grid, gaps "
                                   f"marked by present=False); from {th[k]} the next time is {step[k]} h later")
        hs, tp = np.asarray(hs, float), np.asarray(tp, float)
        if present is None:
            present = np.isfinite(hs) & np.isfinite(tp)
        year = th.astype("datetime64[Y]").astype(np.int64) + 1970
        month = th.astype("datetime64[M]").astype(np.int64) % 12 + 1
        return cls(hs, tp, np.asarray(present, bool), year, month)

    @property
    def n(self) -> int:
        """Number of hours on the grid."""
        return int(self.hs.size)


@dataclasses.dataclass(frozen=True, eq=False)
class LimitCurve:
    """Limiting Hs (m) against Tp (s), linear between the points; ``tp`` strictly increasing.  Outside
    [tp[0], tp[-1]] the limit is NaN: no hour there is workable, and :func:`go` counts them."""

    tp: np.ndarray
    hs_limit: np.ndarray

    def __post_init__(self):
        tp = _vector("LimitCurve.tp", self.tp)
        hs = _vector("LimitCurve.hs_limit", self.hs_limit)
        if tp.size < 2 or hs.shape != tp.shape:
            raise OperabilityError(f"LimitCurve: expected tp and hs_limit of one length >= 2, "
                                   f"got {tp.size} and {hs.size}")
        if not (np.all(np.isfinite(tp)) and np.all(np.isfinite(hs))):
            raise OperabilityError("LimitCurve: tp and hs_limit must be finite")
        if np.any(np.diff(tp) <= 0):
            raise OperabilityError(f"LimitCurve.tp: expected strictly increasing periods, got {tp.tolist()}")
        if np.any(hs < 0):
            raise OperabilityError(f"LimitCurve.hs_limit: expected limits >= 0 m, got {hs.tolist()}")
        object.__setattr__(self, "tp", tp)
        object.__setattr__(self, "hs_limit", hs)

    def __call__(self, tp) -> np.ndarray:
        return np.interp(np.asarray(tp, float), self.tp, self.hs_limit, left=np.nan, right=np.nan)


@dataclasses.dataclass(frozen=True)
class ConstantLimit:
    """The same limiting Hs (m) at every Tp."""

    hs_limit: float

    def __post_init__(self):
        try:
            value = float(self.hs_limit)
        except (TypeError, ValueError):
            raise OperabilityError(f"ConstantLimit.hs_limit: expected a number of metres, "
                                   f"got {self.hs_limit!r}") from None
        if np.isnan(value):
            raise OperabilityError("ConstantLimit.hs_limit: expected a number of metres, got NaN")
        object.__setattr__(self, "hs_limit", value)

    def __call__(self, tp) -> np.ndarray:
        return np.full(np.shape(tp), self.hs_limit)


@dataclasses.dataclass(frozen=True)
class BestOf:
    """The largest of several limits at each Tp (NaN only where all are NaN): see :func:`best_of`."""

    limits: tuple

    def __call__(self, tp) -> np.ndarray:
        values = [np.broadcast_to(np.asarray(f(tp), float), np.shape(tp)) for f in self.limits]
        return np.fmax.reduce(np.stack(values), axis=0)


@dataclasses.dataclass(frozen=True)
class LeastOf:
    """The smallest of several limits at each Tp (NaN where any is NaN): the limit of a contingency that may
    fall in any of the operation's phases."""

    limits: tuple

    def __call__(self, tp) -> np.ndarray:
        values = [np.broadcast_to(np.asarray(f(tp), float), np.shape(tp)) for f in self.limits]
        return np.min(np.stack(values), axis=0)


def best_of(limits: Sequence[Callable]) -> BestOf:
    """The limit of a vessel that may choose its heading within a sector: at each Tp, the best (largest)
    of the headings' limits (each a callable Tp -> limiting Hs, e.g. a :class:`LimitCurve` per heading)."""
    limits = tuple(limits)
    if not limits or not all(callable(f) for f in limits):
        raise OperabilityError("best_of: expected one or more limits, each a callable tp -> limiting Hs")
    return BestOf(limits)


@dataclasses.dataclass(frozen=True)
class Phase:
    """One phase of an operation: ``name``, ``duration`` (whole hours >= 1) and ``limit``, a callable
    taking an array of Tp (s) and returning the limiting Hs (m) at each (NaN: not workable there)."""

    name: str
    duration: int
    limit: Callable

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise OperabilityError(f"Phase.name: expected a non-empty string, got {self.name!r}")
        d = self.duration
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise OperabilityError(f"Phase {self.name!r}: duration must be a whole number of hours >= 1, got {d!r}")
        object.__setattr__(self, "duration", int(d))
        if not callable(self.limit):
            raise OperabilityError(f"Phase {self.name!r}: limit must be a callable tp -> limiting Hs, "
                                   f"got {type(self.limit).__name__}")


def _phases(operation) -> tuple[Phase, ...]:
    phases = tuple(operation)
    if not phases or not all(isinstance(p, Phase) for p in phases):
        raise OperabilityError("operation: expected a non-empty sequence of Phase")
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise OperabilityError(f"operation: phase names must differ, got {names}")
    return phases


def phase_limits(series: HourlySeries, operation: Sequence[Phase]) -> np.ndarray:
    """(n_phases, n_hours): each phase's limiting Hs (m) at each hour's Tp; NaN at the hours with no
    record and where a phase's limit is NaN (Tp outside its curve)."""
    phases = _phases(operation)
    out = np.full((len(phases), series.n), np.nan)
    tp = series.tp[series.present]
    for k, phase in enumerate(phases):
        limit = np.asarray(phase.limit(tp), float)
        if limit.shape not in ((), tp.shape):
            raise OperabilityError(f"Phase {phase.name!r}: its limit returned shape {limit.shape} "
                                   f"for {tp.size} periods")
        out[k, series.present] = limit
    return out


def _window_sums(indicator: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """Sum of ``indicator`` over [s, s + length) for each s in ``starts`` (all windows inside it)."""
    c = np.concatenate([[0], np.cumsum(indicator, dtype=np.int64)])
    return c[starts + length] - c[starts]


def _unknown(present: np.ndarray, duration: int) -> np.ndarray:
    """Starts whose span [s, s + duration) has an hour with no record or runs past the end."""
    n = present.size
    missing = np.concatenate([~present, np.ones(duration, bool)])
    return _window_sums(missing, np.arange(n), duration) > 0


@dataclasses.dataclass(frozen=True, eq=False)
class Starts:
    """Per start hour: ``go`` (workable) and ``unknown`` (a gap in the span, or past the end); the
    rest are no-go.  ``outside_curve``: per phase, the recorded hours where its limit is NaN."""

    go: np.ndarray
    unknown: np.ndarray
    outside_curve: np.ndarray
    phases: tuple[str, ...]
    durations: tuple[int, ...]

    @property
    def no_go(self) -> np.ndarray:
        return ~self.go & ~self.unknown

    @property
    def duration(self) -> int:
        """Hours of the whole operation, D."""
        return sum(self.durations)


def go(series: HourlySeries, operation: Sequence[Phase]) -> Starts:
    """Go, no-go or unknown for the operation started at each hour of the series (rules: module docstring).

    Vectorised: per phase, the cumulative sum of the hourly indicator "limit exceeded or no record",
    differenced over the phase's slot shifted by its offset."""
    phases = _phases(operation)
    limits = phase_limits(series, phases)
    n = series.n
    durations = tuple(p.duration for p in phases)
    total = sum(durations)
    starts = np.arange(n)
    ok = np.ones(n, bool)
    offset = 0
    for k, phase in enumerate(phases):
        bad = np.ones(n + total, bool)  # the hours past the end are unknown, never workable
        bad[:n] = ~(series.present & (series.hs <= limits[k]))
        ok &= _window_sums(bad, starts + offset, phase.duration) == 0
        offset += phase.duration
    unknown = _unknown(series.present, total)
    outside = np.array([np.count_nonzero(series.present & np.isnan(limits[k])) for k in range(len(phases))])
    return Starts(ok & ~unknown, unknown, outside, tuple(p.name for p in phases), durations)


def _starts(series: HourlySeries, operation, starts: Starts | None) -> Starts:
    if starts is None:
        return go(series, operation)
    if not isinstance(starts, Starts) or starts.go.shape != (series.n,):
        raise OperabilityError(f"starts: expected the Starts that go() returned for this series ({series.n} hours)")
    return starts


def _by_year_month(series: HourlySeries, years: np.ndarray, mask: np.ndarray) -> np.ndarray:
    cell = np.searchsorted(years, series.year) * 12 + series.month - 1
    return np.bincount(cell[mask], minlength=years.size * 12).reshape(years.size, 12)


def _fraction(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0)


def _operation_vars(starts: Starts) -> dict:
    return {
        "phase_duration": (("phase",), np.array(starts.durations),
                           {"units": "h", "long_name": "duration of each phase"}),
        "duration": ((), starts.duration, {"units": "h", "long_name": "duration of the operation, D"}),
    }


def workability(series: HourlySeries, operation: Sequence[Phase], *, starts: Starts | None = None) -> xr.Dataset:
    """Workability per calendar month (all years pooled, and per year) of the operation started in that
    month, with the counts of go, no-go and unknown starts and, per phase, the recorded hours whose Tp was
    outside its limit curve.  ``starts``: the :func:`go` of this series and operation, if already made."""
    st = _starts(series, operation, starts)
    years = np.unique(series.year)
    counts = {name: _by_year_month(series, years, mask) for name, mask in
              (("go", st.go), ("no_go", st.no_go), ("unknown", st.unknown))}
    count = {"units": "1"}
    data = {
        "workability": (("month",), _fraction(counts["go"].sum(0), counts["go"].sum(0) + counts["no_go"].sum(0)),
                        {"units": "1", "long_name": "go / (go + no-go) of the starts in the month, all years"}),
        "workability_by_year": (("year", "month"), _fraction(counts["go"], counts["go"] + counts["no_go"]),
                                {"units": "1", "long_name": "go / (go + no-go) of the month's starts, each year"}),
        "outside_curve": (("phase",), st.outside_curve,
                          {"units": "h", "long_name": "recorded hours where the phase's limit is NaN "
                                                      "(Tp outside its curve)"}),
        **_operation_vars(st),
    }
    for name, grid in counts.items():
        label = f"{name.replace('_', '-')} start hours"
        data[name] = (("month",), grid.sum(0), {**count, "long_name": f"{label}, all years"})
        data[f"{name}_by_year"] = (("year", "month"), grid, {**count, "long_name": label})
    return xr.Dataset(data, coords={"month": np.arange(1, 13), "year": years, "phase": list(st.phases)},
                      attrs={"rule": "a start is a go when each phase's limit holds at every hour of its slot; unknown "
                                     "when its span has an hour with no record or runs past the series' end"})


@dataclasses.dataclass(frozen=True, eq=False)
class Waits:
    """Per ready hour t0: ``hours`` to the first go start s >= t0 (NaN where ``censored``: no go start
    before the series ends), and ``crossed_gap``, the wait [t0, s) includes an hour with no record."""

    hours: np.ndarray
    censored: np.ndarray
    crossed_gap: np.ndarray
    duration: int


def _long_gap_hours(present: np.ndarray, max_gap: int) -> np.ndarray:
    """The missing hours that belong to a stretch of more than ``max_gap`` missing hours."""
    missing = ~present
    edges = np.flatnonzero(np.diff(np.concatenate([[0], missing.astype(np.int8), [0]])))
    long = np.zeros(missing.size, bool)
    for a, b in zip(edges[::2], edges[1::2]):
        if b - a > max_gap:
            long[a:b] = True
    return long


def waits(series: HourlySeries, operation: Sequence[Phase], *, starts: Starts | None = None, max_gap: int = 0) -> Waits:
    """The wait of the operation ready at each hour of the series (rules: module docstring).  ``crossed_gap``
    marks the waits that include a stretch of more than ``max_gap`` missing hours (0: any missing hour)."""
    st = _starts(series, operation, starts)
    n = series.n
    t0 = np.arange(n)
    first = np.minimum.accumulate(np.where(st.go, t0, n)[::-1])[::-1]  # the first go start at or after t0
    censored = first == n
    gap = _long_gap_hours(series.present, int(max_gap)) if max_gap else ~series.present
    missing = np.concatenate([[0], np.cumsum(gap, dtype=np.int64)])
    crossed = ~censored & (missing[first] - missing[t0] > 0)
    return Waits(np.where(censored, np.nan, (first - t0).astype(float)), censored, crossed, st.duration)


def waiting_time(series: HourlySeries, operation: Sequence[Phase], *, quantiles=(0.5, 0.9),
                 include_gap_waits: bool = True, starts: Starts | None = None, max_gap: int = 0) -> xr.Dataset:
    """Waiting time and total duration (waiting + D) of the operation ready in each calendar month, over
    the years pooled: their ``quantiles`` (P50 and P90 by default) and means, with the numbers of waits
    used, censored and crossing a gap.  ``include_gap_waits=False`` leaves the waits that crossed a gap of more
    than ``max_gap`` hours out (0: any gap): an outage of the buoy is no weather, a missing hour is waited through."""
    q = np.atleast_1d(np.asarray(quantiles, float))
    if q.ndim != 1 or q.size == 0 or np.any((q < 0) | (q > 1)) or not np.all(np.isfinite(q)):
        raise OperabilityError(f"waiting_time: quantiles must be fractions in [0, 1], "
                               f"got {np.asarray(quantiles).tolist()}")
    w = waits(series, operation, starts=starts, max_gap=max_gap)
    used = ~w.censored & (include_gap_waits | ~w.crossed_gap)
    wq = np.full((12, q.size), np.nan)
    mean = np.full(12, np.nan)
    n_used, n_censored, n_crossed = np.zeros(12, np.int64), np.zeros(12, np.int64), np.zeros(12, np.int64)
    for m in range(12):
        in_month = series.month == m + 1
        x = w.hours[in_month & used]
        n_used[m], n_censored[m] = x.size, np.count_nonzero(in_month & w.censored)
        n_crossed[m] = np.count_nonzero(in_month & w.crossed_gap)
        if x.size:
            wq[m], mean[m] = np.quantile(x, q), x.mean()
    h = {"units": "h"}
    data = {
        "waiting": (("month", "quantile"), wq, {**h, "long_name": "hours from ready to the first go start"}),
        "waiting_mean": (("month",), mean, {**h, "long_name": "mean hours from ready to the first go start"}),
        "total": (("month", "quantile"), wq + w.duration, {**h, "long_name": "waiting plus the operation's duration"}),
        "total_mean": (("month",), mean + w.duration, {**h, "long_name": "mean waiting plus the operation's duration"}),
        "n": (("month",), n_used, {"units": "1", "long_name": "ready hours whose wait is in the statistics"}),
        "censored": (("month",), n_censored,
                     {"units": "1", "long_name": "ready hours with no go start before the series ends"}),
        "crossed_gap": (("month",), n_crossed,
                        {"units": "1", "long_name": "uncensored waits that include a stretch of hours with no record "
                                                    "(longer than max_gap_hours)"}),
        "duration": ((), w.duration, {**h, "long_name": "duration of the operation, D"}),
    }
    return xr.Dataset(data, coords={"month": np.arange(1, 13), "quantile": q},
                      attrs={"include_gap_waits": int(include_gap_waits), "max_gap_hours": int(max_gap)})


def known_starts(present, durations: Sequence[int]) -> np.ndarray:
    """Start hours whose whole span (sum of ``durations`` hours) is on the record: the go and no-go starts."""
    present = np.asarray(present, bool)
    return ~_unknown(present, sum(int(d) for d in durations))


def smooth_workability(series: HourlySeries, durations: Sequence[int], limits, month: int, *,
                       width: float = SMOOTH_WIDTH):
    """Smoothed workability of the starts in calendar ``month`` (a JAX scalar, differentiable in ``limits``).

    ``limits``: (n_phases, n_hours) limiting Hs of each phase at each hour (e.g. :func:`phase_limits`, or a
    JAX function of design parameters); ``durations``: the phases' hours.  Each hour's indicator is
    sigmoid((limit - Hs) / ``width``) (``width`` in m; NaN limits count as a certain no-go), a start's go is
    their product over the operation's hours, and the result is the mean over the month's starts whose span
    is on the record (:func:`known_starts`), the same starts as :func:`workability` counts."""
    durations = tuple(int(d) for d in durations)
    if not durations or min(durations) < 1:
        raise OperabilityError(f"smooth_workability: durations must be whole hours >= 1, got {durations}")
    if not (np.isfinite(width) and width > 0):
        raise OperabilityError(f"smooth_workability: width must be a positive number of metres, got {width}")
    limits = jnp.asarray(limits)
    if limits.shape != (len(durations), series.n):
        raise OperabilityError(f"smooth_workability: limits must have shape {(len(durations), series.n)} "
                               f"(phases, hours), got {limits.shape}")
    selected = np.flatnonzero(known_starts(series.present, durations) & (series.month == month))
    if selected.size == 0:
        raise OperabilityError(f"smooth_workability: month {month} has no start hour whose span is on the record")
    hs = jnp.asarray(np.where(series.present, series.hs, 0.0))
    finite = jnp.isfinite(limits)
    z = jnp.where(finite, limits, 0.0) - hs[None, :]
    log_p = jnp.where(finite, jnp.maximum(jax.nn.log_sigmoid(z / width), LOG_FLOOR), LOG_FLOOR)
    log_go = jnp.zeros(selected.size)
    offset = 0
    for k, d in enumerate(durations):  # only the selected starts' own hours: sums stay local and exact
        hours = selected[:, None] + offset + np.arange(d)[None, :]
        log_go = log_go + jnp.sum(log_p[k][hours], axis=1)
        offset += d
    return jnp.mean(jnp.exp(log_go))
