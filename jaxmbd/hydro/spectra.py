"""Two-peaked parametric seas of Hs and Tp: Torsethaugen's wind sea and swell (DNV-RP-C205, 3.5.6)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .waves import G_DEFAULT, JONSWAP, _peak_factor

# Torsethaugen and Haver (2004), as DNV-RP-C205 (2010) 3.5.6 gives them
A_F = 6.6  # s m^-1/3: Tf = a_f Hs^(1/3), the period of a fully developed sea
A_E = 2.0  # s m^-1/2: Tl = a_e Hs^(1/2), the lower limit of Tp
T_U = 25.0  # s: the upper limit of Tp

# Dimensionless grid x = ω Tp_j / 2π for the numerical normalisation of a part's shape x⁻⁴ exp(−x⁻⁴) γ^Y.  Below
# x = 0.3 exp(−x⁻⁴) < 1e-53; above x = 8 the peak factor is 1 to machine precision, and the tail is added in closed
# form, ∫_X^∞ x⁻⁴ exp(−x⁻⁴) dx = X⁻³/3 − X⁻⁷/7 + X⁻¹¹/22 − ... (the next term below 1e-15 at X = 8).  Steps of 0.0005
# put x = 1, where the peak's width σ jumps, on a node that ends a pair of Simpson's intervals: 1e-12 of the area.
_X_GRID = np.linspace(0.3, 8.0, 15401)
_X_MAX = float(_X_GRID[-1])


class HsTpSpectrum:
    """The spectra a sweep, a search or an override of Hs and Tp can run: their ``hs`` and ``tp`` are array
    leaves that set the whole spectrum (JONSWAP, Pierson-Moskowitz, Torsethaugen); a table's or Ochi-Hubble's
    parts are not."""

    @staticmethod
    def of(spectrum) -> bool:
        return isinstance(spectrum, (JONSWAP, Torsethaugen))


STEEPNESS_LIMITS = ((8.0, 1.0 / 15.0), (15.0, 1.0 / 25.0))
"""DNV-RP-C205 (2010) 3.5.5's limiting average steepness of a sea state, Sp = 2π Hs / (g Tp²): 1/15 for Tp up to
8 s, 1/25 from 15 s, linear in Tp between.  Steeper seas break; linear waves do not describe them."""


def steepness(hs, tp, g: float = G_DEFAULT):
    """A sea state's average steepness Sp = 2π Hs / (g Tp²) (deep-water wavelength at the peak)."""
    return 2.0 * np.pi * np.asarray(hs, float) / (g * np.asarray(tp, float) ** 2)


def steepness_limit(tp):
    """The limiting Sp at ``tp`` (s) (:data:`STEEPNESS_LIMITS`)."""
    (t0, s0), (t1, s1) = STEEPNESS_LIMITS
    return np.interp(np.asarray(tp, float), [t0, t1], [s0, s1])


def breaking_hs(tp, g: float = G_DEFAULT):
    """The largest Hs (m) of a sea of peak period ``tp`` (s) within the limiting steepness: Sp_max g Tp² / 2π."""
    return steepness_limit(tp) * g * np.asarray(tp, float) ** 2 / (2.0 * np.pi)


def _shape(x):
    """A Torsethaugen part's shape without its peak factor: x⁻⁴ exp(−x⁻⁴), ∫_0^∞ = Γ(3/4)/4."""
    return x**-4 * jnp.exp(-(x**-4))


class Torsethaugen(eqx.Module):
    """Torsethaugen's two-peaked spectrum of the Norwegian shelf, wind sea and swell from Hs and Tp alone
    (Torsethaugen and Haver 2004; DNV-RP-C205 (2010) 3.5.6), one-sided, m²·s/rad.

    With Tf = 6.6 Hs^(1/3) s (a fully developed sea), the sea is wind dominated where Tp ≤ Tf: the primary peak
    (wind sea) has H₁ = r Hs, T₁ = Tp, γ = 35 (2π H₁ / (g Tp²))^0.857, r = 0.7 + 0.3 exp(−(2 ε_l)²),
    ε_l = (Tf − Tp)/(Tf − Tl), Tl = 2 Hs^(1/2); the secondary (swell) H₂ = √(1 − r²) Hs, T₂ = Tf + 2 s, γ = 1.  It is
    swell dominated where Tp > Tf: the primary (swell) H₁ = r Hs, T₁ = Tp, γ = 35 (2π Hs / (g Tf²))^0.857 (1 + 6 ε_u),
    r = 0.6 + 0.4 exp(−(ε_u / 0.3)²), ε_u = (Tp − Tf)/(25 s − Tf); the secondary (wind sea) H₂ = √(1 − r²) Hs,
    T₂ = 6.6 H₂^(1/3), γ = 1.  Each part is

        S_j(ω) = N(γ_j) H_j²/16 · T_j/2π · x⁻⁴ exp(−x⁻⁴) γ_j^Y,  x = ω T_j / 2π,  Y as JONSWAP's (σ 0.07 / 0.09),

    an ω⁻⁴ tail.  N(γ) makes ∫ S_j dω = H_j²/16 exactly (computed as JONSWAP's normalisation), so 4√m0 = Hs; the
    standard's closed form G₀ A_γ = 3.26 (1 + 1.1 (ln γ)^1.19)/γ is within 3.6 % of N for 1 ≤ γ ≤ 7 (the most near
    γ = 2.5; N(1) = 4/Γ(3/4) = 3.264).  The peak enhancement is held at γ ≥ 1, which the formula can fall below for
    small, long wind seas.

    **Range**: fitted to the Norwegian continental shelf's measured seas for Tl ≤ Tp ≤ 25 s; a file outside it is
    refused; given here, ε is held at its bound (0 or 1).  ``hs`` and ``tp`` are array leaves: a sweep over Hs and Tp
    and an override of them run it as they run a JONSWAP sea (an operability study does not: its hindcast's Tz
    becomes a Tp by JONSWAP's ratio)."""

    hs: jax.Array
    tp: jax.Array
    g: float = eqx.field(static=True, default=G_DEFAULT)

    def __init__(self, hs, tp, g=G_DEFAULT):
        self.hs = jnp.asarray(hs, dtype=float)
        self.tp = jnp.asarray(tp, dtype=float)
        self.g = float(g)

    @staticmethod
    def tp_range(hs) -> tuple[float, float]:
        """(Tl, Tu) in s: the peak periods the model was fitted over at this Hs (m)."""
        return A_E * float(hs) ** 0.5, T_U

    @classmethod
    def range_problem(cls, hs, tp) -> str | None:
        """Why the model does not hold at (Hs, Tp) (its fitted range of Tp), in words, or None."""
        low, high = cls.tp_range(hs)
        if low <= float(tp) <= high:
            return None
        return (f"a peak period within Torsethaugen's range [2 √Hs, 25] s = [{low:.3g}, {high:g}] s for Hs {float(hs):g} m; "
                f"got {float(tp):g}")

    def parts(self):
        """(H_j (m), T_j (s), γ_j) of the (primary, secondary) peaks, each an array of two."""
        hs, tp = self.hs, self.tp
        tf, tl = A_F * hs ** (1.0 / 3.0), A_E * jnp.sqrt(hs)
        wind = tp <= tf
        eps_l = jnp.clip((tf - tp) / (tf - tl), 0.0, 1.0)
        eps_u = jnp.clip((tp - tf) / (T_U - tf), 0.0, 1.0)
        r = jnp.where(wind, 0.7 + 0.3 * jnp.exp(-((eps_l / 0.5) ** 2)), 0.6 + 0.4 * jnp.exp(-((eps_u / 0.3) ** 2)))
        h1 = r * hs
        h2 = hs * jnp.sqrt(jnp.maximum(1.0 - r**2, 1e-30))  # r = 1 at Tp = Tf: no second peak (and a finite gradient)
        steep = jnp.where(wind, 2 * jnp.pi * h1 / (self.g * tp**2), 2 * jnp.pi * hs / (self.g * tf**2))
        gamma1 = jnp.maximum(35.0 * steep**0.857 * jnp.where(wind, 1.0, 1.0 + 6.0 * eps_u), 1.0)
        t2 = jnp.where(wind, tf + 2.0, A_F * h2 ** (1.0 / 3.0))
        return jnp.stack([h1, h2]), jnp.stack([tp, t2]), jnp.stack([gamma1, jnp.ones_like(gamma1)])

    @staticmethod
    def normalisation(gamma):
        """N(γ): a part's shape x⁻⁴ exp(−x⁻⁴) γ^Y times N integrates to 1 (4/Γ(3/4) for γ = 1)."""
        x = jnp.asarray(_X_GRID)
        f = _shape(x) * _peak_factor(x, jnp.asarray(gamma)[..., None], 0.07, 0.09)
        h = x[1] - x[0]
        simpson = h / 3.0 * (f[..., 0] + f[..., -1] + 4.0 * jnp.sum(f[..., 1:-1:2], -1) + 2.0 * jnp.sum(f[..., 2:-1:2], -1))
        tail = _X_MAX**-3 / 3.0 - _X_MAX**-7 / 7.0 + _X_MAX**-11 / 22.0
        return 1.0 / (simpson + tail)

    def density(self, omega):
        """S(ω) [m²·s/rad] (ω ≤ 0 gives 0): the two parts' sum."""
        omega = jnp.asarray(omega, dtype=float)
        h, t, gamma = self.parts()
        pos = omega > 0
        x = jnp.where(pos, omega, 1.0)[..., None] * t / (2.0 * jnp.pi)
        s = self.normalisation(gamma) * h**2 / 16.0 * t / (2.0 * jnp.pi) * _shape(x) * _peak_factor(x, gamma, 0.07, 0.09)
        return jnp.where(pos, jnp.sum(s, axis=-1), 0.0)

    __call__ = density
