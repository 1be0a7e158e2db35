"""DNV's alpha factor: from the design (analysed) limit of a weather-restricted operation to the limit
its weather forecast must meet.

A weather-restricted marine operation is decided on a forecast.  The forecast is uncertain, so the
forecasted significant wave height must stay at or below the forecast limit OP_WF = alpha x OP_LIM over
the reference period, where OP_LIM is the operational limit (at most the design limit the operation was
analysed for) and alpha <= 1 grows with the design Hs and falls with the planned operation period T_POP.

Source
------
DNV-OS-H101 *Marine Operations, General*, October 2011, Section 4, B700 (alpha factor) and its wave
tables, Tables 4-1 to 4-5; B402 and B501 for the reference period.  The values below are those tables'
as published (from a transcription of the standard's PDF: docs/operability.md says which).  The
scheme carries on in DNVGL-ST-N001 *Marine operations and marine warranty* (edition 2016-06 and later,
[2.6.10]); this module's tables were not compared with that standard's, and no other table of alpha (the
wind table 4-6) is implemented.

The tables, by ``forecast_level`` (rows: T_POP <= 12, 24, 36, 48, 72 h unless said):

- Table 4-1, the base case, one forecast: ``"base"`` (the default) or ``"C"``;
- Table 4-2, the highest of two independent forecasts: ``"B"``;
- Table 4-3, a meteorologist at the site: ``"A"``;
- Table 4-4, a forecast calibrated by monitoring at the site: ``"monitoring"`` (rows 4, 12, 24 h);
- Table 4-5, monitoring and a meteorologist at the site: ``"A+monitoring"`` (rows 4, 12, 24 h).

Columns: design Hs = 1, 2, 4 and >= 6 m.  The rules implemented:

- *Rows.*  A row reads "T_POP <= x h": T_POP takes the first row x >= T_POP (no interpolation between
  rows).  Beyond the last row the table does not apply (T_POP > 72 h is not weather restricted; tables
  4-4 and 4-5 stop at 24 h and send longer operations to tables 4-1/4-2 and 4-3): refused.
- *Columns.*  Linear interpolation in design Hs between the columns, as the standard allows; at and
  above 6 m the last column.  Below 1 m the tables give nothing (alpha is then assessed case by case):
  refused.  ``interpolate=False`` takes the column at or below the design Hs instead, which is
  conservative: in every row alpha does not decrease with Hs.

The reference period (Section 4, B402 and B501): T_R = T_POP + T_C, T_C the contingency time.  Where
T_POP's uncertainty and the contingencies are not assessed in detail, T_R should normally be at least
twice T_POP.  An operation may normally be taken as weather restricted when T_R < 96 h and T_POP < 72 h.
"""

from __future__ import annotations

import math

import numpy as np

from .windows import OperabilityError

HS_COLUMNS = (1.0, 2.0, 4.0, 6.0)
"""m: the design-Hs columns of the wave tables (the last is "6 m and above")."""

TABLES = {
    "4-1": {12: (0.65, 0.76, 0.79, 0.80), 24: (0.63, 0.73, 0.76, 0.78), 36: (0.62, 0.71, 0.73, 0.76),
            48: (0.60, 0.68, 0.71, 0.74), 72: (0.55, 0.63, 0.68, 0.72)},
    "4-2": {12: (0.68, 0.80, 0.83, 0.84), 24: (0.66, 0.77, 0.80, 0.82), 36: (0.65, 0.75, 0.77, 0.80),
            48: (0.63, 0.71, 0.75, 0.78), 72: (0.58, 0.66, 0.71, 0.76)},
    "4-3": {12: (0.72, 0.84, 0.87, 0.88), 24: (0.69, 0.80, 0.84, 0.86), 36: (0.68, 0.78, 0.80, 0.84),
            48: (0.66, 0.75, 0.78, 0.81), 72: (0.61, 0.69, 0.75, 0.79)},
    "4-4": {4: (0.90, 0.95, 1.0, 1.0), 12: (0.72, 0.84, 0.87, 0.88), 24: (0.66, 0.77, 0.80, 0.82)},
    "4-5": {4: (0.90, 0.95, 1.0, 1.0), 12: (0.78, 0.91, 0.95, 0.96), 24: (0.72, 0.84, 0.87, 0.90)},
}
"""DNV-OS-H101 (2011) Tables 4-1 to 4-5: {T_POP row (h): alpha at the design-Hs columns :data:`HS_COLUMNS`}."""

LEVELS = {"base": "4-1", "C": "4-1", "B": "4-2", "A": "4-3", "monitoring": "4-4", "A+monitoring": "4-5"}
"""Names accepted for ``forecast_level`` and the table each selects (the table names are accepted too)."""

BEYOND = {"4-1": "the operation is not weather restricted (T_POP < 72 h, B501)", "4-2": "as for table 4-1",
          "4-3": "as for table 4-1", "4-4": "use table 4-1 or 4-2", "4-5": "use table 4-3"}

WEATHER_RESTRICTED_TR = 96.0
"""h: a reference period below this (with T_POP below :data:`WEATHER_RESTRICTED_TPOP`) is weather restricted."""
WEATHER_RESTRICTED_TPOP = 72.0
"""h: the planned operation period below which an operation may be weather restricted."""


def _table(forecast_level: str) -> str:
    name = LEVELS.get(forecast_level, forecast_level)
    if name not in TABLES:
        raise OperabilityError(f"forecast_level: expected one of {sorted(LEVELS)} or a table {sorted(TABLES)}, "
                               f"got {forecast_level!r}")
    return name


def _positive(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise OperabilityError(f"{name}: expected a number, got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise OperabilityError(f"{name}: expected a positive number of hours, got {value!r}")
    return x


def alpha_factor(t_pop_hours, hs_design, *, forecast_level: str = "base", interpolate: bool = True) -> float:
    """DNV's alpha for waves at planned operation period ``t_pop_hours`` (h) and design Hs ``hs_design`` (m).

    ``forecast_level``: "base" or "C" (table 4-1), "B" (4-2), "A" (4-3), "monitoring" (4-4), "A+monitoring"
    (4-5), or a table's name.  The row is the first "T_POP <= x" that holds; between the Hs columns alpha is
    linear (``interpolate=False``: the column at or below ``hs_design``).  Outside a table's rows or below
    its first column: :class:`OperabilityError`."""
    name = _table(forecast_level)
    table = TABLES[name]
    t_pop = _positive("alpha_factor: t_pop_hours", t_pop_hours)
    rows = sorted(table)
    if t_pop > rows[-1]:
        raise OperabilityError(f"alpha_factor: t_pop_hours {t_pop:g} h is beyond table {name}'s rows "
                               f"(T_POP <= {rows[-1]} h); {BEYOND[name]}")
    try:
        hs = float(hs_design)
    except (TypeError, ValueError):
        raise OperabilityError(f"alpha_factor: hs_design expected a number of metres, got {hs_design!r}") from None
    if not (math.isfinite(hs) and hs >= HS_COLUMNS[0]):
        raise OperabilityError(f"alpha_factor: hs_design {hs_design!r} m is below table {name}'s columns "
                               f"({HS_COLUMNS[0]:g} to >= {HS_COLUMNS[-1]:g} m); alpha is then assessed case by case")
    values = table[next(r for r in rows if t_pop <= r)]
    if interpolate:
        return float(np.interp(hs, HS_COLUMNS, values))
    return float(values[int(np.searchsorted(HS_COLUMNS, hs, side="right")) - 1])


def operational_limit(design_limit_hs, t_pop_hours, *, forecast_level: str = "base") -> float:
    """The forecast limit OP_WF = alpha x the design limit ``design_limit_hs`` (m), alpha looked up at that
    design Hs and ``t_pop_hours`` (:func:`alpha_factor`)."""
    hs = float(design_limit_hs)
    return alpha_factor(t_pop_hours, hs, forecast_level=forecast_level) * hs


def reference_period(t_pop, t_contingency=None) -> float:
    """T_R = T_POP + T_C (h).  ``t_contingency`` None: T_C not assessed in detail, and T_R = 2 T_POP, the
    least DNV-OS-H101 B402 then normally accepts."""
    t_pop = _positive("reference_period: t_pop", t_pop)
    if t_contingency is None:
        return 2.0 * t_pop
    try:
        t_c = float(t_contingency)
    except (TypeError, ValueError):
        raise OperabilityError(f"reference_period: t_contingency expected a number of hours, "
                               f"got {t_contingency!r}") from None
    if not (math.isfinite(t_c) and t_c >= 0):
        raise OperabilityError(f"reference_period: t_contingency expected hours >= 0, got {t_contingency!r}")
    return t_pop + t_c


def weather_restricted(t_pop, t_r) -> bool:
    """Whether an operation with planned period ``t_pop`` and reference period ``t_r`` (h) may normally be
    defined as weather restricted: T_R < 96 h and T_POP < 72 h (DNV-OS-H101 B501)."""
    t_pop = _positive("weather_restricted: t_pop", t_pop)
    t_r = _positive("weather_restricted: t_r", t_r)
    if t_r < t_pop:
        raise OperabilityError(f"weather_restricted: t_r {t_r:g} h is shorter than t_pop {t_pop:g} h "
                               "(T_R = T_POP + T_C)")
    return t_r < WEATHER_RESTRICTED_TR and t_pop < WEATHER_RESTRICTED_TPOP
