"""Benchmark models and random states (one fixed seed, shared by every tool)."""

from __future__ import annotations

import numpy as np

from jaxmbd.examples import chain, crane_vessel, rod
from jaxmbd.joints import Free, Revolute, Spherical
from jaxmbd.model import Body, ModelBuilder, Placement

SEED = 20240601


def models():
    """name -> Model; chain10 is there for the O(n) exponent between 10 and 100 bodies; floats32 is a
    wide tree (a hull on a free joint with 32 floats hinged around it, an array of wave-energy floats)."""
    return {
        "crane8": crane_vessel(),
        "chain10": chain(10),
        "chain30": chain(30),
        "chain100": chain(100),
        "floats32": hinged_floats(32),
    }


def hinged_floats(n: int):
    """A 2,000 t hull on a free joint with n 40 t floats (5 m arms) hinged on a 20 m circle around it."""
    b = ModelBuilder(source=f"floats{n}")
    b.add_body("hull", body=Body(mass=2e6, com=(0.0, 0.0, -1.0), inertia=np.array([4e7, 1e8, 1e8])), joint=Free(),
               joint_name="hull")
    for k in range(n):
        ang = 2 * np.pi * k / n
        # each arm along its hinge frame's x, pointing away from the hull; hinge about the frame's y
        pl = Placement.from_xyz_rpy((20 * np.cos(ang), 20 * np.sin(ang), 0.0), (0.0, 0.0, ang))
        b.add_body(f"float{k}", body=rod(4e4, 5.0, radius=1.5), joint=Revolute((0.0, 1.0, 0.0)), parent="hull",
                   placement=pl, joint_name=f"hinge{k}")
    return b.build()


def random_states(model, n: int, seed: int = SEED):
    """(Q, V, T) float64 numpy arrays of shape (n, nq), (n, nv), (n, nv).

    Joint angles uniform in [-π, π], quaternions unit (normalised Gaussian),
    free-joint positions N(0, 1); v and τ standard normal (the timing of the
    recursions does not depend on the values).
    """
    rng = np.random.default_rng(seed)
    Q = np.zeros((n, model.nq))
    for i, j in enumerate(model.joints):
        s = slice(model.q_start[i], model.q_start[i] + j.nq)
        if isinstance(j, Free):
            quat = rng.normal(size=(n, 4))
            Q[:, s] = np.concatenate([rng.normal(size=(n, 3)), quat / np.linalg.norm(quat, axis=1, keepdims=True)], 1)
        elif isinstance(j, Spherical):
            quat = rng.normal(size=(n, 4))
            Q[:, s] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        elif j.nq:
            Q[:, s] = rng.uniform(-np.pi, np.pi, size=(n, j.nq))
    V = rng.normal(size=(n, model.nv))
    T = rng.normal(size=(n, model.nv))
    return Q, V, T
