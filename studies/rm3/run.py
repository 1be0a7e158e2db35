"""WEC-Sim's RM3 two-body point absorber in regular waves: time domain beside the frequency domain.

    python studies/rm3/run.py                  # full: both cases, 800 s, table, plots (about a minute)
    python studies/rm3/run.py --smoke          # CI: 380 s of the heave-only case, no plots
    python studies/rm3/run.py --data DIR       # where rm3.out lies (default ../shared/data/wecsim_rm3
                                               # beside the repository; WEC-Sim ships it in
                                               # examples/RM3/hydroData/)

The model is WEC-Sim's RM3 example: a float (annulus) sliding on a spar with a
heave plate, hydrodynamic coefficients from WEC-Sim's WAMIT run (``rm3.out``,
read in place), water density 1000 kg/m³, deep water; masses equal to the
displaced water ("equilibrium"), WEC-Sim's inertias, centres of mass at the
WAMIT body origins (float z = −0.72 m, spar z = −21.29 m); a translational PTO
between float and spar along the spar's axis, stiffness 0, damping 1.2e6 N s/m;
no coupling between the two bodies' radiation (WEC-Sim's default); regular
waves H = 2.5 m, T = 8 s, from −x (travelling along +x), ramped in over 100 s.
Two cases: the spar heave only (a prismatic joint to the world) and the spar
free in surge, heave and pitch (a planar joint, WEC-Sim's "floating 3DOF").

The frequency-domain solution of the same model (same A(ω), B(ω), F̂, C, mass,
PTO and constraints; jaxmbd.hydro.rao at ω = 2π/8 rad/s) is the reference for
the time domain's steady amplitudes.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2] / "shared" / "data" / "wecsim_rm3"

RHO, G = 1000.0, 9.81
HEIGHT, PERIOD, RAMP = 2.5, 8.0, 100.0
OMEGA = 2 * math.pi / PERIOD
PTO_DAMPING = 1.2e6
Z_FLOAT, Z_SPAR = -0.72, -21.29  # centres of mass = WAMIT body origins (m)
I_FLOAT = (20907301.0, 21306090.66, 37085481.11)  # kg m², WEC-Sim's RM3 input
I_SPAR = (94419614.57, 94407091.24, 28542224.82)
DT = 0.02
# steady-state windows, ten wave periods each: after the ramp and its transient, and at the end of 800 s
WINDOWS = {"300-380 s": (300.0, 380.0), "720-800 s": (720.0, 800.0)}
RADIATION_TOL = 0.005  # on K(t): the fit's error stays well inside the 1 % asked of the comparison


def hydro_data(data_dir):
    from jaxmbd.hydro import read_wamit

    path = Path(data_dir) / "rm3.out"
    if not path.exists():
        raise SystemExit(f"{path}: not found; pass --data DIR with WEC-Sim's rm3.out (examples/RM3/hydroData/)")
    return read_wamit(path, rho=RHO, g=G).without_body_coupling()


def model_and_system(hydro, planar: bool):
    """The RM3 as a jaxmbd System: spar from the world (prismatic z or planar xz), float on the spar."""
    import jax.numpy as jnp

    import jaxmbd as mbd
    from jaxmbd.forces import JointPTO
    from jaxmbd.hydro import HydroBody, RegularWave, SeaState
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.system import System

    V = np.asarray(hydro.displaced_volume)
    b = ModelBuilder(source="rm3")
    spar_joint = mbd.Planar((0.0, 1.0, 0.0)) if planar else mbd.Prismatic((0.0, 0.0, 1.0))
    b.add_body("spar", body=Body(RHO * V[1], (0, 0, 0), np.diag(I_SPAR)), joint=spar_joint, joint_name="spar_dof",
               placement=Placement.from_xyz_rpy((0.0, 0.0, Z_SPAR), (0.0, 0.0, 0.0)))
    b.add_body("float", body=Body(RHO * V[0], (0, 0, 0), np.diag(I_FLOAT)), joint=mbd.Prismatic((0.0, 0.0, 1.0)),
               joint_name="pto_slide", parent="spar",
               placement=Placement.from_xyz_rpy((0.0, 0.0, Z_FLOAT - Z_SPAR), (0.0, 0.0, 0.0)))
    model = b.build()
    hb = HydroBody.create(model, hydro, bodies=("float", "spar"), ramp_time=RAMP, radiation_tol=RADIATION_TOL)
    pto = JointPTO(name="pto", joint="pto_slide", damping=jnp.asarray(PTO_DAMPING))
    waves = SeaState(regular=RegularWave(HEIGHT, PERIOD, 0.0))
    return System(model, (hb, pto), waves=waves, name="rm3_planar" if planar else "rm3_heave")


def frequency_domain(hydro, planar: bool):
    """Complex amplitudes (per unit wave amplitude) of the 12 DOFs at the two reference points, from
    the constrained linear equations: reduced coordinates [spar heave, float − spar along the axis],
    or [spar surge, heave, pitch, float − spar] with the float's surge x_s + (z_f − z_s) θ_s."""
    from jaxmbd.hydro import rao

    V = np.asarray(hydro.displaced_volume)
    M = np.zeros((12, 12))
    for k, (m, I) in enumerate(((RHO * V[0], I_FLOAT), (RHO * V[1], I_SPAR))):
        M[6 * k : 6 * k + 3, 6 * k : 6 * k + 3] = m * np.eye(3)
        M[6 * k + 3 : 6 * k + 6, 6 * k + 3 : 6 * k + 6] = np.diag(I)
    if planar:
        P = np.zeros((12, 4))
        P[6, 0] = P[0, 0] = 1.0  # spar surge moves both
        P[8, 1] = P[2, 1] = 1.0  # spar heave moves both
        P[10, 2] = P[4, 2] = 1.0  # pitch, common
        P[0, 2] = Z_FLOAT - Z_SPAR  # the float's reference point above the spar's: θ e_y × r = (r_z θ, 0, 0)
        P[2, 3] = 1.0  # float relative heave
    else:
        P = np.zeros((12, 2))
        P[8, 0] = P[2, 0] = 1.0
        P[2, 1] = 1.0
    d = np.zeros(12)
    d[2], d[8] = 1.0, -1.0
    Bpto = PTO_DAMPING * np.outer(d, d)
    X = rao(hydro, M, wave_direction=0.0, damping_ext=Bpto, constraint=P, omega=OMEGA)
    return np.asarray(X)[0]


def fit_harmonic(ts, x, t0, t1):
    """Least squares x ≈ c0 + c1 t + Re(X e^{−iωt}) over [t0, t1] (whole periods): X, mean and drift rate."""
    m = (ts >= t0 - 1e-9) & (ts <= t1 + 1e-9)
    t, y = ts[m], x[m]
    Gm = np.stack([np.ones_like(t), t - t0, np.cos(OMEGA * t), np.sin(OMEGA * t)], 1)
    c = np.linalg.lstsq(Gm, y, rcond=None)[0]
    return c[2] + 1j * c[3], c[0], c[1]


def run_case(hydro, planar, duration):
    import jax

    from jaxmbd.simulation import Integrator, simulate

    system = model_and_system(hydro, planar)
    t = time.perf_counter()
    res = simulate(system, duration, integrator=Integrator("rk4", dt=DT), save_dt=0.1, key=jax.random.key(0))
    wall = time.perf_counter() - t
    ts = np.asarray(res.time)
    eta = np.asarray(res.outputs["hydro/eta"])  # (time, 12): float then spar, surge ... yaw, m and rad
    rel = np.asarray(res.outputs["pto/position"])
    power = np.asarray(res.outputs["pto/power"])
    out = {"wall_s": wall, "ts": ts, "eta": eta, "rel": rel, "power": power}
    for window, (t0, t1) in WINDOWS.items():
        if t1 > ts[-1] + 1e-9:
            continue
        amp = {}
        for name, series in (("float heave", eta[:, 2]), ("spar heave", eta[:, 8]), ("relative heave", rel),
                             ("spar surge", eta[:, 6]), ("spar pitch", eta[:, 10])):
            amp[name] = fit_harmonic(ts, series, t0, t1)
        m = (ts >= t0 - 1e-9) & (ts < t1 - 1e-9)  # whole periods: the end point left out
        out[window] = {"amp": amp, "mean_power": float(np.mean(power[m]))}
    if planar:
        s = (ts >= 150.0 - 1e-9)
        out["surge_range_150"] = float(np.ptp(eta[s, 6]))
        out["surge_travel_150"] = float(eta[-1, 6] - eta[s, 6][0])
    return out


def pitch_free_decay(hydro):
    """The planar model's pitch mode in calm water, from 2° of pitch: natural period (s) and damping
    ratio, from the zero crossings and the decay of successive peaks over 600 s."""
    import jax.numpy as jnp

    from jaxmbd.simulation import Integrator, simulate
    from jaxmbd.system import System

    planar = model_and_system(hydro, True)
    system = System(planar.model, planar.forces, waves=None, name="rm3_pitch_decay")
    q0 = jnp.zeros(system.model.nq).at[2].set(math.radians(2.0))
    res = simulate(system, 600.0, q0=q0, integrator=Integrator("rk4", dt=DT), save_dt=0.1)
    ts, th = np.asarray(res.time), np.asarray(res.q[:, 2])
    up = np.where((th[:-1] < 0) & (th[1:] >= 0))[0]
    tz = ts[up] - th[up] * (ts[up + 1] - ts[up]) / (th[up + 1] - th[up])
    period = float(np.mean(np.diff(tz)))
    peaks = [np.max(th[(ts >= a) & (ts < b)]) for a, b in zip(tz[:-1], tz[1:])]
    delta = float(np.mean(np.log(np.asarray(peaks[:-1]) / np.asarray(peaks[1:]))))
    return period, delta / math.sqrt(4 * math.pi**2 + delta**2)


def parametric_growth(ts, pitch, t0, t1):
    """Growth rate (1/s) of the pitch oscillation at half the wave frequency: the envelope of the
    half-frequency part (least squares per 4 wave periods) fitted by an exponential over [t0, t1]."""
    w = OMEGA / 2
    centres, amps = [], []
    for a in np.arange(t0, t1 - 4 * PERIOD + 1e-9, PERIOD):
        m = (ts >= a) & (ts < a + 4 * PERIOD)
        Gm = np.stack([np.ones(m.sum()), np.cos(w * ts[m]), np.sin(w * ts[m]), np.cos(OMEGA * ts[m]),
                       np.sin(OMEGA * ts[m])], 1)
        c = np.linalg.lstsq(Gm, pitch[m], rcond=None)[0]
        centres.append(a + 2 * PERIOD)
        amps.append(math.hypot(c[1], c[2]))
    rate, _ = np.polyfit(centres, np.log(amps), 1)
    return float(rate)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="380 s of the heave-only case, no plots")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder holding WEC-Sim's rm3.out")
    args = ap.parse_args(argv)
    hydro = hydro_data(args.data)
    a = HEIGHT / 2
    cases = [("heave", False)] if args.smoke else [("heave", False), ("planar", True)]
    duration = 380.0 if args.smoke else 800.0
    rows, results = [], {}
    for label, planar in cases:
        fd = frequency_domain(hydro, planar) * a
        td = run_case(hydro, planar, duration)
        results[label] = td
        fd_vals = {"float heave": fd[2], "spar heave": fd[8], "relative heave": fd[2] - fd[8],
                   "spar surge": fd[6], "spar pitch": fd[10]}
        names = ["float heave", "spar heave", "relative heave"] + (["spar surge", "spar pitch"] if planar else [])
        fd_power = 0.5 * PTO_DAMPING * OMEGA**2 * abs(fd[2] - fd[8]) ** 2
        for window in WINDOWS:
            if window not in td:
                continue
            w = td[window]
            for n in names:
                X, ref = w["amp"][n][0], fd_vals[n]
                k = 180 / math.pi if "pitch" in n else 1.0
                rows.append({"case": label, "window": window, "quantity": n, "unit": "deg" if "pitch" in n else "m",
                             "time_domain": abs(X) * k, "frequency_domain": abs(ref) * k,
                             "difference_percent": 100 * (abs(X) / abs(ref) - 1),
                             "phase_difference_deg": math.degrees(np.angle(X / ref))})
            rows.append({"case": label, "window": window, "quantity": "mean PTO power", "unit": "kW",
                         "time_domain": w["mean_power"] / 1e3, "frequency_domain": fd_power / 1e3,
                         "difference_percent": 100 * (w["mean_power"] / fd_power - 1), "phase_difference_deg": float("nan")})
        print(f"{label}: {td['wall_s']:.1f} s of wall time for {duration:.0f} s", flush=True)
    print(f"{'case':7s} {'window':10s} {'quantity':16s} {'unit':4s} {'time domain':>12s} {'freq. domain':>12s} "
          f"{'diff %':>8s} {'phase deg':>9s}")
    for r in rows:
        print(f"{r['case']:7s} {r['window']:10s} {r['quantity']:16s} {r['unit']:4s} {r['time_domain']:12.4f} "
              f"{r['frequency_domain']:12.4f} {r['difference_percent']:8.2f} {r['phase_difference_deg']:9.2f}")
    if "planar" in results:
        p = results["planar"]
        for window in WINDOWS:
            amp = p[window]["amp"]
            print(f"planar, {window}: mean surge {amp['spar surge'][1]:.3f} m, surge drift {amp['spar surge'][2] * 1e3:.3f} "
                  f"mm/s, mean pitch {math.degrees(amp['spar pitch'][1]):.4f} deg")
        print(f"planar: spar surge travel 150-800 s {p['surge_travel_150']:.3f} m (range {p['surge_range_150']:.3f} m)")
    if args.smoke:
        return rows
    summary = {"rows": rows}
    if "planar" in results:
        p = results["planar"]
        period, zeta = pitch_free_decay(hydro)
        fd = frequency_domain(hydro, True) * a
        m_float = RHO * float(np.asarray(hydro.displaced_volume)[0])
        f_float = abs(-OMEGA**2 * m_float * fd[2] - 1j * OMEGA * PTO_DAMPING * (fd[2] - fd[8]))
        C = np.asarray(hydro.hydrostatic_stiffness)
        k_pitch = C[4, 4] + C[10, 10]
        eps = (Z_FLOAT - Z_SPAR) * f_float / k_pitch
        wn = 2 * math.pi / period
        # principal parametric resonance of θ̈ + 2ζω_n θ̇ + ω_n² (1 + ε cos Ωt) θ = 0 near Ω = 2ω_n:
        # growth rate √((εω_n/4)² − (Ω/2 − ω_n)²) − ζω_n (the detuning from T = 2 x 8 s included)
        predicted = math.sqrt(max((eps * wn / 4) ** 2 - (OMEGA / 2 - wn) ** 2, 0.0)) - zeta * wn
        observed = parametric_growth(p["ts"], p["eta"][:, 10], 450.0, 800.0)
        summary["pitch_mode"] = {"period_s": period, "damping_ratio": zeta, "float_vertical_force_N": f_float,
                                 "pitch_stiffness_Nm_per_rad": k_pitch, "epsilon": eps,
                                 "growth_rate_predicted_per_s": predicted, "growth_rate_observed_per_s": observed}
        print(f"pitch mode: T = {period:.2f} s, damping ratio {zeta:.4f}; float vertical force {f_float / 1e3:.0f} kN, "
              f"epsilon = {eps:.3f}; half-frequency growth rate {observed:.4f} 1/s (Mathieu: {predicted:.4f} 1/s)")
        summary["planar_surge"] = {"range_after_150s_m": p["surge_range_150"], "travel_150_800s_m": p["surge_travel_150"]}
        for window in WINDOWS:
            amp = p[window]["amp"]
            summary["planar_surge"][window] = {"mean_m": amp["spar surge"][1], "drift_m_per_s": amp["spar surge"][2],
                                               "mean_pitch_deg": math.degrees(amp["spar pitch"][1])}
        summary["heave_amplitude_planar_vs_heave_only_percent"] = {
            window: {n: 100 * (abs(p[window]["amp"][n][0]) / abs(results["heave"][window]["amp"][n][0]) - 1)
                     for n in ("float heave", "spar heave", "relative heave")} for window in WINDOWS}
    (HERE / "results.json").write_text(json.dumps(summary, indent=1, default=float) + "\n")
    plot(results)
    return rows


def plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for label, r in results.items():
        ts = r["ts"]
        axes[0].plot(ts, r["eta"][:, 2], label=f"float heave ({label})", lw=0.8)
        axes[0].plot(ts, r["eta"][:, 8], label=f"spar heave ({label})", lw=0.8)
        axes[1].plot(ts, r["power"] / 1e3, label=label, lw=0.8)
        if label == "planar":
            axes[2].plot(ts, r["eta"][:, 6], label="spar surge (m)", lw=0.8)
            axes[2].plot(ts, np.degrees(r["eta"][:, 10]), label="spar pitch (deg)", lw=0.8)
    axes[0].set_ylabel("heave (m)")
    axes[1].set_ylabel("PTO power (kW)")
    axes[2].set_ylabel("spar surge (m), pitch (deg)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3)
    fig.suptitle("RM3, regular waves H = 2.5 m, T = 8 s, PTO damping 1.2e6 N s/m")
    fig.tight_layout()
    fig.savefig(HERE / "rm3_time_series.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
