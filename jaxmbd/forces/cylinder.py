"""Hydraulic cylinder: a linear actuator between two bodies (an A-frame's tilting cylinder, a boom's
luffing cylinder), length- or force-controlled, with its stroke, speed and force limits."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from ..errors import InputError
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from ..validity import ValidRange


class Cylinder(ForceElement):
    """A cylinder pushing or pulling along the line from ``point_a`` on ``body_a`` to ``point_b`` on
    ``body_b`` (either may be ``"world"``), of length l and extension rate l̇.

    ``mode = "length"``: a command l_c (a state, starting at the initial length) travels to ``target``
    at most at ``max_speed`` and settles on it at ``settle_rate`` λ,

        l̇_c = clip(λ (l_target − l_c), −v_max, v_max),

    and the cylinder tracks it with a PD law on its length, limited to ``max_force``:

        F = clip(F_0 + K_p (l_c − l) + K_d (l̇_c − l̇), −r F_max, F_max)   (F > 0 pushes the points apart),

    with F_0 (``preload``) the static force it carries, so that it starts holding its load at its
    initial length.

    ``mode = "force"``: F = clip(``target``, −r F_max, F_max) (N), the cylinder held at a pressure.
    r (``pull_ratio``) is the pull's share of the push at the relief pressure: a single-rod cylinder
    pulls on its annulus, about 0.5-0.7 of its bore area.

    Outputs: ``force`` F (N, positive pushing), ``length`` l and ``command`` l_c (m), ``speed`` l̇
    (m/s), ``force_ratio`` |F| over its limit (F_max pushing, r F_max pulling).  A run reports a cylinder outside its stroke
    [``min_length``, ``max_length``] (the end stops are not modelled: the geometry asks for more
    stroke than the cylinder has) and one at its force limit (it cannot follow its command).
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`cylinder`',
         'length within [`min_length`, `max_length`]; force below `max_force`',
         'the geometry asks for more stroke than the cylinder has (its end stops are not modelled); at the relief pressure the cylinder '
         'lags its command'),
    )

    kind: ClassVar[str] = "cylinder"
    section: ClassVar[str] = "controllers"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="the body carrying the cylinder's barrel end")
    point_a: jax.Array = parameter(unit="m", shape=(3,), doc="the barrel's pin, body a's frame")
    body_b: str = setting("body_or_world", doc="the body carrying the rod end")
    point_b: jax.Array = parameter(unit="m", shape=(3,), doc="the rod's pin, body b's frame")
    target: jax.Array = parameter(unit="m (length mode) or N (force mode)", doc="the commanded length or force")
    max_force: jax.Array = parameter(unit="N", bound=(">", 0.0), doc="F_max, the force at the relief pressure")
    min_length: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="retracted length, pin to pin")
    max_length: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="extended length, pin to pin")
    mode: str = setting("string", default="length", choices=("length", "force"), doc='"length" (PD on a commanded length) or "force"')
    kp: jax.Array = parameter(unit="N/m", bound=(">=", 0.0), default=0.0, doc="K_p (length mode)")
    kd: jax.Array = parameter(unit="N s/m", bound=(">=", 0.0), default=0.0, doc="K_d (length mode)")
    max_speed: jax.Array = parameter(unit="m/s", bound=(">", 0.0), default=float("inf"), doc="v_max, the rod's rated speed (length mode)")
    settle_rate: jax.Array = parameter(unit="1/s", bound=(">", 0.0), default=1.0, doc="λ, how fast the command closes on the target")
    preload: jax.Array = parameter(unit="N", default=0.0, doc="F_0, a feed-forward force (length mode): the static load it carries")
    pull_ratio: jax.Array = parameter(unit="", bound=(">", 0.0), default=1.0,
                                      doc="the pull limit over max_force: a single-rod cylinder's annulus over its bore area")

    @classmethod
    def file_rules(cls, values, given, fail):
        if values.get("mode", "length") == "force":
            for key in ("kp", "kd", "max_speed", "settle_rate", "preload"):
                if key in given:
                    fail(key, 'a force-controlled cylinder (mode = "force") has no length control: leave it out')

    def __check_init__(self):
        if self.body_a == self.body_b:
            raise InputError(f"cylinder {self.name!r}: body_a and body_b are both {self.body_a!r}")
        if not isinstance(self.min_length, jax.core.Tracer) and float(self.min_length) >= float(self.max_length):
            raise InputError(f"cylinder {self.name!r}: min_length ({float(self.min_length):g} m) must be below max_length "
                             f"({float(self.max_length):g} m)")

    @property
    def n_states(self):
        return 1 if self.mode == "length" else 0

    def initial_state(self, model, q, v):
        if self.mode != "length":
            return jnp.zeros(0, dtype=model.inertia.dtype)
        from ..kinematics import Kinematics

        q = model.normalise(q)
        ctx = Context(0.0, q, v, Kinematics.compute(model, q, v), model)
        _, _, _, _, _, l, _ = ctx.segment(self.body_a, self.point_a, self.body_b, self.point_b)
        return jnp.reshape(l, (1,)).astype(model.inertia.dtype)

    def _command_rate(self, z):
        return jnp.clip(self.settle_rate * (self.target - z[0]), -self.max_speed, self.max_speed)

    def _force(self, ctx: Context, z):
        _, _, _, _, e, l, ldot = ctx.segment(self.body_a, self.point_a, self.body_b, self.point_b)
        if self.mode == "length":
            raw = self.preload + self.kp * (z[0] - l) + self.kd * (self._command_rate(z) - ldot)
        else:
            raw = jnp.asarray(self.target, l.dtype)
        return jnp.clip(raw, -self.pull_ratio * self.max_force, self.max_force), e, l, ldot

    def contribution(self, ctx: Context, z) -> Contribution:
        F, e, _, _ = self._force(ctx, z)
        f_ext = ctx.add_point_force(ctx.zeros_f_ext(), self.body_a, self.point_a, -F * e)
        f_ext = ctx.add_point_force(f_ext, self.body_b, self.point_b, F * e)
        return Contribution(f_ext=f_ext, zdot=jnp.reshape(self._command_rate(z), (1,)) if self.mode == "length" else None)

    def outputs(self, ctx: Context, z) -> dict:
        F, _, l, ldot = self._force(ctx, z)
        limit = jnp.where(F >= 0, self.max_force, self.pull_ratio * self.max_force)
        out = {"force": F, "length": l, "speed": ldot, "force_ratio": jnp.abs(F) / limit}
        if self.mode == "length":
            out["command"] = z[0]
        return out

    def output_units(self, model) -> dict:
        units = {"force": "N", "length": "m", "speed": "m/s", "force_ratio": "1"}
        return units | ({"command": "m"} if self.mode == "length" else {})

    def valid_ranges(self, model) -> tuple:
        lo, hi = float(self.min_length), float(self.max_length)
        return (
            ValidRange("length", "cylinder length", "a cylinder within its stroke", f"length >= min_length {lo:g} m", lower=lo),
            ValidRange("length", "cylinder length", "a cylinder within its stroke", f"length <= max_length {hi:g} m", upper=hi,
                       signed=True),
            ValidRange("force_ratio", "cylinder force", "a cylinder that follows its command",
                       "|force| < max_force (at the relief pressure it lags its command)", upper=0.999),
        )
