"""The stern A-frame study (``studies/a_frame``): the cylinders' static force by hand, and a short
over-boarding in calm water reaching its end angle within the cylinders' limits.  The full study (8
realisations of a following sea) is ``python studies/a_frame/run.py``."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jaxmbd.simulation import Integrator, simulate  # noqa: E402


@pytest.fixture(scope="module")
def built():
    from studies.a_frame.system import build

    return build(n_frequencies=10)


def test_the_cylinders_carry_the_frame_and_the_load_by_hand(built):
    """At rest with the frame 25° inboard: the two cylinders' force F balances, about the hinge, the
    frame's weight at half its height and the load's weight at its top, 2 F (r × ê)_y = M_g, within
    1e-3 (measured 3e-4: the vessel's trim under the load turns the weights a little against the frame)."""
    from studies.a_frame.system import CYL_BASE, CYL_PIN, FRAME_HEIGHT, HINGE, M_FRAME, M_LOAD, START_DEG

    system, q0 = built
    g = 9.81
    a = math.radians(START_DEG)
    R = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])
    pin = R @ CYL_PIN[0]  # from the hinge
    e = (HINGE + pin - CYL_BASE[0]) / np.linalg.norm(HINGE + pin - CYL_BASE[0])
    weight_moment = (M_FRAME * FRAME_HEIGHT / 2 + M_LOAD * FRAME_HEIGHT) * g * math.sin(a)  # about +y: tipping inboard
    F = -weight_moment / (2 * np.cross(pin, e)[1])
    y = (q0, jnp.zeros(system.model.nv), system.initial_states(q0, jnp.zeros(system.model.nv)))
    out = system.outputs(0.0, y)
    for side in ("port", "starboard"):
        assert abs(float(out[f"cylinder_{side}/force"]) / F - 1) < 1e-3, (float(out[f"cylinder_{side}/force"]), F)


def test_over_boarding_in_calm_water_reaches_its_end_angle(built):
    """Stroked at 0.05 m/s from 25° inboard (89 s at the rated speed, then the command settles): after 120 s
    the frame is within 0.1° of 30° outboard, the load
    still hangs in air, and the cylinders stay under their relief force and within their stroke."""
    import equinox as eqx

    from jaxmbd.validity import check

    system, q0 = built
    system = eqx.tree_at(lambda s: s.waves.spectrum.hs, system, jnp.asarray(0.0))
    res = simulate(system, 120.0, save_dt=1.0, integrator=Integrator("rk4", dt=0.02), q0=q0)
    tilt = np.degrees(np.asarray(res.q)[:, system.model.q_start[system.model.index("aframe")]])
    assert abs(tilt[-1] + 30.0) < 0.1, tilt[-1]
    assert not check(system, res.time, res.outputs, res.batched)


@pytest.mark.slow
def test_cylinders_as_bodies_carry_their_weight_to_the_pins_by_hand():
    """The cylinders as bodies (barrel on a universal joint at the deck pin, rod sliding in it, the rod's
    end on the frame's pin by a ball loop), at rest: each barrel and rod is held at its two pins, so the
    loop's force on the rod has, along the cylinder's axis u, the rod's weight (the cylinder's force acts
    between the pins, not through the rod) and across it the share of both bodies' weight that their
    moments about the deck pin give: F·u = −m_r g·u and F⊥ = −(m_b c_b + m_r (L + c_r)) g⊥ / L, within
    1e-6 of the force.  The loops are closed (1e-9 m) and the frame does not move (1e-9 rad/s²)."""
    from jaxmbd.kinematics import Kinematics
    from studies.a_frame.system import BARREL, CYL_PIN, ROD, build

    system, q0 = build(n_frequencies=10, cylinders="bodies")
    model = system.model
    y = (q0, jnp.zeros(model.nv), system.initial_states(q0, jnp.zeros(model.nv)))
    out = system.outputs(0.0, y)
    kin = Kinematics.compute(model, q0)
    g = np.array([0.0, 0.0, -9.81])
    for k, side in enumerate(("port", "starboard")):
        base = np.asarray(kin.p[model.index(f"barrel_{side}")])
        i = model.index("aframe")
        pin = np.asarray(kin.p[i] + kin.R[i] @ jnp.asarray(CYL_PIN[k]))
        L = float(np.linalg.norm(pin - base))
        u = (pin - base) / L
        weight_moment = BARREL[0] * BARREL[1] + ROD[0] * (L + ROD[1])
        expected = -ROD[0] * (g @ u) * u - weight_moment / L * (g - (g @ u) * u)
        force = np.asarray(out[f"pin_{side}/force"])
        np.testing.assert_allclose(force, expected, rtol=0, atol=1e-6 * np.linalg.norm(expected))
        assert float(out[f"pin_{side}/error"]) < 1e-9
    assert abs(float(system.rhs(0.0, y)[1][model.v_start[model.index("aframe")]])) < 1e-9
