"""``jaxmbd tune SYSTEM.toml``: tune the parameters a system file's ``[tune]`` table names.

Schema (all keys but ``parameters`` and ``objective`` optional)::

    [tune]
    method = "adam"            # or "lbfgs"
    steps = 40
    learning_rate = 0.1        # in the unconstrained variables (a unit step ~ the initial value)
    schedule = "cosine"        # "cosine", "exponential", "constant" (Adam)
    gradient = "auto"          # forward mode (one JVP per parameter) up to 5 parameters, reverse beyond;
                               # or "forward", "reverse"
    duration = 60.0            # s per training run (default: [simulation] duration)
    save_dt = 0.1              # s (default: [simulation] save_dt, else the step)
    dt = 0.05                  # fixed RK4 step (default: the file's integrator step, else 0.05)
    n_train = 4                # training realisations (keys from seed)
    n_test = 4                 # held-out realisations (independent keys), evaluated before and after (0: none)
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
    measure = "smooth_max"     # smooth_max, smooth_max_abs, p_norm (with p), rms, std, mean, max, daf
    sharpness = 50
    scale = "initial"          # so that the term starts at 1 (or a number: the output is divided by it)
    weight = 1.0
    start_time = 10.0          # s left out at the start (a wave ramp); or start = saves

    [[tune.objective]]
    output = "hoist/tension"
    upper = 2.0e5              # constraint: smooth max below the limit (quadratic penalty outside)
    weight = 10.0

A term with ``maximise = "workability"`` or ``"limiting_hs"`` tunes the operation's decision instead
(:mod:`jaxmbd.optim.operability_tune`, its own schema).  The held-out realisations exist only for an
irregular sea (``[waves]`` with a spectrum).  Every problem in the table is a
:class:`~jaxmbd.io.system_file.SystemFileError` naming the file and the field
(``tune.parameters[0].path``), raised before anything is compiled; ``jaxmbd tune`` prints it as one line
and exits with status 2.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..io.system_file import TableReader
from ..simulation import Integrator
from . import objectives as obj
from . import params as prm
from .operability_tune import is_operability_table, read_operability_tune, tune_operability
from .rollout import Problem, time_grid
from .tuning import tune

_TUNE_KEYS = ("method", "steps", "learning_rate", "schedule", "gradient", "duration", "save_dt", "dt", "n_train",
              "n_test", "seed", "aggregate", "equilibrium_newton", "parameters", "objective")
_PARAMETER_KEYS = ("name", "path", "paths", "initial", "lower", "upper", "transform")
_TRANSFORMS = ("sigmoid", "softplus", "log", "clip", "linear")
_TERM_KEYS = ("output", "component", "measure", "sharpness", "p", "scale", "weight", "start", "start_time", "upper")
_MEASURES = ("smooth_max", "smooth_max_abs", "p_norm", "rms", "std", "mean", "max", "daf")
_VECTOR_COMPONENTS = ("moment", "force", "moment3", "force3") + tuple(obj.WRENCH_COMPONENTS)

#: max |dv/dt| (m/s², rad/s²) at the start of a run above which the tuned run does not start at rest
EQUILIBRIUM_TOLERANCE = 1e-6


def _reader(loaded) -> TableReader:
    path = getattr(loaded, "path", None)
    return TableReader(str(path) if path else "<system table>", Path(path).parent if path else Path.cwd())


def read_tune_table(loaded, table: dict) -> dict:
    """Check a ``[tune]`` table against the loaded system and return it with every default filled in.

    Every problem is one :class:`~jaxmbd.io.system_file.SystemFileError` naming the file, the field
    (``tune.parameters[1].path``, ``tune.objective[0].measure``) and what was expected, before
    anything is compiled.  Objective terms come back with ``start_time`` (s) turned into ``start``
    (saves) and ``component`` checked against the output's shape.
    """
    r = _reader(loaded)
    f = "tune"
    if is_operability_table(table):
        r.fail(f"{f}.objective", "maximise (the operation's workability or limiting Hs) is tuned by jaxmbd tune "
               "(tune_from_file), not as a rollout problem")
    t = r.table(table, f, _TUNE_KEYS)
    sim, system = loaded.simulation, loaded.system
    out = dict(
        method=r.string(t, f, "method", "adam", choices=("adam", "lbfgs")),
        steps=r.integer(t, f, "steps", 40, ge=0),
        learning_rate=r.number(t, f, "learning_rate", 0.1, gt=0.0),
        schedule=r.string(t, f, "schedule", "cosine", choices=("cosine", "exponential", "constant")),
        gradient=r.string(t, f, "gradient", "auto", choices=("auto", "reverse", "forward")),
        duration=r.number(t, f, "duration", sim.duration, gt=0.0),
        n_train=r.integer(t, f, "n_train", 4, ge=1),
        n_test=r.integer(t, f, "n_test", 4, ge=0),
        seed=r.integer(t, f, "seed", sim.seed, ge=0),
        equilibrium_newton=r.integer(t, f, "equilibrium_newton", 2 if sim.static_equilibrium else 0, ge=0),
    )
    dt = r.number(t, f, "dt", None, gt=0.0)
    out["dt"] = float(dt or getattr(loaded.integrator, "dt", None) or 0.05)
    save_dt = r.number(t, f, "save_dt", None, gt=0.0)
    out["save_dt"] = float(save_dt or sim.save_dt or out["dt"])
    if out["save_dt"] < out["dt"] * (1 - 1e-9):
        r.fail(f"{f}.save_dt", f"must be >= dt = {out['dt']:g} s (states are saved on the step grid), got {out['save_dt']:g}")
    if out["duration"] < out["save_dt"]:
        r.fail(f"{f}.duration", f"must be >= save_dt = {out['save_dt']:g} s, got {out['duration']:g}")
    agg = r.string(t, f, "aggregate", "mean")
    try:
        obj.aggregate(jnp.zeros(2), agg)
        ok = agg in ("mean", "max") or 0.0 <= float(agg[4:] or 0.8) < 1.0
    except ValueError:
        ok = False
    if not ok:
        r.fail(f"{f}.aggregate", f"unknown value {agg!r}; expected 'mean', 'max' or 'cvar<alpha>' with 0 <= alpha < 1 "
               "(e.g. 'cvar0.8': the mean of the worst 20 %)")
    out["aggregate"] = agg
    out["parameters"] = _read_parameters(r, system, r.tables(r.get(t, f, "parameters"), f"{f}.parameters"))
    out["objective"] = _read_objective(r, loaded, r.tables(r.get(t, f, "objective"), f"{f}.objective"), out)
    return out


def _read_parameters(r, system, tables) -> list[dict]:
    if not tables:
        r.fail("tune.parameters", "expected at least one [[tune.parameters]] entry")
    out, names = [], {}
    for i, p in enumerate(tables):
        f = f"tune.parameters[{i}]"
        entry = _read_parameter(r, system, p, f)
        if entry["name"] in names:
            r.fail(f"{f}.name", f"duplicate parameter name {entry['name']!r} (also tune.parameters[{names[entry['name']]}])")
        names[entry["name"]] = i
        out.append(entry)
    return out


def _leaf_values(r, system, p, f, key, paths) -> list[float]:
    """The current value of each leaf a parameter names (one value per leaf, tied leaves equal)."""
    values = []
    for path in paths:
        try:
            leaf = prm.get_leaf(system, path)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            r.fail(f"{f}.{key}", str(msg))
        if not jnp.issubdtype(jnp.asarray(leaf).dtype, jnp.floating):
            r.fail(f"{f}.{key}", f"{path!r} is not a real-valued leaf of the system")
        arr = np.asarray(leaf, dtype=float).reshape(-1)
        if arr.size == 0:
            r.fail(f"{f}.{key}", f"{path!r} is an empty array")
        if np.any(arr != arr[0]):
            r.fail(f"{f}.{key}", f"{path!r} holds {arr.size} values that differ; a parameter sets every entry to one "
                   "value: name one entry of a list with [i]")
        values.append(float(arr[0]))
    if "initial" not in p and any(v != values[0] for v in values):
        r.fail(f"{f}.paths", f"the tied leaves have different values {values}; give initial (every leaf starts "
               "there) or tie equal leaves")
    return values


def _read_parameter(r, system, p, f) -> dict:
    r.table(p, f, _PARAMETER_KEYS)
    if ("path" in p) == ("paths" in p):
        r.fail(f, "give either path (one leaf) or paths (leaves tied to one value)")
    key = "path" if "path" in p else "paths"
    paths = [r.string(p, f, key)] if key == "path" else r.strings(p, f, key)
    if not paths:
        r.fail(f"{f}.paths", "expected at least one path")
    values = _leaf_values(r, system, p, f, key, paths)
    name = r.string(p, f, "name", paths[0])
    lower = r.number(p, f, "lower", None)
    upper = r.number(p, f, "upper", None)
    if lower is not None and upper is not None and not lower < upper:
        r.fail(f"{f}.lower", f"must be below upper = {upper:g}, got {lower:g}")
    transform = r.string(p, f, "transform", None, choices=_TRANSFORMS)
    given = "initial" in p
    initial = r.number(p, f, "initial", values[0])
    where = f"{f}.initial" if given else f"{f}.{key}"
    what = f"initial value {initial:g}" if given else f"the system's value {initial:g} (no initial given)"
    _check_bounds(r, f, where, what, transform, initial, lower, upper)
    entry = {"name": name, "paths": paths, "initial": initial, "lower": lower, "upper": upper}
    if transform:
        entry["transform"] = transform
    return entry


def _check_bounds(r, f, where, what, transform, initial, lower, upper):
    """The transform has the bounds it needs and the initial value lies inside them."""
    kind = transform or ("sigmoid" if lower is not None and upper is not None else "softplus" if lower is not None else "linear")
    if kind == "sigmoid" and (lower is None or upper is None):
        r.fail(f"{f}.transform", "'sigmoid' needs both lower and upper")
    if kind == "softplus" and lower is None:
        r.fail(f"{f}.transform", "'softplus' needs lower")
    if kind == "log" and not initial > 0:
        r.fail(where, f"'log' needs a positive initial value, got {what}")
    if kind != "clip":
        if lower is not None and not initial > lower:
            r.fail(where, f"{what} must lie above lower = {lower:g}")
        if upper is not None and not initial < upper:
            r.fail(where, f"{what} must lie below upper = {upper:g}")


def _output_shapes(system) -> dict:
    """Output name -> shape at rest (shapes only: nothing is computed)."""
    model = system.model
    q = jnp.asarray(model.neutral(), dtype=float)
    v = jnp.zeros(model.nv)

    def outs():
        return system.outputs(0.0, (q, v, system.initial_states(q, v)))

    return {k: tuple(x.shape) for k, x in jax.eval_shape(outs).items()}


def _read_objective(r, loaded, tables, settings) -> list[dict]:
    if not tables:
        r.fail("tune.objective", "expected at least one [[tune.objective]] term")
    shapes = _output_shapes(loaded.system)
    n_saves = len(time_grid(settings["duration"], settings["save_dt"], settings["dt"]))
    save_dt = max(1, int(round(settings["save_dt"] / settings["dt"]))) * settings["dt"]
    out = []
    for i, term in enumerate(tables):
        f = f"tune.objective[{i}]"
        r.table(term, f, _TERM_KEYS)
        t = {"output": _read_output(r, term, f, shapes)}
        component = _read_component(r, term, f, t["output"], shapes[t["output"]])
        if component is not None:
            t["component"] = component
        t["start"] = _read_start(r, term, f, save_dt, n_saves, settings["duration"])
        t["weight"] = r.number(term, f, "weight", 1.0)
        t |= _read_measure(r, term, f)
        t["sharpness"] = r.number(term, f, "sharpness", 50.0, gt=0.0)
        out.append(t)
    return out


def _read_output(r, term, f, shapes) -> str:
    name = r.string(term, f, "output")
    if name not in shapes:
        r.fail(f"{f}.output", f"unknown output {name!r}; the system's outputs: {', '.join(sorted(shapes))}")
    if len(shapes[name]) > 1:
        r.fail(f"{f}.output", f"output {name!r} has shape {shapes[name]}; objectives take scalar or vector outputs")
    return name


def _read_component(r, term, f, name, shape):
    """The component of a vector output a term reads (a label of a wrench or an index), None for a scalar."""
    expected = (", ".join(_VECTOR_COMPONENTS) + " or " if shape == (6,) else "") + (f"an index 0..{shape[0] - 1}" if shape else "")
    if "component" not in term:
        if shape != ():
            r.fail(f"{f}.component", f"missing: output {name!r} has shape {shape}; give component ({expected})")
        return None
    c = term["component"]
    if shape == ():
        r.fail(f"{f}.component", f"output {name!r} is a scalar: leave component out")
    if isinstance(c, str):
        if shape != (6,) or c not in _VECTOR_COMPONENTS:
            r.fail(f"{f}.component", f"unknown component {c!r} of output {name!r} (shape {shape}); expected {expected}")
    elif isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < shape[0]:
        r.fail(f"{f}.component", f"expected {expected} for output {name!r}, got {c!r}")
    return c


def _read_start(r, term, f, save_dt, n_saves, duration) -> int:
    if "start" in term and "start_time" in term:
        r.fail(f"{f}.start_time", "give either start (saves) or start_time (s), not both")
    if "start_time" in term:
        start = int(round(r.number(term, f, "start_time", ge=0.0) / save_dt))
    else:
        start = r.integer(term, f, "start", 0, ge=0)
    if start >= n_saves:
        r.fail(f"{f}.start_time" if "start_time" in term else f"{f}.start",
               f"leaves no saves: the run has {n_saves} saves over {duration:g} s")
    return start


def _read_measure(r, term, f) -> dict:
    """A constraint term's ``upper``, or an objective term's ``measure``, ``scale`` and ``p``."""
    if "upper" in term:
        for k in ("measure", "scale", "p"):
            if k in term:
                r.fail(f"{f}.{k}", "a constraint term (upper) takes no measure, scale or p: its penalty is "
                       "the smooth maximum of output / upper beyond 1")
        return {"upper": r.number(term, f, "upper", gt=0.0)}
    t = {"measure": r.string(term, f, "measure", "smooth_max", choices=_MEASURES)}
    if t["measure"] == "daf" and "scale" in term:
        r.fail(f"{f}.scale", "a 'daf' term is relative to its first save already: leave scale out")
    scale = term.get("scale", 1.0)
    if scale != "initial":
        scale = r.number(term, f, "scale", 1.0)
        if scale == 0.0:
            r.fail(f"{f}.scale", "must not be 0 (a number or \"initial\")")
    t["scale"] = scale
    t["p"] = r.number(term, f, "p", 8.0, gt=0.0)
    return t


class _Runs:
    """Forward runs at a parameter vector over a batch of realisations, returning only the outputs the
    objective reads and the equilibrium residual at the start: one compile serves the reference
    values of ``scale = "initial"`` (training keys) and the held-out evaluation (test keys, in batches
    of the same size, the last one padded)."""

    def __init__(self, prob, names, batch_keys):
        self.names = tuple(names)
        self.batch = None if batch_keys is None else len(batch_keys)

        def run(u, keys):
            system = prob.system_at(u)
            y0 = prob.initial_state(system)

            def one(k):
                outs = prob.run_one(system, y0, k, lazy=True)
                return {n: outs[n] for n in self.names}

            sig = jax.tree_util.tree_map(lambda x: x[None], one(None)) if keys is None else jax.vmap(one)(keys)
            return sig, prob.start_residual(system, y0)

        self._run = jax.jit(run)

    def __call__(self, u, keys):
        """(list of per-realisation output dicts (numpy), max equilibrium residual)."""
        if keys is None:
            sig, res = self._run(u, None)
            return [{n: np.asarray(v[0]) for n, v in sig.items()}], float(res)
        n = len(keys)
        out, res = [], 0.0
        for i in range(0, n, self.batch):
            chunk = keys[i:i + self.batch]
            m = len(chunk)
            if m < self.batch:  # pad with the first key: the same shapes, no second compile
                chunk = jnp.concatenate([chunk, jnp.repeat(chunk[:1], self.batch - m, axis=0)])
            sig, r = self._run(u, chunk)
            out += [{k: np.asarray(v[j]) for k, v in sig.items()} for j in range(m)]
            res = max(res, float(r))
        return out, res


def _initial_scale(r, i, term, outs):
    """The scale s with which the mean of the term over the realisations ``outs`` is 1: a fixed point of
    s <- s * mean(term at s) (one step for measures proportional to 1/s; a smooth maximum depends on its
    sharpness relative to the scaled signal and needs a few)."""
    s = 1.0
    for _ in range(100):
        f = obj.from_spec([dict(term, scale=s, weight=1.0)])
        m = float(np.mean([float(f(o)) for o in outs]))
        if not (np.isfinite(m) and m > 0):
            r.fail(f"tune.objective[{i}].scale", f"'initial': the term's value at the initial parameters is {m:g}; "
                   "a scale must be positive: give a number")
        s_new = s * m
        if abs(s_new - s) <= 1e-14 * abs(s_new):
            return s_new
        s = s_new
    return s


def problem_from_table(loaded, table: dict, *, smoke: bool = False, return_runs: bool = False):
    """(Problem, train keys, test keys, settings) from a loaded system file and its ``[tune]`` table
    (checked by :func:`read_tune_table`); ``return_runs`` appends the forward runs (:class:`_Runs`)."""
    r = _reader(loaded)
    cfg = read_tune_table(loaded, table)
    system = loaded.system
    sim = loaded.simulation
    dt, duration, save_dt = cfg["dt"], cfg["duration"], cfg["save_dt"]
    n_train, n_test = cfg["n_train"], cfg["n_test"]
    if smoke:
        duration, n_train, n_test = min(duration, 5.0), min(n_train, 1), min(n_test, 1)
    seed = cfg["seed"]
    ps = prm.from_spec(cfg["parameters"])
    ts = time_grid(duration, save_dt, dt)
    terms = [dict(t, start=min(t["start"], len(ts) // 2)) for t in cfg["objective"]]  # (smoke: a shorter run)
    q0 = loaded.start().q  # the one start solve of every run of the file (jaxmbd.run)
    stochastic = system.waves is not None and getattr(system.waves, "spectrum", None) is not None
    train = jax.random.split(jax.random.key(seed), n_train) if stochastic else None
    test = jax.random.split(jax.random.fold_in(jax.random.key(seed), 1), n_test) if stochastic and n_test else None
    prob = Problem(system, ps, None, jnp.asarray(q0), ts, Integrator("rk4", dt=dt),
                   keys=train, aggregate=cfg["aggregate"], equilibrium_newton=cfg["equilibrium_newton"],
                   equilibrium_free=sim.equilibrium_free)
    runs = _Runs(prob, sorted({t["output"] for t in terms}), train)
    # scale = "initial": every such term starts at 1 (its mean over the training realisations at u0)
    if any(t.get("scale") == "initial" for t in terms):
        outs, _ = runs(ps.u0(), train)
        terms = [dict(t, scale=_initial_scale(r, i, t, outs)) if t.get("scale") == "initial" else t
                 for i, t in enumerate(terms)]
    prob = dataclasses.replace(prob, objective=obj.from_spec(terms))
    settings = dict(duration=duration, save_dt=float(ts[1] - ts[0]) if len(ts) > 1 else save_dt, dt=dt,
                    n_train=n_train, n_test=n_test if test is not None else 0, seed=seed, method=cfg["method"],
                    steps=cfg["steps"], learning_rate=cfg["learning_rate"], schedule=cfg["schedule"],
                    gradient=cfg["gradient"], aggregate=cfg["aggregate"], equilibrium_newton=cfg["equilibrium_newton"],
                    scales={f"objective[{i}]": t.get("scale") for i, t in enumerate(terms) if "scale" in t})
    return (prob, train, test, settings) + ((runs,) if return_runs else ())


def tune_from_file(loaded, out_dir, *, tune_table: dict | None = None, steps: int | None = None, smoke: bool = False,
                   progress=print):
    """Tune the parameters of a loaded system file (:class:`jaxmbd.io.system_file.LoadedSystem`).

    ``tune_table``: the ``[tune]`` table (default: ``loaded.config["tune"]``); ``steps`` overrides its
    ``steps``; ``smoke``: 2 iterations on a 5 s run with one realisation each (a check that the
    table is sound).  Writes ``out_dir/tune.json`` (settings, parameters, history, the objective
    on the held-out realisations before and after, and the equilibrium residual at the start of
    the runs) and ``out_dir/tune_history.png``; returns the :class:`~optim.tuning.TuneResult`
    (``attrs["held_out"]`` has before/after).  A bad table raises
    :class:`~jaxmbd.io.system_file.SystemFileError` before anything is compiled.
    """
    table = tune_table if tune_table is not None else (loaded.config or {}).get("tune")
    if not table:
        _reader(loaded).fail("tune", "no [tune] table (parameters, objective, realisations); see jaxmbd/optim/from_file.py")
    out_dir = Path(out_dir)
    if is_operability_table(table):  # maximise the operation's workability or limiting Hs (jaxmbd.optim.operability_tune)
        res = tune_operability(loaded, read_operability_tune(_reader(loaded), loaded, table, _read_parameters), out_dir,
                               steps=steps, smoke=smoke, progress=progress)
        goal = res.attrs["objective"]
        plot_history(res, out_dir / "tune_history.png", key="objective", ylabel=f"{goal['maximise']} ({goal['unit']})")
        return res
    prob, train, test, settings, runs = problem_from_table(loaded, table, smoke=smoke, return_runs=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    n_steps = 2 if smoke else int(steps if steps is not None else settings["steps"])
    settings["steps"] = n_steps
    u0 = prob.parameters.u0()
    res = tune(jax.jit(prob.loss), u0, parameters=prob.parameters, method=settings["method"], steps=n_steps,
               learning_rate=settings["learning_rate"], schedule_kind=settings["schedule"],
               gradient_mode=settings["gradient"], progress=progress, out=out_dir / "tune.json",
               attrs={"settings": settings, "parameters": prob.parameters.describe(),
                      "system_file": str(getattr(loaded, "path", "") or "")})
    u1 = jnp.asarray(res.u)
    # held-out realisations (and the equilibrium residual at the start) before and after, by the forward
    # runs compiled for the reference values; without held-out keys, the training ones give the residual
    keys = test if test is not None else train
    (outs0, r0), (outs1, r1) = runs(u0, keys), runs(u1, keys)
    if test is not None:
        before = np.array([float(prob.objective(o)) for o in outs0])
        after = np.array([float(prob.objective(o)) for o in outs1])
        agg = lambda v: float(obj.aggregate(jnp.asarray(v), prob.aggregate))  # noqa: E731
        b, a = agg(before), agg(after)
        res.attrs["held_out"] = {"n": len(before), "before": before.tolist(), "after": after.tolist(),
                                 "objective_before": b, "objective_after": a,
                                 "improvement": 1.0 - a / b if b else float("nan")}
        if progress is not None:
            progress(f"[tune] held-out ({len(before)} realisations): {b:.5g} -> {a:.5g} ({100 * (1 - a / b):.1f} % lower)"
                     if b else f"[tune] held-out ({len(before)} realisations): {b:.5g} -> {a:.5g}")
    # the runs must start at rest: Newton steps that have not converged at the tuned parameters start
    # a transient that the optimiser may have exploited
    res.attrs["equilibrium_residual"] = {"before": r0, "after": r1, "tolerance": EQUILIBRIUM_TOLERANCE}
    if progress is not None and max(r0, r1) > EQUILIBRIUM_TOLERANCE:
        progress(f"[tune] warning: the runs do not start at rest (max |dv/dt| {r0:.2e} at the initial parameters, "
                 f"{r1:.2e} tuned): raise [tune] equilibrium_newton (now {prob.equilibrium_newton})"
                 + ("" if loaded.simulation.static_equilibrium else " or set [simulation] static_equilibrium = true"))
    res.to_json(out_dir / "tune.json")
    plot_history(res, out_dir / "tune_history.png")
    return res


def plot_history(res, path, title: str | None = None, *, key: str = "loss", ylabel: str = "training objective"):
    """The history's ``key`` (the loss) and the parameter values (relative to their initial values) against the
    iteration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [h["iteration"] for h in res.history]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    axes[0].plot(it, [h[key] for h in res.history], "o-", ms=3)
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel(ylabel)
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

