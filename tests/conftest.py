import os
from pathlib import Path

os.environ.setdefault("JAXMBD_X64", "1")
os.environ.setdefault("JAXMBD_CACHE_DIR", "off")  # commands run in-process keep no compiled programs on disk

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
