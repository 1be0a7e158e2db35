"""Gradient checks against central finite differences; gradient cost and peak memory."""

from __future__ import annotations

import resource
import time
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np


def check_gradients(f: Callable, x, grad=None, *, rel_step: float = 1e-5, abs_step: float | None = None):
    """Compare ``grad`` (default: ``jax.grad(f)(x)``) with central differences, component by component.

    The step is ``rel_step · |x_i|`` (``abs_step`` where x_i = 0 or given): central differences have a
    truncation error ~ h² f''' / 6 and a round-off error ~ ε |f| / h; in float64 (ε ≈ 1e-16) with
    parameters scaled to O(1), h ≈ 1e-5 relative balances them at ~1e-10 relative, far below the
    1e-4 acceptance tolerance even when the simulation adds some noise of its own (≈ 1e-12 per step).
    Returns a list of dicts: index, analytic, numeric, relative error.
    """
    x = jnp.asarray(x, dtype=float)
    fj = jax.jit(f)
    g = np.asarray(jax.jit(jax.grad(f))(x) if grad is None else grad)
    rows = []
    for i in range(x.shape[0]):
        h = abs_step if (abs_step is not None and (x[i] == 0 or rel_step is None)) else rel_step * max(abs(float(x[i])), 1e-300)
        if float(x[i]) == 0 and abs_step is None:
            h = rel_step
        e = jnp.zeros_like(x).at[i].set(h)
        num = (float(fj(x + e)) - float(fj(x - e))) / (2 * h)
        rel = abs(g[i] - num) / max(abs(num), 1e-300)
        rows.append({"index": i, "analytic": float(g[i]), "numeric": num, "rel_error": rel, "step": h})
    return rows


def _block(x):
    return jax.tree_util.tree_map(lambda a: a.block_until_ready() if hasattr(a, "block_until_ready") else a, x)


def timeit(fn, *args, repeat: int = 3):
    """Best wall time of ``fn(*args)`` over ``repeat`` calls after one warm-up call (compilation)."""
    _block(fn(*args))
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        _block(fn(*args))
        best = min(best, time.perf_counter() - t)
    return best


def gradient_cost(f: Callable, x, *, repeat: int = 3, modes=("reverse", "forward")) -> dict:
    """Wall time of f(x), of its gradient by reverse mode (jax.value_and_grad) and forward mode
    (vmapped JVPs, one per parameter), each jitted and timed after compilation; and the ratios."""
    from .tuning import value_and_grad

    x = jnp.asarray(x, dtype=float)
    out = {"forward_s": timeit(jax.jit(f), x, repeat=repeat), "n_parameters": int(x.shape[0])}
    for m in modes:
        out[f"{m}_grad_s"] = timeit(jax.jit(value_and_grad(f, m)), x, repeat=repeat)
        out[f"{m}_ratio"] = out[f"{m}_grad_s"] / out["forward_s"]
    return out


def peak_memory(f: Callable, x, *, grad: bool = True, mode: str = "reverse") -> dict:
    """XLA's memory analysis of the compiled f (or its gradient): temporaries, arguments and outputs
    in bytes (``temp_size_in_bytes`` is the working set the computation needs beyond its inputs),
    and this process's peak resident set (ru_maxrss) after running it once."""
    from .tuning import value_and_grad

    x = jnp.asarray(x, dtype=float)
    fn = value_and_grad(f, mode) if grad else f
    compiled = jax.jit(fn).lower(x).compile()
    ma = compiled.memory_analysis()
    _block(compiled(x))
    out = {"maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    if ma is not None:
        for k in ("temp_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes", "generated_code_size_in_bytes"):
            out[k] = int(getattr(ma, k, 0))
    return out
