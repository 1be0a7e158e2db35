"""Fender: a compliant contact between a point on one body and a plane on another (a quay wall, the
side of a supply vessel alongside), pushing only, with friction along the plane."""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from ..validity import ValidRange


class Fender(ForceElement):
    """A fender at ``point`` of ``body`` against the plane through ``plane_point`` with unit normal
    ``normal`` (both in the frame of ``other``, a body or ``"world"``; the normal points to the side
    the fender comes from).  With d the signed distance of the fender point from the plane, the
    compression is δ = −d and the normal force is:

        F_n = σ(k δ / w) s(k δ + c δ̇),   s(x) = w softplus(x / w),

    a linear fender curve with damping while in contact, smoothed over ``transition`` w (N) so that
    contact and release are differentiable (as the wire rope's slack); σ is the logistic function.
    The fender only pushes (s ≥ 0: the damping does not pull on a fast release), and not at all away from
    the plane: the onset σ(k δ / w), w / k wide, falls as exp(k δ / w) with the gap (a seabed's, k 2.5 MN/m
    and w 1 kN, pushes under 1e-5 N at a gap of 1 cm approached at 0.5 m/s, and exactly nothing at a metre).
    Friction along the plane is μ F_n against the sliding velocity u,
    regularised as −μ F_n u / √(|u|² + u_s²) with ``slip_velocity`` u_s.  The force acts on
    ``body`` at the fender point and, opposite, on ``other`` at the same point.

    The plane may end: the contact holds only while the fender point, in ``other``'s frame, lies in
    the box [``region_min``, ``region_max``] (a deck's edges; a load slewed over the side leaves it).
    A point that enters the box from its side, already under the plane, is pushed out at once by k δ:
    bound the box on the plane's far side to the compression the contact can take (a deck's to a few
    centimetres under its surface), and give the other faces a plane of their own (a hull's side).
    As a seabed (``seabed = true``: a world plane under the still water, normal up) it lands a
    lowered object: k is then the soil's stiffness per contact point, the load over the settlement it
    causes (DNV-RP-H103 section 9's landing on soil: from a soil investigation, or the load over an
    assumed settlement), c its damping.

    Outputs: ``force`` (N, normal, ≥ 0), ``compression`` (m), ``closing_speed`` (m/s, the
    compression's rate: at the first touch, the impact velocity), ``friction`` (3,) N, world axes.
    A fender is rated to a compression (``rated_compression``): beyond it the linear curve no longer
    holds (the fender is bottoming out), which a run reports.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`fender`',
         'compression within `rated_compression`',
         'the fender bottoms out: its linear curve no longer holds'),
    )

    kind: ClassVar[str] = "fender"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the fender")
    point: jax.Array = parameter(unit="m", shape=(3,), doc="fender face at zero compression, body frame")
    other: str = setting("body_or_world", doc="body carrying the contact plane (a quay: world)")
    plane_point: jax.Array = parameter(unit="m", shape=(3,), doc="a point of the contact plane, other's frame")
    normal: jax.Array = parameter(unit="", shape=(3,), doc="plane normal towards the fender, other's frame (normalised)")
    stiffness: jax.Array = parameter(unit="N/m", bound=(">", 0.0), doc="k, slope of the fender curve")
    damping: jax.Array = parameter(unit="N·s/m", bound=(">=", 0.0), default=0.0, doc="c, in contact only")
    friction: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="friction coefficient μ along the plane")
    slip_velocity: jax.Array = parameter(unit="m/s", bound=(">", 0.0), default=0.01, doc="u_s of the regularised friction")
    transition: jax.Array = parameter(unit="N", bound=(">", 0.0), default=1.0, doc="w, width of the smooth contact onset")
    rated_compression: jax.Array = parameter(unit="m", bound=(">", 0.0), default=float("inf"),
                                             doc="compression the fender curve holds to")
    region_min: jax.Array = parameter(unit="m", shape=(3,), default=(-math.inf,) * 3,
                                      doc="the contact holds while the fender point, in other's frame, is above this corner")
    region_max: jax.Array = parameter(unit="m", shape=(3,), default=(math.inf,) * 3,
                                      doc="... and below this one (a deck's edges: off it, no contact)")
    seabed: bool = setting("bool", default=False, doc="the plane is the seabed: other is world, the normal up, the plane under the still water")

    def springs(self, ctx) -> tuple:
        """k along the plane's normal, between the fender's point and the point of ``other`` it touches (in
        contact, or coming to it)."""
        x = np.asarray(ctx.point_position(ctx.body_index(self.body), jnp.asarray(self.point, ctx.R.dtype)))
        n = np.asarray(self.normal, float)
        touched = x
        if self.other != "world":
            j = ctx.body_index(self.other)
            R, p = np.asarray(ctx.R[j]), np.asarray(ctx.p[j])
            n, touched = R @ n, R.T @ (x - p)
        return ((self.body, self.point, self.other, touched, float(self.stiffness), n / np.linalg.norm(n)),)

    @classmethod
    def file_rules(cls, values, given, fail):
        if "normal" in values and not float(np.linalg.norm(values["normal"])) > 0.0:
            fail("normal", "must not be the zero vector: it is the direction the fender pushes")
        if not values.get("seabed", False):
            return
        if values.get("other") != "world":
            fail("other", f"a seabed is part of the world: expected other = \"world\", got {values.get('other')!r}")
        n = np.asarray(values.get("normal", (0.0, 0.0, 1.0)), dtype=float)
        if not (n[2] > 0 and np.allclose(n[:2], 0.0)):
            fail("normal", f"a seabed's normal points up, [0, 0, 1]; got {n.tolist()}")
        z = float(np.asarray(values.get("plane_point", (0.0, 0.0, 0.0)))[2])
        if not z < 0.0:
            fail("plane_point", f"a seabed lies under the still water (z < 0, world z up); got z = {z:g} m")

    def _contact(self, ctx: Context):
        """World fender point and velocity, plane normal, compression δ, its rate, sliding velocity."""
        p, v = ctx.point(self.body, self.point)
        n = jnp.asarray(self.normal, dtype=p.dtype)
        n = n / jnp.sqrt(jnp.sum(n * n))
        i = ctx.body_index(self.other)
        if i < 0:
            p0, n_w, v_plane = jnp.asarray(self.plane_point, dtype=p.dtype), n, jnp.zeros_like(p)
        else:
            p0 = ctx.point_position(i, jnp.asarray(self.plane_point, dtype=p.dtype))
            n_w = spatial.mv(ctx.kin.rotation(i), n)
            # velocity of the plane's material point under the fender
            local = spatial.mtv(ctx.kin.rotation(i), p - ctx.kin.origin(i))
            v_plane = ctx.point_velocity(i, local)
        u = v - v_plane
        compression = -jnp.sum(n_w * (p - p0))
        rate = -jnp.sum(n_w * u)
        local = p if i < 0 else spatial.mtv(ctx.kin.rotation(i), p - ctx.kin.origin(i))
        inside = jnp.all((local >= self.region_min) & (local <= self.region_max))
        return p, n_w, compression, rate, u - jnp.sum(n_w * u) * n_w, inside

    def forces(self, ctx: Context):
        """(F_n, compression, friction force (3,) world, contact point, normal, compression rate)."""
        p, n, delta, rate, slip, inside = self._contact(ctx)
        w = self.transition
        # the fender curve with its damping, kept >= 0 (a contact only pushes) and switched on over the onset:
        # zero away from the plane (a softplus of the sum alone would push w ln 2 from any distance)
        onset = jax.nn.sigmoid(self.stiffness * delta / w)
        fn = jnp.where(inside, onset * w * jax.nn.softplus((self.stiffness * delta + self.damping * rate) / w), 0.0)
        speed = jnp.sqrt(jnp.sum(slip * slip) + self.slip_velocity**2)
        friction = -self.friction * fn * slip / speed
        return fn, delta, friction, p, n, rate

    def contribution(self, ctx: Context, z) -> Contribution:
        fn, _, friction, p, n, _ = self.forces(ctx)
        force = fn * n + friction  # on the fender's body
        f_ext = ctx.zeros_f_ext()
        for name, sign in ((self.body, 1.0), (self.other, -1.0)):
            i = ctx.body_index(name)
            if i >= 0:
                local = spatial.mtv(ctx.kin.rotation(i), p - ctx.kin.origin(i))
                f_ext = f_ext.at[i].add(ctx.world_point_wrench(i, local, sign * force).astype(f_ext.dtype))
        return Contribution(f_ext=f_ext)

    def outputs(self, ctx: Context, z) -> dict:
        fn, delta, friction, _, _, rate = self.forces(ctx)
        return {"force": fn, "compression": delta, "closing_speed": rate, "friction": friction}

    def output_units(self, model) -> dict:
        return {"force": "N", "compression": "m", "closing_speed": "m/s", "friction": "N"}

    def valid_ranges(self, model) -> tuple:
        rated = float(self.rated_compression)
        if not math.isfinite(rated):
            return ()
        return (ValidRange("compression", "fender compression", "a linear fender curve",
                           f"compression <= rated {rated:g} m", upper=rated, signed=True),)
