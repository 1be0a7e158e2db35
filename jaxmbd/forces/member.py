"""Morison element for a slender member (a pile, a brace, a crane pedestal in the water, a jacket leg):
normal and tangential drag, inertia, added mass and buoyancy, integrated along its wet length."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..fields import parameter, setting
from ..hydro.waves import elevation, particle_kinematics, ramp
from ..system import Context, Contribution, ForceElement


class MorisonMember(ForceElement):
    """A circular cylinder of diameter D from ``end_a`` to ``end_b`` (both in ``body``'s frame), in the
    water of the run's sea.  Per unit length, with t the member's axis, u_r = u_w + U_c − ẋ the water's
    velocity past the point (waves Wheeler-stretched to the instantaneous surface, and the sea
    state's current), split into its normal part u_n = u_r − (u_r·t) t and its axial part u_t:

        f = ½ ρ C_D,n D |u_n| u_n + ½ ρ C_D,t π D |u_t| u_t + ρ A (1 + C_A) u̇_n − ρ A C_A ẍ_n,

    with A = π D² / 4, u̇_n the normal part of the wave's acceleration and ẍ_n of the member's (the
    added mass ρ A C_A (1 − t tᵀ) per metre enters the equations of motion as an inertia).  The
    buoyancy ρ g A l_wet acts upwards at the centre of the wet length.  The forces are integrated by
    Gauss-Legendre over the wet part of the member only: up to the instantaneous surface ζ where it
    pierces it (ζ taken where the axis crosses the still-water plane), so a surface-piercing pile's
    load is integrated to the free surface as linear wave theory with stretching gives it.  A
    horizontal member is wet or dry as a whole, by its midpoint.

    Outputs: ``force`` (3,) N, world axes (drag, inertia and buoyancy; without the added mass's
    −ρ A C_A ẍ_n, which the dynamics solve for), ``wet_length`` (m) and in waves
    ``diameter_over_wavelength``: Morison's equation holds for D up to a fifth of the wavelength
    (DNV-RP-H103, DNV-RP-C205 6.1), which a run reports beyond.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`morison_member`',
         "in waves, the member's diameter at most a fifth of the realisation's mean wavelength (DNV-RP-C205 6.1)",
         'the member changes the waves it meets (diffraction)'),
    )

    kind: ClassVar[str] = "morison_member"
    water_density_field: ClassVar[str] = "rho"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the member")
    end_a: jax.Array = parameter(unit="m", shape=(3,), doc="one end of the member's axis, body frame")
    end_b: jax.Array = parameter(unit="m", shape=(3,), doc="the other end, body frame")
    diameter: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="D, outer diameter")
    Cd: jax.Array = parameter(unit="", bound=(">=", 0.0), doc="C_D,n, normal drag coefficient (DNV-RP-C205 6.7: 0.65-1.05 by roughness)")
    Ca: jax.Array = parameter(unit="", bound=(">=", 0.0), default=1.0, doc="C_A, normal added-mass coefficient (1 for a circular cylinder)")
    Cd_axial: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="C_D,t, axial (skin) drag coefficient on the perimeter π D")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density")
    ramp_time: jax.Array = parameter(unit="s", bound=(">=", 0.0), default=0.0, doc="the waves fade in over this time")
    buoyancy: bool = setting("bool", default=True, doc="the buoyancy of the wet length (false: a flooded member)")
    n_points: int = setting("integer", default=16, doc="Gauss-Legendre points over the wet length")

    @classmethod
    def file_rules(cls, values, given, fail):
        a, b = (np.asarray(values.get(k, (0.0, 0.0, 0.0)), float) for k in ("end_a", "end_b"))
        if not np.linalg.norm(b - a) > 0.0:
            fail("end_b", f"the member has no length: end_b equals end_a ({a.tolist()})")
        if values.get("n_points", 16) < 1:
            fail("n_points", f"must be at least 1, got {values['n_points']}")

    def _ramp(self, t):
        return ramp(t, self.ramp_time)

    def _wet(self, ctx: Context):
        """Body index, world ends, axis t (world), length, and the wet interval [s0, s1] of s ∈ [0, 1]."""
        i = ctx.body_index(self.body)
        dtype = ctx.p.dtype
        a = ctx.point_position(i, jnp.asarray(self.end_a, dtype=dtype))
        b = ctx.point_position(i, jnp.asarray(self.end_b, dtype=dtype))
        d = b - a
        length = jnp.sqrt(jnp.sum(d * d))
        dz = d[2]
        flat = jnp.abs(dz) < 1e-9 * length
        # where the axis crosses the still water (the midpoint for a horizontal member)
        s_swl = jnp.where(flat, 0.5, jnp.clip(-a[2] / jnp.where(flat, 1.0, dz), 0.0, 1.0))
        x = a + s_swl * d
        zeta = (jnp.zeros((), dtype) if ctx.waves is None
                else elevation(ctx.waves, x[0], x[1], ctx.t).astype(dtype) * self._ramp(ctx.t))
        s_star = jnp.clip((zeta - a[2]) / jnp.where(flat, 1.0, dz), 0.0, 1.0)
        wet_all = (x[2] < zeta).astype(dtype)
        s0 = jnp.where(flat, 0.0, jnp.where(dz > 0, 0.0, s_star))
        s1 = jnp.where(flat, wet_all, jnp.where(dz > 0, s_star, 1.0))
        return i, a, d / length, length, s0, s1

    def _points(self, ctx: Context):
        """Gauss points over the wet length: body-frame points (n, 3), world points (n, 3), weights (n,) m."""
        i, a, t, length, s0, s1 = self._wet(ctx)
        x, w = np.polynomial.legendre.leggauss(self.n_points)
        dtype = ctx.p.dtype
        s = s0 + (s1 - s0) * 0.5 * (jnp.asarray(x, dtype) + 1.0)
        ea, eb = jnp.asarray(self.end_a, dtype=dtype), jnp.asarray(self.end_b, dtype=dtype)
        local = ea[None] + s[:, None] * (eb - ea)[None]
        world = a[None] + s[:, None] * (t * length)[None]
        return i, local, world, (s1 - s0) * 0.5 * jnp.asarray(w, dtype) * length, t, (s1 - s0) * length

    def _forces(self, ctx: Context):
        """World force per Gauss point (n, 3) (weights included), body-frame points, wet length."""
        i, local, world, w, t, wet = self._points(ctx)
        v = jax.vmap(lambda r: ctx.point_velocity(i, r))(local)
        area = jnp.pi * self.diameter**2 / 4
        if ctx.waves is None:
            u = du = jnp.zeros_like(world)
        else:
            r = self._ramp(ctx.t)
            u, du, _ = particle_kinematics(ctx.waves, world, ctx.t)
            if ctx.waves.current is not None:
                u = u + jax.vmap(ctx.waves.current.velocity)(world[:, 2]).astype(u.dtype)
            u, du = u * r, du * r
        ur = u - v
        ut = (ur @ t)[:, None] * t[None]
        un = ur - ut
        dun = du - (du @ t)[:, None] * t[None]

        def mag(x):
            return jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + 1e-30)

        f = (0.5 * self.rho * self.Cd * self.diameter * mag(un) * un
             + 0.5 * self.rho * self.Cd_axial * jnp.pi * self.diameter * mag(ut) * ut
             + self.rho * area * (1.0 + self.Ca) * dun)
        if self.buoyancy:
            g = jnp.sqrt(jnp.sum(ctx.model.gravity**2))
            f = f.at[:, 2].add(self.rho * g * area)
        return f * w[:, None], local, w, wet

    def _added_mass(self, ctx: Context, local, w):
        """ρ A C_A (1 − t tᵀ) per metre at each Gauss point, as one (6, 6) body-frame inertia."""
        dtype = ctx.p.dtype
        ea, eb = jnp.asarray(self.end_a, dtype=dtype), jnp.asarray(self.end_b, dtype=dtype)
        tb = (eb - ea) / jnp.sqrt(jnp.sum((eb - ea) ** 2))
        per = self.rho * jnp.pi * self.diameter**2 / 4 * self.Ca * (jnp.eye(3, dtype=dtype) - jnp.outer(tb, tb))

        def one(r, wi):
            M, c = wi * per, spatial.skew(r)
            return jnp.concatenate([jnp.concatenate([M, -M @ c], -1), jnp.concatenate([c @ M, -c @ M @ c], -1)], -2)

        return jnp.sum(jax.vmap(one)(local, w), axis=0)

    def extra_inertia(self, ctx: Context):
        i, local, _, w, _, _ = self._points(ctx)
        return jnp.zeros((ctx.model.n_bodies, 6, 6), dtype=ctx.p.dtype).at[i].set(self._added_mass(ctx, local, w))

    def contribution(self, ctx: Context, z) -> Contribution:
        F, local, w, _ = self._forces(ctx)
        i = ctx.body_index(self.body)
        wrench = jnp.sum(jax.vmap(lambda r, f: ctx.world_point_wrench(i, r, f))(local, F), axis=0)
        E, tw = self._added_mass(ctx, local, w), ctx.kin.body_twist(i)
        wrench = wrench - spatial.cross_force(tw, spatial.mv(E, tw))
        return Contribution(f_ext=ctx.zeros_f_ext().at[i].add(wrench.astype(ctx.p.dtype)))

    def outputs(self, ctx: Context, z) -> dict:
        F, _, _, wet = self._forces(ctx)
        out = {"force": jnp.sum(F, axis=0), "wet_length": wet}
        if ctx.waves is not None:
            a2 = jnp.asarray(ctx.waves.amplitude) ** 2
            k = jnp.sum(a2 * jnp.asarray(ctx.waves.wavenumber)) / jnp.maximum(jnp.sum(a2), 1e-300)
            out["diameter_over_wavelength"] = (self.diameter * k / (2 * jnp.pi) * jnp.ones_like(wet)).astype(wet.dtype)
        return out

    def output_units(self, model) -> dict:
        return {"force": "N", "wet_length": "m", "diameter_over_wavelength": "1"}

    def valid_ranges(self, model) -> tuple:
        from ..validity import ValidRange

        return (ValidRange("diameter_over_wavelength", "member diameter over wavelength",
                           "Morison's equation (a member the waves pass unchanged)",
                           "D <= mean wavelength / 5 (DNV-RP-C205 6.1)", upper=0.2, signed=True),)
