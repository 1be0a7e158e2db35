"""Joint drive: a crane's slewing or luffing drive, moving a joint to a commanded angle at a limited
rate and with a limited torque."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..dynamics.gravity import context_gravity_torques
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement, joint_dofs


class JointDrive(ForceElement):
    """Drives one-coordinate joints (a king's slewing bearing, a boom's luffing hinge) to ``target``.

    Each drive keeps a command θ_c (a state, starting at the joint's initial angle) that travels
    towards the target at the drive's rated speed ω_max and settles on it with time constant 1/λ
    (``settle_rate`` λ):

        θ̇_c = clip(λ (θ_target − θ_c), −ω_max, ω_max),

    so a slew of Δ takes Δ/ω_max − 1/λ s at full speed and then closes exponentially.  The motor
    tracks the command with a PD law, limited to the drive's rated torque τ_max:

        τ = clip(K_p (θ_c − q) + K_d (θ̇_c − q̇) [+ g(q)], −τ_max, τ_max),

    with the optional gravity feed-forward g(q) of :class:`~jaxmbd.control.JointPD` (a luffing
    drive holding a boom).  A drive at its torque limit cannot follow its command: a run reports it
    (``torque_ratio`` |τ| / τ_max reaching 1).  Set ``target`` per phase in a scenario to slew or
    luff; a ``{"target": x, "rate": r}`` ramp there moves the target itself.

    States: θ_c per joint.  Outputs: ``torque`` (N m or N), ``command`` (rad or m), ``error``
    θ_c − q, ``torque_ratio`` |τ| / τ_max.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`joint_drive`',
         'torque below `max_torque`',
         'the drive is at its rated torque and lags its command (a slew too fast for the load, a luff against too much weight)'),
    )

    kind: ClassVar[str] = "joint_drive"
    section: ClassVar[str] = "controllers"

    name: str = eqx.field(static=True)
    joints: tuple = setting("joints", doc="one-coordinate joints (revolute or prismatic)")
    target: jnp.ndarray = parameter(unit="rad or m", shape="per:joints", angle=True, doc="θ_target, where the drive goes")
    max_rate: jnp.ndarray = parameter(unit="rad/s or m/s", shape="per:joints", bound=(">", 0.0), angle=True,
                                      doc="ω_max, the drive's rated speed")
    max_torque: jnp.ndarray = parameter(unit="N·m or N", shape="per:joints", bound=(">", 0.0),
                                        doc="τ_max, the drive's rated torque (or force)")
    kp: jnp.ndarray = parameter(unit="N·m/rad or N/m", shape="per:joints", bound=(">=", 0.0), doc="K_p")
    kd: jnp.ndarray = parameter(unit="N·m·s/rad or N·s/m", shape="per:joints", bound=(">=", 0.0), doc="K_d")
    settle_rate: jnp.ndarray = parameter(unit="1/s", shape="per:joints", bound=(">", 0.0), default=1.0,
                                         doc="λ, how fast the command closes on the target")
    gravity_compensation: bool = setting("bool", default=False, doc="feed-forward of the weight below the joints (a luffing drive)")

    @property
    def n_states(self):
        return len(self.joints)

    def _dofs(self, model):
        return joint_dofs(model, self.joints)

    def initial_state(self, model, q, v):
        qi, _ = self._dofs(model)
        return jnp.asarray(q, dtype=model.inertia.dtype)[qi]

    def _command_rate(self, z):
        return jnp.clip(self.settle_rate * (self.target - z), -self.max_rate, self.max_rate)

    def torque(self, ctx: Context, z):
        qi, vi = self._dofs(ctx.model)
        tau = self.kp * (z - ctx.q[qi]) + self.kd * (self._command_rate(z) - ctx.v[vi])
        if self.gravity_compensation:
            tau = tau + context_gravity_torques(ctx)[vi]
        return jnp.clip(tau, -self.max_torque, self.max_torque), qi, vi

    def contribution(self, ctx: Context, z) -> Contribution:
        tau, _, vi = self.torque(ctx, z)
        return Contribution(tau=jnp.zeros(ctx.model.nv, dtype=ctx.q.dtype).at[vi].add(tau), zdot=self._command_rate(z))

    def output_units(self, model) -> dict:
        from ..system import joint_units

        def one(prismatic, revolute):
            units = {joint_units(model, j, prismatic, revolute) for j in self.joints}
            return units.pop() if len(units) == 1 else f"{prismatic} (prismatic joints), {revolute} (revolute joints)"

        return {"torque": one("N", "N m"), "command": one("m", "rad"), "error": one("m", "rad"), "torque_ratio": "1"}

    def outputs(self, ctx: Context, z) -> dict:
        tau, qi, _ = self.torque(ctx, z)
        return {"torque": tau, "command": z, "error": z - ctx.q[qi], "torque_ratio": jnp.abs(tau) / self.max_torque}

    def valid_ranges(self, model) -> tuple:
        from ..validity import ValidRange

        return (ValidRange("torque_ratio", "torque", "a drive that follows its command",
                           "|torque| < rated torque (at the limit the drive lags its command)", upper=0.999),)
