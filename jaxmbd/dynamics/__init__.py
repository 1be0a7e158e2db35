"""Rigid-body dynamics over a kinematic tree.

:mod:`.reference` is the specification: the articulated-body algorithm, the recursive Newton-Euler
algorithm and the composite-rigid-body algorithm as Featherstone's *Rigid Body Dynamics Algorithms*
(2008) writes them, body by body.  :func:`forward_dynamics` evaluates the tuned variants beside it
(:mod:`.articulated`, :mod:`.serial_run`, :mod:`.dense`), chosen by a static
:class:`DynamicsOptions`; ``tests/test_dynamics_contract.py`` holds every variant to the reference.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._xla import forward_jit
from ..kinematics import Kinematics
from ..model import Model
from ..shapes import BodyInertias as Inertias
from ..shapes import BodyWrenches as Wrenches
from ..shapes import Configuration as Q
from ..shapes import JointSpaceMatrix
from ..shapes import Velocity as V
from . import articulated, dense
from .energy import kinetic_energy, potential_energy, total_energy
from .gravity import gravity_torques, gravity_wrenches
from .options import DEFAULT_OPTIONS, DynamicsOptions
from .reference import bias_accelerations, crba, joint_wrenches, rnea
from .velocity_transformation import mass_matrix_velocity_transformation

__all__ = [
    "DynamicsOptions",
    "DEFAULT_OPTIONS",
    "forward_dynamics",
    "forward_dynamics_jit",
    "inverse_dynamics",
    "mass_matrix",
    "joint_wrenches",
    "nonlinear_effects",
    "bias_accelerations",
    "gravity_torques",
    "gravity_wrenches",
    "mass_matrix_velocity_transformation",
    "kinetic_energy",
    "potential_energy",
    "total_energy",
]


def forward_dynamics(model: Model, q: Q, v: V, tau: V, f_ext: Wrenches | None = None, extra_inertia: Inertias | None = None, *,
                     options: DynamicsOptions = DEFAULT_OPTIONS, kinematics: Kinematics | None = None) -> V:
    """Joint accelerations v̇ by the articulated-body algorithm, O(n).

    Solves M(q) v̇ + h(q, v) = τ + Σ Jᵢᵀ f_ext,i, with M including ``extra_inertia`` (n, 6, 6), an
    inertia without weight (added mass); ``f_ext`` (n, 6) body-frame wrenches about the body origins.
    The value is RBDA Table 7.1's (:func:`.reference.aba`); ``options`` chooses how it is evaluated
    and differentiated (:class:`DynamicsOptions`), never what it is.  ``kinematics``: the
    :class:`~jaxmbd.kinematics.Kinematics` of (q, v) if the caller has computed it (a right-hand side
    whose force elements read it), so that the joint placements are not computed again.
    """
    if dense.applies(model, options):
        return dense.forward_dynamics(model, q, v, tau, f_ext, extra_inertia, options, kinematics)
    return articulated.forward_dynamics(model, q, v, tau, f_ext, extra_inertia, options, kinematics)


def inverse_dynamics(model: Model, q: Q, v: V, vdot: V, f_ext: Wrenches | None = None, extra_inertia: Inertias | None = None,
                     kinematics: Kinematics | None = None) -> V:
    """Joint forces τ = M(q) v̇ + h(q, v) − Σ Jᵢᵀ f_ext,i by the recursive Newton-Euler algorithm."""
    return rnea(model, q, v, vdot, f_ext, extra_inertia, kinematics)


def mass_matrix(model: Model, q: Q, extra_inertia: Inertias | None = None, kinematics: Kinematics | None = None) -> JointSpaceMatrix:
    """Joint-space inertia M(q) by the composite-rigid-body algorithm (RBDA Table 6.2)."""
    return crba(model, q, extra_inertia, kinematics)


def nonlinear_effects(model: Model, q: Q, v: V, f_ext: Wrenches | None = None) -> V:
    """h(q, v) = C(q, v) v + g(q) − Jᵀ f_ext: the joint forces for zero acceleration."""
    return rnea(model, q, v, jnp.zeros(model.nv, dtype=jnp.result_type(v, float)), f_ext)


forward_dynamics_jit = forward_jit(forward_dynamics, jit=jax.jit)
