import os
from pathlib import Path

os.environ.setdefault("JAXMBD_X64", "1")
os.environ.setdefault("JAXMBD_CACHE_DIR", "off")  # commands run in-process keep no compiled programs on disk
# The suite is dominated by compiling many small programs, not by running them: LLVM's backend
# optimisations off make it about a quarter faster.  The arithmetic XLA emits is the same; the
# benchmarks and the commands keep XLA's defaults.  JAXMBD_TEST_XLA_OPT=1 tests with them.
if os.environ.get("JAXMBD_TEST_XLA_OPT") != "1" and "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()

# One compilation cache for the run, shared by the xdist workers (they inherit the controller's
# environment): a program that several tests compile (the same system in several files) is compiled
# once.  A fresh folder per run, so nothing carries over between runs.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ and not os.environ.get("PYTEST_XDIST_WORKER"):
    import tempfile

    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxmbd-test-xla-")

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
