"""The whole operability of an operation in phases, end to end, against a plain sea-state sweep of the same
lift: ``examples/lift_in_phases.toml`` (the packaged small lift as three phases: hang 100 s, lower 2 m in
20 s, hold 80 s, each with its own criteria) over 8 headings x 10 peak periods, a root search in Hs per
heading and period shared by the three phases, 20 realisations a run, alpha and the weather windows of the
packaged year; beside it ``jaxmbd sweep``'s path over 6 Hs x the 10 periods of the same lift without phases
(``jaxmbd/data/small_lift.toml``, 200 s, the same 20 realisations).

    python -m benchmarks.operability_phases                  # the whole study in 1 process, then 3 processes of one heading
                                                       # and of the sweep; writes benchmarks/results/operability_phases.md
    python -m benchmarks.operability_phases --quick          # one heading and the sweep, 1 process each
    python -m benchmarks.operability_phases --gpu            # on an accelerator: the whole study with its cells in
                                                       # lock-step, one at a time, the sweep; appends to BENCHMARKS_gpu.md

Each figure counts the realisations simulated (each the whole operation, 200 s), compile included, as a user
waits for them; a fresh process per case (no compilation cache).  The scenario's realisations run as one
batch (:meth:`jaxmbd.scenario.Scenario.run_many`), each ending its phases at its own times.
"""

from __future__ import annotations

import os
import statistics
from datetime import date
from pathlib import Path

from .operability import HS, sweep_peer
from .report import RESULTS, ROOT, assemble
from .timing import processes_or_child, processor, spawn_child, spread

FILE = "examples/lift_in_phases.toml"
PLAIN = "jaxmbd/data/small_lift.toml"


def _case(case: str) -> dict:
    import dataclasses
    import time

    import jax

    os.environ.setdefault("JAXMBD_CACHE_DIR", "off")
    jax.config.update("jax_enable_compilation_cache", False)
    import jaxmbd
    from jaxmbd.operability.hindcast import sample_hindcast
    from jaxmbd.operability.job import limiting_table, site_table, spectrum_gamma
    from jaxmbd.run import start_of

    loaded = jaxmbd.load_system(Path(ROOT) / FILE)
    op = loaded.operability
    if case.startswith("heading"):  # one heading of the study: the spread over processes
        op = dataclasses.replace(op, headings_deg=op.headings_deg[:1])
    t = time.perf_counter()
    if case == "sweep":
        plain = jaxmbd.load_system(Path(ROOT) / PLAIN)
        runs = sweep_peer(plain, start_of(plain), op.tp, op.n_realisations, 200.0, op.seed)
        extra = {"cells": runs}
    else:
        together = len(op.headings_deg) * len(op.tp) if case.endswith("together") else 1
        limits = limiting_table(loaded, op, start=start_of(loaded), together=together)
        site = site_table(limits, op, sample_hindcast(), gamma=spectrum_gamma(loaded))
        runs = int(limits["runs"].sum())
        extra = {"cells": int(limits["runs"].size), "searches": int(limits["limiting_hs"].size),
                 "limits": {p: [round(float(x), 3) for x in limits["limiting_hs"].sel(phase=p).values.ravel()]
                            for p in limits["phase"].values},
                 "workability": [round(float(x), 4) for x in site["workability"].values]}
    seconds = time.perf_counter() - t
    return dict(extra, seconds=seconds, runs=runs, realisations=runs * op.n_realisations,
                headings=len(op.headings_deg), periods=len(op.tp), backend=jax.default_backend(),
                device=str(jax.devices()[0].device_kind))


def _row(label, rs):
    rate = [r["realisations"] / r["seconds"] for r in rs]
    runs = statistics.median([r["runs"] for r in rs])
    return (f"| {label} | {rs[0]['cells']} | {runs:.0f} | {statistics.median([r['realisations'] for r in rs]):.0f} | "
            f"{spread([r['seconds'] for r in rs])} | {spread(rate)} |")


def main(argv=None):
    got_args = processes_or_child(argv, _case, quick=1, full=3, options=("--gpu",))
    if got_args is None:
        return
    args, n = got_args
    import jax

    if args.gpu:
        return _gpu()
    whole = [] if args.quick else [spawn_child("benchmarks.operability_phases", "study")]
    got = {"heading": [], "sweep": []}
    for _ in range(n):
        for c in got:
            got[c].append(spawn_child("benchmarks.operability_phases", c))
    lines = [
        "## An operation in phases: its whole operability end to end (`python -m benchmarks.operability_phases`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        "a fresh process per case, no compilation cache, compile included; the whole study in one process (its "
        f"size), one heading of it and the sweep in {n} processes each (median, min-max), the cases in turn.",
        "",
        f"`{FILE}`: the small lift (a 20 t module on 8 m of rope under a fixed crane on a 380 t barge, RK4 at 0.04 s, "
        "saved every step) as three phases, hang 100 s, lower 2 m in 20 s, hold 80 s, each with its criteria (hook "
        "load; no slack while it hangs); a root search in Hs per heading and period shared by the phases, 20 "
        "realisations (each the whole 200 s operation, one batch), alpha, and the weather windows of the packaged year.  "
        f"The sweep: `jaxmbd sweep`'s path over {len(HS)} Hs x 10 Tp of `{PLAIN}` (the lift without phases, 200 s, "
        "the same 20 realisations).",
        "",
        "| job | cells | runs | realisations | seconds | realisations / s |",
        "|---|---|---|---|---|---|",
    ]
    if whole:
        lines.append(_row(f"the whole study: 3 phases x {whole[0]['headings']} headings x {whole[0]['periods']} periods", whole))
    lines += [_row("one heading of it: 3 phases x 10 periods", got["heading"]), _row("plain sweep", got["sweep"]), ""]
    if whole:
        w = whole[0]
        lines.append(f"The whole study's {w['runs']} runs (about {w['runs'] / w['cells']:.1f} a heading and period, shared by "
                     f"the three phases' {w['searches']} searches) took {w['seconds'] / 60:.1f} minutes on this CPU.  "
                     "Limiting Hs at head seas (m), Tp 4-13 s: " + "; ".join(
                         f"{p} {', '.join(f'{x:.2f}' for x in v[: w['periods']])}" for p, v in w["limits"].items()) + ".")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "operability_phases.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(assemble())


def _gpu():
    """The whole study on the accelerator, its cells in lock-step and one at a time, and the sweep; one process each."""
    rows = [(c, spawn_child("benchmarks.operability_phases", c)) for c in ("study_together", "study", "sweep")]
    dev = rows[0][1]["device"]
    label = {"study_together": "the whole study, cells in lock-step", "study": "the whole study, cells one at a time",
             "sweep": "plain sweep (6 Hs x 10 Tp)"}
    lines = ["", "## An operation in phases: its whole operability on the accelerator (`python -m benchmarks.operability_phases --gpu`)",
             "", f"{date.today().isoformat()}, {dev}; one process per case, compile included, no compilation cache; "
             f"`{FILE}` as in BENCHMARKS.md.", "",
             "| job | runs | realisations | seconds | realisations / s |", "|---|---|---|---|---|"]
    lines += [f"| {label[c]} | {r['runs']} | {r['realisations']} | {r['seconds']:.1f} | {r['realisations'] / r['seconds']:.2f} |"
              for c, r in rows]
    text = "\n".join(lines) + "\n"
    out = Path(ROOT) / "BENCHMARKS_gpu.md"
    out.write_text(out.read_text().rstrip() + "\n" + text if out.exists() else text)
    print(text)


if __name__ == "__main__":
    main()
