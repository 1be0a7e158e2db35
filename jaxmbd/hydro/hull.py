"""Closed hull meshes: what the non-linear hydrostatics integrate the water pressure over.

A hull for non-linear hydrostatics is the whole closed surface of the body, above the waterline
too (a BEM mesh is only its wetted part).  :class:`HullMesh` holds triangles with outward
normals in the hydrodynamic frame at rest (the BEM frame: z up, the still waterline at z = 0, as
Capytaine and WAMIT place their meshes).  It is built from a box or a vertical cylinder
(:func:`box_hull`, :func:`cylinder_hull`) or read from a file (:func:`load_hull`: STL, WAMIT
``.gdf``, NEMOH ``.dat`` and the other formats of Capytaine's readers) and checked on load:
closed, two-manifold, consistently oriented with outward normals, no degenerate panels, and in
metres.  Each defect is a one-line :class:`HullMeshError` naming the file.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError, JaxmbdError

LARGEST_HULL = 1000.0
"""m: a hull longer than this in any direction is taken for a mesh written in millimetres (the
largest floating structures are about 500 m long)."""


class HullMeshError(JaxmbdError, ValueError):
    """A hull mesh that cannot be used: open, non-manifold, inverted, degenerate or not in metres."""

    def __init__(self, source: str, problem: str):
        super().__init__(f"{source}: {problem}")
        self.source, self.problem = source, problem


class Triangles:
    """The vertex indices (n, 3) of a mesh's triangles: static structure, hashed once."""

    def __init__(self, indices):
        self.indices = np.ascontiguousarray(np.asarray(indices, dtype=np.int32))
        self.indices.setflags(write=False)
        self._hash = int.from_bytes(hashlib.sha1(self.indices.tobytes()).digest()[:8], "little")

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, Triangles) and np.array_equal(self.indices, other.indices)

    def __len__(self):
        return len(self.indices)


class HullMesh(eqx.Module):
    """A closed triangulated hull: ``vertices`` (n, 3) [m] and ``triangles`` (their indices, counter-
    clockwise seen from outside so that (b − a) × (c − a) points out of the hull)."""

    vertices: jax.Array
    triangles: Triangles = eqx.field(static=True)
    source: str = eqx.field(static=True, default="hull")

    @property
    def n_panels(self) -> int:
        return len(self.triangles)

    def corners(self) -> np.ndarray:
        """(n_panels, 3, 3): each triangle's corners."""
        return np.asarray(self.vertices)[self.triangles.indices]

    def volume(self) -> float:
        """Enclosed volume [m³] (divergence theorem)."""
        a, b, c = np.moveaxis(self.corners(), 1, 0)
        return float(np.sum(np.einsum("ij,ij->i", a, np.cross(b, c))) / 6.0)

    def translated(self, offset) -> "HullMesh":
        """The same hull moved by ``offset`` (3,) [m]."""
        return HullMesh(np.asarray(self.vertices) + np.asarray(offset, float), self.triangles, self.source)

    def deck_vertices(self, tol: float = 1e-6) -> np.ndarray:
        """Indices of the vertices at the top of the hull (within ``tol`` of the highest): the deck
        edge whose immersion the stability curve reports."""
        z = np.asarray(self.vertices)[:, 2]
        return np.nonzero(z >= z.max() - tol * max(1.0, np.ptp(z)))[0]


def posed_corners(hull: HullMesh, R, p):
    """The panels' corners (3, 3, n) (coordinate, corner, panel: the panels last, so that the pressure
    integration is element-wise over them) of ``hull`` placed at rotation ``R`` and translation ``p``."""
    body = jnp.asarray(hull.vertices, dtype=jnp.result_type(R, p))[hull.triangles.indices.T].transpose(2, 0, 1)
    return jnp.stack([R[i, 0] * body[0] + R[i, 1] * body[1] + R[i, 2] * body[2] + p[i] for i in range(3)])


def checked(vertices, triangles, source: str) -> HullMesh:
    """A :class:`HullMesh` of these vertices and triangles after the checks of the module's
    docstring, or a one-line :class:`HullMeshError` naming ``source`` and the defect."""
    V = np.asarray(vertices, float)
    T = np.asarray(triangles)
    if V.ndim != 2 or V.shape[1] != 3 or T.ndim != 2 or T.shape[1] != 3 or len(T) < 4:
        raise HullMeshError(source, f"expected vertices (n, 3) and at least 4 triangles (m, 3), got {V.shape} and {T.shape}")
    if not np.all(np.isfinite(V)):
        raise HullMeshError(source, "vertices that are not finite numbers")
    if T.min() < 0 or T.max() >= len(V):
        raise HullMeshError(source, f"triangle indices outside 0..{len(V) - 1}")
    extent = float(np.max(np.ptp(V, axis=0)))
    if extent > LARGEST_HULL:
        raise HullMeshError(source, f"{extent:g} across: expected metres (a hull over {LARGEST_HULL:g} m is taken for a mesh in "
                            "millimetres; scale it by 0.001)")
    a, b, c = V[T[:, 0]], V[T[:, 1]], V[T[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    if np.any(area <= 1e-12 * extent**2):
        k = int(np.argmin(area))
        raise HullMeshError(source, f"degenerate panel {k} (zero area; corners {T[k].tolist()})")
    _check_edges(T, source)
    volume = float(np.sum(np.einsum("ij,ij->i", a, np.cross(b, c))) / 6.0)
    if volume <= 0:
        raise HullMeshError(source, f"normals point into the hull (enclosed volume {volume:.6g} m³ < 0): reverse the panels' "
                            "vertex order")
    return HullMesh(V, Triangles(T), source)


def _check_edges(T, source):
    """Closed (every edge in two panels), manifold (in no more) and consistently oriented (the two
    panels run along it in opposite directions)."""
    directed = np.concatenate([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]])
    undirected = np.sort(directed, axis=1)
    edges, counts = np.unique(undirected, axis=0, return_counts=True)
    if np.any(counts == 1):
        e = edges[np.argmax(counts == 1)]
        raise HullMeshError(source, f"open: {int(np.sum(counts == 1))} edges belong to one panel only (e.g. vertices "
                            f"{e.tolist()}); a hull for non-linear hydrostatics must be closed, deck included")
    if np.any(counts > 2):
        e = edges[np.argmax(counts > 2)]
        raise HullMeshError(source, f"non-manifold: edge {e.tolist()} belongs to {int(counts.max())} panels")
    d_edges, d_counts = np.unique(directed, axis=0, return_counts=True)
    if np.any(d_counts > 1):
        e = d_edges[np.argmax(d_counts > 1)]
        raise HullMeshError(source, f"inconsistent normals: the panels on edge {e.tolist()} run the same way along it (some "
                            "panels face inwards)")


def _grid(n_u, n_v):
    """Triangles of an (n_u + 1) x (n_v + 1) vertex grid, counter-clockwise in (u, v)."""
    i, j = np.meshgrid(np.arange(n_u), np.arange(n_v), indexing="ij")
    k = (i * (n_v + 1) + j).reshape(-1)
    a, b, c, d = k, k + (n_v + 1), k + (n_v + 1) + 1, k + 1
    return np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def _merged(parts, tol):
    """One vertex list for several faces' (vertices, triangles), shared corners merged."""
    V = np.concatenate([p[0] for p in parts])
    offsets = np.cumsum([0] + [len(p[0]) for p in parts])
    T = np.concatenate([p[1] + o for p, o in zip(parts, offsets)])
    key = np.round(V / tol).astype(np.int64)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    return V[first], inverse.reshape(-1)[T]


def box_hull(length, beam, depth, draught, *, panel_size=None, center=(0.0, 0.0), name="box") -> HullMesh:
    """A closed rectangular barge hull: ``length`` along x, ``beam`` along y, ``depth`` from keel to
    deck, the keel ``draught`` below the still waterline z = 0, centred on ``center`` (x, y); panels of
    about ``panel_size`` m (default: a tenth of the smallest dimension)."""
    L, B, D, T = (float(x) for x in (length, beam, depth, draught))
    if min(L, B, D, T) <= 0 or T >= D:
        raise HullMeshError(name, f"a box needs positive length, beam, depth and draught with draught < depth, got "
                            f"{L:g}, {B:g}, {D:g}, {T:g}")
    h = float(panel_size) if panel_size is not None else min(L, B, D) / 10.0
    n = [max(1, math.ceil(s / h)) for s in (L, B, D)]
    x0, y0 = float(center[0]) - L / 2, float(center[1]) - B / 2
    lo = np.array([x0, y0, -T])
    size = np.array([L, B, D])
    parts = []
    # each face as a grid over two axes (u, v) at a fixed third; the order (u, v) makes u x v outward
    for fixed, side in ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)):
        u, v = [(1, 2), (2, 0), (0, 1)][fixed]
        if side == 0:
            u, v = v, u
        su, sv = np.linspace(0, 1, n[u] + 1), np.linspace(0, 1, n[v] + 1)
        P = np.zeros((n[u] + 1, n[v] + 1, 3))
        P[..., u] = lo[u] + size[u] * su[:, None]
        P[..., v] = lo[v] + size[v] * sv[None, :]
        P[..., fixed] = lo[fixed] + size[fixed] * side
        parts.append((P.reshape(-1, 3), _grid(n[u], n[v])))
    V, Tri = _merged(parts, 1e-9 * max(L, B, D))
    return checked(V, Tri, name)


def cylinder_hull(radius, height, draught, *, panel_size=None, center=(0.0, 0.0), name="cylinder") -> HullMesh:
    """A closed vertical circular cylinder of ``radius`` and ``height`` (bottom to top), its bottom
    ``draught`` below the still waterline; a polygon of ``n`` sides with n = 2πr / ``panel_size``
    (default 64 sides), so the waterplane area is (n / 2π) sin(2π / n) of πr² (0.16 % less at 64)."""
    r, H, T = float(radius), float(height), float(draught)
    if min(r, H, T) <= 0 or T >= H:
        raise HullMeshError(name, f"a cylinder needs positive radius, height and draught with draught < height, got {r:g}, {H:g}, {T:g}")
    n_theta = 64 if panel_size is None else max(8, math.ceil(2 * math.pi * r / float(panel_size)))
    n_z = max(1, math.ceil(H / (float(panel_size) if panel_size is not None else 2 * math.pi * r / n_theta)))
    th = 2 * math.pi * np.arange(n_theta) / n_theta
    z = -T + H * np.arange(n_z + 1) / n_z
    cx, cy = float(center[0]), float(center[1])
    ring = np.stack([cx + r * np.cos(th), cy + r * np.sin(th)], 1)
    side = np.concatenate([np.column_stack([ring, np.full(n_theta, zk)]) for zk in z])
    tris = []
    for k in range(n_z):
        for i in range(n_theta):
            a, b = k * n_theta + i, k * n_theta + (i + 1) % n_theta
            tris += [(a, b, b + n_theta), (a, b + n_theta, a + n_theta)]
    bottom_c, top_c = len(side), len(side) + 1
    V = np.concatenate([side, [[cx, cy, -T], [cx, cy, H - T]]])
    top = n_z * n_theta
    for i in range(n_theta):
        j = (i + 1) % n_theta
        tris += [(bottom_c, j, i), (top_c, top + i, top + j)]
    return checked(V, np.asarray(tris), name)


def read_stl(path) -> np.ndarray:
    """The triangles (n, 3, 3) of an STL file, binary or ASCII."""
    data = Path(path).read_bytes()
    if len(data) >= 84:
        n = int(np.frombuffer(data[80:84], "<u4")[0])
        if len(data) == 84 + 50 * n:  # binary: 80-byte header, count, 50 bytes per facet
            rec = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])
            return np.frombuffer(data, rec, count=n, offset=84)["corners"].astype(float)
    text = data.decode("utf-8", errors="replace")
    if not text.lstrip().lower().startswith("solid"):
        raise InputError("neither a binary STL (size 84 + 50 n bytes) nor an ASCII one (starting with 'solid')")
    values = [line.split()[1:4] for line in text.splitlines() if line.strip().lower().startswith("vertex")]
    if not values or len(values) % 3:
        raise InputError(f"{len(values)} 'vertex' lines, not a multiple of 3")
    return np.asarray(values, float).reshape(-1, 3, 3)


def load_hull(path, *, scale: float = 1.0, offset=(0.0, 0.0, 0.0)) -> HullMesh:
    """A closed hull read from a mesh file: STL (binary or ASCII) here, the other formats (WAMIT
    ``.gdf``, NEMOH ``.dat``, ...) through Capytaine's readers; quadrilaterals are split into
    triangles, coordinates times ``scale`` plus ``offset`` [m], coincident vertices merged, then
    checked (:func:`checked`)."""
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise HullMeshError(source, "no such file")
    if path.suffix.lower() == ".stl":
        try:
            corners = read_stl(path)
        except ValueError as exc:
            raise HullMeshError(source, f"cannot read the STL file: {exc}") from None
        V, T = corners.reshape(-1, 3), np.arange(3 * len(corners)).reshape(-1, 3)
    else:
        V, T = _capytaine_mesh(path, source)
    V = V * float(scale) + np.asarray(offset, float)
    V, T = _merged([(V, T)], 1e-9 * max(1.0, float(np.max(np.ptp(V, axis=0)))))
    return checked(V, T, source)


def _capytaine_mesh(path, source):
    try:
        import capytaine as cpt
    except ImportError as exc:
        raise HullMeshError(source, "reading this mesh format needs Capytaine (pip install capytaine); STL is read without it") from exc
    try:
        mesh = cpt.load_mesh(str(path))
    except Exception as exc:  # Capytaine's readers raise many kinds; the file is what is wrong
        raise HullMeshError(source, f"cannot read the mesh: {type(exc).__name__}: {exc}") from None
    V = np.asarray(mesh.vertices, float)
    faces = np.asarray(mesh.faces)
    # Capytaine stores triangles as quadrilaterals with a repeated last corner
    tri = faces[:, 3] == faces[:, 2]
    return V, np.concatenate([faces[:, [0, 1, 2]], faces[~tri][:, [0, 2, 3]]])
