"""Study (a) on Cibicik et al. (2019)'s full crane vessel (``studies/crane_vessel_mc``): tune the motion-compensation
platform's PD gains and a sway damper at the hook to lower the king's reaction moment and the payload
sway, over training realisations; report before/after on held-out realisations.

The full model: vessel on a free joint with linear hydrodynamics (50 radiation states, wave
excitation), platform roll/pitch under ``MotionCompensation`` ("on"), slew/luff/knuckle under a
gravity-compensated ``JointPD``, hook and payload on two free revolute joints (q6, q7), dynamic
positioning.  Cibicik et al. (2019) hangs the payload on a rigid pendulum (no rope stiffness), so the rope's
"stiffness and damping" of the issue become a viscous damper on the hook joints q6, q7 (an
anti-sway device; ``JointPD`` with K_p = 0), started at a negligible value.

    python studies/tuning/crane_vessel.py            # the numbers in README.md (about 3-5 min on 2 cores, compiles included)
    python studies/tuning/crane_vessel.py --smoke    # 4 s runs, 1 realisation, 1 iteration (CI)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxmbd import optim  # noqa: E402
from jaxmbd.optim import objectives as obj  # noqa: E402
from jaxmbd.control import JointPD  # noqa: E402
from jaxmbd.simulation import Integrator, static_equilibrium  # noqa: E402
from studies.crane_vessel_mc.system import build  # noqa: E402

SEA = dict(hs=5.0, omega_p=1.26, mean_direction_deg=135.0)  # the crane_vessel_mc study's sea state
HAND_SET = dict(mc_kp=2.0e9, mc_kd=4.0e8, hook_damping=1.0e4)


def system_with_damper(n_frequencies, n_directions):
    system, q_guess = build("on", "I", n_frequencies=n_frequencies, n_directions=n_directions)
    damper = JointPD(name="hook_damper", joints=("q6", "q7"), setpoint=jnp.zeros(2), kp=jnp.zeros(2),
                     kd=jnp.full(2, HAND_SET["hook_damping"]), gravity_compensation=False)
    system = eqx.tree_at(lambda s: s.forces, system, system.forces + (damper,))
    # rest at the start (the waves ramp in over 20 s); surge, sway and yaw are held by the DP spring
    return system, static_equilibrium(system, q_guess, tol=1e-9)


def sway_rms(start):
    def f(o):
        return jnp.sqrt(jnp.mean(o["sway/theta1"][start:] ** 2 + o["sway/theta2"][start:] ** 2))

    f.label = "sway RMS"
    return f


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--skip", type=float, default=20.0, help="s left out of the objective (wave ramp)")
    p.add_argument("--n-train", type=int, default=4)
    p.add_argument("--n-test", type=int, default=8)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--lr", type=float, default=0.25)
    p.add_argument("--n-frequencies", type=int, default=30)
    p.add_argument("--n-directions", type=int, default=5)
    p.add_argument("--out", type=Path, default=HERE)
    a = p.parse_args(argv)
    if a.smoke:
        a.duration, a.skip, a.n_train, a.n_test, a.steps, a.n_frequencies, a.n_directions = 4.0, 2.0, 1, 1, 1, 6, 1
    a.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    system, q0 = system_with_damper(a.n_frequencies, a.n_directions)
    dt, save_dt = 0.1, 0.2
    ts = optim.time_grid(a.duration, save_dt, dt)
    start = int(round(a.skip / save_dt))
    train = jax.random.split(jax.random.key(0), a.n_train)
    test = jax.random.split(jax.random.key(1000), a.n_test)
    ps = optim.ParameterSet([
        optim.Parameter("mc_kp", "mc.kp", HAND_SET["mc_kp"], lower=2e8, upper=2e10),
        optim.Parameter("mc_kd", "mc.kd", HAND_SET["mc_kd"], lower=4e7, upper=4e9),
        optim.Parameter("hook_damping", "hook_damper.kd", HAND_SET["hook_damping"], lower=1e3, upper=1e7),
    ])
    moment = obj.wrench("q3", "moment", start=start)
    unit = [obj.measure(moment, "smooth_max", sharpness=20.0, scale=1e6), sway_rms(start)]
    prob = optim.Problem(system, ps, None, q0, ts, Integrator("rk4", dt=dt), keys=train)

    # reference values at the hand-set parameters (so both terms start at 1)
    ref_p = dataclasses.replace(prob, objective=lambda o: jnp.stack([t(o) for t in unit]))
    ref = np.asarray(jax.jit(ref_p.per_realisation)(ps.u0())).mean(axis=0)
    terms = [obj.measure(moment, "smooth_max", sharpness=20.0, scale=1e6 * ref[0]),
             lambda o, r=ref[1]: unit[1](o) / r]
    prob = dataclasses.replace(prob, objective=obj.weighted_sum([(1.0, terms[0]), (1.0, terms[1])]))
    print(f"references at the hand-set parameters: king moment {ref[0]:.3f} MN m (smooth max), "
          f"sway RMS {np.degrees(ref[1]):.3f} deg ({time.perf_counter() - t_start:.0f} s)", flush=True)

    res = optim.tune(jax.jit(prob.loss), ps.u0(), parameters=ps, method="adam", steps=a.steps, learning_rate=a.lr,
                     gradient_mode="forward", out=a.out / "cv_history.json",
                     attrs={"study": "a (crane_vessel_mc)", "duration_s": a.duration, "n_train": a.n_train,
                            "n_test": a.n_test, "sea": SEA})

    # held out: independent keys, before and after (studies/tuning/run.py: finish)
    from studies.tuning.run import finish

    return finish(prob, res, train, test, terms, ["king moment (smooth max)", "payload sway (RMS)"], a.out, "cv",
                  plot=plot_series, title="study (a), Cibicik et al. (2019) crane vessel: training objective and parameters",
                  attrs={"reference_king_moment_MNm": float(ref[0]), "reference_sway_rms_deg": float(np.degrees(ref[1])),
                         "seconds_to_tuned": time.perf_counter() - t_start,
                         "setup": {"duration_s": a.duration, "skip_s": a.skip, "dt": dt, "save_dt": save_dt,
                                   "n_train": a.n_train, "n_test": a.n_test, "n_frequencies": a.n_frequencies,
                                   "n_directions": a.n_directions, "gradient": "forward mode (3 JVPs)", "sea": SEA}})


def plot_series(prob, u0, u1, key, path):
    from studies.tuning.run import plot_before_after

    rows = [("king reaction moment |(nx, ny)| (MN m)",
             lambda o: np.hypot(o["joint/q3/wrench"][:, 3], o["joint/q3/wrench"][:, 4]) / 1e6),
            ("payload sway θ1 (deg)", lambda o: np.degrees(np.asarray(o["sway/theta1"]))),
            ("payload sway θ2 (deg)", lambda o: np.degrees(np.asarray(o["sway/theta2"])))]
    plot_before_after(prob, u0, u1, key, path, rows,
                      f"study (a), Cibicik et al. (2019) crane vessel: one held-out realisation, JONSWAP Hs {SEA['hs']} m, "
                      f"ωp {SEA['omega_p']} rad/s")


if __name__ == "__main__":
    main()
