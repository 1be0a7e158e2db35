"""Flexible body in the floating frame of reference (FFR).

Hong et al. (2016), Section II (eqs. 14-29), after Shabana (2005): the body frame moves
rigidly; the position of a neutral-axis point is (eq. 16)

    r_P = R + A (x0 + u),      u = N(s) q_n = N(s) P q_f

with R, A the body frame's position and orientation in the world, x0 the
undeformed position in the body frame, N the body-frame shape matrix
(``BeamMesh.shape_integrals``) and P (n_dof, n_f) the basis of the elastic
coordinates q_f: either the selection of the free nodal DOFs (the seed's B2,
eq. 15) or mass-normalised modes (q_n = Φ η). Each cross-section also carries
the small rotation θ(s) = R_θ(s) P q_f and a rotational inertia J_s per length.

Velocities. Unlike the seed (Euler-angle rates θ̇ and the matrix Ḡ, eq. 17) the
reference motion is the body-frame twist [v; ω] (linear first, docs/conventions.md):
v = Aᵀ Ṙ, ω̃ = Aᵀ Ȧ. The generalized velocity is ν = [v; ω; q̇_f] (6 + n_f),
and the velocity of P in body components is (cf. eq. 18)

    Aᵀ ṙ_P = v − r̃ ω + N q̇_f,     r = x0 + u,

the angular velocity of a section ω + R_θ q̇_f (small-rotation, gyrostat model:
the section inertia is taken in its undeformed orientation).

Kinetic energy (eq. 19) T = ½ νᵀ M(q_f) ν with (eq. 20/21, our blocks)

    M = [[ m I      −S̃              S̄            ],
         [ S̃        J_r + J_sec     Ĩ + J_θ      ],
         [ S̄ᵀ       (Ĩ + J_θ)ᵀ      M_ff         ]]

    S(q)   = S0 + S̄ q                              first moment ∫ μ r  (kg·m)
    J_r(q) = tr(I_rr) 1 − I_rr,  I_rr = ∫ μ r rᵀ   inertia of the neutral axis about the body origin
    Ĩ(q)   = ∫ μ r̃ N:  row i = ε_iab R_ab,   R_ab = ∫ μ r_a N_b = I1_ab + qᵀ Sbb_ab
    M_ff   = Σ_k Sbb_kk + M_θθ  (= Pᵀ M_consistent P; identity for mass-normalised modes)

(m_RR, m_Rθ, m_Rf, m_θθ, m_θf, m_ff of eq. 21.)

Equations of motion. With body-frame quasi-velocities the Lagrange equations
(eq. 27) become the Euler-Poincaré (Boltzmann-Hamel) equations; written out from
d'Alembert's principle with the body-frame acceleration of P

    Aᵀ r̈_P = v̇ + ω×v + ω̇×r + ω×(ω×r) + 2 ω×(N q̇) + N q̈

they read (eq. 28)  M(q_f) [v̇; ω̇; q̈_f] = Q_v + Q_e + Q_g + Q_ext, where v̇, ω̇ are
the plain time derivatives of the body-frame components (the "apparent"
acceleration, docs/conventions.md's body-frame spatial acceleration), and

    Q_v,v = −[ m ω×v + ω×(ω×S) + 2 ω×(S̄ q̇) ]
    Q_v,ω = −[ S×(ω×v) + ω×((J_r + J_sec) ω) + 2 (tr G 1 − G) ω + ω×(J_θ q̇) ]
    Q_v,f = −[ S̄ᵀ(ω×v) + Σ_kl Ω_kl R_lk + 2 Σ_kl ω̃_kl Sbb_kl q̇ ]

with G = ∫ μ (N q̇) rᵀ (G_kl = q̇·R_lk) and Ω = ωωᵀ − |ω|² 1 (= ω̃ω̃).
Elastic forces (eq. 22): Q_e = [0; 0; −K q_f − C q̇_f]. Gravity (body-frame
vector g): Q_g = [m g; S(q)×g; S̄ᵀ g] — the centre of mass moves with the
deformation, as the seed stresses in Section IV.2.

Units SI; shapes noted per function; everything is jax.numpy and pure.
"""

from __future__ import annotations

from typing import Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .beam import BCSpec, BeamMesh, _modes_free, free_dofs

Array = jax.Array

# Levi-Civita symbol, used to turn ∫ μ r_a N_b into ∫ μ r̃ N.
_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0


def _skew(a) -> Array:
    """ã (3, 3) with ã b = a × b."""
    return jnp.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]], dtype=a.dtype)


class FlexibleBody(eqx.Module):
    """Inertia invariants, stiffness and damping of an FFR flexible body.

    Built by ``flexible_body``. All arrays refer to the elastic coordinates q_f
    (n_f,) through the basis P (q_n = P q_f).

    Attributes:
        mass: m = ∫ μ ds (kg).
        S0: (3,) ∫ μ x0 (kg·m).
        Sbar: (3, n_f) ∫ μ N P (kg).
        J0: (3, 3) ∫ μ x0 x0ᵀ (kg·m²).
        I1: (3, 3, n_f) ∫ μ x0_k (N P)_l (kg·m).
        Sbb: (3, 3, n_f, n_f) ∫ μ (N P)_kᵀ (N P)_l (kg).
        Jsec: (3, 3) ∫ J_s (kg·m²) (section rotational inertia).
        Jth: (3, n_f) ∫ J_s R_θ P (kg·m²).
        M_ff: (n_f, n_f) elastic mass block Σ_k Sbb_kk + Pᵀ M_θθ P.
        K: (n_f, n_f) stiffness Pᵀ K P (N/m ...).
        C: (n_f, n_f) damping (Rayleigh α M_ff + β K).
        basis: (n_dof, n_f) P: nodal displacements q_n = P q_f.
        nodes: (n_nodes, 3) undeformed node positions, body frame (m).
        free: static tuple of the free nodal DOFs (boundary conditions).
        modal: static; True when q_f are modal coordinates.
    """

    mass: Array
    S0: Array
    Sbar: Array
    J0: Array
    I1: Array
    Sbb: Array
    Jsec: Array
    Jth: Array
    M_ff: Array
    K: Array
    C: Array
    basis: Array
    nodes: Array
    free: tuple = eqx.field(static=True)
    modal: bool = eqx.field(static=True)

    @property
    def n_f(self) -> int:
        return self.basis.shape[1]

    @property
    def n_nodes(self) -> int:
        return self.nodes.shape[0]


def flexible_body(
    mesh: BeamMesh,
    bc: Mapping[int, BCSpec] | None,
    n_modes: int | None = None,
    rayleigh: tuple = (0.0, 0.0),
) -> FlexibleBody:
    """Build the FFR body of a beam mesh.

    Args:
        mesh: the beam mesh, node positions in the body frame.
        bc: reference conditions, e.g. {0: "clamped"} for a boom whose body frame
            is attached to its root section. They must remove the six rigid-body
            motions from the elastic field (otherwise reference motion and
            deformation are not unique and M is singular).
        n_modes: None for nodal elastic coordinates (all free DOFs); an integer
            for that many modal coordinates (``beam.modes``).
        rayleigh: (α, β) for C = α M_ff + β K (see ``beam.rayleigh_coefficients``).
    """
    free = free_dofs(mesh.n_nodes, bc)
    if n_modes is not None and not 1 <= n_modes <= free.size:
        raise InputError(f"n_modes must be in 1..{free.size}")
    alpha, beta = rayleigh
    return _build(mesh, tuple(free.tolist()), n_modes, jnp.asarray(alpha, float), jnp.asarray(beta, float))


@eqx.filter_jit
def _build(mesh: BeamMesh, free: tuple, n_modes: int | None, alpha, beta) -> FlexibleBody:
    """``flexible_body`` after the boundary conditions became a static tuple of free DOFs."""
    free = np.asarray(free, dtype=np.int64)
    if n_modes is None:
        P = jnp.zeros((mesh.n_dof, free.size)).at[free, np.arange(free.size)].set(1.0)
    else:
        P, _ = _modes_free(mesh, tuple(free.tolist()), n_modes)
    si = mesh.shape_integrals()
    Sbb = jnp.einsum("ia,klij,jb->klab", P, si["Sbb"], P)
    Mth = P.T @ si["Mth"] @ P
    M_ff = Sbb[0, 0] + Sbb[1, 1] + Sbb[2, 2] + Mth
    M_ff = 0.5 * (M_ff + M_ff.T)
    K = P.T @ mesh.stiffness_matrix() @ P
    K = 0.5 * (K + K.T)
    return FlexibleBody(
        mass=si["m"],
        S0=si["S0"],
        Sbar=si["Sbar"] @ P,
        J0=si["J0"],
        I1=si["I1"] @ P,
        Sbb=Sbb,
        Jsec=si["Jsec"],
        Jth=si["Jth"] @ P,
        M_ff=M_ff,
        K=K,
        C=alpha * M_ff + beta * K,
        basis=P,
        nodes=mesh.nodes,
        free=tuple(int(i) for i in free),
        modal=n_modes is not None,
    )


# ----------------------------------------------------------------------------
# configuration-dependent invariants
# ----------------------------------------------------------------------------


def first_moment(body: FlexibleBody, q_f) -> Array:
    """S(q_f) = ∫ μ r = S0 + S̄ q_f (3,) (kg·m); centre of mass = S/m."""
    return body.S0 + body.Sbar @ q_f


def _R(body: FlexibleBody, q_f) -> Array:
    """R_ab = ∫ μ r_a N_b = I1_ab + q_fᵀ Sbb_ab, shape (3, 3, n_f)."""
    return body.I1 + jnp.einsum("i,abij->abj", q_f, body.Sbb)


def _inertia_from_R(body: FlexibleBody, q_f, R) -> Array:
    """J_r + J_sec (3, 3): inertia about the body origin, body axes (kg·m²)."""
    # I_rr = ∫ μ r rᵀ = J0 + I1·q + (I1·q)ᵀ + qᵀ Sbb q; with R: J0 + I1 q + R q − ... written as
    # I_rr_ab = J0_ab + I1_ab·q + R_ba·q (R_ba·q = I1_ba·q + qᵀSbb_ba q and Sbb_ba = Sbb_abᵀ)
    I1q = body.I1 @ q_f
    Irr = body.J0 + I1q + (R @ q_f).T
    Irr = 0.5 * (Irr + Irr.T)
    return jnp.trace(Irr) * jnp.eye(3, dtype=Irr.dtype) - Irr + body.Jsec


def inertia_tensor(body: FlexibleBody, q_f) -> Array:
    """Inertia (3, 3) of the deformed body about the body-frame origin, body axes (kg·m²)."""
    return _inertia_from_R(body, q_f, _R(body, q_f))


def mass_matrix_blocks(body: FlexibleBody, q_f) -> tuple[Array, Array, Array]:
    """(M_rr (6, 6), M_rf (6, n_f), M_ff (n_f, n_f)) of the generalized mass matrix.

    M_rr is the spatial inertia of the deformed body at the body origin in
    body axes, linear first: [[m 1, −S̃], [S̃, J_r + J_sec]]. M_rf couples the
    reference twist [v; ω] with q̇_f: [[S̄], [Ĩ + J_θ]]. M_ff is constant. The
    kinetic energy is T = ½ [t; q̇]ᵀ [[M_rr, M_rf], [M_rfᵀ, M_ff]] [t; q̇], t the
    body-frame twist.
    """
    q_f = jnp.asarray(q_f)
    R = _R(body, q_f)
    S = first_moment(body, q_f)
    St = _skew(S)
    Jo = _inertia_from_R(body, q_f, R)
    m1 = body.mass * jnp.eye(3, dtype=St.dtype)
    M_rr = jnp.block([[m1, -St], [St, Jo]])
    It = jnp.einsum("iab,abj->ij", _EPS, R)
    M_rf = jnp.concatenate([body.Sbar, It + body.Jth], axis=0)
    return M_rr, M_rf, body.M_ff


def mass_matrix(body: FlexibleBody, q_f) -> Array:
    """Generalized mass matrix M(q_f) (6 + n_f, 6 + n_f) for ν = [v; ω; q̇_f]."""
    M_rr, M_rf, M_ff = mass_matrix_blocks(body, q_f)
    return jnp.block([[M_rr, M_rf], [M_rf.T, M_ff]])


def quadratic_velocity_force(body: FlexibleBody, q_f, qd_f, twist) -> Array:
    """Q_v (6 + n_f,): centrifugal, Coriolis and gyroscopic generalized forces.

    Right-hand-side sign: M ν̇ = Q_v + ... . Formulas in the module docstring.
    twist: [v; ω] (6,) of the body frame, body axes (m/s, rad/s).
    """
    q_f, qd_f, twist = jnp.asarray(q_f), jnp.asarray(qd_f), jnp.asarray(twist)
    v, w = twist[:3], twist[3:]
    R = _R(body, q_f)
    S = first_moment(body, q_f)
    Jo = _inertia_from_R(body, q_f, R)
    Sq = body.Sbar @ qd_f
    wxv = jnp.cross(w, v)
    f_v = body.mass * wxv + jnp.cross(w, jnp.cross(w, S)) + 2.0 * jnp.cross(w, Sq)
    G = jnp.einsum("lkj,j->kl", R, qd_f)  # G_kl = ∫ μ (N q̇)_k r_l
    f_w = (
        jnp.cross(S, wxv)
        + jnp.cross(w, Jo @ w)
        + 2.0 * (jnp.trace(G) * w - G @ w)
        + jnp.cross(w, body.Jth @ qd_f)
    )
    wt = _skew(w)
    Om = jnp.outer(w, w) - jnp.dot(w, w) * jnp.eye(3, dtype=w.dtype)
    f_f = (
        body.Sbar.T @ wxv
        + jnp.einsum("kl,lkj->j", Om, R)
        + 2.0 * jnp.einsum("kl,klij,j->i", wt, body.Sbb, qd_f)
    )
    return -jnp.concatenate([f_v, f_w, f_f])


def elastic_force(body: FlexibleBody, q_f, qd_f) -> Array:
    """Q_e (6 + n_f,) = [0; 0; −K q_f − C q̇_f] (seed eq. 22 plus damping)."""
    f = -(body.K @ q_f) - body.C @ qd_f
    return jnp.concatenate([jnp.zeros(6, f.dtype), f])


def gravity_force(body: FlexibleBody, q_f, gravity_body) -> Array:
    """Q_g (6 + n_f,) = [m g; S(q_f) × g; S̄ᵀ g] for a uniform field g (3,), body axes (m/s²).

    The moment is about the body origin; S moves with the deformation.
    """
    g = jnp.asarray(gravity_body)
    S = first_moment(body, q_f)
    return jnp.concatenate([body.mass * g, jnp.cross(S, g), body.Sbar.T @ g])


def flexible_body_terms(body: FlexibleBody, q_f, qd_f, twist, gravity_body) -> tuple[Array, Array]:
    """(M, h) with M [a; q̈_f] = h + Q_ext for a free-floating flexible body.

    Args:
        q_f, qd_f: (n_f,) elastic coordinates and rates.
        twist: (6,) [v; ω] of the body frame in body axes.
        gravity_body: (3,) gravity vector in body axes (m/s²).

    Returns:
        M (6 + n_f, 6 + n_f) symmetric positive definite; h (6 + n_f,) =
        Q_v + Q_e + Q_g. a = d/dt [v; ω] (body-frame components). Q_ext from
        ``generalized_force_at_node`` and friends.
    """
    M = mass_matrix(body, q_f)
    h = quadratic_velocity_force(body, q_f, qd_f, twist) + elastic_force(body, q_f, qd_f) + gravity_force(
        body, q_f, gravity_body
    )
    return M, h


# ----------------------------------------------------------------------------
# energies and momentum
# ----------------------------------------------------------------------------


def kinetic_energy(body: FlexibleBody, q_f, qd_f, twist) -> Array:
    """T = ½ νᵀ M(q_f) ν (J), ν = [v; ω; q̇_f]."""
    nu = jnp.concatenate([jnp.asarray(twist), jnp.asarray(qd_f)])
    return 0.5 * nu @ mass_matrix(body, q_f) @ nu


def strain_energy(body: FlexibleBody, q_f) -> Array:
    """U = ½ q_fᵀ K q_f (J)."""
    return 0.5 * q_f @ body.K @ q_f


def potential_energy(body: FlexibleBody, q_f, position, rotation, gravity_world=(0.0, 0.0, -9.81)) -> Array:
    """Strain plus gravitational potential energy (J).

    V = ½ q_fᵀ K q_f − m g·p − g·(A S(q_f)), p (3,) the body origin in the
    world, rotation A (3, 3) body-to-world, gravity_world (3,) (m/s²).
    """
    g = jnp.asarray(gravity_world)
    S_w = jnp.asarray(rotation) @ first_moment(body, q_f)
    return strain_energy(body, q_f) - body.mass * g @ jnp.asarray(position) - g @ S_w


def momentum(body: FlexibleBody, q_f, qd_f, twist) -> Array:
    """Body-frame spatial momentum [p; L_O] (6,) = [M_rr M_rf] ν.

    p = ∫ μ ṙ (kg·m/s), L_O = ∫ μ r × ṙ + ∫ J_s(ω + R_θ q̇) (kg·m²/s) about the body
    origin, both in body axes. In the world: p_w = A p, L_w(about 0) = A L_O + p_origin × A p.
    """
    M_rr, M_rf, _ = mass_matrix_blocks(body, q_f)
    return M_rr @ jnp.asarray(twist) + M_rf @ jnp.asarray(qd_f)


# ----------------------------------------------------------------------------
# nodes: positions, velocities, Jacobians, forces
# ----------------------------------------------------------------------------


def _node_rows(body: FlexibleBody, node: int) -> Array:
    """(6, n_f): rows of the basis giving node displacement and small rotation."""
    k = int(node) % body.n_nodes
    return body.basis[6 * k : 6 * k + 6]


def node_displacement(body: FlexibleBody, q_f, node: int) -> Array:
    """[u; θ] (6,) of node ``node`` in body axes (m, rad)."""
    return _node_rows(body, node) @ q_f


def node_position(body: FlexibleBody, q_f, node: int) -> Array:
    """r (3,) of a node in the deformed body, body frame (m): x0 + u."""
    k = int(node) % body.n_nodes
    return body.nodes[k] + _node_rows(body, node)[:3] @ q_f


def deformed_nodes(body: FlexibleBody, q_f) -> Array:
    """(n_nodes, 3) deformed node positions, body frame (m)."""
    u = (body.basis @ q_f).reshape(-1, 6)[:, :3]
    return body.nodes + u


def node_jacobian(body: FlexibleBody, q_f, node: int) -> Array:
    """J (6, 6 + n_f) mapping ν = [v; ω; q̇_f] to the node's [velocity; angular velocity].

    Both in body axes: v_node = v − r̃ ω + N_k q̇_f, ω_node = ω + R_θk q̇_f (small
    rotations). The transpose maps a node wrench to generalized forces.
    """
    rows = _node_rows(body, node)
    r = node_position(body, q_f, node)
    I3 = jnp.eye(3, dtype=rows.dtype)
    Z = jnp.zeros((3, 3), dtype=rows.dtype)
    top = jnp.concatenate([I3, -_skew(r), rows[:3]], axis=1)
    bot = jnp.concatenate([Z, I3, rows[3:]], axis=1)
    return jnp.concatenate([top, bot], axis=0)


def node_velocity(body: FlexibleBody, q_f, qd_f, twist, node: int) -> Array:
    """Inertial velocity (3,) of a node's material point, body axes (m/s): v + ω × r + N_k q̇_f."""
    nu = jnp.concatenate([jnp.asarray(twist), jnp.asarray(qd_f)])
    return node_jacobian(body, q_f, node)[:3] @ nu


def generalized_force_at_node(body: FlexibleBody, q_f, node: int, wrench_body) -> Array:
    """Generalized force (6 + n_f,) of a wrench [f; n] applied at a node.

    f (N) acts at the node's deformed position, n (N·m) is a couple on the
    node's cross-section, both in body axes. Q = Jᵀ [f; n] =
    [f; r × f + n; N_kᵀ f + R_θkᵀ n] (virtual work, seed eqs. 25-26).
    """
    return node_jacobian(body, q_f, node).T @ jnp.asarray(wrench_body)
