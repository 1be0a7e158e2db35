"""Mean and slow wave drift on a floating body, from its mean drift coefficients by Newman's approximation.

A body's mean drift coefficients T(ω, β) (surge and sway force in N/m², yaw moment in N m/m², per squared wave
amplitude, in the body's axes for waves travelling towards β relative to its x axis) are WAMIT's ``.8``
(momentum) or ``.9`` (pressure integration) output, a plain table, or any other tool's.  In the realised sea
(components a_j, ω_j, β_j, φ_j) the difference-frequency force is taken by Newman's approximation, the
quadratic transfer function T_jk ≈ (T_jj + T_kk)/2 off its diagonal:

    F(t) = Re[ Σ_j T_j A_j e^{−iω_j t} · conj(Σ_k A_k e^{−iω_k t}) ],   A_j = a_j e^{−iφ_j},

whose mean is Σ_j a_j² T_j (the mean drift) and whose slow part oscillates at the differences ω_j − ω_k (the slow
drift that excites a mooring's or a DP system's periods of one to three minutes); no sum-frequency part.

**Range.**  Newman's approximation holds where the body's natural periods in surge, sway and yaw are well above
the wave periods (a moored or DP vessel's horizontal modes): the coefficients off the diagonal at small
difference frequencies are near the diagonal's.  The coefficients are taken at each component's heading relative
to the body at rest; the run says when the body's yaw leaves ±15° of it.  Components of different directions
interact only through the envelope (no directional cross terms).

**Wave-drift damping** (``damping``, off by default): the body's slow horizontal velocity through the water w (at
the reference point, body axes: its own velocity less the sea's current) changes each coefficient by Aranha's
formula (Aranha 1994, "A formula for 'wave damping' in the drift of a floating body"), to first order in w:

    T_j(w) = (1 − 4 (ω_j/g) w·k̂_j) T_j(ω_j, β_j + (2ω_j/g) (w × k̂_j)_z),

k̂_j = (cos β_j, sin β_j) the wave's direction of travel.  The coefficients are read at the waves' frequency in the
water (the table's zero-speed data at the wave's own wavelength) and at the heading of the waves' energy as the
moving body meets it (group velocity g/(2ω) less w).  Reading them instead at the frequency the moving body meets,
ω − k w·k̂, as Clark, Malenica and Molin's head-sea form B = (ω/g)(4F + ω ∂F/∂ω) does, adds −(ω²/g)(w·k̂) ∂T/∂ω:
where the coefficients vary with frequency (a body near a resonance, or small against the waves: 1.1 to 1.4 times
the 4F term for a cylinder at ka 0.3-0.5) the two differ by up to a factor of two; which one Aranha's analysis
gives was not settled here, and this element leaves the term out.  Its checks: a wall receding from the waves at speed V feels
(1 − 4ωV/g) of its drift (the reflected wave's amplitude from the conservation of wave action in the wall's frame,
the momentum flux through the moving wall), and a wall sliding along its own length feels no change.  A body
moving with the waves feels less drift, against them more: a damping of the slow drift, largest for moored vessels
in long-crested seas.  Deep water (the group velocity above); the yaw moment is scaled as the forces (the usual
extension: Aranha's formula is for the forces); the yaw rate's effect is not modelled; the waves are not
Doppler-shifted by the current (their frequencies are those relative to the water).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..errors import InputError
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from .rao_motion import bilinear, check_table, csv_columns, goes_round, grid, numeric_rows, sea_band
from .waves import complex_amplitudes, ramp, wavenumber

DRIFT_DOFS = ("surge", "sway", "yaw")
DRIFT_UNITS = "N (surge sway), N m (yaw)"
YAW_RANGE_DEG = 15.0


class DriftTable(eqx.Module):
    """Mean drift coefficients (n_omega, n_heading, 3): surge and sway force (N/m²) and yaw moment (N m/m²) per
    squared wave amplitude in the body's axes, at ``omega`` (rad/s, increasing) and ``heading`` (rad, increasing;
    a table over the whole circle wraps), linear between the rows."""

    omega: jax.Array
    heading: jax.Array
    values: jax.Array
    source: str = eqx.field(static=True, default="drift table")
    full_circle: bool = eqx.field(static=True, default=False)

    @classmethod
    def of(cls, omega, heading, values, source="drift table"):
        w, b, v = np.asarray(omega, float), np.asarray(heading, float), np.asarray(values, float)
        if w.ndim != 1 or w.size < 2 or np.any(np.diff(w) <= 0) or w[0] <= 0:
            raise InputError(f"{source}: expected at least two frequencies > 0 rad/s, increasing")
        if b.ndim != 1 or b.size < 1 or np.any(np.diff(b) <= 0):
            raise InputError(f"{source}: expected headings increasing; got {np.degrees(b).round(3).tolist()}")
        if v.shape != (w.size, b.size, 3) or not np.all(np.isfinite(v)):
            raise InputError(f"{source}: expected finite coefficients of shape ({w.size}, {b.size}, 3), got {v.shape}")
        return cls(jnp.asarray(w), jnp.asarray(b), jnp.asarray(v), source, goes_round(b))

    def at(self, omega, beta):
        """T at each (ω_j, β_j), (n, 3)."""
        return bilinear(self.omega, self.heading, self.values, omega, beta, self.full_circle)

    def check(self, omega_min: float, omega_max: float, headings) -> None:
        check_table(self.source, self.omega, self.heading, self.full_circle, omega_min, omega_max, headings, "drift coefficients")

    def check_headings(self, headings) -> None:
        w = float(np.asarray(self.omega)[0])
        self.check(w, w, headings)


def read_wamit_drift(path, rho: float = 1025.0, g: float = 9.81, length: float = 1.0) -> DriftTable:
    """WAMIT's mean drift (``.8``, momentum conservation, or ``.9``, pressure integration; rows PER BETA1 BETA2 I
    |F| arg F Re F Im F, periods in s, headings in degrees), its diagonal BETA1 = BETA2 in surge (1), sway (2) and
    yaw (6), made dimensional by ρ g L (forces) and ρ g L² (the moment) with ULEN ``length``; the rows of zero and
    infinite period left out."""
    a = numeric_rows(path, "PER BETA1 BETA2 I |F| phase Re Im")
    a = a[(a[:, 0] > 0) & (a[:, 1] == a[:, 2]) & np.isin(a[:, 3], (1, 2, 6))]
    mode = np.searchsorted([1, 2, 6], a[:, 3].astype(int))
    scale = rho * g * np.where(mode == 2, length**2, length)
    return DriftTable.of(*grid(path, 2 * np.pi / a[:, 0], np.radians(a[:, 1]), mode, a[:, 6] * scale, DRIFT_DOFS,
                               "drift coefficient"), str(path))


def read_drift_csv(path) -> DriftTable:
    """A plain table, one row per frequency and heading: ``omega`` (rad/s) or ``period`` (s), ``heading_deg``,
    ``surge``, ``sway`` (N/m²) and ``yaw`` (N m/m²), the mean drift per squared wave amplitude in the body's axes."""
    w, beta, v = csv_columns(path, list(DRIFT_DOFS), "omega or period, heading_deg, surge, sway, yaw")
    n = len(w)
    ws, bs, T = grid(path, np.repeat(w, 3), np.repeat(beta, 3), np.tile(np.arange(3), n), v.ravel(), DRIFT_DOFS,
                     "drift coefficient")
    return DriftTable.of(ws, bs, T, str(path))


def write_drift_csv(table: DriftTable, path) -> Path:
    """``table`` as the CSV :func:`read_drift_csv` reads (omega, heading_deg, surge, sway, yaw; twelve digits)."""
    v = np.asarray(table.values)
    lines = ["omega,heading_deg,surge,sway,yaw"]
    for i, w in enumerate(np.asarray(table.omega)):
        for j, b in enumerate(np.asarray(table.heading)):
            lines.append(",".join(f"{x:.12g}" for x in (w, np.degrees(b), *v[i, j])))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def mirrored(table: DriftTable) -> DriftTable:
    """A table over 0-180° of a hull symmetric about its xz plane, extended to the whole circle: at 360° − β the
    surge drift is β's, the sway and yaw drift β's with their sign turned."""
    b = np.asarray(table.heading)
    v = np.asarray(table.values)
    inside = (b > 1e-9) & (b < np.pi - 1e-9)
    b2 = np.concatenate([b, 2 * np.pi - b[inside][::-1]])
    v2 = np.concatenate([v, v[:, inside][:, ::-1] * np.array([1.0, -1.0, -1.0])], axis=1)
    return DriftTable.of(np.asarray(table.omega), b2, v2, table.source + " (mirrored about xz)")


def read_drift(path, rho=1025.0, g=9.81, length=1.0) -> DriftTable:
    """A WAMIT ``.8``/``.9`` file or a CSV table (:func:`read_wamit_drift`, :func:`read_drift_csv`) by its suffix."""
    return read_drift_csv(path) if Path(path).suffix.lower() == ".csv" else read_wamit_drift(path, rho, g, length)


class WaveDrift(ForceElement):
    """The mean and slow wave drift on ``body`` from its mean drift coefficients ``table``
    (:mod:`jaxmbd.hydro.drift`: Newman's approximation), in the body's axes at ``point`` (the coefficients'
    reference, where the yaw moment is taken), fading in with the waves over ``ramp_time`` (as their square); ``origin``:
    where the body rests in the world, the waves' phases of its envelope (the mean does not depend on it).  The body
    rests with no yaw (the coefficients' headings are relative to it), and the sea stays within the table: both are
    checked when the system is built.
    ``damping``: wave-drift damping, the coefficients changed by the body's slow velocity through the water (Aranha's
    formula; see the module).
    Outputs: ``force`` (3,) the surge and sway force and the yaw moment; ``yaw`` the body's heading from rest (rad),
    whose range is ±15°."""

    kind: ClassVar[str] = "wave_drift"
    validity_doc: ClassVar[tuple] = (
        ("`wave_drift`", f"the body's yaw within ±{YAW_RANGE_DEG:g}° of its rest (the coefficients are taken at each wave's "
         "heading relative to the body at rest); natural periods well above the wave periods (Newman's approximation)",
         "the coefficients belong to another heading; the slow drift's off-diagonal terms are not the diagonal's"),
    )

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    table: DriftTable
    point: jax.Array = eqx.field(default_factory=lambda: jnp.zeros(3))
    origin: jax.Array = eqx.field(default_factory=lambda: jnp.zeros(3))
    ramp_time: float = eqx.field(static=True, default=0.0)
    damping: bool = eqx.field(static=True, default=False)

    def prepare(self, waves):
        """(the coefficients times A_j, then A_j, as real and imaginary parts (n, 4), or with ``damping`` (n, 10):
        T_j A_j, the changes of T_j per unit velocity through the water along the body's x and y (Aranha, first
        order) times A_j, A_j; ω_j)."""
        if waves is None:
            return None
        T = self.table.at(waves.omega, waves.direction).astype(self.table.values.dtype)
        # the waves' phases at the body (its place in the world at rest): the envelope in step with the first-order loads
        A = complex_amplitudes(waves) * jnp.exp(1j * waves.wavenumber * (self.origin[0] * jnp.cos(waves.direction)
                                                                          + self.origin[1] * jnp.sin(waves.direction)))
        columns = [T] + (list(self.aranha(waves.omega, waves.wavenumber, waves.direction)) if self.damping else [])
        c = jnp.concatenate([x * A[:, None] for x in columns] + [A[:, None]], axis=1)
        return jnp.real(c), jnp.imag(c), waves.omega.astype(T.dtype)

    def aranha(self, omega, wavenumber, beta):
        """(∂T/∂w_x, ∂T/∂w_y), each (n, 3): Aranha's change of the coefficients per unit velocity of the body through
        the water along its x and y axes, at the components (ω_j, k_j, β_j); ω/g taken as k/ω (deep water), ∂T/∂β by
        central differences over half the table's finest heading step (the slope of its linear interpolation),
        one-sided at the ends of a table that does not go round the circle (nil for a table of one heading)."""
        T = self.table.at(omega, beta)
        b = self.table.heading  # an array leaf: traced inside a run's program
        h = 0.5 * jnp.min(jnp.diff(b)) if b.shape[0] > 1 else np.radians(0.5)
        lo, hi = beta - h, beta + h
        if not self.table.full_circle:  # one-sided at the table's ends (a table that does not go round: no wrap)
            lo, hi = jnp.maximum(lo, b[0]), jnp.minimum(hi, b[-1])
        width = hi - lo
        dT = jnp.where(width[:, None] > 0, (self.table.at(omega, hi) - self.table.at(omega, lo)) / jnp.where(width > 0, width, 1.0)[:, None], 0.0)
        r = (wavenumber / omega)[:, None]  # ω/g in deep water
        c, s = jnp.cos(beta)[:, None], jnp.sin(beta)[:, None]
        return -4 * r * c * T + 2 * r * s * dT, -4 * r * s * T - 2 * r * c * dT

    def drift(self, t, prepared, dtype, w=None):
        """(surge, sway, yaw) at time t: Re(Z_T conj(Z)), Z = Σ A_j e^{−iω_j t}; with ``damping``, Z_T + w_x Z_X + w_y Z_Y
        for the body's horizontal velocity through the water ``w`` (body axes)."""
        if prepared is None:
            return jnp.zeros(3, dtype)
        re, im, omega = prepared
        c, s = jnp.cos(omega * t), jnp.sin(omega * t)
        zr, zi = c @ re + s @ im, c @ im - s @ re  # Σ (re + i im)(cos − i sin)
        if self.damping:
            zr = zr[:3] + w[0] * zr[3:6] + w[1] * zr[6:9], zr[9]
            zi = zi[:3] + w[0] * zi[3:6] + w[1] * zi[6:9], zi[9]
            f = zr[0] * zr[1] + zi[0] * zi[1]
        else:
            f = zr[:3] * zr[3] + zi[:3] * zi[3]
        if self.ramp_time > 0:
            f = f * ramp(t, self.ramp_time) ** 2
        return f.astype(dtype)

    def through_water(self, ctx: Context, i):
        """The body's horizontal velocity through the water at ``point`` in its axes (2,): its own less the sea's current."""
        dtype = ctx.p.dtype
        point = jnp.asarray(self.point, dtype)
        v = ctx.point_velocity(i, point)
        if ctx.waves is not None and ctx.waves.current is not None:
            v = v - ctx.waves.current.velocity(ctx.point_position(i, point)[2]).astype(dtype)
        return (ctx.kin.rotation(i).T @ (v * jnp.array([1.0, 1.0, 0.0], dtype)))[:2]

    def _load(self, ctx: Context):
        i = ctx.body_index(self.body)
        w = self.through_water(ctx, i) if self.damping else None
        f = self.drift(ctx.t, ctx.prepared.get(self.name) if ctx.prepared else None, ctx.p.dtype, w)
        return i, f

    def contribution(self, ctx: Context, z) -> Contribution:
        from ..forces.current_load import coefficient_contribution

        i, f = self._load(ctx)
        F = ctx.kin.rotation(i) @ jnp.stack([f[0], f[1], jnp.zeros_like(f[0])])
        return coefficient_contribution(ctx, i, jnp.asarray(self.point, ctx.p.dtype), F, f[2])

    def outputs(self, ctx: Context, z) -> dict:
        i, f = self._load(ctx)
        return {"force": f, "yaw": spatial.matrix_to_rpy(ctx.kin.rotation(i))[2]}

    def output_units(self, model) -> dict:
        return {"force": DRIFT_UNITS, "yaw": "rad"}

    def valid_ranges(self, model) -> tuple:
        from ..validity import ValidRange

        return (ValidRange("yaw", "yaw from rest", "drift coefficients at each wave's heading relative to the body at rest",
                           f"|yaw| <= {YAW_RANGE_DEG:g} deg", upper=float(np.radians(YAW_RANGE_DEG))),)

    def mean_in(self, sea, n: int = 4001) -> np.ndarray:
        """The mean drift (surge N, sway N, yaw N m; body axes at rest) in the irregular sea ``sea`` (a
        :class:`~jaxmbd.hydro.sea.SeaState`), without drawing it: ∫ 2 S(ω) Σ_d w_d T(ω, β_d) dω over its band, the
        directions and weights those of its spreading (bin centres), on ``n`` frequencies; what a realisation's force
        averages to.  With ``damping``, the coefficients are those of the body at rest in the sea's current (Aranha's
        formula with the current past it; deep water, g = 9.81 m/s²)."""
        from .waves import WHOLE_CIRCLE, spreading_weights

        w = np.linspace(sea.omega_min, sea.omega_max, n)
        S = np.asarray(sea.spectrum.density(w))
        mean, m = float(sea.mean_direction), sea.n_directions
        directional = getattr(sea.spectrum, "directions", None) is not None  # a table of S(ω, θ): its own spreading
        if m == 1:
            dirs, weights = np.array([mean]), np.ones((1, 1))
        else:
            width = 2 * np.pi if sea.spreading_kind in WHOLE_CIRCLE or directional else np.pi
            dirs = mean - 0.5 * width + width / m * (np.arange(m) + 0.5)
            weights = (np.asarray(sea.spectrum.direction_weights(jnp.asarray(w), jnp.asarray(dirs))) if directional
                       else np.asarray(spreading_weights(jnp.asarray(dirs), mean, sea.spreading, sea.spreading_kind))[None, :])
        u = self._still_current(sea)
        T = sum(weights[:, k:k + 1] * self._coefficients(w, d, u) for k, d in enumerate(dirs))
        return np.trapezoid(2.0 * S[:, None] * T, w, axis=0)

    def _still_current(self, sea):
        """The body at rest in the sea's current: its velocity through the water (body axes = world at rest), or None
        without ``damping`` or a current."""
        if not self.damping or getattr(sea, "current", None) is None:
            return None
        return -np.asarray(sea.current.velocity(jnp.asarray(min(float(self.origin[2] + self.point[2]), 0.0))))[:2]

    def _coefficients(self, w, beta, u=None):
        """T at frequencies ``w`` (deep water) and one heading, (n, 3); with a velocity through the water ``u``, Aranha's."""
        wj, bj = jnp.asarray(w), jnp.full(np.shape(w), beta)
        T = np.asarray(self.table.at(wj, bj))
        if u is None:
            return T
        dx, dy = self.aranha(wj, wj**2 / 9.81, bj)
        return T + u[0] * np.asarray(dx) + u[1] * np.asarray(dy)

    def check_sea(self, waves, model=None) -> None:
        """The sea within the table, and the body at rest with its axes along the world's (the coefficients' headings
        are relative to it): one line each."""
        band = sea_band(waves)
        if band is not None:
            self.table.check(*band)
            depth = float(getattr(waves, "water_depth", np.inf))
            kh = float(wavenumber(band[0], depth)) * depth if np.isfinite(depth) else np.inf
            if self.damping and kh < np.pi:
                raise InputError(f"wave_drift {self.name!r}: damping (Aranha's formula) is for deep water, kh >= pi; the sea's "
                                 f"longest waves ({band[0]:.4g} rad/s) have kh = {kh:.3g} in {depth:g} m of water")
        if model is not None:
            from ..kinematics import forward_kinematics

            R = np.asarray(forward_kinematics(model, model.neutral())[0][model.index(self.body)])
            if abs(float(np.arctan2(R[1, 0], R[0, 0]))) > 1e-9:
                raise InputError(f"wave_drift {self.name!r}: body {self.body!r} rests at a yaw of {np.degrees(np.arctan2(R[1, 0], R[0, 0])):.4g} "
                                 "deg; its drift coefficients are by heading relative to the body: place it with no yaw and "
                                 "turn the waves instead")


class WaveDriftFile(eqx.Module):
    """Mean and slow wave drift on a body from its mean drift coefficients (WAMIT `.8` or `.9`, or a CSV table of
    surge, sway and yaw per squared wave amplitude), by Newman's approximation: for moored and DP vessels, whose
    horizontal periods are well above the waves'.  Outputs: `force` (surge, sway N; yaw N m, body axes), `yaw`
    (rad, its range ±15°)."""

    name: str = setting("string", doc="element name, the prefix of its outputs (`drift/force`)")
    body: str = setting("body", doc="the floating body")
    file: str = setting("path", doc="WAMIT `.8`/`.9` (periods, headings in degrees, nondimensional) or `.csv` (omega or "
                                    "period, heading_deg, surge, sway in N/m², yaw in N m/m²)")
    wamit_length: jax.Array = parameter(unit="m", bound=(">", 0.0), default=1.0, doc="WAMIT ULEN (a `.8`/`.9` file's scale)")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density (a WAMIT file's scale)")
    g: jax.Array = parameter(unit="m/s²", bound=(">", 0.0), default=9.81, doc="gravity (a WAMIT file's scale)")
    point: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="the coefficients' reference point, body frame")
    origin: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="where the body rests in the world (the waves' "
                                                                                 "phases of its envelope)")
    ramp_time: float = setting("number", default=0.0, unit="s", doc="the drift fades in over this time, as the waves' excitation")
    damping: bool = setting("bool", default=False, doc="wave-drift damping: the coefficients change with the body's slow velocity "
                                                       "through the water (Aranha's formula, deep water)")

    water_density_field: ClassVar[str] = "rho"

    @classmethod
    def file_rules(cls, values, given, fail):
        if str(values.get("file", "")).lower().endswith(".csv"):
            for key in ("wamit_length", "g", "rho"):
                if key in given:
                    fail(key, "scales a WAMIT file; a CSV table is dimensional already")
        if "file" in values:
            try:
                read_drift(values["file"], float(values.get("rho", 1025.0)), float(values.get("g", 9.81)),
                           float(values.get("wamit_length", 1.0)))
            except InputError as exc:
                fail("file", str(exc))

    def build(self) -> WaveDrift:
        table = read_drift(self.file, float(self.rho), float(self.g), float(self.wamit_length))
        return WaveDrift(name=self.name, body=self.body, table=table, point=jnp.asarray(self.point, float),
                         origin=jnp.asarray(self.origin, float), ramp_time=float(self.ramp_time),
                         damping=bool(self.damping))


WaveDrift.file_form = WaveDriftFile
