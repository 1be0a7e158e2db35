"""``jaxmbd report``: one self-contained HTML file per set of results, its figures those of the result files,
the ranges of validity left shown with their element and time; opened in headless Chromium where it is
installed (Debian's ``chromium`` package)."""

import json
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
import xarray as xr

from jaxmbd.cli import main
from jaxmbd.netcdf import open_result
from jaxmbd.report import ReportError, write_report

# A 1 t block on 10 m of wire rope from a fixed point, let go with the rope stretched 0.2 m (20 times its
# weight): the rope throws it up and goes slack (a range of validity left), then catches it; with a scenario,
# the winch then pays out 0.5 m.
DROP = """
name = "drop"
[[bodies]]
name = "block"
joint = "free"
mass = 1000.0
radii_of_gyration = [0.5, 0.5, 0.5]
q0_xyz = [0.0, 0.0, -10.2]
[[forces]]
kind = "wire_rope"
name = "hoist"
body_a = "world"
point_a = [0.0, 0.0, 0.0]
body_b = "block"
point_b = [0.0, 0.0, 0.0]
EA = 1.0e7
length = 10.0
damping = 2.0e3
winch = true
[simulation]
method = "rk4"
dt = 0.005
save_dt = 0.01
"""
PHASES = """
[scenario]
[[scenario.phases]]
name = "fall"
max_duration = 1.0
[[scenario.phases]]
name = "pay out"
set = { hoist = { payout_rate = 0.5 } }
max_duration = 1.0
"""


class _Page(HTMLParser):
    """The page's tables (rows of (text, data-value)), its images and its sections."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self.sections, self._cell = {}, [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("class", ""), [])
        elif tag == "tr":
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = ["", a.get("data-value")]
        elif tag == "img":
            self.images.append(a["src"])
        elif tag == "section":
            self.sections.append(a)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._table[-1].append((self._cell[0].strip(), self._cell[1]))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data


def _page(path):
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    (d / "drop.toml").write_text(DROP + "duration = 2.0\n")
    (d / "phases.toml").write_text(DROP + PHASES)
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["run", str(d / "drop.toml"), "--out", str(d / "plain"), "--report"]) == 0
    (d / "plain" / "printed.txt").write_text(printed.getvalue())
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["run", str(d / "phases.toml"), "--out", str(d / "phases"), "--report"]) == 0
    (d / "phases" / "printed.txt").write_text(printed.getvalue())
    return d


def test_a_runs_report_holds_the_files_figures_and_the_range_it_left(runs):
    """Every output's row equals the result file's largest, smallest and mean maximum (1e-12, the page keeps
    the full SI figure in data-value) and shows it in the terminal table's units (degrees, the file's
    display_loads), to the digits the terminal prints (the mean of the maxima, the same string); one plot
    per output; the slack rope's range in the warnings with its element and first time; the system file's
    text and seed among the inputs."""
    from jaxmbd.units import display_unit, figure

    nc, html = runs / "plain" / "result.nc", runs / "plain" / "report.html"
    page = _page(html)
    ds = open_result(nc)
    rows = {r[0][0]: r for r in page.tables["outputs"][1:]}
    outputs = [n for n in ds.data_vars if "/" in ds[n].attrs.get("long_name", "") and not n.endswith("between")
               and not n.endswith(("entries", "seconds"))]
    assert sorted(rows) == sorted(ds[n].attrs["long_name"] for n in outputs)
    for n in outputs:
        x = np.asarray(ds[n].values, float)
        row = rows[ds[n].attrs["long_name"]]
        shown, factor = display_unit(ds[n].attrs["units"], "kN", 9.81)
        assert row[1][0] == shown and ds.attrs["display_loads"] == "kN"
        np.testing.assert_allclose([float(row[k][1]) for k in (2, 3)], [np.nanmax(x), np.nanmin(x)], rtol=1e-12)
        assert [row[k][0] for k in (2, 3)] == [figure(float(row[k][1]), factor) for k in (2, 3)]
    printed = {line.split()[0]: line.split() for line in (runs / "plain" / "printed.txt").read_text().splitlines()
               if line.strip().startswith(("hoist/tension ", "block/"))}
    assert printed["hoist/tension"][1] == rows["hoist/tension"][1][0] == "kN"
    assert printed["hoist/tension"][2] == rows["hoist/tension"][4][0]  # the mean of the maxima, as printed
    found = json.loads(ds.attrs["validity"])
    assert len(page.images) == len(outputs) and all(src.startswith("data:image/png;base64,") for src in page.images)
    assert found and page.tables["validity"][1][0][0] == found[0]["element"] == "hoist"
    assert float(page.tables["validity"][1][4][0]) == pytest.approx(found[0]["first_time"], abs=1e-3)
    inputs = dict((r[0][0], r[1][0]) for r in page.tables["inputs"])
    assert inputs["seed"] == "0" and inputs["system file"].endswith("drop.toml")
    assert "EA = 1.0e7" in html.read_text() and "range(s) of validity" in html.read_text()


def test_a_scenarios_report_has_its_phases(runs):
    """Per phase, the largest rope tension equals the result file's largest at every step over that phase's
    saves (1e-12) and is printed as the terminal's phase table prints it (kN, 4 digits)."""
    page = _page(runs / "phases" / "report.html")
    ds = open_result(runs / "phases" / "result.nc")
    phase, tension = np.asarray(ds["phase"].values), np.asarray(ds["hoist/tension_max_between"].values)
    rows = [r for r in page.tables["phases"][1:] if r[1][0] == "hoist/tension"]
    assert [r[0][0] for r in rows] == ["fall", "pay out"]
    printed = {line.split()[0]: line.split() for line in (runs / "phases" / "printed.txt").read_text().splitlines()
               if line.startswith(("fall ", "pay "))}
    for k, r in enumerate(rows):
        assert float(r[3][1]) == pytest.approx(float(np.max(tension[phase == k])), rel=1e-12)
        assert r[2][0] == "kN" and r[3][0] == printed[r[0][0].split()[0]][-4]  # phase, start, end, max, min, spells, snap
    assert [r[0][0] for r in page.tables["events"][1:]] == ["fall", "pay out"]


def test_a_path_that_is_no_result_is_one_line(tmp_path):
    (tmp_path / "x.nc").write_text("not netcdf")
    for path, message in ((tmp_path / "x.nc", "not a readable NetCDF result"), (tmp_path, "a folder without limits.nc"),
                          (tmp_path / "none.nc", "no such file or folder")):
        with pytest.raises(ReportError, match=message) as info:
            write_report([path], tmp_path / "r.html")
        assert "\n" not in str(info.value)


def test_the_report_opens_in_a_headless_browser(runs, tmp_path):
    """Chromium (headless) renders both reports in one page without a console error and writes a screenshot."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium)")
    both = write_report([runs / "plain" / "result.nc", runs / "phases" / "result.nc"], tmp_path / "both.html")
    shot = tmp_path / "shot.png"
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           f"--screenshot={shot}", "--window-size=1200,3000", both.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
    assert shot.stat().st_size > 20_000
