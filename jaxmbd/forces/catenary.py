"""Quasi-static catenary mooring line: an elastic catenary from an anchor on a flat seabed to a fairlead
on a body, the part that lies on the seabed included, solved at every evaluation."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


def catenary_profile(H, V, L, EA, w, cb=0.0):
    """The fairlead's horizontal and vertical distance from the anchor (X, Z) of an elastic catenary of
    unstretched length L, axial stiffness EA and weight in water w per metre, with the horizontal and
    vertical fairlead tension H > 0 and V (Jonkman 2007; MoorPy's and MAP++'s equations):

    suspended from the anchor (V ≥ w L)::

        X = H/w [asinh(V/H) − asinh((V − wL)/H)] + H L / EA
        Z = H/w [√(1 + (V/H)²) − √(1 + ((V − wL)/H)²)] + (V L − w L²/2) / EA

    lying on the seabed over L_B = L − V/w (V < w L), with seabed friction coefficient c_B::

        X = L_B + H/w asinh(V/H) + H L / EA + c_B w / (2 EA) [−L_B² + (L_B − H/(c_B w)) max(L_B − H/(c_B w), 0)]
        Z = H/w [√(1 + (V/H)²) − 1] + V² / (2 EA w)

    The two branches meet with equal values and slopes at V = w L (c_B = 0)."""
    r = V / H
    s_top = jnp.sqrt(1.0 + r * r)
    wl = w * L
    r0 = (V - wl) / H
    x_susp = H / w * (jnp.arcsinh(r) - jnp.arcsinh(r0)) + H * L / EA
    z_susp = H / w * (s_top - jnp.sqrt(1.0 + r0 * r0)) + (V * L - 0.5 * w * L * L) / EA
    lb = L - V / w
    x_lay = lb + H / w * jnp.arcsinh(r) + H * L / EA
    # friction: the laid length's far part, beyond H / (c_B w) from the touchdown, carries no tension
    # (the floor keeps H / (c_B w) finite, and its gradient, when c_B = 0)
    slip = lb - H / jnp.maximum(cb * w, 1e-12 * w)
    x_lay = x_lay + cb * w / (2 * EA) * (-lb * lb + jnp.where(slip > 0, slip * slip, 0.0))
    z_lay = H / w * (s_top - 1.0) + V * V / (2 * EA * w)
    lying = V < wl
    return jnp.where(lying, x_lay, x_susp), jnp.where(lying, z_lay, z_susp)


def _suspended_guess(X, Z, L, EA, w):
    """A start for a suspended line: Peyrot & Goulois's (as Jonkman 2007 and MoorPy use it) while the chord
    is shorter than the line; a straight line stretched along the chord (T = EA (d/L − 1), plus half
    its weight at the fairlead) once it is longer (a taut line, whose tension the first misses by
    orders of magnitude)."""
    d = jnp.sqrt(X * X + Z * Z)
    taut = d >= L
    lam = jnp.where(taut, 0.2, jnp.sqrt(jnp.maximum(3.0 * ((L * L - Z * Z) / jnp.maximum(X * X, 1e-300) - 1.0), 1e-6)))
    H = jnp.maximum(jnp.abs(0.5 * w * X / lam), 1e-3 * w * L)
    V = 0.5 * w * (Z / jnp.tanh(lam) + L)
    T = EA * jnp.maximum(d / L - 1.0, 0.0)
    stretched = T > H
    return jnp.where(taut & stretched, T * X / d, H), jnp.where(taut & stretched, T * Z / d + 0.5 * w * L, V)


def _lying_reach(a, X, Z, L):
    """X(a) − X of an inextensible line lying on the seabed, a = H / w: it hangs s = √(Z² + 2 Z a) from the
    fairlead to its touchdown and lies straight beyond it."""
    s = jnp.sqrt(Z * Z + 2.0 * Z * a)
    return L - s + a * jnp.arcsinh(s / a) - X


def _initial_guess(X, Z, L, EA, w, iterations=60):
    """A start close to the solution: for a line lying on the seabed, the inextensible catenary's H by
    bisection (its reach grows with H from L − Z, slack, to the lift-off of the whole line at
    a = (L² − Z²) / 2Z); for a suspended line, :func:`_suspended_guess`."""
    a_lift = jnp.maximum((L * L - Z * Z) / (2.0 * Z), 1e-9 * L)
    lying = _lying_reach(a_lift, X, Z, L) >= 0.0

    def halve(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        below = _lying_reach(mid, X, Z, L) < 0.0
        return jnp.where(below, mid, lo), jnp.where(below, hi, mid)

    lo, hi = jax.lax.fori_loop(0, iterations, halve, (1e-9 * L, a_lift))
    a = 0.5 * (lo + hi)
    H_pg, V_pg = _suspended_guess(X, Z, L, EA, w)
    H = jnp.where(lying, w * a, H_pg)
    V = jnp.where(lying, w * jnp.sqrt(Z * Z + 2.0 * Z * a), V_pg)
    return H, V


def slack_hanging_length(Z, EA, w):
    """The unstretched length s that hangs straight down from a fairlead Z above the seabed when the line
    carries no horizontal tension: s (1 + w s / 2EA) = Z."""
    return (jnp.sqrt(1.0 + 2.0 * w * Z / EA) - 1.0) * EA / w


def solve_catenary(X, Z, L, EA, w, cb=0.0, *, steps=100):
    """(H, V, converged): the fairlead tensions that put the fairlead at (X, Z) from the anchor, by Newton's
    method on (log H, V / wL) from :func:`_initial_guess`, differentiated by the implicit function
    theorem (not through the iteration).  A line whose laid part cannot be straight (X at most
    L less the length hanging from the fairlead) is slack: H = 0 and V the weight of the hanging part.
    A fairlead at or below the seabed (Z ≤ 0) has no catenary: ``converged`` is false (the tensions
    are those of a fairlead just above it)."""
    above = Z > 0.0  # the fairlead above the anchor's seabed; else no catenary (reported, not NaN)
    Z = jnp.where(above, Z, 1e-3 * L)
    s_hang = slack_hanging_length(Z, EA, w)
    slack = X <= L - s_hang
    X_solve = jnp.where(slack, L - s_hang + 1e-3 * L, X)  # a reachable stand-in: no NaN in the unused branch
    H0, V0 = jax.lax.stop_gradient(_initial_guess(X_solve, Z, L, EA, w))
    wl = w * L

    def residual(y, args):
        X, Z, L, EA, w = args
        x, z = catenary_profile(jnp.exp(y[0]), y[1] * w * L, L, EA, w, cb)
        return jnp.stack([x - X, z - Z]) / L

    y0 = jnp.stack([jnp.log(H0), V0 / wl])
    args = (X_solve, Z, L, EA, w)
    sol = optx.root_find(residual, optx.Newton(rtol=1e-12, atol=1e-12), y0, args=args, max_steps=steps, throw=False)
    # Newton's method from the stretched chord can overshoot on a nearly taut line: Levenberg-Marquardt
    # finishes from its answer where it converged (one step) and from the start where it did not.  The
    # gradient is the implicit function theorem's at the final answer (Newton's path is not differentiated).
    newton_ok = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(sol.value))
    start = jax.lax.stop_gradient(jnp.where(newton_ok, sol.value, y0))
    lm = optx.least_squares(residual, optx.LevenbergMarquardt(rtol=1e-12, atol=1e-12), start, args=args, max_steps=2 * steps,
                            throw=False)
    lm_ok = (lm.result == optx.RESULTS.successful) & (jnp.max(jnp.abs(residual(lm.value, args))) < 1e-10)
    value = lm.value
    H = jnp.where(slack, 0.0, jnp.exp(value[0]))
    V = jnp.where(slack, w * s_hang, value[1] * wl)
    return H, V, above & (slack | lm_ok)


MAX_STRAIN = 0.3
"""A line asked to stretch further than this to reach its fairlead is refused: no mooring material
(steel, polyester, nylon) survives 30 % of strain, so the length or the positions are wrong."""


def line_limit(name: str):
    """The declaration of one of a catenary line's limits (``max_tension``, ``max_strain``,
    ``max_anchor_angle``), written once for the catenary, segmented and spread lines."""
    return {
        "max_tension": lambda: parameter(unit="N", bound=(">", 0.0), default=float("inf"), doc="minimum breaking load or design limit"),
        "max_strain": lambda: parameter(unit="", bound=(">", 0.0), default=MAX_STRAIN, doc=(
            "the material's strain limit: the fairlead tension over EA above it is reported (steel wire about 0.01 at "
            "break, polyester 0.1-0.15, nylon 0.2-0.3; the default is the last, which no line outlasts)")),
        "max_anchor_angle": lambda: parameter(unit="rad", bound=(">=", 0.0), default=0.0, doc=(
            "the anchor's largest uplift angle (0: a drag anchor, which takes no vertical load; a pile or suction "
            "anchor's design angle): above it the run reports the anchor lifted")),
    }[name]()


class CatenaryLine(ForceElement):
    """A mooring line from ``anchor`` (world, on the seabed: the seabed is the horizontal plane through
    it) to ``fairlead`` on ``body``: an elastic catenary of unstretched ``length`` L, ``EA`` and weight
    in water ``weight`` w per metre, with the part lying on the seabed and, optionally, seabed friction
    c_B (:func:`catenary_profile`).  At each evaluation the fairlead tensions (H, V) are solved by
    Newton's method from the fairlead's horizontal distance X and height Z above the anchor, and the
    body feels −H ê − V e_z at the fairlead (ê the horizontal unit vector from the anchor to the
    fairlead).  The line is quasi-static: its own inertia, drag and dynamics are left out (valid
    while the fairlead moves slowly against the line's transverse and axial wave speeds).

    Outputs: ``fairlead_tension`` (N), ``horizontal_tension`` H (N), ``vertical_tension`` V (N),
    ``anchor_tension`` (N), ``anchor_angle`` (rad above the seabed: 0 while a length lies on it),
    ``laid_length`` (m), ``converged`` (1 when Newton's method met its tolerance), ``strain`` (the fairlead
    tension over EA, the line's largest).  A run reports a fairlead tension above ``max_tension`` (the
    line's minimum breaking load or a design limit), a strain above ``max_strain`` and an anchor lifted
    above ``max_anchor_angle`` (0 for a drag anchor, the default), at every saved sample.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`catenary_line`',
         "the catenary solved (the fairlead above the anchor's seabed); fairlead tension within `max_tension`; its strain "
         "(tension over EA) within `max_strain` (0.3); the anchor's uplift angle within `max_anchor_angle` (0: a drag anchor)",
         "no catenary reaches the fairlead; beyond the line's strength or its material's stretch; a drag anchor lifted "
         "out of the seabed"),
    )

    kind: ClassVar[str] = "catenary_line"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the fairlead")
    fairlead: jax.Array = parameter(unit="m", shape=(3,), doc="fairlead, body frame")
    anchor: jax.Array = parameter(unit="m", shape=(3,), doc="anchor, world (on the seabed)")
    length: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="L, unstretched length")
    EA: jax.Array = parameter(unit="N", bound=(">", 0.0), doc="axial stiffness")
    weight: jax.Array = parameter(unit="N/m", bound=(">", 0.0), doc="w, weight in water per metre (its mass less its buoyancy, times g)")
    seabed_friction: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="c_B, friction of the laid length")
    max_tension: jax.Array = line_limit("max_tension")
    max_strain: jax.Array = line_limit("max_strain")
    max_anchor_angle: jax.Array = line_limit("max_anchor_angle")

    def _tensions(self, ctx: Context):
        i = ctx.body_index(self.body)
        p = ctx.point_position(i, jnp.asarray(self.fairlead, dtype=ctx.p.dtype))
        return (i, *line_tensions(p, self.anchor, self.length, self.EA, self.weight, self.seabed_friction))

    def contribution(self, ctx: Context, z) -> Contribution:
        i, H, V, e_h, _ = self._tensions(ctx)
        F = -H * e_h - V * jnp.array([0.0, 0.0, 1.0], dtype=e_h.dtype)
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.fairlead, F))

    def outputs(self, ctx: Context, z) -> dict:
        _, H, V, _, ok = self._tensions(ctx)
        return line_outputs(H, V, ok, self.length, self.weight, self.seabed_friction, self.EA)

    def output_units(self, model) -> dict:
        return dict(LINE_UNITS)

    def valid_ranges(self, model) -> tuple:
        return line_ranges(self.max_tension, self.max_strain, self.max_anchor_angle)

    def start_problem(self, ctx: Context) -> str | None:
        i = ctx.body_index(self.body)
        p = ctx.point_position(i, jnp.asarray(self.fairlead, dtype=ctx.p.dtype))
        return line_start_problem(p, self.anchor, float(self.length), float(self.EA), float(self.weight), self.max_tension,
                                  max_strain=self.max_strain)


LINE_UNITS = {"fairlead_tension": "N", "horizontal_tension": "N", "vertical_tension": "N", "anchor_tension": "N",
              "anchor_angle": "rad", "laid_length": "m", "converged": "1", "strain": "1"}


def line_tensions(fairlead, anchor, L, EA, w, cb=0.0):
    """(H, V, ê, converged) of a line from ``anchor`` to the world point ``fairlead``: ê the horizontal unit
    vector from the anchor towards the fairlead; the fairlead feels −H ê − V e_z."""
    d = fairlead - jnp.asarray(anchor, dtype=fairlead.dtype)
    X = jnp.maximum(jnp.sqrt(d[0] ** 2 + d[1] ** 2 + 1e-30), 1e-6 * L)
    H, V, ok = solve_catenary(X, d[2], L, EA, w, cb)
    return H, V, jnp.stack([d[0], d[1], jnp.zeros_like(X)]) / X, ok


def line_start_problem(fairlead, anchor, L, EA, w, max_tension, which="", max_strain=MAX_STRAIN) -> str | None:
    """Why a catenary line from ``anchor`` to the world point ``fairlead`` cannot start there, or None:
    the anchor above the fairlead, a line that must stretch by more than ``max_strain`` (the line's
    material limit, by default :data:`MAX_STRAIN`) to reach, or that reaches only beyond ``max_tension``."""
    f, a = np.asarray(fairlead, float), np.asarray(anchor, float)
    if f[2] < a[2]:
        return (f"{which}the anchor (z = {a[2]:g} m) is above the fairlead (z = {f[2]:g} m at q0): a catenary hangs "
                "from its fairlead down to its seabed anchor")
    chord = float(np.linalg.norm(f - a))
    limit_strain = float(np.min(np.asarray(max_strain)))
    if chord > L * (1 + limit_strain):
        return (f"{which}the line ({L:g} m) is too short to reach its fairlead {chord:.4g} m from the anchor at q0: "
                f"it would stretch by {100 * (chord / L - 1):.0f} %, beyond its max_strain {limit_strain:g}")
    limit = float(max_tension)
    if np.isfinite(limit):
        H, V, _, _ = line_tensions(jnp.asarray(f), jnp.asarray(a), L, EA, w)
        t = float(np.hypot(H, V))
        if t > limit:
            return (f"{which}the line reaches its fairlead at q0 only at {t:.4g} N, above its max_tension {limit:.4g} N "
                    "(too short, or the anchor too far)")
    return None


def line_outputs(H, V, ok, L, w, cb=0.0, EA=None) -> dict:
    """A line's outputs from its fairlead tensions (see :class:`CatenaryLine`); ``strain`` with ``EA``."""
    wl = w * L
    lying = V < wl
    laid = jnp.where(lying, L - V / w, 0.0)
    HA = jnp.where(lying, jnp.maximum(H - cb * w * laid, 0.0), H)
    VA = jnp.where(lying, 0.0, V - wl)
    return {"fairlead_tension": jnp.sqrt(H * H + V * V), "horizontal_tension": H, "vertical_tension": V,
            "anchor_tension": jnp.sqrt(HA * HA + VA * VA), "anchor_angle": jnp.arctan2(VA, jnp.maximum(HA, 1e-300)),
            "laid_length": laid, "converged": ok.astype(H.dtype)} | (
        {} if EA is None else {"strain": jnp.sqrt(H * H + V * V) / EA})


def line_ranges(max_tension, max_strain=MAX_STRAIN, max_anchor_angle=0.0) -> tuple:
    """Where a line's model holds: its catenary solved, its strain within the material's ``max_strain``, its
    anchor's uplift angle within ``max_anchor_angle`` (0: a drag anchor), and (with a finite limit) its
    tension within ``max_tension``."""
    from ..validity import ValidRange

    limit = float(np.max(np.asarray(max_tension)))
    strain = float(np.min(np.asarray(max_strain)))
    uplift = float(np.min(np.asarray(max_anchor_angle)))
    ranges = (ValidRange("converged", "catenary solution", "a quasi-static elastic catenary",
                         "Newton's method converged (a line that can reach its fairlead)", lower=0.5),
              ValidRange("strain", "line strain", "a line within its material's stretch",
                         f"strain (tension over EA) <= max_strain {strain:g}", upper=strain, signed=True),
              ValidRange("anchor_angle", "anchor uplift", "an anchor held by the seabed",
                         f"uplift angle at the anchor <= max_anchor_angle {np.degrees(uplift):g} deg"
                         + (" (a drag anchor takes no vertical load)" if uplift == 0.0 else ""),
                         upper=uplift + 1e-9, signed=True))
    if np.isfinite(limit):
        ranges += (ValidRange("fairlead_tension", "line tension", "a line within its strength",
                              f"fairlead tension <= max_tension {limit:g} N", upper=limit, signed=True),)
    return ranges
