"""A stern A-frame over-boarding a 30 t load by stroking its two cylinders (``system.py``), in calm water
and over realisations of a following sea: the cylinders' forces, the hook load and the frame's motion.

    python studies/a_frame/run.py            # calm water and 8 realisations of 200 s -> results.json, results.md, a_frame.png
    python studies/a_frame/run.py --smoke    # calm water and one coarse realisation of 120 s (CI)

The full study runs the cylinders as force elements (a tree) and as bodies closed on the frame's pins by
ball loops (``build(cylinders="bodies")``), and tables the two side by side; ``--cylinders`` picks one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxmbd.simulation import Integrator, simulate  # noqa: E402
from jaxmbd.validity import check  # noqa: E402
from studies.a_frame.system import CYL_FORCE, END_DEG, M_LOAD, START_DEG, build  # noqa: E402

DT = 0.02
START_TRANSIENT = 10.0  # s: the cylinders start at their rated speed at once, which bounces the load
G = 9.81


def run(system, q0, *, duration, n, seed=1, hs=None):
    if hs is not None:
        system = eqx.tree_at(lambda s: s.waves.spectrum.hs, system, jnp.asarray(hs, dtype=float))
    res = simulate(system, duration, save_dt=0.1, integrator=Integrator("rk4", dt=DT), q0=q0, key=jax.random.key(seed),
                   n_realisations=n)
    return res, check(system, res.time, res.outputs, res.batched)


def summary(res, system):
    """Per realisation: the largest cylinder force (kN), the hook load's DAF, the tilt at the end (deg)."""
    f = np.maximum(np.abs(res.outputs["cylinder_port/force"]), np.abs(res.outputs["cylinder_starboard/force"]))
    tension = np.asarray(res.outputs["hoist/tension"])
    tilt = np.degrees(np.asarray(res.q)[..., system.model.q_start[system.model.index("aframe")]])
    late = np.asarray(res.time) >= START_TRANSIENT
    out = {"cylinder_kN": (f.max(axis=1) / 1e3).tolist(), "cylinder_start_kN": float(f[0, 0] / 1e3),
           "daf": (tension.max(axis=1) / (M_LOAD * G)).tolist(),
           "daf_after_start": (tension[:, late].max(axis=1) / (M_LOAD * G)).tolist(), "tilt_end_deg": tilt[:, -1].tolist()}
    if system.loops:  # the cylinders as bodies: the frame's pin loads and how well the loops held
        pin = np.maximum(*(np.linalg.norm(np.asarray(res.outputs[f"pin_{side}/force"]), axis=-1) for side in ("port", "starboard")))
        out |= {"pin_kN": (pin.max(axis=1) / 1e3).tolist(),
                "loop_error_m": float(max(np.max(res.outputs[f"pin_{side}/error"]) for side in ("port", "starboard")))}
    return out


def comparison(forces, bodies):
    """The cylinders as force elements beside the cylinders as bodies closed by loops (calm water, waves)."""
    def pair(key, fmt, case):
        a, b = np.mean(forces[case][key]), np.mean(bodies[case][key])
        return f"{fmt(a)} | {fmt(b)} | {100 * (b / a - 1):+.1f} %"

    rows = [("cylinder force at the start", "cylinder_start_kN", lambda x: f"{x:.0f} kN"),
            ("largest cylinder force", "cylinder_kN", lambda x: f"{x:.0f} kN"),
            ("hook load DAF", "daf", lambda x: f"{x:.3f}"),
            ("tilt at the end", "tilt_end_deg", lambda x: f"{x:.2f}°")]
    lines = ["| figure, sea | force elements (a tree) | bodies closed by ball loops | difference |", "|---|---|---|---|"]
    for case, sea in (("calm", "calm water"), ("waves", "waves (mean)")):
        for label, key, fmt in rows:
            lines.append(f"| {label}, {sea} | {pair(key, fmt, case)} |")
    for case, sea in (("calm", "calm water"), ("waves", "waves (largest)")):
        lines.append(f"| largest force of a rod on its frame pin besides the cylinder's (the loop's: the cylinder bodies' weight "
                     f"and inertia), {sea} | – | {np.max(bodies[case]['pin_kN']):.0f} kN | |")
    lines.append(f"| loops' largest closure error | – | {max(bodies['calm']['loop_error_m'], bodies['waves']['loop_error_m']):.1e} m | |")
    return "\n".join(lines) + "\n"


def table(calm, waves, n, duration):
    def stat(xs):
        return f"{np.mean(xs):.3g} (largest {np.max(xs):.3g})"

    return "\n".join([
        f"A-frame from {START_DEG:.0f}° inboard to {-END_DEG:.0f}° outboard, 30 t load in air; {duration:.0f} s runs; "
        f"waves: {n} realisations, mean over them (largest).",
        "",
        "| figure | calm water | JONSWAP Hs 2 m, Tp 8 s, following |",
        "|---|---|---|",
        f"| cylinder force at the start (static, per cylinder) | {calm['cylinder_start_kN']:.0f} kN | {waves['cylinder_start_kN']:.0f} kN |",
        f"| largest cylinder force | {stat(calm['cylinder_kN'])} kN | {stat(waves['cylinder_kN'])} kN |",
        f"| largest cylinder force over the relief force ({CYL_FORCE / 1e6:g} MN) | {np.max(calm['cylinder_kN']) * 1e3 / CYL_FORCE:.2f} | "
        f"{np.max(waves['cylinder_kN']) * 1e3 / CYL_FORCE:.2f} |",
        f"| hook load DAF (largest tension over the load's weight) | {stat(calm['daf'])} | {stat(waves['daf'])} |",
        f"| hook load DAF after the first {START_TRANSIENT:.0f} s | {stat(calm['daf_after_start'])} | {stat(waves['daf_after_start'])} |",
        f"| tilt at the end | {np.mean(calm['tilt_end_deg']):.2f}° | {np.mean(waves['tilt_end_deg']):.2f}° |",
    ]) + "\n"


def plot(calm, waves, system, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tilt_i = system.model.q_start[system.model.index("aframe")]
    fig, ax = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for res, style, label in ((calm, "--", "calm water"), (waves, "-", "waves, realisation 0")):
        t = res.time
        ax[0].plot(t, np.degrees(np.asarray(res.q)[0, :, tilt_i]), style, label=label)
        ax[1].plot(t, np.asarray(res.outputs["cylinder_port/force"])[0] / 1e3, style, label=f"port, {label}")
        ax[1].plot(t, np.asarray(res.outputs["cylinder_starboard/force"])[0] / 1e3, style, label=f"starboard, {label}")
        ax[2].plot(t, np.asarray(res.outputs["hoist/tension"])[0] / (M_LOAD * G), style, label=label)
    ax[0].set_ylabel("A-frame tilt (deg, + inboard)")
    ax[1].set_ylabel("cylinder force (kN, + pushing)")
    ax[2].set_ylabel("hook load / weight")
    ax[2].set_xlabel("time (s)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("Stern A-frame over-boarding 30 t: calm water and JONSWAP Hs 2 m, Tp 8 s, following seas", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--realisations", type=int, default=8)
    ap.add_argument("--duration", type=float, default=200.0)
    ap.add_argument("--cylinders", choices=("forces", "bodies", "both"), default=None,
                    help="the cylinders as force elements, as bodies closed by loops, or both (default: both; --smoke: forces)")
    a = ap.parse_args(argv)
    n, duration, nf = (1, 120.0, 20) if a.smoke else (a.realisations, a.duration, 100)
    kinds = {"forces": ("forces",), "bodies": ("bodies",), "both": ("forces", "bodies")}[a.cylinders or ("forces" if a.smoke else "both")]
    out, runs = {"n": n, "duration": duration}, {}
    for kind in kinds:
        system, q0 = build(n_frequencies=nf, cylinders=kind)
        calm, calm_found = run(system, q0, duration=duration, n=1, hs=0.0)
        waves, wave_found = run(system, q0, duration=duration, n=n)
        out[kind] = {"calm": summary(calm, system), "waves": summary(waves, system),
                     "warnings": sorted({f"{e.element}: {e.limit}" for e in calm_found + wave_found})}
        runs[kind] = (system, calm, waves)
    first = out[kinds[0]]
    text = table(first["calm"], first["waves"], n, duration)
    if len(kinds) == 2:
        text += "\nThe cylinders as force elements beside the cylinders as bodies (3 t barrels, 1.5 t rods) closed on the frame's pins:\n\n"
        text += comparison(out["forces"], out["bodies"])
    print(text)
    for kind in kinds:
        if out[kind]["warnings"]:
            print(f"ranges left ({kind}):", "; ".join(out[kind]["warnings"]))
    if not a.smoke:
        (HERE / "results.json").write_text(json.dumps(out, indent=1))
        (HERE / "results.md").write_text(text)
        system, calm, waves = runs[kinds[0]]
        plot(calm, waves, system, HERE / "a_frame.png")
    system, calm, waves = runs[kinds[0]]
    return out[kinds[0]], calm, waves


if __name__ == "__main__":
    main()
