"""Controllers as force elements: joint PD with gravity compensation, roll-and-pitch motion compensation;
dynamic positioning (:class:`~jaxmbd.forces.positioning.DynamicPositioning`, re-exported here).

Gains are array leaves, so an optimiser differentiates results with respect
to them.  Active heave compensation lives on the winch of a
:class:`~jaxmbd.forces.WireRope` (``heave_compensation``, ``hook_gain``).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from . import spatial
from .dynamics.gravity import context_gravity_torques as gravity_torques  # noqa: F401  (jaxmbd.control.gravity_torques(ctx))
from .errors import InputError
from .fields import parameter, setting
from .forces.positioning import DynamicPositioning, positioning_gains  # noqa: F401  (re-exported)
from .system import ELEMENT_KINDS, Context, Contribution, ForceElement
from .system import joint_dofs as _dofs


class JointPD(ForceElement):
    """τ = K_p (q_ref − q) − K_d q̇ + K_i ∫(q_ref − q) dt [+ g(q)] on one-coordinate joints.

    With ``gravity_compensation`` (off unless asked for) the joints also get the
    torque that holds the tree against gravity at the current configuration
    (Cibicik et al. 2019, Sec. 5), so the set point is held without steady-state error; it
    is a feed-forward that carries the whole weight hanging below the joints,
    so a PD used as a damper (k_p = 0) or on a floating body must leave it off.  Integral action adds
    one state per joint when ``integral`` is true.  Outputs: ``torque`` (per joint).
    """

    kind: ClassVar[str] = "joint_pd"
    section: ClassVar[str] = "controllers"

    name: str = eqx.field(static=True)
    joints: tuple = setting("joints", doc="one-coordinate joints")
    setpoint: jnp.ndarray = parameter(unit="rad or m", shape="per:joints", angle=True, doc="q_ref")
    kp: jnp.ndarray = parameter(unit="N·m/rad or N/m", shape="per:joints", bound=(">=", 0.0), doc="K_p")
    kd: jnp.ndarray = parameter(unit="N·m·s/rad or N·s/m", shape="per:joints", bound=(">=", 0.0), doc="K_d")
    ki: jnp.ndarray = parameter(unit="N·m/(rad·s) or N/(m·s)", shape="per:joints", bound=(">=", 0.0), default=0.0, doc="K_i")
    gravity_compensation: bool = setting("bool", default=False, doc="feed-forward of the whole weight below the joints (a crane holding a pose)")
    integral: bool = setting("bool", default=False, doc="integral action (one state per joint)")

    @property
    def n_states(self):
        return len(self.joints) if self.integral else 0

    def torque(self, ctx: Context, z):
        qi, vi = _dofs(ctx.model, self.joints)
        err = self.setpoint - ctx.q[qi]
        tau = self.kp * err - self.kd * ctx.v[vi]
        if self.integral:
            tau = tau + self.ki * z
        if self.gravity_compensation:
            tau = tau + gravity_torques(ctx)[vi]
        return tau, vi, err

    def contribution(self, ctx: Context, z) -> Contribution:
        tau, vi, err = self.torque(ctx, z)
        full = jnp.zeros(ctx.model.nv, dtype=ctx.q.dtype).at[vi].add(tau)
        return Contribution(tau=full, zdot=err if self.integral else None)

    def output_units(self, model) -> dict:
        from .system import joint_units

        units = {joint_units(model, j, "N", "N m") for j in self.joints}
        return {"torque": units.pop() if len(units) == 1 else "N (prismatic joints), N m (revolute joints)"}

    def outputs(self, ctx: Context, z) -> dict:
        return {"torque": self.torque(ctx, z)[0]}


class MotionCompensation(ForceElement):
    """Roll-and-pitch compensation platform (Cibicik et al. 2019): PD on two joints (roll about x, then pitch about y).

    ``mode = "on"`` keeps the platform body level: the errors are its roll and
    pitch in the world (z-y-x Euler angles) and the rates its angular velocity
    about its own x and y axes.  ``mode = "off"`` locks the platform parallel to
    the deck (PD on the joint angles towards zero).  Gravity compensation as in
    :class:`JointPD`.  Outputs: ``torque`` (2,), ``roll``, ``pitch`` of the platform (rad, world).
    """

    kind: ClassVar[str] = "motion_compensation"
    section: ClassVar[str] = "controllers"

    name: str = eqx.field(static=True)
    roll_joint: str = setting("joint", doc="joint turning the platform about x")
    pitch_joint: str = setting("joint", doc="joint turning the platform about y")
    platform: str = setting("body", doc="the platform body kept level")
    kp: jnp.ndarray = parameter(unit="N·m/rad", shape=[(), (2,)], bound=(">=", 0.0), doc="K_p, one value or roll and pitch")
    kd: jnp.ndarray = parameter(unit="N·m·s/rad", shape=[(), (2,)], bound=(">=", 0.0), doc="K_d, one value or roll and pitch")
    mode: str = setting("string", default="on", choices=("on", "off"), doc='"on" keeps the platform level; "off" locks it to the deck')
    gravity_compensation: bool = setting("bool", default=True, doc="feed-forward of the weight on the platform")

    def __check_init__(self):
        if self.mode not in ("on", "off"):
            raise InputError(f"motion compensation {self.name!r}: mode must be 'on' or 'off', got {self.mode!r}")

    def _level(self, ctx: Context):
        i = ctx.model.index(self.platform)
        rpy = spatial.matrix_to_rpy(ctx.kin.rotation(i))
        return rpy[0], rpy[1], ctx.kin.body_twist(i)[3:5]

    def torque(self, ctx: Context):
        qi, vi = _dofs(ctx.model, (self.roll_joint, self.pitch_joint))
        if self.mode == "on":
            roll, pitch, rate = self._level(ctx)
            tau = -self.kp * jnp.stack([roll, pitch]) - self.kd * rate
        else:
            tau = -self.kp * ctx.q[qi] - self.kd * ctx.v[vi]
        if self.gravity_compensation:
            tau = tau + gravity_torques(ctx)[vi]
        return tau, vi

    def contribution(self, ctx: Context, z) -> Contribution:
        tau, vi = self.torque(ctx)
        return Contribution(tau=jnp.zeros(ctx.model.nv, dtype=ctx.q.dtype).at[vi].add(tau))

    def output_units(self, model) -> dict:
        return {"torque": "N m", "roll": "rad", "pitch": "rad"}

    def outputs(self, ctx: Context, z) -> dict:
        roll, pitch, _ = self._level(ctx)
        return {"torque": self.torque(ctx)[0], "roll": roll, "pitch": pitch}


KINDS = ELEMENT_KINDS["controllers"]
"""Name in a system file's ``[[controllers]]`` -> class (every registered controller)."""
