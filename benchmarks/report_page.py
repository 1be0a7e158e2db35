"""The report's size and the time to write it and to render it: ``jaxmbd report`` of the demo's result (16
realisations x 600 s of the floating crane; the demo is run first if ``out/demo`` lacks it) and of the packaged
small lift's operability study (``jaxmbd operability --smoke``, run first), each rendered to a screenshot by
headless Chromium; beside them, the same browser on a blank page (its start-up, the peer).

    python -m benchmarks.report_page             # 3 rounds; writes benchmarks/results/report_page.md, BENCHMARKS.md
    python -m benchmarks.report_page --quick     # 1 round

Needs Debian's ``chromium`` (``apt-get install chromium``).  Each figure is the median over the rounds (min-max).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from .report import RESULTS, ROOT, assemble
from .timing import processor, spread


def _render(browser: str, page: Path, shot: Path) -> float:
    t = time.perf_counter()
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}", "--window-size=1280,4000",
                    page.as_uri()], check=True, capture_output=True, timeout=300)
    return time.perf_counter() - t


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds = 1 if args.quick else 3
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("benchmarks.report_page: needs chromium (Debian: apt-get install chromium)")
    from jaxmbd.cli import main as cli
    from jaxmbd.report import write_report

    demo = Path(ROOT) / "out" / "demo" / "floating_crane.nc"
    if not demo.exists():
        cli(["demo", "--out", str(demo.parent)])
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        cli(["operability", str(Path(ROOT) / "jaxmbd/data/small_lift.toml"), "--smoke", "--out", str(d / "op")])
        blank = d / "blank.html"
        blank.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>blank</title></head><body></body></html>")
        cases = {"demo (floating crane, 16 x 600 s)": [demo], "operability study (small lift, smoke)": [d / "op"]}
        got = {name: {"write": [], "render": [], "size": 0} for name in cases}
        got_blank = []
        for _ in range(rounds):
            got_blank.append(_render(browser, blank, d / "blank.png"))
            for name, paths in cases.items():
                t = time.perf_counter()
                page = write_report(paths, d / "report.html")
                got[name]["write"].append(time.perf_counter() - t)
                got[name]["size"] = page.stat().st_size
                got[name]["render"].append(_render(browser, page, d / "shot.png"))
    version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
    lines = [
        "## The report (`python -m benchmarks.report_page`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, {version}; "
        f"median over {rounds} rounds (min-max).  Render: headless Chromium from its start to the screenshot "
        "(1280 x 4000 px) written; the blank page is the browser's own start-up.",
        "",
        "| report of | size (MB) | write (s) | render (s) |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {g['size'] / 1e6:.2f} | {spread(g['write'])} | {spread(g['render'])} |" for name, g in got.items()]
    lines += [f"| a blank page (the peer) | 0.00 | | {spread(got_blank)} |", ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "report_page.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


if __name__ == "__main__":
    main()
