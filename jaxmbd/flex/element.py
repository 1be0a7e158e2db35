"""A flexible body inside a system: the force element that couples an FFR beam to the tree.

The beam's floating frame is a body of the tree (the *reference body*: a
light frame on the joint that carries the boom, e.g. the luffing joint on the
king).  The element owns the elastic coordinates q_f (states [q_f, q̇_f]) and
gives the system its floating-frame mass matrix and forces; the system solves
the joint and elastic accelerations together (jaxmbd.dynamics.coupled.flexible_accelerations).
Wire ropes hang from beam nodes (``ropes``): their tension acts on the
deformed node and on the other body.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..fields import parameter, setting
from ..forces.rope import smooth_tension
from ..system import Context, Contribution, ForceElement
from .beam import BeamMesh, free_dofs
from .body import FlexibleBody, flexible_body, flexible_body_terms, generalized_force_at_node, node_position, node_velocity, strain_energy


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


class FlexibleBeamFile(eqx.Module):
    """A straight Euler-Bernoulli beam of equal elements whose floating frame is the frame of a tree
    body, its first node clamped (or pinned) to that frame: a crane boom on its luffing joint; its
    elastic coordinates join the state; a hoist rope may hang from one of its nodes.  Under the still
    water, with a `drag_diameter`, it feels the sea's current (Morison drag on the flow normal to it, less
    its own velocity, lumped at the nodes; no wave kinematics).

    Outputs: `tension0` (N, the rope's), `tip_deflection` (m, body axes), `strain_energy` (J)."""

    name: str = setting("string", doc="element name, the prefix of its outputs (`boom/tip_deflection`)")
    body: str = setting("body", doc="the tree body whose frame is the beam's floating frame")
    end: jax.Array = parameter(unit="m", shape=(3,), doc="last node, in the body's frame")
    E: jax.Array = parameter(unit="Pa", bound=(">", 0.0), doc="Young's modulus")
    G: jax.Array = parameter(unit="Pa", bound=(">", 0.0), doc="shear modulus (torsion, G J)")
    A: jax.Array = parameter(unit="m²", bound=(">", 0.0), doc="cross-section area")
    Iy: jax.Array = parameter(unit="m⁴", bound=(">", 0.0), doc="second moment of area about the element's y axis")
    Iz: jax.Array = parameter(unit="m⁴", bound=(">", 0.0), doc="second moment of area about the element's z axis")
    J: jax.Array = parameter(unit="m⁴", bound=(">", 0.0), doc="torsion constant")
    density: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), doc="material density ρ (mass per length ρ A)")
    start: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="first node, in the body's frame")
    elements: int = setting("integer", default=8, doc="number of equal beam elements (at least 1)")
    y_ref: jax.Array = parameter(unit="", shape=(3,), default=np.array([0.0, 1.0, 0.0]),
                                 doc="direction fixing the elements' y axis (body frame), not along the beam")
    root: str = setting("string", default="clamped", choices=("clamped", "pinned"), doc="condition of the first node in the body's frame")
    modes: int = setting("integer", default=0, doc="modal coordinates kept (0: every free nodal DOF)")
    rayleigh: jax.Array = parameter(unit="1/s, s", shape=(2,), bound=(">=", 0.0), default=np.zeros(2),
                                    doc="(α, β) of the damping C = α M + β K")
    tip_node: int = setting("integer", default=-1, doc="node of the `tip_deflection` output (negative counts from the end)")
    water_density_field: ClassVar[str] = "rho"  # the sea's ([water] density), for the drag
    drag_diameter: jax.Array = parameter(unit="m", bound=(">=", 0.0), default=0.0, doc="D of the beam's drag in the sea's "
                                         "current where it is under the still water (0: none, settled when the system is built: a tuning "
                                         "or a phase cannot turn it on); Morison's ½ ρ C_d D |u_n| u_n "
                                         "per metre on the flow normal to the beam")
    drag_coefficient: jax.Array = parameter(unit="", bound=(">=", 0.0), default=1.2, doc="C_d of that drag")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density of that drag")
    rope_body: str = setting("body_or_world", default="", doc="body the rope from the beam runs to (none if left out)")
    rope_node: int = setting("integer", default=-1, doc="beam node the rope hangs from")
    rope_point: jax.Array = parameter(unit="m", shape=(3,), default=np.zeros(3), doc="rope end on `rope_body`, in its frame")
    rope_EA: jax.Array = parameter(unit="N", bound=(">", 0.0), default=1.0, doc="rope axial stiffness EA (required with `rope_body`)")
    rope_length: jax.Array = parameter(unit="m", bound=(">", 0.0), default=1.0, doc="rope unstretched length (required with `rope_body`)")
    rope_damping: jax.Array = parameter(unit="N·s/m", bound=(">=", 0.0), default=0.0, doc="rope axial damping")
    rope_transition: jax.Array = parameter(unit="N", bound=(">", 0.0), default=1.0, doc="width of the rope's smooth slack transition")

    @classmethod
    def file_rules(cls, values, given, fail):
        if values.get("elements", 8) < 1:
            fail("elements", f"must be at least 1, got {values['elements']}")
        if values.get("modes", 0) < 0:
            fail("modes", f"must be 0 (nodal coordinates) or a positive number of modes, got {values['modes']}")
        n_free = free_dofs(values.get("elements", 8) + 1, {0: values.get("root", "clamped")}).size
        if values.get("modes", 0) > n_free:
            fail("modes", f"must be at most the beam's {n_free} free nodal coordinates "
                 f"({values.get('elements', 8)} elements, {values.get('root', 'clamped')} root), got {values['modes']}")
        if float(values.get("drag_diameter", 0.0)) <= 0.0:
            for key in ("drag_coefficient", "rho"):
                if key in given:
                    fail(key, "the drag's; give drag_diameter > 0 (the beam in water) or leave it out")
        rope_keys = [k for k in given if k.startswith("rope_") and k != "rope_body"]
        if rope_keys and "rope_body" not in given:
            fail(rope_keys[0], "a rope needs `rope_body` (the body it runs to)")
        for key in ("rope_EA", "rope_length"):
            if "rope_body" in given and key not in given:
                fail(key, "missing (required with `rope_body`)")
        if "end" in values:
            axis = np.asarray(values["end"], float) - np.asarray(values.get("start", np.zeros(3)), float)
            if not np.linalg.norm(axis) > 0.0:
                fail("end", "must differ from `start`: the beam has no length")

    def build(self) -> FlexibleBeamElement:
        mesh = BeamMesh.straight(self.start, self.end, self.elements, E=self.E, G=self.G, A=self.A, Iy=self.Iy, Iz=self.Iz,
                                 J=self.J, rho=self.density, y_ref=self.y_ref)
        beam = flexible_body(mesh, {0: self.root}, n_modes=self.modes or None, rayleigh=(self.rayleigh[0], self.rayleigh[1]))
        ropes = ()
        if self.rope_body:
            ropes = (NodeRope(node=self.rope_node, body=self.rope_body, point=self.rope_point, EA=self.rope_EA,
                              length=self.rope_length, damping=self.rope_damping, transition=self.rope_transition),)
        drag = bool(float(self.drag_diameter) > 0.0)
        return FlexibleBeamElement(name=self.name, body=self.body, beam=beam, ropes=ropes, tip_node=self.tip_node, in_water=drag,
                                   drag_diameter=jnp.asarray(self.drag_diameter, float),
                                   drag_coefficient=jnp.asarray(self.drag_coefficient, float), rho=jnp.asarray(self.rho, float))


class FlexibleBeamElement(ForceElement):
    """Elastic coordinates of ``beam`` moving with the tree body ``body``; ropes from its nodes.

    Outputs: ``<rope k>/tension`` as ``tension{k}`` (N), ``tip_deflection`` (m, body axes,
    at ``tip_node``), ``strain_energy`` (J).  In a system file, ``kind = "flexible_beam"`` with the
    keys of :class:`FlexibleBeamFile`.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`flexible_beam`',
         "tip deflection within 10 % of the beam's length",
         "the deformation's own rotations matter: linear elastic coordinates no longer hold"),
    )

    kind: ClassVar[str] = "flexible_beam"
    file_form: ClassVar[type] = FlexibleBeamFile

    name: str = eqx.field(static=True)
    body: str = eqx.field(static=True)
    beam: FlexibleBody
    ropes: tuple = ()
    tip_node: int = eqx.field(static=True, default=-1)
    in_water: bool = eqx.field(static=True, default=False)
    """Whether the beam feels the sea's current (Morison drag on the flow normal to it, where it is under water)."""
    drag_diameter: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(0.0))
    drag_coefficient: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(1.2))
    rho: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(1025.0))

    @property
    def n_flex(self) -> int:
        return self.beam.n_f

    def sea_density(self) -> float | None:
        """The water's density where the beam is in it (its drag), else None: a dry boom touches no water."""
        return float(self.rho) if self.in_water else None

    @property
    def n_states(self) -> int:
        return 2 * self.beam.n_f

    def _split(self, z):
        k = self.beam.n_f
        return z[:k], z[k : 2 * k]

    def _rope(self, ctx: Context, z, rope: NodeRope):
        q_f, qd_f = self._split(z)
        i = ctx.model.index(self.body)
        R, p, tw = ctx.kin.rotation(i), ctx.kin.origin(i), ctx.kin.body_twist(i)
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
        """(M (6+n_f)², Q (6+n_f)) in the reference body's frame, rope loads and the current's drag on the nodes included."""
        q_f, qd_f = self._split(z)
        i = ctx.model.index(self.body)
        g_body = spatial.mtv(ctx.kin.rotation(i), ctx.model.gravity)
        M, Q = flexible_body_terms(self.beam, q_f, qd_f, ctx.kin.body_twist(i), g_body)
        for rope in self.ropes:
            T, e, node, R = self._rope(ctx, z, rope)
            f_body = spatial.mtv(R, T * e)
            Q = Q + generalized_force_at_node(self.beam, q_f, node, jnp.concatenate([f_body, jnp.zeros(3)]))
        if self.in_water:
            for node, f_body in enumerate(self.drag_loads(ctx, z)):
                Q = Q + generalized_force_at_node(self.beam, q_f, node, jnp.concatenate([f_body, jnp.zeros(3)]))
        return M, Q

    def drag_loads(self, ctx: Context, z):
        """(n_nodes, 3) body-axes forces of the current's drag, lumped at the nodes: per metre ½ ρ C_d D |u_n| u_n with
        u_n the current less the node's velocity, its part normal to the beam's axis, over each node's half elements
        (nodes above the still water feel none; no wave kinematics)."""
        q_f, qd_f = self._split(z)
        i = ctx.model.index(self.body)
        R, p, tw = ctx.kin.rotation(i), ctx.kin.origin(i), ctx.kin.body_twist(i)
        nodes = jnp.asarray(self.beam.nodes, dtype=p.dtype)  # traced inside a run
        seg = jnp.linalg.norm(jnp.diff(nodes, axis=0), axis=1)
        zero = jnp.zeros(1, p.dtype)
        share = 0.5 * (jnp.concatenate([seg, zero]) + jnp.concatenate([zero, seg]))
        chord = nodes[-1] - nodes[0]
        axis = spatial.mv(R, chord / jnp.linalg.norm(chord))
        current = None if ctx.waves is None else ctx.waves.current
        out = []
        for k in range(self.beam.n_nodes):
            pos = p + spatial.mv(R, node_position(self.beam, q_f, k))
            vel = spatial.mv(R, node_velocity(self.beam, q_f, qd_f, tw, k))
            u = (jnp.zeros(3, p.dtype) if current is None else current.velocity(pos[2]).astype(p.dtype)) - vel
            un = u - jnp.dot(u, axis) * axis
            f = 0.5 * self.rho * self.drag_coefficient * self.drag_diameter * jnp.sqrt(jnp.sum(un * un) + 1e-12) * un * share[k]
            out.append(spatial.mtv(R, jnp.where(pos[2] < 0.0, f, 0.0)))
        return out

    def contribution(self, ctx: Context, z) -> Contribution:
        f_ext = ctx.zeros_f_ext()
        for rope in self.ropes:
            T, e, _, _ = self._rope(ctx, z, rope)
            f_ext = ctx.add_point_force(f_ext, rope.body, rope.point, -T * e)
        # the elastic accelerations come from the system's coupled solve
        return Contribution(f_ext=f_ext, zdot=jnp.zeros(self.n_states, dtype=z.dtype))

    def valid_ranges(self, model) -> tuple:
        """The floating frame with linear elastic coordinates holds for small deflections: the
        deflection at ``tip_node`` within a tenth of the beam's length (a common bound of linear
        beam theory; beyond it the deformation's own rotations matter)."""
        import numpy as np

        from ..validity import ValidRange

        nodes = np.asarray(self.beam.nodes)
        limit = 0.1 * float(np.linalg.norm(nodes[-1] - nodes[0]))
        return (ValidRange("tip_deflection", "beam tip deflection", "a linear elastic beam in its floating frame",
                           f"|deflection| <= 10 % of the length = {limit:.3g} m", upper=limit,
                           transform=lambda x: np.linalg.norm(x, axis=-1)),)

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
