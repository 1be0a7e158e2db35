"""The lumped-mass line: against MoorDyn with a prescribed fairlead motion, its static shape against the
elastic catenary, a moored body's static offset against the quasi-static lines, gradients, files."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces.catenary import CatenaryLine
from jaxmbd.forces.lumped import LumpedLine, catenary_nodes
from jaxmbd.forces.mooring import LinearMooring
from jaxmbd.forces.steady import SteadyForce
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System

# a chain: 420 m in 100 m of water, d = 0.1 m (volume-equivalent), 150 kg/m, EA 600 MN, BA 5 MN s
CHAIN = dict(length=420.0, diameter=0.1, mass_per_length=150.0, EA=6.0e8, damping=5.0e6, Cd_normal=1.2, Cd_axial=0.008,
             Ca_normal=1.0, Ca_axial=0.0)
ANCHOR = (-400.0, 0.0, -100.0)
FAIRLEAD_Z = -5.0
AMPLITUDE, HEAVE, PERIOD = 4.0, 1.0, 8.0  # the fairlead's surge and heave (m), and their period (s)


def line(segments=20, name="line", anchor=ANCHOR, **kw):
    args = {k: jnp.asarray(v) for k, v in (CHAIN | kw).items()}
    return LumpedLine(name=name, body="vessel", segments=segments, fairlead=jnp.zeros(3), anchor=jnp.asarray(anchor), **args)


def free_vessel():
    b = ModelBuilder()
    b.add_body("vessel", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    return b.build()


def prescribed(element, model, duration, dt=0.002, save_every=5):
    """The line's nodes integrated (RK4) with its fairlead moved as x = A sin ωt, z = z_f + A_z sin ωt:
    the fairlead tension every ``save_every`` steps, from t = 0."""
    system = System(model, (element,))
    w = 2 * np.pi / PERIOD

    def qv(t):
        s, c = jnp.sin(w * t), jnp.cos(w * t)
        q = jnp.array([AMPLITUDE * s, 0.0, FAIRLEAD_Z + HEAVE * s, 1.0, 0.0, 0.0, 0.0])
        return q, jnp.array([AMPLITUDE * w * c, 0.0, HEAVE * w * c, 0.0, 0.0, 0.0])

    def f(t, z):
        return element.contribution(system.context(t, *qv(t)), z).zdot

    def tension(t, z):
        return element.outputs(system.context(t, *qv(t)), z)["fairlead_tension"]

    def step(z, t):
        k1 = f(t, z)
        k2 = f(t + dt / 2, z + dt / 2 * k1)
        k3 = f(t + dt / 2, z + dt / 2 * k2)
        k4 = f(t + dt, z + dt * k3)
        return z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def save(z, k):
        t0 = k * save_every * dt
        z, _ = jax.lax.scan(lambda z, j: (step(z, t0 + j * dt), None), z, jnp.arange(save_every))
        return z, tension(t0 + save_every * dt, z)

    z0 = element.initial_state(model, *qv(0.0))
    _, out = jax.lax.scan(save, z0, jnp.arange(int(round(duration / (save_every * dt)))))
    return jnp.concatenate([tension(0.0, z0)[None], out])


MOORDYN_FILE = """--------------------- MoorDyn Input File ------------------------------------
one chain line, its fairlead moved by the test
----------------------- LINE TYPES ------------------------------------------
TypeName   Diam    Mass/m     EA         BA/-zeta    EI         Cd     Ca     CdAx    CaAx
(name)     (m)     (kg/m)     (N)        (N-s/-)     (N-m^2)    (-)    (-)    (-)     (-)
chain      0.1     150.0      6.0E8      5.0E6       0          1.2    1.0    0.008   0.0
---------------------- POINT PROPERTIES --------------------------------
ID    Type      X       Y       Z       Mass   Volume  CdA    Ca
(#)   (-)       (m)     (m)     (m)     (kg)   (m^3)   (m^2)  (-)
1     Fixed     -400.0  0.0     -100.0  0      0       0      0
2     Vessel    0.0     0.0     -5.0    0      0       0      0
---------------------- LINES ----------------------------------------
ID   LineType   AttachA  AttachB  UnstrLen  NumSegs  LineOutputs
(#)   (name)     (#)      (#)       (m)       (-)     (-)
1     chain      1        2         420.0     20      -
---------------------- OPTIONS -----------------------------------------
0             writeLog
0.0005        dtM
RK4           tScheme
3.0e6         kBot
3.0e5         cBot
1025.0        WtrDnsty
100           WtrDpth
9.81          g
1.0           dtIC
200.0         TmaxIC
4.0           CdScaleIC
0.0001        threshIC
1             disableOutTime
------------------------- need this line --------------------------------------
"""


def moordyn_tension(tmp_path, duration, dt=0.01):
    """MoorDyn's fairlead tension every ``dt`` from t = 0, the fairlead moved as in :func:`prescribed`."""
    moordyn = pytest.importorskip("moordyn")
    path = tmp_path / "line.txt"
    path.write_text(MOORDYN_FILE)
    w = 2 * np.pi / PERIOD

    def fair(t):
        s, c = np.sin(w * t), np.cos(w * t)
        return [AMPLITUDE * s, 0.0, FAIRLEAD_Z + HEAVE * s], [AMPLITUDE * w * c, 0.0, HEAVE * w * c]

    system = moordyn.Create(str(path))
    try:
        moordyn.Init(system, *fair(0.0))
        md_line = moordyn.GetLine(system, 1)
        out = [moordyn.GetLineFairTen(md_line)]
        for k in range(int(round(duration / dt))):
            moordyn.Step(system, *fair(k * dt), k * dt, dt)
            out.append(moordyn.GetLineFairTen(md_line))
    finally:
        moordyn.Close(system)
    return np.asarray(out)


def test_the_fairlead_tension_follows_moordyn(tmp_path):
    """The chain's fairlead moved 4 m in surge and 1 m in heave at 8 s, 20 segments in both codes
    (MoorDyn 2: RK4 at 0.5 ms after its own initial relaxation; ours: RK4 at 2 ms from the elastic
    catenary): the fairlead tension swings between 0.11 and 1.8 MN, slack to snatch.  Over 10-40 s
    (after the start's transient) ours stays within 3 % of MoorDyn's largest tension (measured
    0.6 %), and the largest tensions agree within 1 %."""
    duration = 40.0
    ref = moordyn_tension(tmp_path, duration)
    ours = np.asarray(prescribed(line(), free_vessel(), duration))
    t = np.arange(ref.size) * 0.01
    sel = t >= 10.0
    err = np.max(np.abs(ours[sel] - ref[sel])) / np.max(ref[sel])
    assert err < 0.03, err
    assert abs(np.max(ours[sel]) / np.max(ref[sel]) - 1) < 0.01
    assert np.min(ref[sel]) < 0.1 * np.max(ref[sel])  # the case goes nearly slack


@pytest.mark.slow  # 10 s; the fairlead tension against MoorDyn stays in the default suite
def test_the_static_shape_is_the_elastic_catenary():
    """From the catenary of a fairlead 15 m further out, the line pulled back to its fairlead and left
    to settle (drag raised tenfold to settle it in 300 s; the drag does not change the equilibrium):
    its 21 nodes lie on the elastic catenary through its ends (the quasi-static line checked against
    MoorPy) within 0.5 % of the line's length (measured: 0.012 %), and the force on the vessel is the
    catenary's within 0.2 % (measured: 0.07 %; the top segment's tension with the top node's weight; the tension of
    the top segment alone is the catenary's half a segment below the fairlead, 1.2 % lower)."""
    model = free_vessel()
    element = line(Cd_normal=12.0, Cd_axial=0.08)
    q = jnp.array([0.0, 0.0, FAIRLEAD_Z, 1.0, 0.0, 0.0, 0.0])
    w = (150.0 - 1025.0 * np.pi * 0.1**2 / 4) * 9.81
    start = catenary_nodes(jnp.array([15.0, 0.0, FAIRLEAD_Z]), jnp.asarray(ANCHOR), 420.0, 6.0e8, w, 20)
    z0 = jnp.concatenate([start[1:-1].ravel(), jnp.zeros(57)])
    system = System(model, (element,))
    f = jax.jit(lambda z: element.contribution(system.context(0.0, q, jnp.zeros(6)), z).zdot)

    def step(z, _):
        dt = 0.002
        k1 = f(z)
        k2 = f(z + dt / 2 * k1)
        k3 = f(z + dt / 2 * k2)
        k4 = f(z + dt * k3)
        return z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None

    z, _ = jax.jit(lambda z: jax.lax.scan(step, z, None, length=150_000))(z0)
    nodes = np.asarray(element.outputs(system.context(0.0, q, jnp.zeros(6)), z)["nodes"])
    cat = np.asarray(catenary_nodes(jnp.array([0.0, 0.0, FAIRLEAD_Z]), jnp.asarray(ANCHOR), 420.0, 6.0e8, w, 20))
    assert np.max(np.linalg.norm(nodes - cat, axis=1)) < 0.005 * 420.0, np.max(np.linalg.norm(nodes - cat, axis=1))
    assert np.max(np.abs(np.asarray(z[57:]))) < 1e-2  # settled: under 1 cm/s
    quasi = CatenaryLine(name="c", body="vessel", fairlead=jnp.zeros(3), anchor=jnp.asarray(ANCHOR), length=jnp.asarray(420.0),
                         EA=jnp.asarray(6.0e8), weight=jnp.asarray(w))
    f_cat = np.asarray(System(model, (quasi,)).loads(0.0, q, jnp.zeros(6), jnp.zeros(0))[0])[0, :3]
    f_ours = np.asarray(system.loads(0.0, q, jnp.zeros(6), z)[0])[0, :3]
    assert np.linalg.norm(f_ours - f_cat) < 0.002 * np.linalg.norm(f_cat), (f_ours, f_cat)


@pytest.mark.slow
def test_a_body_held_by_two_lines_settles_where_the_catenary_lines_balance_its_load():
    """A 5,000 t body free in surge between two chains (anchors 400 m fore and aft), pushed by 200 kN and
    damped near critically: integrated with the bodies (RK4 at 8 ms, under a quarter of the segments'
    axial period), the lines' nodes settle with it, and at rest the two quasi-static catenary lines
    at the same offset balance the load within 1 % (measured 0.5 %: the load is the difference of two
    line forces of about 0.9 MN, each within 0.07 % of the catenary's, as above)."""
    b = ModelBuilder()
    b.add_body("vessel", body=Body(5.0e6, (0.0, 0.0, 0.0), np.eye(3) * 1e9), joint=mbd.Prismatic((1.0, 0.0, 0.0)),
               placement=mbd.Placement(p=np.array([0.0, 0.0, FAIRLEAD_Z])))
    model = b.build()
    aft, fore = line(name="aft"), line(name="fore", anchor=(400.0, 0.0, -100.0))
    push = SteadyForce(name="push", body="vessel", force=jnp.asarray([2.0e5, 0.0, 0.0]))
    damper = LinearMooring(name="damper", body="vessel", point=jnp.zeros(3), reference=jnp.zeros(3), stiffness=jnp.zeros((6, 6)),
                           damping=jnp.zeros((6, 6)).at[0, 0].set(3.0e6))
    res = simulate(System(model, (aft, fore, push, damper)), 300.0, save_dt=300.0, integrator=Integrator("rk4", dt=0.008))
    x = float(np.asarray(res.q)[-1, 0])
    assert abs(float(np.asarray(res.v)[-1, 0])) < 1e-4 and x > 1.0
    w = (150.0 - 1025.0 * np.pi * 0.1**2 / 4) * 9.81
    quasi = tuple(CatenaryLine(name=n, body="vessel", fairlead=jnp.zeros(3), anchor=jnp.asarray(a), length=jnp.asarray(420.0),
                               EA=jnp.asarray(6.0e8), weight=jnp.asarray(w)) for n, a in (("a", ANCHOR), ("f", (400.0, 0.0, -100.0))))
    f = np.asarray(System(model, quasi).loads(0.0, jnp.asarray([x]), jnp.zeros(1), jnp.zeros(0))[0])[0, 0]
    assert abs(-f / 2.0e5 - 1) < 0.01, (f, x)


@pytest.mark.slow
def test_gradients_of_the_tension_in_the_line_properties():
    """d(mean fairlead tension over the first 2 s)/d(EA, damping, normal drag, mass per metre) by
    jax.grad through the nodes' integration against central differences (relative steps 1e-5): 1e-6."""
    model = free_vessel()
    names = ("EA", "damping", "Cd_normal", "mass_per_length")
    p0 = jnp.asarray([CHAIN[n] for n in names])

    def mean_tension(p):
        return jnp.mean(prescribed(line(**dict(zip(names, p))), model, 2.0))

    g = np.asarray(jax.jit(jax.grad(mean_tension))(p0))
    value = jax.jit(mean_tension)
    for k in range(len(names)):
        h = 1e-5 * float(p0[k])
        fd = (float(value(p0.at[k].add(h))) - float(value(p0.at[k].add(-h)))) / (2 * h)
        assert abs(g[k] - fd) < 1e-6 * abs(fd), (names[k], g[k], fd)


def test_a_current_across_a_straight_line_drags_its_nodes():
    """A straight, taut line at rest across a uniform 1.5 m/s current (the sea state's, calm water): each
    interior node accelerates with the current at ½ ρ d l C_dn U² over its mass and normal added mass
    (1e-12), and along the line not at all (1e-8 of that: the difference of 1.5 MN tensions)."""
    from jaxmbd.hydro.sea import SeaState
    from jaxmbd.hydro.waves import Current

    model = free_vessel()
    element = line(length=399.0, anchor=(-400.0, 0.0, FAIRLEAD_Z))  # taut: 400 m between the ends
    q = jnp.array([0.0, 0.0, FAIRLEAD_Z, 1.0, 0.0, 0.0, 0.0])
    z0 = jnp.concatenate([jnp.stack([jnp.linspace(-400.0, 0.0, 21)[1:-1], jnp.zeros(19), jnp.full(19, FAIRLEAD_Z)], -1).ravel(),
                          jnp.zeros(57)])
    system = System(model, (element,))
    ctx = system.context(0.0, q, jnp.zeros(6), waves=SeaState(current=Current(1.5, np.pi / 2)))
    acc = np.asarray(element.contribution(ctx, z0).zdot[57:]).reshape(19, 3)
    l, rho, d = 399.0 / 20, 1025.0, 0.1
    expected = 0.5 * rho * d * l * 1.2 * 1.5**2 / (150.0 * l + rho * np.pi * d**2 / 4 * l * 1.0)
    np.testing.assert_allclose(acc[:, 1], expected, rtol=1e-12)
    assert np.max(np.abs(acc[:, 0])) < 1e-8 * expected  # the roundoff of 1.5 MN tensions in float64


LINE_FILE = """
name = "chain"
[[bodies]]
name = "vessel"
joint = "free"
mass = 1.0e6
inertia = [1e8, 1e8, 1e8]
[[forces]]
kind = "lumped_line"
body = "vessel"
segments = SEGMENTS
fairlead = [0.0, 0.0, -5.0]
anchor = [-400.0, 0.0, -100.0]
length = 420.0
diameter = DIAMETER
mass_per_length = 150.0
EA = 6.0e8
[simulation]
duration = 1.0
save_dt = 0.5
"""


def test_a_lumped_line_is_read_from_a_system_file(tmp_path):
    path = tmp_path / "line.toml"
    path.write_text(LINE_FILE.replace("SEGMENTS", "20").replace("DIAMETER", "0.1"))
    el = mbd.load_system(path).system.forces[0]
    assert isinstance(el, LumpedLine) and el.segments == 20 and el.n_states == 6 * 19


@pytest.mark.parametrize("segments, diameter, message", [
    ("1", "0.1", r"forces\[0\]: segments: expected an integer of at least 2, got 1"),
    ("20", "-0.1", r"forces\[0\]\.diameter: must be > 0"),
])
def test_bad_lumped_line_input_is_one_line(tmp_path, segments, diameter, message):
    path = tmp_path / "line.toml"
    path.write_text(LINE_FILE.replace("SEGMENTS", segments).replace("DIAMETER", diameter))
    with pytest.raises(mbd.SystemFileError, match=message) as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


def test_a_buoyant_line_is_one_line(tmp_path):
    """A line lighter than the water it displaces (here 5 kg/m against 8 kg/m) has no catenary to start
    from: one line naming the element, not a NaN start."""
    path = tmp_path / "line.toml"
    path.write_text(LINE_FILE.replace("SEGMENTS", "20").replace("DIAMETER", "0.1").replace("mass_per_length = 150.0",
                                                                                            "mass_per_length = 5.0"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]: the line is buoyant \(5 kg/m against 8.05 kg/m") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
