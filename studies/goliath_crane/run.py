"""Ku et al. (2012): shipyard block lifting with a goliath crane as a sequence of phases (Fig. 9 and 10).

A main girder travels on rails (prismatic along x); an upper and a lower trolley slide on it
(prismatic along y); an 828.5 t block hangs from six wire ropes, four from the upper trolley and two
from the lower one.  The operation is a :class:`jaxmbd.scenario.Scenario`: hoisting-up (until the
block is 15 m up), transport to the dock (until the girder is at the dock and has stopped), turn-over
(the block turned upside down about the x axis by hauling one trolley's ropes in while the other's pay
out and the trolleys cross over), hoisting-down.  Writes the tension of every rope over time with the
phase boundaries marked (Ku et al. 2012 Fig. 10).

    python studies/goliath_crane/run.py           # full operation, about 900 s simulated
    python studies/goliath_crane/run.py --smoke   # a few seconds of each phase kind (CI)

Geometry (Ku et al. 2012 gives the block mass and the crane's main dimensions only; the rest is ours):
block 24 m (x) x 20 m (y) x 12 m (z), uniform box inertia, frame at its centre of mass.  Lugs on
brackets off the two end faces (x = ±12 m), at the height of the centre of mass, so the ropes hang in
planes the turning block never crosses.  Upper trolley: four ropes to lugs A at y = +5 m (two per end,
x = ±12.5 m and ±13.5 m).  Lower trolley: two ropes to lugs B at y = −10 m (x = ±14.5 m), the block's
edge.  With vertical ropes the moment balance about x gives 4 T_A · 5 cos θ = 2 T_B · 10 cos θ, so
T_A = T_B = m g / 6 at every turn-over angle θ: the lug line passes through the centre of mass and
both lever arms scale with cos θ.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd.control import JointPD
from jaxmbd.forces import WireRope
from jaxmbd.model import Body, ModelBuilder, Placement
from jaxmbd.scenario import Scenario
from jaxmbd.simulation import Integrator, static_equilibrium
from jaxmbd.system import System

HERE = pathlib.Path(__file__).resolve().parent
G = 9.81
BLOCK_MASS = 828.5e3                   # kg (Ku et al. 2012, Fig. 9)
BLOCK_SIZE = (24.0, 20.0, 12.0)        # m, x (along the girder travel) y (along the girder) z
GANTRY_MASS = 2500e3                   # kg: girder and legs (our choice; 177 m x 103.6 m crane)
UPPER_TROLLEY_MASS = 150e3             # kg
LOWER_TROLLEY_MASS = 100e3             # kg
Z_UPPER, Z_LOWER = 95.0, 85.0          # m: sheave heights of the upper and lower trolley (crane 103.6 m high)
R_A, R_B = 5.0, 10.0                   # m: lug lines A (upper trolley) and B (lower trolley) from the centre of mass, ±y
EA = 1.0e9                             # N: axial stiffness of one rope (one hoist's reeving)
ROPE_DAMPING = 2.0e5                   # N s/m: about 5 % of critical on the block's bounce
Z_START = 6.0                          # m: block centre of mass before lifting (block resting height)
UPPER_X = (12.5, 13.5, -12.5, -13.5)   # m: x of the four upper ropes (lug = sheave x, ropes vertical in x)
LOWER_X = (14.5, -14.5)                # m: x of the two lower ropes
T_STATIC = BLOCK_MASS * G / 6.0        # N: per-rope tension of the level hanging block


def block_body() -> Body:
    a, b, c = BLOCK_SIZE
    m = BLOCK_MASS
    return Body(m, (0.0, 0.0, 0.0), np.array([m * (b * b + c * c), m * (a * a + c * c), m * (a * a + b * b)]) / 12.0)


def rope_names() -> list[str]:
    return [f"rope_u{i + 1}" for i in range(4)] + [f"rope_l{i + 1}" for i in range(2)]


def build_system(*, z_block: float = Z_START, ea: float = EA) -> System:
    """The crane, the block and six ropes rigged so that the block hangs level at ``z_block`` (centre of
    mass, m) with T = m g / 6 in every rope: unstretched length L₀ = l / (1 + T/EA)."""
    b = ModelBuilder(source="goliath_crane")
    b.add_body("gantry", body=Body(GANTRY_MASS, (0, 0, 60.0), np.full(3, GANTRY_MASS * 50.0**2 / 6)),
               joint=mbd.Prismatic((1.0, 0.0, 0.0)), joint_name="gantry_travel")
    b.add_body("upper_trolley", body=Body(UPPER_TROLLEY_MASS, (0, 0, 0), np.full(3, UPPER_TROLLEY_MASS * 4.0)),
               joint=mbd.Prismatic((0.0, 1.0, 0.0)), parent="gantry", placement=Placement(p=np.array([0, 0, Z_UPPER])),
               joint_name="upper_travel")
    b.add_body("lower_trolley", body=Body(LOWER_TROLLEY_MASS, (0, 0, 0), np.full(3, LOWER_TROLLEY_MASS * 4.0)),
               joint=mbd.Prismatic((0.0, 1.0, 0.0)), parent="gantry", placement=Placement(p=np.array([0, 0, Z_LOWER])),
               joint_name="lower_travel")
    b.add_body("block", body=block_body(), joint=mbd.Free(), joint_name="block_free")
    model = b.build()
    stretch = 1.0 + T_STATIC / ea
    ropes = []
    for name, x, trolley, y, z in (
        [(n, x, "upper_trolley", R_A, Z_UPPER) for n, x in zip(rope_names()[:4], UPPER_X)]
        + [(n, x, "lower_trolley", -R_B, Z_LOWER) for n, x in zip(rope_names()[4:], LOWER_X)]
    ):
        ropes.append(WireRope(name=name, body_a=trolley, body_b="block", point_a=jnp.array([x, 0.0, 0.0]),
                              point_b=jnp.array([x, y, 0.0]), EA=jnp.asarray(ea),
                              length=jnp.asarray((z - z_block) / stretch), damping=jnp.asarray(ROPE_DAMPING),
                              transition=jnp.asarray(1.0e3), winch=True))
    m_all = GANTRY_MASS + UPPER_TROLLEY_MASS + LOWER_TROLLEY_MASS + BLOCK_MASS
    drives = (
        # critically damped drives; the gantry's natural period (about 6 s) is short against the 18 s pendulum
        JointPD(name="gantry_drive", joints=("gantry_travel",), setpoint=jnp.array([0.0]),
                kp=jnp.asarray(4.0e6), kd=jnp.asarray(2.0 * math.sqrt(4.0e6 * m_all)), gravity_compensation=False),
        JointPD(name="upper_trolley_drive", joints=("upper_travel",), setpoint=jnp.array([R_A]),
                kp=jnp.asarray(2.0e6), kd=jnp.asarray(2.0 * math.sqrt(2.0e6 * UPPER_TROLLEY_MASS)),
                gravity_compensation=False),
        JointPD(name="lower_trolley_drive", joints=("lower_travel",), setpoint=jnp.array([-R_B]),
                kp=jnp.asarray(2.0e6), kd=jnp.asarray(2.0 * math.sqrt(2.0e6 * LOWER_TROLLEY_MASS)),
                gravity_compensation=False),
    )
    return System(model, tuple(ropes) + drives, name="goliath_crane")


def hanging_q(system: System, z_block: float = Z_START):
    model = system.model
    q = jnp.zeros(model.nq)
    q = q.at[model.q_slice("upper_travel")].set(R_A).at[model.q_slice("lower_travel")].set(-R_B)
    return q.at[model.q_slice("block")].set(jnp.array([0.0, 0.0, z_block, 1.0, 0.0, 0.0, 0.0]))


def static_state(system: System):
    """Static equilibrium of the hanging block (Newton on v̇(q) = 0)."""
    return static_equilibrium(system, hanging_q(system), tol=1e-9)


def turn_over_phases(n: int, duration: float, ea: float = EA) -> list[dict]:
    """Turn-over in ``n`` phases of ``duration`` s, θ from 0 to π in equal steps.

    Lugs A and B sit at ±(R_A, R_B)(cos θ, sin θ) from the centre of mass in the y-z plane; with
    vertical ropes the trolleys must be at y_u = R_A cos θ, y_l = −R_B cos θ and the unstretched lengths
    change by ΔL₀ = −R_A Δ(sin θ) / (1 + T/EA) (upper) and +R_B Δ(sin θ) / (1 + T/EA) (lower).  Each phase
    takes the winches at a constant rate and the trolley set points along a ramp from θ_k to θ_{k+1}: a
    piecewise-linear path through exact turn-over configurations."""
    stretch = 1.0 + T_STATIC / ea
    out = []
    for k in range(n):
        a, b = math.pi * k / n, math.pi * (k + 1) / n
        ds = math.sin(b) - math.sin(a)
        dyu, dyl = R_A * (math.cos(b) - math.cos(a)), -R_B * (math.cos(b) - math.cos(a))
        out.append({
            "name": f"turn-over {k + 1}/{n}",
            "set": {
                "rope_u*": {"payout_rate": -R_A * ds / stretch / duration},
                "rope_l*": {"payout_rate": R_B * ds / stretch / duration},
                "upper_trolley_drive": {"setpoint": {"target": [R_A * math.cos(b)], "rate": max(abs(dyu) / duration, 1e-9)}},
                "lower_trolley_drive": {"setpoint": {"target": [-R_B * math.cos(b)], "rate": max(abs(dyl) / duration, 1e-9)}},
            },
            "max_duration": duration,
        })
    return out


def scenario_dict(*, lift: float = 15.0, dock: float = 120.0, hoist_speed: float = 0.1, travel_speed: float = 0.5,
                  n_turn: int = 12, turn_phase: float = 20.0, z0: float = Z_START) -> dict:
    """The operation of Ku et al. (2012, Sec. 5, events a-d) as a scenario dict (schema: jaxmbd.scenario)."""
    deg = math.pi / 180.0
    return {"name": "goliath crane block lifting", "phases": [
        {"name": "hoisting-up", "set": {"rope_*": {"payout_rate": -hoist_speed}},
         "until": {"output": "block/z", "op": ">=", "value": z0 + lift}, "max_duration": 3.0 * lift / hoist_speed},
        {"name": "transport",
         "set": {"rope_*": {"payout_rate": 0.0}, "gantry_drive": {"setpoint": {"target": [dock], "rate": travel_speed}}},
         "until": {"all": [{"output": "gantry/q", "op": "near", "value": dock, "tol": 0.05},
                           {"output": "gantry/v", "op": "near", "value": 0.0, "tol": 0.01}]},
         "max_duration": 2.0 * dock / travel_speed + 300.0},
        *turn_over_phases(n_turn, turn_phase),
        {"name": "turn-over settle", "set": {"rope_*": {"payout_rate": 0.0}},
         "until": {"all": [{"output": "block/tilt", "op": ">=", "value": 178.0 * deg},
                           {"output": "block/wx", "op": "near", "value": 0.0, "tol": 0.05 * deg}]},
         "max_duration": 300.0},
        {"name": "hoisting-down", "set": {"rope_*": {"payout_rate": hoist_speed}},
         "until": {"output": "block/z", "op": "<=", "value": z0}, "max_duration": 3.0 * lift / hoist_speed},
        {"name": "hold", "set": {"rope_*": {"payout_rate": 0.0}}, "max_duration": 30.0},
    ]}


def smoke_dict() -> dict:
    """Every phase kind, a few seconds each: the CI form."""
    d = scenario_dict(lift=0.3, dock=1.0, n_turn=1, turn_phase=1.0)
    tp = turn_over_phases(36, 2.0)[0]  # the first 5° step in 2 s: only to exercise the machinery
    tp["name"] = "turn-over 1/36"
    phases = [d["phases"][0], d["phases"][1], tp, d["phases"][-2], d["phases"][-1]]
    phases[1]["max_duration"] = 60.0
    phases[-1]["max_duration"] = 1.0
    return {"name": "goliath crane smoke", "phases": phases}


def plot(res, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = res.time
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    styles = ["-", "--", "-.", ":"]
    for i, n in enumerate(rope_names()):
        ax.plot(t, res.outputs[f"{n}/tension"] / G / 1e3, styles[i % 4] if i < 4 else styles[(i - 4) * 2 % 4],
                color="tab:red" if i < 4 else "tab:blue", lw=1.0, label=n + (" (upper)" if i < 4 else " (lower)"))
    ax.axhline(BLOCK_MASS / 6 / 1e3, color="k", lw=0.6, ls=":", label="m g / 6 = %.1f t" % (BLOCK_MASS / 6e3))
    ax.set_ylabel("rope tension (t)")
    ax.set_title(title)
    ax.legend(ncol=4, fontsize=8, loc="lower left")
    q = res.q
    model = res.system.model
    ax2.plot(t, q[:, model.q_slice("block")][:, 2], label="block centre height z (m)")
    ax2.plot(t, q[:, model.q_slice("gantry")][:, 0] / 10, label="girder position x / 10 (m)")
    tilt = np.degrees(np.arccos(np.clip(1 - 2 * (q[:, model.q_slice("block")][:, 4] ** 2
                                                 + q[:, model.q_slice("block")][:, 5] ** 2), -1, 1)))
    ax2.plot(t, tilt / 10, label="block tilt / 10 (deg)")
    ax2.set_xlabel("time (s)")
    ax2.legend(fontsize=8, loc="upper left")
    major = {"hoisting-up", "transport", "hoisting-down", "hold"}
    for k, name in enumerate(res.phase_names):
        if k >= len(res.events):
            break
        t0 = res.phase_start(k)
        for a in (ax, ax2):
            a.axvline(t0, color="0.3" if name in major or name.startswith("turn-over 1/") else "0.8", lw=0.8)
        first_turn = name.startswith("turn-over 1/")
        if name in major or first_turn:
            ax.text(t0, 1.0, " " + ("turn-over" if first_turn else name) + " starts", rotation=90, va="top",
                    ha="left", fontsize=7, transform=ax.get_xaxis_transform())
        if name == "turn-over settle":
            ax.text(t0, 1.0, "turn-over ends ", rotation=90, va="top", ha="right", fontsize=7,
                    transform=ax.get_xaxis_transform())
    for a in (ax, ax2):
        a.axvline(res.events[-1].time, color="0.3", lw=0.8)
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def summarise(res) -> dict:
    model = res.system.model
    T = np.stack([res.outputs[f"{n}/tension"] for n in rope_names()], axis=1) / G / 1e3
    rows = {}
    for k, name in enumerate(res.phase_names[: len(res.events)]):
        m = res.phase == k
        rows[name] = {"start_s": float(res.time[m][0]), "end_s": float(res.time[m][-1]),
                      "trigger": res.events[k].trigger, "T_min_t": float(T[m].min()), "T_max_t": float(T[m].max())}
    qb = res.q[-1, model.q_slice("block")]
    tilt = math.degrees(math.acos(max(-1.0, min(1.0, 1 - 2 * (qb[4] ** 2 + qb[5] ** 2)))))
    return {"phases": rows, "final_tilt_deg": tilt, "T_min_t": float(T.min()), "T_max_t": float(T.max())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="short CI form: a few seconds of each phase kind")
    ap.add_argument("--out", default=str(HERE), help="folder for the PNG and summary (default: the study folder)")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_wall = time.perf_counter()
    system = build_system()
    q0 = static_state(system)
    y = system.outputs(0.0, (q0, jnp.zeros(system.model.nv), system.initial_states(q0, jnp.zeros(system.model.nv))))
    T0 = np.array([float(y[f"{n}/tension"]) for n in rope_names()])
    print("static tension per rope (t):", np.round(T0 / G / 1e3, 2), f"  m g / 6 = {BLOCK_MASS / 6e3:.2f} t")
    d = smoke_dict() if args.smoke else scenario_dict()
    scenario = Scenario.from_dict(d, system)
    integ = Integrator("tsit5", rtol=1e-6, atol=1e-6, max_steps=200_000)
    res = scenario.run(system, q0=q0, save_dt=0.5 if args.smoke else 1.0, integrator=integ, progress=print)
    wall = time.perf_counter() - t_wall
    print(res.event_table())
    s = summarise(res)
    s.update({"static_tension_t": (T0 / G / 1e3).tolist(), "wall_s": wall, "smoke": args.smoke,
              "events": [e.__dict__ for e in res.events]})
    print(f"final tilt {s['final_tilt_deg']:.2f} deg; tension range {s['T_min_t']:.1f} .. {s['T_max_t']:.1f} t; "
          f"wall {wall:.1f} s")
    stem = "goliath_crane_smoke" if args.smoke else "goliath_crane_tension"
    plot(res, out / f"{stem}.png", "Goliath crane, 828.5 t block on six ropes (Ku et al. 2012 Fig. 10)"
         + (" - smoke form" if args.smoke else ""))
    (out / f"{stem}.json").write_text(json.dumps(s, indent=1))
    print("wrote", out / f"{stem}.png")
    return res, s


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
