"""Reading one system file's TOML tables: every value checked as it is read, every problem one
:class:`SystemFileError` naming the file, the field path (``bodies[2].inertia``) and what was expected.

The readers of each section (the bodies, the sea, the hydrodynamic bodies, the elements, the run
settings, a sweep, a scenario) live beside the code whose meaning they read and share this reader.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from pathlib import Path
from typing import Any

import numpy as np

from .errors import JaxmbdError


class SystemFileError(JaxmbdError, ValueError):
    """A system file that cannot be used: one line naming the file, the field and what was expected."""

    def __init__(self, source: str, field: str, problem: str):
        self.source = source
        self.field = field
        self.problem = " ".join(str(problem).split())  # one line, whatever the wrapped message held
        super().__init__(f"{source}: {field}: {self.problem}" if field else f"{source}: {self.problem}")


def float_array(x):
    import jax.numpy as jnp

    return jnp.asarray(x, dtype=float)


# --------------------------------------------------------------------------- reading values

_REQUIRED = object()
REQUIRED = _REQUIRED
"""The default of a key the file must give."""


@dataclasses.dataclass(frozen=True)
class Key:
    """One key of a file section, declared once beside the code that reads it: its type and unit as the
    docs write them, its default (:data:`REQUIRED`, or a value, usually taken from the class that holds
    it with :func:`default_of`, so it is written in one place) and its meaning.  The reader takes the
    default from here; ``docs/system_file.md``'s table of the section is generated from here
    (:func:`keys_table`)."""

    name: str
    type: str
    unit: str = ""
    default: Any = _REQUIRED
    doc: str = ""
    default_text: str | None = None  # how the docs say a default that is no plain value ("adaptive")

    def text(self) -> str:
        if self.default_text is not None:
            return self.default_text
        d = self.default
        if d is _REQUIRED:
            return "required"
        if d is None:
            return ""
        if isinstance(d, bool):
            return str(d).lower()
        if isinstance(d, float):
            return "inf" if math.isinf(d) else f"{d:g}"
        if isinstance(d, str):
            return f"`{d}`"
        return str(d)


def keys(*declared: Key) -> dict[str, Key]:
    """The keys of a section by name, in the docs' order."""
    return {k.name: k for k in declared}


def default_of(owner, name: str):
    """The default of field or argument ``name`` of ``owner`` (a dataclass or equinox module, or a
    function): where it is written, read, not copied."""
    if dataclasses.is_dataclass(owner):
        for f in dataclasses.fields(owner):
            if f.name == name:
                if f.default is not dataclasses.MISSING:
                    return f.default
                if f.default_factory is not dataclasses.MISSING:
                    return f.default_factory()
    target = owner.__init__ if isinstance(owner, type) else owner
    p = inspect.signature(target).parameters[name]
    return _REQUIRED if p.default is inspect.Parameter.empty else p.default


def keys_table(section: dict[str, Key]) -> str:
    """The markdown table of a section's keys."""
    rows = ["| key | type | unit | default | meaning |", "|---|---|---|---|---|"]
    rows += [f"| `{k.name}` | {k.type} | {k.unit} | {k.text()} | {k.doc} |" for k in section.values()]
    return "\n".join(rows)


class TableReader:
    """Reads one file's tables, raising SystemFileError with the file and the field path."""

    def __init__(self, source: str, base: Path):
        self.source = source
        self.base = base

    def fail(self, field: str, problem: str):
        # from None: the message already says what the wrapped library error said
        raise SystemFileError(self.source, field, problem) from None

    # -- tables ---------------------------------------------------------------------------

    def table(self, value, field: str, allowed) -> dict:
        """``value`` must be a table whose keys are all in ``allowed``."""
        if not isinstance(value, dict):
            self.fail(field, f"expected a table, got {describe_value(value)}")
        if allowed is None:
            return value
        allowed = list(allowed)
        for k in value:
            if k not in allowed:
                self.fail(_join(field, k), f"unknown key {k!r}; allowed: {', '.join(allowed)}")
        return value

    def tables(self, value, field: str) -> list:
        """An array of tables (``[[name]]``)."""
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(field, f"expected an array of tables ([[{field}]]), got {describe_value(value)}")
        return value

    def get(self, t: dict, field: str, key: str, default=_REQUIRED):
        if key in t:
            return t[key]
        if default is _REQUIRED:
            self.fail(_join(field, key), "missing (required)")
        return default

    # -- scalars --------------------------------------------------------------------------

    def number(self, t, field, key, default=_REQUIRED, *, gt=None, ge=None, le=None, allow_inf=False):
        """A real number (TOML integer or float), finite unless ``allow_inf``, within the bounds."""
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return v
        return self.check_number(v, _join(field, key), gt=gt, ge=ge, le=le, allow_inf=allow_inf)

    def check_number(self, v, where, *, gt=None, ge=None, le=None, allow_inf=False):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(where, f"expected a number, got {describe_value(v)}")
        x = float(v)
        if math.isnan(x) or (math.isinf(x) and not (allow_inf and x > 0)):
            self.fail(where, f"expected a finite number, got {v!r}")
        if gt is not None and not x > gt:
            self.fail(where, f"must be > {gt:g}, got {v!r}")
        if ge is not None and not x >= ge:
            self.fail(where, f"must be >= {ge:g}, got {v!r}")
        if le is not None and not x <= le:
            self.fail(where, f"must be <= {le:g}, got {v!r}")
        return x

    def integer(self, t, field, key, default=_REQUIRED, *, ge=None):
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return v
        where = _join(field, key)
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(where, f"expected an integer, got {describe_value(v)}")
        if ge is not None and v < ge:
            self.fail(where, f"must be >= {ge}, got {v}")
        return int(v)

    def boolean(self, t, field, key, default=_REQUIRED):
        v = self.get(t, field, key, default)
        if not isinstance(v, bool):
            self.fail(_join(field, key), f"expected true or false, got {describe_value(v)}")
        return v

    def string(self, t, field, key, default=_REQUIRED, *, choices=None):
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return v
        where = _join(field, key)
        if not isinstance(v, str):
            self.fail(where, f"expected a string, got {describe_value(v)}")
        if choices is not None and v not in choices:
            self.fail(where, f"unknown value {v!r}; expected one of {', '.join(map(repr, choices))}")
        if not v:
            self.fail(where, "expected a non-empty string")
        return v

    def strings(self, t, field, key, default=_REQUIRED):
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return v
        where = _join(field, key)
        if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
            self.fail(where, f"expected a list of names (strings), got {describe_value(v)}")
        return list(v)

    # -- arrays ---------------------------------------------------------------------------

    def array(self, v, where, shapes=None, *, allow_inf=False) -> np.ndarray:
        """A number or a rectangular nested list of numbers, of one of ``shapes`` (None: any)."""
        arr = self._nested(v, where)
        if not allow_inf and not np.all(np.isfinite(arr)):
            self.fail(where, f"expected finite numbers, got {short_text(v)}")
        if allow_inf and np.any(np.isnan(arr)):
            self.fail(where, f"expected numbers, got NaN in {short_text(v)}")
        if shapes is not None and arr.shape not in shapes:
            self.fail(where, f"expected {shapes_text(shapes)}, got {shape_text(arr.shape)}")
        return arr

    def _nested(self, v, where):
        if isinstance(v, bool) or not isinstance(v, (int, float, list)):
            self.fail(where, f"expected a number or a list of numbers, got {describe_value(v)}")
        if isinstance(v, list):
            parts = [self._nested(x, where) for x in v]
            if parts and any(p.shape != parts[0].shape for p in parts):
                self.fail(where, f"rows of different lengths in {short_text(v)}; expected a rectangular array")
            return np.stack(parts) if parts else np.zeros(0)
        return np.asarray(float(v))

    def vector(self, t, field, key, n, default=_REQUIRED):
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return None if v is None else np.asarray(v, dtype=float)
        return self.array(v, _join(field, key), [(n,)])

    def path(self, t, field, key):
        """A file path, relative to the system file, that must exist."""
        v = self.string(t, field, key)
        p = Path(v).expanduser()
        p = p if p.is_absolute() else self.base / p
        if not p.is_file():
            self.fail(_join(field, key), f"file {str(p)!r} does not exist")
        return p


def _join(field, key):
    return f"{field}.{key}" if field else str(key)


def as_array(x):
    import jax.numpy as jnp

    return jnp.asarray(x)


def short_text(v, n=60):
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def describe_value(v):
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "table"}.get(
        type(v), type(v).__name__
    )
    return f"{kind} {short_text(v)}"


def shape_text(shape):
    if shape == ():
        return "a single number"
    if len(shape) == 1:
        return f"a list of {shape[0]} numbers"
    return f"a {' x '.join(map(str, shape))} array"


def shapes_text(shapes):
    return " or ".join(shape_text(s) for s in shapes)


