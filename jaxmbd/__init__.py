"""jaxmbd: differentiable multibody dynamics in JAX for marine operations.

Float64 is switched on at import unless the environment sets ``JAXMBD_X64=0``.  Two XLA CPU options
are set at import (see ``jaxmbd._xla``), and the forward programs jaxmbd compiles carry one
compiler option (``FORWARD_JIT_OPTIONS``, see ``jaxmbd._xla``), unless ``JAXMBD_XLA_DEFAULTS=0``.
"""

import os as _os

import jax as _jax

from ._xla import set_xla_flags as _set_xla_flags

_set_xla_flags()  # before JAX starts its CPU backend

if _os.environ.get("JAXMBD_X64", "1") != "0":
    _jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

from . import spatial, joints, hydro
from ._xla import FORWARD_JIT_OPTIONS
from .joints import ModelError, Fixed, Revolute, Prismatic, Cylindrical, Universal, Spherical, Free, Planar
from .model import Body, Placement, Model, ModelBuilder, load_urdf
from .kinematics import forward_kinematics, body_twists, body_jacobian, point_position, point_velocity
from .dynamics import (
    forward_dynamics,
    inverse_dynamics,
    mass_matrix,
    joint_wrenches,
    nonlinear_effects,
    mass_matrix_velocity_transformation,
    kinetic_energy,
    potential_energy,
    total_energy,
    gravity_wrenches,
)
from .io.system_file import LoadedSystem, SystemFileError, load_system
from .simulate import Integrator, Result, SimulationError, static_equilibrium
from .simulate import simulate as _simulate
from .system import System


def simulate(system, duration=None, **kwargs):
    """Simulate a :class:`System` or a loaded system file (:func:`load_system`).

    For a loaded file, its settings (duration, integrator, realisations, static
    equilibrium start, seed) are the defaults and keyword arguments override them;
    see :func:`jaxmbd.simulate.simulate` for the arguments.
    """
    if isinstance(system, LoadedSystem):
        if duration is not None:
            kwargs["duration"] = duration
        return system.run(**kwargs)
    return _simulate(system, duration, **kwargs)
