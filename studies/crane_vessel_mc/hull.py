"""The supply vessel's hull and its Capytaine coefficients (cached NetCDF beside this file).

Cibicik et al. (2019) takes the supply vessel of the MSS toolbox (Lpp 82.5 m, draught
6.0 m, 6,362 t; its quoted breadth 8.0 m cannot float 6,362 t at 6 m draught:
82.5 x 8 x 6 m x 1.025 t/m³ = 4,059 t even as a box).  We do not have the MSS
data, so we compute the coefficients ourselves with Capytaine for a box hull
of the paper's length and draught whose breadth displaces the whole floating
mass (vessel 6,362 t + crane and payload 300.02 t = 6,662 t):

    B = 6,662 t / (1.025 t/m³ x 82.5 m x 6.0 m) = 13.13 m   (block coefficient 1).

Coarse mesh (2 m panels, an internal lid at z = −0.3 m against irregular frequencies), deep
water, 24 frequencies 0.2-2.6 rad/s, headings 0-180 deg every 22.5 deg (the
hull is symmetric about xz; :meth:`HydroData.with_xz_symmetry` gives the
rest).  Rotation centre and centre of mass on the waterline at midship, so the
file's restoring matrix holds buoyancy only (the model applies the weights).

Run ``python studies/crane_vessel_mc/hull.py`` to regenerate (about 2 min); the mean drift coefficients
(``supply_vessel_drift.csv``, Capytaine's far-field formula on the same mesh) with them when they are missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
HYDRO_PATH = HERE / "supply_vessel_hydro.nc"
DRIFT_PATH = HERE / "supply_vessel_drift.csv"

RHO = 1025.0
LENGTH = 82.5
DRAUGHT = 6.0
VESSEL_MASS = 6362.0e3
CRANE_MASSES = np.array([0.01, 140.0, 70.0, 40.0, 30.0, 0.01, 20.0]) * 1e3
BREADTH = round(float((VESSEL_MASS + CRANE_MASSES.sum()) / (RHO * LENGTH * DRAUGHT)), 2)  # 13.13 m
OMEGAS = np.linspace(0.2, 2.6, 24)
HEADINGS = np.deg2rad(np.arange(0.0, 180.1, 22.5))
PANEL = 2.0


def make_hydro(path=HYDRO_PATH):
    """Run (or read from the cache) Capytaine for the box hull; returns HydroData."""
    from jaxmbd.hydro.bem import run_capytaine

    return run_capytaine(hull_body(), omegas=OMEGAS, wave_directions=HEADINGS, rho=RHO, g=9.81, cache=path,
                         name="supply_vessel")


def hull_body():
    """The box hull as a Capytaine FloatingBody: 2 m panels, an internal lid of 1 m panels at
    z = −0.3 m (5 % of the draught).  ``jaxmbd.hydro.bem.box`` puts its lid at −0.01 T, which on this
    hull leaves an irregular-frequency spike (heave damping −1.6e6 N s/m at 1.97 rad/s)."""
    import math

    import capytaine as cpt

    res = tuple(int(math.ceil(s / PANEL)) for s in (LENGTH, BREADTH, DRAUGHT))
    mesh = cpt.mesh_parallelepiped(size=(LENGTH, BREADTH, DRAUGHT), center=(0.0, 0.0, -DRAUGHT / 2), resolution=res,
                                   missing_sides={"top"}, name="supply_vessel_mesh")
    lid = mesh.generate_lid(z=-0.05 * DRAUGHT, faces_max_radius=1.0)
    return cpt.FloatingBody(mesh=mesh, lid_mesh=lid, dofs=cpt.rigid_body_dofs(rotation_center=(0.0, 0.0, 0.0)),
                            center_of_mass=(0.0, 0.0, 0.0), name="supply_vessel")


def make_drift(path=DRIFT_PATH):
    """The hull's mean drift coefficients (Capytaine's far field on the same mesh, the hull on its RAOs with the
    file's inertia: the displaced water's, ballasted level), 0-180° mirrored to the whole circle; written as CSV."""
    from jaxmbd.hydro import capytaine_drift
    from jaxmbd.hydro.drift import mirrored, write_drift_csv

    table = capytaine_drift(hull_body(), omegas=OMEGAS, wave_directions=HEADINGS, rho=RHO, g=9.81, name="supply_vessel")
    return write_drift_csv(mirrored(table), path)


def load_drift():
    """The cached drift coefficients over the whole circle (:func:`make_drift`)."""
    from jaxmbd.hydro import read_drift

    return read_drift(DRIFT_PATH)


def load_hydro():
    """The cached coefficients, headings extended to the full circle."""
    from jaxmbd.hydro.bem import read_capytaine

    return read_capytaine(HYDRO_PATH).with_xz_symmetry()


if __name__ == "__main__":
    import time

    import jaxmbd  # noqa: F401

    t = time.time()
    h = make_hydro()
    if not DRIFT_PATH.exists():
        make_drift()
    print(f"B = {BREADTH} m; {HYDRO_PATH} ({HYDRO_PATH.stat().st_size / 1e3:.0f} kB) in {time.time() - t:.0f} s")
    print("C33, C44, C55:", np.diag(np.asarray(h.hydrostatic_stiffness))[2:5])
    print("V:", np.asarray(h.displaced_volume), "rho V:", RHO * np.asarray(h.displaced_volume))
