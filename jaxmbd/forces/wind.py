"""Wind drag on a body (Hong et al. 2016, eq. 31)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from ..system import Context, Contribution, ForceElement


class WindDrag(ForceElement):
    """F = ½ ρ_air C_d S |V_r| V_r at ``point`` of ``body``, with V_r the horizontal wind velocity
    relative to the point (wind ``speed`` m/s blowing towards ``direction`` rad, measured from +x
    towards +y, like the waves).  Output: ``force`` (3,) N, world axes."""

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    point: jnp.ndarray
    area: jnp.ndarray
    speed: jnp.ndarray
    direction: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(0.0))
    drag_coefficient: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(1.0))
    air_density: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(1.225))

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
