"""Wind drag on a body (Hong et al. 2016, eq. 31), with the mean wind's height profile."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement

PROFILES = ("uniform", "power_law", "logarithmic")


class WindDrag(ForceElement):
    """F = ½ ρ_air C_d S |V_r| V_r at ``point`` of ``body``, with V_r the horizontal wind velocity
    relative to the point (wind blowing towards ``direction`` rad, measured from +x towards +y, like the
    waves).  The wind's speed at the point's height z above the still water (world z) is ``speed`` at
    ``reference_height`` H scaled by the ``profile``: ``uniform`` (the same at every height), ``power_law``
    U(z) = U(H) (z/H)^α (``exponent`` α) or ``logarithmic`` U(z) = U(H) ln(z/z₀) / ln(H/z₀) (``roughness``
    z₀; DNV-RP-C205 gives both forms and their parameters for the open sea).  Outputs: ``force`` (3,) N,
    world axes; ``speed`` (m/s) the mean wind at the point; ``height`` (m) the point above the still water.
    Range: a profile holds above the sea (z > z₀ for the logarithmic one; z > 0 for the power law); below
    it the speed is taken at that lowest height, and the run says so."""

    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`wind` with a `profile`',
         "the wind's point above the still water (above `roughness` for the logarithmic profile)",
         'no mean wind profile below the sea surface: the speed is taken at the lowest height the profile holds'),
    )

    kind: ClassVar[str] = "wind"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body the wind acts on")
    point: jnp.ndarray = parameter(unit="m", shape=(3,), doc="centre of wind pressure, body frame")
    area: jnp.ndarray = parameter(unit="m²", bound=(">=", 0.0), doc="projected area S")
    speed: jnp.ndarray = parameter(unit="m/s", bound=(">=", 0.0), doc="wind speed (at `reference_height` with a profile)")
    direction: jnp.ndarray = parameter(unit="rad", angle=True, default=0.0, doc="direction the wind blows towards, from +x towards +y")
    drag_coefficient: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=1.0, doc="C_d")
    air_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=1.225, doc="ρ_air")
    profile: str = setting("string", default="uniform", choices=PROFILES, doc="the mean wind over height: `uniform`, "
                           "`power_law` (U(H) (z/H)^α) or `logarithmic` (U(H) ln(z/z₀) / ln(H/z₀))")
    reference_height: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=10.0, doc="H, where `speed` is given")
    exponent: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=0.12, doc="α of the power law (0.12: open sea)")
    roughness: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=1.0e-4, doc="z₀ of the logarithmic profile (open sea)")

    def _lowest(self):
        """The lowest height the profile holds at (m): z₀ (logarithmic), 1 mm (power law), -inf (uniform)."""
        return {"uniform": -jnp.inf, "power_law": 1e-3, "logarithmic": self.roughness}[self.profile]

    def _speed(self, z):
        z = jnp.maximum(z, self._lowest())
        H = self.reference_height
        if self.profile == "power_law":
            return self.speed * (z / H) ** self.exponent
        if self.profile == "logarithmic":
            return self.speed * jnp.log(z / self.roughness) / jnp.log(H / self.roughness)
        return self.speed * jnp.ones_like(z)

    def force(self, ctx: Context):
        pos, vel = ctx.point(self.body, self.point)
        u = self._speed(pos[2])
        wind = u * jnp.stack([jnp.cos(self.direction), jnp.sin(self.direction), 0.0 * u])
        vr = wind - vel * jnp.array([1.0, 1.0, 0.0], dtype=vel.dtype)
        mag = jnp.sqrt(jnp.sum(vr * vr) + 1e-12)
        return 0.5 * self.air_density * self.drag_coefficient * self.area * mag * vr

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, self.force(ctx)))

    def output_units(self, model) -> dict:
        return {"force": "N", "speed": "m/s", "height": "m"}

    def outputs(self, ctx: Context, z) -> dict:
        pos, _ = ctx.point(self.body, self.point)
        return {"force": self.force(ctx), "speed": self._speed(pos[2]), "height": pos[2]}

    def valid_ranges(self, model) -> tuple:
        if self.profile == "uniform":
            return ()
        from ..validity import ValidRange

        lowest = float(self._lowest())
        return (ValidRange("height", "height of the wind's point", f"a {self.profile.replace('_', ' ')} wind profile",
                           f"height >= {lowest:g} m above the still water", lower=lowest),)
