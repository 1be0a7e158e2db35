"""Quasi-static catenary mooring line (jaxmbd/forces/catenary.py) against MoorPy (a test dependency, an
independent implementation of the same elastic catenary with seabed contact and friction), its
gradients against central differences, and the element on a body."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd import Body, ModelBuilder, System
from jaxmbd.forces.catenary import CatenaryLine, solve_catenary

moorpy = pytest.importorskip("moorpy")
from moorpy.Catenary import catenary as moorpy_catenary  # noqa: E402

# (name, fairlead height Z, length L, EA, weight in water w, seabed friction, X range): lines lying on the
# seabed at two depths and two EA (from slack, the laid part not straight, to nearly lifted off), a
# nearly taut one, a taut one, and one with friction
LINES = [
    ("slack, 100 m, stiff", 100.0, 600.0, 1.5e9, 1000.0, 0.0, (450.0, 575.0)),
    ("slack, 100 m, soft", 100.0, 600.0, 3.0e8, 1000.0, 0.0, (450.0, 580.0)),
    ("slack, 50 m", 50.0, 300.0, 1.0e9, 800.0, 0.0, (200.0, 290.0)),
    ("nearly taut", 100.0, 200.0, 1.0e9, 500.0, 0.0, (150.0, 171.0)),
    ("taut", 100.0, 150.0, 5.0e8, 200.0, 0.0, (113.0, 118.0)),
    ("slack with friction", 100.0, 600.0, 1.5e9, 1000.0, 0.5, (450.0, 575.0)),
]


@pytest.mark.parametrize("line", LINES, ids=[line[0] for line in LINES])
def test_fairlead_tensions_against_moorpy(line):
    """20 fairlead positions per line: H and V within 1e-4 relative (the issue's figure; both solve the
    same equations, MoorPy to Tol = 1e-10: measured 1e-8 or better)."""
    _, Z, L, EA, w, cb, (x0, x1) = line
    solve = jax.jit(lambda X: solve_catenary(X, Z, L, EA, w, cb))
    for X in np.linspace(x0, x1, 20):
        H, V, ok = solve(jnp.asarray(X))
        info = moorpy_catenary(X, Z, L, EA, w, CB=cb, Tol=1e-10, MaxIter=200)[4]
        HF, VF = info["HF"], info["VF"]
        assert bool(ok)
        # a slack line (its laid part not straight) carries no horizontal tension in either
        assert abs(float(H) - HF) <= 1e-4 * (HF if HF > 0 else VF) and abs(float(V) / VF - 1) < 1e-4, (X, float(H), HF, float(V), VF)


@pytest.mark.slow  # 11 s; element gradients against differences stay in the default suite (fender, tugger, cylinder)
def test_gradients_of_the_fairlead_tension_against_central_differences():
    """d(H, V)/d(X, Z, L, EA) by the implicit function theorem against central differences (h = 1e-5 of
    each value), to 1e-6 relative, on a slack line lying on the seabed and on a suspended one."""
    for X, Z, L, EA, w in ((520.0, 100.0, 600.0, 1.5e9, 1000.0), (165.0, 100.0, 200.0, 1.0e9, 500.0)):
        args = jnp.asarray([X, Z, L, EA])

        @jax.jit
        def tensions(a):
            H, V, _ = solve_catenary(a[0], a[1], a[2], a[3], w)
            return jnp.stack([H, V])

        J = np.asarray(jax.jit(jax.jacfwd(tensions))(args))
        for k in range(4):
            h = 1e-5 * float(args[k])
            fd = (np.asarray(tensions(args.at[k].add(h))) - np.asarray(tensions(args.at[k].add(-h)))) / (2 * h)
            np.testing.assert_allclose(J[:, k], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def _moored(fairlead_xyz, **kw):
    b = ModelBuilder()
    b.add_body("buoy", body=Body(1e5, (0.0, 0.0, 0.0), np.eye(3) * 1e5), joint=mbd.Free())
    el = CatenaryLine(name="line", body="buoy", fairlead=jnp.zeros(3), anchor=jnp.asarray([0.0, 0.0, -100.0]),
                      length=jnp.asarray(600.0), EA=jnp.asarray(1.5e9), weight=jnp.asarray(1000.0), **kw)
    system = System(b.build(), (el,))
    q = jnp.asarray([*fairlead_xyz, 1.0, 0.0, 0.0, 0.0])
    return system, q


def test_the_line_pulls_the_fairlead_towards_its_anchor_and_reports_its_ends():
    """A fairlead 520 m from the anchor along the bisector of x and y and 100 m above it: the force on the
    body is −H ê − V e_z with (H, V) of the catenary; lying on the seabed, the anchor feels H alone
    (angle 0) over a laid length L − V/w; to 1e-10."""
    d = 520.0 / math.sqrt(2)
    system, q = _moored((d, d, 0.0))
    out = system.outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0)))
    H, V, _ = solve_catenary(jnp.asarray(520.0), 100.0, 600.0, 1.5e9, 1000.0)
    H, V = float(H), float(V)
    assert abs(float(out["line/horizontal_tension"]) - H) < 1e-10 * H
    assert abs(float(out["line/laid_length"]) - (600.0 - V / 1000.0)) < 1e-9
    assert abs(float(out["line/anchor_tension"]) - H) < 1e-10 * H and float(out["line/anchor_angle"]) == 0.0
    f_ext, _, _, _ = system.loads(0.0, q, jnp.zeros(6), jnp.zeros(0))
    # the Free joint's wrench is in body axes (the body is not turned): force −H ê − V e_z at its origin
    np.testing.assert_allclose(np.asarray(f_ext[0, :3]), [-H / math.sqrt(2), -H / math.sqrt(2), -V], rtol=1e-10)


def test_a_tension_beyond_the_limit_is_reported():
    system, q = _moored((575.0, 0.0, 0.0), max_tension=jnp.asarray(3.0e5))  # 422 kN at the fairlead
    t = np.array([0.0, 1.0])
    out = {k: np.stack([np.asarray(v)] * 2) for k, v in system.outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0))).items()}
    found = mbd.validity.check(system, t, out, False)
    assert [e.quantity for e in found] == ["line tension"], found


def test_a_line_stretched_past_its_material_and_a_lifted_anchor_are_reported():
    """A line pulled 40 % past its length reported converged = 1 and nothing else, and a drag anchor lifted
    was no range at all.  Now its strain (the fairlead tension over EA) is an output, held against the
    material's `max_strain` (default 0.3), and the anchor's uplift angle against `max_anchor_angle`
    (default 0, a drag anchor).  Taut and nearly weightless against its tension (w L / T = 1e-3), the line's
    strain is its chord's over its length less one, to 1e-3."""
    system, q = _moored((830.0, 0.0, 0.0))
    out = system.outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0)))
    chord = math.hypot(830.0, 100.0)
    assert float(out["line/strain"]) == pytest.approx(chord / 600.0 - 1.0, abs=1e-3)
    assert float(out["line/converged"]) == 1.0 and float(out["line/anchor_angle"]) > math.radians(5.0)
    t = np.array([0.0, 1.0])
    found = mbd.validity.check(system, t, {k: np.stack([np.asarray(v)] * 2) for k, v in out.items()}, False)
    assert sorted(e.quantity for e in found) == ["anchor uplift", "line strain"], found
    pile, q = _moored((830.0, 0.0, 0.0), max_strain=jnp.asarray(0.5), max_anchor_angle=jnp.asarray(math.radians(30.0)))
    out = pile.outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0)))
    assert mbd.validity.check(pile, t, {k: np.stack([np.asarray(v)] * 2) for k, v in out.items()}, False) == []


def test_a_fairlead_below_the_anchor_is_reported_not_nan():
    """The anchor above the fairlead (a line laid out upside down): finite forces, and the run says the
    catenary has no solution there."""
    system, q = _moored((500.0, 0.0, -150.0))
    out = system.outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0)))
    assert np.all(np.isfinite(np.asarray(out["line/fairlead_tension"]))) and float(out["line/converged"]) == 0.0
    t = np.array([0.0, 1.0])
    found = mbd.validity.check(system, t, {k: np.stack([np.asarray(v)] * 2) for k, v in out.items()}, False)
    assert [e.quantity for e in found] == ["catenary solution"], found


@pytest.mark.slow  # 19 s; the restoring curve against MoorPy stays in the default suite (tests/test_mooring.py)
def test_the_stiffness_of_a_four_line_spread_against_moorpy():
    """Four lines at 45°, 135°, 225°, 315° (600 m, 100 m deep, anchors 560 m beyond fairleads on a 20 m
    circle): the 6x6 stiffness −d(force, moment about the body's origin, world axes)/d(position,
    rotation) by forward-mode differentiation through the lines (the implicit function theorem in each),
    against MoorPy's analytic coupled stiffness of the lines (``getCoupledStiffnessA``): within 1e-3 of
    its largest entry (the issue's figure; measured 2e-13)."""
    import moorpy as mp

    depth, L, EA, w, R_anchor, r_fair = 100.0, 600.0, 1.5e9, 1000.0, 560.0, 20.0
    ms = mp.System(depth=depth)
    d_vol = 0.1
    ms.setLineType(dnommm=100.0, d_vol=d_vol, mass=w / 9.81 + 1025.0 * np.pi / 4 * d_vol**2, w=w, EA=EA, name="chain")
    ms.addBody(-1, [0, 0, 0, 0, 0, 0])
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    lines = []
    for k in range(4):
        a = np.radians(45 + 90 * k)
        anchor = [(R_anchor + r_fair) * np.cos(a), (R_anchor + r_fair) * np.sin(a), -depth]
        fairlead = [r_fair * np.cos(a), r_fair * np.sin(a), 0.0]
        ms.addPoint(1, anchor)
        ms.addPoint(1, fairlead)
        ms.bodyList[0].attachPoint(len(ms.pointList), fairlead)
        ms.addLine(L, "chain", pointA=len(ms.pointList) - 1, pointB=len(ms.pointList))
        lines.append(CatenaryLine(name=f"line{k}", body="hull", fairlead=jnp.asarray(fairlead), anchor=jnp.asarray(anchor),
                                  length=jnp.asarray(L), EA=jnp.asarray(EA), weight=jnp.asarray(w)))
    ms.initialize()
    K_moorpy = ms.getCoupledStiffnessA(lines_only=True)
    system = System(b.build(), tuple(lines))

    def wrench(x6):  # position and roll-pitch-yaw of the hull -> world force and moment about its origin
        r, (roll, pitch, yaw) = x6[:3], x6[3:] / 2
        cr, sr, cp, sp, cy, sy = jnp.cos(roll), jnp.sin(roll), jnp.cos(pitch), jnp.sin(pitch), jnp.cos(yaw), jnp.sin(yaw)
        quat = jnp.stack([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                          cr * cp * sy - sr * sp * cy])
        f_ext, _, _, ctx = system.loads(0.0, jnp.concatenate([r, quat]), jnp.zeros(6), jnp.zeros(0))
        R = ctx.R[0]
        return jnp.concatenate([R @ f_ext[0, :3], R @ f_ext[0, 3:]])

    K = -np.asarray(jax.jit(jax.jacfwd(wrench))(jnp.zeros(6)))  # one program: op by op it compiled each operation
    assert np.max(np.abs(K - K_moorpy)) < 1e-3 * np.max(np.abs(K_moorpy)), np.max(np.abs(K - K_moorpy))


TEXT = """
name = "moored"
[[bodies]]
name = "buoy"
joint = "free"
mass = 1.0e5
inertia = [1e5, 1e5, 1e5]
[[forces]]
kind = "catenary_line"
body = "buoy"
fairlead = [0, 0, 0]
anchor = [520, 0, -100]
length = 600.0
EA = 1.5e9
weight = WEIGHT
[simulation]
duration = 1.0
save_dt = 0.5
"""


def test_a_catenary_line_is_read_from_a_system_file(tmp_path):
    """Read as declared; a negative weight in water (a buoyant line: no catenary) is one line naming the key."""
    path = tmp_path / "moored.toml"
    path.write_text(TEXT.replace("WEIGHT", "1000.0"))
    el = mbd.load_system(path).system.forces[0]
    assert isinstance(el, CatenaryLine) and float(el.weight) == 1000.0
    path.write_text(TEXT.replace("WEIGHT", "-50.0"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.weight: must be > 0") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


@pytest.mark.slow  # 16 s; the spread's stiffness against MoorPy stays in the default suite
def test_a_spread_is_the_sum_of_its_lines_and_reads_compactly_from_a_file(tmp_path):
    """Four lines by their headings in one table load the body exactly as four catenary lines written
    one by one (to 1e-12 of the largest wrench component), with one output per line."""
    from jaxmbd.forces.spread import MooringSpread

    heads = np.radians([45.0, 135.0, 225.0, 315.0])
    b = ModelBuilder()
    b.add_body("hull", body=Body(1e6, (0.0, 0.0, 0.0), np.eye(3) * 1e8), joint=mbd.Free())
    model = b.build()
    spread = MooringSpread(name="spread", body="hull", headings=jnp.asarray(heads), fairlead_radius=jnp.asarray(20.0),
                           fairlead_z=jnp.asarray(-2.0), anchor_radius=jnp.asarray(580.0), anchor_z=jnp.asarray(-100.0),
                           length=jnp.asarray(600.0), EA=jnp.asarray(1.5e9), weight=jnp.asarray([1000.0, 1000.0, 900.0, 1000.0]))
    lines = tuple(CatenaryLine(name=f"l{k}", body="hull", fairlead=jnp.asarray([20 * np.cos(h), 20 * np.sin(h), -2.0]),
                               anchor=jnp.asarray([580 * np.cos(h), 580 * np.sin(h), -100.0]), length=jnp.asarray(600.0),
                               EA=jnp.asarray(1.5e9), weight=jnp.asarray(900.0 if k == 2 else 1000.0)) for k, h in enumerate(heads))
    q = jnp.asarray([12.0, -5.0, 0.3, math.cos(0.05), 0.0, 0.0, math.sin(0.05)])  # offset and yawed
    f_spread = np.asarray(System(model, (spread,)).loads(0.0, q, jnp.zeros(6), jnp.zeros(0))[0])
    f_lines = np.asarray(System(model, lines).loads(0.0, q, jnp.zeros(6), jnp.zeros(0))[0])
    np.testing.assert_allclose(f_spread, f_lines, rtol=0, atol=1e-12 * np.abs(f_lines).max())
    out = System(model, (spread,)).outputs(0.0, (q, jnp.zeros(6), jnp.zeros(0)))
    assert np.asarray(out["spread/fairlead_tension"]).shape == (4,)
    text = """
name = "spread"
[[bodies]]
name = "hull"
joint = "free"
mass = 1.0e6
inertia = [1e8, 1e8, 1e8]
[[forces]]
kind = "mooring_spread"
body = "hull"
headings_deg = [45, 135, 225, 315]
fairlead_radius = 20.0
fairlead_z = -2.0
anchor_radius = RADIUS
anchor_z = -100.0
length = 600.0
EA = 1.5e9
weight = [1000.0, 1000.0, 900.0, 1000.0]
[simulation]
duration = 1.0
save_dt = 0.5
"""
    path = tmp_path / "spread.toml"
    path.write_text(text.replace("RADIUS", "580.0"))
    el = mbd.load_system(path).system.forces[0]
    assert isinstance(el, MooringSpread) and np.allclose(np.degrees(np.asarray(el.headings)), [45, 135, 225, 315])
    path.write_text(text.replace("RADIUS", "10.0"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.anchor_radius: the anchors must lie outside") as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("old, new, message", [
    ("anchor = [520, 0, -100]", "anchor = [520, 0, 20]",
     r"forces\[0\]: the anchor \(z = 20 m\) is above the fairlead \(z = 0 m at q0\)"),
    ("length = 600.0", "length = 300.0",
     r"forces\[0\]: the line \(300 m\) is too short to reach its fairlead 529.5 m from the anchor at q0: it would stretch by 77 %"),
    ("length = 600.0", "length = 520.0\nmax_tension = 5.0e6",
     r"forces\[0\]: the line reaches its fairlead at q0 only at .* N, above its max_tension 5e\+06 N"),
])
def test_a_line_that_cannot_start_is_one_line(tmp_path, old, new, message):
    """An anchor above its fairlead, a line too short to reach without stretching 30 % (no mooring
    material survives that), one that reaches only beyond its max_tension: one line naming the element,
    from the positions at q0."""
    path = tmp_path / "moored.toml"
    text = TEXT.replace("WEIGHT", "1000.0")
    assert old in text
    path.write_text(text.replace(old, new))
    with pytest.raises(mbd.SystemFileError, match=message) as err:
        mbd.load_system(path)
    assert "\n" not in str(err.value)


def test_a_spread_line_that_cannot_start_names_its_heading(tmp_path):
    text = TEXT.replace("WEIGHT", "1000.0")
    i = text.index("[[forces]]")
    j = text.index("[simulation]")
    spread = """[[forces]]
kind = "mooring_spread"
body = "buoy"
headings_deg = [0, 90, 180, 270]
fairlead_radius = 10.0
fairlead_z = 0.0
anchor_radius = 530.0
anchor_z = -100.0
length = [600.0, 600.0, 400.0, 600.0]
EA = 1.5e9
weight = 1000.0
"""
    path = tmp_path / "spread.toml"
    path.write_text(text[:i] + spread + text[j:])
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]: line 2 \(heading 180°\): the line \(400 m\) is too short"):
        mbd.load_system(path)


def test_a_current_beside_quasi_static_lines_is_said():
    """The catenary hangs in still water: a system with a current and a catenary line says, once, that the line
    does not feel it (and which element does); without the current it says nothing."""
    import warnings

    from jaxmbd.hydro import SeaState
    from jaxmbd.hydro.waves import Current

    system, _ = _moored((300.0, 0.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        System(system.model, system.forces, name="still")
    with pytest.warns(UserWarning, match=r"in_current: the current does not act on the quasi-static lines line \(they hang in still water\)"):
        System(system.model, system.forces, waves=SeaState(current=Current(speed=1.0)), name="in_current")
