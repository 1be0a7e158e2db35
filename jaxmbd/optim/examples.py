"""A small crane vessel for tests and smoke runs: Cibicik et al. (2019)'s structure at a fraction of the cost.

``small_crane_vessel`` keeps what the tuning acts on (roll-and-pitch motion
compensation platform, king, boom, payload on a wire rope, reported reaction
wrenches, the crane's offset on deck) and replaces the hydrodynamics by a
vessel on roll and pitch joints with linear restoring and damping (a
:class:`~jaxmbd.control.JointPD` without gravity compensation plays the
hydrostatics) and a wave moment ∝ the wave slope at the origin
(:class:`WaveSlopeMoment`).  The platform controller runs without gravity compensation (one
inverse-dynamics pass less per evaluation), so the platform settles a few
millirad off level under the crane's weight; the graph stays small, which keeps
compile times and gradient checks short.  Not a model of a real vessel.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..control import JointPD, MotionCompensation
from ..forces import WireRope
from ..joints import Fixed, Free, Revolute
from ..model import Body, ModelBuilder, Placement
from ..system import Context, Contribution, ForceElement, System


class WaveSlopeMoment(ForceElement):
    """Roll and pitch moments on two joints from the wave slope at the origin:

        M_roll = −gain[0] Σ a_j k_j sin β_j sin(ω_j t + φ_j),
        M_pitch = gain[1] Σ a_j k_j cos β_j sin(ω_j t + φ_j)

    (Froude-Krylov moment of a long wall-sided hull, slope-proportional; gain in N·m per rad of slope),
    ramped in over ``ramp_time``."""

    name: str = eqx.field(static=True)
    roll_joint: str = eqx.field(static=True)
    pitch_joint: str = eqx.field(static=True)
    gain: jnp.ndarray
    ramp_time: float = eqx.field(static=True, default=10.0)

    def contribution(self, ctx: Context, z) -> Contribution:
        w = ctx.waves
        tau = jnp.zeros(ctx.model.nv, dtype=ctx.q.dtype)
        if w is None:
            return Contribution(tau=tau)
        s = jnp.sin(w.omega * ctx.t + w.phase) * w.amplitude * w.wavenumber
        ramp = jnp.clip(ctx.t / self.ramp_time, 0.0, 1.0) if self.ramp_time > 0 else 1.0
        ramp = ramp * ramp * (3.0 - 2.0 * ramp)
        mr = -self.gain[0] * jnp.sum(s * jnp.sin(w.direction)) * ramp
        mp = self.gain[1] * jnp.sum(s * jnp.cos(w.direction)) * ramp
        m = ctx.model
        # the time (and so the wave phase) may be float64 in a float32 run: the moments take the state's dtype
        tau = tau.at[m.v_start[m.index(self.roll_joint)]].add(mr.astype(tau.dtype))
        tau = tau.at[m.v_start[m.index(self.pitch_joint)]].add(mp.astype(tau.dtype))
        return Contribution(tau=tau)


def small_crane_vessel(waves=None, *, mc: str = "on", offset_y: float = 0.0, kp: float = 1.0e9, kd: float = 2.0e8,
                       rope_EA: float = 3.0e7, rope_damping: float = 2.0e4, rope_length: float = 15.0):
    """(System, q_guess): vessel (roll, pitch) / platform (roll, pitch; motion compensation ``mc``) / king
    (fixed, joint ``king_base``) / boom (fixed, 18 m) / 20 t payload (free body) on the rope ``hoist``.

    Reported joints: ``platform_base`` (deck/platform, the roll joint's body) and ``king_base``.
    Vessel: 6,362 t, roll period ~ 9 s and pitch period ~ 6 s, 5 % / 10 % damping.
    """
    t = 1000.0
    mv = 6362 * t
    Ir, Ip = mv * (0.35 * 13.13) ** 2, mv * (0.25 * 82.5) ** 2
    b = ModelBuilder(source="small_crane_vessel")
    b.add_body("vessel_roll", body=Body(mass=1.0, inertia=np.full(3, 1.0)), joint=Revolute((1.0, 0.0, 0.0)),
               joint_name="roll")
    b.add_body("vessel", body=Body(mass=mv, com=(0.0, 0.0, 0.0), inertia=np.diag([Ir, Ip, Ip])),
               joint=Revolute((0.0, 1.0, 0.0)), parent="vessel_roll", joint_name="pitch")
    b.add_body("platform_roll", body=Body(mass=10.0, inertia=np.full(3, 1.0)), joint=Revolute((1.0, 0.0, 0.0)),
               parent="vessel", placement=Placement(p=np.array([0.0, offset_y, 2.0])), joint_name="platform_base")
    b.add_body("platform", body=Body(mass=140 * t, com=(0, 0, 6.5), inertia=np.diag([2.1e6, 2.1e6, 2.8e5])),
               joint=Revolute((0.0, 1.0, 0.0)), parent="platform_roll", joint_name="q2")
    b.add_body("king", body=Body(mass=70 * t, com=(0, 0, 5.0), inertia=np.diag([6.2e5, 6.2e5, 8e4])),
               joint=Fixed(), parent="platform", placement=Placement(p=np.array([0.0, 0.0, 13.0])),
               joint_name="king_base")
    b.add_body("boom", body=Body(mass=70 * t, com=(9.0, 0, 0), inertia=np.diag([2e4, 1.9e6, 1.9e6])),
               joint=Fixed(), parent="king", placement=Placement(p=np.array([0.0, 0.0, 10.0])), joint_name="boom_foot")
    mpay = 20 * t
    b.add_body("payload", body=Body(mass=mpay, inertia=np.full(3, mpay * 1.0)), joint=Free(), joint_name="payload")
    model = b.build()
    # hydrostatics (roll, pitch): ω² I = k, periods 9 s and 6 s; damping 5 % / 10 % of critical
    kr, kpitch = Ir * (2 * np.pi / 9.0) ** 2, Ip * (2 * np.pi / 6.0) ** 2
    cr, cp = 2 * 0.05 * np.sqrt(kr * Ir), 2 * 0.10 * np.sqrt(kpitch * Ip)
    hydro = JointPD(name="hydrostatics", joints=("roll", "pitch"), setpoint=jnp.zeros(2),
                    kp=jnp.asarray([kr, kpitch]), kd=jnp.asarray([cr, cp]), gravity_compensation=False)
    excitation = WaveSlopeMoment(name="waves", roll_joint="roll", pitch_joint="pitch",
                                 gain=jnp.asarray([0.5 * kr, 0.5 * kpitch]))
    comp = MotionCompensation(name="mc", roll_joint="platform_base", pitch_joint="q2", platform="platform",
                              kp=jnp.asarray(kp), kd=jnp.asarray(kd), mode=mc, gravity_compensation=False)
    rope = WireRope(name="hoist", body_a="boom", point_a=jnp.asarray([18.0, 0.0, 0.0]), body_b="payload",
                    point_b=jnp.zeros(3), EA=jnp.asarray(rope_EA), length=jnp.asarray(rope_length),
                    damping=jnp.asarray(rope_damping), transition=jnp.asarray(10.0))
    system = System(model, (hydro, excitation, comp, rope), waves=waves, name="small_crane_vessel",
                    report_joints=("platform_base", "king_base"))
    q = np.array(model.neutral(), dtype=float)
    stretch = mpay * 9.81 / (rope_EA / rope_length)
    q[model.q_slice("payload")] = [18.0, offset_y, 25.0 - rope_length - stretch, 1.0, 0.0, 0.0, 0.0]
    return system, jnp.asarray(q)
