"""The MBS4WEC paper (MBS4WEC), Fig. 5-6: heaving buoy with an internal sliding reaction mass, time domain
(joint coordinates) vs the linear frequency-domain model, and the power absorbed by the damper.

    python studies/reaction_mass_buoy/run.py            # full: H = 0.5 m and H = 6 m, 400 s, plots, table
    python studies/reaction_mass_buoy/run.py --smoke    # CI: short run from the cached BEM file, no plots

Where the paper is silent (it gives no dimensions, masses, spring, damper or mooring values):
a vertical cylinder of radius 4 m and draught 6 m (301.6 m³, 309 t), body frame b1 on the
waterline on the axis (as in the paper); total mass = displaced mass, of which the reaction
mass is 20 % (61.8 t, a compact block, radius of gyration 1 m) at 2 m below the waterline,
sliding on a prismatic joint along the buoy's z axis; the hull (80 %) has its centre of
mass 5.125 m below the waterline (whole device 4.5 m, metacentric height 2.17 m) and the
inertia of a uniform solid cylinder 4 m x 6 m.  Spring k = m_r ω0² (internal resonance at
the wave frequency), preloaded to carry the reaction mass's weight at q = 0; damper
c = m_r ω0 (damping ratio 0.5 of the internal oscillator).  Linear mooring on the buoy at
the waterline (MBS4WEC eq. 11): surge and sway 20 kN/m, yaw 1e6 N m/rad, damping ratio
about 0.5 in surge.  Waves: regular, T = 6.8966 s, β = 0 (travelling along +x), deep water.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BEM_FILE = HERE / "buoy_bem.nc"

_spec = importlib.util.spec_from_file_location("_hinged_barges_run", HERE.parent / "hinged_barges" / "run.py")
_hb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hb)
rk4_scan, fit_harmonics, regular_wave = _hb.rk4_scan, _hb.fit_harmonics, _hb.regular_wave

RHO, G = 1025.0, 9.81
RADIUS, DRAUGHT = 4.0, 6.0
PERIOD = _hb.PERIOD
OMEGA0 = 2 * np.pi / PERIOD
OMEGAS = OMEGA0 * np.arange(1, 21) / 8.0  # 0.11 ... 2.28 rad/s; ω0 is the 8th point
BETA = 0.0
MASS_FRACTION = 0.2  # reaction mass / total mass
Z_REACTION = -2.0  # reaction mass centre at rest (m, buoy frame)
Z_TOTAL_G = -4.5  # centre of mass of the whole device (m)
K_SURGE, K_YAW = 2.0e4, 1.0e6
SPRING_ANCHOR = 20.0  # the spring runs from 20 m below the reaction mass (a point of the buoy's axis)
ZETA_PTO = 0.5


def hydro(recompute=False):
    """Capytaine run of the cylinder (1 m panels, internal lid), cached in ``buoy_bem.nc``."""
    from jaxmbd.hydro import cylinder, read_capytaine, run_capytaine

    if BEM_FILE.exists() and not recompute:
        return read_capytaine(BEM_FILE)
    body = cylinder(RADIUS, DRAUGHT, panel_size=1.0, name="buoy")
    return run_capytaine(body, omegas=OMEGAS, wave_directions=[BETA], rho=RHO, g=G, cache=BEM_FILE, name="buoy")


def parameters(hd):
    m = RHO * float(np.asarray(hd.displaced_volume)[0])
    mr = MASS_FRACTION * m
    mb = m - mr
    zb = (m * Z_TOTAL_G - mr * Z_REACTION) / mb
    Ib = mb * np.array([(3 * RADIUS**2 + DRAUGHT**2) / 12, (3 * RADIUS**2 + DRAUGHT**2) / 12, RADIUS**2 / 2])
    Ir = mr * np.ones(3)
    k = mr * OMEGA0**2
    c = 2 * ZETA_PTO * mr * OMEGA0
    a11 = float(np.asarray(hd.added_mass_inf)[0, 0])
    bm = 2 * 0.5 * np.sqrt(K_SURGE * (m + a11))
    Km = np.diag([K_SURGE, K_SURGE, 0.0, 0.0, 0.0, K_YAW])
    Cm = np.diag([bm, bm, 0.0, 0.0, 0.0, 2 * 0.5 * np.sqrt(K_YAW * Ib[2])])
    return dict(m=m, mr=mr, mb=mb, zb=zb, Ib=Ib, Ir=Ir, k=k, c=c, Km=Km, Cm=Cm)


def build_time_domain(hd, ramp_time=30.0):
    """Buoy on a Free joint (frame b1 on the waterline), reaction mass on a prismatic joint along the
    buoy's z axis, SpringDamper between them, LinearMooring on the buoy.  Returns the System."""
    import jax.numpy as jnp

    import jaxmbd as mbd
    from jaxmbd.forces import LinearMooring, SpringDamper
    from jaxmbd.hydro import HydroBody
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.system import System

    p = parameters(hd)
    b = ModelBuilder(source="reaction_mass_buoy")
    b.add_body("buoy", body=Body(p["mb"], (0, 0, p["zb"]), p["Ib"]), joint=mbd.Free(), joint_name="buoy")
    b.add_body("reaction_mass", body=Body(p["mr"], (0, 0, 0), p["Ir"]), joint=mbd.Prismatic((0.0, 0.0, 1.0)),
               parent="buoy", placement=Placement(p=np.array([0.0, 0.0, Z_REACTION])), joint_name="slider")
    model = b.build()
    hb = HydroBody.create(model, hd, bodies=("buoy",), ramp_time=ramp_time, mass=[p["m"]], com=[(0.0, 0.0, 0.0)])
    pto = SpringDamper(name="pto", body_a="buoy", body_b="reaction_mass",
                       point_a=jnp.asarray([0.0, 0.0, Z_REACTION - SPRING_ANCHOR]), point_b=jnp.zeros(3),
                       stiffness=jnp.asarray(p["k"]), damping=jnp.asarray(p["c"]),
                       rest_length=jnp.asarray(SPRING_ANCHOR + p["mr"] * G / p["k"]))
    moor = LinearMooring(name="mooring", body="buoy", point=jnp.zeros(3), reference=jnp.zeros(3),
                         stiffness=jnp.asarray(p["Km"]), damping=jnp.asarray(p["Cm"]))
    return System(model, (hb, pto, moor), name="reaction_mass_buoy")


def _rigid_mass(m, r, Ic):
    def skew(x):
        return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])

    r = np.asarray(r, float)
    M = np.zeros((6, 6))
    M[:3, :3] = m * np.eye(3)
    M[:3, 3:] = -m * skew(r)
    M[3:, :3] = m * skew(r)
    M[3:, 3:] = np.diag(Ic) + m * (r @ r * np.eye(3) - np.outer(r, r))
    return M


def constraint_matrix():
    """P (12 x 7): body DOFs of buoy and reaction mass, both at the buoy's reference point (the
    waterline on the axis), from s = [ν of the buoy (6); θ̇2 (slide rate)] (MBS4WEC's s)."""
    P = np.zeros((12, 7))
    P[:6, :6] = np.eye(6)
    P[6:, :6] = np.eye(6)
    P[8, 6] = 1.0
    return P


def frequency_domain(hd):
    """Linear model with rao(..., constraint=P): the hydro data padded to two bodies (the dry
    reaction mass has no hydrodynamic coefficients), C = buoyancy + both weights (each about the
    reference point), spring and damper on the relative heave η2_z − η1_z, mooring on the buoy.
    Returns (RAOs (n_omega, 12) complex, parameters)."""
    from jaxmbd.hydro import HydroData, rao
    from jaxmbd.hydro.body import gravity_stiffness

    p = parameters(hd)
    n = len(np.asarray(hd.omega))

    def pad(a):
        out = np.zeros(a.shape[:-2] + (12, 12))
        out[..., :6, :6] = a
        return out

    exc = np.zeros((n, len(np.asarray(hd.wave_direction)), 12), complex)
    exc[..., :6] = np.asarray(hd.excitation)
    C = np.zeros((12, 12))
    C[:6, :6] = np.asarray(hd.hydrostatic_stiffness) + gravity_stiffness(p["mb"], (0, 0, p["zb"]), G)
    C[6:, 6:] = gravity_stiffness(p["mr"], (0, 0, Z_REACTION), G)
    hd2 = HydroData(omega=hd.omega, added_mass=pad(np.asarray(hd.added_mass)),
                    radiation_damping=pad(np.asarray(hd.radiation_damping)),
                    added_mass_inf=pad(np.asarray(hd.added_mass_inf)), excitation=exc,
                    wave_direction=hd.wave_direction, hydrostatic_stiffness=C,
                    displaced_volume=np.array([float(hd.displaced_volume[0]), 0.0]),
                    centre_of_buoyancy=np.vstack([np.asarray(hd.centre_of_buoyancy), np.zeros((1, 3))]),
                    reference_point=np.zeros((2, 3)), rho=hd.rho, g=hd.g, water_depth=hd.water_depth,
                    body_names=("buoy", "reaction_mass"), source="buoy + dry reaction mass")
    M = np.zeros((12, 12))
    M[:6, :6] = _rigid_mass(p["mb"], (0, 0, p["zb"]), p["Ib"])
    M[6:, 6:] = _rigid_mass(p["mr"], (0, 0, Z_REACTION), p["Ir"])
    Kx, Cx = np.zeros((12, 12)), np.zeros((12, 12))
    Kx[:6, :6], Cx[:6, :6] = p["Km"], p["Cm"]
    e = np.zeros(12)
    e[8], e[2] = 1.0, -1.0
    Kx += p["k"] * np.outer(e, e)
    Cx += p["c"] * np.outer(e, e)
    X = rao(hd2, M, wave_direction=BETA, constraint=constraint_matrix(), stiffness_ext=Kx, damping_ext=Cx)
    return np.asarray(X), p


def run_time_domain(system, amplitudes, duration, dt):
    """Batch of regular-wave runs (vmapped over amplitude): ts, η of the buoy (n_amp, n_t, 6), slide
    s (n_amp, n_t), damper power (n_amp, n_t)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    from jaxmbd.simulation import initial_state

    ts = np.arange(0.0, duration + 1e-9, dt)
    y0 = initial_state(system)
    s_slice = system.model.q_slice("slider")

    @eqx.filter_jit
    def batch(system, amps):
        def one(a):
            w = regular_wave(a)
            ys = rk4_scan(system, y0, ts, (w, system.prepare(w), None), dt)
            hb, pto = system.forces[0], system.forces[1]

            def post(t, q, v):
                ctx = system.context(t, system.model.normalise(q), v)
                return hb._motion(ctx)[0], pto.power(ctx)

            eta, power = jax.vmap(post)(ts, ys[0], ys[1])
            return eta, ys[0][:, s_slice.start], power

        return jax.vmap(one)(amps)

    eta, s, power = batch(system, jnp.asarray(amplitudes, dtype=float))
    return ts, np.asarray(eta), np.asarray(s), np.asarray(power)


DOFS = {"surge": 0, "heave": 2, "pitch": 4}


def analyse(duration=400.0, dt=0.05, heights=(0.5, 2.0, 6.0), window_periods=10, ramp_time=30.0):
    hd = hydro()
    system = build_time_domain(hd, ramp_time=ramp_time)
    X_all, p = frequency_domain(hd)
    i0 = int(np.argmin(np.abs(np.asarray(hd.omega) - OMEGA0)))
    assert abs(float(hd.omega[i0]) - OMEGA0) < 1e-9
    X = X_all[i0]
    Xrel = X[8] - X[2]
    t0 = time.time()
    amps = 0.5 * np.asarray(heights, float)
    ts, eta, s, power = run_time_domain(system, amps, duration, dt)
    wall = time.time() - t0
    t_end = ts[-1]
    t_start = t_end - window_periods * PERIOD
    m = (ts >= t_start - 1e-9) & (ts <= t_end + 1e-9)
    out = []
    for j, a in enumerate(amps):
        rows = []
        series = [(name, eta[j, :, d], X[d]) for name, d in DOFS.items()] + [("slide (relative heave)", s[j], Xrel)]
        for name, x, Xf in series:
            Xt, c0, X2 = fit_harmonics(ts, x, OMEGA0, t_start, t_end)
            Xf = a * Xf
            fd_t = np.real(Xf * np.exp(-1j * OMEGA0 * ts[m]))
            rows.append(dict(dof=name, td=abs(Xt), fd=abs(Xf), amp_err=abs(Xt) / abs(Xf) - 1,
                             phase_err=float(np.degrees(np.angle(Xt / Xf))), mean=c0, second=abs(X2) / abs(Xf),
                             rms_err=np.sqrt(np.mean((x[m] - fd_t) ** 2)) / abs(Xf)))
        # mean power over whole periods (the window), trapezoid
        tw, pw = ts[m], power[j, m]
        p_td = float(np.sum(0.5 * (pw[1:] + pw[:-1]) * np.diff(tw)) / (tw[-1] - tw[0]))
        p_fd = 0.5 * p["c"] * OMEGA0**2 * abs(Xrel) ** 2 * a**2
        out.append(dict(rows=rows, p_td=p_td, p_fd=p_fd, p_per_a2=0.5 * p["c"] * OMEGA0**2 * abs(Xrel) ** 2))
    return dict(ts=ts, eta=eta, s=s, power=power, X=X, Xrel=Xrel, heights=np.asarray(heights, float), res=out,
                wall=wall, window=(t_start, t_end), params=p, hd=hd, system=system)


def table(res):
    lines = []
    for H, r in zip(res["heights"], res["res"]):
        lines.append(f"\nH = {H:g} m (window {res['window'][0]:.1f}-{res['window'][1]:.1f} s)")
        lines.append("| DOF | FD amplitude | TD amplitude | amplitude diff | phase diff | RMS(TD - FD)/amp | 2nd harmonic/amp | mean offset |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in r["rows"]:
            unit, sc = ("deg", np.degrees(1.0)) if row["dof"] == "pitch" else ("m", 1.0)
            lines.append(f"| {row['dof']} | {row['fd'] * sc:.4g} {unit} | {row['td'] * sc:.4g} {unit} | "
                         f"{100 * row['amp_err']:+.2f} % | {row['phase_err']:+.2f} deg | {100 * row['rms_err']:.2f} % | "
                         f"{100 * row['second']:.2f} % | {row['mean'] * sc:+.3g} {unit} |")
        lines.append(f"\nmean damper power: TD {r['p_td'] / 1e3:.3f} kW, FD ½cω²|X_rel|²a² = {r['p_fd'] / 1e3:.3f} kW "
                     f"({100 * (r['p_td'] / r['p_fd'] - 1):+.2f} %); FD per unit amplitude² {r['p_per_a2'] / 1e3:.3f} kW/m²")
    return "\n".join(lines)


def plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = res["ts"]
    for j, H in enumerate(res["heights"]):
        a = 0.5 * H
        fig, axes = plt.subplots(5, 1, figsize=(10, 11), sharex=True)
        series = [(n, res["eta"][j, :, d], res["X"][d]) for n, d in DOFS.items()]
        series.append(("slide", res["s"][j], res["Xrel"]))
        for ax, (name, x, Xf) in zip(axes, series):
            sc = np.degrees(1.0) if name == "pitch" else 1.0
            ax.plot(ts, x * sc, "b-", lw=1.0, label="time domain (joint coordinates)")
            ax.plot(ts, np.real(a * Xf * np.exp(-1j * OMEGA0 * ts)) * sc, "r--", lw=1.0, label="linear frequency domain")
            ax.set_ylabel(f"{name} [{'deg' if name == 'pitch' else 'm'}]")
            ax.axvspan(*res["window"], color="0.9", zorder=-1)
            ax.set_xlim(ts[-1] - 60.0, ts[-1])
        r = res["res"][j]
        ax = axes[-1]
        ax.plot(ts, res["power"][j] / 1e3, "b-", lw=0.8, label="damper power c l̇² (time domain)")
        ax.axhline(r["p_fd"] / 1e3, color="r", ls="--", label=f"FD mean {r['p_fd'] / 1e3:.2f} kW")
        tw = res["window"]
        ax.hlines(r["p_td"] / 1e3, *tw, color="k", lw=2, label=f"TD mean {r['p_td'] / 1e3:.2f} kW")
        ax.set_ylabel("power [kW]")
        ax.set_xlabel("t [s]")
        ax.legend(loc="upper left", fontsize=8)
        axes[0].legend(loc="lower left", fontsize=8)
        fig.suptitle(f"Buoy with internal reaction mass, H = {H:g} m, T = {PERIOD} s (last 60 s; grey: comparison window)")
        fig.tight_layout()
        fig.savefig(path.with_name(f"{path.stem}_H{H:g}m.png"), dpi=90)
        plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="short run for CI (seconds), no plots")
    ap.add_argument("--bem", action="store_true", help="recompute the BEM file")
    args = ap.parse_args(argv)
    import jaxmbd  # noqa: F401  (float64)

    if args.bem:
        hydro(recompute=True)
    if args.smoke:
        res = analyse(duration=110.0, dt=0.1, heights=(0.5,), window_periods=3, ramp_time=20.0)
    else:
        res = analyse()
    print(table(res))
    print(f"\ntime-domain runs: {res['wall']:.1f} s wall (compile included)")
    if not args.smoke:
        plot(res, HERE / "buoy.png")
    return res


if __name__ == "__main__":
    main()
