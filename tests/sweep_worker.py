"""One process of a two-process sweep (run by tests/test_multiprocess.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from jaxmbd.sweep import SweepSettings, initialise_distributed, run_sweep  # noqa: E402
from sweep_system import INTEGRATOR, moored_barge  # noqa: E402

if __name__ == "__main__":
    index, count = initialise_distributed()
    system = moored_barge()
    settings = SweepSettings(hs=[0.5, 1.0], tp=[5.0, 7.0], limits={"line1/force": 1e6}, duration=10.0,
                             n_realisations=2, save_dt=0.5, integrator=INTEGRATOR)
    done = []
    run_sweep(system, system.model.neutral(), settings, sys.argv[1], process_index=index, process_count=count,
              progress=lambda d, n, hs, tp: done.append((hs, tp)))
    print(f"process {index}/{count} ran {done}")
