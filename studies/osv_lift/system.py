"""Hong et al. (2016, Tables 5-9): a 175 t subsea manifold lifted over the side of an offshore support
vessel by a crane with a 35 m boom, rigid or flexible.

    system, q0 = build(flexible=True, heading_deg=0.0, period=10.5, wind_speed=0.0, n_modes=4)

Model (SI units; world z up, x forward, y to port; waves travel towards β = heading, docs/conventions.md):

* vessel: one Free body, a box hull 110 m x 46 m x 7.5 m at 3.75 m draught (Hong et al. 2016 Table 5),
  19,449 t displaced; BEM coefficients from Capytaine on that box (``hull.py``, the paper used
  WADAM on the real lines, which it does not give).  Hull steel and ballast 19,059 t, centre of
  gravity 2.25 m above the waterline (KG 6 m) and placed so that vessel + crane + manifold float
  level; radii of gyration 0.35 B, 0.26 L, 0.27 L.  A soft horizontal mooring (100 s surge, sway
  and yaw periods, our choice; the paper is silent) keeps the hull from drifting, and 5 % of
  critical damping is added in roll (viscous roll damping, which potential flow lacks).
* crane (our choice where the paper is silent): a 20 m king (pedestal and tower, 150 t) on deck
  30 m aft of midship, 15 m to starboard of the centreline; the boom foot on the king's top,
  23.75 m above the waterline; the boom slewed to starboard (over the side) at a 45° luffing
  angle, so that its tip is 24.7 m outboard of the king (outreach 24.7 m) and 48.5 m above the
  waterline.  The boom is held at its foot by a Fixed joint (the luffing wires are rigid): the
  paper's "fixed joint" option.
* boom: 35 m steel box (E = 210 GPa, G = 81 GPa, ρ = 7,850 kg/m³), 2.5 m deep (in the luffing
  plane) x 1.8 m wide outside, 30 mm walls (thin-walled, midline): A = 0.254 m²,
  I_in-plane = 0.237 m⁴, I_out-of-plane = 0.144 m⁴, J = 0.270 m⁴, 2.0 t/m, 69.9 t (the paper
  gives neither mass nor section); bare clamped boom: 11.2 and 14.3 rad/s (first out-of-plane
  and in-plane bending).  Rigid: one body on the Fixed joint.  Flexible: a light frame (1 kg) on the same
  joint carries ``FlexibleBeamElement`` (10 Euler-Bernoulli elements clamped at the foot, modal
  reduction to ``n_modes`` modes or all 60 nodal DOFs with ``n_modes=None``); Rayleigh damping
  with 2 % of critical at the first bending mode and at 10 x its frequency
  (α = 0.406 1/s, β = 3.26e-4 s).
* hoist: one wire rope from the boom tip (the tip node) to the top of the manifold, modelled as
  a spring (Hong et al. 2016): EA = 1.0 GN over 15 m unstretched (k = 67 MN/m, 2.6 cm static stretch,
  0.32 s bounce period), 2 % of critical damping of that bounce.
* manifold: 20.3 m (along x) x 15 m x 6.1 m, 175 t, uniform box inertia, a Free body hanging
  in the air (no hydrodynamics), centre 3.05 m below the hook point.
* waves: regular, amplitude 1 m (H = 2 m), smooth ramp over ``ramp_time`` (20 s).
* wind (Hong et al. 2016 eq. 31): F = ½ ρ_air S V² on the manifold, C_d = 1 (the paper's formula has no
  coefficient), S the manifold's area projected on the wind direction (along the waves).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxmbd.flex.beam import BeamMesh, rayleigh_coefficients
from jaxmbd.flex.body import flexible_body
from jaxmbd.flex.element import FlexibleBeamElement, NodeRope
from jaxmbd.forces import LinearMooring, WindDrag, WireRope
from jaxmbd.hydro import RegularWave, SeaState
from jaxmbd.hydro.bem import read_capytaine
from jaxmbd.hydro.body import HydroBody
from jaxmbd.joints import Fixed, Free
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.simulation import static_equilibrium
from jaxmbd.system import System

try:  # run as a script (python studies/osv_lift/run.py) or imported as studies.osv_lift
    from .hull import BEAM, DRAUGHT, HULL_NC, LENGTH
except ImportError:  # pragma: no cover
    from hull import BEAM, DRAUGHT, HULL_NC, LENGTH

G = 9.81
TONNE = 1000.0
RHO_W = 1025.0

# ---- settings (module constants so that the README and the tests can quote them) ----
DISPLACEMENT = RHO_W * LENGTH * BEAM * DRAUGHT  # kg, 19,449 t
M_KING, M_MANIFOLD = 150 * TONNE, 175 * TONNE
KING_BASE = np.array([-30.0, -15.0, 7.5 - DRAUGHT])  # deck level, body frame (waterline origin)
KING_HEIGHT = 20.0
BOOM_LENGTH, LUFF_DEG = 35.0, 45.0
BOOM_FOOT = KING_BASE + np.array([0.0, 0.0, KING_HEIGHT])
BOOM_DIR = np.array([0.0, -np.cos(np.radians(LUFF_DEG)), np.sin(np.radians(LUFF_DEG))])  # slewed to starboard
BOOM_TIP = BOOM_FOOT + BOOM_LENGTH * BOOM_DIR
N_ELEMENTS = 10

# steel box section, thin-walled, midline dimensions h (in the luffing plane) x b, wall t
E_STEEL, G_STEEL, RHO_STEEL = 210e9, 81e9, 7850.0
BOX_H, BOX_B, BOX_T = 2.5, 1.8, 0.030


def boom_section():
    """(A, I_in-plane, I_out-of-plane, J) of the thin-walled box (m², m⁴), midline dimensions."""
    h, b, t = BOX_H - BOX_T, BOX_B - BOX_T, BOX_T
    A = 2 * (h + b) * t
    I_in = 2 * (b * t * (h / 2) ** 2) + 2 * (t * h**3 / 12)
    I_out = 2 * (h * t * (b / 2) ** 2) + 2 * (t * b**3 / 12)
    J = 4 * (h * b) ** 2 * t / (2 * (h + b))  # Bredt
    return A, I_in, I_out, J


A_BOOM, I_IN, I_OUT, J_BOOM = boom_section()
M_BOOM = RHO_STEEL * A_BOOM * BOOM_LENGTH

# hoist rope and manifold
ROPE_EA, ROPE_LENGTH, ROPE_ZETA = 1.0e9, 15.0, 0.02
MANIFOLD_DIMS = np.array([20.3, 15.0, 6.1])
HOOK_POINT = np.array([0.0, 0.0, MANIFOLD_DIMS[2] / 2])  # top centre, manifold frame
RAMP_TIME = 20.0
BOOM_ZETA = 0.02
AIR_DENSITY = 1.225


class _PrestressedBeam(FlexibleBeamElement):
    """FlexibleBeamElement whose elastic state starts at ``z0`` (the static deflection) instead of
    zero; ``jaxmbd.simulate`` takes no initial internal states, so the study carries them here."""

    z0: jnp.ndarray | None = None

    def initial_state(self, model, q, v):
        if self.z0 is None:
            return jnp.zeros(self.n_states, dtype=model.inertia.dtype)
        return jnp.asarray(self.z0, dtype=model.inertia.dtype)


def boom_mesh():
    """The boom as a beam mesh in the boom frame (origin at the foot, axes parallel to the hull's)."""
    # element frame: local y = body y made perpendicular to the boom axis, i.e. in the luffing
    # plane (y-z); local z = body x (out of plane). θz bends in local y -> Iz is the in-plane I.
    return BeamMesh.straight((0.0, 0.0, 0.0), tuple(BOOM_LENGTH * BOOM_DIR), N_ELEMENTS, E=E_STEEL, G=G_STEEL,
                             A=A_BOOM, Iy=I_OUT, Iz=I_IN, J=J_BOOM, rho=RHO_STEEL)


def boom_frequencies(n=4):
    """Natural frequencies (rad/s) of the bare clamped boom, lowest ``n``."""
    from jaxmbd.flex.beam import modes

    _, w = modes(boom_mesh(), n, {0: "clamped"})
    return np.asarray(w)


def _box_inertia(m, dims):
    a, b, c = dims
    return m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])


def _rod_inertia_about_com(m, axis, length, radius=1.0):
    It, Ia = m * length**2 / 12, 0.5 * m * radius**2
    return It * np.eye(3) + (Ia - It) * np.outer(axis, axis)


def projected_area(heading_deg):
    a = np.radians(heading_deg)
    L, B, D = MANIFOLD_DIMS
    return abs(np.cos(a)) * B * D + abs(np.sin(a)) * L * D


def build(flexible: bool, heading_deg: float = 0.0, period: float = 10.5, wind_speed: float = 0.0,
          n_modes: int | None = 4, *, amplitude: float = 1.0, hydro=None, z0=None, ramp_time: float = RAMP_TIME,
          rope_length: float = ROPE_LENGTH):
    """The OSV lifting system; returns ``(System, q0)`` with q0 a guess of the static equilibrium.

    ``n_modes``: modal coordinates of the flexible boom (None: nodal, all 60 free DOFs).
    ``z0``: initial elastic state [q_f, q̇_f] of the flexible boom (see :func:`equilibrium`).
    ``rope_length``: unstretched hoist rope (m), for the pendulum-period sensitivity in the README.
    """
    hd = hydro if hydro is not None else read_capytaine(HULL_NC)
    tip_rel = BOOM_TIP - BOOM_FOOT
    # ballast: put the hull's centre of gravity where the whole system floats level
    m_hull = DISPLACEMENT - M_KING - M_BOOM - M_MANIFOLD
    king_com = KING_BASE + np.array([0.0, 0.0, KING_HEIGHT / 2])
    boom_com = BOOM_FOOT + 0.5 * tip_rel
    manifold_com = BOOM_TIP - np.array([0.0, 0.0, rope_length + MANIFOLD_DIMS[2] / 2])
    moment_xy = (M_KING * king_com + M_BOOM * boom_com + M_MANIFOLD * manifold_com)[:2]
    hull_com = np.array([*(-moment_xy / m_hull), 2.25])
    hull_I = m_hull * np.diag([(0.35 * BEAM) ** 2, (0.26 * LENGTH) ** 2, (0.27 * LENGTH) ** 2])

    b = ModelBuilder(source="osv_lift")
    b.add_body("vessel", body=Body(m_hull, hull_com, hull_I), joint=Free(), joint_name="vessel")
    b.add_body("king", body=Body(M_KING, (0.0, 0.0, KING_HEIGHT / 2), np.diag([M_KING * 25.0] * 2 + [M_KING * 4.0])),
               joint=Fixed(), parent="vessel", placement=Placement(p=KING_BASE), joint_name="king_base")
    if flexible:
        b.add_body("boom", body=Body(1.0, (0.0, 0.0, 0.0), np.eye(3)), joint=Fixed(), parent="king",
                   placement=Placement(p=np.array([0.0, 0.0, KING_HEIGHT])), joint_name="boom_foot")
    else:
        b.add_body("boom", body=Body(M_BOOM, 0.5 * tip_rel, _rod_inertia_about_com(M_BOOM, BOOM_DIR, BOOM_LENGTH)),
                   joint=Fixed(), parent="king", placement=Placement(p=np.array([0.0, 0.0, KING_HEIGHT])),
                   joint_name="boom_foot")
    b.add_body("manifold", body=Body(M_MANIFOLD, (0.0, 0.0, 0.0), _box_inertia(M_MANIFOLD, MANIFOLD_DIMS)),
               joint=Free(), joint_name="manifold")
    model = b.build()

    # hydrodynamics, with 5 % of critical roll damping (roll: C44 and I44 + A44(∞) about the waterline)
    hb0 = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=ramp_time)
    C44 = float(hb0.buoyancy_stiffness[3, 3]) - G * (m_hull * hull_com[2] + M_KING * king_com[2] + M_BOOM * boom_com[2]
                     + M_MANIFOLD * BOOM_TIP[2])  # weights (the manifold acts at the tip)
    I44 = hull_I[0, 0] + m_hull * hull_com[2] ** 2 + float(hb0.added_mass_inf[3, 3])
    B44 = 0.05 * 2 * np.sqrt(max(C44, 0.0) * I44)
    damping = np.zeros((6, 6))
    damping[3, 3] = B44
    hb = HydroBody.create(model, hd, bodies=("vessel",), ramp_time=ramp_time, linear_damping=damping,
                          radiation=hb0.radiation)

    k_h = (DISPLACEMENT + float(hb0.added_mass_inf[0, 0])) * (2 * np.pi / 100.0) ** 2
    moor = LinearMooring(name="mooring", body="vessel", point=jnp.zeros(3), reference=jnp.zeros(3),
                         stiffness=jnp.diag(jnp.array([k_h, k_h, 0.0, 0.0, 0.0, k_h * (0.27 * LENGTH) ** 2])),
                         damping=jnp.zeros((6, 6)))
    rope_c = ROPE_ZETA * 2 * np.sqrt(ROPE_EA / rope_length * M_MANIFOLD)
    forces = [hb, moor]
    if flexible:
        w = boom_frequencies(1)[0]
        ray = rayleigh_coefficients(w, BOOM_ZETA, 10 * w, BOOM_ZETA)
        beam = flexible_body(boom_mesh(), {0: "clamped"}, n_modes=n_modes, rayleigh=ray)
        rope = NodeRope(node=N_ELEMENTS, body="manifold", point=jnp.asarray(HOOK_POINT), EA=jnp.asarray(ROPE_EA),
                        length=jnp.asarray(rope_length), damping=jnp.asarray(rope_c), transition=jnp.asarray(1e3))
        forces.append(_PrestressedBeam(name="boom", body="boom", beam=beam, ropes=(rope,), tip_node=N_ELEMENTS,
                                       z0=None if z0 is None else jnp.asarray(z0)))
    else:
        forces.append(WireRope(name="hoist", body_a="boom", point_a=jnp.asarray(tip_rel), body_b="manifold",
                               point_b=jnp.asarray(HOOK_POINT), EA=jnp.asarray(ROPE_EA),
                               length=jnp.asarray(rope_length), damping=jnp.asarray(rope_c),
                               transition=jnp.asarray(1e3)))
    beta = np.radians(heading_deg)
    if wind_speed:
        forces.append(WindDrag(name="wind", body="manifold", point=jnp.zeros(3),
                               area=jnp.asarray(projected_area(heading_deg)), speed=jnp.asarray(float(wind_speed)),
                               direction=jnp.asarray(beta), drag_coefficient=jnp.asarray(1.0),
                               air_density=jnp.asarray(AIR_DENSITY)))
    waves = SeaState(regular=RegularWave(2.0 * amplitude, period, beta)) if amplitude else None
    system = System(model, tuple(forces), waves=waves, name="osv_lift_" + ("flexible" if flexible else "rigid"))
    q0 = np.array(model.neutral(), dtype=float)
    stretch = M_MANIFOLD * G * rope_length / ROPE_EA
    q0[model.q_slice("manifold")] = [*(manifold_com - np.array([0.0, 0.0, stretch])), 1.0, 0.0, 0.0, 0.0]
    return system, jnp.asarray(q0)


def tension_key(system: System) -> str:
    return "boom/tension0" if any(f.name == "boom" and f.n_flex for f in system.forces) else "hoist/tension"


def _flex_element(system):
    for i, f in enumerate(system.forces):
        if f.n_flex:
            return i, f
    return None, None


def equilibrium(system: System, q0, *, tol: float = 1e-9, max_iter: int = 40):
    """Static equilibrium of joints *and* elastic coordinates (v = 0, q̇_f = 0), by
    ``jaxmbd.static_equilibrium``.  Returns (q, z0) with z0 = [q_f, 0] of the boom
    (``None`` for a rigid boom)."""
    k, flex = _flex_element(system)
    q, z = static_equilibrium(system, q0, tol=tol, max_iter=max_iter, return_states=True)
    return q, (z[system.state_slices()[k]] if flex is not None else None)


def build_at_rest(flexible: bool, heading_deg: float = 0.0, period: float = 10.5, wind_speed: float = 0.0,
                  n_modes: int | None = 4, eq_tol: float = 1e-9, **kw):
    """``build`` and :func:`equilibrium`: (System with the boom pre-deflected, q at rest, static tension N)."""
    from jaxmbd.simulation import initial_state

    system, q_guess = build(flexible, heading_deg, period, wind_speed, n_modes, **kw)
    q, z0 = equilibrium(system, q_guess, tol=eq_tol)
    if flexible:
        system, _ = build(flexible, heading_deg, period, wind_speed, n_modes, z0=z0, **kw)
    y0 = initial_state(system, q)
    T0 = float(system.outputs(0.0, y0)[tension_key(system)])
    return system, q, T0
