"""Timing helpers shared by the benchmark suite.

Every figure is a median over several repeats after a warm-up; JAX results are
waited for with ``block_until_ready`` inside the timed region.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import jax


@dataclass
class Timing:
    median: float  # seconds per call
    min: float
    repeats: int
    number: int  # calls per repeat

    def per(self, n: int) -> float:
        """Seconds per evaluation when one call performs n evaluations."""
        return self.median / n


def _block(x):
    return jax.block_until_ready(x)


def time_call(fn, *args, repeats: int = 7, number: int | None = None, target: float = 0.05,
              warmup: int = 2, block: bool = True) -> Timing:
    """Median seconds per ``fn(*args)``.

    ``number`` calls are timed together (chosen so that one repeat lasts about
    ``target`` seconds when not given); ``repeats`` such groups give the median.
    """
    call = (lambda: _block(fn(*args))) if block else (lambda: fn(*args))
    for _ in range(warmup):
        call()
    if number is None:
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                call()
            dt = time.perf_counter() - t0
            if dt >= target / 4 or number >= 1 << 20:
                number = max(1, int(number * target / max(dt, 1e-9)))
                break
            number *= 4
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - t0) / number)
    return Timing(statistics.median(samples), min(samples), repeats, number)


def time_loop(body, n_items: int, *, repeats: int = 7, warmup: int = 1) -> Timing:
    """Median seconds per item of ``body()``, which loops over ``n_items`` items itself."""
    for _ in range(warmup):
        body()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        body()
        samples.append((time.perf_counter() - t0) / n_items)
    return Timing(statistics.median(samples), min(samples), repeats, n_items)


@dataclass
class CompileTimes:
    trace: float
    lower: float
    compile: float

    @property
    def total(self) -> float:
        return self.trace + self.lower + self.compile


def compile_times(f, *args, **jit_kwargs):
    """Trace, lower and compile ``jax.jit(f)`` on ``args`` with the AOT API, timing each stage.

    Returns (CompileTimes, compiled).  jit caches nothing across calls here:
    each call builds a fresh ``jax.jit`` wrapper of a fresh function object.
    """
    fresh = lambda *a: f(*a)  # noqa: E731  (a new object: no tracing cache hit)
    jf = jax.jit(fresh, **jit_kwargs)
    t0 = time.perf_counter()
    traced = jf.trace(*args)
    t1 = time.perf_counter()
    lowered = traced.lower()
    t2 = time.perf_counter()
    compiled = lowered.compile()
    t3 = time.perf_counter()
    return CompileTimes(t1 - t0, t2 - t1, t3 - t2), compiled


def fmt_time(s: float | None) -> str:
    """Seconds as a short human string (ns, µs, ms, s)."""
    if s is None or s != s:
        return "–"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1.0:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_us(s: float | None) -> str:
    if s is None or s != s:
        return "–"
    us = s * 1e6
    return f"{us:.3g}" if us < 100 else f"{us:.0f}"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or a != a or b != b or b == 0:
        return "–"
    return f"{a / b:.2f}"


def interleaved(calls, rounds=7, warmup=True):
    """Seconds per evaluation of each ``name: (fn, args, n)``, the minimum over ``rounds`` rounds that
    call each in turn: ratios between them then compare neighbouring runs (this machine's speed drifts
    by up to 1.7x within minutes, more than the overheads measured)."""
    best = {name: float("inf") for name in calls}
    for fn, args, _ in calls.values() if warmup else ():
        jax.block_until_ready(fn(*args))
    for _ in range(rounds):
        for name, (fn, args, _) in calls.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*args))
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: best[name] / n for name, (_, _, n) in calls.items()}


def spawn_child(module: str, case: str) -> dict:
    """Run ``python -m <module> --child <case>`` in a fresh process and read its ``RESULT {json}`` line
    (one process per case and round: the figures that are bimodal between processes show it)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", module, "--child", case], capture_output=True, text=True, check=True).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])


def processes_or_child(argv, case, *, quick: int, full: int, options=()):
    """The multi-process benchmarks' command line: ``--quick``, ``--processes N``, ``--child CASE`` and the
    flags ``options`` names.  With ``--child`` it runs ``case(CASE)`` here, prints its ``RESULT {json}`` line
    (what :func:`spawn_child` reads) and returns None; else ``(args, processes)``: N, or ``quick`` / ``full``."""
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument("--child", metavar="CASE")
    for flag in options:
        ap.add_argument(flag, action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(case(args.child)))
        return None
    return args, args.processes or (quick if args.quick else full)


def spread(xs, fmt="{:.3g}") -> str:
    """Median (min-max) of figures from several processes."""
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def rhs_seconds(system, y, inputs, n: int = 200, t0: float = 0.0, n_long: int = 1000, h: float = 0.01,
                options=None) -> float:
    """One right-hand side's time: evaluations in one jitted loop, each on the state the previous one
    moved (so none is hoisted out of the loop), the loop run for ``n`` and for ``n_long`` evaluations
    (one compiled program, its trip count an argument), seven calls of each in turn; the difference of
    the two median calls over ``n_long - n``.  So the call's own fixed cost cancels: on CPU a call of a
    compiled program is handed to XLA's thread and back, about 0.1-0.2 ms on the 2-core Intel Xeon of
    BENCHMARKS.md (0.02 ms with ``jax_cpu_enable_async_dispatch`` off), which divided over 200
    evaluations would add 0.5-1 µs to each (benchmarks/NOTES.md, "The call's fixed cost").  The k-th
    evaluation is at t0 + k h (``h``: a tabulated excitation's step); ``options``: ``jax.jit``'s compiler options."""
    import jax.numpy as jnp

    def run(y, count):
        def step(i, y):
            dy = system.rhs(t0 + h * i, y, inputs)
            return jax.tree_util.tree_map(lambda a, d: a + 1e-9 * d, y, dy)

        return jax.lax.fori_loop(0, count, step, y)

    f = jax.jit(run, compiler_options=options or {})
    short, long = jnp.asarray(n), jnp.asarray(n_long)
    for count in (short, long):  # compile, warm up
        _block(f(y, count))
    calls = {n: [], n_long: []}
    for _ in range(7):
        for k, count in ((n, short), (n_long, long)):
            t = time.perf_counter()
            _block(f(y, count))
            calls[k].append(time.perf_counter() - t)
    return (statistics.median(calls[n_long]) - statistics.median(calls[n])) / (n_long - n)


def processor() -> str:
    """The processor's name with its family and model (``/proc/cpuinfo``): two hosts that both call
    themselves "Intel(R) Xeon(R) Processor" can be different chips.  ``platform.processor()`` elsewhere."""
    import platform

    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return platform.processor() or platform.machine()
    name = fields.get("model name", platform.machine())
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name
