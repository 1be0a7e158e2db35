"""Simulation benchmarks: integrator overhead, end-to-end Monte-Carlo runs, float32 vs float64.

    python -m benchmarks.simulation            # writes BENCHMARKS_simulation.md (included in BENCHMARKS.md)
    python -m benchmarks.simulation --quick    # shorter runs

System: the floating crane of seed 001 (`jaxmbd.examples.floating_crane`):
four bodies (barge and cargo free, two booms fixed), linear hydrodynamics
with 51 radiation states and 80 wave components, two hoist ropes, mooring.
Peer in the same run: SciPy's solve_ivp (RK45) driving the same right-hand
side (jitted, called from Python per evaluation), what a user without a
batched integrator would write around it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmbd.examples import floating_crane
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.simulate import Integrator, initial_state, simulate, solve, static_equilibrium

from .timing import time_call

ROOT = Path(__file__).resolve().parents[1]


def crane(dtype=jnp.float64):
    sea = SeaState(spectrum=JONSWAP(2.5, 9.0), n_frequencies=80, omega_min=0.2, omega_max=1.8)
    system, q_guess = floating_crane(waves=sea)
    q0 = static_equilibrium(system, q_guess)
    return system, q0


def rhs_cost(system, q0, n=200):
    """Seconds per right-hand-side evaluation, states looped with lax.scan inside one jit."""
    waves = system.waves.realise(jax.random.key(0))
    forcing = (waves, system.prepare(waves), None)
    y0 = initial_state(system, q0)
    ts = jnp.linspace(0.0, 100.0, n)

    @jax.jit
    def loop(y0, ts):
        def body(y, t):
            d = system.rhs(t, y, forcing)
            return jax.tree_util.tree_map(lambda a, b: a + 1e-9 * b, y, d), None

        return jax.lax.scan(body, y0, ts)[0]

    return time_call(loop, y0, ts, repeats=5).per(n)


def step_cost(system, q0, integrator, n_steps=2000):
    """Seconds per integrator step of a fixed-step solve (no saving but the end)."""
    waves = system.waves.realise(jax.random.key(0))
    y0 = initial_state(system, q0)
    ts = (0.0, n_steps * integrator.dt)
    integ = dataclasses.replace(integrator, max_steps=n_steps + 4)
    f = jax.jit(lambda y: solve(system, y, ts, integrator=integ, waves=waves)[0])
    t0 = time.perf_counter()
    jax.block_until_ready(f(y0))
    compile_s = time.perf_counter() - t0
    return time_call(f, y0, repeats=3).per(n_steps), compile_s


def end_to_end(system, q0, duration, n):
    t0 = time.perf_counter()
    simulate(system, duration, save_dt=0.5, integrator=Integrator("rk4", dt=0.05), q0=q0,
             key=jax.random.key(1), n_realisations=n)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = simulate(system, duration, save_dt=0.5, integrator=Integrator("rk4", dt=0.05), q0=q0,
                   key=jax.random.key(1), n_realisations=n)
    return time.perf_counter() - t0, first, res


def scipy_peer(system, q0, duration):
    """SciPy RK45 (rtol 1e-6) over the same right-hand side, one realisation; returns (seconds, evaluations)."""
    from scipy.integrate import solve_ivp

    waves = system.waves.realise(jax.random.key(1))
    forcing = (waves, system.prepare(waves), None)
    y0 = initial_state(system, q0)
    sizes = [a.size for a in y0]
    f = jax.jit(lambda t, y: system.rhs(t, y, forcing))

    def rhs(t, x):
        q, v, z = np.split(x, np.cumsum(sizes)[:-1])
        return np.concatenate([np.asarray(a) for a in f(t, (jnp.asarray(q), jnp.asarray(v), jnp.asarray(z)))])

    x0 = np.concatenate([np.asarray(a) for a in y0])
    rhs(0.0, x0)
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, duration), x0, method="RK45", rtol=1e-6, atol=1e-6)
    return time.perf_counter() - t0, sol.nfev


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.simulation")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS_simulation.md"), help="table to paste into BENCHMARKS.md")
    args = ap.parse_args(argv)
    duration = 120.0 if args.quick else 600.0
    log = lambda s: print(s, flush=True)  # noqa: E731
    system, q0 = crane()
    log("right-hand side ...")
    t_rhs = rhs_cost(system, q0)
    log("integrator steps ...")
    t_rk4, c_rk4 = step_cost(system, q0, Integrator("rk4", dt=0.05))
    t_tsit, c_tsit = step_cost(system, q0, Integrator("tsit5", dt=0.05))
    t_dfx, c_dfx = step_cost(system, q0, Integrator("tsit5", dt=0.05, use_diffrax=True))
    log("end to end ...")
    e2e = {}
    for n in (1, 16) if args.quick else (1, 16, 64):
        e2e[n] = end_to_end(system, q0, duration, n)
        log(f"  {n}: {e2e[n][0]:.2f} s")
    log("float32 ...")
    sys32 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float32) if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating) else x, system)
    t32, first32, res32 = end_to_end(sys32, q0.astype(jnp.float32), duration, 16)
    res64 = e2e[16][2]
    T64 = res64.outputs["hoist1/tension"].max(axis=1)
    T32 = np.asarray(res32.outputs["hoist1/tension"], dtype=float).max(axis=1)
    err32 = float(np.max(np.abs(T32 - T64) / T64))
    log("scipy peer ...")
    t_sp, nfev = scipy_peer(system, q0, min(duration, 120.0))
    t_sp_per_s = t_sp / min(duration, 120.0)

    us = lambda s: f"{s * 1e6:.1f}"  # noqa: E731
    lines = [
        "## Simulation: integrator overhead and end to end (floating crane, seed 001)",
        "",
        f"Generated by `python -m benchmarks.simulation{' --quick' if args.quick else ''}` on "
        f"{datetime.datetime.now().isoformat(timespec='seconds')}, {platform.processor() or platform.machine()}, "
        f"jax {jax.__version__}; load average at the end {open('/proc/loadavg').read().split()[:3]}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| right-hand side, per evaluation (scan) | {us(t_rhs)} µs |",
        f"| RK4 step, own scan integrator (4 evaluations) | {us(t_rk4)} µs = {t_rk4 / (4 * t_rhs):.2f} x 4 evaluations |",
        f"| Tsit5 step, own scan integrator (6 evaluations) | {us(t_tsit)} µs = {t_tsit / (6 * t_rhs):.2f} x 6 evaluations |",
        f"| Tsit5 step, diffrax, constant step (6 evaluations) | {us(t_dfx)} µs = {t_dfx / (6 * t_rhs):.2f} x 6 evaluations |",
        f"| compile: RK4 scan / Tsit5 scan / diffrax Tsit5 | {c_rk4:.1f} / {c_tsit:.1f} / {c_dfx:.1f} s |",
    ]
    for n, (t, first, _) in e2e.items():
        lines.append(f"| {n} x {duration:.0f} s, RK4 dt 0.05 s, after compile (first call incl. compile) | "
                     f"{t:.2f} s ({first:.1f} s); {t / n / duration * 1e3:.2f} ms per simulated second per realisation |")
    lines += [
        f"| 16 x {duration:.0f} s in float32 (first call) | {t32:.2f} s ({first32:.1f} s); max hook-rope tension differs from float64 by at most {err32:.1e} (relative, per realisation) |",
        f"| peer: SciPy solve_ivp RK45 (rtol 1e-6) on the same jitted right-hand side, one realisation | {t_sp_per_s * 1e3:.1f} ms per simulated second ({nfev} evaluations for {min(duration, 120.0):.0f} s) |",
        f"| speed-up per realisation, batch of 16 vs SciPy | {t_sp_per_s / (e2e[16][0] / 16 / duration):.0f} x |",
        "",
        "The integrator overhead is the step time over the cost of its evaluations: 1.00 means the step costs",
        "nothing beyond the right-hand sides. The SciPy peer calls the same compiled right-hand side once per",
        "evaluation from Python; a NumPy re-implementation of the model (the issue's peer) is not written yet.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    log("\n".join(lines))


if __name__ == "__main__":
    main()
