"""The dynamics of a tree closed by loops: Lagrange multipliers on the tree's coordinates (RBDA ch. 8).

The loops are objects with ``rows(model, q[, v])`` (φ and the velocity rows J_c v), ``n_rows``,
``baumgarte``, ``terms`` (the rows written out) and ``wrench_map(model, kin)``, :class:`jaxmbd.loops.Loop` for one;
:mod:`jaxmbd.loops` describes the method and its constants.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..kinematics import Kinematics
from .linalg import small_spd_inverse, small_spd_solve


def loop_terms(loops, model, q, v):
    """The loops' rows together: φ (m,), J_c (m, nv), J̇_c v (m,)."""
    def vel(q, v):
        return jnp.concatenate([lp.rows(model, q, v)[1] for lp in loops])

    phi = jnp.concatenate([lp.rows(model, q)[0] for lp in loops])
    J = jax.jacfwd(lambda v: vel(q, v))(v)
    qdot = model.qdot(q, v)
    _, jdot_v = jax.jvp(lambda q: vel(q, v), (q,), (qdot,))
    return phi, J, jdot_v


def loop_terms_from(loops, model, q, v, kin: Kinematics, world=None):
    """:func:`loop_terms` from the kinematics and bias accelerations of this (q, v), each loop's rows
    written out (``Loop.terms``) on the joints' world Jacobian columns; the same to roundoff.  ``world``:
    the world-frame terms of this state (:func:`jaxmbd.dynamics.dense.world_terms`) where the caller has
    them: the columns are their motion subspaces and the bias accelerations their J̇ v in body frames."""
    from ..kinematics import world_jacobian_columns
    from .reference import bias_accelerations

    if world is None:
        abias = bias_accelerations(model, q, v, kin)
        columns = world_jacobian_columns(model, kin)
    else:
        abias, columns = world.body_bias_accelerations(), world.jacobian_columns()
    parts = [lp.terms(model, kin, abias, columns) for lp in loops]
    return tuple(jnp.concatenate([p[k] for p in parts]) for k in range(3))


def constrained_accelerations(loops, model, q, v, M, b, kin: Kinematics | None = None, world=None):
    """(v̇, λ (m,), relative residual, conditioning) of the tree under its loops (the solve
    :mod:`jaxmbd.loops` describes): M solved (:func:`~jaxmbd.dynamics.linalg.small_spd_solve`), proximal iterations on S = J_c M⁻¹ J_cᵀ (with the
    inverse of S + μ I formed once: m is a few rows).  ``world``: as :func:`loop_terms_from`."""
    phi, J, jdot_v = loop_terms(loops, model, q, v) if kin is None else loop_terms_from(loops, model, q, v, kin, world)
    # rows the tree satisfies by itself (a planar linkage's out-of-plane row: J's row is empty) carry no
    # force: their Baumgarte term would otherwise meet a zero pivot and give a multiplier of φ/μ
    norms = jnp.sqrt(jnp.sum(J * J, axis=1))
    live = norms > 1e3 * jnp.finfo(J.dtype).eps * (jnp.max(norms) + jnp.finfo(J.dtype).tiny)
    w = jnp.concatenate([jnp.full(lp.n_rows, 1.0, q.dtype) * lp.baumgarte for lp in loops])
    gamma = jnp.where(live, -jdot_v - 2.0 * w * (J @ v) - w * w * phi, 0.0)
    X = small_spd_solve(M, jnp.concatenate([b[:, None], J.T], axis=1))  # M⁻¹ [b, J_cᵀ]: one solve
    Minv_b, Minv_JT = X[:, 0], X[:, 1:]
    S = J @ Minv_JT
    r = jnp.where(live, gamma - J @ Minv_b, 0.0)
    # S scaled to a unit diagonal (rows in m and in rad compare; an empty row gets a 1), regularised by
    # μ = 1e4 ε (2e-12 in float64, 1e-3 in float32, as Pinocchio's and MuJoCo's regularised solves)
    d = jnp.where(live, jnp.sqrt(jnp.where(live, jnp.diagonal(S), 1.0)), 1.0)
    S_scaled = S / d[:, None] / d[None, :]
    mu = 1e4 * jnp.finfo(S.dtype).eps
    # (S_scaled + μ I)⁻¹ formed once (m is a few rows); D^-½ (S_scaled + μ I)⁻¹ D^-½ = (S + μ D)⁻¹; the
    # elimination's pivots are the squares of the Cholesky factor's diagonal
    inv, pivots = small_spd_inverse(S_scaled + jnp.diag(jnp.where(live, mu, 1.0)))
    inv = inv / d[:, None] / d[None, :]
    lam = jnp.zeros_like(r)
    for _ in range(4):
        lam = lam + inv @ (r - S @ lam)
    lam = jnp.where(live, lam, 0.0)
    # the part of the demand that no multiplier reaches, over the demand: near roundoff for loops that can
    # hold together, O(1) for loops that cannot (conflicting loops, whose multipliers then grow as 1/μ, or
    # a row with no stiffness at this configuration asked to accelerate: a linkage moving through a dead
    # point).  An empty row's demand is its bias acceleration alone: a planar linkage's out-of-plane row
    # asks for none, whatever its drift.
    dead = jnp.where(live, 0.0, jdot_v)
    residual = jnp.sqrt(jnp.sum((S @ lam - r) ** 2) + jnp.sum(dead**2)) / (
        jnp.sqrt(jnp.sum(r**2) + jnp.sum(dead**2)) + jnp.finfo(r.dtype).tiny)
    # the live rows' conditioning: the smallest Cholesky pivot of the scaled S over the largest.  The pivots
    # lie between S's extreme eigenvalues, and one falls to zero as the rows become dependent (a row's pivot
    # is what the rows before it leave of it): 1 for independent rows, → 0 at a singular configuration,
    # where the multipliers lose that many digits.  (No eigenvalue solver: its batched LAPACK call beside a
    # Cholesky factor's, the path beyond linalg.SMALL rows, can deadlock XLA's CPU thread pool in a vmapped run.)
    #
    # Measured with the points' rows of each loop sharing one scale, the largest diagonal of S among them,
    # not one per row: a point row that loses its stiffness against its siblings (a parallelogram lying
    # flat at its dead point: its lever arms all along one row's direction) then shows as a small pivot
    # instead of being scaled back to one.  The diagonal is the point's mobility along the row, J M⁻¹ Jᵀ,
    # which mass weights too (a point is easier to move across a slender arm than along it), but within
    # a few times for any body, far from the 1e-4 a run reports.  The Cholesky factor of D S D is D L, so
    # each pivot is multiplied by its row's diagonal over its scale.
    share = jnp.where(live, jnp.diagonal(S), 0.0) / jnp.maximum(_kind_scale(loops, jnp.where(live, jnp.diagonal(S), 0.0)),
                                                                jnp.finfo(S.dtype).tiny)
    share = jnp.where(live, share, 1.0)
    conditioning = jnp.min(jnp.maximum(pivots - mu, 0.0) * share) / jnp.max(pivots * share)
    return Minv_b + Minv_JT @ lam, lam, residual, conditioning


def _kind_scale(loops, diag):
    """Per row, the largest of ``diag`` over the rows of its kind in its loop (:attr:`jaxmbd.loops.Loop.row_kinds`)."""
    out, start = [], 0
    for lp in loops:
        kinds = np.asarray(getattr(lp, "row_kinds", range(lp.n_rows)))  # each row its own kind by default
        block = diag[start : start + lp.n_rows]
        # the points' rows share their largest; a direction row is its own scale (its diagonal is the
        # inverse of a rotational inertia, which a slender body makes differ by orders between axes)
        out.append(jnp.stack([jnp.max(block[kinds == k]) if k == 0 else block[r] for r, k in enumerate(kinds)]))
        start += lp.n_rows
    return jnp.concatenate(out)


def loop_wrenches(loops, model, kin: Kinematics, lam):
    """The loops' forces on the bodies as body-frame wrenches (n, 6), [force; moment about the body
    origin]: on body a the loop's force at its point and its moment, on body b the opposite force at its
    point and its moment (``Loop.wrench_map``)."""
    W = jnp.zeros((model.n_bodies, 6), dtype=lam.dtype)
    k = 0
    for lp in loops:
        m = lp.n_rows
        lk = lam[k : k + m]
        Fa, Ma, Mb = lp.wrench_map(model, kin)
        F = lk @ Fa
        for body, point, f, mom in ((lp.body_a, lp.point_a, F, lk @ Ma), (lp.body_b, lp.point_b, -F, lk @ Mb)):
            if body == "world":
                continue
            i = model.index(body)
            R = kin.rotation(i)
            f_b = R.T @ f
            W = W.at[i].add(jnp.concatenate([f_b, jnp.cross(jnp.asarray(point, lam.dtype), f_b) + R.T @ mom]))
        k += m
    return W
