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
import re
from pathlib import Path
from typing import Any

import numpy as np

from .. import validity
from ..hydro.body_file import read_hydro
from ..hydro.sea import read_sea, read_water
from ..operability.job import read_operability
from ..run import SimulationSettings, read_simulation
from ..scenario import Scenario
from ..sweep import SweepTable, read_sweep
from ..tables import SystemFileError, TableReader, as_array, describe_value
from ..units import DISPLAY_LOADS
from .elements_file import check_unique_names, read_elements, read_report_joints, trial
from .model_file import read_model

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


# --------------------------------------------------------------------------- results of loading


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
    stiffest: tuple | None = None  # (ω rad/s, element) of the stiffest stated mode at q0 (jaxmbd.validity.stiffest_mode)
    operability: Any = None  # the [operability] table (jaxmbd.operability.job.OperabilityTable)
    display_loads: str = "kN"  # the unit the run table prints forces in (moments in it times m): kN, MN, N or t

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

    def start(self):
        """The :class:`jaxmbd.run.Start` of this file's runs, solved once (the static equilibrium and the
        flexible bodies' bent rest states when ``[simulation] static_equilibrium`` asks for it)."""
        from ..run import start_of

        return start_of(self)

    def run(self, start=None, **overrides):
        """Run the file (:func:`jaxmbd.run.run`): its settings, overridden by keyword (``hs``, ``tp``,
        ``heading``, ``seed``, ``duration``, ``n_realisations``, ``save_dt``, ``integrator``), from ``start``
        (None: :meth:`start`).  A file with a ``[scenario]`` runs its phases."""
        from ..run import run

        return run(self, start, **overrides)


_TOP_KEYS = (
    "name", "description", "gravity", "report_joints", "display_loads", "model", "bodies", "hydro", "forces", "controllers", "loops",
    "waves", "current", "water", "simulation", "sweep", "scenario", "tune", "operability",
)


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
    except RecursionError:
        raise SystemFileError(source, "TOML", "arrays or tables nested too deeply to read (a system file nests a few levels)") from None
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
    """Reads a file section by section (each by the reader beside its domain) and assembles the system;
    holds what later sections need of earlier ones: the model, q0, the names, the sea, the water."""

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
        self.display_loads = r.string(cfg, "", "display_loads", "kN", choices=DISPLAY_LOADS)
        gravity = r.vector(cfg, "", "gravity", 3, (0.0, 0.0, -9.81))
        self.g = float(np.linalg.norm(gravity)) or 9.81  # the hydrodynamic data's g unless [[hydro]] says

        read_model(self, cfg, gravity)
        # [simulation] needs only the model's names: read before any element is built, so that its mistakes
        # are reported before the elements' programs compile
        integrator, sim = read_simulation(self, cfg)
        for section in ("forces", "controllers", "loops"):  # their entries checked, nothing built yet (no compile)
            read_elements(self, cfg, section, build=False)
        # waves before hydro: the data's headings and frequencies are checked against them
        waves = self.waves = read_sea(self, cfg)
        record = getattr(waves, "regular", None)
        if hasattr(record, "elevation") and sim.duration is not None and sim.duration > record.duration + 1e-9:
            r.fail("simulation.duration", f"{sim.duration:g} s is longer than the recorded wave ({record.duration:g} s): its "
                   "components would repeat the record; run at most its length")
        self.water_density = read_water(self, cfg)
        hydro = read_hydro(self, cfg)
        if self.water_density is None and hydro:  # the sea's density: that of its hydrodynamic data
            self.water_density = hydro[0][1].sea_density()
        for f, h in hydro:
            if h.sea_density() != self.water_density:
                r.fail(f"{f}.rho", f"the hydrodynamic data are for water of {h.sea_density():g} kg/m³, the sea's "
                       f"[water] density is {self.water_density:g} kg/m³; one sea has one density")
        forces = read_elements(self, cfg, "forces")
        controllers = read_elements(self, cfg, "controllers")
        loops = read_elements(self, cfg, "loops") + [("model.urdf", lp) for lp in self.urdf_loops]
        elements = self.elements = hydro + forces + controllers + loops
        check_unique_names(self, elements)
        self.check_hull_drag(hydro, forces)
        report = read_report_joints(self, cfg)

        from ..joints import ModelError
        from ..system import System

        try:
            system = System(self.model, tuple(f for _, f in hydro + forces + controllers), waves, name=self.name,
                            report_joints=report, loops=tuple(lp for _, lp in loops))
        except (ModelError, ValueError) as exc:
            r.fail("forces", str(exc))
        if self.display_loads == "t" and not np.any(np.asarray(self.model.gravity)):
            r.fail("display_loads", "tonnes-force (t) are N / (1000 g): a model without gravity has no g; give kN, MN or N")
        trial(self, system, elements)  # shapes only: the outputs a sweep or a scenario may name
        sweep = read_sweep(self, cfg, system, sim)
        scenario = read_scenario(self, cfg, system)
        operability = read_operability(self, cfg, system, scenario)
        stiffest = self.validate(system) if validate else None  # the checks that evaluate numbers, last
        problem = validity.step_problem(stiffest, integrator)
        if problem:
            r.fail("simulation.dt", problem)
        return LoadedSystem(
            system=system,
            q0=self.q0,
            integrator=integrator,
            simulation=sim,
            sweep=sweep,
            scenario=scenario,
            path=self.path,
            config=self.config,
            stiffest=stiffest,
            operability=operability,
            display_loads=self.display_loads,
        )

    def check_hull_drag(self, hydro, forces):
        """One model of a hull's drag in the horizontal plane: a `[[hydro]]` body's surge, sway or yaw
        `quadratic_drag` and a `hull_current_load` on the same body would both take the hull's velocity through
        the water (the current's included)."""
        loads = {el.body: f for f, el in forces if el.kind == "hull_current_load"}
        for f, h in hydro:
            drag = np.asarray(h.quadratic_drag).reshape(-1, 6)
            for k, body in enumerate(h.bodies):
                if body in loads and np.any(drag[k, [0, 1, 5]] != 0):
                    self.r.fail(f"{f}.quadratic_drag", f"body {body!r} also has a hull_current_load ({loads[body]}): both "
                                "take its drag in surge, sway and yaw through the water; give it in one of them")

    def validate(self, system):
        """The physical checks of a read system, numbers evaluated: the mass matrix at q0 with the
        elements' added inertia is positive definite (:meth:`check_inertia`), and each element can
        start at q0 (:meth:`ForceElement.start_problem`).  Returns the stiffest mode the elements state at
        q0 (:func:`jaxmbd.validity.stiffest_mode`), which the fixed step is held against."""
        M = self.check_inertia(system)
        self.check_start(system)
        return None if M is None else validity.stiffest_mode(system, self.q0, M)

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
        _, J, _ = loop_terms(system.loops, model, as_array(self.q0), np.zeros(model.nv))
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

    def check_inertia(self, system):
        """A mass matrix that is singular at q0 (a leaf body on a moving joint with no mass or
        inertia in some direction) would give NaN accelerations at the first step."""
        from ..dynamics import mass_matrix

        model = system.model
        if model.nv == 0:
            return None
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
        return M

    def names(self, value, where, *, world=False, what="body"):
        """Check model names (a string or a list of strings); joints may be named by their body too."""
        items = value if isinstance(value, (list, tuple)) else [value]
        for n in items:
            if n == "world" and world:
                continue
            if n == "world" or n not in self.known_names:
                known = list(self.model.joint_names if what == "joint" else self.model.body_names) + (["world"] if world else [])
                hint = [k for k in known if isinstance(n, str) and k.lower() == n.lower()]
                hint = f" (names are case-sensitive: did you mean {hint[0]!r}?)" if hint else ""
                self.r.fail(where, f"unknown {what} {n!r}{hint}; known: {', '.join(known)}")

    def file_name(self, name, field):
        """``name`` becomes part of a path (the output folder, a hull's cache): one plain name, no folders."""
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name) or ".." in name:
            self.r.fail(field, f"expected a plain name (letters, digits, _ . + -, starting with a letter or digit; it "
                        f"names output files and folders), got {name!r}")

    def entry(self, f):
        m = re.fullmatch(r"(\w+)\[(\d+)\]", f)
        if not m:
            return None
        return self.config.get(m.group(1), [])[int(m.group(2))]

    def output_shapes(self, system):
        """Output name -> shape, from the trial evaluation of the elements and the reported joints."""
        shapes = dict(self.element_outputs)
        for n in system.report_joints:
            shapes[f"joint/{n}/wrench"] = (6,)
        return shapes


def path_stem(path):
    return path.stem if path is not None else "system"


def read_scenario(reader, cfg, system):
    if "scenario" not in cfg:
        return None
    r = reader.r
    s = r.get(cfg, "", "scenario")
    if not isinstance(s, dict):
        r.fail("scenario", f"expected a table, got {describe_value(s)}")
    r.tables(r.get(s, "scenario", "phases"), "scenario.phases")
    # The phases' schema belongs to jaxmbd.scenario; building the Scenario once checks it
    # against the system (element, field and output names) while the file is at hand.
    try:
        Scenario.from_dict(s, system)
    except (ValueError, TypeError, KeyError) as exc:
        r.fail("scenario", str(exc))
    return s
