"""Small dense solves of the tuned dynamics: symmetric positive-definite blocks of size 1-6 (the
ABA's D_i) and the joint-space inertia's Cholesky factor."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def gauss_jordan(D, B):
    """D⁻¹ B for a small symmetric positive-definite D and B (n, m), by Gauss-Jordan elimination of
    [D | B] without pivoting (stable for SPD matrices).  Each of the n steps is one rank-1 update of
    the whole augmented matrix, element-wise: n XLA kernels, where a Cholesky factor and triangular
    solves written entry by entry are several times more (benchmarks/NOTES.md)."""
    n = D.shape[-1]
    A = jnp.concatenate([D, B], -1)
    rows = np.arange(n)[:, None]
    for k in range(n):
        pivot_row = A[..., k : k + 1, :] / A[..., k : k + 1, k : k + 1]  # (1, n + m)
        A = jnp.where(rows == k, pivot_row, A - A[..., :, k : k + 1] * pivot_row)
    return A[..., :, n:]


def spd_solve(D, b):
    """x = D⁻¹ b for a small symmetric positive-definite D (see :func:`gauss_jordan`)."""
    return gauss_jordan(D, b[..., :, None])[..., :, 0]


def spd_inverse(D):
    """D⁻¹ for a small symmetric positive-definite D (see :func:`gauss_jordan`), symmetrised."""
    X = gauss_jordan(D, jnp.broadcast_to(jnp.eye(D.shape[-1], dtype=D.dtype), D.shape))
    return 0.5 * (X + jnp.swapaxes(X, -1, -2))


def cholesky_solve(L, b):
    """x with L Lᵀ x = b, L lower triangular."""
    y = jax.lax.linalg.triangular_solve(L, b[:, None], left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True)[:, 0]
