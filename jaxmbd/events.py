"""The root finder that locates a phase's end between two steps of a batch of realisations.

diffrax finds an event's time by a root search over the last step, run for every member of a batch when any
member's event fired; a member whose event did not fire (it ran to the phase's time limit) is given the
distance to its step's end, which is positive at the step's start and zero at its end.  optimistix's
``Bisection`` takes a root exactly at an end of the bracket for no root ("The root is not contained in
[lower, upper]") and stops the program: a batch in which one realisation ended its phase by its condition in
the same run as another reached the time limit raised from inside JAX (the subsea installation at Hs 5.06 m,
Tp 7 s, head seas: the over-boarding's slew never settled in some realisations).  :class:`EndpointBisection`
is the same bisection with the bracket's orientation taken from its two ends, a zero at either end counting
as a root there; it never stops the program (a bracket without a root converges to one end, and the phase's
own checks say what happened).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import optimistix as optx


class EndpointBisection(optx.Bisection):
    """:class:`optimistix.Bisection` whose bracket may have its root at an end (see the module docstring).  Its
    ``flip`` and ``expand_if_necessary`` are not used: the orientation is always taken from the two ends."""

    def init(self, fn, y, args, options, f_struct, aux_struct, tags):
        lower = jnp.asarray(options["lower"], f_struct.dtype)
        upper = jnp.asarray(options["upper"], f_struct.dtype)
        lower_val, _ = fn(lower, args)
        upper_val, _ = fn(upper, args)
        # the plain bisection's state for a rising bracket, its orientation then set from the ends: rising from
        # the lower end (or flat: a member without an event) unless it falls
        state = optx.Bisection(rtol=self.rtol, atol=self.atol, flip=False).init(fn, y, args, options, f_struct, aux_struct, tags)
        return eqx.tree_at(lambda s: s.flip, state, lower_val > upper_val)
