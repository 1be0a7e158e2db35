"""Slack and snap detection (jaxmbd.statistics.slack_events) on records written here."""

import numpy as np
import pytest

from jaxmbd.statistics import slack_events


def test_slack_spells_and_their_snaps_are_found_with_interpolated_times():
    """A tension of static 100 N swinging 100 ± 150 N: slack (below 10 N) spells start and end where the
    sine crosses 10 N (to 1e-6 s on a 1e-4 s grid: linear interpolation of a smooth record, error
    O(dt²)), and each snap is the next crest, 250 N at its time."""
    t = np.arange(0.0, 22.0, 1e-4)
    T = 100.0 + 150.0 * np.sin(2 * np.pi * t / 5.0)
    events = slack_events(t, T, 100.0)
    assert len(events) == 4
    a = np.arcsin(-90.0 / 150.0)  # sin = (10 − 100) / 150, the descending and rising crossings
    for n, e in enumerate(events):
        start = 5.0 * (n + (np.pi - a) / (2 * np.pi))
        end = 5.0 * (n + 1 + a / (2 * np.pi))
        assert abs(e.start - start) < 1e-6 and abs(e.end - end) < 1e-6, (n, e)
        assert abs(e.snap - 250.0) < 1e-4 and abs(e.snap_time - 5.0 * (n + 1.25)) < 1e-3
        assert abs(e.duration - (end - start)) < 2e-6


def test_a_taut_line_has_no_event_and_a_record_ending_slack_says_so():
    t = np.linspace(0.0, 10.0, 1001)
    assert slack_events(t, 100.0 + 50.0 * np.sin(t), 100.0) == []
    (e,) = slack_events(t, np.where(t < 5.0, 100.0, 0.0), 100.0)
    assert e.end is None and e.snap is None and 4.9 <= e.start <= 5.0
    with pytest.raises(ValueError, match="differ in length"):
        slack_events(t, t[:-1], 100.0)


def test_the_phase_table_counts_a_ropes_slack_spells_and_snaps():
    """A scenario result whose tension goes slack twice in its second phase: the table says 0 then 2,
    with the snap's peak (the tension record is written here, the table only reads it)."""
    import types

    from jaxmbd.results import Result

    t = np.linspace(0.0, 20.0, 2001)
    T = np.where(t < 10.0, 100.0, 100.0 + 150.0 * np.sin(2 * np.pi * (t - 10.0) / 5.0))
    system = types.SimpleNamespace(output_units=lambda: {"hoist/tension": "N"}, model=types.SimpleNamespace(gravity=np.array([0.0, 0.0, -9.81])))
    res = Result(system, t, np.zeros((t.size, 1)), np.zeros((t.size, 1)), np.zeros((t.size, 0)),
                 {"hoist/tension": T}, phase=(t >= 10.0).astype(int), phase_names=("hold", "swing"))
    rows = res.phase_table(["hoist/tension"], loads="N").splitlines()
    assert rows[1].split()[-2:] == ["0", "-"] and rows[2].split()[-2:] == ["2", "250"], rows
    assert "(kN)" in res.phase_table(["hoist/tension"]) and res.phase_table(["hoist/tension"]).splitlines()[2].split()[-1] == "0.25"
