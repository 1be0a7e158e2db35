"""Reference models used by the demo, the studies, the tests and the benchmarks."""

from __future__ import annotations

import numpy as np

from .joints import Free, Revolute
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
    """Seed 001's 4-link pendulum: four uniform links in the x-z plane on revolute joints about y.

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
    """Seed 003's eight-body serial chain: vessel (free) / platform roll / platform pitch / king /
    boom 1 / boom 2 / payload pendulum (two axes); nv = 13.

    Lengths l1..l7 = 0, 13, 10, 10, 8, 0, 15 m and masses m1..m7 = 0.01, 140, 70, 40, 30, 0.01, 20 t
    (seed 003, Tables 1-2), centres of gravity at l_i/2 (d7 = l7).  The vessel is
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
