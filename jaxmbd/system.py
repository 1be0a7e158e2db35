"""System = Model + force elements (controllers included); the ODE right-hand side.

The state is ``y = (q, v, z)``: joint coordinates, joint velocities and the
internal states of the force elements (radiation memory, controller
integrators, winches), concatenated in element order.  Quaternions inside
``q`` are renormalised wherever they are read.

A force element is one Equinox module (see :class:`ForceElement`): it sees the
kinematics of the current state through a :class:`Context` and returns body
wrenches, joint forces and the derivative of its own states.  Adding a new
kind (a fender, a tugger line) means writing one such class in one file of
``jaxmbd/forces/``: its ``kind`` registers it (:data:`ELEMENT_KINDS`) and its
fields' declarations (:mod:`jaxmbd.fields`) make it readable from a system
file and documented; nothing else changes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from . import spatial
from .dynamics import forward_dynamics
from .dynamics.coupled import coupled_forward_dynamics, driven_accelerations, flexible_accelerations, mass_matrix_equations, world_equations
from .errors import InputError, InputTypeError
from .kinematics import Kinematics
from .model import Model


class Context(NamedTuple):
    """What a force element may read at one instant.

    ``kin``: the tree's :class:`~jaxmbd.kinematics.Kinematics` at (q, v), computed once per
    right-hand side and shared with the dynamics and the joint wrenches; its world placements and
    twists read as ``R``, ``p`` ((n, 3, 3), (n, 3)) and ``twist`` (body twists [v; ω] in body
    frames, (n, 6)); ``waves``: the wave realisation of this run (or None); ``params``: run-time
    parameters (a pytree the caller may differentiate, e.g. controller set points).
    """

    t: Any
    q: Any
    v: Any
    kin: Kinematics
    model: Model
    waves: Any = None
    params: Any = None
    prepared: Any = None
    driven: Any = None  # the prescribed joints' accelerations (a vessel on its RAOs), or None
    memo: Any = None  # values computed once per right-hand side and shared between an element's calls (:meth:`once`)

    def once(self, key, compute):
        """``compute()``, evaluated once per context: the same value for every call with ``key`` (an element's
        name and what it is), so that an element's :meth:`~ForceElement.extra_inertia` and
        :meth:`~ForceElement.contribution` share what both need (a Morison object's wave kinematics) instead
        of computing it twice.  A context built without a memo computes every time."""
        if self.memo is None:
            return compute()
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @property
    def R(self):
        return self.kin.R

    @property
    def p(self):
        return self.kin.p

    @property
    def twist(self):
        return self.kin.twist

    def point_position(self, body: int, point):
        """World position of a point given in body coordinates."""
        return self.kin.origin(body) + spatial.mv(self.kin.rotation(body), point)

    def point_velocity(self, body: int, point):
        """World velocity of a point given in body coordinates."""
        tw = self.kin.body_twist(body)
        return spatial.mv(self.kin.rotation(body), tw[:3] + spatial.cross(tw[3:], point))

    def world_point_wrench(self, body: int, point, force_world):
        """Body-frame wrench of a world-frame force acting at a body point (body coordinates)."""
        fb = spatial.mtv(self.kin.rotation(body), force_world)
        return jnp.concatenate([fb, spatial.cross(point, fb)])

    def body_index(self, name: str) -> int:
        """Index of a body by name; ``"world"`` is -1 (a fixed point of the world)."""
        return -1 if name == "world" else self.model.index(name)

    def point(self, body: str, point):
        """World position and velocity of a point given in a body's frame (or of a world point)."""
        point = jnp.asarray(point, dtype=self.p.dtype)
        i = self.body_index(body)
        if i < 0:
            return point, jnp.zeros_like(point)
        return self.point_position(i, point), self.point_velocity(i, point)

    def segment(self, body_a: str, point_a, body_b: str, point_b):
        """The straight line from point a to point b (body coordinates, either body may be "world"):
        world positions and velocities of both ends, unit vector e from a to b, length l and its rate l̇."""
        pa, va = self.point(body_a, point_a)
        pb, vb = self.point(body_b, point_b)
        d = pb - pa
        l = jnp.sqrt(jnp.sum(d * d) + 1e-30)
        e = d / l
        return pa, va, pb, vb, e, l, jnp.sum(e * (vb - va))

    def add_point_force(self, f_ext, body: str, point, force_world):
        """Add a world-frame force acting at a body point to the body wrenches (no-op on the world)."""
        i = self.body_index(body)
        if i < 0:
            return f_ext
        w = self.world_point_wrench(i, jnp.asarray(point, dtype=self.p.dtype), force_world)
        return f_ext.at[i].add(w.astype(f_ext.dtype))  # a float64 time must not leak into a float32 run

    def zeros_f_ext(self):
        return jnp.zeros((self.model.n_bodies, 6), dtype=self.p.dtype)


class Inputs(NamedTuple):
    """What drives one run besides its state: the wave realisation ``waves`` (or None), the
    per-realisation data of the elements ``prepared`` (:meth:`System.prepare`, or its tabulated form
    :meth:`System.tabulate`) and the run-time parameters ``params`` (a pytree the caller may
    differentiate).  Built by :meth:`System.inputs`; None anywhere an ``Inputs`` is expected means
    no waves and no parameters."""

    waves: Any = None
    prepared: Any = None
    params: Any = None


class Contribution(NamedTuple):
    """What a force element returns: body wrenches (n, 6) in body frames, joint forces (nv,),
    and the derivative of its internal states (n_states,).  None means zero."""

    f_ext: Any = None
    tau: Any = None
    zdot: Any = None


ELEMENT_KINDS: dict[str, dict[str, type]] = {"forces": {}, "controllers": {}}
"""Registered element classes by system-file section and kind (filled by :class:`Element`)."""


class Element(eqx.Module):
    """What a system file declares and a run reports on: a named part of a system with a ``kind`` (class
    variable) that registers it in :data:`ELEMENT_KINDS` for its ``section`` and is read from system
    files by its fields' declarations (:mod:`jaxmbd.fields`), with outputs, their units and the ranges
    where its model holds.  Two kinds: :class:`ForceElement` (loads, internal states; ``forces`` and
    ``controllers``) and the closed loops (:class:`jaxmbd.loops.Loop`, ``loops``), which add constraints
    instead of loads: a :class:`System` holds them apart."""

    name: eqx.AbstractVar[str]
    kind: ClassVar[str | None] = None
    section: ClassVar[str] = "forces"
    water_density_field: ClassVar[str | None] = None
    """The field holding the density of the water the element is in (kg/m³), or None for an element that
    does not touch water.  One sea has one density: a :class:`System` refuses elements that disagree,
    and a system file's ``[water] density`` fills it in every such element."""
    validity_doc: ClassVar[tuple] = ()
    """(entry, range, beyond it) rows of the docs' table of the ranges of validity, one per range that
    :meth:`valid_ranges` checks, written beside it (an element that checks ranges must declare them)."""
    file_form: ClassVar[type | None] = None
    """None: a system file gives the element's own declared fields.  Otherwise a class whose declared
    fields (:mod:`jaxmbd.fields`) are what a file gives, and whose ``build()`` returns the element: for
    an element built from a description rather than stored as written (a flexible beam from its
    section properties)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is None:
            return
        registry = ELEMENT_KINDS.setdefault(cls.section, {})
        if kind in registry and registry[kind].__qualname__ != cls.__qualname__:
            raise InputTypeError(f"element kind {kind!r} of {cls.__qualname__} is already {registry[kind].__qualname__}'s")
        registry[kind] = cls

    def sea_density(self) -> float | None:
        """The density of the water this element is in (kg/m³), None if it touches no water (or the
        value is being traced)."""
        if self.water_density_field is None:
            return None
        try:
            return float(getattr(self, self.water_density_field))
        except (TypeError, jax.errors.ConcretizationTypeError):
            return None

    def fixed_reason(self, field: str) -> str | None:
        """Why the array field ``field`` may not be changed once the system is built (by a scenario
        phase or the tuner), or None when it may."""
        return None

    @classmethod
    def file_rules(cls, values: dict, given: dict, fail) -> None:
        """Rules between fields of a system-file entry, checked after each field on its own.

        ``values``: the fields read so far (SI; may be completed here, e.g. a switch another field
        implies); ``given``: the keys as written; ``fail(key, message)`` reports an error on a key."""

    def start_problem(self, ctx: Context) -> str | None:
        """What makes the element's start configuration impossible (an anchor above its fairlead, a
        line too short to reach), as one line for the system file's error, or None.  Evaluated once at
        q0 when a file is read."""
        return None

    def valid_ranges(self, model: Model) -> tuple:
        """Where the element's model holds, as :class:`jaxmbd.validity.ValidRange` bounds on its outputs."""
        return ()

    def output_units(self, model: Model) -> dict:
        """Units of each output of :meth:`outputs` (SI, as strings); a vector output of mixed units
        names them per component, e.g. ``"N (fx fy fz), N m (mx my mz)"``."""
        return {}


class ForceElement(Element):
    """Base class of force elements and controllers.

    Subclasses set ``name`` and implement :meth:`contribution`; those with
    internal states override :attr:`n_states` and :meth:`initial_state`; those
    that report values (a rope tension) override :meth:`outputs`.  A subclass
    with a ``kind`` is registered as every :class:`Element` is, for its ``section``
    (``"forces"`` or ``"controllers"``).
    """

    @property
    def n_states(self) -> int:
        return 0

    def initial_state(self, model: Model, q, v):
        return jnp.zeros(self.n_states, dtype=model.inertia.dtype)

    def extra_inertia(self, ctx: Context):
        """A 6x6 inertia per body at this configuration, added inside the recursion (n, 6, 6), or None.

        It enters the equations as −E a (a the body's spatial acceleration, body frame) and nothing
        else: no weight and no velocity products; an element whose inertia needs velocity terms
        (because it turns with the body, or does not) returns them as wrenches of its contribution."""
        return None

    def coupled_inertia(self, ctx: Context) -> list:
        """Inertia coupling different bodies at this configuration, [(i, j, 6x6)] with
        f_i = −block a_j (a_j body j's spatial acceleration); [] if none."""
        return []

    @property
    def n_flex(self) -> int:
        """Elastic coordinates carried by the element (a flexible body); its first 2 n_flex states
        are [q_f, q̇_f] and the system solves for q̈_f together with the joint accelerations."""
        return 0

    def prepare(self, waves):
        """Work done once per wave realisation (e.g. excitation coefficients); None if nothing."""
        return None

    def tabulate(self, prepared, t0, h, n):
        """Optionally replace ``prepared`` by values tabulated at t0 + k h, k = 0..n, for a fixed-step
        solver whose evaluation times all lie on that grid; default: unchanged."""
        return prepared

    def contribution(self, ctx: Context, z) -> Contribution:
        raise NotImplementedError

    def outputs(self, ctx: Context, z) -> dict:
        return {}

    @property
    def smooth_at_rest(self) -> bool:
        """Whether the element's loads at rest are smooth enough for the static equilibrium's Jacobian by
        central differences (:func:`jaxmbd.simulation.static_equilibrium`); False: exact derivatives (a
        hull's pressure clipped at the waterline, whose panels' corners make kinks)."""
        return True

    def springs(self, ctx: Context) -> tuple:
        """The element's stated stiffness between points of the bodies at this configuration, for the check
        of a fixed step against the stiffest mode (:func:`jaxmbd.validity.stiffest_mode`): ``((body_a,
        point_a, body_b, point_b, k[, direction]), ...)``, points in their bodies' frames (``"world"``: a
        fixed end), k in N/m along ``direction`` (world, (3,)) or, without it, along the line between the
        points; () when it has none worth checking."""
        return ()

    def internal_frequency(self) -> float | None:
        """The highest natural frequency (rad/s) of the element's own states (a lumped line's nodes), for
        the same check; None when it has none."""
        return None


WRENCH_UNITS = "N (fx fy fz), N m (mx my mz)"


def joint_dofs(model: Model, joints):
    """(indices into q, indices into v) of one-coordinate joints (revolute or prismatic), by name."""
    idx = []
    for j in joints:
        i = model.index(j)
        if model.joints[i].nv != 1:
            raise InputError(f"controller joint {j!r}: expected a one-coordinate joint (revolute or prismatic)")
        idx.append(model.v_start[i])
    qidx = [model.q_start[model.index(j)] for j in joints]
    return jnp.asarray(qidx), jnp.asarray(idx)


def joint_units(model: Model, joint: str, translation: str, rotation: str) -> str:
    """``translation`` on a prismatic joint, ``rotation`` on any other one-coordinate joint."""
    from .joints import Prismatic

    return translation if isinstance(model.joints[model.index(joint)], Prismatic) else rotation


def _magnitude(vector) -> float | None:
    """|vector| as a float, None while traced."""
    try:
        return float(np.linalg.norm(np.asarray(vector, dtype=float)))
    except (TypeError, jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return None


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame, from the caller's caller up, outside jaxmbd, equinox and generated code
    (a dataclass's ``__init__``): where a warning about a system is about the user's line."""
    import os
    import sys

    here, frame, level = os.path.dirname(os.path.abspath(__file__)), sys._getframe(2), 2
    while frame is not None and (frame.f_code.co_filename.startswith((here, "<")) or f"{os.sep}equinox{os.sep}" in frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


class System(eqx.Module):
    """A model with its force elements and an optional wave field description.

    ``report_joints``: joints (or their bodies) whose full reaction wrench is an
    output, ``joint/<name>/wrench`` (6,): the wrench the parent exerts on the
    body through the joint, in the body's frame (constraint and actuation).
    """

    model: Model
    forces: tuple = ()
    waves: Any = None
    name: str = eqx.field(static=True, default="system")
    report_joints: tuple = eqx.field(static=True, default=())
    loops: tuple = ()  # closed kinematic loops (jaxmbd.loops.Loop): constraints on the tree, not loads

    def __post_init__(self):
        # The waves' dispersion takes the model's gravity (the sea has no gravity of its own).
        g = _magnitude(self.model.gravity)
        if self.waves is not None and g and getattr(self.waves, "g", g) != g:
            self.waves = dataclasses.replace(self.waves, g=g)
        spectrum = getattr(self.waves, "spectrum", None)  # and so does a spectrum shaped by gravity (Torsethaugen's γ)
        if spectrum is not None and g and getattr(spectrum, "g", g) != g:
            self.waves = dataclasses.replace(self.waves, spectrum=dataclasses.replace(spectrum, g=g))
        gusts = max((getattr(f, "gust_frequencies", 0) for f in self.forces), default=0)  # the wind's gusts: drawn with the waves
        if self.waves is not None and gusts > getattr(self.waves, "gust_frequencies", gusts):
            self.waves = dataclasses.replace(self.waves, gust_frequencies=gusts)
        still = [f.name for f in self.forces if getattr(f, "kind", "") in ("catenary_line", "segmented_line", "mooring_spread")]
        if still and getattr(self.waves, "current", None) is not None:
            import warnings

            warnings.warn(f"{self.name}: the current does not act on the quasi-static lines {', '.join(still)} (they hang in still "
                          "water); a lumped_line takes the current's drag", stacklevel=_caller_level())
        if gusts and self.waves is None:
            from .errors import InputError

            raise InputError(f"{self.name}: the wind's gusts are drawn with each realisation of the sea: give the system a "
                             "sea state ([waves] or [current] in a file)")

    def __check_init__(self):
        from .joints import ModelError

        for f in self.forces:
            if not isinstance(f, ForceElement):
                loop = getattr(f, "section", None) == "loops"
                raise ModelError(f"{self.name}: {getattr(f, 'name', f)!r} is a {type(f).__name__}, not a force element"
                                 + ("; a loop closes the tree: give it as System(..., loops=(...))" if loop else ""))
        for lp in self.loops:
            if getattr(lp, "section", None) != "loops":
                raise ModelError(f"{self.name}: {getattr(lp, 'name', lp)!r} in loops is a {type(lp).__name__}, not a loop")
        densities = {f.name: f.sea_density() for f in self.forces}
        densities = {k: v for k, v in densities.items() if v is not None}
        if len(set(densities.values())) > 1:
            from .joints import ModelError

            text = ", ".join(f"{k!r} {v:g}" for k, v in densities.items())
            raise ModelError(f"{self.name}: one sea has one water density, but the elements disagree ({text} kg/m³); "
                             "give them the same (in a system file: [water] density)")
        if self.loops and any(f.n_flex for f in self.forces):
            raise ModelError(f"{self.name}: closed loops and flexible bodies in one system are not supported")
        names = [f.name for f in self.elements]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ModelError(f"{self.name}: duplicate element names {sorted(dup)}")
        check_drivers(self)

    @property
    def drivers(self) -> tuple:
        """The elements that prescribe a body's motion (``drives``): a vessel given by its RAOs."""
        return tuple(f for f in self.forces if getattr(f, "drives", False))

    @property
    def elements(self) -> tuple:
        """Every named element: the force elements (controllers among them), then the loops."""
        return tuple(self.forces) + tuple(self.loops)

    @property
    def n_states(self) -> int:
        return sum(f.n_states for f in self.forces)

    def state_slices(self) -> list[slice]:
        out, s = [], 0
        for f in self.forces:
            out.append(slice(s, s + f.n_states))
            s += f.n_states
        return out

    def initial_states(self, q, v):
        zs = [f.initial_state(self.model, q, v) for f in self.forces]
        return jnp.concatenate(zs) if zs else jnp.zeros(0, dtype=self.model.inertia.dtype)

    def extra_inertia(self, ctx: Context):
        """Sum of the elements' extra inertias at the context's configuration (n, 6, 6), or None."""
        total = None
        for f in self.forces:
            e = f.extra_inertia(ctx)
            if e is not None:
                total = e if total is None else total + e
        return total

    def coupled_inertia(self, ctx: Context):
        out = []
        for f in self.forces:
            out += f.coupled_inertia(ctx)
        return out

    def prepare(self, waves):
        """Per-realisation data of every element, by element name."""
        if waves is None:
            return None
        return {f.name: f.prepare(waves) for f in self.forces}

    def tabulate(self, prepared, t0, h, n):
        """``prepared`` with time series tabulated at t0 + k h, k = 0..n (see ForceElement.tabulate)."""
        if prepared is None:
            return None
        return {f.name: f.tabulate(prepared[f.name], t0, h, n) for f in self.forces}

    def inputs(self, waves=None, params=None) -> Inputs:
        """The :class:`Inputs` of a run in the wave realisation ``waves`` with parameters ``params``."""
        return Inputs(waves, self.prepare(waves), params)

    def context(self, t, q, v, waves=None, params=None, prepared=None) -> Context:
        driven = None
        if self.drivers:  # a prescribed body is where its motion says, whatever the state holds
            q, v, driven = drive(self, t, q, v, prepared)
        return Context(t, q, v, Kinematics.compute(self.model, q, v), self.model, waves, params, prepared, driven, {})

    def loads(self, t, q, v, z, forcing=None):
        """Sum of all elements' contributions: (f_ext (n, 6), tau (nv,), zdot (n_states,), ctx)."""
        model = self.model
        waves, prepared, params = forcing if forcing is not None else Inputs()
        ctx = self.context(t, q, v, waves, params, prepared)
        dtype = jnp.result_type(q, v)
        f_ext = jnp.zeros((model.n_bodies, 6), dtype=dtype)
        tau = jnp.zeros(model.nv, dtype=dtype)
        zdots = []
        for f, s in zip(self.forces, self.state_slices()):
            c = f.contribution(ctx, z[s])
            # each in the state's dtype: an element that mixes in the (float64) time must not
            # promote a float32 run
            if c.f_ext is not None:
                f_ext = f_ext + c.f_ext.astype(dtype)
            if c.tau is not None:
                tau = tau + c.tau.astype(dtype)
            if f.n_states:
                zdots.append(c.zdot.astype(dtype))
        zdot = jnp.concatenate(zdots) if zdots else jnp.zeros(0, dtype=dtype)
        return f_ext, tau, zdot, ctx

    def rhs(self, t, y, forcing=None):
        """dy/dt for y = (q, v, z); ``forcing``: the run's :class:`Inputs` or None.

        Joint accelerations by the articulated-body algorithm, or, when an
        element couples the inertia of different bodies (multi-body added
        mass), by the composite-rigid-body mass matrix with the coupling added
        through the body Jacobians and a symmetric solve (:func:`~jaxmbd.dynamics.linalg.small_spd_solve`).
        """
        return self.rhs_and_loads(t, y, forcing)[0]

    def rhs_and_loads(self, t, y, forcing=None):
        """(dy/dt, f_ext): :meth:`rhs` and the summed external wrenches on the bodies (n, 6) it used."""
        q, v, z = y
        q = self.model.normalise(q)
        f_ext, tau, zdot, ctx = self.loads(t, q, v, z, forcing)
        vdot, zdot = self._accelerations(ctx, z, f_ext, tau, zdot)
        return (self.model.qdot(ctx.q, ctx.v, ctx.kin), vdot, zdot), f_ext

    def tracked_outputs(self) -> tuple:
        """Outputs whose largest and smallest values a fixed-step run takes at every step, not only at the
        saves (:func:`jaxmbd.simulation.simulate`): every force element's output, or component of one
        (``hydro/eta[3]``), that one of its ranges of validity bounds, and every tension and hook load; those
        that are scalars are kept (:meth:`tracked_values`).  A range on a function of a whole vector output
        (its ``transform``) and the loops' outputs (they need the loops' solve) stay at the saves."""
        names = set()
        for f in self.forces:
            names |= {f"{f.name}/{r.output}" + ("" if r.component is None else f"[{r.component}]")
                      for r in f.valid_ranges(self.model) if r.transform is None}
            names |= {f"{f.name}/{k}" for k in f.output_units(self.model) if k in ("tension", "hook_load")}
        return tuple(sorted(names))

    def tracked_values(self, t, y, forcing, names) -> dict:
        """The scalar outputs among ``names`` (:meth:`tracked_outputs`) at one state."""
        waves, prepared, params = forcing if forcing is not None else Inputs()
        q, v, z = y
        q = self.model.normalise(q)
        ctx = self.context(t, q, v, waves, params, prepared)
        tracked = {}
        for f, s in zip(self.forces, self.state_slices()):
            mine = [n for n in names if n.split("/", 1)[0] == f.name]
            if mine:
                outs = f.outputs(ctx, z[s])
                for n in mine:
                    key, _, k = n.split("/", 1)[1].partition("[")
                    val = outs.get(key)
                    val = val if val is None or not k else (val[int(k[:-1])] if jnp.ndim(val) == 1 else None)
                    if val is not None and jnp.ndim(val) == 0:
                        tracked[n] = jnp.asarray(val, dtype=jnp.result_type(q, v))
        return tracked

    def _loop_solve(self, ctx, f_ext, tau):
        """(v̇, λ, residual, conditioning) of the tree under its loops (:func:`jaxmbd.dynamics.constrained.constrained_accelerations`)."""
        from .dynamics.constrained import constrained_accelerations

        model, extra = self.model, self.extra_inertia(ctx)
        world = world_equations(model, ctx, f_ext, extra)  # None up to 12 coordinates: the recursions
        M, b = mass_matrix_equations(model, ctx, tau, f_ext, extra, self.coupled_inertia(ctx), world)
        return constrained_accelerations(self.loops, model, ctx.q, ctx.v, M, b, ctx.kin, world)

    def _accelerations(self, ctx, z, f_ext, tau, zdot):
        """(v̇, ż) from the summed loads: ABA, or the mass-matrix routes (flexible bodies, coupled inertia,
        closed loops)."""
        q, v = ctx.q, ctx.v
        if self.drivers:  # the prescribed joints' accelerations given, the others' from the mass matrix
            M, b = mass_matrix_equations(self.model, ctx, tau, f_ext, self.extra_inertia(ctx), self.coupled_inertia(ctx))
            return driven_accelerations(M, b, driven_dofs(self), ctx.driven), zdot
        if self.loops:
            return self._loop_solve(ctx, f_ext, tau)[0], zdot
        if any(f.n_flex for f in self.forces):
            flex = [(f, s) for f, s in zip(self.forces, self.state_slices()) if f.n_flex]
            return flexible_accelerations(self.model, ctx, flex, z, f_ext, tau, zdot, self.extra_inertia(ctx))
        coupled = self.coupled_inertia(ctx)
        if coupled:
            return coupled_forward_dynamics(self.model, ctx, tau, f_ext, self.extra_inertia(ctx), coupled), zdot
        return forward_dynamics(self.model, q, v, tau, f_ext, self.extra_inertia(ctx), kinematics=ctx.kin), zdot

    def output_groups(self) -> tuple:
        """The groups :meth:`outputs` computes: each force element's name, and ``"joint"`` for the
        reported joint wrenches."""
        return tuple(f.name for f in self.elements) + (("joint",) if self.report_joints else ())

    def output_units(self) -> dict:
        """Units of every output of :meth:`outputs`, by its full name (``rope/tension`` -> ``N``)."""
        out = {}
        for f in self.elements:
            out |= {f"{f.name}/{k}": u for k, u in f.output_units(self.model).items()}
        out |= {f"joint/{name}/wrench": WRENCH_UNITS for name in self.report_joints}
        return out

    def outputs(self, t, y, forcing=None, only=None, dynamics=None) -> dict:
        """Named outputs of every element at one state (e.g. ``rope/tension``).

        ``only``: the groups to compute (see :meth:`output_groups`); None: all of them.
        ``dynamics``: ``(dy/dt, f_ext)`` at this state, as :meth:`rhs_and_loads` gives (a solver
        that evaluated them already); the joint wrenches then need no second evaluation."""
        waves, prepared, params = forcing if forcing is not None else Inputs()
        q, v, z = y
        q = self.model.normalise(q)
        joints = bool(self.report_joints) and (only is None or "joint" in only)
        loops = bool(self.loops) and (joints or only is None or any(lp.name in only for lp in self.loops))
        if loops:  # the loops' forces: for their outputs, and on the bodies for the joint wrenches
            from .dynamics.constrained import loop_wrenches

            f_ext, tau, _, ctx = self.loads(t, q, v, z, forcing)
            vdot, lam, residual, conditioning = self._loop_solve(ctx, f_ext, tau)
            f_ext = f_ext + loop_wrenches(self.loops, self.model, ctx.kin, lam)
        elif joints and dynamics is None:  # the loads' context serves the elements' outputs too
            f_ext, tau, zdot, ctx = self.loads(t, q, v, z, forcing)
            vdot, _ = self._accelerations(ctx, z, f_ext, tau, zdot)
        else:
            ctx = self.context(t, q, v, waves, params, prepared)
            if joints:
                (_, vdot, _), f_ext = dynamics
        out = {}
        for f, s in zip(self.forces, self.state_slices()):
            if only is not None and f.name not in only:
                continue
            for k, val in f.outputs(ctx, z[s]).items():
                out[f"{f.name}/{k}"] = val
        if loops:
            out |= {k: val for k, val in _loop_outputs(self.loops, self.model, q, ctx.kin, lam, residual, conditioning).items()
                    if only is None or k.split("/")[0] in only}
        if joints:
            from .dynamics import joint_wrenches

            W = joint_wrenches(self.model, q, v, vdot, f_ext, self.extra_inertia(ctx), kinematics=ctx.kin)
            for name in self.report_joints:
                out[f"joint/{name}/wrench"] = W[self.model.index(name)]
        return out


def _loop_outputs(loops, model, q, kin, lam, residual, conditioning) -> dict:
    """Each loop's force and moment on body a, its closure error, and the solve's residual and
    conditioning, by the loop's name."""
    out, k = {}, 0
    for lp in loops:
        m = lp.n_rows
        lk = lam[k : k + m]
        Fa, Ma, _ = lp.wrench_map(model, kin)
        out[f"{lp.name}/force"] = lk @ Fa
        out[f"{lp.name}/moment"] = lk @ Ma
        out[f"{lp.name}/error"] = lp.gap(lp.rows(model, q)[0])  # finite gradient at closure
        out[f"{lp.name}/residual"] = residual
        out[f"{lp.name}/conditioning"] = conditioning
        k += m
    return out


def energy(system: System, q, v):
    """Kinetic + gravitational potential energy of the rigid bodies (J)."""
    from .dynamics import total_energy

    return total_energy(system.model, q, v)


# --------------------------------------------------------------------------- prescribed motions


def check_drivers(system: System):
    """Prescribed motions (a vessel given by its RAOs): one per body, each checked against the model and the
    sea; not with closed loops or flexible bodies (their routes solve every coordinate)."""
    from .joints import ModelError

    drivers = system.drivers
    bodies = [f.body for f in drivers]
    if len(set(bodies)) < len(bodies):
        raise ModelError(f"{system.name}: two prescribed motions on one body ({sorted(bodies)})")
    if drivers and (system.loops or any(f.n_flex for f in system.forces)):
        raise ModelError(f"{system.name}: a prescribed motion ({drivers[0].name!r}) with closed loops or flexible bodies is not "
                         "supported")
    for f in drivers:
        try:
            f.check(system.model, system.waves)
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
            pass  # rebuilt with traced leaves inside a run: checked when it was built with numbers
    for f in system.forces:  # tables of the sea's frequencies and headings (drift coefficients)
        if hasattr(f, "check_sea"):
            try:
                f.check_sea(system.waves, system.model)
            except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
                pass


def driven_dofs(system: System) -> np.ndarray:
    """Indices into v of the prescribed joints' velocities (static)."""
    idx = [np.arange(system.model.v_start[i], system.model.v_start[i] + system.model.joints[i].nv)
           for i in (system.model.index(f.body) for f in system.drivers)]
    return np.concatenate(idx) if idx else np.zeros(0, int)


def drive_saves(system: System, ts, ys, forcing):
    """Saved states ``ys`` ((q, v, z), a leading time axis at ``ts``) with the prescribed joints' coordinates and
    velocities where their motion puts them (the integrated ones differ by a start off the motion's, or
    round-off): a result's ``q`` and ``v`` say what its outputs say."""
    if not system.drivers:
        return ys
    prepared = forcing.prepared if forcing is not None else None
    q, v, z = ys
    q, v = jax.vmap(lambda t, q, v: drive(system, t, q, v, prepared)[:2])(jnp.asarray(ts), q, v)
    return q, v, z


def drive(system: System, t, q, v, prepared):
    """(q, v) with the prescribed joints' coordinates and velocities at time t, and their accelerations."""
    model, acc = system.model, []
    q, v = jnp.asarray(q), jnp.asarray(v)
    for f in system.drivers:
        i = model.index(f.body)
        qj, vj, aj = f.joint_state(model, t, prepared.get(f.name) if prepared else None)
        qs, vs = model.q_start[i], model.v_start[i]
        q = q.at[qs:qs + qj.shape[0]].set(qj.astype(q.dtype))
        v = v.at[vs:vs + vj.shape[0]].set(vj.astype(v.dtype))
        acc.append(aj.astype(v.dtype))
    return q, v, (jnp.concatenate(acc) if acc else None)
