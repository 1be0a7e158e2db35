"""The ``jaxmbd`` command: demo, run, sweep, tune, plot."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from .config import configure
from .errors import InputError, JaxmbdError
from .report import component_unit, output_figure

G = 9.81
TONNE = 1000.0


class Progress:
    """A progress bar on stderr (tqdm) for loops longer than a few seconds: ``progress(done, total, *extra)``
    after each step, ``extra`` shown beside it (the sweep's sea state).  None off a terminal: a log file gets
    no bar."""

    def __init__(self, label: str, stream=None):
        self.label = label
        self.stream = stream or sys.stderr
        self.quiet = not getattr(self.stream, "isatty", lambda: False)()  # a log file gets no bar
        self.bar = None
        self.started = time.time()  # the bar's clock starts with the work: the first step's compile is in its rate

    def __call__(self, done, total, *extra):
        if self.quiet:
            return
        from tqdm import tqdm

        if self.bar is None or self.bar.total != total:
            self.bar = tqdm(total=total, desc=self.label, file=self.stream, dynamic_ncols=True, leave=True)
            self.bar.start_t = self.started
        if extra:
            self.bar.set_postfix_str(" ".join(str(e) for e in extra), refresh=False)
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()


def _table(rows, header):
    widths = [max(len(str(r[k])) for r in rows + [header]) for k in range(len(header))]
    line = "  ".join(f"{h:>{w}}" for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# ---------------------------------------------------------------------------
# demo


def _demo(args) -> int:
    if args.which == "operability":
        from .operability.command import SMALL_LIFT, demo

        return demo(args, _load(SMALL_LIFT), Progress, _table)
    import jax
    import jax.numpy as jnp
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from ._xla import system_jit
    from .examples import floating_crane
    from .hydro import JONSWAP, SeaState
    from .run import run, solve_start
    from .simulation import Integrator, initial_state
    from .statistics import ExtremeStatistics

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sea = SeaState(spectrum=JONSWAP(args.hs, args.tp), n_frequencies=80, omega_min=0.2, omega_max=1.8,
                   mean_direction=jnp.asarray(0.0))
    system, q_guess = floating_crane(waves=sea)
    print(f"jaxmbd demo: Ham et al. (2009)'s floating crane (18,000 t barge, 1,000 t cargo on two hoist ropes) in a JONSWAP "
          f"sea Hs = {args.hs} m, Tp = {args.tp} s, waves from stern to bow; {args.realisations} realisations of "
          f"{args.duration:.0f} s on {jax.devices()[0].platform.upper()}")
    t0 = time.perf_counter()
    start = solve_start(system, q_guess)
    q0 = start.q

    # one compiled call of the two ropes' outputs: op by op, the outputs' hundreds of small operations took 3.7 s;
    # every element's, 3 s of compile
    static = system_jit(lambda system, q: system.outputs(0.0, initial_state(system, q), only=("hoist1", "hoist2")),
                        one_off=True)(system, q0)
    T_static = float(static["hoist1/tension"] + static["hoist2/tension"])
    print(f"static equilibrium: hook load {T_static / G / TONNE:.1f} t, barge heave {float(q0[2]):+.3f} m "
          f"({time.perf_counter() - t0:.1f} s)")
    integ = Integrator("rk4", dt=0.05)
    res = run(system, start, duration=args.duration, save_dt=0.25, integrator=integ, seed=args.seed,
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
    ax.set_title(f"DAF of {args.realisations} realisations of {args.duration:.0f} s, JONSWAP Hs {args.hs} m, "
                 f"Tp {args.tp} s", fontsize=9)
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


def _limit(args):
    from .run import TIME_LIMIT_S  # the seconds a command runs without --yes

    return None if args.yes else TIME_LIMIT_S


def _load(path):
    from .io.system_file import load_system

    return load_system(path)


def _run(args) -> int:
    from .run import run, start_of

    loaded = _load(args.system)
    out = Path(args.out or f"out/{loaded.system.name}")
    _same_source(out / "result.nc", args.system, explicit=bool(args.out))
    out.mkdir(parents=True, exist_ok=True)
    start, began = start_of(loaded), time.time()
    res = run(loaded, start, seed=args.seed, duration=args.duration, n_realisations=args.realisations, time_limit=_limit(args),
              progress=Progress("realisations" if loaded.scenario else "simulating"))
    if loaded.scenario:
        code = _report_scenario(args, loaded, res, out, static_start=start.equilibrium)
    else:
        nc = _write_result(res, out / "result.nc")
        code = _summary(args, res.system, res.time, res.outputs, res.batched, res.excursions, float(res.attrs["duration_s"]),
                        nc, static_start=start.equilibrium, between=res.between, loads=loaded.display_loads)
    if args.report:  # the result files this run wrote
        from .report import write_report

        print(f"wrote {write_report(sorted(p for p in out.glob('result*.nc') if p.stat().st_mtime >= began), out / 'report.html')}")
    return code


def _same_source(path: Path, system_file, explicit: bool):
    """A result of another system file with the same ``name`` in the default folder is not overwritten."""
    if explicit or not path.exists():
        return
    try:
        import xarray as xr

        with xr.open_dataset(path, engine="h5netcdf") as ds:  # the root group: the attributes
            other = ds.attrs.get("system_file")
    except Exception:
        return  # not a readable result: replaced, with the note
    if other and Path(other).resolve() != Path(system_file).resolve():
        raise ResultFileError(f"{path}: holds the result of {other}, another file with the same name; give --out "
                              "(or another name in the file) to keep both")


def _write_result(res, path: Path) -> Path:
    if path.exists():
        print(f"note: {path} exists and is replaced", file=sys.stderr)
    tmp = path.with_name(f".{path.name}.tmp")
    res.to_netcdf(tmp)
    tmp.replace(path)
    return path


def _summary(args, system, time, outputs, batched, found, duration, written, stationary=True, static_start=True, between=None,
             starts=None, loads="kN") -> int:
    """The table of the per-realisation maxima (over every step where the run tracked the output, ``between``).  A DAF
    (mean maximum over the start value) is given for tensions only from a static equilibrium, in a stationary sea or
    over the operation's start (``starts``: per output the values at the start, where ``outputs`` hold maxima
    only).  Figures in display units (:mod:`jaxmbd.units`: degrees, forces in ``loads``)."""
    from . import validity
    from .results import component_labels
    from .statistics import FIT_MIN_REALISATIONS, summarise_maxima
    from .units import display_units_of, figure, seconds

    shown_in = display_units_of(system, loads)

    block = validity.warning_block(found)
    if block:
        print(block + "\n")
    units = system.output_units()
    rows = []
    n_real = None
    for name, val in outputs.items():
        val = np.asarray(val)
        scalar_ndim = 2 if batched else 1
        first = None if starts is None else np.asarray(starts[name])
        if val.ndim == scalar_ndim:
            series = [(name, val, units.get(name, "?"), name, first)]
        elif val.ndim == scalar_ndim + 1:  # a vector output: one row a component, labelled
            labels = component_labels(name, val.shape[-1], units.get(name))[1]
            series = [(f"{name}[{lab}]", val[..., k], component_unit(units.get(name, "?"), lab), f"{name}[{k}]",
                       None if first is None else first[..., k]) for k, lab in enumerate(labels)]
        else:
            continue
        for label, x, unit, key, at_start in series:
            x, b = (x if batched else x[None]), (between or {}).get(key, {}).get("max")
            m = summarise_maxima(x, duration, stationary=stationary, daf=name.endswith("tension") and static_start,
                                 between=None if b is None else np.reshape(b, x.shape), start=at_start)
            n_real = m.n
            shown, f = shown_in(unit)
            rows.append([label, shown, figure(m.mean, f), "n/a" if m.std is None else figure(m.std, f, 3), figure(m.p90, f),
                         "" if m.daf is None else f"{m.daf:.3f}", figure(m.mpm, f), figure(m.mpm_storm, f)])
    print(_table(rows, ["output", "units", "mean of maxima", "std", "p90", "DAF", f"MPM {seconds(duration)}", "MPM 3 h"]))
    if not static_start and stationary:
        print("(no DAF: the run did not start from its static equilibrium, so its first values are no static load; "
              "[simulation] static_equilibrium = true gives one)")
    if n_real is not None and n_real < FIT_MIN_REALISATIONS:
        print(f"(most probable maxima need at least {FIT_MIN_REALISATIONS} realisations; this run has {n_real})")
    else:
        daf = ("DAF: mean maximum over the value at the start, the static load" +
               ("" if stationary else " there (a phase that changes the static load, as a lift-off or the splash zone, "
                                      "is not measured by it)") + "; ") if static_start and (stationary or starts) else ""
        print(f"(statistics of the {n_real} per-realisation maxima; {daf}MPM: mode of a Gumbel fit to them by moments, "
              f"for {seconds(duration)}" + (f" and, assuming independent {seconds(duration)} blocks, for a 3-hour storm)"
                                            if stationary else "; an operation is not a stationary storm: no 3-hour value)"))
    print(f"(angles in degrees, forces in {loads}, figures under 1e-9 in SI units as 0: the result file keeps SI units "
          "and every figure; display_loads in the system file picks kN, MN, N or t)")
    print(f"wrote {written}")
    if found and getattr(args, "strict", False):
        print(f"jaxmbd: {args.system}: --strict: the run left the range of validity of its models (above)",
              file=sys.stderr)
        return 3
    return 0


def _report_scenario(args, loaded, res, out, static_start=True) -> int:
    """A run with phases: each realisation's events, its per-phase table and result file (the realisations'
    time grids differ: one file each), a plot of the reported outputs, the summary of the maxima."""
    system = res.system
    report = loaded.build_scenario().report_outputs(system)
    n = res.n_realisations
    written, runs, maxima, starts = [], [], {}, {}
    for r in range(n):
        one = res.realisation(r)
        written.append(_write_result(one, out / ("result.nc" if n == 1 else f"result_{r:03d}.nc")))
        print(f"realisation {r}:\n{one.event_table()}\n")
        if report:
            print(one.phase_table(report, loaded.display_loads) + "\n")
        runs.append(one)
        for name, val in one.outputs.items():  # per realisation its maxima only (the time grids differ), every step's
            maxima.setdefault(name, []).append(one.largest(name))  # where tracked
            starts.setdefault(name, []).append(np.asarray(val)[0])
    if report:
        written.append(_plot_scenario(runs, report, out / "scenario.png", loaded.display_loads, system.name))
    # (realisation, one "time" sample: the maximum) for the summary's statistics of maxima
    series = {k: np.stack(v)[:, None] for k, v in maxima.items()}
    return _summary(args, system, np.zeros(1), series, True, res.excursions, float(res.attrs["duration_s"]),
                    ", ".join(str(w) for w in written), stationary=False, static_start=static_start,
                    starts={k: np.stack(v) for k, v in starts.items()}, loads=loaded.display_loads)


def _plot_scenario(runs, names, path: Path, loads: str = "kN", title: str = "") -> Path:
    """The reported outputs against time in display units (:mod:`jaxmbd.units`), a panel each, every realisation
    (the first in colour, the others grey, a legend saying so), the first's phases shaded and named."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .units import display_units_of

    units = runs[0].system.output_units()
    shown_in = display_units_of(runs[0].system, loads)
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 2.6 * len(names) + 0.9), sharex=True, squeeze=False)
    first = runs[0]
    for ax, name in zip(axes[:, 0], names):
        shown, factor = shown_in(units.get(name, "?"))
        for i, res in enumerate(runs):
            x = np.asarray(res.outputs[name])
            x = x if x.ndim == 1 else np.linalg.norm(x, axis=-1)
            label = ("realisation 0" if i == 0 else "the other realisations" if i == 1 else None) if len(runs) > 1 else None
            ax.plot(res.time, x * factor, lw=0.8, alpha=1.0 if i == 0 else 0.4, color="C0" if i == 0 else "0.5", label=label)
        ax.set_ylabel(f"{name if np.asarray(first.outputs[name]).ndim == 1 else '|' + name + '|'} ({shown})", fontsize=8)
        ax.grid(alpha=0.3)
        for k, pname in enumerate(first.phase_names):
            m = first.phase == k
            if m.any():
                ax.axvspan(first.time[m][0], first.time[m][-1], color=f"C{k % 10}", alpha=0.08)
                if ax is axes[0, 0]:
                    ax.text(0.5 * (first.time[m][0] + first.time[m][-1]), 1.01, pname, transform=ax.get_xaxis_transform(),
                            ha="center", va="bottom", fontsize=7)
    if len(runs) > 1:
        axes[0, 0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{title}: {len(runs)} realisation(s), phases shaded (those of realisation 0)" if title else
                 f"{len(runs)} realisation(s), phases shaded (those of realisation 0)", fontsize=9)
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _sweep(args) -> int:
    from .cluster import dask_client
    from .run import start_of
    from .sweep import SweepSettings, initialise_distributed, plot_operability, run_sweep

    index, count = initialise_distributed(args.coordinator, args.num_processes, args.process_id)
    loaded = _load(args.system)
    sw = loaded.sweep
    hs, tp = args.hs or (sw.hs if sw else None), args.tp or (sw.tp if sw else None)
    limits = dict(sw.limits) if sw else {}
    if not hs or not tp or not limits:
        print(f"jaxmbd: {args.system}: sweep: expected a [sweep] table with hs, tp and [sweep.limits] "
              "(or --hs and --tp on the command line)", file=sys.stderr)
        return 2
    duration = args.duration or (sw.duration if sw else None) or loaded.duration
    if duration is None:  # a scenario file: its phases set a scenario run's length, a sweep runs without them
        raise InputError(f"{args.system}: sweep: its cells are runs without the scenario's phases and need a duration: "
                         "[sweep].duration, [simulation].duration or --duration (s)")
    settings = SweepSettings(hs=list(hs), tp=list(tp), limits=limits, duration=duration,
                             n_realisations=args.realisations or sw.n_realisations or loaded.n_realisations or 8,
                             save_dt=loaded.save_dt, integrator=loaded.integrator, seed=loaded.seed,
                             statistic=sw.statistic)
    out = Path(args.out or f"out/{loaded.system.name}_sweep")
    client = dask_client(args.dask, count)
    table = run_sweep(loaded.system, start_of(loaded), settings, out, process_index=index, process_count=count, time_limit=_limit(args),
                      progress=Progress(f"sweep (process {index + 1}/{count})"), force=args.force, client=client)
    if table is None:
        return 0
    png = plot_operability(table, out / "operability.png")
    rows = []
    for i, h in enumerate(settings.hs):
        rows.append([f"{h:g}"] + ["ok" if table.operable.values[i, j] else "--" for j in range(len(settings.tp))])
    print("operability (ok: every limit holds; " + ", ".join(f"{k} <= {v:g}" for k, v in limits.items()) + ")")
    print(_table(rows, ["Hs \\ Tp"] + [f"{t:g}" for t in settings.tp]))
    print(f"wrote {out / 'operability.nc'} and {png}")
    if args.report:
        from .report import write_report

        print(f"wrote {write_report([out], out / 'report.html')}")
    return 0


def _operability(args) -> int:
    from .operability.command import operability_command

    return operability_command(args, _load(args.system), Progress, _table)


class ResultFileError(JaxmbdError, ValueError):
    """A file given to ``plot`` that is not a readable jaxmbd result, or a variable it does not hold."""


def _open_result(path):
    from .netcdf import open_result

    path = Path(path)
    if not path.is_file():
        raise ResultFileError(f"{path}: no such file; expected a result.nc written by jaxmbd run")
    try:
        ds = open_result(path)
    except Exception as exc:
        raise ResultFileError(f"{path}: not a readable NetCDF file ({type(exc).__name__}); expected a result.nc "
                              "written by jaxmbd run") from None
    if "time" not in ds.coords or "system" not in ds.attrs:
        raise ResultFileError(f"{path}: a NetCDF file, but not a jaxmbd result (no time axis or system attribute)")
    return ds


def _plot(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = _open_result(args.result)
    outputs = [k for k in ds.data_vars if k not in ("q", "v", "z") and "time" in ds[k].dims]
    names = []
    for name in args.variables:
        if name not in ds.data_vars:
            raise ResultFileError(f"{args.result}: no output {name!r}; the file has {', '.join(outputs) or 'none'}")
        names.append(name)
    names = names or outputs
    out = Path(args.out or Path(args.result).with_suffix(""))
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        fig = output_figure(ds, name)
        if fig is None:
            continue
        p = out / f"{name}.png"  # hoist/tension: hoist/tension.png, the output's path in the result file
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    print("\n".join(f"wrote {p}" for p in paths) or "nothing to plot")
    return 0


def _stability(args) -> int:
    """GZ curves of the hulls with non-linear hydrostatics: a table and a PNG per hull and axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .hydro.body import HydroBody
    from .io.system_file import SystemFileError

    loaded = _load(args.system)
    elements = [f for f in loaded.system.forces if isinstance(f, HydroBody) and f.hydrostatics == "nonlinear"]
    if not elements:
        raise SystemFileError(str(args.system), "hydro", 'no [[hydro]] entry with hydrostatics = "nonlinear" (and its closed hull); '
                              "the stability curve integrates the water pressure over that hull")
    out = Path(args.out or f"out/{loaded.system.name}_stability")
    out.mkdir(parents=True, exist_ok=True)
    half = np.arange(0.0, args.max_heel + 0.5 * args.step, args.step)
    heels = np.concatenate([-half[:0:-1], half])  # both sides: a load off the centreplane lists the hull
    axes = ("roll", "pitch") if args.axis == "both" else (args.axis,)
    for el in elements:
        for body, curves in zip(el.bodies, el.stability_curves(heels)):
            for axis in axes:
                c = curves[axis]
                stem = out / f"{el.name}_{body}_{axis}"
                stem.with_suffix(".txt").write_text(c.table())
                fig, ax = plt.subplots(figsize=(8, 4.5))
                ax.plot(c.heel_deg, c.gz, color="tab:blue", label=f"GZ (pressure integration, free {'trim' if axis == 'roll' else 'heel'})")
                ax.axhline(0.0, color="k", lw=0.6)
                gz0 = float(np.interp(0.0, c.heel_deg, c.gz))
                ax.plot(c.heel_deg, gz0 + c.gm * np.radians(c.heel_deg), ls=":", color="tab:gray",
                        label=f"initial slope GM (GM = {c.gm:.3f} m)")
                ax.plot([c.angle_of_max_gz_deg], [np.sign(c.angle_of_max_gz_deg or 1.0) * c.max_gz], "o", color="tab:blue",
                        label=f"max righting arm {c.max_gz:.3f} m (weaker side)")
                if c.equilibrium_heel_deg is not None and abs(c.equilibrium_heel_deg) > 1e-3:
                    ax.axvline(c.equilibrium_heel_deg, color="tab:green", ls="--", lw=1, label=f"static list {c.equilibrium_heel_deg:.2f} deg")
                under = c.deck_edge_immersion_deg == 0.0  # the deck edge is under water already upright (see the printout)
                for angle, label, colour in ((c.deck_edge_immersion_deg, "deck edge under water upright" if under else "deck-edge immersion",
                                              "tab:orange"), (c.vanishing_stability_deg, "vanishing stability", "tab:red")):
                    if angle is not None:
                        ax.axvline(angle, color=colour, ls="--", lw=1, label=label if "upright" in label else f"{label} {angle:.1f} deg")
                ax.set_ylim(1.2 * min(-0.1 * c.max_gz, float(np.min(c.gz))), 1.2 * max(c.max_gz, float(np.max(c.gz)), 1e-3))
                ax.set_xlabel(f"{'heel' if axis == 'roll' else 'trim'} (deg)")
                ax.set_ylabel("righting arm GZ (m)")
                ax.set_title(f"{body}: {c.mass / 1e3:.6g} t, G at {np.round(c.cog, 3).tolist()} m (still waterline z = 0)")
                ax.grid(alpha=0.3)
                ax.legend(fontsize=8)
                fig.tight_layout()
                fig.savefig(stem.with_suffix(".png"), dpi=110)
                plt.close(fig)
                deck = _angle(c.deck_edge_immersion_deg)
                if under:
                    other = "heel" if axis == "pitch" else "trim"
                    deck = f"under water already upright (the free {other} puts it there)"
                print(f"{body} ({axis}): GM {c.gm:.3f} m, static list {_angle(c.equilibrium_heel_deg)}, "
                      f"max righting arm {c.max_gz:.3f} m at {c.angle_of_max_gz_deg:.1f} deg, "
                      f"deck-edge immersion {deck}, vanishing stability {_angle(c.vanishing_stability_deg)}")
                if c.unconverged():
                    print(f"WARNING: {body} ({axis}): {c.unconverged()}")
                print(f"wrote {stem.with_suffix('.txt')} and {stem.with_suffix('.png')}")
    return 0


def _mooring(args) -> int:
    """The restoring force of a moored body over its offset (a table and a PNG), and its static offset
    under the file's steady loads."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .mooring import restoring_curve, static_offset, with_mean_drift
    from .run import start_of

    loaded = _load(args.system)
    system = loaded.system
    body = args.body or next((b for b, j in zip(system.model.body_names, system.model.joints) if type(j).__name__ == "Free"), None)
    if body is None:
        from .mooring import MooringError

        raise MooringError(f"{args.system}: no body on a free joint to offset; name one with --body")
    q0 = start_of(loaded).q
    out = Path(args.out or f"out/{system.name}_mooring")
    out.mkdir(parents=True, exist_ok=True)
    heading = np.radians(args.heading)
    offsets = np.linspace(0.0, args.max_offset, args.points)
    # the restoring of everything but the steady loads (which the offset below balances)
    from .system import System

    kept = tuple(f for f in system.forces if f.kind not in ("steady_force", "wave_drift"))
    restoring = System(system.model, kept, waves=system.waves, loops=system.loops, name=system.name)
    force, yaw, outs = restoring_curve(restoring, body, q0, offsets, (np.cos(heading), np.sin(heading)))
    along = force[:, 0] * np.cos(heading) + force[:, 1] * np.sin(heading)
    tension = {k: v for k, v in outs.items() if k.endswith("/fairlead_tension")}
    head = ["offset (m)", "restoring along the offset (N)", "vertical (N)", "yaw moment (N m)"]
    cols = [offsets, -along, force[:, 2], yaw]
    for k, v in tension.items():
        v = v.reshape(len(offsets), -1)
        for j in range(v.shape[1]):
            head.append(f"{k}[{j}] (N)" if v.shape[1] > 1 else f"{k} (N)")
            cols.append(v[:, j])
    table = "\t".join(head) + "\n" + "\n".join("\t".join(f"{c[r]:.6g}" for c in cols) for r in range(len(offsets))) + "\n"
    (out / "restoring.txt").write_text(table)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(offsets, -along / 1e3, color="tab:blue", label="restoring force along the offset")
    for k, v in tension.items():
        v = v.reshape(len(offsets), -1)
        for j in range(v.shape[1]):
            ax.plot(offsets, v[:, j] / 1e3, lw=0.8, ls="--", label=f"{k}[{j}]" if v.shape[1] > 1 else k)
    ax.set_xlabel(f"offset towards {args.heading:g} deg (m)")
    ax.set_ylabel("kN")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"{system.name}: {body}")
    fig.tight_layout()
    fig.savefig(out / "restoring.png", dpi=110)
    plt.close(fig)
    print(f"{body}: restoring force along {args.heading:g} deg, from 0 to {args.max_offset:g} m of offset: "
          f"{-along[0] / 1e3:.4g} to {-along[-1] / 1e3:.4g} kN")
    steady = with_mean_drift(system, report=print)
    current = getattr(system.waves, "current", None) is not None
    if current or any(f.kind == "steady_force" for f in steady.forces):
        _, offset = static_offset(steady, body, q0)
        drift = " and the mean wave drift" if steady is not system else ""
        print(f"static offset under the steady loads{', the current' if current else ''}{drift}: "
              f"surge {offset[0]:.4g} m, sway {offset[1]:.4g} m, yaw {np.degrees(offset[2]):.4g} deg")
    print(f"wrote {out / 'restoring.txt'} and {out / 'restoring.png'}")
    return 0


def _angle(x):
    return "not reached" if x is None else f"{x:.1f} deg"


def _number(kind, *, low=None, strict=True, what="a number"):
    """An argparse type: ``kind`` (int or float) above ``low`` (or at least, ``strict=False``)."""

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not np.isfinite(value) or (low is not None and (value <= low if strict else value < low)):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


_POSITIVE = _number(float, low=0.0, what="a positive number")
_COUNT = _number(int, low=0, what="a whole number >= 1")
_SEED = _number(int, low=0, strict=False, what="a whole number >= 0")


def _out_folder(text):
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; expected a folder (created if missing)")
    return text


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``jaxmbd run: argument --hs: expected a positive number, got '-1'``)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")


def main(argv=None) -> int:
    from . import __version__

    p = _Parser(prog="jaxmbd", description="Differentiable multibody dynamics for marine operations")
    p.add_argument("--version", action="version", version=f"jaxmbd {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    d = sub.add_parser("demo", help="floating crane in irregular waves: tension, DAF and sway statistics, plots; "
                                    "`demo operability`: a small lift's limiting sea states and workability at a site")
    d.add_argument("which", nargs="?", choices=("crane", "operability"), default="crane", help="which demo (default crane)")
    d.add_argument("--out", default="out/demo", type=_out_folder, help="folder for plots and results (default out/demo)")
    d.add_argument("--realisations", type=_COUNT, default=16, help="wave realisations (default 16)")
    d.add_argument("--duration", type=_POSITIVE, default=600.0, help="seconds simulated per realisation (default 600)")
    d.add_argument("--hs", type=_POSITIVE, default=2.5, help="significant wave height, m (default 2.5)")
    d.add_argument("--tp", type=_POSITIVE, default=9.0, help="peak period, s (default 9)")
    d.add_argument("--chunk", type=_COUNT, default=8, help="realisations per batch (default 8)")
    d.add_argument("--seed", type=_SEED, default=0, help="seed of the wave realisations (default 0)")
    d.set_defaults(func=_demo)
    r = sub.add_parser("run", help="simulate a system file (its scenario, if it has one); write result.nc and a "
                                   "table of maxima with their units")
    r.add_argument("system", help="the system file (TOML)")
    r.add_argument("--out", type=_out_folder, help="output folder (default out/<name>)")
    r.add_argument("--realisations", type=_COUNT, help="wave realisations (default: the file's [simulation])")
    r.add_argument("--duration", type=_POSITIVE, help="seconds simulated (default: the file's [simulation])")
    r.add_argument("--seed", type=_SEED, help="seed of the wave realisations (default: the file's)")
    r.add_argument("--strict", action="store_true", help="fail (exit 3) when the run leaves a model's range of validity")
    r.add_argument("--report", action="store_true", help="also write report.html beside result.nc (jaxmbd report)")
    r.set_defaults(func=_run)
    s = sub.add_parser("sweep", help="Hs x Tp grid with an operability table (resumes an interrupted sweep)")
    s.add_argument("system", help="the system file (TOML) with a [sweep] table")
    s.add_argument("--out", type=_out_folder, help="output folder (default out/<name>_sweep)")
    s.add_argument("--hs", type=_POSITIVE, nargs="+", help="significant wave heights, m (default: [sweep].hs)")
    s.add_argument("--tp", type=_POSITIVE, nargs="+", help="peak periods, s (default: [sweep].tp)")
    s.add_argument("--realisations", type=_COUNT, help="wave realisations per cell (default: the file's)")
    s.add_argument("--duration", type=_POSITIVE, help="seconds simulated per realisation (default: the file's)")
    s.add_argument("--force", action="store_true",
                   help="recompute the cells of the output folder that were computed for another configuration")
    s.add_argument("--coordinator", help="host:port of process 0 for a multi-host sweep (or JAXMBD_COORDINATOR)")
    s.add_argument("--num-processes", type=_COUNT, help="number of processes (or JAXMBD_NUM_PROCESSES)")
    s.add_argument("--process-id", type=_SEED, help="this process's index (or JAXMBD_PROCESS_ID)")
    s.add_argument("--dask", metavar="SCHEDULER_ADDRESS", help="run the cells as tasks on this Dask cluster (tcp://host:8786)")
    s.set_defaults(func=_sweep)
    s.add_argument("--report", action="store_true", help="also write report.html in the output folder (jaxmbd report)")
    for cmd in (r, s):
        cmd.add_argument("--yes", action="store_true", help="run on where the first realisations or cells project over an hour")
    from .operability.command import add_parser as _operability_parser

    _operability_parser(sub, _operability, out=_out_folder, count=_COUNT, index=_SEED)
    from .optim.command import add_parser as _tune_parser
    from .report import add_parser as _report_parser

    _tune_parser(sub, _load, out=_out_folder, count=_COUNT)
    _report_parser(sub)
    pl = sub.add_parser("plot", help="plot the outputs in a result file: every realisation's envelope and realisation 0")
    pl.add_argument("result", help="a result.nc written by jaxmbd run")
    pl.add_argument("variables", nargs="*", help="outputs to plot, as run prints them (hoist/tension) or as stored "
                                                 "(hoist_tension); default: every output")
    pl.add_argument("--out", type=_out_folder, help="folder for the PNGs (default: next to the result)")
    pl.set_defaults(func=_plot)
    st = sub.add_parser("stability", help="GZ (righting-arm) curve of each hull with non-linear hydrostatics: a table and a PNG")
    st.add_argument("system", help="the system file (TOML) with a [[hydro]] entry whose hydrostatics are non-linear")
    st.add_argument("--out", type=_out_folder, help="output folder (default out/<name>_stability)")
    st.add_argument("--max-heel", type=_POSITIVE, default=90.0, help="largest heel either side, deg (default 90)")
    st.add_argument("--step", type=_POSITIVE, default=1.0, help="heel step, deg (default 1)")
    st.add_argument("--axis", choices=("roll", "pitch", "both"), default="both", help="heel about x (roll), y (pitch) or both")
    st.set_defaults(func=_stability)
    mo = sub.add_parser("mooring", help="restoring force of a moored body over its offset (a table and a PNG), and "
                                        "its static offset under the file's steady loads")
    mo.add_argument("system", help="the system file (TOML) with mooring lines on a body on a free joint")
    mo.add_argument("--body", help="the moored body (default: the first on a free joint)")
    mo.add_argument("--heading", type=float, default=0.0, help="direction of the offset, deg from +x towards +y")
    mo.add_argument("--max-offset", type=_POSITIVE, default=50.0, help="largest offset, m (default 50)")
    mo.add_argument("--points", type=int, default=26, help="offsets in the table (default 26)")
    mo.add_argument("--out", type=_out_folder, help="output folder (default out/<name>_mooring)")
    mo.set_defaults(func=_mooring)
    args = p.parse_args(argv)
    configure(compilation_cache=True)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("jaxmbd: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # input and run errors are one line for the user
        import os

        if os.environ.get("JAXMBD_DEBUG"):
            raise
        if isinstance(exc, (JaxmbdError, OSError)):
            print(f"jaxmbd: {exc}", file=sys.stderr)
            return 2
        print(f"jaxmbd: internal error: {type(exc).__name__}: {exc} (JAXMBD_DEBUG=1 shows the traceback; "
              "please report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
