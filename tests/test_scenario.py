"""Scenarios: phases ended by state conditions (diffrax events with root finding) or time limits.

The analytic case: a block on an elastic rope hoisted by a winch at constant speed r from the steady
hoisting state.  With rope stiffness EA/L₀(t), L₀(t) = L₀ − r t and tension m g, the stretched length
is l = α L₀(t) with α = 1 + m g / EA, so the block rises at the constant speed α r and reaches the
height z* at t* = (L₀ + z*/α) / r exactly: every Runge-Kutta method integrates a linear-in-time
solution without truncation error, and the event time is then limited only by the root finder.
"""

import importlib.util
import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces import WireRope
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.scenario import Scenario, ScenarioError, ScenarioTimeLimit
from jaxmbd.simulation import Integrator
from jaxmbd.system import System

M, EA, L0, G = 1000.0, 1.0e8, 10.0, 9.81
ALPHA = 1.0 + M * G / EA
Z_TARGET = -5.0
INTEGRATOR = Integrator("tsit5", rtol=1e-10, atol=1e-10, max_steps=4096)
STUDY = pathlib.Path(__file__).resolve().parents[1] / "studies" / "goliath_crane" / "run.py"


def hoist_system():
    b = ModelBuilder()
    b.add_body("block", body=Body(M, (0, 0, 0), np.full(3, 10.0)), joint=mbd.Free())
    rope = WireRope(name="hoist", body_a="world", body_b="block", point_a=jnp.zeros(3), point_b=jnp.zeros(3),
                    EA=jnp.asarray(EA), length=jnp.asarray(L0), transition=jnp.asarray(1.0), winch=True)
    return System(b.build(), (rope,), name="hoist")


def steady_hoisting(system, r):
    """The block hanging at l = α L₀ and rising at α r: the exact constant-speed solution."""
    q = jnp.array([0.0, 0.0, -ALPHA * L0, 1.0, 0.0, 0.0, 0.0])
    v = jnp.zeros(6).at[2].set(ALPHA * r)
    return q, v, system.initial_states(q, v)


def hoist_phase(r, target=Z_TARGET, max_duration=40.0):
    return {"name": "hoisting-up", "set": {"hoist": {"payout_rate": -r}},
            "until": {"output": "block/z", "op": ">=", "value": target}, "max_duration": max_duration}


@eqx.filter_jit
@eqx.filter_jit  # one program for the three calls of the test below (the value, then two for the differences)
def _event_time_and_grad(system, r):
    def t_event(r):
        sc = Scenario.from_dict([hoist_phase(r)], system)
        return sc.solve(system, steady_hoisting(system, r), integrator=INTEGRATOR, save_dt=1.0).t_end[0]

    return jax.value_and_grad(t_event)(r)


@pytest.mark.slow  # 37 s (a gradient through an adaptive solve with events); the event times to 1e-8 s stay in the default suite
def test_event_time_and_its_gradient_match_the_analytic_hoist():
    """Event time to 1e-6 s (measured about 3e-9 s, the Tsit5 step error at rtol = atol = 1e-10 on this
    stiff rope); dt*/dr = −t*/r to 1e-5 relative; and jax.grad against central differences with
    h = 1e-3 m/s to 1e-4 relative (the difference quotient carries ~3e-9 s / h of event-time noise
    plus an O(h²/r²) = 4e-6 truncation error)."""
    r = 0.5
    t_star = (L0 + Z_TARGET / ALPHA) / r
    system = hoist_system()
    t, g = _event_time_and_grad(system, jnp.asarray(r))
    assert abs(float(t) - t_star) < 1e-6
    np.testing.assert_allclose(float(g), -t_star / r, rtol=1e-5)
    h = 1e-3
    fd = (float(_event_time_and_grad(system, jnp.asarray(r + h))[0])
          - float(_event_time_and_grad(system, jnp.asarray(r - h))[0])) / (2 * h)
    np.testing.assert_allclose(float(g), fd, rtol=1e-4)


def test_phases_carry_the_state_and_a_condition_that_never_fires_stops_at_its_time_limit():
    """Hoist until the height is reached, hold 1 s (winch stopped: L₀ constant to 1e-12 m), then a
    condition that cannot fire (the block 100 m up) ends at its 3 s limit with a warning and the run
    stops there; the last phase is never run.  Times to 1e-8 s of the analytic ones (the event time
    carries the ~3e-9 s integration error of the first test; later times add exact durations)."""
    system = hoist_system()
    r = 0.5
    sc = Scenario.from_dict({"name": "hoist-hold-stuck", "phases": [
        hoist_phase(r), {"name": "hold", "set": {"hoist": {"payout_rate": 0.0}}, "max_duration": 1.0},
        {"name": "stuck", "until": {"output": "block_z", "op": ">=", "value": 100.0}, "max_duration": 3.0},
        {"name": "never run", "max_duration": 5.0}]}, system)
    q, v, _ = steady_hoisting(system, r)
    with pytest.warns(ScenarioTimeLimit, match=r"phase 2 \('stuck'\) hit its time limit.*never run"):
        res = sc.run(system, q0=q, v0=v, save_dt=0.25, integrator=INTEGRATOR)
    t_star = (L0 + Z_TARGET / ALPHA) / r
    assert [e.trigger for e in res.events] == ["condition", "duration", "time limit"]
    np.testing.assert_allclose([e.time for e in res.events], [t_star, t_star + 1.0, t_star + 4.0], rtol=0, atol=1e-8)
    assert res.time[-1] == res.events[-1].time
    assert set(np.unique(res.phase)) == {0, 1, 2}
    hold = res.phase == 1
    L = res.outputs["hoist/unstretched_length"]
    assert np.ptp(L[hold]) < 1e-12
    assert L[hold][0] == pytest.approx(L0 - r * t_star, abs=1e-8)
    # the boundary appears twice: end of phase 0, start of phase 1, same time and state
    k = np.argmax(hold)
    assert res.time[k - 1] == res.time[k] and res.phase[k - 1] == 0
    assert np.all(np.diff(res.time) >= 0)


def test_a_condition_met_at_the_start_ends_the_phase_at_once_and_errors_name_the_problem():
    """A phase whose condition already holds has zero length (diffrax sees only sign changes, so this
    is checked before the solve); unknown elements, fields and outputs are refused with their names."""
    system = hoist_system()
    q, v, _ = steady_hoisting(system, 0.5)
    sc = Scenario.from_dict([hoist_phase(0.5, target=-50.0)], system)
    res = sc.run(system, q0=q, v0=v, save_dt=1.0, integrator=INTEGRATOR)
    assert res.events[0].time == 0.0 and "already met" in res.events[0].detail
    with pytest.raises(ScenarioError, match="'winch', which matches no element"):
        Scenario.from_dict([{"name": "a", "set": {"winch": {"payout_rate": 1.0}}, "max_duration": 1.0}], system)
    with pytest.raises(ScenarioError, match="no field 'speed'"):
        Scenario.from_dict([{"name": "a", "set": {"hoist": {"speed": 1.0}}, "max_duration": 1.0}], system)
    with pytest.raises(ScenarioError, match="unknown output 'hook/z'"):
        Scenario.from_dict([{"name": "a", "until": {"output": "hook/z", "op": ">=", "value": 1.0},
                             "max_duration": 1.0}], system)
    with pytest.raises(ScenarioError, match="max_duration"):
        Scenario.from_dict([{"name": "a"}], system)


def _study():
    spec = importlib.util.spec_from_file_location("goliath_crane_run", STUDY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # 24 s; the phases, conditions and events stay in the default suite on the hoist
def test_goliath_crane_static_tension_and_smoke_run(tmp_path):
    """Static tension per rope of the level hanging block = 828.5 t g / 6 to 0.5 % (Newton to 1e-9
    m/s²; with the lug line through the centre of mass the share is exact up to the rope stretch), then
    the study's CI form: every phase kind for a few seconds, each phase ended by what it should."""
    study = _study()
    system = study.build_system()
    q = study.static_state(system)
    z0 = jnp.zeros(system.model.nv)
    out = system.outputs(0.0, (q, z0, system.initial_states(q, z0)))
    T = np.array([float(out[f"{n}/tension"]) for n in study.rope_names()])
    np.testing.assert_allclose(T, 828.5e3 * G / 6, rtol=5e-3)
    res, s = study.main(["--smoke", "--out", str(tmp_path)])
    assert [e.trigger for e in res.events] == ["condition", "condition", "duration", "condition", "duration"]
    assert (tmp_path / "goliath_crane_smoke.png").stat().st_size > 10_000


@pytest.mark.studies
def test_goliath_crane_full_turn_over(tmp_path):
    """The full operation: the block ends upside down (tilt 180° ± 2°) and no rope goes slack
    (every tension above 25 % of m g / 6 throughout)."""
    res, s = _study().main(["--out", str(tmp_path)])
    assert abs(s["final_tilt_deg"] - 180.0) < 2.0
    assert s["T_min_t"] > 0.25 * 828.5 / 6
    assert [e.trigger for e in res.events][:2] == ["condition", "condition"]


def test_a_condition_on_a_force_in_newtons_ends_its_phase_at_the_exact_time():
    """A rope hauled in against a fixed anchor: T(t) = EA (l / (L₀ − r t) − 1) crosses 10 MN at
    t* = (L₀ − l / (1 + T*/EA)) / r.  The margin is some 1e7 N and moves at 6 MN/s; the root finder
    judges it relative to its size at the phase start, so the phase ends at t* to 1e-9 s (the
    tolerance of an absolute 1e-10 N would need t to 1e-17 s, below float64 at t ≈ 1 s)."""
    b = ModelBuilder()
    b.add_body("anchor", body=Body(M, (0, 0, 0), np.full(3, 10.0)), joint=mbd.Fixed(),
               placement=mbd.Placement(p=np.array([0.0, 0.0, -10.5])))
    rope = WireRope(name="hoist", body_a="world", body_b="anchor", point_a=jnp.zeros(3), point_b=jnp.zeros(3),
                    EA=jnp.asarray(EA), length=jnp.asarray(L0), transition=jnp.asarray(1.0), winch=True)
    system = System(b.build(), (rope,), name="haul")
    r, T_star = 0.5, 1.0e7
    sc = Scenario.from_dict([{"name": "haul", "set": {"hoist": {"payout_rate": -r}},
                              "until": {"output": "hoist/tension", "op": ">=", "value": T_star}, "max_duration": 5.0}], system)
    res = sc.run(system, q0=jnp.zeros(0), integrator=INTEGRATOR, save_dt=0.5)
    t_star = (L0 - 10.5 / (1 + T_star / EA)) / r
    assert res.events[0].trigger == "condition"
    assert abs(res.events[0].time - t_star) < 1e-9, (res.events[0].time, t_star)


def test_the_phase_end_is_found_when_one_realisation_of_a_batch_ends_by_its_condition_and_another_by_its_limit():
    """In a batch, diffrax root-finds every member's last step when any member's event fired, giving a member
    without one the distance to its step's end (zero at the end): optimistix's bisection took that for no root
    and stopped the program (the subsea installation at Hs 5.06 m, Tp 7 s raised from inside JAX).  With
    jaxmbd's root finder: y' = r, event y = 1, t1 = 2; r = 1 ends at t = 1 by the event (1e-9: the bisection's
    tolerance), r = 0.25 runs to t1 = 2 without one; alone, r = 1 ends where optimistix's bisection ends it, within
    the bracket's width asked (1e-10: it stops on the bracket alone, optimistix's also waits for the value)."""
    import diffrax
    import optimistix as optx

    from jaxmbd.events import EndpointBisection

    def solve(rate, finder):
        event = diffrax.Event(lambda t, y, args, **kw: y - 1.0, root_finder=finder, direction=True)
        sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, a: rate), diffrax.Tsit5(), 0.0, 2.0, 0.1, jnp.asarray(0.0),
                                  event=event, saveat=diffrax.SaveAt(t1=True), throw=False)
        return sol.ts[0], sol.result == diffrax.RESULTS.event_occurred

    finder = EndpointBisection(rtol=1e-10, atol=1e-10)
    t, fired = jax.vmap(lambda r: solve(r, finder))(jnp.array([1.0, 0.25]))
    np.testing.assert_allclose(np.asarray(t), [1.0, 2.0], rtol=0, atol=1e-9)
    assert fired.tolist() == [True, False]
    alone = solve(jnp.asarray(1.0), optx.Bisection(rtol=1e-10, atol=1e-10))[0]
    assert float(solve(jnp.asarray(1.0), finder)[0]) == pytest.approx(float(alone), abs=1e-10)  # the bracket asked for


def test_a_phase_end_where_the_margin_jumps_across_its_threshold_is_located():
    """A condition whose margin jumps at its threshold has no value under the root finder's tolerance: optimistix's
    bisection located the time and then ran to its most steps ("did not converge"), and the run stopped (the subsea
    installation's landing at Hs 3.4 m, Tp 10 s).  jaxmbd's ends when the bracket is as narrow as asked: y' = 1, the
    margin -1 below y = 1 and +1 above, the event at t = 1 (1e-9) and reported as the event."""
    import diffrax

    from jaxmbd.events import EndpointBisection

    event = diffrax.Event(lambda t, y, args, **kw: jnp.where(y > 1.0, 1.0, -1.0),
                          root_finder=EndpointBisection(rtol=1e-10, atol=1e-10), direction=True)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, a: 1.0), diffrax.Tsit5(), 0.0, 2.0, 0.1, jnp.asarray(0.0),
                              event=event, saveat=diffrax.SaveAt(t1=True), throw=False)
    assert float(sol.ts[0]) == pytest.approx(1.0, abs=1e-9)
    assert sol.result == diffrax.RESULTS.event_occurred
