"""The limiting sea state: the largest Hs at which every criterion of a phase holds.

For one peak period and heading, g(Hs) = min over the phase's criteria of their relative margins
(:mod:`jaxmbd.operability.criteria`) is positive in calm water and falls as the sea grows; the limiting
Hs is its root.  Every evaluation runs the same realisations (the same seed: **common random numbers**),
so the wave components keep their phases and only their amplitudes scale with Hs; g is then a smooth
function of Hs rather than one whose Monte-Carlo noise changes from one Hs to the next, and a root
search converges in a few runs where a grid would need many.

The search (:func:`limiting_hs`): from ``hs_start``, up by ``factor`` while g ≥ 0 (down while g < 0; with
``secant``, from the second run on, to the secant root of the last two runs where it lies ahead, half a
tolerance past it) until g changes sign, or the range [``hs_min``, ``hs_max``] ends (then the result says so: ``status``
``"above"``, every criterion holds up to ``hs_max``; ``"below"``, one fails already at ``hs_min``);
then the Illinois variant of regula falsi on the bracket, each point at least half the tolerance inside it
(so that the bracket narrows where a point lands on the root), until it is narrower than ``tolerance`` (m)
(``status`` ``"root"``; ``"unconverged"`` when ``max_evaluations`` runs end first: the bracket is wider).
The limiting Hs is the last bracket's linear root; the governing criterion is the one with the least
margin there.  Evaluations are cached by Hs, so the phases of one operation, searched one after the
other on the same runs, share their evaluations.

The realisations' uncertainty (:func:`bootstrap_band`): the realisations of the run nearest the root
resampled with replacement; each resample's margin there, divided by the slope of g at the root (the last
bracket's secant), moves that run's Hs to the resample's root; the band is the resamples' central ``level`` interval.  It is the uncertainty of the
statistic from a finite number of realisations, not of the model.

The gradient (:func:`limiting_hs_gradient`): at the root g(Hs*, p) = 0, so
dHs*/dp = −(∂g/∂p) / (∂g/∂Hs) by the implicit-function theorem, with the governing criterion's margin
for g (smooth where one criterion governs; at a tie between two the derivative is one-sided).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .criteria import margin_of

MIN_BAND_REALISATIONS = 5
"""The fewest realisations a band is given for."""


@dataclasses.dataclass(frozen=True)
class Search:
    """Settings of the root search in Hs (m): start, range, growth factor of the bracketing ladder, the
    bracket's final width and the most evaluations (runs) it may take.  ``secant``: from the ladder's second
    run on, step to the secant root of its last two runs, half a tolerance past it, where that root lies
    ahead (up the ladder while the margin holds, down while it fails); with common random numbers a linear
    response's margins are linear in Hs, so the step lands by the root and the bracket closes in a run more
    (off: the ladder's rungs alone)."""

    hs_start: float = 1.0
    hs_min: float = 0.1
    hs_max: float = 10.0
    factor: float = 1.5
    tolerance: float = 0.02
    max_evaluations: int = 24
    secant: bool = False

    def __post_init__(self):
        if not 0.0 < self.hs_min <= self.hs_start <= self.hs_max:
            raise InputError(f"search: expected 0 < hs_min <= hs_start <= hs_max, got {self.hs_min}, {self.hs_start}, {self.hs_max}")
        if not self.factor > 1.0:
            raise InputError(f"search: factor must be > 1, got {self.factor}")
        if not self.tolerance > 0.0:
            raise InputError(f"search: tolerance must be > 0 m, got {self.tolerance}")


def below_breaking(search: Search, tp: float) -> Search:
    """``search`` with its ceiling lowered to the Hs at which a sea of peak period ``tp`` reaches DNV-RP-C205's
    limiting steepness (:func:`jaxmbd.hydro.spectra.breaking_hs`), its start and floor within it: a steeper sea
    breaks, and no run of linear waves is asked for there."""
    from ..hydro.spectra import breaking_hs

    top = min(search.hs_max, float(breaking_hs(tp)))
    low = min(search.hs_min, top)
    return dataclasses.replace(search, hs_max=top, hs_start=min(max(search.hs_start, low), top), hs_min=low)


@dataclasses.dataclass(frozen=True)
class LimitingHs:
    """A root search's answer: ``hs`` (m; ``hs_max`` when ``status == "above"``, ``hs_min`` when
    ``"below"``), ``status`` (``"root"``, ``"above"``, ``"below"``, or ``"unconverged"``: a root in the
    ``bracket``, the runs allowed ended before it was ``tolerance`` wide), the ``governing`` criterion and
    every criterion's ``margins`` at the nearest evaluation, the ``slope`` dg/dHs of the last bracket
    (1/m), the ``bracket`` (m) and the evaluations ``(hs, g)`` in the order they ran."""

    hs: float
    status: str
    governing: str
    margins: dict
    slope: float
    bracket: tuple
    history: tuple


def site_limit(hs, status):
    """The limit a site's weather windows take of a search's answer (m): its Hs, or 0, a no-go, where the phase
    fails already at the search's floor (``status`` ``"below"``; its Hs there is the floor, not a limit)."""
    return np.where(np.asarray(status) == "below", 0.0, hs)


class Evaluations:
    """``margins_at(hs) -> {criterion: margin}`` cached by Hs, so searches on one sea state share runs."""

    def __init__(self, margins_at: Callable[[float], dict]):
        self._f = margins_at
        self.cache: dict = {}

    def __call__(self, hs: float) -> dict:
        key = round(float(hs), 12)
        if key not in self.cache:
            found = self._f(key)
            self.cache[key] = {k: float(v) for k, v in found.items()}
        return self.cache[key]


def _g(m: dict, names) -> float:
    return min(m[n] for n in names)


def _bracket(f, names, s: Search, history):
    """(a, ga, b, gb) with ga >= 0 > gb, or a status string when the range ends first; ``f(hs)`` a
    generator step (``yield from``) that gives the margins at ``hs``."""
    hs = s.hs_start
    g = _g((yield from f(hs)), names)
    history.append((hs, g))
    step = s.factor if g >= 0 else 1.0 / s.factor
    before = None  # the ladder's run before this one: (hs, g)
    while len(history) < s.max_evaluations:
        nxt = min(hs * step, s.hs_max) if step > 1 else max(hs * step, s.hs_min)
        if s.secant and before is not None and g != before[1]:
            root = hs - g * (hs - before[0]) / (g - before[1])
            up = step > 1
            aim = root + 0.5 * s.tolerance if up else root - 0.5 * s.tolerance
            if (aim > hs) if up else (aim < hs):  # ahead: the root's side of the ladder, the range's end at most
                nxt = min(aim, s.hs_max) if up else max(aim, s.hs_min)
        if nxt == hs:
            return "above" if g >= 0 else "below"
        gn = _g((yield from f(nxt)), names)
        history.append((nxt, gn))
        if (g >= 0) != (gn >= 0):
            return (hs, g, nxt, gn) if g >= 0 else (nxt, gn, hs, g)
        before, hs, g = (hs, g), nxt, gn
    raise InputError(f"limiting Hs: no sign change of the margin in {s.max_evaluations} runs from {s.hs_start} m")


def _ask(hs):
    """One evaluation inside a search: yields the Hs (m), receives its margins."""
    return (yield float(hs))


def search_steps(names, search: Search):
    """The root search as a generator: it yields each Hs (m) it needs and is sent that Hs's margins
    ``{criterion: margin}``; it returns the :class:`LimitingHs`.  :func:`limiting_hs` drives one;
    :func:`jaxmbd.operability.job.limiting_table` drives every cell's in lock-step, each round of
    evaluations one batched program."""
    s, f = search, _ask
    history: list = []
    found = yield from _bracket(f, names, s, history)
    if isinstance(found, str):
        hs = s.hs_max if found == "above" else s.hs_min
        m = yield from f(hs)
        return LimitingHs(hs, found, min(names, key=lambda n: m[n]), {n: m[n] for n in names}, math.nan,
                          (hs, hs), tuple(history))
    a, ga, b, gb = found
    side = 0
    while abs(b - a) > s.tolerance and len(history) < s.max_evaluations:
        c = b - gb * (b - a) / (gb - ga)
        # at least half the tolerance from either end: a point landing on the root from one side would otherwise
        # move that end by round-off while the other stays, and the bracket would never narrow (Brent's least step)
        c = min(max(c, a + 0.5 * s.tolerance), b - 0.5 * s.tolerance) if a < b else max(min(c, a - 0.5 * s.tolerance), b + 0.5 * s.tolerance)
        gc = _g((yield from f(c)), names)
        history.append((c, gc))
        if gc >= 0:
            a, ga = c, gc
            if side == +1:
                gb *= 0.5  # Illinois: the end that stays twice in a row counts half
            side = +1
        else:
            b, gb = c, gc
            if side == -1:
                ga *= 0.5
            side = -1
    ga_true, gb_true = _g((yield from f(a)), names), _g((yield from f(b)), names)
    hs = a - ga_true * (b - a) / (gb_true - ga_true)
    near = a if abs(ga_true) <= abs(gb_true) else b
    m = yield from f(near)
    status = "root" if abs(b - a) <= s.tolerance else "unconverged"
    return LimitingHs(float(hs), status, min(names, key=lambda n: m[n]), {n: m[n] for n in names},
                      float((gb_true - ga_true) / (b - a)), (float(a), float(b)), tuple(history))


def drive(steps, margins_at):
    """Run one search generator (:func:`search_steps`) to its answer, ``margins_at(hs)`` giving each
    evaluation."""
    try:
        hs = next(steps)
        while True:
            hs = steps.send(margins_at(hs))
    except StopIteration as stop:
        return stop.value


def limiting_hs(margins_at, names=None, search: Search | None = None) -> LimitingHs:
    """The largest Hs (m) at which every criterion ``names`` (None: every key ``margins_at`` returns)
    holds; ``margins_at(hs) -> {criterion name: relative margin}`` (or an :class:`Evaluations`)."""
    s = search or Search()
    f = margins_at if isinstance(margins_at, Evaluations) else Evaluations(margins_at)
    names = tuple(names) if names is not None else tuple(f(s.hs_start))
    return drive(search_steps(names, s), f)


def bootstrap_band(criteria, kept: dict, found: LimitingHs, *, at: float, level: float = 0.9, n: int = 400, seed: int = 0):
    """(low, high) Hs (m): the central ``level`` interval of the limiting Hs over ``n`` resamples of the
    realisations of the run nearest the root, at Hs ``at`` (m), each resample's root ``at`` − margin / slope
    (the slope of g at the root).  ``kept``: that run's :func:`jaxmbd.operability.criteria.extremes_of`.  NaN below :data:`MIN_BAND_REALISATIONS`
    realisations (resamples of fewer repeat a few combinations and say nothing) or without a root."""
    nr = len(next(iter(kept.values()))[0]) if kept else 0
    if nr < MIN_BAND_REALISATIONS or found.status != "root" or not found.slope < 0:
        return (math.nan, math.nan)
    picks = np.random.default_rng(seed).integers(0, nr, size=(n, nr))
    gs = np.full(n, np.inf)
    for c in criteria:
        extreme, static, seconds = kept[c.name]
        gs = np.minimum(gs, np.asarray(margin_of(c, extreme[picks], None if static is None else static[picks], seconds)))
    hs = at - gs / found.slope
    lo, hi = np.quantile(hs, [(1 - level) / 2, (1 + level) / 2])
    return (float(lo), float(hi))


def limiting_hs_gradient(margin_fn, hs: float, params):
    """dHs*/dp at a root: ``margin_fn(hs, params)`` the governing criterion's margin (differentiable in
    both), ``hs`` the limiting Hs, ``params`` a pytree; returns a pytree like ``params``."""
    g_hs, g_p = jax.grad(margin_fn, argnums=(0, 1))(jnp.asarray(hs, float), params)
    if not g_hs < 0:
        raise InputError(f"limiting Hs gradient: the margin does not fall with Hs at the root (dg/dHs = {float(g_hs):g})")
    return jax.tree_util.tree_map(lambda d: -d / g_hs, g_p)
