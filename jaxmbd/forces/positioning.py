"""Dynamic positioning: a wave-filtered PID in surge, sway and yaw, with thrust allocation to named
thrusters that have force and rate limits.

The controller (Fossen, *Handbook of Marine Craft Hydrodynamics and Motion Control*, 2011, ch. 12-13,
in its simplest complete form):

1. **Measurement.**  η = (x, y, ψ): the world position of the reference point ``point`` of ``body``
   and its heading ψ (z-y-x yaw).
2. **Wave filter.**  A second-order low-pass per axis, cut-off ω_f = 2π / ``filter_period`` and
   damping ζ_f (``filter_damping``, 1/√2 Butterworth):

       η̈_f = ω_f² (η − η_f) − 2 ζ_f ω_f η̇_f

   It passes the slow drift and attenuates the wave-frequency position by 40 dB a decade above ω_f;
   η̇_f, the velocity the derivative term uses, only by 20 dB a decade.  With the gains of
   :func:`positioning_gains` the derivative term dominates at wave frequencies, so some wave-frequency
   demand remains: the thrusters' lag and rate limits take out the rest (``demand_ratio`` reports
   the command before them).
   A model-based observer (a Kalman filter with a wave model) attenuates better at less phase lag;
   this filter is what a PID DP without a vessel model can do.
3. **PID in the vessel's axes.**  With η̃ = η_ref − η_f the world error (heading wrapped to ±π) and
   R(ψ_f) the rotation by the filtered heading,

       τ = K_p Rᵀ η̃ + K_i Rᵀ ∫ η̃ dt − K_d Rᵀ η̇_f,  τ = (X, Y, N): surge and sway force, yaw moment.

   The integral is kept in the world's axes (a steady environmental load is steady there), so a
   change of heading does not turn the integral action away from the load it balances.

   :func:`positioning_gains` places the three poles of each axis at −1/T for a mass (with the
   low-frequency added mass) and a time constant T.
4. **Thrust allocation.**  Each thruster gives columns of B (3 x m): an ``azimuth`` thruster two (x
   and y force: any direction), a ``tunnel`` thruster one (y), a ``propeller`` one (x); a force
   (f_x, f_y) at (x, y) gives (f_x, f_y, x f_y − y f_x).  The demand is shared by the
   capacity-weighted least-norm solution u = W⁻¹ Bᵀ (B W⁻¹ Bᵀ)⁻¹ τ, W = diag(1 / max_thrust²),
   then each thruster's command is scaled down to its ``max_thrust``.
5. **Thrusters.**  Each column's force follows its command with a first-order lag
   (``thruster_time_constant``) whose rate is limited to ``thrust_rate``: one state per column.
   An azimuth thruster's rate limit applies to each of its two components (its turning rate is not
   modelled).

Range of validity: the thrusters deliver what the allocation asks while every thruster's demand is
within its capacity; a run reports the demand over capacity above 1 (``demand_ratio``): the vessel is
then held by less than the controller wants.  Thrust losses (thruster-hull and thruster-thruster
interaction, ventilation) are not modelled: give ``max_thrust`` net of them.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from ..validity import ValidRange

THRUSTER_TYPES = ("azimuth", "tunnel", "propeller")
_DIRECTIONS = {"azimuth": ((1.0, 0.0), (0.0, 1.0)), "tunnel": ((0.0, 1.0),), "propeller": ((1.0, 0.0),)}
_GAIN_UNITS = "N/m (surge, sway), N m/rad (yaw)"


def positioning_gains(mass, time_constant):
    """(K_p, K_d, K_i) that place the three closed-loop poles of each axis at −1/T.

    ``mass``: per axis, surge and sway mass (kg) and yaw inertia (kg m²), each with its
    low-frequency added mass; ``time_constant``: T (s), one value or one per axis.  From
    m s³ + K_d s² + K_p s + K_i = m (s + 1/T)³: K_p = 3 m / T², K_d = 3 m / T, K_i = m / T³.  A step
    force F then moves the vessel by x(t) = F t² e^(−t/T) / (2 m), largest at t = 2 T:
    2 F T² e⁻² / m, and back to the set point.  The filter and the thrusters add lag, to which a
    triple pole is sensitive: with ``filter_period`` T/5 and ``thruster_time_constant`` T/30 the
    slowest poles move to −0.77/T while the largest offset stays within 3 % of the design's
    (tests/test_positioning.py).  A slower filter moves them further: check the step response.
    ``mass`` is the vessel's mass with its added mass at the DP's low frequencies (the infinite-frequency
    value is a close stand-in for a ship in surge and sway)."""
    m = np.asarray(mass, dtype=float)
    a = 1.0 / np.asarray(time_constant, dtype=float)
    return 3.0 * m * a**2, 3.0 * m * a, m * a**3


def _wrap(a):
    return jnp.arctan2(jnp.sin(a), jnp.cos(a))


def _largest(x):
    return np.max(x, axis=-1)


class DynamicPositioning(ForceElement):
    """Dynamic positioning of ``body``: wave filter, PID in surge, sway and yaw, thrust allocation
    (docs/hydro.md, "Dynamic positioning"; gains from :func:`positioning_gains`).  States: the filter
    (6), the integral (3) and one thrust per allocation column.

    Outputs: ``offset`` (2,) m, the reference point's position minus the set point (world);
    ``heading_error`` rad; ``demand`` (3,) and ``delivered`` (3,), the PID's τ and what the
    thrusters give (N, N, N m); ``thrust`` (n,) N, each thruster's force; ``demand_ratio`` (n,),
    each thruster's command over its ``max_thrust`` before it is limited.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`dynamic_positioning`',
         "every thruster's demand within its `max_thrust` (`demand_ratio` ≤ 1)",
         "the DP's capability is exceeded: the thrusters give less than the controller asks and the vessel drifts off"),
    )

    kind: ClassVar[str] = "dynamic_positioning"
    section: ClassVar[str] = "controllers"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="the vessel")
    thrusters: tuple = setting("names", doc="the thrusters' names")
    thruster_types: tuple = setting("names", choices=THRUSTER_TYPES,
                                    doc='per thruster: "azimuth" (any direction), "tunnel" (body y) or "propeller" (body x)')
    thruster_positions: jax.Array = parameter(unit="m", shape=None, doc="per thruster, [x, y, z] in the body's frame")
    max_thrust: jax.Array = parameter(unit="N", shape="per:thrusters", bound=(">", 0.0), doc="each thruster's capacity")
    kp: jax.Array = parameter(unit=_GAIN_UNITS, shape=(3,), bound=(">=", 0.0), doc="K_p: surge, sway, yaw")
    kd: jax.Array = parameter(unit="N s/m (surge, sway), N m s/rad (yaw)", shape=(3,), bound=(">=", 0.0), doc="K_d: surge, sway, yaw")
    ki: jax.Array = parameter(unit="N/(m s) (surge, sway), N m/(rad s) (yaw)", shape=(3,), bound=(">=", 0.0), default=(0.0, 0.0, 0.0),
                              doc="K_i: surge, sway, yaw")
    position: jax.Array = parameter(unit="m", shape=(2,), default=(0.0, 0.0), doc="set point of the reference point (world x, y)")
    heading: jax.Array = parameter(unit="rad", angle=True, default=0.0, doc="set point of the heading (from +x towards +y)")
    point: jax.Array = parameter(unit="m", shape=(3,), default=(0.0, 0.0, 0.0), doc="the reference point, body frame")
    filter_period: jax.Array = parameter(unit="s", bound=(">", 0.0), default=10.0, doc="the wave filter's cut-off period 2π/ω_f")
    filter_damping: jax.Array = parameter(unit="", bound=(">", 0.0), default=float(np.sqrt(0.5)), doc="ζ_f of the wave filter")
    thrust_rate: jax.Array = parameter(unit="N/s", shape="per:thrusters", bound=(">", 0.0), default=float("inf"),
                                       doc="each thruster's largest rate of change of thrust")
    thruster_time_constant: jax.Array = parameter(unit="s", bound=(">", 0.0), default=1.0, doc="the thrusters' first-order lag")
    hull_plan: jax.Array = parameter(unit="m", shape=(2,), bound=(">", 0.0), default=(float("inf"), float("inf")),
                                     doc="[length, beam] of the hull about the body's origin: every thruster must lie inside it")

    @classmethod
    def file_rules(cls, values, given, fail):
        n = len(values.get("thrusters", ()))
        if len(set(values.get("thrusters", ()))) != n:
            fail("thrusters", "expected distinct names")
        if len(values.get("thruster_types", ())) != n:
            fail("thruster_types", f"expected one type per thruster ({n}), got {len(values.get('thruster_types', ()))}")
        pos = np.asarray(values.get("thruster_positions", np.zeros((n, 3))), float)
        if pos.shape != (n, 3):
            fail("thruster_positions", f"expected [x, y, z] per thruster, shape [{n}, 3]; got shape {list(pos.shape)}")

    def __check_init__(self):
        if isinstance(self.thruster_positions, jax.core.Tracer) or isinstance(self.hull_plan, jax.core.Tracer):
            return
        n = len(self.thrusters)
        bad = [t for t in self.thruster_types if t not in THRUSTER_TYPES]
        if bad or len(self.thruster_types) != n:
            raise InputError(f"thruster_types: expected one of {', '.join(THRUSTER_TYPES)} per thruster ({n}); got {list(self.thruster_types)}")
        pos = np.asarray(self.thruster_positions, float)
        if pos.shape != (n, 3):
            raise InputError(f"thruster_positions: expected [x, y, z] per thruster, shape [{n}, 3]; got shape {list(pos.shape)}")
        L, B = np.asarray(self.hull_plan, float)
        for name, (x, y, _) in zip(self.thrusters, pos):
            if abs(x) > L / 2 or abs(y) > B / 2:
                raise InputError(f"thruster_positions: thruster {name!r} at x = {x:g} m, y = {y:g} m lies outside the hull "
                                 f"(hull_plan: {L:g} m long, {B:g} m wide about the body's origin)")
        rank = np.linalg.matrix_rank(self.allocation_matrix(np))
        if rank < 3:
            raise InputError(f"thrusters: {', '.join(f'{a} ({b})' for a, b in zip(self.thrusters, self.thruster_types))} "
                             "cannot give surge, sway and yaw independently (the allocation matrix has rank "
                             f"{rank}); add a thruster or move one")

    # -- allocation ----------------------------------------------------------------------------

    def _layout(self):
        """Per allocation column (static, numpy): its thruster's index (m,) and its direction (m, 2), body x, y."""
        cols = [(k, d) for k, t in enumerate(self.thruster_types) for d in _DIRECTIONS[t]]
        return np.asarray([k for k, _ in cols], dtype=int), np.asarray([d for _, d in cols], dtype=float)

    @property
    def n_columns(self) -> int:
        return len(self._layout()[0])

    def allocation_matrix(self, xp=jnp, dtype=None):
        """B (3, m): the surge force, sway force and yaw moment of a unit force in each column."""
        owner, d = self._layout()
        d = xp.asarray(d, dtype=dtype or float)
        r = xp.asarray(self.thruster_positions, dtype=dtype or float)[owner]
        return xp.stack([d[:, 0], d[:, 1], r[:, 0] * d[:, 1] - r[:, 1] * d[:, 0]])

    def _allocate(self, tau, dtype):
        """Command per column, limited per thruster, and each thruster's demand over its capacity."""
        owner = self._layout()[0]
        B = self.allocation_matrix(jnp, dtype)
        winv = jnp.asarray(self.max_thrust, dtype) ** 2 * jnp.ones(len(self.thrusters), dtype)
        winv = winv[owner]
        u = winv * (B.T @ jnp.linalg.solve((B * winv) @ B.T, tau))
        mag = jnp.sqrt(jax.ops.segment_sum(u * u, owner, num_segments=len(self.thrusters)) + 1e-30)
        ratio = mag / self.max_thrust
        return u * jnp.minimum(1.0, 1.0 / ratio)[owner], ratio

    # -- states --------------------------------------------------------------------------------

    @property
    def n_states(self):
        return 9 + self.n_columns

    def _measure(self, ctx: Context):
        """η (x, y, ψ) and its world rate."""
        i = ctx.body_index(self.body)
        R = ctx.kin.rotation(i)
        p, v = ctx.point_position(i, self.point), ctx.point_velocity(i, self.point)
        psi = jnp.arctan2(R[1, 0], R[0, 0])
        r = (R @ ctx.kin.body_twist(i)[3:])[2]
        return jnp.stack([p[0], p[1], psi]), jnp.stack([v[0], v[1], r])

    def initial_state(self, model, q, v):
        from ..kinematics import Kinematics

        q = model.normalise(q)
        ctx = Context(0.0, q, v, Kinematics.compute(model, q, v), model)
        eta, deta = self._measure(ctx)
        return jnp.concatenate([eta, deta, jnp.zeros(3 + self.n_columns, eta.dtype)])

    def _control(self, ctx: Context, z):
        dtype = ctx.p.dtype
        eta, _ = self._measure(ctx)
        ef, def_, xi, u = z[:3], z[3:6], z[6:9], z[9:]
        wf = 2.0 * jnp.pi / self.filter_period
        d = jnp.stack([eta[0] - ef[0], eta[1] - ef[1], _wrap(eta[2] - ef[2])])
        ddef = wf**2 * d - 2.0 * self.filter_damping * wf * def_
        c, s = jnp.cos(ef[2]), jnp.sin(ef[2])
        ex, ey = self.position[0] - ef[0], self.position[1] - ef[1]
        e_world = jnp.stack([ex, ey, _wrap(self.heading - ef[2])])

        def body(w):  # world (x, y, ψ) -> the vessel's (surge, sway, yaw) axes
            return jnp.stack([c * w[0] + s * w[1], -s * w[0] + c * w[1], w[2]])

        tau = self.kp * body(e_world) + self.ki * body(xi) - self.kd * body(def_)
        cmd, ratio = self._allocate(tau.astype(dtype), dtype)
        owner = self._layout()[0]
        rate = jnp.broadcast_to(jnp.asarray(self.thrust_rate, dtype), (len(self.thrusters),))[owner]
        udot = jnp.clip((cmd - u) / self.thruster_time_constant, -rate, rate)
        return eta, tau, u, ratio, jnp.concatenate([def_, ddef, e_world, udot])

    def _thruster_forces(self, u, dtype):
        """Per thruster, its body-frame force (n, 3)."""
        owner, d = self._layout()
        d = jnp.asarray(d, dtype)
        f2 = jax.ops.segment_sum(u[:, None] * d, owner, num_segments=len(self.thrusters))
        return jnp.concatenate([f2, jnp.zeros((len(self.thrusters), 1), dtype)], axis=1)

    def contribution(self, ctx: Context, z) -> Contribution:
        dtype = ctx.p.dtype
        _, _, u, _, zdot = self._control(ctx, z)
        f = self._thruster_forces(u, dtype)
        r = jnp.asarray(self.thruster_positions, dtype)
        wrench = jnp.concatenate([jnp.sum(f, 0), jnp.sum(jnp.cross(r, f), 0)])
        i = ctx.body_index(self.body)
        return Contribution(f_ext=ctx.zeros_f_ext().at[i].add(wrench), zdot=zdot)

    def outputs(self, ctx: Context, z) -> dict:
        dtype = ctx.p.dtype
        eta, tau, u, ratio, _ = self._control(ctx, z)
        f = self._thruster_forces(u, dtype)
        return {
            "offset": eta[:2] - self.position,
            "heading_error": _wrap(eta[2] - self.heading),
            "demand": tau,
            "delivered": self.allocation_matrix(jnp, dtype) @ u,
            "thrust": jnp.sqrt(jnp.sum(f * f, axis=1) + 1e-30),  # finite gradient at zero thrust
            "demand_ratio": ratio,
        }

    def output_units(self, model) -> dict:
        return {"offset": "m", "heading_error": "rad", "demand": "N (surge sway), N m (yaw)",
                "delivered": "N (surge sway), N m (yaw)", "thrust": "N", "demand_ratio": ""}

    def valid_ranges(self, model) -> tuple:
        return (ValidRange("demand_ratio", "largest thruster demand over its capacity", "dynamic positioning",
                           "a thruster asked for more than max_thrust: the vessel is held by less than the "
                           "controller wants (its capability is exceeded)", transform=_largest, upper=1.0),)
