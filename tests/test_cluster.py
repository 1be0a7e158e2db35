"""Sweeps and operability studies on a Dask cluster (``--dask``, ``client=``): a local ``LocalCluster`` of two
worker processes, as a user's cluster would be, with no disk shared on purpose (the client writes every cell).

The cells a cluster computes are bitwise those of a local run (the same programs on the same inputs, on the
same machine), a study resumed on the cluster takes the cells already on the client's disk, and a worker
killed mid-cell is replaced by Dask and its cell computed again: the same table, bit for bit."""

import os
import shutil
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from sweep_system import INTEGRATOR, moored_barge  # noqa: E402

import jaxmbd  # noqa: E402
from jaxmbd.cluster import as_tasks, dask_client  # noqa: E402
from jaxmbd.errors import InputError  # noqa: E402
from jaxmbd.sweep import SweepSettings, run_sweep  # noqa: E402

SETTINGS = dict(hs=[0.5, 1.0], tp=[5.0, 7.0], limits={"line1/force": 1e6}, duration=10.0, n_realisations=2, save_dt=0.5,
                integrator=INTEGRATOR)


def test_dask_beside_processes_of_jaxmbds_own_is_one_line():
    with pytest.raises(InputError, match="--dask runs every cell from one client: drop --num-processes"):
        dask_client("tcp://127.0.0.1:8786", 2)
    assert dask_client(None) is None


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  env={"JAX_PLATFORMS": "cpu"}) as cluster, distributed.Client(cluster) as c:
        yield c


def _cells(folder):
    from jaxmbd.netcdf import open_result

    out = {}
    for path in sorted(folder.glob("cell_*.nc")):
        ds = open_result(path)
        out[path.name] = (ds, dict(ds.attrs))
    return out


@pytest.mark.slow  # about a minute: two worker processes start and compile the cell's run
def test_a_sweep_on_a_dask_cluster_writes_the_local_cells_bit_for_bit(tmp_path, client):
    system = moored_barge()
    q0, settings = system.model.neutral(), SweepSettings(**SETTINGS)
    local = run_sweep(system, q0, settings, tmp_path / "local")
    (tmp_path / "dask").mkdir()
    shutil.copy(tmp_path / "local" / "cell_000_000.nc", tmp_path / "dask")  # a study resumed: one cell already there
    done = []
    table = run_sweep(system, q0, settings, tmp_path / "dask", client=client, progress=lambda d, n, hs, tp: done.append((hs, tp)))
    assert sorted(done) == [(0.5, 7.0), (1.0, 5.0), (1.0, 7.0)]  # the cluster computed the three missing
    a, b = _cells(tmp_path / "local"), _cells(tmp_path / "dask")
    assert list(a) == list(b) and len(a) == 4
    for name in a:
        assert a[name][1]["key"] == b[name][1]["key"] and a[name][1]["checksum"] == b[name][1]["checksum"], name
        for var in a[name][0].data_vars:
            np.testing.assert_array_equal(a[name][0][var].values, b[name][0][var].values, err_msg=f"{name} {var}")
    for var in local.data_vars:
        np.testing.assert_array_equal(local[var].values, table[var].values)

    # a worker killed while it computes a cell (runs of 200 s: each worker compiles again and a cell takes
    # seconds): Dask starts another worker and runs the cell again; the same bits as a local sweep
    settings = SweepSettings(**(SETTINGS | {"duration": 200.0}))
    local = run_sweep(system, q0, settings, tmp_path / "local12")
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("table", run_sweep(system, q0, settings, tmp_path / "killed",
                                                                                 client=client)))
    thread.start()
    deadline = time.monotonic() + 120
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    busy = next((w for w, tasks in client.processing().items() if tasks), None)
    assert busy is not None, "no task was seen running"
    time.sleep(0.3)  # inside the cell's compile or run
    pid = client.run(os.getpid, workers=[busy])[busy]
    assert client.processing()[busy], "the worker finished its cells before the kill"  # still computing one
    os.kill(pid, signal.SIGKILL)
    thread.join(timeout=300)
    assert not thread.is_alive() and "table" in box
    client.wait_for_workers(2, timeout=60)
    assert pid not in client.run(os.getpid, on_error="ignore").values()  # the killed worker's process is gone, another in its place
    for var in local.data_vars:
        np.testing.assert_array_equal(local[var].values, box["table"][var].values)


def _fails(hs, tp):
    raise ValueError("no such sea")


@pytest.mark.slow
def test_an_operability_study_on_a_dask_cluster_is_the_local_study(tmp_path, client):
    """The small lift's smoke study (two periods, one heading, two realisations of 30 s): the cluster's table
    is the local table, bit for bit; a task's error reaches the client with its cell."""
    import dataclasses

    from jaxmbd.operability.job import limiting_table

    loaded = jaxmbd.load_system("jaxmbd/data/small_lift.toml")
    op = loaded.operability
    op = dataclasses.replace(op, tp=op.tp[:2], headings_deg=op.headings_deg[:1], n_realisations=2, duration=30.0)
    local = limiting_table(loaded, op, out_dir=tmp_path / "local")
    remote = limiting_table(loaded, op, out_dir=tmp_path / "dask", client=client)
    for var in local.data_vars:
        assert np.array_equal(local[var].values, remote[var].values, equal_nan=local[var].dtype.kind == "f"), var
    with pytest.raises(ValueError, match="no such sea") as info:
        list(as_tasks(client, _fails, (), [(1.0, 2.0)]))
    assert "(cell (1.0, 2.0), computed on the Dask cluster)" in str(getattr(info.value, "__notes__", ""))
