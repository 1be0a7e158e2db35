"""The conditions that end a scenario's phases: a threshold on any named signal of the state (a body's
position or speed, a joint's coordinate, an element's output), combined with all-of, any-of and
time; and the :class:`Probe` that reads those signals from one state; a phase's settings (its ``set`` table) read
against the system.  :mod:`jaxmbd.scenario` runs them."""

from __future__ import annotations

import fnmatch
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp

from . import spatial
from .errors import JaxmbdError
from .paths import LeafPathError, element_field
from .simulation import initial_state
from .system import Inputs, System


class ScenarioError(JaxmbdError, ValueError):
    """A scenario that does not fit its system (unknown element, field, output; bad schema)."""


# ---------------------------------------------------------------------------------------------
# What a condition may read


_BODY_SIGNALS = ("x", "y", "z", "vx", "vy", "vz", "speed", "wx", "wy", "wz", "roll", "pitch", "yaw", "tilt")


class Probe:
    """Named signals of one state, computed on demand: ``probe["block/z"]``, ``probe["hoist_1/tension"]``.

    The kinematics (:class:`~jaxmbd.system.Context`) are computed once per probe; an element's outputs
    only when one of them is asked for.
    """

    def __init__(self, system: System, t, y, forcing=None):
        self.system, self.t = system, t
        q, v, z = y
        self.q, self.v, self.z = system.model.normalise(q), v, z
        self.forcing = forcing if forcing is not None else Inputs()
        self._ctx = None

    @property
    def ctx(self):
        if self._ctx is None:
            waves, prepared, params = self.forcing
            self._ctx = self.system.context(self.t, self.q, self.v, waves, params, prepared)
        return self._ctx

    def __getitem__(self, name: str):
        return self.get(name)

    def get(self, name: str, index: int | None = None):
        val = self._resolve(_canonical(name, self.system))
        if index is not None:
            val = jnp.reshape(val, (-1,))[index]
        return val

    def _resolve(self, name: str):
        if name in ("time", "t"):
            return jnp.asarray(self.t, dtype=self.q.dtype)
        head, _, tail = name.rpartition("/")
        model = self.system.model
        if tail in ("q", "v") and (head in model.body_names or head in model.joint_names):
            sl = model.q_slice(head) if tail == "q" else model.v_slice(head)
            x = (self.q if tail == "q" else self.v)[sl]
            return x[0] if x.shape == (1,) else x
        if head in model.body_names and tail in _BODY_SIGNALS:
            i = model.index(head)
            kin = self.ctx.kin
            R, p, tw = kin.rotation(i), kin.origin(i), kin.body_twist(i)
            if tail in ("x", "y", "z"):
                return p["xyz".index(tail)]
            if tail in ("vx", "vy", "vz", "speed"):
                vw = spatial.mv(R, tw[:3])
                return jnp.sqrt(jnp.sum(vw * vw) + 1e-30) if tail == "speed" else vw[("vx", "vy", "vz").index(tail)]
            if tail in ("wx", "wy", "wz"):
                return spatial.mv(R, tw[3:])[("wx", "wy", "wz").index(tail)]
            if tail == "tilt":
                return jnp.arctan2(jnp.sqrt(R[0, 2] ** 2 + R[1, 2] ** 2 + 1e-30), R[2, 2])
            return spatial.matrix_to_rpy(R)[("roll", "pitch", "yaw").index(tail)]
        for f, s in zip(self.system.forces, self.system.state_slices()):
            if f.name == head:
                out = f.outputs(self.ctx, self.z[s])
                if tail in out:
                    return out[tail]
                raise ScenarioError(f"element {head!r} has no output {tail!r}; it has {sorted(out)}")
        if head in [lp.name for lp in self.system.loops]:  # from the system's constrained solve
            from .system import Inputs

            ctx = self.ctx
            out = self.system.outputs(ctx.t, (ctx.q, ctx.v, self.z), Inputs(ctx.waves, ctx.prepared, ctx.params), only=(head,))
            if name in out:
                return out[name]
            raise ScenarioError(f"loop {head!r} has no output {tail!r}; it has {sorted(k.split('/', 1)[1] for k in out)}")
        raise ScenarioError(_unknown_output(name, self.system))


def _canonical(name: str, system: System) -> str:
    """``block_z`` -> ``block/z`` when ``block`` is a body and the name has no slash."""
    if "/" in name or name in ("time", "t"):
        return name
    head, _, tail = name.rpartition("_")
    if head and (head in system.model.body_names or head in system.model.joint_names):
        return f"{head}/{tail}"
    return name


def _unknown_output(name, system):
    m = system.model
    return (f"unknown output {name!r}: expected 'time', '<body>/<{'|'.join(_BODY_SIGNALS)}>' with bodies "
            f"{list(m.body_names)}, '<joint>/q|v' with joints {list(m.joint_names)}, or '<element>/<output>' "
            f"with elements {[f.name for f in system.elements]}")


# ---------------------------------------------------------------------------------------------
# Conditions: real-valued margins, satisfied when >= 0


class Condition(eqx.Module):
    """A phase-end condition as a real margin g(t, y): g < 0 while the phase goes on, g ≥ 0 when done.

    Real-valued (not boolean) so that the event time is found by root finding and carries gradients.
    """

    def margin(self, probe: Probe):
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def outputs(self) -> tuple[str, ...]:
        return ()


_OPS = (">=", ">", "<=", "<", "near")


class Threshold(Condition):
    """``output op value``: g = out − value for ``>=``/``>``, value − out for ``<=``/``<``, and
    tol − |out − value| for ``near`` (within ``tol`` of ``value``).  ``value`` and ``tol`` are array
    leaves, so an event time can be differentiated with respect to the threshold."""

    output: str = eqx.field(static=True)
    op: str = eqx.field(static=True)
    value: jnp.ndarray
    tol: jnp.ndarray = eqx.field(default_factory=lambda: jnp.asarray(0.0))
    index: int | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        if self.op not in _OPS:
            raise ScenarioError(f"condition on {self.output!r}: op must be one of {list(_OPS)}, got {self.op!r}")

    def margin(self, probe):
        out = probe.get(self.output, self.index)
        if self.op in (">=", ">"):
            return out - self.value
        if self.op in ("<=", "<"):
            return self.value - out
        return self.tol - jnp.abs(out - self.value)

    def describe(self):
        what = self.output + (f"[{self.index}]" if self.index is not None else "")
        if self.op == "near":
            return f"|{what} - {float(self.value):.6g}| <= {float(self.tol):.6g}"
        return f"{what} {self.op} {float(self.value):.6g}"

    def outputs(self):
        return (self.output,)


class AllOf(Condition):
    """Every part holds: g = min g_i (e.g. position within a tolerance and speed below a bound)."""

    parts: tuple

    def margin(self, probe):
        return jnp.min(jnp.stack([p.margin(probe) for p in self.parts]))

    def describe(self):
        return " and ".join(f"({p.describe()})" for p in self.parts)

    def outputs(self):
        return sum((p.outputs() for p in self.parts), ())


class AnyOf(Condition):
    """One part holds: g = max g_i."""

    parts: tuple

    def margin(self, probe):
        return jnp.max(jnp.stack([p.margin(probe) for p in self.parts]))

    def describe(self):
        return " or ".join(f"({p.describe()})" for p in self.parts)

    def outputs(self):
        return sum((p.outputs() for p in self.parts), ())


class When(Condition):
    """A Python callable ``fn(t, y, probe) -> real`` as a condition (≥ 0 when the phase is done)."""

    fn: Callable = eqx.field(static=True)
    label: str = eqx.field(static=True, default="")

    def margin(self, probe):
        return jnp.asarray(self.fn(probe.t, (probe.q, probe.v, probe.z), probe), dtype=probe.q.dtype)

    def describe(self):
        return self.label or getattr(self.fn, "__name__", "callable")


class Never(Condition):
    """The condition of a phase that lasts its ``max_duration``: g = −1 always."""

    def margin(self, probe):
        return -jnp.ones((), dtype=probe.q.dtype)

    def describe(self):
        return "duration"


def condition_from_dict(c) -> Condition:
    """A :class:`Condition` from the dict schema in the module docstring (or a callable, or a Condition)."""
    if isinstance(c, Condition):
        return c
    if callable(c):
        return When(c)
    if not isinstance(c, dict):
        raise ScenarioError(f"a condition is a dict, a callable or a Condition, got {type(c).__name__}")
    if "all" in c or "any" in c:
        key = "all" if "all" in c else "any"
        parts = c[key]
        if not isinstance(parts, (list, tuple)) or not parts:
            raise ScenarioError(f"condition {{{key!r}: ...}} needs a non-empty list of conditions")
        return (AllOf if key == "all" else AnyOf)(tuple(condition_from_dict(p) for p in parts))
    unknown = set(c) - {"output", "op", "value", "tol", "index"}
    if unknown or "output" not in c or "op" not in c or "value" not in c:
        raise ScenarioError(f"condition {c!r}: expected keys output, op, value (and tol for 'near', index); "
                            f"unknown {sorted(unknown)}")
    if c["op"] == "near" and "tol" not in c:
        raise ScenarioError(f"condition {c!r}: op 'near' needs a tol")
    return Threshold(output=str(c["output"]), op=str(c["op"]), value=jnp.asarray(c["value"], dtype=float),
                     tol=jnp.asarray(c.get("tol", 0.0), dtype=float),
                     index=None if c.get("index") is None else int(c["index"]))


def check_signal(name: str, system: System):
    """Raise :class:`ScenarioError` unless a :class:`Probe` of ``system`` can read ``name``."""
    name = _canonical(name, system)
    if name in ("time", "t"):
        return
    head, _, tail = name.rpartition("/")
    m = system.model
    if tail in ("q", "v") and (head in m.body_names or head in m.joint_names):
        return
    if head in m.body_names and tail in _BODY_SIGNALS:
        return
    if head in [f.name for f in system.elements]:
        y = initial_state(system)
        out = {k.split("/", 1)[1]: o for k, o in jax.eval_shape(lambda: system.outputs(0.0, y, only=(head,))).items()}
        if tail in out:
            return
        raise ScenarioError(f"element {head!r} has no output {tail!r}; it has {sorted(out)}")
    raise ScenarioError(_unknown_output(name, system))


# ---------------------------------------------------------------------------------------------
# A phase's settings


def setting_leaf(system: System, element: str, field: str):
    """The array leaf ``element.field`` a phase sets (:func:`jaxmbd.paths.element_field` checks it)."""
    try:
        get = element_field(system, element, field, what="phase setting")
    except LeafPathError as exc:
        raise ScenarioError(str(exc)) from None
    return jnp.asarray(get(system))


def setting_number(value, where, unit):
    """``value`` as a float, or a one-line error: a unit written into a value ('30 s') is the usual slip."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = " (write the number alone; values are in SI units)" if isinstance(value, str) else ""
        raise ScenarioError(f"{where}: expected a number ({unit}), got {value!r}{hint}")
    return float(value)


def _as_leaf(value, like, where):
    if isinstance(value, (str, bool)) or (isinstance(value, (list, tuple)) and any(isinstance(v, (str, bool)) for v in value)):
        raise ScenarioError(f"{where}: expected a number or a list of numbers in SI units, got {value!r}"
                            + (" (write the number alone)" if isinstance(value, str) else ""))
    value = jnp.asarray(value, dtype=like.dtype)
    try:
        return jnp.broadcast_to(value, like.shape)
    except ValueError:
        raise ScenarioError(f"{where}: value of shape {value.shape} does not fit the leaf's shape {like.shape}") from None


def phase_settings(system: System, settings: dict, where: str):
    """(leaves, targets, rates) of a phase's ``set`` table: element-name patterns -> {field: value or
    {"target": x, "rate": r}}."""
    leaves, targets, rates = [], [], []
    for pattern, fields in settings.items():
        matched = [f.name for f in system.elements if fnmatch.fnmatchcase(f.name, pattern)]
        if not matched:
            raise ScenarioError(f"{where}: 'set' names {pattern!r}, which matches no element of "
                                f"{[f.name for f in system.elements]}")
        if not isinstance(fields, dict):
            raise ScenarioError(f"{where}: set.{pattern} must map field names to values")
        for el in matched:
            for field, val in fields.items():
                w = f"{where}: {el}.{field}"
                target, rate = _setting(setting_leaf(system, el, field), val, w)
                targets.append(target)
                rates.append(rate)
                if (el, field) in leaves:
                    raise ScenarioError(f"{w}: set twice in one phase")
                leaves.append((el, field))
    return leaves, targets, rates


def _setting(leaf, val, w):
    """(target, rate or None) of one phase setting: a value, or a schedule {"target": x, "rate": r}."""
    if not isinstance(val, dict):
        return _as_leaf(val, leaf, w), None
    if set(val) != {"target", "rate"}:
        raise ScenarioError(f"{w}: a schedule is {{'target': x, 'rate': r}}, got {sorted(val)}")
    rate = _as_leaf(val["rate"], leaf, w)
    try:
        positive = bool(jnp.all(rate > 0))
    except jax.errors.ConcretizationTypeError:
        positive = True  # traced (under jax.grad): checked when run concretely
    if not positive:
        raise ScenarioError(f"{w}: ramp rate must be > 0")
    return _as_leaf(val["target"], leaf, w), rate
