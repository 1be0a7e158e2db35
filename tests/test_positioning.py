"""Dynamic positioning: the closed loop against its linear model, the design time constant, the thrust
and rate limits, gradients of the gains, system files and their errors."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.linalg import expm

import jaxmbd as mbd
from jaxmbd.forces.positioning import DynamicPositioning, positioning_gains
from jaxmbd.forces.steady import SteadyForce
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.paths import set_leaf
from jaxmbd.simulation import Integrator, initial_state, simulate, solve
from jaxmbd.system import System
from jaxmbd.validity import check

M, IZZ = 5.0e6, 5.0e6 * 20.0**2  # a 5,000 t vessel (added mass included), radius of gyration 20 m
T = 30.0  # s, the designed closed-loop time constant
THRUSTERS = dict(thrusters=("bow", "stern_ps", "stern_sb"), thruster_types=("tunnel", "azimuth", "azimuth"),
                 thruster_positions=jnp.asarray([[35.0, 0.0, -3.0], [-35.0, 6.0, -3.0], [-35.0, -6.0, -3.0]]),
                 max_thrust=jnp.asarray([3.0e5, 6.0e5, 6.0e5]))
TIGHT = Integrator("tsit5", rtol=1e-10, atol=1e-10)


def vessel():
    """A vessel in the horizontal plane: surge, sway and yaw (a planar joint, normal up)."""
    b = ModelBuilder()
    b.add_body("vessel", body=Body(M, (0.0, 0.0, 0.0), np.diag([1e9, 1e9, IZZ])), joint=mbd.Planar((0.0, 0.0, 1.0)))
    return b.build()


def dp(**kw):
    kp, kd, ki = positioning_gains([M, M, IZZ], T)
    args = dict(name="dp", body="vessel", kp=jnp.asarray(kp), kd=jnp.asarray(kd), ki=jnp.asarray(ki),
                filter_period=jnp.asarray(6.0), thruster_time_constant=jnp.asarray(1.0)) | THRUSTERS
    return DynamicPositioning(**(args | kw))


def step(force, moment=0.0, point=(0.0, 0.0, 0.0)):
    return SteadyForce(name="env", body="vessel", force=jnp.asarray(force, float), point=jnp.asarray(point, float),
                       moment=jnp.asarray([0.0, 0.0, moment]))


def test_a_surge_step_follows_the_linear_closed_loop():
    """A step of 200 kN in surge on the vessel at its set point: the surge history equals the closed
    loop's linear model (mass, second-order filter, PID, thruster lag; six states, solved by the
    matrix exponential) to 1e-7 of the largest offset: the allocation hands the demand to the
    thrusters unchanged below their limits, and nothing else acts in surge.  Tolerance: the
    integrator's 1e-10 over 300 s."""
    F, Tf, Tt = 2.0e5, 6.0, 1.0
    ctrl = dp()
    res = simulate(System(vessel(), (ctrl, step([F, 0.0, 0.0]))), 300.0, save_dt=2.0, integrator=TIGHT)
    x = np.asarray(res.q)[:, 0]
    kp, kd, ki = (float(np.asarray(g)[0]) for g in (ctrl.kp, ctrl.kd, ctrl.ki))
    wf, zf = 2 * np.pi / Tf, float(ctrl.filter_damping)
    # s = [x, ẋ, x_f, ẋ_f, ∫e, U, 1]
    A = np.zeros((7, 7))
    A[0, 1] = 1.0
    A[1, 5], A[1, 6] = 1 / M, F / M
    A[2, 3] = 1.0
    A[3, 0], A[3, 2], A[3, 3] = wf**2, -(wf**2), -2 * zf * wf
    A[4, 2] = -1.0
    A[5, 2], A[5, 3], A[5, 4], A[5, 5] = -kp / Tt, -kd / Tt, ki / Tt, -1 / Tt
    s0 = np.zeros(7)
    s0[6] = 1.0
    ref = np.array([(expm(A * t) @ s0)[0] for t in np.asarray(res.time)])
    assert np.max(np.abs(x - ref)) < 1e-7 * np.max(np.abs(ref)), np.max(np.abs(x - ref)) / np.max(np.abs(ref))
    delivered = np.asarray(res.outputs["dp/delivered"])
    assert np.max(np.abs(delivered[:, 1:])) < 1e-6 * np.max(np.abs(delivered[:, 0]))  # no sway, no yaw


def test_the_vessel_returns_with_the_designed_time_constant():
    """positioning_gains places the three poles of each axis at −1/T (T = 30 s).  Without filter and
    thruster lag a step F gives x = F t² e^(−t/T) / (2 m): largest 2 F T² e⁻² / m = 9.74 m at 2T = 60 s.
    With the filter at T/5 and the thrusters at T/30 the measured peak is within 3 % and its time within
    10 % of the design; after 10 T the offset is under 1 % of the peak (the design's 0.8 %), and no
    thruster reaches its capacity."""
    F = 2.0e5
    ctrl = dp(filter_period=jnp.asarray(T / 5), thruster_time_constant=jnp.asarray(T / 30))
    res = simulate(System(vessel(), (ctrl, step([F, 0.0, 0.0]))), 10 * T, save_dt=0.5, integrator=TIGHT)
    x, t = np.asarray(res.q)[:, 0], np.asarray(res.time)
    design = 2 * F * T**2 * math.exp(-2) / M
    assert abs(x.max() / design - 1) < 0.03, x.max() / design
    assert abs(t[x.argmax()] / (2 * T) - 1) < 0.10, t[x.argmax()]
    assert abs(x[-1]) < 0.01 * x.max(), x[-1] / x.max()
    assert np.max(np.asarray(res.outputs["dp/demand_ratio"])) < 1.0


def test_sway_yaw_and_a_new_heading_are_held():
    """A steady sway force and yaw moment while the set point turns the vessel 30°: after 20 T the
    vessel is back at its position within 1 mm and on the new heading within 1e-4 rad (the slowest
    closed-loop poles, filter and thruster lag included, are at −0.0255 ± 0.0067i 1/s: e^(−15) of the
    start is left), the thrusters deliver the demand (1e-6) and the demand balances
    the load in the vessel's axes (1e-4: what the 20 T leave).  The load is fixed in the world: one fixed to a point of the
    hull would add a yaw stiffness of its own and move the poles."""
    F, N = 1.0e5, 3.0e6
    ctrl = dp(heading=jnp.asarray(math.radians(30.0)))
    res = simulate(System(vessel(), (ctrl, step([0.0, F, 0.0], moment=N))), 20 * T, save_dt=5.0, integrator=TIGHT)
    assert np.max(np.abs(np.asarray(res.outputs["dp/offset"])[-1])) < 1e-3
    assert abs(float(np.asarray(res.outputs["dp/heading_error"])[-1])) < 1e-4
    demand, delivered = (np.asarray(res.outputs[f"dp/{k}"])[-1] for k in ("demand", "delivered"))
    np.testing.assert_allclose(delivered, demand, rtol=0, atol=1e-6 * np.abs(demand).max())
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    load = np.array([s * F, c * F, N])  # the world load in the vessel's axes
    np.testing.assert_allclose(-demand, load, rtol=0, atol=1e-4 * np.abs(load).max())


def test_thrust_and_its_rate_stay_within_their_limits():
    """A surge load of 2 MN against 1.2 MN of surge capacity, thrust rate limited to 50 kN/s: every
    thruster's force stays at or under its capacity (1e-9), every allocation column changes no faster
    than its rate limit (1e-6, over the saved states), the run reports the demand beyond capacity, and
    the vessel is pushed away."""
    rate = 5.0e4
    ctrl = dp(thrust_rate=jnp.asarray(rate))
    system = System(vessel(), (ctrl, step([-2.0e6, 0.0, 0.0])))
    res = simulate(system, 120.0, save_dt=0.25, integrator=TIGHT)
    thrust = np.asarray(res.outputs["dp/thrust"])
    assert np.all(thrust <= np.asarray(THRUSTERS["max_thrust"]) * (1 + 1e-9)), thrust.max(0)
    assert thrust[:, 1:].max() > 0.999 * 6.0e5  # the azimuths reached their capacity
    u = np.asarray(res.z)[:, 9:]
    assert np.max(np.abs(np.diff(u, axis=0))) / 0.25 <= rate * (1 + 1e-6)
    found = check(system, res.time, res.outputs, res.batched)
    assert [(e.element, e.quantity) for e in found] == [("dp", "largest thruster demand over its capacity")]
    assert np.asarray(res.outputs["dp/offset"])[-1, 0] < -10.0


@pytest.mark.slow
def test_gradients_of_the_offset_in_the_gains_and_the_filter():
    """d(surge offset at 60 s)/d(K_p, K_d, K_i of surge, filter period) by jax.grad through the run
    (fixed steps, RK4 at 0.1 s) against central differences of the same run (relative steps 1e-4):
    1e-6 of each derivative."""
    system = System(vessel(), (dp(), step([2.0e5, 0.0, 0.0])))
    ts = np.arange(31) * 2.0
    y0 = initial_state(system)

    def offset(p):
        s = set_leaf(system, "dp.kp", system.forces[0].kp.at[0].set(p[0]))
        s = set_leaf(s, "dp.kd", s.forces[0].kd.at[0].set(p[1]))
        s = set_leaf(s, "dp.ki", s.forces[0].ki.at[0].set(p[2]))
        s = set_leaf(s, "dp.filter_period", p[3])
        return solve(s, y0, ts, integrator=Integrator("rk4", dt=0.1)).ys[0][-1, 0]

    c = system.forces[0]
    p0 = jnp.asarray([c.kp[0], c.kd[0], c.ki[0], 6.0])
    g = np.asarray(jax.jit(jax.grad(offset))(p0))
    value = jax.jit(offset)
    for k in range(4):
        h = 1e-4 * float(p0[k])
        fd = (float(value(p0.at[k].add(h))) - float(value(p0.at[k].add(-h)))) / (2 * h)
        assert abs(g[k] - fd) < 1e-6 * abs(fd), (k, g[k], fd)


DP_FILE = """
name = "dp_vessel"
[[bodies]]
name = "vessel"
joint = "planar"
mass = 5.0e6
inertia = [1e9, 1e9, 2e9]
[[forces]]
kind = "steady_force"
body = "vessel"
force = [2.0e5, 0.0, 0.0]
[[controllers]]
kind = "dynamic_positioning"
name = "dp"
body = "vessel"
thrusters = ["bow", "stern_ps", "stern_sb"]
thruster_types = ["tunnel", "azimuth", "azimuth"]
thruster_positions = [[35.0, 0.0, -3.0], [-35.0, 6.0, -3.0], [-35.0, -6.0, -3.0]]
max_thrust = [3.0e5, 6.0e5, 6.0e5]
thrust_rate = 1.0e5
kp = [1.667e4, 1.667e4, 6.667e6]
kd = [5.0e5, 5.0e5, 2.0e8]
ki = [185.0, 185.0, 7.4e4]
heading_deg = 10.0
hull_plan = [80.0, 16.0]
[simulation]
duration = 10.0
save_dt = 1.0
"""


def test_dynamic_positioning_is_read_from_a_system_file(tmp_path):
    path = tmp_path / "dp.toml"
    path.write_text(DP_FILE)
    ctrl = mbd.load_system(path).system.forces[1]
    assert isinstance(ctrl, DynamicPositioning) and ctrl.thrusters == ("bow", "stern_ps", "stern_sb")
    assert abs(float(ctrl.heading) - math.radians(10.0)) < 1e-15 and ctrl.n_states == 9 + 5


@pytest.mark.parametrize("old, new, message", [
    ("[-35.0, -6.0, -3.0]]", "[-35.0, -9.0, -3.0]]",
     r"controllers\[0\]: thruster_positions: thruster 'stern_sb' at x = -35 m, y = -9 m lies outside the hull"),
    ('["tunnel", "azimuth", "azimuth"]', '["tunnel", "azimuth", "jet"]',
     r"controllers\[0\]\.thruster_types: expected each of 'azimuth', 'tunnel', 'propeller'; got 'jet'"),
    ('["tunnel", "azimuth", "azimuth"]', '["tunnel", "azimuth"]',
     r"controllers\[0\]\.thruster_types: expected one type per thruster \(3\), got 2"),
    ('["tunnel", "azimuth", "azimuth"]', '["propeller", "propeller", "propeller"]',
     r"controllers\[0\]: thrusters: bow \(propeller\), .* cannot give surge, sway and yaw independently"),
    ("[[35.0, 0.0, -3.0], [-35.0, 6.0, -3.0], [-35.0, -6.0, -3.0]]", "[[35.0, 0.0], [-35.0, 6.0], [-35.0, -6.0]]",
     r"controllers\[0\]\.thruster_positions: expected \[x, y, z\] per thruster"),
    ("max_thrust = [3.0e5, 6.0e5, 6.0e5]", "max_thrust = [3.0e5, -6.0e5, 6.0e5]", r"controllers\[0\]\.max_thrust: must be > 0"),
])
def test_bad_dynamic_positioning_input_is_one_line(tmp_path, old, new, message):
    """A thruster outside the hull, an unknown type, a type or a position missing, thrusters that
    cannot hold the vessel in all three axes, a negative capacity: one line naming the field."""
    path = tmp_path / "dp.toml"
    assert old in DP_FILE
    path.write_text(DP_FILE.replace(old, new))
    with pytest.raises(mbd.SystemFileError, match=message) as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


DP_TUNE = """
[tune]
steps = 1
learning_rate = 0.2
gradient = "forward"
duration = 120.0
n_train = 1
n_test = 1
seed = 1

[[tune.parameters]]
path = "dp.kp[0]"
lower = 2.0e3
upper = 2.0e5

[[tune.parameters]]
path = "dp.filter_period"
lower = 2.0
upper = 30.0

[[tune.objective]]
output = "dp/offset"
component = 0
measure = "smooth_max_abs"
scale = "initial"
"""


def test_jaxmbd_tune_tunes_the_dp_gains(tmp_path, capsys):
    """``jaxmbd tune`` on the DP file, a gain and the filter period as parameters, the largest surge
    offset under the 200 kN load as the objective: one step, finite gradients, the offset reduced."""
    import json

    from jaxmbd.cli import main

    path = tmp_path / "dp.toml"
    path.write_text(DP_FILE.replace("duration = 10.0", "duration = 120.0") + DP_TUNE)
    out = tmp_path / "out"
    assert main(["tune", str(path), "--out", str(out)]) == 0
    res = json.loads((out / "tune.json").read_text())
    assert res["parameters"] == ["dp.kp[0]", "dp.filter_period"]
    assert all(math.isfinite(h["grad_norm"]) and h["grad_norm"] > 0 for h in res["history"])
    assert res["loss"] < res["initial_loss"]
