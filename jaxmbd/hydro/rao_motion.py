"""A vessel given by its displacement RAOs: its six motions follow the realised sea, and everything hung on it
(crane, rope, load) is simulated as usual.

The RAOs X(ω, β) (surge, sway, heave in m/m; roll, pitch, yaw in rad/m) are per unit wave amplitude at the
table's reference point, with the motions η(t) = Re Σ_j A_j X(ω_j, β_j) e^{i k_j x'_0} e^{−iω_j t} for the
waves ζ = Re Σ_j A_j e^{i(k_j x' − ω_j t)} (x' along each component's direction, from the table's phase origin
``origin``): the convention of the excitation of :class:`~jaxmbd.hydro.body.HydroBody` and of
:func:`~jaxmbd.hydro.frequency_domain.rao`, so RAOs solved by jaxmbd, read from WAMIT's ``.4`` (conjugated:
WAMIT's time factor is e^{+iωt}) or from a plain table all mean the same motion.  The rotations are the
reference point's roll, pitch and yaw (z-y-x), as a hydrodynamic body's ``eta``.

**Range.**  The motion is linear in the waves and prescribed: the loads of what hangs on the vessel do not move
it (a lift whose load is a small part of the displacement; the run's ``load_ratio`` is the hung mass over the
vessel's, and a run says when it is above 2 %, :attr:`RaoMotion.LOAD_RATIO`).  Frequencies and headings outside
the table are refused when the system is built, not clamped.
"""

from __future__ import annotations

import csv
import math
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
from .waves import complex_amplitudes, ramp

DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
ETA_UNITS = "m (surge sway heave), rad (roll pitch yaw)"


class RaoTable(eqx.Module):
    """Displacement RAOs of one body, complex (n_omega, n_heading, 6), at ``omega`` (rad/s, increasing) and
    ``heading`` (rad, increasing; a table over the whole circle wraps), linear between the rows."""

    omega: jax.Array
    heading: jax.Array
    re: jax.Array
    im: jax.Array
    source: str = eqx.field(static=True, default="RAO table")
    full_circle: bool = eqx.field(static=True, default=False)
    """Whether the headings go round: the first heading + 2π follows the last one step on (set by :meth:`of`)."""

    def __check_init__(self):
        w, b = np.asarray(self.omega), np.asarray(self.heading)
        if w.ndim != 1 or w.size < 2 or np.any(np.diff(w) <= 0) or w[0] <= 0:
            raise InputError(f"{self.source}: expected at least two frequencies > 0, increasing; got {w.size}")
        if b.ndim != 1 or b.size < 1 or np.any(np.diff(b) <= 0):
            raise InputError(f"{self.source}: expected headings increasing; got {np.degrees(b).round(3).tolist()}")
        if np.shape(self.re) != (w.size, b.size, 6) or np.shape(self.im) != np.shape(self.re):
            raise InputError(f"{self.source}: expected RAOs of shape ({w.size}, {b.size}, 6), got {np.shape(self.re)}")

    @classmethod
    def of(cls, omega, heading, rao, source="RAO table"):
        rao, b = np.asarray(rao, complex), np.asarray(heading, float)
        return cls(jnp.asarray(omega, float), jnp.asarray(b), jnp.asarray(rao.real), jnp.asarray(rao.imag), source, goes_round(b))

    def check(self, omega_min: float, omega_max: float, headings) -> None:
        """A one-line :class:`InputError` where the sea's band or headings leave the table."""
        check_table(self.source, self.omega, self.heading, self.full_circle, omega_min, omega_max, headings)

    def check_headings(self, headings) -> None:
        w = float(np.asarray(self.omega)[0])
        check_table(self.source, self.omega, self.heading, self.full_circle, w, w, headings)

    def at(self, omega, beta):
        """X at each (ω_j, β_j), complex (n, 6): bilinear in ω and β."""
        return bilinear(self.omega, self.heading, self.re + 1j * self.im, omega, beta, self.full_circle)

    @classmethod
    def from_hydro(cls, hydro, mass=None, *, body: int = 0, damping_ext=None, stiffness_ext=None, omega=None):
        """The RAOs of hydrodynamic body ``body`` of ``hydro`` solved in the frequency domain
        (:func:`~jaxmbd.hydro.frequency_domain.rao`) at every heading of its table."""
        from .frequency_domain import rao

        w = np.asarray(hydro.omega if omega is None else omega, float)
        cols = [np.asarray(rao(hydro, mass, wave_direction=float(b), damping_ext=damping_ext, stiffness_ext=stiffness_ext,
                               omega=None if omega is None else w))[:, 6 * body:6 * body + 6]
                for b in np.asarray(hydro.wave_direction)]
        return cls.of(w, np.asarray(hydro.wave_direction, float), np.stack(cols, axis=1), f"RAOs of {hydro.source}")


def bilinear(w, b, X, omega, beta, full_circle: bool):
    """X (n_omega, n_heading, ...) at each (ω_j, β_j), linear in ω and in β between a table's rows, the headings
    wrapped round the circle where the table goes round (``full_circle``)."""
    if full_circle:  # the first column again one turn on, for headings between the last and the first
        b = jnp.concatenate([b, b[:1] + 2 * jnp.pi])
        X = jnp.concatenate([X, X[:, :1]], axis=1)
    omega, beta = jnp.asarray(omega), jnp.asarray(beta)
    beta = b[0] + jnp.mod(beta - b[0], 2 * jnp.pi)
    i = jnp.clip(jnp.searchsorted(w, omega) - 1, 0, w.shape[0] - 2)
    s = jnp.clip((omega - w[i]) / (w[i + 1] - w[i]), 0.0, 1.0)[:, None]
    if b.shape[0] == 1:
        return (1 - s) * X[i, 0] + s * X[i + 1, 0]
    j = jnp.clip(jnp.searchsorted(b, beta) - 1, 0, b.shape[0] - 2)
    u = jnp.clip((beta - b[j]) / (b[j + 1] - b[j]), 0.0, 1.0)[:, None]
    return (1 - s) * (1 - u) * X[i, j] + s * (1 - u) * X[i + 1, j] + (1 - s) * u * X[i, j + 1] + s * u * X[i + 1, j + 1]


def sea_band(waves):
    """(lowest ω, highest ω, every heading) a sea may draw, for checking it against a table: an irregular sea's band and
    its directions, a regular wave's frequency, a record's band; None without waves."""
    if waves is None:
        return None
    if getattr(waves, "spectrum", None) is not None:
        return waves.omega_min, waves.omega_max, waves.headings(waves.mean_direction)
    regular = getattr(waves, "regular", None)
    if regular is None:
        return None
    if hasattr(regular, "period"):
        w = 2 * math.pi / float(regular.period)
        return w, w, [float(regular.direction)]
    return float(np.min(np.asarray(regular.components().omega))), regular.omega, [float(regular.direction)]  # a record


def goes_round(heading) -> bool:
    """Whether increasing headings (rad) go round the circle: the first + 2π follows the last one step on."""
    b = np.asarray(heading, float)
    return b.size > 1 and bool(b[-1] - b[0] >= 2 * np.pi - 1.5 * float(np.min(np.diff(b))) - 1e-9)


def check_table(source, w, b, full_circle, omega_min, omega_max, headings, what="RAOs") -> None:
    """A one-line :class:`InputError` where a sea's band [omega_min, omega_max] or its ``headings`` leave a table's
    frequencies ``w`` or headings ``b``."""
    w, b = np.asarray(w), np.asarray(b)
    if omega_min < w[0] * (1 - 1e-9) or omega_max > w[-1] * (1 + 1e-9):
        raise InputError(f"{source}: the sea's frequencies {omega_min:.4g}-{omega_max:.4g} rad/s leave the {what}' "
                         f"{w[0]:.4g}-{w[-1]:.4g} rad/s (narrow [waves] omega_min, omega_max, or give {what} over the band)")
    if full_circle:
        return
    d = np.atleast_1d(np.asarray(headings, float))
    wrapped = b[0] + np.mod(d - b[0], 2 * np.pi)
    out = wrapped[(wrapped > b[-1] + 1e-9)]
    if out.size:
        raise InputError(f"{source}: wave heading {np.degrees(out[0]):.4g} deg lies outside the {what}' headings "
                         f"{np.degrees(b[0]):.4g}-{np.degrees(b[-1]):.4g} deg")


def numeric_rows(path, columns: str):
    """The rows of a WAMIT numeric output file, (n, len(columns.split())) floats; ``columns`` names them for the
    one-line error of a row of another length."""
    path, width = Path(path), len(columns.split())
    rows, n = [], 0
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != width:
                    raise InputError(f"{path}: line {n}: expected {width} columns ({columns}), got {len(parts)}")
                rows.append([float(x) for x in parts])
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError:
        raise InputError(f"{path}: line {n}: expected numbers") from None
    return np.asarray(rows).reshape(-1, width)


def csv_columns(path, columns, described: str):
    """(ω rad/s, heading rad, the ``columns`` as floats (n, len(columns))) of a CSV table with a header, one row per
    frequency (``omega`` in rad/s or ``period`` in s) and heading (``heading_deg``); ``described``: its columns in
    words, for the one-line error of a missing one."""
    path = Path(path)
    try:
        with open(path, newline="") as f:
            table = list(csv.DictReader(f))
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not table:
        raise InputError(f"{path}: no rows")
    names = set(table[0])
    missing = [c for c in ["heading_deg", *columns] if c not in names] + ([] if names & {"omega", "period"} else ["omega or period"])
    if missing:
        raise InputError(f"{path}: missing column {missing[0]!r} (columns: {described})")
    try:
        w = np.array([float(r["omega"]) if "omega" in r else 2 * np.pi / float(r["period"]) for r in table])
        beta = np.radians([float(r["heading_deg"]) for r in table])
        values = np.array([[float(r[c]) for c in columns] for r in table])
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{path}: expected numbers in every column") from None
    return w, beta, values


def grid(path, omega, beta, mode, value, modes, what: str):
    """(frequencies, headings, values (n_omega, n_heading, len(modes))) of rows of (ω, β, mode index, value), each
    (frequency, heading, mode) given: else one line naming the first missing ``what`` (e.g. "RAO")."""
    ws, bs = np.unique(np.round(omega, 10)), np.unique(np.round(beta, 10))
    X = np.full((ws.size, bs.size, len(modes)), np.nan, dtype=np.result_type(value, float))
    X[np.searchsorted(ws, np.round(omega, 10)), np.searchsorted(bs, np.round(beta, 10)), mode] = value
    if np.isnan(X.real).any():
        k = np.argwhere(np.isnan(X.real))[0]
        raise InputError(f"{path}: no {modes[k[2]]} {what} at {ws[k[0]]:.4g} rad/s, heading {np.degrees(bs[k[1]]):.4g} deg "
                         "(every frequency needs every heading and mode)")
    return ws, bs, X


def read_wamit_rao(path, length: float = 1.0) -> RaoTable:
    """WAMIT's motion RAOs (``.4``: PER BETA I |ξ| arg ξ Re ξ Im ξ per row, rotations over ULEN ``length``;
    periods in s, headings in degrees): conjugated to jaxmbd's e^{−iωt}, the rows of infinite and zero period left
    out.  Every (period, heading) must give the six modes."""
    a = numeric_rows(path, "PER BETA I |xi| phase Re Im")
    a = a[a[:, 0] > 0]  # PER = −1 (ω = 0) and 0 (ω = ∞)
    mode = a[:, 2].astype(int)
    if np.any((mode < 1) | (mode > 6)):
        raise InputError(f"{path}: modes must be 1 to 6 (surge to yaw)")
    X = (a[:, 5] - 1j * a[:, 6]) / np.where(mode > 3, length, 1.0)
    return RaoTable.of(*grid(path, 2 * np.pi / a[:, 0], np.radians(a[:, 1]), mode - 1, X, DOFS, "RAO"), str(path))


def read_rao_csv(path) -> RaoTable:
    """A plain table, one row per frequency and heading: ``omega`` (rad/s) or ``period`` (s), ``heading_deg``, and
    per mode ``<mode>_amp`` (m/m; roll, pitch, yaw in deg/m) and ``<mode>_phase_deg``, the phase lag of the motion
    behind the wave crest at the phase origin: η = amp · A cos(ωt − phase) for ζ = A cos(ωt) there."""
    columns = [f"{d}_{k}" for d in DOFS for k in ("amp", "phase_deg")]
    w, beta, v = csv_columns(path, columns, "omega or period, heading_deg, <mode>_amp, <mode>_phase_deg for surge sway "
                                            "heave roll pitch yaw")
    amp, phase = v[:, 0::2].copy(), np.radians(v[:, 1::2])
    amp[:, 3:] = np.radians(amp[:, 3:])  # deg/m to rad/m
    X = amp * np.exp(1j * phase)
    n = len(w)
    ws, bs, T = grid(path, np.repeat(w, 6), np.repeat(beta, 6), np.tile(np.arange(6), n), X.ravel(), DOFS, "RAO")
    return RaoTable.of(ws, bs, T, str(path))


def write_rao_csv(table: RaoTable, path) -> Path:
    """``table`` as the plain CSV :func:`read_rao_csv` reads (omega, heading_deg, amplitudes with rotations in deg/m,
    phase lags in degrees; twelve significant digits): RAOs solved by jaxmbd to hand on or to ship beside a system
    file."""
    X = np.asarray(table.re) + 1j * np.asarray(table.im)
    scale = np.array([1.0, 1.0, 1.0] + [180.0 / np.pi] * 3)
    head = ["omega", "heading_deg"] + [f"{d}_{k}" for d in DOFS for k in ("amp", "phase_deg")]
    lines = [",".join(head)]
    for i, w in enumerate(np.asarray(table.omega)):
        for j, b in enumerate(np.asarray(table.heading)):
            x = X[i, j]
            row = [w, np.degrees(b)] + [v for m in range(6) for v in (abs(x[m]) * scale[m], np.degrees(np.angle(x[m])))]
            lines.append(",".join(f"{v:.12g}" for v in row))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def read_rao(path, length: float = 1.0) -> RaoTable:
    """A WAMIT ``.4`` file or a CSV table (:func:`read_wamit_rao`, :func:`read_rao_csv`) by its suffix."""
    return read_rao_csv(path) if Path(path).suffix.lower() == ".csv" else read_wamit_rao(path, length)


def _rpy_to_quat(rpy):
    """[w, x, y, z] of R = Rz(ψ) Ry(θ) Rx(φ)."""
    cr, sr = jnp.cos(0.5 * rpy[0]), jnp.sin(0.5 * rpy[0])
    cp, sp = jnp.cos(0.5 * rpy[1]), jnp.sin(0.5 * rpy[1])
    cy, sy = jnp.cos(0.5 * rpy[2]), jnp.sin(0.5 * rpy[2])
    return jnp.stack([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])


class RaoMotion(ForceElement):
    """The body ``body`` moves as its displacement RAOs ``rao`` say in the run's waves (:mod:`jaxmbd.hydro.rao_motion`):
    a prescribed motion, not a load.  ``point``: the RAOs' reference point in the body's frame; ``origin``: the
    table's phase origin in the world (a WAMIT or Capytaine run's global origin); the motion fades in over
    ``ramp_time`` as the waves' excitation does.  The body is the root of its tree, on a free joint to the world
    whose placement is level (the vessel at rest).

    Outputs: ``eta`` (6,) the reference point's displacement and roll, pitch, yaw; ``load_ratio`` the mass of
    every other body over the vessel's (its body and those welded to it)."""

    kind: ClassVar[str] = "rao_motion"

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    rao: RaoTable
    point: jax.Array = eqx.field(default_factory=lambda: jnp.zeros(3))
    origin: jax.Array = eqx.field(default_factory=lambda: jnp.zeros(3))
    ramp_time: float = eqx.field(static=True, default=0.0)

    drives: ClassVar[bool] = True
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ("`rao_motion`", "the mass hung on the vessel at most 2 % of the vessel's (`load_ratio`)",
         "what hangs on the vessel would move it, which prescribed RAOs leave out: model the hull (`[[hydro]]`)"),
    )
    LOAD_RATIO: ClassVar[float] = 0.02
    """The largest hung mass over the vessel's: a 410 t barge with a pendulum of 0.5, 2 and 4.9 % of its mass, on its
    RAOs and as a free hydrodynamic body, pitched within 0.7, 1.5 and 5.3 % of each other (standard deviation in one
    irregular sea) and the pendulum swung within 1.3, 4.3 and 7.7 %."""

    def valid_ranges(self, model) -> tuple:
        from ..validity import ValidRange

        return (ValidRange("load_ratio", "mass hung on the vessel over the vessel's", "a prescribed motion (the loads of "
                           "what hangs on the vessel do not move it)", f"<= {self.LOAD_RATIO:g}", upper=self.LOAD_RATIO),)

    def prepare(self, waves):
        """c_j X(ω_j, β_j) (n_components, 6) as real and imaginary parts, and ω_j."""
        if waves is None:
            return None
        X = self.rao.at(waves.omega, waves.direction)
        shift = waves.wavenumber * (self.origin[0] * jnp.cos(waves.direction) + self.origin[1] * jnp.sin(waves.direction))
        c = (complex_amplitudes(waves) * jnp.exp(1j * shift))[:, None] * X
        return jnp.real(c), jnp.imag(c), waves.omega.astype(self.rao.re.dtype)

    def motion(self, t, prepared, dtype):
        """(η, η̇, η̈) (6,) each at time ``t``, the fade-in included."""
        zero = jnp.zeros(6, dtype)
        if prepared is None:
            return zero, zero, zero
        re, im, omega = prepared
        c, s = jnp.cos(omega * t), jnp.sin(omega * t)
        eta = c @ re + s @ im
        deta = (omega * c) @ im - (omega * s) @ re
        ddeta = -((omega**2 * c) @ re + (omega**2 * s) @ im)
        if self.ramp_time > 0:
            T = self.ramp_time
            x = jnp.clip(t / T, 0.0, 1.0)
            inside = jnp.asarray(t < T, dtype)
            r = ramp(t, T)
            dr = inside * 0.5 * jnp.pi / T * jnp.sin(jnp.pi * x)
            ddr = inside * 0.5 * (jnp.pi / T) ** 2 * jnp.cos(jnp.pi * x)
            eta, deta, ddeta = r * eta, r * deta + dr * eta, r * ddeta + 2 * dr * deta + ddr * eta
        return eta.astype(dtype), deta.astype(dtype), ddeta.astype(dtype)

    def joint_state(self, model, t, prepared):
        """(q (7,), v (6,), v̇ (6,)) of the body's free joint at time ``t``."""
        r = self.point.astype(model.placement_p.dtype)
        eta, deta, ddeta = self.motion(t, prepared, r.dtype)

        def pose(e):
            R = spatial.rpy_to_matrix(e[3:])
            return jnp.concatenate([e[:3] + r - R @ r, _rpy_to_quat(e[3:])]), R

        def twist(e, de):
            R, dR = jax.jvp(spatial.rpy_to_matrix, (e[3:],), (de[3:],))
            W = dR @ R.T
            w = jnp.stack([W[2, 1], W[0, 2], W[1, 0]])
            dp = de[:3] - spatial.cross(w, R @ r)  # the body frame's origin: the reference point less ω × (R r)
            return jnp.concatenate([R.T @ dp, R.T @ w])

        q = pose(eta)[0]
        v, a = jax.jvp(twist, (eta, deta), (deta, ddeta))
        return q, v, a

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution()

    def outputs(self, ctx: Context, z) -> dict:
        prepared = ctx.prepared.get(self.name) if ctx.prepared else None
        eta = self.motion(ctx.t, prepared, ctx.p.dtype)[0]
        m = ctx.model.mass
        own = jnp.asarray(self.vessel_bodies(ctx.model))
        vessel = jnp.sum(m[own])
        return {"eta": eta, "load_ratio": (jnp.sum(m) - vessel) / vessel}

    def vessel_bodies(self, model) -> list[int]:
        """The vessel's bodies: its own and those welded to it (fixed joints all the way), whose mass is the vessel's."""
        from ..joints import Fixed

        group = [model.index(self.body)]
        for k, parent in enumerate(model.parents):  # parents come first
            if parent in group and isinstance(model.joints[k], Fixed):
                group.append(k)
        return group

    def output_units(self, model) -> dict:
        return {"eta": ETA_UNITS, "load_ratio": "1"}

    def check(self, model, waves) -> None:
        """The body on a level free joint to the world, the sea within the table (one-line errors)."""
        from ..joints import Free

        i = model.index(self.body)
        if not isinstance(model.joints[i], Free) or model.parents[i] != -1:
            raise InputError(f"rao_motion {self.name!r}: body {self.body!r} must be on a free joint to the world (the vessel "
                             "the RAOs move)")
        if np.max(np.abs(np.asarray(model.placement_R[i]) - np.eye(3))) > 1e-9:
            raise InputError(f"rao_motion {self.name!r}: body {self.body!r}'s joint frame is rotated; the RAOs' vessel rests "
                             "level (give its placement without rpy)")
        band = sea_band(waves)
        if band is not None:
            self.rao.check(*band)


class RaoMotionFile(eqx.Module):
    """A vessel moved by its displacement RAOs (a WAMIT `.4` file or a CSV table): its six motions follow the
    realised sea and everything hung on it is simulated; the vessel's own loads are not computed (a prescribed
    motion: what hangs on it does not move it).  Outputs: `eta` (the reference point's displacements, m, and
    roll, pitch, yaw, rad), `load_ratio` (mass hung on the vessel over its own)."""

    name: str = setting("string", doc="element name, the prefix of its outputs (`vessel/eta`)")
    body: str = setting("body", doc="the vessel: a root body on a free joint to the world, level at rest")
    file: str = setting("path", doc="WAMIT `.4` (periods, headings in degrees) or `.csv` (omega or period, heading_deg, "
                                    "<mode>_amp and <mode>_phase_deg, rotations in deg/m, phase lag behind the crest)")
    wamit_length: jax.Array = parameter(unit="m", bound=(">", 0.0), default=1.0, doc="WAMIT ULEN (a `.4` file's rotations)")
    point: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="the RAOs' reference point, body frame")
    origin: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="the RAOs' phase origin in the world")
    ramp_time: float = setting("number", default=0.0, unit="s", doc="the motion fades in over this time, as the waves' excitation")

    @classmethod
    def file_rules(cls, values, given, fail):
        if "wamit_length" in given and str(values.get("file", "")).lower().endswith(".csv"):
            fail("wamit_length", "scales a WAMIT .4 file's rotations; a CSV table's are in deg/m already")
        if values.get("ramp_time", 0.0) < 0:
            fail("ramp_time", f"must be >= 0, got {values['ramp_time']}")
        if "file" in values:
            try:
                read_rao(values["file"], float(values.get("wamit_length", 1.0)))
            except InputError as exc:
                fail("file", str(exc))

    def build(self) -> RaoMotion:
        return RaoMotion(name=self.name, body=self.body, rao=read_rao(self.file, float(self.wamit_length)),
                         point=jnp.asarray(self.point, float), origin=jnp.asarray(self.origin, float), ramp_time=float(self.ramp_time))


RaoMotion.file_form = RaoMotionFile
