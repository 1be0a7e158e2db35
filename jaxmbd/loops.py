"""Closed kinematic loops: cut joints that close loops of the tree.

A loop joins a point of body a to a point of body b (either may be ``"world"``) with the constraint of
a joint the tree does not contain:

* ``ball``: the two points coincide (3 rows);
* ``revolute``: the points coincide and the axes, ``axis_a`` in a's frame and ``axis_b`` in b's, stay
  parallel (5 rows);
* ``prismatic``: b's point stays on the line through a's point along a's axis, the axes stay parallel and
  the references (``reference_a``, ``reference_b``: directions across the axes) stay parallel, so b
  neither turns nor leaves the line (5 rows);
* ``weld``: the points coincide, the axes and the references stay parallel (6 rows);
* ``distance``: the points stay ``length`` apart: a rigid strut, 1 row; its force acts along the strut.

The tree keeps its coordinates; the loops add constraint forces.  The rows of a revolute, prismatic or
weld are built from the unit vectors of a's frame across its axis, (e₁, e₂): the axes' rows are
e_k · n_b, a prismatic's line rows e_k · (p_a − p_b) and the twist row (n_a × r_a) · r_b.

**Dynamics.**  With M the tree's mass matrix, b = τ − h(q, v) + Jᵀ f_ext the generalised force
without constraints, and the loops' rows φ(q) = 0 with velocity rows J v = 0 (RBDA ch. 8, the
method of Lagrange multipliers on the tree's coordinates):

    M v̇ = b + J_cᵀ λ,    J_c v̇ = γ = −J̇_c v − 2 ζ ω J_c v − ω² φ

so λ = S⁻¹ (γ − J_c M⁻¹ b) with S = J_c M⁻¹ J_cᵀ, and v̇ = M⁻¹ (b + J_cᵀ λ).  The right-hand side γ
holds the constraint's acceleration with Baumgarte's stabilisation: ω = ``baumgarte`` (rad/s, default
10) and ζ = 1, so a drift of the constraint from roundoff or a coarse step decays with a time
constant of 1/ω and the exact solution is not changed (φ = J v = 0 on it).  S, scaled to a unit
diagonal, is solved by four proximal iterations on S + μ I (μ = 1e4 ε, 2e-12 in float64, as
Pinocchio's and MuJoCo's regularised solves), so rows that the tree already satisfies (a planar linkage closed by a
ball: the out-of-plane row is empty) get no force, and a singular set is reported rather than a NaN.

Why this route: the machines here have tens of coordinates and a few loops, where the mass matrix and
two small symmetric solves cost less than they would in a long chain (written out as eliminations up to 12
unknowns, which XLA fuses, LAPACK's Cholesky beyond), and the same equations serve the hull's coupled added mass
(``System._loop_solve``).  M and the bias forces come from the recursions (CRBA, RNEA) up to 12 coordinates and
beyond from the bodies' world-frame Jacobians and inertias in one product, which also give the loops' rows their
Jacobian columns and bias accelerations (:func:`jaxmbd.dynamics.coupled.world_equations`).  A tree without loops
keeps the articulated-body algorithm (O(n)) untouched.  The four-bar costs 0.79x MuJoCo's ``mj_forward`` on an AMD
EPYC and 1.2x on an Intel Xeon (BENCHMARKS.md); an O(n) route for long chains (RBDA 8.5: the articulated-body
algorithm with one extra solve per row) is not built.

The solve is :func:`jaxmbd.dynamics.constrained.constrained_accelerations`.  J_c and J̇_c v are written
out from the tree's kinematics and bias accelerations (:meth:`Loop.terms`); the reference,
:func:`jaxmbd.dynamics.constrained.loop_terms`, differentiates the velocity rows c(q, v) = J_c v
(J_c in v, J̇_c v in q along q̇), and they agree to 1e-12 (tests/test_loops.py).

**Outputs** of each loop: ``force`` (3,) N, the force the loop applies on body a at its point (world
axes; body b feels its opposite at its point), ``moment`` (3,) N m (world axes, on body a),
``error`` m (how far the points are apart; a prismatic's: b's point off a's axis), ``residual`` (the
solve's relative residual: above 1e-6 the loops cannot hold together here, and a run says so) and
``conditioning`` (the smallest Cholesky pivot of the rows' Schur complement over the largest, each
loop's points' rows scaled by one number and each direction row by its own: below 1e-4 the loops are
near a singular configuration, and a run says so).

Singular configurations.  The conditioning falls as the square of the angle to one: 0.87 θ² for a
parallelogram four-bar θ from lying flat (tests/test_loops.py), so 1e-4 is about half a degree.  At a
dead point a row loses its stiffness against its siblings (the parallelogram flat: every lever arm lies
along one row's direction): its force grows as the configuration nears it, the geometry no longer decides
which way the linkage goes on (a parallelogram may fold into an antiparallelogram), and a row with no
stiffness left gets no force; if it is asked to accelerate there (a pendulum moving through the line of
a strut that holds it), the residual says the loop cannot hold.  Rows that become nearly dependent (two
struts holding a body coming into line) give a small conditioning too: their multipliers grow and lose
digits, and the motion stays finite.  A loop of one row (a strut) is its own scale: a strut near its
dead point keeps its conditioning, and its large force (the toggle's mechanical advantage) is computed
to full precision; the residual reports it when the strut can no longer hold.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .errors import InputError
from .fields import parameter, setting
from .kinematics import Kinematics
from .system import Context, Element
from .validity import ValidRange

LOOP_KINDS = ("ball", "revolute", "prismatic", "weld", "distance")
_ROWS = {"ball": 3, "revolute": 5, "prismatic": 5, "weld": 6, "distance": 1}


def _perpendiculars(n):
    """Two unit vectors perpendicular to the unit vector n and to each other."""
    a = jnp.where(jnp.abs(n[0]) < 0.9, jnp.array([1.0, 0.0, 0.0], n.dtype), jnp.array([0.0, 1.0, 0.0], n.dtype))
    e1 = jnp.cross(n, a)
    e1 = e1 / jnp.linalg.norm(e1)
    return e1, jnp.cross(n, e1)


def _unit(x):
    return x / jnp.linalg.norm(x)


def _direction_problem(joint, side, axis, reference):
    """(key, problem) if a loop's axis on ``side`` is zero or its reference is zero or along the axis."""
    n, r = np.asarray(axis, float), np.asarray(reference, float)
    if joint in ("revolute", "prismatic", "weld") and not np.linalg.norm(n) > 0.0:
        return f"axis_{side}", "expected a non-zero direction"
    if joint in ("prismatic", "weld") and not np.linalg.norm(np.cross(n, r)) > 1e-6 * np.linalg.norm(n) * np.linalg.norm(r):
        return f"reference_{side}", f"expected a direction across axis_{side} (it is along it or zero)"
    return None


class _Side(NamedTuple):
    """One side of a loop in world axes: its point p, rotation R, angular velocity w, point velocity v; and
    for the written-out rows its point and angular Jacobians and bias accelerations (at v̇ = 0)."""

    p: jax.Array
    R: jax.Array
    w: jax.Array | None = None
    v: jax.Array | None = None
    Jp: jax.Array | None = None
    Jw: jax.Array | None = None
    acc: jax.Array | None = None
    alpha: jax.Array | None = None


class Loop(Element):
    """A cut joint closing a kinematic loop (:mod:`jaxmbd.loops`; docs/system_file.md, ``[[loops]]``): body
    a's ``point_a`` on body b's ``point_b`` (body frames; a world point for ``"world"``), and for a
    ``revolute`` the axes kept parallel; a ``prismatic`` keeps b's point on a's axis and the two bodies'
    axes and references parallel; a ``weld`` holds the points together and the axes and references
    parallel."""
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`[[loops]]`',
         "the loop's points within 1 mm (`error`); the solve's residual under 1e-6; its conditioning above 1e-4 "
         "(about half a degree from a dead point)",
         "a step too coarse for the drift's correction; loops that cannot hold together (in conflict, or moving through a dead point); a "
         'singular configuration (a dead point, or rows nearly dependent: the loop forces amplified and not unique)'),
    )

    kind: ClassVar[str] = "loop"
    section: ClassVar[str] = "loops"

    name: str = eqx.field(static=True)
    body_a: str = setting("body_or_world", doc="body a")
    body_b: str = setting("body_or_world", doc="body b")
    point_a: jax.Array = parameter(unit="m", shape=(3,), doc="the joint's point on body a, its frame")
    point_b: jax.Array = parameter(unit="m", shape=(3,), doc="the same point on body b, its frame")
    joint: str = setting("string", default="ball", choices=LOOP_KINDS,
                         doc='"ball" (3 rows), "revolute" (5), "prismatic" (5: b\'s point slides along a\'s axis), '
                             '"weld" (6) or "distance" (1: a rigid strut of `length` between the points)')
    axis_a: jax.Array = parameter(unit="", shape=(3,), default=(0.0, 0.0, 1.0),
                                  doc="revolute, prismatic, weld: the axis in body a's frame")
    axis_b: jax.Array = parameter(unit="", shape=(3,), default=(0.0, 0.0, 1.0),
                                  doc="revolute, prismatic, weld: the axis in body b's frame, kept parallel to a's")
    reference_a: jax.Array = parameter(unit="", shape=(3,), default=(1.0, 0.0, 0.0),
                                       doc="prismatic, weld: a direction across the axis in body a's frame (its part along the axis is dropped)")
    reference_b: jax.Array = parameter(unit="", shape=(3,), default=(1.0, 0.0, 0.0),
                                       doc="prismatic, weld: the direction in body b's frame kept parallel to reference_a (no turn about the axis)")
    length: jax.Array = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="distance: the strut's length, pin to pin")
    baumgarte: jax.Array = parameter(unit="rad/s", bound=(">=", 0.0), default=10.0, doc="ω of the drift's correction (critically damped)")

    def __check_init__(self):
        if self.body_a == self.body_b:
            raise InputError(f"loop {self.name!r}: body_a and body_b are both {self.body_a!r}; a loop joins two bodies")
        if self.joint not in LOOP_KINDS:
            raise InputError(f"loop {self.name!r}: joint must be one of {', '.join(LOOP_KINDS)}, got {self.joint!r}")

    @property
    def n_rows(self) -> int:
        return _ROWS[self.joint]

    @property
    def row_kinds(self) -> tuple:
        """Each row's kind: 0 for the points' rows (m), which share one scale in the conditioning, 1 for the
        directions' (rad), each its own; the rows are the points' first (3, a prismatic's line 2, a strut
        1), then the axes' and references'."""
        points = {"ball": 3, "revolute": 3, "prismatic": 2, "weld": 3, "distance": 1}[self.joint]
        return (0,) * points + (1,) * (self.n_rows - points)

    @classmethod
    def file_rules(cls, values, given, fail):
        joint = values.get("joint", "ball")
        if "length" in given and joint != "distance":
            fail("length", 'only a "distance" loop has a length')
        for key in ("axis_a", "axis_b"):
            if key in given and joint not in ("revolute", "prismatic", "weld"):
                fail(key, 'only a "revolute", "prismatic" or "weld" loop has axes')
        for key in ("reference_a", "reference_b"):
            if key in given and joint not in ("prismatic", "weld"):
                fail(key, 'only a "prismatic" or "weld" loop has references across its axes')
        for side in ("a", "b"):
            problem = _direction_problem(joint, side, values.get(f"axis_{side}", (0.0, 0.0, 1.0)),
                                         values.get(f"reference_{side}", (1.0, 0.0, 0.0)))
            if problem:
                fail(*problem)

    def direction_problem(self) -> str | None:
        """What is wrong with the loop's directions, or keys its joint does not use, for a loop built in
        Python (a file's are checked as it is read), or None: one line naming the loop."""
        try:
            values = {k: np.asarray(getattr(self, k), float) for k in ("axis_a", "axis_b", "reference_a", "reference_b", "length")}
        except (TypeError, jax.errors.TracerArrayConversionError):
            return None  # traced: checked where it was built
        axes, refs = self.joint in ("revolute", "prismatic", "weld"), self.joint in ("prismatic", "weld")
        unused = [("length", self.joint != "distance" and values["length"] != 0.0, 'only a "distance" loop has a length'),
                  ("axis_a", not axes and np.any(values["axis_a"] != (0.0, 0.0, 1.0)), 'only a "revolute", "prismatic" or "weld" loop has axes'),
                  ("axis_b", not axes and np.any(values["axis_b"] != (0.0, 0.0, 1.0)), 'only a "revolute", "prismatic" or "weld" loop has axes'),
                  ("reference_a", not refs and np.any(values["reference_a"] != (1.0, 0.0, 0.0)), 'only a "prismatic" or "weld" loop has references'),
                  ("reference_b", not refs and np.any(values["reference_b"] != (1.0, 0.0, 0.0)), 'only a "prismatic" or "weld" loop has references')]
        for key, bad, why in unused:
            if bad:
                return f"loop {self.name!r}: {key}: {why}"
        for side in ("a", "b"):
            problem = _direction_problem(self.joint, side, values[f"axis_{side}"], values[f"reference_{side}"])
            if problem:
                return f"loop {self.name!r}: {problem[0]}: {problem[1]}"
        return None

    def _basis(self, dtype):
        """Body-frame unit vectors: a's axis and two across it (for a prismatic or weld, a's reference r_a and
        n_a × r_a), b's axis and b's reference."""
        na = _unit(jnp.asarray(self.axis_a, dtype))
        nb = _unit(jnp.asarray(self.axis_b, dtype))
        if self.joint in ("prismatic", "weld"):
            ra = jnp.asarray(self.reference_a, dtype)
            ra = _unit(ra - (ra @ na) * na)
            rb = jnp.asarray(self.reference_b, dtype)
            rb = _unit(rb - (rb @ nb) * nb)
            return na, ra, jnp.cross(na, ra), nb, rb
        e1, e2 = _perpendiculars(na)
        return na, e1, e2, nb, None

    def _layout(self, A: _Side, B: _Side, dtype):
        """The loop's rows as (point rows: 3 or 0, line directions (k, 3) fixed in a, orientation pairs
        (u fixed in a, w fixed in b), world), from which every quantity below follows."""
        _, e1, e2, nb, rb = self._basis(dtype)
        across = jnp.stack([A.R @ e1, A.R @ e2])
        nbw = B.R @ nb
        pairs = []
        if self.joint in ("revolute", "prismatic", "weld"):
            pairs = [(across[0], nbw), (across[1], nbw)]
        if self.joint in ("prismatic", "weld"):
            pairs.append((across[1], B.R @ rb))  # s_a · r_b: no turn about the axis
        point = self.joint in ("ball", "revolute", "weld")
        lines = across if self.joint == "prismatic" else None
        return point, lines, pairs

    def gap(self, phi):
        """How far the loop is from closing (m), from its rows: the points apart (a prismatic's: b's point off
        a's axis)."""
        if self.joint == "distance":
            return jnp.abs(phi[0])
        k = 2 if self.joint == "prismatic" else 3
        return jnp.sqrt(jnp.sum(phi[:k] ** 2) + 1e-30)

    def start_problem(self, ctx: Context) -> str | None:
        return check_closure(self, ctx.model, ctx.q)

    # -- the rows, from the tree's kinematics -----------------------------------------------------

    @staticmethod
    def _frame(model, kin: Kinematics, body, point, dtype) -> _Side:
        """World position, rotation, angular velocity and point velocity of a body point."""
        point = jnp.asarray(point, dtype)
        if body == "world":
            z = jnp.zeros(3, dtype)
            return _Side(point, jnp.eye(3, dtype=dtype), z, z)
        i = model.index(body)
        R = kin.rotation(i)
        pos = kin.origin(i) + R @ point
        if kin.twist is None:
            return _Side(pos, R)
        tw = kin.body_twist(i)
        return _Side(pos, R, R @ tw[3:], R @ (tw[:3] + jnp.cross(tw[3:], point)))

    def rows(self, model, q, v=None):
        """φ(q) (n_rows,) and, with v, the velocity rows c = J_c v (n_rows,)."""
        dtype = jnp.result_type(q, float)
        kin = Kinematics.compute(model, q, v)
        A = self._frame(model, kin, self.body_a, self.point_a, dtype)
        B = self._frame(model, kin, self.body_b, self.point_b, dtype)
        d = A.p - B.p
        if self.joint == "distance":
            dist = jnp.sqrt(jnp.sum(d * d) + 1e-30)
            phi = (dist - self.length)[None]
            return (phi, None) if v is None else (phi, (d @ (A.v - B.v) / dist)[None])
        point, lines, pairs = self._layout(A, B, dtype)
        phi, vel = [], []
        if point:
            phi.append(d)
            vel.append(A.v - B.v if v is not None else None)
        if lines is not None:  # e · d with e turning with a
            phi.append(lines @ d)
            if v is not None:
                vel.append(jnp.cross(A.w[None], lines) @ d + lines @ (A.v - B.v))
        for u, w in pairs:
            phi.append((u @ w)[None])
            if v is not None:
                vel.append((jnp.cross(u, w) @ (A.w - B.w))[None])
        phi = jnp.concatenate(phi)
        return (phi, None) if v is None else (phi, jnp.concatenate(vel))

    def terms(self, model, kin: Kinematics, abias, columns):
        """φ (n_rows,), J_c (n_rows, nv) and J̇_c v (n_rows,) written out from the kinematics already
        computed: ``abias`` the bodies' bias accelerations (J̇ v, body frames) and ``columns`` the joints'
        world Jacobian columns (V, W) (:func:`jaxmbd.kinematics.world_jacobian_columns`).  The same as
        :func:`jaxmbd.dynamics.constrained.loop_terms` by automatic differentiation (tests/test_loops.py,
        1e-12), without three passes over the tree.

        A body point r moves at R (v + ω × r) and accelerates, at v̇ = 0, by R (a_v + ω × v + α × r +
        ω × (ω × r)) with (a_v, α) its bias acceleration.  An orientation row u · w (u turning with a, w with
        b) has the velocity row (u × w)·(ω_a − ω_b), which changes by ((ω_a × u) × w + u × (ω_b × w))·(ω_a −
        ω_b) + (u × w)·(α_a − α_b).  A prismatic's line row e · d (e turning with a, d = p_a − p_b) has the
        velocity row (ω_a × e)·d + e·Δv, which changes by (α_a × e + ω_a × (ω_a × e))·d + 2 (ω_a × e)·Δv + e·Δa."""
        from .kinematics import ancestor_columns

        dtype = kin.R.dtype
        nv = model.nv
        V, W = columns

        def side(body, point) -> _Side:
            point = jnp.asarray(point, dtype)
            if body == "world":
                z3 = jnp.zeros(3, dtype)
                z = jnp.zeros((3, nv), dtype)
                return _Side(point, jnp.eye(3, dtype=dtype), z3, z3, z, z, z3, z3)
            i = model.index(body)
            R, tw, a = kin.rotation(i), kin.body_twist(i), abias[i]
            mask = ancestor_columns(model, body)
            Vi, Wi = V * mask, W * mask
            x = kin.origin(i) + R @ point
            v, w = tw[:3], tw[3:]
            acc = R @ (a[:3] + jnp.cross(w, v) + jnp.cross(a[3:], point) + jnp.cross(w, jnp.cross(w, point)))
            return _Side(x, R, R @ w, R @ (v + jnp.cross(w, point)),
                         Vi - jnp.cross(x[:, None], Wi, axis=0),  # J_x = V − [x]× W over the body's ancestors
                         Wi, acc, R @ a[3:])

        A = side(self.body_a, self.point_a)
        B = side(self.body_b, self.point_b)
        d, dv, da = A.p - B.p, A.v - B.v, A.acc - B.acc
        if self.joint == "distance":  # d/dt (ê · Δv) = ê · Δa + (|Δv|² − (ê · Δv)²) / |d|
            dist = jnp.sqrt(jnp.sum(d * d) + 1e-30)
            e = d / dist
            return ((dist - self.length)[None], (e @ (A.Jp - B.Jp))[None], (e @ da + (dv @ dv - (e @ dv) ** 2) / dist)[None])
        point, lines, pairs = self._layout(A, B, dtype)
        phi, J, bias = [], [], []
        if point:
            phi.append(d)
            J.append(A.Jp - B.Jp)
            bias.append(da)
        if lines is not None:
            we = jnp.cross(A.w[None], lines)
            phi.append(lines @ d)
            J.append(lines @ (A.Jp - B.Jp) + jnp.cross(lines, d[None]) @ A.Jw)
            bias.append((jnp.cross(A.alpha[None], lines) + jnp.cross(A.w[None], we)) @ d + 2.0 * we @ dv + lines @ da)
        dw, dalpha = A.w - B.w, A.alpha - B.alpha
        for u, w in pairs:
            uw = jnp.cross(u, w)
            phi.append((u @ w)[None])
            J.append((uw @ (A.Jw - B.Jw))[None])
            bias.append(((jnp.cross(jnp.cross(A.w, u), w) + jnp.cross(u, jnp.cross(B.w, w))) @ dw + uw @ dalpha)[None])
        return jnp.concatenate(phi), jnp.concatenate(J), jnp.concatenate(bias)

    def wrench_map(self, model, kin: Kinematics):
        """(F_a, M_a, M_b), each (n_rows, 3), world axes: the force on body a at its point, the moment on body a
        and the moment on body b of a unit multiplier of each row.  Body b feels −F_a at its point.  The
        same split of J_cᵀ λ between the bodies as the rows' Jacobian: a prismatic's line row puts the moment
        e × d on a alone (its force acts where b's point is)."""
        dtype = kin.R.dtype
        A = self._frame(model, kin, self.body_a, self.point_a, dtype)
        B = self._frame(model, kin, self.body_b, self.point_b, dtype)
        d = A.p - B.p
        if self.joint == "distance":
            z = jnp.zeros((1, 3), dtype)
            return (d / jnp.sqrt(jnp.sum(d * d) + 1e-30))[None], z, z
        point, lines, pairs = self._layout(A, B, dtype)
        F, Ma, Mb = [], [], []
        if point:
            F.append(jnp.eye(3, dtype=dtype))
            Ma.append(jnp.zeros((3, 3), dtype))
            Mb.append(jnp.zeros((3, 3), dtype))
        if lines is not None:
            F.append(lines)
            Ma.append(jnp.cross(lines, d[None]))
            Mb.append(jnp.zeros((2, 3), dtype))
        for u, w in pairs:
            uw = jnp.cross(u, w)[None]
            F.append(jnp.zeros((1, 3), dtype))
            Ma.append(uw)
            Mb.append(-uw)
        return jnp.concatenate(F), jnp.concatenate(Ma), jnp.concatenate(Mb)

    def output_units(self, model) -> dict:
        return {"force": "N", "moment": "N m", "error": "m", "residual": "", "conditioning": ""}

    def valid_ranges(self, model) -> tuple:
        return (ValidRange("error", "loop's closure error", "closed kinematic loop",
                           "the loop's points drift more than 1 mm apart: the step is too coarse for the drift's "
                           "correction (baumgarte) and the constraint forces lag", upper=1e-3),
                ValidRange("residual", "constraint solve's relative residual", "closed kinematic loop",
                           "the loops cannot hold together here (over-constrained, or a linkage moving through a "
                           "dead point, where a row loses its stiffness): the motion leaves the constraint", upper=1e-6),
                ValidRange("conditioning", "constraint rows' conditioning", "closed kinematic loop",
                           "the loops are within about half a degree of a singular configuration (a dead point, where a "
                           "row loses its stiffness against its siblings: a parallelogram lying flat; or rows nearly "
                           "dependent: two struts coming into line): the geometry amplifies their forces a hundredfold "
                           "or more and no longer decides how they share the load, nor which way the linkage goes on",
                           lower=1e-4),)


def check_closure(loop: Loop, model, q0, tol: float = 1e-6) -> str | None:
    """Why ``loop`` cannot close at q0 (its points more than ``tol`` m apart or off the axis, its axes not
    parallel or, for a prismatic or weld, its references turned about the axis; or its directions
    wrong: :meth:`Loop.direction_problem`), or None."""
    problem = loop.direction_problem()
    if problem:
        return problem
    phi, _ = loop.rows(model, jnp.asarray(q0))
    phi = np.asarray(phi)
    if not np.all(np.isfinite(phi)):
        return f"loop {loop.name!r}: its rows are not finite at q0 (a body or direction is not finite)"
    gap = float(loop.gap(phi))
    if gap > tol:
        if loop.joint == "distance":
            return f"loop {loop.name!r} does not close at q0: its points are {gap:.4g} m off its length {float(loop.length):g} m"
        if loop.joint == "prismatic":
            return f"loop {loop.name!r} does not close at q0: body b's point is {gap:.4g} m off body a's axis"
        return f"loop {loop.name!r} does not close at q0: its points are {gap:.4g} m apart"
    k = {"revolute": 3, "prismatic": 2, "weld": 3}.get(loop.joint)
    if k is None:
        return None

    def deg(x):
        return np.degrees(np.arcsin(min(1.0, float(np.max(np.abs(x))))))

    if np.max(np.abs(phi[k : k + 2])) > tol:
        return f"loop {loop.name!r} does not close at q0: its axes are {deg(phi[k : k + 2]):.3g}° apart"
    if loop.joint != "revolute" and abs(phi[k + 2]) > tol:
        return f"loop {loop.name!r} does not close at q0: its references are turned {deg(phi[k + 2:]):.3g}° about the axis"
    # the rows hold the directions parallel or opposite: opposite is another joint than the one given
    dtype = jnp.result_type(jnp.asarray(q0), float)
    kin = Kinematics.compute(model, jnp.asarray(q0))
    A = loop._frame(model, kin, loop.body_a, loop.point_a, dtype)
    B = loop._frame(model, kin, loop.body_b, loop.point_b, dtype)
    na, ra, _, nb, rb = loop._basis(dtype)
    if float((A.R @ na) @ (B.R @ nb)) < 0.0:
        return f"loop {loop.name!r} does not close at q0: axis_b points against axis_a (180° apart)"
    if loop.joint != "revolute" and float((A.R @ ra) @ (B.R @ rb)) < 0.0:
        return f"loop {loop.name!r} does not close at q0: reference_b points against reference_a (turned 180° about the axis)"
    return None


def load_urdf_with_loops(path, *, floating: bool = False, gravity=(0.0, 0.0, -9.81), xml: str | None = None):
    """``(model, loops)``: a URDF file's tree (:func:`jaxmbd.load_urdf`) and the :class:`Loop` s that close
    it.  Two conventions close loops in a URDF (:func:`jaxmbd.model.urdf_tree_and_loops`): a cut joint, a
    ``<joint>`` whose child link already hangs from another joint (revolute and continuous close a
    revolute loop, prismatic a prismatic one, fixed a weld, at the child's origin), and Drake's
    ``<drake:ball_constraint>`` (a ball).  Bad directions are one-line errors."""
    from .joints import ModelError
    from .model import urdf_tree_and_loops

    model, specs = urdf_tree_and_loops(path, floating=floating, gravity=gravity, xml=xml)
    loops = tuple(Loop(**{k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in spec.items()}) for spec in specs)
    for lp in loops:
        problem = lp.direction_problem()
        if problem:
            raise ModelError(f"{path if xml is None else (path or '<urdf string>')}: {problem}")
    return model, loops
