"""The subsea installation's operability (studies/subsea_installation/operability.py): the root search of each
phase's limiting Hs against a fine grid of Hs on the same realisations, and the table's own consistency."""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxmbd.operability.alpha import alpha_factor  # noqa: E402
from jaxmbd.operability.job import _Runs, limiting_table  # noqa: E402
from jaxmbd.operability.limiting import Search  # noqa: E402
from jaxmbd.run import settings_of, start_of  # noqa: E402
from studies.subsea_installation.operability import smoke  # noqa: E402


@pytest.mark.slow  # 2-3 minutes: 28 runs of the whole operation (two realisations of 6-7 minutes each)
def test_the_installations_root_search_agrees_with_a_fine_grid_of_hs():
    """Head seas, Tp 11 s, two realisations: the limiting Hs of the splash zone and of the landing, searched to
    0.01 m, equal the roots of their least margins interpolated on grids of 0.05 m around them (the same
    realisations at every Hs: common random numbers) within 1 %; the lift-off holds up to the search's 6 m; the
    operational limit is alpha (DNV's base table, the operation's 4 planned hours) times the limit."""
    case, table = smoke()
    table = dataclasses.replace(table, tp=(11.0,), search=Search(hs_start=1.0, hs_max=6.0, tolerance=0.01))
    start = start_of(case)
    lim = limiting_table(case, table, start=start)
    hs, status = lim["limiting_hs"].values[:, 0, 0], lim["status"].values[:, 0, 0]
    assert list(lim["phase"].values) == ["lift-off", "splash zone", "landing"] and table.hours == 4
    assert list(status) == ["above", "root", "root"], status
    assert hs[0] == 6.0
    for a, h, op in zip(lim["alpha"].values[:, 0, 0], hs, lim["operational_hs"].values[:, 0, 0]):
        assert a == alpha_factor(4, max(h, 1.0)) and op == pytest.approx(a * h, rel=1e-12)
    runs = _Runs(case, start, settings_of(case, n_realisations=2, seed=table.seed, tp=11.0, heading=np.pi), table.criteria)
    for k in (1, 2):
        names = [c.name for c in table.phases[k].criteria]
        assert lim["governing"].values[k, 0, 0] in names
        grid = np.round(np.arange(hs[k] - 0.15, hs[k] + 0.1501, 0.05), 6)
        g = np.array([min(r[n] for n in names) for r in map(runs, grid)])  # one run a point
        j = int(np.argmax(g < 0))
        assert j > 0 and np.all(g[:j] >= 0), g  # one crossing, inside the grid
        root = grid[j - 1] - g[j - 1] * (grid[j] - grid[j - 1]) / (g[j] - g[j - 1])
        assert hs[k] == pytest.approx(root, rel=0.01), (k, hs[k], root)


def test_the_installations_hull_covers_every_heading_of_its_table():
    """The operability table's headings go round the circle (0-315 deg) and the box hull's Capytaine table
    holds 0-180 deg: the study mirrors it about the hull's xz plane.  Exact: 0-180 deg read the table as it
    is (bitwise), and 360 deg - β reads β's excitation with sway, roll and yaw negated (bitwise)."""
    import math

    from jaxmbd.hydro.bem import read_capytaine
    from studies.osv_lift.hull import HULL_NC, hull_over_the_circle
    from studies.subsea_installation.operability import HEADINGS

    half, full = read_capytaine(HULL_NC), hull_over_the_circle()
    with pytest.raises(Exception, match="outside the excitation table"):
        half.check_headings(math.radians(225.0))
    full.check_headings(np.radians(HEADINGS))
    omega = np.asarray(half.omega)
    sign = np.array([1, -1, 1, -1, 1, -1])
    for h in HEADINGS:
        got = np.asarray(full.excitation_at(omega, math.radians(h)))
        if h <= 180.0:
            np.testing.assert_array_equal(got, np.asarray(half.excitation_at(omega, math.radians(h))))
        else:
            np.testing.assert_array_equal(got, np.asarray(half.excitation_at(omega, math.radians(360.0 - h))) * sign)
