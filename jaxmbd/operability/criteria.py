"""An operation's criteria: which output, which bound, which statistic, in which phase.

A criterion holds one scalar output of a run against a bound, the way a lift is signed off:

- ``upper``: a statistic of the per-realisation **maxima** must not exceed it (hook or sling load against
  a capacity, a sway or off-lead angle, a crane-tip motion, a landing velocity given as a magnitude);
- ``lower``: a statistic of the per-realisation **minima** must not fall below it (a clearance, a
  tension that must stay positive);
- ``lower_fraction``: the minima must not fall below that fraction of the output's **static value**,
  the mean of the output over the window (the value about which the waves make it oscillate):
  DNV-ST-N001's slack criterion is ``lower_fraction = 0.1`` on a hoist tension (the minimum dynamic
  tension at least 10 % of the static).

The statistic, per criterion: ``"mpm"``, the most probable maximum (the mode of a Gumbel distribution
fitted by moments to the per-realisation maxima, :class:`jaxmbd.statistics.Gumbel`), over a stated
``exposure`` (s): the Gumbel of the largest of k = exposure / window independent windows has its mode
at μ + β ln k; ``"mean"``; or ``"p<NN>"``, a percentile of the per-realisation maxima (``"p90"``).  For
a lower bound the same statistic is taken of the minima, mirrored (the most probable minimum).

The window: ``phase`` names a phase of a scenario (the criterion applies while that phase runs); None
applies it to the whole run.  A criterion's **margin** is relative: (bound − statistic) / |bound| for an
upper bound, (statistic − bound) / |bound| for a lower one, so that it holds where the margin is ≥ 0
and criteria of different units compare in one root search (:mod:`jaxmbd.operability.limiting`).

The margins are written with ``jax.numpy`` so that they differentiate with respect to the run's
parameters (the gradient of a limiting sea state, :func:`jaxmbd.operability.limiting.limiting_hs_gradient`).
"""

from __future__ import annotations

import dataclasses
import math
import re

import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from ..statistics import EULER_GAMMA

STATISTICS = ("mpm", "mean", "p<NN>")


@dataclasses.dataclass(frozen=True)
class Criterion:
    """One output held against one bound (see the module docstring).  ``name``: how tables and messages
    call it (default: the output and its bound)."""

    output: str
    upper: float | None = None
    lower: float | None = None
    lower_fraction: float | None = None
    statistic: str = "mpm"
    exposure: float | None = None
    phase: str | None = None
    name: str = ""

    def __post_init__(self):
        given = [k for k in ("upper", "lower", "lower_fraction") if getattr(self, k) is not None]
        if len(given) != 1:
            raise InputError(f"criterion on {self.output!r}: give exactly one of upper, lower, lower_fraction; got {given or 'none'}")
        bound = getattr(self, given[0])
        if not (isinstance(bound, (int, float)) and math.isfinite(bound)):
            raise InputError(f"criterion on {self.output!r}: {given[0]} must be a finite number, got {bound!r}")
        if self.upper is not None and self.upper == 0.0 or self.lower is not None and self.lower == 0.0:
            raise InputError(f"criterion on {self.output!r}: a bound of 0 has no relative margin; give a small "
                             "non-zero bound or a lower_fraction")
        if self.lower_fraction is not None and not 0.0 < self.lower_fraction < 1.0:
            raise InputError(f"criterion on {self.output!r}: lower_fraction must lie in (0, 1), got {self.lower_fraction}")
        _percentile(self.statistic, f"criterion on {self.output!r}")
        if self.exposure is not None and not (math.isfinite(self.exposure) and self.exposure > 0):
            raise InputError(f"criterion on {self.output!r}: exposure must be > 0 s, got {self.exposure}")
        if self.exposure is not None and self.statistic != "mpm":
            raise InputError(f"criterion on {self.output!r}: an exposure applies to the statistic 'mpm' only, "
                             f"got statistic {self.statistic!r}")
        if not self.name:
            if self.upper is not None:
                label = f"{self.output} <= {self.upper:g}"
            elif self.lower is not None:
                label = f"{self.output} >= {self.lower:g}"
            else:
                label = f"{self.output} >= {self.lower_fraction:g} x static"
            object.__setattr__(self, "name", label + (f" ({self.phase})" if self.phase else ""))

    @property
    def kind(self) -> str:
        return "upper" if self.upper is not None else "lower"


def _percentile(statistic: str, where: str) -> float | None:
    """The percentile of a ``"pNN"`` statistic (None for mpm and mean); anything else is one line."""
    if statistic in ("mpm", "mean"):
        return None
    m = re.fullmatch(r"p(\d{1,2}(?:\.\d+)?)", str(statistic))
    if not m or not 0.0 < float(m.group(1)) < 100.0:
        raise InputError(f"{where}: statistic must be 'mpm', 'mean' or 'p<NN>' (a percentile, e.g. 'p90'), got {statistic!r}")
    return float(m.group(1))


def statistic_of(extremes, statistic: str = "mpm", *, k: float = 1.0):
    """The statistic of per-realisation maxima ``extremes`` (..., n_realisations), in ``jax.numpy``.

    ``"mpm"``: the Gumbel mode μ + β ln k (moments fit: β = s √6 / π, μ = mean − γ β; one realisation:
    itself); ``k`` the exposure in windows.  ``"mean"``; ``"pNN"``: the percentile (linear interpolation)."""
    x = jnp.asarray(extremes)
    n = x.shape[-1]
    if statistic == "mean":
        return jnp.mean(x, axis=-1)
    if statistic == "mpm":
        if n < 2:
            return x[..., 0]
        beta = jnp.std(x, axis=-1, ddof=1) * math.sqrt(6.0) / math.pi
        return jnp.mean(x, axis=-1) - EULER_GAMMA * beta + beta * (math.log(k) if isinstance(k, (int, float)) else jnp.log(k))
    return jnp.percentile(x, _percentile(statistic, "statistic"), axis=-1)


def window_mask(result, phase: str | None):
    """(n_realisations, n_time) boolean: the saved samples inside ``phase`` (None: every real sample)."""
    time = np.asarray(result.time)
    n = result.n_realisations
    real = np.isfinite(time) if time.ndim == 2 else np.broadcast_to(np.isfinite(time), (n, time.size))
    if phase is None:
        return np.array(real)
    if result.phase is None or phase not in result.phase_names:
        have = list(result.phase_names) if result.phase is not None else "none (a run without phases)"
        raise InputError(f"criterion in phase {phase!r}: the run has no such phase; its phases: {have}")
    k = result.phase_names.index(phase)
    ph = np.asarray(result.phase).reshape(n, -1)
    mask = (ph == k) & real
    if not mask.any(axis=1).all():
        raise InputError(f"criterion in phase {phase!r}: some realisation never reached the phase")
    return mask


def reached_fraction(result, phase: str) -> float:
    """The fraction of the run's realisations that reached ``phase`` (an earlier phase that hit its time
    limit stops a realisation there)."""
    if result.phase is None or phase not in result.phase_names:
        have = list(result.phase_names) if result.phase is not None else "none (a run without phases)"
        raise InputError(f"criterion in phase {phase!r}: the run has no such phase; its phases: {have}")
    k = result.phase_names.index(phase)
    time = np.asarray(result.time)
    n = result.n_realisations
    real = np.isfinite(time) if time.ndim == 2 else np.broadcast_to(np.isfinite(time), (n, time.size))
    return float(np.mean(((np.asarray(result.phase).reshape(n, -1) == k) & real).any(axis=1)))


def window_seconds(result, mask) -> float:
    """Mean duration (s) of the window over the realisations."""
    time = np.asarray(result.time)
    time = time if time.ndim == 2 else np.broadcast_to(time, mask.shape)
    spans = [float(t[m].max() - t[m].min()) for t, m in zip(time, mask)]
    return float(np.mean(spans))


def extremes(criterion: Criterion, series, mask, between=None):
    """Per realisation, what the criterion's statistic is taken of: the maximum in the window (upper
    bound) or the minimum (lower bounds), and the output's mean over the window (its static value).
    ``between``: (largest, smallest, mean, states) per save interval, shaped as ``series``, where the run
    tracked the output at every step (:attr:`jaxmbd.results.Result.between`): the extremes and the mean are
    taken over every step."""
    x = jnp.asarray(series)
    hi, lo, mean, w = (x, x, x, 1.0) if between is None else tuple(jnp.asarray(a) for a in between)
    if criterion.upper is not None:
        return jnp.max(jnp.where(mask, hi, -jnp.inf), axis=-1), None
    trough = -jnp.max(jnp.where(mask, -lo, -jnp.inf), axis=-1)
    static = None
    if criterion.lower_fraction:
        static = jnp.sum(jnp.where(mask, mean * w, 0.0), axis=-1) / jnp.sum(jnp.where(mask, w, 0), axis=-1)
    return trough, static


def margin_of(criterion: Criterion, extreme, static, seconds: float):
    """The relative margin (≥ 0: it holds) from the per-realisation ``extremes``."""
    k = criterion.exposure / seconds if criterion.exposure is not None else 1.0
    if criterion.upper is not None:
        return (criterion.upper - statistic_of(extreme, criterion.statistic, k=k)) / abs(criterion.upper)
    low = -statistic_of(-extreme, criterion.statistic, k=k)  # the most probable minimum, mirrored
    if criterion.lower is not None:
        return (low - criterion.lower) / abs(criterion.lower)
    bound = criterion.lower_fraction * jnp.mean(static, axis=-1)
    return (low - bound) / jnp.abs(bound)


def margin(criterion: Criterion, series, mask, seconds: float):
    """The criterion's relative margin (≥ 0: it holds) from the output's samples ``series``
    (n_realisations, n_time) and the window ``mask``; ``seconds`` the window's mean duration."""
    return margin_of(criterion, *extremes(criterion, series, mask), seconds)


def output_series(result, output: str):
    """The samples of a scalar output as (n_realisations, n_time)."""
    if output not in result.outputs:
        scalar = sorted(k for k, v in result.outputs.items() if np.ndim(v) == (2 if result.batched else 1))
        raise InputError(f"criterion on {output!r}: no such output; scalar outputs: {', '.join(scalar)}")
    x = result.outputs[output]
    x = x if result.batched else x[None]
    if x.ndim != 2:
        raise InputError(f"criterion on {output!r}: the output has shape {tuple(x.shape[1:-1])} per sample; "
                         "criteria apply to scalar outputs")
    return x


def extremes_of(criteria, result) -> dict:
    """{criterion name: (per-realisation extremes, per-realisation static values or None, window seconds)}
    as numpy arrays: what :func:`margin_of` (and a bootstrap over the realisations) needs of a run."""
    kept = {}
    for c in criteria:
        mask = window_mask(result, c.phase)
        x = output_series(result, c.output)
        b = result.between.get(c.output)
        between = tuple(np.reshape(b[k], x.shape) for k in ("max", "min", "mean", "states")) if b is not None else None
        ext, static = extremes(c, x, mask, between)
        kept[c.name] = (np.asarray(ext), None if static is None else np.asarray(static), window_seconds(result, mask))
    return kept


def margins(criteria, result) -> dict:
    """{criterion name: relative margin} of a run's :class:`~jaxmbd.results.Result`."""
    kept = extremes_of(criteria, result)  # between the saves where the run tracked the output
    return {c.name: margin_of(c, *kept[c.name]) for c in criteria}
