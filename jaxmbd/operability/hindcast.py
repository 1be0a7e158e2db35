"""A site's wave climate: an hourly hindcast (or buoy record) of significant wave height and period.

Records
-------
One record per hour: the time (on a whole hour, strictly increasing), Hs (m) and the zero-up-crossing
period Tz (s), the spectral peak period Tp (s) or both; a wave direction (degrees, as the file gives it)
is optional.  An hour with no record is a gap: it is absent, never filled, never a zero.
:meth:`Hindcast.hourly_grid` lays the records on the full hourly grid from the first to the last hour
with a ``present`` mask, :meth:`Hindcast.gaps` lists the missing stretches and
:attr:`Hindcast.coverage` is the fraction of hours present.

Periods (DNV-RP-C205, "Environmental conditions and environmental loads", 2010/2019, §3.5.5)
-------------------------------------------------------------------------------------------
For a JONSWAP spectrum of peak enhancement γ the zero-up-crossing and peak periods are related by the fit

    Tz / Tp = 0.6673 + 0.05037 γ − 0.006230 γ² + 0.0003341 γ³,

(γ = 1, Pierson-Moskowitz: Tp = 1.4049 Tz; γ = 3.3: Tp = 1.2859 Tz), within 0.2 % of the ratio of
spectral moments 2π √(m0/m2) / Tp over 1 ≤ γ ≤ 7.  Where no γ is given, DNV's default depends on the sea
state's steepness through s = Tp / √Hs (Tp in s, Hs in m):

    γ = 5 for s ≤ 3.6,   γ = exp(5.75 − 1.15 s) for 3.6 < s < 5,   γ = 1 for s ≥ 5.

With Tz known and Tp not, Tp = Tz / ratio(γ(Hs, Tp)) is a fixed point in Tp, solved per record.

Units: m for Hs, s for periods, degrees for direction, hours for counts of a scatter diagram.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InputError, JaxmbdError

MAX_PERIOD = 40.0  # s: above any plausible wave period
MAX_HS = 30.0  # m: above any measured sea (buoys' largest near 20 m): a missing-value code such as 99 is refused, not a no-go hour
GAMMA_RANGE = (1.0, 7.0)  # the JONSWAP peak enhancements the Tz/Tp fit is checked over
TOLERANCE = 1e-10  # relative, of Tp from Tz with DNV's γ
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T -]\d{2}(:\d{2}(:\d{2})?)?\Z")
_DEFAULTS = {  # field: lower-case name prefixes a column is found by when not named
    "time": ("time", "date"),
    "hs": ("hs", "significant wave height"),
    "tz": ("tz", "zero-up-crossing period", "zero-crossing period"),
    "tp": ("tp", "peak period"),
    "direction": ("dir",),
}
_UNITS = {"hs": "m", "tz": "s", "tp": "s", "direction": "deg"}
_LONG = {"hs": "significant wave height", "tz": "zero-up-crossing period", "tp": "spectral peak period",
         "direction": "wave direction, as given by the source"}


class HindcastError(JaxmbdError, ValueError):
    """A hindcast file or record that cannot be taken; the one-line message names the file, the column or
    row and what was expected."""


# -- periods ---------------------------------------------------------------------------------------


def _ratio(gamma):
    """Tz / Tp of a JONSWAP spectrum, DNV-RP-C205 §3.5.5."""
    g = np.asarray(gamma, np.float64)
    if np.any(~((g >= GAMMA_RANGE[0]) & (g <= GAMMA_RANGE[1]))):
        raise InputError(f"gamma = {gamma!r}: the Tz/Tp fit is for a JONSWAP peak enhancement 1 ≤ γ ≤ 7")
    return 0.6673 + 0.05037 * g - 0.006230 * g**2 + 0.0003341 * g**3


def tp_from_tz(tz, gamma=3.3):
    """Peak period Tp (s) from the zero-up-crossing period Tz (s) of a JONSWAP sea of peak enhancement γ."""
    return (np.asarray(tz, np.float64) / _ratio(gamma))[()]


def tz_from_tp(tp, gamma=3.3):
    """Zero-up-crossing period Tz (s) from the peak period Tp (s); the inverse of :func:`tp_from_tz`."""
    return (np.asarray(tp, np.float64) * _ratio(gamma))[()]


def dnv_gamma(hs, tp):
    """DNV-RP-C205's default JONSWAP γ from Hs (m) and Tp (s): 5, exp(5.75 − 1.15 Tp/√Hs) or 1 (a calm
    sea, Hs = 0, gets 1)."""
    hs, tp = np.asarray(hs, np.float64), np.asarray(tp, np.float64)
    with np.errstate(divide="ignore"):
        s = tp / np.sqrt(hs)
        g = np.where(s <= 3.6, 5.0, np.where(s < 5.0, np.exp(5.75 - 1.15 * np.minimum(s, 5.0)), 1.0))
    return g[()]


def _tp_with_dnv_gamma(hs, tz):
    """Tp with Tz = tz_from_tp(Tp, dnv_gamma(Hs, Tp)), by bisection of the increasing Tp − Tz/ratio(γ(Tp))."""
    lo, hi = tz / _ratio(5.1), tz / _ratio(1.0)  # γ(Tp) is in [1, 5.003]: the root is between
    for _ in range(100):
        if np.all(hi - lo <= TOLERANCE * hi):
            break
        mid = 0.5 * (lo + hi)
        above = mid > tz / _ratio(dnv_gamma(hs, mid))
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    return 0.5 * (lo + hi)


# -- the hindcast ----------------------------------------------------------------------------------


class Gap(NamedTuple):
    """A stretch of missing hours: the first and the last missing hour and how many there are."""

    start: np.datetime64
    end: np.datetime64
    hours: int


@dataclasses.dataclass(frozen=True, eq=False)
class Scatter:
    """Hours per cell of Hs × period: ``counts[i, j]`` records have ``hs_edges[i] ≤ Hs < hs_edges[i+1]`` and
    ``t_edges[j] ≤ T < t_edges[j+1]`` (T the ``period``, "tz" or "tp"); ``outside`` records fall in no cell.
    Hs in m, periods in s, counts in hours; ``month`` is 1..12 or None (all months)."""

    counts: np.ndarray
    hs_edges: np.ndarray
    t_edges: np.ndarray
    period: str
    month: int | None
    outside: int

    @property
    def total(self) -> int:
        """Records counted, inside a cell or outside: the records of the month (or all)."""
        return int(self.counts.sum()) + self.outside

    def to_dataset(self):
        """The counts as an xarray.Dataset on the bin centres, with the edges and units."""
        import xarray as xr

        hs_c, t_c = 0.5 * (self.hs_edges[1:] + self.hs_edges[:-1]), 0.5 * (self.t_edges[1:] + self.t_edges[:-1])
        return xr.Dataset(
            {"counts": (("hs", self.period), self.counts, {"units": "h", "long_name": "hours in the cell"}),
             "hs_edges": ("hs_edge", self.hs_edges, {"units": "m"}),
             f"{self.period}_edges": (f"{self.period}_edge", self.t_edges, {"units": "s"})},
            coords={"hs": ("hs", hs_c, {"units": "m"}), self.period: (self.period, t_c, {"units": "s"})},
            attrs={"outside": self.outside, "month": 0 if self.month is None else self.month})


@dataclasses.dataclass(frozen=True, eq=False)
class Hindcast:
    """Hourly sea states at one site.

    ``time``: datetime64[h], strictly increasing; ``hs`` (m); ``tz`` and ``tp`` (s), either may be None but
    not both; ``direction`` (degrees) or None, stored as the source gives it: the heading of the waves
    relative to the vessel is computed elsewhere; ``source``: the file name.  Arrays are float64 and
    read-only.  A missing hour is a missing record (see :meth:`gaps`).
    """

    time: np.ndarray
    hs: np.ndarray
    tz: np.ndarray | None = None
    tp: np.ndarray | None = None
    direction: np.ndarray | None = None
    source: str = ""

    def __post_init__(self):
        fields = _validated(self.source, self.time, self.hs, self.tz, self.tp, self.direction)
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return self.time.size

    # -- the hourly grid and its gaps

    def hourly_grid(self):
        """(every hour from the first record to the last, boolean ``present`` mask of those with a record)."""
        grid = np.arange(self.time[0], self.time[-1] + np.timedelta64(1, "h"), dtype="datetime64[h]")
        present = np.zeros(grid.size, bool)
        present[(self.time - self.time[0]).astype(np.int64)] = True
        return grid, present

    def gaps(self) -> list[Gap]:
        """The missing stretches between the first and the last record, in order."""
        step = np.diff(self.time).astype(np.int64)
        one = np.timedelta64(1, "h")
        return [Gap(self.time[k] + one, self.time[k + 1] - one, int(step[k] - 1)) for k in np.flatnonzero(step > 1)]

    @property
    def coverage(self) -> float:
        """Fraction of the hours from the first record to the last that have a record."""
        return self.time.size / (int((self.time[-1] - self.time[0]).astype(np.int64)) + 1)

    # -- periods

    def peak_period(self, gamma=3.3):
        """Tp (s) per record: the given Tp, or from Tz by :func:`tp_from_tz` with this γ; ``gamma=None``
        takes DNV's γ(Hs, Tp) (:func:`dnv_gamma`), solving Tp = Tz / ratio(γ(Hs, Tp)) per record to a
        relative 1e-10.  Where DNV's rule steps (at Tp/√Hs = 3.6, γ = 5 below, 5.003 just above) a record
        may have no exact solution; it gets the step, Tp = 3.6 √Hs."""
        if self.tp is not None:
            return self.tp.copy()
        return _tp_with_dnv_gamma(self.hs, self.tz) if gamma is None else tp_from_tz(self.tz, gamma)

    def zero_crossing_period(self, gamma=3.3):
        """Tz (s) per record: the given Tz, or from Tp by :func:`tz_from_tp` (``gamma=None``: DNV's γ)."""
        if self.tz is not None:
            return self.tz.copy()
        return tz_from_tp(self.tp, dnv_gamma(self.hs, self.tp) if gamma is None else gamma)

    # -- calendar and subsets

    def years(self) -> np.ndarray:
        return self.time.astype("datetime64[Y]").astype(np.int64) + 1970

    def months(self) -> np.ndarray:
        """Month 1..12 of each record."""
        return self.time.astype("datetime64[M]").astype(np.int64) % 12 + 1

    def select(self, years=None, months=None) -> "Hindcast":
        """The records of these years and months (an int or a sequence of them each; None: all)."""
        keep = np.ones(self.time.size, bool)
        if years is not None:
            keep &= np.isin(self.years(), np.atleast_1d(np.asarray(years, np.int64)))
        if months is not None:
            m = np.atleast_1d(np.asarray(months, np.int64))
            if np.any((m < 1) | (m > 12)):
                raise InputError(f"months = {months!r}: expected month numbers 1..12")
            keep &= np.isin(self.months(), m)
        if not keep.any():
            raise HindcastError(f"{self.source}: no records in years {years!r}, months {months!r}")
        fields = (self.time, self.hs, self.tz, self.tp, self.direction)
        return Hindcast(*(None if a is None else a[keep] for a in fields), source=self.source)

    def scatter(self, hs_edges, t_edges, *, period="tz", month=None, gamma=3.3) -> Scatter:
        """Scatter diagram: hours per Hs × period cell, bins closed below and open above.  ``period`` "tz" or
        "tp" (converted with ``gamma`` where the record has the other one); ``month`` 1..12 or None."""
        he, te = _edges(hs_edges, "hs_edges"), _edges(t_edges, "t_edges")
        if period not in ("tz", "tp"):
            raise InputError(f"period = {period!r}: expected 'tz' or 'tp'")
        if month is not None and month not in range(1, 13):
            raise InputError(f"month = {month!r}: expected 1..12 or None")
        t = self.zero_crossing_period(gamma) if period == "tz" else self.peak_period(gamma)
        rows = slice(None) if month is None else self.months() == month
        i = np.searchsorted(he, self.hs[rows], side="right") - 1
        j = np.searchsorted(te, t[rows], side="right") - 1
        inside = (i >= 0) & (i < he.size - 1) & (j >= 0) & (j < te.size - 1)
        flat = np.bincount(i[inside] * (te.size - 1) + j[inside], minlength=(he.size - 1) * (te.size - 1))
        return Scatter(flat.reshape(he.size - 1, te.size - 1), he, te, period, month, int((~inside).sum()))

    # -- files

    def to_dataset(self):
        """An xarray.Dataset on the records' ``time``, with ``units`` and ``long_name`` attributes."""
        import xarray as xr

        data = {name: ("time", getattr(self, name), {"units": _UNITS[name], "long_name": _LONG[name]})
                for name in ("hs", "tz", "tp", "direction") if getattr(self, name) is not None}
        attrs = {"source": self.source, "comment": "hourly records; a missing hour is a missing record"}
        return xr.Dataset(data, coords={"time": self.time.astype("datetime64[s]")}, attrs=attrs)

    def to_netcdf(self, path):
        """Write :meth:`to_dataset` to a NetCDF file that :func:`read_hindcast` reads back exactly."""
        self.to_dataset().to_netcdf(path, engine="h5netcdf")
        return path


def _edges(edges, name):
    e = np.asarray(edges, np.float64)
    if e.ndim != 1 or e.size < 2 or np.isnan(e).any() or np.any(np.diff(e) <= 0):
        raise InputError(f"{name} = {edges!r}: expected at least two strictly increasing bin edges")
    return e


# -- checks ------------------------------------------------------------------------------------------


def _where(rows, k):
    return f"record {k}" if rows is None else f"line {rows[k]}"


def _hours(file, time, rows, col):
    """datetime64[h] of datetime64 times on whole hours, strictly increasing."""
    t = np.asarray(time)
    if t.ndim != 1 or not np.issubdtype(t.dtype, np.datetime64):
        raise HindcastError(f"{file}: column {col!r}: expected a 1-D array of datetime64, got {t.dtype} of "
                            f"shape {t.shape}")
    if t.size == 0:
        raise HindcastError(f"{file}: no records; expected at least one hourly record")
    bad = np.flatnonzero(np.isnat(t) | (t.astype("datetime64[h]") != t))
    if bad.size:
        k = bad[0]
        raise HindcastError(f"{file}: {_where(rows, k)}, column {col!r}: time {t[k]} is not on a whole hour; "
                            "records must be hourly")
    t = t.astype("datetime64[h]")
    back = np.flatnonzero(np.diff(t) <= np.timedelta64(0, "h"))
    if back.size:
        k = back[0] + 1
        what = "repeats" if t[k] == t[k - 1] else "comes before"
        raise HindcastError(f"{file}: {_where(rows, k)}, column {col!r}: time {t[k]} {what} the previous record's "
                            f"{t[k - 1]}; times must be strictly increasing")
    return t


def _values(file, name, x, n, rows, col):
    """float64 copy of one field, checked: Hs in [0, 30] m, periods in (0, 40] s, direction finite."""
    x = np.array(x, np.float64)
    if x.shape != (n,):
        raise HindcastError(f"{file}: column {col!r}: {x.shape[0] if x.ndim else 0} values for {n} times")
    if name == "hs":
        bad, want = ~((x >= 0.0) & (x <= MAX_HS)), f"a significant wave height in [0, {MAX_HS:g}] m (a missing hour is a missing row)"
    elif name in ("tz", "tp"):
        bad, want = ~((x > 0.0) & (x <= MAX_PERIOD)), f"a period in (0, {MAX_PERIOD:g}] s"
    else:
        bad, want = ~np.isfinite(x), "a finite direction in degrees"
    k = np.flatnonzero(bad)
    if k.size:
        k = k[0]
        above = (" is above any plausible period" if name in ("tz", "tp") and x[k] > MAX_PERIOD
                 else " is above any measured sea (a missing-value code?)" if name == "hs" and x[k] > MAX_HS else "")
        raise HindcastError(f"{file}: {_where(rows, k)}, column {col!r}: value {float(x[k])!r}{above}; "
                            f"expected {want}")
    x.flags.writeable = False
    return x


def _validated(file, time, hs, tz, tp, direction, rows=None, columns=None):
    """The fields as read-only arrays, or a HindcastError naming the file, the row and the column."""
    columns = columns or {}
    if tz is None and tp is None:
        raise HindcastError(f"{file}: neither a zero-up-crossing period (tz) nor a peak period (tp); expected one")
    t = _hours(file, time, rows, columns.get("time", "time"))
    t.flags.writeable = False
    out = {"time": t}
    for name, x in (("hs", hs), ("tz", tz), ("tp", tp), ("direction", direction)):
        out[name] = None if x is None else _values(file, name, x, t.size, rows, columns.get(name, name))
    return out


# -- reading -----------------------------------------------------------------------------------------


def read_hindcast(path, *, hs=None, tz=None, tp=None, direction=None, time=None) -> Hindcast:
    """Read an hourly hindcast from a text file or NetCDF.

    Text (``#`` lines and blank lines skipped): a header row, then one record a row, separated by ";" when
    the header has one, else ",".  Columns are found by name, case-insensitively: the one named by the
    keyword, else the one starting with "time"/"date", "hs" (or "significant wave height"), "tz" (or
    "zero-up-crossing period"), "tp" (or "peak period"), "dir"; the header of the NDBC benchmark files,
    ``time (YYYY-MM-DD-HH); significant wave height (m); zero-up-crossing period (s)``, is one such.
    Times are ``YYYY-MM-DD HH:MM``, ``YYYY-MM-DDTHH`` or ``YYYY-MM-DD-HH`` (optionally ``:MM:SS``) and
    must be on whole hours.  NetCDF (``.nc``, or any HDF5/NetCDF file): a ``time`` coordinate and
    variables ``hs`` and ``tz`` and/or ``tp`` (optionally ``direction``), or those the keywords name.
    """
    p = Path(path)
    names = {"time": time, "hs": hs, "tz": tz, "tp": tp, "direction": direction}
    if not p.is_file():
        raise HindcastError(f"{path}: no such file; expected a hindcast (text with a header row, or NetCDF)")
    with p.open("rb") as f:
        magic = f.read(4)
    if p.suffix.lower() == ".nc" or magic.startswith((b"\x89HDF", b"CDF")):
        return _read_netcdf(p, names)
    return _read_text(p, names)


def _read_netcdf(p, names):
    import xarray as xr

    try:
        with xr.open_dataset(p, engine="h5netcdf") as f:
            ds = f.load()
    except Exception as exc:
        raise HindcastError(f"{p}: not a readable NetCDF file ({type(exc).__name__}); expected a hindcast with a "
                            "time coordinate and variables hs and tz or tp") from None
    have = sorted(str(k) for k in ds.variables)
    cols = {k: names[k] or ("direction" if k == "direction" else k) for k in names}
    for k in ("time", "hs"):
        if cols[k] not in ds.variables:
            raise HindcastError(f"{p}: no variable {cols[k]!r} for {k}; the file has {have}")
    fields = {k: ds[cols[k]].values if cols[k] in ds.variables else None for k in ("tz", "tp", "direction")}
    for k in ("tz", "tp", "direction"):
        if names[k] is not None and fields[k] is None:
            raise HindcastError(f"{p}: no variable {cols[k]!r} for {k}; the file has {have}")
    checked = _validated(p, ds[cols["time"]].values, ds[cols["hs"]].values, columns=cols, **fields)
    return Hindcast(**checked, source=p.name)


def _read_text(p, names):
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise HindcastError(f"{p}: not a UTF-8 text file nor NetCDF; expected a hindcast") from None
    rows = [k for k, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
    if not rows:
        raise HindcastError(f"{p}: empty file; expected a header row, then hourly records")
    header = lines[rows[0]]
    sep = ";" if ";" in header else ","
    header_names = [h.strip() for h in header.split(sep)]
    index = {k: _column(p, header_names, k, names[k]) for k in names}
    if index["time"] is None or index["hs"] is None:
        k = "time" if index["time"] is None else "hs"
        raise HindcastError(f"{p}: no column for {k} (a name starting with {' or '.join(map(repr, _DEFAULTS[k]))}, "
                            f"or name it with {k}=...); the header has columns {header_names}")
    if index["tz"] is None and index["tp"] is None:
        raise HindcastError(f"{p}: neither a Tz nor a Tp column (names starting with 'tz' or 'tp'); the header has "
                            f"columns {header_names}")
    records = rows[1:]
    if not records:
        raise HindcastError(f"{p}: no records after the header; expected hourly records")
    split = []
    for k in records:
        fields = lines[k].split(sep)
        if len(fields) != len(header_names):
            raise HindcastError(f"{p}: line {k + 1}: {len(fields)} fields where the header has {len(header_names)}: "
                                f"{lines[k].strip()!r}")
        split.append(fields)
    text = list(zip(*split))
    line_no = np.asarray(records) + 1
    cols = {k: header_names[i] for k, i in index.items() if i is not None}
    t = _parse_times(p, text[index["time"]], line_no, cols["time"])
    fields = {k: None if index[k] is None else _parse_numbers(p, text[index[k]], line_no, cols[k])
              for k in ("hs", "tz", "tp", "direction")}
    checked = _validated(p, t, fields.pop("hs"), rows=line_no, columns=cols, **fields)
    return Hindcast(**checked, source=p.name)


def _column(p, header_names, field, given):
    """Index of the column for ``field``: the one named ``given``, else the one default name prefix finds."""
    low = [h.lower() for h in header_names]
    if given is not None:
        if given.strip().lower() not in low:
            raise HindcastError(f"{p}: no column {given!r} for {field} (named by {field}=...); the header has "
                                f"columns {header_names}")
        return low.index(given.strip().lower())
    found = [i for i, h in enumerate(low) if h.startswith(_DEFAULTS[field])]
    if len(found) > 1:
        raise HindcastError(f"{p}: columns {[header_names[i] for i in found]} could all be {field}; name one with "
                            f"{field}=...")
    return found[0] if found else None


def _parse_times(p, text, line_no, col):
    """datetime64[s] of the time column, or a HindcastError naming the first row that does not parse."""
    text = [s.strip() for s in text]
    bad = next((k for k, s in enumerate(text) if not _TIME.match(s)), None)
    if bad is None:
        iso = [s[:10] + "T" + s[11:] for s in text]
        try:
            return np.array(iso, dtype="datetime64[s]")
        except ValueError:
            bad = next(k for k, s in enumerate(iso) if not _parses_as_time(s))
    raise HindcastError(f"{p}: line {line_no[bad]}, column {col!r}: {text[bad]!r} is not a time; expected "
                        "YYYY-MM-DD HH:MM, YYYY-MM-DDTHH or YYYY-MM-DD-HH")


def _parses_as_time(s):
    try:
        np.datetime64(s, "s")
    except ValueError:
        return False
    return True


def _parse_numbers(p, text, line_no, col):
    try:
        return np.array(text, dtype=np.float64)
    except ValueError:
        for k, s in enumerate(text):
            try:
                float(s)
            except ValueError:
                raise HindcastError(f"{p}: line {line_no[k]}, column {col!r}: {s.strip()!r} is not a number") from None
        raise HindcastError(f"{p}: column {col!r}: values that are not numbers") from None


def sample_hindcast() -> Hindcast:
    """The shipped sample: NDBC buoy 44007 (Gulf of Maine), 2004 (its most complete year), hourly Hs and Tz with the buoy's gaps."""
    return read_hindcast(Path(__file__).resolve().parents[1] / "data" / "hindcast_ndbc44007_2004.txt")
