"""Boundary-element (potential-flow) hydrodynamic coefficients, one module a job:

* :mod:`jaxmbd.hydro.coefficients`: :class:`HydroData`, the container in its one fixed layout (DOF order,
  matrix indices, excitation convention), and its validation;
* :mod:`jaxmbd.hydro.capytaine_file`: :func:`read_capytaine` (Capytaine NetCDF);
* :mod:`jaxmbd.hydro.wamit`: :func:`read_wamit` (WAMIT ``.out`` or the numeric ``.1`` / ``.3`` / ``.hst``);
* :mod:`jaxmbd.hydro.capytaine_run`: a new hull, :func:`run_capytaine` with :func:`box` / :func:`cylinder`
  or any Capytaine mesh or body, and the packaged test barge.

This module gathers their public names.
"""

from .capytaine_file import read_capytaine
from .capytaine_run import box, cylinder, make_test_barge, run_capytaine, test_barge_path
from .coefficients import RIGID_DOFS, HydroData, HydroDataError
from .wamit import read_wamit

__all__ = [
    "HydroData",
    "HydroDataError",
    "RIGID_DOFS",
    "read_capytaine",
    "read_wamit",
    "run_capytaine",
    "box",
    "cylinder",
    "make_test_barge",
    "test_barge_path",
]
