"""Tuning loops with optax: Adam with a schedule, L-BFGS with a line search; history and results file."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._xla import forward_jit
from ..dynamics.dense import dense_value
from ..errors import InputError


@dataclasses.dataclass
class TuneResult:
    """Outcome of :func:`tune`: the best unconstrained vector ``u`` and its parameter values, and the
    history (one row per iteration: loss, gradient norm, parameter values, seconds)."""

    names: list
    u: np.ndarray
    values: dict
    initial_values: dict
    loss: float
    initial_loss: float
    history: list
    method: str
    gradient_mode: str
    attrs: dict = dataclasses.field(default_factory=dict)

    def to_dict(self):
        return {
            "method": self.method,
            "gradient_mode": self.gradient_mode,
            "parameters": self.names,
            "initial_values": self.initial_values,
            "values": self.values,
            "u": [float(x) for x in self.u],
            "initial_loss": self.initial_loss,
            "loss": self.loss,
            "history": self.history,
            "attrs": self.attrs,
        }

    def to_json(self, path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1, default=_jsonable))
        return path


def _jsonable(x):
    if isinstance(x, (np.ndarray, jax.Array)):
        return np.asarray(x).tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


# "auto" takes forward mode up to this many parameters.  On the crane vessel's tuning objective
# (600 s, RK4) one tangent costs about 0.65 forward runs and reverse mode about 4.4 runs whatever the
# count on the AMD EPYC, 0.7 and 5.1 on the Intel Xeon (studies/tuning/bench.py, one runtime thread), so
# forward mode is the cheaper one up to about five parameters.
FORWARD_MODE_MAX_PARAMETERS = 5


def gradient_mode_for(mode: str, n_parameters: int) -> str:
    """The mode ``mode`` stands for with ``n_parameters`` parameters: ``"auto"`` is ``"forward"`` up to
    :data:`FORWARD_MODE_MAX_PARAMETERS` and ``"reverse"`` beyond."""
    if mode == "auto":
        return "forward" if n_parameters <= FORWARD_MODE_MAX_PARAMETERS else "reverse"
    if mode in ("reverse", "forward"):
        return mode
    raise InputError(f"gradient mode {mode!r}: expected 'auto', 'reverse' or 'forward'")


def value_and_grad(loss: Callable, mode: str = "reverse") -> Callable:
    """``u -> (loss, ∇loss)`` by reverse mode (``jax.value_and_grad``; checkpointed fixed-step solve:
    memory as ``Integrator.checkpoint`` says), forward mode (one JVP per parameter, vmapped: cheaper when
    the parameters are few; it keeps no state per stage, its memory grows with the saved trajectory as the
    forward run's does) or ``"auto"`` (chosen by the
    length of u, :func:`gradient_mode_for`)."""
    gradient_mode_for(mode, 0)  # a bad name fails here, not at the first call
    if mode == "reverse":
        return jax.value_and_grad(loss)

    def forward(u):
        basis = jnp.eye(u.shape[0], dtype=u.dtype)
        with dense_value():  # the dynamics' rule solves its value with the factor its tangents need
            vals, tangents = jax.vmap(lambda e: jax.jvp(loss, (u,), (e,)))(basis)
        return vals[0], tangents

    if mode == "forward":
        return forward

    def auto(u):
        return forward(u) if gradient_mode_for("auto", u.shape[0]) == "forward" else jax.value_and_grad(loss)(u)

    return auto


def gradient_jit(fn: Callable, mode: str) -> Callable:
    """``jax.jit(fn)`` for a gradient of ``mode`` ("forward" or "reverse"): forward mode with
    :data:`jaxmbd.FORWARD_JIT_OPTIONS` (XLA's memory-optimised schedule) where called at the top level,
    reverse mode with XLA's default.  The crane vessel's forward-mode gradient over 600 s, one thread,
    three processes: 0.689-0.695 s against 0.729-0.751 s with the default; reverse mode 3-6 % slower with
    the option (benchmarks/NOTES.md, "One thread per process")."""
    return forward_jit(fn, jit=jax.jit) if mode == "forward" else jax.jit(fn)


def schedule(learning_rate: float, steps: int, kind: str = "cosine", warmup: int = 0):
    """Learning-rate schedule: ``"cosine"`` (warm-up then cosine decay to 5 %), ``"exponential"``
    (halving over the run) or ``"constant"``."""
    if kind == "constant":
        return optax.constant_schedule(learning_rate)
    if kind == "cosine":
        return optax.warmup_cosine_decay_schedule(0.0 if warmup else learning_rate, learning_rate, warmup,
                                                  max(steps, warmup + 1), end_value=0.05 * learning_rate)
    if kind == "exponential":
        return optax.exponential_decay(learning_rate, max(steps, 1), 0.5)
    raise InputError(f"schedule {kind!r}: expected cosine, exponential or constant")


def tune(
    loss: Callable,
    u0,
    *,
    parameters=None,
    method: str = "adam",
    steps: int = 50,
    learning_rate: float = 0.1,
    schedule_kind: str = "cosine",
    gradient_mode: str = "auto",
    progress: Callable | None = print,
    out: str | Path | None = None,
    tol: float = 0.0,
    attrs: dict | None = None,
) -> TuneResult:
    """Minimise ``loss(u)`` over the unconstrained vector u from ``u0``.

    ``method``: ``"adam"`` (optax.adam with the learning-rate ``schedule_kind``) or ``"lbfgs"``
    (optax.lbfgs with its zoom line search; the line search evaluates the loss and its gradient
    by reverse mode).  ``gradient_mode``: ``"auto"`` (forward mode for up to
    :data:`FORWARD_MODE_MAX_PARAMETERS` parameters, reverse mode beyond), ``"forward"`` or ``"reverse"``;
    the result records the mode used.  ``parameters`` (a :class:`~optim.params.ParameterSet`) names the values in
    the history and projects u for ``clip`` bounds.  ``progress(line)`` gets one line per iteration;
    ``out`` writes the results JSON after every iteration (so an interrupted run leaves its history).
    Returns the best iterate seen (lowest loss).
    """
    u = jnp.asarray(u0, dtype=float)
    gradient_mode = gradient_mode_for(gradient_mode, u.shape[0])
    names = parameters.names if parameters is not None else [f"u{i}" for i in range(u.shape[0])]
    to_values = (lambda u: {k: float(v) for k, v in parameters.values(u).items()}) if parameters is not None else \
        (lambda u: {f"u{i}": float(x) for i, x in enumerate(u)})
    project = parameters.project if parameters is not None else (lambda u: u)

    if method == "adam":
        opt = optax.adam(schedule(learning_rate, steps, schedule_kind))
        vg = gradient_jit(value_and_grad(loss, gradient_mode), gradient_mode)

        @jax.jit
        def update(u, state, g):
            upd, state = opt.update(g, state, u)
            return project(optax.apply_updates(u, upd)), state

    elif method == "lbfgs":
        opt = optax.lbfgs()
        # the first value and gradient: forward or reverse as asked; later ones come from the line search
        vg = gradient_jit(value_and_grad(loss, gradient_mode), gradient_mode)

        @jax.jit
        def update(u, state, g, value):
            upd, state = opt.update(g, state, u, value=value, grad=g, value_fn=loss)
            return project(optax.apply_updates(u, upd)), state

    else:
        raise InputError(f"method {method!r}: expected 'adam' or 'lbfgs'")

    state = opt.init(u)
    history = []
    best = (np.inf, np.asarray(u))
    t_start = time.perf_counter()
    initial_loss = None
    for it in range(steps + 1):
        if method == "lbfgs" and it > 0:
            value = optax.tree_utils.tree_get(state, "value")
            g = optax.tree_utils.tree_get(state, "grad")
        else:
            value, g = vg(u)
        value = float(value)
        gnorm = float(jnp.linalg.norm(g))
        if initial_loss is None:
            initial_loss = value
        if np.isfinite(value) and value < best[0]:
            best = (value, np.asarray(u))
        row = {"iteration": it, "loss": value, "grad_norm": gnorm, "values": to_values(u),
               "u": [float(x) for x in u], "seconds": time.perf_counter() - t_start}
        history.append(row)
        if progress is not None:
            vals = "  ".join(f"{k}={v:.5g}" for k, v in row["values"].items())
            progress(f"[tune] {it:4d}/{steps}  loss {value:.6g}  |g| {gnorm:.3g}  {vals}  ({row['seconds']:.1f} s)")
        if it == steps or not np.isfinite(value) or (tol and gnorm < tol):
            break
        if method == "adam":
            u, state = update(u, state, g)
        else:
            u, state = update(u, state, g, jnp.asarray(value))
        if out is not None:
            _result(names, best, to_values, initial_loss, history, method, gradient_mode, attrs, parameters).to_json(out)
    res = _result(names, best, to_values, initial_loss, history, method, gradient_mode, attrs, parameters)
    if out is not None:
        res.to_json(out)
    return res


def _result(names, best, to_values, initial_loss, history, method, mode, attrs, parameters):
    init = parameters.initial_values() if parameters is not None else to_values(jnp.zeros(len(names)))
    return TuneResult(names=names, u=np.asarray(best[1]), values=to_values(jnp.asarray(best[1])),
                      initial_values=init, loss=float(best[0]), initial_loss=float(initial_loss),
                      history=list(history), method=method, gradient_mode=mode, attrs=dict(attrs or {}))

