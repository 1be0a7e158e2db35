"""Linear frequency-domain response (RAOs) of floating bodies, optionally constrained.

For motions η = Re(X e^{−iωt}) (Capytaine's time convention) per unit wave
amplitude, the linear equations of motion of 6nb DOFs,

    (M + A(ω)) η̈ + (B(ω) + B_ext) η̇ + (C + K_ext) η = Re(F̂(ω, β) e^{−iωt}),

give X(ω) = Z(ω)^{−1} F̂ with the impedance-like matrix

    Z(ω) = −ω² (M + A(ω)) − iω (B(ω) + B_ext) + C + K_ext.

(With e^{−iωt}, d/dt → −iω; the damping term carries −iω. Written with the
e^{+iωt} convention of many textbooks the same matrix reads
−ω²(M+A) + iω(B+B_ext) + C + K_ext and X is the complex conjugate.)

Constraints: with a velocity transformation P (n_dof × n_red), η = P q,
the reduced system (Pᵀ Z P) q = Pᵀ F̂ is solved and P q returned (MBS4WEC's
velocity transformation; joints between bodies, DOFs locked to the world).
Runs in JAX so RAOs can be differentiated (e.g. with respect to PTO damping).
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from .coefficients import symmetric_part

__all__ = ["rao", "impedance", "coefficients_at"]


def coefficients_at(hydro, omega):
    """A(ω) and B(ω) at any frequencies (n, 6nb, 6nb), linear in ω between the table's rows, their symmetric
    parts (:func:`~jaxmbd.hydro.coefficients.symmetric_part`, as the time domain takes them).

    A frequency outside the table is clamped to its end and warned about (``UserWarning``): the
    coefficients there are extrapolated flat, which is wrong beyond a few percent of the table's span."""
    w = jnp.atleast_1d(jnp.asarray(omega, dtype=hydro.omega.dtype))
    try:
        wc = np.asarray(w)
    except Exception:  # traced: the caller's frequencies cannot be checked here
        wc = None
    lo, hi = float(hydro.omega[0]), float(hydro.omega[-1])
    if wc is not None and (np.any(wc < lo * (1 - 1e-9)) or np.any(wc > hi * (1 + 1e-9))):
        warnings.warn(f"{hydro.source}: frequencies {wc[(wc < lo) | (wc > hi)][:5]} rad/s outside the "
                      f"hydrodynamic table [{lo:.4g}, {hi:.4g}] rad/s; A and B held at the table's ends",
                      stacklevel=2)
    k = jnp.clip(jnp.searchsorted(hydro.omega, w) - 1, 0, hydro.omega.shape[0] - 2)
    w0, w1 = hydro.omega[k], hydro.omega[k + 1]
    t = jnp.clip((w - w0) / (w1 - w0), 0.0, 1.0)[:, None, None]
    A = (1 - t) * hydro.added_mass[k] + t * hydro.added_mass[k + 1]
    B = (1 - t) * hydro.radiation_damping[k] + t * hydro.radiation_damping[k + 1]
    return symmetric_part(A), symmetric_part(B)


def impedance(hydro, mass, *, damping_ext=None, stiffness_ext=None, omega=None):
    """Z(ω) = −ω²(M + A(ω)) − iω(B(ω) + B_ext) + C + K_ext, complex (n_omega, n_dof, n_dof).

    ``omega`` defaults to the BEM frequencies; other frequencies take A and B from
    :func:`coefficients_at` (linear interpolation, a warning outside the table).
    """
    if omega is None:
        w, A, B = hydro.omega, symmetric_part(hydro.added_mass), symmetric_part(hydro.radiation_damping)
    else:
        w = jnp.atleast_1d(jnp.asarray(omega, dtype=hydro.omega.dtype))
        A, B = coefficients_at(hydro, w)
    n = hydro.n_dof
    M = jnp.asarray(mass)
    Bx = jnp.zeros((n, n)) if damping_ext is None else jnp.asarray(damping_ext)
    Kx = jnp.zeros((n, n)) if stiffness_ext is None else jnp.asarray(stiffness_ext)
    w2 = w[:, None, None]
    return (
        -(w2**2) * (M + A)
        - 1j * w2 * (B + Bx)
        + hydro.hydrostatic_stiffness
        + Kx
    )


def rao(
    hydro,
    mass=None,
    *,
    wave_direction=None,
    damping_ext=None,
    stiffness_ext=None,
    constraint=None,
    excitation=None,
    omega=None,
):
    """Motion RAOs X(ω) [m/m, rad/m], complex (n_omega, n_dof), at the BEM frequencies or at ``omega``
    (rad/s, any frequencies: A, B and F̂ interpolated, a warning outside the table).

    ``hydro``: :class:`~jaxmbd.hydro.bem.HydroData`; ``mass``: rigid-body mass
    matrix M (n_dof, n_dof) about the bodies' reference points (for body b,
    [[m I, −m [r_G]×], [m [r_G]×, I_ref]] with r_G the centre of mass
    relative to the reference point); default: the one the file gives
    (``hydro.mass_matrix``; a ValueError if it gives none); ``wave_direction`` [rad] (default the
    first table heading; interpolated with ``hydro.excitation_at``) or
    ``excitation`` (n_omega, n_dof) complex to use instead; ``damping_ext``,
    ``stiffness_ext``: extra linear matrices (mooring, PTO, viscous
    linearisation), (n_dof, n_dof); ``constraint``: velocity transformation P
    (n_dof, n_red).

    Motions η(t) = Re(A_wave X(ω) e^{−iωt}) for the wave
    ζ = Re(A_wave e^{i(kx' − ωt)}): same phase reference as the excitation.
    """
    if mass is None:
        mass = hydro.mass_matrix
        if not np.all(np.isfinite(np.asarray(mass))):
            raise InputError(f"{hydro.source}: the file gives no mass matrix (WAMIT without radii of gyration, or no "
                             "inertia_matrix in a Capytaine file); pass rao(..., mass=M)")
    w = hydro.omega if omega is None else jnp.atleast_1d(jnp.asarray(omega, dtype=hydro.omega.dtype))
    if excitation is None:
        beta = hydro.wave_direction[0] if wave_direction is None else wave_direction
        F = hydro.excitation_at(w, jnp.full(w.shape, beta))
    else:
        F = jnp.asarray(excitation)
    Z = impedance(hydro, mass, damping_ext=damping_ext, stiffness_ext=stiffness_ext, omega=omega)
    if constraint is None:
        return jnp.linalg.solve(Z, F[..., None])[..., 0]
    P = jnp.asarray(constraint)
    Zr = P.T @ Z @ P
    q = jnp.linalg.solve(Zr, (P.T @ F[..., None]))[..., 0]
    return q @ P.T
