"""Multi-segment quasi-static mooring lines (jaxmbd/forces/segmented.py) against MoorPy's lines joined at
free points, the single line it reduces to, gradients, and its file and range checks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.forces.catenary import solve_catenary
from jaxmbd.forces.segmented import SegmentedLine, solve_segmented

moorpy = pytest.importorskip("moorpy")

G, RHO = 9.81, 1025.0
# (name, water depth, fairlead height Z, sections L, EA, w (anchor first), point loads, X range): both with
# every joint clear of the seabed by more than 2 m (MoorPy supports a point within 2 m of the seabed by a
# smooth contact force, which this model leaves out)
LINES = [
    ("chain-wire-chain, a clump and a buoy", 200.0, 150.0, (400.0, 300.0, 50.0), (1.5e9, 6.0e8, 1.5e9), (1500.0, 300.0, 1500.0),
     (3.0e4, -2.0e4), (720.0, 740.0)),
    ("chain-polyester-chain", 200.0, 180.0, (300.0, 500.0, 30.0), (1.2e9, 1.5e8, 1.2e9), (1400.0, 50.0, 1400.0), (0.0, 0.0),
     (795.0, 815.0)),
]


def moorpy_fairlead(depth, X, Z, L, EA, w, P):
    """MoorPy: the sections as lines between free points (mass for a clump, volume for a buoy), solved to
    equilibrium; the fairlead's (H, V)."""
    ms = moorpy.System(depth=depth)
    for k in range(len(L)):
        ms.setLineType(dnommm=100.0, d_vol=0.1, mass=w[k] / G + RHO * np.pi / 4 * 0.01, w=w[k], EA=EA[k], name=f"s{k}")
    ms.addPoint(1, [0.0, 0.0, -depth])
    for j, p in enumerate(P):
        frac = sum(L[: j + 1]) / sum(L)
        m, v = (p / G, 0.0) if p >= 0 else (0.0, -p / (RHO * G))
        ms.addPoint(0, [frac * X, 0.0, -depth + frac * Z], m=m, v=v)
    ms.addPoint(1, [X, 0.0, -depth + Z])
    for k in range(len(L)):
        ms.addLine(L[k], f"s{k}", pointA=k + 1, pointB=k + 2)
    ms.initialize()
    ms.solveEquilibrium(tol=1e-10, maxIter=5000)
    for line in ms.lineList:
        line.staticSolve(tol=1e-12)
    f = ms.pointList[-1].getForces()
    return -f[0], -f[2]


@pytest.mark.parametrize("line", LINES, ids=[line[0] for line in LINES])
def test_fairlead_tensions_against_moorpy(line):
    """20 fairlead positions per line: H and V within 1e-4 of MoorPy's (measured 1e-10 or better), every
    profile converged with its joints above the seabed."""
    _, depth, Z, L, EA, w, P, (x0, x1) = line
    solve = jax.jit(lambda X: solve_segmented(X, jnp.asarray(Z), jnp.asarray(L), jnp.asarray(EA), jnp.asarray(w), jnp.asarray(P)))
    for X in np.linspace(x0, x1, 20):
        H, V, _, ok = solve(jnp.asarray(X))
        Hm, Vm = moorpy_fairlead(depth, X, Z, L, EA, w, P)
        assert bool(ok), X
        assert abs(float(H) / Hm - 1) < 1e-4 and abs(float(V) / Vm - 1) < 1e-4, (X, float(H), Hm, float(V), Vm)


@pytest.mark.slow
def test_one_section_is_the_catenary_line_and_equal_sections_agree():
    """One section solves as the catenary line (1e-12); a suspended line cut in two equal sections too."""
    single = solve_catenary(520.0, 100.0, 600.0, 1.5e9, 1000.0)
    one = solve_segmented(jnp.asarray(520.0), jnp.asarray(100.0), jnp.asarray([600.0]), jnp.asarray([1.5e9]), jnp.asarray([1000.0]),
                          jnp.zeros(0))
    assert abs(float(one[0]) / float(single[0]) - 1) < 1e-12 and abs(float(one[1]) / float(single[1]) - 1) < 1e-12
    taut = solve_catenary(165.0, 100.0, 200.0, 1.0e9, 500.0)
    halves = solve_segmented(jnp.asarray(165.0), jnp.asarray(100.0), jnp.asarray([100.0, 100.0]), jnp.asarray([1.0e9, 1.0e9]),
                             jnp.asarray([500.0, 500.0]), jnp.zeros(1))
    assert bool(halves[3]) and abs(float(halves[0]) / float(taut[0]) - 1) < 1e-10 and abs(float(halves[1]) / float(taut[1]) - 1) < 1e-10


@pytest.mark.slow
def test_gradients_against_central_differences():
    """d(H, V)/d(X, the clump's weight, the wire's EA) by the implicit function theorem against central
    differences (steps 1e-6 of each value): 1e-6."""
    _, _, Z, L, EA, w, P, _ = LINES[0]

    def tensions(a):
        H, V, _, _ = solve_segmented(a[0], jnp.asarray(Z), jnp.asarray(L), jnp.asarray(EA).at[1].set(a[2]), jnp.asarray(w),
                                     jnp.asarray(P).at[0].set(a[1]))
        return jnp.stack([H, V])

    a0 = jnp.asarray([730.0, 3.0e4, 6.0e8])
    J = np.asarray(jax.jit(jax.jacfwd(tensions))(a0))
    f = jax.jit(tensions)
    for k in range(3):
        h = 1e-6 * float(a0[k])
        fd = (np.asarray(f(a0.at[k].add(h))) - np.asarray(f(a0.at[k].add(-h)))) / (2 * h)
        np.testing.assert_allclose(J[:, k], fd, rtol=1e-6)


def test_a_joint_on_the_seabed_is_reported_not_nan():
    """A slack chain-wire line whose clump would rest on the seabed: not converged (a run reports it),
    finite tensions."""
    H, V, _, ok = solve_segmented(jnp.asarray(640.0), jnp.asarray(150.0), jnp.asarray([400.0, 300.0, 50.0]),
                                  jnp.asarray([1.5e9, 6.0e8, 1.5e9]), jnp.asarray([1500.0, 300.0, 1500.0]), jnp.asarray([3.0e4, -2.0e4]))
    assert not bool(ok) and np.isfinite(float(H)) and np.isfinite(float(V))


TEXT = """
name = "moored"
[[bodies]]
name = "buoy"
joint = "free"
mass = 1.0e5
inertia = [1e5, 1e5, 1e5]
[[forces]]
kind = "segmented_line"
body = "buoy"
fairlead = [0, 0, 0]
anchor = [-730, 0, -150]
lengths = [400.0, 300.0, 50.0]
EA = [1.5e9, 6.0e8, 1.5e9]
weights = [1500.0, 300.0, 1500.0]
point_loads = LOADS
[simulation]
duration = 1.0
save_dt = 0.5
"""


def test_a_segmented_line_is_read_from_a_file(tmp_path):
    """Read as declared, its outputs at q0 those of the solve; a point load per joint or an error naming the key."""
    path = tmp_path / "moored.toml"
    path.write_text(TEXT.replace("LOADS", "[3.0e4, -2.0e4]"))
    system = mbd.load_system(path).system
    assert isinstance(system.forces[0], SegmentedLine)
    y = (jnp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), jnp.zeros(6), jnp.zeros(0))
    out = system.outputs(0.0, y)
    H, V, _, _ = solve_segmented(jnp.asarray(730.0), jnp.asarray(150.0), jnp.asarray([400.0, 300.0, 50.0]),
                                 jnp.asarray([1.5e9, 6.0e8, 1.5e9]), jnp.asarray([1500.0, 300.0, 1500.0]), jnp.asarray([3.0e4, -2.0e4]))
    assert abs(float(out["segmented_line/fairlead_tension"]) / float(jnp.hypot(H, V)) - 1) < 1e-12
    assert np.asarray(out["segmented_line/joint_tension"]).shape == (2,) and float(out["segmented_line/converged"]) == 1.0
    path.write_text(TEXT.replace("LOADS", "[3.0e4]"))
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]\.point_loads: expected one value per joint between sections \(2\), got 1"):
        mbd.load_system(path)


def test_the_start_check_judges_the_sections_not_one_equivalent_line(tmp_path):
    """Chain-polyester-chain pulled 7.5 % over its length: the soft polyester takes almost all of it and
    stretches past its 10 % limit, while one equivalent line (the series stiffness) is within it.  The
    check took the equivalent line and let the file start; it now solves the sections and names the one."""
    text = TEXT.replace("anchor = [-730, 0, -150]", "anchor = [-874.6, 0, -180]").replace(
        "lengths = [400.0, 300.0, 50.0]", "lengths = [300.0, 500.0, 30.0]").replace(
        "EA = [1.5e9, 6.0e8, 1.5e9]", "EA = [1.2e9, 1.5e8, 1.2e9]").replace(
        "weights = [1500.0, 300.0, 1500.0]", "weights = [1400.0, 50.0, 1400.0]").replace(
        "point_loads = LOADS", "point_loads = [0.0, 0.0]\nmax_strain = 0.1")
    path = tmp_path / "taut.toml"
    path.write_text(text)
    with pytest.raises(mbd.SystemFileError, match=r"forces\[0\]: its section 1 \(anchor first; EA 1.5e\+08 N\) would stretch by 1[01]"):
        mbd.load_system(path)
    path.write_text(text.replace("max_strain = 0.1", "max_strain = 0.15"))
    mbd.load_system(path)
