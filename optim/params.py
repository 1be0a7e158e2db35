"""Tunable parameters: named leaves of a System, with bounds, mapped to unconstrained variables.

A :class:`Parameter` names one scalar of a :class:`~jaxmbd.system.System` by
one or more *paths* (several paths tie leaves to one value, e.g. the EA of two
hoist ropes):

* ``"<element>.<field>"`` or ``"<element>.<field>[i]"``: a field of the force
  element named ``<element>`` (``"mc.kp"``, ``"hoist1.EA"``, ``"mc.kd[0]"``);
  the whole array is set when there is no index (a scalar, or every entry);
* ``"waves.regular.period"``, ``"waves.spectrum.tp"``, ``"waves.spectrum.hs"``:
  the sea state;
* ``"placement.<joint>.x|y|z"``: the joint frame's origin in its parent (a crane's
  offset on deck is the placement of the joint between deck and crane).

Bounds by transformation (the optimiser works on ``u``, unbounded):

* lower and upper: x = l + (h − l) σ(u)  (``"sigmoid"``), or ``"clip"``: x = clip(x0 + s u, l, h)
  (projection: the gradient vanishes outside the box, so Adam's iterate is projected back);
* lower only: x = l + s · softplus(u) / softplus(0), s = x0 − l  (``"softplus"``);
* neither: x = x0 + s u, s = |x0| or 1 (``"linear"``);
* ``"log"``: x = x0 exp(u) (positive, scale-free).

At u = 0 every transform gives x0, and a unit step in u is a change of order x0,
so one learning rate suits gains of 1e7 and periods of 10 alike.
"""

from __future__ import annotations

import dataclasses
import math
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclasses.dataclass(frozen=True)
class Parameter:
    name: str
    paths: tuple
    initial: float
    lower: float | None = None
    upper: float | None = None
    transform: str | None = None  # default: from the bounds

    def __post_init__(self):
        if isinstance(self.paths, str):
            object.__setattr__(self, "paths", (self.paths,))
        if self.lower is not None and self.upper is not None and not self.lower < self.upper:
            raise ValueError(f"parameter {self.name!r}: lower {self.lower} must be below upper {self.upper}")
        if self.lower is not None and self.initial <= self.lower and self.kind != "clip":
            raise ValueError(f"parameter {self.name!r}: initial {self.initial} must lie above lower {self.lower}")
        if self.upper is not None and self.initial >= self.upper and self.kind != "clip":
            raise ValueError(f"parameter {self.name!r}: initial {self.initial} must lie below upper {self.upper}")

    @property
    def kind(self) -> str:
        if self.transform:
            return self.transform
        if self.lower is not None and self.upper is not None:
            return "sigmoid"
        if self.lower is not None:
            return "softplus"
        return "linear"

    def _scale(self):
        x0 = float(self.initial)
        return abs(x0) if x0 != 0 else 1.0

    def to_value(self, u):
        x0, k = float(self.initial), self.kind
        if k == "sigmoid":
            l, h = float(self.lower), float(self.upper)
            u0 = math.log((x0 - l) / (h - x0))
            return l + (h - l) * jax.nn.sigmoid(u + u0)
        if k == "softplus":
            l = float(self.lower)
            return l + (x0 - l) * jax.nn.softplus(u) / math.log(2.0)
        if k == "log":
            return x0 * jnp.exp(u)
        if k == "clip":
            x = x0 + self._scale() * u
            return jnp.clip(x, self.lower if self.lower is not None else -jnp.inf, self.upper if self.upper is not None else jnp.inf)
        if k == "linear":
            return x0 + self._scale() * u
        raise ValueError(f"parameter {self.name!r}: transform {k!r}: expected sigmoid, softplus, log, clip or linear")

    def project(self, u):
        """Projection of u onto the box (for ``clip``; the identity otherwise)."""
        if self.kind != "clip":
            return u
        s, x0 = self._scale(), float(self.initial)
        lo = -jnp.inf if self.lower is None else (self.lower - x0) / s
        hi = jnp.inf if self.upper is None else (self.upper - x0) / s
        return jnp.clip(u, lo, hi)

    def to_u(self, x):
        """Inverse of :meth:`to_value` (for restarting from a value)."""
        x, x0, k = float(x), float(self.initial), self.kind
        if k == "sigmoid":
            l, h = float(self.lower), float(self.upper)
            return math.log((x - l) / (h - x)) - math.log((x0 - l) / (h - x0))
        if k == "softplus":
            y = (x - float(self.lower)) / (x0 - float(self.lower)) * math.log(2.0)
            return y + math.log(-math.expm1(-y))
        if k == "log":
            return math.log(x / x0)
        return (x - x0) / self._scale()


class ParameterSet:
    """An ordered set of :class:`Parameter`: unconstrained vector u <-> named values <-> a System."""

    def __init__(self, parameters):
        self.parameters = tuple(parameters)
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate parameter names {names}")

    @property
    def names(self):
        return [p.name for p in self.parameters]

    def __len__(self):
        return len(self.parameters)

    def u0(self):
        return jnp.zeros(len(self.parameters))

    def values(self, u) -> dict:
        return {p.name: p.to_value(u[i]) for i, p in enumerate(self.parameters)}

    def vector(self, u):
        return jnp.stack([p.to_value(u[i]) for i, p in enumerate(self.parameters)])

    def project(self, u):
        return jnp.stack([p.project(u[i]) for i, p in enumerate(self.parameters)])

    def initial_values(self) -> dict:
        return {p.name: float(p.initial) for p in self.parameters}

    def apply(self, system, values: dict):
        """The system with every parameter's leaves set to ``values[name]``."""
        for p in self.parameters:
            for path in p.paths:
                system = set_leaf(system, path, values[p.name])
        return system

    def describe(self) -> list[dict]:
        return [dict(name=p.name, paths=list(p.paths), initial=p.initial, lower=p.lower, upper=p.upper,
                     transform=p.kind) for p in self.parameters]


# ---------------------------------------------------------------------------- paths


_PATH = re.compile(r"^([^.\[\]]+)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\[(\d+)\])?$")


def _where(system, path: str):
    """(getter of the array leaf, index or None) for a parameter path."""
    m = _PATH.match(path)
    if not m:
        raise ValueError(f"parameter path {path!r}: expected '<element>.<field>[i]', 'waves.regular.period', "
                         "'waves.spectrum.tp' or 'placement.<joint>.x|y|z'")
    head, field, sub, idx = m.group(1), m.group(2), m.group(3), m.group(4)
    idx = None if idx is None else int(idx)
    if head == "placement":
        j = system.model.index(field)
        if sub not in _AXES:
            raise ValueError(f"parameter path {path!r}: the axis must be x, y or z")
        return (lambda s: s.model.placement_p), (j, _AXES[sub])
    if head == "waves":
        if system.waves is None:
            raise ValueError(f"parameter path {path!r}: the system has no sea state")
        if sub is None:
            return (lambda s: getattr(s.waves, field)), idx
        return (lambda s: getattr(getattr(s.waves, field), sub)), idx
    names = [f.name for f in system.forces]
    if head not in names:
        raise ValueError(f"parameter path {path!r}: no force element {head!r}; the system has {names}")
    k = names.index(head)
    if sub is not None:
        raise ValueError(f"parameter path {path!r}: expected '<element>.<field>[i]'")
    if not hasattr(system.forces[k], field):
        raise ValueError(f"parameter path {path!r}: element {head!r} has no field {field!r}")
    spec = {f.name: f for f in dataclasses.fields(system.forces[k])}.get(field)
    if spec is not None and spec.metadata.get("static", False):
        raise ValueError(f"parameter path {path!r}: field {field!r} of {head!r} is fixed when the system is built "
                         "(a static field), not a tunable leaf")
    return (lambda s: getattr(s.forces[k], field)), idx


def _checked_index(path, x, idx):
    # JAX clamps an out-of-range index silently: refuse it here
    if isinstance(idx, int) and (x.ndim == 0 or idx >= x.shape[0]):
        raise ValueError(f"parameter path {path!r}: index {idx} out of range for a leaf of shape {tuple(x.shape)}")


def get_leaf(system, path: str):
    get, idx = _where(system, path)
    raw = get(system)
    try:
        x = jnp.asarray(raw)
    except TypeError:
        raise ValueError(f"parameter path {path!r}: {raw!r} is not a number or an array of numbers") from None
    _checked_index(path, x, idx)
    return x if idx is None else x[idx]


def set_leaf(system, path: str, value):
    """The system with the leaf at ``path`` set to ``value`` (broadcast over an array without index)."""
    get, idx = _where(system, path)
    old = jnp.asarray(get(system))
    _checked_index(path, old, idx)
    value = jnp.asarray(value, dtype=old.dtype if jnp.issubdtype(old.dtype, jnp.floating) else None)
    new = jnp.broadcast_to(value, old.shape) if idx is None else old.at[idx].set(value)
    return eqx.tree_at(get, system, new, is_leaf=lambda x: x is None)


def from_spec(tables) -> ParameterSet:
    """ParameterSet from ``[[tune.parameters]]`` tables: ``{name, path | paths, initial, lower, upper, transform}``."""
    ps = []
    for t in tables:
        t = dict(t)
        paths = t.pop("paths", None) or t.pop("path")
        ps.append(Parameter(name=t.pop("name", paths if isinstance(paths, str) else paths[0]), paths=paths,
                            initial=float(t.pop("initial")), lower=t.pop("lower", None), upper=t.pop("upper", None),
                            transform=t.pop("transform", None)))
        if t:
            raise ValueError(f"parameter {ps[-1].name!r}: unknown keys {sorted(t)}")
    return ParameterSet(ps)


def initial_from_system(system, tables):
    """Fill a missing ``initial`` of each table from the system's current leaf value."""
    out = []
    for t in tables:
        t = dict(t)
        if "initial" not in t:
            path = t.get("path") or t.get("paths")[0]
            t["initial"] = float(np.asarray(get_leaf(system, path)).reshape(-1)[0])
        out.append(t)
    return out
