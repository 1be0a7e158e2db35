"""``jaxmbd tune SYSTEM.toml``: tune the parameters a system file's ``[tune]`` table names.

Schema (all keys but ``parameters`` and ``objective`` optional)::

    [tune]
    method = "adam"            # or "lbfgs"
    steps = 40
    learning_rate = 0.1        # in the unconstrained variables (a unit step ~ the initial value)
    schedule = "cosine"        # "cosine", "exponential", "constant" (Adam)
    gradient = "reverse"       # or "forward" (one JVP per parameter: cheaper for a few parameters)
    duration = 60.0            # s per training run (default: [simulation] duration)
    save_dt = 0.1              # s (default: [simulation] save_dt, else the step)
    dt = 0.05                  # fixed RK4 step (default: the file's integrator step, else 0.05)
    n_train = 4                # training realisations (keys from seed)
    n_test = 4                 # held-out realisations (independent keys), evaluated before and after
    seed = 0                   # default: [simulation] seed
    aggregate = "mean"         # "max", "cvar0.8" (mean of the worst 20 %)
    equilibrium_newton = 2     # differentiable Newton steps re-solving the static equilibrium

    [[tune.parameters]]
    name = "kp"
    path = "mc.kp"             # or paths = ["hoist1.EA", "hoist2.EA"] (tied); see optim.params
    lower = 1e7                # optional bounds; initial defaults to the system's value
    upper = 1e10

    [[tune.objective]]
    output = "joint/king_base/wrench"
    component = "moment"       # fx..nz, moment, force, moment3, force3, or an index
    measure = "smooth_max"     # smooth_max, smooth_max_abs, p_norm, rms, std, mean, daf
    sharpness = 50
    scale = "initial"          # so that the term starts at 1
    weight = 1.0

    [[tune.objective]]
    output = "hoist/tension"
    upper = 2.0e5              # constraint: smooth max below the limit (quadratic penalty outside)
    weight = 10.0
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmbd.simulate import Integrator

from . import objectives as obj
from . import params as prm
from .rollout import Problem, time_grid
from .tuning import tune

_TUNE_KEYS = ("method", "steps", "learning_rate", "schedule", "gradient", "duration", "save_dt", "dt", "n_train",
              "n_test", "seed", "aggregate", "equilibrium_newton", "parameters", "objective")


def problem_from_table(loaded, table: dict, *, smoke: bool = False):
    """(Problem, train keys, test keys, settings) from a loaded system file and its ``[tune]`` table."""
    unknown = sorted(set(table) - set(_TUNE_KEYS))
    if unknown:
        raise ValueError(f"[tune]: unknown keys {unknown}; allowed: {', '.join(_TUNE_KEYS)}")
    if not table.get("parameters"):
        raise ValueError("[tune]: needs at least one [[tune.parameters]] entry")
    if not table.get("objective"):
        raise ValueError("[tune]: needs at least one [[tune.objective]] term")
    system = loaded.system
    sim = loaded.simulation
    dt = float(table.get("dt") or getattr(loaded.integrator, "dt", None) or 0.05)
    duration = float(table.get("duration", sim.duration))
    save_dt = float(table.get("save_dt") or sim.save_dt or dt)
    n_train, n_test = int(table.get("n_train", 4)), int(table.get("n_test", 4))
    if smoke:
        duration, n_train, n_test = min(duration, 5.0), min(n_train, 1), min(n_test, 1)
    seed = int(table.get("seed", sim.seed))
    ps = prm.from_spec(prm.initial_from_system(system, table["parameters"]))
    ts = time_grid(duration, save_dt, dt)
    q0 = loaded.initial_configuration()
    stochastic = system.waves is not None and getattr(system.waves, "spectrum", None) is not None
    train = jax.random.split(jax.random.key(seed), n_train) if stochastic else None
    test = jax.random.split(jax.random.fold_in(jax.random.key(seed), 1), n_test) if stochastic else None
    prob = Problem(system, ps, obj.from_spec(table["objective"]), jnp.asarray(q0), ts, Integrator("rk4", dt=dt),
                   keys=train, aggregate=table.get("aggregate", "mean"),
                   equilibrium_newton=int(table.get("equilibrium_newton", 2 if sim.static_equilibrium else 0)),
                   equilibrium_free=sim.equilibrium_free)
    # scale = "initial": every such term starts at 1 (its mean over the training realisations at u0)
    if any(t.get("scale") == "initial" for t in table["objective"]):
        unit = obj.from_spec([{**t, "scale": 1.0} if t.get("scale") == "initial" else t for t in table["objective"]])
        ref_prob = dataclasses.replace(prob, objective=lambda outs: obj.term_values(unit, outs))
        system0 = ref_prob.system_at(ps.u0())
        y0 = ref_prob.initial_state(system0)
        keys = train if train is not None else [None]
        vals = [jax.jit(lambda k: ref_prob.objective(ref_prob.run_one(system0, y0, k)))(k) for k in keys]
        reference = {lab: float(np.mean([float(v[lab]) for v in vals])) for lab in vals[0]}
        prob = dataclasses.replace(prob, objective=obj.from_spec(table["objective"], reference))
    return prob, train, test, dict(duration=duration, save_dt=float(ts[1] - ts[0]) if len(ts) > 1 else save_dt, dt=dt,
                                   n_train=n_train, n_test=n_test, seed=seed)


def tune_from_file(loaded, out_dir, *, tune_table: dict | None = None, steps: int | None = None, smoke: bool = False,
                   progress=print):
    """Tune the parameters of a loaded system file (:class:`jaxmbd.io.system_file.LoadedSystem`).

    ``tune_table``: the ``[tune]`` table (default: ``loaded.config["tune"]``); ``steps`` overrides its
    ``steps``; ``smoke``: 2 iterations on a 5 s run with one realisation each (a check that the
    table is sound).  Writes ``out_dir/tune.json`` (settings, parameters, history, and the objective
    on the held-out realisations before and after) and ``out_dir/tune_history.png``; returns the
    :class:`~optim.tuning.TuneResult` (``attrs["held_out"]`` has before/after).
    """
    table = dict(tune_table if tune_table is not None else (loaded.config or {}).get("tune") or {})
    if not table:
        raise ValueError(f"{getattr(loaded, 'path', 'system file')}: no [tune] table")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    prob, _, test, settings = problem_from_table(loaded, table, smoke=smoke)
    n_steps = 2 if smoke else int(steps if steps is not None else table.get("steps", 40))
    u0 = prob.parameters.u0()
    res = tune(jax.jit(prob.loss), u0, parameters=prob.parameters, method=table.get("method", "adam"), steps=n_steps,
               learning_rate=float(table.get("learning_rate", 0.1)), schedule_kind=table.get("schedule", "cosine"),
               gradient_mode=table.get("gradient", "reverse"), progress=progress, out=out_dir / "tune.json",
               attrs={"settings": settings, "parameters": prob.parameters.describe(),
                      "system_file": str(getattr(loaded, "path", "") or "")})
    if test is not None:
        per = jax.jit(lambda u: prob.per_realisation(u, test))
        before, after = np.asarray(per(u0)), np.asarray(per(jnp.asarray(res.u)))
        agg = lambda v: float(obj.aggregate(jnp.asarray(v), prob.aggregate))  # noqa: E731
        res.attrs["held_out"] = {"before": before.tolist(), "after": after.tolist(), "objective_before": agg(before),
                                 "objective_after": agg(after), "improvement": 1.0 - agg(after) / agg(before)}
        if progress is not None:
            progress(f"[tune] held-out ({len(before)} realisations): {agg(before):.5g} -> {agg(after):.5g} "
                     f"({100 * (1 - agg(after) / agg(before)):.1f} % lower)")
    res.to_json(out_dir / "tune.json")
    plot_history(res, out_dir / "tune_history.png")
    return res


def plot_history(res, path, title: str | None = None):
    """Loss and parameter values (relative to their initial values) against the iteration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [h["iteration"] for h in res.history]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    axes[0].plot(it, [h["loss"] for h in res.history], "o-", ms=3)
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel("training objective")
    axes[0].grid(alpha=0.3)
    for name in res.names:
        x0 = res.initial_values[name]
        vals = np.array([h["values"][name] for h in res.history])
        axes[1].plot(it, vals / x0 if x0 else vals, label=name + ("" if x0 else " (absolute)"))
    axes[1].set_xlabel("iteration")
    axes[1].set_ylabel("value / initial value")
    axes[1].legend(fontsize=8)
    axes[1].grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_json(path, data):
    Path(path).write_text(json.dumps(data, indent=1, default=lambda x: np.asarray(x).tolist()))
