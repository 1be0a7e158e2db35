"""The whole installation of a 175 t manifold from an OSV, deck to seabed, over realisations of an
irregular sea: per phase the hook load's extremes and DAF, slack and snap, the crane tip's motion,
the landing's velocity and force; the splash zone beside DNV-RP-H103's simplified method.

    python studies/subsea_installation/run.py            # 16 realisations, without and with heave compensation
    python studies/subsea_installation/run.py --smoke    # one realisation (CI)
    python studies/subsea_installation/run.py --cost     # wall time against the same lift in air
    python studies/subsea_installation/run.py --smoke --heading 90   # one realisation in beam seas

Writes ``results.json``, ``results.md`` and ``installation.png`` (full form), ``cost.json`` (--cost).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxmbd  # noqa: E402,F401  (float64)
from jaxmbd.scenario import Scenario  # noqa: E402
from jaxmbd.simulation import Integrator  # noqa: E402
from jaxmbd.statistics import slack_events  # noqa: E402
from jaxmbd.system import System  # noqa: E402
from studies.subsea_installation.system import (  # noqa: E402
    A33,
    AREAS,
    BOOM_DIR,
    BOOM_LENGTH,
    CD,
    HALF,
    M_MANIFOLD,
    RHO_W,
    SPLASH_SPEED,
    STEEL_VOLUME,
    TONNE,
    WEIGHT,
    G,
    build,
    operation,
)

INTEGRATOR = Integrator("rk4", dt=0.02)
SAVE_DT = 0.1
HS, TP, HEADING = 2.0, 9.0, 180.0
N_REALISATIONS = 16
AIR_PHASES = ("lift-off", "over-boarding", "lowering to the water")


@eqx.filter_jit
def _tip(system: System, q, v):
    """World position and velocity of the boom tip over time, (n, 3) each."""
    tip = jnp.asarray(BOOM_LENGTH * BOOM_DIR)

    def one(q, v):
        return system.context(0.0, q, v).point("boom", tip)

    return jax.vmap(one)(q, v)


def static_hook_load(out):
    """The quasi-static hook load at each sample (N): the manifold's weight less the buoyancy of its
    submerged part, and half the falls' weight (the rope's share that the one-segment rope hangs on
    the hook)."""
    return WEIGHT - RHO_W * G * STEEL_VOLUME * np.asarray(out["water/submerged"]) + 0.5 * np.asarray(out["hoist/rope_weight"])


def phase_table(system, res) -> list[dict]:
    """One row per phase that ran: duration (s), hook load extremes (t), DAF = max of hook load over its
    quasi-static value, slack spells (below 10 % of it) and the largest snap (t), the crane tip's
    vertical range (m) and largest vertical speed (m/s); landing: the impact velocity (m/s, the
    fastest corner at its first touch) and the largest seabed force (t)."""
    out = res.outputs
    t = np.asarray(res.time)
    hook = np.asarray(out["hoist/hook_load"])
    static = static_hook_load(out)
    tip, tip_v = (np.asarray(a) for a in _tip(system, jnp.asarray(res.q), jnp.asarray(res.v)))
    rows = []
    for k, name in enumerate(res.phase_names):
        m = np.asarray(res.phase) == k
        if not m.any():
            continue
        ratio = hook[m] / static[m]
        row = {"phase": name, "start_s": float(t[m][0]), "duration_s": float(t[m][-1] - t[m][0]),
               "max_hook_load_t": float(hook[m].max() / G / TONNE), "min_hook_load_t": float(hook[m].min() / G / TONNE),
               "static_t": float(np.median(static[m]) / G / TONNE), "daf": float(ratio.max()),
               "tip_heave_range_m": float(np.ptp(tip[m, 2])), "tip_heave_speed_ms": float(np.abs(tip_v[m, 2]).max()),
               "tip_heave_accel_ms2": _largest_acceleration(t[m], tip_v[m, 2])}
        # on deck the falls are slack by design, and a landing ends with them let go
        events = [] if name == "lift-off" else [e for e in slack_events(t[m], ratio, 1.0) if e.end is not None]
        row["slack_events"] = len(events)
        row["max_snap_t"] = (max(e.snap * np.interp(e.snap_time, t[m], static[m]) for e in events) / G / TONNE
                             if events else None)
        if name == "landing":
            row.update(_landing(t[m], {key: np.asarray(v)[m] for key, v in out.items() if key.startswith("seabed_")}))
        rows.append(row)
    return rows


def _largest_acceleration(t, v):
    """max |dv/dt| from the saved velocity (central differences; phase boundaries repeat a time)."""
    keep = np.diff(t, prepend=t[0] - 1.0) > 1e-9
    return float(np.abs(np.gradient(v[keep], t[keep])).max()) if keep.sum() > 2 else 0.0


def _landing(t, seabed):
    """Impact velocity at the first touch of each corner (the fastest) and the largest total force."""
    speeds = []
    for i in range(4):
        c = seabed[f"seabed_{i}/compression"]
        touch = np.flatnonzero(c > 0)
        if touch.size:
            speeds.append(float(seabed[f"seabed_{i}/closing_speed"][touch[0]]))
    total = sum(seabed[f"seabed_{i}/force"] for i in range(4))
    return {"impact_velocity_ms": max(speeds) if speeds else None, "max_seabed_force_t": float(total.max() / G / TONNE)}


def run_realisations(system, q0, scenario, n, seed=0, progress=print):
    rows, series = [], None
    keys = jax.random.split(jax.random.key(seed), n)
    for r in range(n):
        t0 = time.perf_counter()
        res = scenario.run(system, q0=q0, save_dt=SAVE_DT, integrator=INTEGRATOR, waves=system.waves.realise(keys[r]))
        table = phase_table(system, res)
        rows.append({"realisation": r, "wall_s": time.perf_counter() - t0, "phases": table,
                     "events": [dict(name=e.name, time=e.time, trigger=e.trigger) for e in res.events]})
        if series is None:
            series = res
        progress(f"  realisation {r}: {res.time[-1]:.0f} s simulated in {rows[-1]['wall_s']:.1f} s; "
                 + ", ".join(f"{p['phase']} DAF {p['daf']:.2f}" for p in table))
    return rows, series


def summarise(rows) -> list[dict]:
    """Per phase over the realisations: mean and largest of each figure."""
    names = [p["phase"] for p in rows[0]["phases"]]
    out = []
    for k, name in enumerate(names):
        ph = [r["phases"][k] for r in rows if len(r["phases"]) > k]

        def col(key):
            return np.array([p[key] for p in ph if p.get(key) is not None], float)

        s = {"phase": name, "n": len(ph)}
        for key in ("duration_s", "max_hook_load_t", "daf", "tip_heave_range_m", "tip_heave_speed_ms",
                    "tip_heave_accel_ms2", "impact_velocity_ms", "max_seabed_force_t"):
            v = col(key)
            if v.size:
                s[key] = {"mean": float(v.mean()), "max": float(v.max())}
        v = col("min_hook_load_t")
        s["min_hook_load_t"] = {"mean": float(v.mean()), "min": float(v.min())}
        s["static_t"] = float(np.median(col("static_t")))
        s["slack_realisations"] = int(sum(p["slack_events"] > 0 for p in ph))
        snaps = col("max_snap_t")
        s["max_snap_t"] = float(snaps.max()) if snaps.size else None
        out.append(s)
    return out


# ---- DNV-RP-H103 (2011) section 4.3, the simplified method, for the same object and sea ----

def tz_of_tp(tp, gamma=3.3):
    """Zero-up-crossing period of a JONSWAP sea (DNV-RP-C205 3.5.5.6)."""
    return tp * (0.6673 + 0.05037 * gamma - 0.006230 * gamma**2 + 0.0003341 * gamma**3)


def dnv_splash_zone(hs, tz, v_ct, a_ct, eta_ct, *, lowering=SPLASH_SPEED, slamming_coefficient=5.0, perforation=0.30):
    """Characteristic hydrodynamic force in the splash zone (N) and its parts, the manifold fully
    submerged just under the surface (centre of the submerged part d = h/2 deep), its roof
    entering the water for the slamming (d = 0):

        ζ_a = 0.9 H_s,  v_w = ζ_a (2π/T_z) e^{−4π² d / (T_z² g)},  a_w = ζ_a (2π/T_z)² e^{−4π² d / (T_z² g)}
        v_r = v_c + √(v_ct² + v_w²)
        F_D = ½ ρ C_D A_p v_r²,   F_slam = ½ ρ C_s A_s v_s² (v_s: v_r with d = 0),
        F_M = √([(M + A33) a_ct]² + [(ρV + A33) a_w]²),   F_ρ = ρ g A_w √(ζ_a² + η_ct²)
        F_hyd = √((F_D + F_slam)² + (F_M − F_ρ)²)

    with A_p the roof's area, A_s its solid part (1 − perforation), A_w the steel's waterplane area
    (V / h) and v_ct, a_ct, η_ct the crane tip's vertical velocity, acceleration and motion."""
    zeta = 0.9 * hs
    w = 2 * math.pi / tz

    def decay(d):
        return math.exp(-4 * math.pi**2 * d / (tz**2 * G))

    v_w, a_w = zeta * w * decay(HALF[2]), zeta * w**2 * decay(HALF[2])
    v_r = lowering + math.hypot(v_ct, v_w)
    v_s = lowering + math.hypot(v_ct, zeta * w)
    roof = AREAS[2]
    F_D = 0.5 * RHO_W * CD * roof * v_r**2
    F_slam = 0.5 * RHO_W * slamming_coefficient * roof * (1 - perforation) * v_s**2
    F_M = math.hypot((M_MANIFOLD + A33) * a_ct, (RHO_W * STEEL_VOLUME + A33) * a_w)
    F_rho = RHO_W * G * STEEL_VOLUME / (2 * HALF[2]) * math.hypot(zeta, eta_ct)
    F_hyd = math.hypot(F_D + F_slam, F_M - F_rho)
    return {"hs": hs, "tz": tz, "v_w": v_w, "a_w": a_w, "v_ct": v_ct, "a_ct": a_ct, "F_D": F_D, "F_slam": F_slam,
            "F_M": F_M, "F_rho": F_rho, "F_hyd": F_hyd}




def dnv_for(summary, hs=HS, tp=TP):
    """The simplified method with the crane tip's motion of our splash-zone runs (means of each
    realisation's largest vertical speed and acceleration, half its vertical range), and the hook-load
    range it gives: F_static-max + F_hyd and F_static-min − F_hyd (static in air, and less the
    buoyancy)."""
    sz = next(s for s in summary if s["phase"] == "splash zone")
    d = dnv_splash_zone(hs, tz_of_tp(tp), sz["tip_heave_speed_ms"]["mean"], sz["tip_heave_accel_ms2"]["mean"],
                        0.5 * sz["tip_heave_range_m"]["mean"])
    d["max_hook_load_t"] = (WEIGHT + d["F_hyd"]) / G / TONNE
    d["min_hook_load_t"] = (WEIGHT - RHO_W * G * STEEL_VOLUME - d["F_hyd"]) / G / TONNE
    d["slack"] = d["F_hyd"] > 0.9 * (WEIGHT - RHO_W * G * STEEL_VOLUME)
    return d


def markdown(summary, title) -> str:
    def f(x, key="mean", fmt="{:.2f}"):
        return "–" if x is None else fmt.format(x[key] if isinstance(x, dict) else x)

    rows = [f"#### {title}", "",
            "| phase | duration (s) | static hook load (t) | max hook load (t), mean / largest | min hook load (t), mean / smallest "
            "| DAF, mean / largest | realisations with slack | largest snap (t) | crane-tip heave range (m), mean "
            "| crane-tip heave speed (m/s), mean | impact velocity (m/s), mean / largest | seabed force (t), mean / largest |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        imp, bed = s.get("impact_velocity_ms"), s.get("max_seabed_force_t")
        rows.append(
            f"| {s['phase']} | {f(s.get('duration_s'), fmt='{:.0f}')} | {s['static_t']:.1f} "
            f"| {f(s['max_hook_load_t'], fmt='{:.1f}')} / {f(s['max_hook_load_t'], 'max', '{:.1f}')} "
            f"| {f(s['min_hook_load_t'], fmt='{:.1f}')} / {f(s['min_hook_load_t'], 'min', '{:.1f}')} "
            f"| {f(s['daf'])} / {f(s['daf'], 'max')} | {s['slack_realisations']} of {s['n']} "
            f"| {f(s['max_snap_t'], fmt='{:.1f}')} | {f(s['tip_heave_range_m'])} | {f(s['tip_heave_speed_ms'])} "
            f"| {f(imp) + ' / ' + f(imp, 'max') if imp else '–'} | {f(bed, fmt='{:.0f}') + ' / ' + f(bed, 'max', '{:.0f}') if bed else '–'} |")
    return "\n".join(rows)


def plot(system, res, summaries, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.asarray(res.time)
    out = res.outputs
    tip, _ = (np.asarray(a) for a in _tip(system, jnp.asarray(res.q), jnp.asarray(res.v)))
    fig, axes = plt.subplots(3, 1, figsize=(11, 9), sharex=False)
    ax = axes[0]
    ax.plot(t, np.asarray(out["hoist/hook_load"]) / G / TONNE, lw=0.7, label="hook load")
    ax.plot(t, static_hook_load(out) / G / TONNE, "k:", lw=0.8, label="quasi-static")
    ax.set_ylabel("hook load (t)")
    ax2 = axes[1]
    z = np.asarray(res.q)[:, system.model.q_slice("manifold").start + 2]
    ax2.plot(t, z - HALF[2], lw=0.8, label="manifold bottom")
    ax2.axhline(0.0, color="tab:cyan", lw=0.6)
    ax2.set_ylabel("height above still water (m)")
    twin = ax2.twinx()
    twin.plot(t, tip[:, 2] - tip[0, 2], lw=0.6, color="tab:orange")
    twin.set_ylabel("crane-tip heave (m)", color="tab:orange")
    ax2.plot([], [], lw=0.6, color="tab:orange", label="crane-tip heave (right)")
    for a in axes[:2]:
        for k, name in enumerate(res.phase_names):
            m = np.asarray(res.phase) == k
            if m.any():
                a.axvspan(t[m][0], t[m][-1], color=f"C{k}", alpha=0.08)
                if a is axes[0]:  # names staggered: short phases sit side by side
                    a.text(0.5 * (t[m][0] + t[m][-1]), 1.01 + 0.07 * (k % 2), name, transform=a.get_xaxis_transform(),
                           ha="center", va="bottom", fontsize=7)
        a.grid(alpha=0.3)
        a.legend(fontsize=8, loc="center right")
        a.set_xlabel("time (s)")
    ax3 = axes[2]
    names = [s["phase"] for s in summaries[0][1]]
    x = np.arange(len(names))
    for j, (label, summ) in enumerate(summaries):
        means = [s["daf"]["mean"] for s in summ]
        largest = [s["daf"]["max"] for s in summ]
        ax3.bar(x + (j - 0.5) * 0.38, means, 0.36, label=f"{label}: mean", alpha=0.7)
        ax3.plot(x + (j - 0.5) * 0.38, largest, "k_", ms=14)
    ax3.set_xticks(x, names, fontsize=8)
    ax3.set_ylabel("DAF (hook load / quasi-static)")
    ax3.set_title(f"per phase over {summaries[0][1][0]['n']} realisations (bars: mean, ticks: largest)", fontsize=9)
    ax3.legend(fontsize=8)
    ax3.grid(alpha=0.3, axis="y")
    fig.suptitle(f"Subsea installation, 175 t manifold, Hs {HS} m, Tp {TP} s, head seas, realisation 0 "
                 "(top two panels, without heave compensation)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def in_air(system, duration):
    """The peer for --cost: the same vessel and crane with the manifold hanging from the tip in air for the
    same time (no water on the manifold, no contacts), the same scenario machinery and integrator."""
    from jaxmbd.simulation import static_equilibrium

    keep = tuple(eqx.tree_at(lambda d: d.target, f, jnp.zeros(1)) if f.name == "slew_drive" else f  # slewed out
                 for f in system.forces if not f.name.startswith(("deck_", "side_", "seabed_", "water")))
    air = System(system.model, keep, waves=system.waves, name="lift_in_air")
    q = np.array(system.model.neutral(), dtype=float)
    rope = next(f for f in system.forces if f.name == "hoist")
    q[system.model.q_slice("slew")] = 0.0
    q[system.model.q_slice("manifold")] = [*manifold_hanging(float(rope.length)), 1.0, 0.0, 0.0, 0.0]
    q0 = static_equilibrium(air, jnp.asarray(q), tol=1e-7)
    sc = Scenario.from_dict([{"name": "hanging", "set": {}, "max_duration": float(duration)}], air)
    return air, q0, sc


def manifold_hanging(length):
    """The manifold's centre hanging under the tip slewed over the side on falls of ``length`` (a guess
    for the equilibrium: the stretch is a few centimetres)."""
    from studies.subsea_installation.system import KING_BASE, KING_HEIGHT

    tip = KING_BASE + np.array([0.0, 0.0, KING_HEIGHT]) + BOOM_LENGTH * BOOM_DIR
    return tip - np.array([0.0, 0.0, length + 0.05 + HALF[2]])


def cost_one(n=N_REALISATIONS, repeats=2):
    """One process: compile both, then time 16 realisations of each in turn, ``repeats`` times."""
    system, q0 = build(HS, TP, HEADING)
    sc = operation(system)
    keys = jax.random.split(jax.random.key(0), n)
    res = sc.run(system, q0=q0, save_dt=SAVE_DT, integrator=INTEGRATOR, waves=system.waves.realise(keys[0]))  # compile
    duration = float(res.time[-1])
    air, qa, sca = in_air(system, duration)
    sca.run(air, q0=qa, save_dt=SAVE_DT, integrator=INTEGRATOR, waves=air.waves.realise(keys[0]))  # compile
    walls = {"installation": [], "lift_in_air": []}
    simulated = 0.0
    for _ in range(repeats):
        for label, (s, q, scen) in (("installation", (system, q0, sc)), ("lift_in_air", (air, qa, sca))):
            t0 = time.perf_counter()
            for k in keys:
                r = scen.run(s, q0=q, save_dt=SAVE_DT, integrator=INTEGRATOR, waves=s.waves.realise(k))
                simulated += float(r.time[-1]) if label == "installation" else 0.0
            walls[label].append(time.perf_counter() - t0)
    dry = System(system.model, tuple(f for f in system.forces if f.name != "water"), waves=system.waves)
    rhs = {label: _rhs_seconds(s, q, system.waves.realise(keys[0]))
           for label, (s, q) in (("installation", (system, q0)), ("without_water", (dry, q0)), ("lift_in_air", (air, qa)))}
    return {"installation_s": min(walls["installation"]), "lift_in_air_s": min(walls["lift_in_air"]),
            "simulated_s_per_realisation": simulated / (repeats * n), "air_duration_s": duration,
            "rhs_us": {k: v * 1e6 for k, v in rhs.items()}}


def _rhs_seconds(system, q, waves):
    from benchmarks.timing import rhs_seconds
    from jaxmbd.simulation import initial_state

    return rhs_seconds(system, initial_state(system, q), system.inputs(waves), t0=100.0)


def cost(n_processes=3, n=N_REALISATIONS):
    """``n_processes`` fresh processes, each timing 16 realisations of the installation and of the
    lift in air (the faster of two rounds); the median over the processes and their spread, written
    to cost.json and to BENCHMARKS.md's section."""
    import datetime
    import platform
    import subprocess

    runs = []
    for i in range(n_processes):
        out = subprocess.run([sys.executable, __file__, "--cost-one", "--realisations", str(n)], capture_output=True,
                             text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(f"  process {i}: {runs[-1]}")
    inst = np.array([r["installation_s"] for r in runs])
    air = np.array([r["lift_in_air_s"] for r in runs])
    ratio = inst / air
    result = {"date": datetime.date.today().isoformat(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "jax": jax.__version__, "n_realisations": n, "processes": runs,
              "installation_median_s": float(np.median(inst)), "lift_in_air_median_s": float(np.median(air)),
              "ratio_median": float(np.median(ratio)), "ratio_range": [float(ratio.min()), float(ratio.max())]}
    sim = float(np.mean([r["simulated_s_per_realisation"] for r in runs]))

    def span(x):
        return f"{np.median(x):.1f} s ({x.min():.1f}-{x.max():.1f})"

    def rhs(label):
        x = np.array([r["rhs_us"][label] for r in runs])
        return f"{np.median(x):.1f} ({x.min():.1f}-{x.max():.1f})"

    section = f"""## The subsea installation, end to end (`python studies/subsea_installation/run.py --cost`)

{result['date']}, {result['machine']}, jax {result['jax']}; median over {n_processes} processes (min-max), each the faster
of two rounds after compiling.

{n} realisations of the whole operation (six phases, {sim:.0f} s simulated each on average: the Morison object,
twelve contacts (deck, hull side, seabed), the slewing drive and the reeved winch with its rope weight; RK4 at 20 ms, events by
bisection), against the same vessel and crane lifting the manifold in air for the same time (the Morison
object and the contacts removed; the same scenario machinery, integrator and outputs):

| run | wall time for {n} realisations |
|---|---|
| installation | {span(inst)} |
| lift in air | {span(air)} |
| ratio | {np.median(ratio):.2f}x ({ratio.min():.2f}-{ratio.max():.2f}); the issue's target: at most 2x |

Where the time goes, one right-hand side (200 in a jitted scan, median of 7 calls; median over the processes):

| system | µs per evaluation |
|---|---|
| installation | {rhs('installation')} |
| installation without the Morison object | {rhs('without_water')} |
| lift in air | {rhs('lift_in_air')} |

The Morison object reads the water of the realisation's 100 wave components once per evaluation (the elevation
over the manifold, then the velocity and acceleration at its submerged centre and, for the slamming, at the
surface), about 400 cosines, sines and exponentials: most of the installation's extra cost.  The hull's wave
force sums coefficients prepared once per realisation (its phases at a fixed origin); the manifold moves
through the waves, so its phases and depth factors are new at every evaluation.
"""
    from benchmarks.report import RESULTS, assemble

    (RESULTS / "installation.md").write_text(section)
    assemble()
    print(section)
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one realisation (CI)")
    ap.add_argument("--cost", action="store_true", help="wall time against the same lift in air; cost.json")
    ap.add_argument("--cost-one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--realisations", type=int, default=N_REALISATIONS)
    ap.add_argument("--heading", type=float, default=HEADING, help="waves' direction of travel, deg (180: head seas)")
    args = ap.parse_args(argv)
    if args.cost_one:
        print(json.dumps(cost_one(args.realisations)))
        return 0
    if args.cost:
        (HERE / "cost.json").write_text(json.dumps(cost(n=args.realisations), indent=1) + "\n")
        return 0
    system, q0 = build(HS, TP, args.heading, n_frequencies=30 if args.smoke else 100)
    n = 1 if args.smoke else args.realisations
    results = {"settings": {"hs": HS, "tp": TP, "heading_deg": args.heading, "realisations": n,
                            "integrator": "rk4, dt = 0.02 s", "save_dt": SAVE_DT}}
    summaries, first = [], None
    for label, comp in (("without heave compensation", 0.0), ("with heave compensation", 1.0)):
        if args.smoke and comp:
            continue
        print(label)
        rows, series = run_realisations(system, q0, operation(system, heave_compensation=comp), n)
        first = first or series
        summ = summarise(rows)
        summaries.append((label, summ))
        results[label] = {"realisations": rows, "summary": summ}
        print(markdown(summ, label))
    results["dnv_splash_zone"] = dnv_for(summaries[0][1])
    print(json.dumps(results["dnv_splash_zone"], indent=1))
    if args.smoke or args.heading != HEADING:
        return results
    (HERE / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (HERE / "results.md").write_text("\n\n".join(markdown(s, label) for label, s in summaries) + "\n")
    plot(system, first, summaries, HERE / "installation.png")
    return 0


if __name__ == "__main__":
    r = main()
    sys.exit(r if isinstance(r, int) else 0)
