"""A flexible body inside a system: the force element that couples an FFR beam to the tree.

The beam's floating frame is a body of the tree (the *reference body*: a
light frame on the joint that carries the boom, e.g. the luffing joint on the
king).  The element owns the elastic coordinates q_f (states [q_f, q̇_f]) and
gives the system its floating-frame mass matrix and forces; the system solves
the joint and elastic accelerations together (System._flexible_accelerations).
Wire ropes hang from beam nodes (``ropes``): their tension acts on the
deformed node and on the other body.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .. import spatial
from ..forces.rope import smooth_tension
from ..system import Context, Contribution, ForceElement
from .body import FlexibleBody, flexible_body_terms, generalized_force_at_node, node_position, node_velocity, strain_energy


class NodeRope(eqx.Module):
    """A rope from beam node ``node`` to ``point`` on ``body`` (``"world"`` allowed): EA, unstretched
    length, damping, slack transition width (N), as :class:`~jaxmbd.forces.WireRope`."""

    node: int = eqx.field(static=True)
    body: str = eqx.field(static=True)
    point: jnp.ndarray
    EA: jnp.ndarray
    length: jnp.ndarray
    damping: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(0.0))
    transition: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(1.0))


class FlexibleBeamElement(ForceElement):
    """Elastic coordinates of ``beam`` moving with the tree body ``body``; ropes from its nodes.

    Outputs: ``<rope k>/tension`` as ``tension{k}`` (N), ``tip_deflection`` (m, body axes,
    at ``tip_node``), ``strain_energy`` (J).
    """

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    beam: FlexibleBody
    ropes: tuple = ()
    tip_node: int = eqx.field(static=True, default=-1)

    @property
    def n_flex(self) -> int:
        return self.beam.n_f

    @property
    def n_states(self) -> int:
        return 2 * self.beam.n_f

    def _split(self, z):
        k = self.beam.n_f
        return z[:k], z[k : 2 * k]

    def _rope(self, ctx: Context, z, rope: NodeRope):
        q_f, qd_f = self._split(z)
        i = ctx.model.index(self.body)
        R, p, tw = ctx.R[i], ctx.p[i], ctx.twist[i]
        node = rope.node % self.beam.n_nodes
        pa = p + spatial.mv(R, node_position(self.beam, q_f, node))
        va = spatial.mv(R, node_velocity(self.beam, q_f, qd_f, tw, node))
        pb, vb = ctx.point(rope.body, rope.point)
        d = pb - pa
        l = jnp.sqrt(jnp.sum(d * d) + 1e-30)
        e = d / l
        ldot = jnp.sum(e * (vb - va))
        T = smooth_tension(rope.EA / rope.length * (l - rope.length) + rope.damping * ldot, rope.transition)
        return T, e, node, R

    def flexible_terms(self, ctx: Context, z):
        """(M (6+n_f)², Q (6+n_f)) in the reference body's frame, rope loads on the nodes included."""
        q_f, qd_f = self._split(z)
        i = ctx.model.index(self.body)
        g_body = spatial.mtv(ctx.R[i], ctx.model.gravity)
        M, Q = flexible_body_terms(self.beam, q_f, qd_f, ctx.twist[i], g_body)
        for rope in self.ropes:
            T, e, node, R = self._rope(ctx, z, rope)
            f_body = spatial.mtv(R, T * e)
            Q = Q + generalized_force_at_node(self.beam, q_f, node, jnp.concatenate([f_body, jnp.zeros(3)]))
        return M, Q

    def contribution(self, ctx: Context, z) -> Contribution:
        f_ext = ctx.zeros_f_ext()
        for rope in self.ropes:
            T, e, _, _ = self._rope(ctx, z, rope)
            f_ext = ctx.add_point_force(f_ext, rope.body, rope.point, -T * e)
        # the elastic accelerations come from the system's coupled solve
        return Contribution(f_ext=f_ext, zdot=jnp.zeros(self.n_states, dtype=z.dtype))

    def output_units(self, model) -> dict:
        out = {f"tension{k}": "N" for k in range(len(self.ropes))}
        return out | {"tip_deflection": "m", "strain_energy": "J"}

    def outputs(self, ctx: Context, z) -> dict:
        q_f, _ = self._split(z)
        out = {f"tension{k}": self._rope(ctx, z, r)[0] for k, r in enumerate(self.ropes)}
        tip = self.tip_node % self.beam.n_nodes
        out["tip_deflection"] = node_position(self.beam, q_f, tip) - self.beam.nodes[tip]
        out["strain_energy"] = strain_energy(self.beam, q_f)
        return out
