"""Linear mooring on one body (MBS4WEC, eq. 11)."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..fields import parameter, setting
from ..kinematics import attitude
from ..system import Context, Contribution, ForceElement


def small_displacement(ctx: Context, body: str, point, p0):
    """Displacement η = [x, y, z, φ, θ, ψ] of a body point from its equilibrium position p0 (the body's
    axes at rest along the world's) in the world frame, and its rate: translations of the point, rotations
    as the z-y-x Euler angles of the body (seakeeping convention), rates from the world angular velocity."""
    i = ctx.body_index(body)
    pos, vel = ctx.point(body, point)
    ang, omega_world = attitude(ctx, i)
    eta = jnp.concatenate([pos - p0, ang])
    etadot = jnp.concatenate([vel, omega_world])
    return eta, etadot


class LinearMooring(ForceElement):
    """F = −K (η − η_offset) − C η̇ + F_pretension, a wrench at ``point`` of ``body`` in world axes.

    ``stiffness`` and ``damping`` are 6x6 (N/m, N m/rad, ...); η is the body
    point's displacement from its placement at ``reference`` (world position of
    the point at rest), rotations by small-angle Euler angles.  Output:
    ``force`` (6,), the wrench on the body at the point in world axes.
    """

    kind: ClassVar[str] = "linear_mooring"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="moored body")
    point: jnp.ndarray = parameter(unit="m", shape=(3,), doc="point of the body the wrench acts at, body frame")
    reference: jnp.ndarray = parameter(unit="m", shape=(3,), doc="the point's equilibrium position, world frame")
    stiffness: jnp.ndarray = parameter(unit="N/m, N·m/rad", shape=(6, 6), doc="K on η = [x, y, z, φ, θ, ψ]")
    damping: jnp.ndarray = parameter(unit="N·s/m, N·m·s/rad", shape=(6, 6), doc="C on η̇")
    pretension: jnp.ndarray = parameter(unit="N, N·m", shape=(6,), default=[0.0] * 6, doc="constant wrench F_pretension, world axes")

    def springs(self, ctx) -> tuple:
        """K's translational diagonal, each along its world axis, between the point and its reference."""
        K = np.asarray(self.stiffness, float)
        return tuple((self.body, self.point, "world", self.reference, float(K[a, a]), np.eye(3)[a]) for a in range(3) if K[a, a] > 0.0)

    def wrench(self, ctx: Context):
        eta, etadot = small_displacement(ctx, self.body, self.point, self.reference)
        return (-self.stiffness @ eta - self.damping @ etadot + self.pretension).astype(ctx.R.dtype)

    def contribution(self, ctx: Context, z) -> Contribution:
        w = self.wrench(ctx)
        i = ctx.body_index(self.body)
        f_ext = ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, w[:3])
        f_ext = f_ext.at[i, 3:].add(spatial.mtv(ctx.kin.rotation(i), w[3:]))
        return Contribution(f_ext=f_ext)

    def output_units(self, model) -> dict:
        from ..system import WRENCH_UNITS

        return {"force": WRENCH_UNITS}

    def outputs(self, ctx: Context, z) -> dict:
        return {"force": self.wrench(ctx)}
