"""Mean wave drift by the far-field (Maruo) formula, in deep water and in water of finite depth.

A body in regular waves of unit amplitude, heading β, scatters and radiates a field whose potential far away is

    φ_s ≈ C(k, h) H(θ) Z(z) √(2 / π k R) e^{i(kR − π/4)},    Z = cosh k(z + h) / cosh kh  (e^{kz} in deep water)

with H the Kochin function of the total first-order field, H = i (H_diffraction + Σ_j X_j H_radiation,j) (X the
motion RAOs; Capytaine's Kochin functions, ``kochin_diffraction`` and ``kochin_radiation``, ∫ σ Z e^{−ik r·e_θ} dS
/ 4π).  The mean force is the momentum the waves carry through a circle at infinity (the stationary phase keeps the
scattered waves themselves and their cross term with the incident wave at θ = β):

    F_x = − c₁ cos β Im H(β) − c₂ ∫ |H|² cos θ dθ,      F_y = the same with sin
    M_z = c₁/k Re H'(β) − c₂/k ∫ Im(conj(H) H') dθ

In deep water c₁ = 2πρω and c₂ = 2πρk² (Capytaine's ``far_field_mean_drift_force``).  In water of depth h the
Green function's wave part is (k² − ν²)/(h(k² − ν²) + ν) cosh k(z + h) cosh k(ζ + h) in place of k e^{k(z+ζ)},
ν = ω²/g = k tanh kh: with the Kochin function's depth factor cosh k(ζ + h)/cosh kh the scattered wave's potential
is 1/(tanh kh · G) times the deep-water one at the same H and k, G = 1 + 2kh/sinh 2kh = 2 C_g/C (its elevation, ω/g
times the potential, takes one more factor √tanh kh from the dispersion relation ω² = g k tanh kh); and the
momentum a wave of given elevation carries is G times the deep-water one at the same k.  Written with ω where the
deep-water formula has it, hence

    c₁ = 2πρω / tanh kh,      c₂ = 2πρk² / (G tanh kh)

which tend to the deep-water ones as kh grows.  Checked on a vertical cylinder standing on the seabed against
MacCamy and Fuchs' finite-depth diffraction (the deep-water drift at the same ka times G): within 0.7 % from kh =
0.5 to pi (tests).  Capytaine 3.0's own finite-depth coefficients (c₁ unchanged, c₂ = 2πρ k ν² / (h(k² − ν²) + ν))
fall away from it as the water shoals: -2.9, -8.4, -22, -51 % at kh = 2, 1.5, 1, 0.5.
"""

from __future__ import annotations

import math

import numpy as np


def depth_coefficients(omega, wavenumber, depth, rho):
    """(c₁, c₂) of the far-field drift per frequency (arrays like ``omega``), deep water when ``depth`` is inf."""
    omega, k = np.asarray(omega, float), np.asarray(wavenumber, float)
    if not math.isfinite(depth):
        return 2 * np.pi * rho * omega, 2 * np.pi * rho * k**2
    kh = k * depth
    t, G = np.tanh(kh), 1.0 + np.where(kh < 350.0, 2.0 * kh / np.sinh(np.minimum(2.0 * kh, 700.0)), 0.0)
    return 2 * np.pi * rho * omega / t, 2 * np.pi * rho * k**2 / (G * t)


def far_field_drift(kochin, theta, headings, omega, wavenumber, depth, rho):
    """Mean drift (surge N, sway N, yaw N m per squared wave amplitude), (n_omega, n_heading, 3), from the total
    Kochin function ``kochin`` (n_omega, n_heading, n_theta) on the directions ``theta`` (rad, increasing, reaching
    past [0, 2π] on both sides so that no heading sits on the range's border).  The derivative in θ by central
    differences, H(β) by linear interpolation, the integrals by the trapezoidal rule over [0, 2π]."""
    from ..errors import InputError

    H = np.asarray(kochin)
    theta = np.asarray(theta, float)
    headings = np.asarray(headings, float)
    eps = 1e-9 * (theta[1] - theta[0])
    if np.any(np.diff(theta) <= 0) or theta[0] > -eps or theta[-1] < 2 * np.pi + eps:
        raise InputError("far_field_drift: theta must increase and reach beyond 0 and 2 pi on both sides (rad)")
    if np.any(headings <= theta[1]) or np.any(headings >= theta[-2]):
        raise InputError(f"far_field_drift: headings must lie inside theta's range, away from its ends; got {headings} rad")
    dH = np.gradient(H, theta, axis=-1)
    whole = (theta >= -eps) & (theta <= 2 * np.pi + eps)  # 0 and 2π themselves, whatever the grid's round-off
    th, Hw, dHw = theta[whole], H[..., whole], dH[..., whole]
    c1, c2 = depth_coefficients(omega, wavenumber, depth, rho)
    c1, c2, k = c1[:, None], c2[:, None], np.asarray(wavenumber, float)[:, None]
    # H and H' at each wave's own heading (n_omega, n_heading), linear between the grid's two neighbours
    i1 = np.searchsorted(theta, headings)
    f = (headings - theta[i1 - 1]) / (theta[i1] - theta[i1 - 1])
    cols = np.arange(headings.size)
    Hb, dHb = ((1 - f) * X[:, cols, i1 - 1] + f * X[:, cols, i1] for X in (H, dH))
    h2 = np.abs(Hw) ** 2
    trap = lambda y: np.trapezoid(y, th, axis=-1)  # noqa: E731
    c, s = np.cos(headings)[None, :], np.sin(headings)[None, :]
    return np.stack([-c1 * c * Hb.imag - c2 * trap(h2 * np.cos(th)),
                     -c1 * s * Hb.imag - c2 * trap(h2 * np.sin(th)),
                     c1 / k * dHb.real - c2 / k * trap(np.imag(np.conj(Hw) * dHw))], axis=-1)
