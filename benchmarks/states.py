"""Benchmark models and random states (one fixed seed, shared by every tool)."""

from __future__ import annotations

import numpy as np

from jaxmbd.examples import chain, crane_vessel
from jaxmbd.joints import Free, Spherical

SEED = 20240601


def models():
    """name -> Model; chain10 is there for the O(n) exponent between 10 and 100 bodies."""
    return {
        "crane8": crane_vessel(),
        "chain10": chain(10),
        "chain30": chain(30),
        "chain100": chain(100),
    }


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
