"""The rigid-body algorithms as the textbook writes them: the specification of jaxmbd's dynamics.

Each function is one algorithm of Featherstone, *Rigid Body Dynamics Algorithms* (RBDA, 2008),
body by body and line for line with its table, so that it can be read against the book.  The
tuned variants beside this module (:mod:`.articulated`, :mod:`.serial_run`, :mod:`.dense`) must
give the same numbers to rounding; ``tests/test_dynamics_contract.py`` holds them to that.

Notation and conventions (docs/conventions.md): spatial vectors linear first, body frames,
``(R_i, p_i)`` the placement of body i in its parent λ(i) after its joint, so that ⁱX_λ moves a
twist from the parent into the body (:func:`spatial.inv_act_motion`) and ᵏX*_i a wrench from the
body into the parent (:func:`spatial.act_force`).  Two departures from the book, both exact:

* gravity enters as a wrench ``−I_i [ⁱR₀ g; 0]`` on each body's rigid inertia, not as a fictitious
  base acceleration a₀ = −a_g, so that an inertia without weight can join the recursion;
* ``extra_inertia`` (n, 6, 6), an inertia added to each body's for the acceleration terms only (no
  weight, no velocity product): how the infinite-frequency added mass of linear hydrodynamics enters.

``f_ext`` (n, 6) are external wrenches on each body, in its own frame, about its origin (the book's
ⁱX*₀ f^x_i already applied).
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import spatial
from ..kinematics import joint_states
from ..model import Model
from ..shapes import BodyInertias, BodyWrenches, Configuration, Velocity


def _inertia(model: Model, i: int, extra_inertia):
    return model.inertia[i] if extra_inertia is None else model.inertia[i] + extra_inertia[i]


def _joint_motion(model: Model, js, i: int):
    """(S_i, v_J, c_J) of body i's joint: jcalc of RBDA Table 4.1 (c_J = Ṡ q̇, zero for most joints)."""
    j = model.joints[i]
    S = js.S[i]
    vJ = S @ js.v[i]
    cJ = j.bias(js.q[i], js.v[i]) if j.nv else jnp.zeros_like(vJ)
    return S, vJ, cJ


def velocities(model: Model, q, v, kinematics=None):
    """Body twists v_i and velocity-product accelerations c_i = c_J + v_i × v_J (RBDA Table 7.1,
    first loop), and gravity in body axes ⁱR₀ g: three lists, one entry per body.  ``kinematics``:
    the :class:`~jaxmbd.kinematics.Kinematics` of (q, v), whose joint placements it then reads."""
    js = joint_states(model, q, v) if kinematics is None else kinematics.joints
    vel, c, gb = [], [], []
    for i, lam in enumerate(model.parents):
        _, vJ, cJ = _joint_motion(model, js, i)
        if lam < 0:
            vel.append(vJ)
            gb.append(spatial.mtv(js.R[i], model.gravity))
        else:
            vel.append(spatial.inv_act_motion(js.R[i], js.p[i], vel[lam]) + vJ)  # v_i = ⁱX_λ v_λ + v_J
            gb.append(spatial.mtv(js.R[i], gb[lam]))
        c.append(cJ + spatial.cross_motion(vel[i], vJ))  # c_i = c_J + v_i × v_J
    return js, vel, c, gb


def _bias_wrench(model: Model, i: int, vel_i, gb_i, f_ext):
    """v_i ×* I_i v_i − I_i [ⁱR₀ g; 0] − f_ext,i: the wrench body i needs at zero acceleration."""
    I = model.inertia[i]
    p = spatial.cross_force(vel_i, I @ vel_i) - I @ jnp.concatenate([gb_i, jnp.zeros_like(gb_i)])
    return p if f_ext is None else p - f_ext[i]


def aba(model: Model, q, v, tau, f_ext=None, extra_inertia=None, kinematics=None):
    """Joint accelerations v̇ by the articulated-body algorithm, RBDA Table 7.1.

    Solves M(q) v̇ + h(q, v) = τ + Σ Jᵢᵀ f_ext,i, with M including ``extra_inertia``.
    """
    n = model.n_bodies
    js, vel, c, gb = velocities(model, q, v, kinematics)
    IA = [_inertia(model, i, extra_inertia) for i in range(n)]  # I^A_i = I_i
    pA = [_bias_wrench(model, i, vel[i], gb[i], f_ext) for i in range(n)]  # p^A_i = v_i ×* I_i v_i − ...
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):  # second loop, leaves to root
        lam, S = model.parents[i], js.S[i]
        U[i] = IA[i] @ S  # U_i = I^A_i S_i
        D = S.T @ U[i]  # D_i = S_iᵀ U_i
        Dinv[i] = 1.0 / D if D.shape == (1, 1) else jnp.linalg.inv(D) if D.size else D
        u[i] = tau[model.v_slice(i)] - S.T @ pA[i]  # u_i = τ_i − S_iᵀ p^A_i
        if lam >= 0:
            UDinv = U[i] @ Dinv[i]
            Ia = IA[i] - UDinv @ U[i].T  # I^a = I^A_i − U_i D_i⁻¹ U_iᵀ
            pa = pA[i] + Ia @ c[i] + UDinv @ u[i]  # p^a = p^A_i + I^a c_i + U_i D_i⁻¹ u_i
            IA[lam] = IA[lam] + spatial.inertia_to_parent(js.R[i], js.p[i], Ia)  # I^A_λ += ᵏX*_i I^a ⁱX_λ
            pA[lam] = pA[lam] + spatial.act_force(js.R[i], js.p[i], pa)  # p^A_λ += ᵏX*_i p^a
    a, qdd = [None] * n, []
    for i, lam in enumerate(model.parents):  # third loop, root to leaves (a₀ = 0: gravity is a wrench)
        a_prime = c[i] if lam < 0 else spatial.inv_act_motion(js.R[i], js.p[i], a[lam]) + c[i]  # a' = ⁱX_λ a_λ + c_i
        qdd_i = Dinv[i] @ (u[i] - U[i].T @ a_prime)  # q̈_i = D_i⁻¹ (u_i − U_iᵀ a')
        a[i] = a_prime + js.S[i] @ qdd_i  # a_i = a' + S_i q̈_i
        qdd.append(qdd_i)
    return jnp.concatenate(qdd)


def body_wrenches(model: Model, q, v, vdot, f_ext=None, extra_inertia=None, kinematics=None):
    """The wrench each body's joint transmits, by the recursive Newton-Euler algorithm, RBDA Table 5.1:
    body accelerations root to leaves, then the body forces summed leaves to root (list, body frames)."""
    js, vel, c, gb = velocities(model, q, v, kinematics)
    a, f = [], []
    for i, lam in enumerate(model.parents):
        a_i = c[i] if lam < 0 else spatial.inv_act_motion(js.R[i], js.p[i], a[lam]) + c[i]
        a.append(a_i + js.S[i] @ vdot[model.v_slice(i)])  # a_i = ⁱX_λ a_λ + S_i q̈_i + c_J + v_i × v_J
        # f_i = I_i a_i + v_i ×* I_i v_i − f^x_i (with the weight and the extra inertia)
        f.append(_inertia(model, i, extra_inertia) @ a[i] + _bias_wrench(model, i, vel[i], gb[i], f_ext))
    for i in reversed(range(model.n_bodies)):
        lam = model.parents[i]
        if lam >= 0:
            f[lam] = f[lam] + spatial.act_force(js.R[i], js.p[i], f[i])  # f_λ += ᵏX*_i f_i
    return js, f


def rnea(model: Model, q, v, vdot, f_ext=None, extra_inertia=None, kinematics=None):
    """Joint forces τ = M(q) v̇ + h(q, v) − Σ Jᵢᵀ f_ext,i: τ_i = S_iᵀ f_i (RBDA Table 5.1)."""
    js, f = body_wrenches(model, q, v, vdot, f_ext, extra_inertia, kinematics)
    taus = [js.S[i].T @ f[i] for i, j in enumerate(model.joints) if j.nv]
    return jnp.concatenate(taus) if taus else jnp.zeros(0, dtype=model.inertia.dtype)


def joint_wrenches(model: Model, q: Configuration, v: Velocity, vdot: Velocity, f_ext: BodyWrenches | None = None,
                   extra_inertia: BodyInertias | None = None, kinematics=None) -> BodyWrenches:
    """Wrench (n, 6) the parent exerts on each body through its joint, in the body's frame.

    Its projection on the motion subspace is the joint force Sᵀ f; the rest is the constraint
    reaction the joint carries.
    """
    return jnp.stack(body_wrenches(model, q, v, vdot, f_ext, extra_inertia, kinematics)[1])


def crba(model: Model, q, extra_inertia=None, kinematics=None):
    """Joint-space inertia M(q) by the composite-rigid-body algorithm, RBDA Table 6.2."""
    js = joint_states(model, q) if kinematics is None else kinematics.joints
    n = model.n_bodies
    Ic = [_inertia(model, i, extra_inertia) for i in range(n)]  # I^c_i = I_i
    for i in reversed(range(n)):
        lam = model.parents[i]
        if lam >= 0:
            Ic[lam] = Ic[lam] + spatial.inertia_to_parent(js.R[i], js.p[i], Ic[i])  # I^c_λ += ᵏX*_i I^c_i ⁱX_λ
    M = jnp.zeros((model.nv, model.nv), dtype=model.inertia.dtype)
    for i in range(n):
        ni = model.joints[i].nv
        if not ni:
            continue
        si = model.v_slice(i)
        F = spatial.mm(Ic[i], js.S[i])  # F = I^c_i S_i
        M = M.at[si, si].set(js.S[i].T @ F)  # H_ii = S_iᵀ F
        k = i
        while model.parents[k] >= 0:
            F = jnp.stack([spatial.act_force(js.R[k], js.p[k], F[:, col]) for col in range(ni)], -1)  # F = ᵏX*_j F
            k = model.parents[k]
            if model.joints[k].nv:
                blk = js.S[k].T @ F  # H_ij = Fᵀ S_j, H_ji = H_ijᵀ
                M = M.at[model.v_slice(k), si].set(blk)
                M = M.at[si, model.v_slice(k)].set(blk.T)
    return M


def bias_accelerations(model: Model, q, v, kinematics=None):
    """J̇ v for every body (n, 6): body-frame spatial accelerations at v̇ = 0 without gravity
    (RBDA Table 5.1's first loop with q̈ = 0)."""
    js, _, c, _ = velocities(model, q, v, kinematics)
    a = []
    for i, lam in enumerate(model.parents):
        a.append(c[i] if lam < 0 else spatial.inv_act_motion(js.R[i], js.p[i], a[lam]) + c[i])
    return jnp.stack(a)
