"""BEM coefficients of the OSV hull of Hong et al. (2016, Table 5): a box 110 m x 46 m x 7.5 m deep at
3.75 m draught (the paper's hull lines are not given; WADAM in the paper, Capytaine here).

Coarse mesh (about 3 m panels, two panel rows on the sides), 18 frequencies 0.15-2.0 rad/s,
headings 0, 45, 90, 135, 180 deg, deep water, ρ = 1025 kg/m³; rotation centre and centre of
mass on the waterline at midship, so the restoring matrix holds buoyancy only (the model
applies the weights).  Cached in ``osv_hull.nc`` next to this file.

    python studies/osv_lift/hull.py     # regenerate (a few minutes on two cores)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
HULL_NC = HERE / "osv_hull.nc"
LENGTH, BEAM, DEPTH, DRAUGHT = 110.0, 46.0, 7.5, 3.75


def osv_hydro(path=HULL_NC):
    from jaxmbd.hydro.bem import box, run_capytaine

    body = box(LENGTH, BEAM, DRAUGHT, panel_size=3.0, name="osv")
    return run_capytaine(body, omegas=np.linspace(0.15, 2.0, 18), wave_directions=np.deg2rad(np.arange(0, 181, 45)),
                         rho=1025.0, g=9.81, cache=path, name="osv")


def hull_over_the_circle(path=HULL_NC):
    """The hull's coefficients with the heading table mirrored to the whole circle: the box is symmetric about
    its xz plane, so the excitation at −β is that at β with sway, roll and yaw negated
    (:meth:`jaxmbd.hydro.HydroData.with_xz_symmetry`).  The cached table has headings 0-180 deg only, which a
    run at 225 deg and beyond (an operability table over the circle) refuses."""
    from jaxmbd.hydro.bem import read_capytaine

    return read_capytaine(path).with_xz_symmetry()


if __name__ == "__main__":
    import time

    t0 = time.perf_counter()
    h = osv_hydro()
    print(f"{HULL_NC}: {HULL_NC.stat().st_size / 1e6:.2f} MB, {time.perf_counter() - t0:.0f} s; "
          f"displaced volume {float(np.ravel(h.displaced_volume)[0]):.0f} m3")
