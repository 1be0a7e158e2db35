"""XLA options jaxmbd sets: XLA_FLAGS entries and the CPU runtime's thread count at import, and compiler
options for the programs it compiles itself.  All only for the jaxlib versions they were measured on
(an unknown option is an error to XLA), and none where ``JAXMBD_XLA_DEFAULTS=0``.

At import (:func:`set_xla_flags`), each unless XLA_FLAGS already names the option:

- XLA's CPU compiler (jaxlib 0.10) hands some reductions and small matrix products to the YNNPACK
  library; on the 6x6 and 13x13 arrays of multibody dynamics those kernels cost 5-20x XLA's own
  (BENCHMARKS.md).  ``--xla_cpu_experimental_ynn_fusion_type=`` switches them off.
- The matrix products XLA leaves as ``dot`` kernels (the mass matrix, the tree's subtree sums, the
  radiation state space; batched over tangents in forward-mode gradients) run in Eigen, which by
  default splits each over the thread pool: for products of a few hundred numbers the hand-off costs
  more than the product.  ``--xla_cpu_multi_thread_eigen=false`` runs them on the calling thread:
  the crane vessel's gradients 15 % (reverse mode) and 30 % (forward mode) faster, forward
  simulations, single or batched, unchanged (benchmarks/NOTES.md, "Eigen's thread pool").

The CPU runtime's threads (:func:`set_runtime_threads`, at import, unless ``PJRT_NPROC`` or ``NPROC`` is
already in the environment): XLA:CPU runs a program's kernels on a pool of as many threads as the
process may use cores, and hands independent kernels to other threads of the pool.  Each hand-off wakes a
thread on another core, which costs microseconds, and the kernels of multibody dynamics cost tens of
nanoseconds.  ``PJRT_NPROC=1`` gives the pool one thread, so a program runs its kernels one after another
on one core.  On the 2-core Intel Xeon of BENCHMARKS.md (2026-12-07, benchmarks/NOTES.md, "One thread
per process"): the crane vessel's forward run 0.12-0.15 -> 0.076 s and its forward-mode gradient
0.38-0.41 -> 0.25 s (200 s, XLA's default schedule), reverse mode 0.40-0.41 -> 0.38-0.39 s, batches of 16
to 256 realisations on one core at most 5 % slower than on two threads, mostly faster; on the 16-core host of
BENCHMARKS_gpu.md a batch of 100 gained nothing over one realisation, so more threads are not more speed
for these programs.  Several cores are used by several processes (``--num-processes``, a
cluster's workers), each on one.  Compiles keep their own threads.

Per program (``FORWARD_JIT_OPTIONS``): XLA:CPU runs a compiled program as a sequence of kernels
("thunks"); independent kernels may run concurrently on its thread pool.  Its default instruction schedule is the concurrency-optimised one,
which keeps independent kernels apart so that they can overlap.  A forward simulation is a loop of
hundreds of tiny kernels per right-hand side (6x6 spatial algebra), where handing kernels between
threads costs more than it saves: with the memory-optimised schedule, one crane8 forward-dynamics
evaluation in a ``lax.scan`` costs 9.5-10 µs instead of 17, an RK4 step of the crane vessel 60 µs
instead of 88 (benchmarks/NOTES.md, "The scheduler").  Vmapped batches go the other way (256
realisations of the crane vessel about 25 % slower), and so does a reverse-mode gradient, so the
option is set per program, on the single-trajectory forward programs (``simulate`` of one
realisation, ``forward_dynamics_jit``, the scenario segments) and on forward-mode gradients
(``optim.tuning.gradient_jit``: 5-7 % faster on one thread), not in XLA_FLAGS.  Those figures were
measured with the pool of two threads; on one thread (above) the schedules differ less.

``FORWARD_JIT_OPTIONS`` is the ``compiler_options`` dict for ``jax.jit`` (empty where not applied).

Programs a job runs once or a few times (``ONE_OFF_JIT_OPTIONS``: the static equilibrium's Newton step, an
output evaluation at one state) are compiled with LLVM's optimisation level 0: their run time is a few
milliseconds whatever the level, their compile 30-45 % shorter (the floating crane's Newton step 3.6 -> 1.9-2.5 s,
same residual; BENCHMARKS.md, "The first result from an empty compilation cache").
"""

from __future__ import annotations

import functools
import os

import equinox as eqx
import jax
import jax.numpy as jnp
import jaxlib

_MEASURED = ((0, 10), (0, 11))  # jaxlib versions, [from, to): an unknown option is an error at compile


def _applies() -> bool:
    version = tuple(int(x) for x in jaxlib.__version__.split(".")[:2] if x.isdigit())
    return os.environ.get("JAXMBD_XLA_DEFAULTS", "1") != "0" and _MEASURED[0] <= version < _MEASURED[1]


XLA_FLAGS_SET = ("--xla_cpu_experimental_ynn_fusion_type=", "--xla_cpu_multi_thread_eigen=false")


def set_xla_flags():
    """Add :data:`XLA_FLAGS_SET` to XLA_FLAGS (called by ``import jaxmbd``, before the CPU backend
    starts), each unless XLA_FLAGS already names its option."""
    if not _applies():
        return
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in XLA_FLAGS_SET:
        if flag.split("=")[0] not in flags:
            flags = (flags + " " + flag).strip()
    os.environ["XLA_FLAGS"] = flags


RUNTIME_THREADS = 1  # PJRT_NPROC: threads of XLA:CPU's pool that runs compiled programs


def set_runtime_threads():
    """Set ``PJRT_NPROC`` to :data:`RUNTIME_THREADS` (called by ``import jaxmbd``, before the CPU backend
    starts) unless ``PJRT_NPROC`` or ``NPROC`` (which XLA also reads) is already in the environment."""
    if not _applies() or "PJRT_NPROC" in os.environ or "NPROC" in os.environ:
        return
    os.environ["PJRT_NPROC"] = str(RUNTIME_THREADS)


FORWARD_JIT_OPTIONS = {"xla_cpu_scheduler_type": "CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"} if _applies() else {}
ONE_OFF_JIT_OPTIONS = {"xla_backend_optimization_level": 0} if _applies() else {}


def _top_level_on_cpu(args) -> bool:
    """True when no argument is being traced (compiler options are accepted by a top-level jit only:
    the functions wrapped here take every array they use as an argument) with the CPU as the default
    backend (the option is XLA:CPU's; it was not measured elsewhere)."""
    traced = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(args))
    return not traced and jax.default_backend() == "cpu"


def forward_jit(fun=None, *, jit=eqx.filter_jit, options=None, **kwargs):
    """``jit(fun)`` (``eqx.filter_jit`` or ``jax.jit``) with :data:`FORWARD_JIT_OPTIONS` (or ``options``) where
    it is called at the top level, without them inside another trace (``jax.grad``, a user's ``jax.jit``):
    XLA takes compiler options from the outermost program only.  Usable as a decorator."""
    if fun is None:
        return lambda f: forward_jit(f, jit=jit, options=options, **kwargs)
    options = FORWARD_JIT_OPTIONS if options is None else options
    plain = jit(fun, **kwargs)
    if not options:
        return plain
    tuned = jit(fun, compiler_options=dict(options), **kwargs)

    @functools.wraps(fun)
    def call(*args, **kw):
        if not _top_level_on_cpu((args, kw)):
            return plain(*args, **kw)
        try:
            return tuned(*args, **kw)
        except ValueError as exc:  # staged inside another trace whose values reach it only by closure
            if "compiler_options" not in str(exc):
                raise
            return plain(*args, **kw)

    return call


def strong_types(tree):
    """``tree`` with every weakly typed concrete JAX array (``jnp.asarray(2e4)``: a Python number's
    type) made strongly typed: floating ones in the floating type of the tree's strongly typed arrays
    (what they would have taken on meeting them: a float32 system stays float32), others in their own.
    Tracers are left as they are."""
    leaves = jax.tree_util.tree_leaves(tree)
    floats = [x.dtype for x in leaves if hasattr(x, "dtype") and not getattr(x, "weak_type", False)
              and jnp.issubdtype(x.dtype, jnp.floating)]
    target = jnp.result_type(*floats) if floats else None

    def strong(x):
        if not isinstance(x, jax.Array) or isinstance(x, jax.core.Tracer) or not getattr(x, "weak_type", False):
            return x
        dtype = target if target is not None and jnp.issubdtype(x.dtype, jnp.floating) else x.dtype
        return jnp.asarray(x, dtype=dtype)

    return jax.tree_util.tree_map(strong, tree)


def system_jit(fun, *, forward: bool = False, one_off: bool = False):
    """``eqx.filter_jit(fun)`` (:func:`forward_jit` with ``forward``; with :data:`ONE_OFF_JIT_OPTIONS` for a
    program run once or a few times, ``one_off``) for the functions jaxmbd compiles around a system, with the
    arguments passed through :func:`strong_types` first.

    The compiled programs key on their arguments' types, weak or not: a system whose rope stiffness
    was set with ``jnp.asarray(2e4)`` and one whose arrays came from a file would each compile the
    whole run, though only values differ."""
    jitted = (forward_jit(fun) if forward else forward_jit(fun, options=ONE_OFF_JIT_OPTIONS) if one_off
              else eqx.filter_jit(fun))

    @functools.wraps(fun)
    def call(*args, **kwargs):
        args, kwargs = strong_types((args, kwargs))
        return jitted(*args, **kwargs)

    return call
