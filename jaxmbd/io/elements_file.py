"""``[[forces]]``, ``[[controllers]]`` and ``[[loops]]`` of a system file, read by each element's own field
declarations (:mod:`jaxmbd.fields`): a new element kind is read with no change here."""

from __future__ import annotations

import numpy as np

from ..fields import field_specs, is_required
from ..tables import short_text


def read_elements(reader, cfg, section, *, build: bool = True):
    """The elements of ``section``, ``[(field path, element)]``; ``build=False``: each entry only checked against
    its kind's declarations (keys, types, shapes, bounds, names, required keys, the kind's file rules), nothing
    built or compiled: the loader runs this first, so that a mistake the file alone shows is reported at once."""
    from .. import control, flex, forces, loops  # noqa: F401  (flex registers the flexible beam, loops the loop)
    from ..system import ELEMENT_KINDS

    kinds = ELEMENT_KINDS[section]
    r = reader.r
    out = []
    counts = {}
    for k, e in enumerate(r.tables(cfg.get(section, []), section)):
        f = f"{section}[{k}]"
        if not isinstance(e, dict):
            r.fail(f, "expected a table")
        if len(kinds) == 1:  # a section of one kind (loops) needs no kind key
            kind = r.string(e, f, "kind", next(iter(kinds)), choices=tuple(kinds))
        else:
            kind = r.string(e, f, "kind", choices=tuple(kinds))
        counts[kind] = counts.get(kind, 0) + 1
        default_name = kind if counts[kind] == 1 else f"{kind}{counts[kind]}"
        out.append((f, _element(reader, kinds[kind], kind, e, f, default_name, build)))
    return out


def _element(reader, cls, kind, e, f, default_name, build=True):
    """Build one registered element from its file entry, by its fields' declarations
    (:mod:`jaxmbd.fields`): types, shapes, ranges, names of bodies and joints, degrees."""
    r = reader.r
    form = cls.file_form or cls
    specs = field_specs(form)
    allowed = ["kind"] + list(specs) + [f"{n}_deg" for n, (spec, _) in specs.items() if spec.angle]
    r.table(e, f, allowed)
    kw = {}
    for n, (spec, x) in specs.items():
        key = n
        if spec.angle and f"{n}_deg" in e:
            if n in e:
                r.fail(f"{f}.{n}_deg", f"give either {n} (SI) or {n}_deg (degrees), not both")
            key = f"{n}_deg"
        if key in e:
            kw[n] = _element_value(reader, spec, e, f, key)
        elif n == "name":
            kw[n] = default_name
        elif is_required(x):
            r.fail(f"{f}.{n}", f"missing (required by {kind!r}; its keys: {', '.join(specs)})")
    water = getattr(form, "water_density_field", None) or cls.water_density_field
    if build and water is not None and water not in e and reader.water_density is not None:
        kw[water] = np.asarray(reader.water_density)
    form.file_rules(kw, e, lambda key, problem: r.fail(f"{f}.{key}", problem))
    if not build:
        return None
    import jax.numpy as jnp

    kw = {n: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for n, v in kw.items()}
    try:
        return cls(**kw) if form is cls else form(**kw).build()
    except (TypeError, ValueError) as exc:
        r.fail(f, str(exc))


def _element_value(reader, spec, e, f, key):
    """One field of an element entry, checked against its declaration."""
    r, where = reader.r, f"{f}.{key}"
    if spec.kind == "array":
        arr = r.array(e[key], where, spec.allowed_shapes(e))
        if spec.bound is not None:
            op, bound = spec.bound
            if not (np.all(arr > bound) if op == ">" else np.all(arr >= bound)):
                r.fail(where, f"must be {op} {bound:g}, got {short_text(e[key])}")
        return np.deg2rad(arr) if key.endswith("_deg") else arr
    if spec.kind == "bool":
        return r.boolean(e, f, key)
    if spec.kind == "integer":
        return r.integer(e, f, key)
    if spec.kind == "number":
        return r.number(e, f, key)
    if spec.kind == "joints":
        names = tuple(r.strings(e, f, key))
        if not names:
            r.fail(where, "expected at least one name")
        reader.names(names, where, what="joint")
        return names
    if spec.kind == "path":
        return str(r.path(e, f, key))
    if spec.kind == "names":
        names = tuple(r.strings(e, f, key))
        if not names:
            r.fail(where, "expected at least one name")
        bad = [n for n in names if spec.choices is not None and n not in spec.choices]
        if bad:
            r.fail(where, f"expected each of {', '.join(map(repr, spec.choices))}; got {bad[0]!r}")
        return names
    value = r.string(e, f, key, choices=spec.choices)
    if spec.kind in ("body", "body_or_world"):
        reader.names(value, where, world=spec.kind == "body_or_world")
    elif spec.kind == "joint":
        reader.names(value, where, what="joint")
    return value


def check_unique_names(reader, elements):
    seen = {}
    for f, el in elements:
        if el.name in seen:
            reader.r.fail(f"{f}.name", f"duplicate element name {el.name!r} (also {seen[el.name]}); names label the outputs")
        seen[el.name] = f


def read_report_joints(reader, cfg):
    names = reader.r.strings(cfg, "", "report_joints", [])
    reader.names(names, "report_joints", what="joint")
    return tuple(names)


def trial(reader, system, elements):
    """Trace each element once at q0 (shapes only, no numbers): a name, a shape or a joint kind
    the element cannot use becomes an error on that entry rather than a trace inside a run."""
    import jax
    import jax.numpy as jnp

    model = system.model
    q = reader.q0
    v = jnp.zeros(model.nv, dtype=q.dtype)
    try:
        z_all = system.initial_states(q, v)
        ctx = system.context(0.0, q, v)
    except Exception as exc:
        reader.r.fail("forces", f"cannot evaluate the elements at q0: {type(exc).__name__}: {exc}")
    reader.element_outputs = {}
    if system.loops:  # the loops' outputs come from the system's constrained solve
        try:
            outs = jax.eval_shape(lambda: system.outputs(0.0, (q, v, z_all), only=tuple(lp.name for lp in system.loops)))
        except Exception as exc:
            where = next(f for f, el in elements if el.section == "loops")
            reader.r.fail(where, f"the loops cannot be evaluated at q0: {type(exc).__name__}: {exc}")
        reader.element_outputs |= {k: tuple(o.shape) for k, o in outs.items()}
    forces = [(f, el) for f, el in elements if el.section != "loops"]
    for (f, el), s in zip(forces, system.state_slices(), strict=True):
        z = z_all[s]
        try:
            c, outs = jax.eval_shape(lambda: (el.contribution(ctx, z), el.outputs(ctx, z)))
        except Exception as exc:  # any failure here comes from the entry's values
            reader.r.fail(_blame(reader, f, el, str(exc)), f"element {el.name!r} cannot be evaluated: {type(exc).__name__}: {exc}")
        for k, o in outs.items():
            reader.element_outputs[f"{el.name}/{k}"] = tuple(o.shape)
        expect = {"f_ext": (model.n_bodies, 6), "tau": (model.nv,), "zdot": (el.n_states,)}
        for part, shape in expect.items():
            got = getattr(c, part)
            if got is not None and tuple(got.shape) != shape:
                reader.r.fail(f, f"element {el.name!r} returns {part} of shape {tuple(got.shape)}, expected {shape}; check its vector sizes")


def _blame(reader, f, el, message):
    """The field of entry ``f`` whose value the message quotes, else the entry."""
    entry = reader.entry(f)
    for key, val in (entry or {}).items():
        for item in val if isinstance(val, list) else [val]:
            if isinstance(item, str) and key != "kind" and repr(item) in message:
                return f"{f}.{key}"
    return f
