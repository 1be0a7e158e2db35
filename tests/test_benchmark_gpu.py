"""benchmarks/gpu.py runs on the CPU with a tiny batch and writes its table (float32, the path with the casts).

Half a minute of compile for a script that is run by hand: ``pytest -m slow``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.mark.slow
def test_gpu_benchmark_runs_one_tiny_batch(tmp_path):
    from benchmarks import gpu

    out = tmp_path / "gpu.md"
    rows = gpu.main(["--quick", "--sizes", "2", "--dtypes", "float32", "--duration", "1", "--out", str(out)])
    (dtype, n, chunk, first, wall), = rows
    assert (dtype, n, chunk) == ("float32", 2, 2) and first >= wall > 0
    text = out.read_text()
    assert "| float32 | 2 | 2 |" in text and "realisations/s" in text and "Device:" in text
