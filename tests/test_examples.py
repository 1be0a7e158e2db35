"""Every file in examples/ is named in examples/README.md and in the check below (the default suite), and runs
briefly through `jaxmbd run` (slow: reading and checking the file, a compile and a short run each, about 2 min in all)."""

from pathlib import Path

import pytest

from jaxmbd.cli import main
from jaxmbd.netcdf import open_result

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FILES = sorted(EXAMPLES.glob("*.toml"))
# seconds simulated by the slow check (a scenario's phases set their own); what each run must write
SHORT = {"four_bar": ("5", ["pin/force", "pin/error"]), "moored_barge": ("20", ["spread/fairlead_tension", "hull/eta", "drift/force"]),
         "heave_compensated_lift": ("20", ["hoist/tension", "hoist/length"]), "lift_in_phases": (None, ["hoist/tension"]),
         "wind_and_swell_lift": ("20", ["module_wind/force", "module_wind/moment", "module_wind/speed"]),
         "lift_on_raos": ("20", ["ship/eta", "ship/load_ratio", "hoist/tension"])}


def test_every_example_is_in_the_readme_and_the_check():
    readme = (EXAMPLES / "README.md").read_text()
    assert FILES and all(f"]({f.name})" in readme for f in FILES)
    assert sorted(f.stem for f in FILES) == sorted(SHORT)


@pytest.mark.slow  # a compile and a short run per file: about 2 min in all
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_an_example_runs(path, tmp_path, capsys):
    duration, outputs = SHORT[path.stem]
    args = ["run", str(path), "--out", str(tmp_path), "--realisations", "1"] + (["--duration", duration] if duration else [])
    assert main(args) == 0, capsys.readouterr().err
    results = sorted(tmp_path.glob("*.nc"))
    assert results, "no result file"
    names = set(open_result(results[0]).data_vars)  # each output by its name in the tables
    for name in outputs:
        assert name in names, (name, sorted(names)[:20])
