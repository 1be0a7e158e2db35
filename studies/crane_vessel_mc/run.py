"""Cibicik et al. (2019), Sec. 5-6: motion compensation on vs off, crane at locations I and II, over many realisations.

    python studies/crane_vessel_mc/run.py --smoke      # location I, 1 x 30 s per mode, coarse sea, no files
    python studies/crane_vessel_mc/run.py              # full: 4 realisations x 200 s per case -> results.json,
                                                       #       results.md, PNG figures beside this file

Each realisation r uses the same waves with MC on and off (the r-th key of
``jax.random.split(key, n)``), so a reduction is a paired comparison.  A
maximum is taken over t >= ``--skip`` (the excitation ramps up over 20 s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jaxmbd  # noqa: E402,F401
from jaxmbd.simulation import Integrator, simulate  # noqa: E402
from studies.crane_vessel_mc.system import build  # noqa: E402

# Components of the reaction wrenches (our order: force first) and the paper's names.
WRENCH = {
    "q1": ("fx1", "fy1", "fz1", "nx1 (tau7)", "ny1", "nz1"),
    "q3": ("fx3", "fy3", "fz3", "nx3", "ny3", "nz3 (tau9)"),
}
# Cibicik et al. (2019), Tables 3 and 4 and Sec. 6: reduction of the maxima (%).
PAPER = {
    "I": {"theta1": 66.5, "theta2": 99.7, "nx1 (tau7)": 29.3, "ny1": 99.7, "nz1": 88.6, "fx1": 76.5, "fy1": 77.4,
          "fz1": 0.0, "nx3": 99.6, "ny3": 24.5, "nz3 (tau9)": 99.8, "fx3": 76.3, "fy3": 99.2, "fz3": 0.0},
    "II": {"theta1": 68.5, "theta2": 97.7, "nx1 (tau7)": 42.2, "ny1": 97.7, "nz1": 90.0, "fx1": 81.5, "fy1": 84.2,
           "fz1": 0.0, "nx3": 97.8, "ny3": 36.3, "nz3 (tau9)": 97.4, "fx3": 83.3, "fy3": 97.8, "fz3": 0.0},
}
ORDER = ["theta1", "theta2", "nx1 (tau7)", "ny1", "nz1", "fx1", "fy1", "fz1",
         "nx3", "ny3", "nz3 (tau9)", "fx3", "fy3", "fz3"]


def run_case(mc, location, *, duration, n, dt, save_dt, key, chunk, build_kw):
    system, q0 = build(mc, location, **build_kw)
    t = time.time()
    res = simulate(system, duration, save_dt=save_dt, integrator=Integrator("rk4", dt=dt), q0=q0, key=key,
                   n_realisations=n, chunk_size=chunk)
    return res, time.time() - t


def maxima(res, skip):
    """Per-realisation maxima of |θ1|, |θ2| (deg) and of |each wrench component| (kN, kN m), t >= skip."""
    sel = res.time >= skip
    out = {
        "theta1": np.rad2deg(np.max(np.abs(res.outputs["sway/theta1"][:, sel]), axis=1)),
        "theta2": np.rad2deg(np.max(np.abs(res.outputs["sway/theta2"][:, sel]), axis=1)),
    }
    for joint, names in WRENCH.items():
        w = res.outputs[f"joint/{joint}/wrench"][:, sel]
        for k, name in enumerate(names):
            out[name] = np.max(np.abs(w[..., k]), axis=1) / 1e3
    return out


def station_keeping(res, skip):
    """Per-realisation largest horizontal excursion of the vessel origin (m) and, with thrusters, the
    largest thruster demand over capacity, t >= skip."""
    sel = res.time >= skip
    xy = res.q[:, sel, :2] - res.q[:, :1, :2]
    out = {"excursion": np.max(np.hypot(xy[..., 0], xy[..., 1]), axis=1)}
    if "dp/demand_ratio" in res.outputs:
        out["demand_ratio"] = np.max(res.outputs["dp/demand_ratio"][:, sel], axis=(1, 2))
        out["thrust"] = np.max(res.outputs["dp/thrust"][:, sel], axis=1) / 1e3
    return out


def reductions(on, off):
    """Per realisation 100 (1 − max_on / max_off); mean, std and the reduction of the mean maxima."""
    table = {}
    for name in ORDER:
        r = 100.0 * (1.0 - on[name] / off[name])
        table[name] = {
            "mean": float(np.mean(r)),
            "std": float(np.std(r, ddof=1)) if r.size > 1 else 0.0,
            "of_means": float(100.0 * (1.0 - np.mean(on[name]) / np.mean(off[name]))),
            "max_on": float(np.mean(on[name])),
            "max_off": float(np.mean(off[name])),
        }
    return table


def markdown(tables, meta):
    lines = [
        f"Reduction of the maximum values by motion compensation, % (ours: mean ± std over "
        f"{meta['n']} paired realisations of {meta['duration']:.0f} s, maxima over t ≥ {meta['skip']:.0f} s; "
        "mean maxima MC off → on in deg, kN, kN m).  Sea: JONSWAP Hs "
        f"{meta['build'].get('hs', 5.0):g} m, ωp 1.26 rad/s"
        + ("; with the hull's mean and slow wave drift." if meta["build"].get("drift") else "."),
        "",
        "| quantity | paper I | ours I | max off → on (I) | paper II | ours II | max off → on (II) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ORDER:
        row = [name]
        for loc in ("I", "II"):
            t = tables.get(loc)
            if t is None:
                row += [f"{PAPER[loc][name]:.1f}", "-", "-"]
                continue
            e = t[name]
            row += [f"{PAPER[loc][name]:.1f}", f"{e['mean']:.1f} ± {e['std']:.1f}",
                    f"{e['max_off']:.4g} → {e['max_on']:.4g}"]
        lines.append("| " + " | ".join(row) + " |")
    for loc, sk in meta.get("station_keeping", {}).items():
        for mc, e in sk.items():
            text = f"largest horizontal excursion of the vessel origin {e['excursion']:.3g} m"
            if "demand_ratio" in e:
                thrust = ", ".join(f"{t:.0f}" for t in e["thrust"])
                text += (f"; largest thruster demand over capacity {e['demand_ratio']:.2f}; "
                         f"largest thrust per thruster {thrust} kN")
            lines.append(f"\nStation keeping, location {loc}, MC {mc} (mean over the realisations of their maxima): {text}.")
    return "\n".join(lines) + "\n"


def plots(results, skip, path_prefix, tag=""):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for loc, (on, off) in results.items():
        t = on.time
        fig, ax = plt.subplots(5, 1, figsize=(9, 11), sharex=True)
        series = [
            ("platform roll in the world (deg)", lambda r: np.rad2deg(r.outputs["mc/roll"][0])),
            ("vessel roll (deg)", lambda r: np.rad2deg(r.outputs["hydro/eta"][0, :, 3])),
            ("payload sway θ1 (deg)", lambda r: np.rad2deg(r.outputs["sway/theta1"][0])),
            ("payload sway θ2 (deg)", lambda r: np.rad2deg(r.outputs["sway/theta2"][0])),
            ("king roll moment nx3 (MN m)", lambda r: r.outputs["joint/q3/wrench"][0, :, 3] / 1e6),
        ]
        for a, (label, f) in zip(ax, series):
            a.plot(t, f(off), "--", color="tab:red", lw=0.9, label="MC off")
            a.plot(t, f(on), "-", color="tab:blue", lw=0.9, label="MC on")
            a.set_ylabel(label, fontsize=8)
            a.axvline(skip, color="0.7", lw=0.5)
            a.grid(alpha=0.3)
        ax[0].legend(loc="upper right", fontsize=8)
        ax[-1].set_xlabel("time (s)")
        spec = on.system.waves.spectrum  # the sea the runs had
        drift = "; with the hull's wave drift" if any(f.name == "drift" for f in on.system.forces) else ""
        fig.suptitle(f"Crane location {loc}: MC on (solid) vs MC off (dashed), realisation 0, JONSWAP Hs {float(spec.hs):g} m, "
                     f"ωp {2 * np.pi / float(spec.tp):.3g} rad/s, cos² spreading{drift}", fontsize=9)
        fig.tight_layout()
        fig.savefig(f"{path_prefix}_location_{loc}{tag}.png", dpi=110)
        plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="one short realisation per case, coarse sea, no files")
    p.add_argument("--realisations", type=int, default=4)
    p.add_argument("--duration", type=float, default=200.0)
    p.add_argument("--dt", type=float, default=0.1)
    p.add_argument("--skip", type=float, default=40.0)
    p.add_argument("--chunk", type=int, default=4)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--locations", default="I,II")
    p.add_argument("--deck-height", type=float, default=None, help="platform base above the waterline, m (build default 0)")
    p.add_argument("--dp-period", type=float, default=None, help="surge/sway/yaw PD natural period, s (build default 2)")
    p.add_argument("--dp", choices=("spring", "thrusters"), default=None,
                   help="the paper's surge/sway/yaw PD as a spring (build default) or a DP system with thrusters")
    p.add_argument("--dp-time-constant", type=float, default=None, help="with --dp thrusters: the closed loop's time constant, s (20)")
    p.add_argument("--drift", action="store_true", help="the mean and slow wave drift on the hull (supply_vessel_drift.csv)")
    p.add_argument("--hs", type=float, default=None, help="significant wave height, m (build default 5, the paper's)")
    p.add_argument("--tag", default="", help="suffix of the output files")
    a = p.parse_args(argv)
    build_kw = {}
    if a.deck_height is not None:
        build_kw["deck_height"] = a.deck_height
    if a.dp_period is not None:
        build_kw["dp_period"] = a.dp_period
    if a.dp is not None:
        build_kw["dp"] = a.dp
    if a.dp_time_constant is not None:
        build_kw["dp_time_constant"] = a.dp_time_constant
    if a.drift:
        build_kw["drift"] = True
    if a.hs is not None:
        build_kw["hs"] = a.hs
    if a.smoke:
        a.realisations, a.duration, a.skip, a.chunk, a.locations = 1, 30.0, 20.0, 1, "I"
        a.dt = 0.1
        build_kw.update(n_frequencies=15, n_directions=3)
    key = jax.random.key(a.seed)
    tables, results, station = {}, {}, {}
    for loc in a.locations.split(","):
        cases = {}
        for mc in ("on", "off"):
            res, wall = run_case(mc, loc, duration=a.duration, n=a.realisations, dt=a.dt, save_dt=max(a.dt, 0.1),
                                 key=key, chunk=a.chunk, build_kw=build_kw)
            cases[mc] = res
            print(f"location {loc}, MC {mc}: {a.realisations} x {a.duration:.0f} s in {wall:.1f} s", flush=True)
        results[loc] = (cases["on"], cases["off"])
        sk = {mc: station_keeping(cases[mc], a.skip) for mc in ("on", "off")}
        station[loc] = {mc: {k: (np.mean(v, axis=0).tolist() if k == "thrust" else float(np.mean(v))) for k, v in e.items()}
                        for mc, e in sk.items()}
        tables[loc] = reductions(maxima(cases["on"], a.skip), maxima(cases["off"], a.skip))
    meta = {"n": a.realisations, "duration": a.duration, "skip": a.skip, "dt": a.dt, "seed": a.seed, "build": build_kw,
            "station_keeping": station}
    text = markdown(tables, meta)
    print(text)
    if not a.smoke:
        tag = f"_{a.tag}" if a.tag else ""
        (HERE / f"results{tag}.json").write_text(json.dumps({"meta": meta, "reductions": tables, "paper": PAPER}, indent=1))
        (HERE / f"results{tag}.md").write_text(text)
        plots(results, a.skip, str(HERE / "timeseries"), tag)
    return tables


if __name__ == "__main__":
    main()
