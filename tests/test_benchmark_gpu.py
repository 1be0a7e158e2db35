"""benchmarks/gpu.py runs on the CPU with a tiny batch and writes its table (float32, the path with the casts).

Half a minute of compile for a script that is run by hand: ``pytest -m slow``.  It runs as the command it is, in
a process of its own: its float32 runs (inside ``jax.enable_x64(False)``) left the test worker's later float64
runs bitwise different from a fresh process's (a Dask worker's cell against the local one, tests/test_cluster.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_benchmark_runs_one_tiny_batch(tmp_path):
    out = tmp_path / "gpu.md"
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu", "--quick", "--sizes", "2", "--dtypes", "float32",
                           "--duration", "1", "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert "| float32 | 2 | 2 |" in text and "realisations/s" in text and "Device:" in text
    row = next(line for line in text.splitlines() if line.startswith("| float32 | 2 | 2 |"))
    assert all(float(x) > 0 for x in re.findall(r"\d+\.\d+", row)), row
