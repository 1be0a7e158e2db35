"""Forward dynamics differentiated through the joint-space inertia, for small trees.

On trees with at most ``options.dense_max_nv`` velocity DOFs (and no scanned serial run) the ABA's
value is kept (:mod:`.articulated`; faster than the mass-matrix route when vmapped on the CPU) and its
derivatives are those of inverse dynamics, by a custom JVP rule: M dv̇ = dτ − d(ID) with v̇ held
(Carpentier and Mansard 2018), where ID and M are written for every body at once in the world frame
(body Jacobians, a Cholesky factor).  Autodiff through the ABA transposes its ~200 tiny kernels one
by one; this rule's JVP and VJP cost about half as much and compile 3-4x faster
(benchmarks/NOTES.md).  Tangents of the state, τ and f_ext on trees of constant-subspace joints take a
closed form of d(ID) (the bodies' rigid motions, :func:`_rigid_motion_jvp`); those of the model's
arrays or the extra inertia differentiate the world-frame terms.  The rule's own value is the ABA's too
(reverse mode's forward pass then runs the recursion alone), or, within :func:`dense_value` (forward-mode
gradients), the solve with the factor the tangents use.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_name as _checkpoint_name

from .. import spatial
from .._forward import FORWARD_MODE, forward_mode
from ..joints import Free, Planar
from ..kinematics import compose_to_roots, joint_placements
from ..model import Model
from . import articulated
from .linalg import cholesky_solve
from .options import DynamicsOptions
from .tree import CONSTANT_SUBSPACE, segments, tree_tables


def applies(model: Model, options: DynamicsOptions) -> bool:
    """Whether :func:`forward_dynamics` of this tree takes the dense rule."""
    return model.nv <= options.dense_max_nv and all(e - s == 1 for s, e in segments(model, options))


@functools.lru_cache(maxsize=None)
def _rule(options: DynamicsOptions):
    @jax.custom_jvp
    def fd(model, q, v, tau, f_ext, extra_inertia, kinematics):
        return articulated.forward_dynamics(model, q, v, tau, f_ext, extra_inertia, options, kinematics)

    fd.defjvp(functools.partial(_jvp_with_kinematics, options), symbolic_zeros=True)
    return fd


def forward_dynamics(model: Model, q, v, tau, f_ext, extra_inertia, options: DynamicsOptions, kinematics=None):
    """v̇ by the tuned ABA, differentiated through the mass matrix."""
    return _rule(options)(model, q, v, tau, f_ext, extra_inertia, kinematics)


dense_value = forward_mode
"""The forward-mode context (:func:`jaxmbd._forward.forward_mode`), under the name its callers know: within it
the rule's value v̇ comes from the factor its tangents use, not the articulated-body recursion."""


def _jvp_with_kinematics(options, primals, tangents):
    # the kinematics are those of (q, v): the rule differentiates through q and v, so the kinematics'
    # own tangents (the same motion again) are not added a second time.  The value: the recursion's
    # (the primal function's own) unless dense_value() is in force
    value = None if FORWARD_MODE.get() else functools.partial(articulated.forward_dynamics, *primals[:-1], options, primals[-1])
    # the closed-form rule reads the bodies' world placements from them (not their derivatives)
    kin = primals[-1]
    return _jvp(primals[:-1], tangents[:-1], value, None if kin is None else (kin.R, kin.p))


def dense_solve(model: Model, q, v, tau, f_ext=None, extra_inertia=None):
    """(v̇, L) by the mass-matrix route: M = Σ Jᵀ I_T J, h = Σ Jᵀ B, M v̇ = τ − h with M = L Lᵀ."""
    return _solve_from_terms(*_dense_terms(model, q, v, f_ext, extra_inertia), tau)


class WorldTerms(NamedTuple):
    """World-frame quantities of every body (spatial vectors at the world origin), :func:`world_terms`."""

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

    def body_bias_accelerations(self):
        """J̇ v of every body in its own frame (n, 6), as :func:`~jaxmbd.dynamics.reference.bias_accelerations`."""
        return spatial.inv_act_motion(self.Rw, self.pw, self.Ab)

    def jacobian_columns(self):
        """(V, W), each (3, nv): the joints' world Jacobian columns, as :func:`~jaxmbd.kinematics.world_jacobian_columns`."""
        return self.Sw[:, :3].T, self.Sw[:, 3:].T


def world_terms(model: Model, q, v, f_ext, extra_inertia, placements=None) -> WorldTerms:
    """World-frame quantities of every body (spatial vectors at the world origin): placements (``placements``:
    the bodies' world (R, p) of this q where the caller has them, :class:`~jaxmbd.kinematics.Kinematics`' ``R``
    and ``p``; not to be differentiated through), the
    DOFs' motion subspaces Sw (the body Jacobians are J_b = Sw ᵀ masked by the DOFs that move b),
    twists, inertias I and I_T (with the extra inertia), and the bias wrenches
    B = I_T J̇v + V ×* I V − I [g; 0] − f_ext, so that τ = Σ Jᵀ (I_T J v̇ + B)."""
    anc, mask, owner, S0 = tree_tables(model)
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    if placements is None:
        Rw, pw = compose_to_roots(model.parents, *joint_placements(model, q))
    else:
        Rw, pw = placements
    S = jnp.asarray(S0.T, dtype=dtype)
    cJ = []
    for i, j in enumerate(model.joints):  # joints whose subspace moves with q (universal)
        if j.nv and not isinstance(j, CONSTANT_SUBSPACE):
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
    return WorldTerms(Rw, pw, Sw, vJ, V, Ab, I, IT, fw, B)


def _gravity_motion(model: Model):
    return jnp.concatenate([model.gravity, jnp.zeros(3, dtype=model.gravity.dtype)])


def _dense_terms(model: Model, q, v, f_ext, extra_inertia):
    """J (n, 6, nv) body Jacobians, I_T (n, 6, 6) and the bias wrenches B (n, 6) of :func:`world_terms`."""
    mask = tree_tables(model)[1]
    w = world_terms(model, q, v, f_ext, extra_inertia)
    return w.jacobians(mask), w.IT, w.B


def mass_matrix_and_bias(J, IT, B):
    """(M, h) from the world-frame terms: M = Σ Jᵀ I_T J and the bias forces h = Σ Jᵀ B."""
    M = jnp.einsum("bik,bil->kl", J, spatial.mm(IT, J))  # one GEMM; a broadcast-and-sum here is slow on XLA's CPU
    return M, jnp.einsum("bik,bi->k", J, B)


def _solve_from_terms(J, IT, B, tau, value=None):
    """(v̇, L): M = Σ Jᵀ I_T J = L Lᵀ and v̇ = M⁻¹ (τ − Σ Jᵀ B), or v̇ = ``value()`` where given."""
    M, h = mass_matrix_and_bias(J, IT, B)
    L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
    a = cholesky_solve(L, tau - h) if value is None else value()
    # named: a checkpointed right-hand side keeps v̇ for reverse mode (jaxmbd.simulation._SAVED)
    return _checkpoint_name(a, "joint_accelerations"), L


def _jvp(primals, tangents, value=None, placements=None):
    # Differentiating ID(q, v, v̇) = τ at the solution: M dv̇ = dτ − ∂ID/∂(model, q, v, f_ext, E) · d(...),
    # with v̇ held fixed in ID (Carpentier and Mansard 2018).  One JVP of the O(n nv) inverse dynamics and
    # two triangular solves with the factor already computed, instead of differentiating the factorisation.
    # ID(a) = Σ_b J_bᵀ (I_T,b J_b a + B_b), so its derivative at fixed a comes from those of J, I_T and B.
    # Tangents arrive as symbolic zeros where an input is not perturbed (the model's arrays, usually):
    # those inputs are held constant in the JVP instead of carrying zero tangents through it.
    model, q, v, tau, f_ext, extra = primals
    dmodel, dq, dv, dtau, df, dextra = tangents
    if _rigid_rule_applies(model, dmodel):
        return _rigid_motion_jvp(model, q, v, tau, f_ext, extra, dq, dv, dtau, df, dextra, value, placements)
    args, treedef = jax.tree_util.tree_flatten((model, q, v, f_ext, extra))
    dargs = jax.tree_util.tree_leaves((dmodel, dq, dv, df, dextra), is_leaf=lambda x: isinstance(x, _SymbolicZero))
    live = [k for k, d in enumerate(dargs) if not isinstance(d, _SymbolicZero)]

    def terms(*xs):
        leaves = list(args)
        for k, x in zip(live, xs):
            leaves[k] = x
        return _dense_terms(*jax.tree_util.tree_unflatten(treedef, leaves))

    if not live:  # only τ is perturbed: M dv̇ = dτ
        a, L = _solve_from_terms(*terms(), tau, value)
        return a, cholesky_solve(L, dtau)
    (J, IT, B), (dJ, dIT, dB) = jax.jvp(terms, tuple(args[k] for k in live), tuple(dargs[k] for k in live))
    a, L = _solve_from_terms(J, IT, B, tau, value)
    A = jnp.einsum("bik,k->bi", J, a)
    dF = spatial.mv(dIT, A) + spatial.mv(IT, jnp.einsum("bik,k->bi", dJ, a)) + dB
    r = jnp.einsum("bik,bi->k", dJ, spatial.mv(IT, A) + B) + jnp.einsum("bik,bi->k", J, dF)
    rhs = -r if isinstance(dtau, _SymbolicZero) else dtau - r
    return a, cholesky_solve(L, rhs)


_SymbolicZero = jax.custom_derivatives.SymbolicZero


def _is_zero(t) -> bool:
    return all(isinstance(x, _SymbolicZero) for x in jax.tree_util.tree_leaves(t, is_leaf=lambda x: isinstance(x, _SymbolicZero)))


def _rigid_rule_applies(model: Model, dmodel) -> bool:
    """The closed-form JVP below covers the state, τ, f_ext and extra-inertia tangents of trees whose
    joints have constant motion subspaces; tangents of the model's arrays (design derivatives) take
    the general rule."""
    return _is_zero(dmodel) and all(isinstance(j, CONSTANT_SUBSPACE) for j in model.joints)


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


def _rigid_motion_jvp(model, q, v, tau, f_ext, extra, dq, dv, dtau, df, dextra=None, value=None, placements=None):
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
    transform (the general rule's ``jax.jvp`` of :func:`world_terms`), and so is its transpose."""
    _, mask, owner, _ = tree_tables(model)
    dtype = jnp.result_type(model.inertia.dtype, q, v)
    w = world_terms(model, q, v, f_ext, extra, placements)
    maskT = jnp.asarray(mask.T, dtype)
    mask = jnp.asarray(mask, dtype)
    a, L = _solve_from_terms(w.jacobians(mask), w.IT, w.B, tau, value)
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
        # F (dE (Fᵀ A)): three matrix-vector products, not F dE Fᵀ formed first (two 6x6 matrix products
        # that XLA fused into the vector's consumers, each element recomputing them)
        F = spatial.force_matrix(w.Rw, w.pw)
        df_body = df_body + spatial.mv(F, spatial.mv(dextra, spatial.mtv(F, Ja + w.Ab)))
    dID = jnp.sum(w.Sw * (maskT @ df_body), -1)
    if not zero_q:
        dID = dID + jnp.sum(dSw * (maskT @ f), -1)
    rhs = -dID if isinstance(dtau, _SymbolicZero) else dtau - dID
    return a, cholesky_solve(L, rhs)
