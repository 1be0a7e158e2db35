"""Ham et al. (2009), Fig. 8-9: floating crane lifting 1,000 t in a regular wave (H 0.5 m, T 10 s, stern to bow).

Prints the maximum hook load against the paper's 1,098 t, a sensitivity of
the dynamic amplification to the hoist-rope stiffness (which the paper does
not give), and plots heave and pitch of barge and cargo with the tension
(regular_wave.png).  The same crane in irregular seas over many
realisations is `jaxmbd demo`.

    python studies/floating_crane/run.py           # 300 s per case
    python studies/floating_crane/run.py --smoke   # 30 s, one rope stiffness (CI)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmbd.examples import floating_crane
from jaxmbd.hydro import RegularWave, SeaState
from jaxmbd.simulation import Integrator, simulate, static_equilibrium
from jaxmbd.spatial import quat_to_matrix, matrix_to_rpy

HERE = Path(__file__).parent
G, TONNE = 9.81, 1000.0
PAPER_MAX_T = 1098.0


def run_case(EA: float, duration: float, hydrostatics: str = "linear", hoist: str = "ropes"):
    """One regular-wave run; ``hoist = "links"``: the paper's closed loop with rigid links and a cut
    joint (EA is then not used).  Returns the system, the result and the hook load (N) over time."""
    system, q_guess = floating_crane(waves=SeaState(regular=RegularWave(0.5, 10.0, 0.0)), rope_EA=EA, hydrostatics=hydrostatics,
                                     hoist=hoist)
    q0 = static_equilibrium(system, q_guess, tol=1e-7 if hoist == "links" else 1e-10)
    res = simulate(system, duration, save_dt=0.1, integrator=Integrator("rk4", dt=0.05), q0=q0, key=jax.random.key(0))
    if hoist == "links":  # link 1's pull on the cargo (its joint) and link 2's (the cut joint's force)
        T = (np.linalg.norm(np.asarray(res.outputs["joint/cargo_hook/wrench"])[:, :3], axis=1)
             + np.linalg.norm(np.asarray(res.outputs["cut/force"]), axis=1))
    else:
        T = res.outputs["hoist1/tension"] + res.outputs["hoist2/tension"]
    return system, res, T


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args(argv)
    duration = 30.0 if args.smoke else 300.0
    stiffness = [1.2e9] if args.smoke else [0.3e9, 1.2e9, 4.8e9]
    rows = []
    cases = [(EA, "linear", "ropes") for EA in stiffness] + [(1.2e9, "nonlinear", "ropes")]
    cases += [] if args.smoke else [(np.inf, "linear", "links")]
    for EA, hydrostatics, hoist in cases:
        system, res, T = run_case(EA, duration, hydrostatics, hoist)
        late = res.time > min(100.0, duration / 2)
        pitch = np.degrees(np.ptp(np.asarray(res.outputs["hydro/eta"])[late, 4])) / 2
        rows.append((EA, hydrostatics, T[late].max() / G / TONNE, T[late].max() / T[0], pitch))
        if EA == 1.2e9 and hydrostatics == "linear" and not args.smoke:
            plot(system, res, T)
        if hoist == "links":
            print(f"cut joint: closure error at most {np.max(np.asarray(res.outputs['cut/error'])):.2g} m, "
                  f"solve residual at most {np.max(np.asarray(res.outputs['cut/residual'])):.2g}")
    print(f"{'rope EA (GN, each of 2)':>24}{'hydrostatics':>14}{'max hook load (t)':>20}{'DAF':>8}{'pitch amplitude (deg)':>24}")
    for EA, hydrostatics, Tm, daf, pitch in rows:
        label = "rigid links, cut joint" if EA == np.inf else f"{EA / 1e9:.1f}"
        print(f"{label:>24}{hydrostatics:>14}{Tm:>20.1f}{daf:>8.4f}{pitch:>24.3f}")
    print(f"{'paper (Ham et al. 2009)':>24}{'non-linear':>14}{PAPER_MAX_T:>20.1f}{PAPER_MAX_T / 1000:>8.3f}")
    return rows


def plot(system, res, T):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = system.model
    sb, sc = model.q_slice("barge"), model.q_slice("cargo")
    pitch = lambda q: np.degrees(np.asarray(jax.vmap(lambda x: matrix_to_rpy(quat_to_matrix(x))[1])(jnp.asarray(q))))
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    axes[0].plot(res.time, res.q[:, sb][:, 2], label="barge")
    axes[0].plot(res.time, res.q[:, sc][:, 2] - res.q[0, sc][2], label="cargo (from its rest height)")
    axes[0].set_ylabel("heave (m)")
    axes[1].plot(res.time, pitch(res.q[:, sb][:, 3:7]), label="barge")
    axes[1].plot(res.time, pitch(res.q[:, sc][:, 3:7]), label="cargo")
    axes[1].set_ylabel("pitch (deg)")
    axes[2].plot(res.time, T / G / TONNE, color="tab:red")
    axes[2].axhline(PAPER_MAX_T, color="k", ls="--", lw=0.8, label="paper's maximum, 1,098 t")
    axes[2].set_ylabel("hook load (t)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    axes[0].set_title("Floating crane, regular wave H = 0.5 m, T = 10 s, stern to bow (Ham et al. 2009 Fig. 9)")
    fig.tight_layout()
    fig.savefig(HERE / "regular_wave.png", dpi=120)
    plt.close(fig)
    print(f"wrote {HERE / 'regular_wave.png'}")


if __name__ == "__main__":
    main()
