"""Closed kinematic loops: cut joints that close loops of the tree.

A loop joins a point of body a to a point of body b (either may be ``"world"``) with the constraint of
a joint the tree does not contain: a ``ball`` (the two points coincide: 3 rows), a ``revolute`` (the
points coincide and the axes, ``axis_a`` in a's frame and ``axis_b`` in b's, stay parallel: 5 rows) or
a ``distance`` (the points stay ``length`` apart: a rigid strut, 1 row; its force acts along the strut).
The tree keeps its coordinates; the loops add constraint forces.

**Dynamics.**  With M the tree's mass matrix, b = τ − h(q, v) + Jᵀ f_ext the generalised force
without constraints, and the loops' rows φ(q) = 0 with velocity rows J v = 0 (RBDA ch. 8, the
method of Lagrange multipliers on the tree's coordinates):

    M v̇ = b + J_cᵀ λ,    J_c v̇ = γ = −J̇_c v − 2 ζ ω J_c v − ω² φ

so λ = S⁻¹ (γ − J_c M⁻¹ b) with S = J_c M⁻¹ J_cᵀ, and v̇ = M⁻¹ (b + J_cᵀ λ).  The right-hand side γ
holds the constraint's acceleration with Baumgarte's stabilisation: ω = ``baumgarte`` (rad/s, default
10) and ζ = 1, so a drift of the constraint from roundoff or a coarse step decays with a time
constant of 1/ω and the exact solution is not changed (φ = J v = 0 on it).  S is solved by proximal
iterations on S + μ I (μ = 1e-12 of its mean diagonal, as Pinocchio's and MuJoCo's regularised
solves), so rows that the tree already satisfies (a planar linkage closed by a ball: the out-of-plane
row is empty) get no force, and a singular set is reported (``residual``) rather than a NaN.

The solve is :func:`jaxmbd.dynamics.constrained.constrained_accelerations`.  J_c and J̇_c v come from
the loop's velocity rows c(q, v) = J_c v: J_c as its derivative in v,
J̇_c v as its derivative in q along q̇ (both exact, by automatic differentiation).

**Outputs** of each loop: ``force`` (3,) N, the force the loop applies on body a (world axes; body b
feels its opposite), ``moment`` (3,) N m (world axes, on body a; a revolute's two moment rows),
``error`` m (how far the points are apart) and ``residual`` (the solve's relative residual: above
1e-6 the loops are singular or over-constrained at this configuration, and a run says so).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .fields import parameter, setting
from .kinematics import Kinematics
from .system import Context, Contribution, ForceElement
from .validity import ValidRange

LOOP_KINDS = ("ball", "revolute", "distance")


def _perpendiculars(n):
    """Two unit vectors perpendicular to the unit vector n and to each other."""
    a = jnp.where(jnp.abs(n[0]) < 0.9, jnp.array([1.0, 0.0, 0.0], n.dtype), jnp.array([0.0, 1.0, 0.0], n.dtype))
    e1 = jnp.cross(n, a)
    e1 = e1 / jnp.linalg.norm(e1)
    return e1, jnp.cross(n, e1)


class Loop(ForceElement):
    """A cut joint closing a kinematic loop (:mod:`jaxmbd.loops`; docs/system_file.md, ``[[loops]]``): body
    a's ``point_a`` on body b's ``point_b`` (body frames; a world point for ``"world"``), and for a
    ``revolute`` the axes kept parallel."""

    kind: ClassVar[str] = "loop"
    section: ClassVar[str] = "loops"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="body a")
    body_b: str = setting("body_or_world", doc="body b")
    point_a: jax.Array = parameter(unit="m", shape=(3,), doc="the joint's point on body a, its frame")
    point_b: jax.Array = parameter(unit="m", shape=(3,), doc="the same point on body b, its frame")
    joint: str = setting("string", default="ball", choices=LOOP_KINDS,
                         doc='"ball" (3 rows), "revolute" (5 rows) or "distance" (1 row: a rigid strut of `length` between the points)')
    axis_a: jax.Array = parameter(unit="", shape=(3,), default=(0.0, 0.0, 1.0), doc="revolute: the axis in body a's frame")
    axis_b: jax.Array = parameter(unit="", shape=(3,), default=(0.0, 0.0, 1.0), doc="revolute: the axis in body b's frame")
    length: jax.Array = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="distance: the strut's length, pin to pin")
    baumgarte: jax.Array = parameter(unit="rad/s", bound=(">=", 0.0), default=10.0, doc="ω of the drift's correction (critically damped)")

    def __check_init__(self):
        if self.body_a == self.body_b:
            raise ValueError(f"loop {self.name!r}: body_a and body_b are both {self.body_a!r}; a loop joins two bodies")
        if self.joint not in LOOP_KINDS:
            raise ValueError(f"loop {self.name!r}: joint must be one of {', '.join(LOOP_KINDS)}, got {self.joint!r}")

    @property
    def n_rows(self) -> int:
        return {"ball": 3, "revolute": 5, "distance": 1}[self.joint]

    @classmethod
    def file_rules(cls, values, given, fail):
        joint = values.get("joint", "ball")
        if "length" in given and joint != "distance":
            fail("length", 'only a "distance" loop has a length')
        for key in ("axis_a", "axis_b"):
            if key in given and joint != "revolute":
                fail(key, 'only a "revolute" loop has axes')

    def force_on_a(self, lam, pa, pb):
        """The world force (3,) the loop's multipliers ``lam`` (n_rows,) put on body a at its point."""
        if self.joint == "distance":
            d = pa - pb
            return lam[0] * d / jnp.sqrt(jnp.sum(d * d) + 1e-30)
        return lam[:3]

    def gap(self, phi):
        """How far the loop is from closing (m), from its rows."""
        return jnp.abs(phi[0]) if self.joint == "distance" else jnp.sqrt(jnp.sum(phi[:3] ** 2) + 1e-30)

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution()

    def start_problem(self, ctx: Context) -> str | None:
        return check_closure(self, ctx.model, ctx.q)

    # -- the rows, from the tree's kinematics -----------------------------------------------------

    @staticmethod
    def _frame(model, kin: Kinematics, body, point, dtype):
        """World position, velocity and rotation of a body point, and the body's world angular velocity."""
        point = jnp.asarray(point, dtype)
        if body == "world":
            z = jnp.zeros(3, dtype)
            return point, z, jnp.eye(3, dtype=dtype), z
        i = model.index(body)
        R = kin.R[i]
        pos = kin.p[i] + R @ point
        if kin.twist is None:
            return pos, None, R, None
        tw = kin.twist[i]
        return pos, R @ (tw[:3] + jnp.cross(tw[3:], point)), R, R @ tw[3:]

    def rows(self, model, q, v=None):
        """φ(q) (n_rows,) and, with v, the velocity rows c = J_c v (n_rows,)."""
        dtype = jnp.result_type(q, float)
        kin = Kinematics.compute(model, q, v)
        pa, va, Ra, wa = self._frame(model, kin, self.body_a, self.point_a, dtype)
        pb, vb, Rb, wb = self._frame(model, kin, self.body_b, self.point_b, dtype)
        if self.joint == "distance":
            d = pa - pb
            dist = jnp.sqrt(jnp.sum(d * d) + 1e-30)
            phi = (dist - self.length)[None]
            return (phi, None) if v is None else (phi, (d @ (va - vb) / dist)[None])
        phi = [pa - pb]
        vel = None if v is None else [va - vb]
        if self.joint == "revolute":
            na = Ra @ jnp.asarray(self.axis_a, dtype)
            nb = Rb @ jnp.asarray(self.axis_b, dtype)
            na, nb = na / jnp.linalg.norm(na), nb / jnp.linalg.norm(nb)
            e1a, e2a = _perpendiculars(jnp.asarray(self.axis_a, dtype) / jnp.linalg.norm(jnp.asarray(self.axis_a, dtype)))
            e = jnp.stack([Ra @ e1a, Ra @ e2a])
            phi.append(e @ nb)
            if v is not None:
                vel.append(jnp.cross(e, nb[None]) @ (wa - wb))
        phi = jnp.concatenate(phi)
        return (phi, None) if v is None else (phi, jnp.concatenate(vel))

    def terms(self, model, kin: Kinematics, abias, jacobians):
        """φ (n_rows,), J_c (n_rows, nv) and J̇_c v (n_rows,) written out from the kinematics already
        computed: ``abias`` the bodies' bias accelerations (J̇ v, body frames) and ``jacobians`` a
        function body name -> its body Jacobian.  The same as :func:`jaxmbd.dynamics.constrained.loop_terms`
        by automatic differentiation (tests/test_loops.py, 1e-12), without three passes over the tree.

        A body point r moves at R (v + ω × r) and accelerates, at v̇ = 0, by R (a_v + ω × v + α × r +
        ω × (ω × r)) with (a_v, α) its bias acceleration; a revolute row (e_k × n_b)·(ω_a − ω_b) changes
        by ((ω_a × e_k) × n_b + e_k × (ω_b × n_b))·(ω_a − ω_b) + (e_k × n_b)·(α_a − α_b)."""
        dtype = kin.R.dtype
        nv = model.nv

        def side(body, point):
            point = jnp.asarray(point, dtype)
            if body == "world":
                z3 = jnp.zeros(3, dtype)
                return point, jnp.eye(3, dtype=dtype), z3, jnp.zeros((3, nv), dtype), jnp.zeros((3, nv), dtype), z3, z3, z3
            i = model.index(body)
            R, tw, a = kin.R[i], kin.twist[i], abias[i]
            Jb = jacobians(body)
            v, w = tw[:3], tw[3:]
            skew = jnp.array([[0.0, -point[2], point[1]], [point[2], 0.0, -point[0]], [-point[1], point[0], 0.0]], dtype)
            J_point = R @ (Jb[:3] - skew @ Jb[3:])  # R (v + ω × r) = R (J_v − [r]× J_ω) v̇
            acc = R @ (a[:3] + jnp.cross(w, v) + jnp.cross(a[3:], point) + jnp.cross(w, jnp.cross(w, point)))
            return kin.p[i] + R @ point, R, R @ w, J_point, R @ Jb[3:], acc, R @ a[3:], R @ (v + jnp.cross(w, point))

        pa, Ra, wa, Jpa, Jwa, acc_a, al_a, va = side(self.body_a, self.point_a)
        pb, Rb, wb, Jpb, Jwb, acc_b, al_b, vb = side(self.body_b, self.point_b)
        if self.joint == "distance":  # d/dt (ê · Δv) = ê · Δa + (|Δv|² − (ê · Δv)²) / |d|
            d = pa - pb
            dist = jnp.sqrt(jnp.sum(d * d) + 1e-30)
            e = d / dist
            dv = va - vb
            return ((dist - self.length)[None], (e @ (Jpa - Jpb))[None],
                    (e @ (acc_a - acc_b) + (dv @ dv - (e @ dv) ** 2) / dist)[None])
        phi, J, bias = [pa - pb], [Jpa - Jpb], [acc_a - acc_b]
        if self.joint == "revolute":
            nb = Rb @ jnp.asarray(self.axis_b, dtype)
            nb = nb / jnp.linalg.norm(nb)
            axis = jnp.asarray(self.axis_a, dtype)
            e1a, e2a = _perpendiculars(axis / jnp.linalg.norm(axis))
            e = jnp.stack([Ra @ e1a, Ra @ e2a])
            d = jnp.cross(e, nb[None])  # (2, 3)
            phi.append(e @ nb)
            J.append(d @ (Jwa - Jwb))
            de = jnp.cross(jnp.cross(wa[None], e), nb[None]) + jnp.cross(e, jnp.cross(wb, nb)[None])
            bias.append(de @ (wa - wb) + d @ (al_a - al_b))
        return jnp.concatenate(phi), jnp.concatenate(J), jnp.concatenate(bias)

    def points(self, model, q):
        """World positions of the loop's two points."""
        dtype = jnp.result_type(q, float)
        kin = Kinematics.compute(model, q)
        return (self._frame(model, kin, self.body_a, self.point_a, dtype)[0], self._frame(model, kin, self.body_b, self.point_b, dtype)[0])

    def moment_directions(self, model, q):
        """(rows, 3): the world moment on body a of a unit multiplier of each row (zero for the
        point rows)."""
        return self.moment_directions_from(model, Kinematics.compute(model, q))

    def moment_directions_from(self, model, kin: Kinematics):
        dtype = kin.R.dtype
        zero = jnp.zeros((3, 3), dtype)
        if self.joint == "distance":
            return jnp.zeros((1, 3), dtype)
        if self.joint == "ball":
            return zero
        _, _, Ra, _ = self._frame(model, kin, self.body_a, self.point_a, dtype)
        _, _, Rb, _ = self._frame(model, kin, self.body_b, self.point_b, dtype)
        nb = Rb @ jnp.asarray(self.axis_b, dtype)
        nb = nb / jnp.linalg.norm(nb)
        e1a, e2a = _perpendiculars(jnp.asarray(self.axis_a, dtype) / jnp.linalg.norm(jnp.asarray(self.axis_a, dtype)))
        e = jnp.stack([Ra @ e1a, Ra @ e2a])
        return jnp.concatenate([zero, jnp.cross(e, nb[None])])

    def output_units(self, model) -> dict:
        return {"force": "N", "moment": "N m", "error": "m", "residual": ""}

    def valid_ranges(self, model) -> tuple:
        return (ValidRange("error", "loop's closure error", "closed kinematic loop",
                           "the loop's points drift more than 1 mm apart: the step is too coarse for the drift's "
                           "correction (baumgarte) and the constraint forces lag", upper=1e-3),
                ValidRange("residual", "constraint solve's relative residual", "closed kinematic loop",
                           "the loops are singular or over-constrained here (a linkage at a dead point): the "
                           "constraint forces are not unique", upper=1e-6),)


def check_closure(loop: Loop, model, q0, tol: float = 1e-6) -> str | None:
    """Why ``loop`` cannot close at q0 (its points more than ``tol`` m apart, or its axes not
    parallel), or None."""
    phi, _ = loop.rows(model, jnp.asarray(q0))
    phi = np.asarray(phi)
    gap = abs(float(phi[0])) if loop.joint == "distance" else float(np.linalg.norm(phi[:3]))
    if gap > tol:
        if loop.joint == "distance":
            return f"loop {loop.name!r} does not close at q0: its points are {gap:.4g} m off its length {float(loop.length):g} m"
        return f"loop {loop.name!r} does not close at q0: its points are {gap:.4g} m apart"
    if loop.joint == "revolute" and np.max(np.abs(phi[3:])) > tol:
        return f"loop {loop.name!r} does not close at q0: its axes are {np.degrees(np.arcsin(min(1.0, np.max(np.abs(phi[3:]))))):.3g}° apart"
    return None

