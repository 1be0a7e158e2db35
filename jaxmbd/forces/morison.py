"""Morison element for a lumped object (a manifold, a spool, a clump weight): drag, inertia, added mass
and buoyancy of its submerged part, as it is lowered through the splash zone and the water column."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .. import spatial
from ..fields import parameter, setting
from ..hydro.waves import column_kinematics, ramp, water_column
from ..system import Context, Contribution, ForceElement


class MorisonObject(ForceElement):
    """A lumped object at ``point`` of ``body``, of displaced volume V, projected area A and vertical
    extent h centred on the point, in the water of the run's sea (DNV-RP-H103, section 3.2):

        F = ρ g V s e_z + ρ V (s + C_A a) u̇_w + ½ ρ C_D A s |u_r| u_r − ρ C_A V a ẍ,

    with u_w and u̇_w the wave's particle velocity and acceleration (linear, Wheeler-stretched to the
    instantaneous surface) at the centre of the submerged part, u_r = u_w + U_c − ẋ the velocity of the
    water past the object (U_c: the sea state's current at that depth, which fades in with the waves
    over ``ramp_time``, plus the element's own uniform ``current``), ẍ the point's acceleration, and s the submerged
    fraction, (ζ − z_bottom) / h clipped to [0, 1] (ζ the wave's elevation above the point, z_bottom =
    z − h/2): continuous as the object crosses the surface, exact for a wall-sided object that stays
    upright.  The added mass ρ C_A V a enters the equations of motion as an inertia at the point;
    gravity stays in the model.  Its fraction a is s with its two corners rounded: a = g(x) − g(x − 1), x the
    unclipped (ζ − z_bottom) / h and g(x) = max(x, 0) with a parabola over |x| < b = ``entry_blend`` / 2
    (g = (x + b)² / 4b there), so that a = s wherever b < s < 1 − b, 0 and 1 beyond the corners, and its rate
    ȧ is continuous: the slamming term below, ρ C_A V ȧ (w − ż), would otherwise switch on and off with a jump
    as the object's bottom enters and its top goes under, and a jump in the right-hand side, integrated by
    fixed steps, moves the solution by a share of it that changes in steps as the jump's time crosses the
    steps' stages: a statistic of the run then jumps by small amounts as Hs or a design value moves, and its
    derivative is not its trend.  ``entry_blend = 0``: a = s, sharp.

    A flat or open object (a manifold's roof, a mudmat, a protection cover) has a large vertical added
    mass and little sideways: ``Ca``, ``Cd`` and ``area`` then take one value per axis of the body's
    frame, and C_A, C_D A become the diagonal tensors diag(C_A,i), diag(C_D,i A_i) in those axes, turned
    to the world by the body's rotation R: the added mass ρ V s R diag(C_A) Rᵀ, the inertia force
    ρ V s (1 + R diag(C_A) Rᵀ) u̇_w and the drag ½ ρ s |u_r| R diag(C_D A) Rᵀ u_r (one value: the
    isotropic forms above).  With ``slamming``, the rate of change of that added mass
    as the object enters the water adds ρ C_A V ȧ (w − ż) vertically, ȧ = g'(x) − g'(x − 1) times
    (ζ̇ − ż) / h, where positive (DNV-RP-H103's slamming as the time derivative of the added mass; 0 once
    fully in or out).  On entry the object gives
    the water it sets moving its momentum (von Kármán's: lowered into still water at v₀, it is fully in at
    v₀ M / (M + ρ C_A V)).  On exit (ṡ < 0) the term is left out: the water the object leaves goes on as
    its wake and gives nothing back.  The momentum form would hand the object the water's momentum,
    (M + ρ C_A V) v₀ / M.  For a manifold whose vertical added mass is seven times its mass, that is an
    explosive force, quadratic in the speed, as it comes up out of a wave with a slack wire: it threw a
    175 t manifold tens of metres out of a steep sea in under half a second.

    Outputs: ``force`` (3,) N (world axes, drag and inertia and buoyancy, without the added mass's
    −ρ C_A V s ẍ, which the dynamics solve for), ``submerged`` (the fraction s), ``depth`` (m, of the
    point under the surface, negative above it), ``relative_velocity`` (3,) m/s, and in waves
    ``size_over_wavelength``: the object's size, max(h, √A), over the realisation's mean wavelength
    2π / k̄ (k̄ weighted by the components' energy).  Morison's equation holds for an object the waves
    pass unchanged, a fifth of the wavelength or less (DNV-RP-H103): a run reports one larger.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`morison_object`',
         "in waves, the object's size (max of its height and √area) at most a fifth of the realisation's mean wavelength (DNV-RP-H103)",
         'the object changes the waves it meets (diffraction): model it as a `[[hydro]]` body with BEM data'),
    )

    kind: ClassVar[str] = "morison_object"
    water_density_field: ClassVar[str] = "rho"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the object")
    volume: jax.Array = parameter(unit="m³", bound=(">", 0.0), doc="V, displaced volume when fully submerged")
    area: jax.Array = parameter(unit="m²", shape=[(), (3,)], bound=(">=", 0.0),
                                doc="A, projected area normal to the flow (drag); or one per body axis")
    height: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="h, vertical extent, centred on `point`")
    Cd: jax.Array = parameter(unit="", shape=[(), (3,)], bound=(">=", 0.0),
                              doc="C_D, drag coefficient (DNV-RP-H103 Tables A-1, A-2); or one per body axis")
    Ca: jax.Array = parameter(unit="", shape=[(), (3,)], bound=(">=", 0.0),
                              doc="C_A, added-mass coefficient (DNV-RP-H103 Tables A-1, A-2); or one per body axis")
    point: jax.Array = parameter(unit="m", shape=(3,), default=(0.0, 0.0, 0.0), doc="centre of the object in the body's frame")
    current: jax.Array = parameter(unit="m/s", shape=(3,), default=(0.0, 0.0, 0.0), doc="U_c, uniform current, world axes")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density")
    ramp_time: jax.Array = parameter(unit="s", bound=(">=", 0.0), default=0.0, doc="the waves fade in over this time (as the hydro element's)")
    entry_blend: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.1,
                                       doc="the added mass's fraction rounded over this fraction of the height about each "
                                           "end of the crossing (its rate, the slamming, continuous); 0: sharp")
    slamming: bool = setting("bool", default=False,
                             doc="add the rate of change of added mass as the object enters the water, ρ C_A V ȧ (w − ż), vertical, "
                                 "ȧ > 0 (none on exit)")

    def _ramp(self, t):
        return ramp(t, self.ramp_time)

    def _submerged(self, ctx: Context):
        """(point position, surface elevation ζ above it, submerged fraction s, the waves' column there, the
        unclipped fraction x): all the added mass needs, and the phases the kinematics reuse; once per
        right-hand side."""
        return ctx.once((self.name, "submerged"), lambda: self._submerged_now(ctx))

    def _submerged_now(self, ctx: Context):
        i = ctx.body_index(self.body)
        p = ctx.point_position(i, jnp.asarray(self.point, dtype=ctx.p.dtype))
        if ctx.waves is None:
            zeta, column = jnp.zeros((), p.dtype), None
        else:
            column = water_column(ctx.waves, p[0], p[1], ctx.t)
            zeta = column[2][0].astype(p.dtype) * self._ramp(ctx.t)
        x = (zeta - (p[2] - 0.5 * self.height)) / self.height
        return p, zeta, jnp.clip(x, 0.0, 1.0), column, x

    def _corner(self, x, slope: bool = False):
        """g(x) (``slope``: g'(x)): max(x, 0) with a parabola over |x| < entry_blend / 2."""
        b = 0.5 * jnp.asarray(self.entry_blend, dtype=x.dtype)
        safe = jnp.maximum(b, jnp.finfo(x.dtype).tiny)
        if slope:
            return jnp.where(x > b, 1.0, jnp.where(x < -b, 0.0, (x + b) / (2 * safe))).astype(x.dtype)
        return jnp.where(x > b, x, jnp.where(x < -b, 0.0, (x + b) ** 2 / (4 * safe))).astype(x.dtype)

    def _added(self, x):
        """a, the added mass's fraction, of the unclipped submerged fraction x."""
        return self._corner(x) - self._corner(x - 1.0)

    def _water(self, ctx: Context):
        """(point position, velocity, submerged fraction s, the added mass's fraction a and its rate ȧ, depth,
        u_w, u̇_w) at this instant (world)."""
        p, zeta, s, column, x = self._submerged(ctx)
        a = self._added(x)
        v = ctx.point_velocity(ctx.body_index(self.body), jnp.asarray(self.point, dtype=ctx.p.dtype))
        h, bottom = self.height, p[2] - 0.5 * self.height
        if ctx.waves is None:
            zero = jnp.zeros(3, p.dtype)
            return p, v, s, a, self._rate(x, -v[2]), zeta - p[2], zero, zero
        r = self._ramp(ctx.t)
        centre = p.at[2].set(bottom + 0.5 * s * h)  # the submerged part's centre
        # with slamming, the surface's own rise ζ̇ too: the particle velocity at the (stretched) surface
        # (the full elevation: the kinematics are scaled by the ramp below, as ζ was)
        heights = jnp.stack([centre[2], column[2][0]]) if self.slamming else centre[2][None]
        u, du = column_kinematics(ctx.waves, column, heights)
        rate = self._rate(x, u[1, 2] * r - v[2]) if self.slamming else jnp.zeros((), p.dtype)
        if ctx.waves.current is not None:  # the sea's current at the submerged part's centre
            u = u.at[0].add(ctx.waves.current.velocity(centre[2]).astype(p.dtype))
        return p, v, s, a, rate, zeta - p[2], u[0] * r, du[0] * r

    def _rate(self, x, rise):
        """ȧ: the surface rising past the object at ``rise`` (ζ̇ − ż) while it crosses, the added mass's fraction's
        slope in x (1 between the corners, 0 outside them) times ẋ = rise / h."""
        return (self._corner(x, slope=True) - self._corner(x - 1.0, slope=True)) * rise / self.height

    def _entering(self, sdot):
        """The rate at which the object takes on added mass, ṡ where it enters (ṡ > 0), 0 where it leaves the water
        (its added mass's momentum goes into the wake, not back into the object)."""
        return jnp.maximum(sdot, 0.0)

    def _force(self, ctx: Context):
        p, v, s, a, sdot, depth, u, du = self._water(ctx)
        ur = u + jnp.asarray(self.current, dtype=p.dtype) - v
        speed = jnp.sqrt(jnp.sum(ur * ur) + 1e-30)
        g = jnp.sqrt(jnp.sum(ctx.model.gravity**2))
        R = ctx.kin.rotation(ctx.body_index(self.body))
        Ca, CdA = self._tensor(R, self.Ca), self._tensor(R, self.Cd * self.area)
        rho_v = self.rho * self.volume
        F = (0.5 * self.rho * s * speed * (CdA @ ur) + rho_v * (s * du + a * (Ca @ du))
             + rho_v * s * g * jnp.array([0.0, 0.0, 1.0], dtype=p.dtype))
        if self.slamming:  # d(m_a)/dt (w − ż): the added mass gained per second as the object enters the water
            F = F.at[2].add(self.rho * Ca[2, 2] * self.volume * self._entering(sdot) * ur[2])
        return F, s, depth, ur, a

    @staticmethod
    def _tensor(R, c):
        """A coefficient, one value or one per body axis, as the world-axes tensor R diag(c) Rᵀ."""
        c = jnp.broadcast_to(jnp.asarray(c, dtype=R.dtype), (3,))
        return (R * c) @ R.T

    def _added_mass(self, ctx: Context, a):
        """ρ V a diag(C_A) as a point inertia at ``point`` c (body frame), (6, 6): with M that 3x3 mass,
        [[M, −M ĉ], [ĉ M, −ĉ M ĉ]] (the point's velocity v − ĉ ω)."""
        point = jnp.asarray(self.point, dtype=ctx.p.dtype)
        M = jnp.diag(jnp.broadcast_to(self.rho * self.volume * a * jnp.asarray(self.Ca, dtype=point.dtype), (3,)))
        c = spatial.skew(point)
        return jnp.concatenate([jnp.concatenate([M, -M @ c], -1), jnp.concatenate([c @ M, -c @ M @ c], -1)], -2)

    def extra_inertia(self, ctx: Context):
        i = ctx.body_index(self.body)
        return jnp.zeros((ctx.model.n_bodies, 6, 6), dtype=ctx.p.dtype).at[i].set(self._added_mass(ctx, self._added(self._submerged(ctx)[4])))

    def contribution(self, ctx: Context, z) -> Contribution:
        F, _, _, _, a = self._force(ctx)
        f_ext = ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, F)
        # the added mass moves with the point: its inertial wrench is −(E a + v ×* E v); E a is the
        # dynamics', the velocity product is given here
        i = ctx.body_index(self.body)
        E, tw = self._added_mass(ctx, a), ctx.kin.body_twist(i)
        f_ext = f_ext.at[i].add(-spatial.cross_force(tw, spatial.mv(E, tw)).astype(f_ext.dtype))
        return Contribution(f_ext=f_ext)

    def outputs(self, ctx: Context, z) -> dict:
        F, s, depth, ur, _ = self._force(ctx)
        out = {"force": F, "submerged": s, "depth": depth, "relative_velocity": ur}
        if ctx.waves is not None:
            # the object's size over the realisation's energy-weighted mean wavelength 2π / k̄
            a2 = jnp.asarray(ctx.waves.amplitude) ** 2
            k = jnp.sum(a2 * jnp.asarray(ctx.waves.wavenumber)) / jnp.maximum(jnp.sum(a2), 1e-300)
            size = jnp.maximum(self.height, jnp.sqrt(jnp.max(jnp.asarray(self.area))))
            out["size_over_wavelength"] = (size * k / (2 * jnp.pi) * jnp.ones_like(s)).astype(s.dtype)
        return out

    def output_units(self, model) -> dict:
        return {"force": "N", "submerged": "1", "depth": "m", "relative_velocity": "m/s", "size_over_wavelength": "1"}

    def valid_ranges(self, model) -> tuple:
        from ..validity import ValidRange

        return (ValidRange("size_over_wavelength", "object size over wavelength", "Morison's equation (an object the waves pass unchanged)",
                           "size (max of height, sqrt(area)) <= mean wavelength / 5 (DNV-RP-H103)", upper=0.2, signed=True),)
