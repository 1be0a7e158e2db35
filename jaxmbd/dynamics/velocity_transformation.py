"""The joint-space inertia by Ham et al. (2009)'s velocity transformation: an independent route to
:func:`.reference.crba`'s M(q), kept as its cross-check."""

from __future__ import annotations

import jax.numpy as jnp

from .. import spatial
from ..kinematics import forward_kinematics, joint_states
from ..model import Model


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
