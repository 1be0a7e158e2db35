"""The subsea installation's operability: the limiting Hs of its phases by heading and peak period.

The six-phase operation of ``system.py`` (lift-off, over-boarding, lowering to the water, the splash zone,
the water column, the landing), every run the whole operation in each realisation, with the criteria a
marine warranty surveyor holds it to (DNV-ST-N001):

* lift-off: the hook load's most probable maximum within 1.3 x the manifold's weight in air (the crane's
  dynamic capacity for a lift of this weight);
* splash zone: the same, and no slack: the hook load's most probable minimum at least 10 % of the
  manifold's submerged weight; and no clash: in 90 % of the realisations no corner touches the hull's side
  in the splash zone (its contact force within 10 kN, the contact's smooth onset);
* landing: the hook load as in the lift-off, and the load on each corner's mudmat within half the submerged
  weight (twice its static share).

    python studies/subsea_installation/operability.py --smoke   # head seas, Tp 7 and 11 s, 2 realisations
    python studies/subsea_installation/operability.py           # 8 headings x 10 periods x 20 realisations

Either writes its limits (``operability_limits.nc``; the smoke form in a temporary folder) and prints them; the
cells go to ``operability_cells/`` (resumable, as ``jaxmbd operability``).  ``--dask ADDRESS`` runs the cells on
a Dask cluster.  The study is the same ``jaxmbd.operability.job.limiting_table`` as ``jaxmbd operability``, on
the Python-built system: :func:`case` wraps it as a loaded file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from jaxmbd.io.system_file import LoadedSystem  # noqa: E402
from jaxmbd.operability.criteria import Criterion  # noqa: E402
from jaxmbd.operability.job import OperabilityTable, OperationPhase, limiting_table  # noqa: E402
from jaxmbd.operability.limiting import Search  # noqa: E402
from jaxmbd.run import SimulationSettings  # noqa: E402
from studies.subsea_installation.run import INTEGRATOR, SAVE_DT  # noqa: E402
from studies.subsea_installation.system import SUBMERGED_WEIGHT, WEIGHT, build, operation_table  # noqa: E402

HEADINGS = tuple(float(h) for h in range(0, 360, 45))
PERIODS = tuple(float(t) for t in range(5, 15))
DAF_LIMIT = 1.3
CLASH_FORCE = 1e4  # N: a corner's contact with the hull's side above this is a clash (its smooth onset is 0.7 kN)


def case(n_frequencies: int = 100, heave_compensation: float = 0.0, n_realisations: int = 20, seed: int = 0) -> LoadedSystem:
    """The installation as a loaded file: the system in its static equilibrium on deck, its six phases as the
    file's [scenario], RK4 at 0.02 s, saves every 0.1 s."""
    system, q0 = build(2.0, 9.0, 180.0, n_frequencies=n_frequencies)
    return LoadedSystem(system=system, q0=q0, integrator=INTEGRATOR,
                        simulation=SimulationSettings(None, SAVE_DT, n_realisations, seed),
                        sweep=None, scenario=operation_table(heave_compensation=heave_compensation), path=None, config={})


def criteria_table(headings=HEADINGS, periods=PERIODS, n_realisations: int = 20, tolerance: float = 0.05) -> OperabilityTable:
    """The operation's phases and criteria (the module's docstring), its planned hours (the lift-off and
    over-boarding 1 h, the splash zone 1 h, the water column and landing 2 h), alpha from DNV's base table."""
    hook = "hoist/hook_load"

    def upper(phase):
        return Criterion(hook, upper=DAF_LIMIT * WEIGHT, phase=phase, name=f"hook load <= {DAF_LIMIT:g} x weight ({phase})")

    phases = (
        OperationPhase("lift-off", 1, (upper("lift-off"),)),
        OperationPhase("splash zone", 1, (upper("splash zone"),
                                          Criterion(hook, lower=0.1 * SUBMERGED_WEIGHT, phase="splash zone",
                                                    name="hook load >= 0.1 x submerged weight (splash zone)"),
                                          *(Criterion(f"side_{k}/force", upper=CLASH_FORCE, statistic="p90", phase=ph,
                                                      name=f"corner {k} clear of the hull's side ({ph})")
                                            for ph in ("splash zone",) for k in range(4)))),
        OperationPhase("landing", 2, (upper("landing"),
                                      *(Criterion(f"seabed_{k}/force", upper=0.5 * SUBMERGED_WEIGHT, phase="landing",
                                                  name=f"mudmat {k} load <= 0.5 x submerged weight (landing)") for k in range(4)))),
    )
    return OperabilityTable(phases, tuple(headings), tuple(periods), n_realisations, None, 0,
                            Search(hs_start=1.0, hs_max=6.0, tolerance=tolerance, secant=True), "base")


def smoke() -> tuple:
    """(case, table) of the smoke form: head seas, Tp 7 and 11 s, two realisations of 30 wave components, the
    search to 0.1 m."""
    return case(n_frequencies=30, n_realisations=2), criteria_table((180.0,), (7.0, 11.0), 2, tolerance=0.1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="head seas, Tp 7 and 11 s, 2 realisations, 30 wave components")
    ap.add_argument("--dask", default=None, help="a Dask scheduler's address: the cells run there")
    ap.add_argument("--out", type=Path, default=None, help="the cells' folder (default operability_cells/ here; the smoke "
                                                           "form a new temporary folder)")
    args = ap.parse_args(argv)
    if args.smoke:
        c, table = smoke()
    else:
        c, table = case(), criteria_table()
    client = None
    if args.dask:
        from distributed import Client

        client = Client(args.dask)
    out = args.out or (Path(tempfile.mkdtemp(prefix="installation_operability_")) if args.smoke else HERE / "operability_cells")
    t0 = time.perf_counter()
    limits = limiting_table(c, table, out_dir=out, client=client,
                            progress=lambda n, total: print(f"  cell {n}/{total} ({time.perf_counter() - t0:.0f} s)", flush=True))
    wall = time.perf_counter() - t0
    runs = int(limits["runs"].sum())
    print(f"{runs} runs of {table.n_realisations} realisations in {wall:.0f} s: "
          f"{runs * table.n_realisations / wall:.2f} realisations a second")
    for k, phase in enumerate(limits["phase"].values):
        for h, head in enumerate(limits["heading"].values):
            row = ", ".join(f"Tp {tp:g} s: {limits['limiting_hs'].values[k, h, j]:.2f} m ({limits['governing'].values[k, h, j]})"
                            for j, tp in enumerate(limits["tp"].values))
            print(f"{phase}, heading {head:g} deg: {row}")
    limits.attrs["wall_s"] = wall
    limits.to_netcdf(out / "operability_limits.nc")
    print(f"wrote {out / 'operability_limits.nc'}")
    return limits


if __name__ == "__main__":
    main()
