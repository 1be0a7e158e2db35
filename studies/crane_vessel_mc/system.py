"""Cibicik et al. (2019): knuckle-boom crane on a supply vessel with a roll-and-pitch compensation platform.

``build(mc="on"|"off", location="I"|"II", **overrides) -> (System, q0)``.

Eight bodies in a serial chain (Cibicik et al. 2019, Sec. 3.2 and Tables 1-2):

    vessel (Free) / platform_roll (q1, about x) / platform (q2, about y) / king (q3, slew about z)
    / boom1 (q4, luff) / boom2 (q5, knuckle) / hook (q6, in the boom plane) / payload (q7, out of it)

Lengths l1..l7 = 0, 13, 10, 10, 8, 0, 15 m, masses m1..m7 = 0.01, 140, 70, 40,
30, 0.01, 20 t, centres of gravity at l_i/2 along each body (d7 = l7).  The
luff joints q4, q5, q6 turn about the king's −y axis and boom 1 points up at
q4 = 0, so the paper's angles carry over unchanged: q3 = −90° (boom towards
starboard), q4 = −45° (boom 1 45° up), q5 = −90° (boom 2 45° down), q6 = −45°
(payload hanging plumb), q7 = 0.  In our world frame (z up, y to port)
starboard is −y; location II puts the platform 3 m to starboard.

Where the paper is silent (choices, stated in README.md): the vessel is a
box hull 82.5 x 13.13 x 6.0 m (see ``hull.py``); the platform joint is at the
vessel frame's origin on the waterline at midship, as in the paper
(``deck_height`` moves it up); the vessel's own centre of gravity is 3.0 m below
the waterline (GM about 1.5 m with the crane), shifted horizontally so the
whole system floats on an even keel (ballast); radii of gyration 0.35 B,
0.25 L, 0.25 L; viscous roll damping 10 % of critical; the paper's
surge/sway/yaw PD (dynamic positioning) is a LinearMooring with stiffness and
damping on the vessel origin, by default 2 s natural period and 70 % of
critical (the paper has these motions "close to zero"); ``dp="thrusters"`` puts a
DynamicPositioning controller with thrusters (:data:`THRUSTERS`) in its place.

Every gain and physical parameter that a tuner may want is an array leaf of
the returned System: ``system.forces`` holds ``hydro`` (HydroBody), ``mc``
(MotionCompensation: ``kp``, ``kd``), ``crane`` (JointPD on q3-q5: ``kp``,
``kd``, ``setpoint``), ``dp`` (LinearMooring: ``stiffness``, ``damping``; or
DynamicPositioning: ``kp``, ``kd``, ``ki``, ``filter_period``) and
``sway`` (a probe with the payload sway angles θ1, θ2 as outputs).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxmbd import spatial
from jaxmbd.control import DynamicPositioning, JointPD, MotionCompensation, positioning_gains
from jaxmbd.forces import LinearMooring
from jaxmbd.hydro import JONSWAP, HydroBody, SeaState, WaveDrift
from jaxmbd.joints import Free, Revolute
from jaxmbd.kinematics import forward_kinematics
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.system import Context, Contribution, ForceElement, System

try:  # imported as studies.crane_vessel_mc.system or run from this folder
    from . import hull
except ImportError:  # pragma: no cover
    import hull  # type: ignore

T = 1000.0
LENGTHS = (0.0, 13.0, 10.0, 10.0, 8.0, 0.0, 15.0)  # l1..l7, m (Table 1)
MASSES = tuple(m * T for m in (0.01, 140.0, 70.0, 40.0, 30.0, 0.01, 20.0))  # m1..m7, kg (Table 2)
Q_CRANE0 = np.deg2rad([-90.0, -45.0, -90.0, -45.0, 0.0])  # q3..q7 (Sec. 5)
LOCATIONS = {"I": 0.0, "II": -3.0}  # platform y on deck, m (II: 3 m to starboard = −y)
THRUSTERS = {  # a supply vessel's DP: two bow tunnels, two stern azimuths (ours; the paper has none)
    "names": ("bow_1", "bow_2", "stern_ps", "stern_sb"),
    "types": ("tunnel", "tunnel", "azimuth", "azimuth"),
    "positions": ((34.0, 0.0, -5.0), (31.0, 0.0, -5.0), (-37.0, 4.0, -6.5), (-37.0, -4.0, -6.5)),
    "max_thrust": (1.5e5, 1.5e5, 4.0e5, 4.0e5),  # N
    "thrust_rate": (5.0e4, 5.0e4, 8.0e4, 8.0e4),  # N/s
}
JOINTS = ("q1", "q2", "q3", "q4", "q5", "q6", "q7")


class SwayProbe(ForceElement):
    """No force; outputs the payload's sway angles in the world (Cibicik et al. 2019, Fig. 6).

    The payload's orientation is written R = Rx(θ1) Ry(θ2) acting on the plumb
    line: with u the unit vector from the hook to the payload, u = (−sin θ2,
    sin θ1 cos θ2, −cos θ1 cos θ2).  θ1 is the transverse sway (in the y-z
    plane), θ2 the fore-and-aft sway.  Outputs ``theta1``, ``theta2`` (rad).
    """

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    axis: jnp.ndarray  # the hook-to-payload direction in the payload frame

    def angles(self, ctx: Context):
        u = spatial.mv(ctx.R[ctx.model.index(self.body)], self.axis)
        theta1 = jnp.arctan2(u[1], -u[2])
        theta2 = jnp.arctan2(-u[0], jnp.sqrt(u[1] ** 2 + u[2] ** 2))
        return theta1, theta2

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution()

    def output_units(self, model) -> dict:
        return {"theta1": "rad", "theta2": "rad"}

    def outputs(self, ctx: Context, z) -> dict:
        t1, t2 = self.angles(ctx)
        return {"theta1": t1, "theta2": t2}


def _column(mass, length, radius):
    it = mass * (3 * radius**2 + length**2) / 12.0
    return np.diag([it, it, 0.5 * mass * radius**2])


def _rod_x(mass, length, radius):
    it = mass * (3 * radius**2 + length**2) / 12.0
    return np.diag([0.5 * mass * radius**2, it, it])


def crane_bodies(lengths=LENGTHS, masses=MASSES):
    """Bodies 1..7 with centres of gravity at l_i/2 (d7 = l7): name -> (Body, com in body frame)."""
    l, m = lengths, masses
    com = {
        "platform_roll": np.zeros(3),
        "platform": np.array([0.0, 0.0, 0.5 * l[1]]),
        "king": np.array([0.0, 0.0, 0.5 * l[2]]),
        "boom1": np.array([0.5 * l[3], 0.0, 0.0]),
        "boom2": np.array([0.5 * l[4], 0.0, 0.0]),
        "hook": np.array([0.5 * l[5], 0.0, 0.0]),
        "payload": np.array([l[6], 0.0, 0.0]),
    }
    inertia = {
        "platform_roll": np.full(3, 1.0),
        "platform": _column(m[1], l[1], 2.0),
        "king": _column(m[2], l[2], 1.5),
        "boom1": _rod_x(m[3], l[3], 0.8),
        "boom2": _rod_x(m[4], l[4], 0.6),
        "hook": np.full(3, 1.0),
        "payload": np.full(3, m[6] * 4.0 / 6.0),  # a 2 m cube
    }
    names = ("platform_roll", "platform", "king", "boom1", "boom2", "hook", "payload")
    return {n: (Body(mass=mi, com=com[n], inertia=inertia[n]), com[n]) for n, mi in zip(names, m)}


def _model(crane_y, deck_height, vessel_com, vessel_mass, vessel_radii, lengths, masses):
    l = lengths
    mv = vessel_mass
    kx, ky, kz = vessel_radii
    b = ModelBuilder(source="crane_vessel_mc")
    b.add_body("vessel", body=Body(mv, vessel_com, np.diag([mv * kx**2, mv * ky**2, mv * kz**2])),
               joint=Free(), joint_name="vessel")
    bodies = crane_bodies(lengths, masses)
    up = Placement(R=np.asarray(spatial.rot_y(-0.5 * np.pi)))  # x along the king's z (boom 1 vertical at q4 = 0)
    luff = (0.0, -1.0, 0.0)
    chain = [
        ("platform_roll", "q1", Revolute((1.0, 0.0, 0.0)), "vessel", Placement(p=np.array([0.0, crane_y, deck_height]))),
        ("platform", "q2", Revolute((0.0, 1.0, 0.0)), "platform_roll", Placement(p=np.array([0.0, 0.0, l[0]]))),
        ("king", "q3", Revolute((0.0, 0.0, 1.0)), "platform", Placement(p=np.array([0.0, 0.0, l[1]]))),
        ("boom1", "q4", Revolute(luff), "king", Placement(R=up.R, p=np.array([0.0, 0.0, l[2]]))),
        ("boom2", "q5", Revolute(luff), "boom1", Placement(p=np.array([l[3], 0.0, 0.0]))),
        ("hook", "q6", Revolute(luff), "boom2", Placement(p=np.array([l[4], 0.0, 0.0]))),
        ("payload", "q7", Revolute((0.0, 0.0, 1.0)), "hook", Placement(p=np.array([l[5], 0.0, 0.0]))),
    ]
    for name, jname, joint, parent, pl in chain:
        b.add_body(name, body=bodies[name][0], joint=joint, parent=parent, placement=pl, joint_name=jname)
    return b.build(), {n: c for n, (_, c) in bodies.items()}


def _crane_cogs(model, q, coms, masses):
    Rw, pw = forward_kinematics(model, jnp.asarray(q))
    return np.stack([np.asarray(Rw[model.index(n)]) @ c + np.asarray(pw[model.index(n)]) for n, c in coms.items()])


def _hook(model, q):
    _, pw = forward_kinematics(model, jnp.asarray(q))
    return np.asarray(pw[model.index("hook")])


def initial_q(model, q_crane=Q_CRANE0):
    q0 = np.array(model.neutral(), dtype=float)
    for name, val in zip(("q3", "q4", "q5", "q6", "q7"), q_crane):
        q0[model.q_slice(name)] = val
    return q0


def build(
    mc: str = "on",
    location: str = "I",
    *,
    crane_y=None,
    deck_height=0.0,
    vessel_mass=hull.VESSEL_MASS,
    vessel_kg=-3.0,
    vessel_radii=None,
    lengths=LENGTHS,
    masses=MASSES,
    q_crane=Q_CRANE0,
    platform_kp=(2.0e9, 2.0e9),
    platform_kd=(4.0e8, 4.0e8),
    crane_kp=(2.0e7, 3.0e7, 1.0e7),
    crane_kd=(3.0e6, 4.0e6, 1.2e6),
    dp_period=2.0,
    dp_damping_ratio=0.7,
    dp="spring",
    dp_time_constant=20.0,
    dp_filter_period=10.0,
    roll_damping_ratio=0.10,
    hs=5.0,
    omega_p=1.26,
    gamma=3.3,
    mean_direction=np.deg2rad(135.0),
    spreading=1.0,
    n_frequencies=60,
    n_directions=9,
    omega_min=0.4,
    omega_max=2.5,
    ramp_time=20.0,
    hydro=None,
    drift=False,
):
    """Cibicik et al. (2019)'s crane vessel.  Returns ``(System, q0)``.

    ``mc``: "on" keeps the platform level (PD on its world roll and pitch),
    "off" locks it parallel to the deck (PD on q1, q2 towards 0); both with
    gravity compensation.  ``location``: "I" (platform on the centreline) or
    "II" (3 m to starboard); ``crane_y`` overrides the platform's y (m).
    ``vessel_kg``: z of the vessel's own centre of gravity (m, from the
    waterline).  Gains: ``platform_kp``/``platform_kd`` (N m/rad, N m s/rad,
    roll and pitch), ``crane_kp``/``crane_kd`` (q3, q4, q5).  ``dp_period``
    (s) and ``dp_damping_ratio``: the surge/sway/yaw PD.  ``dp="thrusters"`` replaces that PD by a
    dynamic positioning system (:data:`THRUSTERS`: two bow tunnels and two stern azimuths, wave
    filter at ``dp_filter_period`` s, gains placing the poles at −1/``dp_time_constant``).  Sea: JONSWAP
    ``hs`` (m), ``omega_p`` (rad/s), ``gamma``; cos^2s spreading (s =
    ``spreading``) about ``mean_direction`` (rad, direction of travel; 135° is
    bow-quartering from starboard), ``n_frequencies`` x ``n_directions``
    components over [``omega_min``, ``omega_max``].  ``hs = 0`` or
    ``n_frequencies = 0`` gives calm water (no wave field).  ``drift``: the mean and slow wave drift on the hull
    from its coefficients (``hull.load_drift``, Newman's approximation), as element ``drift``.
    """
    if mc not in ("on", "off"):
        raise ValueError(f"mc must be 'on' or 'off', got {mc!r}")
    if crane_y is None:
        if location not in LOCATIONS:
            raise ValueError(f"location must be one of {sorted(LOCATIONS)}, got {location!r}")
        crane_y = LOCATIONS[location]
    hd = hydro if hydro is not None else hull.load_hydro()
    L, B = hull.LENGTH, hull.BREADTH
    radii = vessel_radii if vessel_radii is not None else (0.35 * B, 0.25 * L, 0.25 * L)

    # Ballast: put the vessel's own centre of gravity where the whole system floats on an even keel.
    probe, coms = _model(crane_y, deck_height, np.array([0.0, 0.0, vessel_kg]), vessel_mass, radii, lengths, masses)
    q0 = initial_q(probe, q_crane)
    cg = _crane_cogs(probe, q0, coms, masses)  # (7, 3) world centres of gravity of bodies 1..7
    m_crane = float(np.sum(masses))
    m_tot = vessel_mass + m_crane
    cob = np.asarray(hd.centre_of_buoyancy[0], float)
    xy = (cob[:2] * m_tot - np.asarray(masses) @ cg[:, :2]) / vessel_mass
    vessel_com = np.array([xy[0], xy[1], vessel_kg])
    model, _ = _model(crane_y, deck_height, vessel_com, vessel_mass, radii, lengths, masses)

    # Viscous roll damping: a fraction of critical, with the roll stiffness (the payload counts at
    # its hook) and the roll inertia at rest.
    z_eff = cg[:, 2].copy()
    z_eff[6] = _hook(model, q0)[2]
    zg = (vessel_mass * vessel_kg + np.asarray(masses) @ z_eff) / m_tot
    c44 = float(hd.hydrostatic_stiffness[3, 3]) - m_tot * 9.81 * zg
    a44 = float(np.interp(0.8, np.asarray(hd.omega), np.asarray(hd.added_mass[:, 3, 3])))
    i44 = vessel_mass * (radii[0] ** 2 + vessel_kg**2) + a44
    b44 = 2.0 * roll_damping_ratio * np.sqrt(max(c44, 0.0) * i44)
    hb = HydroBody.create(model, hd, bodies=("vessel",), q_equilibrium=jnp.asarray(q0), ramp_time=ramp_time,
                          linear_damping=np.diag([0.0, 0.0, 0.0, b44, 0.0, 0.0]))

    a_inf = np.asarray(hb.added_mass_inf)
    m_eff = np.array([m_tot + a_inf[0, 0], m_tot + a_inf[1, 1], vessel_mass * radii[2] ** 2 + a_inf[5, 5]])
    if dp == "thrusters":
        kp, kd, ki = positioning_gains(m_eff, dp_time_constant)
        pos = jnp.asarray(THRUSTERS["positions"])
        dp = DynamicPositioning(name="dp", body="vessel", thrusters=THRUSTERS["names"], thruster_types=THRUSTERS["types"],
                                thruster_positions=pos, max_thrust=jnp.asarray(THRUSTERS["max_thrust"]),
                                thrust_rate=jnp.asarray(THRUSTERS["thrust_rate"]), kp=jnp.asarray(kp), kd=jnp.asarray(kd),
                                ki=jnp.asarray(ki), filter_period=jnp.asarray(float(dp_filter_period)),
                                thruster_time_constant=jnp.asarray(2.0), hull_plan=jnp.asarray([L, B]))
    elif dp == "spring":  # the paper's PD on surge, sway and yaw of the vessel origin (world axes)
        w = 2 * np.pi / dp_period
        k = m_eff * w**2
        c = 2 * dp_damping_ratio * m_eff * w
        dp = LinearMooring(name="dp", body="vessel", point=jnp.zeros(3), reference=jnp.zeros(3),
                           stiffness=jnp.diag(jnp.array([k[0], k[1], 0.0, 0.0, 0.0, k[2]])),
                           damping=jnp.diag(jnp.array([c[0], c[1], 0.0, 0.0, 0.0, c[2]])))
    else:
        raise ValueError(f"dp must be 'spring' or 'thrusters', got {dp!r}")
    platform = MotionCompensation(name="mc", roll_joint="q1", pitch_joint="q2", platform="platform",
                                  kp=jnp.asarray(platform_kp, dtype=float), kd=jnp.asarray(platform_kd, dtype=float),
                                  mode=mc)
    crane = JointPD(name="crane", joints=("q3", "q4", "q5"), setpoint=jnp.asarray(q_crane[:3], dtype=float),
                    kp=jnp.asarray(crane_kp, dtype=float), kd=jnp.asarray(crane_kd, dtype=float),
                    gravity_compensation=True)
    sway = SwayProbe(name="sway", body="payload", axis=jnp.array([1.0, 0.0, 0.0]))
    waves = None
    if n_frequencies and float(hs) > 0:
        waves = SeaState(spectrum=JONSWAP(hs, 2 * np.pi / omega_p, gamma), n_frequencies=int(n_frequencies),
                         omega_min=float(omega_min), omega_max=float(omega_max), n_directions=int(n_directions),
                         spreading=float(spreading), mean_direction=jnp.asarray(mean_direction, dtype=float))
    extra = (WaveDrift(name="drift", body="vessel", table=hull.load_drift(), ramp_time=ramp_time),) if drift else ()
    system = System(model, (hb, platform, crane, dp, sway) + extra, waves=waves, name=f"crane_vessel_mc_{location}_{mc}",
                    report_joints=("q1", "q3"))
    return system, jnp.asarray(q0)
