"""A subsea installation from deck to seabed: the 175 t manifold of Hong et al. (2016) lifted off the
deck of their offshore support vessel, slewed over the side, lowered through the splash zone and the
water column and landed on the seabed, in irregular waves.

    system, q0 = build()                 # System and a static equilibrium, manifold resting on deck
    scenario = operation(system)         # the six phases (jaxmbd.Scenario)

Model (SI units; world z up, x forward, y to port; waves travel towards β, docs/conventions.md):

* vessel, hydrodynamics, mooring and roll damping: those of ``studies/osv_lift`` (box hull 110 x 46
  x 7.5 m at 3.75 m draught, Capytaine coefficients, soft horizontal mooring, 5 % roll damping),
  ballasted to float level with the manifold on deck.
* crane: the same king and 35 m boom at 45° luffing, rigid, now on a slewing bearing (a revolute
  joint about the king's axis) turned by a :class:`~jaxmbd.forces.drive.JointDrive`: rated
  2°/s, 10 MN m, tracking loop of 2 rad/s.  At the start the boom points forward over the deck;
  over-boarding slews it 90° to starboard (outreach 24.7 m from the king, 16.7 m outside the hull).
* hoist: a 64 mm six-strand wire (EA = 190 MN, 17 kg/m, steel 7,850 kg/m³) in four falls between
  the boom-tip sheaves and a hook block, 60 m of lead to the drum; 2 % of critical damping of the
  load's bounce in air; the winch rated for 0.6 m/s at the hook.  The slings are rigid: the falls end
  at the manifold's top centre.
* manifold: 20.3 x 15 x 6.1 m, 175 t (Hong et al. 2016 Table 5), an open steel frame with a roof
  (protection structure).  Morison object (:class:`~jaxmbd.forces.morison.MorisonObject`): 22.3 m³
  of steel displaced (175 t / 7,850 kg/m³); vertical added mass from DNV-RP-H103 for a perforated
  flat structure: the roof as a rectangular plate 20.3 x 15 m (Table A-2, b/a = 1.35: C_A = 0.66,
  A33 = ρ C_A π a² b / 4 with a = 15 m) reduced for 30 % perforation (section 4.6.3.5,
  0.7 + 0.3 cos(π (p − 5) / 34) = 0.485): 1,169 t, i.e. C_A,z = 51.2 on the steel volume;
  sideways C_A = 1 (the frame's members, our choice).  Drag: C_D = 2.5 on the roof's 310 m² in
  heave and on the side faces (92 and 124 m²) sideways (DNV-RP-H103 4.6.2.5's value for subsea
  structures); slamming as the rate of change of added mass.
* contacts: four dunnage fenders under the manifold's corners on the deck (20 MN/m each, 10 % of
  critical damping, friction 0.3; the deck ends at the hull's sides and 10 cm under its surface); the
  starboard side shell against the same corners (a clash, the same stiffness, damping and friction), from
  the keel to the deck; on the seabed at 100 m the same corners on soft clay (2.5 MN/m
  per corner: 15 cm of settlement under the submerged weight, 30 % of critical damping, friction 0.5);
  friction regularised over 0.2 m/s of sliding (the landing's vertical force is the figure sought).
* waves: JONSWAP (γ = 3.3), ``hs``, ``tp``, travelling towards ``heading_deg`` (180°: head seas,
  from the bow), 100 frequencies, ramped in over 20 s; deep water for the hull (its BEM data) and
  for the particle kinematics (at 100 m, kd > 2.5 for the waves that matter).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxmbd.forces import LinearMooring, WireRope
from jaxmbd.forces.drive import JointDrive
from jaxmbd.forces.fender import Fender
from jaxmbd.forces.morison import MorisonObject
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.hydro.body import HydroBody
from jaxmbd.joints import Fixed, Free, Revolute
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.scenario import Scenario
from jaxmbd.simulation import static_equilibrium
from jaxmbd.system import System
from studies.osv_lift.hull import BEAM, DRAUGHT, LENGTH, hull_over_the_circle
from studies.osv_lift.system import (
    BOOM_DIR,
    BOOM_LENGTH,
    DISPLACEMENT,
    KING_BASE,
    KING_HEIGHT,
    M_BOOM,
    M_KING,
    M_MANIFOLD,
    MANIFOLD_DIMS,
    RHO_W,
    G,
    _box_inertia,
    _rod_inertia_about_com,
)

# ---- settings (module constants: the README and the tests quote them) ----
TONNE = 1000.0  # kg
DECK_Z = 7.5 - DRAUGHT  # m above the waterline
WATER_DEPTH = 100.0
SLEW_START = math.pi / 2  # boom forward, over the deck
SLEW_RATE, SLEW_TORQUE = math.radians(2.0), 1.0e7
SLEW_SETTLED = 0.5  # deg/s: the slew has arrived within 0.5 deg of its target at under a quarter of its rated
#                     speed (the swinging load keeps the drive's angle moving by up to 1 deg and 0.5 deg/s in long
#                     seas: a tighter settle waits for a lull that may not come within the phase's time limit)
FALLS, ROPE_EA, ROPE_MASS, LEAD = 4, 190e6, 17.0, 60.0
WINCH_SPEED = 0.6
HOOK_POINT = np.array([0.0, 0.0, MANIFOLD_DIMS[2] / 2])
HALF = MANIFOLD_DIMS / 2
CORNERS = [np.array([sx * HALF[0], sy * HALF[1], -HALF[2]]) for sx in (1, -1) for sy in (1, -1)]

STEEL_VOLUME = M_MANIFOLD / 7850.0  # m³
ROOF_A, ROOF_B = 15.0, 20.3  # m, short and long side of the roof
PLATE_CA = 0.66  # DNV-RP-H103 Table A-2, rectangular plate, b/a = 1.35
PERFORATION = 0.30
PERFORATION_FACTOR = 0.7 + 0.3 * math.cos(math.pi * (100 * PERFORATION - 5) / 34)  # 4.6.3.5, p in %
A33 = RHO_W * PLATE_CA * math.pi * ROOF_A**2 * ROOF_B / 4 * PERFORATION_FACTOR  # kg
CA = (1.0, 1.0, A33 / (RHO_W * STEEL_VOLUME))
CD = 2.5
AREAS = (MANIFOLD_DIMS[1] * MANIFOLD_DIMS[2], MANIFOLD_DIMS[0] * MANIFOLD_DIMS[2], MANIFOLD_DIMS[0] * MANIFOLD_DIMS[1])

DECK_K, DECK_ZETA, DECK_MU = 20e6, 0.10, 0.3
DECK_REACH = 0.1  # m: the deck's contact holds for a corner at most this far under the deck (five times the
#                   dunnage's static compression, 2 cm); one lower came in from the side: it hits the hull's side
SIDE_K, SIDE_ZETA, SIDE_MU = 20e6, 0.10, 0.3  # the starboard side shell against a corner that swings into it
SEABED_K, SEABED_ZETA, SEABED_MU = 2.5e6, 0.30, 0.5
SLIP = 0.2  # m/s, the friction's regularisation: μ F_n / u_s damps sliding with a time constant of
#             m u_s / (μ F_n) = 40-80 ms, stable for RK4 at 20 ms (0.01 m/s would need 1 ms steps)
RAMP_TIME = 20.0

# the operation (m/s at the hook, m of clearance)
LIFT_SPEED, LIFT_HEIGHT = 0.1, 2.0
LOWER_SPEED, SPLASH_SPEED, LANDING_SPEED = 0.5, 0.2, 0.1
SPLASH_TOP, SPLASH_BOTTOM = 1.0, 5.0  # the splash zone: from the manifold's bottom 1 m above the still
#                                        water to its top 5 m under it
LANDING_CLEARANCE = 5.0

WEIGHT = M_MANIFOLD * G
SUBMERGED_WEIGHT = (M_MANIFOLD - RHO_W * STEEL_VOLUME) * G


def _turn(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def tip_in_king():
    """The boom tip in the king's frame (origin on deck at the king's foot)."""
    return np.array([0.0, 0.0, KING_HEIGHT]) + BOOM_LENGTH * BOOM_DIR


def sea(hs=2.0, tp=9.0, heading_deg=180.0, n_frequencies=100):
    return SeaState(spectrum=JONSWAP(hs=hs, tp=tp, gamma=3.3), mean_direction=jnp.asarray(math.radians(heading_deg)),
                    n_frequencies=n_frequencies)


def build(hs=2.0, tp=9.0, heading_deg=180.0, *, n_frequencies=100, hydro=None):
    """``(System, q0)``: the system and its static equilibrium with the manifold resting on deck under the
    boom tip, the falls just taut (5 % of the weight)."""
    hd = hydro if hydro is not None else hull_over_the_circle()  # the box's table mirrored: headings 0-360 deg
    tip0 = KING_BASE + _turn(SLEW_START) @ tip_in_king()  # vessel frame
    manifold0 = np.array([tip0[0], tip0[1], DECK_Z + HALF[2]])
    m_hull = DISPLACEMENT - M_KING - M_BOOM - M_MANIFOLD
    king_com = KING_BASE + np.array([0.0, 0.0, KING_HEIGHT / 2])
    boom_com = KING_BASE + _turn(SLEW_START) @ (np.array([0.0, 0.0, KING_HEIGHT]) + 0.5 * BOOM_LENGTH * BOOM_DIR)
    moment = (M_KING * king_com + M_BOOM * boom_com + M_MANIFOLD * manifold0)[:2]
    hull_com = np.array([*(-moment / m_hull), 2.25])
    hull_I = m_hull * np.diag([(0.35 * BEAM) ** 2, (0.26 * LENGTH) ** 2, (0.27 * LENGTH) ** 2])

    b = ModelBuilder(source="subsea_installation")
    b.add_body("vessel", body=Body(m_hull, hull_com, hull_I), joint=Free(), joint_name="vessel")
    b.add_body("king", body=Body(M_KING, (0.0, 0.0, KING_HEIGHT / 2), np.diag([M_KING * 25.0] * 2 + [M_KING * 4.0])),
               joint=Revolute((0.0, 0.0, 1.0)), parent="vessel", placement=Placement(p=KING_BASE), joint_name="slew")
    b.add_body("boom", body=Body(M_BOOM, 0.5 * BOOM_LENGTH * BOOM_DIR, _rod_inertia_about_com(M_BOOM, BOOM_DIR, BOOM_LENGTH)),
               joint=Fixed(), parent="king", placement=Placement(p=np.array([0.0, 0.0, KING_HEIGHT])), joint_name="boom_foot")
    b.add_body("manifold", body=Body(M_MANIFOLD, (0.0, 0.0, 0.0), _box_inertia(M_MANIFOLD, MANIFOLD_DIMS)),
               joint=Free(), joint_name="manifold")
    model = b.build()

    q_rest = np.array(model.neutral(), dtype=float)
    q_rest[model.q_slice("slew")] = SLEW_START
    q_rest[model.q_slice("manifold")] = [*manifold0, 1.0, 0.0, 0.0, 0.0]
    hb0 = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=RAMP_TIME)
    C44 = float(hb0.buoyancy_stiffness[3, 3]) - G * (m_hull * hull_com[2] + M_KING * king_com[2] + M_BOOM * boom_com[2]
                                                     + M_MANIFOLD * manifold0[2])
    I44 = hull_I[0, 0] + m_hull * hull_com[2] ** 2 + float(hb0.added_mass_inf[3, 3])
    damping = np.zeros((6, 6))
    damping[3, 3] = 0.05 * 2 * math.sqrt(max(C44, 0.0) * I44)
    hb = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=RAMP_TIME, linear_damping=damping, radiation=hb0.radiation)
    k_h = (DISPLACEMENT + float(hb0.added_mass_inf[0, 0])) * (2 * math.pi / 100.0) ** 2
    moor = LinearMooring(name="mooring", body="vessel", point=jnp.zeros(3), reference=jnp.zeros(3),
                         stiffness=jnp.diag(jnp.array([k_h, k_h, 0.0, 0.0, 0.0, k_h * (0.27 * LENGTH) ** 2])),
                         damping=jnp.zeros((6, 6)))

    I_slew = M_KING * 4.0 + M_BOOM * (0.5 * BOOM_LENGTH * BOOM_DIR[1]) ** 2 + M_BOOM * BOOM_LENGTH**2 / 12 * BOOM_DIR[1] ** 2
    wn = 2.0
    drive = JointDrive(name="slew_drive", joints=("slew",), target=jnp.asarray([SLEW_START]),
                       max_rate=jnp.asarray([SLEW_RATE]), max_torque=jnp.asarray([SLEW_TORQUE]),
                       kp=jnp.asarray([I_slew * wn**2]), kd=jnp.asarray([2 * I_slew * wn]), settle_rate=jnp.asarray([0.5]))

    settle = 0.95 * WEIGHT / (4 * DECK_K)  # the dunnage's compression under 95 % of the weight
    L0 = tip0[2] - (DECK_Z + MANIFOLD_DIMS[2]) + settle  # one fall, sheave to hook, manifold on deck
    k_air = FALLS**2 * ROPE_EA / (FALLS * L0 + LEAD)
    length = L0 - 0.05 * WEIGHT / k_air  # just taut: 5 % of the weight
    rope = WireRope(name="hoist", body_a="boom", point_a=jnp.asarray(tip_in_king() - [0.0, 0.0, KING_HEIGHT]),
                    body_b="manifold", point_b=jnp.asarray(HOOK_POINT), EA=jnp.asarray(ROPE_EA), length=jnp.asarray(length),
                    damping=jnp.asarray(0.02 * 2 * math.sqrt(k_air * M_MANIFOLD) / FALLS),  # n c at the hook
                    transition=jnp.asarray(1e3), falls=FALLS, lead_length=jnp.asarray(LEAD), winch=True,
                    payout_rate=jnp.asarray(0.0), max_speed=jnp.asarray(WINCH_SPEED),
                    mass_per_length=jnp.asarray(ROPE_MASS))
    water = MorisonObject(name="water", body="manifold", volume=jnp.asarray(STEEL_VOLUME), area=jnp.asarray(AREAS),
                          height=jnp.asarray(MANIFOLD_DIMS[2]), Cd=jnp.asarray(CD), Ca=jnp.asarray(CA),
                          ramp_time=jnp.asarray(RAMP_TIME), slamming=True)
    m_deck = M_MANIFOLD / 4
    deck = [Fender(name=f"deck_{i}", body="manifold", point=jnp.asarray(c), other="vessel",
                   plane_point=jnp.asarray([0.0, 0.0, DECK_Z]), normal=jnp.asarray([0.0, 0.0, 1.0]),
                   stiffness=jnp.asarray(DECK_K), damping=jnp.asarray(DECK_ZETA * 2 * math.sqrt(DECK_K * m_deck)),
                   friction=jnp.asarray(DECK_MU), slip_velocity=jnp.asarray(SLIP), transition=jnp.asarray(1e3),
                   region_min=jnp.asarray([-LENGTH / 2, -BEAM / 2, DECK_Z - DECK_REACH]),
                   region_max=jnp.asarray([LENGTH / 2, BEAM / 2, np.inf]))
            for i, c in enumerate(CORNERS)]
    # the starboard side shell, from the keel to the deck's contact, over the starboard half of the hull: a
    # corner that swings into the hull's side is pushed back out (a clash; `side_i/force`, a criterion of the
    # operability), not taken by the deck's plane and thrown up through it
    side = [Fender(name=f"side_{i}", body="manifold", point=jnp.asarray(c), other="vessel",
                   plane_point=jnp.asarray([0.0, -BEAM / 2, 0.0]), normal=jnp.asarray([0.0, -1.0, 0.0]),
                   stiffness=jnp.asarray(SIDE_K), damping=jnp.asarray(SIDE_ZETA * 2 * math.sqrt(SIDE_K * m_deck)),
                   friction=jnp.asarray(SIDE_MU), slip_velocity=jnp.asarray(SLIP), transition=jnp.asarray(1e3),
                   region_min=jnp.asarray([-LENGTH / 2, -np.inf, -DRAUGHT]),
                   region_max=jnp.asarray([LENGTH / 2, 0.0, DECK_Z - DECK_REACH]))
            for i, c in enumerate(CORNERS)]
    m_bed = (M_MANIFOLD + A33) / 4
    seabed = [Fender(name=f"seabed_{i}", body="manifold", point=jnp.asarray(c), other="world",
                     plane_point=jnp.asarray([0.0, 0.0, -WATER_DEPTH]), normal=jnp.asarray([0.0, 0.0, 1.0]),
                     stiffness=jnp.asarray(SEABED_K), damping=jnp.asarray(SEABED_ZETA * 2 * math.sqrt(SEABED_K * m_bed)),
                     friction=jnp.asarray(SEABED_MU), slip_velocity=jnp.asarray(SLIP), transition=jnp.asarray(1e3),
                     seabed=True) for i, c in enumerate(CORNERS)]
    system = System(model, (hb, moor, drive, rope, water, *deck, *side, *seabed), waves=sea(hs, tp, heading_deg, n_frequencies),
                    name="subsea_installation")
    q_rest[model.q_slice("manifold").start + 2] -= settle
    q0 = static_equilibrium(system, jnp.asarray(q_rest), tol=1e-7)
    return system, q0


def operation(system: System, **kw) -> Scenario:
    """The six phases (:func:`operation_table`) as a :class:`Scenario` of ``system``."""
    return Scenario.from_dict(operation_table(**kw), system)


def operation_table(*, lift_speed=LIFT_SPEED, splash_speed=SPLASH_SPEED, lower_speed=LOWER_SPEED,
                    landing_speed=LANDING_SPEED, accel=0.1, landing_limit=150.0, heave_compensation=0.0) -> dict:
    """The six phases, as a file's ``[scenario]`` table.  Winch speeds ramp at ``accel`` (m/s², the winch's
    acceleration limit); every phase has a time limit it should not reach (a run warns if one does).
    ``heave_compensation``: the fraction of the crane tip's heave velocity the winch pays out (1: active heave
    compensation) from the water column on, within the winch's rated speed."""
    z_lifted = DECK_Z + HALF[2] + LIFT_HEIGHT
    def hoist(v, ahc=0.0):
        return {"hoist": {"payout_rate": {"target": v, "rate": accel}, "heave_compensation": ahc}}

    phases = [
        {"name": "lift-off", "set": hoist(-lift_speed),
         "until": {"output": "manifold/z", "op": ">=", "value": z_lifted}, "max_duration": 120.0},
        {"name": "over-boarding", "set": hoist(0.0) | {"slew_drive": {"target": [0.0]}},
         "until": {"all": [{"output": "slew/q", "op": "near", "value": 0.0, "tol": math.radians(0.5)},
                           {"output": "slew/v", "op": "near", "value": 0.0, "tol": math.radians(SLEW_SETTLED)}]},
         "max_duration": 150.0},
        {"name": "lowering to the water", "set": hoist(lower_speed),
         "until": {"output": "manifold/z", "op": "<=", "value": SPLASH_TOP + HALF[2]}, "max_duration": 60.0},
        {"name": "splash zone", "set": hoist(splash_speed),
         "until": {"output": "manifold/z", "op": "<=", "value": -SPLASH_BOTTOM - HALF[2]}, "max_duration": 150.0},
        {"name": "water column", "set": hoist(lower_speed, heave_compensation),
         "until": {"output": "manifold/z", "op": "<=", "value": -WATER_DEPTH + HALF[2] + LANDING_CLEARANCE},
         "max_duration": 400.0},
        {"name": "landing", "set": hoist(landing_speed, heave_compensation),
         "until": {"all": [{"output": "hoist/hook_load", "op": "<=", "value": 0.1 * SUBMERGED_WEIGHT},
                           {"output": "seabed_0/compression", "op": ">=", "value": 0.05}]}, "max_duration": landing_limit},
    ]
    return {"name": "subsea installation", "phases": phases}
