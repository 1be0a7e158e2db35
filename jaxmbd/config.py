"""Process-wide settings: float64, XLA's CPU options, the persistent compilation cache.

``import jaxmbd`` makes three of these changes for the whole process, because the library's numbers
depend on them (docs/sharp_bits.md says exactly what they are and how to opt out):

- float64 is switched on (``jax_enable_x64``) unless ``JAXMBD_X64=0`` is in the environment;
- two XLA CPU options are added to ``XLA_FLAGS`` (:data:`jaxmbd._xla.XLA_FLAGS_SET`) unless
  ``JAXMBD_XLA_DEFAULTS=0``, before JAX starts its CPU backend;
- XLA:CPU runs compiled programs on one thread (``PJRT_NPROC=1``, :func:`jaxmbd._xla.set_runtime_threads`)
  unless ``PJRT_NPROC`` or ``NPROC`` is already set or ``JAXMBD_XLA_DEFAULTS=0``.

Everything else is explicit: :func:`configure` (what the command line calls) turns on the persistent
compilation cache and can switch float64 off or on again.
"""

from __future__ import annotations

import os

import jax

from ._xla import set_runtime_threads, set_xla_flags


def on_import():
    """What ``import jaxmbd`` changes in the process (see the module's docstring)."""
    set_xla_flags()
    set_runtime_threads()
    if os.environ.get("JAXMBD_X64", "1") != "0":
        jax.config.update("jax_enable_x64", True)


def configure(*, x64: bool | None = None, compilation_cache: bool | str | os.PathLike | None = None):
    """Change jaxmbd's process-wide settings.

    x64:
        True or False to switch JAX's float64 on or off (None: leave it as it is).  Systems built
        afterwards take the new default float type; arrays made before keep theirs.
    compilation_cache:
        True: keep compiled programs on disk between runs (:func:`enable_compilation_cache`'s
        folder); a path: that folder; None or False: leave JAX's cache setting as it is.

    Returns the compilation-cache folder in use, or None.
    """
    if x64 is not None:
        jax.config.update("jax_enable_x64", bool(x64))
    if compilation_cache is True:
        return enable_compilation_cache()
    if compilation_cache:
        return enable_compilation_cache(os.fspath(compilation_cache))
    return jax.config.jax_compilation_cache_dir or None


def enable_compilation_cache(folder: str | None = None):
    """Keep the compiled programs on disk between runs of the command (JAX's persistent compilation
    cache): a second ``jaxmbd demo`` skips its XLA compilation (13 -> 6 s), and so do repeated
    ``run``, ``sweep`` and ``tune`` calls on the same system shape.

    The folder is ``$JAXMBD_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxmbd/xla`` or ``~/.cache/jaxmbd/xla``;
    ``JAXMBD_CACHE_DIR=off`` turns it off, and a cache JAX is already told about
    (``JAX_COMPILATION_CACHE_DIR``) is left as it is.  Entries are keyed on the program, the jaxlib
    version and the XLA options, so a changed system or library compiles anew.  Returns the folder,
    or None."""
    if os.environ.get("JAX_COMPILATION_CACHE_DIR") or jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir
    folder = folder or os.environ.get("JAXMBD_CACHE_DIR")
    if folder is not None and folder.strip().lower() in ("", "0", "off", "none", "false"):
        return None
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "jaxmbd", "xla")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:  # a read-only home: run without the cache
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        # every program, the small eager ones too: a second demo 6.9 -> 5.9 s (92 files, 1.3 MB)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return folder
