"""optim: objectives, gradients through the fixed-step simulation against central differences,
bounds, and a short tuning loop.

Gradient tolerance 1e-4 relative, central differences with a relative step of 1e-5 in the
parameters' unconstrained (O(1)) variables: the truncation error ~ h² |f'''| / 6 ≈ 1e-10 and the
round-off ~ ε |f| / h ≈ 1e-11 in float64 (ε ≈ 2e-16), so the comparison is limited by neither; the
fixed step makes the simulated map smooth in the parameters (no step-size control to switch).
"""

import equinox as eqx
import jax
import jax.extend  # noqa: F401  (jax.extend.core)
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd import optim  # noqa: E402
from jaxmbd.optim import objectives as obj  # noqa: E402
from jaxmbd.optim.examples import small_crane_vessel  # noqa: E402
from jaxmbd.hydro import RegularWave, SeaState  # noqa: E402
from jaxmbd.simulation import Integrator, solve  # noqa: E402


@pytest.fixture(scope="module")
def problem():
    sea = SeaState(regular=RegularWave(2.0, 8.0, np.deg2rad(60.0)))
    system, qg = small_crane_vessel(sea)
    q0 = jax.jit(lambda q: optim.equilibrate(system, q, n_newton=4))(qg)
    ps = optim.ParameterSet([
        optim.Parameter("kp", "mc.kp", 1e9, lower=0.0),
        optim.Parameter("kd", "mc.kd", 2e8, lower=0.0),
        optim.Parameter("EA", "hoist.EA", 3e7, lower=1e6),
        optim.Parameter("c", "hoist.damping", 2e4, lower=0.0),
        optim.Parameter("y", "placement.platform_base.y", 0.0, lower=-5.0, upper=5.0),
        optim.Parameter("T", "waves.regular.period", 8.0, lower=4.0, upper=15.0),
    ])
    terms = [
        obj.measure(obj.wrench("king_base", "moment"), "smooth_max", scale=1e6, sharpness=20.0),
        obj.measure(obj.wrench("platform_base", "fy"), "smooth_max_abs", scale=1e5, sharpness=20.0),
        obj.measure(obj.sway("hoist"), "rms", scale=0.01),
        obj.measure(obj.tension("hoist"), "daf", sharpness=50.0),
        obj.measure(obj.wrench("king_base", "nx"), "p_norm", scale=1e6, p=8.0),
        obj.upper_limit_penalty(obj.tension("hoist"), 1.962e5, sharpness=50.0),
    ]
    ts = optim.time_grid(8.0, 0.1, 0.05)
    prob = optim.Problem(system, ps, obj.weighted_sum([(1.0, t) for t in terms]), q0, ts,
                         Integrator("heun", dt=0.05), equilibrium_newton=1)
    return prob, terms


def test_objectives_basic():
    x = jnp.linspace(0.0, 1.0, 101)
    m = obj.smooth_max(x, 50.0)
    assert float(x.max()) - np.log(101) / 50 <= float(m) <= 1.0
    assert abs(float(obj.rms(jnp.ones(5) * 3.0)) - 3.0) < 1e-12
    assert float(obj.p_norm(x, 16.0)) < 1.0 and float(obj.p_norm(x, 16.0)) > float(obj.rms(x))
    v = jnp.arange(10.0)
    assert float(obj.cvar(v, 0.8)) == pytest.approx(8.5)
    assert float(obj.cvar(v, 0.0)) == pytest.approx(4.5)
    assert float(obj.aggregate(v, "cvar0.9")) == pytest.approx(9.0)
    g = jax.grad(lambda v: obj.cvar(v, 0.75))(jnp.array([3.0, 1.0, 4.0, 2.0]))
    assert np.allclose(g, [0.0, 0.0, 1.0, 0.0])
    assert float(obj.upper_limit_penalty(lambda o: o["x"], 2.0)({"x": x})) < 1e-10


def test_parameter_transforms_roundtrip():
    for p in (optim.Parameter("a", "x.y", 3.0, lower=1.0, upper=10.0), optim.Parameter("b", "x.y", 3.0, lower=1.0),
              optim.Parameter("c", "x.y", 3.0, transform="log"), optim.Parameter("d", "x.y", 0.0)):
        assert float(p.to_value(0.0)) == pytest.approx(p.initial)
        assert float(p.to_value(p.to_u(5.0))) == pytest.approx(5.0)
    p = optim.Parameter("e", "x.y", 3.0, lower=1.0, upper=10.0, transform="clip")
    assert float(p.to_value(p.project(jnp.asarray(100.0)))) == pytest.approx(10.0)


@pytest.mark.slow
def test_gradients_match_central_differences(problem):
    """Every objective term w.r.t. MC gains, rope stiffness and damping, crane offset and wave period,
    by reverse mode (checkpointed fixed-step solve) against central differences."""
    prob, terms = problem
    u = prob.parameters.u0() + 0.05 * jnp.arange(6.0)  # away from the initial point

    def stacked(u):
        outs = prob.outputs(u)
        return jnp.stack([t(outs) for t in terms])

    f = jax.jit(stacked)
    jac = np.asarray(jax.jit(jax.jacrev(stacked))(u))
    f0 = np.asarray(f(u))
    h = 1e-5
    worst = 0.0
    for i in range(u.shape[0]):
        e = jnp.zeros_like(u).at[i].set(h)
        fd = (np.asarray(f(u + e)) - np.asarray(f(u - e))) / (2 * h)
        for k in range(len(terms)):
            # Central differences resolve a derivative only above their round-off floor
            # ε |f| / h ≈ 2e-11 |f|; to check 1e-4 relative the derivative must be 1e4 times that,
            # about 2e-7 |f|. Pairs below (e.g. the penalty, zero inside its limit) are skipped.
            if abs(fd[k]) < 1e-6 * max(1.0, abs(f0[k])):
                continue
            rel = abs(jac[k, i] - fd[k]) / abs(fd[k])
            worst = max(worst, rel)
            assert rel < 1e-4, (prob.parameters.names[i], getattr(terms[k], "label", k), jac[k, i], fd[k])
    print(f"worst relative gradient error {worst:.2e}")


def test_equilibrium_steps_hold_what_nothing_acts_on(problem):
    """The payload hangs at its centre of gravity: nothing acts on its rotations at rest, so the Jacobian's
    rows there are round-off (exactly zero by the articulated-body recursion, some 1e-14 by the mass-matrix
    route that derivatives take).  The Newton step holds them: the start is the same whichever route
    evaluated it (the primal under jax.jvp against a plain call, to 1e-12 m or rad; the shifted solve alone
    moved the payload by 1e-5 rad under jvp and 5e-6 m along x), and its derivative agrees with central
    differences (Richardson-extrapolated, 1e-7 of the largest component; the differences' own spread is 1e-8)."""
    from jaxmbd.optim.rollout import equilibrate

    prob, _ = problem
    u = prob.parameters.u0() + 0.02
    e = jnp.zeros_like(u).at[0].set(1.0)  # kp

    def start(u):
        return equilibrate(prob.system_at(u), prob.q0, n_newton=1, params=prob.params)

    f = jax.jit(start)
    plain = np.asarray(f(u))
    primal, tangent = (np.asarray(x) for x in jax.jit(lambda u: jax.jvp(start, (u,), (e,)))(u))
    np.testing.assert_allclose(primal, plain, rtol=0, atol=1e-12)
    d = [(np.asarray(f(u + h * e)) - np.asarray(f(u - h * e))) / (2 * h) for h in (2e-4, 1e-4)]
    rich = (4 * d[1] - d[0]) / 3
    np.testing.assert_allclose(tangent, rich, rtol=0, atol=1e-7 * np.abs(rich).max())


def test_auto_gradient_mode():
    """"auto" is forward mode up to FORWARD_MODE_MAX_PARAMETERS parameters and reverse mode beyond; on a
    quadratic with a known gradient all three modes agree to rounding (1e-12 relative)."""
    nmax = optim.FORWARD_MODE_MAX_PARAMETERS
    assert optim.gradient_mode_for("auto", nmax) == "forward"
    assert optim.gradient_mode_for("auto", nmax + 1) == "reverse"
    assert optim.gradient_mode_for("reverse", 1) == "reverse"
    with pytest.raises(ValueError, match="'adjoint'.*'auto', 'reverse' or 'forward'"):
        optim.value_and_grad(lambda u: u @ u, "adjoint")
    for n in (nmax, nmax + 1):
        A = jnp.asarray(np.random.default_rng(n).normal(size=(n, n)))
        u = jnp.linspace(-1.0, 1.0, n)

        def loss(u):
            return 0.5 * u @ (A.T @ A) @ u

        exact = A.T @ A @ u
        for mode in ("auto", "forward", "reverse"):
            v, g = jax.jit(optim.value_and_grad(loss, mode))(u)
            assert float(v) == pytest.approx(float(loss(u)), rel=1e-12)
            np.testing.assert_allclose(g, exact, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(exact))))


@pytest.mark.slow
def test_forward_mode_matches_reverse(problem):
    prob, _ = problem
    u = prob.parameters.u0() + 0.02
    v1, g1 = jax.jit(optim.value_and_grad(prob.loss, "reverse"))(u)
    v2, g2 = jax.jit(optim.value_and_grad(prob.loss, "forward"))(u)
    assert float(v1) == pytest.approx(float(v2), rel=1e-12)
    assert np.allclose(g1, g2, rtol=1e-8, atol=1e-12 * float(jnp.max(jnp.abs(g1))))


@pytest.mark.slow
def test_tune_reduces_loss(problem, tmp_path):
    import dataclasses

    prob, _ = problem
    sub = optim.ParameterSet(prob.parameters.parameters[:2])  # the two MC gains
    p2 = dataclasses.replace(prob, parameters=sub, objective=obj.measure(obj.sway("hoist"), "rms", scale=0.01))
    res = optim.tune(jax.jit(p2.loss), sub.u0(), parameters=sub, steps=4, learning_rate=0.2, progress=None,
                     out=tmp_path / "tune.json")
    assert res.loss < res.initial_loss
    assert res.gradient_mode == "forward"  # "auto" with two parameters
    assert (tmp_path / "tune.json").exists() and len(res.history) == 5
    res2 = optim.tune(jax.jit(p2.loss), sub.u0(), parameters=sub, method="lbfgs", steps=2, progress=None)
    assert res2.loss <= res2.initial_loss


@pytest.mark.slow
def test_crane_vessel_tuning_study_smoke(tmp_path):
    """studies/tuning/crane_vessel.py --smoke: Cibicik et al. (2019)'s full system, one iteration, a report and plots
    (about 3 minutes of compiles on two cores, so under ``-m slow``)."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from studies.tuning import crane_vessel

    rep = crane_vessel.main(["--smoke", "--out", str(tmp_path)])
    assert np.isfinite(rep["held_out_objective_after"]) and rep["n_iterations"] == 1
    assert json.loads((tmp_path / "cv_report.json").read_text())["parameters_after"].keys() == {"mc_kp", "mc_kd", "hook_damping"}
    assert (tmp_path / "cv_timeseries.png").stat().st_size > 0


def _lazy_outputs_case():
    sea = SeaState(regular=RegularWave(2.0, 8.0, np.deg2rad(60.0)))
    system, qg = small_crane_vessel(sea)
    v = jnp.zeros(system.model.nv)
    y0 = (qg, v, system.initial_states(qg, v))
    ts = optim.time_grid(1.0, 0.1, 0.05)
    waves = system.waves.realise(jax.random.key(0))
    ys = solve(system, y0, ts, integrator=Integrator("heun", dt=0.05), waves=waves).ys
    return system, waves, ts, ys


@pytest.mark.slow
def test_lazy_outputs_compute_only_what_is_read():
    """``outputs_of(..., lazy=True)``: a key of one group computes that group alone, the values equal
    the full dict's exactly (same arithmetic), iteration computes every group, and a missing key is a
    KeyError naming it."""
    system, waves, ts, ys = _lazy_outputs_case()
    full = optim.outputs_of(system, ts, ys, waves)
    lazy = optim.outputs_of(system, ts, ys, waves, lazy=True)
    groups = system.output_groups()
    assert "joint" in groups and len(groups) >= 3
    one = next(k for k in full if not k.startswith("joint/"))
    np.testing.assert_array_equal(lazy[one], full[one])
    assert lazy.computed == {one.split("/")[0]}
    w = next(k for k in full if k.startswith("joint/"))
    np.testing.assert_array_equal(lazy[w], full[w])
    assert "joint" in lazy.computed
    assert sorted(lazy) == sorted(full) and lazy.computed == set(groups)
    assert "nope/x" not in lazy
    with pytest.raises(KeyError, match="nope"):
        lazy["nope/x"]


def _short_regular_wave_run():
    """The small crane vessel in a regular wave from 60°: (system, y0 at rest, waves, 2 s of saves every 0.2 s)."""
    sea = SeaState(regular=RegularWave(2.0, 8.0, np.deg2rad(60.0)))
    system, qg = small_crane_vessel(sea)
    v = jnp.zeros(system.model.nv)
    y0 = (qg, v, system.initial_states(qg, v))
    waves = system.waves.realise(jax.random.key(0))
    ts = optim.time_grid(2.0, 0.2, 0.05)
    return system, y0, waves, ts


@pytest.mark.slow  # 13 s; outputs at the saves stay in the default suite through every run
def test_outputs_from_the_solvers_derivatives():
    """``solve(..., dynamics=True)``: the same states as without, and joint wrenches built from the
    solver's own (dy/dt, f_ext) at the saves equal those from a fresh evaluation there, to 1e-12
    relative (the same arithmetic; the first stage of each step evaluates the saved state)."""
    system, y0, waves, ts = _short_regular_wave_run()
    ts = tuple(map(float, ts))  # static: each run below is one compiled program (op by op: hundreds of compiles)
    for method in ("rk4",):  # the stage loop is the same for every tableau
        integ = Integrator(method, dt=0.05)
        run = eqx.filter_jit(lambda system, y0, waves, dynamics: solve(system, y0, ts, integrator=integ, waves=waves,
                                                                       dynamics=dynamics))
        ys = run(system, y0, waves, False).ys
        ys2, _, ds = run(system, y0, waves, True)
        for a, b in zip(ys, ys2):
            np.testing.assert_array_equal(a, b)
        assert ds[1].shape == (len(ts), system.model.n_bodies, 6)
        outputs = eqx.filter_jit(lambda system, ys, waves, ds: optim.outputs_of(system, jnp.asarray(ts), ys, waves, dynamics=ds))
        fresh = outputs(system, ys, waves, None)
        reused = outputs(system, ys, waves, ds)
        assert sorted(fresh) == sorted(reused)
        for k in fresh:
            scale = np.max(np.abs(fresh[k])) + 1e-30
            assert np.max(np.abs(np.asarray(reused[k]) - np.asarray(fresh[k]))) <= 1e-12 * scale, k


@pytest.mark.slow
def test_solver_derivatives_keep_float32():
    """A float32 system integrated with ``dynamics=True`` stays float32 (states and derivatives), and its
    outputs agree with float64 to 1e-3 of each output's range over a short run."""
    def cast(x):
        if isinstance(x, (jax.Array, np.ndarray, np.generic)) and jnp.issubdtype(x.dtype, jnp.complexfloating):
            return jnp.asarray(x, jnp.complex64)
        if isinstance(x, (jax.Array, np.ndarray, np.generic)) and jnp.issubdtype(x.dtype, jnp.floating):
            return jnp.asarray(x, jnp.float32)
        return x

    sea = SeaState(regular=RegularWave(1.0, 8.0, 0.0))
    system, qg = small_crane_vessel(sea)
    ts = optim.time_grid(1.0, 0.2, 0.05)
    out = {}
    for name, s, q in (("f64", system, qg), ("f32", jax.tree_util.tree_map(cast, system), qg.astype(jnp.float32))):
        v = jnp.zeros(s.model.nv, q.dtype)
        y0 = (q, v, s.initial_states(q, v))
        waves = jax.tree_util.tree_map(cast, s.waves.realise(jax.random.key(0))) if name == "f32" else s.waves.realise(jax.random.key(0))
        ys, _, ds = solve(s, y0, ts, integrator=Integrator("rk4", dt=0.05), waves=waves, dynamics=True)
        if name == "f32":
            assert all(x.dtype == jnp.float32 for x in jax.tree_util.tree_leaves((ys, ds)))
        out[name] = optim.outputs_of(s, ts, ys, waves, dynamics=ds)
    for k, x in out["f64"].items():
        x = np.asarray(x)
        rng = np.max(np.abs(x)) + 1e-12
        assert np.max(np.abs(np.asarray(out["f32"][k], dtype=float) - x)) <= 1e-3 * rng, k


def _checkpoints_in(jaxpr) -> int:
    """Checkpointed (remat) calls in a jaxpr, nested ones included."""
    n = 0
    for eqn in jaxpr.eqns:
        n += eqn.primitive.name in ("checkpoint", "remat", "remat2")
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            n += _checkpoints_in(sub)
    return n


@pytest.mark.slow
def test_checkpoint_modes_give_the_same_gradient(monkeypatch):
    """Reverse mode through a fixed-step run keeping every stage's state (``checkpoint="steps"``) and
    keeping one state per save (``"saves"``, the steps run again) is the same discrete adjoint:
    gradients agree to 1e-10 relative (the same operations; only their scheduling differs).
    ``"auto"`` keeps the stages within the memory budget and switches to the saves beyond it."""
    import jaxmbd.simulation as sim

    system, y0, waves, ts = _short_regular_wave_run()

    def loss(scale, checkpoint):
        ys, _, _ = solve(system, (y0[0], y0[1] + scale * 0.01, y0[2]), ts, waves=waves,
                      integrator=Integrator("rk4", dt=0.05, checkpoint=checkpoint))
        return jnp.sum(ys[1] ** 2) + jnp.sum(ys[0][:, :3] ** 2)

    grads = {c: np.asarray(jax.jit(jax.grad(loss), static_argnums=1)(jnp.ones(system.model.nv), c))
             for c in ("steps", "saves")}
    scale = np.max(np.abs(grads["steps"]))
    assert scale > 0
    np.testing.assert_allclose(grads["saves"], grads["steps"], rtol=1e-10, atol=1e-12 * scale)

    count = {c: _checkpoints_in(jax.make_jaxpr(jax.grad(loss), static_argnums=1)(jnp.ones(system.model.nv), c).jaxpr)
             for c in ("steps", "saves", "auto")}
    assert count["saves"] > count["steps"] and count["auto"] == count["steps"]
    monkeypatch.setattr(sim, "STAGE_MEMORY_BUDGET", 0)
    assert _checkpoints_in(jax.make_jaxpr(jax.grad(loss), static_argnums=1)(jnp.ones(system.model.nv), "auto").jaxpr) == count["saves"]

    with pytest.raises(ValueError, match="Integrator.checkpoint"):
        Integrator("rk4", dt=0.05, checkpoint="stages")
