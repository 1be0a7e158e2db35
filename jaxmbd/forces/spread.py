"""A mooring spread: n catenary lines on one body, laid out by their headings, written as one table and
solved together (vectorised over the lines)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from .catenary import LINE_UNITS, line_limit, line_outputs, line_ranges, line_start_problem, line_tensions


class MooringSpread(ForceElement):
    """n identical :class:`~jaxmbd.forces.catenary.CatenaryLine` s on ``body``, line k at heading h_k
    (rad from +x towards +y): its fairlead at (r_f cos h_k, r_f sin h_k, z_f) in the body's frame and
    its anchor at (c_x + r_a cos h_k, c_y + r_a sin h_k, z_a) in the world, with r_f
    ``fairlead_radius``, z_f ``fairlead_z``, r_a ``anchor_radius``, z_a ``anchor_z`` (the seabed) and
    c ``centre``.  ``length``, ``EA`` and ``weight`` take one value or one per line.  The lines are
    solved together (one vectorised Newton solve), each as the catenary line solves it.

    Outputs: the catenary line's, one value per line (``fairlead_tension`` (n,) N, …).
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`mooring_spread`',
         'as `catenary_line`, for each line',
         'as `catenary_line`'),
    )

    kind: ClassVar[str] = "mooring_spread"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="the moored body")
    headings: jax.Array = parameter(unit="rad", shape=None, angle=True, doc="h_k, one per line, from +x towards +y")
    fairlead_radius: jax.Array = parameter(unit="m", bound=(">=", 0.0), doc="r_f, fairleads' radius from the body's origin")
    fairlead_z: jax.Array = parameter(unit="m", doc="z_f, fairleads' height in the body's frame")
    anchor_radius: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="r_a, anchors' radius from the centre")
    anchor_z: jax.Array = parameter(unit="m", doc="z_a, the seabed (world)")
    length: jax.Array = parameter(unit="m", shape=None, bound=(">", 0.0), doc="L, one value or one per line")
    EA: jax.Array = parameter(unit="N", shape=None, bound=(">", 0.0), doc="axial stiffness, one value or one per line")
    weight: jax.Array = parameter(unit="N/m", shape=None, bound=(">", 0.0), doc="w, weight in water per metre, one value or one per line")
    centre: jax.Array = parameter(unit="m", shape=(2,), default=(0.0, 0.0), doc="the anchor pattern's centre (world x, y)")
    seabed_friction: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="c_B, friction of the laid lengths")
    max_tension: jax.Array = line_limit("max_tension")
    max_strain: jax.Array = line_limit("max_strain")
    max_anchor_angle: jax.Array = line_limit("max_anchor_angle")

    @classmethod
    def file_rules(cls, values, given, fail):
        h = np.atleast_1d(np.asarray(values.get("headings", ()), float))
        if h.ndim != 1 or h.size < 1:
            fail("headings", "expected one heading per line, at least one")
        for key in ("length", "EA", "weight"):
            v = np.atleast_1d(np.asarray(values.get(key, 1.0), float))
            if v.size not in (1, h.size):
                fail(key, f"expected one value or one per line ({h.size}), got {v.size}")
        if not float(values.get("anchor_radius", 1.0)) > float(values.get("fairlead_radius", 0.0)):
            fail("anchor_radius", "the anchors must lie outside the fairleads' circle (anchor_radius > fairlead_radius)")

    def _per_line(self, x, dtype):
        return jnp.broadcast_to(jnp.asarray(x, dtype), jnp.shape(jnp.atleast_1d(self.headings)))

    def _geometry(self, ctx: Context):
        """Body index, body-frame fairleads (n, 3), their world positions, the anchors (n, 3) and per line
        L, EA, w."""
        i = ctx.body_index(self.body)
        dtype = ctx.p.dtype
        h = jnp.atleast_1d(jnp.asarray(self.headings, dtype))
        c, s = jnp.cos(h), jnp.sin(h)
        fair = jnp.stack([self.fairlead_radius * c, self.fairlead_radius * s, jnp.full_like(h, self.fairlead_z)], -1)
        cx, cy = jnp.asarray(self.centre, dtype)
        anchors = jnp.stack([cx + self.anchor_radius * c, cy + self.anchor_radius * s, jnp.full_like(h, self.anchor_z)], -1)
        L, EA, w = (self._per_line(x, dtype) for x in (self.length, self.EA, self.weight))
        world = jax.vmap(lambda r: ctx.point_position(i, r))(fair)
        return i, fair, world, anchors, L, EA, w

    def _lines(self, ctx: Context):
        """Body index, body-frame fairleads (n, 3), and per line (H, V, ê, converged, L, w)."""
        i, fair, world, anchors, L, EA, w = self._geometry(ctx)
        H, V, e_h, ok = jax.vmap(lambda p, a, L, EA, w: line_tensions(p, a, L, EA, w, self.seabed_friction))(world, anchors, L, EA, w)
        return i, fair, H, V, e_h, ok, L, w

    def contribution(self, ctx: Context, z) -> Contribution:
        i, fair, H, V, e_h, _, _, _ = self._lines(ctx)
        F = -H[:, None] * e_h - V[:, None] * jnp.array([0.0, 0.0, 1.0], dtype=e_h.dtype)
        wrench = jnp.sum(jax.vmap(lambda r, f: ctx.world_point_wrench(i, r, f))(fair, F), axis=0)
        return Contribution(f_ext=ctx.zeros_f_ext().at[i].add(wrench.astype(ctx.p.dtype)))

    def outputs(self, ctx: Context, z) -> dict:
        i, fair, world, anchors, L, EA, w = self._geometry(ctx)
        H, V, _, ok = jax.vmap(lambda p, a, L, EA, w: line_tensions(p, a, L, EA, w, self.seabed_friction))(world, anchors, L, EA, w)
        return jax.vmap(lambda H, V, ok, L, w, EA: line_outputs(H, V, ok, L, w, self.seabed_friction, EA))(H, V, ok, L, w, EA)

    def output_units(self, model) -> dict:
        return dict(LINE_UNITS)

    def valid_ranges(self, model) -> tuple:
        return line_ranges(self.max_tension, self.max_strain, self.max_anchor_angle)

    def start_problem(self, ctx: Context) -> str | None:
        """The catenary line's checks, line by line (named by its heading)."""
        _, _, world, anchors, L, EA, w = (np.asarray(x) if not isinstance(x, int) else x for x in self._geometry(ctx))
        for k, hk in enumerate(np.atleast_1d(np.asarray(self.headings, float))):
            problem = line_start_problem(world[k], anchors[k], float(L[k]), float(EA[k]), float(w[k]), self.max_tension,
                                         which=f"line {k} (heading {np.degrees(hk):g}°): ", max_strain=self.max_strain)
            if problem:
                return problem
        return None
