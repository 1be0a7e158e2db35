"""Extreme-value statistics over Monte-Carlo realisations.

Per realisation, the largest value of an output over time; across
realisations, mean, standard deviation, percentiles and the most probable
maximum (MPM) from a Gumbel fit; the dynamic amplification factor
DAF = max tension / static tension (Ham et al. 2009, Hong et al. 2016).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .errors import InputError
from .validity import SLACK_FRACTION

EULER_GAMMA = 0.5772156649015329


@dataclasses.dataclass(frozen=True)
class Gumbel:
    """Gumbel (type I) distribution of maxima, F(x) = exp(−exp(−(x − μ)/β)), fitted by moments.

    μ is the mode: the most probable maximum of one realisation's duration.
    """

    mu: float
    beta: float

    @staticmethod
    def fit(maxima) -> "Gumbel":
        x = np.asarray(maxima, float)
        if x.size < 2:
            return Gumbel(float(x.mean()), 0.0)
        beta = float(np.std(x, ddof=1) * np.sqrt(6.0) / np.pi)
        return Gumbel(float(np.mean(x) - EULER_GAMMA * beta), beta)

    @property
    def most_probable_maximum(self) -> float:
        return self.mu

    def quantile(self, p):
        """Value not exceeded with probability p (e.g. 0.9)."""
        return self.mu - self.beta * np.log(-np.log(p))


@dataclasses.dataclass(frozen=True)
class ExtremeStatistics:
    """Statistics of per-realisation maxima of one output."""

    maxima: np.ndarray
    mean: float
    std: float
    p50: float
    p90: float
    p99: float
    mpm: float

    @staticmethod
    def of(series, axis_time=-1) -> "ExtremeStatistics":
        """``series``: (n_realisations, n_time) or (n_time,) of one scalar output."""
        x = np.asarray(series, float)
        maxima = np.max(x, axis=axis_time).reshape(-1)
        g = Gumbel.fit(maxima)
        return ExtremeStatistics(
            maxima=maxima,
            mean=float(np.mean(maxima)),
            std=float(np.std(maxima, ddof=1)) if maxima.size > 1 else 0.0,
            p50=float(np.percentile(maxima, 50)),
            p90=float(np.percentile(maxima, 90)),
            p99=float(np.percentile(maxima, 99)),
            mpm=g.most_probable_maximum,
        )


@dataclasses.dataclass(frozen=True)
class SlackEvent:
    """One slack spell of a lifting line and the snap that ends it (DNV-ST-N001, DNV-RP-H103 4.7).

    ``start``, ``end`` (s): the tension first falls below, then first returns above, the slack limit
    (a fraction of the static tension, interpolated between samples); ``snap`` (N): the largest
    tension from ``end`` until the tension next falls below its static value (the first load cycle
    after re-tensioning), at ``snap_time``; ``None`` when the record ends slack."""

    start: float
    end: float | None
    snap: float | None
    snap_time: float | None

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start


def slack_events(time, tension, static, *, slack_fraction=SLACK_FRACTION) -> list[SlackEvent]:
    """Slack spells and snap loads of one tension record (N) against its ``static`` value (N).

    A line is slack while its tension is below ``slack_fraction`` x ``static`` (0.1: DNV-RP-H103's
    slack-sling criterion, the hydrodynamic force at most 0.9 of the static weight); each slack spell
    ends with a snap as the line comes tight, reported with its peak.  ``time`` and ``tension``
    are 1-D of the same length, sampled finely enough to resolve the snap (the peak is the largest
    sample)."""
    t = np.asarray(time, float).reshape(-1)
    T = np.asarray(tension, float).reshape(-1)
    if t.shape != T.shape:
        raise InputError(f"slack_events: time {t.shape} and tension {T.shape} differ in length")
    limit = slack_fraction * float(static)

    def crossing(i, level):  # linear interpolation between samples i and i + 1
        return float(t[i] + (level - T[i]) * (t[i + 1] - t[i]) / (T[i + 1] - T[i]))

    below = T < limit
    down = np.flatnonzero(~below[:-1] & below[1:])
    up = np.flatnonzero(below[:-1] & ~below[1:])
    events = []
    starts = ([0] if below[0] else []) + list(down + 1)
    for s in starts:
        t_start = float(t[0]) if s == 0 and below[0] else crossing(s - 1, limit)
        later = up[up >= s]  # T[j] below the limit, T[j + 1] above
        if later.size == 0:
            events.append(SlackEvent(t_start, None, None, None))
            continue
        j = int(later[0])
        t_end = crossing(j, limit)
        # the first load cycle after re-tensioning: up through the static value and back below it
        rise = np.flatnonzero(T[j + 1:] >= float(static))
        a = j + 1 + (int(rise[0]) if rise.size else T.size - j - 1)
        fall = np.flatnonzero(T[a:] < float(static))
        stop = a + (int(fall[0]) if fall.size else T.size - a)
        window = slice(j + 1, max(stop, j + 2))
        k = j + 1 + int(np.argmax(T[window]))
        events.append(SlackEvent(t_start, t_end, float(T[k]), float(t[k])))
    return events


FIT_MIN_REALISATIONS = 5
"""A Gumbel fit to fewer per-realisation maxima is refused."""
STORM = 10800.0
"""s: the 3-hour storm of DNV-ST-N001 and DNV-RP-C205."""


@dataclasses.dataclass(frozen=True)
class MaximaSummary:
    """The per-realisation maxima of one output over a run of ``duration`` s: their ``n``, ``mean``,
    ``std`` (None for one), 90th percentile ``p90``; ``daf``, the mean maximum over the mean value at the
    start (the static load; None where it means nothing); ``mpm``, the mode of a Gumbel fit by moments
    (None below :data:`FIT_MIN_REALISATIONS`), and ``mpm_storm``, the same for a 3-hour storm assuming
    independent blocks of ``duration`` (None for an operation, which is no stationary storm)."""

    n: int
    mean: float
    std: float | None
    p90: float
    daf: float | None
    mpm: float | None
    mpm_storm: float | None


def summarise_maxima(x, duration: float, *, stationary: bool = True, daf: bool = False, between=None,
                     start=None) -> MaximaSummary:
    """:class:`MaximaSummary` of ``x`` (realisation, time) (or its maxima, (realisation, 1)); ``daf``: the
    output is a load whose value at the start is static (a rope's tension); ``between``: the largest values
    between the saves, shaped as ``x`` (:attr:`jaxmbd.results.Result.between`), which give the maxima;
    ``start``: the values at the start (realisation,) where ``x`` holds maxima only (an operation in phases,
    whose DAF is then over the static load at its start, in a sea that need not be stationary)."""
    x = np.asarray(x, float)
    maxima = np.max(np.asarray(between, float) if between is not None else x, axis=-1)
    given = start is not None
    start = float(np.mean(start if given else x[..., 0]))
    g = Gumbel.fit(maxima) if maxima.size >= FIT_MIN_REALISATIONS else None
    return MaximaSummary(
        n=int(maxima.size), mean=float(np.mean(maxima)), std=float(np.std(maxima, ddof=1)) if maxima.size > 1 else None,
        p90=float(np.percentile(maxima, 90)),
        daf=float(np.mean(maxima)) / start if daf and start > 0 and (stationary or given) else None,
        mpm=None if g is None else float(g.mu),
        mpm_storm=None if g is None or not stationary else float(g.mu + g.beta * np.log(max(STORM / duration, 1.0))))
