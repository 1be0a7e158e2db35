"""Linear power take-off on a joint coordinate (WEC-Sim's translational and rotational PTO)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..errors import InputError
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


class JointPTO(ForceElement):
    """Spring-damper on the coordinate of a one-coordinate joint (prismatic or revolute):

        τ = clip(−k (q − q₀) − c q̇, −τ_max, τ_max),

    applied as the joint force (N on a prismatic joint, N·m on a revolute one), equal and
    opposite on the two bodies the joint connects.  Outputs: ``force`` (N or N·m, along the
    joint's coordinate), ``power`` (W, absorbed: −τ q̇, positive when the PTO takes energy out),
    ``position`` (m or rad, q − q₀) and ``velocity`` (m/s or rad/s).
    """

    kind: ClassVar[str] = "pto"

    name: str = eqx.field(static=True)
    joint: str = setting("joint", doc="a prismatic or revolute joint")
    stiffness: jnp.ndarray = parameter(unit="N/m or N·m/rad", bound=(">=", 0.0), default=0.0, doc="spring on the coordinate")
    damping: jnp.ndarray = parameter(unit="N·s/m or N·m·s/rad", bound=(">=", 0.0), default=0.0, doc="damper (absorbs power)")
    equilibrium: jnp.ndarray = parameter(unit="m or rad", default=0.0, doc="coordinate where the spring is relaxed")
    force_limit: jnp.ndarray = parameter(unit="N or N·m", bound=(">", 0.0), default=float("inf"), doc="saturation of the force")

    def _coordinate(self, ctx: Context):
        model = ctx.model
        i = model.index(self.joint)
        if model.joints[i].nv != 1 or model.joints[i].nq != 1:
            raise InputError(f"pto {self.name!r}: joint {self.joint!r} is a {model.joints[i].name} joint; "
                             "expected a one-coordinate joint (prismatic or revolute)")
        return model.q_start[i], model.v_start[i]

    def _force(self, ctx: Context):
        iq, iv = self._coordinate(ctx)
        x, xd = ctx.q[iq] - self.equilibrium, ctx.v[iv]
        tau = jnp.clip(-self.stiffness * x - self.damping * xd, -self.force_limit, self.force_limit)
        return tau, x, xd, iv

    def contribution(self, ctx: Context, z) -> Contribution:
        tau, _, _, iv = self._force(ctx)
        return Contribution(tau=jnp.zeros(ctx.model.nv, dtype=ctx.q.dtype).at[iv].add(tau))

    def output_units(self, model) -> dict:
        from ..system import joint_units

        u = lambda t, r: joint_units(model, self.joint, t, r)  # noqa: E731
        return {"force": u("N", "N m"), "power": "W", "position": u("m", "rad"), "velocity": u("m/s", "rad/s")}

    def outputs(self, ctx: Context, z) -> dict:
        tau, x, xd, _ = self._force(ctx)
        return {"force": tau, "power": -tau * xd, "position": x, "velocity": xd}
