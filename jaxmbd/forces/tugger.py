"""Tugger line: a constant-tension winch line that holds a lifted load against sway and turning."""

from __future__ import annotations

import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from ..validity import ValidRange
from .rope import smooth_tension


class TuggerLine(ForceElement):
    """A tugger line from a constant-tension winch at ``point_a`` of ``body_a`` (the vessel's deck, a
    crane's king) to ``point_b`` of ``body_b`` (the load):

        T = s(T₀ + c l̇ + s(EA/L_max (l − L_max))),   s(x) = w softplus(x / w),

    with l the line's length between the two points.  The winch pays out and hauls in to hold the
    set tension T₀ whatever the length; ``damping`` c is its render (tension rising while it pays out,
    l̇ > 0, falling while it hauls in).  At ``max_length`` L_max the drum has no more line and the
    line stretches as a rope of axial stiffness EA; s smooths both onsets over ``transition`` w (N).
    The line only pulls.

    Outputs: ``tension`` (N), ``length`` (m).  The model holds while the winch has line to pay out
    (l ≤ L_max): a run reports a line paid out to its end.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`tugger_line`',
         'length within `max_length`',
         'the winch has paid out its drum: the line then stretches as a rope'),
    )

    kind: ClassVar[str] = "tugger_line"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="body of the winch (the deck, or world)")
    point_a: jax.Array = parameter(unit="m", shape=(3,), doc="winch fairlead in body_a's frame")
    body_b: str = setting("body_or_world", doc="body the line is made fast to (the load)")
    point_b: jax.Array = parameter(unit="m", shape=(3,), doc="attachment point in body_b's frame")
    tension: jax.Array = parameter(unit="N", bound=(">=", 0.0), doc="T₀, the winch's set tension")
    damping: jax.Array = parameter(unit="N·s/m", bound=(">=", 0.0), default=0.0, doc="c, tension change per pay-out speed (render)")
    max_length: jax.Array = parameter(unit="m", bound=(">", 0.0), default=math.inf, doc="L_max, line on the drum and off it together")
    EA: jax.Array = parameter(unit="N", bound=(">", 0.0), default=1.0e9, doc="axial stiffness once the drum is empty")
    transition: jax.Array = parameter(unit="N", bound=(">", 0.0), default=1.0, doc="w, width of the smooth onsets")

    def tension_and_direction(self, ctx: Context):
        """(T, e, l): tension, unit vector from the winch to the load (world axes) and length."""
        _, _, _, _, e, l, ldot = ctx.segment(self.body_a, self.point_a, self.body_b, self.point_b)
        # an empty drum: elastic beyond L_max (jnp.where keeps an infinite L_max out of the arithmetic)
        finite = jnp.isfinite(self.max_length)
        L = jnp.where(finite, self.max_length, 1.0)
        stretch = jnp.where(finite, smooth_tension(self.EA / L * (l - L), self.transition), 0.0)
        T = smooth_tension(self.tension + self.damping * ldot + stretch, self.transition)
        return T, e, l

    def contribution(self, ctx: Context, z) -> Contribution:
        T, e, _ = self.tension_and_direction(ctx)
        f_ext = ctx.zeros_f_ext()
        f_ext = ctx.add_point_force(f_ext, self.body_a, self.point_a, T * e)
        f_ext = ctx.add_point_force(f_ext, self.body_b, self.point_b, -T * e)
        return Contribution(f_ext=f_ext)

    def outputs(self, ctx: Context, z) -> dict:
        T, _, l = self.tension_and_direction(ctx)
        return {"tension": T, "length": l}

    def output_units(self, model) -> dict:
        return {"tension": "N", "length": "m"}

    def valid_ranges(self, model) -> tuple:
        L = float(self.max_length)
        if not math.isfinite(L):
            return ()
        return (ValidRange("length", "tugger line length", "a constant-tension winch with line on its drum",
                           f"length <= max_length = {L:g} m", upper=L, signed=True),)
