"""Cost of the lifting elements per evaluation, beside the rigid-body right-hand side they are added to.

    python -m benchmarks.elements            # 5 processes per case; writes benchmarks/results/elements.md
    python -m benchmarks.elements --quick    # 2 processes (a check of the command)

A 20 t load on a free joint (six DOFs), its right-hand side jitted and timed alone (gravity only), then
with one element: a wire rope from a crane tip (one fall; six falls with a lead to the drum), a fender as
a seabed under it, a tugger line, a Morison object in still water and in a 100-component JONSWAP sea.
Each case runs in its own process; the cases' processes are taken in turn, so a drift of the machine's
speed reaches every case alike.  Every figure is the median over the processes with their spread.
"""

from __future__ import annotations

import os
import statistics
from datetime import date

from .report import RESULTS, assemble
from .timing import processes_or_child, processor, spawn_child, spread

CASES = ("rigid", "wire_rope", "wire_rope-6falls", "fender", "tugger_line", "morison-still", "morison-waves", "member-waves",
         "wire_rope-current", "wind-gusts", "wind_coefficients", "hull_current_load", "rao_motion-waves",
         "wave_drift-waves", "wave_drift-damping-waves")


def _rhs(case: str) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxmbd as mbd
    from jaxmbd.forces import WireRope
    from jaxmbd.forces.fender import Fender
    from jaxmbd.forces.member import MorisonMember
    from jaxmbd.forces.morison import MorisonObject
    from jaxmbd.forces.tugger import TuggerLine
    from jaxmbd.forces.current_load import HullCurrentLoad
    from jaxmbd.forces.wind import HullWindLoad, WindDrag
    from jaxmbd.hydro import JONSWAP, DriftTable, RaoMotion, RaoTable, SeaState, WaveDrift, read_capytaine
    from jaxmbd.hydro.waves import Current
    from jaxmbd.simulation import initial_state

    from .timing import rhs_seconds

    m = 2.0e4
    b = mbd.ModelBuilder(source="load")
    b.add_body("load", body=mbd.Body(m, (0, 0, 0), np.diag([m, m, m])), joint=mbd.Free())
    model = b.build()
    a = jnp.asarray
    elements = {
        "rigid": (),
        "wire_rope": (WireRope(name="hoist", body_a="world", point_a=a([0.0, 0.0, 30.0]), body_b="load", point_b=a([0.0, 0.0, 1.0]),
                               EA=a(1e8), length=a(33.99), damping=a(1e4)),),
        "wire_rope-6falls": (WireRope(name="hoist", body_a="world", point_a=a([0.0, 0.0, 30.0]), body_b="load",
                                      point_b=a([0.0, 0.0, 1.0]), EA=a(1e8), length=a(33.99), damping=a(1e4), falls=6,
                                      lead_length=a(80.0)),),
        "fender": (Fender(name="seabed", body="load", point=a([0.0, 0.0, -1.0]), other="world", plane_point=a([0.0, 0.0, -5.99]),
                          normal=a([0.0, 0.0, 1.0]), stiffness=a(5e6), damping=a(1e5), friction=a(0.3)),),
        "tugger_line": (TuggerLine(name="tugger", body_a="world", point_a=a([20.0, 0.0, 0.0]), body_b="load", point_b=a([1.0, 0.0, 0.0]),
                                   tension=a(5e4), damping=a(1e4)),),
        "morison-still": (MorisonObject(name="morison", body="load", volume=a(8.0), area=a(4.0), height=a(2.0), Cd=a(1.0), Ca=a(0.8)),),
        "morison-waves": (MorisonObject(name="morison", body="load", volume=a(8.0), area=a(4.0), height=a(2.0), Cd=a(1.0), Ca=a(0.8)),),
        "member-waves": (MorisonMember(name="leg", body="load", end_a=a([0.0, 0.0, -20.0]), end_b=a([0.0, 0.0, 10.0]),
                                       diameter=a(1.5), Cd=a(0.9)),),
        "wire_rope-current": (WireRope(name="hoist", body_a="world", point_a=a([0.0, 0.0, 30.0]), body_b="load",
                                       point_b=a([0.0, 0.0, 1.0]), EA=a(1e8), length=a(33.99), damping=a(1e4),
                                       current_drag=True, diameter=a(0.064)),),
        "wind-gusts": (WindDrag(name="wind", body="load", point=a([0.0, 0.0, 1.0]), area=a(20.0), speed=a(15.0), gust="npd"),),
        "wind_coefficients": (HullWindLoad(name="wind", body="load", angles=a(np.radians(np.linspace(-180.0, 180.0, 13))),
                                           Cx=a(np.cos(np.radians(np.linspace(-180.0, 180.0, 13)))),
                                           Cy=a(np.sin(np.radians(np.linspace(-180.0, 180.0, 13)))), Cn=a(np.zeros(13)),
                                           area_x=a(20.0), area_y=a(30.0), length=a(6.0), speed=a(15.0)),),
        "hull_current_load": (HullCurrentLoad(name="current", body="load", angles=a(np.radians(np.linspace(-180.0, 180.0, 13))),
                                              Cx=a(np.cos(np.radians(np.linspace(-180.0, 180.0, 13)))),
                                              Cy=a(np.sin(np.radians(np.linspace(-180.0, 180.0, 13)))), Cn=a(np.zeros(13)),
                                              area_x=a(20.0), area_y=a(30.0), length=a(6.0)),),
        "wave_drift-waves": (WaveDrift(name="drift", body="load", table=DriftTable.of(
            np.linspace(0.2, 2.5, 24), np.radians(np.arange(0.0, 360.0, 30.0)),
            np.ones((24, 12, 3)) * np.array([3e4, 2e4, 5e5]))),),
        "wave_drift-damping-waves": (WaveDrift(name="drift", body="load", damping=True, table=DriftTable.of(
            np.linspace(0.2, 2.5, 24), np.radians(np.arange(0.0, 360.0, 30.0)),
            np.ones((24, 12, 3)) * np.array([3e4, 2e4, 5e5]))),),
        "rao_motion-waves": (RaoMotion(name="vessel", body="load", rao=RaoTable.from_hydro(read_capytaine(_barge())), ramp_time=10.0),),
    }[case]
    sea = (SeaState(spectrum=JONSWAP(2.0, 8.0), n_frequencies=100) if case.endswith("-waves") or case == "wind-gusts"
           else SeaState(current=Current(1.0)) if case in ("wire_rope-current", "hull_current_load") else None)
    system = mbd.System(model, elements, waves=sea)
    inputs = system.inputs(system.waves.realise(jax.random.key(0)) if sea is not None else None)  # the system's sea: its gusts
    y = initial_state(system)
    q = y[0].at[2].set(-5.0).at[3:7].set(jnp.array([np.cos(0.05), np.sin(0.05), 0.0, 0.0]))
    y = (q, jnp.full(model.nv, 0.1), y[2])
    # 200 evaluations in one program, each on the state the previous one moved
    return {"case": case, "seconds": rhs_seconds(system, y, inputs, t0=12.3)}


def _barge():
    from jaxmbd.hydro import test_barge_path

    return test_barge_path()


def main(argv=None):
    got_args = processes_or_child(argv, _rhs, quick=2, full=5)
    if got_args is None:
        return
    args, n = got_args
    us = {c: [] for c in CASES}
    for _ in range(n):
        for c in CASES:
            us[c].append(spawn_child("benchmarks.elements", c)["seconds"] * 1e6)
    import jax

    rigid = statistics.median(us["rigid"])
    lines = [
        "## Lifting elements per evaluation (`python -m benchmarks.elements`)",
        "",
        f"{date.today().isoformat()}, {processor()}, {os.cpu_count()} cores, jax {jax.__version__}; "
        f"median over {n} processes (min-max), the cases' processes in turn.",
        "",
        "Right-hand side of a 20 t load on a free joint, per evaluation (one jitted loop run for 200 and for 1,000 "
        "evaluations, the difference of the two calls per evaluation, so that the call's own fixed cost cancels): "
        "alone (gravity only), and with one element:",
        "",
        "| case | µs per evaluation | the element's share (µs, median less the rigid body's) |",
        "|---|---|---|",
    ]
    for c in CASES:
        med = statistics.median(us[c])
        share = "-" if c == "rigid" else f"{med - rigid:.2g}"
        lines.append(f"| {c} | {spread(us[c])} | {share} |")
    lines.append("")
    lines.append("`morison-waves`: the Morison object's water sums 100 wave components over one column per evaluation (the "
                 "elevation over the object, then the velocity and acceleration at its submerged centre from the same "
                 "phases).  `member-waves`: a 1.5 m pile piercing the surface, its kinematics at 16 Gauss points along "
                 "the wet length, 100 components each.  `wire_rope-current`: the rope's drag in a 1 m/s current (its "
                 "chord's normal flow).  `wind-gusts`: a drag area in a 15 m/s wind with NPD gusts (200 components "
                 "summed per evaluation).  `wind_coefficients` and `hull_current_load`: coefficient tables of 13 "
                 "headings (the current 1 m/s).  `rao_motion-waves`: the load's six motions prescribed by the "
                 "packaged barge's RAOs in the 100-component sea (each evaluation sums them for the motion, its rate "
                 "and acceleration, and solves the mass matrix with the driven joint's acceleration given).  `wave_drift-waves`: "
                 "the mean and slow drift of the 100 components by Newman's approximation (four complex sums); "
                 "`wave_drift-damping-waves`: the same with wave-drift damping (ten complex sums and the load's velocity "
                 "through the water).")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "elements.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assemble()


if __name__ == "__main__":
    main()
