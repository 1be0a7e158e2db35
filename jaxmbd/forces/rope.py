"""Wire rope: tension only, axial stiffness EA/L₀, damping, unstretched length from a winch."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement


def smooth_tension(x, width):
    """Smooth max(x, 0): ``width · softplus(x / width)``.

    Exactly zero force cannot be differentiated through a slack-taut change;
    this transition is C∞ with a width (N) the user sets: the error against
    max(x, 0) is at most ``width · ln 2`` (at x = 0) and falls as e^{−x/width}.
    """
    return width * jax.nn.softplus(x / width)


class WireRope(ForceElement):
    """A rope from the sheave point a (on ``body_a``, often a crane tip or ``"world"``) to the hook
    point b (on ``body_b``), reeved in n ``falls`` between the sheaves and the hook block:

        T = smooth_max(EA n (l − L₀) / (n L₀ + L_lead) + c l̇, 0),   hook load n T,

    with l the distance between the points, L₀ the unstretched length of one fall, L_lead
    (``lead_length``) the rope between the sheaves and the winch drum, stretched by the same
    tension, and ``transition`` the width of the slack-taut transition (N): the hook sees the
    stiffness n² EA / (n L₀ + L_lead) and each fall carries the hook load over n (sheave friction
    left out).  One fall and no lead give EA/L₀ (l − L₀).  The winch sets L₀: ``length`` at t = 0,
    paid out at ``payout_rate`` (m/s at the hook, so n times that at the drum; negative hauls in),
    plus, when ``heave_compensation`` > 0, an active-heave-compensation state: the falls lengthen by
    ``heave_compensation`` times the sheave point's vertical velocity (1 = ideal feed-forward
    compensation) and the hook height is corrected towards its initial value with gain
    ``hook_gain`` (1/s).

    The winch's line speed at the hook (payout, compensation and gain together) is clipped to its
    rated ``max_speed``; an acceleration limit is a ramp of ``payout_rate`` in a scenario phase
    (``{"target": v, "rate": a}``, a in m/s²).

    With ``mass_per_length`` the rope's own weight hangs on its ends: the n falls between a and b,
    straight, weigh n m_l g l, less the buoyancy ρ_w g (m_l / ρ_rope) of their length under the still
    water (z = 0), and each end carries half of it, vertically (one lumped segment: exact for the
    static hook load at the sheave, n T + that weight; the rope's inertia and its own sway are left
    out).  Output ``rope_weight`` (N).  With a winch, ``winch_speed_ratio`` is the line speed asked of it
    over its rating; a run reports the winch at its limit (payout and compensation then cut).

    With n falls over sheaves of efficiency η (``sheave_efficiency``), the pull at the drum differs
    from the hook load over n: hauling in, the falls carry F η, F η², …, F ηⁿ and their sum is the hook
    load W, so F = W (1 − η) / (η (1 − ηⁿ)); paying out, F/η, …, F/ηⁿ, so F = W (η⁻¹ − 1) / (η⁻¹ (η⁻ⁿ − 1))
    (the winch's direction is that of L₀; at rest, W/n).  Output ``line_pull`` (N).  The hook's
    dynamics see the mean fall tension (the friction is the drum's to overcome).

    With ``current_drag`` and a ``diameter`` D the current drags the falls' submerged length: F = ½ ρ_w C_d D n l_wet |u_n| u_n, u_n
    the sea's current at the wet part's mid-depth less the straight rope's velocity there, normal to the
    rope; its ends share it by where the wet part lies (the lever rule on a straight rope).  Output ``drag`` (3,)
    N.  The current is the sea state's (no fade-in), the rope straight (its bow in the current, and the
    drag's share of the load path beyond the ends, are left out: for a taut rope whose drag is small
    beside its tension).

    States: [L₀, the reference hook height] when the winch is active (payout or compensation), none
    otherwise.  Outputs: ``tension`` (N, in the rope: each fall's), ``hook_load`` (N, n T; with n > 1),
    ``length`` (m), ``unstretched_length`` (m, of a fall), ``sway`` (rad): the angle of the rope
    from the vertical.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`wire_rope`',
         'tension at least 10 % of its value at the start',
         'slack (DNV-ST-N001): the rope no longer carries the load, and the snap as it comes tight needs a rope model with its own wave '
         'dynamics; the warning gives the largest tension after the first slack over the static one'),
        ('`wire_rope` with a winch and `max_speed`',
         'the line speed asked of the winch (payout, compensation, gain) within its rating',
         'the winch is at its limit: the payout and the heave compensation are cut'),
    )

    kind: ClassVar[str] = "wire_rope"
    water_density_field: ClassVar[str] = "water_density"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="body of the sheave point (a crane tip, or world)")
    body_b: str = setting("body_or_world", doc="body of the hook point")
    point_a: jnp.ndarray = parameter(unit="m", shape=(3,), doc="sheave point in body_a's frame")
    point_b: jnp.ndarray = parameter(unit="m", shape=(3,), doc="hook point in body_b's frame")
    EA: jnp.ndarray = parameter(unit="N", bound=(">", 0.0), doc="axial stiffness")
    length: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), doc="unstretched length L₀ at t = 0")
    damping: jnp.ndarray = parameter(unit="N·s/m", bound=(">=", 0.0), default=0.0, doc="axial damping c")
    transition: jnp.ndarray = parameter(unit="N", bound=(">", 0.0), default=1.0, doc="width of the smooth slack-taut transition")
    payout_rate: jnp.ndarray = parameter(unit="m/s", default=0.0, doc="winch payout (negative hauls in)")
    heave_compensation: jnp.ndarray = parameter(unit="", default=0.0, doc="fraction of the sheave's heave velocity paid out")
    hook_gain: jnp.ndarray = parameter(unit="1/s", bound=(">=", 0.0), default=0.0, doc="gain towards the initial hook height")
    winch: bool = setting("bool", default=False, doc="the winch state L₀ exists (on when payout, compensation or gain is set)")
    falls: int = setting("integer", default=1, doc="n, parts of rope between the sheaves and the hook block")
    lead_length: jnp.ndarray = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="rope between the sheaves and the winch drum")
    max_speed: jnp.ndarray = parameter(unit="m/s", bound=(">", 0.0), default=float("inf"),
                                       doc="the winch's rated line speed at the hook (payout, compensation and gain together)")
    mass_per_length: jnp.ndarray = parameter(unit="kg/m", bound=(">=", 0.0), default=0.0, doc="the rope's mass per metre, in air")
    rope_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=7850.0,
                                          doc="density of the rope's material: the buoyancy of its submerged part")
    water_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="sea water, for that buoyancy")
    current_drag: bool = setting("bool", default=False, doc="the current drags the submerged falls (`diameter`, `drag_coefficient`)")
    diameter: jnp.ndarray = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="D, the rope's, for its drag in the current")
    drag_coefficient: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=1.2, doc="C_d of the rope across the flow")
    sheave_efficiency: jnp.ndarray = parameter(unit="", bound=(">", 0.0), default=1.0,
                                               doc="η of each sheave the rope runs over (about 0.98 on roller bearings): the line pull")

    def fixed_reason(self, field):
        if field in ("payout_rate", "heave_compensation", "hook_gain", "max_speed") and not self.winch:
            return f"rope {self.name!r} has no winch (winch=False): setting {field!r} would do nothing"
        return None

    @classmethod
    def file_rules(cls, values, given, fail):
        # the winch state exists only when `winch` is true; payout or compensation without it would be
        # silently ignored, so turn it on or refuse a contradiction
        moving = any(k in given and bool((values[k] != 0).any()) for k in ("payout_rate", "heave_compensation", "hook_gain"))
        if moving and "winch" not in given:
            values["winch"] = True
        elif moving and not values.get("winch", False):
            fail("winch", "payout_rate, heave_compensation or hook_gain need winch = true")
        if values.get("falls", 1) < 1:
            fail("falls", f"must be at least 1, got {values['falls']}")
        if values.get("current_drag", False) and not float(np.asarray(values.get("diameter", 0.0))) > 0:
            fail("diameter", "must be > 0 with current_drag = true (the rope's diameter, m)")
        if "diameter" in given and not values.get("current_drag", False):
            fail("diameter", "not used without current_drag = true")

    @property
    def n_states(self) -> int:
        # [L₀, reference hook height] when the winch moves
        return 2 if self.winch else 0

    def initial_state(self, model, q, v):
        from ..system import System

        if not self.winch:
            return jnp.zeros(0, dtype=model.inertia.dtype)
        ctx = System(model).context(0.0, q, v)
        pb, _ = ctx.point(self.body_b, self.point_b)
        return jnp.stack([jnp.asarray(self.length, dtype=pb.dtype), pb[2]])

    def _geometry(self, ctx: Context):
        return ctx.segment(self.body_a, self.point_a, self.body_b, self.point_b)

    def unstretched(self, z):
        return z[0] if self.winch else self.length

    def tension(self, ctx: Context, z, geom=None):
        _, _, _, _, e, l, ldot = self._geometry(ctx) if geom is None else geom
        L0 = self.unstretched(z)
        n = self.falls
        T = smooth_tension(self.EA / (n * L0 + self.lead_length) * n * (l - L0) + self.damping * ldot, self.transition)
        return T, e, l

    def weight(self, ctx: Context, geom=None):
        """The n falls' weight in air less the buoyancy of their submerged length (N, ≥ 0)."""
        pa, _, pb, _, _, l, _ = self._geometry(ctx) if geom is None else geom
        dz = pa[2] - pb[2]
        lo = jnp.minimum(pa[2], pb[2])
        span = jnp.maximum(jnp.abs(dz), 1e-12)
        wet = jnp.where(jnp.abs(dz) > 1e-12, jnp.clip(-lo / span, 0.0, 1.0), (lo < 0).astype(l.dtype))
        g = jnp.sqrt(jnp.sum(ctx.model.gravity**2))
        return self.falls * self.mass_per_length * g * l * (1.0 - wet * self.water_density / self.rope_density)

    def drag(self, ctx: Context, geom=None):
        """(force on the rope (3,) N world axes, the share of it at end a): the current across its submerged falls."""
        pa, va, pb, vb, e, l, _ = self._geometry(ctx) if geom is None else geom
        zero = jnp.zeros(3, dtype=e.dtype)
        if not self.current_drag or ctx.waves is None or ctx.waves.current is None:
            return zero, jnp.zeros((), e.dtype)
        lo, hi = jnp.minimum(pa[2], pb[2]), jnp.maximum(pa[2], pb[2])
        span = jnp.maximum(hi - lo, 1e-12)
        wet = jnp.where(hi - lo > 1e-12, jnp.clip(-lo / span, 0.0, 1.0), (lo < 0).astype(l.dtype))
        low_is_b = pb[2] <= pa[2]  # the wet part from the lower end up: its centre wet/2 of the way from it
        share_a = jnp.where(low_is_b, 0.5 * wet, 1.0 - 0.5 * wet)
        # the current less the straight rope's velocity at the wet part's centre
        u = ctx.waves.current.velocity(0.5 * (lo + jnp.minimum(hi, 0.0))).astype(e.dtype) - (share_a * va + (1.0 - share_a) * vb)
        un = u - jnp.dot(u, e) * e
        F = 0.5 * self.water_density * self.drag_coefficient * self.diameter * self.falls * l * wet * jnp.sqrt(
            jnp.sum(un * un) + 1e-30) * un
        return F, share_a

    def _winch_demand(self, z, geom):
        """The line speed asked of the winch (m/s at the hook): payout, compensation and gain."""
        _, va, pb, _, _, _, _ = geom
        return self.payout_rate + self.heave_compensation * va[2] + self.hook_gain * (pb[2] - z[1])  # of a fall

    def _winch_rate(self, z, geom):
        """dL₀/dt (m/s at the hook): the demand within the winch's rated speed."""
        return jnp.clip(self._winch_demand(z, geom), -self.max_speed, self.max_speed)

    def line_pull(self, z, hook_load, geom):
        """The pull at the drum (N) for the hook load W over n falls of sheaves of efficiency η."""
        n, eta = self.falls, self.sheave_efficiency
        rate = self._winch_rate(z, geom) if self.winch else jnp.zeros_like(hook_load)
        lossless = jnp.abs(eta - 1.0) < 1e-12
        safe = jnp.where(lossless, 0.5, eta)
        hauling = hook_load * (1 - safe) / (safe * (1 - safe**n))
        paying = hook_load * (1 / safe - 1) / (1 / safe * (safe ** (-n) - 1))
        moving = jnp.where(rate < 0, hauling, jnp.where(rate > 0, paying, hook_load / n))
        return jnp.where(lossless, hook_load / n, moving)

    def contribution(self, ctx: Context, z) -> Contribution:
        geom = self._geometry(ctx)
        T, e, _ = self.tension(ctx, z, geom)
        F = self.falls * T
        f_ext = ctx.zeros_f_ext()
        half = 0.5 * self.weight(ctx, geom) * jnp.array([0.0, 0.0, -1.0], dtype=e.dtype)
        drag, share_a = self.drag(ctx, geom)
        f_ext = ctx.add_point_force(f_ext, self.body_a, self.point_a, F * e + half + share_a * drag)
        f_ext = ctx.add_point_force(f_ext, self.body_b, self.point_b, -F * e + half + (1.0 - share_a) * drag)
        zdot = None
        if self.winch:
            rate = self._winch_rate(z, geom)
            zdot = jnp.stack([rate, -self.payout_rate * jnp.ones_like(rate)])
        return Contribution(f_ext=f_ext, zdot=zdot)

    def springs(self, ctx) -> tuple:
        """The hook's stiffness n² EA / (n L₀ + L_lead) between the sheave and the hook points."""
        n = float(self.falls)
        k = n * n * float(self.EA) / (n * float(self.length) + float(self.lead_length))
        return ((self.body_a, self.point_a, self.body_b, self.point_b, k),)

    def valid_ranges(self, model) -> tuple:
        from ..validity import SLACK_FRACTION, ValidRange

        ranges = (ValidRange("tension", "tension", "an elastic rope (slack per DNV-ST-N001)",
                             "tension >= 10 % of its value at the start", lower_fraction_of_start=SLACK_FRACTION),)
        if self.winch and np.isfinite(float(np.asarray(self.max_speed))):
            ranges += (ValidRange("winch_speed_ratio", "winch speed", "a winch that pays out what it is asked",
                                  "asked line speed <= rated max_speed (beyond: payout and compensation cut)",
                                  upper=1.0 + 1e-9),)
        return ranges

    def output_units(self, model) -> dict:
        units = {"tension": "N", "length": "m", "unstretched_length": "m", "sway": "rad", "rope_weight": "N", "line_pull": "N"}
        units |= {"drag": "N"} if self.current_drag else {}
        return units | ({"hook_load": "N"} if self.falls > 1 else {}) | ({"winch_speed_ratio": "1"} if self.winch else {})

    def outputs(self, ctx: Context, z) -> dict:
        geom = self._geometry(ctx)
        T, e, l = self.tension(ctx, z, geom)
        horizontal = jnp.sqrt(e[0] ** 2 + e[1] ** 2 + 1e-30)
        sway = jnp.arctan2(horizontal, jnp.abs(e[2]))
        out = {"tension": T, "length": l, "unstretched_length": self.unstretched(z), "sway": sway,
               "rope_weight": self.weight(ctx, geom), "line_pull": self.line_pull(z, self.falls * T, geom)}
        if self.current_drag:
            out["drag"] = self.drag(ctx, geom)[0]
        if self.winch:  # the speed asked of the winch over its rating (1: at its limit)
            out["winch_speed_ratio"] = jnp.abs(self._winch_demand(z, geom)) / self.max_speed
        return out | ({"hook_load": self.falls * T} if self.falls > 1 else {})
