"""A multi-segment quasi-static mooring line: sections of different length, EA and weight in series from
the anchor to the fairlead (chain-wire-chain, chain-polyester), with point loads at their joints (a
clump weight, or a buoy as a negative load)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from .catenary import LINE_UNITS, catenary_profile, line_limit, line_outputs, line_ranges, line_start_problem, solve_catenary


def _suspended(H, V, L, EA, w):
    """(X, Z) of a section hanging clear of the seabed with fairlead-side tensions (H, V) (V may fall
    below zero along it: a sag between a buoy and a clump)."""
    r, r0 = V / H, (V - w * L) / H
    x = H / w * (jnp.arcsinh(r) - jnp.arcsinh(r0)) + H * L / EA
    z = H / w * (jnp.sqrt(1.0 + r * r) - jnp.sqrt(1.0 + r0 * r0)) + (V * L - 0.5 * w * L * L) / EA
    return x, z


def section_tensions(V_top, L, w, P):
    """The vertical tension at the top of each section (n,), from the fairlead's V_top down: each section
    below carries less by the weights above it and the point loads at its top joint."""
    below = V_top - jnp.cumsum((w * L)[::-1])[::-1] + w * L  # V at the top of k, the sections' weights only
    loads = jnp.concatenate([jnp.cumsum(P[::-1])[::-1], jnp.zeros(1, P.dtype)])  # P_j for j >= k
    return below - loads


def _sections(H, V_top, L, EA, w, P, cb=0.0):
    """Per section (anchor first): its (X, Z) from its lower to its upper end, and the vertical tension
    at its top."""
    V = section_tensions(V_top, L, w, P)
    x0, z0 = catenary_profile(H, V[0], L[0], EA[0], w[0], cb)
    xs, zs = jax.vmap(lambda v, l, ea, ww: _suspended(H, v, l, ea, ww))(V[1:], L[1:], EA[1:], w[1:])
    return jnp.concatenate([x0[None], xs]), jnp.concatenate([z0[None], zs]), V


def segmented_profile(H, V_top, L, EA, w, P, cb=0.0):
    """(X, Z) from the anchor to the fairlead of sections L, EA, w (anchor first) with point loads P at
    their n − 1 joints (positive down), fairlead tensions (H, V_top): the bottom section as
    :func:`catenary_profile` (lying on the seabed while its top tension is below its weight), the others
    suspended."""
    x, z, _ = _sections(H, V_top, L, EA, w, P, cb)
    return jnp.sum(x), jnp.sum(z)


@eqx.filter_jit  # one program per shape for the calls outside a run (the start check, the mooring commands)
def solve_segmented(X, Z, L, EA, w, P, cb=0.0, *, steps=200):
    """(H, V_top, V at the top of each section, converged): Levenberg-Marquardt on (log H, V_top / W) with
    W the line's whole weight in water (sections and point loads), started from the single line of the
    same length, weight and series stiffness (:func:`solve_catenary`), differentiated by the implicit
    function theorem.  ``converged`` is false where no such profile exists: a joint at or under the
    seabed (the bottom section's top pushed down by a clump), or a fairlead below the seabed."""
    Lt = jnp.sum(L)
    W = jnp.sum(w * L) + jnp.sum(P)
    EA_eq = Lt / jnp.sum(L / EA)
    H0, V0, _ = jax.lax.stop_gradient(solve_catenary(X, Z, Lt, EA_eq, W / Lt))
    H0 = jnp.maximum(H0, 1e-3 * W)

    def residual(y, args):
        X, Z, L, EA, w, P = args
        x, z = segmented_profile(jnp.exp(y[0]), y[1] * W, L, EA, w, P, cb)
        return jnp.stack([x - X, z - Z]) / Lt

    args = (X, Z, L, EA, w, P)
    sol = optx.least_squares(residual, optx.LevenbergMarquardt(rtol=1e-12, atol=1e-12), jnp.stack([jnp.log(H0), V0 / W]),
                             args=args, max_steps=steps, throw=False)
    H, V_top = jnp.exp(sol.value[0]), sol.value[1] * W
    _, z, V = _sections(H, V_top, L, EA, w, P, cb)
    joints = jnp.cumsum(z)[:-1]  # the joints' heights above the anchor's seabed
    solved = (sol.result == optx.RESULTS.successful) & (jnp.max(jnp.abs(residual(sol.value, args))) < 1e-9)
    ok = solved & (Z > 0) & (V[0] >= 0) & jnp.all(joints > 1e-9 * Lt)
    ok = ok & jnp.isfinite(H) & jnp.isfinite(V_top)
    # where no profile exists, the single equivalent line's tensions stand in (reported, never NaN)
    H, V_top = jnp.where(ok, H, H0), jnp.where(ok, V_top, V0)
    return H, V_top, jnp.where(ok, V, section_tensions(V0, L, w, P)), ok


class SegmentedLine(ForceElement):
    """A mooring line of n sections in series from ``anchor`` (world, on the seabed) to ``fairlead`` on
    ``body``: section k (anchor first) of unstretched length ``lengths[k]``, ``EA[k]`` and weight in water
    ``weights[k]`` per metre, and a point load ``point_loads[j]`` (N, positive down: a clump weight's
    weight in water; negative: a buoy's net buoyancy) at the joint above section j.  Elastic catenaries
    as :class:`~jaxmbd.forces.catenary.CatenaryLine`'s: the bottom section may lie on the seabed (with
    ``seabed_friction``), the others hang clear of it.  Solved each evaluation by Newton's method on the
    fairlead tensions, differentiated by the implicit function theorem.

    Range of validity: only the bottom section touches the seabed.  A joint that would rest on it (a
    heavy clump near the touchdown) is not modelled: ``converged`` reads 0 there and a run reports it.
    The sag of an upper section between a buoy and a clump is not checked against the seabed.

    Outputs: the catenary line's (``fairlead_tension``, ``horizontal_tension``, ``vertical_tension``,
    ``anchor_tension``, ``anchor_angle``, ``laid_length``, ``converged``) and ``joint_tension`` (n − 1,) N,
    the tension at each joint's top.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`segmented_line`',
         'as `catenary_line`; every joint above the seabed',
         'a clump or joint resting on the seabed is not modelled'),
    )

    kind: ClassVar[str] = "segmented_line"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the fairlead")
    fairlead: jax.Array = parameter(unit="m", shape=(3,), doc="fairlead, body frame")
    anchor: jax.Array = parameter(unit="m", shape=(3,), doc="anchor, world (on the seabed)")
    lengths: jax.Array = parameter(unit="m", shape=None, bound=(">", 0.0), doc="unstretched length of each section, anchor first")
    EA: jax.Array = parameter(unit="N", shape=None, bound=(">", 0.0), doc="axial stiffness of each section")
    weights: jax.Array = parameter(unit="N/m", shape=None, bound=(">", 0.0), doc="weight in water per metre of each section")
    point_loads: jax.Array = parameter(unit="N", shape=None, default=(), doc="at each joint (n − 1): + a clump's weight, − a buoy's lift")
    seabed_friction: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="c_B, friction of the bottom section's laid length")
    max_tension: jax.Array = line_limit("max_tension")
    max_strain: jax.Array = line_limit("max_strain")
    max_anchor_angle: jax.Array = line_limit("max_anchor_angle")

    @classmethod
    def file_rules(cls, values, given, fail):
        n = np.atleast_1d(np.asarray(values.get("lengths", ()), float)).size
        if n < 1:
            fail("lengths", "expected one length per section, at least one")
        for key in ("EA", "weights"):
            if np.atleast_1d(np.asarray(values.get(key, ()), float)).size != n:
                fail(key, f"expected one value per section ({n})")
        p = np.atleast_1d(np.asarray(values.get("point_loads", np.zeros(n - 1)), float))
        if p.size != n - 1:
            fail("point_loads", f"expected one value per joint between sections ({n - 1}), got {p.size}")

    def _arrays(self, dtype):
        L = jnp.atleast_1d(jnp.asarray(self.lengths, dtype))
        n = L.shape[0]
        P = jnp.atleast_1d(jnp.asarray(self.point_loads, dtype)) if np.size(self.point_loads) else jnp.zeros(n - 1, dtype)
        return L, jnp.atleast_1d(jnp.asarray(self.EA, dtype)), jnp.atleast_1d(jnp.asarray(self.weights, dtype)), P

    def _tensions(self, ctx: Context):
        dtype = ctx.p.dtype
        i = ctx.body_index(self.body)
        p = ctx.point_position(i, jnp.asarray(self.fairlead, dtype))
        d = p - jnp.asarray(self.anchor, dtype)
        X = jnp.maximum(jnp.sqrt(d[0] ** 2 + d[1] ** 2 + 1e-30), 1e-6)
        e_h = jnp.stack([d[0], d[1], jnp.zeros_like(X)]) / X
        L, EA, w, P = self._arrays(dtype)
        H, V, Vs, ok = solve_segmented(X, d[2], L, EA, w, P, self.seabed_friction)
        return H, V, Vs, ok, e_h

    def contribution(self, ctx: Context, z) -> Contribution:
        H, V, _, _, e_h = self._tensions(ctx)
        F = -H * e_h - V * jnp.array([0.0, 0.0, 1.0], dtype=e_h.dtype)
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.fairlead, F))

    def outputs(self, ctx: Context, z) -> dict:
        H, V, Vs, ok, _ = self._tensions(ctx)
        L, EA, w, _ = self._arrays(ctx.p.dtype)
        bottom = line_outputs(H, Vs[0], ok, L[0], w[0], self.seabed_friction)  # the anchor's side
        tops = jnp.sqrt(H * H + Vs**2)  # each section's largest tension, at its top
        return bottom | {"fairlead_tension": jnp.sqrt(H * H + V * V), "vertical_tension": V,
                         "joint_tension": jnp.sqrt(H * H + Vs[:-1] ** 2) if L.shape[0] > 1 else jnp.zeros(0, V.dtype),
                         "strain": jnp.max(tops / EA)}

    def output_units(self, model) -> dict:
        return dict(LINE_UNITS) | {"joint_tension": "N"}

    def valid_ranges(self, model) -> tuple:
        return line_ranges(self.max_tension, self.max_strain, self.max_anchor_angle)

    def start_problem(self, ctx: Context) -> str | None:
        """The anchor above the fairlead, or the sections themselves (not one equivalent line) at q0: each
        section's strain at its top against ``max_strain`` and the fairlead tension against ``max_tension``."""
        i = ctx.body_index(self.body)
        p = ctx.point_position(i, jnp.asarray(self.fairlead, dtype=ctx.p.dtype))
        L, EA, w, P = (np.asarray(x) for x in self._arrays(ctx.p.dtype))
        Lt = float(L.sum())
        problem = line_start_problem(p, self.anchor, Lt, Lt / float(np.sum(L / EA)), float((w @ L + P.sum()) / Lt), np.inf,
                                     max_strain=np.inf)  # where the anchor lies
        if problem:
            return problem
        H, V, Vs, ok, _ = (np.asarray(x) for x in self._tensions(ctx))
        chord = float(np.linalg.norm(np.asarray(p, float) - np.asarray(self.anchor, float)))
        if not ok and chord > Lt:
            return (f"no profile of its sections ({Lt:g} m in all) reaches the fairlead {chord:.4g} m from the anchor at q0: "
                    "the line is too short")
        strain = np.hypot(H, Vs) / EA  # each section's largest, at its top
        k, limit = int(np.argmax(strain)), float(np.min(np.asarray(self.max_strain)))
        if strain[k] > limit:
            return (f"its section {k} (anchor first; EA {EA[k]:.4g} N) would stretch by {100 * strain[k]:.3g} % to reach the "
                    f"fairlead at q0, beyond its max_strain {limit:g} (the line is too short or the anchor too far)")
        tension, cap = float(np.hypot(H, V)), float(np.max(np.asarray(self.max_tension)))
        if tension > cap:
            return (f"the line reaches its fairlead at q0 only at {tension:.4g} N, above its max_tension {cap:.4g} N "
                    "(too short, or the anchor too far)")
        return None
