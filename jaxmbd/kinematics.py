"""Forward kinematics: body poses, twists, point velocities and Jacobians.

Every body frame is placed by ``⁰M_i = ⁰M_λ(i) · placement_i · X_J(q_i)``
(λ(i) the parent).  Twists are body twists ``[v; ω]`` of the body frame
relative to the world, expressed in the body frame (Pinocchio's LOCAL).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from . import spatial
from .joints import Fixed, Prismatic, Revolute
from .model import Model


class JointState(NamedTuple):
    """Per-body quantities of one configuration (lists, one entry per body)."""

    R: list  # parent_R_i
    p: list  # origin of i in the parent frame
    S: list  # motion subspace (6, nv_i), body frame
    q: list
    v: list


def joint_states(model: Model, q, v=None) -> JointState:
    Rs, ps, Ss, qs, vs = [], [], [], [], []
    for i, j in enumerate(model.joints):
        qi = q[model.q_start[i] : model.q_start[i] + j.nq]
        R, p = j.placed_transform(model.placement_R[i], model.placement_p[i], qi)
        Rs.append(R)
        ps.append(p)
        Ss.append(j.motion_subspace(qi))
        qs.append(qi)
        vs.append(None if v is None else v[model.v_start[i] : model.v_start[i] + j.nv])
    return JointState(Rs, ps, Ss, qs, vs)


class Kinematics(NamedTuple):
    """The tree's motion at one (q, v), computed once and read by everything that needs it: the force
    elements (through :class:`jaxmbd.system.Context`), the dynamics, the joint wrenches and the body
    Jacobians of one right-hand side.

    ``joints``: each body's placement in its parent after its joint, its motion subspace S and its
    joint's q and v (:class:`JointState`); ``R``, ``p``: world placement of every body frame,
    (n, 3, 3) and (n, 3); ``twist``: body twists [v; ω] in body frames (n, 6), None without v; ``rows``: the
    same per body before stacking, which :meth:`rotation`, :meth:`origin` and :meth:`body_twist` read (an
    element's reads of one body then meet the stacks once in a reverse-mode gradient).
    Build it with :meth:`compute`; a function that takes one must be given the one of the same
    (q, v) (the dynamics' derivative rules differentiate through q and v, not through it).
    """

    joints: JointState
    R: Any
    p: Any
    twist: Any = None
    rows: Any = None  # (R, p, twist) of each body before stacking: tuples, or None

    def rotation(self, i: int):
        """Body i's world rotation (3, 3): its own row where kept, so that a reverse-mode gradient sums its uses'
        cotangents before placing them in the stack, not after one placement (a pad kernel) per use."""
        return self.R[i] if self.rows is None else self.rows[0][i]

    def origin(self, i: int):
        """Body i's world origin (3,), as :meth:`rotation`."""
        return self.p[i] if self.rows is None else self.rows[1][i]

    def body_twist(self, i: int):
        """Body i's twist [v; ω] in its frame (6,), as :meth:`rotation`."""
        return self.twist[i] if self.rows is None or self.rows[2] is None else self.rows[2][i]

    @classmethod
    def compute(cls, model: Model, q, v=None) -> Kinematics:
        js = joint_states(model, q, v)
        Rw, pw, tw = [], [], []
        for i, lam in enumerate(model.parents):
            vJ = None
            if v is not None:
                vJ = spatial.mv(js.S[i], js.v[i]) if model.joints[i].nv else jnp.zeros(6, dtype=q.dtype)
            if lam < 0:
                Rw.append(js.R[i])
                pw.append(js.p[i])
                tw.append(vJ)
            else:
                R, p = spatial.compose(Rw[lam], pw[lam], js.R[i], js.p[i])
                Rw.append(R)
                pw.append(p)
                if v is not None:
                    tw.append(spatial.inv_act_motion(js.R[i], js.p[i], tw[lam]) + vJ)  # v_i = ⁱX_λ v_λ + S_i q̇_i
        rows = (tuple(Rw), tuple(pw), None if v is None else tuple(tw))
        return cls(js, jnp.stack(Rw), jnp.stack(pw), None if v is None else jnp.stack(tw), rows)


def forward_kinematics(model: Model, q):
    """World placement of every body frame: ``(R, p)`` with shapes (n, 3, 3), (n, 3)."""
    kin = Kinematics.compute(model, q)
    return kin.R, kin.p


def body_twists(model: Model, q, v):
    """Body twists (n, 6): velocity of each body frame, expressed in it."""
    return Kinematics.compute(model, q, v).twist


def body_pose(model: Model, q, body: str):
    """World placement ``(R, p)`` of one body frame."""
    R, p = forward_kinematics(model, q)
    i = model.index(body)
    return R[i], p[i]


def point_position(model: Model, q, body: str, point):
    """World position of a point given in a body's frame."""
    R, p = body_pose(model, q, body)
    return p + R @ jnp.asarray(point)


def point_velocity(model: Model, q, v, body: str, point):
    """World velocity of a point given in a body's frame."""
    kin = Kinematics.compute(model, q, v)
    i = model.index(body)
    tw = kin.body_twist(i)
    return kin.rotation(i) @ (tw[:3] + spatial.cross(tw[3:], jnp.asarray(point)))


def body_jacobian(model: Model, q, body: str, kinematics: Kinematics | None = None):
    """J (6, nv) with body twist = J v, in the body frame (Pinocchio's LOCAL Jacobian);
    ``kinematics``: the :class:`Kinematics` of this q, if the caller has it."""
    js = joint_states(model, q) if kinematics is None else kinematics.joints
    i = model.index(body)
    J = jnp.zeros((6, model.nv), dtype=jnp.result_type(q, float))
    # walk from the body to the root, carrying the transform from each joint's frame into body i
    R, p = jnp.eye(3, dtype=J.dtype), jnp.zeros(3, dtype=J.dtype)  # ⁱM_k, k the current body
    k = i
    while k >= 0:
        S = js.S[k]
        if S.shape[1]:
            cols = jnp.stack([spatial.act_motion(R, p, S[:, c]) for c in range(S.shape[1])], -1)
            J = J.at[:, model.v_start[k] : model.v_start[k] + S.shape[1]].set(cols)
        # ⁱM_λ = ⁱM_k ᵏM_λ with ᵏM_λ the inverse of the parent placement of k
        Rk, pk = spatial.inverse(js.R[k], js.p[k])
        R, p = spatial.compose(R, p, Rk, pk)
        k = model.parents[k]
    return J


def world_jacobian_columns(model: Model, kinematics: Kinematics):
    """(V, W), each (3, nv), world axes: the velocity at the world's origin and the angular velocity of
    each joint coordinate's unit motion, all joints at once (no walk along a chain).  A point x fixed to
    body i moves at Σ (V + W × x) over the columns of i's ancestors (:func:`ancestor_columns`), and
    turns at Σ W: J_x = V_i − [x]× W_i."""
    kin = kinematics
    V, W = [], []
    for k, j in enumerate(model.joints):
        if not j.nv:
            continue
        S = kin.joints.S[k]
        R = kin.rotation(k)
        w = R @ S[3:]
        V.append(R @ S[:3] + jnp.cross(kin.origin(k)[:, None], w, axis=0))
        W.append(w)
    if not V:
        z = jnp.zeros((3, 0), dtype=kin.R.dtype)
        return z, z
    return jnp.concatenate(V, axis=1), jnp.concatenate(W, axis=1)


def ancestor_columns(model: Model, body: str) -> np.ndarray:
    """(nv,) 1 where a velocity coordinate moves ``body`` (its joint and its ancestors'), else 0."""
    mask = np.zeros(model.nv)
    k = model.index(body)
    while k >= 0:
        mask[model.v_start[k] : model.v_start[k] + model.joints[k].nv] = 1.0
        k = model.parents[k]
    return mask


def joint_placements(model: Model, q):
    """(R, p) (n, 3, 3), (n, 3) of every body in its parent: placement then joint; the revolute,
    prismatic and fixed joints of the whole tree in one batched expression each."""
    dtype = q.dtype
    groups: dict = {}
    for i, j in enumerate(model.joints):
        groups.setdefault(type(j), []).append(i)
    Rs, ps, order = [], [], []
    for kind, idx in groups.items():
        k = len(idx)
        if kind in (Revolute, Prismatic):
            ax = np.asarray([model.joints[i].axis for i in idx])
            x = q[np.asarray([model.q_start[i] for i in idx])]
            if kind is Revolute:
                Rs.append(spatial.axis_angle_to_matrix(jnp.asarray(ax, dtype=dtype), x))
                ps.append(jnp.zeros((k, 3), dtype=dtype))
            else:
                Rs.append(jnp.broadcast_to(jnp.eye(3, dtype=dtype), (k, 3, 3)))
                ps.append(ax * x[:, None])
        elif kind is Fixed:
            Rs.append(jnp.broadcast_to(jnp.eye(3, dtype=dtype), (k, 3, 3)))
            ps.append(jnp.zeros((k, 3), dtype=dtype))
        else:
            for i in idx:
                R, p = model.joints[i].transform(q[model.q_slice(i)])
                Rs.append(R[None])
                ps.append(p[None])
        order += idx
    inv = np.argsort(np.asarray(order))
    RJ, pJ = jnp.concatenate(Rs)[inv].astype(dtype), jnp.concatenate(ps)[inv].astype(dtype)
    return spatial.compose(model.placement_R, model.placement_p, RJ, pJ)


def compose_to_roots(parents, R, p):
    """Placements (n, 3, 3), (n, 3) of each body in its parent's frame (``parents[i] < 0``: in the
    base frame) -> in the base frame, by pointer doubling (⌈log₂ depth⌉ batched compositions)."""
    n = len(parents)
    up = np.asarray([n if lam < 0 else lam for lam in parents] + [n])
    R = jnp.concatenate([R, jnp.eye(3, dtype=R.dtype)[None]])
    p = jnp.concatenate([p, jnp.zeros((1, 3), dtype=p.dtype)])
    while np.any(up[:n] < n):
        R, p = spatial.compose(R[up], p[up], R, p)
        up = up[up]
    return R[:n], p[:n]


@eqx.filter_jit
def placements(model: Model, q):
    """:func:`forward_kinematics` as one compiled program, for setting a system up at a configuration: op by op,
    it is a few dozen small programs to compile from an empty cache."""
    return forward_kinematics(model, q)


def attitude(ctx, i: int):
    """(rpy, ω) of body ``i`` in a :class:`~jaxmbd.system.Context`: its z-y-x Euler angles in the world (the
    seakeeping convention) and its angular velocity in world axes, once per context, so that the elements on
    one hull (its hydrodynamics, its mooring or DP) share them and a reverse-mode gradient transposes them once."""
    R = ctx.kin.rotation(i)
    return ctx.once(("attitude", i), lambda: (spatial.matrix_to_rpy(R), spatial.mv(R, ctx.kin.body_twist(i)[3:])))
