"""Non-linear hydrostatics: pressure integration over the instantaneous wetted hull.

References: closed forms of a box (draught m / ρLB, KB = T/2, BM = B²/12T), the wall-sided GZ
formula, an independent computation of a heeled rectangle's underwater centroid (2-D polygon
clipping written here, not the library's code), finite differences for gradients.
"""

import math
import struct

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmbd import Body, Free, ModelBuilder, System
from jaxmbd.hydro import HydroBody, read_capytaine, test_barge_path
from jaxmbd.hydro.hull import HullMeshError, box_hull, checked, cylinder_hull, load_hull
from jaxmbd.hydro.pressure import pressure_loads
from jaxmbd.hydro.stability import displaced_volume, float_hull, hydrostatics, righting_arm, still_water_loads, wall_sided_gz

RHO, G = 1025.0, 9.81


def test_box_draught_buoyancy_centre_and_metacentric_heights_match_closed_forms():
    # the pressure integration is exact for a polyhedron (linear pressure on flat panels), so the
    # only errors are rounding and the step² of the central differences: 1e-6 leaves room for both
    L, B, D, T = 60.0, 18.0, 6.0, 2.5
    hull = box_hull(L, B, D, T, panel_size=3.0)
    m = RHO * L * B * 3.1  # floats at 3.1 m
    heave, trim = float_hull(hull, m, [0.0, 0.0, 1.0], 0.0, rho=RHO, g=G)
    assert -heave == pytest.approx(3.1 - T, rel=1e-6)  # the draught m / (ρ L B)
    assert abs(trim) < 1e-10
    h = hydrostatics(hull, cog_z=1.0, rho=RHO, g=G)
    assert h.volume == pytest.approx(L * B * T, rel=1e-12)
    np.testing.assert_allclose(h.centre_of_buoyancy, [0.0, 0.0, -T / 2], atol=1e-9)  # KB = T/2 above the keel at −T
    assert h.waterplane_area == pytest.approx(L * B, rel=1e-6)
    assert h.bm_t == pytest.approx(B**2 / (12 * T), rel=1e-6)
    assert h.bm_l == pytest.approx(L**2 / (12 * T), rel=1e-6)
    assert h.gm_t == pytest.approx(-T / 2 + B**2 / (12 * T) - 1.0, rel=1e-6)


def _heeled_rectangle_gz(B, D, T, KG, phi):
    """GZ of a box section of beam B and depth D floating at draught T upright, heeled by φ: the
    section is clipped by a horizontal waterline (Sutherland-Hodgman on 4 corners) found by
    bisection to keep the area B T; GZ is the horizontal distance from G to the centroid."""
    c, s = math.cos(phi), math.sin(phi)
    corners = [(-B / 2, 0.0), (B / 2, 0.0), (B / 2, D), (-B / 2, D)]  # (y, z) from the keel centre
    G = (0.0, KG)

    def rot(p):  # roll by φ lowers +y... as the library: rotation about +x takes y towards z
        return (c * p[0] - s * p[1], s * p[0] + c * p[1])

    P = [rot(p) for p in corners]
    Gw = rot(G)

    def under(level):
        out = []
        for i in range(4):
            a, b = P[i], P[(i + 1) % 4]
            ina, inb = a[1] <= level, b[1] <= level
            if ina:
                out.append(a)
            if ina != inb:
                t = (level - a[1]) / (b[1] - a[1])
                out.append((a[0] + t * (b[0] - a[0]), level))
        area = cy = cz = 0.0
        for i in range(len(out)):
            (y0, z0), (y1, z1) = out[i], out[(i + 1) % len(out)]
            cr = y0 * z1 - y1 * z0
            area += cr / 2
            cy += (y0 + y1) * cr / 6
            cz += (z0 + z1) * cr / 6
        return area, cy / area if area else 0.0

    lo, hi = min(p[1] for p in P), max(p[1] for p in P)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if under(mid)[0] < B * T:
            lo = mid
        else:
            hi = mid
    yb = under(0.5 * (lo + hi))[1]
    # the buoyancy pushes up at yb, the weight down at G: righting when the centroid lies on the side
    # the heel lowers (−y for φ > 0)
    return Gw[0] - yb


@pytest.mark.parametrize("T,KG", [(5.0, 6.0), (5.0, 7.5), (6.0, 6.0), (6.0, 7.5)])
def test_box_gz_curve_against_wall_sided_formula_and_an_independent_section_computation(T, KG):
    # wall-sided formula: exact for a box until the deck edge immerses (draughts over half the depth,
    # so the bilge stays wet longer); beyond, the section computation above (2-D, exact for a prismatic
    # box at free trim, to the bisection's 1e-12) is the reference; 0.2 % is the bound, the
    # pressure integration is exact to rounding for a polyhedron, so the agreement is far closer
    L, B, D = 80.0, 30.0, 10.0
    hull = box_hull(L, B, D, T, panel_size=5.0)
    m = RHO * L * B * T
    cog = [0.0, 0.0, KG - T]
    heels = np.arange(0.0, 61.0, 3.0)
    curve = righting_arm(hull, m, cog, heels, rho=RHO, g=G)
    assert np.max(curve.residual) < 1e-9
    gm, bm = T / 2 + B**2 / (12 * T) - KG, B**2 / (12 * T)
    deck = math.degrees(math.atan(2 * (D - T) / B))
    assert curve.deck_edge_immersion_deg == pytest.approx(deck, abs=0.05)  # linear interpolation between 3° samples
    assert curve.gm == pytest.approx(gm, rel=1e-6)
    phi = np.radians(curve.heel_deg)
    before = (curve.heel_deg > 0) & (curve.heel_deg < deck)
    np.testing.assert_allclose(curve.gz[before], wall_sided_gz(phi[before], gm, bm), rtol=1e-6)
    exact = np.array([_heeled_rectangle_gz(B, D, T, KG, p) for p in phi])
    np.testing.assert_allclose(curve.gz, exact, atol=1e-9 * B)
    if curve.vanishing_stability_deg is not None:
        assert curve.vanishing_stability_deg > curve.angle_of_max_gz_deg


def _barge_model(m, D):
    b = ModelBuilder()
    L, B = 20.0, 10.0
    b.add_body("barge", joint=Free(), body=Body(mass=m, com=(0.0, 0.0, 0.0),
                                                 inertia=(m * (B**2 + D**2) / 12, m * (L**2 + D**2) / 12, m * (L**2 + B**2) / 12)))
    return b.build()


def test_small_motions_nonlinear_restoring_equals_the_linear_stiffness():
    # the test barge (20 x 10 x 2 m): heave by 1 % of the draught and heel by 0.5°; the linear model
    # with the box's exact restoring matrix agrees with the pressure integration to second order in
    # the motion, ~1e-4 here (the bound 1e-3)
    hd = read_capytaine(test_barge_path())
    L, B, T = 20.0, 10.0, 2.0
    m = RHO * L * B * T
    V = L * B * T
    C = np.zeros((6, 6))
    C[2, 2] = RHO * G * L * B
    C[3, 3] = RHO * G * (L * B**3 / 12 - V * T / 2)
    C[4, 4] = RHO * G * (B * L**3 / 12 - V * T / 2)
    exact = eqx.tree_at(lambda h: h.hydrostatic_stiffness, hd, jnp.asarray(C))
    model = _barge_model(m, 4.0)
    linear = HydroBody.create(model, exact, bodies=("barge",), mass=m, com=(0.0, 0.0, 0.0), radiation=False)
    nonlinear = HydroBody.create(model, hd, bodies=("barge",), hulls=(box_hull(L, B, 4.0, T, panel_size=1.0),),
                                 hydrostatics="nonlinear", radiation=False)
    half = math.radians(0.25)

    def hydrostatic(el, q):
        ctx = System(model, (el,)).context(0.0, jnp.asarray(q, float), jnp.zeros(6))
        return np.asarray(el.outputs(ctx, jnp.zeros(0))["hydrostatic"])

    rest = [0, 0, 0, 1, 0, 0, 0]
    for q, moving in (([0, 0, -0.02, 1, 0, 0, 0], 2), ([0, 0, 0, math.cos(half), math.sin(half), 0, 0], 3)):
        lin, nl = (hydrostatic(el, q) - hydrostatic(el, rest) for el in (linear, nonlinear))
        assert nl[moving] == pytest.approx(lin[moving], rel=1e-3)
        np.testing.assert_allclose(nl, lin, atol=1e-3 * abs(lin[moving]))


def test_pressure_loads_are_continuous_and_their_gradient_matches_finite_differences():
    # a tilted box crossing the waterline: d(F, M)/d(heave, roll) by forward mode against central
    # differences of step 1e-6 (error ~1e-10 relative away from a corner crossing the surface)
    hull = box_hull(20.0, 10.0, 4.0, 2.0, panel_size=2.5)

    def loads(x):
        heave, roll = x
        c, s = jnp.cos(roll), jnp.sin(roll)
        R = jnp.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        F, M = still_water_loads(hull, R, jnp.array([0.0, 0.0, heave]), jnp.zeros(3), RHO, G)
        return jnp.concatenate([F, M])

    x0 = jnp.array([0.123, 0.211])
    J = jax.jacfwd(loads)(x0)
    Jr = jax.jacrev(loads)(x0)
    h = 1e-6
    fd = np.stack([(loads(x0 + h * e) - loads(x0 - h * e)) / (2 * h) for e in jnp.eye(2)], 1)
    J, Jr = np.asarray(J), np.asarray(Jr)
    for rows in (slice(0, 3), slice(3, 6)):  # forces and moments, each to its own scale
        scale = np.abs(J[rows]).max()
        np.testing.assert_allclose(J[rows], fd[rows], atol=1e-6 * scale)
        np.testing.assert_allclose(Jr[rows], J[rows], atol=1e-12 * scale)


def test_clipped_area_matches_the_wetted_part_of_a_tilted_panel():
    # one triangle crossing z = 0 at an angle: its wetted area by the clipping against the exact
    # polygon area; and float32 gives the float64 value to single precision
    tri = jnp.array([[[0.0, 0.0, -1.0], [2.0, 0.0, 1.0], [0.0, 2.0, 0.5]]])
    p = jnp.zeros((1, 3, 1))
    _, _, area = pressure_loads(tri, tri[..., 2], p, jnp.zeros(3))
    a, b, c = (np.asarray(v) for v in tri[0])
    pab, pac = a + (b - a) * 0.5, a + (c - a) * (1 / 1.5)
    exact = 0.5 * np.linalg.norm(np.cross(pab - a, pac - a))
    assert float(area) == pytest.approx(exact, rel=1e-14)
    _, _, area32 = pressure_loads(tri.astype(jnp.float32), tri[..., 2].astype(jnp.float32), p.astype(jnp.float32), jnp.zeros(3, jnp.float32))
    assert area32.dtype == jnp.float32 and float(area32) == pytest.approx(exact, rel=1e-6)


def test_cylinder_hull_volume_and_waterplane():
    # a 64-sided prism: volume and waterplane area are the polygon's, (n/2π) sin(2π/n) of the circle's
    hull = cylinder_hull(2.0, 8.0, 4.0)
    poly = 64 / (2 * math.pi) * math.sin(2 * math.pi / 64)
    V, B = displaced_volume(hull)
    assert V == pytest.approx(math.pi * 4.0 * 4.0 * poly, rel=1e-12)
    assert B[2] == pytest.approx(-2.0, rel=1e-12)
    assert hull.volume() == pytest.approx(math.pi * 4.0 * 8.0 * poly, rel=1e-12)


# ---------------------------------------------------------------- bad meshes


def _write_stl(path, tris):
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<3f", 0, 0, 0))
            for v in t:
                f.write(struct.pack("<3f", *v))
            f.write(b"\0\0")


def _box_triangles(scale=1.0):
    h = box_hull(4.0, 2.0, 2.0, 1.0, panel_size=2.0)
    return np.asarray(h.vertices)[h.triangles.indices] * scale


def test_stl_hull_reads_and_matches_the_generated_box(tmp_path):
    # binary STL stores float32: the volume to single precision
    path = tmp_path / "box.stl"
    _write_stl(path, _box_triangles())
    assert load_hull(path).volume() == pytest.approx(16.0, rel=1e-6)
    ascii_path = tmp_path / "box_ascii.stl"
    lines = ["solid box"]
    for t in _box_triangles():
        lines += ["facet normal 0 0 0", "outer loop"] + [f"vertex {float(x)!r} {float(y)!r} {float(z)!r}" for x, y, z in t] + ["endloop", "endfacet"]
    ascii_path.write_text("\n".join(lines + ["endsolid box"]))
    assert load_hull(ascii_path).volume() == pytest.approx(16.0, rel=1e-12)


def test_gdf_hull_reads_through_capytaine(tmp_path):
    # WAMIT's .gdf (quadrilaterals) of the same box through Capytaine's reader
    pytest.importorskip("capytaine")
    quads = []
    h = box_hull(4.0, 2.0, 2.0, 1.0, panel_size=2.0)
    V, T = np.asarray(h.vertices), h.triangles.indices
    for a, b, c in T:  # a degenerate quadrilateral per triangle, as GDF allows
        quads.append([V[a], V[b], V[c], V[c]])
    body = ["gdf of a box", "1.0 9.81", "0 0", str(len(quads))]
    body += [" ".join(repr(float(x)) for x in p) for q in quads for p in q]
    path = tmp_path / "box.gdf"
    path.write_text("\n".join(body) + "\n")
    assert load_hull(path).volume() == pytest.approx(16.0, rel=1e-12)


@pytest.mark.parametrize("defect,expected", [
    ("open", "open: "),
    ("inverted", "normals point into the hull"),
    ("flipped", "inconsistent normals"),
    ("nonmanifold", "non-manifold"),
    ("mm", "expected metres"),
])
def test_bad_meshes_give_one_line_errors_naming_the_file_and_the_defect(tmp_path, defect, expected):
    tris = _box_triangles(1000.0 if defect == "mm" else 1.0)
    if defect == "open":
        tris = tris[1:]
    elif defect == "inverted":
        tris = tris[:, ::-1]
    elif defect == "flipped":
        tris = np.concatenate([tris[:1, ::-1], tris[1:]])
    elif defect == "nonmanifold":
        extra = tris[0].copy()
        extra[2] = extra[2] + np.array([0.0, 0.0, 5.0])
        tris = np.concatenate([tris, extra[None], np.stack([extra[1], extra[0], extra[2]])[None]])
    path = tmp_path / f"{defect}.stl"
    _write_stl(path, tris)
    with pytest.raises(HullMeshError) as err:
        load_hull(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message and expected in message


def test_degenerate_panel_is_refused():
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0, 0]], float)  # 4 on the edge 0-1
    T = np.array([[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3], [0, 1, 4]])
    with pytest.raises(HullMeshError, match="degenerate panel"):
        checked(V, T, "tetra")


# ---------------------------------------------------------------- dynamics


@pytest.mark.slow
def test_small_regular_waves_give_the_linear_rao_with_nonlinear_hydrostatics_and_froude_krylov():
    # the test barge, softly moored in surge, sway and yaw (an unmoored one drifts under the mean
    # second-order force the non-linear Froude-Krylov pressure carries, which shifts the encounter
    # frequency), in 5 cm waves at ω = 1.23 rad/s (near the heave and roll resonances), head and beam
    # seas, 120 s (the last 30 s fitted), panels of 2.5 m (16 to the 41 m wavelength); the linear model has the box's exact restoring matrix (Capytaine's C44 is 1.3 % low,
    # enough to move the roll resonance).  The bound is 2 %; measured: 0.1 % (heave), 0.5 % (roll)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_hydro_body import INERTIA, MASS, regular, steady_amplitude

    from jaxmbd.forces import LinearMooring
    from jaxmbd.simulation import Integrator, initial_state, solve

    hd = read_capytaine(test_barge_path())
    L, B, T = 20.0, 10.0, 2.0
    V = L * B * T
    C = np.zeros((6, 6))
    C[2, 2] = RHO * G * L * B
    C[3, 3] = RHO * G * (L * B**3 / 12 - V * T / 2)
    C[4, 4] = RHO * G * (B * L**3 / 12 - V * T / 2)
    exact = eqx.tree_at(lambda h: h.hydrostatic_stiffness, hd, jnp.asarray(C))
    b = ModelBuilder(source="barge")
    b.add_body("barge", body=Body(MASS, (0, 0, 0), INERTIA), joint=Free())
    model = b.build()
    soft = jnp.diag(jnp.array([2e4, 2e4, 0.0, 0.0, 0.0, 2e6]))
    moor = LinearMooring(name="moor", body="barge", point=jnp.zeros(3), reference=jnp.zeros(3), stiffness=soft, damping=soft)
    hull = box_hull(L, B, 4.0, T, panel_size=2.5)
    linear = HydroBody.create(model, exact, bodies=("barge",), ramp_time=30.0, mass=MASS, com=(0, 0, 0))
    nonlinear = HydroBody.create(model, hd, bodies=("barge",), ramp_time=30.0, hulls=(hull,), hydrostatics="nonlinear",
                                 froude_krylov="nonlinear")
    ts = np.arange(0.0, 120.0 + 1e-9, 0.05)
    omega, amp = 1.23, 0.05
    out = []
    for el in (linear, nonlinear):
        system = System(model, (el, moor), name="barge")
        y0 = initial_state(system)

        def run(beta, system=system, y0=y0):
            ys = solve(system, y0, ts, integrator=Integrator("rk4", dt=0.05), waves=regular(omega, beta, amp)).ys
            eta = jax.vmap(lambda t, q, v, z: system.outputs(t, (q, v, z), only=("hydro",))["hydro/eta"])(ts, *ys)
            return jax.vmap(lambda x: steady_amplitude(ts, x, omega), in_axes=1)(eta) / amp

        out.append(np.abs(np.asarray(jax.jit(jax.vmap(run))(jnp.array([0.0, np.pi / 2])))))
    lin, nl = out
    for case, dof in ((0, 2), (0, 4), (1, 2), (1, 3)):
        assert nl[case, dof] == pytest.approx(lin[case, dof], rel=0.02), (case, dof)


def test_cylinder_heave_free_decay_period():
    # a vertical cylinder (r 2 m, draught 4 m) dropped 5 cm (1.25 % of the draught): the period of the
    # decay with non-linear hydrostatics against 2π sqrt((m + A33(ω)) / (ρ g A_wp)), A33 at the decay's
    # frequency from a Capytaine run of the same cylinder, A_wp the 26-gon's; the damped period is
    # longer by 1/sqrt(1 − ζ²) (ζ ≈ 0.07 here: 0.25 %), inside the 1 %
    pytest.importorskip("capytaine")
    from jaxmbd.hydro import bem
    from jaxmbd.simulation import Integrator, simulate

    r, T, H = 2.0, 4.0, 8.0
    hd = bem.run_capytaine(bem.cylinder(r, T, panel_size=1.0, lid=False, name="cyl"), omegas=np.linspace(0.8, 2.0, 7),
                           wave_directions=[0.0], rho=RHO, name="cyl")
    hull = cylinder_hull(r, H, T, panel_size=0.5)  # 26 sides
    V, _ = displaced_volume(hull)
    m = RHO * V
    b = ModelBuilder(source="cylinder")
    b.add_body("cyl", body=Body(m, (0, 0, -1.0), np.diag([m * 4.0, m * 4.0, m * 2.0])), joint=Free())
    model = b.build()
    el = HydroBody.create(model, hd, bodies=("cyl",), hulls=(hull,), hydrostatics="nonlinear")
    q0 = model.neutral().at[2].set(0.05)
    res = simulate(System(model, (el,)), 20.0, save_dt=0.02, q0=q0, integrator=Integrator("rk4", dt=0.02))
    z = np.asarray(res.q[0] if res.q.ndim == 3 else res.q)[:, 2]
    t = np.asarray(res.time)
    k = np.where((z[:-1] > 0) & (z[1:] <= 0))[0]
    tc = t[k] - z[k] * (t[k + 1] - t[k]) / (z[k + 1] - z[k])
    period = float(np.mean(np.diff(tc[:4])))
    n = 26
    awp = n / 2 * r**2 * math.sin(2 * math.pi / n)
    w = 2 * math.pi / period
    A33 = float(np.interp(w, np.asarray(hd.omega), np.asarray(hd.added_mass[:, 2, 2])))
    expected = 2 * math.pi * math.sqrt((m + A33) / (RHO * G * awp))
    assert period == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("roll, pitch, yaw", [(10.0, 8.0, 0.0), (25.0, -12.0, 40.0), (60.0, 20.0, -75.0)])
def test_buoyancy_of_a_heeled_trimmed_and_yawed_box_against_column_integration(roll, pitch, yaw):
    """Heel, trim and yaw together, past deck-edge immersion at both ends: force and moment of the
    still water against an independent integration (columns of the box in its own axes, each wetted
    up to the plane z_world = 0 exactly, summed by the midpoint rule over a 1,000 x 500 grid of the
    deck: the kinks where a column's wetted height is clipped keep the error near 1e-5), to 1e-4
    relative of ρ g V and of ρ g V B."""
    L, B, D, T = 20.0, 10.0, 3.0, 2.0
    hull = box_hull(L, B, D, T, panel_size=2.5)
    c = [math.cos(math.radians(a)) for a in (roll, pitch, yaw)]
    s = [math.sin(math.radians(a)) for a in (roll, pitch, yaw)]
    Rx = np.array([[1, 0, 0], [0, c[0], -s[0]], [0, s[0], c[0]]])
    Ry = np.array([[c[1], 0, s[1]], [0, 1, 0], [-s[1], 0, c[1]]])
    Rz = np.array([[c[2], -s[2], 0], [s[2], c[2], 0], [0, 0, 1]])
    R = Rz @ Ry @ Rx
    p = np.array([3.0, -2.0, 0.4])
    about = np.array([1.0, 0.5, -0.3])
    F, M = (np.asarray(x) for x in still_water_loads(hull, jnp.asarray(R), jnp.asarray(p), jnp.asarray(about)))
    # columns: a body point (x, y, z) is wet where p_z + R[2] . (x, y, z) < 0, i.e. below z = h(x, y)
    nx, ny = 1000, 500
    x = (np.arange(nx) + 0.5) / nx * L - L / 2
    y = (np.arange(ny) + 0.5) / ny * B - B / 2
    X, Y = np.meshgrid(x, y, indexing="ij")
    a = R[2]
    z_keel, z_deck = -T, D - T
    if abs(a[2]) < 1e-9:
        pytest.skip("the box lies on its side: the columns are horizontal")
    h = -(p[2] + a[0] * X + a[1] * Y) / a[2]
    lo, hi = (np.full_like(h, z_keel), np.clip(h, z_keel, z_deck)) if a[2] > 0 else (np.clip(h, z_keel, z_deck), np.full_like(h, z_deck))
    dA = (L / nx) * (B / ny)
    wet = np.maximum(hi - lo, 0.0)
    V = np.sum(wet) * dA
    first = np.stack([np.sum(X * wet), np.sum(Y * wet), np.sum(0.5 * (hi**2 - lo**2) * (hi > lo))]) * dA
    centroid = p + R @ (first / V)
    F_ref = np.array([0.0, 0.0, RHO * G * V])
    M_ref = np.cross(centroid - about, F_ref)
    scale = RHO * G * V
    assert np.max(np.abs(F - F_ref)) <= 1e-4 * scale, (F, F_ref)
    assert np.max(np.abs(M - M_ref)) <= 1e-4 * scale * B, (M, M_ref)


@pytest.mark.slow  # 14 s; the non-linear restoring against the linear stiffness stays in the default suite
def test_linear_froude_krylov_beside_nonlinear_hydrostatics_holds_while_the_wave_stays_below_the_deck():
    """The mixed model states its range: the incident wave's elevation within the hull's lowest
    freeboard (depth − draught of a box, exactly); a run whose wave rises over it is reported, and
    the fully non-linear model (the wave's pressure on the hull too) has no such range."""
    from jaxmbd import validity

    hd = read_capytaine(test_barge_path())
    L, B, D, T = 20.0, 10.0, 3.0, 2.0
    model = _barge_model(RHO * L * B * T, D)
    hull = box_hull(L, B, D, T, panel_size=2.5)
    mixed = HydroBody.create(model, hd, bodies=("barge",), hulls=(hull,), hydrostatics="nonlinear")
    full = HydroBody.create(model, hd, bodies=("barge",), hulls=(hull,), hydrostatics="nonlinear", froude_krylov="nonlinear")
    assert mixed.freeboards() == [pytest.approx(D - T, abs=1e-9)]
    ranges = [r for r in mixed.valid_ranges(model) if r.output == "wave_elevation"]
    assert len(ranges) == 1 and ranges[0].upper == pytest.approx(1.0)
    assert not [r for r in full.valid_ranges(model) if r.output == "wave_elevation"]
    t = np.linspace(0.0, 10.0, 101)
    zeta = 1.2 * np.sin(2 * np.pi * t / 8.0)  # a 1.2 m crest over a 1 m freeboard
    found = validity.check(System(model, (mixed,)), t, {"hydro/wave_elevation": zeta, "hydro/eta": np.zeros((101, 6))}, False)
    assert [e.quantity for e in found] == ["incident wave elevation"]
    assert validity.check(System(model, (mixed,)), t, {"hydro/wave_elevation": 0.8 * zeta, "hydro/eta": np.zeros((101, 6))}, False) == []
