"""Fender: a block on a fender against the ground and a quay, against closed forms; read from a file."""

import math
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces.fender import Fender
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.paths import set_leaf
from jaxmbd.simulation import Integrator, simulate, solve, static_equilibrium
from jaxmbd.system import System

M, K, G = 2.0e4, 5.0e6, 9.81  # a 20 t block on a 5 MN/m fender: static compression 39 mm
TIGHT = Integrator("tsit5", rtol=1e-10, atol=1e-10)


def block(**fender):
    """A block that slides along x and heaves along z, its fender (at the block's origin) on the
    ground plane z = 0 of the world."""
    b = ModelBuilder()
    b.add_body("carrier", body=Body(0.0, (0, 0, 0), np.zeros(3)), joint=mbd.Prismatic((1.0, 0.0, 0.0)))
    b.add_body("block", body=Body(M, (0, 0, 0), np.full(3, 1e3)), joint=mbd.Prismatic((0.0, 0.0, 1.0)), parent="carrier")
    kw = dict(name="fender", body="block", point=jnp.zeros(3), other="world", plane_point=jnp.zeros(3),
              normal=jnp.array([0.0, 0.0, 1.0]), stiffness=jnp.asarray(K))
    kw.update({k: jnp.asarray(v) for k, v in fender.items()})
    return System(b.build(), (Fender(**kw),), name="block_on_fender")


def test_static_compression_is_weight_over_stiffness():
    """δ = m g / k.  The smooth onset (w = 1 N) changes the force by about m g e^{−mg/w} ≈ 0 N at 2e5 N of load;
    Newton to 1e-10 m/s² residual: 1e-8 relative."""
    system = block(damping=1e4)
    q = static_equilibrium(system, jnp.array([0.0, 0.0]), tol=1e-10)
    out = system.outputs(0.0, (q, jnp.zeros(2), jnp.zeros(0)))
    assert abs(float(out["fender/compression"]) / (M * G / K) - 1) < 1e-8
    assert abs(float(out["fender/force"]) / (M * G) - 1) < 1e-8


def test_undamped_impact_rebounds_with_its_speed_and_the_closed_form_compression():
    """Without gravity's work (a horizontal quay: the plane x = 0, normal +x, the block sliding into
    it at v0 and gravity carried by a stiff ground fender without friction), an undamped linear fender
    returns the block at v0 and compresses to v0 √(m/k).  1e-4: the smooth onset (w = 1 N against
    ~5e5 N of peak force) and the integrator's tolerance."""
    v0 = 1.5
    b = ModelBuilder()
    b.add_body("carrier", body=Body(0.0, (0, 0, 0), np.zeros(3)), joint=mbd.Prismatic((1.0, 0.0, 0.0)))
    b.add_body("block", body=Body(M, (0, 0, 0), np.full(3, 1e3)), joint=mbd.Prismatic((0.0, 0.0, 1.0)), parent="carrier")
    quay = Fender(name="quay", body="block", point=jnp.zeros(3), other="world", plane_point=jnp.array([-0.5, 0.0, 0.0]),
                  normal=jnp.array([1.0, 0.0, 0.0]), stiffness=jnp.asarray(K))
    ground = Fender(name="ground", body="block", point=jnp.zeros(3), other="world", plane_point=jnp.zeros(3),
                    normal=jnp.array([0.0, 0.0, 1.0]), stiffness=jnp.asarray(1e9), damping=jnp.asarray(1e7))
    system = System(b.build(), (quay, ground), name="block_into_quay")
    q0 = jnp.array([0.0, -M * G / 1e9])
    res = simulate(system, 1.0, save_dt=1e-4, q0=q0, v0=jnp.array([-v0, 0.0]), integrator=TIGHT)
    assert abs(np.max(res.outputs["quay/compression"]) / (v0 * np.sqrt(M / K)) - 1) < 1e-4
    assert abs(res.v[-1, 0] / v0 - 1) < 1e-4


def test_friction_decelerates_a_sliding_block_at_mu_g():
    """Sliding on the ground fender at 2 m/s with μ = 0.3: v(t) = v0 − μ g t while |v| ≫ u_s.
    1e-4 relative on the speed lost over 0.5 s (u_s = 1 mm/s regularises μ by u_s²/(2v²) ≈ 1e-7;
    the fender's heave oscillation is damped)."""
    mu, v0 = 0.3, 2.0
    system = block(damping=2 * np.sqrt(K * M), friction=mu, slip_velocity=1e-3)
    q = static_equilibrium(system, jnp.array([0.0, 0.0]), tol=1e-10)
    res = simulate(system, 0.5, save_dt=0.01, q0=q, v0=jnp.array([v0, 0.0]), integrator=TIGHT)
    lost = v0 - res.v[-1, 0]
    assert abs(lost / (mu * G * 0.5) - 1) < 1e-4


def test_gradient_of_the_peak_compression_matches_finite_differences():
    """d(max compression)/dk of the drop onto the ground through the simulation, against central
    differences (step 1e-4 relative): 1e-5 relative."""
    ts = np.arange(151) * 1e-3  # the peak comes at about 0.1 s

    base = block(damping=2e4)

    def peak(k):
        system = set_leaf(base, "fender.stiffness", k)
        y0 = (jnp.array([0.0, 0.0]), jnp.array([0.0, -1.0]), jnp.zeros(0))
        q, v, z = solve(system, y0, ts, integrator=Integrator("rk4", dt=1e-3)).ys
        compression = jax.vmap(lambda t, q, v: system.outputs(t, (q, v, z[0]))["fender/compression"])(ts, q, v)
        return jnp.max(compression)

    g = jax.jit(jax.grad(peak))(jnp.asarray(K))
    h = 1e-4 * K
    value = jax.jit(peak)
    fd = (value(jnp.asarray(K + h)) - value(jnp.asarray(K - h))) / (2 * h)
    assert abs(float(g) / float(fd) - 1) < 1e-5


def test_a_fender_is_read_from_a_system_file(tmp_path):
    """Every key checked by the fender's own declarations: a negative stiffness is one line naming
    the key; a compression beyond the rated one is reported by the run."""
    text = """
name = "block_on_quay"
[[bodies]]
name = "block"
joint = "prismatic"
axis = [0, 0, 1]
mass = 2.0e4
inertia = [1e3, 1e3, 1e3]
[[forces]]
kind = "fender"
body = "block"
point = [0, 0, 0]
other = "world"
plane_point = [0, 0, 0]
normal = [0, 0, 1]
stiffness = STIFFNESS
rated_compression = 0.01
[simulation]
duration = 0.5
save_dt = 0.01
method = "rk4"
dt = 0.001
"""
    path = tmp_path / "block.toml"
    path.write_text(text.replace("STIFFNESS", "5.0e6"))
    loaded = mbd.load_system(path)
    fender = loaded.system.forces[0]
    assert isinstance(fender, Fender) and float(fender.stiffness) == 5.0e6
    res = loaded.run()
    assert np.max(res.outputs["fender/compression"]) > 0.01  # 39 mm static against a 10 mm rating
    assert [(e.element, e.quantity) for e in res.excursions] == [("fender", "fender compression")]
    assert "fender compression" in res.attrs["validity_summary"]  # and in the result file's attributes
    path.write_text(text.replace("STIFFNESS", "-5.0e6"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.stiffness: must be > 0"):
        mbd.load_system(path)
    path.write_text(text.replace("STIFFNESS", "5.0e6").replace("normal = [0, 0, 1]", "normal = [0, 0, 0]"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.normal: must not be the zero vector"):
        mbd.load_system(path)


def test_landing_on_a_compliant_seabed_matches_the_damped_oscillator():
    """A payload landing at v0 = 2 m/s on a seabed of stiffness k with damping c (10 % of critical)
    under its weight: while in contact, m δ'' + c δ' + k δ = m g from δ = 0, δ' = v0, and the contact
    ends when the seabed's force k δ + c δ' returns to zero.  Peak force and contact duration against
    that closed form (evaluated densely here), within 2 % (DNV-RP-H103's landing check; the smooth
    onset of w = 1 N moves them by far less: measured 2e-6 in the peak and 7e-4 in the duration, the
    save step)."""
    c = 0.2 * np.sqrt(K * M)
    v0 = 2.0  # fast enough to bounce off: v0 / ω = 0.13 m against m g / k = 0.04 m
    system = block(damping=c)
    q0 = jnp.array([0.0, 1e-6])  # just above the seabed, falling at v0
    res = simulate(system, 0.4, q0=q0, v0=jnp.array([0.0, -v0]), save_dt=1e-4, integrator=TIGHT)
    F = np.asarray(res.outputs["fender/force"])
    t = np.asarray(res.time)
    # the closed form
    w = np.sqrt(K / M)
    zeta = c / (2 * np.sqrt(K * M))
    wd = w * np.sqrt(1 - zeta**2)
    xs = M * G / K
    A, B = -xs, (v0 - zeta * w * xs) / wd  # δ(0) = 0, δ'(0) = v0
    tt = np.linspace(0.0, 0.4, 400_001)
    env = np.exp(-zeta * w * tt)
    x = xs + env * (A * np.cos(wd * tt) + B * np.sin(wd * tt))
    xd = env * ((-zeta * w * A + wd * B) * np.cos(wd * tt) + (-zeta * w * B - wd * A) * np.sin(wd * tt))
    f = K * x + c * xd
    end = np.argmax((f <= 0) & (tt > 0.01))
    peak, duration = np.max(f[:end]), tt[end]
    in_contact = t[F > 1e-3 * peak]
    assert abs(np.max(F) / peak - 1) < 0.02, (np.max(F), peak)
    assert abs((in_contact[-1] - in_contact[0]) / duration - 1) < 0.02, (in_contact[-1] - in_contact[0], duration)


def test_a_fender_away_from_its_plane_pushes_nothing():
    """The seabed of the subsea installation (k 2.5 MN/m a corner, the onset w = 1 kN, 30 % of critical damping
    for a quarter of 60 t) approached at 0.5 m/s: at a gap of 1 m no force and no friction at all (float64's
    exp(-2500) is 0); at 1 cm the onset's tail, exp(-25) of the damper's 1e5 N, under 1e-5 N; in contact
    (5 cm) the fender curve with its damping, k δ + c δ', to 1e-12 (the onset's exp(-125)).  A softplus of the
    sum alone pushed w ln 2 = 693 N from any distance, with its friction."""
    k, w, c, mu, v = 2.5e6, 1e3, 0.3 * 2 * math.sqrt(2.5e6 * 6e4), 0.5, 0.5
    system = block(stiffness=k, transition=w, damping=c, friction=mu)
    for gap, most in ((1.0, 0.0), (0.01, 1e-5)):
        out = system.outputs(0.0, (jnp.array([0.0, gap]), jnp.array([0.3, -v]), jnp.zeros(0)))
        assert 0.0 <= float(out["fender/force"]) <= most, gap
        assert float(np.max(np.abs(out["fender/friction"]))) <= mu * most, gap
    out = system.outputs(0.0, (jnp.array([0.0, -0.05]), jnp.array([0.0, -v]), jnp.zeros(0)))
    assert float(out["fender/force"]) == pytest.approx(k * 0.05 + c * v, rel=1e-12, abs=0)


def test_the_contact_ends_at_the_edge_of_its_region():
    """A deck 10 m long (x in [−5, 5]): the block on it carries its weight; slid off the edge, nothing
    (exactly 0 N), whatever the compression."""
    system = block(region_min=[-5.0, -np.inf, -np.inf], region_max=[5.0, np.inf, np.inf])
    for x, on in ((0.0, True), (4.9, True), (5.1, False), (-7.0, False)):
        out = system.outputs(0.0, (jnp.array([x, -M * G / K]), jnp.zeros(2), jnp.zeros(0)))
        if on:
            assert abs(float(out["fender/force"]) / (M * G) - 1) < 1e-8
        else:
            assert float(out["fender/force"]) == 0.0


@pytest.mark.parametrize("change, key, words", [
    ("plane_point = [0, 0, 0]", "plane_point", "under the still water"),
    ("other = \"world\"\nplane_point = [0, 0, -50]\nnormal = [0, 1, 0]", "normal", "points up"),
])
def test_a_seabed_above_the_water_or_tilted_is_refused(tmp_path, change, key, words):
    """``seabed = true``: a world plane with its normal up, under the still water; else one line."""
    text = """
name = "landing"
[[bodies]]
name = "block"
joint = "prismatic"
axis = [0, 0, 1]
mass = 2.0e4
inertia = [1e3, 1e3, 1e3]
[[forces]]
kind = "fender"
body = "block"
point = [0, 0, 0]
seabed = true
stiffness = 5.0e6
CHANGE
[simulation]
duration = 0.5
save_dt = 0.01
"""
    path = tmp_path / "seabed.toml"
    base = "other = \"world\"\nplane_point = [0, 0, -50]\nnormal = [0, 0, 1]"
    path.write_text(text.replace("CHANGE", base))
    assert mbd.load_system(path).system.forces[0].seabed
    path.write_text(text.replace("CHANGE", change if "other" in change else base.replace("plane_point = [0, 0, -50]", change)))
    with pytest.raises(mbd.SystemFileError, match=rf"forces\[0\]\.{key}: .*{words}") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)
