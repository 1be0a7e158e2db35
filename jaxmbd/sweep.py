"""Sea-state sweeps: a grid of Hs x Tp, Monte-Carlo realisations per cell, an operability table.

Each cell is one chunk written to disk as soon as it finishes
(``cell_<i>_<j>.nc`` in the output folder, written to a temporary name and
renamed, so a killed run never leaves half a chunk); a rerun skips the cells
already there, so an interrupted sweep resumes where it stopped.

A cell is reused only if it was computed for the same numbers: each file carries a key of
everything that decides them (the system's arrays and structure, the start configuration, Hs, Tp,
seed, realisations, duration, save step, integrator, jaxmbd's version and a digest of its source)
and a checksum of its data.
A cell computed for another configuration stops the sweep with a message naming what changed
(``force=True``, ``jaxmbd sweep --force``, recomputes it); a damaged cell (truncated, altered) is
recomputed with a note.  A lock file per process stops a second sweep on the same folder.  Cells are
dealt round-robin to processes (``process_index`` of ``process_count``), which
is how several hosts share one sweep (see :func:`initialise_distributed`).
Changing Hs and Tp only replaces array leaves of the system, so every cell
reuses the same compiled simulation.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import jax
import numpy as np

if TYPE_CHECKING:  # xarray is imported where a dataset is made or read
    import xarray as xr

from . import __version__, netcdf
from .cluster import as_tasks
from .errors import JaxmbdError
from .hydro.spectra import HsTpSpectrum, Torsethaugen
from .results import Result
from .run import RunSettings, Start, TimeBudget, run
from .simulation import Integrator, sea_state_leaves
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
    count = num_processes if num_processes and num_processes > 1 else 1
    if process_id is not None and not 0 <= process_id < count:
        raise SweepError(f"process id {process_id} (--process-id or JAXMBD_PROCESS_ID) is outside the {count} process"
                         f"{'es' if count > 1 else ''} of the run (--num-processes or JAXMBD_NUM_PROCESSES): expected 0 to {count - 1}")
    if not coordinator or not num_processes or num_processes < 2:
        return 0, 1
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes, process_id=process_id)
    return jax.process_index(), jax.process_count()


class SweepError(JaxmbdError, RuntimeError):
    """A sweep folder that cannot be used as it is (cells of another configuration, another sweep at work)."""


def _cell_path(out: Path, i: int, j: int) -> Path:
    return out / f"cell_{i:03d}_{j:03d}.nc"


_QUOTED = re.compile(r"""(['"])([^'"]*[/\\][^'"]*)\1""")


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def _files_as_contents(text: str) -> str:
    """``text`` with every quoted string that names an existing file (a hydrodynamic database's ``source``)
    replaced by a digest of that file's contents: a key then holds what the file says, not where it lies, so
    cells computed in one checkout are taken by another, and a file changed in place is another cell."""
    def contents(m):
        path = Path(m.group(2))
        try:
            if not path.is_file():
                return m.group(0)
            st = path.stat()
        except (OSError, ValueError):  # a name the system cannot stat (too long, a NUL in it)
            return m.group(0)
        return f"file:{_file_digest(str(path.resolve()), st.st_mtime_ns, st.st_size)}"
    return _QUOTED.sub(contents, text)


def tree_digest(*trees) -> str:
    """sha256 of the structure and every array of the pytrees (static fields are in the structure; a file's
    path among them counts by the file's contents)."""
    h = hashlib.sha256()
    for tree in trees:
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        h.update(_files_as_contents(str(treedef)).encode())
        for leaf in leaves:
            if isinstance(leaf, jax.Array | np.ndarray | float | int | complex | bool | np.generic):
                a = np.asarray(jax.random.key_data(leaf) if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(
                    leaf.dtype, jax.dtypes.prng_key) else leaf)
                h.update(f"{a.dtype}{a.shape}".encode())
                h.update(np.ascontiguousarray(a).tobytes())
            else:
                h.update(_files_as_contents(repr(leaf)).encode())
    return h.hexdigest()


# How far a floating-point array of a key may move and still be the same study: a processor that rounds
# differently (XLA's and the BLAS's kernels are chosen per instruction set) builds the same file's system and
# solves its equilibrium to other bits, so a bitwise digest alone refuses the cells of the same study computed on
# another kind of host (a cluster of mixed nodes, a folder moved between machines).  Each element is compared by
# its relative change (asinh of the element over a floor, see tree_summary), averaged over a block of the array:
# 1e-10 is well above round-off (1e-16 to 1e-12 of an element) and well below a change anyone makes to an input.
ROUNDING = 1e-10
_BLOCKS = 16  # a floating-point leaf is summarised in up to this many contiguous blocks of its elements
_GOLDEN = 0.6180339887498949


def _array_of(leaf):
    if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(leaf))
    return np.asarray(leaf)


def tree_summary(*trees) -> dict:
    """What :func:`same_tree` compares where two digests differ.  ``exact``: a digest of the structure, of every
    leaf that is not floating point (integers, booleans, keys, static fields, a file's contents) and of where
    each floating-point leaf is not finite (and its non-finite values).  ``values``: per non-empty floating-point
    leaf (by its path in the tree), its finite elements (real and imaginary parts apart) in up to 16 contiguous
    blocks, each block's sum of w asinh(x / a) and its sum of weights w (1 to 2, a fixed sequence, so that a
    change in any one element moves its block's sum, and two elements swapped do too).  The floor ``a`` is
    1e-6 of the leaf's largest magnitude, at least 1e-9 of the tree's: an element above it counts by its
    relative change, one below (zero to round-off: 1e-17 on one processor, 0 on another) by its change over a."""
    h, values = hashlib.sha256(), {}
    for t, tree in enumerate(trees):
        leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
        h.update(_files_as_contents(str(jax.tree_util.tree_structure(tree))).encode())
        floats = []
        for path, leaf in leaves:
            if not isinstance(leaf, jax.Array | np.ndarray | float | int | complex | bool | np.generic):
                h.update(_files_as_contents(repr(leaf)).encode())
                continue
            x = _array_of(leaf)
            h.update(f"{x.dtype}{x.shape}".encode())
            if not np.issubdtype(x.dtype, np.inexact):
                h.update(np.ascontiguousarray(x).tobytes())
                continue
            x = np.ravel(x)
            x = np.concatenate([x.real, x.imag]) if np.iscomplexobj(x) else x
            x = x.astype(np.float64)
            finite = np.isfinite(x)
            h.update(np.packbits(finite).tobytes())
            h.update(x[~finite].tobytes())  # inf, -inf, nan: exact
            floats.append((f"{t}{jax.tree_util.keystr(path)}", np.where(finite, x, 0.0)))
        top = max((float(np.max(np.abs(x))) for _, x in floats if x.size), default=0.0)
        for name, x in floats:
            if not x.size:
                continue
            a = max(1e-6 * float(np.max(np.abs(x))), 1e-9 * top, 1e-300)
            g = np.arcsinh(x / a)
            w = 1.0 + np.mod(np.arange(1, x.size + 1) * _GOLDEN, 1.0)
            values[name] = [[float(np.sum(w[b] * g[b])), float(np.sum(w[b]))]
                            for b in np.array_split(np.arange(x.size), min(x.size, _BLOCKS))]
    return {"exact": h.hexdigest()[:16], "values": values}


def same_tree(old: dict, new: dict, rtol: float = ROUNDING) -> list[str]:
    """The leaves in which the tree of summary ``new`` (:func:`tree_summary`) is not that of ``old`` beyond
    round-off: a block's weighted sum moved by more than ``rtol`` of its weights' sum (its elements' relative
    changes averaged over the block); empty: the same tree."""
    if old.get("exact") != new.get("exact"):
        return ["its structure, a leaf that is not floating point, or where a leaf is not finite"]
    a, b = old.get("values", {}), new.get("values", {})
    if set(a) != set(b):
        return sorted(set(a) ^ set(b))
    changed = []
    for name, row in b.items():
        was = a[name]
        if len(was) != len(row) or any(w1 != w0 for (_, w1), (_, w0) in zip(row, was)):
            changed.append(name)
            continue
        worst = max(abs(s1 - s0) / w1 for (s1, w1), (s0, _) in zip(row, was))
        if not worst <= rtol:
            changed.append(f"{name} (moved {worst:.1e}, round-off is below {rtol:g})")
    return changed


def system_key(base, start) -> dict:
    """The key's entries for a system (its sea state zeroed) and a :class:`jaxmbd.run.Start`: their bitwise
    digests and the summaries that tell another processor's round-off from a change (:func:`key_changes`)."""
    state = (start.q, start.v, start.z)
    return {"system": tree_digest(base)[:16], "start": tree_digest(state)[:16],
            "system_values": tree_summary(base), "start_values": tree_summary(state)}


def key_changes(old: dict, new: dict) -> tuple[list[str], bool]:
    """What differs between a cell's stored key ``old`` and this run's ``new``, as (fields or leaves that
    changed, whether a digest differed by round-off only).  A digest field ``f`` ("system", "start") whose
    bits differ is the same where both keys hold its summary ``f_values`` and :func:`same_tree` finds no
    leaf beyond :data:`ROUNDING`: the same study on a processor that rounds differently."""
    if old == new:
        return [], False
    digests = [f for f in new if f + "_values" in new]
    changed, rounded = [], False
    for f in sorted(set(old) | set(new)):
        if f.endswith("_values") and f[: -len("_values")] in digests or old.get(f) == new.get(f):
            continue
        if f in digests and isinstance(old.get(f + "_values"), dict):
            leaves = same_tree(old[f + "_values"], new[f + "_values"])
            if not leaves:
                rounded = True
                continue
            changed.append(f"{f} ({', '.join(leaves[:3])}{', ...' if len(leaves) > 3 else ''})")
        elif f in digests:
            changed.append(f"{f} (its arrays' bits; the cell's key, older, holds no summary to tell round-off apart)")
        else:
            was, now = old.get(f), new.get(f)
            shown = all(v is None or isinstance(v, int | float) or isinstance(v, str) and len(v) <= 40
                        and not re.fullmatch(r"[0-9a-f]{16}", v) for v in (was, now))  # digests and reprs: named only
            changed.append(f"{f} {was!r} -> {now!r}" if shown else f)
    return changed, rounded and not changed


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """jaxmbd's version and a digest of its source: a cell computed by other code is another cell, even
    under the same version number (an edited checkout)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:12]}"


def _as_start(start) -> Start:
    return start if isinstance(start, Start) else Start(start)


def cell_key(system: System, start, settings: SweepSettings, i: int, j: int) -> dict:
    """Everything that decides the numbers of cell (i, j), as a dict of strings and numbers."""
    base = sea_state_leaves(system, 0.0, 0.0, system.waves.mean_direction)  # the cell's Hs and Tp are entries of their own
    start = _as_start(start)
    return {**system_key(base, start), "hs": float(settings.hs[i]),
            "tp": float(settings.tp[j]), "seed": int(settings.seed), "realisations": int(settings.n_realisations),
            "duration": float(settings.duration), "save_dt": float(settings.save_dt),
            "integrator": repr(settings.integrator), "jaxmbd": code_digest()}


def _data_checksum(ds: xr.Dataset) -> str:
    h = hashlib.sha256()
    for name in sorted(ds.data_vars):
        a = np.ascontiguousarray(ds[name].values)
        h.update(f"{name}{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _read_cell(path: Path):
    """(dataset loaded in memory, its key) of a cell file; None where the file is damaged."""
    try:
        ds = netcdf.open_result(path)
        key = json.loads(ds.attrs["key"])
        if ds.attrs["checksum"] != _data_checksum(ds):
            return None
        return ds, key
    except Exception:  # unreadable, truncated, without its key or checksum: not a cell to trust
        return None


def _changes(old: dict, new: dict) -> str:
    return ", ".join(key_changes(old, new)[0])


# what a sweep notes and an operability study warns once where it takes such cells
ROUND_OFF_NOTE = ("cells computed on a processor that rounds differently (the system's or the start's arrays other "
                  f"bits, every element within {ROUNDING:g} relative): taken as this study's; the table is the study's "
                  "to round-off, not bitwise")


def _same_key(old: dict, new: dict, note=None) -> bool:
    """Whether a stored cell's key is this run's (:func:`key_changes`); ``note`` hears once that round-off was
    let through."""
    changed, rounded = key_changes(old, new)
    if rounded and note is not None:
        note(ROUND_OFF_NOTE)
    return not changed


def cell_settings(settings: SweepSettings, i: int, j: int) -> RunSettings:
    """The run of cell (i, j): the sweep's settings in sea state (Hs_i, Tp_j), with the cell's own key."""
    return RunSettings(duration=settings.duration, save_dt=settings.save_dt, integrator=settings.integrator,
                       n_realisations=settings.n_realisations, seed=settings.seed,
                       key=jax.random.fold_in(jax.random.key(settings.seed), i * 1000 + j),
                       hs=float(settings.hs[i]), tp=float(settings.tp[j]))


def run_cell(system: System, start, settings: SweepSettings, i: int, j: int) -> Result:
    """Simulate one sea state of the sweep from the sweep's one ``start`` (:func:`jaxmbd.run.run`)."""
    return run(system, _as_start(start), settings=cell_settings(settings, i, j), check=False)


def cell_dataset(system: System, start, settings: SweepSettings, i: int, j: int) -> xr.Dataset:
    """Cell (i, j) computed: its run, the limits' outputs checked, its maxima (:func:`cell_maxima`)."""
    result = run_cell(system, start, settings, i, j)
    _check_limits(result, settings)
    return cell_maxima(result, settings, i, j)


def cell_maxima(result: Result, settings: SweepSettings, i: int, j: int) -> xr.Dataset:
    """The per-realisation maxima of every scalar output of a cell's run: what the cell file keeps."""
    import xarray as xr

    data, units = {}, result.system.output_units()
    for name, val in result.outputs.items():
        val = np.asarray(val)
        if val.ndim == 2:  # (realisation, time): a scalar output; its maxima over every step where tracked
            data[name] = ("realisation", np.max(np.asarray(result.series_extremes(name)[0]), axis=1),
                                             {"units": units.get(name, "unknown")})
    return xr.Dataset(data, coords={"realisation": np.arange(settings.n_realisations)},
                      attrs={"hs": float(settings.hs[i]), "tp": float(settings.tp[j]), "i": i, "j": j})


def _check_limits(result: Result, settings: SweepSettings) -> None:
    """A limit below its output's value at the start cannot be met by any cell (each realisation's maximum
    includes the start): refused after the first cell, with the value, instead of a table of no-go."""
    for name, limit in settings.limits.items():
        if name not in result.outputs:
            continue  # named in the operability table's own error
        first = np.asarray(result.outputs[name])
        first = first[:, 0] if result.batched else first[:1]
        if np.all(first > limit):
            raise SweepError(f"sweep limit on {name!r} ({limit:g}) is below its value at the start ({float(np.min(first)):g}): "
                             "every realisation's maximum includes the start, so no sea state can meet it")


class _Lock:
    """``.sweep.lock.<process>`` in the folder, created exclusively; a lock left by a process that is no
    longer running on this host (killed) is taken over."""

    def __init__(self, out: Path, process_index: int):
        self.path = out / f".sweep.lock.{process_index}"

    def __enter__(self):
        me = f"{os.getpid()} {socket.gethostname()}"
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    pid, host = self.path.read_text().split(maxsplit=1)
                    alive = host.strip() != socket.gethostname() or _running(int(pid))
                except (OSError, ValueError):
                    pid, host, alive = "?", "?", True
                if alive:
                    raise SweepError(f"{self.path.parent}: another sweep (process {pid} on {host.strip()}) is writing "
                                     f"this folder; wait for it, or delete {self.path.name} if it is not running") from None
                self.path.unlink(missing_ok=True)  # stale: its process was killed
                continue
            with os.fdopen(fd, "w") as f:
                f.write(me)
            return self
        raise SweepError(f"{self.path}: could not take the sweep lock")

    def __exit__(self, *exc):
        self.path.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_sweep(system: System, start, settings: SweepSettings, out_dir, *, process_index: int = 0,
              process_count: int = 1, progress=None, wait: bool = True, force: bool = False,
              note=lambda message: print(message, file=sys.stderr), time_limit: float | None = None,
              client=None) -> xr.Dataset | None:
    """Run (or resume) the sweep from ``start`` (a :class:`jaxmbd.run.Start`, solved once for every cell,
    or a configuration q0); return the operability dataset (process 0), else None.

    Cells already in ``out_dir`` are reused when their key (:func:`cell_key`) and checksum match; a
    cell of another configuration raises :class:`SweepError` naming what changed (``force``:
    recompute it), a damaged one is recomputed (``note`` says so).  ``time_limit`` (s): stop with the
    estimate where the cells computed so far project this process's share past it (the cells done are kept).
    ``client``: a ``distributed.Client``; the cells to compute run as tasks on its Dask cluster
    (:mod:`jaxmbd.cluster`) and this process writes each as it ends: the same files as a local sweep."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cells = [(i, j) for i in range(len(settings.hs)) for j in range(len(settings.tp))]
    start = _as_start(start)
    keys = {c: cell_key(system, start, settings, *c) for c in cells}
    mine = [c for k, c in enumerate(cells) if k % process_count == process_index]
    told = []

    def once(message):
        if not told:
            told.append(message)
            note(message)

    with _Lock(out, process_index):
        todo = []
        for i, j in mine:  # decide every cell before computing any, so a refusal comes at once
            path = _cell_path(out, i, j)
            if not path.exists():
                todo.append((i, j))
                continue
            read = _read_cell(path)
            if read is None:
                note(f"{path}: damaged (unreadable, truncated or altered); recomputed")
                todo.append((i, j))
            elif not _same_key(read[1], keys[(i, j)], once):
                if not force:
                    raise SweepError(f"{path}: computed for another configuration ({_changes(read[1], keys[(i, j)])}); "
                                     "--force recomputes the cells that differ, or choose another output folder")
                todo.append((i, j))
        done = len(mine) - len(todo)
        budget = TimeBudget(time_limit, f"the sweep's {len(todo)} cell(s) to compute", resumable=True)
        ending = (as_tasks(client, cell_dataset, (system, start, settings), todo) if client is not None
                  else ((c, cell_dataset(system, start, settings, *c)) for c in todo))
        for computed, ((i, j), ds) in enumerate(ending, 1):
            path = _cell_path(out, i, j)
            ds.attrs["key"] = json.dumps(keys[(i, j)], sort_keys=True)
            ds.attrs["checksum"] = _data_checksum(ds)
            tmp = path.with_suffix(f".tmp{process_index}")
            netcdf.write(ds, tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
            budget(computed, len(todo))
            done += 1
            if progress is not None:
                progress(done, len(mine), settings.hs[i], settings.tp[j])
    if process_index != 0:
        return None

    def valid(c):
        read = _read_cell(_cell_path(out, *c)) if _cell_path(out, *c).exists() else None
        return read is not None and _same_key(read[1], keys[c], once)

    while wait and not all(valid(c) for c in cells):
        time.sleep(1.0)
    table = operability(settings, out, keys=keys, note=once)
    tmp = out / f".operability.tmp{process_index}"
    netcdf.write(table, tmp)
    os.replace(tmp, out / "operability.nc")
    return table


def operability(settings: SweepSettings, out_dir, *, keys: dict | None = None, note=None) -> xr.Dataset:
    """Statistic of each limited output per cell, and whether every limit holds (``operable``).

    ``keys`` (cell -> :func:`cell_key`): each cell file must carry its key, else :class:`SweepError`; ``note``
    hears once that a cell of another processor's round-off was taken (:func:`key_changes`)."""
    import xarray as xr

    out = Path(out_dir)
    shape = (len(settings.hs), len(settings.tp))
    stats = {name: np.full(shape, np.nan) for name in settings.limits}
    units = {}
    for i in range(shape[0]):
        for j in range(shape[1]):
            read = _read_cell(_cell_path(out, i, j))
            if read is None:
                raise SweepError(f"{_cell_path(out, i, j)}: missing or damaged; run the sweep again to compute it")
            ds, cell = read
            if keys is not None and not _same_key(cell, keys[(i, j)], note):
                raise SweepError(f"{_cell_path(out, i, j)}: computed for another configuration "
                                 f"({_changes(cell, keys[(i, j)])})")
            for name in settings.limits:
                if name not in ds:
                    raise SweepError(f"sweep limit on {name!r}: no such scalar output; outputs are {sorted(ds.data_vars)}")
                units[name] = ds[name].attrs.get("units", "unknown")
                s = ExtremeStatistics.of(ds[name].values[:, None])
                stats[name][i, j] = getattr(s, settings.statistic)
    ok = np.ones(shape, dtype=bool)
    data = {}
    for name, lim in settings.limits.items():
        data[name] = (("hs", "tp"), stats[name], {"limit": float(lim), "statistic": settings.statistic,
                                                                      "units": units.get(name, "unknown"), "long_name": name})
        ok &= stats[name] <= lim
    data["operable"] = (("hs", "tp"), ok, {"long_name": "every limited output's statistic within its limit", "units": "1"})
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
        ax.set_title(f"{name}: {var.attrs['statistic']} / limit")
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- the file form

@dataclasses.dataclass(frozen=True)
class SweepTable:
    """``[sweep]`` as the file writes it (the command line completes it into a
    :class:`jaxmbd.sweep.SweepSettings`): the sea-state grid (significant wave heights ``hs`` (m) x peak periods ``tp``
    (s)); ``limits``, upper limits (SI units of the output) on scalar outputs by name
    (``{"hoist/tension": 6e6}``), held against ``statistic`` of the per-realisation maxima
    (``mpm``, ``mean``, ``p50``, ``p90``, ``p99``); the run length (s) and realisations per
    cell (None: those of ``[simulation]``)."""

    hs: tuple[float, ...]
    tp: tuple[float, ...]
    limits: dict = dataclasses.field(default_factory=dict)
    statistic: str = "mpm"
    duration: float | None = None
    n_realisations: int | None = None


_SWEEP_KEYS = ("hs", "tp", "statistic", "duration", "n_realisations", "limits")
_STATISTICS = ("mpm", "mean", "p50", "p90", "p99")  # of the per-realisation maxima (jaxmbd.statistics)


def read_sweep(reader, cfg, system, sim):
    if "sweep" not in cfg:
        return None
    r = reader.r
    f = "sweep"
    s = r.table(cfg["sweep"], f, _SWEEP_KEYS)
    if system.waves is None or not HsTpSpectrum.of(system.waves.spectrum):  # a parametric spectrum's Hs and Tp
        r.fail(f, "a sea-state sweep needs [waves] with type = 'jonswap', 'pierson_moskowitz' or 'torsethaugen'")
    grids = {}
    for key in ("hs", "tp"):
        arr = r.array(r.get(s, f, key), f"{f}.{key}", None).reshape(-1)
        if arr.size == 0 or np.any(arr <= 0):
            r.fail(f"{f}.{key}", "expected a non-empty list of values > 0")
        grids[key] = tuple(float(x) for x in arr)
    if isinstance(system.waves.spectrum, Torsethaugen):  # a fitted model: every cell within its range
        bad = next((p for h in grids["hs"] for t in grids["tp"] if (p := Torsethaugen.range_problem(h, t))), None)
        if bad:
            r.fail(f"{f}.tp", f"expected {bad} (a Torsethaugen sea)")
    statistic = r.string(s, f, "statistic", "mpm", choices=_STATISTICS)
    duration = r.number(s, f, "duration", None, gt=0.0)
    n_real = r.integer(s, f, "n_realisations", None, ge=1)
    lims = r.table(s.get("limits", {}), f"{f}.limits", None)
    limits = {}
    outputs = reader.output_shapes(system) if lims else {}
    scalar = sorted(k for k, shape in outputs.items() if shape == ())
    for out, val in lims.items():
        g = f'{f}.limits."{out}"'
        if out not in outputs:
            r.fail(g, f"unknown output {out!r}; scalar outputs: {', '.join(scalar)}")
        if outputs[out] != ():
            r.fail(g, f"output {out!r} has shape {outputs[out]}; limits apply to scalar outputs: {', '.join(scalar)}")
        limits[out] = r.check_number(val, g)
    return SweepTable(grids["hs"], grids["tp"], limits, statistic, duration, n_real)
