"""A sweep shared by two CPU processes through jax.distributed, on one machine."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxmbd.netcdf import open_result


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # 26 s; the cells dealt between processes stay in the default suite (tests/test_operability.py)
def test_two_processes_share_a_sweep(tmp_path):
    worker = Path(__file__).parent / "sweep_worker.py"
    env = dict(os.environ, JAXMBD_COORDINATOR=f"127.0.0.1:{free_port()}", JAXMBD_NUM_PROCESSES="2")
    procs = [
        subprocess.Popen([sys.executable, str(worker), str(tmp_path)], env=dict(env, JAXMBD_PROCESS_ID=str(i)),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(2)
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert "process 0/2 ran [(0.5, 5.0), (1.0, 5.0)]" in outs[0], outs[0]
    assert "process 1/2 ran [(0.5, 7.0), (1.0, 7.0)]" in outs[1], outs[1]
    table = open_result(tmp_path / "operability.nc")
    assert table["operable"].shape == (2, 2)
    assert np.all(np.isfinite(table["line1/force"].values))
