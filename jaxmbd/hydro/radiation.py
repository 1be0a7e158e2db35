"""Radiation memory: retardation functions and their state-space realisation (Cummins).

Cummins' equation for the radiation force on the bodies (6nb DOFs):

    f_rad(t) = −A(∞) ν̇(t) − ∫_0^t K(t − τ) ν(τ) dτ,
    K(t) = (2/π) ∫_0^∞ B(ω) cos(ωt) dω,

and in the frequency domain ∫_0^∞ K(t) e^{−iωt} dt = B(ω) + iω (A(ω) − A(∞))
(Ogilvie). A(∞) belongs to the body inertia; this module deals with the
convolution term, replaced by a linear state-space system

    ẋ = A_r x + B_r ν,     f_mem = −C_r x     (D_r = 0),

so that C_r e^{A_r t} B_r ≈ K(t). Each DOF pair (i, j) with a non-negligible
K_ij gets its own SISO realisation identified from samples of K_ij(t) by
Kung's (ERA) method: SVD of the Hankel matrix of the samples, order from the
Hankel singular values, raised until the normalised L2 error on K_ij(t) meets
the tolerance; poles are reflected into the left half plane if any fall
outside, and C is then refitted by least squares on K_ij(t). The pairs are
stacked block-diagonally into one system for the whole 6nb x 6nb matrix.

Fitting is numpy / scipy (done once); :class:`RadiationStateSpace` runs in JAX.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
import scipy.optimize

from .coefficients import symmetric_part

__all__ = ["retardation_function", "fit_radiation", "RadiationStateSpace", "RadiationFitReport"]


def _cos_integral_piecewise_linear(omega, values, t):
    """∫ f(ω) cos(ωt) dω for f piecewise linear on the grid ``omega``, exactly (Filon-type).

    values: (n_omega, ...) ; t: (n_t,) -> (n_t, ...).
    """
    a, b = omega[:-1], omega[1:]
    fa, fb = values[:-1], values[1:]
    slope = (fb - fa) / (b - a)[(...,) + (None,) * (values.ndim - 1)]
    out = np.empty((t.size,) + values.shape[1:])
    for n, tt in enumerate(t):
        if tt == 0.0:
            out[n] = np.sum(0.5 * (fa + fb) * (b - a)[(...,) + (None,) * (values.ndim - 1)], axis=0)
            continue
        sa, sb, ca, cb = np.sin(a * tt), np.sin(b * tt), np.cos(a * tt), np.cos(b * tt)
        i0 = (sb - sa) / tt  # ∫ cos
        i1 = (b - a) * sb / tt + (cb - ca) / tt**2  # ∫ (ω − a) cos
        e = (...,) + (None,) * (values.ndim - 1)
        out[n] = np.sum(fa * i0[e] + slope * i1[e], axis=0)
    return out


def _extended_damping(omega, damping, tail_power, tail_extent, n_tail=200):
    """B on [0, tail_extent·ω_N]: 0 at ω = 0, the BEM values, then B(ω_N)(ω_N/ω)^p."""
    omega = np.asarray(omega, float)
    damping = np.asarray(damping, float)
    w = [np.zeros(1), omega]
    b = [np.zeros((1,) + damping.shape[1:]), damping]
    if tail_power is not None and tail_extent > 1.0:
        wt = np.geomspace(omega[-1], tail_extent * omega[-1], n_tail)[1:]
        e = (...,) + (None,) * (damping.ndim - 1)
        w.append(wt)
        b.append(damping[-1][None] * ((omega[-1] / wt) ** tail_power)[e])
    return np.concatenate(w), np.concatenate(b)


def retardation_function(omega, damping, t, *, tail_power: float | None = 3.0, tail_extent: float = 8.0):
    """Retardation function K(t) = (2/π) ∫_0^∞ B(ω) cos(ωt) dω [N/m, N, N·m per unit velocity per s].

    ``omega`` (n_omega,) rad/s increasing, ``damping`` (n_omega, ...) B(ω),
    ``t`` (n_t,) s. B is taken piecewise linear, from B(0) = 0 (3-D bodies)
    through the BEM points, and the cosine integral of each linear piece is
    done exactly, so long times need no fine frequency grid. Tail beyond the
    last BEM frequency ω_N: B(ω) = B(ω_N)(ω_N/ω)^p with p = ``tail_power``
    (3, the decay of the damping of surface-piercing bodies at high frequency)
    up to ``tail_extent``·ω_N, zero beyond; ``tail_power=None`` truncates at
    ω_N (Gibbs ripple at frequency ω_N in K).
    """
    w, b = _extended_damping(omega, damping, tail_power, tail_extent)
    return (2.0 / math.pi) * _cos_integral_piecewise_linear(w, b, np.asarray(t, float))


def _hankel_svd(k_samples, max_rows=200):
    """SVD of the Hankel matrix H[p, q] = K((p + q) dt) of the samples (at most max_rows square)."""
    n = k_samples.size
    rows = min(n // 2, max_rows)
    cols = min(n - rows, max_rows)
    H = scipy.linalg.hankel(k_samples[:rows], k_samples[rows - 1 : rows - 1 + cols])
    return np.linalg.svd(H, full_matrices=False)


def _era(svd, dt, order):
    """Kung / ERA realisation (A, B, C) of order ``order`` of a continuous system.

    From the Hankel SVD U S Vᵀ of the samples K(n dt) = C_d A_d^n B: observability
    O = U_r S_r^½, controllability S_r^½ V_rᵀ, A_d from the shift invariance
    of O, then A = log(A_d)/dt by eigen-decomposition.
    """
    U, s, Vt = svd
    r = order
    sq = np.sqrt(s[:r])
    obs = U[:, :r] * sq
    ctr = sq[:, None] * Vt[:r]
    Ad = np.linalg.lstsq(obs[:-1], obs[1:], rcond=None)[0]
    Bc = ctr[:, 0]
    Cc = obs[0]
    lam, V = np.linalg.eig(Ad)
    lam = np.where(np.abs(lam) < 1e-12, 1e-12, lam)
    mu = np.log(lam.astype(complex)) / dt
    # Stability: reflect right-half-plane poles (C is refitted afterwards).
    mu = np.where(mu.real >= 0, -np.maximum(np.abs(mu.real), 1e-6) + 1j * mu.imag, mu)
    A = (V @ np.diag(mu) @ np.linalg.inv(V)).real
    return A, Bc, Cc


def _impulse(A, B, C, t):
    """C e^{A t} B for all t, by eigen-decomposition (falls back on expm)."""
    lam, V = np.linalg.eig(A)
    try:
        Vi = np.linalg.inv(V)
        left = C @ V
        right = Vi @ B
        return np.real(np.exp(np.outer(t, lam)) @ (left * right))
    except np.linalg.LinAlgError:
        return np.array([C @ scipy.linalg.expm(A * tt) @ B for tt in t])


def _refit_C(A, B, t, k):
    """Least-squares C so that C e^{At} B matches K(t); the poles (A) and B stay.

    Constrained to a zero static gain, C (−A)^{-1} B = ∫₀^∞ K dt = B(0) = 0:
    potential-flow damping vanishes at zero frequency, and a fit that misses
    this acts as a (possibly negative) linear damping on slow drift, which
    destabilises every motion without restoring (surge, sway, yaw).
    """
    lam, V = np.linalg.eig(A)
    Vi = np.linalg.inv(V)
    # State trajectory x(t) = V diag(e^{λt}) Vi B, one row per time.
    X = np.real((np.exp(np.outer(t, lam)) * (Vi @ B)[None, :]) @ V.T)
    g = np.linalg.solve(-A, B)
    # minimise |X c − k|² subject to gᵀ c = 0 (Lagrange multiplier, KKT system)
    n = X.shape[1]
    kkt = np.zeros((n + 1, n + 1))
    kkt[:n, :n] = X.T @ X
    kkt[:n, n] = g
    kkt[n, :n] = g
    rhs = np.concatenate([X.T @ k, [0.0]])
    sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
    return sol[:n]


def _frequency_response(A, B, C, omega):
    """C (iωI − A)^{-1} B for each ω: equals B(ω) + iω(A(ω) − A∞) for an exact fit."""
    lam, V = np.linalg.eig(A)
    Vi = np.linalg.inv(V)
    residues = (C @ V) * (Vi @ B)
    return np.sum(residues[None, :] / (1j * omega[:, None] - lam[None, :]), axis=1)


@dataclasses.dataclass
class RadiationFitReport:
    """Quality of a radiation state-space fit, per DOF pair (i, j).

    order[(i, j)]: states used; k_error[(i, j)]: ||K_ss − K||₂ / ||K||₂ over
    the fitted time window; b_error[(i, j)]: ||B_ss − B||₂ / ||B||₂ over the
    BEM frequencies, with B_ss(ω) = Re C (iωI − A)^{-1} B; dropped: pairs
    whose K was negligible (set to zero).
    """

    order: dict
    k_error: dict
    b_error: dict
    dropped: list
    dt: float
    t_max: float
    # smallest eigenvalue of the normalised damping matrix Re H(iω) over a dense grid, and where
    # (passivity_margin): negative where the fitted memory feeds energy into the bodies
    passivity: float = float("nan")
    passivity_omega: float = float("nan")
    passivity_data: float = float("nan")  # the same for the BEM's B(ω) at its frequencies

    @property
    def total_order(self) -> int:
        return int(sum(self.order.values()))

    def max_k_error(self) -> float:
        return max(self.k_error.values()) if self.k_error else 0.0

    def __str__(self) -> str:
        lines = [f"radiation state space: {len(self.order)} pairs, {self.total_order} states, "
                 f"dt = {self.dt:.3g} s, t_max = {self.t_max:.3g} s",
                 "  (i, j)  order  err K(t)  err B(w)"]
        for p in sorted(self.order):
            lines.append(f"  {str(p):8s} {self.order[p]:4d}   {self.k_error[p]:7.4f}   {self.b_error[p]:7.4f}")
        lines.append(f"  passivity: smallest normalised damping eigenvalue {self.passivity:.3g} "
                     f"at {self.passivity_omega:.3g} rad/s (negative: the memory feeds energy there; "
                     f"the BEM data's own: {self.passivity_data:.3g})")
        return "\n".join(lines)


class RadiationStateSpace(eqx.Module):
    """Radiation memory as one linear system over all DOF pairs.

    ẋ = A x + B ν,  memory force f = −C x ≈ −∫_0^t K(t−τ) ν(τ) dτ.

    A (n_x, n_x) block diagonal (one block per DOF pair), B (n_x, n_dof)
    (each block reads the velocity of its motion DOF j), C (n_dof, n_x) (each
    block writes to its force DOF i). ν is the 6nb vector of body velocities
    at the hydrodynamic reference points in the equilibrium frame (surge ...
    yaw per body). x starts at zero (fluid at rest).

    :func:`fit_radiation` returns each block in real modal form: 1x1 blocks for real poles,
    [[σ, ω], [−ω, σ]] for a pair σ ± iω, so every row of A holds at most one entry beside the
    diagonal and every row of B one entry.  Where A and B have that pattern (read once, when the
    system is built from concrete arrays), ẋ is evaluated element-wise,
    ẋ_k = A_kk x_k + A_kp x_p + B_kj ν_j, instead of as dense products: O(n_x) instead of O(n_x²),
    and no matrix-product kernel (BENCHMARKS.md).  Replacing A or B later by arrays with another
    pattern (``eqx.tree_at``) needs a new ``RadiationStateSpace(A, B, C)``.
    """

    A: jax.Array
    B: jax.Array
    C: jax.Array
    # (partner, paired, inputs) of each state, or None: ẋ as dense products
    pattern: tuple | None = eqx.field(static=True)

    def __init__(self, A, B, C):
        self.A, self.B, self.C = A, B, C
        self.pattern = _sparse_pattern(A, B)

    @property
    def n_states(self) -> int:
        return self.A.shape[0]

    def derivative(self, x, velocity):
        """ẋ = A x + B ν."""
        if self.pattern is None:
            return self.A @ x + self.B @ velocity
        partner, paired, inputs = (np.asarray(p) for p in self.pattern)
        k = np.arange(partner.size)
        a_off = self.A[k, partner] * paired.astype(self.A.dtype)
        return self.A[k, k] * x + a_off * x[partner] + self.B[k, inputs] * velocity[inputs]

    def force(self, x):
        """Radiation memory force −C x [N, N·m], shape (n_dof,)."""
        return -(self.C @ x)

    def initial_state(self):
        return jnp.zeros(self.A.shape[0], dtype=self.A.dtype)

    def kernel(self, t):
        """K(t) = C e^{At} B of the fitted system, (n_t, n_dof, n_dof) (numpy, for checks)."""
        A, B, C = (np.asarray(m) for m in (self.A, self.B, self.C))
        t = np.asarray(t, float)
        lam, V = np.linalg.eig(A)
        Vi = np.linalg.inv(V)
        return np.real(np.einsum("ik,tk,kj->tij", C @ V, np.exp(np.outer(t, lam)), Vi @ B))

    def frequency_response(self, omega):
        """C (iωI − A)^{-1} B ≈ B(ω) + iω(A(ω) − A∞), complex (n_omega, n_dof, n_dof)."""
        A, B, C = (np.asarray(m) for m in (self.A, self.B, self.C))
        lam, V = np.linalg.eig(A)
        Vi = np.linalg.inv(V)
        w = np.asarray(omega, float)
        return np.einsum("ik,wk,kj->wij", C @ V, 1.0 / (1j * w[:, None] - lam[None, :]), Vi @ B)


def _sparse_pattern(A, B):
    """(partner, paired, inputs) where every row k of A has at most one entry A_kp beside the diagonal
    (partner p, ``paired``; else p = k) and every row of B at most one, in column ``inputs[k]``;
    None otherwise, or where A and B are not concrete (built inside a trace)."""
    try:
        A, B = np.asarray(A), np.asarray(B)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    n = A.shape[0]
    if n == 0 or A.shape != (n, n) or B.ndim != 2 or B.shape[0] != n:
        return None
    off = (A != 0) & ~np.eye(n, dtype=bool)
    if np.any(off.sum(1) > 1) or np.any((B != 0).sum(1) > 1):
        return None
    partner = np.where(off.any(1), off.argmax(1), np.arange(n))
    return tuple(int(p) for p in partner), tuple(bool(b) for b in off.any(1)), tuple(int(j) for j in np.abs(B).argmax(1))


def _real_modal(A, b, c):
    """The SISO system (A, b, c) with the same transfer function c (sI − A)⁻¹ b, in real modal form:
    T⁻¹ A T with 1x1 blocks for real poles and [[σ, ω], [−ω, σ]] for each pair σ ± iω (T: the
    eigenvectors' real and imaginary parts).  (A, b, c) unchanged where the eigenvectors are
    ill-conditioned (close to a defective A)."""
    lam, V = np.linalg.eig(A)
    n = lam.size
    T, Am = np.zeros((n, n)), np.zeros((n, n))
    done = np.zeros(n, dtype=bool)
    col = 0
    for k in np.argsort(-lam.imag, kind="stable"):  # each pair from its pole with ω > 0
        if done[k]:
            continue
        done[k] = True
        if lam[k].imag == 0.0:
            T[:, col], Am[col, col] = V[:, k].real, lam[k].real
            col += 1
            continue
        gap = np.where(done, np.inf, np.abs(lam - np.conj(lam[k])))
        kk = int(np.argmin(gap))
        if not gap[kk] <= 1e-10 * abs(lam[k]):
            return A, b, c
        done[kk] = True
        s, w = lam[k].real, lam[k].imag
        T[:, col], T[:, col + 1] = V[:, k].real, V[:, k].imag
        Am[col : col + 2, col : col + 2] = [[s, w], [-w, s]]
        col += 2
    if np.linalg.cond(T) > 1e8:
        return A, b, c
    return Am, np.linalg.solve(T, b), c @ T


def _kind_peaks(diag_peaks, dofs):
    """For each DOF, the largest diagonal peak among the DOFs of its kind (translation / rotation)."""
    rot = (dofs % 6) >= 3
    out = np.empty(len(dofs))
    for kind in (False, True):
        m = rot == kind
        if np.any(m):
            out[m] = np.max(diag_peaks[m])
    return out


def fit_radiation(
    hydro,
    *,
    dofs=None,
    tol: float = 0.02,
    max_order: int = 16,
    dt: float | None = None,
    t_max: float | None = None,
    relative_threshold: float = 1e-3,
    tail_power: float | None = 3.0,
    tail_extent: float = 8.0,
):
    """Fit the radiation memory of ``hydro`` (a :class:`HydroData`) with a state-space model.

    ``dofs``: indices of the DOFs to model (default all 6nb); pairs (i, j)
    among them with max|K_ij| ≤ ``relative_threshold``·sqrt(P_i P_j) are
    dropped, P_i being the largest diagonal peak max|K_kk| over the DOFs k of
    the same kind (translation / rotation) as i, so that numerical noise (yaw
    of an axisymmetric body) is not fitted. ``tol``: target normalised L2 error on each K_ij(t); the
    order starts at the number of Hankel singular values above tol·σ₁ and is
    raised (to ``max_order``) until the K error is met. ``dt`` (default
    π/(4 ω_N), a quarter of the Nyquist step for the last BEM frequency) and
    ``t_max`` (default: the time after which every diagonal |K_ii| stays below
    1 % of its peak, at least 20 s, at most 200 s) set the sampling.

    Returns (RadiationStateSpace, RadiationFitReport); the report's b_error
    measures B(ω) reproduced from the state space over the BEM frequencies.
    """
    omega = np.asarray(hydro.omega, float)
    Bw = symmetric_part(np.asarray(hydro.radiation_damping, float))  # K_ij = K_ji: one fit serves both
    n = Bw.shape[-1]
    dofs = list(range(n)) if dofs is None else [int(d) for d in dofs]
    if dt is None:
        dt = math.pi / (4.0 * omega[-1])
    if t_max is None:
        t_max = _memory_length(omega, Bw, dofs, dt, relative_threshold, tail_power, tail_extent)
    t = np.arange(0.0, t_max, dt)
    K = retardation_function(omega, Bw, t, tail_power=tail_power, tail_extent=tail_extent)
    peak = np.abs(K).max(axis=0)
    kind_peak = np.zeros(n)
    kind_peak[dofs] = _kind_peaks(np.diagonal(peak)[dofs], np.asarray(dofs))

    blocks_A, blocks_B, blocks_C, pairs = [], [], [], []  # pairs: (i, j, A, b, c) of each fitted pair
    grid = _passivity_grid(omega)
    # the BEM's diagonal damping on the grid (linear inside the table, ∝ ω⁻³ beyond it, as the fit's tail)
    diag = np.diagonal(Bw, axis1=1, axis2=2)
    diag_on_grid = np.stack([np.interp(grid, omega, diag[:, i]) for i in range(n)], 1)
    beyond = grid > omega[-1]
    diag_on_grid[beyond] = diag[-1][None, :] * (omega[-1] / grid[beyond, None]) ** 3
    order, k_err, b_err, dropped = {}, {}, {}, []
    own = np.sqrt(np.maximum(np.abs(np.diagonal(Bw, axis1=1, axis2=2)).max(axis=0), 1e-300))
    table = float(_scaled_min_eigenvalues(Bw, own).min())
    fitted, fitted_at = {}, {}  # by the unordered pair (K is symmetric: one fit serves (i, j) and (j, i))
    # Pair by pair, each coupling within `coupling` √(B_ii B_jj): the most a positive semi-definite 2x2
    # block allows (1.0) and a tenth more for fitting error.  Many couplings near their bounds at once can
    # still make the whole matrix indefinite: then the couplings are fitted again, tighter.
    for coupling in (1.1, 0.9, 0.7, 0.5):
        pairs, blocks_A = [], []
        for i in dofs:
            for j in dofs:
                scale = math.sqrt(kind_peak[i] * kind_peak[j])
                if peak[i, j] <= relative_threshold * scale or peak[i, j] == 0:
                    if (i, j) not in dropped:
                        dropped.append((i, j))
                    continue
                key = (min(i, j), max(i, j))
                if key not in fitted or (i != j and fitted_at[key] != coupling):  # couplings again in each round
                    k = K[:, i, j]
                    bound = None if i == j else (coupling / 1.1) * np.sqrt(np.maximum(diag_on_grid[:, i] * diag_on_grid[:, j], 0.0))
                    A, b, c, r, err = _fit_pair(k, t, dt, tol, max_order, passive_on=(grid, bound))
                    fitted[key], fitted_at[key] = (*_real_modal(A, b, c), r), coupling
                A, b, c, r = fitted[key]
                order[(i, j)] = r
                blocks_A.append(A)
                pairs.append((i, j, A, b, c))
        if not pairs or _assembled_margin(pairs, n, omega, own) >= min(table, 0.0) - 2e-2:
            break
    for i, j, A, b, c in pairs:  # the errors of the model: K(t), and B(ω) over the BEM range
        r = A.shape[0]
        Bss = np.real(_frequency_response(A, b, c, omega))
        k_err[(i, j)] = float(np.linalg.norm(_impulse(A, b, c, t) - K[:, i, j]) / max(np.linalg.norm(K[:, i, j]), 1e-300))
        b_err[(i, j)] = float(np.linalg.norm(Bss - Bw[:, i, j]) / max(np.linalg.norm(Bw[:, i, j]), 1e-300))
        Bfull = np.zeros((r, n))
        Bfull[:, j] = b
        Cfull = np.zeros((n, r))
        Cfull[i, :] = c
        blocks_B.append(Bfull)
        blocks_C.append(Cfull)
    if blocks_A:
        A_all = scipy.linalg.block_diag(*blocks_A)
        B_all = np.concatenate(blocks_B, axis=0)
        C_all = np.concatenate(blocks_C, axis=1)
    else:
        A_all, B_all, C_all = np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0))
    ss = RadiationStateSpace(A=jnp.asarray(A_all), B=jnp.asarray(B_all), C=jnp.asarray(C_all))
    # each DOF on the scale of its own largest BEM damping
    margin, w_min = passivity_margin(ss, omega, own) if pairs else (0.0, 0.0)
    report = RadiationFitReport(order=order, k_error=k_err, b_error=b_err, dropped=dropped, dt=dt, t_max=float(t_max),
                                passivity=margin, passivity_omega=w_min, passivity_data=table)
    _check_fit(hydro, report, Bw, K, tol, max_order)
    if margin < min(table, 0.0) - 2e-2:  # two percent beyond what the BEM data do themselves
        warnings.warn(f"{hydro.source}: the fitted radiation memory is not passive: its damping matrix has the "
                      f"eigenvalue {margin:.3g} at {w_min:.3g} rad/s (each DOF on the scale of its largest BEM damping; "
                      f"the BEM data's own smallest: {table:.3g}), so it feeds energy into motions near that frequency; "
                      "a smaller tol (radiation_tol) fits closer", stacklevel=2)
    return ss, report


B_ERROR_LIMIT = 0.05
"""The largest error of a fitted pair's damping B_ij(ω) over the BEM frequencies a fit passes without a word:
||B_ss − B_ij||₂ / √(||B_ii||₂ ||B_jj||₂), on the scale of the two DOFs' own damping (a coupling's relative
error alone would flag small couplings that do not move the bodies)."""


def _check_fit(hydro, report: RadiationFitReport, Bw, K, tol: float, max_order: int):
    """Warn where the fit missed its target: a pair whose K(t) error is above ``tol`` at ``max_order``, or
    whose damping is off the BEM's by more than :data:`B_ERROR_LIMIT` (the memory then radiates a different
    energy than the BEM says, and the motions near that frequency follow).  Both errors on the scale of the
    pair's two DOFs' own (K(t) as sampled for the fit, ``K``; B over the BEM frequencies, ``Bw``), each
    unordered pair once."""
    def scaled(errors, norm):  # each unordered pair once, on the scale of its two DOFs' own
        return {p: e * norm[p] / max(math.sqrt(norm[p[0], p[0]] * norm[p[1], p[1]]), 1e-300)
                for p, e in errors.items() if p[0] <= p[1]}

    missed = sorted((e, p) for p, e in scaled(report.k_error, np.linalg.norm(K, axis=0)).items() if e > tol)
    off = sorted(((e, p) for p, e in scaled(report.b_error, np.linalg.norm(Bw, axis=0)).items() if e > B_ERROR_LIMIT), reverse=True)
    if missed:
        e, p = missed[-1]
        warnings.warn(f"{hydro.source}: the radiation fit missed its K(t) error target {tol:g} on {len(missed)} DOF pair(s) "
                      f"at the highest order allowed ({max_order}); worst {p}: {e:.3g} (on the scale of the pair's own K).  "
                      "fit_radiation's max_order higher, or the BEM data over a longer frequency range, fits closer", stacklevel=3)
    if off:
        e, p = off[0]
        warnings.warn(f"{hydro.source}: the fitted radiation damping B(w) is off the BEM's by {100 * e:.1f} % on DOF pair {p} "
                      f"(L2 over the BEM frequencies, on the scale of the pair's own damping; {len(off)} pair(s) beyond "
                      f"{100 * B_ERROR_LIMIT:g} %): the memory radiates a different energy than the BEM says.  A smaller tol "
                      "(radiation_tol) fits closer; the fit's report lists every pair", stacklevel=3)


def _memory_length(omega, Bw, dofs, dt, relative_threshold, tail_power, tail_extent) -> float:
    """The time after which every fitted diagonal |K_ii| stays below 1 % of its peak, with a fifth
    more, at least 20 s and at most 200 s."""
    t_probe = np.arange(0.0, 200.0, dt)
    kd = retardation_function(omega, Bw[:, dofs, dofs], t_probe, tail_power=tail_power, tail_extent=tail_extent)
    kind_peak = _kind_peaks(np.abs(kd).max(axis=0), np.asarray(dofs))
    t_max = 20.0
    for c in range(kd.shape[1]):
        if np.abs(kd[:, c]).max() <= relative_threshold * kind_peak[c]:
            continue
        peak = np.abs(kd[:, c]).max()
        if peak == 0:
            continue
        above = np.where(np.abs(kd[:, c]) > 0.01 * peak)[0]
        t_max = max(t_max, t_probe[above[-1]] * 1.2 if above.size else 0.0)
    return min(t_max, 200.0)


def _assembled_margin(pairs, n, omega, own):
    """passivity_margin of the state space that ``pairs`` [(i, j, A, b, c)] make."""
    w = _passivity_grid(omega)
    H = np.zeros((w.size, n, n))
    for i, j, A, b, c in pairs:
        H[:, i, j] += np.real(_frequency_response(A, b, c, w))
    return float(_scaled_min_eigenvalues(H, own).min())


def _scaled_min_eigenvalues(H, scale):
    """Smallest eigenvalue of D sym(H) D at each frequency, D = diag(1/scale): (n_omega,)."""
    D = 1.0 / np.asarray(scale, float)
    P = 0.5 * (H + np.swapaxes(H, 1, 2)) * D[None, :, None] * D[None, None, :]
    return np.linalg.eigvalsh(P)[:, 0]


def _passivity_grid(omega):
    """Frequencies where the fitted damping is checked: dense from near zero to 3x the table's end."""
    top = 3.0 * float(omega[-1])
    return np.unique(np.concatenate([np.geomspace(1e-3 * top, top, 400), np.linspace(0.0, top, 601)[1:]]))


def passivity_margin(radiation, omega, scale):
    """(λ_min, ω at it): the smallest eigenvalue of the normalised damping matrix D Re H(iω) D of a
    fitted memory (D = diag(1/scale): each DOF on the scale of its largest damping) over
    :func:`_passivity_grid`, and
    where it occurs.  Negative: at that frequency the memory feeds energy into the bodies (the fit,
    done pair by pair, dips below zero where the BEM's damping is small), and a lightly damped mode
    near it is driven instead of damped."""
    w = _passivity_grid(omega)
    ev = _scaled_min_eigenvalues(np.real(radiation.frequency_response(w)), scale)
    k = int(np.argmin(ev))
    return float(ev[k]), float(w[k])


def _fit_pair(k, t, dt, tol, max_order, passive_on=None):
    """Smallest ERA order (≤ max_order) whose refitted K error ≤ tol; the best one otherwise.

    ``passive_on = (ω grid, bound)``: the fit's damping Re H(iω) on the grid must lie within the bound
    (a diagonal pair: at least −1e-4 of its peak, bound None; a coupling pair: |Re H_ij| at most
    1.1 √(B_ii B_jj) of the BEM, the largest coupling a passive matrix allows, plus 1 % of it at
    peak).  A fit that breaks it is passed over for a higher order that meets tol within it, if there
    is one; else the best error is kept (and the fit's report shows the defect)."""
    norm = np.linalg.norm(k)
    svd = _hankel_svd(k)
    s = svd[1]
    # The Hankel singular values give the starting order.
    r0 = int(np.clip(np.sum(s > tol * s[0]), 2, max_order))
    best = passive = None
    for r in range(r0, max_order + 1):
        A, b, c = _era(svd, dt, r)
        try:
            c = _refit_C(A, b, t, k)
        except np.linalg.LinAlgError:
            continue
        if np.max(np.linalg.eigvals(A).real) >= 0:
            continue
        err = float(np.linalg.norm(_impulse(A, b, c, t) - k) / norm)
        if best is None or err < best[-1]:
            best = (A, b, c, r, err)
        if err <= tol:
            if passive_on is None:
                break
            grid, bound = passive_on
            if _within(_damping_rows(A, b, grid) @ c, bound):
                passive = (A, b, c, r, err)
                break
            # the same poles with the residues refitted under the passivity bound, if that keeps tol
            c = _refit_C_passive(A, b, t, k, grid, bound, c)
            if c is not None:
                err = float(np.linalg.norm(_impulse(A, b, c, t) - k) / norm)
                if err <= tol:
                    passive = (A, b, c, r, err)
                    break
    return passive or best


def _damping_rows(A, b, omega):
    """G with G c = Re c (iωI − A)⁻¹ b on each ω: the damping of the fit, linear in its output row c."""
    lam, V = np.linalg.eig(A)
    return np.real((np.linalg.solve(V, b)[None, :] / (1j * np.asarray(omega)[:, None] - lam[None, :])) @ V.T)


def _within(d, bound):
    """The passivity bound of :func:`_fit_pair` on the fitted damping d(ω)."""
    if bound is None:
        return d.min() >= -1e-4 * np.abs(d).max()
    return bool(np.all(np.abs(d) <= 1.1 * bound + 0.01 * bound.max()))


def _refit_C_passive(A, b, t, k, grid, bound, c0):
    """Output row c minimising |K_ss(t) − K(t)|² with zero static gain (as :func:`_refit_C`) and the
    damping on ``grid`` held within the passivity bound: a quadratic programme in c (the damping is
    linear in c), solved by SLSQP from the unconstrained c0 on the grid points it breaks, then again
    with those it still breaks added (a few rounds).  None where no such c is found."""
    lam, V = np.linalg.eig(A)
    X = np.real((np.exp(np.outer(t, lam)) * (np.linalg.solve(V, b))[None, :]) @ V.T)
    g = np.linalg.solve(-A, b)
    G = _damping_rows(A, b, grid)
    s = max(np.linalg.norm(k), 1e-300)
    if bound is None:  # damping ≥ 0, with half the slack of _within
        G_in, h_in = G, np.full(grid.size, -0.5e-4 * np.abs(G @ c0).max())
    else:
        lim = np.maximum(0.999 * (1.1 * bound + 0.01 * bound.max()), 0.0)
        G_in, h_in = np.concatenate([-G, G]), np.concatenate([-lim, -lim])
    # in y = R c / |k| (X = Q R) the objective is ½|y − y_k|²: a projection, which SLSQP takes in few steps
    Qx, Rx = np.linalg.qr(X)
    yk = Qx.T @ k / s
    Ri = np.linalg.inv(Rx)
    Gy, gy = G_in @ Ri, g @ Ri
    rows = np.zeros(h_in.size, dtype=bool)
    y = Rx @ c0 / s
    for _ in range(6):
        broken = Gy @ y < h_in / s
        if not broken.any():
            break
        rows |= broken
        Gr, hr = Gy[rows], h_in[rows] / s
        y = scipy.optimize.minimize(
            lambda y: 0.5 * np.sum((y - yk) ** 2), y, jac=lambda y: y - yk,
            constraints=[{"type": "eq", "fun": lambda y: np.array([gy @ y]), "jac": lambda y: gy[None, :]},
                         {"type": "ineq", "fun": lambda y: Gr @ y - hr, "jac": lambda y: Gr}],
            method="SLSQP", options={"maxiter": 200, "ftol": 1e-14}).x
    c = Ri @ y * s
    return c if _within(G @ c, bound) else None


def consistent_added_mass_inf(hydro, radiation: RadiationStateSpace):
    """A(∞) that makes A∞ + (memory part of the fitted model) best match the BEM A(ω).

    Cummins' equation reproduces A(ω) = A∞ + Im H(ω)/ω with H the memory's
    frequency response.  A BEM's own A(∞) is often not consistent with its
    B(ω) through this relation (a coarse mesh, the high-frequency limit of
    surge and sway), and the time domain then misses A(ω) by that amount
    everywhere.  The least-squares choice over the BEM frequencies,
    A∞ = mean_ω [A(ω) − Im H(ω)/ω], removes the offset; returns (n_dof, n_dof).
    """
    w = np.asarray(hydro.omega, float)
    H = radiation.frequency_response(w)
    return np.mean(symmetric_part(np.asarray(hydro.added_mass, float)) - H.imag / w[:, None, None], axis=0)
