"""``jaxmbd report RESULT [RESULT ...]``: one self-contained HTML file an engineer hands on.

A RESULT is a run's ``result.nc`` (``jaxmbd run``, ``jaxmbd demo``; with or without a scenario's phases), an
operability study's folder (``jaxmbd operability``: ``limits.nc`` and ``site.nc``) or a sweep's folder
(``jaxmbd sweep``: ``operability.nc``).  The report holds, per
result: the verdict (the ranges of validity the run left, or the operation's workability and waiting time),
the inputs (the system file's text, the version, the sea state, the seed and the realisations), tables with
units (every output's extremes; per phase for a scenario; the limits and the months of a study), every
output's plot (the envelope over the realisations and realisation 0, as PNGs inside the file) and the
warnings of the ranges left, with the element, the time and the realisations.  Every figure in it is read
from the result file it names, and the file names the system file and the seed that made it.

The page is written from a Jinja2 template (``jaxmbd/templates/report.html.j2``); it loads nothing from
elsewhere, so it opens offline in any browser.
"""

from __future__ import annotations

import base64
import datetime
import io
import json
from pathlib import Path

import numpy as np

from . import __version__
from .errors import InputError

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_NOT_OUTPUTS = {"q", "v", "z", "phase", "time"}
_BETWEEN = ("_max_between", "_min_between", "_slack_entries", "_slack_seconds")


class ReportError(InputError):
    """A path given to ``jaxmbd report`` that is not a run's result file or an operability study's folder."""


def write_report(paths, out, *, title: str | None = None) -> Path:
    """The report of the results at ``paths`` (result files, operability folders) written to ``out`` (HTML)."""
    sections = [read_section(Path(p)) for p in paths]
    if not sections:
        raise ReportError("report: expected at least one result (a result.nc or an operability folder)")
    html = render(sections, title=title or "; ".join(s["title"] for s in sections))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out


def read_section(path: Path) -> dict:
    """The plain data (numbers, strings, PNGs as base64) one result contributes to the report."""
    if path.is_dir():
        if (path / "limits.nc").exists():
            return operability_section(path)
        if (path / "operability.nc").exists():
            return sweep_section(path)
        raise ReportError(f"{path}: a folder without limits.nc or operability.nc (an operability study's or a sweep's "
                          "output); give a result file or such a folder")
    if not path.exists():
        raise ReportError(f"{path}: no such file or folder")
    from .netcdf import open_result

    try:
        ds = open_result(path)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: not a readable NetCDF result ({exc})") from None
    if "jaxmbd_version" not in ds.attrs or "time" not in ds.variables:
        raise ReportError(f"{path}: not a jaxmbd run's result file (no jaxmbd_version attribute or time)")
    return run_section(path, ds)


def _html_file(text: str) -> Path:
    """``--out``: the page to write (replaced if it is there), not a folder."""
    import argparse

    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; expected the HTML file to write (e.g. {Path(text) / 'report.html'})")
    return Path(text)


def add_parser(sub):
    """``jaxmbd report RESULT [RESULT ...] [--out FILE]``."""
    rp = sub.add_parser("report", help="one self-contained HTML report of run results and operability studies: the "
                                       "verdict, the inputs, tables with units, plots, the ranges of validity left")
    rp.add_argument("results", nargs="+", help="result files (result.nc of jaxmbd run or demo), sweep or operability folders")
    rp.add_argument("--out", type=_html_file, default="report.html", help="the HTML file to write (default report.html; "
                                                                         "replaced if it is there)")
    rp.add_argument("--title", help="the report's title (default: the results' titles)")
    rp.set_defaults(func=lambda args: print(f"wrote {write_report(args.results, args.out, title=args.title)}") or 0)
    return rp


# --------------------------------------------------------------------------- a run


def run_outputs(ds) -> list[str]:
    """The names of a run file's outputs (``hoist/tension``, their paths in the file), in the file's order."""
    return [n for n in ds.data_vars if n not in _NOT_OUTPUTS and not n.endswith(_BETWEEN) and "/" in ds[n].attrs.get("long_name", "")]


def component_unit(units: str, label) -> str:
    """The unit of one component from a mixed-units string ``"N (fx fy fz), N m (mx my mz)"`` (the run table,
    ``jaxmbd plot`` and the report read it the same way)."""
    if label is None or "(" not in units:
        return units
    for part in units.split("),"):
        unit, _, members = part.partition("(")
        if str(label).rstrip("0123456789") in members.replace(")", "").split():
            return unit.strip()
    return units


def components(x) -> list:
    """``[(label or None, the variable's slice)]``: a scalar output once, a vector output per component (its
    coordinate's label where the file has one); [] for an output of more than one extra dimension."""
    extra = [d for d in x.dims if d not in ("realisation", "time", "sample")]
    if not extra:
        return [(None, x)]
    if len(extra) > 1:
        return []
    labels = x[extra[0]].values if extra[0] in x.coords else range(x.sizes[extra[0]])
    return [(str(label), x.isel({extra[0]: k})) for k, label in enumerate(labels)]


def series(ds, between: bool = False):
    """(label, units, values (realisations..., time)) of every output, a vector output once per component
    (``hoist/wrench[fx]``, with that component's unit); ``between``: and the (largest, smallest) values between
    the saves where the run took them at every step (``<output>[_<k>]_max_between``), else None."""
    for n in run_outputs(ds):
        x = ds[n]
        name, units = x.attrs["long_name"], x.attrs.get("units", "")
        for k, (label, part) in enumerate(components(x)):
            row = (name if label is None else f"{name}[{label}]"), component_unit(units, label), np.asarray(part.values, float)
            if between:
                stem = n if label is None else f"{n}_{k}"
                b = [ds.get(f"{stem}_{m}_between") for m in ("max", "min")]
                row += (None if b[0] is None else tuple(np.asarray(v.values, float) for v in b),)
            yield row


def shown_units(ds):
    """``unit -> (unit shown, factor)``: the display units the run's terminal table printed (:mod:`jaxmbd.units`:
    degrees, and the file's ``display_loads`` with the model's g, both written in the result file)."""
    from .units import DISPLAY_LOADS, display_unit

    loads, g = ds.attrs.get("display_loads", "kN"), float(ds.attrs.get("gravity_m_s2", 9.81))
    return lambda unit: display_unit(unit, loads if loads in DISPLAY_LOADS else "kN", g)


def output_rows(ds) -> list[dict]:
    """Per output (a vector's per component): its name, units (shown and SI, with the factor between them), the
    largest and smallest value over every realisation and save, the mean over the realisations of their maxima
    (at every step where the run took it there, as the terminal's table), and the largest taken at every step (SI
    figures)."""
    rows, shown = [], shown_units(ds)
    for name, units, a, between in series(ds, between=True):
        per = np.nanmax((a if between is None else between[0]).reshape(-1, a.shape[-1]), axis=-1)  # as the terminal's table
        u, f = shown(units)
        rows.append({"name": name, "units": u, "si_units": units, "factor": f, "max": float(np.nanmax(a)), "min": float(np.nanmin(a)),
                     "mean_max": float(np.mean(per)),
                     "max_between": float(np.nanmax(between[0])) if between is not None else None})
    return rows


def phase_rows(ds) -> list[dict]:
    """Per phase and output (a vector's per component) of a scenario run: the largest and smallest value while the
    phase ran (at every step where the run took it there, as the terminal's phase table)."""
    if "phase" not in ds:
        return []
    names = json.loads(ds["phase"].attrs.get("phase_names", "[]"))
    ph = np.asarray(ds["phase"].values)
    rows, shown = [], shown_units(ds)
    for k, name in enumerate(names):
        inside = ph == k
        if not inside.any():
            continue
        for out, units, a, between in series(ds, between=True):
            hi, lo = (a, a) if between is None else between  # at every step where the run took it there
            u, f = shown(units)
            rows.append({"phase": name, "name": out, "units": u, "si_units": units, "factor": f,
                         "max": float(np.nanmax(hi[inside])), "min": float(np.nanmin(lo[inside]))})
    return rows


def excursions(ds) -> list[dict]:
    """The ranges of validity the run left (the file's ``validity`` attribute), each with its line."""
    found = json.loads(ds.attrs.get("validity", "[]"))
    from .validity import Excursion

    return [dict(e, line=Excursion(**e).line()) for e in found]


def run_section(path: Path, ds) -> dict:
    left = excursions(ds)
    sea = ds.attrs.get("sea_state")
    inputs = {"system file": ds.attrs.get("system_file", "none: built in Python (jaxmbd demo, a script)"),
              "jaxmbd version": ds.attrs.get("jaxmbd_version", ""),
              "written": ds.attrs.get("history", ""), "seed": ds.attrs.get("seed", ""),
              "realisations": ds.attrs.get("realisations", ds.sizes.get("realisation", 1)),
              "duration (s)": ds.attrs.get("duration_s", ""), "start": ds.attrs.get("start", "")}
    events = json.loads(ds.attrs["events"]) if "events" in ds.attrs else None
    verdict = ("Every model stayed inside its range of validity." if not left else
               f"The run left {len(left)} range(s) of validity: the figures below are outside what the models can "
               "answer where it did (the warnings below say where and when).")
    return {"kind": "run", "path": str(path), "title": ds.attrs.get("title", path.name), "verdict": verdict,
            "ok": not left, "inputs": inputs, "sea_state": json.loads(sea) if sea else None,
            "system_text": ds.attrs.get("system_file_text", ""), "outputs": output_rows(ds), "phases": phase_rows(ds),
            "events": events if events and isinstance(events[0], dict) else (events[0] if events else None),
            "loads": ds.attrs.get("display_loads", "kN"),
            "excursions": left, "plots": run_plots(ds)}


def output_figure(ds, name: str):
    """The figure of one output of a run file (stored name ``hoist_tension``), a panel per component: the
    envelope over the realisations (where they share a time grid; else each realisation's own line) and
    realisation 0, the phases' starts marked.  ``jaxmbd plot`` writes it; the report holds it.  None for an
    output of more than one extra dimension."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    var = ds[name]
    panels = components(var)
    if not panels:
        return None
    t = np.asarray(ds["time"].values, float)
    t0 = t[0] if t.ndim == 2 else t
    starts = []
    if "phase" in ds:
        ph = np.asarray(ds["phase"].values)
        ph0 = ph[0] if ph.ndim == 2 else ph
        starts = [t0[np.argmax(ph0 == k)] for k in np.unique(ph0[ph0 >= 0])[1:]]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.2 + 1.3 * len(panels)), sharex=True, squeeze=False)
    for ax, (label, x) in zip(axes[:, 0], panels):
        a = np.asarray(x.values, float)
        if "realisation" in x.dims and t.ndim == 1:
            ax.fill_between(t, np.nanmin(a, axis=0), np.nanmax(a, axis=0), color="tab:blue", alpha=0.2, lw=0,
                            label=f"envelope of {a.shape[0]} realisations")
        elif "realisation" in x.dims:
            for r in range(1, a.shape[0]):
                ax.plot(t[r], a[r], color="0.75", lw=0.6)
        ax.plot(t0, a[0] if "realisation" in x.dims else a, lw=0.8, color="tab:blue",
                label="realisation 0" if "realisation" in x.dims else None)
        for ts in starts:
            ax.axvline(ts, color="k", lw=0.6, ls=":")
        what = label or var.attrs.get("long_name", name).rsplit("/", 1)[-1]
        ax.set_ylabel(f"{what} ({component_unit(var.attrs.get('units', '?'), label)})")
        ax.grid(alpha=0.3)
    axes[0, 0].set_title(var.attrs.get("long_name", name) + (" (dotted: a phase starts)" if starts else ""))
    if "realisation" in var.dims:
        axes[0, 0].legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout()
    return fig


def run_plots(ds) -> list[dict]:
    """Every output's figure (:func:`output_figure`) as a PNG inside the page."""
    import matplotlib.pyplot as plt

    plots = []
    for n in run_outputs(ds):
        fig = output_figure(ds, n)
        if fig is not None:
            plots.append({"name": ds[n].attrs["long_name"], "png": png(fig)})
            plt.close(fig)
    return plots


# --------------------------------------------------------------------------- an operability study


def operability_section(folder: Path) -> dict:
    import xarray as xr

    with xr.open_dataset(folder / "limits.nc", engine="h5netcdf") as lim:
        lim = lim.load()
    site = None
    if (folder / "site.nc").exists():
        with xr.open_dataset(folder / "site.nc", engine="h5netcdf") as s:
            site = s.load()
    limits = []
    for k, phase in enumerate(lim["phase"].values):
        for h, heading in enumerate(lim["heading"].values):
            for j, tp in enumerate(lim["tp"].values):
                limits.append({"phase": str(phase), "heading": float(heading), "tp": float(tp),
                               "limiting_hs": float(lim["limiting_hs"].values[k, h, j]),
                               "operational_hs": float(lim["operational_hs"].values[k, h, j]),
                               "alpha": float(lim["alpha"].values[k, h, j]), "status": str(lim["status"].values[k, h, j]),
                               "governing": str(lim["governing"].values[k, h, j])})
    left = [{"heading": float(lim["heading"].values[h]), "tp": float(lim["tp"].values[j]), "line": str(v)}
            for (h, j), v in np.ndenumerate(lim["validity"].values) if str(v)]
    months, verdict = [], "The limits of every phase, heading and period are below; no site was given."
    if site is not None:
        work = site["workability"].values
        wait = site["waiting"].values
        for m in range(12):
            months.append({"month": MONTHS[m], "workability": float(work[m]), "p50": float(wait[m, 0]), "p90": float(wait[m, 1])})
        good = [x for x in months if np.isfinite(x["workability"])]
        lo, hi = min(good, key=lambda x: x["workability"]), max(good, key=lambda x: x["workability"])
        p90 = max((x for x in good if np.isfinite(x["p90"])), key=lambda x: x["p90"], default=None)
        verdict = (f"The operation can start in {100 * lo['workability']:.0f} % of the hours of {lo['month']} (its worst "
                   f"month) to {100 * hi['workability']:.0f} % of {hi['month']}"
                   + (f"; the P90 wait for a window is longest in {p90['month']}: {p90['p90']:.0f} h." if p90 else "."))
    written = [{"name": f"{name} (as the command plotted it)", "png": base64.b64encode((folder / name).read_bytes()).decode("ascii")}
               for name in ("limits.png", "site.png") if (folder / name).exists()]
    return {"kind": "operability", "path": str(folder), "title": f"operability study ({folder.name})", "verdict": verdict,
            "ok": not left and not np.any(lim["status"].values == "unconverged"),
            "inputs": {"realisations a run": lim.attrs.get("n_realisations", ""), "seed": lim.attrs.get("seed", ""),
                                      "planned operation (h)": lim.attrs.get("planned_operation_hours", ""),
                                      "weather windows over T_R (h)": (int(site["reference_period"]) if site is not None
                                                                       and "reference_period" in site else ""),
                                      "forecast level": lim.attrs.get("forecast_level", ""),
                                      "hindcast": site.attrs.get("hindcast", "") if site is not None else "",
                                      "hindcast coverage": (f"{100 * float(site.attrs['hindcast_coverage']):.1f} %"
                                                            if site is not None and "hindcast_coverage" in site.attrs else "")},
            "limits": limits, "months": months, "validity": left, "plots": operability_plots(lim, site) + written}


def operability_plots(lim, site) -> list[dict]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = []
    tp, heading = lim["tp"].values, lim["heading"].values
    for k, phase in enumerate(lim["phase"].values):
        v = lim["operational_hs"].values[k]
        fig, ax = plt.subplots(figsize=(max(5.0, 1.5 + 0.8 * len(tp)), max(2.4, 1.2 + 0.45 * len(heading))))
        im = ax.imshow(v, origin="lower", aspect="auto", cmap="viridis")
        mid = np.nanmean(v)
        for (h, j), x in np.ndenumerate(v):
            ax.text(j, h, f"{x:.2f}", ha="center", va="center", fontsize=8, color="k" if x > mid else "w")
        ax.set_xticks(range(len(tp)), [f"{x:g}" for x in tp])
        ax.set_yticks(range(len(heading)), [f"{x:g}" for x in heading])
        ax.set_xlabel("Tp (s)")
        ax.set_ylabel("heading (deg)")
        ax.set_title(f"{phase}: operational limit, alpha x limiting Hs (m)", fontsize=9)
        fig.colorbar(im, ax=ax, label="Hs (m)")
        fig.tight_layout()
        plots.append({"name": f"{phase}: operational Hs", "png": png(fig)})
        plt.close(fig)
    if site is not None:
        fig, ax = plt.subplots(figsize=(8, 2.8))
        ax.bar(range(12), 100 * site["workability"].values, color="C2")
        ax.set_xticks(range(12), MONTHS)
        ax.set_ylabel("workability (%)")
        ax.grid(alpha=0.3, axis="y")
        fig.tight_layout()
        plots.append({"name": "workability per month", "png": png(fig)})
        plt.close(fig)
    return plots


# --------------------------------------------------------------------------- a sweep


def sweep_section(folder: Path) -> dict:
    """A sweep's table (``operability.nc``): per Hs and Tp each limited output's statistic against its limit."""
    from .netcdf import open_result

    ds = open_result(folder / "operability.nc")
    hs, tp = ds["hs"].values, ds["tp"].values
    ok = np.asarray(ds["operable"].values, bool)
    limits = [{"name": ds[v].attrs.get("long_name", v), "units": ds[v].attrs.get("units", ""),
               "limit": float(ds[v].attrs["limit"]), "statistic": ds[v].attrs.get("statistic", ""),
               "rows": [{"hs": float(h), "values": [float(x) for x in ds[v].values[i]]} for i, h in enumerate(hs)]}
              for v in ds.data_vars if v != "operable"]
    cells = [{"hs": float(h), "tp": float(t)} for (i, j), good in np.ndenumerate(ok) if good for h, t in [(hs[i], tp[j])]]
    verdict = (f"{ok.sum()} of {ok.size} sea states (Hs x Tp) keep every limited output within its limit"
               + (f"; the highest Hs that does: {max(c['hs'] for c in cells):g} m." if cells else "; none does."))
    plots = [{"name": "operability.png (as the command plotted it)",
              "png": base64.b64encode((folder / "operability.png").read_bytes()).decode("ascii")}] if (folder / "operability.png").exists() else []
    return {"kind": "sweep", "path": str(folder), "title": f"sea-state sweep ({folder.name})", "verdict": verdict,
            "ok": bool(ok.any()), "inputs": {"Hs (m)": ", ".join(f"{x:g}" for x in hs), "Tp (s)": ", ".join(f"{x:g}" for x in tp)},
            "tp": [float(x) for x in tp], "sweep": limits, "operable": [[bool(x) for x in row] for row in ok], "plots": plots}


# --------------------------------------------------------------------------- the page


def png(fig) -> str:
    """A figure as a base64 PNG (an ``<img src="data:...">`` inside the page)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def number(x, digits: int = 4) -> str:
    """A figure as the tables print it: 4 significant digits, blank for None, 'n/a' for NaN."""
    if x is None:
        return ""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not np.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def shown_figure(x, factor: float) -> str:
    """An SI figure in its shown unit as the terminal prints it (:func:`jaxmbd.units.figure`); blank for None."""
    from .units import figure

    return "" if x is None else figure(float(x), factor)


def render(sections, *, title: str) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("jaxmbd", "templates"), autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = number
    env.filters["shown"] = shown_figure
    return env.get_template("report.html.j2").render(
        title=title, sections=sections, version=__version__,
        written=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
