"""Tuning studies with gradients through the simulation (issue 8).

(a) controller and rope tuning: the motion-compensation platform's PD gains (kp, kd) and the hoist
    rope's stiffness EA and damping, to minimise the smooth maximum of the reaction moment at the king
    plus the RMS payload sway, mean over N training realisations; before/after on held-out
    realisations (independent keys).
(b) design: the crane's offset on deck (continuous between location II, 3 m to starboard, and 3 m to
    port; I is 0) and the rope stiffness, to minimise the dynamic amplification factor of the hook
    load (smooth maximum of T / T_static), forward-mode gradients (two parameters).

Both run on ``jaxmbd.optim.examples.small_crane_vessel`` (Cibicik et al. 2019's platform / king / boom / payload chain
on a vessel with linear roll and pitch dynamics and a wave-slope moment); see README.md for why.

    python studies/tuning/run.py            # full (about 10-20 min on 2 busy cores)
    python studies/tuning/run.py --smoke    # seconds of simulation, 2 iterations (CI)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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
from jaxmbd.optim.examples import small_crane_vessel  # noqa: E402
from jaxmbd.optim.from_file import plot_history  # noqa: E402
from jaxmbd.hydro import JONSWAP, SeaState  # noqa: E402
from jaxmbd.simulation import Integrator  # noqa: E402

SEA = dict(hs=3.0, tp=8.0, direction_deg=60.0)


def sea_state():
    return SeaState(spectrum=JONSWAP(SEA["hs"], SEA["tp"]), n_frequencies=40, omega_min=0.3, omega_max=2.0,
                    mean_direction=jnp.asarray(np.deg2rad(SEA["direction_deg"])))


def base_problem(duration, n_train, n_test, seed=0):
    system, qg = small_crane_vessel(sea_state())
    q0 = jax.jit(lambda q: optim.equilibrate(system, q, n_newton=6))(qg)
    ts = optim.time_grid(duration, 0.1, 0.05)
    train = jax.random.split(jax.random.key(seed), n_train)
    test = jax.random.split(jax.random.key(seed + 1000), n_test)
    return system, q0, ts, train, test


def referenced(prob, terms_unit, keys):
    """Mean of each unit-scaled term over the training realisations at the initial parameters."""
    p = dataclasses.replace(prob, objective=lambda o: jnp.stack([t(o) for t in terms_unit]))
    vals = jax.jit(lambda u: jax.vmap(lambda k: p.objective(p.run_one(p.system_at(u), p.initial_state(p.system_at(u)), k, lazy=True)))(keys))(p.parameters.u0())
    return np.asarray(vals).mean(axis=0)


def study_a(args, out):
    duration = 6.0 if args.smoke else args.duration
    n_train, n_test = (1, 1) if args.smoke else (args.n_train, args.n_test)
    system, q0, ts, train, test = base_problem(duration, n_train, n_test)
    start = int(round(min(10.0, duration / 2) / (ts[1] - ts[0])))  # after the wave ramp
    ps = optim.ParameterSet([
        optim.Parameter("mc_kp", "mc.kp", 1.0e9, lower=1e8, upper=5e10),
        optim.Parameter("mc_kd", "mc.kd", 2.0e8, lower=1e7, upper=2e9),
        optim.Parameter("rope_EA", "hoist.EA", 3.0e7, lower=5e6, upper=2e8),
        optim.Parameter("rope_damping", "hoist.damping", 2.0e4, lower=1e3, upper=4e5),
    ])
    sig_m, sig_s = obj.wrench("king_base", "moment", start=start), obj.sway("hoist", start=start)
    unit = [obj.measure(sig_m, "smooth_max", sharpness=20.0, scale=1e6), obj.measure(sig_s, "rms", scale=1e-2)]
    prob = optim.Problem(system, ps, None, q0, ts, Integrator("rk4", dt=0.05), keys=train, equilibrium_newton=2)
    t = time.perf_counter()
    ref = referenced(prob, unit, train)
    terms = [obj.measure(sig_m, "smooth_max", sharpness=20.0, scale=1e6 * ref[0]),
             obj.measure(sig_s, "rms", scale=1e-2 * ref[1])]
    prob = dataclasses.replace(prob, objective=obj.weighted_sum([(1.0, terms[0]), (1.0, terms[1])]))
    print(f"(a) references at the hand-set gains: king moment {ref[0]:.3f} MN m, sway RMS {np.degrees(ref[1] * 1e-2):.3f} deg "
          f"({time.perf_counter() - t:.1f} s)", flush=True)
    res = optim.tune(jax.jit(prob.loss), ps.u0(), parameters=ps, method="adam", steps=2 if args.smoke else args.steps,
                     learning_rate=0.15, gradient_mode="reverse", out=out / "a_history.json",
                     attrs={"study": "a", "duration_s": duration, "n_train": n_train, "n_test": n_test, "sea": SEA})
    return finish(prob, res, train, test, terms, ["king moment (smooth max)", "payload sway (RMS)"], out, "a")


def study_b(args, out):
    duration = 6.0 if args.smoke else args.duration
    n_train, n_test = (1, 1) if args.smoke else (args.n_train, args.n_test)
    system, q0, ts, train, test = base_problem(duration, n_train, n_test, seed=7)
    start = int(round(min(10.0, duration / 2) / (ts[1] - ts[0])))
    ps = optim.ParameterSet([
        optim.Parameter("crane_y", "placement.platform_base.y", -3.0, lower=-3.5, upper=3.5),  # start at location II
        optim.Parameter("rope_EA", "hoist.EA", 3.0e7, lower=5e6, upper=2e8),
    ])
    # the equilibrium at the initial parameters (location II), so that the run starts at rest
    sys0 = ps.apply(system, ps.initial_values())
    q0 = jax.jit(lambda q: optim.equilibrate(sys0, q, n_newton=8))(q0)
    # DAF: smooth max of the tension over its static value (the first save: the run starts at rest in equilibrium)
    sig = obj.tension("hoist", start=start)
    daf_late = lambda o: obj.smooth_max(sig(o) / o["hoist/tension"][0], 200.0)  # noqa: E731
    daf_late.label = "DAF"
    # Newton steps re-solving the equilibrium at every parameter value: the tuned offset moves the payload
    # ~0.5 m sideways on a stiff rope, which 2 steps leave unconverged (they overshoot: the run would start
    # with the hook load 1.5 t above static, and the optimiser lowers the DAF by raising that first save)
    prob = optim.Problem(system, ps, daf_late, q0, ts, Integrator("rk4", dt=0.05), keys=train, equilibrium_newton=5)
    res = optim.tune(jax.jit(prob.loss), ps.u0(), parameters=ps, method="adam", steps=2 if args.smoke else args.steps_b,
                     learning_rate=0.2, gradient_mode="forward", out=out / "b_history.json",
                     attrs={"study": "b", "duration_s": duration, "n_train": n_train, "n_test": n_test, "sea": SEA})
    daf_exact = lambda o: jnp.max(sig(o)) / o["hoist/tension"][0]  # noqa: E731
    return finish(prob, res, train, test, [daf_late], ["hook-load DAF"], out, "b",
                  extras={"hook-load DAF, exact maximum": daf_exact})


def finish(prob, res, train, test, terms, term_names, out, tag, extras=None, *, plot=None, title=None, attrs=None):
    """Held-out evaluation before/after, report and plots.  ``extras``: name -> objective of further
    per-realisation measures reported beside the terms (not part of the objective); ``plot(prob, u0,
    u1, key, path)``: the before/after time series (default: the small model's); ``attrs``: added to
    the report."""
    u0, u1 = prob.parameters.u0(), jnp.asarray(res.u)
    extras = dict(extras or {})
    fns = list(terms) + list(extras.values())
    def terms_of_run(u, k):
        o = prob.run_one(prob.system_at(u), prob.initial_state(prob.system_at(u)), k, lazy=True)
        return jnp.stack([t(o) for t in fns])

    per_terms = jax.jit(lambda u: jax.vmap(lambda k: terms_of_run(u, k))(test))
    before_all, after_all = np.asarray(per_terms(u0)), np.asarray(per_terms(u1))
    before, after = before_all[:, :len(terms)], after_all[:, :len(terms)]
    tot_b, tot_a = before.sum(1), after.sum(1)
    # the run must start at rest in equilibrium at both parameter sets (see Problem.equilibrium_residual)
    resid = jax.jit(prob.equilibrium_residual)
    res_b, res_a = float(resid(u0)), float(resid(u1))
    if max(res_b, res_a) > 1e-6:
        print(f"({tag}) WARNING: the initial state is not at rest: max |dv/dt| {res_b:.2e} (hand-set), {res_a:.2e} "
              "(tuned); raise equilibrium_newton", flush=True)
    report = {
        "parameters_before": res.initial_values, "parameters_after": res.values,
        "train_objective_before": res.initial_loss, "train_objective_after": res.loss,
        "held_out_objective_before": float(tot_b.mean()), "held_out_objective_after": float(tot_a.mean()),
        "held_out_improvement_percent": float(100 * (1 - tot_a.mean() / tot_b.mean())),
        "held_out_cvar80_before": float(obj.cvar(jnp.asarray(tot_b), 0.8)),
        "held_out_cvar80_after": float(obj.cvar(jnp.asarray(tot_a), 0.8)),
        "held_out_terms_before": dict(zip(term_names, before.mean(0).tolist())),
        "held_out_terms_after": dict(zip(term_names, after.mean(0).tolist())),
        "held_out_per_realisation_before": tot_b.tolist(), "held_out_per_realisation_after": tot_a.tolist(),
        "held_out_realisations_improved": int(np.sum(tot_a < tot_b)), "n_test": int(len(tot_b)),
        "held_out_extras_before": dict(zip(extras, before_all[:, len(terms):].mean(0).tolist())),
        "held_out_extras_after": dict(zip(extras, after_all[:, len(terms):].mean(0).tolist())),
        "equilibrium_residual_before": res_b, "equilibrium_residual_after": res_a,
        "n_iterations": len(res.history) - 1, "seconds": res.history[-1]["seconds"],
        **(attrs or {}),
    }
    (out / f"{tag}_report.json").write_text(json.dumps(report, indent=1))
    print(f"({tag}) held-out objective {report['held_out_objective_before']:.4f} -> {report['held_out_objective_after']:.4f} "
          f"({report['held_out_improvement_percent']:.1f} % lower, {report['held_out_realisations_improved']} of "
          f"{report['n_test']} realisations); terms {report['held_out_terms_before']} -> "
          f"{report['held_out_terms_after']}; {report['held_out_extras_before']} -> {report['held_out_extras_after']}; "
          f"equilibrium residual {res_b:.1e} -> {res_a:.1e}", flush=True)
    plot_history(res, out / f"{tag}_history.png", title=title or f"study ({tag}): training objective and parameters")
    if plot is None:
        plot_series(prob, u0, u1, test[0], out / f"{tag}_timeseries.png", tag)
    else:
        plot(prob, u0, u1, test[0], out / f"{tag}_timeseries.png")
    return report


def plot_series(prob, u0, u1, key, path, tag):
    rows = [("king reaction moment |(nx, ny)| (MN m)", lambda o: np.hypot(o["joint/king_base/wrench"][:, 3], o["joint/king_base/wrench"][:, 4]) / 1e6),
            ("payload sway (deg)", lambda o: np.degrees(np.asarray(o["hoist/sway"]))),
            ("hook load (t)", lambda o: np.asarray(o["hoist/tension"]) / 9.81e3)]
    plot_before_after(prob, u0, u1, key, path, rows,
                      f"study ({tag}): one held-out realisation, JONSWAP Hs {SEA['hs']} m, Tp {SEA['tp']} s")


def plot_before_after(prob, u0, u1, key, path, rows, title):
    """Time series of one realisation at the hand-set (u0) and tuned (u1) parameters; ``rows``:
    (label, outputs -> series) per panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    o0 = jax.jit(lambda u: prob.outputs(u, key))(u0)
    o1 = jax.jit(lambda u: prob.outputs(u, key))(u1)
    t = np.asarray(prob.ts)
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 7), sharex=True)
    for ax, (lab, fn) in zip(axes, rows):
        ax.plot(t, fn(o0), lw=0.9, label="before (hand-set)")
        ax.plot(t, fn(o1), lw=0.9, label="after (tuned)")
        ax.set_ylabel(lab, fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("time (s)")
    axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--study", choices=("a", "b", "both"), default="both")
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--n-train", type=int, default=4)
    p.add_argument("--n-test", type=int, default=8)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--steps-b", type=int, default=15)
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    reports = {}
    if args.study in ("a", "both"):
        reports["a"] = study_a(args, args.out)
    if args.study in ("b", "both"):
        reports["b"] = study_b(args, args.out)
    return reports


if __name__ == "__main__":
    main()
