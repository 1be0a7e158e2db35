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

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError
from ..paths import get_leaf, set_leaf


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
            raise InputError(f"parameter {self.name!r}: lower {self.lower} must be below upper {self.upper}")
        if self.lower is not None and self.initial <= self.lower and self.kind != "clip":
            raise InputError(f"parameter {self.name!r}: initial {self.initial} must lie above lower {self.lower}")
        if self.upper is not None and self.initial >= self.upper and self.kind != "clip":
            raise InputError(f"parameter {self.name!r}: initial {self.initial} must lie below upper {self.upper}")

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
        raise InputError(f"parameter {self.name!r}: transform {k!r}: expected sigmoid, softplus, log, clip or linear")

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
            raise InputError(f"duplicate parameter names {names}")

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


# ---------------------------------------------------------------------------- files


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
            raise InputError(f"parameter {ps[-1].name!r}: unknown keys {sorted(t)}")
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
