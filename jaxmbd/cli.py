"""The ``jaxmbd`` command: demo, run, sweep, tune, plot."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

G = 9.81
TONNE = 1000.0


class Progress:
    """A one-line progress bar on stderr for loops longer than a few seconds."""

    def __init__(self, label: str):
        self.label = label
        self.t0 = time.perf_counter()

    def __call__(self, done, total, *extra):
        frac = done / max(total, 1)
        bar = "#" * int(30 * frac)
        el = time.perf_counter() - self.t0
        eta = el / frac - el if frac > 0 else float("nan")
        info = " ".join(str(e) for e in extra)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {done}/{total} {el:6.1f} s, {eta:6.1f} s left {info}   ")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _table(rows, header):
    widths = [max(len(str(r[k])) for r in rows + [header]) for k in range(len(header))]
    line = "  ".join(f"{h:>{w}}" for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def enable_compilation_cache():
    """Keep the compiled programs on disk between runs of the command (JAX's persistent compilation
    cache): a second ``jaxmbd demo`` skips its XLA compilation (13 -> 6 s), and so do repeated
    ``run``, ``sweep`` and ``tune`` calls on the same system shape.

    The folder is ``$JAXMBD_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxmbd/xla`` or ``~/.cache/jaxmbd/xla``;
    ``JAXMBD_CACHE_DIR=off`` turns it off, and a cache JAX is already told about
    (``JAX_COMPILATION_CACHE_DIR``) is left as it is.  Entries are keyed on the program, the jaxlib
    version and the XLA options, so a changed system or library compiles anew.  Returns the folder,
    or None."""
    import os

    import jax

    if os.environ.get("JAX_COMPILATION_CACHE_DIR") or jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir
    folder = os.environ.get("JAXMBD_CACHE_DIR")
    if folder is not None and folder.strip().lower() in ("", "0", "off", "none", "false"):
        return None
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "jaxmbd", "xla")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:  # a read-only home: run without the cache
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        # every program, the small eager ones too: a second demo 6.9 -> 5.9 s (92 files, 1.3 MB)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return folder


# ---------------------------------------------------------------------------
# demo


def _demo(args) -> int:
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from .examples import floating_crane
    from .hydro import JONSWAP, SeaState
    from .simulate import Integrator, initial_state, simulate, static_equilibrium
    from .statistics import ExtremeStatistics

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sea = SeaState(spectrum=JONSWAP(args.hs, args.tp), n_frequencies=80, omega_min=0.2, omega_max=1.8,
                   mean_direction=jnp.asarray(0.0))
    system, q_guess = floating_crane(waves=sea)
    print(f"jaxmbd demo: seed 001's floating crane (18,000 t barge, 1,000 t cargo on two hoist ropes) in a JONSWAP "
          f"sea Hs = {args.hs} m, Tp = {args.tp} s, waves from stern to bow; {args.realisations} realisations of "
          f"{args.duration:.0f} s on {jax.devices()[0].platform.upper()}")
    t0 = time.perf_counter()
    q0 = static_equilibrium(system, q_guess)

    # one compiled call: op by op, the outputs' hundreds of small operations took 3.7 s
    static = eqx.filter_jit(lambda system, q: system.outputs(0.0, initial_state(system, q)))(system, q0)
    T_static = float(static["hoist1/tension"] + static["hoist2/tension"])
    print(f"static equilibrium: hook load {T_static / G / TONNE:.1f} t, barge heave {float(q0[2]):+.3f} m "
          f"({time.perf_counter() - t0:.1f} s)")
    integ = Integrator("rk4", dt=0.05)
    res = simulate(system, args.duration, save_dt=0.25, integrator=integ, q0=q0, key=jax.random.key(args.seed),
                   n_realisations=args.realisations, chunk_size=args.chunk, progress=Progress("simulating"))
    wall = time.perf_counter() - t0
    T = res.outputs["hoist1/tension"] + res.outputs["hoist2/tension"]
    sway = np.degrees(np.maximum(res.outputs["hoist1/sway"], res.outputs["hoist2/sway"]))
    boom = np.linalg.norm(res.outputs["joint/boom1_foot/wrench"][..., 3:], axis=-1)
    sT, sS, sB = ExtremeStatistics.of(T), ExtremeStatistics.of(sway), ExtremeStatistics.of(boom)
    rows = [
        ["max hook load (t)", f"{sT.mean / G / TONNE:.1f}", f"{sT.std / G / TONNE:.1f}", f"{sT.p90 / G / TONNE:.1f}", f"{sT.mpm / G / TONNE:.1f}"],
        ["DAF = max / static", f"{sT.mean / T_static:.3f}", f"{sT.std / T_static:.3f}", f"{sT.p90 / T_static:.3f}", f"{sT.mpm / T_static:.3f}"],
        ["max rope sway (deg)", f"{sS.mean:.2f}", f"{sS.std:.2f}", f"{sS.p90:.2f}", f"{sS.mpm:.2f}"],
        ["max boom-foot moment (MN m)", f"{sB.mean / 1e6:.1f}", f"{sB.std / 1e6:.1f}", f"{sB.p90 / 1e6:.1f}", f"{sB.mpm / 1e6:.1f}"],
    ]
    print()
    print(_table(rows, ["over realisations", "mean", "std", "p90", "Gumbel MPM"]))
    print(f"\n{args.realisations} x {args.duration:.0f} s simulated in {wall:.1f} s (compile included)")
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot(res.time, T[0] / (G * TONNE), lw=0.9, label="hook load (both ropes), realisation 0")
    ax.axhline(T_static / (G * TONNE), color="k", lw=0.8, ls=":", label="static")
    ax.axhline(sT.mpm / (G * TONNE), color="tab:red", lw=0.8, ls="--", label="Gumbel MPM of the maxima")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tension (t)")
    ax.set_title(f"Floating crane hook load in JONSWAP Hs {args.hs} m, Tp {args.tp} s (stern to bow)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "floating_crane_tension.png", dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(sT.maxima / T_static, bins=max(5, args.realisations // 2), color="tab:blue", alpha=0.8)
    ax.axvline(sT.mpm / T_static, color="k", ls="--", label="Gumbel MPM")
    ax.set_xlabel("dynamic amplification factor (max hook load / static)")
    ax.set_ylabel("realisations")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: whole numbers
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "floating_crane_daf.png", dpi=120)
    plt.close(fig)
    nc = res.to_netcdf(out / "floating_crane.nc")
    print(f"wrote {out / 'floating_crane_tension.png'}, {out / 'floating_crane_daf.png'} and {nc}")
    return 0


# ---------------------------------------------------------------------------
# run / sweep / plot


def _load(path):
    from .io.system_file import load_system

    return load_system(path)


def _start(loaded):
    return loaded.initial_configuration()


def _run(args) -> int:
    import jax

    from .simulate import simulate
    from .statistics import ExtremeStatistics

    loaded = _load(args.system)
    out = Path(args.out or f"out/{loaded.system.name}")
    out.mkdir(parents=True, exist_ok=True)
    q0 = _start(loaded)
    n = args.realisations if args.realisations is not None else loaded.n_realisations
    res = simulate(loaded.system, args.duration or loaded.duration, save_dt=loaded.save_dt,
                   integrator=loaded.integrator, q0=q0, key=jax.random.key(loaded.seed if args.seed is None else args.seed),
                   n_realisations=n if (n and loaded.system.waves is not None) else None,
                   progress=Progress("simulating"))
    res.attrs["system_file"] = str(args.system)
    nc = res.to_netcdf(out / "result.nc")
    rows = []
    for name, val in res.outputs.items():
        val = np.asarray(val)
        scalar_ndim = 2 if res.batched else 1
        if val.ndim == scalar_ndim:
            series = [(name, val)]
        elif val.ndim == scalar_ndim + 1:  # a vector output: one row a component, labelled
            series = [(f"{name}[{lab}]", val[..., k]) for k, lab in enumerate(_component_labels(name, val.shape[-1]))]
        else:
            continue
        for label, x in series:
            s = ExtremeStatistics.of(x if res.batched else x[None])
            rows.append([label, f"{s.mean:.4g}", f"{s.std:.3g}", f"{s.mpm:.4g}"])
    print(_table(rows, ["output (SI)", "mean of maxima", "std", "Gumbel MPM"]))
    print(f"wrote {nc}")
    return 0


_DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
_WRENCH = ("fx", "fy", "fz", "mx", "my", "mz")


def _component_labels(name: str, n: int) -> list[str]:
    """Names of a vector output's components: the six DOFs of each hydrodynamic body (``hydro/eta``,
    ``hydro/excitation``, ...), force and moment of a wrench, x y z of a 3-vector, else indices."""
    leaf = name.rsplit("/", 1)[-1]
    if n % 6 == 0 and name.split("/")[0] != "joint" and leaf in ("eta", "excitation", "radiation"):
        return [f"{_DOFS[k % 6]}{'' if n == 6 else k // 6}" for k in range(n)]
    if n == 6:
        return list(_WRENCH)
    if n == 3:
        return ["x", "y", "z"]
    return [str(k) for k in range(n)]


def _sweep(args) -> int:
    from .sweep import SweepSettings, initialise_distributed, plot_operability, run_sweep

    index, count = initialise_distributed(args.coordinator, args.num_processes, args.process_id)
    loaded = _load(args.system)
    sw = loaded.sweep
    hs = args.hs or (sw.hs if sw else None)
    tp = args.tp or (sw.tp if sw else None)
    limits = dict(sw.limits) if sw else {}
    if not hs or not tp or not limits:
        print(f"jaxmbd: {args.system}: sweep: expected a [sweep] table with hs, tp and [sweep.limits] "
              "(or --hs and --tp on the command line)", file=sys.stderr)
        return 2
    settings = SweepSettings(hs=list(hs), tp=list(tp), limits=limits,
                             duration=args.duration or sw.duration or loaded.duration,
                             n_realisations=args.realisations or sw.n_realisations or loaded.n_realisations or 8,
                             save_dt=loaded.save_dt, integrator=loaded.integrator, seed=loaded.seed,
                             statistic=sw.statistic)
    out = Path(args.out or f"out/{loaded.system.name}_sweep")
    q0 = _start(loaded)
    table = run_sweep(loaded.system, q0, settings, out, process_index=index, process_count=count,
                      progress=Progress(f"sweep (process {index + 1}/{count})"))
    if table is None:
        return 0
    png = plot_operability(table, out / "operability.png")
    rows = []
    for i, h in enumerate(settings.hs):
        rows.append([f"{h:g}"] + ["ok" if table.operable.values[i, j] else "--" for j in range(len(settings.tp))])
    print("operability (ok: every limit holds; " + ", ".join(f"{k} <= {v:g}" for k, v in limits.items()) + ")")
    print(_table(rows, ["Hs \\ Tp"] + [f"{t:g}" for t in settings.tp]))
    print(f"wrote {out / 'operability.nc'} and {png}")
    return 0


def _tune(args) -> int:
    from optim import tune_from_file

    loaded = _load(args.system)
    if not (loaded.config or {}).get("tune"):
        print(f"jaxmbd: {args.system}: tune: expected a [tune] table (parameters, objective, realisations); "
              "see optim/from_file.py", file=sys.stderr)
        return 2
    out = Path(args.out or f"out/{loaded.system.name}_tune")
    res = tune_from_file(loaded, out, steps=args.steps, smoke=args.smoke)
    held = res.attrs.get("held_out") if hasattr(res, "attrs") else None
    if held:
        print(f"held-out objective: before {held['objective_before']:.4g}, after {held['objective_after']:.4g} "
              f"({100 * held['improvement']:.1f} % lower)")
    print(f"wrote {out / 'tune.json'} and {out / 'tune_history.png'}")
    return 0


def _plot(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xarray as xr

    ds = xr.open_dataset(args.result, engine="h5netcdf")
    names = args.variables or [k for k in ds.data_vars if k not in ("q", "v", "z") and ds[k].ndim <= 2]
    out = Path(args.out or Path(args.result).with_suffix(""))
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        var = ds[name]
        if "realisation" in var.dims:
            var = var.isel(realisation=0)
        if var.ndim != 1:
            continue
        fig, ax = plt.subplots(figsize=(9, 3.5))
        ax.plot(ds.time.values, var.values, lw=0.9)
        ax.set_xlabel("time (s)")
        ax.set_title(var.attrs.get("long_name", name))
        ax.grid(alpha=0.3)
        fig.tight_layout()
        p = out / f"{name}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    print("\n".join(f"wrote {p}" for p in paths) or "nothing to plot")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="jaxmbd", description="Differentiable multibody dynamics for marine operations")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="floating crane in irregular waves: tension, DAF and sway statistics, plots")
    d.add_argument("--out", default="out/demo", help="folder for plots and results (default out/demo)")
    d.add_argument("--realisations", type=int, default=16)
    d.add_argument("--duration", type=float, default=600.0, help="seconds simulated per realisation")
    d.add_argument("--hs", type=float, default=2.5, help="significant wave height (m)")
    d.add_argument("--tp", type=float, default=9.0, help="peak period (s)")
    d.add_argument("--chunk", type=int, default=8, help="realisations per batch")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_demo)
    r = sub.add_parser("run", help="simulate a system file; write result.nc and a table of maxima")
    r.add_argument("system")
    r.add_argument("--out")
    r.add_argument("--realisations", type=int)
    r.add_argument("--duration", type=float)
    r.add_argument("--seed", type=int)
    r.set_defaults(func=_run)
    s = sub.add_parser("sweep", help="Hs x Tp grid with an operability table (resumes an interrupted sweep)")
    s.add_argument("system")
    s.add_argument("--out")
    s.add_argument("--hs", type=float, nargs="+")
    s.add_argument("--tp", type=float, nargs="+")
    s.add_argument("--realisations", type=int)
    s.add_argument("--duration", type=float)
    s.add_argument("--coordinator", help="host:port of process 0 for a multi-host sweep (or JAXMBD_COORDINATOR)")
    s.add_argument("--num-processes", type=int, help="number of processes (or JAXMBD_NUM_PROCESSES)")
    s.add_argument("--process-id", type=int, help="this process's index (or JAXMBD_PROCESS_ID)")
    s.set_defaults(func=_sweep)
    tu = sub.add_parser("tune", help="tune the parameters named in the file's [tune] table with gradients")
    tu.add_argument("system")
    tu.add_argument("--out")
    tu.add_argument("--steps", type=int)
    tu.add_argument("--smoke", action="store_true", help="two iterations on a short run: checks the table")
    tu.set_defaults(func=_tune)
    pl = sub.add_parser("plot", help="plot the time series in a result file")
    pl.add_argument("result")
    pl.add_argument("variables", nargs="*")
    pl.add_argument("--out")
    pl.set_defaults(func=_plot)
    args = p.parse_args(argv)
    enable_compilation_cache()
    from .joints import ModelError
    from .simulate import SimulationError

    try:
        return args.func(args)
    except Exception as exc:  # input and run errors are one line for the user, anything else a traceback
        if isinstance(exc, (ModelError, SimulationError, FileNotFoundError)) or type(exc).__name__ in (
            "SystemFileError",
            "HydroDataError",
        ):
            print(f"jaxmbd: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
