"""System files: a TOML description of bodies, joints, hydrodynamics, force elements, controllers,
waves and run settings, read into a simulable :class:`~jaxmbd.system.System`.

``load_system(path)`` returns a :class:`LoadedSystem`: the System, the
initial configuration q0, an :class:`~jaxmbd.simulation.Integrator`, the run
settings, an optional sea-state sweep, the scenario phases (plain dicts for
``jaxmbd.scenario.Scenario.from_dict``), the file path and the raw table.
The schema is in ``docs/system_file.md``.

Units are SI (kg, m, s, N, rad) except where a key ends in ``_deg``: angles a
person writes (placement ``rpy_deg``, wave ``direction_deg``) are in degrees.
Paths inside a file are relative to the file.

Force elements and controllers map through the ``KINDS`` registries of
:mod:`jaxmbd.forces` and :mod:`jaxmbd.control`: the keys of an entry are the
class's dataclass fields, checked by name, type and, where a field is known
below, by shape and range.  A new element kind registered there is read with
no change here.  No code from a file is ever executed.

Every problem in a file is one :class:`SystemFileError`, one line: the file,
the field path (``bodies[2].inertia``, ``forces[0].EA``) and what was
expected.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import JaxmbdError
from ..fields import field_specs, is_required

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

__all__ = [
    "SystemFileError",
    "LoadedSystem",
    "SimulationSettings",
    "SweepTable",
    "load_system",
    "system_from_dict",
]


class SystemFileError(JaxmbdError, ValueError):
    """A system file that cannot be used: one line naming the file, the field and what was expected."""

    def __init__(self, source: str, field: str, problem: str):
        self.source = source
        self.field = field
        self.problem = " ".join(str(problem).split())  # one line, whatever the wrapped message held
        super().__init__(f"{source}: {field}: {self.problem}" if field else f"{source}: {self.problem}")


# --------------------------------------------------------------------------- results of loading


@dataclasses.dataclass(frozen=True)
class SimulationSettings:
    """``[simulation]``: run length ``duration`` (s), save interval ``save_dt`` (s, None: the
    simulator's default), ``n_realisations`` wave realisations (None: one unbatched run), PRNG
    ``seed``, whether to start from the static equilibrium and which velocity directions it may
    move (``equilibrium_free``, (nv,) bools; None: all)."""

    duration: float
    save_dt: float | None = None
    n_realisations: int | None = None
    seed: int = 0
    static_equilibrium: bool = False
    equilibrium_free: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class SweepTable:
    """``[sweep]`` as the file writes it (the command line completes it into a
    :class:`jaxmbd.sweep.SweepSettings`): the sea-state grid (significant wave heights ``hs`` (m) x peak periods ``tp``
    (s)); ``limits``, upper limits (SI units of the output) on scalar outputs by name
    (``{"hoist/tension": 6e6}``), held against ``statistic`` of the per-realisation maxima
    (``mpm``, ``mean``, ``p50``, ``p90``, ``p99``); the run length (s) and realisations per
    cell (None: those of ``[simulation]``)."""

    hs: tuple[float, ...]
    tp: tuple[float, ...]
    limits: dict = dataclasses.field(default_factory=dict)
    statistic: str = "mpm"
    duration: float | None = None
    n_realisations: int | None = None


@dataclasses.dataclass
class LoadedSystem:
    """What a system file describes: ``system`` (the :class:`~jaxmbd.system.System`), the initial
    configuration ``q0`` (nq,), the ``integrator``, the run settings ``simulation``, the optional
    ``sweep``, the ``scenario`` table (``{"phases": [dict, ...], ...}`` or None), the file ``path``
    and the raw ``config`` table (for result attributes)."""

    system: Any
    q0: Any
    integrator: Any
    simulation: SimulationSettings
    sweep: SweepTable | None
    scenario: dict | None
    path: Path | None
    config: dict

    @property
    def model(self):
        return self.system.model

    # The run settings by their own names, for callers that read them flat.
    @property
    def duration(self) -> float:
        return self.simulation.duration

    @property
    def save_dt(self):
        return self.simulation.save_dt

    @property
    def seed(self) -> int:
        return self.simulation.seed

    @property
    def n_realisations(self):
        return self.simulation.n_realisations

    @property
    def equilibrium(self) -> bool:
        return self.simulation.static_equilibrium

    @property
    def free(self):
        return self.simulation.equilibrium_free

    @property
    def scenario_phases(self) -> list[dict]:
        return list(self.scenario.get("phases", [])) if self.scenario else []

    def build_scenario(self):
        """The :class:`jaxmbd.scenario.Scenario` of the ``[scenario]`` table (None without one)."""
        if not self.scenario:
            return None
        from ..scenario import Scenario

        return Scenario.from_dict(self.scenario, self.system)

    def key(self):
        """The PRNG key of ``simulation.seed``."""
        import jax

        return jax.random.key(self.simulation.seed)

    def attrs(self) -> dict:
        """Result attributes: the file and its table as JSON (NetCDF attributes must be strings or numbers)."""
        return {
            "system_file": str(self.path) if self.path else "",
            "system_config": json.dumps(self.config, default=_json_default),
        }

    def initial_configuration(self):
        """q0, moved to the static equilibrium when ``simulation.static_equilibrium`` asks for it."""
        if not self.simulation.static_equilibrium:
            return self.q0
        from ..simulation import static_equilibrium

        return static_equilibrium(self.system, self.q0, free=self.simulation.equilibrium_free)

    def initial_state(self):
        """(q0, z0): :meth:`initial_configuration` and, where the static equilibrium bends flexible
        bodies, their elastic states at rest (else None: the elements' own initial states)."""
        if not (self.simulation.static_equilibrium and any(f.n_flex for f in self.system.forces)):
            return self.initial_configuration(), None
        from ..simulation import static_equilibrium

        return static_equilibrium(self.system, self.q0, free=self.simulation.equilibrium_free, return_states=True)

    def realisations(self, n: int | None = None) -> int | None:
        """Realisations of a run: with waves ``n``, else the file's, at least one; without waves None
        (one deterministic run: realisations would be copies of it)."""
        n = self.simulation.n_realisations if n is None else n
        return (n or 1) if self.system.waves is not None else None

    def run(self, *, seed: int | None = None, **overrides):
        """Simulate with the file's settings, the one way a loaded file is run (``jaxmbd run`` calls
        it too); keyword arguments of :func:`~jaxmbd.simulation.simulate` override them and ``seed``
        the file's seed.  With waves the run has ``n_realisations`` realisations (the file's, else 1).
        The result carries :meth:`attrs`, the realisations, the duration and, in its attributes and
        ``excursions``, the ranges of validity its elements left (:mod:`jaxmbd.validity`).  A file with a ``[scenario]`` is run by its
        scenario (``jaxmbd run``, or :meth:`build_scenario`), not here: refused."""
        import jax

        from .. import validity
        from ..simulation import simulate

        if self.scenario:
            raise SystemFileError(str(self.path or "<system table>"), "scenario",
                                  "the file describes a scenario of phases; run it with `jaxmbd run` or "
                                  "loaded.build_scenario(), not as one simulation")
        s = self.simulation
        n = self.realisations(overrides.pop("n_realisations", None))
        q0, z0 = self.initial_state()
        kw = dict(duration=s.duration, save_dt=s.save_dt, integrator=self.integrator, q0=q0, z0=z0,
                  key=jax.random.key(s.seed if seed is None else seed) if self.system.waves is not None or n else None,
                  n_realisations=n)
        kw.update(overrides)
        result = simulate(self.system, **kw)
        result.excursions = validity.check(self.system, result.time, result.outputs, result.batched)
        result.attrs.update(self.attrs() | {"realisations": int(n or 1), "duration_s": float(kw["duration"])}
                            | validity.to_attrs(result.excursions))
        return result


def _json_default(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return str(x)


def _jnp(x):
    import jax.numpy as jnp

    return jnp.asarray(x, dtype=float)


# --------------------------------------------------------------------------- reading values

_REQUIRED = object()


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
            self.fail(field, f"expected a table, got {_describe(value)}")
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
            self.fail(field, f"expected an array of tables ([[{field}]]), got {_describe(value)}")
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
            self.fail(where, f"expected a number, got {_describe(v)}")
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
            self.fail(where, f"expected an integer, got {_describe(v)}")
        if ge is not None and v < ge:
            self.fail(where, f"must be >= {ge}, got {v}")
        return int(v)

    def boolean(self, t, field, key, default=_REQUIRED):
        v = self.get(t, field, key, default)
        if not isinstance(v, bool):
            self.fail(_join(field, key), f"expected true or false, got {_describe(v)}")
        return v

    def string(self, t, field, key, default=_REQUIRED, *, choices=None):
        v = self.get(t, field, key, default)
        if v is default and key not in t:
            return v
        where = _join(field, key)
        if not isinstance(v, str):
            self.fail(where, f"expected a string, got {_describe(v)}")
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
            self.fail(where, f"expected a list of names (strings), got {_describe(v)}")
        return list(v)

    # -- arrays ---------------------------------------------------------------------------

    def array(self, v, where, shapes=None, *, allow_inf=False) -> np.ndarray:
        """A number or a rectangular nested list of numbers, of one of ``shapes`` (None: any)."""
        arr = self._nested(v, where)
        if not allow_inf and not np.all(np.isfinite(arr)):
            self.fail(where, f"expected finite numbers, got {_short(v)}")
        if allow_inf and np.any(np.isnan(arr)):
            self.fail(where, f"expected numbers, got NaN in {_short(v)}")
        if shapes is not None and arr.shape not in shapes:
            self.fail(where, f"expected {_shapes_text(shapes)}, got {_shape_text(arr.shape)}")
        return arr

    def _nested(self, v, where):
        if isinstance(v, bool) or not isinstance(v, (int, float, list)):
            self.fail(where, f"expected a number or a list of numbers, got {_describe(v)}")
        if isinstance(v, list):
            parts = [self._nested(x, where) for x in v]
            if parts and any(p.shape != parts[0].shape for p in parts):
                self.fail(where, f"rows of different lengths in {_short(v)}; expected a rectangular array")
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


def jnp_asarray(x):
    import jax.numpy as jnp

    return jnp.asarray(x)


def _short(v, n=60):
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _describe(v):
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "table"}.get(
        type(v), type(v).__name__
    )
    return f"{kind} {_short(v)}"


def _shape_text(shape):
    if shape == ():
        return "a single number"
    if len(shape) == 1:
        return f"a list of {shape[0]} numbers"
    return f"a {' x '.join(map(str, shape))} array"


def _shapes_text(shapes):
    return " or ".join(_shape_text(s) for s in shapes)


# --------------------------------------------------------------------------- schema constants

_TOP_KEYS = (
    "name", "description", "gravity", "report_joints", "model", "bodies", "hydro", "forces", "controllers", "loops",
    "waves", "current", "simulation", "sweep", "scenario", "tune",
)
_MODEL_KEYS = ("urdf", "floating", "q0")
_BODY_KEYS = (
    "name", "parent", "joint", "joint_name", "axis", "axis1", "axis2", "xyz", "rpy_deg",
    "mass", "com", "inertia", "radii_of_gyration", "spatial_inertia",
    "q0", "q0_deg", "q0_xyz", "q0_rpy_deg",
)
_HYDRO_KEYS = (
    "name", "bodies", "file", "wamit", "mesh", "box", "cylinder",
    "omega_max", "xz_symmetry", "wamit_length",
    "omegas", "omega_range", "wave_directions_deg", "rho", "g", "water_depth", "center_of_mass", "rotation_center",
    "origin", "ramp_time", "radiation", "radiation_tol", "added_mass_inf", "mass", "com",
    "linear_damping", "quadratic_drag", "excitation", "body_to_body", "hydrostatics", "froude_krylov", "hull", "hull_scale",
)
_WAVE_TYPES = ("jonswap", "pierson_moskowitz", "regular")
_CURRENT_KEYS = ("speed", "direction_deg", "profile", "power_law_depth")
_WAVE_KEYS = (
    "type", "hs", "tp", "gamma", "sigma_a", "sigma_b", "height", "period", "phase_deg", "direction_deg",
    "n_frequencies", "omega_min", "omega_max", "n_directions", "spreading", "random_frequencies", "water_depth",
)
_SIM_KEYS = (
    "duration", "save_dt", "method", "dt", "rtol", "atol", "max_steps", "checkpoints", "checkpoint", "use_diffrax",
    "n_realisations", "seed", "static_equilibrium", "equilibrium_free",
)
_SWEEP_KEYS = ("hs", "tp", "statistic", "duration", "n_realisations", "limits")
_STATISTICS = ("mpm", "mean", "p50", "p90", "p99")  # of the per-realisation maxima (jaxmbd.statistics)

# --------------------------------------------------------------------------- entry points


def load_system(path, *, validate: bool = True) -> LoadedSystem:
    """Read a TOML system file (``docs/system_file.md``) into a :class:`LoadedSystem`.

    Paths inside the file are relative to it.  Raises :class:`SystemFileError`,
    one line naming the file, the field and what was expected, for any
    problem: TOML syntax (with the line), unknown or missing keys, wrong types,
    shapes or ranges, unknown names, missing data files, and the model and
    hydrodynamic-data errors of the library, whose messages it keeps.

    ``validate``: after reading (which traces every element once for its shapes), the physical
    checks, evaluated: the mass matrix at q0 with the elements' added inertia is positive definite,
    a failure blamed on the bodies.  False skips them: for tools that only inspect files.
    """
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SystemFileError(source, "", "file does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemFileError(source, "", f"cannot read the file: {exc}") from None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        where = f"line {m.group(1)}" if m else "TOML"
        raise SystemFileError(source, where, f"TOML syntax error: {exc}") from None
    return system_from_dict(config, path=path, validate=validate)


def system_from_dict(config: dict, *, path=None, base_dir=None, validate: bool = True) -> LoadedSystem:
    """Build a :class:`LoadedSystem` from an already parsed table (same schema as the file).

    ``path``: the file it came from (named in errors, and the folder that
    relative paths start from unless ``base_dir`` is given); ``validate`` as in :func:`load_system`.
    """
    path = Path(path) if path is not None else None
    base = Path(base_dir) if base_dir is not None else (path.parent if path is not None else Path.cwd())
    source = str(path) if path is not None else "<system table>"
    return _Loader(TableReader(source, base), config, path).load(validate)


# --------------------------------------------------------------------------- the loader


class _Loader:
    def __init__(self, r: TableReader, config, path):
        self.r = r
        self.config = config
        self.path = path
        self.urdf_loops = ()  # the loops a [model] URDF closes (load_urdf_with_loops)

    def load(self, validate: bool = True) -> LoadedSystem:
        r = self.r
        cfg = r.table(self.config, "", _TOP_KEYS)
        self.name = r.string(cfg, "", "name", path_stem(self.path))
        self.file_name(self.name, "name")
        r.string(cfg, "", "description", "")
        gravity = r.vector(cfg, "", "gravity", 3, (0.0, 0.0, -9.81))

        self.build_model(cfg, gravity)
        # waves before hydro: the data's headings and frequencies are checked against them
        waves = self.waves = self.build_waves(cfg)
        hydro = self.build_hydro(cfg)
        forces = self.build_elements(cfg, "forces")
        controllers = self.build_elements(cfg, "controllers")
        loops = self.build_elements(cfg, "loops") + [("model.urdf", lp) for lp in self.urdf_loops]
        elements = self.elements = hydro + forces + controllers + loops
        self.check_unique_names(elements)
        report = self.report_joints(cfg)

        from ..joints import ModelError
        from ..system import System

        try:
            system = System(self.model, tuple(f for _, f in elements), waves, name=self.name, report_joints=report)
        except (ModelError, ValueError) as exc:
            r.fail("forces", str(exc))
        self.trial(system, elements)  # shapes only: the outputs a sweep or a scenario may name
        if validate:
            self.validate(system)
        integrator, sim = self.build_simulation(cfg, system)
        sweep = self.build_sweep(cfg, system, sim)
        scenario = self.build_scenario(cfg, system)
        return LoadedSystem(
            system=system,
            q0=self.q0,
            integrator=integrator,
            simulation=sim,
            sweep=sweep,
            scenario=scenario,
            path=self.path,
            config=self.config,
        )

    def validate(self, system):
        """The physical checks of a read system, numbers evaluated: the mass matrix at q0 with the
        elements' added inertia is positive definite (:meth:`check_inertia`), and each element can
        start at q0 (:meth:`ForceElement.start_problem`)."""
        self.check_inertia(system)
        self.check_start(system)

    def check_start(self, system):
        model = system.model
        ctx = system.context(0.0, self.q0, np.zeros(model.nv))
        for f, el in self.elements:
            problem = el.start_problem(ctx)
            if problem:
                self.r.fail(f, problem)
        if system.loops:
            self.check_loops(system)

    def check_loops(self, system):
        """The loops' rows at q0 independent: rows the tree satisfies by itself (a planar linkage's
        out-of-plane row) are empty and harmless; rows that repeat others make the loops' forces not
        unique (over-constrained).  A set that leaves no freedom (a truss) is allowed."""
        from ..dynamics.constrained import loop_terms

        model = system.model
        _, J, _ = loop_terms(system.loops, model, jnp_asarray(self.q0), np.zeros(model.nv))
        J = np.asarray(J)
        scale = max(float(np.abs(J).max()), 1e-300)
        J = J[np.abs(J).max(axis=1) > 1e-9 * scale]
        if J.shape[0] == 0:
            return
        sv = np.linalg.svd(J, compute_uv=False)
        rank = int(np.sum(sv > 1e-9 * sv[0]))
        if rank < J.shape[0]:
            self.r.fail("loops", f"the loops are over-constrained at q0: {J.shape[0]} constraint rows of rank {rank} on "
                        f"{model.nv} joint velocities, so their forces are not unique; remove a loop or make one a ball")

    # -- bodies and joints -------------------------------------------------------------------

    def model_from_urdf(self, cfg, gravity, builder, joint_names, q0_entries):
        """``[model]``: every link of a URDF file as a body of the builder, and its ``q0`` table."""
        from ..joints import ModelError
        from ..model import WORLD, Body, Placement

        r = self.r
        m = r.table(cfg["model"], "model", _MODEL_KEYS)
        urdf = r.path(m, "model", "urdf")
        floating = r.boolean(m, "model", "floating", False)
        try:
            from ..loops import load_urdf_with_loops

            base, self.urdf_loops = load_urdf_with_loops(urdf, floating=floating, gravity=gravity)
        except ModelError as exc:
            r.fail("model.urdf", str(exc))
        for i, n in enumerate(base.body_names):
            lam = base.parents[i]
            builder.add_body(
                n,
                body=Body(spatial_inertia=np.asarray(base.inertia[i])),
                joint=base.joints[i],
                parent=WORLD if lam < 0 else base.body_names[lam],
                placement=Placement(np.asarray(base.placement_R[i]), np.asarray(base.placement_p[i])),
                joint_name=base.joint_names[i],
            )
            self.origin_of[n] = "model.urdf"
            self.origin_of[base.joint_names[i]] = "model.urdf"
            joint_names.add(base.joint_names[i])
        q0_urdf = r.table(m.get("q0", {}), "model.q0", list(base.joint_names) + list(base.body_names))
        for jn, val in q0_urdf.items():
            q0_entries.append((jn, f"model.q0.{jn}", r.array(val, f"model.q0.{jn}", None), "q0"))

    def body_joint(self, b, f):
        """The joint a ``[[bodies]]`` entry hangs from: its kind and unit axes, checked."""
        from ..joints import KINDS as JOINT_KINDS
        from ..joints import ModelError

        r = self.r
        kind_name = r.string(b, f, "joint", "fixed", choices=tuple(JOINT_KINDS))
        cls = JOINT_KINDS[kind_name]
        axis_keys = [x.name for x in dataclasses.fields(cls)]
        for key in ("axis", "axis1", "axis2"):
            if key in b and key not in axis_keys:
                r.fail(f"{f}.{key}", f"not used by a {kind_name!r} joint (its keys: {', '.join(axis_keys) or 'none'})")
        kw = {}
        for key in axis_keys:
            if key in b:
                a = r.array(b[key], f"{f}.{key}", [(3,)])
                n = float(np.linalg.norm(a))
                if not abs(n - 1.0) <= 1e-3:
                    r.fail(f"{f}.{key}", f"expected a unit vector, got {a.tolist()} with norm {n:.6g}")
                kw[key] = tuple(float(x) for x in a / n)
        joint = cls(**kw)
        try:
            joint = joint.check(f"{r.source}: {f}")
        except ModelError as exc:
            r.fail(f"{f}.joint", str(exc))
        return joint

    def build_model(self, cfg, gravity):
        from ..joints import ModelError
        from ..model import WORLD, Body, ModelBuilder, Placement

        r = self.r
        builder = ModelBuilder(gravity=gravity, source=r.source)
        self.origin_of = {}  # body or joint name -> field path where it was defined (for later errors)
        joint_names = set()
        q0_entries = []  # (body name, field, q0 (nq,) or None, source key)
        if "model" in cfg:
            self.model_from_urdf(cfg, gravity, builder, joint_names, q0_entries)

        bodies = r.tables(cfg.get("bodies", []), "bodies")
        if not bodies and "model" not in cfg:
            r.fail("bodies", "the file defines no bodies: add [[bodies]] entries or [model] urdf = ...")
        entries = []
        for k, b in enumerate(bodies):
            f = f"bodies[{k}]"
            r.table(b, f, _BODY_KEYS)
            name = r.string(b, f, "name")
            if name == WORLD:
                r.fail(f + ".name", f"{WORLD!r} is the fixed world frame; choose another name")
            if name in self.origin_of:
                r.fail(f + ".name", f"duplicate body name {name!r} (already defined in {self.origin_of[name]})")
            joint_name = r.string(b, f, "joint_name", f"{name}_joint")
            if joint_name in self.origin_of:
                r.fail(f + ".joint_name", f"duplicate joint name {joint_name!r} (already in {self.origin_of[joint_name]})")
            self.origin_of[name] = f
            self.origin_of[joint_name] = f
            joint_names.add(joint_name)
            joint = self.body_joint(b, f)
            xyz = r.vector(b, f, "xyz", 3, (0.0, 0.0, 0.0))
            rpy = np.deg2rad(r.vector(b, f, "rpy_deg", 3, (0.0, 0.0, 0.0)))
            body = self.body_inertia(b, f, Body)
            parent = r.string(b, f, "parent", WORLD)
            builder.add_body(
                name, body=body, joint=joint, parent=parent,
                placement=Placement.from_xyz_rpy(xyz, rpy), joint_name=joint_name,
            )
            entries.append((name, parent, f))
            q0 = self.joint_q0(b, f, joint)
            if q0 is not None:
                q0_entries.append((name, f, q0[0], q0[1]))
        known = set(self.origin_of)
        body_names = [n for n in self.origin_of if n not in joint_names]
        for name, parent, f in entries:
            if parent != WORLD and parent not in known:
                r.fail(f"{f}.parent", f"unknown parent {parent!r}; bodies: {', '.join(body_names)} or 'world'")
            if parent == name:
                r.fail(f"{f}.parent", f"body {name!r} cannot hang from itself")
        try:
            model = builder.build()
        except ModelError as exc:
            r.fail("bodies", str(exc))
        self.model = model
        self.known_names = set(model.body_names) | set(model.joint_names)

        q0 = np.asarray(model.neutral(), dtype=float).copy()
        for name, f, val, key in q0_entries:
            i = model.index(name)
            j = model.joints[i]
            if val.shape != (j.nq,):
                r.fail(f"{f}.{key}" if not f.startswith("model.") else f,
                       f"expected {_shape_text((j.nq,))} for a {j.name!r} joint (nq = {j.nq}), got {_shape_text(val.shape)}")
            if not np.all(np.isfinite(val)):
                r.fail(f"{f}.{key}" if not f.startswith("model.") else f, "expected finite numbers")
            val = self.unit_quaternions(val, j, f if f.startswith("model.") else f"{f}.{key}")
            q0[model.q_start[i] : model.q_start[i] + j.nq] = val
        self.q0 = _jnp(q0)

    def body_inertia(self, b, f, Body):
        r = self.r
        from ..joints import ModelError

        if "spatial_inertia" in b:
            for key in ("mass", "com", "inertia", "radii_of_gyration"):
                if key in b:
                    r.fail(f"{f}.{key}", "give either spatial_inertia or mass/com/inertia, not both")
            I = r.array(b["spatial_inertia"], f"{f}.spatial_inertia", [(6, 6)])
            body = Body(spatial_inertia=I)
            key = "spatial_inertia"
        else:
            mass = r.number(b, f, "mass", ge=0.0)
            com = r.vector(b, f, "com", 3, (0.0, 0.0, 0.0))
            if "inertia" in b and "radii_of_gyration" in b:
                r.fail(f"{f}.radii_of_gyration", "give either inertia or radii_of_gyration, not both")
            if "radii_of_gyration" in b:
                k = r.array(b["radii_of_gyration"], f"{f}.radii_of_gyration", [(3,)])
                if np.any(k < 0):
                    r.fail(f"{f}.radii_of_gyration", f"radii of gyration must be >= 0 m, got {k.tolist()}")
                I = np.diag(mass * k**2)
                key = "radii_of_gyration"
            else:
                I = r.array(b.get("inertia", [0.0, 0.0, 0.0]), f"{f}.inertia", [(3,), (3, 3)])
                key = "inertia"
            body = Body(mass=mass, com=com, inertia=I)
        try:
            body.matrix(f"{r.source}: {f}")
        except ModelError as exc:
            r.fail(f"{f}.{key}", str(exc).split(": ", 2)[-1])
        return body

    def joint_q0(self, b, f, joint):
        """(q0 of the joint, the key it came from) or None."""
        r = self.r
        given = [k for k in ("q0", "q0_deg", "q0_xyz", "q0_rpy_deg") if k in b]
        if not given:
            return None
        if "q0" in given and len(given) > 1:
            r.fail(f"{f}.{given[1]}", "give either q0 (joint coordinates, SI) or q0_deg / q0_xyz / q0_rpy_deg, not both")
        if "q0" in given:
            return r.array(b["q0"], f"{f}.q0", None), "q0"
        if "q0_deg" in given:
            if joint.name not in ("revolute", "universal"):
                r.fail(f"{f}.q0_deg", f"q0_deg is for revolute and universal joints (angles in degrees), not {joint.name!r}; use q0")
            return np.deg2rad(r.array(b["q0_deg"], f"{f}.q0_deg", [(joint.nq,)])), "q0_deg"
        from .. import spatial

        if joint.name not in ("free", "spherical"):
            r.fail(f"{f}.{given[0]}", f"q0_xyz / q0_rpy_deg are for free and spherical joints, not {joint.name!r}; use q0")
        if "q0_xyz" in given and joint.name != "free":
            r.fail(f"{f}.q0_xyz", "a spherical joint has no position; use q0_rpy_deg")
        xyz = r.vector(b, f, "q0_xyz", 3, (0.0, 0.0, 0.0))
        rpy = np.deg2rad(r.vector(b, f, "q0_rpy_deg", 3, (0.0, 0.0, 0.0)))
        quat = spatial.matrix_to_quat(np.asarray(spatial.rpy_to_matrix(rpy)))
        return (np.concatenate([xyz, quat]) if joint.name == "free" else quat), "q0"

    def unit_quaternions(self, val, joint, where):
        sl = {"free": slice(3, 7), "spherical": slice(0, 4)}.get(joint.name)
        if sl is None:
            return val
        qn = float(np.linalg.norm(val[sl]))
        if not abs(qn - 1.0) <= 1e-3:
            self.r.fail(where, f"the quaternion [qw, qx, qy, qz] = {val[sl].tolist()} has norm {qn:.6g}; expected a unit quaternion")
        val = val.copy()
        val[sl] = val[sl] / qn
        return val

    def names(self, value, where, *, world=False, what="body"):
        """Check model names (a string or a list of strings); joints may be named by their body too."""
        items = value if isinstance(value, (list, tuple)) else [value]
        for n in items:
            if n == "world" and world:
                continue
            if n == "world" or n not in self.known_names:
                known = list(self.model.joint_names if what == "joint" else self.model.body_names)
                self.r.fail(where, f"unknown {what} {n!r}; known: {', '.join(known + (['world'] if world else []))}")

    # -- hydrodynamics ----------------------------------------------------------------------

    def build_hydro(self, cfg):
        out = []
        r = self.r
        for k, h in enumerate(r.tables(cfg.get("hydro", []), "hydro")):
            f = f"hydro[{k}]"
            r.table(h, f, _HYDRO_KEYS)
            out.append((f, self.hydro_element(h, f, k)))
        return out

    def hydro_element(self, h, f, k):
        from ..hydro.bem import HydroDataError
        from ..hydro.body import HydroBody

        r = self.r
        sources = [s for s in ("file", "wamit", "mesh", "box", "cylinder") if s in h]
        if len(sources) != 1:
            r.fail(f, f"needs exactly one of file (Capytaine NetCDF), wamit (.out), mesh, box, cylinder; got {sources or 'none'}")
        src = sources[0]
        name = r.string(h, f, "name", "hydro" if k == 0 else f"hydro{k}")
        self.file_name(name, f"{f}.name")
        hydro = self.hydro_data(h, f, src, name)
        if r.boolean(h, f, "xz_symmetry", False):
            hydro = hydro.with_xz_symmetry()
        self.check_headings(f, hydro, self.waves)
        nb = hydro.n_bodies
        bodies = r.strings(h, f, "bodies", list(hydro.body_names))
        if len(bodies) != nb:
            r.fail(f"{f}.bodies", f"expected {nb} model bodies (one per body of {hydro.source}), got {len(bodies)}")
        self.names(bodies, f"{f}.bodies")
        origin = r.vector(h, f, "origin", 3, (0.0, 0.0, 0.0))
        ramp = r.number(h, f, "ramp_time", 0.0, ge=0.0)
        radiation = r.boolean(h, f, "radiation", True)
        tol = r.number(h, f, "radiation_tol", 0.02, gt=0.0, le=1.0)
        ainf = r.string(h, f, "added_mass_inf", "fit", choices=("fit", "file"))
        mass = None
        if "mass" in h:
            mass = r.array(h["mass"], f"{f}.mass", [(), (nb,)]).reshape(-1)
            if np.any(mass <= 0):
                r.fail(f"{f}.mass", f"must be > 0 kg, got {h['mass']!r}")
        com = r.array(h["com"], f"{f}.com", [(3,), (nb, 3)]).reshape(nb, 3) if "com" in h else None
        lin = r.array(h["linear_damping"], f"{f}.linear_damping", [(6 * nb, 6 * nb)]) if "linear_damping" in h else None
        quad = r.array(h["quadratic_drag"], f"{f}.quadratic_drag", [(6 * nb,)]) if "quadratic_drag" in h else None
        if quad is not None and np.any(quad < 0):
            r.fail(f"{f}.quadratic_drag", "must be >= 0")
        excitation = r.boolean(h, f, "excitation", True)
        body_to_body = r.boolean(h, f, "body_to_body", True)
        hull_boxes = None
        if src == "box":  # its dimensions bound the linear hydrostatics' range (jaxmbd.validity)
            box = h["box"]
            depth = r.number(box, f"{f}.box", "depth", None, gt=float(box["draught"]))
            hull_boxes = ((float(box["length"]), float(box["beam"]), float(box["draught"]), depth),)
        modes = {key: r.string(h, f, key, "linear", choices=("linear", "nonlinear")) for key in ("hydrostatics", "froude_krylov")}
        hulls = self.hulls(h, f, src, nb, modes["hydrostatics"] == "nonlinear")
        try:
            return HydroBody.create(
                self.model, hydro, name=name, bodies=tuple(bodies), q_equilibrium=self.q0, origin=origin,
                radiation=radiation, radiation_tol=tol, mass=mass, com=com, linear_damping=lin,
                quadratic_drag=quad, excitation=excitation, ramp_time=ramp, added_mass_inf=ainf,
                body_to_body=body_to_body, hull_boxes=hull_boxes, hulls=hulls, **modes,
            )
        except (HydroDataError, ValueError, np.linalg.LinAlgError) as exc:
            r.fail(f, str(exc))

    def hulls(self, h, f, src, nb, nonlinear):
        """The closed hulls of a ``[[hydro]]`` entry for non-linear hydrostatics: read from ``hull`` (a
        mesh file, times ``hull_scale``), or a box with ``depth`` or a cylinder with ``height``."""
        from ..hydro.hull import HullMeshError, box_hull, cylinder_hull, load_hull

        r = self.r
        for key in ("hull", "hull_scale"):
            if key in h and not nonlinear:
                r.fail(f"{f}.{key}", "a closed hull is used by hydrostatics = \"nonlinear\" only; set that, or remove it")
        if not nonlinear:
            return None
        if nb != 1:
            r.fail(f"{f}.hydrostatics", f"non-linear hydrostatics from a system file take one body per [[hydro]] entry; this one has {nb}")
        try:
            if isinstance(h.get("hull"), dict):
                return (self.hull_shape(h["hull"], f"{f}.hull"),)
            if "hull" in h:
                return (load_hull(r.path(h, f, "hull"), scale=r.number(h, f, "hull_scale", 1.0, gt=0.0)),)
            if src == "box" and "depth" in h["box"]:
                b = h["box"]
                return (box_hull(b["length"], b["beam"], b["depth"], b["draught"], panel_size=b.get("panel_size"), name=f"{f}.box"),)
            if src == "cylinder" and "height" in h["cylinder"]:
                c = h["cylinder"]
                height = r.number(c, f"{f}.cylinder", "height", gt=float(c["draught"]))
                return (cylinder_hull(c["radius"], height, c["draught"], panel_size=c.get("panel_size"), name=f"{f}.cylinder"),)
        except HullMeshError as exc:
            r.fail(f"{f}.hull", str(exc))
        r.fail(f"{f}.hull", "hydrostatics = \"nonlinear\" needs the closed hull: hull = \"FILE\" (a closed mesh in metres), "
               "or depth in box, or height in cylinder")

    def hull_shape(self, t, f):
        """A closed box (``length``, ``beam``, ``depth``, ``draught``) or vertical cylinder (``radius``,
        ``height``, ``draught``) hull, optional ``panel_size`` and ``center`` (x, y), in the BEM frame."""
        from ..hydro.hull import box_hull, cylinder_hull

        r = self.r
        shape = "box" if "length" in t else "cylinder" if "radius" in t else None
        if shape is None:
            r.fail(f, "expected a mesh file, or a box {length, beam, depth, draught} or a cylinder {radius, height, draught} (m)")
        dims = ("length", "beam", "depth", "draught") if shape == "box" else ("radius", "height", "draught")
        r.table(t, f, dims + ("panel_size", "center"))
        vals = [r.number(t, f, d, gt=0.0) for d in dims]
        if vals[-1] >= vals[-2]:
            r.fail(f"{f}.draught", f"expected less than the {dims[-2]} ({vals[-2]:g} m), got {vals[-1]:g}")
        panel = r.number(t, f, "panel_size", None, gt=0.0)
        center = r.vector(t, f, "center", 2, (0.0, 0.0))
        make = box_hull if shape == "box" else cylinder_hull
        return make(*vals, panel_size=panel, center=center, name=f)

    def hydro_data(self, h, f, src, name):
        """The hydrodynamic coefficients of a ``[[hydro]]`` entry: read from a Capytaine or WAMIT file,
        or computed by a Capytaine run on a mesh, box or cylinder."""
        from ..hydro.bem import HydroDataError, read_capytaine, read_wamit

        r = self.r
        run_keys = ("omegas", "omega_range", "wave_directions_deg", "water_depth", "center_of_mass", "rotation_center")
        if src in ("file", "wamit"):
            for key in run_keys:
                if key in h:
                    r.fail(f"{f}.{key}", f"only for a Capytaine run (mesh, box, cylinder), not with {src!r}")
        if src not in ("file", "wamit") and "omega_max" in h:
            r.fail(f"{f}.omega_max", "cuts a file's table at that frequency; a Capytaine run computes the frequencies of "
                   "omegas or omega_range (rad/s), so set those instead")
        omega_max = r.number(h, f, "omega_max", None, gt=0.0)
        try:
            if src == "file":
                hydro = read_capytaine(r.path(h, f, "file"), omega_max=omega_max)
            elif src == "wamit":
                rho = r.number(h, f, "rho", 1000.0, gt=0.0)
                g = r.number(h, f, "g", 9.81, gt=0.0)
                length = r.number(h, f, "wamit_length", 1.0, gt=0.0)
                hydro = read_wamit(r.path(h, f, "wamit"), rho=rho, g=g, length=length, omega_max=omega_max)
            else:
                hydro = self.capytaine_run(h, f, src, name)
        except HydroDataError as exc:
            r.fail(f"{f}.{src}", str(exc))
        except (OSError, ValueError) as exc:
            if isinstance(exc, SystemFileError):
                raise
            r.fail(f"{f}.{src}", f"cannot read hydrodynamic data: {exc}")
        return hydro

    def file_name(self, name, field):
        """``name`` becomes part of a path (the output folder, a hull's cache): one plain name, no folders."""
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name) or ".." in name:
            self.r.fail(field, f"expected a plain name (letters, digits, _ . + -, starting with a letter or digit; it "
                        f"names output files and folders), got {name!r}")

    def capytaine_run(self, h, f, src, name):
        """Hydrodynamic data of a hull from Capytaine, cached next to the system file."""
        from ..hydro import bem

        r = self.r
        rho = r.number(h, f, "rho", 1025.0, gt=0.0)
        g = r.number(h, f, "g", 9.81, gt=0.0)
        depth = r.number(h, f, "water_depth", math.inf, gt=0.0, allow_inf=True)
        if ("omegas" in h) == ("omega_range" in h):
            r.fail(f"{f}.omegas", "a Capytaine run needs exactly one of omegas (list, rad/s) and omega_range ([min, max, count])")
        if "omegas" in h:
            omegas = r.array(h["omegas"], f"{f}.omegas", None).reshape(-1)
            where = f"{f}.omegas"
        else:
            lo, hi, n = r.array(h["omega_range"], f"{f}.omega_range", [(3,)])
            if not (0 < lo < hi) or n != int(n) or n < 2:
                r.fail(f"{f}.omega_range", f"expected [min, max, count] with 0 < min < max and an integer count >= 2, got {h['omega_range']!r}")
            omegas = np.linspace(lo, hi, int(n))
            where = f"{f}.omega_range"
        if omegas.size < 2 or np.any(omegas <= 0) or np.any(np.diff(omegas) <= 0):
            r.fail(where, "expected at least 2 increasing frequencies > 0 rad/s")
        dirs = np.deg2rad(r.array(r.get(h, f, "wave_directions_deg", [0.0]), f"{f}.wave_directions_deg", None).reshape(-1))
        cog = r.vector(h, f, "center_of_mass", 3, None)
        rc = r.vector(h, f, "rotation_center", 3, None)
        try:
            import capytaine as cpt
        except ImportError:
            r.fail(f"{f}.{src}", "computing hydrodynamic data from a hull needs Capytaine (pip install capytaine)")
        if src == "mesh":
            mesh_path = r.path(h, f, "mesh")
            try:
                hull = cpt.load_mesh(str(mesh_path))
            except Exception as exc:  # Capytaine's readers raise many kinds; the file is what is wrong
                r.fail(f"{f}.mesh", f"cannot read the mesh {str(mesh_path)!r}: {type(exc).__name__}: {exc}")
            stem = mesh_path.stem
        else:
            dims = ("length", "beam", "draught") if src == "box" else ("radius", "draught")
            t = r.table(h[src], f"{f}.{src}", dims + ("panel_size",) + (("depth",) if src == "box" else ("height",)))
            vals = [r.number(t, f"{f}.{src}", d, gt=0.0) for d in dims]
            panel = r.number(t, f"{f}.{src}", "panel_size", None, gt=0.0)
            make = bem.box if src == "box" else bem.cylinder
            hull = make(*vals, panel_size=panel, center_of_mass=cog, rotation_center=rc, name=name)
            stem = src
        base = Path(self.path).stem if self.path else "system"
        cache = r.base / f"{base}.{name}.{stem}.capytaine.nc"
        return bem.run_capytaine(
            hull, omegas=omegas, wave_directions=dirs, rho=rho, g=g, water_depth=depth, cache=cache,
            name=name, center_of_mass=cog, rotation_center=rc,
        )

    # -- force elements and controllers ------------------------------------------------------

    def build_elements(self, cfg, section):
        from .. import control, flex, forces, loops  # noqa: F401  (flex registers the flexible beam, loops the loop)
        from ..system import ELEMENT_KINDS

        kinds = ELEMENT_KINDS[section]
        r = self.r
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
            out.append((f, self.element(kinds[kind], kind, e, f, default_name)))
        return out

    def element(self, cls, kind, e, f, default_name):
        """Build one registered element from its file entry, by its fields' declarations
        (:mod:`jaxmbd.fields`): types, shapes, ranges, names of bodies and joints, degrees."""
        r = self.r
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
                kw[n] = self.element_value(spec, e, f, key)
            elif n == "name":
                kw[n] = default_name
            elif is_required(x):
                r.fail(f"{f}.{n}", f"missing (required by {kind!r}; its keys: {', '.join(specs)})")
        form.file_rules(kw, e, lambda key, problem: r.fail(f"{f}.{key}", problem))
        import jax.numpy as jnp

        kw = {n: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for n, v in kw.items()}
        try:
            return cls(**kw) if form is cls else form(**kw).build()
        except (TypeError, ValueError) as exc:
            r.fail(f, str(exc))

    def element_value(self, spec, e, f, key):
        """One field of an element entry, checked against its declaration."""
        r, where = self.r, f"{f}.{key}"
        if spec.kind == "array":
            arr = r.array(e[key], where, spec.allowed_shapes(e))
            if spec.bound is not None:
                op, bound = spec.bound
                if not (np.all(arr > bound) if op == ">" else np.all(arr >= bound)):
                    r.fail(where, f"must be {op} {bound:g}, got {_short(e[key])}")
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
            self.names(names, where, what="joint")
            return names
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
            self.names(value, where, world=spec.kind == "body_or_world")
        elif spec.kind == "joint":
            self.names(value, where, what="joint")
        return value

    def check_unique_names(self, elements):
        seen = {}
        for f, el in elements:
            if el.name in seen:
                self.r.fail(f"{f}.name", f"duplicate element name {el.name!r} (also {seen[el.name]}); names label the outputs")
            seen[el.name] = f

    def report_joints(self, cfg):
        names = self.r.strings(cfg, "", "report_joints", [])
        self.names(names, "report_joints", what="joint")
        return tuple(names)

    # -- waves -----------------------------------------------------------------------------

    def build_waves(self, cfg):
        sea = self.build_sea_waves(cfg)
        if "current" not in cfg:
            return sea
        from ..hydro.sea import SeaState

        current = self.build_current(cfg)
        if sea is None:
            return SeaState(current=current)
        return dataclasses.replace(sea, current=current)

    def build_current(self, cfg):
        """``[current]``: a surface ``speed`` (m/s) towards ``direction_deg``, uniform, or over depth by a
        ``profile`` of [depth (m, down), factor] rows or the 1/7 ``power_law_depth`` (m)."""
        from ..hydro.waves import Current

        r, f = self.r, "current"
        c = r.table(cfg["current"], f, _CURRENT_KEYS)
        speed = r.number(c, f, "speed", ge=0.0)
        direction = math.radians(r.number(c, f, "direction_deg", 0.0))
        if "profile" in c and "power_law_depth" in c:
            r.fail(f"{f}.profile", "give either profile or power_law_depth, not both")
        if "power_law_depth" in c:
            return Current.power_law(speed, direction, r.number(c, f, "power_law_depth", gt=0.0))
        if "profile" not in c:
            return Current(speed, direction)
        rows = r.array(c["profile"], f"{f}.profile")
        if rows.ndim != 2 or rows.shape[1] != 2 or rows.shape[0] < 2:
            r.fail(f"{f}.profile", f"expected rows of [depth (m, down), factor], at least two; got shape {list(rows.shape)}")
        if rows[0, 0] < 0 or np.any(np.diff(rows[:, 0]) <= 0):
            r.fail(f"{f}.profile", f"depths must start at 0 or more and increase; got {rows[:, 0].tolist()}")
        if np.any(rows[:, 1] < 0):
            r.fail(f"{f}.profile", f"factors (speed over the surface speed) must be >= 0; got {rows[:, 1].tolist()}")
        return Current(speed, direction, rows[:, 0], rows[:, 1])

    def build_sea_waves(self, cfg):
        if "waves" not in cfg:
            return None
        from ..hydro.sea import SeaState
        from ..hydro.waves import JONSWAP, PiersonMoskowitz, RegularWave

        r = self.r
        f = "waves"
        w = r.table(cfg["waves"], f, _WAVE_KEYS)
        typ = r.string(w, f, "type", choices=_WAVE_TYPES)
        own = {"jonswap": ("hs", "tp", "gamma", "sigma_a", "sigma_b"), "pierson_moskowitz": ("hs", "tp"),
               "regular": ("height", "period", "phase_deg")}
        spectral = ("n_frequencies", "omega_min", "omega_max", "n_directions", "spreading", "random_frequencies")
        for key in w:
            if key in ("type", "direction_deg", "water_depth") or key in own[typ] or (typ != "regular" and key in spectral):
                continue
            keys = ", ".join(own[typ] + (() if typ == "regular" else spectral))
            r.fail(f"{f}.{key}", f"not used by {typ!r} waves (their keys: type, {keys}, direction_deg, water_depth)")
        direction = math.radians(r.number(w, f, "direction_deg", 0.0))
        depth = r.number(w, f, "water_depth", math.inf, gt=0.0, allow_inf=True)
        if typ == "regular":
            wave = RegularWave(
                r.number(w, f, "height", gt=0.0), r.number(w, f, "period", gt=0.0), direction,
                math.radians(r.number(w, f, "phase_deg", 0.0)),
            )
            return SeaState(regular=wave, mean_direction=_jnp(direction), water_depth=depth)
        hs = r.number(w, f, "hs", gt=0.0)
        tp = r.number(w, f, "tp", gt=0.0)
        if typ == "jonswap":
            spec = JONSWAP(hs, tp, r.number(w, f, "gamma", 3.3, ge=1.0), r.number(w, f, "sigma_a", 0.07, gt=0.0),
                           r.number(w, f, "sigma_b", 0.09, gt=0.0))
        else:
            spec = PiersonMoskowitz(hs, tp)
        wmin = r.number(w, f, "omega_min", 0.2, gt=0.0)
        wmax = r.number(w, f, "omega_max", 2.5, gt=wmin)
        return SeaState(
            spectrum=spec,
            mean_direction=_jnp(direction),
            n_frequencies=r.integer(w, f, "n_frequencies", 100, ge=1),
            omega_min=wmin,
            omega_max=wmax,
            n_directions=r.integer(w, f, "n_directions", 1, ge=1),
            spreading=r.number(w, f, "spreading", 1.0, gt=0.0),
            random_frequencies=r.boolean(w, f, "random_frequencies", True),
            water_depth=depth,
        )

    def check_headings(self, f, hydro, waves):
        """The wave directions and frequencies against a hydro table.  Inside a run the
        directions are traced, so the table would silently clamp a heading it does not cover."""
        if waves is None or (waves.regular is None and waves.spectrum is None):  # none, or a current in calm water
            return
        if waves.regular is not None:
            dirs = np.atleast_1d(float(waves.regular.direction))
            wmax = float(waves.regular.omega)
        else:
            mean = float(waves.mean_direction)
            m = waves.n_directions
            # realise() puts m bins over mean ± π/2 and may draw anywhere inside them
            dirs = np.array([mean]) if m == 1 else mean + np.linspace(-0.5 * np.pi, 0.5 * np.pi, 2 * m + 1)
            wmax = waves.omega_max
        try:
            hydro.check_headings(dirs)
        except ValueError as exc:
            self.r.fail("waves.direction_deg", f"{exc} (data of {f}; xz_symmetry = true mirrors a symmetric hull's table)")
        top = float(hydro.omega[-1])
        if wmax > 1.05 * top:
            key = "period" if waves.regular is not None else "omega_max"
            fix = ("a longer period" if waves.regular is not None else "a lower waves.omega_max") + \
                " or hydrodynamic data to higher frequencies (omega_range of a Capytaine run)"
            self.r.fail(f"waves.{key}", f"wave frequencies reach {wmax:.3g} rad/s, beyond the hydrodynamic table of {f} "
                        f"(up to {top:.3g} rad/s): {fix}")

    # -- checks on the assembled system ----------------------------------------------------

    def check_inertia(self, system):
        """A mass matrix that is singular at q0 (a leaf body on a moving joint with no mass or
        inertia in some direction) would give NaN accelerations at the first step."""
        from ..dynamics import mass_matrix

        model = system.model
        if model.nv == 0:
            return
        try:
            ctx = system.context(0.0, self.q0, np.zeros(model.nv))
            M = np.asarray(mass_matrix(model, self.q0, system.extra_inertia(ctx)))
        except Exception as exc:  # the values came from the file; say so rather than show a trace
            self.r.fail("bodies", f"cannot form the mass matrix at q0: {type(exc).__name__}: {exc}")
        if not np.all(np.isfinite(M)):
            self.r.fail("bodies", "the mass matrix at q0 is not finite; check masses and inertias")
        ev, vec = np.linalg.eigh(0.5 * (M + M.T))
        if ev[0] <= 1e-12 * max(ev[-1], 1e-300):
            k = int(np.argmax(np.abs(vec[:, 0])))
            i = max(i for i in range(model.n_bodies) if model.v_start[i] <= k and model.joints[i].nv)
            name = model.body_names[i]
            self.r.fail(
                self.origin_of.get(name, "bodies"),
                f"body {name!r} (joint {model.joint_names[i]!r}) has no inertia along velocity direction "
                f"{k - model.v_start[i]} of its joint at q0 (singular mass matrix); give it mass and inertia",
            )

    def trial(self, system, elements):
        """Trace each element once at q0 (shapes only, no numbers): a name, a shape or a joint kind
        the element cannot use becomes an error on that entry rather than a trace inside a run."""
        import jax
        import jax.numpy as jnp

        model = system.model
        q = self.q0
        v = jnp.zeros(model.nv, dtype=q.dtype)
        try:
            z_all = system.initial_states(q, v)
            ctx = system.context(0.0, q, v)
        except Exception as exc:
            self.r.fail("forces", f"cannot evaluate the elements at q0: {type(exc).__name__}: {exc}")
        self.element_outputs = {}
        for (f, el), s in zip(elements, system.state_slices()):
            z = z_all[s]
            try:
                c, outs = jax.eval_shape(lambda: (el.contribution(ctx, z), el.outputs(ctx, z)))
            except Exception as exc:  # any failure here comes from the entry's values
                self.r.fail(self.blame(f, el, str(exc)), f"element {el.name!r} cannot be evaluated: {type(exc).__name__}: {exc}")
            for k, o in outs.items():
                self.element_outputs[f"{el.name}/{k}"] = tuple(o.shape)
            expect = {"f_ext": (model.n_bodies, 6), "tau": (model.nv,), "zdot": (el.n_states,)}
            for part, shape in expect.items():
                got = getattr(c, part)
                if got is not None and tuple(got.shape) != shape:
                    self.r.fail(f, f"element {el.name!r} returns {part} of shape {tuple(got.shape)}, expected {shape}; check its vector sizes")

    def blame(self, f, el, message):
        """The field of entry ``f`` whose value the message quotes, else the entry."""
        entry = self.entry(f)
        for key, val in (entry or {}).items():
            for item in val if isinstance(val, list) else [val]:
                if isinstance(item, str) and key != "kind" and repr(item) in message:
                    return f"{f}.{key}"
        return f

    def entry(self, f):
        m = re.fullmatch(r"(\w+)\[(\d+)\]", f)
        if not m:
            return None
        return self.config.get(m.group(1), [])[int(m.group(2))]

    # -- run settings ------------------------------------------------------------------------

    def build_simulation(self, cfg, system):
        from ..simulation import CHECKPOINT_MODES, SOLVERS, Integrator

        r = self.r
        f = "simulation"
        s = r.table(r.get(cfg, "", "simulation"), f, _SIM_KEYS)
        duration = r.number(s, f, "duration", gt=0.0)
        save_dt = r.number(s, f, "save_dt", None, gt=0.0, le=duration)
        method = r.string(s, f, "method", "tsit5", choices=tuple(SOLVERS))
        dt = r.number(s, f, "dt", None, gt=0.0, le=duration)
        if method == "rk4" and dt is None:
            r.fail(f"{f}.dt", "method 'rk4' has no error estimate: give a fixed step dt (s)")
        if dt is not None and save_dt is not None and save_dt < dt:
            r.fail(f"{f}.save_dt", f"must be >= dt = {dt:g} s (states are saved on the step grid), got {save_dt:g}")
        if dt is not None and save_dt is not None and abs(save_dt / dt - round(save_dt / dt)) > 1e-6:
            r.fail(f"{f}.save_dt", f"must be a multiple of dt = {dt:g} s (states are saved on the step grid), got {save_dt:g}")
        divides = lambda h: abs(duration / h - round(duration / h)) <= 1e-6 * max(duration / h, 1.0)  # noqa: E731
        if save_dt is not None and not divides(save_dt):
            r.fail(f"{f}.save_dt", f"must divide the duration {duration:g} s (the last save would fall at "
                   f"{math.floor(duration / save_dt + 1e-9) * save_dt:g} s), got {save_dt:g}")
        if save_dt is None:  # one state per step kept every state (186 MB for a small case): about 2,000
            # saves, at most 0.5 s apart, on the step grid, dividing the duration
            step = dt if dt is not None else duration / 2000.0
            k = max(1, round(min(max(duration / 2000.0, step), max(0.5, step)) / step))
            while k > 1 and not divides(k * step):
                k -= 1
            save_dt = k * step
        integrator = Integrator(
            method=method,
            dt=dt,
            rtol=r.number(s, f, "rtol", 1e-7, gt=0.0),
            atol=r.number(s, f, "atol", 1e-7, gt=0.0),
            max_steps=r.integer(s, f, "max_steps", None, ge=1),
            checkpoints=r.integer(s, f, "checkpoints", None, ge=1),
            use_diffrax=r.boolean(s, f, "use_diffrax", False),
            checkpoint=r.string(s, f, "checkpoint", "auto", choices=CHECKPOINT_MODES),
        )
        n_real = r.integer(s, f, "n_realisations", None, ge=1)
        seed = r.integer(s, f, "seed", 0, ge=0)
        if seed >= 2**63:
            r.fail(f"{f}.seed", "must be < 2**63")
        eq = r.boolean(s, f, "static_equilibrium", False)
        free = None
        if "equilibrium_free" in s:
            if not eq:
                r.fail(f"{f}.equilibrium_free", "only used with static_equilibrium = true")
            free = self.free_mask(s["equilibrium_free"], f"{f}.equilibrium_free")
        return integrator, SimulationSettings(duration, save_dt, n_real, seed, eq, free)

    def free_mask(self, v, where):
        """``["hinge", "barge"]`` (all directions of these joints) or ``{barge = [2, 3, 4]}``
        (those velocity directions of the joint, 0-based: for a free joint 0-2 translations,
        3-5 rotations) -> an (nv,) bool mask."""
        model = self.model
        r = self.r
        mask = np.zeros(model.nv, dtype=bool)
        if isinstance(v, list):
            if not all(isinstance(x, str) for x in v):
                r.fail(where, f"expected a list of joint names or a table joint = [directions], got {_describe(v)}")
            v = {n: None for n in v}
        if not isinstance(v, dict):
            r.fail(where, f"expected a list of joint names or a table joint = [directions], got {_describe(v)}")
        for n, dirs in v.items():
            self.names(n, f"{where}.{n}" if isinstance(n, str) else where, what="joint")
            sl = model.v_slice(n)
            nv = sl.stop - sl.start
            if dirs is None:
                mask[sl] = True
                continue
            if not isinstance(dirs, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dirs):
                r.fail(f"{where}.{n}", f"expected a list of velocity directions (integers 0..{nv - 1}), got {_describe(dirs)}")
            for d in dirs:
                if not 0 <= d < nv:
                    r.fail(f"{where}.{n}", f"direction {d} out of range: joint {n!r} has {nv} velocity directions (0..{nv - 1})")
                mask[sl.start + d] = True
        return mask

    def build_sweep(self, cfg, system, sim):
        if "sweep" not in cfg:
            return None
        r = self.r
        f = "sweep"
        s = r.table(cfg["sweep"], f, _SWEEP_KEYS)
        if system.waves is None or system.waves.spectrum is None:
            r.fail(f, "a sea-state sweep needs [waves] with type = 'jonswap' or 'pierson_moskowitz'")
        grids = {}
        for key in ("hs", "tp"):
            arr = r.array(r.get(s, f, key), f"{f}.{key}", None).reshape(-1)
            if arr.size == 0 or np.any(arr <= 0):
                r.fail(f"{f}.{key}", "expected a non-empty list of values > 0")
            grids[key] = tuple(float(x) for x in arr)
        statistic = r.string(s, f, "statistic", "mpm", choices=_STATISTICS)
        duration = r.number(s, f, "duration", None, gt=0.0)
        n_real = r.integer(s, f, "n_realisations", None, ge=1)
        lims = r.table(s.get("limits", {}), f"{f}.limits", None)
        limits = {}
        outputs = self.output_shapes(system) if lims else {}
        scalar = sorted(k for k, shape in outputs.items() if shape == ())
        for out, val in lims.items():
            g = f'{f}.limits."{out}"'
            if out not in outputs:
                r.fail(g, f"unknown output {out!r}; scalar outputs: {', '.join(scalar)}")
            if outputs[out] != ():
                r.fail(g, f"output {out!r} has shape {outputs[out]}; limits apply to scalar outputs: {', '.join(scalar)}")
            limits[out] = r.check_number(val, g)
        return SweepTable(grids["hs"], grids["tp"], limits, statistic, duration, n_real)

    def output_shapes(self, system):
        """Output name -> shape, from the trial evaluation of the elements and the reported joints."""
        shapes = dict(self.element_outputs)
        for n in system.report_joints:
            shapes[f"joint/{n}/wrench"] = (6,)
        return shapes

    def build_scenario(self, cfg, system):
        if "scenario" not in cfg:
            return None
        r = self.r
        s = r.get(cfg, "", "scenario")
        if not isinstance(s, dict):
            r.fail("scenario", f"expected a table, got {_describe(s)}")
        r.tables(r.get(s, "scenario", "phases"), "scenario.phases")
        # The phases' schema belongs to jaxmbd.scenario; building the Scenario once checks it
        # against the system (element, field and output names) while the file is at hand.
        try:
            from ..scenario import Scenario
        except ImportError:
            return s
        try:
            Scenario.from_dict(s, system)
        except (ValueError, TypeError, KeyError) as exc:
            r.fail("scenario", str(exc))
        return s


def path_stem(path):
    return path.stem if path is not None else "system"
