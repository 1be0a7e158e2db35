"""A floating body floats where its hydrostatics put it, whatever its start: a start away from rest is a
displacement that the run carries.  Decay tests written as system files give the natural periods of the
hydrostatics and the added mass (closed form for the packaged box barge)."""

from pathlib import Path

import numpy as np
import pytest

import jaxmbd
from jaxmbd.hydro import read_capytaine, test_barge_path

BARGE = Path(test_barge_path()).as_posix()

# The packaged 20 x 10 x 2 m box barge (Capytaine), its 410 t on the waterline (what it displaces),
# started 0.2 m high and heeled 3 deg: heave and roll, which the box's symmetry keeps apart.
DECAY = """
name = "decay"

[[bodies]]
name = "barge"
joint = "free"
mass = 410.0e3
com = [0.0, 0.0, 0.0]
radii_of_gyration = [3.5, 5.8, 5.8]
q0_xyz = [0.0, 0.0, 0.2]
q0_rpy_deg = [{roll}, 0.0, 0.0]

[[hydro]]
file = "{barge}"
bodies = ["barge"]
hydrostatics = "{mode}"
{hull}

[simulation]
duration = 24.0
dt = 0.05
save_dt = 0.05
method = "rk4"
static_equilibrium = false
"""


def _free_decay(hydro, dof, inertia, stiffness, x0, t):
    """Linear seakeeping's free decay of one degree of freedom released at rest from ``x0``, from the data's
    A(ω) and B(ω) (not a fit): x(t) = x0 (1 − C s(t)), s the step response of H(ω) = 1 / (C − ω² (I + A(ω))
    − iω B(ω)), s(t) = (2/π) ∫ Re H(ω) sin(ωt) / ω dω.  Beyond the data A tends to A(∞) as ω⁻² and B falls
    as ω⁻⁴; below it B falls linearly to zero.  A damped-oscillator formula with A and B at one frequency is
    3 % off in heave, whose damping (ζ about 0.17) spreads the decay over frequencies where A(ω) changes."""
    w_tab = np.asarray(hydro.omega, float)
    finite = np.isfinite(w_tab)
    A, B = (np.asarray(x, float)[:, dof, dof] for x in (hydro.added_mass, hydro.radiation_damping))
    wt, At, Bt = w_tab[finite], A[finite], B[finite]
    a_inf = A[~finite][0] if (~finite).any() else At[-1]
    w = np.linspace(1e-4, 40.0, 200001)
    Aw = np.where(w > wt[-1], a_inf + (At[-1] - a_inf) * (wt[-1] / w) ** 2, np.interp(w, wt, At))
    Bw = np.where(w > wt[-1], Bt[-1] * (wt[-1] / w) ** 4, np.interp(w, np.r_[0.0, wt], np.r_[0.0, Bt]))
    H = 1.0 / (stiffness - w**2 * (inertia + Aw) - 1j * w * Bw)
    step = (2.0 / np.pi) * (w[1] - w[0]) * np.sin(np.outer(t, w)) @ (H.real / w)
    return x0 * (1.0 - stiffness * step)


def _period(t, x):
    """Mean period between successive upward crossings of the signal's late mean."""
    x = x - np.mean(x[len(x) // 2 :])
    up = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    tc = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    assert len(tc) >= 3, "fewer than three oscillations"
    return float(np.mean(np.diff(tc)))


@pytest.mark.parametrize("mode", ["linear", pytest.param("nonlinear", marks=pytest.mark.slow)])  # non-linear: 24 s
def test_a_raised_and_heeled_barge_falls_and_rolls_at_its_natural_periods(tmp_path, mode):
    """Before, the start was taken as the body's rest: the barge raised 0.2 m stayed there for the whole
    run (0.40 MN of weight unbalanced) and a heel was refused.  Now it falls and oscillates about its
    waterline, heave and roll against linear theory's free decay from the data's A(ω) and B(ω): periods
    within 2 %, the heave within 2 % of the start's displacement (the run's radiation memory is a fit of
    the data to 2 %, the tolerance `radiation_tol`; measured 0.4 % and 0.6 % in heave)."""
    # a box's hull is exact at any panel size in still water
    hull = 'hull = { length = 20.0, beam = 10.0, depth = 3.0, draught = 2.0, panel_size = 2.5 }' if mode == "nonlinear" else ""
    path = tmp_path / "decay.toml"
    path.write_text(DECAY.format(barge=BARGE, mode=mode, hull=hull, roll=3.0))
    res = jaxmbd.simulate(jaxmbd.load_system(path))
    t = np.asarray(res.time)
    eta = np.asarray(res.outputs["hydro/eta"]).reshape(len(t), 6)
    assert eta[0, 2] == pytest.approx(0.2, abs=1e-9) and np.degrees(eta[0, 3]) == pytest.approx(3.0, abs=1e-9)
    assert eta[:, 2].min() < -0.1  # it falls through its waterline

    hydro = read_capytaine(BARGE)
    m = 410.0e3
    C = np.asarray(hydro.hydrostatic_stiffness, float)
    if mode == "nonlinear":  # the box's exact waterplane: ρ g L B, and ρ g (I_wp + V z_B) for roll (G on the waterline)
        rho_g = float(hydro.rho) * float(hydro.g)
        c33, c44 = rho_g * 20.0 * 10.0, rho_g * (20.0 * 10.0**3 / 12.0 - 400.0 * 1.0)
    else:
        c33, c44 = C[2, 2], C[3, 3]
    for dof, x0, inertia, c in ((2, 0.2, m, c33), (3, np.radians(3.0), m * 3.5**2, c44)):
        ref = _free_decay(hydro, dof, inertia, c, x0, t)
        assert _period(t, eta[:, dof]) == pytest.approx(_period(t, ref), rel=0.02)
        if dof == 2:  # roll's radiation damping is small, and its fit's relative error larger (its decay differs by
            # up to 11 % of the start over 24 s); the period is the hydrostatics' and the added mass's
            assert np.max(np.abs(eta[:, dof] - ref)) < 0.02 * x0
