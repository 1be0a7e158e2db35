"""Objectives: pure, composable functions of a run's saved outputs.

An *objective* here is a callable ``f(outputs) -> scalar`` where ``outputs``
is the dict of saved time series of one realisation (``"hoist1/tension"``:
(n_t,), ``"joint/king_base/wrench"``: (n_t, 6), ...), as returned by
:func:`optim.rollout.rollout` (or ``Result.outputs`` of one realisation).
Factories below build them from a *signal* (a selector: outputs -> (n_t,))
and a *measure* (a reduction over time: smooth maximum, RMS, ...); they
compose by weighted sums, and realisations combine by :func:`aggregate`
(mean or CVaR).

Smooth maxima.  ``smooth_max(x, sharpness)`` is the *mean* log-sum-exp

    M_s(x) = (1/s) log( (1/n) Σ_i exp(s x_i) ),

which lies in [max(x) − log(n)/s, max(x)] (and above the mean of x): with
x normalised by a reference value (``scale``) and s = 50, M is within
log(n)/50 (e.g. 0.14 for n = 1,200 saves; less in practice, since the peak of
a smooth signal spans many saves) of the true normalised maximum, and its
gradient spreads over the samples within ~1/s of the peak instead of jumping
from one sample to another.  ``p_norm(x, p)`` = (mean |x|^p)^(1/p) is the
alternative (p = 8 ... 16), scale-free but looser.
"""

from __future__ import annotations

from typing import Callable, Sequence

import jax
import jax.numpy as jnp

from ..errors import InputError, UnknownNameError

Objective = Callable[[dict], jax.Array]

WRENCH_COMPONENTS = {"fx": 0, "fy": 1, "fz": 2, "nx": 3, "ny": 4, "nz": 5}


# ---------------------------------------------------------------------------- reductions over time


def smooth_max(x, sharpness: float = 50.0, axis: int = -1):
    """Mean log-sum-exp of ``x`` along ``axis``: a smooth maximum within log(n)/sharpness of max(x),
    from below.  ``sharpness`` is in 1/units of x: normalise x first (``scale``) to make it dimensionless."""
    x = jnp.asarray(x)
    n = x.shape[axis]
    return (jax.nn.logsumexp(sharpness * x, axis=axis) - jnp.log(n)) / sharpness


def smooth_max_abs(x, sharpness: float = 50.0, axis: int = -1):
    """Smooth maximum of |x| (log-sum-exp over x and −x together)."""
    x = jnp.asarray(x)
    return smooth_max(jnp.concatenate([x, -x], axis=axis), sharpness, axis)


def p_norm(x, p: float = 8.0, axis: int = -1):
    """(mean |x|^p)^(1/p): a smooth maximum of |x| from below (≥ RMS); p → ∞ gives max |x|."""
    x = jnp.abs(jnp.asarray(x))
    m = jnp.max(jax.lax.stop_gradient(x), axis=axis, keepdims=True) + 1e-300  # scale for range safety
    return jnp.squeeze(m, axis) * jnp.mean((x / m) ** p, axis=axis) ** (1.0 / p)


def rms(x, axis: int = -1):
    """Root mean square over ``axis`` (the mean is included: use :func:`std` for fluctuations)."""
    x = jnp.asarray(x)
    return jnp.sqrt(jnp.mean(x * x, axis=axis) + 1e-300)


def std(x, axis: int = -1):
    """Standard deviation over ``axis``."""
    x = jnp.asarray(x)
    return rms(x - jnp.mean(x, axis=axis, keepdims=True), axis)


def soft_hinge(x, sharpness: float = 20.0):
    """Smooth max(x, 0) = softplus(s x)/s (error ≤ log(2)/s at 0)."""
    return jax.nn.softplus(sharpness * x) / sharpness


# ---------------------------------------------------------------------------- signals (selectors)


def signal(name: str, component=None, *, start: int = 0) -> Callable[[dict], jax.Array]:
    """Select one output's time series; ``component`` picks a column of a vector output (an index or
    a wrench component name ``fx``..``nz``; ``"moment"``/``"force"`` give the norm of the
    horizontal moment (nx, ny) / horizontal force (fx, fy); ``"moment3"``/``"force3"`` the full
    norms).  ``start`` drops the first saves (a start-up transient)."""

    def sel(outputs):
        if name not in outputs:
            raise UnknownNameError(f"objective: no output {name!r}; available: {sorted(outputs)}")
        x = outputs[name]
        if component is not None:
            if component in ("moment", "force", "moment3", "force3"):
                cols = {"moment": (3, 4), "force": (0, 1), "moment3": (3, 4, 5), "force3": (0, 1, 2)}[component]
                x = jnp.sqrt(sum(x[..., c] ** 2 for c in cols) + 1e-300)
            else:
                x = x[..., WRENCH_COMPONENTS.get(component, component)]
        return x

    def sel_from(outputs):
        return sel(outputs)[start:]

    sel_from.raw = sel
    sel_from.label = name + (f"[{component}]" if component is not None else "")
    return sel_from


def wrench(joint: str, component="moment", *, start: int = 0):
    """Reaction wrench component at a reported joint (``joint/<joint>/wrench``)."""
    return signal(f"joint/{joint}/wrench", component, start=start)


def tension(rope: str, *, start: int = 0):
    return signal(f"{rope}/tension", start=start)


def sway(rope: str, *, start: int = 0):
    return signal(f"{rope}/sway", start=start)


def total(*signals):
    """Sum of several signals (e.g. the hook load of two hoist ropes)."""

    def sel(outputs):
        return sum(s(outputs) for s in signals)

    sel.label = "+".join(getattr(s, "label", "?") for s in signals)
    return sel


# ---------------------------------------------------------------------------- measures -> objectives


def measure(sig, kind: str = "smooth_max", *, scale=1.0, sharpness: float = 50.0, p: float = 8.0) -> Objective:
    """Objective ``outputs -> scalar``: ``kind`` of ``sig(outputs) / scale`` over time.

    kinds: ``smooth_max`` (log-sum-exp), ``smooth_max_abs``, ``p_norm``, ``rms``, ``std``, ``mean``,
    ``max`` (exact; not smooth), ``daf`` (smooth max divided by the first saved value: the dynamic
    amplification factor when the run starts at rest).
    """

    def f(outputs):
        x = sig(outputs) / scale
        if kind == "smooth_max":
            return smooth_max(x, sharpness)
        if kind == "smooth_max_abs":
            return smooth_max_abs(x, sharpness)
        if kind == "p_norm":
            return p_norm(x, p)
        if kind == "rms":
            return rms(x)
        if kind == "std":
            return std(x)
        if kind == "mean":
            return jnp.mean(x)
        if kind == "max":
            return jnp.max(x)
        if kind == "daf":
            x0 = sig.raw(outputs)[0] if hasattr(sig, "raw") else sig(outputs)[0]
            return smooth_max(sig(outputs) / x0, sharpness)
        raise InputError(f"objective measure {kind!r}: expected smooth_max, smooth_max_abs, p_norm, rms, std, mean, max or daf")

    f.label = f"{kind}({getattr(sig, 'label', '?')})"
    return f


def upper_limit_penalty(sig, limit, *, sharpness: float = 50.0, hinge: float = 20.0) -> Objective:
    """Constraint ``max_t sig ≤ limit`` as a smooth penalty: soft_hinge(M/limit − 1)², M the smooth
    maximum of sig/limit (so the penalty is dimensionless, zero well inside the limit and quadratic
    outside).  E.g. tension below the crane's safe working load, sway below a limit."""

    def f(outputs):
        m = smooth_max(sig(outputs) / limit, sharpness)
        return soft_hinge(m - 1.0, hinge) ** 2

    f.label = f"penalty({getattr(sig, 'label', '?')} <= {limit:g})"
    return f


def weighted_sum(terms: Sequence[tuple[float, Objective]]) -> Objective:
    """Σ w_i f_i(outputs)."""
    terms = tuple(terms)

    def f(outputs):
        return sum(w * g(outputs) for w, g in terms)

    f.label = " + ".join(f"{w:g}*{getattr(g, 'label', '?')}" for w, g in terms)
    f.terms = terms
    return f


def term_values(objective: Objective, outputs) -> dict:
    """Each term's value of a :func:`weighted_sum` (for progress output), by label."""
    terms = getattr(objective, "terms", ((1.0, objective),))
    return {getattr(g, "label", f"term{i}"): g(outputs) for i, (_, g) in enumerate(terms)}


# ---------------------------------------------------------------------------- over realisations


def cvar(values, alpha: float = 0.8):
    """Conditional value at risk: the mean of the worst (largest) ``1 − alpha`` fraction of ``values``
    (at least one); alpha = 0 is the mean, alpha → 1 the maximum.  Differentiable almost everywhere
    (the gradient is spread over the tail members); the fraction of the boundary member is weighted
    so that the measure is continuous in alpha."""
    v = jnp.sort(jnp.asarray(values))[::-1]
    n = v.shape[0]
    m = max((1.0 - alpha) * n, 1.0)
    k = int(jnp.floor(m))
    w = jnp.where(jnp.arange(n) < k, 1.0, 0.0)
    if k < n:
        w = w.at[k].set(m - k)
    return jnp.sum(w * v) / m


def aggregate(values, how="mean"):
    """Combine per-realisation objective values: ``"mean"``, ``"max"``, ``("cvar", alpha)`` or ``"cvar0.8"``."""
    values = jnp.asarray(values)
    if how == "mean":
        return jnp.mean(values)
    if how == "max":
        return jnp.max(values)
    if isinstance(how, (tuple, list)) and how[0] == "cvar":
        return cvar(values, float(how[1]))
    if isinstance(how, str) and how.startswith("cvar"):
        return cvar(values, float(how[4:] or 0.8))
    raise InputError(f"aggregate {how!r}: expected 'mean', 'max', ('cvar', alpha) or 'cvar<alpha>'")


# ---------------------------------------------------------------------------- from a table


def from_spec(terms: Sequence[dict], reference: dict | None = None) -> Objective:
    """Objective from a list of term tables (the ``[[tune.objective]]`` entries of a system file)::

        {output = "joint/king_base/wrench", component = "moment", measure = "smooth_max",
         sharpness = 50, scale = 1e6, weight = 1.0, start = 100}
        {output = "hoist/sway", measure = "rms", weight = 1.0, scale = 0.01}
        {output = "hoist/tension", upper = 2.5e5, weight = 10.0}          # a constraint penalty

    ``scale`` may be a number or ``"initial"`` (the term's value at the initial parameters, taken
    from ``reference``: a dict label -> value).  ``start`` (saves) drops a start-up transient (a
    system file's ``[tune]`` table may give ``start_time`` in seconds: :func:`optim.from_file.read_tune_table`
    turns it into saves, and finds for ``scale = "initial"`` the scale with which the term starts at 1).
    """
    out = []
    for i, t in enumerate(terms):
        t = dict(t)
        sig = signal(t.pop("output"), t.pop("component", None), start=int(t.pop("start", 0)))
        w = float(t.pop("weight", 1.0))
        if "upper" in t:
            f = upper_limit_penalty(sig, float(t.pop("upper")), sharpness=float(t.pop("sharpness", 50.0)))
        else:
            kind = t.pop("measure", "smooth_max")
            scale = t.pop("scale", 1.0)
            if scale == "initial":
                key = f"{kind}({sig.label})"
                scale = float(reference[key]) if reference and key in reference else 1.0
            f = measure(sig, kind, scale=float(scale), sharpness=float(t.pop("sharpness", 50.0)), p=float(t.pop("p", 8.0)))
        if t:
            raise InputError(f"objective term {i}: unknown keys {sorted(t)}")
        out.append((w, f))
    return weighted_sum(out)
