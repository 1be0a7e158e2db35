"""Extreme-value statistics over Monte-Carlo realisations.

Per realisation, the largest value of an output over time; across
realisations, mean, standard deviation, percentiles and the most probable
maximum (MPM) from a Gumbel fit; the dynamic amplification factor
DAF = max tension / static tension (Ham et al. 2009, Hong et al. 2016).
"""

from __future__ import annotations

import dataclasses

import numpy as np

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
