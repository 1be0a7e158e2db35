"""Joint kinds.

A joint connects a parent frame (the joint frame, placed on the parent body)
to its child frame (the child body's frame).  Each kind gives, for its own
coordinates ``q`` (size ``nq``) and velocities ``v`` (size ``nv``):

* ``transform(q) -> (R, p)``: the child frame in the joint frame, X_J(q);
* ``placed_transform(R0, p0, q)``: the same composed after the joint frame's placement (R0, p0) on
  the parent (revolute and prismatic joints write it with their static axis, element-wise);
* ``motion_subspace(q) -> S`` (6 x nv): the joint twist is ``S v``, expressed
  in the child frame, linear part first;
* ``bias(q, v) -> c_J`` (6,): ``Ṡ v``, the apparent derivative of S in the
  child frame (zero for every kind whose S is constant);
* ``qdot(q, v)``: q̇ = Q(q) v;
* ``integrate(q, v, dt)``: q ⊕ v dt on the joint's configuration manifold;
* ``neutral()``: the reference configuration.

Joint kinds are immutable and hashable: they are part of a model's static
topology, and their axes are fixed at build time.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
import numpy as np

from . import spatial
from .errors import JaxmbdError


class ModelError(JaxmbdError, ValueError):
    """A model that cannot be built: the message names the body, joint or file."""


def _unit_axis(axis, where: str) -> tuple[float, float, float]:
    a = np.asarray(axis, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{where}: axis must be 3 finite numbers, got {axis!r}")
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ModelError(f"{where}: axis is zero; expected a unit vector")
    if abs(n - 1.0) > 1e-6:
        raise ModelError(f"{where}: axis {tuple(a)} has norm {n:.6g}; expected a unit vector")
    return tuple(float(x) for x in a / n)


@dataclasses.dataclass(frozen=True)
class JointKind:
    nq: ClassVar[int]
    nv: ClassVar[int]
    name: ClassVar[str]

    def check(self, where: str) -> "JointKind":
        return self

    def neutral(self) -> np.ndarray:
        return np.zeros(self.nq)

    def bias(self, q, v):
        return jnp.zeros(6, dtype=jnp.result_type(q, v, float))

    def qdot(self, q, v):
        return v

    def integrate(self, q, v, dt):
        return q + v * dt

    def placed_transform(self, R0, p0, q):
        """The child frame in the parent body's frame: the joint frame's placement (R0, p0) composed
        with :meth:`transform`."""
        RJ, pJ = self.transform(q)
        return spatial.compose(R0, p0, RJ, pJ)


def _times_static(A, M):
    """A M for a traced (3, 3) A and a static numpy (3, 3) M, column by column (element-wise, see
    :func:`spatial.static_combination`)."""
    cols = [spatial.static_combination(A, M[:, j]) for j in range(3)]
    return jnp.stack([jnp.zeros(3, dtype=A.dtype) if c is None else c for c in cols], -1)


@dataclasses.dataclass(frozen=True)
class Fixed(JointKind):
    """No relative motion: the child is welded to the parent at the joint frame."""

    nq: ClassVar[int] = 0
    nv: ClassVar[int] = 0
    name: ClassVar[str] = "fixed"

    def transform(self, q):
        return jnp.eye(3, dtype=q.dtype), jnp.zeros(3, dtype=q.dtype)

    def motion_subspace(self, q):
        return jnp.zeros((6, 0), dtype=q.dtype)


@dataclasses.dataclass(frozen=True)
class Revolute(JointKind):
    """Rotation by q about a unit axis of the joint frame (URDF revolute and continuous)."""

    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    nq: ClassVar[int] = 1
    nv: ClassVar[int] = 1
    name: ClassVar[str] = "revolute"

    def check(self, where):
        return Revolute(_unit_axis(self.axis, where))

    def transform(self, q):
        a = jnp.asarray(self.axis, dtype=q.dtype)
        return spatial.axis_angle_to_matrix(a, q[0]), jnp.zeros(3, dtype=q.dtype)

    def placed_transform(self, R0, p0, q):
        # R0 exp(q K) = R0 + sin q (R0 K) + (1 − cos q) (R0 K²), K = [a]× static: element-wise terms
        # that fuse with their neighbours, where R0 @ R_J would be a reduction kernel of its own
        x, y, z = self.axis
        K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])  # static: numpy at trace time
        R0 = jnp.asarray(R0)  # dtypes promote as in spatial.compose
        R = R0 + jnp.sin(q[0]) * _times_static(R0, K) + (1.0 - jnp.cos(q[0])) * _times_static(R0, K @ K)
        return R, jnp.asarray(p0).astype(R.dtype)

    def motion_subspace(self, q):
        return jnp.concatenate([jnp.zeros(3), jnp.asarray(self.axis)]).astype(q.dtype)[:, None]


@dataclasses.dataclass(frozen=True)
class Prismatic(JointKind):
    """Translation by q along a unit axis of the joint frame."""

    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    nq: ClassVar[int] = 1
    nv: ClassVar[int] = 1
    name: ClassVar[str] = "prismatic"

    def check(self, where):
        return Prismatic(_unit_axis(self.axis, where))

    def transform(self, q):
        a = jnp.asarray(self.axis, dtype=q.dtype)
        return jnp.eye(3, dtype=q.dtype), a * q[0]

    def placed_transform(self, R0, p0, q):
        R0 = jnp.asarray(R0)  # dtypes promote as in spatial.compose
        Ra = spatial.static_combination(R0, self.axis)  # R0 a
        p = jnp.asarray(p0) + Ra * q[0]
        return R0.astype(p.dtype), p

    def motion_subspace(self, q):
        return jnp.concatenate([jnp.asarray(self.axis), jnp.zeros(3)]).astype(q.dtype)[:, None]


@dataclasses.dataclass(frozen=True)
class Cylindrical(JointKind):
    """Translation d and rotation θ about the same unit axis: q = [d, θ], v = [ḋ, θ̇]."""

    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    nq: ClassVar[int] = 2
    nv: ClassVar[int] = 2
    name: ClassVar[str] = "cylindrical"

    def check(self, where):
        return Cylindrical(_unit_axis(self.axis, where))

    def transform(self, q):
        a = jnp.asarray(self.axis, dtype=q.dtype)
        # The axis is invariant under the rotation, so the translation reads
        # the same in the joint and the child frame.
        return spatial.axis_angle_to_matrix(a, q[1]), a * q[0]

    def motion_subspace(self, q):
        a = jnp.asarray(self.axis, dtype=q.dtype)
        z = jnp.zeros(3, dtype=q.dtype)
        return jnp.stack([jnp.concatenate([a, z]), jnp.concatenate([z, a])], -1)


@dataclasses.dataclass(frozen=True)
class Universal(JointKind):
    """Rotation q1 about axis1 (joint frame), then q2 about axis2 (intermediate frame).

    R = R(a₁, q₁) R(a₂, q₂); the child-frame angular velocity is
    ω = R(a₂, q₂)ᵀ a₁ q̇₁ + a₂ q̇₂, so S = [[0, 0], [R₂ᵀa₁, a₂]] and
    c_J = Ṡ q̇ = [0; −q̇₂ a₂ × (R₂ᵀ a₁) q̇₁].
    """

    axis1: tuple[float, float, float] = (1.0, 0.0, 0.0)
    axis2: tuple[float, float, float] = (0.0, 1.0, 0.0)
    nq: ClassVar[int] = 2
    nv: ClassVar[int] = 2
    name: ClassVar[str] = "universal"

    def check(self, where):
        a1 = _unit_axis(self.axis1, where + " (axis1)")
        a2 = _unit_axis(self.axis2, where + " (axis2)")
        if abs(np.dot(a1, a2)) > 1 - 1e-9:
            raise ModelError(f"{where}: universal joint axes are parallel; expected two independent axes")
        return Universal(a1, a2)

    def _r2t_a1(self, q):
        a1 = jnp.asarray(self.axis1, dtype=q.dtype)
        a2 = jnp.asarray(self.axis2, dtype=q.dtype)
        R2 = spatial.axis_angle_to_matrix(a2, q[1])
        return R2.T @ a1, a2

    def transform(self, q):
        a1 = jnp.asarray(self.axis1, dtype=q.dtype)
        a2 = jnp.asarray(self.axis2, dtype=q.dtype)
        R = spatial.axis_angle_to_matrix(a1, q[0]) @ spatial.axis_angle_to_matrix(a2, q[1])
        return R, jnp.zeros(3, dtype=q.dtype)

    def motion_subspace(self, q):
        b, a2 = self._r2t_a1(q)
        z = jnp.zeros(3, dtype=q.dtype)
        return jnp.stack([jnp.concatenate([z, b]), jnp.concatenate([z, a2])], -1)

    def bias(self, q, v):
        b, a2 = self._r2t_a1(q)
        w = -v[1] * v[0] * spatial.cross(a2, b)
        return jnp.concatenate([jnp.zeros(3, dtype=w.dtype), w])


@dataclasses.dataclass(frozen=True)
class Spherical(JointKind):
    """Any rotation: q = unit quaternion [w, x, y, z], v = ω in the child frame."""

    nq: ClassVar[int] = 4
    nv: ClassVar[int] = 3
    name: ClassVar[str] = "spherical"

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def transform(self, q):
        return spatial.quat_to_matrix(q), jnp.zeros(3, dtype=q.dtype)

    def motion_subspace(self, q):
        return jnp.concatenate([jnp.zeros((3, 3)), jnp.eye(3)], 0).astype(q.dtype)

    def qdot(self, q, v):
        return spatial.quat_derivative(q, v)

    def integrate(self, q, v, dt):
        return spatial.quat_normalise(spatial.quat_multiply(q, spatial.quat_exp(v * dt)))


@dataclasses.dataclass(frozen=True)
class Free(JointKind):
    """Six degrees of freedom (Pinocchio's free-flyer, quaternion scalar first).

    q = [x, y, z, qw, qx, qy, qz]: the child frame's origin in the joint frame
    and its orientation; v = [v; ω], the child frame's twist relative to the
    joint frame, expressed in the child frame.  ṗ = R v, q̇ = ½ q ⊗ [0; ω].
    """

    nq: ClassVar[int] = 7
    nv: ClassVar[int] = 6
    name: ClassVar[str] = "free"

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def transform(self, q):
        return spatial.quat_to_matrix(q[3:7]), q[:3]

    def motion_subspace(self, q):
        return jnp.eye(6, dtype=q.dtype)

    def qdot(self, q, v, R=None):
        """[R v_lin; q̇_quat]; ``R``: the joint's rotation of this q where the caller has it."""
        R = spatial.quat_to_matrix(q[3:7]) if R is None else R
        return jnp.concatenate([spatial.mv(R, v[:3]), spatial.quat_derivative(q[3:7], v[3:])])

    def integrate(self, q, v, dt):
        # Exact on SE(3) for a constant twist would need the SE(3) exponential;
        # first order in dt is what finite differences and Newton steps need.
        R = spatial.quat_to_matrix(q[3:7])
        quat = spatial.quat_normalise(spatial.quat_multiply(q[3:7], spatial.quat_exp(v[3:] * dt)))
        return jnp.concatenate([q[:3] + R @ v[:3] * dt, quat])


def plane_axes(normal) -> tuple[np.ndarray, np.ndarray]:
    """The in-plane unit axes (a, b) of a :class:`Planar` joint with unit ``normal``: for a normal
    along z, y or x the two other coordinate axes in their natural order ((x, y), (x, z), (y, z));
    otherwise a along the first coordinate axis least aligned with the normal, projected on the
    plane, and b = n × a."""
    n = np.asarray(normal, float)
    for k in range(3):
        if abs(abs(n[k]) - 1.0) < 1e-12:
            a, b = (np.eye(3)[i] for i in range(3) if i != k)
            return a, b
    e = np.eye(3)[int(np.argmin(np.abs(n)))]
    a = e - np.dot(e, n) * n
    a = a / np.linalg.norm(a)
    return a, np.cross(n, a)


@dataclasses.dataclass(frozen=True)
class Planar(JointKind):
    """Motion in the plane normal to a unit ``axis`` of the joint frame: two translations and the
    rotation about the normal (WEC-Sim's "floating 3DOF" with the normal along y: surge, heave,
    pitch; URDF's ``planar``; a vessel's horizontal plane with the normal along z).

    q = [x, y, θ]: the child origin at x a + y b in the joint frame (a, b from :func:`plane_axes`)
    and the rotation θ about the normal; v = [u, w, θ̇] with u, w the child origin's velocity along
    the child frame's a and b axes (body-frame velocities, as the free joint's), so S = [[a, b, 0],
    [0, 0, n]] is constant and c_J = 0.  With σ = (n × a)·b = ±1, R_J a = a cos θ + σ b sin θ, so
    ẋ = u cos θ − σ w sin θ and ẏ = σ u sin θ + w cos θ.
    """

    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    nq: ClassVar[int] = 3
    nv: ClassVar[int] = 3
    name: ClassVar[str] = "planar"

    def check(self, where):
        return Planar(_unit_axis(self.axis, where))

    def _frame(self):
        a, b = plane_axes(self.axis)
        sigma = float(np.dot(np.cross(self.axis, a), b))
        return a, b, sigma

    def transform(self, q):
        a, b, _ = self._frame()
        n = jnp.asarray(self.axis, dtype=q.dtype)
        return spatial.axis_angle_to_matrix(n, q[2]), jnp.asarray(a, q.dtype) * q[0] + jnp.asarray(b, q.dtype) * q[1]

    def motion_subspace(self, q):
        a, b, _ = self._frame()
        S = np.zeros((6, 3))
        S[:3, 0], S[:3, 1], S[3:, 2] = a, b, self.axis
        return jnp.asarray(S, dtype=q.dtype)

    def qdot(self, q, v):
        _, _, sig = self._frame()
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.stack([c * v[0] - sig * s * v[1], sig * s * v[0] + c * v[1], v[2]])

    def velocity_coordinates(self, q, dq):
        """δ with X_J⁻¹ dX_J = S δ for a tangent dq of q: the inverse of :meth:`qdot`'s map."""
        _, _, sig = self._frame()
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.stack([c * dq[0] + sig * s * dq[1], -sig * s * dq[0] + c * dq[1], dq[2]])

    def integrate(self, q, v, dt):
        return q + self.qdot(q, v) * dt


KINDS = {k.name: k for k in (Fixed, Revolute, Prismatic, Cylindrical, Universal, Spherical, Free, Planar)}
