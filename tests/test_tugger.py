"""Tugger line (jaxmbd/forces/tugger.py): a constant-tension winch line against closed forms, finite
differences and a system file."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import jaxmbd as mbd
from jaxmbd import examples
from jaxmbd.forces.tugger import TuggerLine
from jaxmbd.system import System

L, M, G = 10.0, 2.0e4, 9.81
WINCH = np.array([20.0, 0.0, -L])  # on the quay, level with the hanging load


def _tugger(**kw):
    args = dict(name="tugger", body_a="world", point_a=jnp.asarray(WINCH), body_b="bob",
                point_b=jnp.asarray([0.0, 0.0, -L]), tension=jnp.asarray(5.0e4))
    args.update({k: jnp.asarray(v) for k, v in kw.items()})
    return TuggerLine(**args)


def _pendulum(**kw):
    return System(examples.simple_pendulum(L, M), (_tugger(**kw),))


def _bob(theta):
    """The load's position for a hinge angle θ about y: R_y(θ) (0, 0, −L)."""
    return np.array([-L * np.sin(theta), 0.0, -L * np.cos(theta)])


def test_a_load_held_by_a_tugger_rests_where_the_moments_balance():
    """Static equilibrium against an independent root of the hinge moment (gravity and the set
    tension along the line to the winch, brentq): angle to 1e-9 rad, the line's tension T₀ to 1e-9
    relative (at rest the winch holds exactly its set tension; w = 1 N smooths only near zero)."""
    T0 = 5.0e4
    system = _pendulum(tension=T0, transition=1e-6 * T0)

    def moment(theta):
        r = _bob(theta)
        e = (WINCH - r) / np.linalg.norm(WINCH - r)
        F = T0 * e + np.array([0.0, 0.0, -M * G])
        return r[2] * F[0] - r[0] * F[2]

    exact = brentq(moment, -1.2, 0.0, xtol=1e-15)
    q = mbd.static_equilibrium(system, jnp.zeros(1), tol=1e-12)
    assert abs(float(q[0]) - exact) < 1e-9, (float(q[0]), exact)
    out = system.outputs(0.0, (q, jnp.zeros(1), jnp.zeros(0)))
    assert abs(float(out["tugger/tension"]) / T0 - 1) < 1e-9
    assert abs(float(out["tugger/length"]) - np.linalg.norm(WINCH - _bob(exact))) < 1e-9


def test_render_and_an_empty_drum_change_the_tension_as_stated():
    """At a swinging state, T = T₀ + c l̇ (l̇ from the bob's velocity along the line); past L_max the
    line adds EA/L_max (l − L_max).  Both to 1e-9 relative against the formula evaluated here."""
    T0, c = 5.0e4, 2.0e4
    theta, omega = -0.3, 0.4
    r = _bob(theta)
    rdot = np.array([-L * np.cos(theta), 0.0, L * np.sin(theta)]) * omega
    l = np.linalg.norm(r - WINCH)
    ldot = np.dot((r - WINCH) / l, rdot)
    y = (jnp.asarray([theta]), jnp.asarray([omega]), jnp.zeros(0))
    T = float(_pendulum(tension=T0, damping=c).outputs(0.0, y)["tugger/tension"])
    assert abs(T / (T0 + c * ldot) - 1) < 1e-9
    Lmax, EA = l - 0.05, 1.0e8
    T = float(_pendulum(tension=T0, max_length=Lmax, EA=EA).outputs(0.0, y)["tugger/tension"])
    assert abs(T / (T0 + EA / Lmax * 0.05) - 1) < 1e-9


def test_tension_gradients_match_finite_differences():
    """d(hinge moment)/d(T₀, c, EA) by reverse mode against central differences, 1e-7 relative (the
    force is smooth in its parameters: the steps, 1e-4 relative, leave truncation near 1e-9)."""
    theta, omega = -0.3, 0.4
    model = examples.simple_pendulum(L, M)
    y = (jnp.asarray([theta]), jnp.asarray([omega]), jnp.zeros(0))

    def moment(p):
        el = _tugger(tension=p[0], damping=p[1], EA=p[2], max_length=17.0)  # l = 17.05 m: the drum is empty
        return System(model, (el,)).rhs(0.0, y)[1][0]

    p0 = jnp.asarray([5.0e4, 2.0e4, 1.0e8])
    g = jax.grad(moment)(p0)
    for k in range(3):
        h = 1e-4 * float(p0[k])
        fd = (moment(p0.at[k].add(h)) - moment(p0.at[k].add(-h))) / (2 * h)
        assert abs(float(g[k]) - float(fd)) <= 1e-7 * abs(float(fd)), (k, g[k], fd)


TEXT = """
name = "tugged_load"
[[bodies]]
name = "bob"
joint = "revolute"
axis = [0, 1, 0]
mass = 2.0e4
com = [0, 0, -10]
inertia = [1e3, 1e3, 1e3]
[[forces]]
kind = "tugger_line"
body_a = "world"
point_a = [20.0, 0.0, -10.0]
body_b = "bob"
point_b = [0.0, 0.0, -10.0]
tension = TENSION
max_length = 21.0
[simulation]
duration = 4.0
save_dt = 0.5
method = "rk4"
dt = 0.01
"""


def test_a_tugger_line_is_read_from_a_system_file(tmp_path):
    """Every key checked by the line's own declarations; a line paid out past its drum is reported."""
    path = tmp_path / "tugged.toml"
    path.write_text(TEXT.replace("TENSION", "5.0e4"))
    loaded = mbd.load_system(path)
    line = loaded.system.forces[0]
    assert isinstance(line, TuggerLine) and float(line.tension) == 5.0e4
    res = loaded.run()  # released hanging: the line pulls the load towards the winch, 20 m -> under 21 m
    assert np.max(res.outputs["tugger_line/length"]) <= 20.0 + 1e-9
    assert res.excursions == []
    path.write_text(TEXT.replace("TENSION", "5.0e4").replace("max_length = 21.0", "max_length = 19.0"))
    assert [e.quantity for e in mbd.load_system(path).run().excursions] == ["tugger line length"]
    path.write_text(TEXT.replace("TENSION", "-1.0"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.tension: must be >= 0") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
