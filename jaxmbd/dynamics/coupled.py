"""The mass-matrix routes of the forward dynamics: what the articulated-body algorithm cannot take.

An element's inertia that couples two bodies (:meth:`jaxmbd.system.ForceElement.coupled_inertia`) and the
flexible bodies' floating-frame inertia enter the tree's mass matrix through the body Jacobians, and the
whole is solved by elimination for a few coordinates, by Cholesky beyond
(:func:`~jaxmbd.dynamics.linalg.small_spd_solve`); the closed loops start from the same equations
(:mod:`jaxmbd.dynamics.constrained`).  ``ctx`` is the system's context at (q, v) (its ``q``, ``v`` and
``kin``, the kinematics evaluated once).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..kinematics import body_jacobian
from .dense import mass_matrix_and_bias, world_terms
from .linalg import SMALL, small_spd_solve
from .reference import bias_accelerations, crba, rnea
from .tree import tree_tables


def mass_matrix_equations(model, ctx, tau, f_ext, extra, coupled, world="auto"):
    """(M, b) of M v̇ = b: the tree's mass matrix with the elements' inertia, b = τ + Jᵀ f_ext − h, and the
    coupling blocks f_i = −E_ij a_j of ``coupled`` (a_j = J_j v̇ + J̇_j v) added through the body
    Jacobians: M + Σ J_iᵀ E_ij J_j and b − Σ J_iᵀ E_ij J̇_j v.  M and h from the world-frame terms
    ``world`` of this state (:func:`world_equations`'s, which it computes by default), or by the recursions
    (CRBA, RNEA) where it is None."""
    q, v, kin = ctx.q, ctx.v, ctx.kin
    if isinstance(world, str):
        world = world_equations(model, ctx, f_ext, extra)
    if world is None:
        M = crba(model, q, extra, kin)
        rhs = tau - rnea(model, q, v, jnp.zeros_like(v), f_ext, extra, kin)
    else:
        M, h = mass_matrix_and_bias(world.jacobians(jnp.asarray(tree_tables(model)[1], world.B.dtype)), world.IT, world.B)
        rhs = tau - h
    if coupled:
        abias = bias_accelerations(model, q, v, kin) if world is None else world.body_bias_accelerations()
        for i, j, blk in coupled:
            Ji = body_jacobian(model, q, model.body_names[i], kin)
            Jj = body_jacobian(model, q, model.body_names[j], kin)
            M = M + Ji.T @ blk @ Jj
            rhs = rhs - Ji.T @ (blk @ abias[j])
    return M, rhs


def world_equations(model, ctx, f_ext, extra):
    """The world-frame terms of :func:`jaxmbd.dynamics.dense.world_terms` at the context's state, for
    :func:`mass_matrix_equations` and the loops' rows, where they are the cheaper route: trees of more than
    :data:`~jaxmbd.dynamics.linalg.SMALL` coordinates, whose solve is LAPACK's (the A-frame vessel's 19: M and h
    by one GEMM over the bodies instead of the recursions' per-body kernels, its loops' right-hand side 31 -> 23
    µs, benchmarks/NOTES.md); None below, where the recursions cost less (the four-bar's right-hand side: 2.9-3.1
    against 4.2-4.5 µs by the world-frame terms, with or without M and b held apart from the elimination)."""
    if model.nv <= SMALL:
        return None
    kin = ctx.kin
    return world_terms(model, ctx.q, ctx.v, f_ext, extra, None if kin is None else (kin.R, kin.p))


def coupled_forward_dynamics(model, ctx, tau, f_ext, extra, coupled):
    """v̇ from (M + Σ J_iᵀ E_ij J_j) v̇ = τ + Jᵀ f_ext − h − Σ J_iᵀ E_ij J̇_j v: the body accelerations
    a_j = J_j v̇ + J̇_j v of the coupling blocks f_i = −E_ij a_j, the diagonal ones (``extra``) inside
    M and the inverse dynamics (:func:`mass_matrix_equations`)."""
    M, rhs = mass_matrix_equations(model, ctx, tau, f_ext, extra, coupled)
    return small_spd_solve(M, rhs)


def driven_accelerations(M, b, driven, a_driven):
    """v̇ of M v̇ = b where the velocities ``driven`` (indices, static) have the prescribed accelerations
    ``a_driven``: the others from M_ff v̇_f = b_f − M_fd a_d (:func:`~jaxmbd.dynamics.linalg.small_spd_solve`), the reaction on the driven ones
    left out."""
    nv = M.shape[0]
    free = np.setdiff1d(np.arange(nv), driven)
    if not free.size:
        return jnp.asarray(a_driven, dtype=b.dtype)
    rhs = b[free] - M[np.ix_(free, driven)] @ a_driven
    vf = small_spd_solve(M[np.ix_(free, free)], rhs)
    return jnp.zeros(nv, dtype=b.dtype).at[free].set(vf).at[driven].set(a_driven)


def flexible_accelerations(model, ctx, flex, z, f_ext, tau, zdot, extra):
    """(v̇, ż): joint and elastic accelerations of a tree carrying flexible bodies ``flex`` (each element
    with the slice of its states in ``z``), ``extra`` the other elements' inertia.

    Each flexible element moves with a reference body of the tree (body
    twist t = J v, body-frame acceleration J v̇ + J̇ v) and gives its
    floating-frame mass matrix [[M_rr, M_rf], [M_fr, M_ff]] and forces
    Q = [Q_r; Q_f] (quadratic velocity, elastic, gravity, node loads) in
    that body's frame.  The equations of motion of the whole system are

        [M + Jᵀ M_rr J   Jᵀ M_rf] [v̇ ]   [τ − h + Jᵀ (Q_r − M_rr J̇v)]
        [M_fr J          M_ff   ] [q̈_f] = [Q_f − M_fr J̇v             ]

    with M, h the tree's mass matrix and bias forces; solved by :func:`~jaxmbd.dynamics.linalg.small_spd_solve`.
    """
    q, v, kin = ctx.q, ctx.v, ctx.kin
    M = crba(model, q, extra, kin)
    b = tau - rnea(model, q, v, jnp.zeros_like(v), f_ext, extra, kin)
    abias = bias_accelerations(model, q, v, kin)
    rows, cols, rhs_f, sizes = [], [], [], []
    for f, s in flex:
        i = model.index(f.body)
        J = body_jacobian(model, q, f.body, kin)
        Mf, Q = f.flexible_terms(ctx, z[s])
        Mrr, Mrf, Mff = Mf[:6, :6], Mf[:6, 6:], Mf[6:, 6:]
        M = M + J.T @ Mrr @ J
        b = b + J.T @ (Q[:6] - Mrr @ abias[i])
        cols.append(J.T @ Mrf)
        rows.append((Mrf.T @ J, Mff))
        rhs_f.append(Q[6:] - Mrf.T @ abias[i])
        sizes.append(f.n_flex)
    n = sum(sizes)
    big = jnp.zeros((model.nv + n, model.nv + n), dtype=M.dtype).at[: model.nv, : model.nv].set(M)
    off = model.nv
    for (lower, Mff), upper, k in zip(rows, cols, sizes):
        big = big.at[off : off + k, : model.nv].set(lower)
        big = big.at[: model.nv, off : off + k].set(upper)
        big = big.at[off : off + k, off : off + k].set(Mff)
        off += k
    x = small_spd_solve(big, jnp.concatenate([b] + rhs_f))
    vdot, off = x[: model.nv], model.nv
    for (f, s), k in zip(flex, sizes):
        start = s.start
        qd_f = z[s][k : 2 * k]
        zdot = zdot.at[start : start + 2 * k].set(jnp.concatenate([qd_f, x[off : off + k]]))
        off += k
    return vdot, zdot
