"""A steady force and moment on a body: a mean environmental load (wind, current, mean wave drift) given
by the user, e.g. for a mooring's static offset."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


class SteadyForce(ForceElement):
    """``force`` (world axes, N) at ``point`` of ``body`` and ``moment`` (world axes, N m), constant in
    time and in the world whatever the body's motion.  Output: ``force`` (3,) N."""

    kind: ClassVar[str] = "steady_force"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body the load acts on")
    force: jax.Array = parameter(unit="N", shape=(3,), doc="the force, world axes")
    point: jax.Array = parameter(unit="m", shape=(3,), default=(0.0, 0.0, 0.0), doc="where it acts, body frame")
    moment: jax.Array = parameter(unit="N m", shape=(3,), default=(0.0, 0.0, 0.0), doc="a moment, world axes")

    def contribution(self, ctx: Context, z) -> Contribution:
        dtype = ctx.p.dtype
        f_ext = ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, jnp.asarray(self.force, dtype))
        i = ctx.body_index(self.body)
        m_body = ctx.kin.rotation(i).T @ jnp.asarray(self.moment, dtype)
        return Contribution(f_ext=f_ext.at[i, 3:].add(m_body))

    def outputs(self, ctx: Context, z) -> dict:
        return {"force": jnp.asarray(self.force, ctx.p.dtype)}

    def output_units(self, model) -> dict:
        return {"force": "N"}
