"""Derivatives of forward dynamics on small trees: the custom JVP rule (inverse dynamics and the
mass matrix in the world frame, ``DynamicsOptions.dense_max_nv``) against automatic differentiation of the
articulated-body recursion itself (forward mode) and against its own transpose (reverse mode), with
respect to the state, τ, external wrenches, the extra inertia and the model's own arrays.

Tolerance 1e-8 relative: both are exact derivatives in float64; they differ by rounding, amplified
by the condition number of M (below 1e4 for these trees) and the Jacobians' entries.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.dynamics import DEFAULT_OPTIONS, DynamicsOptions, dense
from jaxmbd.model import Body, ModelBuilder, Placement
from urdf_trees import random_urdf

RTOL = 1e-8

# the tuned ABA differentiated by autodiff through its own recursion (no dense rule)
recursion = functools.partial(mbd.forward_dynamics, options=DynamicsOptions(dense_max_nv=0))


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


def inputs(model, rng):
    q = np.array(model.neutral(), dtype=float)
    for i, j in enumerate(model.joints):
        s = slice(model.q_start[i], model.q_start[i] + j.nq)
        if j.nq == 7:
            quat = rng.normal(size=4)
            q[s] = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
        elif j.nq == 4:
            quat = rng.normal(size=4)
            q[s] = quat / np.linalg.norm(quat)
        else:
            q[s] = rng.uniform(-np.pi, np.pi, j.nq)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    fext = rng.normal(size=(model.n_bodies, 6))
    A = rng.normal(size=(model.n_bodies, 6, 6)) * 0.3
    extra = np.einsum("nij,nkj->nik", A, A)
    return tuple(jnp.asarray(x) for x in (q, v, tau, fext, extra))


def random_body(rng):
    d = rng.uniform(0.2, 1.0, 3)
    return Body(mass=rng.uniform(1.0, 3.0), com=rng.uniform(-0.3, 0.3, 3), inertia=np.diag([d[1] + d[2], d[0] + d[2], d[0] + d[1]]))


def random_placement(rng):
    return Placement.from_xyz_rpy(rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3))


def mixed_joints_model(rng):
    """A floating base carrying universal, spherical, cylindrical, revolute and prismatic joints."""
    body, pl = functools.partial(random_body, rng), functools.partial(random_placement, rng)
    b = ModelBuilder()
    b.add_body("base", body=body(), joint=mbd.Free())
    b.add_body("u", body=body(), joint=mbd.Universal((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), parent="base", placement=pl())
    b.add_body("s", body=body(), joint=mbd.Spherical(), parent="u", placement=pl())
    b.add_body("c", body=body(), joint=mbd.Cylindrical((0.0, 1.0, 0.0)), parent="base", placement=pl())
    b.add_body("r", body=body(), joint=mbd.Revolute((0.0, 0.6, 0.8)), parent="c", placement=pl())
    b.add_body("p", body=body(), joint=mbd.Prismatic((1.0, 0.0, 0.0)), parent="r", placement=pl())
    b.add_body("f", body=body(), joint=mbd.Fixed(), parent="p", placement=pl())
    return b.build()


def models():
    """Every joint kind on one tree (default suite), and a random URDF tree (``-m slow``: 30 s of compiles)."""
    rng = np.random.default_rng(7)
    return [pytest.param("mixed", mixed_joints_model(rng), id="mixed"),
            pytest.param("urdf", mbd.load_urdf(None, xml=random_urdf(rng, n_links=6), floating=True), id="urdf",
                         marks=pytest.mark.slow)]


@pytest.mark.parametrize("name, model", models())
def test_custom_jvp_equals_autodiff_of_the_recursion(name, model):
    assert dense.applies(model, DEFAULT_OPTIONS)
    rng = np.random.default_rng(1)
    q, v, tau, fext, extra = inputs(model, rng)
    args = (model, q, v, tau, fext, extra)

    # the mass-matrix solve used inside the rule equals the ABA value
    assert rel(jax.jit(dense.dense_solve)(*args)[0], jax.jit(recursion)(*args)) < 1e-12

    # forward mode along random directions of everything at once; the model's arrays and the extra
    # inertia along directions that keep them what they are: rotations stay rotations (dR = R ω̂) and
    # inertias symmetric (the two algorithms extend differently off those sets)
    dmodel = model_tangent(model, rng)
    for k in range(3):
        t_args = (dmodel,) + tuple(jnp.asarray(rng.normal(size=x.shape)) for x in args[1:])
        t_args = t_args[:5] + (sym(t_args[5]),)
        assert rel(jvp(mbd.forward_dynamics, args, t_args), jvp(recursion, args, t_args)) < RTOL, name

    # reverse mode (JAX transposes the rule's linear map): the VJP is the adjoint of the JVP,
    # <w, J t> = <Jᵀ w, t> along the last tangent, to rounding
    w = jnp.asarray(rng.normal(size=model.nv))
    lhs = jnp.dot(w, jvp(mbd.forward_dynamics, args, t_args))
    cot = jax.jit(lambda a: jax.vjp(mbd.forward_dynamics, *a)[1](w))(args)
    rhs = sum(jnp.sum(a * b) for a, b in zip(jax.tree_util.tree_leaves(cot), jax.tree_util.tree_leaves(t_args)))
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs)), name


@functools.partial(jax.jit, static_argnums=0)
def jvp(fd, args, tangents):
    return jax.jvp(fd, args, tangents)[1]


def sym(A):
    return A + jnp.swapaxes(A, -1, -2)


def model_tangent(model, rng):
    n = model.n_bodies
    W = np.stack([np.cross(np.eye(3), w).T * -1.0 for w in rng.normal(size=(n, 3))])  # ω̂
    return jax.tree_util.tree_map(lambda x: x, model).__class__(
        **{**{f: getattr(model, f) for f in model.__dataclass_fields__},
           "placement_R": model.placement_R @ jnp.asarray(W),
           "placement_p": jnp.asarray(rng.normal(size=(n, 3))),
           "inertia": sym(jnp.asarray(rng.normal(size=(n, 6, 6)))),
           "gravity": jnp.asarray(rng.normal(size=3))})


def test_rule_is_used_under_vmap_and_without_optional_inputs():
    """vmapped tangents (forward-mode gradients of several parameters at once) and f_ext / extra
    inertia left out (None) take the same rule."""
    model = mbd.load_urdf(None, xml=random_urdf(np.random.default_rng(3), n_links=5), floating=True)
    q, v, tau, _, _ = inputs(model, np.random.default_rng(4))
    T = jnp.asarray(np.random.default_rng(5).normal(size=(3, model.nv)))

    @functools.partial(jax.jit, static_argnums=0)
    def tangents(fd):
        return jax.vmap(lambda dt: jax.jvp(lambda t: fd(model, q, v, t, None, None), (tau,), (dt,))[1])(T)

    assert rel(tangents(mbd.forward_dynamics), tangents(recursion)) < RTOL


def test_rule_value_from_the_recursion_or_the_factor(monkeypatch):
    """The rule's value is the recursion's by default (reverse mode's forward pass needs only the value,
    and the recursion is the cheaper one) and, within ``dense.dense_value()`` (forward-mode gradients),
    the solve with the factor its tangents use (counted: one triangular solve pair for the tangents, one
    more for the value).  Both v̇ to 1e-12, the tangents to RTOL, by the closed-form rule (the state) and
    the general one (the model)."""
    solves = []
    solve = dense.cholesky_solve
    monkeypatch.setattr(dense, "cholesky_solve", lambda *a: solves.append(1) or solve(*a))
    model = constant_subspace_model(np.random.default_rng(41))
    q, v, tau, fext, extra = inputs(model, np.random.default_rng(42))
    rng = np.random.default_rng(43)
    t = tuple(jnp.asarray(rng.normal(size=x.shape)) for x in (q, v, tau, fext))
    dmodel = model_tangent(model, rng)

    def both():
        state = jax.jvp(lambda *s: mbd.forward_dynamics(model, *s, extra), (q, v, tau, fext), t)
        design = jax.jvp(lambda m: mbd.forward_dynamics(m, q, v, tau, fext, extra), (model,), (dmodel,))
        return state, design

    plain = jax.jit(mbd.forward_dynamics)(model, q, v, tau, fext, extra)
    (a, da), (b, db) = jax.jit(both)()
    assert len(solves) == 2  # the two rules' tangents
    with dense.dense_value():
        (a2, da2), (b2, db2) = jax.jit(lambda: both())()
    assert len(solves) == 2 + 4  # and their values
    for x in (a, b, a2, b2):
        assert rel(x, plain) < 1e-12
    assert rel(da2, da) < RTOL and rel(db2, db) < RTOL


def test_cross_products_tangents_take_the_form_of_the_mode(monkeypatch):
    """A cross product's tangent is a product with the Levi-Civita symbol by default (its transpose, reverse
    mode's, is a multiply and a sum) and is written component by component within ``dense.dense_value()``
    (forward-mode programs, where it fuses with its neighbours): counted, and the same tangent and cotangent
    either way, equal to NumPy's da x b + a x db to 1e-15 (roundoff of a few products)."""
    from jaxmbd import spatial

    rng = np.random.default_rng(61)
    a, b, da, db, ct = (jnp.asarray(rng.normal(size=(5, 3))) for _ in range(5))
    calls = []
    levi_civita = spatial._cross_sum
    monkeypatch.setattr(spatial, "_cross_sum", lambda *x: calls.append(1) or levi_civita(*x))

    def derivatives():
        tangent = jax.jvp(spatial.cross, (a, b), (da, db))[1]
        cotangent = jax.vjp(spatial.cross, a, b)[1](ct)
        return tangent, cotangent

    default = derivatives()
    assert len(calls) == 2 + 2  # the tangent's two terms, and the two the VJP linearises
    with dense.dense_value():
        forward = derivatives()
    assert len(calls) == 4
    expected = np.cross(np.asarray(da), np.asarray(b)) + np.cross(np.asarray(a), np.asarray(db))
    for tangent in (default[0], forward[0]):
        assert rel(tangent, expected) < 1e-15
    for x, y in zip(forward[1], default[1]):
        assert rel(x, y) < 1e-15


def test_rule_with_the_kinematics_given():
    """A right-hand side hands the dynamics the kinematics its force elements read; the closed-form rule
    then takes the bodies' world placements from them instead of composing the joints' again: the value,
    forward mode and reverse mode equal those without (RTOL), the kinematics' own tangents not counted
    twice."""
    from jaxmbd.kinematics import Kinematics

    model = constant_subspace_model(np.random.default_rng(51))
    q, v, tau, fext, extra = inputs(model, np.random.default_rng(52))
    rng = np.random.default_rng(53)
    t = tuple(jnp.asarray(rng.normal(size=x.shape)) for x in (q, v, tau, fext))
    w = jnp.asarray(rng.normal(size=model.nv))

    def fd(given):
        def f(q, v, tau, fext):
            kin = Kinematics.compute(model, q, v) if given else None
            return mbd.forward_dynamics(model, q, v, tau, fext, extra, kinematics=kin)
        return f

    @functools.partial(jax.jit, static_argnums=0)
    def derivatives(given):
        value, tangent = jax.jvp(fd(given), (q, v, tau, fext), t)
        return value, tangent, jax.grad(lambda *s: w @ fd(given)(*s), argnums=(0, 1, 2, 3))(q, v, tau, fext)

    for ours, ref in zip(jax.tree_util.tree_leaves(derivatives(True)), jax.tree_util.tree_leaves(derivatives(False))):
        assert rel(ours, ref) < RTOL


@pytest.mark.slow  # 13 s; the rule against autodiff of the recursion stays in the default suite
def test_rule_with_some_inputs_held():
    """Unperturbed inputs reach the rule as symbolic zeros and are held constant: the gradient in q
    alone (reverse mode, the model held) and the derivative in the model's inertias alone (forward
    mode, the state held) equal those of the recursion."""
    model = mixed_joints_model(np.random.default_rng(21))
    q, v, tau, fext, extra = inputs(model, np.random.default_rng(22))
    w = jnp.asarray(np.random.default_rng(23).normal(size=model.nv))
    assert dense.applies(model, DEFAULT_OPTIONS)

    @functools.partial(jax.jit, static_argnums=0)
    def derivatives(fd):
        g = jax.grad(lambda q: w @ fd(model, q, v, tau, fext, extra))(q)
        d = jax.jvp(lambda s: fd(dataclasses.replace(model, inertia=model.inertia * s), q, v, tau, fext, None), (1.0,), (1.0,))[1]
        return g, d

    for ours, ref in zip(derivatives(mbd.forward_dynamics), derivatives(recursion)):
        assert rel(ours, ref) < RTOL


def constant_subspace_model(rng):
    """Every joint kind whose motion subspace is constant (free, spherical, cylindrical, revolute,
    prismatic, fixed) on a branching tree: the state derivatives take the closed-form rule."""
    body, pl = functools.partial(random_body, rng), functools.partial(random_placement, rng)
    b = ModelBuilder()
    b.add_body("base", body=body(), joint=mbd.Free())
    b.add_body("s", body=body(), joint=mbd.Spherical(), parent="base", placement=pl())
    b.add_body("r2", body=body(), joint=mbd.Revolute((1.0, 0.0, 0.0)), parent="s", placement=pl())
    b.add_body("c", body=body(), joint=mbd.Cylindrical((0.0, 1.0, 0.0)), parent="base", placement=pl())
    b.add_body("r", body=body(), joint=mbd.Revolute((0.0, 0.6, 0.8)), parent="c", placement=pl())
    b.add_body("p", body=body(), joint=mbd.Prismatic((1.0, 0.0, 0.0)), parent="r", placement=pl())
    b.add_body("f", body=body(), joint=mbd.Fixed(), parent="p", placement=pl())
    return b.build()


@pytest.mark.slow  # 20 s; the rule against autodiff of the recursion stays in the default suite
def test_closed_form_rule_for_the_state(monkeypatch):
    """Tangents of q, v, τ and f_ext with the model and the extra inertia held go through the
    closed-form rule (counted): forward mode equals autodiff of the recursion along each input alone and
    all at once (the quaternion tangents unnormalised: the joints normalise their quaternions, so both
    see the same rotation), and reverse mode is its adjoint, to rounding."""
    model = constant_subspace_model(np.random.default_rng(31))
    q, v, tau, fext, extra = inputs(model, np.random.default_rng(32))
    assert dense.applies(model, DEFAULT_OPTIONS)
    calls = []
    rule = dense._rigid_motion_jvp
    monkeypatch.setattr(dense, "_rigid_motion_jvp", lambda *a: calls.append(1) or rule(*a))
    rng = np.random.default_rng(33)
    state = (q, v, tau, fext)
    t = tuple(jnp.asarray(rng.normal(size=x.shape)) for x in state)
    zeros = tuple(jnp.zeros_like(x) for x in t)

    def fd_of(fd):
        return lambda *s: fd(model, *s, extra)

    for k in range(5):  # each input alone, then all together
        tk = t if k == 4 else zeros[:k] + (t[k],) + zeros[k + 1:]
        ours = jax.jit(lambda tk: jax.jvp(fd_of(mbd.forward_dynamics), state, tk)[1])(tk)
        ref = jax.jit(lambda tk: jax.jvp(fd_of(recursion), state, tk)[1])(tk)
        assert rel(ours, ref) < RTOL, k
    assert calls
    w = jnp.asarray(rng.normal(size=model.nv))
    lhs = jnp.dot(w, jax.jit(lambda: jax.jvp(fd_of(mbd.forward_dynamics), state, t)[1])())
    cot = jax.jit(lambda: jax.vjp(fd_of(mbd.forward_dynamics), *state)[1](w))()
    rhs = sum(jnp.sum(a * b) for a, b in zip(cot, t))
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))


@pytest.mark.slow  # 11 s; the rule against autodiff of the recursion stays in the default suite
def test_gravity_torques_on_every_joint_kind():
    """``gravity_torques`` = RNEA(q, 0, 0) on the mixed tree (the universal joint's q-dependent motion
    subspace takes the per-joint path, the others the constant selection tensor), eagerly and under jit,
    and its reverse-mode derivative in q equals that of the RNEA (both to 1e-10: the same sums in another
    order)."""
    model = mixed_joints_model(np.random.default_rng(11))
    q = inputs(model, np.random.default_rng(12))[0]
    z = jnp.zeros(model.nv)
    ref = mbd.inverse_dynamics(model, q, z, z)
    assert rel(mbd.dynamics.gravity_torques(model, q), ref) < 1e-10
    assert rel(jax.jit(lambda q: mbd.dynamics.gravity_torques(model, q))(q), ref) < 1e-10
    w = jnp.asarray(np.random.default_rng(13).normal(size=model.nv))
    g_ours = jax.jit(jax.grad(lambda q: w @ mbd.dynamics.gravity_torques(model, q)))(q)
    g_ref = jax.jit(jax.grad(lambda q: w @ mbd.inverse_dynamics(model, q, z, z)))(q)
    assert rel(g_ours, g_ref) < 1e-10


def test_rotation_rules_match_autodiff():
    """``quat_normalise``, ``quat_to_matrix`` and ``matrix_to_rpy`` carry JVP rules written out (one
    linear map each); they must equal autodiff of the plain formulas, for drifted (non-unit)
    quaternions, batched, to first and second order, and the pitch must have no derivative where the
    clip holds it at ±π/2.  Tolerance 1e-12: exact derivatives in float64, unit-sized entries."""
    from jaxmbd import spatial

    def normalise(q):
        return q / jnp.linalg.norm(q, axis=-1, keepdims=True)

    def to_matrix(q):
        return spatial._unit_quat_to_matrix(normalise(q))

    def to_rpy(R):
        return jnp.stack([jnp.arctan2(R[..., 2, 1], R[..., 2, 2]), jnp.arcsin(jnp.clip(-R[..., 2, 0], -1.0, 1.0)),
                          jnp.arctan2(R[..., 1, 0], R[..., 0, 0])], -1)

    rng = np.random.default_rng(7)
    q = jnp.asarray(rng.normal(size=(6, 4)) * 1.7)
    dq = jnp.asarray(rng.normal(size=(6, 4)))
    R = to_matrix(q)
    dR = jnp.asarray(rng.normal(size=(6, 3, 3)))
    for ours, plain, x, dx in ((spatial.quat_normalise, normalise, q, dq), (spatial.quat_to_matrix, to_matrix, q, dq),
                               (spatial.matrix_to_rpy, to_rpy, R, dR)):
        # each pair in one compiled program (op by op, every operation of the rules compiled on its own)
        y1, t1 = jax.jit(lambda x, dx, f=ours: jax.jvp(f, (x,), (dx,)))(x, dx)
        y2, t2 = jax.jit(lambda x, dx, f=plain: jax.jvp(f, (x,), (dx,)))(x, dx)
        assert rel(y1, y2) < 1e-14 and rel(t1, t2) < 1e-12, ours.__name__

    def chain(f1, f2, f3):
        return lambda q: jnp.sum(jnp.sin(f3(f2(f1(q)))))

    x = q[0]
    for d in (jax.grad, jax.hessian):
        assert rel(jax.jit(d(chain(spatial.quat_normalise, spatial.quat_to_matrix, spatial.matrix_to_rpy)))(x),
                   jax.jit(d(chain(normalise, to_matrix, to_rpy)))(x)) < 1e-12
    # beyond the clip (a matrix that is not quite a rotation): the pitch holds, its derivative is 0
    Rc = jnp.asarray(spatial.rpy_to_matrix(jnp.array([0.1, np.pi / 2, 0.2]))).at[2, 0].set(-1.0 - 1e-9)
    assert float(jax.jvp(spatial.matrix_to_rpy, (Rc,), (jnp.ones((3, 3)),))[1][1]) == 0.0
