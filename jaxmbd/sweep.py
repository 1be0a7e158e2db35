"""Sea-state sweeps: a grid of Hs x Tp, Monte-Carlo realisations per cell, an operability table.

Each cell is one chunk written to disk as soon as it finishes
(``cell_<i>_<j>.nc`` in the output folder, written to a temporary name and
renamed, so a killed run never leaves half a chunk); a rerun skips the cells
already there, so an interrupted sweep resumes where it stopped.  Cells are
dealt round-robin to processes (``process_index`` of ``process_count``), which
is how several hosts share one sweep (see :func:`initialise_distributed`).
Changing Hs and Tp only replaces array leaves of the system, so every cell
reuses the same compiled simulation.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import xarray as xr

from .simulate import Integrator, simulate
from .statistics import ExtremeStatistics
from .system import System


@dataclasses.dataclass
class SweepSettings:
    hs: list
    tp: list
    limits: dict  # output name -> upper limit (SI), e.g. {"hoist1/tension": 6e6}
    duration: float
    n_realisations: int
    save_dt: float
    integrator: Integrator
    seed: int = 0
    statistic: str = "mpm"  # which statistic of the per-realisation maxima is held against the limit


def initialise_distributed(coordinator: str | None = None, num_processes: int | None = None,
                           process_id: int | None = None) -> tuple[int, int]:
    """Join a multi-process run (``jax.distributed.initialize``) and return (process_index, process_count).

    Arguments default to the standard environment variables
    JAXMBD_COORDINATOR (host:port of process 0), JAXMBD_NUM_PROCESSES and
    JAXMBD_PROCESS_ID; with none given the run is a single process.
    """
    coordinator = coordinator or os.environ.get("JAXMBD_COORDINATOR")
    num_processes = num_processes or (int(os.environ["JAXMBD_NUM_PROCESSES"]) if "JAXMBD_NUM_PROCESSES" in os.environ else None)
    if process_id is None and "JAXMBD_PROCESS_ID" in os.environ:
        process_id = int(os.environ["JAXMBD_PROCESS_ID"])
    if not coordinator or not num_processes or num_processes < 2:
        return 0, 1
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes, process_id=process_id)
    return jax.process_index(), jax.process_count()


def with_sea_state(system: System, hs: float, tp: float) -> System:
    """The same system in another sea state (Hs, Tp): only array leaves change."""
    if system.waves is None or system.waves.spectrum is None:
        raise ValueError(f"{system.name}: a sweep needs irregular waves (a spectrum) on the system")
    spec = system.waves.spectrum
    dtype = jax.numpy.result_type(spec.hs)  # the spectrum's own float type: a float32 sea state stays float32
    spec = eqx.tree_at(lambda s: (s.hs, s.tp), spec, (jax.numpy.asarray(hs, dtype=dtype), jax.numpy.asarray(tp, dtype=dtype)))
    return eqx.tree_at(lambda s: s.waves.spectrum, system, spec)


def _cell_path(out: Path, i: int, j: int) -> Path:
    return out / f"cell_{i:03d}_{j:03d}.nc"


def run_cell(system: System, q0, settings: SweepSettings, i: int, j: int) -> xr.Dataset:
    """Simulate one sea state and return the per-realisation maxima of every scalar output."""
    sys_ij = with_sea_state(system, settings.hs[i], settings.tp[j])
    key = jax.random.fold_in(jax.random.key(settings.seed), i * 1000 + j)
    res = simulate(sys_ij, settings.duration, save_dt=settings.save_dt, integrator=settings.integrator, q0=q0,
                   key=key, n_realisations=settings.n_realisations)
    data = {}
    for name, val in res.outputs.items():
        val = np.asarray(val)
        if val.ndim == 2:  # (realisation, time): a scalar output
            data[name.replace("/", "__")] = ("realisation", np.max(val, axis=1))
    return xr.Dataset(data, coords={"realisation": np.arange(settings.n_realisations)},
                      attrs={"hs": float(settings.hs[i]), "tp": float(settings.tp[j]), "i": i, "j": j})


def run_sweep(system: System, q0, settings: SweepSettings, out_dir, *, process_index: int = 0,
              process_count: int = 1, progress=None, wait: bool = True) -> xr.Dataset | None:
    """Run (or resume) the sweep; return the operability dataset (process 0), else None."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cells = [(i, j) for i in range(len(settings.hs)) for j in range(len(settings.tp))]
    mine = [c for k, c in enumerate(cells) if k % process_count == process_index]
    done = 0
    for i, j in mine:
        path = _cell_path(out, i, j)
        if not path.exists():
            ds = run_cell(system, q0, settings, i, j)
            tmp = path.with_suffix(f".tmp{process_index}")
            ds.to_netcdf(tmp, engine="h5netcdf")
            os.replace(tmp, path)
        done += 1
        if progress is not None:
            progress(done, len(mine), settings.hs[i], settings.tp[j])
    if process_index != 0:
        return None
    while wait and not all(_cell_path(out, i, j).exists() for i, j in cells):
        time.sleep(1.0)
    table = operability(settings, out)
    table.to_netcdf(out / "operability.nc", engine="h5netcdf")
    return table


def operability(settings: SweepSettings, out_dir) -> xr.Dataset:
    """Statistic of each limited output per cell, and whether every limit holds (``operable``)."""
    out = Path(out_dir)
    shape = (len(settings.hs), len(settings.tp))
    stats = {name: np.full(shape, np.nan) for name in settings.limits}
    for i in range(shape[0]):
        for j in range(shape[1]):
            with xr.open_dataset(_cell_path(out, i, j), engine="h5netcdf") as ds:
                for name in settings.limits:
                    key = name.replace("/", "__")
                    if key not in ds:
                        raise KeyError(f"sweep limit on {name!r}: no such scalar output; outputs are "
                                       f"{sorted(k.replace('__', '/') for k in ds.data_vars)}")
                    s = ExtremeStatistics.of(ds[key].values[:, None])
                    stats[name][i, j] = getattr(s, settings.statistic)
    ok = np.ones(shape, dtype=bool)
    data = {}
    for name, lim in settings.limits.items():
        data[name.replace("/", "__")] = (("hs", "tp"), stats[name], {"limit": float(lim), "statistic": settings.statistic})
        ok &= stats[name] <= lim
    data["operable"] = (("hs", "tp"), ok)
    return xr.Dataset(data, coords={"hs": ("hs", np.asarray(settings.hs, float), {"units": "m"}),
                                    "tp": ("tp", np.asarray(settings.tp, float), {"units": "s"})})


def plot_operability(table: xr.Dataset, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in table.data_vars if k != "operable"]
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        var = table[name]
        ratio = var.values / var.attrs["limit"]
        im = ax.pcolormesh(table.tp.values, table.hs.values, ratio, cmap="RdYlGn_r", vmin=0.0, vmax=2.0, shading="nearest")
        for i, hs in enumerate(table.hs.values):
            for j, tp in enumerate(table.tp.values):
                ax.text(tp, hs, f"{ratio[i, j]:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xlabel("Tp (s)")
        ax.set_ylabel("Hs (m)")
        ax.set_title(f"{name.replace('__', '/')}: {var.attrs['statistic']} / limit")
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
