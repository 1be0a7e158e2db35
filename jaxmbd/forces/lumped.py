"""A dynamic mooring or lifting line: lumped masses joined by elastic segments, with Morison drag and
added mass, seabed contact, and its nodes integrated with the bodies.

The discretisation is the lumped-mass model of Hall and Goupee (2015), which MoorDyn implements:
N segments of unstretched length l = L/N between N + 1 nodes, node 0 at the anchor (fixed in the
world) and node N at the fairlead (on a body).  The N − 1 interior nodes carry positions and
velocities as the element's states (6 (N − 1)).  Per segment i (nodes i, i + 1), with stretched
length λ_i, unit vector q̂_i and stretch rate λ̇_i:

    T_i = EA (λ_i − l)/l q̂_i  (zero when λ_i < l: a line cannot push),   T_d,i = c λ̇_i / l q̂_i

(the damping acts both ways, as MoorDyn's; the tension outputs are magnitudes, as MoorDyn's)

Per node, over its share of line ℓ_k (l inside, l/2 at the ends), with d the volume-equivalent
diameter, A = πd²/4, the tangent q̂ (from its neighbours), m the mass per metre and u the current
relative to the node, split into its normal part u_n and its axial part u_t:

    mass          M = m ℓ I + ρ A ℓ [C_an (I − q̂q̂ᵀ) + C_at q̂q̂ᵀ]
    weight        (m − ρ A) ℓ g
    drag          ½ ρ d ℓ C_dn |u_n| u_n + ½ ρ π d ℓ C_dt |u_t| u_t
    seabed        [k_b (z_b − z) − c_b ż] d ℓ ê_z   while the node is under the seabed z_b

and an interior node accelerates by M⁻¹ (T_i − T_{i−1} + T_d,i − T_d,i−1 + weight + drag + seabed).
The body feels at the fairlead the force on node N: −T_{N−1} − T_d,N−1 plus that node's weight, drag
and seabed force (its own inertia, m l/2, is left out).

Range of validity: the line stays under the still water (no wave kinematics and no splash zone on
the nodes; the sea state's current is felt); no bending or torsional stiffness; no seabed friction.
An explicit integrator must resolve the segments' axial vibration: the step must stay under about
the axial wave's time through a segment, l / √(EA/m) (:meth:`LumpedLine.axial_period` gives
2π/ω of the stiffest segment mode), or the run diverges and says when.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from ..validity import ValidRange
from .catenary import line_tensions

LUMPED_UNITS = {"fairlead_tension": "N", "anchor_tension": "N", "max_segment_tension": "N", "nodes": "m",
                "highest_node": "m"}


def _norm(x):
    return jnp.sqrt(jnp.sum(x * x, axis=-1) + 1e-30)


def catenary_nodes(fairlead, anchor, L, EA, w, n):
    """World positions (n + 1, 3) of the nodes at unstretched arc lengths kL/n from the anchor along the
    elastic catenary through ``anchor`` and ``fairlead`` (no seabed friction): the static shape a
    lumped line starts from."""
    H, V, e_h, _ = line_tensions(fairlead, anchor, L, EA, w)
    H = jnp.maximum(H, 1e-6 * w * L)
    s = jnp.linspace(0.0, 1.0, n + 1) * L
    va = jnp.maximum(V - w * L, 0.0)  # vertical tension at the anchor (0 while a length lies on the seabed)
    lb = jnp.maximum(L - V / w, 0.0)  # the laid length
    sl = jnp.minimum(s, lb)  # along the seabed
    ss = jnp.maximum(s - lb, 0.0)  # suspended, from the touchdown (or the anchor)
    vs = va + w * ss
    x = sl * (1 + H / EA) + H / w * (jnp.arcsinh(vs / H) - jnp.arcsinh(va / H)) + H * ss / EA
    z = H / w * (jnp.sqrt(1 + (vs / H) ** 2) - jnp.sqrt(1 + (va / H) ** 2)) + (va * ss + 0.5 * w * ss**2) / EA
    return anchor[None] + x[:, None] * e_h[None] + z[:, None] * jnp.array([0.0, 0.0, 1.0], dtype=e_h.dtype)


class LumpedLine(ForceElement):
    """A line of ``segments`` elastic segments from ``anchor`` (world) to ``fairlead`` on ``body``, its
    interior nodes dynamic (docs/hydro.md, "the lumped-mass line").  It starts from the elastic catenary
    through its ends.

    Outputs: ``fairlead_tension`` and ``anchor_tension`` (N, the end segments' tension with their
    damping, as MoorDyn reports them), ``max_segment_tension`` (N), ``nodes`` (N + 1, 3) m and
    ``highest_node`` (m, world z of the highest interior node).  A run reports a node above the still
    water and a tension above ``max_tension``.
    """
    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`lumped_line`',
         'every interior node under the still water; the largest segment tension within `max_tension`',
         "the nodes feel no waves and no splash zone; beyond the line's strength"),
    )

    kind: ClassVar[str] = "lumped_line"
    water_density_field: ClassVar[str] = "rho"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body carrying the fairlead")
    segments: int = setting("integer", doc="N, the number of segments (N + 1 nodes, N − 1 of them dynamic)")
    fairlead: jax.Array = parameter(unit="m", shape=(3,), doc="fairlead, body frame")
    anchor: jax.Array = parameter(unit="m", shape=(3,), doc="anchor, world")
    length: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="L, unstretched length")
    diameter: jax.Array = parameter(unit="m", bound=(">", 0.0), doc="d, volume-equivalent diameter (buoyancy, drag, added mass)")
    mass_per_length: jax.Array = parameter(unit="kg/m", bound=(">", 0.0), doc="m, mass per metre in air")
    EA: jax.Array = parameter(unit="N", bound=(">", 0.0), doc="axial stiffness")
    damping: jax.Array = parameter(unit="N s", bound=(">=", 0.0), default=0.0, doc="c, internal damping per unit strain rate (MoorDyn's BA)")
    Cd_normal: jax.Array = parameter(unit="", bound=(">=", 0.0), default=1.2, doc="C_dn, normal drag on d")
    Cd_axial: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.008, doc="C_dt, axial drag on πd")
    Ca_normal: jax.Array = parameter(unit="", bound=(">=", 0.0), default=1.0, doc="C_an, normal added mass")
    Ca_axial: jax.Array = parameter(unit="", bound=(">=", 0.0), default=0.0, doc="C_at, axial added mass")
    seabed_z: jax.Array = parameter(unit="m", default=float("nan"), doc="z_b, the seabed (world); default: the anchor's z")
    seabed_stiffness: jax.Array = parameter(unit="Pa/m", bound=(">=", 0.0), default=3.0e6, doc="k_b, per unit of contact area d ℓ")
    seabed_damping: jax.Array = parameter(unit="Pa s/m", bound=(">=", 0.0), default=3.0e5, doc="c_b, per unit of contact area d ℓ")
    rho: jax.Array = parameter(unit="kg/m³", bound=(">", 0.0), default=1025.0, doc="water density")
    max_tension: jax.Array = parameter(unit="N", bound=(">", 0.0), default=float("inf"), doc="minimum breaking load or design limit")

    def __check_init__(self):
        if not isinstance(self.segments, int) or self.segments < 2:
            raise InputError(f"segments: expected an integer of at least 2, got {self.segments!r}")

    @property
    def n_states(self):
        return 6 * (self.segments - 1)

    def internal_frequency(self):
        return 2 * np.pi / self.axial_period()

    def axial_period(self):
        """2π/ω (s) of the fastest axial mode of a segment, ω = 2 √(EA / (m l²)): an explicit step
        well under it (RK4: under a third of it) keeps the run stable."""
        l = self.length / self.segments
        return 2 * np.pi / (2 * np.sqrt(float(self.EA) / (float(self.mass_per_length) * float(l) ** 2)))

    def start_problem(self, ctx: Context) -> str | None:
        """A line lighter than the water it displaces has no catenary to start from."""
        water = float(self.rho) * np.pi * float(self.diameter) ** 2 / 4  # kg/m displaced
        if float(self.mass_per_length) <= water:
            return (f"the line is buoyant ({float(self.mass_per_length):g} kg/m against {water:.4g} kg/m of water displaced): "
                    "it has no catenary to start from; check mass_per_length and diameter")
        return None

    def _seabed(self):
        return jnp.where(jnp.isnan(self.seabed_z), self.anchor[2], self.seabed_z)

    def initial_state(self, model, q, v):
        from ..kinematics import Kinematics

        q = model.normalise(q)
        kin = Kinematics.compute(model, q, v)
        ctx = Context(0.0, q, v, kin, model)
        i = ctx.body_index(self.body)
        dtype = model.inertia.dtype
        fair = ctx.point_position(i, jnp.asarray(self.fairlead, dtype))
        w = (self.mass_per_length - self.rho * jnp.pi * self.diameter**2 / 4) * jnp.linalg.norm(model.gravity)
        nodes = catenary_nodes(fair, jnp.asarray(self.anchor, dtype), self.length, self.EA, w, self.segments)
        return jnp.concatenate([nodes[1:-1].ravel(), jnp.zeros(3 * (self.segments - 1), dtype)]).astype(dtype)

    def _nodes(self, ctx: Context, z):
        """All node positions and velocities (N + 1, 3) and the fairlead body's index."""
        dtype = ctx.p.dtype
        n = self.segments - 1
        r_in, v_in = z[: 3 * n].reshape(n, 3), z[3 * n :].reshape(n, 3)
        i = ctx.body_index(self.body)
        fair = jnp.asarray(self.fairlead, dtype)
        anchor = jnp.asarray(self.anchor, dtype)[None]
        r = jnp.concatenate([anchor, r_in, ctx.point_position(i, fair)[None]])
        v = jnp.concatenate([jnp.zeros_like(anchor), v_in, ctx.point_velocity(i, fair)[None]])
        return r, v, i

    def _segments(self, r, v):
        """Per segment: tension with damping (N, 3) as a force on its lower node, and its magnitude."""
        l = self.length / self.segments
        d = r[1:] - r[:-1]
        lam = _norm(d)
        qs = d / lam[:, None]
        rate = jnp.sum(qs * (v[1:] - v[:-1]), axis=-1)
        elastic = jnp.where(lam > l, self.EA * (lam - l) / l, 0.0)
        t = elastic + self.damping * rate / l
        return t[:, None] * qs, jnp.abs(t)

    def _node_forces(self, ctx: Context, r, v):
        """Per node (N + 1): the non-tension force (weight, drag, seabed) and the mass matrix's two
        coefficients (M = a I + b q̂q̂ᵀ) with the tangent q̂."""
        dtype = r.dtype
        N = self.segments
        l = self.length / N
        share = jnp.full(N + 1, l, dtype).at[0].set(0.5 * l).at[-1].set(0.5 * l)
        area = jnp.pi * self.diameter**2 / 4
        tang = jnp.concatenate([r[1:2] - r[0:1], r[2:] - r[:-2], r[-1:] - r[-2:-1]])
        qh = tang / _norm(tang)[:, None]
        u = -v
        if ctx.waves is not None and getattr(ctx.waves, "current", None) is not None:
            u = u + jax.vmap(ctx.waves.current.velocity)(r[:, 2]).astype(dtype)
        ut = jnp.sum(u * qh, axis=-1)[:, None] * qh
        un = u - ut
        drag = 0.5 * self.rho * self.diameter * share[:, None] * (
            self.Cd_normal * _norm(un)[:, None] * un + self.Cd_axial * jnp.pi * _norm(ut)[:, None] * ut)
        g = jnp.asarray(ctx.model.gravity, dtype)
        weight = ((self.mass_per_length - self.rho * area) * share)[:, None] * g[None]
        pen = self._seabed() - r[:, 2]
        fz = jnp.where(pen > 0, (self.seabed_stiffness * pen - self.seabed_damping * v[:, 2]) * self.diameter * share, 0.0)
        f = weight + drag + fz[:, None] * jnp.array([0.0, 0.0, 1.0], dtype)
        a = self.mass_per_length * share + self.rho * area * share * self.Ca_normal
        b = self.rho * area * share * (self.Ca_axial - self.Ca_normal)
        return f, a, b, qh

    def contribution(self, ctx: Context, z) -> Contribution:
        r, v, i = self._nodes(ctx, z)
        tens, _ = self._segments(r, v)
        f, a, b, qh = self._node_forces(ctx, r, v)
        fnet = tens[1:] - tens[:-1] + f[1:-1]
        a_i, b_i, q_i = a[1:-1], b[1:-1], qh[1:-1]
        proj = jnp.sum(q_i * fnet, axis=-1)
        acc = (fnet - (b_i / (a_i + b_i) * proj)[:, None] * q_i) / a_i[:, None]  # (a I + b q̂q̂ᵀ)⁻¹ f
        n = self.segments - 1
        zdot = jnp.concatenate([z[3 * n :], acc.ravel()])
        force = -tens[-1] + f[-1]
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.fairlead, force), zdot=zdot)

    def outputs(self, ctx: Context, z) -> dict:
        r, v, _ = self._nodes(ctx, z)
        _, t = self._segments(r, v)
        return {"fairlead_tension": t[-1], "anchor_tension": t[0], "max_segment_tension": jnp.max(t), "nodes": r,
                "highest_node": jnp.max(r[1:-1, 2])}

    def output_units(self, model) -> dict:
        return dict(LUMPED_UNITS)

    def valid_ranges(self, model) -> tuple:
        ranges = (ValidRange("highest_node", "highest interior node (world z)", "lumped-mass line",
                             "a node above the still water: the line's wave kinematics and splash zone are not modelled",
                             upper=0.0, signed=True),)
        limit = float(np.asarray(self.max_tension))
        if np.isfinite(limit):
            ranges += (ValidRange("max_segment_tension", "largest segment tension", "a line within its strength",
                                  f"segment tension <= max_tension {limit:g} N", upper=limit, signed=True),)
        return ranges
