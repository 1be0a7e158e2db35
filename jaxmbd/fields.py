"""Fields that describe themselves: shape, unit, range and meaning declared once, on the element.

An element (a force, a controller) declares each of its fields with :func:`parameter` (an array leaf:
a stiffness, a point, a gain: differentiable) or :func:`setting` (static structure: a body name, a
switch).  The system-file reader, the element tables of ``docs/system_file.md`` and the optimiser's
parameter paths all read these declarations; nothing else lists an element's fields.

    class Fender(ForceElement):
        kind: ClassVar[str] = "fender"
        body: str = setting("body", doc="the body carrying the fender")
        stiffness: jax.Array = parameter(unit="N/m", bound=(">", 0.0), doc="...")
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp

from .errors import InputError, InputTypeError

SETTING_KINDS = {
    "string": "string",
    "bool": "bool",
    "integer": "integer",
    "number": "number",
    "body": "body name",
    "body_or_world": 'body name or "world"',
    "joint": "joint name",
    "joints": "list of joint names",
    "names": "list of names",
    "path": "path (relative to the system file)",
}
"""What a :func:`setting` holds, and how the docs name it."""


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """What one field of an element is.

    kind: ``"array"`` for a :func:`parameter`, else one of :data:`SETTING_KINDS`.
    unit: SI unit as text ("N/m", "m", "rad", "" for a pure number).
    doc: one line for the docs table.
    shapes: allowed shapes of an array, e.g. ``((),)`` a number, ``((3,),)`` a point, ``((), (2,))``
        one value or two; ``"per:<field>"`` one value or one per entry of the list field <field>.
    bound: (operator, value) every entry must satisfy, operator ``">"`` or ``">="``; None: any.
    angle: the file may give it in degrees as ``<name>_deg``.
    choices: the allowed values of a string setting.
    """

    kind: str
    unit: str = ""
    doc: str = ""
    shapes: tuple | str | None = None
    bound: tuple | None = None
    angle: bool = False
    choices: tuple | None = None

    def allowed_shapes(self, given: dict) -> list | None:
        """The shapes an array may take, given the element's other keys as written in the file."""
        if isinstance(self.shapes, str) and self.shapes.startswith("per:"):
            other = given.get(self.shapes[4:])
            return [(), (len(other) if isinstance(other, (list, tuple)) else 1,)]
        return None if self.shapes is None else list(self.shapes)

    def shape_text(self) -> str:
        if self.shapes is None:
            return "a list of numbers"
        if isinstance(self.shapes, str):
            return f"one value or one per entry of `{self.shapes[4:]}`"
        return " or ".join("number" if s == () else "x".join(map(str, s)) + (" numbers" if len(s) == 1 else "")
                           for s in self.shapes or ())

    def bound_text(self) -> str:
        return "" if self.bound is None else f"{self.bound[0]} {self.bound[1]:g}"


_KEY = "jaxmbd"
_MISSING = dataclasses.MISSING


def parameter(*, unit: str, doc: str, shape: tuple | list | str | None = (), bound: tuple | None = None,
              angle: bool = False, default: Any = _MISSING):
    """An array field (a leaf of the element's pytree: differentiable, changed without recompiling).

    ``shape``: one shape, a list of allowed shapes, ``"per:<field>"``, or None for any (a table the
    element checks in its ``file_rules``); ``default``: a number or array (stored as a JAX array of
    the default float type), or leave it out for a required field.
    """
    import equinox as eqx

    if shape is None:
        shapes = None
    else:
        shapes = shape if isinstance(shape, str) else (tuple(shape) if isinstance(shape, list) else (tuple(shape),))
    meta = {_KEY: FieldSpec("array", unit, doc, shapes, bound, angle)}
    if default is _MISSING:
        return eqx.field(metadata=meta)
    return eqx.field(default_factory=lambda: jnp.asarray(default), metadata=meta)


def setting(kind: str, *, doc: str, default: Any = _MISSING, choices: tuple | None = None, unit: str = ""):
    """A static field (part of the compiled program's structure): a name, a switch, a count."""
    import equinox as eqx

    if kind not in SETTING_KINDS:
        raise InputError(f"setting kind {kind!r}: expected one of {', '.join(SETTING_KINDS)}")
    meta = {_KEY: FieldSpec(kind, unit, doc, choices=choices)}
    if default is _MISSING:
        return eqx.field(static=True, metadata=meta)
    return eqx.field(static=True, default=default, metadata=meta)


def field_specs(cls) -> dict[str, tuple[FieldSpec, dataclasses.Field]]:
    """{name: (spec, dataclass field)} of every field of ``cls`` given when it is built, in order.
    The ``name`` field needs no declaration (it labels the outputs); any other undeclared field is an
    error here, so an element cannot be read from a file without saying what its fields are."""
    out = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        spec = f.metadata.get(_KEY)
        if spec is None and f.name == "name":
            spec = FieldSpec("string", doc="element name, the prefix of its outputs (`hoist/tension`)")
        if spec is None:
            raise InputTypeError(f"{cls.__name__}.{f.name}: declare it with jaxmbd.fields.parameter or setting")
        out[f.name] = (spec, f)
    return out


def is_required(f: dataclasses.Field) -> bool:
    return f.default is _MISSING and f.default_factory is _MISSING


def default_text(f: dataclasses.Field) -> str:
    """The default of a field as the docs write it."""
    if is_required(f):
        return "required"
    value = f.default if f.default is not _MISSING else f.default_factory()
    if hasattr(value, "shape") and getattr(value, "shape", ()) != ():
        import numpy as np

        arr = np.asarray(value)
        return f"{arr.size} zeros" if not arr.any() else str(arr.tolist())
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return f'"{value}"' if isinstance(value, str) else str(value)
