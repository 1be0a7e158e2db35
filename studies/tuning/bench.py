"""Gradient cost and peak memory of a 600 s simulation (small crane vessel, RK4, dt = 0.05 s, saves every 0.1 s).

Prints and writes bench.json: forward time, reverse-mode (jax.value_and_grad through the checkpointed
fixed-step solve) and forward-mode (vmapped JVPs) gradient times and their ratios to the forward run;
XLA's memory analysis of each compiled function (temporaries = working set) and the process's peak RSS.

    python studies/tuning/bench.py [--duration 600] [--params 4]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import optim  # noqa: E402
from optim import objectives as obj  # noqa: E402
from optim.tuning import value_and_grad  # noqa: E402
from optim.examples import small_crane_vessel  # noqa: E402
from jaxmbd.hydro import JONSWAP, SeaState  # noqa: E402
from jaxmbd.simulate import Integrator  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--duration", type=float, default=600.0)
    p.add_argument("--modes", default="forward_run,reverse,forward")
    p.add_argument("--out", type=Path, default=HERE / "bench.json")
    a = p.parse_args(argv)
    sea = SeaState(spectrum=JONSWAP(3.0, 8.0), n_frequencies=40, omega_min=0.3, omega_max=2.0, mean_direction=jnp.asarray(1.0))
    system, qg = small_crane_vessel(sea)
    q0 = jax.jit(lambda q: optim.equilibrate(system, q, n_newton=6))(qg)
    ps = optim.ParameterSet([optim.Parameter("kp", "mc.kp", 1e9, lower=0.0), optim.Parameter("kd", "mc.kd", 2e8, lower=0.0),
                             optim.Parameter("EA", "hoist.EA", 3e7, lower=1e6), optim.Parameter("c", "hoist.damping", 2e4, lower=0.0)])
    J = obj.weighted_sum([(1.0, obj.measure(obj.wrench("king_base", "moment"), "smooth_max", scale=1e6, sharpness=20.0)),
                          (1.0, obj.measure(obj.sway("hoist"), "rms", scale=1e-2))])
    ts = optim.time_grid(a.duration, 0.1, 0.05)
    prob = optim.Problem(system, ps, J, q0, ts, Integrator("rk4", dt=0.05), keys=jax.random.split(jax.random.key(0), 1))
    u = ps.u0()
    fns = {"forward_run": prob.loss, "reverse": value_and_grad(prob.loss, "reverse"), "forward": value_and_grad(prob.loss, "forward")}
    out = {"duration_s": a.duration, "n_steps": int(round(a.duration / 0.05)), "n_saves": len(ts), "n_parameters": len(ps),
           "backend": jax.default_backend()}
    for name in a.modes.split(","):
        t = time.perf_counter()
        c = jax.jit(fns[name]).lower(u).compile()
        compile_s = time.perf_counter() - t
        ma = c.memory_analysis()
        jax.block_until_ready(c(u))
        best = np.inf
        for _ in range(3):
            t = time.perf_counter()
            jax.block_until_ready(c(u))
            best = min(best, time.perf_counter() - t)
        out[name] = {"compile_s": compile_s, "run_s": best,
                     "temp_bytes": int(getattr(ma, "temp_size_in_bytes", -1)) if ma is not None else None,
                     "maxrss_bytes_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
        print(name, out[name], flush=True)
    for m in ("reverse", "forward"):
        if m in out and "forward_run" in out:
            out[f"{m}_ratio"] = out[m]["run_s"] / out["forward_run"]["run_s"]
    state_bytes = (system.model.nq + system.model.nv + system.n_states) * 8
    out["saved_states_bytes"] = state_bytes * len(ts)
    print(json.dumps(out, indent=1))
    a.out.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
