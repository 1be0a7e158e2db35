"""Kinetic and gravitational potential energy of the rigid bodies (conservation checks)."""

from __future__ import annotations

import jax.numpy as jnp

from ..kinematics import forward_kinematics
from ..model import Model
from .reference import velocities


def kinetic_energy(model: Model, q, v):
    """½ Σ vᵢᵀ Iᵢ vᵢ (J)."""
    _, vel, _, _ = velocities(model, q, v)
    return 0.5 * sum(vel[i] @ (model.inertia[i] @ vel[i]) for i in range(model.n_bodies))


def potential_energy(model: Model, q):
    """−Σ mᵢ gᵀ cᵢ (J), with cᵢ the world centre of mass (zero at the world origin)."""
    Rw, pw = forward_kinematics(model, q)
    m = model.inertia[:, 0, 0]
    mc_hat = model.inertia[:, 3:, :3]
    mc = jnp.stack([mc_hat[:, 2, 1], mc_hat[:, 0, 2], mc_hat[:, 1, 0]], -1)  # m c in body frame
    mc_world = m[:, None] * pw + jnp.einsum("nij,nj->ni", Rw, mc)
    return -jnp.sum(mc_world @ model.gravity)


def total_energy(model: Model, q, v):
    """Kinetic plus gravitational potential energy of the rigid bodies (J)."""
    return kinetic_energy(model, q, v) + potential_energy(model, q)
