"""Sweeps never mix configurations: a resumed sweep reuses a cell only if it was computed for the same
numbers, a damaged cell is recomputed, a second sweep on one folder refuses, and a sweep killed at
any moment resumes to the bitwise table of an uninterrupted one."""

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jaxmbd.sweep import SweepError, SweepSettings, _cell_path, run_sweep
from sweep_kill_worker import SETTINGS
from sweep_system import moored_barge

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def system():
    return moored_barge()


@pytest.fixture(scope="module")
def reference(system, tmp_path_factory):
    """The uninterrupted sweep: its folder and table."""
    out = tmp_path_factory.mktemp("reference")
    return out, run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out)


def _same_table(a, b):
    for name in ("line1/force", "operable"):
        np.testing.assert_array_equal(a[name].values, b[name].values)


@pytest.mark.parametrize("change, named", [
    (dict(hs=[0.5, 2.0]), "hs 1.0 -> 2.0"),
    (dict(duration=12.0), "duration 10.0 -> 12.0"),
    (dict(n_realisations=3), "realisations 2 -> 3"),
    (dict(seed=1), "seed 0 -> 1"),
])
def test_a_cell_of_another_configuration_is_refused_then_recomputed_with_force(system, reference, tmp_path,
                                                                               change, named):
    """Before, the cells were matched on their file names: Hs 4 printed "ok" from a cell of Hs 2."""
    import shutil

    out = tmp_path / "sweep"
    shutil.copytree(reference[0], out)
    settings = dataclasses.replace(SweepSettings(**SETTINGS), **change)
    with pytest.raises(SweepError, match=named):
        run_sweep(system, system.model.neutral(), settings, out)
    if "hs" not in change:
        return  # the recomputation is the same path for every change; one case runs it
    notes = []
    forced = run_sweep(system, system.model.neutral(), settings, out, force=True, note=notes.append)
    fresh = run_sweep(system, system.model.neutral(), settings, tmp_path / "fresh")
    _same_table(forced, fresh)
    assert not np.array_equal(forced["line1/force"].values, reference[1]["line1/force"].values)


def test_a_changed_system_is_refused(system, reference, tmp_path):
    import shutil

    import equinox as eqx
    import jax.numpy as jnp

    out = tmp_path / "sweep"
    shutil.copytree(reference[0], out)
    stiffer = eqx.tree_at(lambda s: s.forces[1].stiffness, system, jnp.asarray(3e4))
    with pytest.raises(SweepError, match="system"):
        run_sweep(stiffer, stiffer.model.neutral(), SweepSettings(**SETTINGS), out)


def test_a_damaged_cell_is_recomputed(system, reference, tmp_path):
    import shutil

    out = tmp_path / "sweep"
    shutil.copytree(reference[0], out)
    cell = _cell_path(out, 1, 0)
    cell.write_bytes(cell.read_bytes()[: cell.stat().st_size // 2])  # truncated
    notes = []
    table = run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out, note=notes.append)
    assert len(notes) == 1 and "cell_001_000.nc: damaged" in notes[0]
    _same_table(table, reference[1])


def test_a_second_sweep_on_the_same_folder_refuses(system, tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    (out / ".sweep.lock.0").write_text(f"{os.getpid()} {__import__('socket').gethostname()}")  # a live sweep
    with pytest.raises(SweepError, match="another sweep"):
        run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out)
    assert not list(out.glob("cell_*"))


def test_a_sweep_killed_part_way_resumes_to_the_same_table(system, reference, tmp_path):
    """SIGKILL as soon as the first cell is on disk (no clean-up runs: the lock and perhaps a temporary
    file stay); the resumed sweep takes over the stale lock and gives the uninterrupted table bitwise."""
    out = tmp_path / "sweep"
    proc = subprocess.Popen([sys.executable, str(HERE / "sweep_kill_worker.py"), str(out)], stdout=subprocess.PIPE,
                            text=True, cwd=HERE.parent)
    line = proc.stdout.readline()  # "cell 1/4": the first cell is written
    assert line.startswith("cell 1/"), line
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (out / ".sweep.lock.0").exists()
    done_before = len(list(out.glob("cell_*.nc")))
    assert 1 <= done_before < 4
    calls = []
    table = run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out,
                      progress=lambda d, n, hs, tp: calls.append(d))
    _same_table(table, reference[1])
    assert not (out / ".sweep.lock.0").exists()


def test_a_cell_computed_by_other_code_is_refused(system, reference, tmp_path, monkeypatch):
    """The same version number on edited code is other code: its cells are not reused."""
    import shutil

    import jaxmbd.sweep as sweep

    out = tmp_path / "sweep"
    shutil.copytree(reference[0], out)
    monkeypatch.setattr(sweep, "code_digest", lambda: "0.1.0+edited")
    with pytest.raises(SweepError, match="jaxmbd .* -> '0.1.0\\+edited'"):
        run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out)


def test_a_limit_below_the_start_is_refused(system, tmp_path):
    """A limit below the start (here a negative one on a line's force) was accepted and gave a table of
    no-go; every realisation's maximum includes the start, so the sweep now stops after its first cell and
    says why."""
    settings = dataclasses.replace(SweepSettings(**SETTINGS), limits={"line1/force": -1.0})
    with pytest.raises(SweepError, match=r"'line1/force' \(-1\) is below its value at the start \(435476\)"):
        run_sweep(system, system.model.neutral(), settings, tmp_path / "sweep")


def test_a_sweep_projected_past_its_time_limit_stops_with_the_estimate_and_resumes(system, reference, tmp_path):
    """A sweep of hours started without a word.  The cells computed so far (the first carries the compile)
    project the rest; past the limit (here a nanosecond; the command line's is an hour, lifted by --yes) it
    stops with the estimate after its second cell, keeping both, and a rerun resumes to the same table."""
    from jaxmbd.run import RunError

    out = tmp_path / "sweep"
    with pytest.raises(RunError, match=r"the sweep's 4 cell\(s\) to compute would take about .* \(2 of 4 done in .*--yes "
                                       r"runs it; the work done is kept"):
        run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out, time_limit=1e-9)
    assert len(list(out.glob("cell_*.nc"))) == 2
    _same_table(run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), out), reference[1])


def test_a_cells_key_holds_a_files_contents_not_its_path(tmp_path):
    """A hydrodynamic database's path is a static field of the system (its ``source``, for messages): the key
    of a cell holds the file's contents in its place, so the same file in another checkout gives the same key,
    and the file changed in place another."""
    import shutil

    from jaxmbd.hydro.capytaine_file import read_capytaine
    from jaxmbd.sweep import tree_digest

    shipped = Path(__file__).parents[1] / "jaxmbd" / "data" / "barge_hydro.nc"
    a, b = tmp_path / "a" / "hull.nc", tmp_path / "b" / "elsewhere.nc"
    for p in (a, b):
        p.parent.mkdir()
        shutil.copy(shipped, p)
    ha, hb = read_capytaine(a), read_capytaine(b)
    assert str(a) in str(ha.source) and str(b) in str(hb.source)  # the paths differ in the structure
    assert tree_digest(ha) == tree_digest(hb)
    with open(b, "ab") as f:  # the same arrays read, but another file: another key
        f.write(b"\0")
    assert tree_digest(ha) != tree_digest(hb)


def _ulps(tree, n=3):
    """Every floating-point array of ``tree`` moved by ``n`` units in the last place: what another processor's
    rounding does to a system built from the same file."""
    import jax
    import jax.numpy as jnp

    def move(x):
        if isinstance(x, jax.Array | np.ndarray) and jnp.issubdtype(x.dtype, jnp.floating):
            a = np.asarray(x)
            for _ in range(n):
                a = np.nextafter(a, np.inf)
            return jnp.asarray(a) if isinstance(x, jax.Array) else a
        return x
    return jax.tree_util.tree_map(move, tree)


def test_a_key_tells_round_off_from_a_change():
    """Two digests of the same arrays rounded differently (3 ulps in every element, and an element that is zero
    to round-off, 1e-17 against 0) differ; their summaries agree (the same study, on a processor that rounds
    differently), and the key's comparison says so.  Each change below is named: one element of a hydrodynamic
    table's size (21,600) 1e-6 heavier, a hook's mass 2 % heavier beside a ship's 1e7 kg, a default limit of inf
    made finite, a value made NaN, two elements swapped, a changed integer, an older key without a summary."""
    from jaxmbd.sweep import key_changes, same_tree, tree_digest, tree_summary

    rng = np.random.default_rng(0)
    inertia = np.zeros((3, 6, 6))
    inertia[:, [0, 1, 2], [0, 1, 2]] = np.array([1e7, 2e3, 5e4])[:, None]
    tree = {"inertia": inertia, "hull": rng.normal(size=(60, 6, 60)) + 1j * rng.normal(size=(60, 6, 60)),
            "owner": np.arange(7), "small": np.array([1e-17, 0.0, -3.0]), "limit": np.array(np.inf), "none": np.zeros(0)}
    moved = _ulps(tree)
    moved["small"] = np.array([0.0, 1e-17, -3.0 * (1 + 4e-16)])
    assert tree_digest(tree) != tree_digest(moved)
    assert same_tree(tree_summary(tree), tree_summary(moved)) == []

    def key(t):
        return {"system": tree_digest(t)[:16], "system_values": tree_summary(t), "hs": 1.0}

    assert key_changes(key(tree), key(moved)) == ([], True)
    assert key_changes(key(tree), key(tree)) == ([], False)

    def change(name, how):
        t = dict(tree, **{name: np.array(tree[name], copy=True)})
        how(t[name])
        found, rounded = key_changes(key(tree), key(t))
        assert not rounded and len(found) == 1, (name, found)
        return found[0]

    assert "['hull']" in change("hull", lambda x: x.__setitem__((3, 2, 41), x[3, 2, 41] * (1 + 1e-6)))
    assert "['inertia']" in change("inertia", lambda x: x.__setitem__((1, 0, 0), x[1, 0, 0] * 1.02))
    assert "not finite" in change("limit", lambda x: x.__setitem__((), 0.5))
    assert "not finite" in change("small", lambda x: x.__setitem__(2, np.nan))
    assert "['hull']" in change("hull", lambda x: x.__setitem__((0, 0, slice(0, 2)), x[0, 0, 1::-1].copy()))
    assert "not floating point" in change("owner", lambda x: x.__setitem__(slice(None), x[::-1].copy()))
    older = {k: v for k, v in key(tree).items() if k != "system_values"}
    assert "holds no summary" in key_changes(older, key(moved))[0][0]
    assert key_changes(dict(key(tree), hs=2.0), key(tree))[0] == ["hs 2.0 -> 1.0"]
