"""An operability study's cells on disk: one file per heading and period, keyed by what decides its numbers.

A cell (heading h, period j) holds every phase's search at that sea state: limiting Hs, band, status,
governing criterion, the runs it took and the ranges of validity they left.  Its file, ``cells/
cell_h<h>_t<j>.json``, carries the cell's key (the system's and the start's digests, the sea state, the
realisations and seed, the search, the criteria, the integrator and save step, a digest of the scenario and
jaxmbd's code digest, as a sweep's cells do); a file
whose key differs was computed for another study and is refused (or recomputed with ``force``).  JSON
writes a float by its shortest round-trip repr, so a cell read back is bitwise the cell computed: a study
split over processes (each takes the cells k with k mod count = its index) or killed and resumed gives
bitwise the table of one uninterrupted process.  The system's and the start's digests are bitwise; where only
they differ and their summaries (:func:`jaxmbd.sweep.tree_summary`) agree to round-off, the cell is the same
study computed on a processor that rounds differently (processes on mixed nodes, a folder moved): taken, with
a warning that the table is then the study's to round-off, not bitwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

from ..run import with_sea_state
from ..sweep import ROUND_OFF_NOTE, code_digest, key_changes, system_key
from .windows import OperabilityError


def cell_path(out: Path, h: int, j: int) -> Path:
    return Path(out) / "cells" / f"cell_h{h:02d}_t{j:03d}.json"


def cell_key(system, start, table, h: int, j: int, *, settings, scenario) -> dict:
    """Everything that decides the numbers of cell (h, j), as a dict of strings and numbers: with the run's
    ``settings`` (its integrator and save step) and the file's ``[scenario]`` table (its phases' speeds, depths
    and conditions), so that a cell computed before either changed is not taken for this study's."""
    base = with_sea_state(system, hs=0.0, tp=0.0, heading=0.0)
    return {**system_key(base, start), "heading_deg": float(table.headings_deg[h]), "tp": float(table.tp[j]), "seed": int(table.seed),
            "realisations": int(table.n_realisations), "duration": table.duration, "search": repr(table.search),
            "phases": repr([(p.name, p.criteria) for p in table.phases]), "integrator": repr(settings.integrator),
            "save_dt": settings.save_dt, "scenario": _digest(scenario), "jaxmbd": code_digest()}


def _digest(table) -> str:
    """A digest of a file's table (None: none), its keys in order."""
    return hashlib.sha256(json.dumps(table, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def write_cell(path: Path, key: dict, cell: dict):
    """Write atomically (a file in place is whole or absent: a killed process leaves no half cell)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"key": key, "cell": cell}), encoding="utf-8")
    os.replace(tmp, path)


def read_cell(path: Path, key: dict, *, force: bool = False) -> dict | None:
    """The cell at ``path`` if it was computed for ``key``; None if absent (or stale and ``force``)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        old, cell = data["key"], data["cell"]
    except (ValueError, KeyError, TypeError):
        if force:
            return None
        raise OperabilityError(f"{path}: damaged; delete it (or run with --force) to compute the cell again") from None
    changed, rounded = key_changes(old, key)
    if changed:
        if force:
            return None
        raise OperabilityError(f"{path}: computed for another study (changed: {'; '.join(changed)}); use another --out "
                               "or --force to compute it again")
    if rounded:
        warnings.warn(ROUND_OFF_NOTE, stacklevel=2)
    return cell


def mine(k: int, process_index: int, process_count: int) -> bool:
    if not 0 <= process_index < process_count:
        raise OperabilityError(f"process index {process_index} outside 0..{process_count - 1}")
    return k % process_count == process_index

