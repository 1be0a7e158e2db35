"""A flexible beam inside a system: the coupled joint/elastic solve against statics and a rigid pendulum."""

import jax.numpy as jnp
import pytest
import numpy as np

import jaxmbd as mbd
from jaxmbd.flex.beam import BeamMesh, rayleigh_coefficients
from jaxmbd.flex.body import flexible_body
from jaxmbd.flex.element import FlexibleBeamElement
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System

L, I, A, RHO = 10.0, 8.33e-6, 0.01, 7850.0


def beam(E, zeta=0.0, n_modes=6):
    mesh = BeamMesh.straight((0, 0, 0), (L, 0, 0), 10, E=E, G=E / 2.6, A=A, Iy=I, Iz=I, J=2 * I, rho=RHO)
    ray = (0.0, 0.0)
    if zeta:
        w1 = 1.875**2 * np.sqrt(E * I / (RHO * A * L**4))
        ray = rayleigh_coefficients(w1, zeta, 6 * w1, zeta)
    return flexible_body(mesh, {0: "clamped"}, n_modes=n_modes, rayleigh=ray)


def test_cantilever_in_a_system_settles_at_the_static_deflection():
    """Clamped to the world through a Fixed joint, released undeformed with 20 % damping: the tip
    settles at qL⁴/(8EI) within 0.1 % (six modes reproduce the static deflection to 0.02 %)."""
    b = ModelBuilder()
    b.add_body("frame", body=Body(0.0), joint=mbd.Fixed())
    el = FlexibleBeamElement(name="boom", body="frame", beam=beam(210e9, zeta=0.2), tip_node=-1)
    res = simulate(System(b.build(), (el,)), 20.0, save_dt=0.1, integrator=Integrator("tsit5", rtol=1e-9, atol=1e-12))
    tip = res.outputs["boom/tip_deflection"][-1, 2]
    static = -RHO * A * 9.81 * L**4 / (8 * 210e9 * I)
    assert abs(tip / static - 1) < 1e-3, (tip, static)


def test_static_equilibrium_solves_the_elastic_coordinates():
    """``static_equilibrium(return_states=True)`` rests the cantilever bent: the tip at qL⁴/(8EI)
    within 0.1 % (as the settled run above), and the returned state has zero acceleration."""
    b = ModelBuilder()
    b.add_body("frame", body=Body(0.0), joint=mbd.Fixed())
    system = System(b.build(), (FlexibleBeamElement(name="boom", body="frame", beam=beam(210e9), tip_node=-1),))
    q, z = mbd.static_equilibrium(system, tol=1e-10, return_states=True)
    y = (q, jnp.zeros(0), z)
    tip = system.outputs(0.0, y)["boom/tip_deflection"][2]
    static = -RHO * A * 9.81 * L**4 / (8 * 210e9 * I)
    assert abs(tip / static - 1) < 1e-3, (tip, static)
    assert np.max(np.abs(system.rhs(0.0, y)[2])) < 1e-9


def test_flexible_pendulum_swings_like_the_rigid_one():
    """A steel beam on a revolute joint about y, released 0.2 rad from hanging: its period equals the
    rigid rod's to 0.2 % (the bending mode, 5.2 rad/s, is well above the swing, 1.2 rad/s, and the
    beam hangs in tension), and the energy of the undamped coupled system (tree + floating frame +
    strain + gravity) is conserved to 1e-8 of the swing energy over 10 s."""
    from jaxmbd.flex.body import kinetic_energy, potential_energy

    E = 210e9
    b = ModelBuilder()
    b.add_body("frame", body=Body(0.0), joint=mbd.Revolute((0.0, 1.0, 0.0)), joint_name="pivot",
               placement=mbd.Placement.from_xyz_rpy(rpy=(0.0, np.pi / 2, 0.0)))
    bm = beam(E, n_modes=4)
    el = FlexibleBeamElement(name="boom", body="frame", beam=bm, tip_node=-1)
    sys_ = System(b.build(), (el,))
    res = simulate(sys_, 10.0, save_dt=0.002, q0=jnp.array([0.2]), integrator=Integrator("tsit5", rtol=1e-10, atol=1e-12, max_steps=400_000))

    def energy(q, v, z):
        ctx = sys_.context(0.0, q, v)
        k = bm.n_f
        return kinetic_energy(bm, z[:k], z[k:], ctx.twist[0]) + potential_energy(bm, z[:k], ctx.p[0], ctx.R[0])

    E_t = np.array([float(energy(jnp.asarray(q), jnp.asarray(v), jnp.asarray(z)))
                    for q, v, z in zip(res.q[::500], res.v[::500], res.z[::500])])
    swing = RHO * A * L * 9.81 * L / 2 * (1 - np.cos(0.2))
    assert np.max(np.abs(E_t - E_t[0])) < 1e-8 * swing
    th = res.q[:, 0]
    k = np.where((th[:-1] > 0) & (th[1:] <= 0))[0]
    tc = res.time[k] - th[k] * (res.time[k + 1] - res.time[k]) / (th[k + 1] - th[k])
    T = np.mean(np.diff(tc))
    # rigid rod pivoted at its end, amplitude 0.2 rad: T0 (1 + θ0²/16 + ...)
    T0 = 2 * np.pi * np.sqrt(2 * L / (3 * 9.81)) * (1 + 0.2**2 / 16 + 11 * 0.2**4 / 3072)
    assert abs(T / T0 - 1) < 2e-3, (T, T0)


_BOOM_FILE = """
name = "cantilever"
[[bodies]]
name = "frame"
joint = "fixed"
mass = 0.0
[[forces]]
kind = "flexible_beam"
name = "boom"
body = "frame"
end = [10.0, 0.0, 0.0]
elements = 10
E = 210e9
G = 80.77e9
A = 0.01
Iy = 8.33e-6
Iz = 8.33e-6
J = 1.666e-5
density = 7850.0
modes = 6
ROPE
[simulation]
duration = 0.2
save_dt = 0.1
"""


def test_a_flexible_beam_is_read_from_a_system_file(tmp_path):
    """``kind = "flexible_beam"``: the element the file builds has the same beam as the one built in
    Python (mass and stiffness arrays to 1e-12 relative), rests at the cantilever's qL⁴/(8EI) within
    0.1 % (six modes, as above), and a rope from its tip to the world carries the load it is given."""
    from jaxmbd.flex.element import FlexibleBeamElement

    path = tmp_path / "boom.toml"
    path.write_text(_BOOM_FILE.replace("ROPE", ""))
    loaded = mbd.load_system(path)
    el = loaded.system.forces[0]
    assert isinstance(el, FlexibleBeamElement) and el.n_flex == 6
    ref = flexible_body(BeamMesh.straight((0, 0, 0), (L, 0, 0), 10, E=210e9, G=80.77e9, A=A, Iy=I, Iz=I, J=1.666e-5, rho=RHO),
                        {0: "clamped"}, n_modes=6)
    for name in ("mass", "M_ff", "K", "basis"):
        a, b = np.asarray(getattr(el.beam, name)), np.asarray(getattr(ref, name))
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b)), name
    q, z = mbd.static_equilibrium(loaded.system, tol=1e-10, return_states=True)
    tip = loaded.system.outputs(0.0, (q, jnp.zeros(0), z))["boom/tip_deflection"][2]
    assert abs(tip / (-RHO * A * 9.81 * L**4 / (8 * 210e9 * I)) - 1) < 1e-3
    # the file's run from its static equilibrium starts bent, at rest (it started straight and swung)
    path.write_text(_BOOM_FILE.replace("ROPE", "").replace("save_dt = 0.1", "save_dt = 0.1\nstatic_equilibrium = true"))
    ran = mbd.load_system(path).run().outputs["boom/tip_deflection"][:, 2]
    np.testing.assert_allclose(ran, tip, rtol=1e-6)
    # a taut rope from the tip down to a world point 1 m below: it carries EA/l times its stretch
    path.write_text(_BOOM_FILE.replace("ROPE", 'rope_body = "world"\nrope_point = [10.0, 0.0, -1.0]\nrope_EA = 1.0e6\nrope_length = 0.9'))
    system = mbd.load_system(path).system
    out = system.outputs(0.0, (jnp.zeros(0), jnp.zeros(0), jnp.zeros(system.n_states)))
    assert abs(float(out["boom/tension0"]) - 1.0e6 / 0.9 * 0.1) < 1e-6 * 1.0e6 / 9


@pytest.mark.parametrize("rope, message", [
    ("rope_EA = 1.0e6", r"forces\[0\]\.rope_EA: a rope needs `rope_body`"),
    ('rope_body = "world"\nrope_EA = 1.0e6', r"forces\[0\]\.rope_length: missing \(required with `rope_body`\)"),
    ("E = -1.0", r"forces\[0\]\.E"),
    ('root = "welded"', r"forces\[0\]\.root"),
    ("elements = 0", r"forces\[0\]\.elements: must be at least 1"),
    ("modes = 100", r"forces\[0\]\.modes: must be at most the beam's 60 free nodal coordinates \(10 elements, clamped root\), got 100"),
])
def test_a_flexible_beam_file_entry_with_a_bad_key_is_one_line(tmp_path, rope, message):
    path = tmp_path / "boom.toml"
    text = _BOOM_FILE.replace("ROPE", rope)
    if rope.startswith("E = "):
        text = text.replace("E = 210e9\n", "")
    if rope.startswith("modes"):
        text = text.replace("modes = 6\n", "")
    if rope.startswith("elements"):
        text = text.replace("elements = 10\n", "")
    path.write_text(text)
    with pytest.raises(mbd.SystemFileError, match=message) as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


def test_a_beam_bent_past_a_tenth_of_its_length_is_reported():
    """The cantilever's 0.55 m at rest is inside 10 % of its 10 m; a softer one (E / 4: 2.2 m) is reported."""
    from jaxmbd import validity

    for E, outside in ((210e9, False), (52.5e9, True)):
        b = ModelBuilder()
        b.add_body("frame", body=Body(0.0), joint=mbd.Fixed())
        system = System(b.build(), (FlexibleBeamElement(name="boom", body="frame", beam=beam(E), tip_node=-1),))
        q, z = mbd.static_equilibrium(system, tol=1e-10, return_states=True)
        tip = np.asarray(system.outputs(0.0, (q, jnp.zeros(0), z))["boom/tip_deflection"])
        found = validity.check(system, np.zeros(1), {"boom/tip_deflection": tip[None]}, False)
        assert [e.quantity for e in found] == (["beam tip deflection"] if outside else [])


@pytest.mark.parametrize("case", ["cantilever", "moored barge"])
def test_the_equilibrium_by_differences_equals_the_one_by_forward_mode(case):
    """The static equilibrium's Jacobian is by central differences (one compiled program of the residual,
    less than half the compile of forward mode's); its reference is the same Newton iteration with
    forward-mode derivatives (``exact=True``).  Both converge to 1e-10 m/s², and their equilibria agree to
    1e-12 (m, rad and the elastic coordinates): the differences' error, 1e-10 relative, only slows
    Newton's last step."""
    if case == "cantilever":
        b = ModelBuilder()
        b.add_body("frame", body=Body(0.0), joint=mbd.Fixed())
        system = System(b.build(), (FlexibleBeamElement(name="boom", body="frame", beam=beam(210e9), tip_node=-1),))
        q0 = None
    else:
        from sweep_system import moored_barge

        system = moored_barge()
        q0 = jnp.asarray([1.0, 0.5, 0.3, 1.0, 0.0, 0.0, 0.0])
    q, z = mbd.static_equilibrium(system, q0, return_states=True)
    qe, ze = mbd.static_equilibrium(system, q0, return_states=True, exact=True)
    np.testing.assert_allclose(np.asarray(q), np.asarray(qe), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(z), np.asarray(ze), rtol=0, atol=1e-12)
