"""Small dense solves of the dynamics: symmetric positive-definite blocks of size 1-6 (the ABA's D_i), the
small systems of the loops, coupled inertia, prescribed motions and flexible bodies written out up to
:data:`SMALL` unknowns (LAPACK's Cholesky beyond), and the joint-space inertia's Cholesky factor.  Unbatched:
vmap them for batches.  A matrix that is not positive definite gives finite numbers written out (its pivots
show it) where LAPACK's Cholesky gives NaN."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def gauss_jordan(D, B, pivots: bool = False):
    """D⁻¹ B for a small symmetric positive-definite D and B (n, m), by Gauss-Jordan elimination of
    [D | B] without pivoting (stable for SPD matrices).  Each of the n steps is one rank-1 update of
    the whole augmented matrix, element-wise: n XLA kernels, where a Cholesky factor and triangular
    solves written entry by entry are several times more (benchmarks/NOTES.md).  With ``pivots``, also
    the n pivots (..., n): those of D's LDLᵀ factorisation, the squares of its Cholesky factor's diagonal."""
    n = D.shape[-1]
    A = jnp.concatenate([D, B], -1)
    rows = np.arange(n)[:, None]
    found = []
    for k in range(n):
        found.append(A[..., k, k])
        pivot_row = A[..., k : k + 1, :] / A[..., k : k + 1, k : k + 1]  # (1, n + m)
        A = jnp.where(rows == k, pivot_row, A - A[..., :, k : k + 1] * pivot_row)
    return (A[..., :, n:], jnp.stack(found, -1)) if pivots else A[..., :, n:]


def spd_solve(D, b):
    """x = D⁻¹ b for a small symmetric positive-definite D (see :func:`gauss_jordan`)."""
    return gauss_jordan(D, b[..., :, None])[..., :, 0]


def spd_inverse(D):
    """D⁻¹ for a small symmetric positive-definite D (see :func:`gauss_jordan`), symmetrised."""
    X = gauss_jordan(D, jnp.broadcast_to(jnp.eye(D.shape[-1], dtype=D.dtype), D.shape))
    return 0.5 * (X + jnp.swapaxes(X, -1, -2))


SMALL = 12
"""Up to this many unknowns a symmetric positive-definite system is solved by :func:`gauss_jordan` written out (XLA
fuses its steps; a LAPACK call's own overhead is most of a small solve's time: the four-bar's right-hand side
2.9 -> 1.8 µs); beyond it by LAPACK's Cholesky (19 coordinates: elimination 15 % slower; benchmarks/NOTES.md)."""


def small_spd_solve(M, B):
    """M⁻¹ B for a symmetric positive-definite M (n, n) and B (n,) or (n, m): :func:`gauss_jordan` up to
    :data:`SMALL` unknowns, LAPACK's Cholesky beyond."""
    if M.shape[-1] <= SMALL:
        return spd_solve(M, B) if B.ndim == M.ndim - 1 else gauss_jordan(M, B)
    from jax.scipy.linalg import cho_factor, cho_solve

    return cho_solve(cho_factor(M), B)


def small_spd_inverse(S):
    """(S⁻¹, the pivots of its LDLᵀ factorisation: its Cholesky factor's diagonal squared), as :func:`small_spd_solve`."""
    eye = jnp.eye(S.shape[-1], dtype=S.dtype)
    if S.shape[-1] <= SMALL:
        return gauss_jordan(S, eye, pivots=True)
    L = jnp.linalg.cholesky(S)
    return jax.scipy.linalg.cho_solve((L, True), eye), jnp.diagonal(L) ** 2


def cholesky_solve(L, b):
    """x with L Lᵀ x = b, L lower triangular."""
    y = jax.lax.linalg.triangular_solve(L, b[:, None], left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True)[:, 0]
