"""Three-dimensional Euler-Bernoulli beam elements, assembly, modes and damping.

Follows Hong, Roh, Ham and Ha (2016, "Dynamic simulation of subsea
equipment installation ... flexible multibody system dynamics"), Section II.1
and Appendix A1, which in turn follow Shabana (2005) and Przemieniecki (1968).

Coordinates and conventions
---------------------------
* An element runs from node a to node b along its local x axis (length l).
  Its 12 nodal coordinates, in the element frame, are (eq. 2, Fig. 3)

      e = [u1, v1, w1, θx1, θy1, θz1,  u2, v2, w2, θx2, θy2, θz2]

  (three displacements, then three small rotations, per node).
* Right-handed small rotations: θy = −dw/dx, θz = +dv/dx.
* The displacement of a point of the neutral axis at ξ = x/l ∈ [0, 1] is
  w(ξ) = S(ξ) e (eq. 1/2), S the seed's shape matrix (Appendix A1) with the
  cross-section offsets η = ζ = 0:

      u_x = (1−ξ) u1 + ξ u2
      u_y = N1 v1 + l N2 θz1 + N3 v2 + l N4 θz2
      u_z = N1 w1 − l N2 θy1 + N3 w2 − l N4 θy2

  with the cubic Hermite functions N1 = 1 − 3ξ² + 2ξ³, N2 = ξ − 2ξ² + ξ³,
  N3 = 3ξ² − 2ξ³, N4 = −ξ² + ξ³. The rotation field of the cross-section is
  θx linear between the nodes, θy = −u_z', θz = u_y'.
* The element frame is given by the rotation C (3x3, columns = element axes in
  body coordinates). The seed's C (Appendix A1) is "local y = body y made
  perpendicular to the element axis"; we keep that rule with a user-chosen
  reference vector y_ref (default body y), so that an element along body y,
  where the seed's formula divides by zero, is possible with another y_ref.
* Nodal coordinates of the body are expressed in the body frame (eq. 3:
  e = C̄ q_n with C̄ = blockdiag(C, C, C, C)ᵀ), so the body-frame displacement of
  a point is ū = C S C̄ q_n = N q_n (eqs. 4, 11-13).
* Body DOF numbering: node k owns rows 6k ... 6k+5 = [ux, uy, uz, θx, θy, θz]
  in body-frame components. Boundary conditions remove rows (eq. 15: the
  selection matrix B2).

Element matrices are integrated from the shape functions by 4-point
Gauss-Legendre quadrature, exact for the polynomial degrees involved (≤ 6), so
stiffness, mass, gravity load and the floating-frame shape integrals of
``body.py`` all come from the same N(ξ) and are mutually consistent. Everything
is jax.numpy, so K, M and the modes are differentiable with respect to section
properties and node positions (eigenvector gradients are undefined at repeated
frequencies, e.g. a section with Iy = Iz).

Units: SI throughout (m, kg, N, Pa, rad, rad/s).
"""

from __future__ import annotations

from typing import Mapping, Sequence, Union

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError

Array = jax.Array

# 4-point Gauss-Legendre on [0, 1]: exact to polynomial degree 7. The highest
# degree met is 6 (a product of two cubic Hermite functions in the mass terms).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
GAUSS_XI = 0.5 * (_GL_X + 1.0)
GAUSS_W = 0.5 * _GL_W

DOF_NAMES = ("ux", "uy", "uz", "rx", "ry", "rz")

BCSpec = Union[str, Sequence[int]]


# ----------------------------------------------------------------------------
# element level
# ----------------------------------------------------------------------------
#
# The length enters the shape functions only through the bending-rotation
# columns (θy, θz carry a factor l) and through 1/l per derivative, so
#     S(ξ; l) = S₁(ξ) D(l),   R(ξ; l) = diag(1, 1/l, 1/l) R₁(ξ) D(l),
#     B(ξ; l) = diag(1/l, 1/l, 1/l², 1/l²) B₁(ξ) D(l),
#     D(l) = diag(1, 1, 1, 1, l, l, 1, 1, 1, 1, l, l),
# with S₁, R₁, B₁ the l = 1 matrices. These are tabulated once at the Gauss
# points (numpy constants), so element matrices are a few small contractions:
# a much smaller XLA graph (and compile time) than building them entry by entry.


def _unit_shape(xi, xp=np):
    """(S₁, R₁, B₁) at ξ for l = 1: shapes (3, 12), (3, 12), (4, 12); xp = np or jnp."""
    xi = xp.asarray(xi)
    o, z = xp.ones_like(xi), xp.zeros_like(xi)
    n1, n2 = 1 - 3 * xi**2 + 2 * xi**3, xi - 2 * xi**2 + xi**3
    n3, n4 = 3 * xi**2 - 2 * xi**3, -(xi**2) + xi**3
    d1, d2 = -6 * xi + 6 * xi**2, 1 - 4 * xi + 3 * xi**2  # dN/dξ
    d3, d4 = 6 * xi - 6 * xi**2, -2 * xi + 3 * xi**2
    e1, e2, e3, e4 = -6 + 12 * xi, -4 + 6 * xi, 6 - 12 * xi, -2 + 6 * xi  # d²N/dξ²
    S = xp.stack([
        xp.stack([1 - xi, z, z, z, z, z, xi, z, z, z, z, z]),
        xp.stack([z, n1, z, z, z, n2, z, n3, z, z, z, n4]),
        xp.stack([z, z, n1, z, -n2, z, z, z, n3, z, -n4, z]),
    ])
    R = xp.stack([
        xp.stack([z, z, z, 1 - xi, z, z, z, z, z, xi, z, z]),
        xp.stack([z, z, -d1, z, d2, z, z, z, -d3, z, d4, z]),  # θy = −u_z'
        xp.stack([z, d1, z, z, z, d2, z, d3, z, z, z, d4]),  # θz = u_y'
    ])
    B = xp.stack([
        xp.stack([-o, z, z, z, z, z, o, z, z, z, z, z]),  # u'
        xp.stack([z, z, z, -o, z, z, z, z, z, o, z, z]),  # θx'
        xp.stack([z, e1, z, z, z, e2, z, e3, z, z, z, e4]),  # u_y''
        xp.stack([z, z, e1, z, -e2, z, z, z, e3, z, -e4, z]),  # u_z''
    ])
    return S, R, B


def _scale(length):
    """Diagonal of D(l) (12,)."""
    one = jnp.ones_like(jnp.asarray(length, dtype=float))
    l = one * length
    return jnp.stack([one, one, one, one, l, l, one, one, one, one, l, l])


# Gauss-point tables, l = 1: (4, 3, 12), (4, 3, 12), (4, 4, 12)
_S1, _R1, _B1 = (np.moveaxis(a, -1, 0) for a in _unit_shape(GAUSS_XI))
# ∫₀¹ B₁ₖᵀ B₁ₖ dξ per strain k (4, 12, 12); ∫ S₁ᵀS₁ (12, 12); ∫ R₁ₖᵀ R₁ₖ per rotation k (3, 12, 12)
_KB = np.einsum("g,gki,gkj->kij", GAUSS_W, _B1, _B1)
_MS = np.einsum("g,gki,gkj->ij", GAUSS_W, _S1, _S1)
_MR = np.einsum("g,gki,gkj->kij", GAUSS_W, _R1, _R1)
_SW = np.einsum("g,gki->ki", GAUSS_W, _S1)  # ∫ S₁ dξ (3, 12)


def element_shape(xi, length) -> tuple[Array, Array]:
    """Shape-function matrices of one element at ξ, in the element frame.

    Args:
        xi: ξ = x/l ∈ [0, 1], scalar.
        length: element length l (m).

    Returns:
        (S, R): S (3, 12) maps the element nodal coordinates e to the
        displacement of the neutral-axis point (Hong et al. 2016 Appendix A1, S^ij with
        η = ζ = 0); R (3, 12) maps e to the small rotation [θx, θy, θz] of the
        cross-section at ξ (θx linear, θy = −u_z', θz = u_y').
    """
    S1, R1, _ = _unit_shape(jnp.asarray(xi, dtype=float), jnp)
    d = _scale(length)
    inv = jnp.stack([jnp.ones_like(d[0]), 1.0 / d[4], 1.0 / d[4]])
    return S1 * d, inv[:, None] * R1 * d


def element_stiffness(length, E, G, A, Iy, Iz, J) -> Array:
    """Element stiffness matrix (12, 12) in the element frame (N/m, N, N·m).

    K = ∫₀ˡ Bᵀ diag(EA, GJ, EI_z, EI_y) B dx with B the rows
    [u', θx', u_y'', u_z''] (strain energy ½∫ EA u'² + GJ θx'² + EI_z u_y''² +
    EI_y u_z''² dx), i.e. D (EA/l K_u + GJ/l K_θ + EI_z/l³ K_v + EI_y/l³ K_w) D.
    This is the matrix K̄^ij of Hong et al. (2016) Appendix A1 (Przemieniecki's 3-D beam;
    the printed matrix is garbled, the tests check the closed-form entries
    12EI/l³, 6EI/l², 4EI/l, 2EI/l, EA/l, GJ/l). Iy, Iz: second moments of area
    about the element y and z axes (m⁴); J: torsion constant (m⁴).
    """
    l = length
    c = jnp.stack([E * A / l, G * J / l, E * Iz / l**3, E * Iy / l**3])
    d = _scale(l)
    return jnp.einsum("k,kij->ij", c, _KB) * d[:, None] * d[None, :]


def element_section_inertia(rho, Ip, Iy, Iz, rotary_inertia: bool) -> Array:
    """Rotational inertia of the cross-section per unit length (3, 3), element frame (kg·m).

    diag(ρ I_p, ρ I_y, ρ I_z) with rotary inertia of bending, diag(ρ I_p, 0, 0)
    without (Euler-Bernoulli, the usual consistent-mass convention). The
    torsional term is always kept, otherwise the θx coordinates would carry no
    mass and M would be singular.
    """
    r = 1.0 if rotary_inertia else 0.0
    return jnp.diag(jnp.stack([rho * Ip, r * rho * Iy, r * rho * Iz]))


def element_mass(length, rho, A, Ip, Iy, Iz, rotary_inertia: bool = False) -> Array:
    """Consistent mass matrix (12, 12) in the element frame (kg, kg·m, kg·m²).

    M = ∫₀ˡ ρA SᵀS + Rᵀ J_s R dx, S and R from ``element_shape`` and J_s from
    ``element_section_inertia``; equals the classical matrix with entries
    ρAl·(156, 22l, 54, −13l, 4l², −3l²)/420, ρAl·(2, 1)/6 (axial) and
    ρI_p l·(2, 1)/6 (torsion).
    """
    l = length
    r = 1.0 if rotary_inertia else 0.0
    js = jnp.stack([rho * Ip, r * rho * Iy / l**2, r * rho * Iz / l**2])
    d = _scale(l)
    M1 = rho * A * _MS + jnp.einsum("k,kij->ij", js, _MR)
    return l * M1 * d[:, None] * d[None, :]


def element_gravity_load(length, rho, A, g_local) -> Array:
    """Consistent nodal load (12,) of the element's own weight, element frame (N, N·m).

    f = ∫₀ˡ ρA Sᵀ g dx, g (3,) the gravity vector in element axes (m/s²).
    For g along −z this is ρAgl·[½ end forces, ∓l/12 end moments].
    """
    return length * rho * A * (jnp.asarray(g_local) @ _SW) * _scale(length)


def element_rotation(a, b, y_ref=(0.0, 1.0, 0.0)) -> Array:
    """Rotation C (3, 3) from element axes to body axes (columns = element x, y, z).

    x_e = (b − a)/|b − a|; y_e = y_ref made perpendicular to x_e and normalised;
    z_e = x_e × y_e. With y_ref = body y this is the seed's C^ij (Appendix A1).
    y_ref must not be parallel to the element (checked where the data are
    concrete).
    """
    a, b, y_ref = jnp.asarray(a), jnp.asarray(b), jnp.asarray(y_ref, dtype=jnp.result_type(float))
    ex = (b - a) / jnp.linalg.norm(b - a)
    ey = y_ref - jnp.dot(y_ref, ex) * ex
    ey = ey / jnp.linalg.norm(ey)
    ez = jnp.cross(ex, ey)
    return jnp.stack([ex, ey, ez], axis=1)


def _block4(C) -> Array:
    """blockdiag(C, C, C, C) (12, 12): element-frame -> body-frame nodal coordinates."""
    return jnp.kron(jnp.eye(4, dtype=C.dtype), C)


# ----------------------------------------------------------------------------
# boundary conditions
# ----------------------------------------------------------------------------


def constrained_dofs(n_nodes: int, bc: Mapping[int, BCSpec] | None) -> np.ndarray:
    """Indices of removed DOFs (sorted numpy ints) for a boundary-condition map.

    bc: {node: spec}, node an index (negative counts from the end), spec
    "clamped" (all six DOFs), "pinned" (the three displacements) or a sequence of
    local DOF numbers 0..5 = [ux, uy, uz, θx, θy, θz] (body-frame components).
    """
    out = set()
    for node, spec in (bc or {}).items():
        k = int(node) % n_nodes if -n_nodes <= int(node) < n_nodes else None
        if k is None:
            raise InputError(f"boundary condition on node {node}, mesh has {n_nodes} nodes")
        if isinstance(spec, str):
            if spec in ("clamped", "fixed"):
                dofs = range(6)
            elif spec == "pinned":
                dofs = range(3)
            else:
                raise InputError(f"unknown boundary condition {spec!r}: use 'clamped', 'pinned' or DOF numbers")
        else:
            dofs = [int(d) for d in spec]
            if any(d < 0 or d > 5 for d in dofs):
                raise InputError(f"DOF numbers are 0..5 {DOF_NAMES}, got {spec}")
        out.update(6 * k + d for d in dofs)
    return np.array(sorted(out), dtype=np.int64)


def free_dofs(n_nodes: int, bc: Mapping[int, BCSpec] | None) -> np.ndarray:
    """Indices of the DOFs kept after the boundary conditions (sorted numpy ints)."""
    fixed = set(constrained_dofs(n_nodes, bc).tolist())
    return np.array([i for i in range(6 * n_nodes) if i not in fixed], dtype=np.int64)


# ----------------------------------------------------------------------------
# mesh
# ----------------------------------------------------------------------------


class BeamMesh(eqx.Module):
    """A chain of beam elements through ``nodes`` (element e joins nodes e and e+1).

    Geometry and section properties are array leaves (differentiable); section
    properties are scalars or per-element arrays (n_elements,), so a tapered
    boom is possible. Build a straight one with ``BeamMesh.straight``.

    Attributes:
        nodes: (n_nodes, 3) undeformed node positions in the body frame (m).
        E, G: Young's and shear moduli (Pa).
        A: cross-section area (m²).
        Iy, Iz: second moments of area about element y, z (m⁴).
        J: torsion constant (m⁴), used in GJ.
        Ip: polar moment of area (m⁴), used for the torsional inertia ρ I_p.
        rho: density (kg/m³).
        y_ref: (3,) reference vector fixing the element y axis (body frame).
        rotary_inertia: keep ρI_y, ρI_z rotary inertia of bending (static).
    """

    nodes: Array
    E: Array
    G: Array
    A: Array
    Iy: Array
    Iz: Array
    J: Array
    Ip: Array
    rho: Array
    y_ref: Array
    rotary_inertia: bool = eqx.field(static=True, default=False)

    @classmethod
    def straight(
        cls,
        a,
        b,
        n_elements: int,
        *,
        E,
        G,
        A,
        Iy,
        Iz,
        J,
        rho,
        Ip=None,
        y_ref=(0.0, 1.0, 0.0),
        rotary_inertia: bool = False,
    ) -> "BeamMesh":
        """n_elements equal elements from point a to point b (body frame, m).

        Ip defaults to Iy + Iz (exact for a solid or thin-walled circular
        section; for other sections pass it).
        """
        if n_elements < 1:
            raise InputError("n_elements must be >= 1")
        a = jnp.asarray(a, dtype=float)
        b = jnp.asarray(b, dtype=float)
        t = jnp.linspace(0.0, 1.0, n_elements + 1)[:, None]
        nodes = a + t * (b - a)
        f = lambda x: jnp.asarray(x, dtype=float)  # noqa: E731
        Ip = f(Iy) + f(Iz) if Ip is None else f(Ip)
        y_ref = f(y_ref)
        ax = np.asarray(b - a) if not isinstance(b - a, jax.core.Tracer) else None
        if ax is not None:
            yr = np.asarray(y_ref)
            c = np.linalg.norm(np.cross(ax, yr)) / (np.linalg.norm(ax) * np.linalg.norm(yr))
            if c < 1e-6:
                raise InputError("y_ref is parallel to the beam axis; pass another y_ref")
        return cls(
            nodes=nodes, E=f(E), G=f(G), A=f(A), Iy=f(Iy), Iz=f(Iz), J=f(J), Ip=Ip,
            rho=f(rho), y_ref=y_ref, rotary_inertia=rotary_inertia,
        )

    # ---- sizes (static: derived from array shapes) ----
    @property
    def n_nodes(self) -> int:
        return self.nodes.shape[0]

    @property
    def n_elements(self) -> int:
        return self.nodes.shape[0] - 1

    @property
    def n_dof(self) -> int:
        return 6 * self.nodes.shape[0]

    # ---- per-element data ----
    def _per_element(self, x) -> Array:
        return jnp.broadcast_to(jnp.asarray(x), (self.n_elements,))

    def element_lengths(self) -> Array:
        """(n_elements,) element lengths (m)."""
        return jnp.linalg.norm(self.nodes[1:] - self.nodes[:-1], axis=1)

    def element_rotations(self) -> Array:
        """(n_elements, 3, 3) element-to-body rotations C^ij."""
        return jax.vmap(element_rotation, in_axes=(0, 0, None))(self.nodes[:-1], self.nodes[1:], self.y_ref)

    def _sections(self):
        pe = self._per_element
        return (pe(self.E), pe(self.G), pe(self.A), pe(self.Iy), pe(self.Iz), pe(self.J),
                pe(self.Ip), pe(self.rho))

    def _element_dofs(self) -> np.ndarray:
        e = np.arange(self.n_elements)[:, None]
        return 6 * e + np.arange(12)[None, :]

    def _assemble(self, Ke_body: Array) -> Array:
        idx = self._element_dofs()
        out = jnp.zeros((self.n_dof, self.n_dof), Ke_body.dtype)
        return out.at[idx[:, :, None], idx[:, None, :]].add(Ke_body)

    @eqx.filter_jit
    def stiffness_matrix(self) -> Array:
        """Global stiffness K (n_dof, n_dof), body-frame nodal coordinates, all DOFs."""
        E, G, A, Iy, Iz, J, _, _ = self._sections()
        L = self.element_lengths()
        Ke = jax.vmap(element_stiffness)(L, E, G, A, Iy, Iz, J)
        T = jax.vmap(_block4)(self.element_rotations())
        # q_e(element) = C̄ q_n(body) with C̄ = T^T  (seed eq. 3)
        return self._assemble(T @ Ke @ jnp.swapaxes(T, 1, 2))

    @eqx.filter_jit
    def mass_matrix(self) -> Array:
        """Global consistent mass M (n_dof, n_dof), body-frame nodal coordinates, all DOFs."""
        _, _, A, Iy, Iz, _, Ip, rho = self._sections()
        L = self.element_lengths()
        Me = jax.vmap(lambda l, r, a, ip, iy, iz: element_mass(l, r, a, ip, iy, iz, self.rotary_inertia))(
            L, rho, A, Ip, Iy, Iz
        )
        T = jax.vmap(_block4)(self.element_rotations())
        return self._assemble(T @ Me @ jnp.swapaxes(T, 1, 2))

    @eqx.filter_jit
    def gravity_load(self, gravity_body) -> Array:
        """Consistent nodal load (n_dof,) of the mesh's own weight, gravity (3,) in body axes (m/s²)."""
        _, _, A, _, _, _, _, rho = self._sections()
        L = self.element_lengths()
        C = self.element_rotations()
        g_local = jnp.einsum("eji,j->ei", C, jnp.asarray(gravity_body))  # Cᵀ g
        fe = jax.vmap(element_gravity_load)(L, rho, A, g_local)
        fe_body = jnp.einsum("eij,ej->ei", jax.vmap(_block4)(C), fe)
        return jnp.zeros(self.n_dof, fe_body.dtype).at[self._element_dofs()].add(fe_body)

    def total_mass(self) -> Array:
        """Σ ρ A l (kg)."""
        _, _, A, _, _, _, _, rho = self._sections()
        return jnp.sum(rho * A * self.element_lengths())

    @eqx.filter_jit
    def shape_integrals(self) -> dict:
        """Floating-frame shape integrals over the whole mesh, all nodal DOFs.

        With μ = ρA (kg/m), x0(s) the undeformed position of a neutral-axis point,
        N(s) (3, n_dof) its body-frame shape matrix (eq. 13, u = N q_n) and
        R(s) (3, n_dof) its rotation field, J_s(s) the body-frame section inertia
        per length (``element_section_inertia`` rotated by C):

            m     = ∫ μ ds                                   ()
            S0    = ∫ μ x0 ds                                (3,)
            Sbar  = ∫ μ N ds                                 (3, n)
            J0    = ∫ μ x0 x0ᵀ ds                            (3, 3)
            I1    [k, l]    = ∫ μ x0_k N_l ds                 (3, 3, n)
            Sbb   [k, l]    = ∫ μ N_kᵀ N_l ds                 (3, 3, n, n)
            Jsec  = ∫ J_s ds                                 (3, 3)
            Jth   = ∫ J_s R ds                               (3, n)
            Mth   = ∫ Rᵀ J_s R ds                            (n, n)

        N_k is row k of N. Σ_k Sbb[k, k] + Mth is the consistent mass matrix.
        Quadrature: 4 Gauss points per element (exact).
        """
        _, _, A, Iy, Iz, _, Ip, rho = self._sections()
        L = self.element_lengths()
        C = self.element_rotations()
        T = jax.vmap(_block4)(C)
        x_a = self.nodes[:-1]
        x_b = self.nodes[1:]
        n = self.n_dof
        idx = self._element_dofs()
        dt = self.nodes.dtype

        xi_g = jnp.asarray(GAUSS_XI, dt)
        w_g = jnp.asarray(GAUSS_W, dt)

        def element(l, Ce, Te, xa, xb, mu, r, ip, iy, iz):
            Js_b = Ce @ element_section_inertia(r, ip, iy, iz, self.rotary_inertia) @ Ce.T
            d = _scale(l)
            inv = jnp.stack([jnp.ones_like(l), 1.0 / l, 1.0 / l])
            # body-frame N and R at the Gauss points (4, 3, 12): C S C̄ (seed eq. 13 for this element)
            Nb = jnp.einsum("ab,gbj,kj->gak", Ce, _S1 * d, Te)
            Rb = jnp.einsum("ab,gbj,kj->gak", Ce, inv[:, None] * _R1 * d, Te)
            x0 = (1 - xi_g)[:, None] * xa + xi_g[:, None] * xb
            wm = w_g * l * mu
            wl = w_g * l
            return dict(
                m=l * mu,
                S0=jnp.einsum("g,ga->a", wm, x0),
                Sbar=jnp.einsum("g,gak->ak", wm, Nb),
                J0=jnp.einsum("g,ga,gb->ab", wm, x0, x0),
                I1=jnp.einsum("g,ga,gbk->abk", wm, x0, Nb),
                Sbb=jnp.einsum("g,gai,gbj->abij", wm, Nb, Nb),
                Jsec=l * Js_b,
                Jth=jnp.einsum("g,ab,gbk->ak", wl, Js_b, Rb),
                Mth=jnp.einsum("g,gai,ab,gbj->ij", wl, Rb, Js_b, Rb),
            )

        el = jax.vmap(element)(L, C, T, x_a, x_b, rho * A, rho, Ip, Iy, Iz)
        out = dict(m=el["m"].sum(), S0=el["S0"].sum(0), J0=el["J0"].sum(0), Jsec=el["Jsec"].sum(0))
        out["Sbar"] = jnp.zeros((3, n), dt).at[:, idx].add(jnp.moveaxis(el["Sbar"], 0, 1))
        out["I1"] = jnp.zeros((3, 3, n), dt).at[:, :, idx].add(jnp.moveaxis(el["I1"], 0, 2))
        out["Jth"] = jnp.zeros((3, n), dt).at[:, idx].add(jnp.moveaxis(el["Jth"], 0, 1))
        out["Mth"] = jnp.zeros((n, n), dt).at[idx[:, :, None], idx[:, None, :]].add(el["Mth"])
        out["Sbb"] = (
            jnp.zeros((3, 3, n, n), dt)
            .at[:, :, idx[:, :, None], idx[:, None, :]]
            .add(jnp.moveaxis(el["Sbb"], 0, 2))
        )
        return out


# ----------------------------------------------------------------------------
# modes and damping
# ----------------------------------------------------------------------------


def modes(mesh: BeamMesh, n_modes: int, bc: Mapping[int, BCSpec] | None) -> tuple[Array, Array]:
    """Lowest undamped modes of the constrained mesh: K φ = ω² M φ on the free DOFs.

    Args:
        mesh: the beam mesh.
        n_modes: how many modes to keep (lowest first).
        bc: boundary conditions (see ``constrained_dofs``). Without enough
            constraints the first modes are rigid-body modes with ω ≈ 0.

    Returns:
        (phi, omega): phi (n_dof, n_modes) mass-normalised (φᵀ M φ = I) over the
        full nodal vector, zero in the constrained rows, each column signed so
        that its largest entry is positive; omega (n_modes,) natural circular
        frequencies (rad/s), ascending. The deformation is q_n = phi η.

    Solved as a standard symmetric problem with the Cholesky factor of M
    (L⁻¹ K L⁻ᵀ y = ω² y, φ = L⁻ᵀ y). Repeated frequencies (e.g. Iy = Iz) give
    an arbitrary basis of each eigenspace: keep such pairs together.
    """
    free = free_dofs(mesh.n_nodes, bc)
    if not 1 <= n_modes <= free.size:
        raise InputError(f"n_modes must be in 1..{free.size}")
    return _modes_free(mesh, tuple(free.tolist()), int(n_modes))


@eqx.filter_jit
def _modes_free(mesh: BeamMesh, free: tuple, n_modes: int) -> tuple[Array, Array]:
    """``modes`` on the given free DOFs (static tuple), compiled once per structure."""
    free = np.asarray(free, dtype=np.int64)
    K = mesh.stiffness_matrix()[np.ix_(free, free)]
    M = mesh.mass_matrix()[np.ix_(free, free)]
    Lc = jnp.linalg.cholesky(M)
    Linv_K = jax.scipy.linalg.solve_triangular(Lc, K, lower=True)
    Ahat = jax.scipy.linalg.solve_triangular(Lc, Linv_K.T, lower=True)
    Ahat = 0.5 * (Ahat + Ahat.T)
    lam, Y = jnp.linalg.eigh(Ahat)
    lam, Y = lam[:n_modes], Y[:, :n_modes]
    phi = jax.scipy.linalg.solve_triangular(Lc.T, Y, lower=False)
    k = jnp.argmax(jnp.abs(phi), axis=0)
    phi = phi * jnp.sign(phi[k, jnp.arange(n_modes)])
    omega = jnp.sqrt(jnp.maximum(lam, 0.0))
    full = jnp.zeros((mesh.n_dof, n_modes), phi.dtype).at[free].set(phi)
    return full, omega


def rayleigh_coefficients(omega1, zeta1, omega2, zeta2) -> tuple[Array, Array]:
    """(α, β) of Rayleigh damping C = αM + βK from two target ratios.

    The modal damping ratio of C is ζ(ω) = α/(2ω) + βω/2; requiring ζ(ω1) = ζ1
    and ζ(ω2) = ζ2 gives

        β = 2 (ζ2 ω2 − ζ1 ω1) / (ω2² − ω1²),   α = 2 ζ1 ω1 − β ω1².

    omega in rad/s, zeta dimensionless; α in 1/s, β in s.
    """
    w1, w2, z1, z2 = (jnp.asarray(x, dtype=float) for x in (omega1, omega2, zeta1, zeta2))
    beta = 2.0 * (z2 * w2 - z1 * w1) / (w2**2 - w1**2)
    alpha = 2.0 * z1 * w1 - beta * w1**2
    return alpha, beta


def rayleigh_damping(M, K, alpha, beta) -> Array:
    """C = α M + β K (same shape as M)."""
    return alpha * jnp.asarray(M) + beta * jnp.asarray(K)
