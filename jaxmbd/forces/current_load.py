"""Current load on a hull: surge and sway force and yaw moment from coefficients over the current's
angle of attack (OCIMF's form for tankers, OrcaFlex's vessel current load)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


class HullCurrentLoad(ForceElement):
    """The sea state's current on a hull, from the user's coefficients:

        F_x = ½ ρ C_x(α) A_x |U|²,   F_y = ½ ρ C_y(α) A_y |U|²,   M_z = ½ ρ C_n(α) A_y L |U|²,

    in the body's axes at ``point`` (the hull's reference point, where the moment is taken), with U
    the current past the hull (the sea state's current at ``depth`` under the still water less the
    point's horizontal velocity, in the body's x-y plane) and α = atan2(U_y, U_x) its angle of attack
    in the body's axes (0: the current travels along +x, coming from astern; 90°: along +y).
    ``angles_deg`` tabulates α from −180° to 180°; C_x, C_y, C_n are linear between the rows
    (periodic).  A_x and A_y are the projected underwater areas (beam x
    draught, length x draught), L the length.  Take the coefficients from model tests, OCIMF's
    tanker data or a CFD study; they hold for the hull, the draught and the water depth they were
    measured at.

    Outputs: ``force`` (3,) N (world axes), ``moment`` N m (about the body's z at ``point``),
    ``angle`` rad (α).
    """

    kind: ClassVar[str] = "hull_current_load"
    water_density_field: ClassVar[str] = "rho"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="the hull")
    angles: jax.Array = parameter(unit="rad", shape=None, angle=True, doc="α of the table's rows, −180° to 180°, increasing")
    Cx: jax.Array = parameter(unit="", shape=None, doc="C_x(α), surge force coefficient, one per angle")
    Cy: jax.Array = parameter(unit="", shape=None, doc="C_y(α), sway force coefficient, one per angle")
    Cn: jax.Array = parameter(unit="", shape=None, doc="C_n(α), yaw moment coefficient, one per angle")
    area_x: jax.Array = parameter(unit="m²", bound=(">", 0.0), doc="A_x, underwater area seen from ahead (beam x draught)")
    area_y: jax.Array = parameter(unit="m²", bound=(">", 0.0), doc="A_y, underwater area seen from the side (length x draught)")
    length: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="L, the moment's length")
    point: jax.Array = parameter(unit="m", shape=(3,), default=(0.0, 0.0, 0.0), doc="reference point (the moment's), body frame")
    depth: jax.Array = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="where the current is read, under the still water (half the draught)")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density")

    @classmethod
    def file_rules(cls, values, given, fail):
        a = np.atleast_1d(np.asarray(values.get("angles", ()), float))
        if a.size < 2 or np.any(np.diff(a) <= 0) or a[0] < -np.pi - 1e-9 or a[-1] > np.pi + 1e-9:
            fail("angles", f"expected increasing angles within [-180, 180] deg, at least two; got {np.degrees(a).round(3).tolist()}")
        for key in ("Cx", "Cy", "Cn"):
            c = np.atleast_1d(np.asarray(values.get(key, ()), float))
            if c.shape != a.shape:
                fail(key, f"expected one coefficient per angle ({a.size}), got {c.size}")

    def _load(self, ctx: Context):
        dtype = ctx.p.dtype
        current = (jnp.zeros(3, dtype) if ctx.waves is None or ctx.waves.current is None
                   else ctx.waves.current.velocity(-jnp.asarray(self.depth, dtype)).astype(dtype))
        return coefficient_load(self, ctx, current, self.rho)

    def contribution(self, ctx: Context, z) -> Contribution:
        return coefficient_contribution(ctx, *self._load(ctx)[:4])

    def outputs(self, ctx: Context, z) -> dict:
        _, _, F, mz, alpha = self._load(ctx)
        return {"force": F, "moment": mz, "angle": alpha}

    def output_units(self, model) -> dict:
        return {"force": "N", "moment": "N m", "angle": "rad"}


def coefficient_contribution(ctx: Context, i, point, F, mz) -> Contribution:
    """The force F (world axes) at ``point`` of body ``i`` and the yaw moment ``mz`` as a contribution."""
    wrench = ctx.world_point_wrench(i, point, F).at[5].add(mz)
    return Contribution(f_ext=ctx.zeros_f_ext().at[i].add(wrench.astype(ctx.p.dtype)))


def coefficient_load(el, ctx: Context, fluid, rho):
    """(body index, point, force (3,) world axes, yaw moment, α) of the coefficients' form of ``el`` (its
    ``body``, ``point``, ``angles``, ``Cx``, ``Cy``, ``Cn``, ``area_x``, ``area_y``, ``length``) in a fluid of
    density ``rho`` moving at ``fluid`` (3,) (world axes) past the point: the current on a hull, the wind on
    a hull or a lifted object."""
    i = ctx.body_index(el.body)
    dtype = ctx.p.dtype
    point = jnp.asarray(el.point, dtype=dtype)
    v = ctx.point_velocity(i, point)
    R = ctx.kin.rotation(i)
    u = R.T @ ((fluid - v) * jnp.array([1.0, 1.0, 0.0], dtype=dtype))  # body axes
    ux, uy = u[0], u[1]
    alpha = jnp.arctan2(uy, ux)
    coef = [jnp.interp(alpha, el.angles, jnp.asarray(c, dtype), period=2 * jnp.pi) for c in (el.Cx, el.Cy, el.Cn)]
    q = 0.5 * rho * (ux * ux + uy * uy)
    fx, fy, mz = q * coef[0] * el.area_x, q * coef[1] * el.area_y, q * coef[2] * el.area_y * el.length
    return i, point, R @ jnp.stack([fx, fy, jnp.zeros_like(fx)]), mz, alpha
