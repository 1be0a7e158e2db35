"""Spatial (6-D) algebra, linear part first.

A twist is ``[v; ω]`` and a wrench ``[f; n]``, both expressed in a named frame
and referred to that frame's origin (Pinocchio's order, and the order of every
hydrodynamic table: surge, sway, heave, roll, pitch, yaw).

A rigid placement is held as a pair ``(R, p)``: the pose of a child frame C in
a parent frame P, with ``R = ᴾR_C`` (columns are C's axes in P) and ``p`` the
origin of C in P coordinates.  This is Pinocchio's ``SE3`` and URDF's
``<origin>``.  The Plücker transforms it defines are, in linear-first order,

    ᴾX_C (motion)  = [[R, p̂ R], [0, R]]       v_P = R v_C + p × (R ω_C),  ω_P = R ω_C
    ᴾX*_C (force)  = [[R, 0], [p̂ R, R]]       f_P = R f_C,  n_P = R n_C + p × (R f_C)

(Featherstone, *Rigid Body Dynamics Algorithms*, §2.8, with the blocks
reordered for linear-first vectors).  The functions below apply them without
forming 6x6 matrices, which is what keeps the recursions cheap.

Quaternions are scalar first, ``[w, x, y, z]``, unit norm, and rotate body
coordinates into parent coordinates: ``R(q) x_body = x_parent``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._forward import FORWARD_MODE

# ---------------------------------------------------------------------------
# 3-D helpers


def skew(a):
    """Matrix â with â b = a × b."""
    a = jnp.asarray(a)
    z = jnp.zeros_like(a[..., 0])
    return jnp.stack(
        [
            jnp.stack([z, -a[..., 2], a[..., 1]], -1),
            jnp.stack([a[..., 2], z, -a[..., 0]], -1),
            jnp.stack([-a[..., 1], a[..., 0], z], -1),
        ],
        -2,
    )


_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0
# ê_k = skew(e_k), so that skew(c) = Σ_k c_k ê_k: element-wise with constant matrices
SKEW_BASIS = _LEVI_CIVITA.transpose(1, 0, 2)


def cross(a, b):
    """a × b.

    The value is written out component by component, so XLA fuses it with its
    neighbours; the derivative is Σ_jk ε_ijk (da_j b_k + a_j db_k) as a broadcast
    multiply and a sum, whose transpose (reverse mode) is again a multiply and a
    sum, where the transposes of component slices would be ``pad`` kernels that
    XLA's CPU backend runs one by one.  A forward-mode program, which computes the
    derivative and does not transpose it (traced within
    :func:`jaxmbd.dynamics.dense.dense_value`), takes it component by component.
    """
    return _cross(jnp.asarray(a), jnp.asarray(b))


@jax.custom_jvp
def _cross(a, b):
    return jnp.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        -1,
    )


def _cross_sum(a, b):
    eps = jnp.asarray(_LEVI_CIVITA, dtype=jnp.result_type(a, b))
    return jnp.sum(eps * a[..., None, :, None] * b[..., None, None, :], axis=(-2, -1))


def _cross_jvp(primals, tangents):
    # reverse mode transposes the tangent: as a product with the Levi-Civita symbol its transpose is a
    # multiply and a sum, where that of the component slices would be pads.  A forward-mode program
    # (traced within jaxmbd.dynamics.dense.dense_value()) computes it: component by component, it fuses
    # with its neighbours (the crane vessel's forward-mode gradient 4 % faster; the other form in reverse
    # mode 4 % slower: benchmarks/NOTES.md, "Cross products' tangents by mode")
    a, b = primals
    da, db = tangents
    out = _cross(a, b)
    zero = jax.custom_derivatives.SymbolicZero
    form = _cross if FORWARD_MODE.get() else _cross_sum
    terms = ([] if isinstance(da, zero) else [form(da, b)]) + ([] if isinstance(db, zero) else [form(a, db)])
    dout = sum(terms[1:], terms[0])
    return out, jnp.broadcast_to(dout, out.shape).astype(out.dtype)


_cross.defjvp(_cross_jvp, symbolic_zeros=True)


def mv(A, x):
    """Matrix-vector product A x over the last axes, element-wise (no dot call).

    On CPU, XLA turns a chain of tiny ``dot`` calls into separate kernels; a
    broadcast multiply and a sum fuse with the surrounding arithmetic.
    """
    return jnp.sum(A * x[..., None, :], axis=-1)


def mm(A, B):
    """Matrix product A B over the last two axes, element-wise (see :func:`mv`)."""
    return jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2)


def mtv(A, x):
    """Aᵀ x over the last axes."""
    return jnp.sum(A * x[..., :, None], axis=-2)


# ---------------------------------------------------------------------------
# Rotations


def rot_x(a):
    c, s = jnp.cos(a), jnp.sin(a)
    o, z = jnp.ones_like(a), jnp.zeros_like(a)
    return jnp.stack([jnp.stack([o, z, z], -1), jnp.stack([z, c, -s], -1), jnp.stack([z, s, c], -1)], -2)


def rot_y(a):
    c, s = jnp.cos(a), jnp.sin(a)
    o, z = jnp.ones_like(a), jnp.zeros_like(a)
    return jnp.stack([jnp.stack([c, z, s], -1), jnp.stack([z, o, z], -1), jnp.stack([-s, z, c], -1)], -2)


def rot_z(a):
    c, s = jnp.cos(a), jnp.sin(a)
    o, z = jnp.ones_like(a), jnp.zeros_like(a)
    return jnp.stack([jnp.stack([c, -s, z], -1), jnp.stack([s, c, z], -1), jnp.stack([z, z, o], -1)], -2)


def rpy_to_matrix(rpy):
    """URDF / z-y-x Euler angles (roll φ, pitch θ, yaw ψ): R = Rz(ψ) Ry(θ) Rx(φ)."""
    rpy = jnp.asarray(rpy)
    return rot_z(rpy[..., 2]) @ rot_y(rpy[..., 1]) @ rot_x(rpy[..., 0])


@jax.custom_jvp
def matrix_to_rpy(R):
    """Inverse of :func:`rpy_to_matrix` (pitch in [-π/2, π/2])."""
    roll = jnp.arctan2(R[..., 2, 1], R[..., 2, 2])
    pitch = jnp.arcsin(jnp.clip(-R[..., 2, 0], -1.0, 1.0))
    yaw = jnp.arctan2(R[..., 1, 0], R[..., 0, 0])
    return jnp.stack([roll, pitch, yaw], -1)


@matrix_to_rpy.defjvp
def _matrix_to_rpy_jvp(primals, tangents):
    # the derivatives of the two atan2 and the arcsin written out, their three scales from R in one
    # expression (autodiff made about seven kernels of them for any number of tangents)
    (R,), (dR,) = primals, tangents
    r20, r21, r22, r10, r00 = R[..., 2, 0], R[..., 2, 1], R[..., 2, 2], R[..., 1, 0], R[..., 0, 0]
    inside = jnp.abs(r20) < 1.0  # jnp.clip holds the pitch at ±π/2 beyond: no derivative there
    den = jnp.stack([r21 * r21 + r22 * r22, jnp.where(inside, 1.0 - r20 * r20, 1.0), r10 * r10 + r00 * r00], -1)
    k = jnp.stack([1.0 / den[..., 0], jnp.where(inside, -jax.lax.rsqrt(den[..., 1]), 0.0), 1.0 / den[..., 2]], -1)
    d = jnp.stack([r22 * dR[..., 2, 1] - r21 * dR[..., 2, 2], dR[..., 2, 0], r00 * dR[..., 1, 0] - r10 * dR[..., 0, 0]], -1)
    return matrix_to_rpy(R), k * d


def axis_angle_to_matrix(axis, angle):
    """Rodrigues' formula for a unit axis."""
    axis = jnp.asarray(axis)
    K = skew(axis)
    s, c = jnp.sin(angle), jnp.cos(angle)
    eye = jnp.eye(3, dtype=K.dtype)
    return eye + s[..., None, None] * K + (1.0 - c)[..., None, None] * (K @ K)


def quat_rate_to_omega(q, dq):
    """ω (body axes) with R(q)ᵀ dR = [ω]× for a change dq of a quaternion that need not be unit:
    2 vec(q* ⊗ dq) / |q|², i.e. 2 (w du − dw u − u × du) / |q|² for q = (w, u); the part of dq along
    q (a change of norm) drops out, as ``quat_to_matrix`` normalises."""
    w, u, dw, du = q[..., :1], q[..., 1:], dq[..., :1], dq[..., 1:]
    return 2.0 * (w * du - dw * u - cross(u, du)) / jnp.sum(q * q, -1, keepdims=True)


@jax.custom_jvp
def quat_to_matrix(q):
    """Rotation matrix of a quaternion [w, x, y, z] (normalised here, so a drifted one still gives a rotation)."""
    return _unit_quat_to_matrix(quat_normalise(q))


@quat_to_matrix.defjvp
def _quat_to_matrix_jvp(primals, tangents):
    # dR = R [ω]× (ω: quat_rate_to_omega), the three columns of R [ω]× as sums of products, element-wise
    (q,), (dq,) = primals, tangents
    R = quat_to_matrix(q)
    om = quat_rate_to_omega(q, dq)
    # (R [ω]×)[:, j] = R (ω × e_j) = Σ_l R[:, l] (ω × e_j)_l
    c0 = R[..., :, 1] * om[..., None, 2] - R[..., :, 2] * om[..., None, 1]
    c1 = R[..., :, 2] * om[..., None, 0] - R[..., :, 0] * om[..., None, 2]
    c2 = R[..., :, 0] * om[..., None, 1] - R[..., :, 1] * om[..., None, 0]
    return R, jnp.stack([c0, c1, c2], -1)


def _unit_quat_to_matrix(q):
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def matrix_to_quat(R):
    """Quaternion [w, x, y, z] with w >= 0 of a rotation matrix (numpy, for model building and tests)."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    if t > 0:
        s = np.sqrt(t + 1.0) * 2
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.asarray(q)
    return q if q[0] >= 0 else -q


def quat_multiply(a, b):
    """Hamilton product a ⊗ b of [w, x, y, z] quaternions."""
    aw, av = a[..., :1], a[..., 1:]
    bw, bv = b[..., :1], b[..., 1:]
    w = aw * bw - jnp.sum(av * bv, -1, keepdims=True)
    v = aw * bv + bw * av + cross(av, bv)
    return jnp.concatenate([w, v], -1)


def quat_derivative(q, omega_body):
    """q̇ = ½ q ⊗ [0, ω] for ω in the rotated (body) frame."""
    return 0.5 * quat_multiply(q, jnp.concatenate([jnp.zeros_like(omega_body[..., :1]), omega_body], -1))


def quat_exp(phi):
    """Unit quaternion of the rotation vector φ (body-frame increment)."""
    # sin(θ/2)/θ with its Taylor series near zero, and a norm whose derivative at
    # zero is finite (the double-where idiom), so gradients stay finite at φ = 0.
    angle2 = jnp.sum(phi * phi, axis=-1, keepdims=True)
    small = angle2 < 1e-12
    safe = jnp.sqrt(jnp.where(small, 1.0, angle2))
    angle = jnp.where(small, 0.0, safe)
    half = 0.5 * angle
    k = jnp.where(small, 0.5 - angle2 / 48.0, jnp.sin(0.5 * safe) / safe)
    return jnp.concatenate([jnp.cos(half), k * phi], -1)


@jax.custom_jvp
def quat_normalise(q):
    return q / jnp.linalg.norm(q, axis=-1, keepdims=True)


@quat_normalise.defjvp
def _quat_normalise_jvp(primals, tangents):
    # d(q / |q|) = P dq with P = (1 − q̂ q̂ᵀ) / |q|: one linear map built from q
    (q,), (dq,) = primals, tangents
    n = jnp.linalg.norm(q, axis=-1, keepdims=True)
    qh = q / n
    P = (jnp.eye(q.shape[-1], dtype=q.dtype) - qh[..., :, None] * qh[..., None, :]) / n[..., None]
    return qh, jnp.sum(P * dq[..., None, :], -1)


# ---------------------------------------------------------------------------
# Placements (R, p) and their action on twists and wrenches


def static_combination(X, coeffs, off=0):
    """Σ_k c_k X[..., off + k] for static (numpy / tuple) coefficients c, skipping zero ones: a product
    with a known vector written element-wise, so XLA fuses it with its neighbours (no reduction
    kernel).  None when every coefficient is zero."""
    out = None
    for k, ck in enumerate(coeffs):
        ck = float(ck)
        if ck == 0.0:
            continue
        term = X[..., off + k] if ck == 1.0 else (-X[..., off + k] if ck == -1.0 else ck * X[..., off + k])
        out = term if out is None else out + term
    return out


def compose(R1, p1, R2, p2):
    """Placement of frame 2 given in frame 1, composed after frame 1 in frame 0: ⁰M₂ = ⁰M₁ ¹M₂."""
    return mm(R1, R2), p1 + mv(R1, p2)


def inverse(R, p):
    Rt = jnp.swapaxes(R, -1, -2)
    return Rt, -mv(Rt, p)


def act_motion(R, p, m):
    """ᴾX_C m: a twist given in C expressed in P."""
    w = mv(R, m[..., 3:])
    v = mv(R, m[..., :3]) + cross(p, w)
    return jnp.concatenate([v, w], -1)


def inv_act_motion(R, p, m):
    """ᶜX_P m: a twist given in P expressed in C."""
    v, w = m[..., :3], m[..., 3:]
    return jnp.concatenate([mtv(R, v - cross(p, w)), mtv(R, w)], -1)


def act_force(R, p, f):
    """ᴾX*_C f: a wrench given in C expressed in P."""
    ff = mv(R, f[..., :3])
    n = mv(R, f[..., 3:]) + cross(p, ff)
    return jnp.concatenate([ff, n], -1)


def inv_act_force(R, p, f):
    """ᶜX*_P f: a wrench given in P expressed in C."""
    ff, n = f[..., :3], f[..., 3:]
    return jnp.concatenate([mtv(R, ff), mtv(R, n - cross(p, ff))], -1)


def motion_matrix(R, p):
    """The 6x6 matrix ᴾX_C of :func:`act_motion`."""
    z = jnp.zeros_like(R)
    return jnp.concatenate(
        [jnp.concatenate([R, mm(skew(p), R)], -1), jnp.concatenate([z, R], -1)], -2
    )


def force_matrix(R, p):
    """The 6x6 matrix ᴾX*_C of :func:`act_force`."""
    z = jnp.zeros_like(R)
    return jnp.concatenate(
        [jnp.concatenate([R, z], -1), jnp.concatenate([mm(skew(p), R), R], -1)], -2
    )


def inertia_to_parent(R, p, I):
    """ᴾX*_C I ᶜX_P: a 6x6 (articulated) inertia given in C, expressed in P.

    ᴾI = X I Xᵀ with X = ᴾX*_C = [[R, 0], [p̂ R, R]]: two 6x6 products.  More flops
    than rotating and shifting the 3x3 blocks, but two XLA kernels where the
    block-wise form took eight (benchmarks/NOTES.md).
    """
    X = jnp.concatenate([jnp.concatenate([R, jnp.zeros_like(R)], -1), jnp.concatenate([mm(skew(p), R), R], -1)], -2)
    return mm(mm(X, I), jnp.swapaxes(X, -1, -2))


# ---------------------------------------------------------------------------
# Spatial cross products


def cross_motion(a, b):
    """a × b for twists a = [v; ω], b: [ω × v_b + v × ω_b; ω × ω_b]."""
    v, w = a[..., :3], a[..., 3:]
    return jnp.concatenate([cross(w, b[..., :3]) + cross(v, b[..., 3:]), cross(w, b[..., 3:])], -1)


def cross_force(a, f):
    """a ×* f for a twist a = [v; ω] and a wrench f = [f; n]: [ω × f; ω × n + v × f]."""
    v, w = a[..., :3], a[..., 3:]
    return jnp.concatenate([cross(w, f[..., :3]), cross(w, f[..., 3:]) + cross(v, f[..., :3])], -1)


# ---------------------------------------------------------------------------
# Spatial inertia


def spatial_inertia(mass, com, inertia_com):
    """6x6 spatial inertia, linear first, about the frame origin.

    ``inertia_com`` is the 3x3 rotational inertia about the centre of mass,
    in the frame's axes.  Result: [[m 1, −m ĉ], [m ĉ, I_c − m ĉ ĉ]].
    """
    mass = jnp.asarray(mass)
    com = jnp.asarray(com)
    c = skew(com)
    m = mass[..., None, None]
    eye = jnp.eye(3, dtype=c.dtype)
    top = jnp.concatenate([m * eye, -m * c], -1)
    bot = jnp.concatenate([m * c, jnp.asarray(inertia_com) - m * (c @ c)], -1)
    return jnp.concatenate([top, bot], -2)


def inertia_parts(I):
    """Mass, centre of mass and rotational inertia about it from a rigid 6x6 spatial inertia."""
    m = I[..., 0, 0]
    mc_hat = I[..., 3:, :3]
    mc = jnp.stack([mc_hat[..., 2, 1], mc_hat[..., 0, 2], mc_hat[..., 1, 0]], -1)
    # a massless frame has no centre of mass: put it at the origin
    c = mc / jnp.where(m > 0, m, 1.0)[..., None]
    C = skew(c)
    Ic = I[..., 3:, 3:] + m[..., None, None] * (C @ C)
    return m, c, Ic
