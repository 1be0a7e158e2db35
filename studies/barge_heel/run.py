"""Heel of a box barge as a heavy lift moves across its deck: linear against non-linear hydrostatics.

The packaged 20 x 10 m test barge (2 m draught, 3 m deep: the deck edge immerses at
atan(2 x 1 / 10) = 11.3°) carries a 60 t lift 2 m above its deck; the lift is moved from the
centreline to the deck edge (y = 0 .. 5 m), and the static heel is solved three ways:

* wall-sided formula: GZ(φ) = sin φ (GM + ½ BM tan² φ) balances the heeling arm (w y / Δ) cos φ;
* linear hydrostatics: jaxmbd's static equilibrium of the barge with the linear restoring matrix
  (the box's exact one, so that only the linearisation differs);
* non-linear hydrostatics: the same equilibrium with the still-water pressure integrated over the
  closed hull (jaxmbd.hydro.HydroBody, hydrostatics = "nonlinear").

Prints the table, writes heel.png, and the GZ curve of the barge with the lift on the centreline
(the same pressure integration, free trim: stability.png).

    python studies/barge_heel/run.py           # 11 lift positions
    python studies/barge_heel/run.py --smoke   # 3 positions (CI)
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from scipy.optimize import brentq

import jaxmbd as mbd
from jaxmbd.hydro import HydroBody, read_capytaine, test_barge_path
from jaxmbd.hydro.hull import box_hull
from jaxmbd.hydro.stability import wall_sided_gz
from jaxmbd.simulation import static_equilibrium
from jaxmbd.spatial import matrix_to_rpy, quat_to_matrix

HERE = Path(__file__).parent
RHO, G = 1025.0, 9.81
L, B, T, D = 20.0, 10.0, 2.0, 3.0  # m: the test barge's hull, 3 m deep
DISPLACEMENT = RHO * L * B * T  # kg, 410 t
LIFT = 60.0e3  # kg
LIFT_HEIGHT = D - T + 2.0  # m above the waterline (2 m above the deck)
BARGE_MASS = DISPLACEMENT - LIFT
BARGE_KG = 0.0  # m above the waterline: the barge's own centre of gravity


def centred_kg():
    """Height of the loaded barge's centre of gravity above the waterline with the lift centred [m]."""
    return (BARGE_MASS * BARGE_KG + LIFT * LIFT_HEIGHT) / DISPLACEMENT


def hydro_exact():
    """The packaged Capytaine run with the box's exact restoring matrix (Capytaine's panel quadrature
    gives C44 1.3 % low), so that linear and non-linear differ only by the linearisation; as BEM codes
    write it, with the weight's −m g z_G of the loaded barge (lift centred) in roll and pitch."""
    hd = read_capytaine(test_barge_path())
    V = L * B * T
    C = np.zeros((6, 6))
    C[2, 2] = RHO * G * L * B
    C[3, 3] = RHO * G * (L * B**3 / 12 - V * T / 2) - DISPLACEMENT * G * centred_kg()
    C[4, 4] = RHO * G * (B * L**3 / 12 - V * T / 2) - DISPLACEMENT * G * centred_kg()
    return eqx.tree_at(lambda h: h.hydrostatic_stiffness, hd, jnp.asarray(C))


def barge_with_lift(y, hydrostatics, hd):
    b = mbd.ModelBuilder(source="barge_heel")
    m = BARGE_MASS
    b.add_body("barge", body=mbd.Body(m, (0.0, 0.0, BARGE_KG), np.diag([m * 3.5**2, m * 5.8**2, m * 5.8**2])), joint=mbd.Free())
    b.add_body("lift", body=mbd.Body(LIFT, (0.0, 0.0, 0.0), np.diag([LIFT * 1.0] * 3)), parent="barge",
               placement=mbd.Placement(p=np.array([0.0, y, LIFT_HEIGHT])))
    model = b.build()
    hull = (box_hull(L, B, D, T, panel_size=1.0),) if hydrostatics == "nonlinear" else None
    # mass and centre of gravity the restoring matrix goes with: the whole barge with the lift centred
    hb = HydroBody.create(model, hd, bodies=("barge",), radiation=False, mass=DISPLACEMENT, com=(0.0, 0.0, centred_kg()),
                          hydrostatics=hydrostatics, hulls=hull)
    return mbd.System(model, (hb,), name="barge_heel")


def heel_deg(system, q):
    R = quat_to_matrix(jnp.asarray(q)[3:7])
    return float(np.degrees(matrix_to_rpy(R)[0]))


def wall_sided_heel(y):
    """φ with sin φ (GM + ½ BM tan² φ) = (w y / Δ) cos φ, heel towards the lift (negative roll)."""
    kg = centred_kg() + T  # above the keel
    bm = B**2 / (12 * T)
    gm = T / 2 + bm - kg
    a = LIFT * y / DISPLACEMENT
    if a == 0:
        return 0.0, gm, bm
    phi = brentq(lambda p: wall_sided_gz(p, gm, bm) - a * math.cos(p), 0.0, math.radians(60))
    return -math.degrees(phi), gm, bm


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args(argv)
    ys = np.array([0.0, 2.5, 5.0]) if args.smoke else np.linspace(0.0, 5.0, 11)
    hd = hydro_exact()
    deck_edge = math.degrees(math.atan(2 * (D - T) / B))
    rows = []
    for y in ys:
        row = [y, wall_sided_heel(y)[0]]
        for mode in ("linear", "nonlinear"):
            system = barge_with_lift(float(y), mode, hd)
            q = static_equilibrium(system, system.model.neutral(), tol=1e-9)
            row.append(heel_deg(system, q))
        rows.append(row)
    rows = np.asarray(rows)
    _, gm, bm = wall_sided_heel(0.0)
    print(f"barge {L:g} x {B:g} x {D:g} m at {T:g} m draught, {DISPLACEMENT / 1e3:.0f} t; lift {LIFT / 1e3:.0f} t at "
          f"{LIFT_HEIGHT:g} m above the waterline; GM {gm:.3f} m, BM {bm:.3f} m; deck edge immerses at {deck_edge:.2f} deg")
    print(f"{'lift y (m)':>11}{'wall-sided (deg)':>18}{'linear (deg)':>14}{'non-linear (deg)':>18}{'nl - ws':>9}{'lin - ws':>10}")
    for y, ws, lin, nl in rows:
        print(f"{y:>11.2f}{ws:>18.3f}{lin:>14.3f}{nl:>18.3f}{nl - ws:>9.3f}{lin - ws:>10.3f}")
    if not args.smoke:
        plot(rows, deck_edge)
        stability_curve(hd)
    return rows, deck_edge


def plot(rows, deck_edge):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.plot(rows[:, 0], -rows[:, 1], "k--", label="wall-sided formula (exact until the deck edge immerses)")
    ax.plot(rows[:, 0], -rows[:, 2], "o-", color="tab:orange", label="linear hydrostatics (restoring matrix)")
    ax.plot(rows[:, 0], -rows[:, 3], "s-", color="tab:blue", ms=4, label="non-linear hydrostatics (pressure on the wetted hull)")
    ax.axhline(deck_edge, color="tab:red", lw=0.8, ls=":", label=f"deck-edge immersion {deck_edge:.1f} deg")
    ax.set_xlabel("lift's distance from the centreline (m)")
    ax.set_ylabel("static heel towards the lift (deg)")
    ax.set_title(f"{LIFT / 1e3:.0f} t moved across a {L:g} x {B:g} x {D:g} m barge ({DISPLACEMENT / 1e3:.0f} t)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "heel.png", dpi=120)
    plt.close(fig)
    print(f"wrote {HERE / 'heel.png'}")


def stability_curve(hd):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    system = barge_with_lift(0.0, "nonlinear", hd)
    hb = system.forces[0]
    curve = hb.stability_curves(np.arange(0.0, 90.5, 1.0))[0]["roll"]
    _, gm, bm = wall_sided_heel(0.0)
    phi = np.radians(curve.heel_deg)
    ws = wall_sided_gz(phi, gm, bm)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.plot(curve.heel_deg, curve.gz, color="tab:blue", label="pressure integration, free trim")
    ax.plot(curve.heel_deg[curve.heel_deg <= 30], ws[curve.heel_deg <= 30], "k--", label="wall-sided formula")
    ax.plot(curve.heel_deg, curve.gm * phi, ":", color="tab:orange", label=f"linear: GM φ (GM {curve.gm:.3f} m)")
    for angle, label, colour in ((curve.deck_edge_immersion_deg, "deck-edge immersion", "tab:red"),
                                 (curve.vanishing_stability_deg, "vanishing stability", "k")):
        if angle is not None:
            ax.axvline(angle, color=colour, ls="--", lw=0.8, label=f"{label} {angle:.1f} deg")
    ax.set_ylim(-0.5, 1.5)
    ax.set_xlabel("heel (deg)")
    ax.set_ylabel("righting arm GZ (m)")
    ax.set_title("Barge with the lift on the centreline")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "stability.png", dpi=120)
    plt.close(fig)
    print(f"GZ: max {curve.max_gz:.3f} m at {curve.angle_of_max_gz_deg:.1f} deg; deck edge {curve.deck_edge_immersion_deg:.2f} deg; "
          f"vanishing stability {curve.vanishing_stability_deg} deg")
    print(f"wrote {HERE / 'stability.png'}")


if __name__ == "__main__":
    main()
