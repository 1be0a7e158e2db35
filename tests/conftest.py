import os
from pathlib import Path

os.environ.setdefault("JAXMBD_X64", "1")
os.environ.setdefault("JAXMBD_CACHE_DIR", "off")  # commands run in-process keep no compiled programs on disk
# The suite is dominated by compiling many small programs, not by running them.  Two XLA switches make
# its compiles cheaper: LLVM's backend optimisation at level 1, and XLA's older loop-fusion emitters in
# place of its MLIR ones (four of the longest tests: 157 s with level 0 and the MLIR emitters, 115 s
# with these two).  Not level 0 with the older emitters (94 s): that pair miscompiles the free-floating
# solve of the GZ curve (residuals of 1e-2 where every other setting gives 1e-16).
# JAXMBD_TEST_XLA_OPT picks the options: unset, these two; "level0", LLVM level 0 with the MLIR emitters
# (one check, marked `level0`, holds its bound only there: a NumPy peer to 1e-11 over a 20-s run, 7.3e-10
# with XLA's defaults and with the two above; it is skipped, saying so, under the other options, and
# .ci/run runs it with "level0"); "1", XLA's defaults, which the benchmarks and the commands keep.
_XLA_TEST_FLAGS = {"": ("--xla_backend_optimization_level=1", "--xla_cpu_use_fusion_emitters=false"),
                   "level0": ("--xla_backend_optimization_level=0",), "1": ()}
if os.environ.get("JAXMBD_TEST_XLA_OPT", "") not in _XLA_TEST_FLAGS:
    raise SystemExit(f"JAXMBD_TEST_XLA_OPT={os.environ['JAXMBD_TEST_XLA_OPT']!r}: expected unset, 'level0' or '1'")
for flag in _XLA_TEST_FLAGS[os.environ.get("JAXMBD_TEST_XLA_OPT", "")]:
    if flag.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()

# One compilation cache for the run, shared by the xdist workers (they inherit the controller's
# environment): a program that several tests compile (the same system in several files) is compiled
# once.  A fresh folder per run, so nothing carries over between runs.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ and not os.environ.get("PYTEST_XDIST_WORKER"):
    import tempfile

    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxmbd-test-xla-")
# Every program, the small ones too (JAX keeps only those over 1 s by default): tests that build the same
# system in other files, and the two workers, then share its programs (on five test files: 218 -> 196 s).
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")

# Each xdist worker on cores of its own (worker k of n takes every n-th core, where there are at least n): XLA sizes
# its thread pools to the cores a process may use, so the workers' threads no longer contend for the same cores
# (on two cores, the four longest files of the default suite 118-124 s unpinned, 106-108 s pinned, 2026-12-02).
# JAXMBD_TEST_PIN=0 leaves the workers unpinned.
if os.environ.get("JAXMBD_TEST_PIN", "1") not in ("0", "1"):
    raise SystemExit(f"JAXMBD_TEST_PIN={os.environ['JAXMBD_TEST_PIN']!r}: expected '0' (unpinned) or '1' (pinned, the default)")
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and hasattr(os, "sched_setaffinity") and os.environ.get("JAXMBD_TEST_PIN", "1") == "1":
    _cores, _n = sorted(os.sched_getaffinity(0)), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if 0 < _n <= len(_cores):
        os.sched_setaffinity(0, set(_cores[int(_worker[2:]) % _n::_n]))

import jax  # noqa: E402
import pytest  # noqa: E402

import jaxmbd  # noqa: E402,F401  (turns float64 on)

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def shared_data():
    d = SHARED / "data" / "wecsim_rm3"
    if not d.is_dir():
        pytest.skip("../shared/data/wecsim_rm3 is not present")
    return d


# The default suite runs each file's tests in one worker (`--dist loadfile`, pyproject.toml): a file's tests
# mostly build the same systems, so the programs one test compiles serve the next from memory, and a module
# fixture is built once (with `--dist load` the two workers each compiled what a file's tests shared: the
# suite's summed test time 1060 s, 960 s by files).  The files are handed out in this order (and
# `--no-loadscope-reorder` keeps it): the longest first (their summed test time by file, 15-60 s, measured
# 2026-11-27), so that the last file handed to a worker is a short one and the other does not wait.  Files not
# named follow in collection order (each under 15 s).
LONGEST_FIRST = (
    "test_operability.py", "test_loops.py", "test_no_silent_answers.py", "test_dynamics_pinocchio.py",
    "test_nonlinear_hydrostatics.py", "test_study_seed001.py", "test_flex.py", "test_system_file.py", "test_catenary.py",
    "test_positioning.py", "test_run_path.py", "test_dynamics.py", "test_mooring.py", "test_dynamics_derivatives.py",
    "test_planar_and_pto.py", "test_flex_system.py", "test_scenario.py", "test_rope.py", "test_added_mass_frames.py",
    "test_fender.py", "test_sweep_integrity.py", "test_between_saves.py", "test_study_a_frame.py", "test_report.py",
    "test_dynamics_contract.py",
)


# The slow checks go test by test to the next free worker (.ci/run: --dist load), in this order: the longest first
# (seconds on one core, measured 2026-12-02), so that neither worker is left with a long test at the end.  Tests not
# named follow in the default order (each under 60 s).  (xdist's loadgroup, which would keep a file's tests on one
# worker, groups nothing under pytest 9: it renames a node by an attribute pytest 9 no longer reads.)
SLOW_LONGEST_FIRST = (
    "test_study_installation_workability_gradient.py", "test_study_installation_operability.py",
    "test_tune_operability.py::test_the_workability_of_an_operation_in_phases_its_gradient_and_jaxmbd_tune",
    "test_workability_gradient.py", "test_drift_control_surface.py::test_the_far_field_in_water_of_finite_depth",
    "test_wave_drift.py::test_capytaines_far_field_drift_of_a_fixed_cylinder_against_maccamy_and_fuchs",
    "test_drift_control_surface.py::test_the_control_surface_drift_of_a_floating_box_equals_the_far_field",
    "test_optim.py::test_tune_reduces_loss", "test_optim.py::test_forward_mode_matches_reverse",
    "test_optim.py::test_crane_vessel_tuning_study_smoke", "test_study_operability.py",
    "test_optim.py::test_gradients_match_central_differences",
    "test_tune_operability.py::test_jaxmbd_tune_raises_a_months_workability_and_a_limiting_hs",
)


def _slow_rank(item, rank={name: k for k, name in enumerate(SLOW_LONGEST_FIRST)}):
    file, name = Path(str(item.fspath)).name, item.originalname
    return min(rank.get(file, len(rank)), rank.get(f"{file}::{name}", len(rank)))


def pytest_collection_modifyitems(config, items):
    if os.environ.get("JAXMBD_TEST_XLA_OPT", "") != "level0":
        why = pytest.mark.skip(reason="holds its bound only with LLVM at level 0: run with JAXMBD_TEST_XLA_OPT=level0 (.ci/run does)")
        for item in items:
            if item.get_closest_marker("level0"):
                item.add_marker(why)
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: (_slow_rank(item), rank.get(Path(str(item.fspath)).name, len(rank))))
