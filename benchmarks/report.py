"""BENCHMARKS.md from its sections: each benchmark writes its own file in ``benchmarks/results/`` and
calls :func:`assemble`, so re-running one benchmark never erases another's tables."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SECTIONS = (
    ("dynamics.md", "python -m benchmarks"),
    ("simulation.md", "python -m benchmarks.simulation"),
    ("between.md", "python -m benchmarks.between"),
    ("gradients.md", "python studies/tuning/bench.py"),
    ("flexible.md", "python studies/osv_lift/run.py --cost"),
    ("hydrostatics.md", "python -m benchmarks.hydrostatics"),
    ("elements.md", "python -m benchmarks.elements"),
    ("installation.md", "python studies/subsea_installation/run.py --cost"),
    ("mooring.md", "python -m benchmarks.mooring"),
    ("loops.md", "python -m benchmarks.loops"),
    ("equilibrium.md", "python -m benchmarks.equilibrium"),
    ("operability.md", "python -m benchmarks.operability"),
    ("operability_phases.md", "python -m benchmarks.operability_phases"),
    ("operability_installation.md", "python -m benchmarks.operability_installation"),
    ("operability_dask.md", "python -m benchmarks.operability_dask"),
    ("operability_dask_lift.md", "python -m benchmarks.operability_dask --lift"),
    ("report_page.md", "python -m benchmarks.report_page"),
    ("roofline.md", "python -m benchmarks.roofline"),
    ("cold_start.md", "python -m benchmarks.cold_start --base DIR"),
    ("versions.md", "python -m benchmarks.versions --base DIR"),
    ("targets.md", None),
)
HEADER = """# Benchmarks

Each section comes from one command (named in it) and is kept in `benchmarks/results/`; running a
benchmark rewrites its own section and reassembles this file.  Accelerator figures (batches up to
10^4, float32 and float64): `python -m benchmarks.gpu` writes `BENCHMARKS_gpu.md` on a GPU machine.
"""


def assemble(out: Path | None = None) -> Path:
    out = Path(out) if out is not None else ROOT / "BENCHMARKS.md"
    parts = [HEADER]
    for name, _ in SECTIONS:
        p = RESULTS / name
        if p.exists():
            parts.append(p.read_text().rstrip() + "\n")
    out.write_text("\n".join(parts))
    return out


if __name__ == "__main__":
    print(assemble())
