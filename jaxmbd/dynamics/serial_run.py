"""The articulated-body passes over a serial run of 1-DOF joints in one frame, as ``lax.scan``s.

A serial run is bodies s..e-1 on revolute joints (or all prismatic), each the only child of the one
before (:func:`.tree.segments`).  With every quantity of the run expressed in one frame (the axes of
the run's parent body, the world's for a run at a root; the origin at the run's middle body), the
joint placements, motion subspaces (S = ⁰X_k [0; a]), twists (a cumulative sum of S q̇), velocity
products (c = v × S q̇) and bias forces of all its bodies are batched expressions, placements by
pointer doubling.  The two recursions that stay serial, articulated inertias leaves to root and
accelerations root to leaves, are scans whose bodies need no change of frame, so the compiled program
keeps its size for any depth.  The price is conditioning: lever arms up to half the run's length
enter the inertias (in float32 a 100-body chain's v̇ is about 3x less accurate than body by body).
The arithmetic is RBDA Table 7.1's (:func:`.reference.aba`), associated differently.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..joints import Revolute
from ..kinematics import compose_to_roots
from ..model import Model

# Columns of the rows the articulated pass hands to the acceleration pass, one row a body:
# U = I^A S (6), D⁻¹ and u = τ − Sᵀ p^A.
_U, _DINV, _TAU_BIAS = slice(0, 6), 6, 7


class RunKinematics(NamedTuple):
    """The run's first pass (run frame unless said otherwise)."""

    R: jax.Array  # (k, 3, 3), (k, 3): each body's placement
    p: jax.Array
    S: jax.Array  # (k, 6) motion subspaces
    c: jax.Array  # (k, 6) velocity products
    mass: jax.Array  # (k,), (k, 3), (k, 3, 3) rigid inertias by their parts: mass, centre of mass,
    com: jax.Array  # rotational inertia about the centre of mass
    Ic: jax.Array
    pA: jax.Array  # (k, 6) bias forces
    origin: jax.Array  # (3,) the run frame's origin in the parent's frame
    vel_last: jax.Array  # (6,) the last body's twist, its own frame
    Rw_last: jax.Array  # (3, 3) the last body's world rotation
    pA_last: jax.Array  # (6,) the last body's bias force, its own frame


class RunArticulated(NamedTuple):
    """The run's articulated pass."""

    rows: jax.Array  # (k, 8): [U, D⁻¹, u] of each body
    I_to_parent: jax.Array  # (6, 6) the run's articulated inertia, in the parent's frame
    p_to_parent: jax.Array  # (6,) its bias force, in the parent's frame


class SerialRun:
    """The three ABA passes of bodies s..e-1 of ``model`` (a serial run), ``unroll`` bodies a scan step."""

    def __init__(self, model: Model, s: int, e: int, dtype, unroll: int):
        self.model, self.s, self.e, self.unroll = model, s, e, unroll
        self.revolute = isinstance(model.joints[s], Revolute)
        self.axes = jnp.asarray(np.array([model.joints[k].axis for k in range(s, e)]), dtype=dtype)
        self.qs = slice(model.q_start[s], model.q_start[e - 1] + 1)
        self.vs = slice(model.v_start[s], model.v_start[e - 1] + 1)

    def kinematics(self, q, v, vel0, Rw0, f_ext) -> RunKinematics:
        """Placements, twists, velocity products and bias forces; ``vel0`` the parent's twist,
        ``Rw0`` its world rotation, ``f_ext`` (k, 6) or None."""
        m, s, e = self.model, self.s, self.e
        a, x = self.axes, q[self.qs]
        z = jnp.zeros_like(a)
        if self.revolute:
            RJ, pJ, S = spatial.axis_angle_to_matrix(a, x), z, jnp.concatenate([z, a], -1)
        else:
            RJ, pJ, S = jnp.broadcast_to(jnp.eye(3, dtype=a.dtype), (e - s, 3, 3)), a * x[:, None], jnp.concatenate([a, z], -1)
        R, p = spatial.compose(m.placement_R[s:e], m.placement_p[s:e], RJ, pJ)
        R, p = compose_to_roots(range(-1, e - s - 1), R, p)  # each body in the run's parent
        # the origin at the middle body's keeps the lever arms (and the cancellations in
        # I^A − U Uᵀ/D) about half the run's length
        o = p[(e - s) // 2]
        p = p - o
        vel0 = spatial.inv_act_motion(jnp.eye(3, dtype=p.dtype), o, vel0)
        S = spatial.act_motion(R, p, S)
        vJ = S * v[self.vs][:, None]
        vel = vel0 + jnp.cumsum(vJ, axis=0)
        c = spatial.cross_motion(vel, vJ)
        mass, com, Ic = spatial.inertia_parts(m.inertia[s:e])
        com = spatial.mv(R, com) + p
        Ic = spatial.mm(spatial.mm(R, Ic), jnp.swapaxes(R, -1, -2))
        pA = rigid_bias(mass, com, Ic, vel, spatial.mtv(Rw0, m.gravity))
        if f_ext is not None:
            pA = pA - spatial.act_force(R, p, f_ext)
        return RunKinematics(R, p, S, c, mass, com, Ic, pA, o,
                             vel_last=spatial.inv_act_motion(R[-1], p[-1], vel[-1]), Rw_last=spatial.mm(Rw0, R[-1]),
                             pA_last=spatial.inv_act_force(R[-1], p[-1], pA[-1]))

    def articulated(self, IA_last, pA_last, kin: RunKinematics, tau, extra_inertia) -> RunArticulated:
        """Articulated inertias leaves to root.  IA_last, pA_last: the last body's articulated inertia
        and bias force in its own frame (its subtree beyond the run included).  The rigid inertias
        enter the scan as their parts (13 numbers a body instead of 36) and are assembled inside it."""
        R, p = kin.R, kin.p
        last = jnp.arange(self.e - self.s) == self.e - self.s - 1  # the last body enters whole as the start
        mass = jnp.where(last, 0.0, kin.mass)
        C = spatial.skew(kin.com)
        Io = jnp.where(last[:, None, None], 0.0, kin.Ic - mass[:, None, None] * spatial.mm(C, C))
        xs_extra = None
        if extra_inertia is not None:
            xs_extra = spatial.inertia_to_parent(R, p, extra_inertia[self.s : self.e])
            xs_extra = jnp.where(last[:, None, None], 0.0, xs_extra)
        pA = jnp.concatenate([kin.pA[:-1], spatial.act_force(R[-1], p[-1], pA_last)[None]])
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
            return (Ia, pAk + spatial.mv(Ia, c) + Ud * u), jnp.concatenate([U, Dinv[None], u[None]])

        z = (spatial.inertia_to_parent(R[-1], p[-1], IA_last), jnp.zeros_like(pA[0]))
        xs = (kin.S, mass, kin.com, Io, xs_extra, pA, kin.c, tau[self.vs])
        (dI, dp), rows = jax.lax.scan(body, z, xs, reverse=True, unroll=self.unroll)
        eye = jnp.eye(3, dtype=dp.dtype)
        return RunArticulated(rows, spatial.inertia_to_parent(eye, kin.origin, dI), spatial.act_force(eye, kin.origin, dp))

    def accelerations(self, a0, kin: RunKinematics, art: RunArticulated):
        """(q̈ of the run (k,), the last body's acceleration in its own frame) from the parent's a0."""

        def body(a_p, x):
            S, c, row = x
            ap = a_p + c
            qk = (row[_TAU_BIAS] - jnp.sum(row[_U] * ap)) * row[_DINV]
            return ap + S * qk, qk

        a0 = spatial.inv_act_motion(jnp.eye(3, dtype=a0.dtype), kin.origin, a0)
        a_last, qdd = jax.lax.scan(body, a0, (kin.S, kin.c, art.rows), unroll=self.unroll)
        return qdd, spatial.inv_act_motion(kin.R[-1], kin.p[-1], a_last)


def rigid_bias(mass, com, Ic, vel, g):
    """v ×* I v − I [g; 0] for rigid inertias given by their parts (batched), without forming I."""
    vl, w = vel[..., :3], vel[..., 3:]
    mk = mass[..., None]
    f = mk * (vl - spatial.cross(com, w))  # linear momentum
    n = spatial.cross(com, f) + spatial.mv(Ic, w)  # angular momentum about the origin
    h = jnp.concatenate([f, n], -1)
    grav = jnp.concatenate([mk * g, mk * spatial.cross(com, g)], -1)
    return spatial.cross_force(vel, h) - grav
