"""Joint drive (jaxmbd/forces/drive.py): a slewing drive's command against its closed form, the
joint following it, the torque limit, a system file, and the report of a drive at its limit."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd import Body, ModelBuilder, Revolute, System
from jaxmbd.forces.drive import JointDrive
from jaxmbd.simulation import Integrator, simulate

J = 2.0e6  # kg m², a crane's slewing part about the king's axis
RATE, SETTLE, TARGET = 0.05, 0.5, 1.0


def _slewing(max_torque=1e9):
    b = ModelBuilder()
    b.add_body("crane", body=Body(1.0e4, (0.0, 0.0, 0.0), np.diag([J, J, J])), joint=Revolute((0.0, 0.0, 1.0)),
               joint_name="slew")
    wn = 2.0  # rad/s, the motor's tracking loop
    drive = JointDrive(name="slew_drive", joints=("slew",), target=jnp.asarray([TARGET]), max_rate=jnp.asarray([RATE]),
                       max_torque=jnp.asarray([max_torque]), kp=jnp.asarray([J * wn**2]), kd=jnp.asarray([2 * J * wn]),
                       settle_rate=jnp.asarray([SETTLE]))
    return System(b.build(), (drive,))


def _command(t):
    """θ_c(t) from 0: at ω_max until the error is ω_max / λ, then closing with time constant 1/λ."""
    t1 = (TARGET - RATE / SETTLE) / RATE
    return np.where(t < t1, RATE * t, TARGET - RATE / SETTLE * np.exp(-SETTLE * (t - t1)))


def test_the_command_runs_at_the_rated_speed_then_settles_and_the_joint_follows():
    """Command against the closed form to 1e-6 rad (RK4 at 0.01 s steps over the clip's corner at t₁).
    The joint starts at rest under a command already moving at ω_max: the critically damped
    tracking loop (ω_n = 2 rad/s, K_d on the command's rate) leaves the error e = θ_c − q =
    ω_max t e^{−ω_n t} while the command ramps, to 1e-8 rad (RK4's error at 0.01 s)."""
    res = simulate(_slewing(), 40.0, q0=jnp.zeros(1), save_dt=1.0, integrator=Integrator("rk4", dt=0.01))
    t = np.asarray(res.time)
    cmd = np.asarray(res.outputs["slew_drive/command"])[:, 0]
    np.testing.assert_allclose(cmd, _command(t), rtol=0, atol=1e-6)
    q = np.asarray(res.q)[:, 0]
    ramp = t < (TARGET - RATE / SETTLE) / RATE
    np.testing.assert_allclose((cmd - q)[ramp], RATE * t[ramp] * np.exp(-2.0 * t[ramp]), rtol=0, atol=1e-8)


def test_the_torque_is_limited():
    """A drive too weak for its command starts at τ_max / J exactly (to 1e-12), and the run says the
    drive reached its limit."""
    tau_max = 1.0e4
    system = _slewing(max_torque=tau_max)
    y = (jnp.zeros(1), jnp.zeros(1), jnp.zeros(1))
    a = float(system.rhs(0.0, y)[1][0])
    assert abs(a - tau_max / J) < 1e-12 * tau_max / J
    res = simulate(system, 5.0, q0=jnp.zeros(1), save_dt=0.5, integrator=Integrator("rk4", dt=0.01))
    found = mbd.validity.check(system, res.time, res.outputs, False)
    assert any(e.element == "slew_drive" for e in found), found


TEXT = """
name = "slewing"
[[bodies]]
name = "crane"
joint = "revolute"
axis = [0, 0, 1]
mass = 1.0e4
inertia = [2.0e6, 2.0e6, 2.0e6]
[[controllers]]
kind = "joint_drive"
name = "slew_drive"
joints = ["crane"]
target_deg = TARGET
max_rate_deg = 3.0
max_torque = 1.0e9
kp = 8.0e6
kd = 8.0e6
[simulation]
duration = 2.0
save_dt = 0.5
method = "rk4"
dt = 0.01
"""


def test_a_drive_is_read_from_a_system_file(tmp_path):
    path = tmp_path / "slew.toml"
    path.write_text(TEXT.replace("TARGET", "90.0"))
    el = mbd.load_system(path).system.forces[0]
    assert isinstance(el, JointDrive)
    assert abs(float(np.ravel(el.target)[0]) - math.pi / 2) < 1e-15 and abs(float(np.ravel(el.max_rate)[0]) - math.radians(3.0)) < 1e-15
    path.write_text(TEXT.replace("TARGET", "90.0").replace("max_torque = 1.0e9", "max_torque = -1.0"))
    with pytest.raises(mbd.SystemFileError, match=r"max_torque: must be > 0") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
