"""Gravity alone: the joint forces that hold a tree still, and the bodies' weights.

:func:`gravity_torques` is a tuned RNEA(q, 0, 0) without external forces (subtree weights from the
world placements, no recursion over twists or accelerations); the contract test holds it to
:func:`.reference.rnea`.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..kinematics import forward_kinematics, joint_states
from ..model import Model
from .tree import CONSTANT_SUBSPACE, tree_tables


def gravity_wrenches(model: Model, q):
    """Weight of every body as a body-frame wrench (n, 6): I_i [ⁱR₀ g; 0]."""
    js = joint_states(model, q)
    Rw = []
    for i, lam in enumerate(model.parents):
        Rw.append(js.R[i] if lam < 0 else spatial.mm(Rw[lam], js.R[i]))
    return jnp.stack([spatial.mv(model.inertia[i][:, :3], spatial.mtv(Rw[i], model.gravity)) for i in range(model.n_bodies)])


def gravity_torques(model: Model, q, R_world=None, p_world=None):
    """Joint forces that hold the tree still against gravity, g(q) = RNEA(q, 0, 0), O(n).

    From the world placements of the bodies (``R_world``, ``p_world``, computed
    here unless given): each subtree's weight m g acts at its centre of mass, the
    joint carries −[F; N] (body frame, about the body origin) and τ = Sᵀ of that.
    No recursion over twists or accelerations, so it costs a fraction of an RNEA.
    """
    if R_world is None or p_world is None:
        R_world, p_world = forward_kinematics(model, q)
    I = model.inertia
    mass = I[:, 0, 0]
    mc = jnp.stack([I[:, 5, 1], I[:, 3, 2], I[:, 4, 0]], -1)  # m c from the block m ĉ (body frame)
    H = mass[:, None] * p_world + spatial.mv(R_world, mc)  # world first moments Σ m (p + R c)
    # Subtree sums as one multiply-and-sum with the constant subtree matrix (no per-body slices,
    # whose transposes are unfused pad kernels in reverse mode).
    sub = jnp.asarray(tree_tables(model)[0].T, dtype=H.dtype)  # sub[k, i] = 1: i in k's subtree
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
    _, _, owner, S = tree_tables(model)
    nv = model.nv
    G = np.zeros((nv, model.n_bodies, 6))
    G[np.arange(nv), owner, :] = S.T  # zero columns for the joints projected below
    tau = jnp.sum(jnp.asarray(G, dtype=f.dtype) * f[None], axis=(-2, -1))
    for i, j in enumerate(model.joints):
        if j.nv and not isinstance(j, CONSTANT_SUBSPACE):
            qi = q[model.q_slice(i)]
            E = np.zeros((nv, j.nv))
            E[model.v_start[i] + np.arange(j.nv), np.arange(j.nv)] = 1.0
            tau = tau + jnp.sum(jnp.asarray(E, dtype=f.dtype) * spatial.mtv(j.motion_subspace(qi), f[i])[None, :], -1)
    return tau


def context_gravity_torques(ctx):
    """:func:`gravity_torques` at a :class:`~jaxmbd.system.Context`'s state from the world placements it holds,
    once per context: the elements that feed gravity forward (a motion-compensation platform, a crane's PD, a
    drive) share one evaluation, and a reverse-mode gradient transposes it once."""
    return ctx.once("gravity_torques", lambda: gravity_torques(ctx.model, ctx.q, ctx.R, ctx.p))
