"""Wind drag on a body (Hong et al. 2016, eq. 31)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


class WindDrag(ForceElement):
    """F = ½ ρ_air C_d S |V_r| V_r at ``point`` of ``body``, with V_r the horizontal wind velocity
    relative to the point (wind ``speed`` m/s blowing towards ``direction`` rad, measured from +x
    towards +y, like the waves).  Output: ``force`` (3,) N, world axes."""

    kind: ClassVar[str] = "wind"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body the wind acts on")
    point: jnp.ndarray = parameter(unit="m", shape=(3,), doc="centre of wind pressure, body frame")
    area: jnp.ndarray = parameter(unit="m²", bound=(">=", 0.0), doc="projected area S")
    speed: jnp.ndarray = parameter(unit="m/s", bound=(">=", 0.0), doc="wind speed")
    direction: jnp.ndarray = parameter(unit="rad", angle=True, default=0.0, doc="direction the wind blows towards, from +x towards +y")
    drag_coefficient: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=1.0, doc="C_d")
    air_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=1.225, doc="ρ_air")

    def force(self, ctx: Context):
        _, vel = ctx.point(self.body, self.point)
        wind = self.speed * jnp.stack([jnp.cos(self.direction), jnp.sin(self.direction), 0.0 * self.speed])
        vr = wind - vel * jnp.array([1.0, 1.0, 0.0], dtype=vel.dtype)
        mag = jnp.sqrt(jnp.sum(vr * vr) + 1e-12)
        return 0.5 * self.air_density * self.drag_coefficient * self.area * mag * vr

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, self.force(ctx)))

    def output_units(self, model) -> dict:
        return {"force": "N"}

    def outputs(self, ctx: Context, z) -> dict:
        return {"force": self.force(ctx)}
