"""The articulated-body algorithm as jaxmbd evaluates it: RBDA Table 7.1 (:func:`.reference.aba`)
with the same arithmetic, planned for XLA's many small kernels.

What differs from the reference, each exact to rounding:

* revolute and prismatic joints use their static axis (S = [0; a] or [a; 0]): U = I^A S is a
  combination of I^A's columns and D a scalar, no reduction kernels;
* 1-DOF bodies below a parent that share a depth in the tree are taken as one batch in every pass
  (``options.level_min_bodies``);
* long serial runs of 1-DOF joints are walked by ``lax.scan`` in one frame (:mod:`.serial_run`);
* the twists and gravity are serial along the tree, but the velocity products and bias forces are
  not: they are computed for all single bodies at once;
* a free joint's body acceleration is I^A⁻¹ u whatever its parent's (S = 1), so the 6x6 solves of
  all free bodies are one batched elimination (:func:`.linalg.spd_solve`).

The plan (which bodies go which way) is static: it depends on the tree and the options only.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..joints import Free, Prismatic, Revolute
from ..model import Model
from .linalg import spd_inverse, spd_solve
from .options import DynamicsOptions
from .serial_run import SerialRun
from .tree import level_groups, segments, tree_tables


class _Plan(NamedTuple):
    """Which bodies go which way (static)."""

    segs: list  # (s, e): single bodies and serial runs, in index order
    levels: list  # the segments by the depth of their first body
    groups: dict  # {depth: [body, ...]} batched 1-DOF bodies
    grouped: set  # the bodies of the groups
    single: list  # bodies not in a serial run
    below: list  # single bodies below a parent
    frees: list  # single bodies on free joints
    S_group: dict  # {depth: (k, 6)} the groups' constant motion subspaces


def _plan(model: Model, dtype, options: DynamicsOptions) -> _Plan:
    segs = segments(model, options)
    levels, groups = level_groups(model, segs, options)
    single = [s for s, e in segs if e - s == 1]
    S0 = tree_tables(model).S if groups else None
    S_group = {d: jnp.asarray(S0[:, [model.v_start[i] for i in grp]].T, dtype=dtype) for d, grp in groups.items()}
    return _Plan(segs, levels, groups, {i for grp in groups.values() for i in grp}, single,
                 [i for i in single if model.parents[i] >= 0],
                 [i for i in single if isinstance(model.joints[i], Free)], S_group)


@dataclasses.dataclass
class _Bodies:
    """Per-body quantities of one evaluation, filled pass by pass (lists indexed by body)."""

    n: dataclasses.InitVar[int]

    def __post_init__(self, n):
        for name in ("R", "p", "S", "X", "vJ", "cJ", "vel", "c", "gb", "Rw", "pA", "IA", "U", "Dinv", "u", "a"):
            setattr(self, name, [None] * n)
        self.runs = {}  # first body -> (SerialRun, RunKinematics, RunArticulated)
        self.qdd = {}  # first body of a segment -> its q̈


def forward_dynamics(model: Model, q, v, tau, f_ext, extra_inertia, options: DynamicsOptions, kinematics=None):
    """Joint accelerations v̇ (see :func:`.reference.aba` for the arguments; ``kinematics``: the
    :class:`~jaxmbd.kinematics.Kinematics` of (q, v), whose joint placements it then reads)."""
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    plan = _plan(model, dtype, options)
    b = _Bodies(model.n_bodies)
    _joint_motions(model, q, v, plan, b, dtype, None if kinematics is None else kinematics.joints)
    _velocity_pass(model, q, v, f_ext, plan, b, dtype, options)
    _bias_of_single_bodies(model, plan, f_ext, b)
    for _, e in plan.segs:  # a single body, or the last body of a run (the others are in the scan)
        b.IA[e - 1] = model.inertia[e - 1] if extra_inertia is None else model.inertia[e - 1] + extra_inertia[e - 1]
    _articulated_pass(model, tau, extra_inertia, plan, b)
    _acceleration_pass(model, plan, b, dtype)
    parts = [b.qdd[s] for s, e in plan.segs if s in b.qdd]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=model.inertia.dtype)


def _velocity_pass(model: Model, q, v, f_ext, plan: _Plan, b: _Bodies, dtype, options: DynamicsOptions):
    """Pass 1: twists and gravity in body axes, root to leaves (the runs' bias forces with them)."""
    for d, level in enumerate(plan.levels):
        if d in plan.groups:
            _twists_of_group(model, plan.groups[d], b)
        for s, e in level:
            if s in plan.grouped:
                continue
            if e - s == 1:
                _twist_of_body(model, s, b)
            else:
                _kinematics_of_run(model, SerialRun(model, s, e, dtype, options.scan_unroll), q, v, f_ext, b, dtype)


def _articulated_pass(model: Model, tau, extra_inertia, plan: _Plan, b: _Bodies):
    """Pass 2: articulated inertias and bias forces, leaves to root."""
    for d in reversed(range(len(plan.levels))):
        if d in plan.groups:
            _articulate_group(model, plan.groups[d], plan.S_group[d], tau, b)
        for s, e in reversed(plan.levels[d]):
            if s in plan.grouped:
                continue
            if e - s == 1:
                _articulate_body(model, s, tau, b)
            else:
                _articulate_run(model, s, e, tau, extra_inertia, b)


def _acceleration_pass(model: Model, plan: _Plan, b: _Bodies, dtype):
    """Pass 3: accelerations, root to leaves; the free bodies' 6x6 solves first, in one batch."""
    if plan.frees:
        a_free = spd_solve(jnp.stack([b.U[i] for i in plan.frees]), jnp.stack([b.u[i] for i in plan.frees]))
        for k, i in enumerate(plan.frees):
            b.a[i] = a_free[k]
    for d, level in enumerate(plan.levels):
        if d in plan.groups:
            _accelerate_group(model, plan.groups[d], plan.S_group[d], b)
        for s, e in level:
            if s in plan.grouped:
                continue
            if e - s == 1:
                _accelerate_body(model, s, b)
            else:
                _accelerate_run(model, s, e, b, dtype)


def _static_vector(axis, off, dtype):
    e = np.zeros(6)
    e[off : off + 3] = axis
    return jnp.asarray(e, dtype=dtype)


def _joint_twist(j, S, qi, vi, dtype):
    """(v_J, c_J) of one joint: S q̇ with the static structure of S where it has one (a static axis
    times q̇, the identity of a free joint), element-wise."""
    if not j.nv:
        vJ = jnp.zeros(6, dtype=dtype)
    elif isinstance(j, Revolute):
        vJ = _static_vector(j.axis, 3, dtype) * vi[0]
    elif isinstance(j, Prismatic):
        vJ = _static_vector(j.axis, 0, dtype) * vi[0]
    elif isinstance(j, Free):
        vJ = jnp.asarray(vi, dtype=dtype)
    else:
        vJ = spatial.mv(S, vi)
    return vJ, (j.bias(qi, vi) if j.nv else jnp.zeros_like(vJ))


def _joint_motions(model: Model, q, v, plan: _Plan, b: _Bodies, dtype, joints=None):
    """Placements, motion subspaces and joint twists of the single bodies (independent of each
    other), and ᴾX*_C = [[R, 0], [p̂R, R]] of those below a parent, built in one batch; the
    placements and subspaces from ``joints`` (a :class:`~jaxmbd.kinematics.JointState`) if given."""
    for i in plan.single:
        j = model.joints[i]
        qi, vi = q[model.q_slice(i)], v[model.v_slice(i)]
        if joints is None:
            b.R[i], b.p[i] = j.placed_transform(model.placement_R[i], model.placement_p[i], qi)
            b.S[i] = j.motion_subspace(qi)
        else:
            b.R[i], b.p[i], b.S[i] = joints.R[i], joints.p[i], joints.S[i]
        b.vJ[i], b.cJ[i] = _joint_twist(j, b.S[i], qi, vi, dtype)
    if plan.below:
        Xs = spatial.force_matrix(jnp.stack([b.R[i] for i in plan.below]), jnp.stack([b.p[i] for i in plan.below]))
        for k, i in enumerate(plan.below):
            b.X[i] = Xs[k]


def _with_gravity(vel, gb):
    """The parent's twist and its gravity as a motion [g; 0], stacked: moved to a child in one product."""
    return jnp.stack([vel, jnp.concatenate([gb, jnp.zeros_like(gb)])])


def _twists_of_group(model: Model, grp, b: _Bodies):
    """ᶜX_P [v_λ, [g_λ; 0]] for a whole group in one product."""
    moved = spatial.mtv(jnp.stack([b.X[i] for i in grp])[:, None],
                        jnp.stack([_with_gravity(b.vel[model.parents[i]], b.gb[model.parents[i]]) for i in grp]))
    for k, i in enumerate(grp):
        b.vel[i] = moved[k, 0] + b.vJ[i]
        b.gb[i] = moved[k, 1, :3]


def _twist_of_body(model: Model, i, b: _Bodies):
    lam = model.parents[i]
    if lam < 0:
        b.vel[i], b.c[i] = b.vJ[i], b.cJ[i]
        b.gb[i] = spatial.mtv(b.R[i], model.gravity)
    else:  # ᶜX_P = (ᴾX*_C)ᵀ; ᶜX_P [g; 0] = [Rᵀg; 0]; c_i below, with the other bodies'
        moved = spatial.mtv(b.X[i], _with_gravity(b.vel[lam], b.gb[lam]))
        b.vel[i] = moved[0] + b.vJ[i]
        b.gb[i] = moved[1, :3]


def _world_rotation(model: Model, i, b: _Bodies):
    """World rotation of body i (only where a serial run hangs below: gravity otherwise comes down as gb)."""
    if b.Rw[i] is None:
        lam = model.parents[i]
        b.Rw[i] = b.R[i] if lam < 0 else spatial.mm(_world_rotation(model, lam, b), b.R[i])
    return b.Rw[i]


def _kinematics_of_run(model: Model, run: SerialRun, q, v, f_ext, b: _Bodies, dtype):
    s, e, lam = run.s, run.e, model.parents[run.s]
    vel0 = jnp.zeros(6, dtype=dtype) if lam < 0 else b.vel[lam]
    Rw0 = jnp.eye(3, dtype=dtype) if lam < 0 else _world_rotation(model, lam, b)
    kin = run.kinematics(q, v, vel0, Rw0, None if f_ext is None else f_ext[s:e])
    b.runs[s] = (run, kin, None)
    b.vel[e - 1], b.Rw[e - 1], b.pA[e - 1] = kin.vel_last, kin.Rw_last, kin.pA_last
    b.gb[e - 1] = spatial.mtv(b.Rw[e - 1], model.gravity)


def _bias_of_single_bodies(model: Model, plan: _Plan, f_ext, b: _Bodies):
    """Velocity products c = c_J + v × v_J and bias forces v ×* I v − I [g_b; 0] − f_ext of all single
    bodies at once (a few kernels instead of a few per body)."""
    if plan.below:
        cs = (jnp.stack([b.cJ[i] for i in plan.below])
              + spatial.cross_motion(jnp.stack([b.vel[i] for i in plan.below]), jnp.stack([b.vJ[i] for i in plan.below])))
        for k, i in enumerate(plan.below):
            b.c[i] = cs[k]
    if plan.single:
        idx = np.asarray(plan.single)
        vel, gb, I = jnp.stack([b.vel[i] for i in plan.single]), jnp.stack([b.gb[i] for i in plan.single]), model.inertia[idx]
        # I v and I [g_b; 0] as one product
        Iv, Ig = jnp.moveaxis(spatial.mm(I, jnp.stack([vel, jnp.concatenate([gb, jnp.zeros_like(gb)], -1)], -1)), -1, 0)
        pA = spatial.cross_force(vel, Iv) - Ig
        if f_ext is not None:
            pA = pA - f_ext[idx]
        for k, i in enumerate(plan.single):
            b.pA[i] = pA[k]


def _articulate_group(model: Model, grp, Sg, tau, b: _Bodies):
    """:func:`_articulate_body`'s 1-DOF branch for a whole group at once."""
    IAg, pAg, Xg = jnp.stack([b.IA[i] for i in grp]), jnp.stack([b.pA[i] for i in grp]), jnp.stack([b.X[i] for i in grp])
    Ug = spatial.mv(IAg, Sg)
    Dig = 1.0 / jnp.sum(Sg * Ug, -1)
    ug = tau[np.asarray([model.v_start[i] for i in grp])] - jnp.sum(Sg * pAg, -1)
    Udg = Ug * Dig[:, None]
    W = spatial.mm(Xg, jnp.concatenate([IAg - Udg[:, :, None] * Ug[:, None, :], (pAg + Udg * ug[:, None])[:, :, None]], -1))
    Z = spatial.mm(W[:, :, :6], jnp.concatenate([jnp.swapaxes(Xg, -1, -2), jnp.stack([b.c[i] for i in grp])[:, :, None]], -1))
    for k, i in enumerate(grp):
        b.U[i], b.Dinv[i], b.u[i] = Ug[k], Dig[k], ug[k]
        lam = model.parents[i]
        b.IA[lam] = b.IA[lam] + Z[k, :, :6]
        b.pA[lam] = b.pA[lam] + W[k, :, 6] + Z[k, :, 6]


def _articulate_body(model: Model, i, tau, b: _Bodies):
    """U, D⁻¹, u of body i, and its articulated inertia and bias force handed to its parent."""
    lam, j = model.parents[i], model.joints[i]
    Ia = pa = None
    if j.nv == 1 and isinstance(j, (Revolute, Prismatic)):  # U = I^A S a combination of I^A's columns
        off = 3 if isinstance(j, Revolute) else 0
        U = spatial.static_combination(b.IA[i], j.axis, off)
        b.U[i], b.Dinv[i] = U, 1.0 / spatial.static_combination(U, j.axis, off)
        b.u[i] = tau[model.v_start[i]] - spatial.static_combination(b.pA[i], j.axis, off)
        Ud = U * b.Dinv[i]
        Ia, pa = b.IA[i] - Ud[:, None] * U[None, :], b.pA[i] + Ud * b.u[i]
    elif isinstance(j, Free):  # S = 1: U = D = I^A, u = τ − p^A; the child passes on I^a = 0, p^a = p^A + u
        b.U[i], b.u[i] = b.IA[i], tau[model.v_slice(i)] - b.pA[i]
        pa = b.pA[i] + b.u[i]
    elif j.nv:
        U = spatial.mm(b.IA[i], b.S[i])
        b.U[i], b.Dinv[i] = U, spd_inverse(spatial.mm(b.S[i].T, U))
        b.u[i] = tau[model.v_slice(i)] - spatial.mtv(b.S[i], b.pA[i])
        UD = spatial.mm(U, b.Dinv[i])
        Ia, pa = b.IA[i] - spatial.mm(UD, U.T), b.pA[i] + spatial.mv(UD, b.u[i])
    else:
        Ia, pa = b.IA[i], b.pA[i]
    if lam < 0:
        return
    if Ia is None:
        b.pA[lam] = b.pA[lam] + spatial.mv(b.X[i], pa)
        return
    # ᴾX*_C I^a ᶜX_P and ᴾX*_C (p^a + I^a c) in two products: W = X [I^a | p^a], then W [Xᵀ | c]
    W = spatial.mm(b.X[i], jnp.concatenate([Ia, pa[:, None]], -1))
    Z = spatial.mm(W[:, :6], jnp.concatenate([b.X[i].T, b.c[i][:, None]], -1))
    b.IA[lam] = b.IA[lam] + Z[:, :6]
    b.pA[lam] = b.pA[lam] + W[:, 6] + Z[:, 6]


def _articulate_run(model: Model, s, e, tau, extra_inertia, b: _Bodies):
    run, kin, _ = b.runs[s]
    art = run.articulated(b.IA[e - 1], b.pA[e - 1], kin, tau, extra_inertia)
    b.runs[s] = (run, kin, art)
    lam = model.parents[s]
    if lam >= 0:
        b.IA[lam] = b.IA[lam] + art.I_to_parent
        b.pA[lam] = b.pA[lam] + art.p_to_parent


def _accelerate_group(model: Model, grp, Sg, b: _Bodies):
    apg = (spatial.mtv(jnp.stack([b.X[i] for i in grp]), jnp.stack([b.a[model.parents[i]] for i in grp]))
           + jnp.stack([b.c[i] for i in grp]))
    Ug = jnp.stack([b.U[i] for i in grp])
    qg = (jnp.stack([b.u[i] for i in grp]) - jnp.sum(Ug * apg, -1)) * jnp.stack([b.Dinv[i] for i in grp])
    ag = apg + Sg * qg[:, None]
    for k, i in enumerate(grp):
        b.a[i], b.qdd[i] = ag[k], qg[k][None]


def _accelerate_body(model: Model, i, b: _Bodies):
    lam, j = model.parents[i], model.joints[i]
    ap = b.c[i] if lam < 0 else spatial.mtv(b.X[i], b.a[lam]) + b.c[i]  # a' = ⁱX_λ a_λ + c_i
    if j.nv == 1 and isinstance(j, (Revolute, Prismatic)):
        off = 3 if isinstance(j, Revolute) else 0
        qi = (b.u[i] - jnp.sum(b.U[i] * ap)) * b.Dinv[i]
        b.qdd[i] = qi[None]
        b.a[i] = ap + _static_vector(j.axis, off, ap.dtype) * qi
    elif isinstance(j, Free):  # a = I^A⁻¹ u from the batched solve, v̇ = a − a'
        b.qdd[i] = b.a[i] - ap
    elif j.nv:
        qi = spatial.mv(b.Dinv[i], b.u[i] - spatial.mtv(b.U[i], ap))
        b.qdd[i] = qi
        b.a[i] = ap + spatial.mv(b.S[i], qi)
    else:
        b.a[i] = ap


def _accelerate_run(model: Model, s, e, b: _Bodies, dtype):
    run, kin, art = b.runs[s]
    lam = model.parents[s]
    a0 = jnp.zeros(6, dtype=dtype) if lam < 0 else b.a[lam]
    b.qdd[s], b.a[e - 1] = run.accelerations(a0, kin, art)
