"""Bodies, joints and the kinematic tree.

``Model`` is immutable: its topology (parents, joint kinds, names, index
ranges) is static Python data, hashed by ``jax.jit``; its placements, spatial
inertias and gravity are array leaves, so any result can be differentiated
with respect to them.  Body ``i`` hangs from joint ``i``; its frame is the
joint's child frame.  Bodies are stored parents first.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from . import spatial
from .errors import UnknownNameError
from .joints import (
    Cylindrical,
    Fixed,
    Free,
    JointKind,
    ModelError,
    Planar,
    Prismatic,
    Revolute,
    Spherical,
    Universal,
)

WORLD = "world"


@dataclasses.dataclass(frozen=True)
class Body:
    """A rigid body: mass (kg), centre of mass (m, body frame), rotational inertia about the
    centre of mass in body axes (kg m²); or a full 6x6 spatial inertia about the body origin."""

    mass: float = 0.0
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Sequence[Sequence[float]] | None = None
    spatial_inertia: np.ndarray | None = None

    def matrix(self, where: str) -> np.ndarray:
        if self.spatial_inertia is not None:
            I = np.asarray(self.spatial_inertia, dtype=float)
            if I.shape != (6, 6) or not np.all(np.isfinite(I)):
                raise ModelError(f"{where}: spatial_inertia must be a finite 6x6 matrix")
            if np.max(np.abs(I - I.T)) > 1e-9 * max(1.0, np.max(np.abs(I))):
                raise ModelError(f"{where}: spatial_inertia is not symmetric")
            ev = np.linalg.eigvalsh(I)
            if ev[0] < -1e-9 * max(1.0, ev[-1]):
                raise ModelError(f"{where}: spatial_inertia is not positive semi-definite (eigenvalue {ev[0]:.3g})")
            return I
        m = float(self.mass)
        if not np.isfinite(m) or m < 0:
            raise ModelError(f"{where}: mass must be a finite number >= 0, got {self.mass!r}")
        c = np.asarray(self.com, dtype=float).reshape(-1)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise ModelError(f"{where}: com must be 3 finite numbers, got {self.com!r}")
        Ic = np.zeros((3, 3)) if self.inertia is None else np.asarray(self.inertia, dtype=float)
        if Ic.shape == (3,):
            Ic = np.diag(Ic)
        if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
            raise ModelError(f"{where}: inertia must be a 3x3 matrix (or its 3 principal moments)")
        if np.max(np.abs(Ic - Ic.T)) > 1e-9 * max(1.0, np.max(np.abs(Ic))):
            raise ModelError(f"{where}: inertia is not symmetric")
        ev = np.linalg.eigvalsh(Ic)
        tol = 1e-9 * max(1.0, ev[-1])
        if ev[0] < -tol:
            raise ModelError(f"{where}: inertia is not positive semi-definite (principal moment {ev[0]:.6g} kg m²)")
        if ev[0] + ev[1] < ev[2] - tol:
            raise ModelError(
                f"{where}: principal moments {[round(float(x), 9) for x in ev]} break the triangle inequality "
                "(I1 + I2 >= I3); no rigid body has this inertia"
            )
        return _spatial_inertia(m, c, Ic)


def rpy_matrix(rpy) -> np.ndarray:
    """:func:`jaxmbd.spatial.rpy_to_matrix` of one (roll, pitch, yaw) in NumPy (the same figures: a model is
    placed without compiling anything)."""
    (cx, cy, cz), (sx, sy, sz) = np.cos(rpy), np.sin(rpy)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    Ry = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    Rz = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def _spatial_inertia(m: float, c: np.ndarray, Ic: np.ndarray) -> np.ndarray:
    """:func:`jaxmbd.spatial.spatial_inertia` in NumPy (the same figures, bit for bit): a model is built without
    compiling anything, so that a file's mistake found after its bodies is reported at once."""
    C = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    return np.block([[m * np.eye(3), -m * C], [m * C, Ic - m * (C @ C)]])


@dataclasses.dataclass(frozen=True)
class Placement:
    """Pose of a child frame in its parent: rotation matrix R (parent_R_child) and origin p (m)."""

    R: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(3))
    p: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))

    @staticmethod
    def from_xyz_rpy(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)) -> "Placement":
        return Placement(rpy_matrix(np.asarray(rpy, float)), np.asarray(xyz, float))

    def check(self, where: str) -> tuple[np.ndarray, np.ndarray]:
        R = np.asarray(self.R, dtype=float)
        p = np.asarray(self.p, dtype=float).reshape(-1)
        if R.shape != (3, 3) or p.shape != (3,) or not (np.all(np.isfinite(R)) and np.all(np.isfinite(p))):
            raise ModelError(f"{where}: placement must be a 3x3 rotation and a 3-vector")
        if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-6 or np.linalg.det(R) < 0:
            raise ModelError(f"{where}: placement rotation is not a proper rotation matrix")
        return R, p


class Model(eqx.Module):
    """A kinematic tree of rigid bodies.

    Array leaves (differentiable): ``placement_R`` (n, 3, 3) and ``placement_p``
    (n, 3), the joint frame of body i in its parent's frame; ``inertia`` (n, 6, 6),
    body spatial inertias about the body origin in body axes; ``gravity`` (3,).
    """

    placement_R: jnp.ndarray
    placement_p: jnp.ndarray
    inertia: jnp.ndarray
    gravity: jnp.ndarray
    body_names: tuple[str, ...] = eqx.field(static=True)
    joint_names: tuple[str, ...] = eqx.field(static=True)
    parents: tuple[int, ...] = eqx.field(static=True)
    joints: tuple[JointKind, ...] = eqx.field(static=True)
    q_start: tuple[int, ...] = eqx.field(static=True)
    v_start: tuple[int, ...] = eqx.field(static=True)

    @property
    def n_bodies(self) -> int:
        return len(self.body_names)

    @property
    def nq(self) -> int:
        return sum(j.nq for j in self.joints)

    @property
    def nv(self) -> int:
        return sum(j.nv for j in self.joints)

    @property
    def mass(self):
        """Body masses (kg)."""
        return self.inertia[:, 0, 0]

    def index(self, name: str) -> int:
        """Index of a body, or of the body hanging from the named joint."""
        if name in self.body_names:
            return self.body_names.index(name)
        if name in self.joint_names:
            return self.joint_names.index(name)
        raise UnknownNameError(f"no body or joint named {name!r}; bodies: {list(self.body_names)}")

    def q_slice(self, name: str | int) -> slice:
        """The configuration coordinates of a joint (by its name, its body's name or the body index)."""
        i = name if isinstance(name, int) else self.index(name)
        return slice(self.q_start[i], self.q_start[i] + self.joints[i].nq)

    def v_slice(self, name: str | int) -> slice:
        """The velocity coordinates of a joint (by its name, its body's name or the body index)."""
        i = name if isinstance(name, int) else self.index(name)
        return slice(self.v_start[i], self.v_start[i] + self.joints[i].nv)

    def neutral(self) -> jnp.ndarray:
        """Reference configuration: zero angles and offsets, identity quaternions."""
        parts = [j.neutral() for j in self.joints]
        return jax.device_put(np.concatenate(parts) if parts else np.zeros(0))  # as an array on the device: nothing compiles

    def children(self, i: int) -> tuple[int, ...]:
        return tuple(k for k, p in enumerate(self.parents) if p == i)

    def ancestors(self, i: int) -> tuple[int, ...]:
        """Bodies from the root down to and including i."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.parents[i]
        return tuple(reversed(out))

    def qdot(self, q, v, kinematics=None):
        """q̇ = Q(q) v for the whole tree.  ``kinematics``: the :class:`~jaxmbd.kinematics.Kinematics` of this q,
        where the caller has them: a free joint's translation rate R_J v then reads its rotation from the placed
        joint's (R_J = R0ᵀ (R0 R_J)) instead of forming it from the quaternion again, so that a reverse-mode
        gradient transposes the quaternion's matrix once for both."""
        parts = []
        for i, j in enumerate(self.joints):
            if not j.nq:
                continue
            qi, vi = q[self.q_start[i] : self.q_start[i] + j.nq], v[self.v_start[i] : self.v_start[i] + j.nv]
            if kinematics is not None and isinstance(j, Free):
                R0 = self.placement_R[i].astype(vi.dtype)
                parts.append(j.qdot(qi, vi, spatial.mm(jnp.swapaxes(R0, -1, -2), kinematics.joints.R[i])))
            else:
                parts.append(j.qdot(qi, vi))
        return jnp.concatenate(parts) if parts else jnp.zeros_like(q)

    def integrate(self, q, v, dt=1.0):
        """q ⊕ v dt joint by joint (quaternions stay unit)."""
        parts = [
            j.integrate(q[self.q_start[i] : self.q_start[i] + j.nq], v[self.v_start[i] : self.v_start[i] + j.nv], dt)
            for i, j in enumerate(self.joints)
            if j.nq
        ]
        return jnp.concatenate(parts) if parts else q

    def normalise(self, q):
        """Renormalise the quaternions inside q (after an integrator step)."""
        for i, j in enumerate(self.joints):
            s = self.q_start[i]
            if isinstance(j, Free):
                q = q.at[s + 3 : s + 7].set(spatial.quat_normalise(q[s + 3 : s + 7]))
            elif isinstance(j, Spherical):
                q = q.at[s : s + 4].set(spatial.quat_normalise(q[s : s + 4]))
        return q


@dataclasses.dataclass
class _Entry:
    name: str
    parent: str
    joint: JointKind
    joint_name: str
    placement: Placement
    body: Body


class ModelBuilder:
    """Build a :class:`Model` body by body; bodies may be added in any order.

    >>> b = ModelBuilder()
    >>> b.add_body("link1", joint=Revolute((0, 1, 0)), body=Body(1.0, (0, 0, -0.1)))
    >>> model = b.build()
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81), source: str = "model"):
        self.gravity = np.asarray(gravity, dtype=float)
        self.source = source
        self._entries: list[_Entry] = []

    def add_body(
        self,
        name: str,
        *,
        body: Body,
        joint: JointKind | None = None,
        parent: str = WORLD,
        placement: Placement | None = None,
        joint_name: str | None = None,
    ) -> "ModelBuilder":
        """Attach ``body`` to ``parent`` (a body name or ``"world"``) through ``joint``
        (Fixed if omitted) whose frame sits at ``placement`` in the parent's frame."""
        self._entries.append(
            _Entry(
                name=name,
                parent=parent if parent is not None else WORLD,
                joint=joint if joint is not None else Fixed(),
                joint_name=joint_name if joint_name is not None else f"{name}_joint",
                placement=placement if placement is not None else Placement(),
                body=body,
            )
        )
        return self

    def build(self, *, single_root: bool = False) -> Model:
        src = self.source
        names = [e.name for e in self._entries]
        for kind, lst in (("body", names), ("joint", [e.joint_name for e in self._entries])):
            seen = set()
            for n in lst:
                if n in seen:
                    raise ModelError(f"{src}: duplicate {kind} name {n!r}")
                seen.add(n)
        if WORLD in names:
            raise ModelError(f"{src}: {WORLD!r} is reserved for the fixed world frame")
        by_name = {e.name: e for e in self._entries}
        for e in self._entries:
            if e.parent != WORLD and e.parent not in by_name:
                raise ModelError(f"{src}: body {e.name!r} (joint {e.joint_name!r}) has unknown parent {e.parent!r}")
        roots = [e.name for e in self._entries if e.parent == WORLD]
        if single_root and len(roots) != 1:
            raise ModelError(f"{src}: expected one root, found {len(roots)}: {roots}")
        # depth-first order from the world, children in insertion order
        order: list[str] = []
        kids: dict[str, list[str]] = {}
        for e in self._entries:
            kids.setdefault(e.parent, []).append(e.name)
        stack = list(reversed(kids.get(WORLD, [])))
        while stack:
            n = stack.pop()
            order.append(n)
            stack.extend(reversed(kids.get(n, [])))
        if len(order) != len(names):
            stuck = sorted(set(names) - set(order))
            raise ModelError(f"{src}: bodies {stuck} form a cycle and never reach the world")
        idx = {n: i for i, n in enumerate(order)}
        joints, Rs, ps, Is, parents = [], [], [], [], []
        q_start, v_start, qs, vs = [], [], 0, 0
        for n in order:
            e = by_name[n]
            where = f"{src}: joint {e.joint_name!r} (body {n!r})"
            j = e.joint.check(where)
            R, p = e.placement.check(where)
            Is.append(e.body.matrix(f"{src}: body {n!r}"))
            joints.append(j)
            Rs.append(R)
            ps.append(p)
            parents.append(-1 if e.parent == WORLD else idx[e.parent])
            q_start.append(qs)
            v_start.append(vs)
            qs += j.nq
            vs += j.nv
        if not order:
            raise ModelError(f"{src}: the model has no bodies")
        put = lambda a: jax.device_put(np.asarray(a, dtype=float))  # noqa: E731  (a copy to the device: no program compiles)
        return Model(
            placement_R=put(np.stack(Rs)),
            placement_p=put(np.stack(ps)),
            inertia=put(np.stack(Is)),
            gravity=put(self.gravity),
            body_names=tuple(order),
            joint_names=tuple(by_name[n].joint_name for n in order),
            parents=tuple(parents),
            joints=tuple(joints),
            q_start=tuple(q_start),
            v_start=tuple(v_start),
        )


# ---------------------------------------------------------------------------
# URDF


def _floats(text: str | None, n: int, where: str, default) -> np.ndarray:
    if text is None:
        return np.asarray(default, dtype=float)
    try:
        vals = [float(x) for x in text.split()]
    except ValueError:
        raise ModelError(f"{where}: expected {n} numbers, got {text!r}") from None
    if len(vals) != n:
        raise ModelError(f"{where}: expected {n} numbers, got {text!r}")
    return np.asarray(vals)


def _origin(el, where) -> Placement:
    o = el.find("origin") if el is not None else None
    if o is None:
        return Placement()
    return Placement.from_xyz_rpy(
        _floats(o.get("xyz"), 3, where + " origin xyz", (0, 0, 0)),
        _floats(o.get("rpy"), 3, where + " origin rpy", (0, 0, 0)),
    )


def _number(text, where, unit, required=True):
    """A finite number from a URDF attribute (SI, no unit written), else a ModelError naming it."""
    if text is None:
        raise ModelError(f"{where}: missing; expected a number in {unit}")
    try:
        value = float(text)
    except ValueError:
        raise ModelError(f"{where}: expected a number in {unit} (SI, no unit written), got {text!r}") from None
    if not np.isfinite(value):
        raise ModelError(f"{where}: expected a finite number in {unit}, got {text!r}")
    return value


def _urdf_links(root, src) -> dict:
    """{link name: Body} of a URDF's <link> elements (a link without <inertial> is massless)."""
    links = {}
    for link in root.findall("link"):
        name = link.get("name")
        if not name:
            raise ModelError(f"{src}: a <link> has no name")
        if name in links:
            raise ModelError(f"{src}: duplicate link name {name!r}")
        where = f"{src}: link {name!r}"
        inertial = link.find("inertial")
        if inertial is None:
            links[name] = Body(0.0)
            continue
        m_el = inertial.find("mass")
        mass = _number(m_el.get("value") if m_el is not None else "0", where + " <mass value>", "kg", required=m_el is not None)
        pl = _origin(inertial, where + " inertial")
        i_el = inertial.find("inertia")
        I = np.zeros((3, 3))
        if i_el is not None:
            g = {k: _number(i_el.get(k, "0"), f"{where} <inertia {k}>", "kg m^2")
                 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            I = np.array(
                [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
            )
        # URDF gives the inertia in the frame of <inertial><origin>; rotate it into link axes.
        links[name] = Body(mass=mass, com=pl.p, inertia=pl.R @ I @ pl.R.T)
    return links


def _urdf_joint(jel, src, links, child_of, b, cuts):
    """Add the child link of one URDF <joint> to the builder ``b``; ``child_of``: link -> its joint so far.
    A joint whose child already hangs from another joint closes a loop: it goes to ``cuts`` (None: refused)."""
    jn = jel.get("name")
    if not jn:  # joints are named in outputs, drives and a file's q0: an unnamed one cannot be addressed
        child = jel.find("child")
        raise ModelError(f"{src}: a <joint> (child link {child.get('link') if child is not None else None!r}) has no name")
    where = f"{src}: joint {jn!r}"
    jt = jel.get("type")
    pe, ce = jel.find("parent"), jel.find("child")
    if pe is None or ce is None:
        raise ModelError(f"{where}: needs <parent link=...> and <child link=...>")
    parent, child = pe.get("link"), ce.get("link")
    for role, ln in (("parent", parent), ("child", child)):
        if ln not in links:
            raise ModelError(f"{where}: {role} link {ln!r} is not defined")
    if jel.find("mimic") is not None:  # a coordinate driven by another: ignoring it would free the joint
        raise ModelError(f"{where}: <mimic> is not supported (a joint driven by another); model the coupling as a "
                         "loop or a controller")
    ax_el = jel.find("axis")
    axis = _floats(ax_el.get("xyz") if ax_el is not None else None, 3, where + " axis", (1.0, 0.0, 0.0))
    n = np.linalg.norm(axis)
    if n > 1e-12 and abs(n - 1) < 1e-3:
        axis = axis / n  # URDF files print axes to a few digits
    if child in child_of:
        if cuts is None:
            raise ModelError(f"{where}: link {child!r} already hangs from joint {child_of[child]!r} (a closed loop: "
                             "read the file with jaxmbd.load_urdf_with_loops)")
        if jt not in ("revolute", "continuous", "prismatic", "fixed"):
            raise ModelError(f"{where}: a joint closing a loop (link {child!r} already hangs from joint "
                             f"{child_of[child]!r}) must be revolute, continuous, prismatic or fixed, got {jt!r}")
        cuts.append((jn, jt, parent, child, _origin(jel, where), axis))
        return
    child_of[child] = jn
    if jt in ("revolute", "continuous"):
        kind = Revolute(tuple(axis))
    elif jt == "prismatic":
        kind = Prismatic(tuple(axis))
    elif jt == "fixed":
        kind = Fixed()
    elif jt == "planar":
        kind = Planar(tuple(axis)).check(where)
    else:
        raise ModelError(f"{where}: joint type {jt!r} is not supported (revolute, continuous, prismatic, planar, fixed)")
    b.add_body(child, body=links[child], joint=kind, parent=parent, placement=_origin(jel, where), joint_name=jn)


DRAKE_NS = "{http://drake.mit.edu}"


def _urdf_cut_joints(root, src, links, cuts) -> list[dict]:
    """The loops of a URDF (:func:`urdf_tree_and_loops`) as the keyword arguments of
    :class:`jaxmbd.loops.Loop`: its cut joints and Drake's ``<drake:ball_constraint>``s."""
    out = []
    for jn, jt, parent, child, pl, axis in cuts:
        kind = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "weld"}[jt]
        if kind == "weld":
            axis = np.array([0.0, 0.0, 1.0])
        n = np.linalg.norm(axis)
        if not n > 0.0:
            raise ModelError(f"{src}: joint {jn!r}: axis is zero; expected a direction")
        axis = axis / n
        # the child's frame is the joint's frame (at zero joint motion): its point and axes in the parent's
        # frame are the joint origin's, in the child's frame the origin and the axis itself
        spec = dict(name=jn, body_a=parent, body_b=child, point_a=pl.p, point_b=np.zeros(3), joint=kind,
                    axis_a=pl.R @ axis, axis_b=axis)
        if kind != "revolute":  # a direction across the axis, fixed in both frames alike
            across = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
            spec |= dict(reference_a=pl.R @ across, reference_b=across)
        out.append(spec)
    for k, el in enumerate(root.findall(DRAKE_NS + "ball_constraint")):
        where = f"{src}: <drake:ball_constraint> {k}"
        parts = {}
        for key, attr in (("body_A", "name"), ("body_B", "name"), ("p_AP", "value"), ("p_BQ", "value")):
            sub = el.find(f"{DRAKE_NS}ball_constraint_{key}")
            if sub is None or sub.get(attr) is None:
                raise ModelError(f"{where}: needs <drake:ball_constraint_{key} {attr}=...>")
            parts[key] = sub.get(attr)
        for key in ("body_A", "body_B"):
            if parts[key] not in links:
                raise ModelError(f"{where}: {key} link {parts[key]!r} is not defined")
        out.append(dict(name=f"ball_constraint_{k}", body_a=parts["body_A"], body_b=parts["body_B"], joint="ball",
                        point_a=_floats(parts["p_AP"], 3, where + " p_AP", None),
                        point_b=_floats(parts["p_BQ"], 3, where + " p_BQ", None)))
    return out


def load_urdf(path, *, floating: bool = False, gravity=(0.0, 0.0, -9.81), xml: str | None = None) -> Model:
    """Read a URDF file into a :class:`Model`.

    Links become bodies and each one hangs from the joint above it (the root
    link from the world, through a Free joint when ``floating``, else welded).
    Fixed joints are kept as bodies with no coordinates.  A ``continuous``
    joint is a revolute joint with one coordinate; a ``planar`` joint moves in
    the plane normal to its ``<axis>`` (:class:`~jaxmbd.joints.Planar`, q = two
    in-plane translations and the rotation about the axis).  ``floating`` joints
    are refused with the joint's name and the file, and so is a ``<mimic>`` (a joint driven
    by another).  A joint's ``<limit>`` and ``<dynamics>`` are not read: limits and friction
    are force elements (``pto``, ``fender``) in jaxmbd.

    A file that closes loops is refused in one line: :func:`jaxmbd.loops.load_urdf_with_loops` reads it.
    """
    return urdf_tree_and_loops(path, floating=floating, gravity=gravity, xml=xml, loops=False)[0]


def urdf_tree_and_loops(path, *, floating: bool = False, gravity=(0.0, 0.0, -9.81), xml: str | None = None,
                        loops: bool = True) -> tuple[Model, list[dict]]:
    """``(model, loops)`` of a URDF file: the tree of :func:`load_urdf`, and its loops as the keyword arguments
    of :class:`jaxmbd.loops.Loop` (``loops=False``: a file with loops is refused).

    **Closed loops.**  URDF is a tree; two conventions close loops in it, and both are read as cut joints:

    - a ``<joint>`` whose child link already hangs from another joint earlier in the file (a cut joint):
      a revolute or continuous joint closes a ``revolute`` loop, a prismatic joint a ``prismatic`` loop
      and a fixed joint a ``weld``, named after the joint, between its parent link (at the joint's
      ``<origin>``) and its child link at the child's origin, with the joint's axis in both frames: as in
      the tree, the child's frame is the joint's frame at zero motion.  The child's origin is where its
      own tree joint is, so a loop closed elsewhere on a link (a four-bar's rocker tip) needs a massless
      link fixed there to be the cut joint's child (tests/test_loops.py builds one).  The cut joint's
      ``<limit>`` and ``<dynamics>`` are not read, as for the tree's joints (a ``<mimic>`` is refused);
    - Drake's ``<drake:ball_constraint>`` (``xmlns:drake="http://drake.mit.edu"``): a ``ball`` loop named
      ``ball_constraint_<k>`` between ``body_A`` at ``p_AP`` and ``body_B`` at ``p_BQ`` (link frames).
    """
    src = str(path) if xml is None else (str(path) if path else "<urdf string>")
    try:
        if xml is None:  # read as text: a UTF-8 byte-order mark is no part of the XML
            xml = Path(path).read_text(encoding="utf-8-sig")
        root = ET.fromstring(xml)
    except (ET.ParseError, OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{src}: cannot read URDF: {exc}") from None
    if root.tag != "robot":
        raise ModelError(f"{src}: root element is <{root.tag}>, expected <robot>")
    links = _urdf_links(root, src)
    b = ModelBuilder(gravity=gravity, source=src)
    child_of = {}
    cuts = [] if loops else None
    for jel in root.findall("joint"):
        _urdf_joint(jel, src, links, child_of, b, cuts)
    if not loops and root.find(DRAKE_NS + "ball_constraint") is not None:
        raise ModelError(f"{src}: <drake:ball_constraint> closes a loop: read the file with jaxmbd.load_urdf_with_loops")
    roots = [ln for ln in links if ln not in child_of]
    if len(roots) != 1:
        raise ModelError(f"{src}: expected one root link, found {len(roots)}: {roots}")
    root_link = roots[0]
    b.add_body(
        root_link,
        body=links[root_link],
        joint=Free() if floating else Fixed(),
        parent=WORLD,
        joint_name="root_joint",
    )
    # keep the root first: the builder orders depth first from the world
    b._entries.insert(0, b._entries.pop())
    return b.build(single_root=True), (_urdf_cut_joints(root, src, links, cuts) if loops else [])


__all__ = [
    "Body",
    "Placement",
    "Model",
    "ModelBuilder",
    "ModelError",
    "load_urdf",
    "Fixed",
    "Revolute",
    "Prismatic",
    "Cylindrical",
    "Universal",
    "Spherical",
    "Free",
    "Planar",
]
