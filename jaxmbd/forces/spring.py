"""Linear spring-damper(-actuator) between two points (MBS4WEC, eq. 12-16)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


class SpringDamper(ForceElement):
    """Force along the line from point a (on ``body_a``) to point b (on ``body_b``):

        f = k (l − l₀) + c l̇ + f_act,   pulling b towards a when positive,

    with l the distance between the points and l̇ its rate.  Either body may be
    ``"world"``.  Outputs: ``force`` (N, positive in tension), ``length`` (m).
    """

    kind: ClassVar[str] = "spring_damper"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="body of end a")
    body_b: str = setting("body_or_world", doc="body of end b")
    point_a: jnp.ndarray = parameter(unit="m", shape=(3,), doc="end a in body_a's frame")
    point_b: jnp.ndarray = parameter(unit="m", shape=(3,), doc="end b in body_b's frame")
    stiffness: jnp.ndarray = parameter(unit="N/m", bound=(">=", 0.0), doc="k")
    damping: jnp.ndarray = parameter(unit="N·s/m", bound=(">=", 0.0), doc="c")
    rest_length: jnp.ndarray = parameter(unit="m", bound=(">=", 0.0), doc="l₀")
    actuator_force: jnp.ndarray = parameter(unit="N", default=0.0, doc="constant force added, positive pulling the ends together")

    def _line(self, ctx: Context):
        pa, _, pb, _, e, l, ldot = ctx.segment(self.body_a, self.point_a, self.body_b, self.point_b)
        return pa, pb, e, l, ldot

    def force(self, ctx: Context):
        _, _, e, l, ldot = self._line(ctx)
        return self.stiffness * (l - self.rest_length) + self.damping * ldot + self.actuator_force, e, l

    def contribution(self, ctx: Context, z) -> Contribution:
        f, e, _ = self.force(ctx)
        f_ext = ctx.zeros_f_ext()
        f_ext = ctx.add_point_force(f_ext, self.body_a, self.point_a, f * e)
        f_ext = ctx.add_point_force(f_ext, self.body_b, self.point_b, -f * e)
        return Contribution(f_ext=f_ext)

    def output_units(self, model) -> dict:
        return {"force": "N", "length": "m"}

    def outputs(self, ctx: Context, z) -> dict:
        f, _, l = self.force(ctx)
        return {"force": f, "length": l}

    def power(self, ctx: Context):
        """Power absorbed by the damper (W), c l̇² ≥ 0."""
        _, _, _, _, ldot = self._line(ctx)
        return self.damping * ldot**2
