"""Addresses of a system's array leaves, one syntax for every user: ``<element>.<field>[i]``,
``placement.<joint>.x|y|z``, ``waves.spectrum.tp``, ``waves.regular.period``.

The tuner's parameters, a scenario's phase settings and the system file's ``[tune]`` table all name
leaves this way; this module is the one place that parses and resolves them.  An error is a
:class:`LeafPathError` naming the path and what was expected.
"""

from __future__ import annotations

import dataclasses
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .errors import JaxmbdError

_PATH = re.compile(r"^([^.\[\]]+)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\[(\d+)\])?$")
_AXES = {"x": 0, "y": 1, "z": 2}
FORMS = "'<element>.<field>[i]', 'waves.regular.period', 'waves.spectrum.tp' or 'placement.<joint>.x|y|z'"


class LeafPathError(JaxmbdError, ValueError):
    """A leaf path that does not name an array leaf of the system."""


def element_index(system, name: str) -> int:
    """Index of the element called ``name`` in ``system.elements`` (force elements, controllers, loops)."""
    for i, f in enumerate(system.elements):
        if f.name == name:
            return i
    raise LeafPathError(f"no element {name!r}; the system has {[f.name for f in system.elements]}")


def element_of(system, k: int, n: int | None = None):
    """``system.elements[k]`` as a path into the system (a force element's or a loop's), for ``eqx.tree_at``;
    ``n``: the number of force elements (give it inside ``eqx.tree_at``'s ``where``, which sees wrapped
    leaves: an empty tuple of elements among them)."""
    n = len(system.forces) if n is None else n
    return system.forces[k] if k < n else system.loops[k - n]


def element_field(system, element: str, field: str, *, what: str = "parameter path"):
    """(getter of the array leaf ``element.field`` of ``system``): refuses a missing field, a static
    field (fixed when the system is built) and a field the element says cannot change (its
    :meth:`~jaxmbd.system.ForceElement.fixed_reason`)."""
    k = element_index(system, element)
    f = element_of(system, k)
    where = f"{what} '{element}.{field}'"
    if not hasattr(f, field):
        raise LeafPathError(f"{where}: element {element!r} ({type(f).__name__}) has no field {field!r}")
    spec = {x.name: x for x in dataclasses.fields(f)}.get(field)
    value = getattr(f, field)
    if (spec is not None and spec.metadata.get("static", False)) or not isinstance(value, (jax.Array, np.ndarray)):
        raise LeafPathError(f"{where}: field {field!r} of {element!r} is fixed when the system is built "
                            "(a static field), not an array leaf")
    reason = f.fixed_reason(field)
    if reason:
        raise LeafPathError(f"{where}: {reason}")
    n = len(system.forces)
    return lambda s: getattr(element_of(s, k, n), field)


def resolve(system, path: str):
    """(getter of the array leaf, index or None) for a leaf path."""
    m = _PATH.match(path)
    if not m:
        raise LeafPathError(f"parameter path {path!r}: expected {FORMS}")
    head, field, sub, idx = m.group(1), m.group(2), m.group(3), m.group(4)
    idx = None if idx is None else int(idx)
    if head == "placement":
        j = system.model.index(field)
        if sub not in _AXES:
            raise LeafPathError(f"parameter path {path!r}: the axis must be x, y or z")
        return (lambda s: s.model.placement_p), (j, _AXES[sub])
    if head == "waves":
        if system.waves is None:
            raise LeafPathError(f"parameter path {path!r}: the system has no sea state")
        if sub is None:
            return (lambda s: getattr(s.waves, field)), idx
        return (lambda s: getattr(getattr(s.waves, field), sub)), idx
    if sub is not None:
        raise LeafPathError(f"parameter path {path!r}: expected '<element>.<field>[i]'")
    return element_field(system, head, field), idx


def _checked_index(path, x, idx):
    # JAX clamps an out-of-range index silently: refuse it here
    if isinstance(idx, int) and (x.ndim == 0 or idx >= x.shape[0]):
        raise LeafPathError(f"parameter path {path!r}: index {idx} out of range for a leaf of shape {tuple(x.shape)}")


def get_leaf(system, path: str):
    """The value at a leaf path (an array, or one entry of it)."""
    get, idx = resolve(system, path)
    raw = get(system)
    try:
        x = jnp.asarray(raw)
    except TypeError:
        raise LeafPathError(f"parameter path {path!r}: {raw!r} is not a number or an array of numbers") from None
    _checked_index(path, x, idx)
    return x if idx is None else x[idx]


def set_leaf(system, path: str, value):
    """The system with the leaf at ``path`` set to ``value`` (broadcast over an array without index)."""
    get, idx = resolve(system, path)
    old = jnp.asarray(get(system))
    _checked_index(path, old, idx)
    value = jnp.asarray(value, dtype=old.dtype if jnp.issubdtype(old.dtype, jnp.floating) else None)
    new = jnp.broadcast_to(value, old.shape) if idx is None else old.at[idx].set(value)
    return eqx.tree_at(get, system, new, is_leaf=lambda x: x is None)
