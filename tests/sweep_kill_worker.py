"""A one-process sweep that a test kills (SIGKILL) part-way (tests/test_sweep_integrity.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from jaxmbd.sweep import SweepSettings, run_sweep  # noqa: E402
from sweep_system import INTEGRATOR, moored_barge  # noqa: E402

SETTINGS = dict(hs=[0.5, 1.0], tp=[5.0, 7.0], limits={"line1/force": 1e6}, duration=10.0, n_realisations=2,
                save_dt=0.5, integrator=INTEGRATOR)

if __name__ == "__main__":
    system = moored_barge()
    run_sweep(system, system.model.neutral(), SweepSettings(**SETTINGS), sys.argv[1],
              progress=lambda d, n, hs, tp: print(f"cell {d}/{n}", flush=True))
