"""jaxmbd: differentiable multibody dynamics in JAX for marine operations.

``import jaxmbd`` switches JAX to float64 and adds two XLA CPU options to ``XLA_FLAGS``
(:mod:`jaxmbd.config`; docs/sharp_bits.md says what changes and how to opt out).  Everything else
process-wide is explicit: :func:`configure`.
"""

from .config import on_import as _on_import

_on_import()  # before JAX starts its CPU backend

__version__ = "0.1.0"

from . import flex, hydro, joints, spatial  # noqa: E402  (flex registers the flexible beam)
from ._xla import FORWARD_JIT_OPTIONS  # noqa: E402
from .config import configure  # noqa: E402
from .dynamics import (  # noqa: E402
    forward_dynamics,
    gravity_wrenches,
    inverse_dynamics,
    joint_wrenches,
    kinetic_energy,
    mass_matrix,
    mass_matrix_velocity_transformation,
    nonlinear_effects,
    potential_energy,
    total_energy,
)
from .errors import JaxmbdError  # noqa: E402
from .io.system_file import LoadedSystem, SystemFileError, load_system  # noqa: E402
from .joints import Cylindrical, Fixed, Free, ModelError, Planar, Prismatic, Revolute, Spherical, Universal  # noqa: E402
from .kinematics import body_jacobian, body_twists, forward_kinematics, point_position, point_velocity  # noqa: E402
from .loops import Loop, load_urdf_with_loops  # noqa: E402
from .model import Body, Model, ModelBuilder, Placement, load_urdf  # noqa: E402
from .netcdf import open_result  # noqa: E402
from .simulation import Integrator, Result, SimulationError, Solution, solve, static_equilibrium  # noqa: E402
from .simulation import simulate as _simulate  # noqa: E402
from .system import Context, Contribution, ForceElement, Inputs, System  # noqa: E402

__all__ = [
    "__version__", "configure", "FORWARD_JIT_OPTIONS",
    # errors
    "JaxmbdError", "ModelError", "SimulationError", "SystemFileError",
    # models
    "Body", "Placement", "Model", "ModelBuilder", "load_urdf", "load_urdf_with_loops",
    "Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Free", "Planar",
    # kinematics and dynamics
    "forward_kinematics", "body_twists", "body_jacobian", "point_position", "point_velocity",
    "forward_dynamics", "inverse_dynamics", "mass_matrix", "joint_wrenches", "nonlinear_effects",
    "mass_matrix_velocity_transformation", "kinetic_energy", "potential_energy", "total_energy", "gravity_wrenches",
    # systems and runs
    "System", "Inputs", "ForceElement", "Context", "Contribution", "Loop",
    "Integrator", "Result", "Solution", "simulate", "solve", "static_equilibrium", "LoadedSystem", "load_system",
    "open_result",
    # subpackages
    "spatial", "joints", "hydro", "flex",
]


def simulate(system, duration=None, **kwargs):
    """Simulate a :class:`System` or a loaded system file (:func:`load_system`).

    For a loaded file, its settings (duration, integrator, realisations, static
    equilibrium start, seed) are the defaults and keyword arguments override them
    (:func:`jaxmbd.run.run`: ``hs``, ``tp``, ``heading``, ``seed``, ``key``, ``duration``,
    ``n_realisations``, ``save_dt``, ``integrator``); ``q0``, ``v0``, ``z0`` start it there instead of
    at the file's start.  For a System see :func:`jaxmbd.simulation.simulate` for the arguments.
    """
    if isinstance(system, LoadedSystem):
        from .run import Start

        if duration is not None:
            kwargs["duration"] = duration
        given = {k: kwargs.pop(k) for k in ("q0", "v0", "z0") if k in kwargs}
        start = None
        if given:
            start = Start(given.get("q0", system.q0), given.get("v0"), given.get("z0"))
        return system.run(start, **kwargs)
    return _simulate(system, duration, **kwargs)
