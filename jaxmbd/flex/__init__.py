"""Flexible bodies: 3-D Euler-Bernoulli beam elements in the floating frame of reference.

``beam``: element matrices, ``BeamMesh`` assembly, boundary conditions, modes,
Rayleigh damping. ``body``: the FFR flexible body (inertia invariants,
generalized mass matrix, quadratic velocity, elastic and gravity forces, node
kinematics and forces). Follows Hong et al. (2016) and Shabana (2005).
"""

from .beam import (
    BeamMesh,
    constrained_dofs,
    element_gravity_load,
    element_mass,
    element_rotation,
    element_shape,
    element_stiffness,
    free_dofs,
    modes,
    rayleigh_coefficients,
    rayleigh_damping,
)
from .body import (  # noqa: I001
    FlexibleBody,
    deformed_nodes,
    elastic_force,
    first_moment,
    flexible_body,
    flexible_body_terms,
    generalized_force_at_node,
    gravity_force,
    inertia_tensor,
    kinetic_energy,
    mass_matrix,
    mass_matrix_blocks,
    momentum,
    node_displacement,
    node_jacobian,
    node_position,
    node_velocity,
    potential_energy,
    quadratic_velocity_force,
    strain_energy,
)
from .element import FlexibleBeamElement, FlexibleBeamFile, NodeRope  # noqa: E402  (registers kind "flexible_beam")

__all__ = [
    "BeamMesh", "constrained_dofs", "element_gravity_load", "element_mass", "element_rotation",
    "element_shape", "element_stiffness", "free_dofs", "modes", "rayleigh_coefficients",
    "rayleigh_damping", "FlexibleBody", "deformed_nodes", "elastic_force", "first_moment",
    "flexible_body", "flexible_body_terms", "generalized_force_at_node", "gravity_force",
    "inertia_tensor", "kinetic_energy", "mass_matrix", "mass_matrix_blocks", "momentum",
    "node_displacement", "node_jacobian", "node_position", "node_velocity", "potential_energy",
    "quadratic_velocity_force", "strain_energy", "FlexibleBeamElement", "FlexibleBeamFile", "NodeRope",
]
