"""Gradient cost and peak memory of a 600 s simulation of Cibicik et al. (2019)'s crane vessel (``crane_vessel.py``'s system:
full hydrodynamics, controllers, DP and a hook damper; RK4 at 0.1 s, saves every 0.2 s; the objective of
study (a); parameters: platform K_p, K_d and the hook damping).  ``--system small`` times the small model
(RK4 at 0.05 s, saves every 0.1 s, 4 parameters) instead.

Prints and writes bench.json: forward time (compiled with XLA's defaults, as the gradients are, and with
the options ``simulate`` compiles with: ``FORWARD_JIT_OPTIONS``), reverse-mode (jax.value_and_grad through the checkpointed
fixed-step solve) and forward-mode (vmapped JVPs, compiled as ``optim.tune`` compiles them) gradient times and their ratios to the forward run;
XLA's memory analysis of each compiled function (temporaries = working set) and the process's peak RSS.

    python studies/tuning/bench.py [--duration 600] [--system crane_vessel|small]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxmbd import optim  # noqa: E402
from jaxmbd.optim import objectives as obj  # noqa: E402
from jaxmbd.optim.tuning import value_and_grad  # noqa: E402
from jaxmbd.optim.examples import small_crane_vessel  # noqa: E402
from jaxmbd import FORWARD_JIT_OPTIONS  # noqa: E402
from jaxmbd.hydro import JONSWAP, SeaState  # noqa: E402
from jaxmbd.simulation import STAGE_MEMORY_BUDGET, Integrator, _stage_bytes  # noqa: E402
from benchmarks.timing import interleaved, processor  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--duration", type=float, default=600.0)
    p.add_argument("--modes", default="forward_run,forward_run_tuned,reverse,reverse_saves,forward")
    p.add_argument("--system", choices=("crane_vessel", "small"), default="crane_vessel")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds (one run of each mode per round; best kept)")
    p.add_argument("--out", type=Path, default=None, help="default: bench.json (bench_small.json for --system small)")
    a = p.parse_args(argv)
    a.out = a.out or HERE / ("bench.json" if a.system == "crane_vessel" else "bench_small.json")
    if a.system == "small":
        sea = SeaState(spectrum=JONSWAP(3.0, 8.0), n_frequencies=40, omega_min=0.3, omega_max=2.0, mean_direction=jnp.asarray(1.0))
        system, qg = small_crane_vessel(sea)
        q0 = jax.jit(lambda q: optim.equilibrate(system, q, n_newton=6))(qg)
        ps = optim.ParameterSet([optim.Parameter("kp", "mc.kp", 1e9, lower=0.0), optim.Parameter("kd", "mc.kd", 2e8, lower=0.0),
                                 optim.Parameter("EA", "hoist.EA", 3e7, lower=1e6), optim.Parameter("c", "hoist.damping", 2e4, lower=0.0)])
        J = obj.weighted_sum([(1.0, obj.measure(obj.wrench("king_base", "moment"), "smooth_max", scale=1e6, sharpness=20.0)),
                              (1.0, obj.measure(obj.sway("hoist"), "rms", scale=1e-2))])
        dt, save_dt = 0.05, 0.1
    else:
        from studies.tuning.crane_vessel import HAND_SET, sway_rms, system_with_damper

        system, q0 = system_with_damper(60, 9)
        ps = optim.ParameterSet([
            optim.Parameter("mc_kp", "mc.kp", HAND_SET["mc_kp"], lower=2e8, upper=2e10),
            optim.Parameter("mc_kd", "mc.kd", HAND_SET["mc_kd"], lower=4e7, upper=4e9),
            optim.Parameter("hook_damping", "hook_damper.kd", HAND_SET["hook_damping"], lower=1e3, upper=1e7)])
        dt, save_dt = 0.1, 0.2
        start = int(round(20.0 / save_dt))
        sway = sway_rms(start)
        J = obj.weighted_sum([(1.0, obj.measure(obj.wrench("q3", "moment", start=start), "smooth_max", scale=7e6, sharpness=20.0)),
                              (1.0, lambda o: sway(o) / 5e-3)])
    ts = optim.time_grid(a.duration, save_dt, dt)
    prob = optim.Problem(system, ps, J, q0, ts, Integrator("rk4", dt=dt), keys=jax.random.split(jax.random.key(0), 1))
    u = ps.u0()
    # reverse: Integrator.checkpoint "auto" (here every stage's state is kept); reverse_saves: one state per save
    prob_saves = dataclasses.replace(prob, integrator=Integrator("rk4", dt=dt, checkpoint="saves"))
    fns = {"forward_run": prob.loss, "forward_run_tuned": prob.loss, "reverse": value_and_grad(prob.loss, "reverse"),
           "reverse_saves": value_and_grad(prob_saves.loss, "reverse"), "forward": value_and_grad(prob.loss, "forward")}
    out = {"system": a.system, "duration_s": a.duration, "dt": dt, "n_steps": int(round(a.duration / dt)), "n_saves": len(ts),
           "n_parameters": len(ps), "backend": jax.default_backend(), "processor": processor(),
           "pjrt_nproc": os.environ.get("PJRT_NPROC")}
    compiled = {}
    for name in a.modes.split(","):
        t = time.perf_counter()
        # forward_run_tuned: the forward run with the compiler options simulate uses (memory-optimised
        # schedule); forward mode with them too, as optim.tune compiles it (optim.tuning.gradient_jit);
        # the forward run and reverse mode with XLA's defaults, which suit reverse mode better
        opts = FORWARD_JIT_OPTIONS if name in ("forward_run_tuned", "forward") else {}
        fresh = lambda x, f=fns[name]: f(x)  # noqa: E731  (a new function: nothing reused from another mode's trace)
        c = jax.jit(fresh, compiler_options=opts).lower(u).compile()
        compile_s = time.perf_counter() - t
        ma = c.memory_analysis()
        jax.block_until_ready(c(u))
        compiled[name] = c
        out[name] = {"compile_s": compile_s, "run_s": np.inf,
                     "temp_bytes": int(getattr(ma, "temp_size_in_bytes", -1)) if ma is not None else None,
                     "maxrss_bytes_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    # Rounds of one run of each mode in turn, best per mode: the ratios come from neighbouring
    # runs, so a change in the machine's speed during the benchmark moves all modes together.
    best = interleaved({name: (c, (u,), 1) for name, c in compiled.items()}, rounds=a.rounds, warmup=False)
    for name in compiled:
        out[name]["run_s"] = best[name]
    for name in compiled:
        print(name, out[name], flush=True)
    for m in ("reverse", "reverse_saves", "forward"):
        if m in out and "forward_run" in out:
            out[f"{m}_ratio"] = out[m]["run_s"] / out["forward_run"]["run_s"]
        if m in out and "forward_run_tuned" in out:
            out[f"{m}_ratio_tuned"] = out[m]["run_s"] / out["forward_run_tuned"]["run_s"]
    state_bytes = (system.model.nq + system.model.nv + system.n_states) * 8
    out["saved_states_bytes"] = state_bytes * len(ts)
    # RK4: four stages a step, each its state and the joint accelerations its checkpoint keeps
    y_shape = (np.zeros(system.model.nq), np.zeros(system.model.nv), np.zeros(system.n_states))
    out["stage_states_bytes"] = _stage_bytes(y_shape, out["n_steps"], 4)
    out["checkpoint_auto"] = "steps" if out["stage_states_bytes"] <= STAGE_MEMORY_BUDGET else "saves"
    print(json.dumps(out, indent=1))
    a.out.write_text(json.dumps(out, indent=1))
    if a.system == "crane_vessel" and all(m in out for m in ("forward_run", "forward_run_tuned", "reverse", "reverse_saves", "forward")):
        write_section(out)
    return out


def write_section(out, path=None):
    """The gradient section of BENCHMARKS.md (benchmarks/results/gradients.md) from bench.json's figures."""
    import datetime
    import platform

    root = HERE.parents[1]
    path = path or root / "benchmarks" / "results" / "gradients.md"
    f, ft, r, rs, fw = out["forward_run"], out["forward_run_tuned"], out["reverse"], out["reverse_saves"], out["forward"]
    mb = lambda b: f"{b / 1e6:.0f} MB"  # noqa: E731
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"## Gradients through a {out['duration_s']:.0f} s simulation of Cibicik et al. (2019)'s crane vessel (`python studies/tuning/bench.py`)",
        "",
        f"Generated on {datetime.date.today().isoformat()}, {out.get('processor', platform.machine())}, {os.cpu_count()} cores, "
        f"jax {jax.__version__}, backend {out['backend']}, XLA:CPU's runtime threads `PJRT_NPROC={out.get('pjrt_nproc')}`; "
        f"load average at the end {load}.  System: `studies/tuning/crane_vessel.py` (the full "
        f"crane vessel with 540 wave components, radiation states, controllers, DP and a hook damper), one realisation, "
        f"RK4 at {out['dt']} s ({out['n_steps']} steps), {out['n_saves']} saves; objective of study (a) (smooth maximum of "
        f"the king moment + sway RMS); {out['n_parameters']} parameters (platform K_p, K_d, hook damping).",
        "",
        "| | compile (s) | run (s) | ratio to forward (XLA's defaults) | ratio to forward (`FORWARD_JIT_OPTIONS`) | XLA temporaries | process peak RSS so far |",
        "|---|---|---|---|---|---|---|",
        f"| forward run (simulation + outputs + objective), XLA's defaults | {f['compile_s']:.1f} | {f['run_s']:.3f} | 1 | "
        f"{f['run_s'] / ft['run_s']:.2f} | {mb(f['temp_bytes'])} | {mb(f['maxrss_bytes_so_far'])} |",
        f"| forward run, `FORWARD_JIT_OPTIONS` (memory-optimised schedule, as `simulate` compiles) | {ft['compile_s']:.1f} | "
        f"{ft['run_s']:.3f} | {ft['run_s'] / f['run_s']:.2f} | 1 | {mb(ft['temp_bytes'])} | {mb(ft['maxrss_bytes_so_far'])} |",
        f"| reverse mode (`jax.value_and_grad`; `Integrator.checkpoint` \"auto\": every stage's state kept) | {r['compile_s']:.1f} | {r['run_s']:.3f} | "
        f"{out['reverse_ratio']:.2f} | {out['reverse_ratio_tuned']:.2f} | {mb(r['temp_bytes'])} | {mb(r['maxrss_bytes_so_far'])} |",
        f"| reverse mode, `checkpoint=\"saves\"` (one state per save, the steps run again) | {rs['compile_s']:.1f} | {rs['run_s']:.3f} | "
        f"{out['reverse_saves_ratio']:.2f} | {out['reverse_saves_ratio_tuned']:.2f} | {mb(rs['temp_bytes'])} | {mb(rs['maxrss_bytes_so_far'])} |",
        f"| forward mode ({out['n_parameters']} JVPs, vmapped; `FORWARD_JIT_OPTIONS`, as `optim.tune` compiles it) | {fw['compile_s']:.1f} | {fw['run_s']:.3f} | "
        f"{out['forward_ratio']:.2f} | {out['forward_ratio_tuned']:.2f} | {mb(fw['temp_bytes'])} | {mb(fw['maxrss_bytes_so_far'])} |",
        "",
        f"Memory: every right-hand side is checkpointed (its input state and its joint accelerations kept, its other intermediates recomputed just before "
        f"its VJP). With `Integrator.checkpoint=\"auto\"` (the default) reverse mode keeps the state at every stage of "
        f"every step when they fit in `STAGE_MEMORY_BUDGET` ({STAGE_MEMORY_BUDGET / 2**20:.0f} MiB per trajectory): here "
        f"{out['stage_states_bytes'] / 1e6:.1f} MB, so it did (\"{out['checkpoint_auto']}\"); the budget holds about "
        f"{STAGE_MEMORY_BUDGET / out['stage_states_bytes'] * out['duration_s'] / 3600:.0f} hours of this model. Beyond it, "
        f"or with `checkpoint=\"saves\"`, it keeps one state per save ({out['saved_states_bytes'] / 1e6:.1f} MB here) and "
        "runs each save interval's steps again in the backward pass: the temporaries then grow with the saves, and the "
        "gradient costs about one forward run more (the row above).",
        "",
        f"Target (issue 9): gradient at most 3x the forward run, compile under 30 s.  Reverse mode: {out['reverse_ratio']:.2f}x "
        f"the forward run compiled like it, {out['reverse_ratio_tuned']:.2f}x the faster forward run `simulate` makes "
        f"({out['reverse_saves_ratio']:.2f}x / {out['reverse_saves_ratio_tuned']:.2f}x keeping one state per save); forward mode "
        f"{out['forward_ratio']:.2f}x / {out['forward_ratio_tuned']:.2f}x (for these {out['n_parameters']} parameters the cheaper mode; "
        f"its temporaries, {mb(fw['temp_bytes'])} against the forward run's {mb(f['temp_bytes'])}, grow with the duration as the "
        "forward run's do: the saved trajectory with its tangents, no state kept per stage); gradient compile "
        f"{r['compile_s']:.0f} s (reverse), {fw['compile_s']:.0f} s (forward).  Reverse mode is compiled with XLA's default "
        "schedule (the memory-optimised one is 3-6 % slower on one thread, 15-25 % on two: NOTES, \"The scheduler\", "
        "\"One thread per process\"); forward mode with `FORWARD_JIT_OPTIONS`, as `optim.tune` compiles it (6-7 % faster "
        "than with XLA's default).",
        "",
        "How it came down (same command): 15.9x reverse, 6.1x forward mode, 96.5 s / 63.1 s of compile before the",
        "ABA's custom JVP rule and the YNN option; 7.5-8.0x, 5.2-5.4x, 60-90 s / 35-49 s with them.  Then: the loads'",
        "reverse pass without `pad` kernels (cross products differentiated as Levi-Civita multiply-and-sums,",
        "gravity torques summed over a constant subtree matrix: one right-hand side's VJP 124-154 -> 62-67 µs,",
        "back to back), symbolic zeros in the ABA's rule (the model's arrays are not carried as zero tangents),",
        "and a checkpoint on every right-hand side inside the window (60 s run: gradient 0.39-0.48 -> 0.26-0.27 s,",
        "compile 41-42 -> 29-34 s).  The objective now reads its outputs lazily (`jaxmbd.optim.LazyOutputs`: only the joint",
        "wrench and the sway it uses, not every element's outputs): tracing the reverse-mode program 15.5 -> 12.5 s",
        "(60 s run, one process each).  And the joint wrenches at the saves are built from the solver's own",
        "right-hand side and external wrenches there (the first stage of the step that starts at each save;",
        "`solve(..., dynamics=True)`), instead of evaluating the right-hand side again under vmap: 60 s run, one",
        "process each, forward-run compile 18.4 -> 11.8 s, reverse-mode compile 37.1 -> 31.1 s, gradient",
        "0.345 -> 0.291 s (3.9x -> 3.0x the forward run).  What remains: reverse mode evaluates each right-hand side three times (the",
        "forward run, the window's recomputation, the checkpoint's, which feeds the VJP) and transposes it once;",
        "forward mode carries three tangents through every right-hand side (about 3.5x a value).  Both are",
        "counts of small XLA kernels, the limit the scanned forward dynamics meets too (dynamics section).",
        "The articulated-body recursion then lost a third of its kernels (NOTES, \"Kernels by source line\"): the",
        "forward run 0.664 -> 0.588 s, reverse mode only 2.82 -> 2.62 s, because reverse mode differentiates",
        "the recursion through its inverse-dynamics rule, whose kernels did not change; so the ratio stayed",
        "(4.3x -> 4.4x), and forward mode, which carries its tangents through that rule too, went to 5.4x.",
        "Keeping every stage's state instead of recomputing each save interval (`Integrator.checkpoint`, \"auto\")",
        "removed one of the three evaluations: 600 s, one process each, reverse mode 2.54 -> 1.71 s against forward",
        "runs of 0.61 and 0.57 s (4.2x -> 3.0x), XLA temporaries 31 -> 44 MB.  An earlier try of the same change,",
        "before the loads' and the recursion's kernel cuts, was slower (NOTES); it no longer is.",
        "Then the recursion's non-serial work left its serial passes (NOTES): 200 s of this objective, alternating",
        "processes, the forward run 0.19-0.22 -> 0.131 s, reverse mode 0.62-0.65 -> 0.65-0.69 s, unchanged.  Reverse",
        "mode differentiates the recursion through its dense inverse-dynamics rule and the loads' VJPs, which that",
        "change did not touch; autodiff through the new recursion instead of the rule is still slower (0.67-0.72",
        "against 0.59-0.60 s).  So the gradient costs what it did, and its ratio to the now faster forward run rose",
        "from 3.0-3.1x to 5.2-5.5x.  The lever left is the rule's and the loads' reverse-mode kernels.",
        "Then the rule's state tangents in closed form (each body's rigid motion under a configuration tangent,",
        "`jaxmbd.dynamics.dense`, instead of the JVP of every placement and transform) and Eigen's matrix",
        "products on the calling thread (`--xla_cpu_multi_thread_eigen=false`, added to XLA_FLAGS at import):",
        "200 s in alternating processes, forward mode 0.39-0.41 -> 0.18-0.19 s, reverse mode 0.315 -> 0.26 s, the",
        "forward run unchanged (NOTES, \"The gradient, kernel by kernel\").  Reverse mode runs about 600 kernels per",
        "right-hand side against the forward run's 100: the forward pass, the checkpointed right-hand side again,",
        "and about 320 transposed kernels, two thirds of them the loads'.",
    ]
    Path(path).write_text("\n".join(lines) + "\n")
    try:
        from benchmarks.report import assemble

        assemble()
    except ImportError:  # pragma: no cover
        pass


if __name__ == "__main__":
    main()
