"""Study 5 (Cibicik et al. 2019): crane on a supply vessel with a roll-and-pitch compensation platform.

One system per mode (MC on, MC off), built once; the sea state's Hs is an
array leaf, so the 2 m and 5 m seas reuse one compiled solver per mode.  Short
runs (60 s, excitation ramped over 20 s, judged over t >= 25 s), a coarse sea
(20 frequencies x 3 directions) and RK4 at 0.1 s keep the module at about a
minute and a half of CPU; the full study (many realisations, both locations)
is ``pytest -m studies``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxmbd.simulation import Integrator, simulate  # noqa: E402

DUR, SKIP, DT = 60.0, 25.0, 0.1


@pytest.fixture(scope="module")
def systems():
    from studies.crane_vessel_mc.system import build

    kw = dict(n_frequencies=20, n_directions=3)
    return {mc: build(mc, "I", **kw) for mc in ("on", "off")}


def _run(system, q0, hs, seed=11):
    system = eqx.tree_at(lambda s: s.waves.spectrum.hs, system, np.asarray(hs, dtype=float))
    return simulate(system, DUR, save_dt=DT, integrator=Integrator("rk4", dt=DT), q0=q0, key=jax.random.key(seed),
                    n_realisations=1)


def _max(res, name, k=None):
    x = res.outputs[name][0, res.time >= SKIP]
    return float(np.max(np.abs(x if k is None else x[:, k])))


def test_build_is_at_rest_and_differentiable_leaves(systems):
    """At q0 (even keel, crane in the paper's pose) the system is in equilibrium: joint
    accelerations below 1e-3 (m/s², rad/s²; the box's displacement is rounded to 1 cm of breadth),
    and the gains are array leaves."""
    import jax.numpy as jnp

    for mc, (system, q0) in systems.items():
        v = jnp.zeros(system.model.nv)
        _, vdot, _ = system.rhs(0.0, (q0, v, system.initial_states(q0, v)))
        assert np.max(np.abs(np.asarray(vdot))) < 1e-3, mc
        mcf = system.forces[1]
        assert isinstance(mcf.kp, jax.Array) and mcf.kp.shape == (2,)


def test_the_dp_row_builds_a_dp_system_at_rest():
    """``dp="thrusters"`` (the README's DP row) puts the dynamic positioning controller with its four
    thrusters, inside the hull's plan, in place of the stiff PD; at q0 the system is at rest as with the
    PD (1e-3) and the DP asks for no thrust (1e-6 N)."""
    import jax.numpy as jnp

    from jaxmbd.control import DynamicPositioning
    from studies.crane_vessel_mc.system import build

    system, q0 = build("on", "I", hs=0.0)
    dp = next(f for f in system.forces if f.name == "dp")
    assert not isinstance(dp, DynamicPositioning)  # the default is the paper's stiff PD
    system, q0 = build("on", "I", hs=0.0, dp="thrusters")
    dp = next(f for f in system.forces if f.name == "dp")
    assert isinstance(dp, DynamicPositioning) and len(dp.thrusters) == 4
    v = jnp.zeros(system.model.nv)
    y = (q0, v, system.initial_states(q0, v))
    _, vdot, _ = system.rhs(0.0, y)
    assert np.max(np.abs(np.asarray(vdot))) < 1e-3
    assert np.max(np.abs(np.asarray(system.outputs(0.0, y)["dp/demand"]))) < 1e-6


@pytest.mark.slow  # 25 s; the build at rest and the DP row stay in the default suite
def test_mc_levels_the_platform_and_cuts_sway_and_king_moment(systems):
    """One test for the four runs (MC on/off x Hs 2 m/5 m), so that the two compiled solvers are
    built once whichever worker runs it.

    Hs 2 m.  MC on: the platform's world roll and pitch stay within 0.1 deg (PD at about 1 Hz
    against deck motions of a few tenths of a degree at 0.2 Hz).  MC off: the locked platform
    follows the deck: its largest world roll is at least 0.3 deg and within 40 % of the deck's (the
    lock is the same PD on q1, q2, so it gives a little under the crane's dynamic moment).

    Hs 5 m (issue 6 acceptance, location I): max |θ2| and max |nx3| (the king's moment about its own
    x axis, along the boom) fall by more than 90 % with MC on (Cibicik et al. 2019: 99.7 % and 99.6 %).  One
    realisation of 35 s is enough for a 90 % bound: the full study gives the spread."""
    runs = {(mc, hs): _run(*systems[mc], hs) for mc in ("on", "off") for hs in (2.0, 5.0)}

    on, off = runs[("on", 2.0)], runs[("off", 2.0)]
    assert max(_max(on, "mc/roll"), _max(on, "mc/pitch")) < np.deg2rad(0.1)
    roll_off = _max(off, "mc/roll")
    deck = _max(off, "hydro/eta", 3)
    assert roll_off > np.deg2rad(0.3)
    assert abs(roll_off / deck - 1.0) < 0.4, (roll_off, deck)
    assert roll_off > 5 * _max(on, "mc/roll")

    on, off = runs[("on", 5.0)], runs[("off", 5.0)]
    red_t2 = 1 - _max(on, "sway/theta2") / _max(off, "sway/theta2")
    red_nx3 = 1 - _max(on, "joint/q3/wrench", 3) / _max(off, "joint/q3/wrench", 3)
    assert red_t2 > 0.90, red_t2
    assert red_nx3 > 0.90, red_nx3


@pytest.mark.studies
def test_full_study_reductions():
    """The full study (both locations, several realisations): θ2 and nx3 fall by > 90 % on
    average at location I and by > 80 % at location II; fz at both joints is unchanged to 5 %
    (the weight dominates it, as in the paper's Tables 3-4)."""
    from studies.crane_vessel_mc.run import main

    tables = main([])
    assert tables["I"]["theta2"]["mean"] > 90 and tables["I"]["nx3"]["mean"] > 90
    assert tables["II"]["theta2"]["mean"] > 80 and tables["II"]["nx3"]["mean"] > 80
    for loc in ("I", "II"):
        for f in ("fz1", "fz3"):
            assert abs(tables[loc][f]["mean"]) < 5


@pytest.mark.slow  # 30 s: two smoke runs of the DP with thrusters
def test_the_dp_carries_the_wave_drift():
    """The smoke form with the DP and the hull's wave drift: the drift element is on the vessel, pushes it down-wave
    (sway along the waves' 135°, surge against them: its mean force), and the DP's excursion and thruster demand
    exceed those of the same runs without it."""
    from studies.crane_vessel_mc.system import build

    system, _ = build("on", "I", dp="thrusters", drift=True, n_frequencies=15, n_directions=3)
    assert "drift" in [f.name for f in system.forces]
    import jax
    import numpy as np

    from jaxmbd.simulation import Integrator, simulate

    out = {}
    for drift in (False, True):
        system, q0 = build("on", "I", dp="thrusters", drift=drift, n_frequencies=15, n_directions=3)
        res = simulate(system, 60.0, save_dt=0.5, integrator=Integrator("rk4", dt=0.1), q0=q0, key=jax.random.key(3), n_realisations=1)
        xy = np.asarray(res.q)[0, :, :2] - np.asarray(res.q)[0, :1, :2]
        out[drift] = (np.hypot(*xy.T).max(), float(np.max(np.asarray(res.outputs["dp/demand_ratio"]))))
        if drift:
            f = np.asarray(res.outputs["drift/force"])[0]
            assert f[:, 1].mean() > 0 and f[:, 0].mean() < 0
    assert out[True][0] > 2 * out[False][0] and out[True][1] > out[False][1]


def test_a_right_hand_side_forms_the_shared_terms_once(systems, monkeypatch):
    """The terms several elements read are formed once per right-hand side (``Context.once``), so that a
    reverse-mode gradient transposes each once: the gravity torques that the motion compensation and the
    crane's PD both feed forward, the hull's Euler angles that its hydrodynamics and the DP's mooring both
    read (the platform's are the other call), and the free hull's rotation, which the kinematics and q̇ share."""
    import jax.numpy as jnp

    from jaxmbd import spatial
    from jaxmbd.dynamics import gravity

    calls = []
    for module, name in ((gravity, "gravity_torques"), (spatial, "matrix_to_rpy"), (spatial, "quat_to_matrix")):
        def counted(*args, _f=getattr(module, name), _name=name):
            calls.append(_name)
            return _f(*args)

        monkeypatch.setattr(module, name, counted)
    system, q0 = systems["on"]
    model = system.model
    y = (q0, jnp.full(model.nv, 0.01), system.initial_states(q0, jnp.zeros(model.nv)))
    jax.make_jaxpr(lambda y: system.rhs(0.0, y))(y)
    assert sorted(calls) == ["gravity_torques", "matrix_to_rpy", "matrix_to_rpy", "quat_to_matrix"], calls
