"""jaxmbd: differentiable multibody dynamics in JAX for marine operations.

Float64 is switched on at import unless the environment sets ``JAXMBD_X64=0``.
"""

import os as _os

import jax as _jax

if _os.environ.get("JAXMBD_X64", "1") != "0":
    _jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

from . import spatial, joints, hydro
from .joints import ModelError, Fixed, Revolute, Prismatic, Cylindrical, Universal, Spherical, Free
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
