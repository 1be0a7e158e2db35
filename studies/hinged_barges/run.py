"""The MBS4WEC paper (MBS4WEC), Fig. 2-4: three hinged barges in head seas, time domain vs linear frequency domain.

    python studies/hinged_barges/run.py            # full: H = 0.5 m and H = 6 m, 400 s, plots, table
    python studies/hinged_barges/run.py --smoke    # CI: short run from the cached BEM file, no plots

Where the paper is silent (it gives no dimensions, masses or mooring values):
three identical box barges 20 m long, 10 m wide, 2 m draught, 1 m apart, hinged
on the waterline at the middle of each gap; centre of mass of each barge on the
waterline at its centre (the paper puts the body frames at the centres of mass
and the hinge axes in the still-water plane); mass = displaced mass; inertia of
a uniform 20 x 10 x 4 m block.  Linear mooring (MBS4WEC eq. 11) on the root
(barge 1) at its centre: surge and sway 20 kN/m, yaw 2e7 N m/rad, critical
damping ratio about 0.5 for the surge of the whole chain.  Waves: regular,
T = 6.8966 s, travelling along +x (β = 0) from barge 1 towards barge 3 along the
chain ("head seas": the crests are parallel to the hinge axes).  Deep water.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BEM_FILE = HERE / "barges_bem.nc"

RHO, G = 1025.0, 9.81
L, B, T_DRAUGHT, GAP, HULL_DEPTH = 20.0, 10.0, 2.0, 1.0, 4.0
X_CENTRES = np.array([-(L + GAP), 0.0, L + GAP])  # barge centres (BEM reference points), m
X_HINGES = np.array([-(L + GAP) / 2, (L + GAP) / 2])  # hinge axes (on the waterline), m
PERIOD = 6.8966
OMEGA0 = 2 * np.pi / PERIOD
# 0.11 ... 1.82 rad/s, ω0 = 8th point.  Above about 1.85 rad/s the 1 m gaps resonate (piston mode,
# ω ≈ 2 rad/s), which potential flow leaves undamped and the coarse mesh spoils (negative B); the
# radiation fit extends B beyond the last point with an ω⁻³ tail instead.
OMEGAS = OMEGA0 * np.arange(1, 17) / 8.0
BETA = 0.0
K_SURGE, K_YAW = 2.0e4, 2.0e7
NAMES = ("barge1", "barge2", "barge3")
RADIATION_TOL = 0.01  # normalised L2 error of each fitted K_ij(t)


def hydro(recompute=False):
    """Multi-body BEM coefficients of the three barges solved together (coupling blocks included);
    cached in ``barges_bem.nc`` (Capytaine, 1.43 m panels, internal lids)."""
    from jaxmbd.hydro import box, read_capytaine, run_capytaine

    if BEM_FILE.exists() and not recompute:
        return read_capytaine(BEM_FILE)
    bodies = [box(L, B, T_DRAUGHT, panel_size=1.5, center=(x, 0.0), name=n) for x, n in zip(X_CENTRES, NAMES)]
    return run_capytaine(bodies, omegas=OMEGAS, wave_directions=[BETA], rho=RHO, g=G, cache=BEM_FILE,
                         name="hinged_barges")



# ----------------------------------------------------------------------------- shared helpers
def fit_harmonics(ts, x, omega, t_start, t_end):
    """Least-squares x ≈ c0 + Re(X e^{−iωt}) + Re(X2 e^{−2iωt}) over [t_start, t_end] (whole periods).
    Returns (X, c0, X2, rms residual of the fundamental alone)."""
    ts, x = np.asarray(ts), np.asarray(x)
    m = (ts >= t_start - 1e-9) & (ts <= t_end + 1e-9)
    t, y = ts[m], x[m]
    G = np.stack([np.ones_like(t), np.cos(omega * t), np.sin(omega * t), np.cos(2 * omega * t),
                  np.sin(2 * omega * t)], axis=1)
    c = np.linalg.lstsq(G, y, rcond=None)[0]
    return c[1] + 1j * c[2], c[0], c[3] + 1j * c[4]


def regular_wave(amplitude, omega=OMEGA0, beta=BETA):
    import jax.numpy as jnp

    from jaxmbd.hydro import WaveComponents, wavenumber

    w = jnp.atleast_1d(jnp.asarray(omega, dtype=float))
    return WaveComponents(amplitude=jnp.atleast_1d(jnp.asarray(amplitude, dtype=float)), omega=w,
                          wavenumber=wavenumber(w), direction=jnp.full(1, beta), phase=jnp.zeros(1))


# ----------------------------------------------------------------------------- the two models
def barge_mass(hd):
    return RHO * float(np.asarray(hd.displaced_volume)[0])


def barge_inertia(m):
    return np.array([m * (B**2 + HULL_DEPTH**2) / 12, m * (L**2 + HULL_DEPTH**2) / 12, m * (L**2 + B**2) / 12])


def mooring_matrices(hd):
    """The MBS4WEC paper eq. 11 on barge 1 at its centre: K (6x6), C (6x6)."""
    m_tot = 3 * barge_mass(hd)
    a11 = float(np.asarray(hd.added_mass_inf)[0::6, 0::6].sum())  # surge added mass of the chain
    b_surge = 2 * 0.5 * np.sqrt(K_SURGE * (m_tot + a11))
    K = np.diag([K_SURGE, K_SURGE, 0.0, 0.0, 0.0, K_YAW])
    C = np.diag([b_surge, b_surge, 0.0, 0.0, 0.0, b_surge * (L * 1.5) ** 2])
    return K, C


def build_time_domain(hd, ramp_time=30.0, planar=True):
    """Non-linear joint-coordinate model: barge 1 on a planar set of joints (surge and heave sliders,
    pitch hinge; ``planar=False``: a Free joint), placed at its centre; barges 2 and 3 on revolute
    joints about y at the hinges (body frames on the hinge axes).  Returns the System.

    Planar by default, as the paper's linear model keeps surge, heave and pitch: with the Free joint
    the chain rolls parametrically in the steep wave (the barges' roll frequency, about 1.8 rad/s, is
    twice the wave frequency, and roll has no radiation damping in this model), see the README."""
    import jax.numpy as jnp

    import jaxmbd as mbd
    from jaxmbd.forces import LinearMooring
    from jaxmbd.hydro import HydroBody, fit_radiation
    from jaxmbd.model import Body, ModelBuilder, Placement
    from jaxmbd.system import System

    m = barge_mass(hd)
    I = barge_inertia(m)
    half = (L + GAP) / 2
    b = ModelBuilder(source="hinged_barges")
    if planar:
        # barge 1 moves in the x-z plane: surge and heave sliders (massless) and pitch about y
        b.add_body("surge_slider", body=Body(0.0), joint=mbd.Prismatic((1.0, 0.0, 0.0)), joint_name="surge",
                   placement=Placement(p=np.array([X_CENTRES[0], 0.0, 0.0])))
        b.add_body("heave_slider", body=Body(0.0), joint=mbd.Prismatic((0.0, 0.0, 1.0)), parent="surge_slider",
                   joint_name="heave")
        b.add_body("barge1", body=Body(m, (0, 0, 0), I), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="heave_slider",
                   joint_name="pitch")
    else:
        b.add_body("barge1", body=Body(m, (0, 0, 0), I), joint=mbd.Free(), joint_name="root",
                   placement=Placement(p=np.array([X_CENTRES[0], 0.0, 0.0])))
    b.add_body("barge2", body=Body(m, (half, 0, 0), I), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="barge1",
               placement=Placement(p=np.array([half, 0.0, 0.0])), joint_name="hinge2")
    b.add_body("barge3", body=Body(m, (half, 0, 0), I), joint=mbd.Revolute((0.0, 1.0, 0.0)), parent="barge2",
               placement=Placement(p=np.array([2 * half, 0.0, 0.0])), joint_name="hinge3")
    model = b.build()
    # Radiation memory for the DOFs head seas excite (surge, heave, pitch of each barge, with their
    # couplings); sway, roll and yaw keep A(∞) and stay at rest by symmetry.  Each K_ij(t) to 1 % (the library's
    # default is 2 %): the chain's surge, lightly damped, follows its couplings' fit (at 2 % it was 1.8 % off the
    # frequency domain in amplitude, at 1 % 1.2 %; the README)
    dofs = [6 * k + d for k in range(3) for d in (0, 2, 4)]
    rad, _ = fit_radiation(hd, dofs=dofs, tol=RADIATION_TOL)
    hb = HydroBody.create(model, hd, bodies=NAMES, ramp_time=ramp_time, radiation=rad,
                          mass=[m] * 3, com=[(x, 0.0, 0.0) for x in X_CENTRES])
    K, C = mooring_matrices(hd)
    moor = LinearMooring(name="mooring", body="barge1", point=jnp.zeros(3),
                         reference=jnp.asarray([X_CENTRES[0], 0.0, 0.0]), stiffness=jnp.asarray(K),
                         damping=jnp.asarray(C))
    return System(model, (hb, moor), name="hinged_barges")


def constraint_matrix():
    """Velocity transformation P (18 x 8): body DOFs at the three reference points (surge ... yaw each,
    world axes) from s = [ν of barge 1 at its reference point (6); α̇2; α̇3] (MBS4WEC eq. 10)."""
    def skew(r):
        return np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])

    ey = np.array([0.0, 1.0, 0.0])
    ref = np.stack([[x, 0.0, 0.0] for x in X_CENTRES])
    hinge = np.stack([[x, 0.0, 0.0] for x in X_HINGES])
    P = np.zeros((18, 8))
    for k in range(3):
        r = ref[k]
        P[6 * k:6 * k + 3, 0:3] = np.eye(3)
        P[6 * k:6 * k + 3, 3:6] = -skew(r - ref[0])  # ω × d
        P[6 * k + 3:6 * k + 6, 3:6] = np.eye(3)
        for h in range(k):  # hinges between the root and barge k
            P[6 * k:6 * k + 3, 6 + h] = np.cross(ey, r - hinge[h])
            P[6 * k + 3:6 * k + 6, 6 + h] = ey
    return P


def frequency_domain(hd):
    """Linear model: rao(hydro, M, constraint=P, stiffness_ext/damping_ext = mooring); (n_omega, 18) RAOs."""
    from jaxmbd.hydro import rao

    m = barge_mass(hd)
    M = np.zeros((18, 18))
    for k in range(3):
        M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = m * np.eye(3)
        M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = np.diag(barge_inertia(m))
    K, C = mooring_matrices(hd)
    Kx, Cx = np.zeros((18, 18)), np.zeros((18, 18))
    Kx[:6, :6], Cx[:6, :6] = K, C
    return np.asarray(rao(hd, M, wave_direction=BETA, constraint=constraint_matrix(), stiffness_ext=Kx,
                          damping_ext=Cx))


def rk4_scan(system, y0, ts, forcing, dt):
    """Fixed-step RK4 saving at ``ts`` (a multiple of dt apart): the library's checkpointed scan."""
    from jaxmbd.simulation import Integrator, solve

    waves, _, params = forcing
    ys = solve(system, y0, ts, integrator=Integrator("rk4", dt=dt), waves=waves, params=params).ys
    return ys


def hydro_motions(system, ts, ys):
    """η of every hydro body at its reference point (the ``hydro/eta`` output), from the states."""
    import jax

    hb = system.forces[0]
    return jax.vmap(lambda t, q, v: hb._motion(system.context(t, system.model.normalise(q), v))[0])(ts, ys[0], ys[1])


def run_time_domain(system, amplitudes, duration, dt, save_dt=None):
    """Batch of regular-wave runs (one per amplitude, vmapped); returns ts, eta (n_amp, n_t, 18)
    and the states."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    from jaxmbd.simulation import initial_state

    save_dt = save_dt or dt
    ts = np.arange(0.0, duration + 1e-9, save_dt)
    y0 = initial_state(system)

    @eqx.filter_jit
    def batch(system, amps):
        def one(a):
            w = regular_wave(a)
            ys = rk4_scan(system, y0, ts, (w, system.prepare(w), None), dt)
            return hydro_motions(system, ts, ys), ys

        return jax.vmap(one)(amps)

    eta, ys = batch(system, jnp.asarray(amplitudes, dtype=float))
    return ts, np.asarray(eta), jax.tree_util.tree_map(np.asarray, ys)


DOFS = {"surge": 0, "heave": 2, "pitch": 4}


def compare(ts, eta, X_fd, amplitude, t_start, t_end):
    """Per barge and DOF: TD fundamental (complex), FD complex amplitude, amplitude error, phase error,
    and the RMS of (TD − FD sinusoid) over the window over the FD amplitude (the whole non-linear
    difference: harmonics and mean offsets included)."""
    rows = []
    m = (ts >= t_start - 1e-9) & (ts <= t_end + 1e-9)
    for k, name in enumerate(NAMES):
        for dname, d in DOFS.items():
            i = 6 * k + d
            X, c0, X2 = fit_harmonics(ts, eta[:, i], OMEGA0, t_start, t_end)
            Xf = amplitude * X_fd[i]
            fd_t = np.real(Xf * np.exp(-1j * OMEGA0 * ts[m]))
            rms = np.sqrt(np.mean((eta[m, i] - fd_t) ** 2)) / np.abs(Xf)
            rows.append(dict(body=name, dof=dname, td=abs(X), fd=abs(Xf), amp_err=abs(X) / abs(Xf) - 1,
                             phase_err=float(np.degrees(np.angle(X / Xf))), mean=c0, second=abs(X2) / abs(Xf),
                             rms_err=rms))
    return rows


def analyse(duration=400.0, dt=0.05, heights=(0.5, 2.0, 6.0), window_periods=10, ramp_time=30.0, planar=True):
    """Run TD for each wave height and FD once; return a dict of results."""
    hd = hydro()
    system = build_time_domain(hd, ramp_time=ramp_time, planar=planar)
    X = frequency_domain(hd)
    i0 = int(np.argmin(np.abs(np.asarray(hd.omega) - OMEGA0)))
    assert abs(float(hd.omega[i0]) - OMEGA0) < 1e-9
    t0 = time.time()
    amps = 0.5 * np.asarray(heights, float)
    ts, eta, _ = run_time_domain(system, amps, duration, dt)
    wall = time.time() - t0
    t_end = ts[-1]
    t_start = t_end - window_periods * PERIOD
    cmp = [compare(ts, eta[j], X[i0], a, t_start, t_end) for j, a in enumerate(amps)]
    return dict(ts=ts, eta=eta, X=X[i0], heights=np.asarray(heights, float), rows=cmp, wall=wall,
                window=(t_start, t_end), system=system, hd=hd)


def table(res):
    lines = []
    for H, rows in zip(res["heights"], res["rows"]):
        lines.append(f"\nH = {H:g} m (window {res['window'][0]:.1f}-{res['window'][1]:.1f} s)")
        lines.append("| barge | DOF | FD amplitude | TD amplitude | amplitude diff | phase diff | RMS(TD - FD)/amp | 2nd harmonic/amp | mean offset |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            unit, sc = ("deg", np.degrees(1.0)) if r["dof"] == "pitch" else ("m", 1.0)
            lines.append(f"| {r['body']} | {r['dof']} | {r['fd'] * sc:.4g} {unit} | {r['td'] * sc:.4g} {unit} | "
                         f"{100 * r['amp_err']:+.2f} % | {r['phase_err']:+.2f} deg | {100 * r['rms_err']:.2f} % | "
                         f"{100 * r['second']:.2f} % | {r['mean'] * sc:+.3g} {unit} |")
    return "\n".join(lines)


def plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = res["ts"]
    for j, H in enumerate(res["heights"]):
        a = 0.5 * H
        fig, axes = plt.subplots(3, 3, figsize=(13, 8), sharex=True)
        for k, name in enumerate(NAMES):
            for c, (dname, d) in enumerate(DOFS.items()):
                ax = axes[c, k]
                i = 6 * k + d
                sc = np.degrees(1.0) if dname == "pitch" else 1.0
                fd = np.real(a * res["X"][i] * np.exp(-1j * OMEGA0 * ts)) * sc
                ax.plot(ts, res["eta"][j, :, i] * sc, "b-", lw=1.0, label="time domain (joint coordinates)")
                ax.plot(ts, fd, "r--", lw=1.0, label="linear frequency domain")
                ax.axvspan(*res["window"], color="0.9", zorder=-1)
                ax.set_xlim(ts[-1] - 60.0, ts[-1])
                ax.set_ylabel(f"{dname} [{'deg' if dname == 'pitch' else 'm'}]")
                if c == 0:
                    ax.set_title(name)
                if c == 2:
                    ax.set_xlabel("t [s]")
        axes[0, 0].legend(loc="lower left", fontsize=8)
        fig.suptitle(f"Hinged barges, H = {H:g} m, T = {PERIOD} s, head seas (last 60 s; grey: comparison window)")
        fig.tight_layout()
        fig.savefig(path.with_name(f"{path.stem}_H{H:g}m.png"), dpi=90)
        plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="short run for CI (seconds), no plots")
    ap.add_argument("--bem", action="store_true", help="recompute the BEM file")
    ap.add_argument("--free", action="store_true", help="barge 1 on a Free joint instead of the planar joints")
    args = ap.parse_args(argv)
    import jaxmbd  # noqa: F401  (float64)

    if args.bem:
        hydro(recompute=True)
    if args.smoke:
        res = analyse(duration=110.0, dt=0.1, heights=(0.5,), window_periods=3, ramp_time=20.0, planar=not args.free)
    else:
        res = analyse(planar=not args.free)
    print(table(res))
    print(f"\ntime-domain runs: {res['wall']:.1f} s wall (compile included)")
    if not args.smoke:
        plot(res, HERE / ("barges_free.png" if args.free else "barges.png"))
    return res


if __name__ == "__main__":
    main()
