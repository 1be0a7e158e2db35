"""A stern A-frame on the offshore support vessel of ``studies/osv_lift`` over-boarding a 30 t load by
stroking its two hydraulic cylinders, in irregular waves.

    system, q0 = build()        # System and its static equilibrium, the A-frame leaning inboard

Model (SI units; world z up, x forward, y to port; waves travel towards β, docs/conventions.md):

* vessel: the OSV's box hull (110 x 46 x 7.5 m at 3.75 m draught), its Capytaine coefficients, a soft
  horizontal mooring (100 s in surge, sway and yaw) and 5 % of critical roll damping, ballasted to
  float level with the A-frame inboard and the load hanging: as ``studies/subsea_installation``.
* A-frame: one rigid frame (40 t, two 14 m legs 12 m apart and their crosshead) hinged about the
  vessel's y axis on deck at the stern, 3 m inside the transom (x = −52 m).  Its angle q turns the legs
  from upright (q = 0) towards the bow (q > 0, inboard) or over the stern (q < 0, outboard).
* cylinders: two (port and starboard), from deck 8 m forward of the hinge to the legs 6 m up;
  length-controlled (:class:`~jaxmbd.forces.cylinder.Cylinder`): rated 0.05 m/s, 2.5 MN at the relief
  pressure, stroke 7.0-13.0 m, a stiff PD on length (K_p = 200 MN/m, K_d = 4 MN s/m: the frame tracks at
  about 50 rad/s, half critically damped) with the static
  load carried as a feed-forward.  They start at 25° inboard (7.73 m) and are commanded to 30°
  outboard (12.17 m): 89 s of stroking at the rated speed.
* load: a 30 t steel box (3 x 3 x 3 m) hanging 7 m under the crosshead on one fall of wire (EA 100 MN,
  2 % of critical damping); in air throughout (over the deck, then 4-7 m beyond the transom).
* waves: JONSWAP (γ = 3.3), ``hs``, ``tp``, travelling towards ``heading_deg`` (0°: following seas,
  from the stern, into which the A-frame reaches), 100 frequencies, ramped in over 20 s.

The two cylinders and the hinge make closed loops in the machine.  ``cylinders="forces"`` (the
default) keeps the cylinders as force elements between the vessel and the frame (a stiff length
control), so the tree needs no cut joint.  ``cylinders="bodies"`` adds each cylinder's barrel (3 t, on a
universal joint at its deck pin) and rod (1.5 t, sliding in the barrel), the rod's end pinned to the
frame by a ball loop; the cylinder's force still acts between the same two pins.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxmbd.forces import LinearMooring, WireRope
from jaxmbd.forces.cylinder import Cylinder
from jaxmbd.hydro import JONSWAP, SeaState
from jaxmbd.hydro.bem import read_capytaine
from jaxmbd.hydro.body import HydroBody
from jaxmbd.joints import Free, Prismatic, Revolute, Universal
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.simulation import static_equilibrium
from jaxmbd.system import System
from studies.osv_lift.hull import BEAM, DRAUGHT, HULL_NC, LENGTH
from studies.osv_lift.system import DISPLACEMENT, G, _box_inertia

TONNE = 1000.0
DECK_Z = 7.5 - DRAUGHT
HINGE = np.array([-52.0, 0.0, DECK_Z])  # vessel frame
M_FRAME, FRAME_HEIGHT, FRAME_SPAN = 40 * TONNE, 14.0, 12.0
M_LOAD, LOAD_SIDE, ROPE_LENGTH, ROPE_EA = 30 * TONNE, 3.0, 7.0, 100e6
CYL_BASE = [np.array([-44.0, s * FRAME_SPAN / 2, DECK_Z]) for s in (1, -1)]  # vessel frame
CYL_PIN = [np.array([0.0, s * FRAME_SPAN / 2, 6.0]) for s in (1, -1)]  # A-frame frame
START_DEG, END_DEG = 25.0, -30.0
CYL_SPEED, CYL_FORCE, CYL_STROKE = 0.05, 2.5e6, (7.0, 13.0)
CYL_KP, CYL_KD = 2.0e8, 4.0e6
RAMP_TIME = 20.0
# cylinders as bodies (``cylinders="bodies"``): a barrel on a universal joint at its deck pin (about the
# vessel's y, then across) and a rod sliding in it, the rod's end on the frame's pin by a ball loop;
# mass (kg), centre of mass along the axis (barrel: from the deck pin; rod: from its end pin) and inertia
BARREL = (3000.0, 2.5, (40.0, 2500.0, 2500.0))
ROD = (1500.0, -2.0, (10.0, 1200.0, 1200.0))
SIDES = ("port", "starboard")
FRAME_INERTIA = M_FRAME * np.array([(FRAME_HEIGHT**2 + FRAME_SPAN**2) / 12, FRAME_HEIGHT**2 / 12, FRAME_SPAN**2 / 12])  # kg m², diagonal
ROPE_STIFFNESS = ROPE_EA / ROPE_LENGTH  # N/m
ROPE_REST = ROPE_LENGTH - M_LOAD * G / ROPE_STIFFNESS  # m: unstretched, so the load hangs ROPE_LENGTH under the crosshead
ROPE_DAMPING = 0.02 * 2 * math.sqrt(ROPE_STIFFNESS * M_LOAD)  # N s/m: 2 % of critical


def hull_inertia(m_hull: float) -> np.ndarray:
    """The hull's diagonal inertia (kg m²) about its centre of mass: radii of gyration 0.35 B, 0.26 L, 0.27 L."""
    return m_hull * np.array([(0.35 * BEAM) ** 2, (0.26 * LENGTH) ** 2, (0.27 * LENGTH) ** 2])


def load_position(angle_deg: float) -> np.ndarray:
    """The load's centre (vessel frame) hanging under the crosshead with the frame at ``angle_deg``."""
    return _frame_top(angle_deg) - np.array([0.0, 0.0, ROPE_LENGTH + LOAD_SIDE / 2])


def cylinder_length(angle_deg: float, k: int = 0) -> float:
    """Pin-to-pin length of cylinder k with the A-frame at ``angle_deg`` (vessel frame, level)."""
    a = math.radians(angle_deg)
    R = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])
    return float(np.linalg.norm(HINGE + R @ CYL_PIN[k] - CYL_BASE[k]))


def cylinder_poses(angle_deg: float):
    """Per cylinder, with the frame at ``angle_deg`` (vessel frame, level): its deck pin, the angle β of its
    axis turned about y from the vessel's x (R_y(β) x̂ points from the deck pin to the frame's pin) and its
    length."""
    a = math.radians(angle_deg)
    R = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])
    out = []
    for k in range(2):
        u = HINGE + R @ CYL_PIN[k] - CYL_BASE[k]
        out.append((CYL_BASE[k], math.atan2(-u[2], u[0]), float(np.linalg.norm(u))))
    return out


def cylinder_moment(angle_deg: float) -> np.ndarray:
    """The cylinder bodies' first moment of mass (kg m, vessel frame) with the frame at ``angle_deg``."""
    moment = np.zeros(3)
    for base, beta, length in cylinder_poses(angle_deg):
        u = np.array([math.cos(beta), 0.0, -math.sin(beta)])
        moment += BARREL[0] * (base + u * BARREL[1]) + ROD[0] * (base + u * (length + ROD[1]))
    return moment


def add_cylinder_bodies(b, angle_deg: float):
    """Add each cylinder's barrel and rod to the builder ``b`` (under ``vessel``); returns the loops that pin
    the rods to the frame and a function setting the bodies' coordinates at ``angle_deg`` in a q."""
    from jaxmbd.loops import Loop

    poses = cylinder_poses(angle_deg)
    for k, (base, beta, length) in enumerate(poses):
        c, s_ = math.cos(beta), math.sin(beta)
        R = np.array([[c, 0.0, s_], [0.0, 1.0, 0.0], [-s_, 0.0, c]])
        b.add_body(f"barrel_{SIDES[k]}", body=Body(BARREL[0], (BARREL[1], 0.0, 0.0), np.diag(BARREL[2])),
                   joint=Universal((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), parent="vessel", placement=Placement(R=R, p=base),
                   joint_name=f"swing_{SIDES[k]}")
        b.add_body(f"rod_{SIDES[k]}", body=Body(ROD[0], (ROD[1], 0.0, 0.0), np.diag(ROD[2])), joint=Prismatic((1.0, 0.0, 0.0)),
                   parent=f"barrel_{SIDES[k]}", joint_name=f"stroke_{SIDES[k]}")
    loops = tuple(Loop(name=f"pin_{side}", body_a=f"rod_{side}", body_b="aframe", point_a=jnp.zeros(3),
                       point_b=jnp.asarray(CYL_PIN[k])) for k, side in enumerate(SIDES))

    def place(model, q):
        for k, (_, _, length) in enumerate(poses):
            q[model.q_slice(f"stroke_{SIDES[k]}")] = length
        return q

    return loops, place


def sea(hs=2.0, tp=8.0, heading_deg=0.0, n_frequencies=100):
    return SeaState(spectrum=JONSWAP(hs=hs, tp=tp, gamma=3.3), mean_direction=jnp.asarray(math.radians(heading_deg)),
                    n_frequencies=n_frequencies)


def _frame_top(angle_deg):
    a = math.radians(angle_deg)
    return HINGE + FRAME_HEIGHT * np.array([math.sin(a), 0.0, math.cos(a)])


def build(hs=2.0, tp=8.0, heading_deg=0.0, *, n_frequencies=100, hydro=None, preload=None, cylinders="forces"):
    """``(System, q0)``: the system at rest with the A-frame at 25° inboard, the load hanging; the
    cylinders commanded to 30° outboard.  ``preload`` (N per cylinder): the cylinders' static force
    (default: found from the equilibrium).  ``cylinders``: ``"forces"``, the cylinders as force elements
    between the deck and the frame (a tree), or ``"bodies"``, each also a barrel and a rod closed on the
    frame's pin by a ball loop (the machine's closed loops; the same force between the same pins, and
    the cylinders' 9 t with their inertia)."""
    if cylinders not in ("forces", "bodies"):
        raise ValueError(f'cylinders: expected "forces" or "bodies", got {cylinders!r}')
    hd = hydro if hydro is not None else read_capytaine(HULL_NC)
    load0 = load_position(START_DEG)
    a0 = math.radians(START_DEG)
    frame_com = HINGE + 0.5 * FRAME_HEIGHT * np.array([math.sin(a0), 0.0, math.cos(a0)])
    b = ModelBuilder(source="a_frame")
    loops, place = (), None
    m_cyl = 2 * (BARREL[0] + ROD[0]) if cylinders == "bodies" else 0.0
    m_hull = DISPLACEMENT - M_FRAME - M_LOAD - m_cyl
    cyl_moment = cylinder_moment(START_DEG) if cylinders == "bodies" else np.zeros(3)
    moment = (M_FRAME * frame_com + M_LOAD * load0 + cyl_moment)[:2]
    hull_com = np.array([*(-moment / m_hull), 2.25])
    hull_I = np.diag(hull_inertia(m_hull))
    frame_I = np.diag(FRAME_INERTIA)

    b.add_body("vessel", body=Body(m_hull, hull_com, hull_I), joint=Free(), joint_name="vessel")
    b.add_body("aframe", body=Body(M_FRAME, (0.0, 0.0, FRAME_HEIGHT / 2), frame_I), joint=Revolute((0.0, 1.0, 0.0)),
               parent="vessel", placement=Placement(p=HINGE), joint_name="tilt")
    if cylinders == "bodies":
        loops, place = add_cylinder_bodies(b, START_DEG)
    b.add_body("load", body=Body(M_LOAD, (0.0, 0.0, 0.0), _box_inertia(M_LOAD, np.full(3, LOAD_SIDE))), joint=Free(),
               joint_name="load")
    model = b.build()

    q_rest = np.array(model.neutral(), dtype=float)
    q_rest[model.q_slice("tilt")] = a0
    q_rest[model.q_slice("load")] = [*load0, 1.0, 0.0, 0.0, 0.0]
    if place is not None:
        q_rest = place(model, q_rest)
    hb0 = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=RAMP_TIME)
    C44 = float(hb0.buoyancy_stiffness[3, 3]) - G * (m_hull * hull_com[2] + M_FRAME * frame_com[2] + M_LOAD * load0[2] + cyl_moment[2])
    I44 = hull_I[0, 0] + m_hull * hull_com[2] ** 2 + float(hb0.added_mass_inf[3, 3])
    damping = np.zeros((6, 6))
    damping[3, 3] = 0.05 * 2 * math.sqrt(max(C44, 0.0) * I44)
    hb = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=RAMP_TIME, linear_damping=damping, radiation=hb0.radiation)
    k_h = (DISPLACEMENT + float(hb0.added_mass_inf[0, 0])) * (2 * math.pi / 100.0) ** 2
    moor = LinearMooring(name="mooring", body="vessel", point=jnp.zeros(3), reference=jnp.zeros(3),
                         stiffness=jnp.diag(jnp.array([k_h, k_h, 0.0, 0.0, 0.0, k_h * (0.27 * LENGTH) ** 2])),
                         damping=jnp.zeros((6, 6)))
    rope = WireRope(name="hoist", body_a="aframe", point_a=jnp.asarray([0.0, 0.0, FRAME_HEIGHT]), body_b="load",
                    point_b=jnp.asarray([0.0, 0.0, LOAD_SIDE / 2]), EA=jnp.asarray(ROPE_EA),
                    length=jnp.asarray(ROPE_REST), damping=jnp.asarray(ROPE_DAMPING), transition=jnp.asarray(1e3))

    def cylinder_forces(f0):
        return [Cylinder(name=f"cylinder_{side}", body_a="vessel", point_a=jnp.asarray(CYL_BASE[k]), body_b="aframe",
                         point_b=jnp.asarray(CYL_PIN[k]), target=jnp.asarray(cylinder_length(END_DEG, k)),
                         max_force=jnp.asarray(CYL_FORCE), min_length=jnp.asarray(CYL_STROKE[0]),
                         max_length=jnp.asarray(CYL_STROKE[1]), kp=jnp.asarray(CYL_KP), kd=jnp.asarray(CYL_KD),
                         max_speed=jnp.asarray(CYL_SPEED), settle_rate=jnp.asarray(0.2), preload=jnp.asarray(f0))
                for k, side in enumerate(SIDES)]

    waves = sea(hs, tp, heading_deg, n_frequencies)

    def system_with(f0):
        return System(model, (hb, moor, rope, *cylinder_forces(f0)), waves=waves, name="a_frame", loops=loops)

    if preload is None:
        # the cylinders' static force: the vessel and the load at rest with the frame held, then the
        # force (linear in it) that leaves the frame's hinge without acceleration
        tilt = model.v_start[model.index("aframe")]
        held = np.ones(model.nv)
        held[tilt] = 0.0
        q_held = static_equilibrium(system_with(0.0), jnp.asarray(q_rest), free=held, tol=1e-7)

        def accel(f0):
            s = system_with(f0)
            y = (q_held, jnp.zeros(model.nv), s.initial_states(q_held, jnp.zeros(model.nv)))
            return float(s.rhs(0.0, y)[1][tilt])

        a_0, a_1 = accel(0.0), accel(1.0e5)
        preload = -a_0 * 1.0e5 / (a_1 - a_0)
        q_rest = np.asarray(q_held)
    system = system_with(preload)
    q0 = static_equilibrium(system, jnp.asarray(q_rest), tol=1e-7)
    return system, q0
