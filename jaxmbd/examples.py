"""Reference models used by the demo, the studies, the tests and the benchmarks."""

from __future__ import annotations

import numpy as np

from .errors import InputError
from .joints import Fixed, Free, Revolute
from .model import Body, Model, ModelBuilder, Placement


def rod(mass: float, length: float, axis: int = 0, radius: float = 0.0) -> Body:
    """A uniform slender rod from the frame origin along +x (axis=0) or −z (axis=2)."""
    com = np.zeros(3)
    sign = 1.0 if axis == 0 else -1.0
    com[axis] = sign * 0.5 * length
    It = mass * length**2 / 12.0 + mass * radius**2 / 4.0
    Ia = 0.5 * mass * radius**2
    d = np.full(3, It)
    d[axis] = Ia
    return Body(mass=mass, com=com, inertia=np.diag(d))


def four_link(length: float = 0.1, mass: float = 1.0) -> Model:
    """Ham et al. (2009)'s 4-link pendulum: four uniform links in the x-z plane on revolute joints about y.

    At q = 0 the links lie along +x (horizontal); gravity is −z.
    """
    b = ModelBuilder(source="four_link")
    parent = "world"
    for k in range(4):
        name = f"link{k + 1}"
        pl = Placement(p=np.array([length if k else 0.0, 0.0, 0.0]))
        b.add_body(name, body=rod(mass, length), joint=Revolute((0.0, 1.0, 0.0)), parent=parent,
                   placement=pl, joint_name=f"joint{k + 1}")
        parent = name
    return b.build()


def simple_pendulum(length: float = 1.0, mass: float = 1.0) -> Model:
    """A point mass on a massless rod, hanging along −z from a revolute joint about y."""
    b = ModelBuilder(source="simple_pendulum")
    b.add_body("bob", body=Body(mass=mass, com=(0.0, 0.0, -length), inertia=np.zeros(3)),
               joint=Revolute((0.0, 1.0, 0.0)), joint_name="hinge")
    return b.build()


def chain(n: int, length: float = 0.5, mass: float = 1.0) -> Model:
    """A serial chain of n links on revolute joints with alternating axes (y, x), hanging along −z."""
    b = ModelBuilder(source=f"chain{n}")
    parent = "world"
    for k in range(n):
        name = f"link{k + 1}"
        axis = (0.0, 1.0, 0.0) if k % 2 == 0 else (1.0, 0.0, 0.0)
        pl = Placement(p=np.array([0.0, 0.0, -length if k else 0.0]))
        b.add_body(name, body=rod(mass, length, axis=2, radius=0.05), joint=Revolute(axis), parent=parent,
                   placement=pl, joint_name=f"joint{k + 1}")
        parent = name
    return b.build()


def crane_vessel(crane_offset_y: float = 0.0) -> Model:
    """Cibicik et al. (2019)'s eight-body serial chain: vessel (free) / platform roll / platform pitch / king /
    boom 1 / boom 2 / payload pendulum (two axes); nv = 13.

    Lengths l1..l7 = 0, 13, 10, 10, 8, 0, 15 m and masses m1..m7 = 0.01, 140, 70, 40, 30, 0.01, 20 t
    (Cibicik et al. 2019, Tables 1-2), centres of gravity at l_i/2 (d7 = l7).  The vessel is
    6,362 t with the radii of gyration of a supply vessel of 82.5 m x 18 m
    (0.35 B, 0.25 L, 0.25 L); its origin is on the waterline above the centre of gravity.
    """
    t = 1000.0
    L, B = 82.5, 18.0
    mv = 6362.0 * t
    vessel = Body(mass=mv, com=(0.0, 0.0, -1.0),
                  inertia=np.diag([mv * (0.35 * B) ** 2, mv * (0.25 * L) ** 2, mv * (0.25 * L) ** 2]))
    l = [0.0, 13.0, 10.0, 10.0, 8.0, 0.0, 15.0]
    m = [0.01 * t, 140 * t, 70 * t, 40 * t, 30 * t, 0.01 * t, 20 * t]
    b = ModelBuilder(source="crane_vessel")
    b.add_body("vessel", body=vessel, joint=Free(), joint_name="vessel")
    deck = Placement(p=np.array([0.0, crane_offset_y, 2.0]))
    b.add_body("platform_roll", body=Body(mass=m[0], inertia=np.full(3, 1.0)), joint=Revolute((1.0, 0.0, 0.0)),
               parent="vessel", placement=deck, joint_name="q1")
    b.add_body("platform", body=Body(mass=m[1], com=(0, 0, 0.5 * l[1]), inertia=_column(m[1], l[1], 2.0)),
               joint=Revolute((0.0, 1.0, 0.0)), parent="platform_roll", joint_name="q2")
    b.add_body("king", body=Body(mass=m[2], com=(0, 0, 0.5 * l[2]), inertia=_column(m[2], l[2], 1.5)),
               joint=Revolute((0.0, 0.0, 1.0)), parent="platform", placement=Placement(p=np.array([0, 0, l[1]])),
               joint_name="q3")
    b.add_body("boom1", body=rod(m[3], l[3], radius=0.8), joint=Revolute((0.0, 1.0, 0.0)), parent="king",
               placement=Placement(p=np.array([0, 0, l[2]])), joint_name="q4")
    b.add_body("boom2", body=rod(m[4], l[4], radius=0.6), joint=Revolute((0.0, 1.0, 0.0)), parent="boom1",
               placement=Placement(p=np.array([l[3], 0, 0])), joint_name="q5")
    b.add_body("hook", body=Body(mass=m[5], inertia=np.full(3, 1.0)), joint=Revolute((1.0, 0.0, 0.0)),
               parent="boom2", placement=Placement(p=np.array([l[4], 0, 0])), joint_name="q6")
    b.add_body("payload", body=Body(mass=m[6], com=(0, 0, -l[6]), inertia=np.full(3, m[6] * 1.0)),
               joint=Revolute((0.0, 1.0, 0.0)), parent="hook", joint_name="q7")
    return b.build()


def _column(mass, length, radius):
    It = mass * (3 * radius**2 + length**2) / 12.0
    return np.diag([It, It, 0.5 * mass * radius**2])


def deck_crane_urdf_path():
    """A deck crane on a barge as a URDF file (barge, king slewing about z, boom and jib luffing about y),
    shipped with the package for the README's library example."""
    from pathlib import Path

    return Path(__file__).resolve().parent / "data" / "deck_crane.urdf"


def crane_barge_hydro_path():
    """Cached Capytaine run of the 110 x 46 x 3.56 m crane barge (see :func:`make_crane_barge_hydro`)."""
    from pathlib import Path

    return Path(__file__).parent / "data" / "crane_barge_hydro.nc"


def make_crane_barge_hydro(path=None):
    """Regenerate the crane barge's BEM data: a box 110 m x 46 m x 3.56 m draught (18,000 t of
    displacement, Ham et al. (2009)'s crane with ballast), 3 m panels, 20 frequencies 0.15-1.8 rad/s,
    headings 0-180 deg every 45 deg, deep water; rotation centre and centre of mass on the
    waterline at midship, so the restoring matrix holds buoyancy only (the model applies the
    weight)."""
    import numpy as np

    from .hydro.bem import box, run_capytaine

    body = box(110.0, 46.0, 3.56, panel_size=3.0, name="crane_barge")
    return run_capytaine(body, omegas=np.linspace(0.15, 1.8, 20), wave_directions=np.deg2rad(np.arange(0, 181, 45)),
                         rho=1025.0, g=9.81, cache=path or crane_barge_hydro_path(), name="crane_barge")


def floating_crane(waves=None, *, rope_EA=1.2e9, rope_damping=1.2e5, ramp_time=30.0, hydro=None, hydrostatics="linear",
                   hull_depth=9.0, hull_panel_size=None, hoist="ropes"):
    """Ham et al. (2009)'s floating crane: a crane barge of 18,000 t with its ballast (hull 110 x 46 m,
    3.56 m draught), two booms on fixed joints, and a 1,000 t cargo on two hoist ropes from the
    boom tips (the closed loop of the paper, cut into two rope elements).

    Where the paper is silent: booms 800 t each, tips 15 m beyond the bow at 80 m height; the
    barge's centre of gravity 8.7 m aft of midship (ballast trimming the crane's moment) and
    2 m above the waterline, radii of gyration 0.35 B, 0.27 L, 0.28 L; cargo a 20 x 12 x 10 m
    block lifted to 20 m above the water on 60 m ropes of EA = 1.2 GN each (0.4 % static
    strain); soft horizontal mooring (surge and sway period about 100 s) so that the barge
    does not drift. ``hydrostatics = "nonlinear"``: the still-water pressure integrated over the
    closed box hull (depth ``hull_depth`` m keel to deck, the paper's hull depth not being given;
    panels of ``hull_panel_size`` m, default one rectangle per face: the integration is exact for a
    box in still water at any panel size) instead of the linear restoring. Returns ``(System, q0)`` with q0 a guess for the static equilibrium.

    ``hoist = "links"``: the paper's closed loop itself, the ropes as rigid links (60 m, 3 t each) on
    spherical joints at the boom tips; the cargo hangs from link 1 on a spherical joint, and a ball loop
    (:class:`jaxmbd.loops.Loop`, the cut joint) closes link 2 on it.  The hook load is then the joint
    force at the cargo (``joint/cargo_hook/wrench``) and the loop's force (``cut/force``).
    """
    import jax.numpy as jnp

    from .forces import LinearMooring, WireRope
    from .hydro.bem import read_capytaine
    from .hydro.body import HydroBody
    from .system import System

    t = 1000.0
    L, B = 110.0, 46.0
    m_barge = 16_400 * t
    m_boom, m_cargo = 800 * t, 1000 * t
    b = ModelBuilder(source="floating_crane")
    b.add_body("barge", body=Body(m_barge, (-8.66, 0.0, 2.0),
                                  np.diag([m_barge * (0.35 * B) ** 2, m_barge * (0.27 * L) ** 2, m_barge * (0.28 * L) ** 2])),
               joint=Free(), joint_name="barge")
    for k, y in ((1, 4.0), (2, -4.0)):
        # boom from its foot on deck (40, ±10, 3) to the tip (70, ±4, 80); body frame at the foot
        foot = np.array([40.0, 2.5 * y, 3.0])
        tip = np.array([70.0, y, 80.0])
        axis = (tip - foot) / np.linalg.norm(tip - foot)
        length = float(np.linalg.norm(tip - foot))
        Ia = m_boom * 1.5**2
        It = m_boom * length**2 / 12
        Ic = It * np.eye(3) + (Ia - It) * np.outer(axis, axis)
        b.add_body(f"boom{k}", body=Body(m_boom, 0.5 * (tip - foot), Ic), joint=Fixed(), parent="barge",
                   placement=Placement(p=foot), joint_name=f"boom{k}_foot")
    cargo_I = m_cargo / 12 * np.diag([12**2 + 10**2, 20**2 + 10**2, 20**2 + 12**2])
    tip_local = {1: np.array([30.0, -6.0, 77.0]), 2: np.array([30.0, 6.0, 77.0])}  # tip - foot
    if hoist == "links":
        from .joints import Spherical

        m_link, l_link = 3.0 * t, 60.0
        link = Body(m_link, (0.0, 0.0, -l_link / 2), np.diag([m_link * l_link**2 / 12] * 2 + [m_link * 0.05**2]))
        for k in (1, 2):
            b.add_body(f"link{k}", body=link, joint=Spherical(), parent=f"boom{k}", placement=Placement(p=tip_local[k]),
                       joint_name=f"link{k}_top")
        # the cargo's frame at its hook point (0, 4, 5) of the block: its centre 4 m to starboard and 5 m down
        b.add_body("cargo", body=Body(m_cargo, (0.0, -4.0, -5.0), cargo_I), joint=Spherical(), parent="link1",
                   placement=Placement(p=np.array([0.0, 0.0, -l_link])), joint_name="cargo_hook")
    elif hoist == "ropes":
        b.add_body("cargo", body=Body(m_cargo, (0.0, 0.0, 0.0), cargo_I), joint=Free(), joint_name="cargo")
    else:
        raise InputError(f"hoist must be 'ropes' or 'links', got {hoist!r}")
    model = b.build()
    hd = hydro if hydro is not None else read_capytaine(crane_barge_hydro_path())
    hulls = None
    if hydrostatics == "nonlinear":
        from .hydro.hull import box_hull

        size = max(L, B, hull_depth) if hull_panel_size is None else hull_panel_size
        hulls = (box_hull(L, B, hull_depth, 3.56, panel_size=size, name="crane barge"),)
    hb = HydroBody.create(model, hd, bodies=("barge",), ramp_time=ramp_time,
                          linear_damping=np.diag([0, 0, 0, 0.05 * 2 * 1.3e9, 0, 0]), hydrostatics=hydrostatics, hulls=hulls)
    k_h = (m_barge + 2 * m_boom + 2.0e6) * (2 * np.pi / 100.0) ** 2
    moor = LinearMooring(name="mooring", body="barge", point=jnp.zeros(3), reference=jnp.zeros(3),
                         stiffness=jnp.diag(jnp.array([k_h, k_h, 0.0, 0.0, 0.0, k_h * 30.0**2])),
                         damping=jnp.zeros((6, 6)))
    if hoist == "links":
        from .loops import Loop

        cut = Loop(name="cut", body_a="link2", point_a=jnp.asarray([0.0, 0.0, -60.0]), body_b="cargo",
                   point_b=jnp.asarray([0.0, -8.0, 0.0]))
        system = System(model, (hb, moor), waves=waves, name="floating_crane_links",
                        report_joints=("boom1_foot", "boom2_foot", "cargo_hook"), loops=(cut,))
        return system, model.neutral()
    ropes = tuple(
        WireRope(name=f"hoist{k}", body_a=f"boom{k}", point_a=jnp.asarray(tip_local[k]), body_b="cargo",
                 point_b=jnp.asarray([0.0, y, 5.0]), EA=jnp.asarray(rope_EA), length=jnp.asarray(60.0 - 0.24),
                 damping=jnp.asarray(rope_damping), transition=jnp.asarray(1e4))
        for k, y in ((1, 4.0), (2, -4.0))
    )
    system = System(model, (hb, *ropes, moor), waves=waves, name="floating_crane",
                    report_joints=("boom1_foot", "boom2_foot"))
    q0 = np.array(model.neutral(), dtype=float)
    q0[model.q_slice("cargo")] = [70.0, 0.0, 20.0 - 5.0, 1.0, 0.0, 0.0, 0.0]
    return system, jnp.asarray(q0)


def luffing_crane(*, boom_length: float = 20.0, boom_mass: float = 10.0e3, payload: float = 5.0e3,
                  cylinder_base=(1.5, 0.0, -4.0), cylinder_pin=(6.0, 0.0, -0.5), angle_deg: float = 30.0,
                  target_length=None, max_speed: float = 0.1, max_force: float = 3.0e6):
    """A boom luffed by a hydraulic cylinder: the boom (``boom_mass``, with ``payload`` kg at its tip)
    hinged about y at the king's top (the world origin), raised ``angle_deg`` above the horizontal; the
    cylinder from ``cylinder_base`` on the king (world) to ``cylinder_pin`` on the boom (its frame, x
    along the boom, z up off it), length-controlled to ``target_length`` (default: its initial length)
    at ``max_speed`` m/s.  Returns ``(System, q0)``."""
    import jax.numpy as jnp

    from .forces.cylinder import Cylinder
    from .system import System

    b = ModelBuilder(source="luffing_crane")
    boom = rod(boom_mass, boom_length)
    tip = Body(payload, (boom_length, 0.0, 0.0), np.zeros((3, 3)))
    b.add_body("boom", body=_combined(boom, tip), joint=Revolute((0.0, 1.0, 0.0)), joint_name="luff")
    model = b.build()
    q0 = jnp.asarray([-np.radians(angle_deg)])  # about +y: a negative angle raises the boom's tip
    c, s = np.cos(float(q0[0])), np.sin(float(q0[0]))
    R = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    length0 = float(np.linalg.norm(R @ np.asarray(cylinder_pin) - np.asarray(cylinder_base)))
    cyl = Cylinder(name="cylinder", body_a="world", point_a=jnp.asarray(cylinder_base, float), body_b="boom",
                   point_b=jnp.asarray(cylinder_pin, float), target=jnp.asarray(length0 if target_length is None else target_length),
                   max_force=jnp.asarray(max_force), min_length=jnp.asarray(0.6 * length0), max_length=jnp.asarray(1.6 * length0),
                   kp=jnp.asarray(2.0e8), kd=jnp.asarray(2.0e7), max_speed=jnp.asarray(max_speed))
    return System(model, (cyl,), name="luffing_crane"), q0


def _combined(a: Body, b: Body) -> Body:
    """One rigid body of two (masses, centres of mass and inertias about them)."""
    m = a.mass + b.mass
    c = (a.mass * np.asarray(a.com) + b.mass * np.asarray(b.com)) / m
    inertia = np.zeros((3, 3))
    for body in (a, b):
        d = np.asarray(body.com) - c
        inertia += np.asarray(body.inertia) + body.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return Body(m, c, inertia)
