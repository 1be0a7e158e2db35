"""Markdown tables (ours beside Hong et al. (2016)'s) from results.json and results_rope40.json, for the README.

    python studies/osv_lift/tables.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from studies.osv_lift.run import PAPER_T7, PAPER_T8, PAPER_T9  # noqa: E402


def _row(r):
    return f"{r['max_t']:.1f} | {r['daf']:.3f} | {r['tip_range']:.2f}"


def table7(res, title):
    print(f"\n{title}\n")
    print("| body | heading (deg) | paper max T (t) | paper DAF | paper tip osc. (m) | ours max T (t) | ours DAF | ours tip osc. (m) |")
    print("|---|---|---|---|---|---|---|---|")
    for h in (0, 45, 90):
        for body in ("rigid", "flexible"):
            r = next(x for x in res["table7"] if x["body"] == body and x["heading"] == h)
            pt, pd, po = PAPER_T7[(body, h)]
            print(f"| {body} | {h} | {pt} | {pd} | {po} | {_row(r)} |")


def table8(res, title):
    print(f"\n{title}\n")
    print("| period (s) | paper flexible max T (t) | paper DAF | paper tip osc. (m) | ours flexible max T (t) | DAF | tip osc. (m) | ours rigid DAF |")
    print("|---|---|---|---|---|---|---|---|")
    rig = {r["period"]: r for r in res["table8_rigid"]}
    for r in sorted(res["table8"], key=lambda x: x["period"]):
        pt, pd, po = PAPER_T8[r["period"]]
        print(f"| {r['period']:g} | {pt} | {pd} | {po} | {_row(r)} | {rig[r['period']]['daf']:.3f} |")


def table9(res):
    print("\nTable 9 (T = 10.5 s, heading 0)\n")
    print("| body | wind (m/s) | paper max T (t) | paper DAF | ours max T (t) | ours DAF | ours static T (t) |")
    print("|---|---|---|---|---|---|---|")
    for body in ("rigid", "flexible"):
        for w in (0, 10):
            src = res["table9"] if w else res["table7"]
            r = next(x for x in src if x["body"] == body and x["heading"] == 0 and x["wind"] == w)
            pt, pd, _ = PAPER_T9[(body, w)]
            print(f"| {body} | {w} | {pt} | {pd} | {r['max_t']:.1f} | {r['daf']:.3f} | {r['static_t']:.4f} |")


def main():
    res = json.loads((HERE / "results.json").read_text())
    table7(res, "Table 7 (T = 10.5 s, no wind), 15 m hoist rope")
    table8(res, "Table 8 (flexible, heading 0, no wind), 15 m hoist rope")
    table9(res)
    for r in res.get("undeformed_start", []):
        print(f"\nflexible, boom released undeformed: max {r['max_t']:.1f} t, DAF {r['daf']:.3f}, min {r['min_daf']:.3f}")
    if (HERE / "cost.json").exists():
        print("\n| model | RK4 step (s) | wall s per simulated s | steps per wall s |\n|---|---|---|---|")
        for c in json.loads((HERE / "cost.json").read_text()):
            print(f"| {c['model']} | {c['dt']:g} | {c['wall_per_sim_s']:.3f} | {c['steps_per_s']:.0f} |")
    p40 = HERE / "results_rope40.json"
    if p40.exists():
        r40 = json.loads(p40.read_text())
        table7(r40, "Table 7 with a 40 m hoist rope (sensitivity)")
        table8(r40, "Table 8 with a 40 m hoist rope (sensitivity)")


if __name__ == "__main__":
    main()
