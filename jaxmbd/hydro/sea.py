"""A sea state as part of a system: what a PRNG key turns into a wave realisation."""

from __future__ import annotations

import math

import equinox as eqx
import jax.numpy as jnp

from .waves import JONSWAP, Current, RegularWave, WaveComponents, realise


class SeaState(eqx.Module):
    """Irregular waves from a spectrum (JONSWAP, Pierson-Moskowitz), or one regular wave, and a steady
    :class:`~jaxmbd.hydro.waves.Current` (with neither waves, a current alone: calm water).

    ``realise(key)`` draws a realisation (random phases, a random frequency
    in each of ``n_frequencies`` equal bins over [omega_min, omega_max],
    ``n_directions`` directions with cos²ˢ spreading about ``mean_direction``);
    a regular wave ignores the key.  Pure in the key: ``jax.vmap`` over keys
    gives a Monte-Carlo batch.
    """

    spectrum: JONSWAP | None = None
    regular: RegularWave | None = None
    mean_direction: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(0.0))
    n_frequencies: int = eqx.field(static=True, default=100)
    omega_min: float = eqx.field(static=True, default=0.2)
    omega_max: float = eqx.field(static=True, default=2.5)
    n_directions: int = eqx.field(static=True, default=1)
    spreading: float = eqx.field(static=True, default=1.0)
    random_frequencies: bool = eqx.field(static=True, default=True)
    water_depth: float = eqx.field(static=True, default=math.inf)
    current: Current | None = None

    def __check_init__(self):
        if self.spectrum is not None and self.regular is not None:
            raise ValueError("a SeaState takes one of `spectrum` and `regular`, not both")
        if self.spectrum is None and self.regular is None and self.current is None:
            raise ValueError("a SeaState needs waves (`spectrum` or `regular`), a `current`, or both")

    def realise(self, key) -> WaveComponents:
        c = self._waves(key)
        if self.current is None:
            return c
        return WaveComponents(c.amplitude, c.omega, c.wavenumber, c.direction, c.phase, c.water_depth, self.current)

    def _waves(self, key) -> WaveComponents:
        if self.regular is not None:
            return self.regular.components(self.water_depth)
        if self.spectrum is None:  # calm water under a current
            empty = jnp.zeros(0)
            return WaveComponents(empty, empty, empty, empty, empty, self.water_depth)
        return realise(
            self.spectrum,
            key,
            n_frequencies=self.n_frequencies,
            omega_min=self.omega_min,
            omega_max=self.omega_max,
            n_directions=self.n_directions,
            mean_direction=self.mean_direction,
            spreading=self.spreading,
            random_frequencies=self.random_frequencies,
            water_depth=self.water_depth,
        )
