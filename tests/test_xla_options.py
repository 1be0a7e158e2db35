"""The XLA options jaxmbd sets: they change speed, never results."""

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd import _xla, dynamics


def test_forward_options_compile_and_leave_results_unchanged():
    """forward_dynamics_jit (forward options) against a plain jit on a tree of every joint kind:
    equal to 1e-12 (the same operations; only the order in which kernels run differs)."""
    from test_dynamics_derivatives import inputs, mixed_joints_model

    rng = np.random.default_rng(3)
    model = mixed_joints_model(rng)
    q, v, tau, fext, _ = inputs(model, rng)
    a = dynamics.forward_dynamics_jit(model, q, v, tau, fext)
    b = jax.jit(mbd.forward_dynamics)(model, q, v, tau, fext)
    assert np.all(np.isfinite(a))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_options_off_with_the_environment_switch():
    """JAXMBD_XLA_DEFAULTS=0 leaves every option to XLA: neither XLA_FLAGS nor the per-program options."""
    code = ("import os, jaxmbd; from jaxmbd import _xla; "
            "print(repr(_xla.FORWARD_JIT_OPTIONS), repr(os.environ.get('XLA_FLAGS', '')), os.environ.get('PJRT_NPROC'))")
    env = dict(os.environ, JAXMBD_XLA_DEFAULTS="0", XLA_FLAGS="")
    env.pop("PJRT_NPROC", None)
    env.pop("NPROC", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["{}", "''", "None"]


def _runtime_threads(env):
    """PJRT_NPROC after ``import jaxmbd`` and the threads of XLA:CPU's pool that ran a program (Linux names
    them tf_XLAEigen; None where /proc does not list a process's threads)."""
    code = ("import os, jaxmbd, jax.numpy as jnp; (jnp.ones(3) + 1).block_until_ready(); d = '/proc/self/task'; "
            "n = sum(open(f'{d}/{t}/comm').read().strip() == 'tf_XLAEigen' for t in os.listdir(d)) "
            "if os.path.isdir(d) else None; print(os.environ.get('PJRT_NPROC'), n)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    return out[0], None if out[1] == "None" else int(out[1])


def test_runtime_threads_set_at_import_unless_named():
    """import jaxmbd runs XLA:CPU's programs on one thread (PJRT_NPROC=1) and leaves a PJRT_NPROC the user set."""
    env = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "NPROC", "JAXMBD_XLA_DEFAULTS")}
    nproc, threads = _runtime_threads(env)
    if not _xla._applies():
        assert nproc == "None"
        return
    assert nproc == "1"
    assert threads in (None, 1)
    nproc, threads = _runtime_threads(dict(env, PJRT_NPROC="2"))
    assert nproc == "2"
    assert threads in (None, 2)


def test_flags_added_at_import_unless_named():
    """import jaxmbd adds its XLA_FLAGS entries (on the measured jaxlib versions) and leaves an option the
    user's XLA_FLAGS already names as the user set it."""
    code = "import os, jaxmbd; print(os.environ['XLA_FLAGS'])"
    env = dict(os.environ, XLA_FLAGS="--xla_cpu_multi_thread_eigen=true")
    env.pop("JAXMBD_XLA_DEFAULTS", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    if not _xla._applies():
        assert out == ["--xla_cpu_multi_thread_eigen=true"]
        return
    assert out == ["--xla_cpu_multi_thread_eigen=true", "--xla_cpu_experimental_ynn_fusion_type="]


def test_forward_jit_at_the_top_level_and_nested():
    """Options go to top-level programs only (XLA refuses them on a nested jit): the same function runs
    alone, inside a user's jit and under grad."""
    f = _xla.forward_jit(lambda x, n: jnp.sin(x) * n)
    # a Python int passes as static, as with eqx.filter_jit; 1e-15: XLA's sin and NumPy's may round differently
    np.testing.assert_allclose(float(f(jnp.asarray(2.0), 3)), 3 * np.sin(2.0), rtol=1e-15)
    np.testing.assert_allclose(float(jax.jit(lambda x: f(x, 3))(jnp.asarray(2.0))), 3 * np.sin(2.0), rtol=1e-15)
    np.testing.assert_allclose(jax.grad(lambda x: f(x, 3))(2.0), 3 * np.cos(2.0), rtol=1e-15)
    from test_dynamics_derivatives import inputs, mixed_joints_model

    rng = np.random.default_rng(5)
    model = mixed_joints_model(rng)
    q, v, tau, fext, _ = inputs(model, rng)
    g = jax.jit(jax.grad(lambda x: dynamics.forward_dynamics_jit(model, q.at[-1].add(x), v, tau, fext).sum()))
    assert np.isfinite(float(g(0.1)))


def test_forward_jit_inside_a_trace_that_reaches_it_by_closure():
    """Inside a user's jit whose values reach the function only by closure, no argument is traced, yet the
    call is staged: XLA would refuse the options there, so the plain program runs."""
    f = _xla.forward_jit(lambda x, n: jnp.sin(x) * n)
    x = jnp.asarray(2.0)
    out = jax.jit(lambda y: f(x, 3) + y)(1.0)
    np.testing.assert_allclose(float(out), 3 * np.sin(2.0) + 1.0, rtol=1e-15)
