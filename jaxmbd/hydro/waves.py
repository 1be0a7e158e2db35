"""Linear (Airy) waves: regular waves, spectra, directional spreading, realisations.

Conventions (fixed, shared with :mod:`jaxmbd.hydro.bem`):

* z up, still water at z = 0, SI units.
* Wave direction β is the direction the waves *travel*, measured from +x
  towards +y (β = 0: waves travelling along +x). This is Capytaine's convention.
* Time dependence e^{-iωt} (Capytaine's). A realisation is a sum of components

      ζ(x, y, t) = Σ_j a_j cos(k_j (x cos β_j + y sin β_j) − ω_j t − φ_j)
                 = Re Σ_j A_j exp(i (k_j x'_j − ω_j t)),     A_j = a_j e^{−iφ_j},

  with x'_j = x cos β_j + y sin β_j. A linear force with a Capytaine transfer
  function F̂(ω, β) (per unit amplitude of the wave Re exp(i(k x' − ω t))) is
  then F(t) = Re Σ_j A_j F̂(ω_j, β_j) e^{−iω_j t}.

Everything here is pure JAX: spectra and realisations can be jitted,
differentiated with respect to Hs, Tp, γ, ... and vmapped over PRNG keys.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError, InputTypeError

__all__ = [
    "RegularWave",
    "JONSWAP",
    "PiersonMoskowitz",
    "TabulatedSpectrum",
    "RecordedWave",
    "OchiHubble",
    "WaveComponents",
    "spreading_function",
    "spreading_weights",
    "wavenumber",
    "realise",
    "elevation",
    "complex_amplitudes",
]

G_DEFAULT = 9.81


def wavenumber(omega, water_depth=math.inf, g=G_DEFAULT, n_iterations=12):
    """Wavenumber k [rad/m] from the linear dispersion relation ω² = g k tanh(k h).

    Deep water (``water_depth`` = inf, decided in Python, not traced): k = ω²/g.
    Finite depth: Newton iteration with a fixed number of steps, so the function
    traces and differentiates; the start k₀ = k_deep / sqrt(tanh(k_deep h)) is
    within a few per cent everywhere, so 12 steps reach machine precision.
    ω = 0 gives k = 0.
    """
    omega = jnp.asarray(omega)
    k_deep = omega**2 / g
    if isinstance(water_depth, (int, float)) and math.isinf(water_depth):
        return k_deep
    h = jnp.asarray(water_depth)
    # Guard ω = 0 (k = 0 is the root but f'(0) = 0 in the Newton step).
    safe = k_deep > 0
    kd = jnp.where(safe, k_deep, 1.0)
    k = kd / jnp.sqrt(jnp.tanh(kd * h))

    def newton(_, k):
        th = jnp.tanh(k * h)
        f = g * k * th - jnp.where(safe, omega**2, g * th)
        df = g * th + g * k * h * (1.0 - th**2)
        return k - f / df

    k = jax.lax.fori_loop(0, n_iterations, newton, k)
    return jnp.where(safe, k, 0.0)


class RegularWave(eqx.Module):
    """Regular (Airy) wave ζ = (H/2) cos(k x' − ωt − φ), x' = x cos β + y sin β.

    height H [m] (crest to trough), period T [s], direction β [rad] (direction of
    travel), phase φ [rad] (the elevation at the origin is (H/2) cos(ωt + φ)).
    """

    height: jax.Array
    period: jax.Array
    direction: jax.Array = 0.0
    phase: jax.Array = 0.0

    def __init__(self, height, period, direction=0.0, phase=0.0):
        self.height = jnp.asarray(height, dtype=float)
        self.period = jnp.asarray(period, dtype=float)
        self.direction = jnp.asarray(direction, dtype=float)
        self.phase = jnp.asarray(phase, dtype=float)

    @property
    def omega(self):
        return 2.0 * jnp.pi / self.period

    def components(self, water_depth=math.inf, g=G_DEFAULT) -> "WaveComponents":
        """This wave as a one-component :class:`WaveComponents`."""
        omega = jnp.atleast_1d(self.omega)
        return WaveComponents(
            amplitude=jnp.atleast_1d(0.5 * self.height),
            omega=omega,
            wavenumber=wavenumber(omega, water_depth, g),
            direction=jnp.atleast_1d(self.direction),
            phase=jnp.atleast_1d(self.phase),
            water_depth=float(water_depth),
        )


# Dimensionless grid x = ω/ωp for the numerical normalisation of JONSWAP.
# Below x = 0.3 the factor exp(-5/4 x^-4) < 1e-60; above x = 8 the peak factor is
# 1 to machine precision (|x-1|/σ > 70) and the rest of the tail is added in
# closed form, ∫_X^∞ (5/16) x^-5 exp(-5/4 x^-4) dx = (1 - exp(-5/4 X^-4))/16.
_X_GRID = np.linspace(0.3, 8.0, 4001)
_X_MAX = float(_X_GRID[-1])


def _xp(*values):
    """numpy where every value is concrete (a spectrum evaluated as a run is set up: each jnp operation on
    concrete values compiles a program of its own, some tens of milliseconds each from an empty cache),
    jax.numpy where one is traced (a derivative with respect to Hs, a spectrum inside a compiled run)."""
    traced = any(isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(values))
    return jnp if traced else np


def _pm_shape(x, xp=jnp):
    """Pierson-Moskowitz shape (5/16) x^-5 exp(-5/4 x^-4); ∫_0^∞ = 1/16."""
    return 5.0 / 16.0 * x**-5 * xp.exp(-1.25 * x**-4)


def _peak_factor(x, gamma, sigma_a, sigma_b, xp=jnp):
    sigma = xp.where(x <= 1.0, sigma_a, sigma_b)
    return gamma ** xp.exp(-((x - 1.0) ** 2) / (2.0 * sigma**2))


class JONSWAP(eqx.Module):
    """JONSWAP spectrum, one-sided, in m²·s/rad, normalised so that 4√m0 = Hs exactly.

        S(ω) = C(γ, σa, σb) · (5/16) Hs² ωp⁴ ω⁻⁵ exp(−5/4 (ωp/ω)⁴) · γ^Y,
        Y = exp(−(ω − ωp)² / (2 σ² ωp²)),  σ = σa (ω ≤ ωp), σb (ω > ωp),
        ωp = 2π/Tp.

    Without C the integral of the Pierson-Moskowitz part is exactly Hs²/16; the
    normalisation C = 1 / (16 ∫ shape) is computed numerically (Simpson on
    ω/ωp ∈ [0.3, 8] plus the closed-form tail), so it is exact to ~1e-10 and
    stays differentiable in γ, σa, σb. Cibicik et al. (2019), eq. 1 writes the same spectrum
    with the closed-form factor 0.2053 = (5/16)(1 − 0.287 ln γ) for γ = 3.3,
    which is within about 1 % of this C.
    """

    hs: jax.Array
    tp: jax.Array
    gamma: jax.Array = 3.3
    sigma_a: jax.Array = 0.07
    sigma_b: jax.Array = 0.09

    def __init__(self, hs, tp, gamma=3.3, sigma_a=0.07, sigma_b=0.09):
        self.hs = jnp.asarray(hs, dtype=float)
        self.tp = jnp.asarray(tp, dtype=float)
        self.gamma = jnp.asarray(gamma, dtype=float)
        self.sigma_a = jnp.asarray(sigma_a, dtype=float)
        self.sigma_b = jnp.asarray(sigma_b, dtype=float)

    @property
    def omega_peak(self):
        return 2.0 * jnp.pi / self.tp

    def normalisation(self, xp=None):
        """C such that the spectrum integrates to Hs²/16 (C = 1 for γ = 1)."""
        xp = xp or _xp(self.gamma, self.sigma_a, self.sigma_b)
        gamma, sa, sb = (v if xp is jnp else np.asarray(v) for v in (self.gamma, self.sigma_a, self.sigma_b))
        x = xp.asarray(_X_GRID)
        f = _pm_shape(x, xp) * _peak_factor(x, gamma, sa, sb, xp)
        h = x[1] - x[0]
        simpson = h / 3.0 * (f[0] + f[-1] + 4.0 * xp.sum(f[1:-1:2]) + 2.0 * xp.sum(f[2:-1:2]))
        tail = (1.0 - math.exp(-1.25 * _X_MAX**-4)) / 16.0
        return 1.0 / (16.0 * (simpson + tail))

    def density(self, omega):
        """Spectral density S(ω) [m²·s/rad] at angular frequencies ω [rad/s] (ω ≤ 0 gives 0).  Computed in
        numpy where nothing is traced (:func:`_xp`; the same values), in jax.numpy otherwise."""
        xp = _xp(self, omega)
        leaves = (self.hs, self.tp, self.gamma, self.sigma_a, self.sigma_b)
        hs, tp, gamma, sa, sb = leaves if xp is jnp else (np.asarray(v, dtype=float) for v in leaves)
        omega = xp.asarray(omega, dtype=float)
        wp = 2.0 * xp.pi / tp
        pos = omega > 0
        x = xp.where(pos, omega / wp, 1.0)
        s = self.normalisation(xp) * hs**2 / wp * _pm_shape(x, xp) * _peak_factor(x, gamma, sa, sb, xp)
        return xp.where(pos, s, 0.0)

    __call__ = density


class PiersonMoskowitz(JONSWAP):
    """Pierson-Moskowitz spectrum in Hs, Tp form (JONSWAP with γ = 1):

        S(ω) = (5/16) Hs² ωp⁴ ω⁻⁵ exp(−5/4 (ωp/ω)⁴),   ∫ S dω = Hs²/16 exactly.
    """

    def __init__(self, hs, tp):
        super().__init__(hs, tp, gamma=1.0)


class OchiHubble(eqx.Module):
    """Ochi and Hubble's two-peaked spectrum (wind sea and swell), one-sided, m²·s/rad: a sum of generalised
    Pierson-Moskowitz parts, each with its significant wave height H_j, peak frequency ω_j = 2π/T_j and shape λ_j,

        S(ω) = ¼ Σ_j ((4λ_j + 1)/4 · ω_j⁴)^λ_j / Γ(λ_j) · H_j² ω^−(4λ_j+1) exp(−(4λ_j + 1)/4 · (ω_j/ω)⁴),

    so that ∫ S dω = Σ H_j²/16 exactly (a part with λ = 1 is the Pierson-Moskowitz spectrum); DNV-RP-C205 gives it
    with the parameters' values for the North Atlantic.  ``parts``: (2, 3) rows of [Hs (m), Tp (s), λ].  Its ``hs`` is
    √(Σ H_j²) and its ``tp`` the peak period of the part with the larger H_j: what the parts say (a sweep or a search
    over Hs and Tp needs a one-peaked parametric spectrum)."""

    parts: jax.Array

    def __init__(self, parts):
        self.parts = jnp.asarray(parts, dtype=float).reshape(-1, 3)

    @property
    def hs(self):
        return jnp.sqrt(jnp.sum(self.parts[:, 0] ** 2))

    @property
    def tp(self):
        return self.parts[jnp.argmax(self.parts[:, 0]), 1]

    def density(self, omega):
        """S(ω) [m²·s/rad] (ω ≤ 0 gives 0)."""
        omega = jnp.asarray(omega, dtype=float)
        w = jnp.where(omega > 0, omega, 1.0)[..., None]
        h, tp, lam = self.parts[:, 0], self.parts[:, 1], self.parts[:, 2]
        wp = 2.0 * jnp.pi / tp
        c = (4.0 * lam + 1.0) / 4.0
        log_s = (lam * jnp.log(c * wp**4) - jax.scipy.special.gammaln(lam) + 2.0 * jnp.log(h) - (4.0 * lam + 1.0) * jnp.log(w)
                 - c * (wp / w) ** 4)
        return jnp.where(omega > 0, 0.25 * jnp.sum(jnp.exp(log_s), axis=-1), 0.0)


class RecordedWave(eqx.Module):
    """A measured or imported wave elevation (m) at the still-water origin, sampled every ``dt`` (s), as a
    deterministic sea: its Fourier components (the record's mean left out) at ω_k = 2πk / (n dt) within
    [``omega_min``, ``omega_max``] travelling towards ``direction``, long-crested.  At the origin the run's
    incident wave is the record, band-limited, at every sample time of [0, n dt) (the components repeat it
    after); ``omega`` is the highest frequency kept (what a hydrodynamic table must cover).  A run longer than
    the record (its duration, or a scenario's phases' limits) is refused; a band that holds none of the
    record's frequencies too."""

    dt: float = eqx.field(static=True)
    elevation: jax.Array
    direction: jax.Array = 0.0
    omega_min: float = eqx.field(static=True, default=0.0)
    omega_max: float = eqx.field(static=True, default=math.inf)

    def __init__(self, dt, elevation, direction=0.0, omega_min=0.0, omega_max=math.inf):
        self.dt = float(dt)
        self.elevation = jnp.asarray(elevation, dtype=float)
        self.direction = jnp.asarray(direction, dtype=float)
        self.omega_min, self.omega_max = float(omega_min), float(omega_max)
        if not self._kept().size:
            n = self.elevation.shape[-1]
            raise InputError(f"a recorded wave of {n} samples every {self.dt:g} s has frequencies {2 * np.pi / (n * self.dt):.4g} to "
                             f"{np.pi / self.dt:.4g} rad/s: none lies in [omega_min, omega_max] = [{self.omega_min:g}, {self.omega_max:g}]")

    @property
    def duration(self) -> float:
        return self.dt * self.elevation.shape[-1]

    def _kept(self) -> np.ndarray:
        n = self.elevation.shape[-1]
        w = 2.0 * np.pi * np.arange(n // 2 + 1) / (n * self.dt)
        return np.flatnonzero((w > 0) & (w >= self.omega_min) & (w <= self.omega_max))

    @property
    def omega(self) -> float:
        k = self._kept()
        return float(2.0 * np.pi * k[-1] / (self.elevation.shape[-1] * self.dt)) if k.size else 0.0

    def components(self, water_depth=math.inf, g=G_DEFAULT) -> "WaveComponents":
        """The record's components in the band (amplitude, frequency, wavenumber, direction, phase)."""
        n = self.elevation.shape[-1]
        k = self._kept()
        c = jnp.fft.rfft(self.elevation)[k] * (2.0 / n)
        c = jnp.where(jnp.asarray(2 * k == n), 0.5 * c, c)  # the Nyquist row once
        omega = jnp.asarray(2.0 * np.pi * k / (n * self.dt), dtype=self.elevation.dtype)
        return WaveComponents(amplitude=jnp.abs(c), omega=omega, wavenumber=wavenumber(omega, water_depth, g),
                              direction=jnp.broadcast_to(self.direction, omega.shape), phase=jnp.angle(c),
                              water_depth=water_depth)


class TabulatedSpectrum(eqx.Module):
    """A measured or imported spectrum (a wave buoy's, a hindcast's, two peaks of wind sea and swell), one-sided,
    m²·s/rad at ``omega`` (rad/s, increasing): linear between the rows and zero outside them.  Its ``hs`` is
    4√m0 of the table (trapezoidal rule) and its ``tp`` 2π over the row of the largest density: what the table
    says, not settings (a sweep or a search over Hs and Tp needs a parametric spectrum).  A buoy's S(f) in m²/Hz
    at f (Hz) is S(ω) = S(f) / (2π) at ω = 2π f.

    Directional: with ``directions`` (rad, increasing, within one turn; the direction the waves travel towards),
    ``values`` is S(ω, θ) (m²·s/rad per rad, n_omega x n_directions), periodic in θ and linear between the columns;
    ``density`` is ∫ S dθ and a realisation draws its directions over the whole circle with the table's own spreading
    at each frequency (:meth:`direction_weights`; the sea's spreading settings are not used)."""

    omega: jax.Array
    values: jax.Array
    directions: jax.Array | None = None

    def __init__(self, omega, values, directions=None):
        self.omega = jnp.asarray(omega, dtype=float)
        self.values = jnp.asarray(values, dtype=float)
        self.directions = None if directions is None else jnp.asarray(directions, dtype=float)

    def _gaps(self):
        """The periodic widths between the table's directions (each column's share of the turn)."""
        b = self.directions
        nxt = jnp.concatenate([b[1:], b[:1] + 2.0 * jnp.pi])
        gap = nxt - b
        return 0.5 * (gap + jnp.roll(gap, 1))

    def _rows(self):
        """∫ S dθ at each of the table's frequencies (the 1-D table as it is)."""
        return self.values if self.directions is None else self.values @ self._gaps()

    @property
    def hs(self):
        return 4.0 * jnp.sqrt(jnp.trapezoid(self._rows(), self.omega))

    @property
    def tp(self):
        return 2.0 * jnp.pi / self.omega[jnp.argmax(self._rows())]

    def density(self, omega):
        """S(ω) [m²·s/rad] (∫ S dθ for a directional table), linear between the rows, 0 outside them."""
        return jnp.interp(jnp.asarray(omega, dtype=float), self.omega, self._rows(), left=0.0, right=0.0)

    def direction_weights(self, omega, theta):
        """(n_omega, n_theta): the table's spreading at each frequency, S(ω, θ_j) over Σ_j S(ω, θ_j) (uniform where the
        table holds nothing), linear in ω and periodically in θ between the table's rows and columns."""
        omega, theta = jnp.asarray(omega, dtype=float), jnp.asarray(theta, dtype=float)
        cols = jax.vmap(lambda col: jnp.interp(omega, self.omega, col, left=0.0, right=0.0), in_axes=1, out_axes=1)(self.values)
        d = jax.vmap(lambda row: jnp.interp(theta, self.directions, row, period=2.0 * jnp.pi))(cols)
        total = jnp.sum(d, axis=1, keepdims=True)
        return jnp.where(total > 0, d / jnp.where(total > 0, total, 1.0), 1.0 / theta.shape[0])


SPREADING = ("cos2s", "cos2s_full", "wrapped_normal")
"""The spreading functions: ``cos2s``, cos^{2s}(θ − θ̄) over the half plane (Cibicik et al. 2019); ``cos2s_full``,
cos^{2s}((θ − θ̄)/2) over the whole circle (Longuet-Higgins' form; DNV-RP-C205 gives both); ``wrapped_normal``, a
normal distribution of standard deviation σ wrapped round the circle (its ``spreading`` is σ in rad)."""

WHOLE_CIRCLE = ("cos2s_full", "wrapped_normal")
"""The spreading functions whose directions span θ̄ ± π (the others θ̄ ± π/2)."""


def spreading_function(theta, mean_direction=0.0, s=1, kind: str = "cos2s"):
    """Directional spreading D(θ) [1/rad]: ``kind = "cos2s"``, cos^{2s} restricted to a half plane,

        D(θ) = C_s cos^{2s}(θ − θ̄)   for |θ − θ̄| < π/2,   0 otherwise,
        C_s = Γ(s + 1) / (√π Γ(s + 1/2)),   ∫ D dθ = 1;

    ``kind = "cos2s_full"``, D(θ) = (C_s / 2) cos^{2s}((θ − θ̄)/2) over the whole circle (∫ D dθ = 1);
    ``kind = "wrapped_normal"``, D(θ) = Σ_k exp(−(θ − θ̄ + 2πk)² / 2σ²) / (σ √(2π)) with σ = ``s`` (rad), k from −3
    to 3 (the next terms below 1e-16 of the first for σ ≤ 60°; ∫ D cos(θ − θ̄) dθ = exp(−σ²/2)).

    s = 1 is Cibicik et al. (2019), eq. 3: D = (2/π) cos²(θ − θ̄). (This is the
    "cos^{2s}(θ − θ̄), |θ − θ̄| < π/2" family, not the full-circle
    cos^{2s}((θ − θ̄)/2) one.) θ − θ̄ is wrapped to (−π, π].
    """
    if kind not in SPREADING:
        raise InputError(f"spreading kind must be one of {', '.join(SPREADING)}, got {kind!r}")
    d = jnp.angle(jnp.exp(1j * (jnp.asarray(theta) - mean_direction)))
    if kind == "wrapped_normal":
        k = 2.0 * jnp.pi * jnp.arange(-3, 4)
        return jnp.sum(jnp.exp(-((d[..., None] + k) ** 2) / (2.0 * s * s)), axis=-1) / (s * math.sqrt(2.0 * math.pi))
    c = math.gamma(s + 1.0) / (math.sqrt(math.pi) * math.gamma(s + 0.5))
    if kind == "cos2s_full":  # D = C/2 cos^{2s}(θ/2) over (−π, π]: the same C, half of it
        return 0.5 * c * jnp.cos(0.5 * d) ** (2 * s)
    return jnp.where(jnp.abs(d) < 0.5 * jnp.pi, c * jnp.cos(d) ** (2 * s), 0.0)


def spreading_weights(theta, mean_direction=0.0, s=1, kind: str = "cos2s"):
    """Discrete spreading weights w_j ∝ D(θ_j) over M directions, Σ w_j = 1.

    For M equal bins of width Δθ this is D(θ_j) Δθ renormalised so that the
    discrete sum carries exactly the spectrum's energy. M = 1 gives w = 1
    (long-crested).
    """
    d = spreading_function(theta, mean_direction, s, kind)
    return d / jnp.sum(d)


class Current(eqx.Module):
    """A steady current: ``speed`` (m/s) at the still-water surface, travelling towards ``direction``
    (rad, the waves' convention), and a profile over depth: ``profile_depth`` (m, ≥ 0 downwards,
    increasing) with ``profile_factor`` the speed there over the surface speed, linear between the
    rows and constant beyond the last (uniform without a table; above the still water, the surface
    speed).  :meth:`power_law` writes the 1/7 power law of DNV-RP-C205 (4.1.4) as such a table."""

    speed: jax.Array
    direction: jax.Array
    profile_depth: jax.Array | None = None
    profile_factor: jax.Array | None = None

    def __init__(self, speed, direction=0.0, profile_depth=None, profile_factor=None):
        self.speed = jnp.asarray(speed, dtype=float)
        self.direction = jnp.asarray(direction, dtype=float)
        if (profile_depth is None) != (profile_factor is None):
            raise InputError("a current profile needs both profile_depth and profile_factor")
        if profile_depth is not None:
            d, f = np.asarray(profile_depth, float), np.asarray(profile_factor, float)
            if d.ndim != 1 or d.shape != f.shape or d.size < 2 or np.any(np.diff(d) <= 0) or d[0] < 0:
                raise InputError("current profile: profile_depth increasing from 0 or more, one factor per depth, "
                                 f"at least two rows; got depths {d.tolist()} and factors {f.tolist()}")
            profile_depth, profile_factor = jnp.asarray(d), jnp.asarray(f)
        self.profile_depth, self.profile_factor = profile_depth, profile_factor

    @classmethod
    def power_law(cls, speed, direction, water_depth, exponent=1.0 / 7.0, n=21):
        """U(z) = U₀ ((h + z) / h)^α over the depth h (the tidal current profile of DNV-RP-C205 4.1.4,
        α = 1/7), tabulated at n depths."""
        d = np.linspace(0.0, float(water_depth), n)
        return cls(speed, direction, d, ((water_depth - d) / water_depth) ** exponent)

    def velocity(self, z):
        """World velocity (3,) of the current at height z (m, world z up; z < 0 under the still water)."""
        z = jnp.asarray(z)
        if self.profile_depth is None:
            factor = jnp.ones_like(z)
        else:
            factor = jnp.interp(jnp.maximum(-z, 0.0), self.profile_depth.astype(z.dtype), self.profile_factor.astype(z.dtype))
        u = self.speed.astype(z.dtype) * factor
        return jnp.stack([u * jnp.cos(self.direction).astype(z.dtype), u * jnp.sin(self.direction).astype(z.dtype),
                          jnp.zeros_like(u)])


class WaveComponents(eqx.Module):
    """A wave realisation: N linear components, all arrays of shape (N,).

    amplitude a_j [m], omega ω_j [rad/s], wavenumber k_j [rad/m], direction β_j
    [rad] (direction of travel), phase φ_j [rad]. Elevation
    ζ = Σ a_j cos(k_j x'_j − ω_j t − φ_j); complex amplitude A_j = a_j e^{−iφ_j}.
    ``water_depth`` [m] (static; inf: deep water): the depth the wavenumbers were
    computed for, which the particle kinematics below the surface need too.  ``current``: the sea
    state's steady :class:`Current`, if any (the elements that feel the water read it from here).
    """

    amplitude: jax.Array
    omega: jax.Array
    wavenumber: jax.Array
    direction: jax.Array
    phase: jax.Array
    water_depth: float = eqx.field(static=True, default=math.inf)
    current: Current | None = None
    gust_phase: jax.Array | None = None  # random phases of the wind's gusts (:func:`gust_speed`), one per gust frequency

    @property
    def n_components(self) -> int:
        return self.amplitude.shape[-1]


def realise(
    spectrum,
    key=None,
    *,
    n_frequencies: int,
    omega_min: float,
    omega_max: float,
    n_directions: int = 1,
    mean_direction=0.0,
    spreading: float = 1,
    spreading_kind: str = "cos2s",
    random_frequencies: bool = True,
    random_directions: bool | None = None,
    water_depth: float = math.inf,
    g: float = G_DEFAULT,
) -> WaveComponents:
    """Draw a wave realisation from a spectrum (Cibicik et al. 2019, eqs. 3-5).

    Frequencies: [omega_min, omega_max] is cut into ``n_frequencies`` equal bins
    of width Δω; each component frequency is drawn uniformly inside its bin
    (``random_frequencies=True``, so the record does not repeat after 2π/Δω) or
    sits at the bin centre. Directions: ``n_directions`` = M equal bins of width
    Δθ = π/M over θ̄ ± π/2 (θ̄ ± π for ``spreading_kind`` ``"cos2s_full"`` and ``"wrapped_normal"``) (centres, or one uniform draw per bin when
    ``random_directions``, default = ``random_frequencies``); weights
    w_j = D(θ_j)Δθ / Σ D Δθ from :func:`spreading_function` with s =
    ``spreading``. M = 1 is long-crested along ``mean_direction``.

    Each (frequency i, direction j) pair is one component with an independent
    uniform phase, amplitude a_ij = sqrt(2 S(ω_i) Δω w_j); the output is
    flattened to N = n_frequencies · n_directions components, frequency-major.

    ``key`` is a ``jax.random`` key; the result is a pure function of it, so
    ``jax.vmap(lambda k: realise(spec, k, n_frequencies=...))(keys)`` gives a
    batch. n_frequencies and n_directions fix array shapes and must be Python
    ints (static under jit).
    """
    if key is None:
        raise InputTypeError("realise needs a PRNG key: realise(spectrum, jax.random.key(0), ...)")
    if random_directions is None:
        random_directions = random_frequencies
    n, m = int(n_frequencies), int(n_directions)
    k_freq, k_dir, k_phase = jax.random.split(key, 3)

    d_omega = (omega_max - omega_min) / n
    centres = omega_min + d_omega * (jnp.arange(n) + 0.5)
    if random_frequencies:
        omega = centres + d_omega * (jax.random.uniform(k_freq, (n,)) - 0.5)
    else:
        omega = centres

    directional = getattr(spectrum, "directions", None) is not None  # a table of S(ω, θ): its own spreading
    if m == 1:
        if directional:
            raise InputError("a directional spectrum table spreads its energy over directions: give n_directions > 1")
        theta = jnp.full((1,), mean_direction, dtype=float)
        weights = jnp.ones((1,))
    else:
        width = 2.0 * jnp.pi if spreading_kind in WHOLE_CIRCLE or directional else jnp.pi  # the directions' range
        d_theta = width / m
        theta_c = mean_direction - 0.5 * width + d_theta * (jnp.arange(m) + 0.5)
        if random_directions:
            theta = theta_c + d_theta * (jax.random.uniform(k_dir, (m,)) - 0.5)
        else:
            theta = theta_c
        weights = (spectrum.direction_weights(omega, theta) if directional
                   else spreading_weights(theta, mean_direction, spreading, spreading_kind)[None, :])

    energy = 2.0 * spectrum.density(omega) * d_omega  # a² summed over directions
    a2 = energy[:, None] * weights
    # a component with no energy (the spectrum underflows to 0 far below its peak) has amplitude 0 and
    # derivative 0: sqrt's derivative at 0 would be inf, and inf x 0 a NaN in every gradient of the sea
    amplitude = jnp.where(a2 > 0, jnp.sqrt(jnp.where(a2 > 0, a2, 1.0)), 0.0).reshape(-1)
    omega_all = jnp.repeat(omega, m)
    theta_all = jnp.tile(theta, n)
    phase = jax.random.uniform(k_phase, (n * m,), maxval=2.0 * jnp.pi)
    return WaveComponents(
        amplitude=amplitude,
        omega=omega_all,
        wavenumber=wavenumber(omega_all, water_depth, g),
        direction=theta_all,
        phase=phase,
        water_depth=float(water_depth),
    )


def complex_amplitudes(components: WaveComponents):
    """A_j = a_j e^{−iφ_j}, so that ζ = Re Σ A_j exp(i(k_j x'_j − ω_j t))."""
    return components.amplitude * jnp.exp(-1j * components.phase)


def elevation(components: WaveComponents, x, y, t):
    """Free-surface elevation ζ(x, y, t) [m]; x, y, t broadcast together.

    ζ = Σ_j a_j cos(k_j (x cos β_j + y sin β_j) − ω_j t − φ_j).
    """
    x, y, t = jnp.broadcast_arrays(jnp.asarray(x, float), jnp.asarray(y, float), jnp.asarray(t, float))
    c = components
    xp = x[..., None] * jnp.cos(c.direction) + y[..., None] * jnp.sin(c.direction)
    arg = c.wavenumber * xp - c.omega * t[..., None] - c.phase
    return jnp.sum(c.amplitude * jnp.cos(arg), axis=-1)


def particle_kinematics(components: WaveComponents, points, t):
    """Linear (Airy) water-particle kinematics of a realisation at world points (n, 3): velocity (n, 3)
    [m/s], local acceleration ∂u/∂t (n, 3) [m/s²] and the surface elevation ζ (n,) [m] above each
    point.  With θ_j = k_j x'_j − ω_j t − φ_j (ζ = Σ a_j cos θ_j), each component gives

        u_h = a ω f_u(z) cos θ e_β,   w = a ω f_w(z) sin θ,
        ∂u_h/∂t = a ω² f_u(z) sin θ e_β,   ∂w/∂t = −a ω² f_w(z) cos θ,

    f_u = f_w = e^{kz} in deep water, f_u = cosh k(z + h) / sinh kh and f_w = sinh k(z + h) / sinh kh
    at the realisation's depth h (``components.water_depth``).  Above and below the still water the depth is stretched to the instantaneous surface
    (Wheeler): z is evaluated at (z − ζ) h / (h + ζ), or z − ζ in deep water, so that the surface,
    wherever it is, takes the kinematics linear theory gives at z = 0; a point above the surface takes
    them too (the caller decides what is wet)."""
    points = jnp.asarray(points)
    cos, sin, zeta = _phases(components, points[:, 0], points[:, 1], t)
    u, du = _kinematics(components, cos, sin, zeta, points[:, 2])
    return u, du, zeta


def ramp(t, ramp_time):
    """The waves' fade-in, ½ (1 − cos(π t / T)) over the ramp time T and 1 after it (1 throughout for
    T = 0): the factor every element that feels the waves applies, so they rise together."""
    if isinstance(ramp_time, (int, float)):  # a static ramp (a hydrodynamic body's): no branch in the program
        return 0.5 * (1.0 - jnp.cos(jnp.pi * jnp.clip(t / ramp_time, 0.0, 1.0))) if ramp_time > 0 else 1.0
    T = jnp.maximum(ramp_time, 1e-30)
    return jnp.where(ramp_time > 0, 0.5 * (1.0 - jnp.cos(jnp.pi * jnp.clip(t / T, 0.0, 1.0))), 1.0)


def _directions(components: WaveComponents):
    beta = jnp.asarray(components.direction)
    return jnp.cos(beta), jnp.sin(beta)


def water_column(components: WaveComponents, x, y, t):
    """The waves over one horizontal position: (cos θ, sin θ) of the components, (1, N) each, and the
    elevation ζ (1,), for :func:`column_kinematics` at any heights there without recomputing the
    phases (an object crossing the surface needs ζ before it knows where its wet part is)."""
    dtype = jnp.result_type(jnp.asarray(x), float)
    return _phases(components, jnp.asarray(x, dtype)[None], jnp.asarray(y, dtype)[None], t)


def column_kinematics(components: WaveComponents, column, z):
    """Particle velocity and acceleration (m, 3) at heights z (m,) of one :func:`water_column`, as
    :func:`particle_kinematics` gives them there."""
    cos, sin, zeta = column
    return _kinematics(components, cos, sin, zeta, jnp.asarray(z))


def _phases(c: WaveComponents, x, y, t):
    dtype = jnp.result_type(x, y)
    k, om, ph, a = (jnp.asarray(v).astype(dtype) for v in (c.wavenumber, c.omega, c.phase, c.amplitude))
    cb, sb = (v.astype(dtype) for v in _directions(c))
    xp = x[:, None] * cb + y[:, None] * sb  # (n, nc)
    theta = k * xp - om * jnp.asarray(t).astype(dtype) - ph
    cos, sin = _cos_sin(theta)
    return cos, sin, jnp.sum(a * cos, axis=-1)


@jax.custom_jvp
def _cos_sin(theta):
    """(cos θ, sin θ), each evaluated once.  XLA's CPU fusion copies an elementwise operation into every
    fusion that consumes it, transcendentals included, and drops optimisation barriers: the phases'
    cosines and sines, consumed by the elevation's sum and by each of the kinematics' products, were
    evaluated three and two times a right-hand side (a Morison object in 100 components: 780
    transcendentals, 480 with this; its right-hand side 15 -> 11 µs).  A loop of one trip whose count
    XLA cannot see (it is computed from θ) holds them: its results are kept, not fused.  The derivative
    is given (the loop has none in reverse mode): d cos = −sin dθ, d sin = cos dθ."""
    if theta.size == 0:
        return jnp.cos(theta), jnp.sin(theta)

    def held(theta):
        first = theta.reshape(-1)[0]
        trips = 1 + (first != first).astype(jnp.int32)  # one (two where θ is NaN: the same values), XLA cannot tell
        zero = jnp.zeros_like(theta)
        return jax.lax.fori_loop(0, trips, lambda _, cs: (jnp.cos(theta), jnp.sin(theta)), (zero, zero))

    # on the CPU only: elsewhere a loop whose count is known at run time only would ask the host each time
    return jax.lax.platform_dependent(theta, cpu=held, default=lambda theta: (jnp.cos(theta), jnp.sin(theta)))


@_cos_sin.defjvp
def _cos_sin_jvp(primals, tangents):
    (theta,), (dtheta,) = primals, tangents
    cos, sin = _cos_sin(theta)
    return (cos, sin), (-sin * dtheta, cos * dtheta)


def _kinematics(c: WaveComponents, cos, sin, zeta, z):
    water_depth = c.water_depth
    dtype = z.dtype
    k, om, a = (jnp.asarray(v).astype(dtype) for v in (c.wavenumber, c.omega, c.amplitude))
    cb, sb = (v.astype(dtype) for v in _directions(c))
    if isinstance(water_depth, (int, float)) and math.isinf(water_depth):
        zs = jnp.minimum(z - zeta, 0.0)[:, None]
        fu = fw = jnp.exp(k * zs)
    else:
        h = water_depth
        zs = jnp.minimum((z - zeta) * h / (h + zeta), 0.0)[:, None]
        # cosh k(z + h) / sinh kh and sinh k(z + h) / sinh kh, without overflow
        e2 = jnp.exp(-2.0 * k * (zs + h))
        den = 1.0 - jnp.exp(-2.0 * k * h)
        fu, fw = jnp.exp(k * zs) * (1.0 + e2) / den, jnp.exp(k * zs) * (1.0 - e2) / den
    aw, aw2 = a * om, a * om**2
    horizontal = jnp.stack([cb, sb], -1)  # (nc, 2)
    uh = (aw * fu * cos) @ horizontal
    duh = (aw2 * fu * sin) @ horizontal
    w = jnp.sum(aw * fw * sin, axis=-1)
    dw = -jnp.sum(aw2 * fw * cos, axis=-1)
    return jnp.concatenate([uh, w[:, None]], -1), jnp.concatenate([duh, dw[:, None]], -1)
