"""The root finder that locates a phase's end between two steps of a batch of realisations.

diffrax finds an event's time by a root search over the last step, run for every member of a batch when any
member's event fired; a member whose event did not fire (it ran to the phase's time limit) is given the
distance to its step's end, which is positive at the step's start and zero at its end.  optimistix's
``Bisection`` takes a root exactly at an end of the bracket for no root ("The root is not contained in
[lower, upper]") and stops the program: a batch in which one realisation ended its phase by its condition in
the same run as another reached the time limit raised from inside JAX (the subsea installation at Hs 5.06 m,
Tp 7 s, head seas: the over-boarding's slew never settled in some realisations).  :class:`EndpointBisection`
is the same bisection with the bracket's orientation taken from its two ends, a zero at either end counting
as a root there; it never stops the program (a bracket without a root converges to one end).  It ends when the
bracket is as narrow as asked, whatever the function's value there: a margin that jumps across its threshold,
or crosses it too steeply for its value to fall under the tolerance within a bracket of round-off width, has no
small value to wait for (the subsea installation's landing at Hs 3.4 m, Tp 10 s in following seas stopped so).
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

    def terminate(self, fn, y, args, options, state, tags):
        """Done when the bracket is narrower than ``atol + rtol |t|``: the event's time is located.  optimistix's
        bisection also waits for the function's value under ``atol``, which a condition whose margin jumps at its
        threshold (a contact starting, a load snapping) never gives: it ran to its most steps and the phase's
        run stopped with "the root finder did not converge" though the bracket held the time to 1e-10 s."""
        del fn, args, options, tags
        return jnp.abs(state.lower - state.upper) < self.atol + self.rtol * jnp.abs(y), optx.RESULTS.successful


ROOT_TOL = 1e-13
"""The root finder's tolerance on a phase's end time, absolute (s) and relative: the bisection's bracket at most
1e-13 (1 + |t|) s wide.  Its answer is a midpoint of halvings, so it moves in steps of that size as the design
moves (its derivative, the implicit-function theorem's, is the root's): at 1e-10 the steps, some 4e-8 s at 400 s,
made a difference of the landing's margin over 1e-5 of the rope's stiffness (the limit moving by 5e-6 s) 2-3 %
off its derivative; the bisection's few more halvings cost nothing against a step."""
