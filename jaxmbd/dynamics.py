"""Rigid-body dynamics over a kinematic tree: ABA, RNEA, CRBA, joint wrenches.

Notation follows Featherstone, *Rigid Body Dynamics Algorithms* (2008), with
spatial vectors linear first.  Gravity enters as an explicit wrench
``I_i [ⁱR₀ g; 0]`` on each body's *rigid* inertia rather than as a fictitious
base acceleration, so that an extra inertia (hydrodynamic added mass, which
has no weight) can join the articulated-body recursion exactly.

Arguments shared by every algorithm:

* ``f_ext`` (n_bodies, 6): external wrenches on each body, body frame,
  referred to the body origin;
* ``extra_inertia`` (n_bodies, 6, 6): an inertia added to each body's
  for the acceleration terms only (no weight, no velocity-product terms) —
  how the infinite-frequency added mass A(∞) of linear hydrodynamics enters.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import spatial
from ._xla import forward_jit
from .kinematics import joint_states
from .joints import Cylindrical, Fixed, Free, Planar, Prismatic, Revolute, Spherical
from .model import Model


def _world_rotations(model: Model, js):
    Rw = []
    for i, lam in enumerate(model.parents):
        Rw.append(js.R[i] if lam < 0 else spatial.mm(Rw[lam], js.R[i]))
    return Rw


def _body_velocity(R, p, vJ, cJ, vel_parent):
    """Body twist and velocity-product acceleration c = c_J + v × v_J (RBDA eq. 7.3); vel_parent None at a root."""
    if vel_parent is None:
        return vJ, cJ
    vel = spatial.inv_act_motion(R, p, vel_parent) + vJ
    return vel, cJ + spatial.cross_motion(vel, vJ)


def _body_bias(I, vel, gb, f_ext=None):
    """Bias force v ×* I v − I [g_b; 0] (− f_ext) of one body, body frame; g_b = Rᵀ g, gravity in body axes."""
    # I v and I [gb; 0] as one product (one kernel, not two)
    Iv, Ig = jnp.moveaxis(spatial.mm(I, jnp.stack([vel, jnp.concatenate([gb, jnp.zeros_like(gb)], -1)], -1)), -1, 0)
    pA = spatial.cross_force(vel, Iv) - Ig
    return pA if f_ext is None else pA - f_ext


def _joint_velocity(j, S, qi, vi, dtype):
    """(v_J, c_J) of one joint.  S v with the static structure of S where it has one (a static axis
    times q̇, the identity of a free joint): element-wise, not a reduction kernel of its own."""
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


def _velocities(model: Model, js):
    """Body twists and the velocity-product accelerations c_i = c_J + v_i × v_J (RBDA eq. 7.3)."""
    vel, c = [], []
    for i, lam in enumerate(model.parents):
        vJ, cJ = _joint_velocity(model.joints[i], js.S[i], js.q[i], js.v[i], model.inertia.dtype)
        vi, ci = _body_velocity(js.R[i], js.p[i], vJ, cJ, None if lam < 0 else vel[lam])
        vel.append(vi)
        c.append(ci)
    return vel, c


def gravity_wrenches(model: Model, q):
    """Weight of every body as a body-frame wrench (n, 6): I_i [ⁱR₀ g; 0]."""
    js = joint_states(model, q)
    Rw = _world_rotations(model, js)
    out = []
    for i in range(model.n_bodies):
        gb = spatial.mtv(Rw[i], model.gravity)
        out.append(spatial.mv(model.inertia[i][:, :3], gb))
    return jnp.stack(out)


def _bias_forces(model, q, js, vel, f_ext):
    Rw = _world_rotations(model, js)
    return [_body_bias(model.inertia[i], vel[i], spatial.mtv(Rw[i], model.gravity), None if f_ext is None else f_ext[i])
            for i in range(model.n_bodies)]


# Serial runs of 1-DOF joints at least this long are processed with ``lax.scan`` (their axes become
# data), so the compiled program stays the same size for any depth; shorter runs are unrolled with
# static axes, which is faster per evaluation.  Results agree to rounding either way.
SCAN_MIN_RUN = 12
# Bodies a run's scans (articulated inertias, accelerations) take per loop iteration: a scan
# iteration is about 16 XLA kernels, three of them the loop's own (counter, copy, test); four bodies
# an iteration cut chain100 in a scan from 66-73 to 47-52 µs, batches within noise (NOTES).
SCAN_UNROLL = 4


def _segments(model: Model, min_run: int | None = None):
    """Split the bodies (in index order) into single bodies (s, s+1) and serial runs (s, e): bodies
    s..e-1 on revolute joints (or all prismatic), body k's parent k-1, and every body of the run but
    the last with exactly one child (the next), so the run is a path that a scan can walk."""
    min_run = SCAN_MIN_RUN if min_run is None else min_run
    n = model.n_bodies
    kids = [model.children(i) for i in range(n)]
    segs, i = [], 0
    while i < n:
        kind = type(model.joints[i]) if isinstance(model.joints[i], (Revolute, Prismatic)) else None
        e = i + 1
        if kind is not None:
            while e < n and type(model.joints[e]) is kind and model.parents[e] == e - 1 and kids[e - 1] == (e,):
                e += 1
        if kind is not None and e - i >= min_run:
            segs.append((i, e))
            i = e
        else:
            segs.append((i, i + 1))
            i += 1
    return segs


# Bodies on 1-DOF joints below a parent are batched level by level (their depth in the tree) when a
# level has at least this many: a hull with hinged floats, several slings on one hook.  Each pass
# then makes one or two reductions for the level instead of one to three a body: a hull with 32
# hinged floats in a scan 15.2 -> 10.2 µs, vmapped over 64 6.2 -> 5.6 µs, compile 4.6 -> 2.2 s
# (NOTES, "Wide trees"); serial chains have one body a level and are not affected.
LEVEL_MIN_BODIES = 2


def _level_groups(model: Model, segs):
    """The segments by the depth of their first body (parents before children within the tree), and
    for each depth the single bodies on revolute or prismatic joints below a parent, when there are at
    least :data:`LEVEL_MIN_BODIES` of them: {depth: [body, ...]}."""
    depth = [0] * model.n_bodies
    for i, lam in enumerate(model.parents):
        depth[i] = 0 if lam < 0 else depth[lam] + 1
    levels = [[] for _ in range(max(depth) + 1 if depth else 0)]
    for s, e in segs:
        levels[depth[s]].append((s, e))
    groups = {}
    for d, level in enumerate(levels):
        grp = [s for s, e in level if e - s == 1 and model.parents[s] >= 0 and isinstance(model.joints[s], (Revolute, Prismatic))]
        if len(grp) >= LEVEL_MIN_BODIES:
            groups[d] = grp
    return levels, groups


def forward_dynamics(model: Model, q, v, tau, f_ext=None, extra_inertia=None):
    """Joint accelerations v̇ by the articulated-body algorithm (RBDA Table 7.1), O(n).

    Solves M(q) v̇ + h(q, v) = τ + Σ Jᵢᵀ f_ext,i, with M including ``extra_inertia``.
    Long serial runs of revolute (or prismatic) joints are walked with ``lax.scan``
    (see :data:`SCAN_MIN_RUN`), so deep chains compile in constant time; revolute and prismatic
    bodies that share a depth below their parents are taken together in each pass
    (:data:`LEVEL_MIN_BODIES`).  On trees with at most
    :data:`DENSE_MAX_NV` DOFs its derivatives are those of inverse dynamics (a custom JVP rule),
    not the transposed recursion.
    """
    if _use_dense(model):
        return _small_tree_forward_dynamics(model, q, v, tau, f_ext, extra_inertia)
    return _aba(model, q, v, tau, f_ext, extra_inertia)


def _aba(model: Model, q, v, tau, f_ext, extra_inertia):
    n = model.n_bodies
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    segs = _segments(model)
    g = model.gravity
    R, p, S, vel, c, pA, IA = ([None] * n for _ in range(7))
    Rw = [None] * n  # world rotations, only where a scanned run hangs below (gravity comes down as gb)
    gb = [None] * n  # gravity in body axes, Rᵢᵀ g_λ: a matrix-vector product a body, not a 3x3 product

    def world_R(i):
        if Rw[i] is None:
            Rw[i] = R[i] if model.parents[i] < 0 else spatial.mm(world_R(model.parents[i]), R[i])
        return Rw[i]

    runs = {}
    single = [s for s, e in segs if e - s == 1]  # bodies not in a scanned run
    below = [i for i in single if model.parents[i] >= 0]
    X = [None] * n  # ᴾX*_C = [[R, 0], [p̂R, R]] of the single bodies below a parent, built in one batch
    vJc = [None] * n  # (v_J, c_J) of the single bodies
    for i in single:  # placements and joint twists, independent of each other
        j = model.joints[i]
        qi = q[model.q_start[i] : model.q_start[i] + j.nq]
        vi = v[model.v_start[i] : model.v_start[i] + j.nv]
        R[i], p[i] = j.placed_transform(model.placement_R[i], model.placement_p[i], qi)
        S[i] = j.motion_subspace(qi)
        vJc[i] = _joint_velocity(j, S[i], qi, vi, dtype)
    if below:
        Xs = spatial.force_matrix(jnp.stack([R[i] for i in below]), jnp.stack([p[i] for i in below]))
        for k, i in enumerate(below):
            X[i] = Xs[k]
    # the segments level by level (depth of their first body), and the 1-DOF bodies below a parent
    # that share a level with others: each pass takes those as one batch (one reduction kernel for
    # the level instead of one or two a body)
    levels, groups = _level_groups(model, segs)
    grouped = {i for grp in groups.values() for i in grp}
    S0 = _tree_tables(model)[3] if groups else None  # (6, nv) constant subspaces: the groups' axes as data
    Sgroup = {d: jnp.asarray(S0[:, [model.v_start[i] for i in grp]].T, dtype=dtype) for d, grp in groups.items()}
    # pass 1: twists and gravity in body axes, root to leaves (serial); velocity products and bias forces after
    for d, level in enumerate(levels):
        if d in groups:  # ᶜX_P [v_λ, [g_λ; 0]] for the whole group in one product
            grp = groups[d]
            par = [model.parents[i] for i in grp]
            moved = spatial.mtv(jnp.stack([X[i] for i in grp])[:, None], jnp.stack(
                [jnp.stack([vel[lam], jnp.concatenate([gb[lam], jnp.zeros_like(gb[lam])])]) for lam in par]))
            for k, i in enumerate(grp):
                vel[i] = moved[k, 0] + vJc[i][0]
                gb[i] = moved[k, 1, :3]
        for s, e in level:
            if s in grouped:
                continue
            lam = model.parents[s]
            if e - s == 1:
                i = s
                vJ, cJ = vJc[i]
                if lam < 0:
                    vel[i], c[i] = vJ, cJ
                    gb[i] = spatial.mtv(R[i], g)
                else:  # ᶜX_P = (ᴾX*_C)ᵀ; c_i below, with the other bodies'
                    # the parent's twist and its gravity as a motion [g; 0] in one product: ᶜX_P [g; 0] = [Rᵀg; 0]
                    moved = spatial.mtv(X[i], jnp.stack([vel[lam], jnp.concatenate([gb[lam], jnp.zeros_like(gb[lam])])]))
                    vel[i] = moved[0] + vJ
                    gb[i] = moved[1, :3]
            else:
                run = _Run(model, s, e, dtype)
                vel0 = jnp.zeros(6, dtype=dtype) if lam < 0 else vel[lam]
                Rw0 = jnp.eye(3, dtype=dtype) if lam < 0 else world_R(lam)
                out = run.pass1(q, v, vel0, Rw0, None if f_ext is None else f_ext[s:e])
                runs[s] = (run, out)
                vel[e - 1], Rw[e - 1], pA[e - 1] = out["vel_last"], out["Rw_last"], out["pA_last"]
                gb[e - 1] = spatial.mtv(Rw[e - 1], g)
    # velocity products and bias forces of the single bodies, all at once: only the twists and the
    # gravity are serial along the tree, these are not (a few kernels instead of a few per body)
    if below:
        cs = (jnp.stack([vJc[i][1] for i in below])
              + spatial.cross_motion(jnp.stack([vel[i] for i in below]), jnp.stack([vJc[i][0] for i in below])))
        for k, i in enumerate(below):
            c[i] = cs[k]
    if single:
        fe = None if f_ext is None else f_ext[np.asarray(single)]
        pAs = _body_bias(model.inertia[np.asarray(single)], jnp.stack([vel[i] for i in single]),
                         jnp.stack([gb[i] for i in single]), fe)
        for k, i in enumerate(single):
            pA[i] = pAs[k]
    for _, e in segs:  # a single body, or the last body of a run (the others are stacked in pass 2)
        i = e - 1
        IA[i] = model.inertia[i] if extra_inertia is None else model.inertia[i] + extra_inertia[i]
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    # pass 2: articulated inertias, leaves to root (RBDA eq. 7.43-7.46)
    for d in reversed(range(len(levels))):
        if d in groups:  # the same steps as the 1-DOF branch below, for the whole group at once
            grp = groups[d]
            Sg = Sgroup[d]
            IAg, pAg, Xg = jnp.stack([IA[i] for i in grp]), jnp.stack([pA[i] for i in grp]), jnp.stack([X[i] for i in grp])
            Ug = spatial.mv(IAg, Sg)
            Dig = 1.0 / jnp.sum(Sg * Ug, -1)
            ug = tau[np.asarray([model.v_start[i] for i in grp])] - jnp.sum(Sg * pAg, -1)
            Udg = Ug * Dig[:, None]
            W = spatial.mm(Xg, jnp.concatenate([IAg - Udg[:, :, None] * Ug[:, None, :], (pAg + Udg * ug[:, None])[:, :, None]], -1))
            Z = spatial.mm(W[:, :, :6], jnp.concatenate([jnp.swapaxes(Xg, -1, -2), jnp.stack([c[i] for i in grp])[:, :, None]], -1))
            for k, i in enumerate(grp):
                U[i], Dinv[i], u[i] = Ug[k], Dig[k], ug[k]
                lam = model.parents[i]
                IA[lam] = IA[lam] + Z[k, :, :6]
                pA[lam] = pA[lam] + W[k, :, 6] + Z[k, :, 6]
        for s, e in reversed(levels[d]):
            if s in grouped:
                continue
            lam = model.parents[s]
            if e - s > 1:
                run, out = runs[s]
                out.update(run.pass2(IA[e - 1], pA[e - 1], out, tau, extra_inertia))
                if lam >= 0:
                    IA[lam] = IA[lam] + out["I_to_parent"]
                    pA[lam] = pA[lam] + out["p_to_parent"]
                continue
            i, j = s, model.joints[s]
            if j.nv == 1 and isinstance(j, (Revolute, Prismatic)):
                # S = [0; a] (revolute) or [a; 0] (prismatic) with a static unit axis:
                # U = IA S is a combination of IA's columns, D = Sᵀ U a scalar.
                off = 3 if isinstance(j, Revolute) else 0
                Ui = spatial.static_combination(IA[i], j.axis, off)
                D = spatial.static_combination(Ui, j.axis, off)
                Di = 1.0 / D
                ui = tau[model.v_start[i]] - spatial.static_combination(pA[i], j.axis, off)
                U[i], Dinv[i], u[i] = Ui, Di, ui
                if lam >= 0:
                    Ud = Ui * Di
                    Ia = IA[i] - Ud[:, None] * Ui[None, :]
                    pa = pA[i] + Ud * ui  # + Ia c, added below
            elif isinstance(j, Free):
                # S = 1 (body twist): U = D = IA, u = τ − pA; the child passes on Ia = 0, pa = pA + u
                U[i], u[i] = IA[i], tau[model.v_start[i] : model.v_start[i] + 6] - pA[i]
                if lam >= 0:
                    Ia = None
                    pa = pA[i] + u[i]
            elif j.nv:
                Ui = spatial.mm(IA[i], S[i])
                D = spatial.mm(S[i].T, Ui)
                Di = _spd_inverse(D)
                ui = tau[model.v_start[i] : model.v_start[i] + j.nv] - spatial.mtv(S[i], pA[i])
                U[i], Dinv[i], u[i] = Ui, Di, ui
                if lam >= 0:
                    UD = spatial.mm(Ui, Di)
                    Ia = IA[i] - spatial.mm(UD, Ui.T)
                    pa = pA[i] + spatial.mv(UD, ui)  # + Ia c, added below
            else:
                Ia = IA[i]
                pa = pA[i]  # + Ia c, added below
            if lam >= 0 and Ia is None:
                pA[lam] = pA[lam] + spatial.mv(X[i], pa)
            elif lam >= 0:
                # ᴾX*_C Ia ᶜX_P and ᴾX*_C (pa + Ia c) in two products: W = X [Ia | pa] = [X Ia | X pa],
                # then (X Ia) [Xᵀ | c] = [X Ia Xᵀ | X Ia c] (four reduction kernels otherwise)
                W = spatial.mm(X[i], jnp.concatenate([Ia, pa[:, None]], -1))
                Z = spatial.mm(W[:, :6], jnp.concatenate([X[i].T, c[i][:, None]], -1))
                IA[lam] = IA[lam] + Z[:, :6]
                pA[lam] = pA[lam] + W[:, 6] + Z[:, 6]
    # pass 3: accelerations, root to leaves (RBDA eq. 7.47-7.49)
    a = [None] * n
    qdd = {}
    # a free joint's body acceleration is IA⁻¹ u whatever its parent's (S = 1: a = a' + IA⁻¹ (u − IA a')),
    # so the 6x6 solves of all free bodies (vessels, cargo, a barge) are one batched elimination
    frees = [s for s, e in segs if e - s == 1 and isinstance(model.joints[s], Free)]
    if frees:
        a_free = _spd_solve(jnp.stack([U[i] for i in frees]), jnp.stack([u[i] for i in frees]))
        for k, i in enumerate(frees):
            a[i] = a_free[k]
    for d, level in enumerate(levels):
        if d in groups:
            grp = groups[d]
            Sg = Sgroup[d]
            apg = spatial.mtv(jnp.stack([X[i] for i in grp]), jnp.stack([a[model.parents[i]] for i in grp])) + jnp.stack([c[i] for i in grp])
            Ug = jnp.stack([U[i] for i in grp])
            qg = (jnp.stack([u[i] for i in grp]) - jnp.sum(Ug * apg, -1)) * jnp.stack([Dinv[i] for i in grp])
            ag = apg + Sg * qg[:, None]
            for k, i in enumerate(grp):
                a[i], qdd[i] = ag[k], qg[k][None]
        for s, e in level:
            if s in grouped:
                continue
            lam = model.parents[s]
            if e - s > 1:
                run, out = runs[s]
                a0 = jnp.zeros(6, dtype=dtype) if lam < 0 else a[lam]
                qr, a[e - 1] = run.pass3(a0, out)
                qdd[s] = qr
                continue
            i, j = s, model.joints[s]
            ap = c[i] if lam < 0 else spatial.mtv(X[i], a[lam]) + c[i]
            if j.nv == 1 and isinstance(j, (Revolute, Prismatic)):
                off = 3 if isinstance(j, Revolute) else 0
                qi = (u[i] - jnp.sum(U[i] * ap)) * Dinv[i]
                qdd[s] = qi[None]
                a[i] = ap + _static_vector(j.axis, off, ap.dtype) * qi
            elif isinstance(j, Free):  # a = IA⁻¹ u from the batch above, v̇ = a − ap
                qdd[s] = a[i] - ap
            elif j.nv:
                qi = spatial.mv(Dinv[i], u[i] - spatial.mtv(U[i], ap))
                qdd[s] = qi
                a[i] = ap + spatial.mv(S[i], qi)
            else:
                a[i] = ap
    parts = [qdd[s] for s, e in segs if s in qdd]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=model.inertia.dtype)


# On trees with at most this many velocity DOFs (and no serial run long enough to scan) the ABA is
# differentiated by a custom JVP rule: M dv̇ = dτ − d(ID) with v̇ held, where the inverse dynamics ID
# and the joint-space inertia M are written for every body at once in the world frame (body
# Jacobians, a Cholesky factor).  Autodiff through the ABA transposes its ~200 tiny kernels one by
# one; this rule's JVP and VJP cost about half as much and compile 3-4x faster.  Tangents of the state,
# τ and f_ext on trees of constant-subspace joints take a closed form of d(ID) (the bodies' rigid
# motions, :func:`_rigid_motion_jvp`); those of the model's arrays or the extra inertia differentiate
# the world-frame terms.  The value itself is still the ABA's (faster than the mass-matrix route when
# vmapped on the CPU).
DENSE_MAX_NV = 16

_CONSTANT_S = (Fixed, Revolute, Prismatic, Cylindrical, Spherical, Free, Planar)  # S constant, c_J = 0


def _use_dense(model: Model) -> bool:
    return model.nv <= DENSE_MAX_NV and all(e - s == 1 for s, e in _segments(model))


def _tree_tables(model: Model):
    """Static index tables: ``mask`` (n, nv) with mask[b, k] = 1 when DOF k moves body b (its joint
    is on the path from the root to b), ``anc`` (n, n) the same for bodies, ``owner`` (nv,) the body
    of each DOF, and ``S`` (6, nv) the constant motion subspaces in the body frames."""
    n, nv = model.n_bodies, model.nv
    anc = np.zeros((n, n))
    for b in range(n):
        anc[b, list(model.ancestors(b))] = 1.0
    owner = np.zeros(nv, dtype=int)
    S = np.zeros((6, nv))
    for i, j in enumerate(model.joints):
        sl = slice(model.v_start[i], model.v_start[i] + j.nv)
        owner[sl] = i
        if j.nv and isinstance(j, _CONSTANT_S):
            with jax.ensure_compile_time_eval():
                S[:, sl] = np.asarray(j.motion_subspace(jnp.zeros(j.nq)))
    return anc, anc[:, owner], owner, S


def _joint_placements(model: Model, q):
    """(R, p) (n, 3, 3), (n, 3) of every body in its parent: placement then joint; revolute,
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
                j = model.joints[i]
                R, p = j.transform(q[model.q_start[i] : model.q_start[i] + j.nq])
                Rs.append(R[None])
                ps.append(p[None])
        order += idx
    inv = np.argsort(np.asarray(order))
    RJ, pJ = jnp.concatenate(Rs)[inv].astype(dtype), jnp.concatenate(ps)[inv].astype(dtype)
    return spatial.compose(model.placement_R, model.placement_p, RJ, pJ)


def _world_placements(model: Model, R, p):
    """World placements of all bodies by pointer doubling: ⌈log₂ depth⌉ batched compositions."""
    return _compose_to_roots(model.parents, R, p)


def _compose_to_roots(parents, R, p):
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


class _World(NamedTuple):
    """World-frame quantities of every body (spatial vectors at the world origin), :func:`_dense_world`."""

    Rw: jax.Array  # (n, 3, 3), (n, 3) body placements in the world
    pw: jax.Array
    Sw: jax.Array  # (nv, 6) motion subspace of each DOF
    vJ: jax.Array  # (nv, 6) Sw v
    V: jax.Array  # (n, 6) body twists
    Ab: jax.Array  # (n, 6) J̇ v
    I: jax.Array  # (n, 6, 6) inertias, IT with the extra inertia
    IT: jax.Array
    fw: jax.Array | None  # (n, 6) external wrenches
    B: jax.Array  # (n, 6) bias wrenches

    def jacobians(self, mask):
        """J (n, 6, nv): the body Jacobians, Sw masked by ``mask`` (n, nv) (the DOFs that move each body)."""
        return self.Sw.T[None] * mask[:, None, :]


def _dense_world(model: Model, q, v, f_ext, extra_inertia) -> _World:
    """World-frame quantities of every body (spatial vectors at the world origin): placements, the
    DOFs' motion subspaces Sw (the body Jacobians are J_b = Sw ᵀ masked by the DOFs that move b),
    twists, inertias I and I_T (with the extra inertia), and the bias wrenches
    B = I_T J̇v + V ×* I V − I [g; 0] − f_ext, so that τ = Σ Jᵀ (I_T J v̇ + B)."""
    anc, mask, owner, S0 = _tree_tables(model)
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    R, p = _joint_placements(model, q)
    Rw, pw = _world_placements(model, R, p)
    S = jnp.asarray(S0.T, dtype=dtype)
    cJ = []
    for i, j in enumerate(model.joints):  # joints whose subspace moves with q (universal)
        if j.nv and not isinstance(j, _CONSTANT_S):
            qi = q[model.q_start[i] : model.q_start[i] + j.nq]
            vi = v[model.v_start[i] : model.v_start[i] + j.nv]
            S = S.at[model.v_start[i] : model.v_start[i] + j.nv].set(j.motion_subspace(qi).T)
            cJ.append((i, j.bias(qi, vi)))
    Sw = spatial.act_motion(Rw[owner], pw[owner], S)  # (nv, 6)
    vJ = Sw * v[:, None]
    V = jnp.asarray(mask, dtype) @ vJ  # body twists
    cr = spatial.cross_motion(V[owner], vJ)  # d/dt (X S) v = V × X S v per DOF
    if cJ:
        idx = np.asarray([i for i, _ in cJ])
        cw = spatial.act_motion(Rw[idx], pw[idx], jnp.stack([c for _, c in cJ]))
        cr = jnp.concatenate([cr, cw])
        sel = np.concatenate([mask, anc[:, idx]], 1)
    else:
        sel = mask
    Ab = jnp.asarray(sel, dtype) @ cr  # J̇ v of every body
    F = spatial.force_matrix(Rw, pw)
    Ft = jnp.swapaxes(F, -1, -2)
    I = spatial.mm(spatial.mm(F, model.inertia), Ft)
    IT = I if extra_inertia is None else I + spatial.mm(spatial.mm(F, extra_inertia), Ft)
    B = spatial.mv(IT, Ab) + spatial.cross_force(V, spatial.mv(I, V)) - spatial.mv(I, _gravity_motion(model))
    fw = None
    if f_ext is not None:
        fw = spatial.act_force(Rw, pw, f_ext)
        B = B - fw
    return _World(Rw, pw, Sw, vJ, V, Ab, I, IT, fw, B)


def _gravity_motion(model: Model):
    return jnp.concatenate([model.gravity, jnp.zeros(3, dtype=model.gravity.dtype)])


def _dense_terms(model: Model, q, v, f_ext, extra_inertia):
    """J (n, 6, nv) body Jacobians, I_T (n, 6, 6) and the bias wrenches B (n, 6) of :func:`_dense_world`."""
    mask = _tree_tables(model)[1]
    w = _dense_world(model, q, v, f_ext, extra_inertia)
    return w.jacobians(mask), w.IT, w.B


def _dense_solve(model, q, v, tau, f_ext, extra_inertia):
    """(v̇, L): M = Σ Jᵀ I_T J, h = Σ Jᵀ B, M v̇ = τ − h with M = L Lᵀ."""
    return _solve_from_terms(*_dense_terms(model, q, v, f_ext, extra_inertia), tau)


def _solve_from_terms(J, IT, B, tau):
    IJ = spatial.mm(IT, J)
    M = jnp.einsum("bik,bil->kl", J, IJ)  # one GEMM; a broadcast-and-sum here is slow on XLA's CPU
    h = jnp.einsum("bik,bi->k", J, B)
    L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
    return _cho_solve(L, tau - h), L


def _cho_solve(L, b):
    y = jax.lax.linalg.triangular_solve(L, b[:, None], left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True)[:, 0]


@jax.custom_jvp
def _small_tree_forward_dynamics(model, q, v, tau, f_ext, extra_inertia):
    """v̇ by the ABA, differentiated through the mass matrix (see :data:`DENSE_MAX_NV`)."""
    return _aba(model, q, v, tau, f_ext, extra_inertia)


def _small_tree_forward_dynamics_jvp(primals, tangents):
    # Differentiating ID(q, v, v̇) = τ at the solution: M dv̇ = dτ − ∂ID/∂(model, q, v, f_ext, E) · d(...),
    # with v̇ held fixed in ID (Carpentier and Mansard 2018).  One JVP of the O(n nv) inverse dynamics and
    # two triangular solves with the factor already computed, instead of differentiating the factorisation.
    # ID(a) = Σ_b J_bᵀ (I_T,b J_b a + B_b), so its derivative at fixed a comes from those of J, I_T and B.
    # Tangents arrive as symbolic zeros where an input is not perturbed (the model's arrays, usually):
    # those inputs are held constant in the JVP instead of carrying zero tangents through it.
    model, q, v, tau, f_ext, extra = primals
    dmodel, dq, dv, dtau, df, dextra = tangents
    if _rigid_rule_applies(model, dmodel):
        return _rigid_motion_jvp(model, q, v, tau, f_ext, extra, dq, dv, dtau, df, dextra)
    args, treedef = jax.tree_util.tree_flatten((model, q, v, f_ext, extra))
    dargs = jax.tree_util.tree_leaves((dmodel, dq, dv, df, dextra), is_leaf=lambda x: isinstance(x, _SymbolicZero))
    live = [k for k, d in enumerate(dargs) if not isinstance(d, _SymbolicZero)]

    def terms(*xs):
        leaves = list(args)
        for k, x in zip(live, xs):
            leaves[k] = x
        return _dense_terms(*jax.tree_util.tree_unflatten(treedef, leaves))

    if not live:  # only τ is perturbed: M dv̇ = dτ
        a, L = _solve_from_terms(*terms(), tau)
        return a, _cho_solve(L, dtau)
    (J, IT, B), (dJ, dIT, dB) = jax.jvp(terms, tuple(args[k] for k in live), tuple(dargs[k] for k in live))
    a, L = _solve_from_terms(J, IT, B, tau)
    A = jnp.einsum("bik,k->bi", J, a)
    dF = spatial.mv(dIT, A) + spatial.mv(IT, jnp.einsum("bik,k->bi", dJ, a)) + dB
    r = jnp.einsum("bik,bi->k", dJ, spatial.mv(IT, A) + B) + jnp.einsum("bik,bi->k", J, dF)
    rhs = -r if isinstance(dtau, _SymbolicZero) else dtau - r
    return a, _cho_solve(L, rhs)


_SymbolicZero = jax.custom_derivatives.SymbolicZero


def _is_zero(t) -> bool:
    return all(isinstance(x, _SymbolicZero) for x in jax.tree_util.tree_leaves(t, is_leaf=lambda x: isinstance(x, _SymbolicZero)))


def _rigid_rule_applies(model: Model, dmodel) -> bool:
    """The closed-form JVP below covers the state, τ, f_ext and extra-inertia tangents of trees whose
    joints have constant motion subspaces; tangents of the model's arrays (design derivatives) take
    the general rule."""
    return _is_zero(dmodel) and all(isinstance(j, _CONSTANT_S) for j in model.joints)


def _velocity_coordinates(model: Model, q, dq):
    """δ (nv,) with X_J(q)⁻¹ dX_J = S δ for every joint (child frame): the configuration tangent dq in
    velocity coordinates.  dq itself where nq = nv; for the quaternions of free and spherical joints,
    ω = 2 vec(q* ⊗ dq) / |q|² (the rotation of the normalised quaternion, as the joints' transforms
    normalise it) and the free joint's translation in its own axes, Rᵀ dp."""
    parts = []
    for i, j in enumerate(model.joints):
        if not j.nv:
            continue
        qi, dqi = (x[model.q_start[i] : model.q_start[i] + j.nq] for x in (q, dq))
        if isinstance(j, Planar):
            parts.append(j.velocity_coordinates(qi, dqi))
            continue
        if j.nq == j.nv:
            parts.append(dqi)
            continue
        quat, dquat = (qi[3:], dqi[3:]) if isinstance(j, Free) else (qi, dqi)
        omega = spatial.quat_rate_to_omega(quat, dquat)
        parts += [spatial.mtv(spatial.quat_to_matrix(quat), dqi[:3]), omega] if isinstance(j, Free) else [omega]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=dq.dtype)


def _rigid_motion_jvp(model, q, v, tau, f_ext, extra, dq, dv, dtau, df, dextra=None):
    """The inverse-dynamics JVP in closed form, in the world frame (Carpentier and Mansard 2018's
    derivatives written for all bodies at once).  A configuration tangent moves each body b rigidly
    by the world twist Ξ_b = Σ_{i ≼ b} X_i ξ_i, ξ_i = X_Jᵢ⁻¹ dX_Jᵢ its joint's perturbation, so every
    world-frame quantity attached to a body turns with it: dS_k = Ξ_o(k) × S_k, dI = Ξ ×* I − I Ξ×,
    d(X* f_ext) = Ξ ×* X* f_ext.  With v̇ = a held, the body wrenches f = I_T A + V ×* I V − I g − f_ext
    (A = J a + J̇ v) change by df = Ξ ×* f + I_T dA' + dV' ×* I V + V ×* I dV' + I (Ξ × g), with
    dV' = dV − Ξ × V and dA' = dA − Ξ × A what the turn does not explain, and
    dID_k = dS_k · F_k + S_k · dF_k (F: subtree sums); M dv̇ = dτ − dID.  The extra inertia is taken to
    turn with its body like the rest; a tangent dE of its body-frame value beyond that adds F dE Fᵀ A.
    A few batched products over all bodies instead of the derivative of every placement and
    transform (the general rule's ``jax.jvp`` of :func:`_dense_world`), and so is its transpose."""
    _, mask, owner, _ = _tree_tables(model)
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    w = _dense_world(model, q, v, f_ext, extra)
    maskT = jnp.asarray(mask.T, dtype)
    mask = jnp.asarray(mask, dtype)
    a, L = _solve_from_terms(w.jacobians(mask), w.IT, w.B, tau)
    cm, cf, mv = spatial.cross_motion, spatial.cross_force, spatial.mv
    Ja = mask @ (w.Sw * a[:, None])
    f = mv(w.IT, Ja) + w.B  # body wrenches at the solution: ID = Σ Jᵀ f
    zero_q, zero_v = isinstance(dq, _SymbolicZero), isinstance(dv, _SymbolicZero)
    df_body = jnp.zeros_like(f)
    dSw = dvJ = None
    if not zero_q:
        Xi = mask @ (w.Sw * _velocity_coordinates(model, q, dq)[:, None])  # (n, 6) world twists of the bodies
        dSw = cm(Xi[owner], w.Sw)
        dvJ = dSw * v[:, None]
    if not zero_v:
        dvJ = w.Sw * dv[:, None] if dvJ is None else dvJ + w.Sw * dv[:, None]
    if dvJ is not None:
        dV = mask @ dvJ
        dcr = cm(dV[owner], w.vJ) + cm(w.V[owner], dvJ)
        dA = mask @ (dcr if zero_q else dcr + dSw * a[:, None])
        if not zero_q:  # twist and acceleration relative to the body's rigid turn: d' = d − Ξ × (·)
            dV = dV - cm(Xi, w.V)
            dA = dA - cm(Xi, Ja + w.Ab)
        df_body = mv(w.IT, dA) + cf(dV, mv(w.I, w.V)) + cf(w.V, mv(w.I, dV))
        if not zero_q:
            # f (I_T A, V ×* I V, − f_ext: attached to the body) turns with it, Ξ ×* f; the gravity is the
            # world's, − I g turns by − Ξ ×* I g + I (Ξ × g)
            g = _gravity_motion(model).astype(dtype)
            df_body = df_body + cf(Xi, f) + mv(w.I, cm(Xi, g))
    if not isinstance(df, _SymbolicZero) and f_ext is not None:
        df_body = df_body - spatial.act_force(w.Rw, w.pw, df)
    if dextra is not None and not isinstance(dextra, _SymbolicZero) and extra is not None:
        # an extra inertia that changes by more than the body's turn (the added mass of linear
        # hydrodynamics, fixed in the world's axes): its body-frame tangent dE adds F dE Fᵀ A
        F = spatial.force_matrix(w.Rw, w.pw)
        df_body = df_body + spatial.mv(spatial.mm(spatial.mm(F, dextra), jnp.swapaxes(F, -1, -2)), Ja + w.Ab)
    dID = jnp.sum(w.Sw * (maskT @ df_body), -1)
    if not zero_q:
        dID = dID + jnp.sum(dSw * (maskT @ f), -1)
    rhs = -dID if isinstance(dtau, _SymbolicZero) else dtau - dID
    return a, _cho_solve(L, rhs)


_small_tree_forward_dynamics.defjvp(_small_tree_forward_dynamics_jvp, symbolic_zeros=True)


class _Run:
    """The ABA passes over a serial run of 1-DOF joints (all revolute or all prismatic), with every
    quantity of the run expressed in one frame: the axes of the run's parent body (the world's for a
    run at a root), the origin at the run's middle body.  In one frame the joint placements, motion
    subspaces (S = ⁰X_k [0; a]), twists (a cumulative sum of S q̇), velocity products (c = v × S q̇) and
    bias forces of all bodies are batched expressions, placements by pointer doubling, and the two
    recursions that stay serial, articulated inertias leaves to root and accelerations root to leaves,
    are ``lax.scan``s whose bodies need no change of frame (about 16 small kernels a body instead of
    90, :data:`SCAN_UNROLL` bodies a loop iteration).  The price is conditioning: lever arms up to half
    the run's length enter the inertias, so in float32 a 100-body chain's v̇ is about 3x less accurate
    than body by body (NOTES, "Deep chains")."""

    def __init__(self, model: Model, s: int, e: int, dtype):
        self.model, self.s, self.e = model, s, e
        self.revolute = isinstance(model.joints[s], Revolute)
        self.axes = jnp.asarray(np.array([model.joints[k].axis for k in range(s, e)]), dtype=dtype)
        self.qs = slice(model.q_start[s], model.q_start[e - 1] + 1)
        self.vs = slice(model.v_start[s], model.v_start[e - 1] + 1)

    def pass1(self, q, v, vel0, Rw0, f_ext):
        m, s, e = self.model, self.s, self.e
        a, x = self.axes, q[self.qs]
        z = jnp.zeros_like(a)
        if self.revolute:
            RJ, pJ, S = spatial.axis_angle_to_matrix(a, x), z, jnp.concatenate([z, a], -1)
        else:
            RJ, pJ, S = jnp.broadcast_to(jnp.eye(3, dtype=a.dtype), (e - s, 3, 3)), a * x[:, None], jnp.concatenate([a, z], -1)
        R, p = spatial.compose(m.placement_R[s:e], m.placement_p[s:e], RJ, pJ)
        R, p = _compose_to_roots(range(-1, e - s - 1), R, p)  # each body in the run's parent
        # the run's frame: the parent's axes, its origin moved to the middle body's, which keeps the
        # lever arms (and the cancellations in IA − U Uᵀ/D) about half the run's length
        o = p[(e - s) // 2]
        p = p - o
        vel0 = spatial.inv_act_motion(jnp.eye(3, dtype=p.dtype), o, vel0)
        S = spatial.act_motion(R, p, S)
        vJ = S * v[self.vs][:, None]
        vel = vel0 + jnp.cumsum(vJ, axis=0)
        c = spatial.cross_motion(vel, vJ)
        # rigid inertias in the run's frame from their parts: mass, centre of mass, inertia about it
        mass, com, Ic = spatial.inertia_parts(m.inertia[s:e])
        com = spatial.mv(R, com) + p
        Ic = spatial.mm(spatial.mm(R, Ic), jnp.swapaxes(R, -1, -2))
        pA = _rigid_bias(mass, com, Ic, vel, spatial.mtv(Rw0, m.gravity))
        if f_ext is not None:
            pA = pA - spatial.act_force(R, p, f_ext)
        return {"vel_last": spatial.inv_act_motion(R[-1], p[-1], vel[-1]), "Rw_last": spatial.mm(Rw0, R[-1]),
                "pA_last": spatial.inv_act_force(R[-1], p[-1], pA[-1]), "R": R, "p": p, "S": S, "c": c,
                "parts": (mass, com, Ic), "pA": pA, "o": o}

    def pass2(self, IA_last, pA_last, out, tau, extra_inertia):
        """IA_last, pA_last: the last body's articulated inertia and bias force in its own frame (its
        subtree beyond the run included).  The rigid inertias enter the scan as their parts, mass,
        centre of mass and the rotational inertia about the origin (13 numbers a body instead of 36
        stacked), and are assembled element-wise inside it."""
        R, p = out["R"], out["p"]
        mass, com, Ic = out["parts"]
        last = jnp.arange(self.e - self.s) == self.e - self.s - 1  # the last body enters whole as the start
        mass = jnp.where(last, 0.0, mass)
        C = spatial.skew(com)
        Io = jnp.where(last[:, None, None], 0.0, Ic - mass[:, None, None] * spatial.mm(C, C))
        xs_extra = None
        if extra_inertia is not None:
            xs_extra = spatial.inertia_to_parent(R, p, extra_inertia[self.s : self.e])
            xs_extra = jnp.where(last[:, None, None], 0.0, xs_extra)
        pA = jnp.concatenate([out["pA"][:-1], spatial.act_force(R[-1], p[-1], pA_last)[None]])
        eye3 = jnp.eye(3, dtype=pA.dtype)
        hats = jnp.asarray(spatial.SKEW_BASIS, dtype=pA.dtype)

        def body(carry, x):
            dI, dp = carry
            S, mk, ck, Iok, Ek, p0, c, tk = x
            # m ĉ as a weighted sum of constant matrices: element-wise, so it fuses with its use
            mC = (mk * ck[0]) * hats[0] + (mk * ck[1]) * hats[1] + (mk * ck[2]) * hats[2]
            IA = jnp.concatenate([jnp.concatenate([mk * eye3, -mC], -1), jnp.concatenate([mC, Iok], -1)], -2) + dI
            if Ek is not None:
                IA = IA + Ek
            pAk = p0 + dp
            U = spatial.mv(IA, S)
            Dinv = 1.0 / jnp.sum(S * U)
            u = tk - jnp.sum(S * pAk)
            Ud = U * Dinv
            Ia = IA - Ud[:, None] * U[None, :]
            # one row a body for pass 3: U, 1/D and u
            return (Ia, pAk + spatial.mv(Ia, c) + Ud * u), jnp.concatenate([U, Dinv[None], u[None]])

        z = (spatial.inertia_to_parent(R[-1], p[-1], IA_last), jnp.zeros_like(pA[0]))
        xs = (out["S"], mass, com, Io, xs_extra, pA, out["c"], tau[self.vs])
        (dI, dp), rows = jax.lax.scan(body, z, xs, reverse=True, unroll=SCAN_UNROLL)
        eye = jnp.eye(3, dtype=dp.dtype)
        return {"rows": rows, "I_to_parent": spatial.inertia_to_parent(eye, out["o"], dI),
                "p_to_parent": spatial.act_force(eye, out["o"], dp)}

    def pass3(self, a0, out):
        def body(a_p, x):
            S, c, row = x
            ap = a_p + c
            qk = (row[7] - jnp.sum(row[:6] * ap)) * row[6]
            return ap + S * qk, qk

        a0 = spatial.inv_act_motion(jnp.eye(3, dtype=a0.dtype), out["o"], a0)
        a_last, qdd = jax.lax.scan(body, a0, (out["S"], out["c"], out["rows"]), unroll=SCAN_UNROLL)
        return qdd, spatial.inv_act_motion(out["R"][-1], out["p"][-1], a_last)


def _rigid_bias(mass, com, Ic, vel, g):
    """v ×* I v − I [g; 0] for rigid inertias given by their parts (batched), without forming I."""
    vl, w = vel[..., :3], vel[..., 3:]
    mk = mass[..., None]
    f = mk * (vl - spatial.cross(com, w))  # linear momentum
    n = spatial.cross(com, f) + spatial.mv(Ic, w)  # angular momentum about the origin
    h = jnp.concatenate([f, n], -1)
    grav = jnp.concatenate([mk * g, mk * spatial.cross(com, g)], -1)
    return spatial.cross_force(vel, h) - grav


def _static_vector(axis, off, dtype):
    e = np.zeros(6)
    e[off : off + 3] = axis
    return jnp.asarray(e, dtype=dtype)


def _gauss_jordan(D, B):
    """D⁻¹ B for a small symmetric positive-definite D and B (n, m), by Gauss-Jordan elimination of
    [D | B] without pivoting (stable for SPD matrices).  Each of the n steps is one rank-1 update of
    the whole augmented matrix, element-wise: n XLA kernels, where a Cholesky factor and triangular
    solves written entry by entry became about 35 for the free joint's 6x6 (NOTES)."""
    n = D.shape[-1]
    A = jnp.concatenate([D, B], -1)
    rows = np.arange(n)[:, None]
    for k in range(n):
        pivot_row = A[..., k : k + 1, :] / A[..., k : k + 1, k : k + 1]  # (1, n + m)
        A = jnp.where(rows == k, pivot_row, A - A[..., :, k : k + 1] * pivot_row)
    return A[..., :, n:]


def _spd_solve(D, b):
    """x = D⁻¹ b for a small symmetric positive-definite D (see :func:`_gauss_jordan`)."""
    return _gauss_jordan(D, b[..., :, None])[..., :, 0]


def _spd_inverse(D):
    """D⁻¹ for a small symmetric positive-definite D (see :func:`_gauss_jordan`), symmetrised."""
    X = _gauss_jordan(D, jnp.broadcast_to(jnp.eye(D.shape[-1], dtype=D.dtype), D.shape))
    return 0.5 * (X + jnp.swapaxes(X, -1, -2))


def _rnea_forces(model: Model, q, v, vdot, f_ext, extra_inertia):
    """RNEA (RBDA Table 5.1): body accelerations forward, body forces backward."""
    js = joint_states(model, q, v)
    vel, c = _velocities(model, js)
    f = _bias_forces(model, q, js, vel, f_ext)
    a = []
    for i, lam in enumerate(model.parents):
        j = model.joints[i]
        ai = c[i] if lam < 0 else spatial.inv_act_motion(js.R[i], js.p[i], a[lam]) + c[i]
        if j.nv:
            ai = ai + js.S[i] @ vdot[model.v_start[i] : model.v_start[i] + j.nv]
        a.append(ai)
        I = model.inertia[i] if extra_inertia is None else model.inertia[i] + extra_inertia[i]
        f[i] = f[i] + spatial.mv(I, ai)
    for i in reversed(range(model.n_bodies)):
        lam = model.parents[i]
        if lam >= 0:
            f[lam] = f[lam] + spatial.act_force(js.R[i], js.p[i], f[i])
    return js, f


def inverse_dynamics(model: Model, q, v, vdot, f_ext=None, extra_inertia=None):
    """Joint forces τ = M(q) v̇ + h(q, v) − Σ Jᵢᵀ f_ext,i by the recursive Newton-Euler algorithm."""
    js, f = _rnea_forces(model, q, v, vdot, f_ext, extra_inertia)
    taus = [js.S[i].T @ f[i] for i, j in enumerate(model.joints) if j.nv]
    return jnp.concatenate(taus) if taus else jnp.zeros(0, dtype=model.inertia.dtype)


def joint_wrenches(model: Model, q, v, vdot, f_ext=None, extra_inertia=None):
    """Wrench (n, 6) the parent exerts on each body through its joint, in the body's frame.

    Its projection on the motion subspace is the joint force Sᵀ f; the rest is
    the constraint reaction the joint carries.
    """
    _, f = _rnea_forces(model, q, v, vdot, f_ext, extra_inertia)
    return jnp.stack(f)


def gravity_torques(model: Model, q, R_world=None, p_world=None):
    """Joint forces that hold the tree still against gravity, g(q) = RNEA(q, 0, 0), O(n).

    From the world placements of the bodies (``R_world``, ``p_world``, computed
    here unless given): each subtree's weight m g acts at its centre of mass, the
    joint carries −[F; N] (body frame, about the body origin) and τ = Sᵀ of that.
    No recursion over twists or accelerations, so it costs a fraction of an RNEA.
    """
    if R_world is None or p_world is None:
        from .kinematics import forward_kinematics

        R_world, p_world = forward_kinematics(model, q)
    I = model.inertia
    mass = I[:, 0, 0]
    mc = jnp.stack([I[:, 5, 1], I[:, 3, 2], I[:, 4, 0]], -1)  # m c from the block m ĉ (body frame)
    H = mass[:, None] * p_world + spatial.mv(R_world, mc)  # world first moments Σ m (p + R c)
    # Subtree sums as one multiply-and-sum with the constant subtree matrix (no per-body slices,
    # whose transposes are unfused pad kernels in reverse mode).
    sub = jnp.asarray(_tree_tables(model)[0].T, dtype=H.dtype)  # sub[k, i] = 1: i in k's subtree
    Ms = jnp.sum(sub * mass[None, :], -1)
    Hs = jnp.sum(sub[:, :, None] * H[None, :, :], 1)
    g = jnp.broadcast_to(jnp.asarray(model.gravity, dtype=H.dtype), H.shape)
    F = Ms[:, None] * g
    N = spatial.cross(Hs - Ms[:, None] * p_world, g)
    f = -jnp.concatenate([spatial.mtv(R_world, F), spatial.mtv(R_world, N)], -1)  # (n, 6), body frames
    return _project_on_subspaces(model, q, f)


def _project_on_subspaces(model: Model, q, f):
    """τ = [S_iᵀ f_i] over the joints (v order) for body-frame wrenches f (n, 6).

    Joints with a constant motion subspace (``_tree_tables``' S) go through one constant
    (nv, n, 6) selection tensor; the others (universal) are projected one by one.
    """
    _, _, owner, S = _tree_tables(model)
    nv = model.nv
    G = np.zeros((nv, model.n_bodies, 6))
    G[np.arange(nv), owner, :] = S.T  # zero columns for the joints projected below
    tau = jnp.sum(jnp.asarray(G, dtype=f.dtype) * f[None], axis=(-2, -1))
    for i, j in enumerate(model.joints):
        if j.nv and not isinstance(j, _CONSTANT_S):
            qi = q[model.q_start[i] : model.q_start[i] + j.nq]
            E = np.zeros((nv, j.nv))
            E[model.v_start[i] + np.arange(j.nv), np.arange(j.nv)] = 1.0
            tau = tau + jnp.sum(jnp.asarray(E, dtype=f.dtype) * spatial.mtv(j.motion_subspace(qi), f[i])[None, :], -1)
    return tau


def mass_matrix(model: Model, q, extra_inertia=None):
    """Joint-space inertia M(q) by the composite-rigid-body algorithm (RBDA Table 6.2)."""
    js = joint_states(model, q)
    n = model.n_bodies
    Ic = [model.inertia[i] if extra_inertia is None else model.inertia[i] + extra_inertia[i] for i in range(n)]
    for i in reversed(range(n)):
        lam = model.parents[i]
        if lam >= 0:
            Ic[lam] = Ic[lam] + spatial.inertia_to_parent(js.R[i], js.p[i], Ic[i])
    M = jnp.zeros((model.nv, model.nv), dtype=model.inertia.dtype)
    for i in range(n):
        ni = model.joints[i].nv
        if not ni:
            continue
        si = slice(model.v_start[i], model.v_start[i] + ni)
        F = spatial.mm(Ic[i], js.S[i])
        M = M.at[si, si].set(js.S[i].T @ F)
        k = i
        while model.parents[k] >= 0:
            F = jnp.stack([spatial.act_force(js.R[k], js.p[k], F[:, col]) for col in range(ni)], -1)
            k = model.parents[k]
            nk = model.joints[k].nv
            if nk:
                sk = slice(model.v_start[k], model.v_start[k] + nk)
                blk = js.S[k].T @ F
                M = M.at[sk, si].set(blk)
                M = M.at[si, sk].set(blk.T)
    return M


def nonlinear_effects(model: Model, q, v, f_ext=None):
    """h(q, v) = C(q, v) v + g(q) − Jᵀ f_ext: the joint forces for zero acceleration."""
    return inverse_dynamics(model, q, v, jnp.zeros(model.nv, dtype=jnp.result_type(v, float)), f_ext)


def mass_matrix_velocity_transformation(model: Model, q):
    """Joint-space inertia by Ham et al. (2009)'s velocity transformation, M̄ = Jᵀ M J with J = H T R.

    R (6n x nv) holds each joint's motion subspace as a world-frame spatial
    twist referred to the world origin; T (6n x 6n) is the path matrix, block
    (i, k) the identity when joint k lies on the path from the root to body i,
    so T R q̇ stacks the world twists of all bodies; H maps each body's twist to
    the velocity of its centre of mass and its angular velocity, where the
    body's mass matrix diag(m 1, I_c) is block diagonal.  Kept as a cross-check
    of the composite-rigid-body algorithm.
    """
    from .kinematics import forward_kinematics

    js = joint_states(model, q)
    Rw, pw = forward_kinematics(model, q)
    n, nv = model.n_bodies, model.nv
    dtype = model.inertia.dtype
    Rmat = jnp.zeros((6 * n, nv), dtype=dtype)
    for k, j in enumerate(model.joints):
        if j.nv:
            S0 = jnp.stack([spatial.act_motion(Rw[k], pw[k], js.S[k][:, c]) for c in range(j.nv)], -1)
            Rmat = Rmat.at[6 * k : 6 * k + 6, model.v_start[k] : model.v_start[k] + j.nv].set(S0)
    T = jnp.zeros((6 * n, 6 * n), dtype=dtype)
    eye6 = jnp.eye(6, dtype=dtype)
    for i in range(n):
        for k in model.ancestors(i):
            T = T.at[6 * i : 6 * i + 6, 6 * k : 6 * k + 6].set(eye6)
    H = jnp.zeros((6 * n, 6 * n), dtype=dtype)
    Mbig = jnp.zeros((6 * n, 6 * n), dtype=dtype)
    for i in range(n):
        m, c, Ic = spatial.inertia_parts(model.inertia[i])
        cw = pw[i] + Rw[i] @ c
        # v_c = v_o + ω × c_w  (world twist referred to the world origin)
        Hi = jnp.eye(6, dtype=dtype).at[:3, 3:].set(-spatial.skew(cw))
        H = H.at[6 * i : 6 * i + 6, 6 * i : 6 * i + 6].set(Hi)
        Mi = jnp.zeros((6, 6), dtype=dtype).at[:3, :3].set(m * jnp.eye(3)).at[3:, 3:].set(Rw[i] @ Ic @ Rw[i].T)
        Mbig = Mbig.at[6 * i : 6 * i + 6, 6 * i : 6 * i + 6].set(Mi)
    J = H @ T @ Rmat
    return J.T @ Mbig @ J


def kinetic_energy(model: Model, q, v):
    """½ Σ vᵢᵀ Iᵢ vᵢ (J)."""
    js = joint_states(model, q, v)
    vel, _ = _velocities(model, js)
    return 0.5 * sum(vel[i] @ (model.inertia[i] @ vel[i]) for i in range(model.n_bodies))


def potential_energy(model: Model, q):
    """−Σ mᵢ gᵀ cᵢ (J), with cᵢ the world centre of mass (zero at the world origin)."""
    from .kinematics import forward_kinematics

    Rw, pw = forward_kinematics(model, q)
    m = model.inertia[:, 0, 0]
    mc_hat = model.inertia[:, 3:, :3]
    mc = jnp.stack([mc_hat[:, 2, 1], mc_hat[:, 0, 2], mc_hat[:, 1, 0]], -1)  # m c in body frame
    mc_world = m[:, None] * pw + jnp.einsum("nij,nj->ni", Rw, mc)
    return -jnp.sum(mc_world @ model.gravity)


def total_energy(model: Model, q, v):
    return kinetic_energy(model, q, v) + potential_energy(model, q)


forward_dynamics_jit = forward_jit(forward_dynamics, jit=jax.jit)
