"""A sea state as part of a system: what a PRNG key turns into a wave realisation."""

from __future__ import annotations

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from ..tables import Key, default_of, float_array, keys
from .spectra import Torsethaugen
from .waves import (
    G_DEFAULT,
    JONSWAP,
    SPREADING,
    WHOLE_CIRCLE,
    Current,
    OchiHubble,
    PiersonMoskowitz,
    RecordedWave,
    RegularWave,
    TabulatedSpectrum,
    WaveComponents,
    realise,
)


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
    """The spreading's parameter: cos²ˢ's exponent s, or the wrapped normal's σ (rad)."""
    spreading_kind: str = eqx.field(static=True, default="cos2s")
    random_frequencies: bool = eqx.field(static=True, default=True)
    water_depth: float = eqx.field(static=True, default=math.inf)
    current: Current | None = None
    gust_frequencies: int = eqx.field(static=True, default=0)
    """Gust frequencies a realisation draws phases for (0: no gusts); a :class:`~jaxmbd.system.System` sets it when an
    element asks for gusts (:data:`jaxmbd.forces.wind.GUST_FREQUENCIES`)."""
    g: float = eqx.field(static=True, default=G_DEFAULT)
    """Gravity of the dispersion relation (m/s²): a :class:`~jaxmbd.system.System` sets it from its model's."""

    def __check_init__(self):
        if self.spectrum is not None and self.regular is not None:
            raise InputError("a SeaState takes one of `spectrum` and `regular`, not both")
        if self.spectrum is None and self.regular is None and self.current is None:
            raise InputError("a SeaState needs waves (`spectrum` or `regular`), a `current`, or both")
        if self.spreading_kind not in SPREADING:
            raise InputError(f"spreading_kind must be one of {', '.join(SPREADING)}, got {self.spreading_kind!r}")

    def headings(self, mean=None) -> np.ndarray:
        """Every direction (rad) a realisation may draw about ``mean`` (default: the sea's own): the regular
        wave's, or for ``n_directions`` bins over mean ± π/2 their edges and centres (a draw lies anywhere in
        a bin), for checking against a hydrodynamic table."""
        if self.regular is not None:
            return np.atleast_1d(float(self.regular.direction if mean is None else mean))
        mean = float(self.mean_direction if mean is None else mean)
        m = self.n_directions
        directional = getattr(self.spectrum, "directions", None) is not None  # a table's own spreading: the whole circle
        half = np.pi if self.spreading_kind in WHOLE_CIRCLE or directional else 0.5 * np.pi
        return np.array([mean]) if m == 1 else mean + np.linspace(-half, half, 2 * m + 1)

    def energy_fraction(self) -> float | None:
        """The share of the spectrum's energy (m0 = Hs²/16) inside [omega_min, omega_max]: what the
        realisations can hold (Simpson's rule on 4,001 points; None for a regular wave or calm water)."""
        if self.spectrum is None:
            return None
        w = np.linspace(self.omega_min, self.omega_max, 4001)
        S = np.asarray(self.spectrum.density(w), float)
        h = w[1] - w[0]
        m0 = h / 3.0 * (S[0] + S[-1] + 4.0 * S[1:-1:2].sum() + 2.0 * S[2:-1:2].sum())
        return float(m0 / (float(self.spectrum.hs) ** 2 / 16.0))

    def steepness_excess(self) -> tuple | None:
        """(Hs, Tp, Sp, its limit, the breaking Hs) where the sea of Hs and Tp is steeper than DNV-RP-C205's
        limiting steepness (:func:`jaxmbd.hydro.spectra.breaking_hs`; a sea that breaks), else None."""
        from .spectra import HsTpSpectrum, breaking_hs, steepness, steepness_limit

        if self.spectrum is None or not HsTpSpectrum.of(self.spectrum):
            return None
        hs, tp = float(self.spectrum.hs), float(self.spectrum.tp)
        sp, limit = float(steepness(hs, tp)), float(steepness_limit(tp))
        return None if sp <= limit * (1 + 1e-9) else (hs, tp, sp, limit, float(breaking_hs(tp)))

    def modelled_hs(self) -> float | None:
        """4 √m0 of the discretised spectrum, Σ S(ω_i) Δω over the bins' centres (m): the significant
        wave height the realisations carry on average (None for a regular wave or calm water)."""
        if self.spectrum is None:
            return None
        dw = (self.omega_max - self.omega_min) / self.n_frequencies
        centres = self.omega_min + dw * (np.arange(self.n_frequencies) + 0.5)
        return float(4.0 * np.sqrt(np.sum(np.asarray(self.spectrum.density(centres), float)) * dw))

    def realise(self, key) -> WaveComponents:
        c = self._waves(key)
        gusts = None
        if self.gust_frequencies:  # their own key, folded from the waves': the waves' draws are unchanged
            if key is None:
                raise InputError("the wind's gusts are random: a realisation needs a PRNG key, e.g. key=jax.random.key(0)")
            gusts = jax.random.uniform(jax.random.fold_in(key, 0x6057), (self.gust_frequencies,), maxval=2 * jnp.pi)
        if self.current is None and gusts is None:
            return c
        return WaveComponents(c.amplitude, c.omega, c.wavenumber, c.direction, c.phase, c.water_depth, self.current, gusts)

    def _waves(self, key) -> WaveComponents:
        if self.regular is not None:
            return self.regular.components(self.water_depth, g=self.g)
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
            spreading_kind=self.spreading_kind,
            random_frequencies=self.random_frequencies,
            water_depth=self.water_depth,
            g=self.g,
        )


# --------------------------------------------------------------------------- the file form

_WAVE_TYPES = ("jonswap", "pierson_moskowitz", "torsethaugen", "ochi_hubble", "tabulated", "regular", "recorded")


def _deg(rad) -> float:
    return math.degrees(float(rad))


WAVE_KEYS = keys(
    Key("type", "string", doc="`jonswap`, `pierson_moskowitz`, `torsethaugen` (wind sea and swell from Hs and Tp, "
        "DNV-RP-C205 3.5.6; Tp within [2 √Hs, 25] s), `ochi_hubble`, `tabulated`, `regular`, `recorded`"),
    Key("hs", "number", "m", doc="significant wave height (spectra), > 0", default_text="required (spectra)"),
    Key("tp", "number", "s", doc="peak period (spectra), > 0", default_text="required (spectra)"),
    Key("gamma", "number", "", default_of(JONSWAP, "gamma"), "JONSWAP peak enhancement γ ≥ 1"),
    Key("file", "string", "", None, "a recorded elevation (recorded): CSV of time (s, evenly spaced) and elevation (m) "
        "at the still-water origin, one row a sample, a header line allowed; its first sample is the run's t = 0", "none"),
    Key("dt", "number", "s", None, "the sampling step of an `elevation` given inline (recorded)", "none"),
    Key("elevation", "array", "m", None, "a recorded elevation given inline (recorded), every `dt`; or `file`", "none"),
    Key("parts", "array (2, 3)", "m, s, 1", None, "Ochi-Hubble's two parts (ochi_hubble), rows of [Hs, Tp, λ], each > 0",
        "required (ochi_hubble)"),
    Key("omega", "array", "rad/s", None, "the table's frequencies (tabulated), increasing, > 0", "required (tabulated)"),
    Key("density", "array", "m² s/rad", None, "S(ω) at them (tabulated), ≥ 0; from a buoy's S(f) in m²/Hz at f Hz: "
        "S(f) / (2π) at ω = 2π f; with `directions_deg`, rows of S(ω, θ) in m² s/rad per rad, one per frequency",
        "required (tabulated)"),
    Key("directions_deg", "array", "deg", None, "a directional table's directions of travel (tabulated), increasing within one "
        "turn; the realisations then take the table's spreading over the whole circle (n_directions > 1)", "none (1-D)"),
    Key("sigma_a", "number", "", default_of(JONSWAP, "sigma_a"), "JONSWAP peak width below the peak"),
    Key("sigma_b", "number", "", default_of(JONSWAP, "sigma_b"), "JONSWAP peak width above the peak"),
    Key("height", "number", "m", doc="crest-to-trough height (regular), > 0", default_text="required (regular)"),
    Key("period", "number", "s", doc="period (regular), > 0", default_text="required (regular)"),
    Key("phase_deg", "number", "deg", _deg(default_of(RegularWave, "phase")), "regular wave phase"),
    Key("direction_deg", "number", "deg", _deg(default_of(realise, "mean_direction")),  # (SeaState's is an array)
        "(mean) direction of travel, from +x towards +y"),
    Key("n_frequencies", "integer", "", default_of(SeaState, "n_frequencies"), "components per realisation"),
    Key("omega_min", "number", "rad/s", default_of(SeaState, "omega_min"), "lowest frequency (a recorded wave's band kept: "
        "from 0 by default)"),
    Key("omega_max", "number", "rad/s", default_of(SeaState, "omega_max"), "highest frequency (a recorded wave's: every "
        "frequency of the record by default)"),
    Key("n_directions", "integer", "", default_of(SeaState, "n_directions"), "short-crested seas: directions"),
    Key("spreading", "number", "", default_of(SeaState, "spreading"), "short-crested seas: cos²ˢ exponent s"),
    Key("spreading_kind", "string", "", default_of(SeaState, "spreading_kind"), "short-crested seas: `cos2s`, "
        "cos^{2s}(θ − θ̄) over the half plane, `cos2s_full`, cos^{2s}((θ − θ̄)/2) over the whole circle, or "
        "`wrapped_normal`, a normal distribution of `spreading_sigma_deg` wrapped round the circle"),
    Key("spreading_sigma_deg", "number", "deg", None, "the wrapped normal's standard deviation σ, > 0 and at most 60",
        "required (wrapped_normal)"),
    Key("random_frequencies", "bool", "", default_of(SeaState, "random_frequencies"), "one random frequency per bin"),
    Key("water_depth", "number", "m", default_of(SeaState, "water_depth"), "water depth (inf: deep water)"),
)

CURRENT_KEYS = keys(
    Key("speed", "number", "m/s", doc="speed at the still-water surface (≥ 0)"),
    Key("direction_deg", "number", "deg", _deg(default_of(Current, "direction")),
        "direction of travel, from +x towards +y (as the waves)"),
    Key("profile", "array (n, 2)", "m, 1", None, "rows of [depth under the still water, speed over the surface "
        "speed]; depths from 0 or more, increasing; linear between rows, constant beyond the last", "uniform"),
    Key("power_law_depth", "number", "m", None, "instead of `profile`: the 1/7 power law of DNV-RP-C205 (4.1.4) "
        "over this water depth, U(z) = U₀ ((h + z)/h)^(1/7)"),
)

WATER_KEYS = keys(
    Key("density", "number", "kg/m³", None, "the sea's density: every element that touches water takes it unless "
        "its own table gives it (then the two must agree), and so do a WAMIT file's scaling and a Capytaine run",
        "the hydrodynamic data's, else each element's (1025)"),
)


def read_sea(reader, cfg):
    sea = _read_waves(reader, cfg)
    if "current" not in cfg:
        return sea
    current = _read_current(reader, cfg)
    if sea is None:
        return SeaState(current=current)
    return dataclasses.replace(sea, current=current)


def _read_current(reader, cfg):
    """``[current]``: a surface ``speed`` (m/s) towards ``direction_deg``, uniform, or over depth by a
    ``profile`` of [depth (m, down), factor] rows or the 1/7 ``power_law_depth`` (m)."""
    r, f = reader.r, "current"
    c = r.table(cfg["current"], f, tuple(CURRENT_KEYS))
    speed = r.number(c, f, "speed", ge=0.0)
    direction = math.radians(r.number(c, f, "direction_deg", CURRENT_KEYS["direction_deg"].default))
    if "profile" in c and "power_law_depth" in c:
        r.fail(f"{f}.profile", "give either profile or power_law_depth, not both")
    if "power_law_depth" in c:
        return Current.power_law(speed, direction, r.number(c, f, "power_law_depth", gt=0.0))
    if "profile" not in c:
        return Current(speed, direction)
    rows = r.array(c["profile"], f"{f}.profile")
    if rows.ndim != 2 or rows.shape[1] != 2 or rows.shape[0] < 2:
        r.fail(f"{f}.profile", f"expected rows of [depth (m, down), factor], at least two; got shape {list(rows.shape)}")
    if rows[0, 0] < 0 or np.any(np.diff(rows[:, 0]) <= 0):
        r.fail(f"{f}.profile", f"depths must start at 0 or more and increase; got {rows[:, 0].tolist()}")
    if np.any(rows[:, 1] < 0):
        r.fail(f"{f}.profile", f"factors (speed over the surface speed) must be >= 0; got {rows[:, 1].tolist()}")
    return Current(speed, direction, rows[:, 0], rows[:, 1])


def _read_waves(reader, cfg):
    if "waves" not in cfg:
        return None
    r = reader.r
    f = "waves"
    w = r.table(cfg["waves"], f, tuple(WAVE_KEYS))
    K = {k: v.default for k, v in WAVE_KEYS.items()}
    typ = r.string(w, f, "type", choices=_WAVE_TYPES)
    own = {"jonswap": ("hs", "tp", "gamma", "sigma_a", "sigma_b"), "pierson_moskowitz": ("hs", "tp"), "torsethaugen": ("hs", "tp"),
           "tabulated": ("omega", "density", "directions_deg"), "ochi_hubble": ("parts",), "regular": ("height", "period", "phase_deg"),
           "recorded": ("file", "dt", "elevation", "omega_min", "omega_max")}
    spectral = ("n_frequencies", "omega_min", "omega_max", "n_directions", "spreading", "spreading_kind", "spreading_sigma_deg",
                "random_frequencies")
    for key in w:
        if key in ("type", "direction_deg", "water_depth") or key in own[typ] or (typ not in ("regular", "recorded") and key in spectral):
            continue
        keys = ", ".join(own[typ] + (() if typ in ("regular", "recorded") else spectral))
        r.fail(f"{f}.{key}", f"not used by {typ!r} waves (their keys: type, {keys}, direction_deg, water_depth)")
    direction = math.radians(r.number(w, f, "direction_deg", K["direction_deg"]))
    depth = r.number(w, f, "water_depth", K["water_depth"], gt=0.0, allow_inf=True)
    if typ == "recorded":
        dt, eta = _read_record(reader, w, f)
        band = (r.number(w, f, "omega_min", default_of(RecordedWave, "omega_min"), ge=0.0),
                r.number(w, f, "omega_max", default_of(RecordedWave, "omega_max"), gt=0.0, allow_inf=True))
        try:
            wave = RecordedWave(dt, eta, direction, *band)
        except InputError as exc:
            r.fail(f, str(exc))
        return SeaState(regular=wave, mean_direction=float_array(direction), water_depth=depth)
    if typ == "regular":
        wave = RegularWave(
            r.number(w, f, "height", gt=0.0), r.number(w, f, "period", gt=0.0), direction,
            math.radians(r.number(w, f, "phase_deg", K["phase_deg"])),
        )
        return SeaState(regular=wave, mean_direction=float_array(direction), water_depth=depth)
    if typ == "tabulated":
        spec = _read_table(r, w, f)
    elif typ == "ochi_hubble":
        parts = r.array(r.get(w, f, "parts"), f"{f}.parts", [(2, 3)])
        if not np.all(parts > 0):
            r.fail(f"{f}.parts", f"expected rows of [Hs (m), Tp (s), λ], every one > 0; got {parts.tolist()}")
        spec = OchiHubble(parts)
    elif typ == "torsethaugen":
        hs, tp = r.number(w, f, "hs", gt=0.0), r.number(w, f, "tp", gt=0.0)
        problem = Torsethaugen.range_problem(hs, tp)
        if problem:
            r.fail(f"{f}.tp", f"expected {problem}")
        spec = Torsethaugen(hs, tp)
    elif typ == "jonswap":
        spec = JONSWAP(r.number(w, f, "hs", gt=0.0), r.number(w, f, "tp", gt=0.0), r.number(w, f, "gamma", K["gamma"], ge=1.0),
                       r.number(w, f, "sigma_a", K["sigma_a"], gt=0.0), r.number(w, f, "sigma_b", K["sigma_b"], gt=0.0))
    else:
        spec = PiersonMoskowitz(r.number(w, f, "hs", gt=0.0), r.number(w, f, "tp", gt=0.0))
    wmin = r.number(w, f, "omega_min", K["omega_min"], gt=0.0)
    wmax = r.number(w, f, "omega_max", K["omega_max"], gt=wmin)
    return SeaState(
        spectrum=spec,
        mean_direction=float_array(direction),
        n_frequencies=r.integer(w, f, "n_frequencies", K["n_frequencies"], ge=1),
        omega_min=wmin,
        omega_max=wmax,
        n_directions=r.integer(w, f, "n_directions", K["n_directions"], ge=1),
        spreading=_spreading(r, w, f, K),
        spreading_kind=r.string(w, f, "spreading_kind", K["spreading_kind"], choices=SPREADING),
        random_frequencies=r.boolean(w, f, "random_frequencies", K["random_frequencies"]),
        water_depth=depth,
    )


def _spreading(r, w, f, K) -> float:
    """The spreading's parameter: cos²ˢ's exponent s (`spreading`), or the wrapped normal's σ in rad (from
    `spreading_sigma_deg`); each refused where the other kind is asked for."""
    kind = r.string(w, f, "spreading_kind", K["spreading_kind"], choices=SPREADING)
    if kind == "wrapped_normal":
        if "spreading" in w:
            r.fail(f"{f}.spreading", "a cos²ˢ exponent; the wrapped normal takes spreading_sigma_deg")
        return math.radians(r.number(w, f, "spreading_sigma_deg", gt=0.0, le=60.0))
    if "spreading_sigma_deg" in w:
        r.fail(f"{f}.spreading_sigma_deg", "the wrapped normal's σ; give spreading_kind = 'wrapped_normal', or spreading (s)")
    return r.number(w, f, "spreading", K["spreading"], gt=0.0)


def _read_record(reader, w, f):
    """(dt, elevation without its mean) of a recorded wave: a CSV ``file`` of time and elevation, or ``dt`` and
    ``elevation`` inline."""
    r = reader.r
    if ("file" in w) == ("elevation" in w):
        r.fail(f, "a recorded wave needs either file (CSV of time, elevation) or dt and elevation, one of them")
    if "file" in w:
        path = r.path(w, f, "file")
        try:
            rows = np.genfromtxt(path, delimiter=",", invalid_raise=True)
        except (OSError, ValueError) as exc:
            r.fail(f"{f}.file", f"cannot read {path}: {exc}")
        rows = rows[~np.isnan(rows).any(axis=1)] if rows.ndim == 2 else rows  # a header line reads as NaN
        if rows.ndim != 2 or rows.shape[1] != 2 or rows.shape[0] < 8:
            r.fail(f"{f}.file", f"{path}: expected two columns (time s, elevation m) and at least 8 rows")
        steps = np.diff(rows[:, 0])
        if np.any(steps <= 0) or np.ptp(steps) > 1e-6 * steps.mean():
            r.fail(f"{f}.file", f"{path}: the times must be evenly spaced and increasing (steps {steps.min():g} to {steps.max():g} s)")
        dt, eta = float(steps.mean()), rows[:, 1]
    else:
        dt = r.number(w, f, "dt", gt=0.0)
        eta = r.array(w["elevation"], f"{f}.elevation").reshape(-1)
        if eta.size < 8:
            r.fail(f"{f}.elevation", f"expected at least 8 samples, got {eta.size}")
    if not np.all(np.isfinite(eta)):
        r.fail(f"{f}.{'file' if 'file' in w else 'elevation'}", "the elevation must be finite numbers")
    return dt, eta - eta.mean()


def _read_table(r, w, f) -> TabulatedSpectrum:
    omega = r.array(r.get(w, f, "omega"), f"{f}.omega").reshape(-1)
    density = r.array(r.get(w, f, "density"), f"{f}.density")
    if omega.size < 3 or omega[0] <= 0 or np.any(np.diff(omega) <= 0):
        r.fail(f"{f}.omega", f"expected at least three frequencies > 0 rad/s, increasing; got {omega.size} starting at "
               f"{omega[0] if omega.size else 'none'}")
    directions = None
    if "directions_deg" in w:
        directions = np.radians(r.array(w["directions_deg"], f"{f}.directions_deg").reshape(-1))
        if directions.size < 3 or np.any(np.diff(directions) <= 0) or directions[-1] - directions[0] >= 2 * np.pi:
            r.fail(f"{f}.directions_deg", f"expected at least three directions, increasing, within one turn; got "
                   f"{np.degrees(directions).round(3).tolist()}")
        if density.shape != (omega.size, directions.size) or np.any(density < 0) or not np.any(density > 0):
            r.fail(f"{f}.density", f"expected rows of S(ω, θ) >= 0, one per frequency ({omega.size}) and one value per "
                   f"direction ({directions.size}), not all zero; got shape {list(density.shape)}")
        if int(w.get("n_directions", 1)) < 2:
            r.fail(f"{f}.n_directions", "a directional table spreads its energy over directions: give n_directions > 1")
        return TabulatedSpectrum(omega, density, directions)
    density = density.reshape(-1)
    if density.shape != omega.shape or np.any(density < 0) or not np.any(density > 0):
        r.fail(f"{f}.density", f"expected one density >= 0 m² s/rad per frequency ({omega.size}), not all zero; got "
               f"{density.size}")
    return TabulatedSpectrum(omega, density)


def read_water(reader, cfg):
    """``[water]``: ``density`` (kg/m³) of the sea, the one value every element that touches water
    takes unless its own table gives it (then the two must agree).  Without it, the density of the
    hydrodynamic data, else each element's default."""
    if "water" not in cfg:
        return None
    r, f = reader.r, "water"
    w = r.table(cfg["water"], f, tuple(WATER_KEYS))
    return r.number(w, f, "density", gt=0.0)
