"""Static structure of a kinematic tree that the tuned algorithms plan with: serial runs, levels,
index tables.  Everything here is computed from the model's topology and joint kinds at trace time
(numpy, no JAX arrays of the state)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..joints import Cylindrical, Fixed, Free, Planar, Prismatic, Revolute, Spherical
from ..model import Model
from .options import DynamicsOptions

CONSTANT_SUBSPACE = (Fixed, Revolute, Prismatic, Cylindrical, Spherical, Free, Planar)
"""Joints whose motion subspace S is constant in the body frame (and c_J = Ṡ q̇ = 0)."""


def segments(model: Model, options: DynamicsOptions) -> list[tuple[int, int]]:
    """Split the bodies (in index order) into single bodies (s, s+1) and serial runs (s, e): bodies
    s..e-1 on revolute joints (or all prismatic), body k's parent k-1, every body of the run but the
    last with exactly one child (the next), and at least ``options.scan_min_run`` of them, so the run
    is a path that a scan can walk."""
    n = model.n_bodies
    kids = [model.children(i) for i in range(n)]
    segs, i = [], 0
    while i < n:
        kind = type(model.joints[i]) if isinstance(model.joints[i], (Revolute, Prismatic)) else None
        e = i + 1
        if kind is not None:
            while e < n and type(model.joints[e]) is kind and model.parents[e] == e - 1 and kids[e - 1] == (e,):
                e += 1
        if kind is not None and e - i >= options.scan_min_run:
            segs.append((i, e))
            i = e
        else:
            segs.append((i, i + 1))
            i += 1
    return segs


def level_groups(model: Model, segs, options: DynamicsOptions):
    """The segments by the depth of their first body (parents before children within the tree), and
    for each depth the single bodies on revolute or prismatic joints below a parent, when there are at
    least ``options.level_min_bodies`` of them: (levels, {depth: [body, ...]})."""
    depth = [0] * model.n_bodies
    for i, lam in enumerate(model.parents):
        depth[i] = 0 if lam < 0 else depth[lam] + 1
    levels = [[] for _ in range(max(depth) + 1 if depth else 0)]
    for s, e in segs:
        levels[depth[s]].append((s, e))
    groups = {}
    for d, level in enumerate(levels):
        grp = [s for s, e in level if e - s == 1 and model.parents[s] >= 0 and isinstance(model.joints[s], (Revolute, Prismatic))]
        if len(grp) >= options.level_min_bodies:
            groups[d] = grp
    return levels, groups


class TreeTables(NamedTuple):
    """Static index tables of a tree (numpy)."""

    anc: np.ndarray  # (n, n): anc[b, k] = 1 when body k is on the path from the root to b (b included)
    mask: np.ndarray  # (n, nv): mask[b, k] = 1 when DOF k moves body b
    owner: np.ndarray  # (nv,): the body of each DOF
    S: np.ndarray  # (6, nv): the constant motion subspaces in the body frames (zero for the others)


def tree_tables(model: Model) -> TreeTables:
    n, nv = model.n_bodies, model.nv
    anc = np.zeros((n, n))
    for b in range(n):
        anc[b, list(model.ancestors(b))] = 1.0
    owner = np.zeros(nv, dtype=int)
    S = np.zeros((6, nv))
    for i, j in enumerate(model.joints):
        sl = model.v_slice(i)
        owner[sl] = i
        if j.nv and isinstance(j, CONSTANT_SUBSPACE):
            with jax.ensure_compile_time_eval():
                S[:, sl] = np.asarray(j.motion_subspace(jnp.zeros(j.nq)))
    return TreeTables(anc, anc[:, owner], owner, S)
