"""The contract of the tuned dynamics: every variant equals the reference algorithms of
``jaxmbd/dynamics/reference.py`` (RBDA Tables 5.1, 6.2, 7.1 written body by body) on random trees,
values and JVPs.

Tolerance 1e-12 relative to the largest entry: both sides are the same float64 arithmetic associated
differently (static axes, level batches, scans in one frame with lever arms up to half a run, a
batched Gauss-Jordan elimination for the free joints' 6x6 blocks), so they differ by rounding
amplified by the condition number of the articulated inertias; measured below 2e-13 on these trees.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.dynamics import DEFAULT_OPTIONS, DynamicsOptions, dense, reference
from jaxmbd.dynamics.options import ALL_LEVELS_BATCHED, ALL_RUNS_SCANNED, BODY_BY_BODY
from jaxmbd.dynamics.tree import level_groups, segments
from jaxmbd.examples import chain, rod
from jaxmbd.model import ModelBuilder, Placement
from test_dynamics_derivatives import inputs, mixed_joints_model
from urdf_trees import random_urdf

RTOL = 1e-12

VARIANTS = {"default": DEFAULT_OPTIONS, "body by body": BODY_BY_BODY, "runs scanned": ALL_RUNS_SCANNED,
            "levels batched": ALL_LEVELS_BATCHED, "default, autodiff of the recursion": DynamicsOptions(dense_max_nv=0)}


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


def hull_with_floats():
    """A free hull with six hinged and sliding floats, two carrying a second level of arms: level batches."""
    b = ModelBuilder(source="hull with floats")
    b.add_body("hull", body=mbd.Body(mass=1e3, com=(0.5, 0.0, -1.0), inertia=np.array([1e4, 3e4, 3e4])), joint=mbd.Free())
    for k in range(6):
        ang = 2 * np.pi * k / 6
        joint = mbd.Revolute((-np.sin(ang), np.cos(ang), 0.0)) if k % 3 else mbd.Prismatic((0.0, 0.0, 1.0))
        b.add_body(f"float{k}", body=rod(10.0 * (k + 1), 4.0, radius=0.5), joint=joint, parent="hull",
                   placement=Placement(p=np.array([8 * np.cos(ang), 8 * np.sin(ang), 0.5])))
    for k in (1, 4):
        b.add_body(f"arm{k}", body=rod(2.0, 2.0, radius=0.2), joint=mbd.Revolute((1.0, 0.0, 0.0)), parent=f"float{k}",
                   placement=Placement(p=np.array([4.0, 0.0, 0.0])))
    return b.build()


def _trees():
    rng = np.random.default_rng(41)
    fixed, free = (mbd.load_urdf(None, xml=random_urdf(rng, n_links=10), floating=fl) for fl in (False, True))
    return {"urdf-free": free, "hull with floats": hull_with_floats(), "chain12": chain(12), "urdf-fixed": fixed,
            "every joint kind": mixed_joints_model(rng)}


def trees(*default):
    """Random URDF trees, every joint kind, a tree with level batches and a chain long enough to scan;
    those named in ``default`` run in the default suite, the others with ``-m slow`` (each tree costs
    10-25 s of compiles)."""
    return [pytest.param(m, id=k, marks=() if k in default else pytest.mark.slow) for k, m in _trees().items()]


@functools.partial(jax.jit, static_argnums=0)
def value_and_tangent(fd, model, args, tangents):
    return jax.jvp(lambda *a: fd(model, *a), args, tangents)


@pytest.mark.parametrize("model", trees("chain12"))  # scans and the variants; the hull with floats (level batches, free joints: 27 s) with -m slow
def test_every_forward_dynamics_variant_equals_the_reference_aba(model):
    rng = np.random.default_rng(5)
    args = inputs(model, rng)  # q, v, τ, f_ext, extra inertia
    tangents = tuple(jnp.asarray(rng.normal(size=x.shape)) for x in args)
    tangents = tangents[:4] + (tangents[4] + jnp.swapaxes(tangents[4], -1, -2),)  # inertias stay symmetric
    ref_value, ref_tangent = value_and_tangent(reference.aba, model, args, tangents)
    routes = set()
    for name, options in VARIANTS.items():
        segs = segments(model, options)
        route = (dense.applies(model, options), tuple(segs), tuple(level_groups(model, segs, options)[1]))
        if route in routes:  # this variant takes the same way through this tree as one already checked
            continue
        routes.add(route)
        fd = functools.partial(mbd.forward_dynamics, options=options)
        value, tangent = value_and_tangent(fd, model, args, tangents)
        assert rel(value, ref_value) < RTOL, (name, rel(value, ref_value))
        assert rel(tangent, ref_tangent) < RTOL, (name, rel(tangent, ref_tangent))
    assert len(routes) >= 2  # the variants do take different routes through this tree


@pytest.mark.slow  # each of these relations has its own test in the default suite (test_dynamics_pinocchio.py)
@pytest.mark.parametrize("model", trees())
def test_inverse_dynamics_mass_matrix_and_gravity_agree_with_each_other(model):
    """RNEA(ABA(τ)) = τ; M from the CRBA equals Ham et al.'s velocity transformation and M v̇ + h = τ;
    the tuned gravity torques equal RNEA(q, 0, 0); the mass-matrix solve of the dense rule equals the
    ABA.  1e-12 relative, as above."""
    q, v, tau, fext, extra = inputs(model, np.random.default_rng(6))

    @jax.jit
    def evaluate(q, v, tau, fext, extra):
        a = reference.aba(model, q, v, tau, fext, extra)
        z = jnp.zeros_like(v)
        return dict(a=a, tau=reference.rnea(model, q, v, a, fext, extra), M=reference.crba(model, q, extra),
                    M0=reference.crba(model, q), Mvt=mbd.mass_matrix_velocity_transformation(model, q),
                    h=reference.rnea(model, q, v, z, fext, extra), g=mbd.dynamics.gravity_torques(model, q),
                    g_rnea=reference.rnea(model, q, z, z), dense=dense.dense_solve(model, q, v, tau, fext, extra)[0])

    r = evaluate(q, v, tau, fext, extra)
    assert rel(r["tau"], tau) < RTOL
    assert rel(r["Mvt"], r["M0"]) < RTOL
    # M a + h = τ multiplies back an acceleration solved from M: its rounding grows with M's condition
    # number (the hull's tonnes beside the floats' kilograms), as no other relation here does
    cond = float(np.linalg.cond(np.asarray(r["M"])))
    assert rel(r["M"] @ r["a"] + r["h"], tau) < max(RTOL, 10 * cond * np.finfo(float).eps)
    assert rel(r["g"], r["g_rnea"]) < RTOL
    assert rel(r["dense"], r["a"]) < RTOL
