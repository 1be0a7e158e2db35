"""DNV's alpha factor: every tabulated value as published (DNV-OS-H101, October 2011, Tables 4-1 to 4-5),
linear interpolation between the design-Hs columns, the T_POP rows as steps, and the refusals outside the
tables."""

import numpy as np
import pytest

from jaxmbd.operability import alpha
from jaxmbd.operability.alpha import alpha_factor, operational_limit, reference_period, weather_restricted
from jaxmbd.operability.windows import OperabilityError

# Typed here from the published tables (design Hs columns 1, 2, 4, >= 6 m), independently of the module.
PUBLISHED = {
    "4-1": {12: [0.65, 0.76, 0.79, 0.80], 24: [0.63, 0.73, 0.76, 0.78], 36: [0.62, 0.71, 0.73, 0.76],
            48: [0.60, 0.68, 0.71, 0.74], 72: [0.55, 0.63, 0.68, 0.72]},
    "4-2": {12: [0.68, 0.80, 0.83, 0.84], 24: [0.66, 0.77, 0.80, 0.82], 36: [0.65, 0.75, 0.77, 0.80],
            48: [0.63, 0.71, 0.75, 0.78], 72: [0.58, 0.66, 0.71, 0.76]},
    "4-3": {12: [0.72, 0.84, 0.87, 0.88], 24: [0.69, 0.80, 0.84, 0.86], 36: [0.68, 0.78, 0.80, 0.84],
            48: [0.66, 0.75, 0.78, 0.81], 72: [0.61, 0.69, 0.75, 0.79]},
    "4-4": {4: [0.90, 0.95, 1.0, 1.0], 12: [0.72, 0.84, 0.87, 0.88], 24: [0.66, 0.77, 0.80, 0.82]},
    "4-5": {4: [0.90, 0.95, 1.0, 1.0], 12: [0.78, 0.91, 0.95, 0.96], 24: [0.72, 0.84, 0.87, 0.90]},
}
COLUMNS = [1.0, 2.0, 4.0, 6.0]
CELLS = [(table, row, c, value) for table, rows in PUBLISHED.items() for row, values in rows.items()
         for c, value in zip(COLUMNS, values)]


def _one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("table,row,hs,value", CELLS)
def test_every_tabulated_value_is_the_published_one(table, row, hs, value):
    assert alpha_factor(row, hs, forecast_level=table) == value
    assert alpha_factor(row, hs, forecast_level=table, interpolate=False) == value


def test_the_module_holds_exactly_the_published_tables():
    assert alpha.HS_COLUMNS == tuple(COLUMNS)
    assert {t: {r: list(v) for r, v in rows.items()} for t, rows in alpha.TABLES.items()} == PUBLISHED


@pytest.mark.parametrize("level,table", [("base", "4-1"), ("C", "4-1"), ("B", "4-2"), ("A", "4-3"),
                                         ("monitoring", "4-4"), ("A+monitoring", "4-5")])
def test_forecast_levels_select_their_tables(level, table):
    for row, values in PUBLISHED[table].items():
        assert [alpha_factor(row, hs, forecast_level=level) for hs in COLUMNS] == values


def test_the_default_is_the_base_case():
    assert alpha_factor(24, 2.0) == PUBLISHED["4-1"][24][1]


def test_at_and_above_six_metres_the_last_column():
    for table, rows in PUBLISHED.items():
        for row, values in rows.items():
            assert alpha_factor(row, 6.0, forecast_level=table) == values[-1]
            assert alpha_factor(row, 11.3, forecast_level=table) == values[-1]


@pytest.mark.parametrize("table", sorted(PUBLISHED))
def test_midway_between_two_columns_is_their_mean(table):
    for row, values in PUBLISHED[table].items():
        for k in range(3):
            mid = 0.5 * (COLUMNS[k] + COLUMNS[k + 1])
            assert alpha_factor(row, mid, forecast_level=table) == pytest.approx(0.5 * (values[k] + values[k + 1]),
                                                                                 abs=1e-15)
            quarter = COLUMNS[k] + 0.25 * (COLUMNS[k + 1] - COLUMNS[k])
            assert alpha_factor(row, quarter, forecast_level=table) == pytest.approx(
                values[k] + 0.25 * (values[k + 1] - values[k]), abs=1e-15)


def test_without_interpolation_the_column_at_or_below():
    assert alpha_factor(24, 3.9, interpolate=False) == PUBLISHED["4-1"][24][1]
    assert alpha_factor(24, 1.999, interpolate=False) == PUBLISHED["4-1"][24][0]
    assert alpha_factor(24, 5.0, interpolate=False) == PUBLISHED["4-1"][24][2]
    assert alpha_factor(24, 3.0, interpolate=False) <= alpha_factor(24, 3.0)


def test_a_period_between_rows_takes_the_next_longer_row():
    for table, rows in PUBLISHED.items():
        keys = sorted(rows)
        for lower, upper in zip([0] + keys[:-1], keys):
            for t_pop in (lower + 1e-9, 0.5 * (lower + upper), upper):
                if t_pop <= 0:
                    continue
                assert [alpha_factor(t_pop, hs, forecast_level=table) for hs in COLUMNS] == rows[upper]


def test_the_tables_are_conservative_in_both_directions():
    """alpha does not fall as design Hs grows and does not grow as T_POP grows: the column rule of
    interpolate=False and the row rule are conservative."""
    for rows in PUBLISHED.values():
        keys = sorted(rows)
        for k in keys:
            assert np.all(np.diff(rows[k]) >= 0)
        for a, b in zip(keys, keys[1:]):
            assert np.all(np.array(rows[b]) <= np.array(rows[a]))


@pytest.mark.parametrize("t_pop,table,expect", [(72.5, "4-1", "72.5 h"), (100, "4-3", "100 h"),
                                                (24.5, "4-4", "24.5 h"), (30, "4-5", "30 h")])
def test_a_period_past_the_last_row_is_refused(t_pop, table, expect):
    with pytest.raises(OperabilityError) as err:
        alpha_factor(t_pop, 2.0, forecast_level=table)
    text = _one_line(err)
    assert "t_pop_hours" in text and expect in text and f"table {table}" in text


@pytest.mark.parametrize("t_pop", [0, -3, float("nan"), "long"])
def test_a_period_that_is_no_positive_number_is_refused(t_pop):
    with pytest.raises(OperabilityError) as err:
        alpha_factor(t_pop, 2.0)
    assert "t_pop_hours" in _one_line(err)


@pytest.mark.parametrize("hs", [0.99, 0.0, -1.0, float("nan")])
def test_a_design_hs_below_the_first_column_is_refused(hs):
    with pytest.raises(OperabilityError) as err:
        alpha_factor(12, hs)
    text = _one_line(err)
    assert "hs_design" in text and repr(hs) in text and "1 to >= 6 m" in text


def test_an_unknown_forecast_level_is_refused():
    with pytest.raises(OperabilityError) as err:
        alpha_factor(12, 2.0, forecast_level="D")
    text = _one_line(err)
    assert "forecast_level" in text and "'D'" in text and "4-1" in text
    assert issubclass(OperabilityError, ValueError)


def test_the_operational_limit_is_alpha_times_the_design_limit():
    assert operational_limit(2.0, 24) == 0.73 * 2.0
    assert operational_limit(3.0, 36, forecast_level="A") == pytest.approx(0.79 * 3.0, abs=1e-15)
    assert operational_limit(2.5, 3, forecast_level="monitoring") == pytest.approx((0.95 + 0.0125) * 2.5, abs=1e-15)
    assert operational_limit(2.5, 6, forecast_level="monitoring") == pytest.approx((0.84 + 0.0075) * 2.5, abs=1e-15)
    with pytest.raises(OperabilityError):
        operational_limit(0.8, 12)


def test_the_reference_period():
    assert reference_period(20, 8) == 28.0
    assert reference_period(20) == 40.0  # contingency not assessed: twice the planned period
    assert reference_period(20, 0) == 20.0
    for bad in (-1, float("inf"), "x"):
        with pytest.raises(OperabilityError) as err:
            reference_period(20, bad)
        assert "t_contingency" in _one_line(err)
    with pytest.raises(OperabilityError):
        reference_period(0, 5)


def test_weather_restricted():
    assert weather_restricted(24, 48)
    assert not weather_restricted(24, 96)
    assert not weather_restricted(72, 90)
    with pytest.raises(OperabilityError) as err:
        weather_restricted(24, 12)
    assert "t_r" in _one_line(err)
