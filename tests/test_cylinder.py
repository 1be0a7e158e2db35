"""The hydraulic cylinder on the luffing-cylinder crane of jaxmbd.examples: statics by hand, the
length command at its rated speed, its limits, and the gradient of its peak force in its pin."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd.examples import luffing_crane
from jaxmbd.forces.cylinder import Cylinder
from jaxmbd.paths import set_leaf
from jaxmbd.simulation import Integrator, initial_state, simulate, solve
from jaxmbd.validity import check

G = 9.81


def test_a_force_controlled_cylinder_holds_the_boom_by_hand():
    """The boom (10 t, 20 m, 5 t at its tip, 30° up) is held still by the cylinder force that balances its
    weight's moment about the hinge, F (r × ê)_y = (m_b L/2 + m_p L) g cos θ with r the pin and ê the
    cylinder's direction: the boom does not accelerate (1e-9 rad/s²), and the force output is F."""
    system, q0 = luffing_crane()
    cyl = system.forces[0]
    theta = np.radians(30.0)
    c, s = np.cos(-theta), np.sin(-theta)
    R = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    pin, base = R @ np.asarray(cyl.point_b), np.asarray(cyl.point_a)
    e = (pin - base) / np.linalg.norm(pin - base)
    # the weight's moment about +y at the hinge, and the cylinder's per newton (both about +y)
    weight = np.cross([10.0 * np.cos(theta), 0.0, 10.0 * np.sin(theta)], [0.0, 0.0, -10.0e3 * G])[1] \
        + np.cross([20.0 * np.cos(theta), 0.0, 20.0 * np.sin(theta)], [0.0, 0.0, -5.0e3 * G])[1]
    F = -weight / np.cross(pin, e)[1]
    held = Cylinder(**{**{k: getattr(cyl, k) for k in ("name", "body_a", "point_a", "body_b", "point_b", "max_force", "min_length",
                                                         "max_length")}, "mode": "force", "target": jnp.asarray(F)})
    system = system.__class__(system.model, (held,))
    y = initial_state(system, q0=q0)
    assert abs(float(system.rhs(0.0, y)[1][0])) < 1e-9
    assert abs(float(system.outputs(0.0, y)["cylinder/force"]) - F) < 1e-9 * F and F > 0


def test_the_cylinder_luffs_at_its_rated_speed():
    """Commanded 0.5 m longer at 0.1 m/s: the command moves at 0.1 m/s until it nears the target
    (1e-9), the rod follows (within 1 cm after 8 s, the PD's droop under the boom's load being F/K_p),
    and the boom rises."""
    system, q0 = luffing_crane()
    l0 = float(system.forces[0].target)
    system = set_leaf(system, "cylinder.target", jnp.asarray(l0 + 0.5))
    res = simulate(system, 12.0, save_dt=0.5, integrator=Integrator("rk4", dt=0.005), q0=q0)
    cmd = np.asarray(res.outputs["cylinder/command"])
    rate = np.diff(cmd) / 0.5
    assert np.max(np.abs(rate[:4] - 0.1)) < 1e-9  # the first 2 s at the rated speed
    length = np.asarray(res.outputs["cylinder/length"])
    force = np.asarray(res.outputs["cylinder/force"])
    assert abs(length[-1] - cmd[-1] + force[-1] / 2.0e8) < 1e-3 and abs(cmd[-1] - (l0 + 0.5)) < 0.02
    assert float(np.asarray(res.q)[-1, 0]) < float(q0[0])  # raised (about +y, up is negative)


def test_a_cylinder_beyond_its_stroke_or_force_is_reported():
    """Commanded below its retracted length, the run reports the stroke; with a relief force below the
    boom's load, the force limit."""
    for max_force, limit in ((3.0e6, "length >= min_length"), (5.0e5, "|force| < max_force")):
        system, q0 = luffing_crane(max_force=max_force)
        system = set_leaf(system, "cylinder.target", system.forces[0].min_length - 1.0)
        system = set_leaf(system, "cylinder.max_speed", jnp.asarray(1.0))
        res = simulate(system, 10.0, save_dt=0.1, integrator=Integrator("rk4", dt=0.005), q0=q0)
        limits = [e.limit for e in check(system, res.time, res.outputs, res.batched)]
        assert any(x.startswith(limit) for x in limits), limits


def test_gradient_of_the_peak_force_in_the_pins():
    """d(peak cylinder force while luffing 0.3 m)/d(pin position along the boom, base height): jax.grad
    through the run against central differences (steps 1e-5 m): 1e-6."""
    system, q0 = luffing_crane()
    l0 = float(system.forces[0].target)
    system = set_leaf(system, "cylinder.target", jnp.asarray(l0 + 0.3))
    y0 = initial_state(system, q0=q0)
    ts = np.linspace(0.0, 4.0, 41)

    def peak(p):
        s = set_leaf(system, "cylinder.point_b", system.forces[0].point_b.at[0].set(p[0]))
        s = set_leaf(s, "cylinder.point_a", s.forces[0].point_a.at[2].set(p[1]))
        q, v, z = solve(s, y0, ts, integrator=Integrator("rk4", dt=0.01)).ys
        force = jax.vmap(lambda t, q, v, z: s.outputs(t, (q, v, z))["cylinder/force"])(jnp.asarray(ts), q, v, z)
        return jnp.max(force)

    p0 = jnp.asarray([6.0, -4.0])
    g = np.asarray(jax.jit(jax.grad(peak))(p0))
    value = jax.jit(peak)
    for k in range(2):
        h = 1e-5
        fd = (float(value(p0.at[k].add(h))) - float(value(p0.at[k].add(-h)))) / (2 * h)
        assert abs(g[k] - fd) < 1e-6 * abs(fd), (k, g[k], fd)


@pytest.mark.parametrize("kw, message", [
    (dict(min_length=jnp.asarray(9.0), max_length=jnp.asarray(8.0)), "min_length .* must be below max_length"),
    (dict(body_b="world"), "body_a and body_b are both 'world'"),
])
def test_bad_cylinders_are_refused(kw, message):
    args = dict(name="cylinder", body_a="world", point_a=jnp.zeros(3), body_b="boom", point_b=jnp.ones(3), target=jnp.asarray(7.0),
                max_force=jnp.asarray(1e6), min_length=jnp.asarray(5.0), max_length=jnp.asarray(10.0))
    with pytest.raises(ValueError, match=message):
        Cylinder(**(args | kw))


def test_a_single_rod_cylinder_pulls_less_than_it_pushes():
    """pull_ratio 0.6: a force command of −2 MN is held at −0.6 F_max, +2 MN at F_max (2.5 MN caps nothing);
    the force ratio reads 1 at each limit."""
    system, q0 = luffing_crane(max_force=1.5e6)
    cyl = system.forces[0]
    y = initial_state(system, q0=q0)
    for target, expected in ((-2.0e6, -0.9e6), (2.0e6, 1.5e6)):
        held = Cylinder(**{**{k: getattr(cyl, k) for k in ("name", "body_a", "point_a", "body_b", "point_b", "max_force", "min_length",
                                                             "max_length")}, "mode": "force", "target": jnp.asarray(target),
                           "pull_ratio": jnp.asarray(0.6)})
        out = system.__class__(system.model, (held,)).outputs(0.0, (y[0], y[1], jnp.zeros(0)))
        assert abs(float(out["cylinder/force"]) - expected) < 1e-6 and abs(float(out["cylinder/force_ratio"]) - 1) < 1e-12


def test_a_force_controlled_cylinder_refuses_length_control_keys(tmp_path):
    """kp on a force-controlled cylinder would be ignored: one line naming the key."""
    import jaxmbd as mbd

    text = """
name = "luff"
[[bodies]]
name = "boom"
joint = "revolute"
axis = [0.0, 1.0, 0.0]
mass = 1.0e4
com = [10.0, 0.0, 0.0]
inertia = [1e3, 3e5, 3e5]
[[controllers]]
kind = "cylinder"
body_a = "world"
point_a = [1.5, 0.0, -4.0]
body_b = "boom"
point_b = [6.0, 0.0, -0.5]
mode = "force"
target = 1.0e6
max_force = 3.0e6
min_length = 4.0
max_length = 12.0
kp = 1.0e8
[simulation]
duration = 1.0
"""
    path = tmp_path / "luff.toml"
    path.write_text(text)
    with pytest.raises(mbd.SystemFileError, match=r'controllers\[0\]\.kp: a force-controlled cylinder .* has no length control') as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
