"""What falls between the saves: the tensions' maxima, minima and slack spells are taken at every
integration step, so the table, the ranges of validity, a sweep's cells and an operability margin do not
depend on the save step.

The packaged small lift (a 20 t module on 8 m of rope under a fixed crane on a barge) in a sea too high
for it (Hs 4.5 m): the rope goes slack and snaps in two of three realisations.  Run at a save step of
dt (every state saved) and of 1 s (every 25th), the same steps are integrated; what is taken between the
saves must agree to round-off (1e-9 relative: the two programs group the same steps differently), and
the slack spells counted at every step must be those that :func:`jaxmbd.statistics.slack_events` finds in
the record of every step."""

import pathlib

import numpy as np
import pytest

import jaxmbd
from jaxmbd import scenario as scenario_module
from jaxmbd import validity
from jaxmbd.operability.criteria import margins
from jaxmbd.run import run, settings_of, start_of
from jaxmbd.statistics import slack_events, summarise_maxima
from jaxmbd.sweep import SweepSettings, cell_maxima

FILE = "jaxmbd/data/small_lift.toml"
HS = 4.5
DURATION = 40.0


@pytest.fixture(scope="module")
def runs():
    loaded = jaxmbd.load_system(FILE)
    start = start_of(loaded)
    dt = loaded.integrator.dt
    out = {}
    for save_dt in (dt, 1.0):
        settings = settings_of(loaded, n_realisations=3, duration=DURATION, save_dt=save_dt)
        out[save_dt] = run(loaded, start, settings=settings, hs=HS)
    return loaded, dt, out


def test_the_maxima_minima_and_slack_spells_do_not_depend_on_the_save_step(runs):
    loaded, dt, res = runs
    fine, coarse = res[dt], res[1.0]
    assert coarse.time.size == int(DURATION) + 1 and fine.time.size == round(DURATION / dt) + 1
    name = "hoist/tension"
    x = np.asarray(fine.outputs[name])
    b_fine, b_coarse = fine.between[name], coarse.between[name]
    # saved at every step, the largest value between saves is the saved one (one state per interval; the
    # step's value in the scan and the save's in the outputs program agree to round-off: 1e-12 of the tension's
    # size, the weight of the load, near slack as elsewhere)
    np.testing.assert_allclose(b_fine["max"], x, rtol=1e-12, atol=1e-12 * np.max(np.abs(x)))
    for k in ("max", "min"):
        np.testing.assert_allclose(np.max(b_coarse[k], axis=-1) if k == "max" else np.min(b_coarse[k], axis=-1),
                                   np.max(b_fine[k], axis=-1) if k == "max" else np.min(b_fine[k], axis=-1), rtol=1e-9, atol=0)
    # the saved samples alone at 1 s miss the snap loads: what the old table read
    saved = np.max(np.asarray(coarse.outputs[name]), axis=-1)
    assert np.any(saved < 0.9 * np.max(b_fine["max"], axis=-1))

    # slack spells: counted at every step, as slack_events counts them on the record of every step
    spells = [len(slack_events(fine.time, xr, xr[0])) for xr in x]
    assert sum(spells) > 0 and min(spells) == 0  # some realisations slack, one not
    for b in (b_fine, b_coarse):
        assert np.sum(b["slack_entries"], axis=-1).tolist() == spells
    slack_time = [float(np.sum(xr[:-1] < 0.1 * xr[0]) * dt) for xr in x]
    np.testing.assert_allclose(np.sum(b_coarse["slack_seconds"], axis=-1), slack_time, rtol=1e-12)

    # the table's maxima, the rope's range of validity, a sweep cell and an operability margin agree
    m = [summarise_maxima(np.asarray(r.outputs[name]), DURATION, daf=True, between=r.between[name]["max"]) for r in (fine, coarse)]
    assert m[0].mean == pytest.approx(m[1].mean, rel=1e-9) and m[0].daf == pytest.approx(m[1].daf, rel=1e-9)
    ex = [{e.quantity: e for e in validity.check(r.system, r.time, r.outputs, True, r.between)}["tension"] for r in (fine, coarse)]
    assert ex[0].spells == ex[1].spells == sum(spells)
    assert ex[0].realisations == ex[1].realisations == sum(s > 0 for s in spells)
    assert ex[0].fraction == pytest.approx(ex[1].fraction, rel=1e-9)
    assert ex[0].after_exit == pytest.approx(ex[1].after_exit, rel=1e-9) and ex[0].extreme == pytest.approx(ex[1].extreme, abs=1e-6)
    assert ex[1].first_time <= ex[0].first_time < ex[1].first_before
    # the snap: the largest tension from each rope's first slack step on, over its start value (every step saved)
    snap = max(float(np.max(xr[np.argmax(xr < 0.1 * xr[0]):]) / xr[0]) for xr in x if np.any(xr < 0.1 * xr[0]))
    assert ex[1].after_exit == pytest.approx(snap, rel=1e-9)
    settings = SweepSettings(hs=[HS], tp=[6.0], limits={}, duration=DURATION, n_realisations=3, save_dt=1.0,
                             integrator=loaded.integrator)
    np.testing.assert_allclose(*(cell_maxima(r, settings, 0, 0)["hoist/tension"].values for r in (fine, coarse)), rtol=1e-9)
    crit = loaded.operability.phases[0].criteria
    mg = [margins(crit, r) for r in (fine, coarse)]
    for c in crit:
        assert float(mg[0][c.name]) == pytest.approx(float(mg[1][c.name]), rel=1e-9, abs=1e-12)


_PHASES = ("\n[scenario]\nname = \"lift\"\n"
           "[[scenario.phases]]\nname = \"hang\"\nmax_duration = 12.0\n"
           "[[scenario.phases]]\nname = \"lower\"\nset = { hoist = { payout_rate = 0.1 } }\nmax_duration = 8.0\n"
           "[[scenario.phases]]\nname = \"hold\"\nset = { hoist = { payout_rate = 0.0 } }\nmax_duration = 12.0\n")


def test_an_operation_in_phases_takes_its_tensions_at_every_step(tmp_path, monkeypatch):
    """The small lift as three phases (hang 12 s, lower 0.8 m, hold 12 s) in the same sea, two realisations
    batched, saved at every step and every 0.7 s (off the step grid of 0.04 s at every other save, so those
    saves are interpolated): the phases' maxima, minima, slack spells, time slack and snaps between the saves
    are the same (1e-12: the same steps, binned by other saves; an interpolated save is not read), the phase
    table prints the same, and saved at every step the largest
    value between two saves is the saved one (1e-9: the save is interpolated at round-off from the step) and
    the spells are those :func:`jaxmbd.statistics.slack_events` finds in the record.  Where the outputs at every
    step would not fit in memory, the run reads them at the saves and says so."""
    text = pathlib.Path(FILE).read_text().replace('file = "barge_hydro.nc"', f'file = "{pathlib.Path(FILE).parent.resolve() / "barge_hydro.nc"}"')
    text = text.replace("damping = 2.0e4                           # N s/m\n", "damping = 2.0e4\nwinch = true\n")
    text = text.replace("duration = 200.0                          # s\n", "")
    path = tmp_path / "phased.toml"
    path.write_text(text[: text.index("[operability]")] + _PHASES)
    loaded = jaxmbd.load_system(path)
    start = start_of(loaded)
    dt = loaded.integrator.dt
    res = {sd: run(loaded, start, settings=settings_of(loaded, n_realisations=2, save_dt=sd), hs=HS) for sd in (dt, 0.7)}
    name = "hoist/tension"
    fine = res[dt]

    def per_phase(r, key, reduce):
        b, ph = np.asarray(r.between[name][key], float), np.asarray(r.phase)
        return np.array([[reduce(b[i][ph[i] == k]) for k in range(3)] for i in range(2)])

    for key, reduce in (("max", np.max), ("min", np.min), ("slack_entries", np.sum), ("slack_seconds", np.sum),
                        ("max_once_slack", np.max), ("snap", lambda a: np.nanmax(a, initial=-1.0))):
        want = per_phase(fine, key, reduce)
        for sd in (0.7,):
            np.testing.assert_allclose(per_phase(res[sd], key, reduce), want, rtol=1e-12, atol=1e-9, err_msg=f"{key} at {sd}")
    assert per_phase(fine, "slack_entries", np.sum).sum() > 0  # the sea is one that slackens the rope
    one = [fine.realisation(i) for i in range(2)]
    assert one[0].phase_table([name]) == res[0.7].realisation(0).phase_table([name])
    for r in one:
        x = np.asarray(r.outputs[name])
        np.testing.assert_allclose(r.between[name]["max"], x, rtol=1e-9)
        keep = np.append(np.diff(r.time) > 0, True)  # a phase boundary is saved twice
        spells = slack_events(r.time[keep], x[keep], x[0])
        assert int(np.sum(r.between[name]["slack_entries"])) == len(spells)
        snaps = [e.snap for e in spells if e.snap is not None]  # the snaps, each in the save where its spell ended
        got = r.between[name]["snap"]
        assert np.nanmax(got, initial=-1.0) == pytest.approx(max(snaps, default=-1.0), rel=1e-9)
        assert np.isfinite(got).sum() <= len(snaps)
        # the run table's maximum; the steps' at least the saves' (the step's value in the scan and the save's in the
        # outputs program agree to round-off: 1e-12)
        assert r.largest(name) == np.max(r.between[name]["max"]) >= np.max(x) * (1 - 1e-12)
    # saved every 0.7 s the samples alone miss what the steps saw
    coarse = np.asarray(res[0.7].outputs[name])
    assert np.nanmax(coarse) < 0.9 * np.max(per_phase(fine, "max", np.max))
    # where the outputs at every step of the longest phase would not fit in memory: the saves only, and said so
    monkeypatch.setattr(scenario_module, "TRACK_BYTES", 2**10)
    with pytest.warns(UserWarning, match=r"\(302 steps x 3 outputs x 2 realisations, 0.0138 MB\) exceed 0.000977 MB: its maxima and "
                                         "ranges are read at the saves only"):
        saves_only = run(loaded, start, settings=settings_of(loaded, n_realisations=2, save_dt=0.7), hs=HS)
    assert saves_only.between == {}
    np.testing.assert_array_equal(saves_only.outputs[name], res[0.7].outputs[name])
