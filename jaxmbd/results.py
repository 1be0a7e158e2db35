"""The result of a run, the one type every path returns (``simulate``, :func:`jaxmbd.run.run`, a
scenario, a sweep cell), and its NetCDF form with units and the run's attributes."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # xarray is imported where a dataset is made: importing jaxmbd does not load it
    import xarray as xr

from . import netcdf
from .errors import InputError
from .validity import SLACK_FRACTION


@dataclasses.dataclass
class Result:
    """States and outputs of a run, with a leading realisation axis when ``batched``.

    ``time`` (s): (n_time,) or, for a batched scenario whose realisations end their phases at different
    times, (n_realisations, n_time) padded at the end with NaN (``realisation(r)`` trims).  ``q``, ``v``,
    ``z``: joint coordinates, velocities and the force elements' internal states; ``outputs``: every
    output by name (SI units, :meth:`jaxmbd.system.System.output_units`).  A run with phases (a
    scenario) also has ``phase``, the phase index at each saved time (-1 in the padding), ``events``
    (the :class:`jaxmbd.scenario.PhaseEvent` that ended each phase; a list per realisation when
    batched) and ``phase_names``; a phase boundary appears twice in ``time`` (end of phase k, start of
    phase k + 1).  ``excursions``: the ranges of validity the run left (:mod:`jaxmbd.validity`);
    ``attrs``: the run's attributes (source file, seed, realisations, duration), assembled by
    :func:`jaxmbd.run.run`.  ``between``: for the outputs a fixed-step run tracks at every step
    (:meth:`jaxmbd.system.System.tracked_outputs`), ``{name: {"max", "min", "mean", "states"[, "slack_entries",
    "slack_seconds", "max_once_slack"]}}`` (:func:`jaxmbd.simulation.solve_with_extremes`), each
    shaped as the output, over the steps from each save to the next (the last save: its own state), so
    maxima, ranges and slack spells do not depend on the save step (:meth:`series_extremes`)."""

    system: Any
    time: np.ndarray
    q: np.ndarray
    v: np.ndarray
    z: np.ndarray
    outputs: dict
    batched: bool = False
    attrs: dict = dataclasses.field(default_factory=dict)
    excursions: list = dataclasses.field(default_factory=list)
    phase: np.ndarray | None = None
    events: list = dataclasses.field(default_factory=list)
    phase_names: tuple = ()
    between: dict = dataclasses.field(default_factory=dict)

    @property
    def n_realisations(self) -> int:
        return int(np.asarray(self.q).shape[0]) if self.batched else 1

    def realisation(self, r: int) -> "Result":
        """Realisation ``r`` as an unbatched result (a padded scenario realisation trimmed to its samples)."""
        if not self.batched:
            if r != 0:
                raise InputError(f"an unbatched result has one realisation, asked for {r}")
            return self
        time = np.asarray(self.time)
        keep = slice(None)
        if time.ndim == 2:
            time = time[r]
            keep = np.isfinite(time)
            time = time[keep]
        pick = lambda a: np.asarray(a)[r][keep]  # noqa: E731
        return dataclasses.replace(
            self, time=time, q=pick(self.q), v=pick(self.v), z=pick(self.z),
            outputs={k: pick(v) for k, v in self.outputs.items()}, batched=False,
            attrs=dict(self.attrs) | {"realisation": r},
            phase=None if self.phase is None else pick(self.phase),
            between={n: {k: pick(a) for k, a in b.items()} for n, b in self.between.items()},
            events=self.events[r] if self.phase is not None and self.events else self.events)

    def series_extremes(self, name: str):
        """(largest, smallest) of output ``name`` per save interval, shaped as the output: the values
        between the saves where the run tracked them (:attr:`between`), else the saved samples."""
        b = self.between.get(name)
        if b is None:
            x = np.asarray(self.outputs[name])
            return x, x
        return b["max"], b["min"]

    def largest(self, name: str) -> np.ndarray:
        """The largest value of output ``name`` over an unbatched run (per component of a vector output): over
        every step where the run tracked it (:attr:`between`; a component ``name[k]`` too), else the saves."""
        m = np.max(np.asarray(self.outputs[name], float), axis=0)
        if name in self.between:
            return np.max(self.between[name]["max"])
        for k in range(np.size(m) if np.ndim(m) == 1 else 0):
            if f"{name}[{k}]" in self.between:
                m[k] = np.max(self.between[f"{name}[{k}]"]["max"])
        return m

    # -- phases ----------------------------------------------------------------------------------

    def phase_start(self, k: int) -> float:
        """Start time of phase k (s) of an unbatched result with phases."""
        return float(self.time[np.argmax(self.phase == k)])

    def event_table(self) -> str:
        """The phases' ends: time, phase and what ended it, one line each."""
        rows = [f"{'t (s)':>10}  {'phase':<24} ended by"]
        rows += [f"{e.time:10.3f}  {e.name:<24} {e.trigger}: {e.detail}" for e in self.events]
        return "\n".join(rows)

    def phase_table(self, names, loads: str = "kN") -> str:
        """Per phase that ran: start and end (s) and, for each named scalar output (a vector output: its
        magnitude), its largest and smallest value with its units (display units, :mod:`jaxmbd.units`: angles
        in degrees, forces in ``loads``).  A rope's tension or hook load also gets its slack spells in the
        phase (below 10 % of its value at the start of the run, :func:`jaxmbd.statistics.slack_events`) and
        the largest snap that ended one.  An output the run took at every step (:attr:`between`) is read
        there: its maxima, minima, the spells entered in the phase and the snaps that ended spells in it, over
        every step."""
        from .statistics import slack_events
        from .units import display_units_of, figure

        units = self.system.output_units()
        shown_in = display_units_of(self.system, loads)
        head = ["phase", "start (s)", "end (s)"]
        cols = []
        for name in names:
            x = np.asarray(self.outputs[name])
            label = name if x.ndim == 1 else f"|{name}|"
            rope = name.endswith(("/tension", "/hook_load")) and x.ndim == 1
            u, f = shown_in(units.get(name, "?"))
            b = self.between.get(name, {}) if x.ndim == 1 else {}  # a scalar tracked at every step: between the saves
            cols.append((x if x.ndim == 1 else np.linalg.norm(x, axis=-1), rope, f, b))
            head += [f"{label} max ({u})", f"{label} min ({u})"] + ([f"{label} slack spells", f"{label} largest snap ({u})"]
                                                                   if rope else [])
        rows = []
        for k, pname in enumerate(self.phase_names):
            m = self.phase == k
            if not m.any():
                continue
            t = self.time[m]
            row = [pname, f"{t[0]:.1f}", f"{t[-1]:.1f}"]
            for x, rope, f, b in cols:
                row += [figure(float(np.max(b.get("max", x)[m])), f), figure(float(np.min(b.get("min", x)[m])), f)]
                if rope and "snap" in b:  # every step: the spells entered in the phase, the snaps that ended one in it
                    snaps = b["snap"][m]
                    row += [str(int(b["slack_entries"][m].sum())), figure(float(np.nanmax(snaps)), f) if np.isfinite(snaps).any() else "-"]
                elif rope:
                    events = slack_events(t, x[m], max(float(x[0]), 1e-300)) if x[0] > 0 else []
                    snaps = [e.snap for e in events if e.snap is not None]
                    row += [str(len(events)), figure(max(snaps), f) if snaps else "-"]
            rows.append(row)
        widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]

        def line(r):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

        return "\n".join([line(head)] + [line(r) for r in rows])

    # -- files -----------------------------------------------------------------------------------

    def to_dataset(self):
        """The run as one dataset, each output named as in ``outputs`` (``hoist/tension``)."""
        return result_to_dataset(self)

    def to_netcdf(self, path):
        """Write the run to ``path``: each output ``element/name`` the variable ``name`` of the group
        ``element`` (:mod:`jaxmbd.netcdf`; :func:`jaxmbd.netcdf.open_result` reads it back flat)."""
        return netcdf.write(self.to_dataset(), path)


@dataclasses.dataclass
class PhaseRecord:
    """One realisation of a run in phases (:class:`jaxmbd.scenario.Scenario`) as its phases end."""

    pieces: list = dataclasses.field(default_factory=list)
    steps: list = dataclasses.field(default_factory=list)
    stopped: bool = False

    def add(self, ts, ys, outputs, k, event, steps=None):
        """Phase ``k``: its saved times, states (q, v, z) and outputs, the event that ended it and ``steps``
        (numpy): the times of its start and of every step's end (inf after the last) and the tracked outputs there."""
        self.pieces.append((ts, ys, outputs, np.full(ts.size, k), event))
        if steps is not None:
            t, x = steps
            done = np.isfinite(t)
            done[done] = np.append(True, np.diff(t[done]) > 0)  # a phase's last step comes twice where its time ran out
            at = {n: np.asarray(outputs[n.partition("[")[0]])[..., int(n[n.index("[") + 1:-1])] if "[" in n else outputs[n]
                  for n in x}
            self.steps.append((ts, at, t[done], {n: np.asarray(v)[done] for n, v in x.items()}))

    def result(self, system, names, scenario) -> Result:
        cat = lambda i: np.concatenate([piece[i] for piece in self.pieces])  # noqa: E731
        outputs = {key: np.concatenate([piece[2][key] for piece in self.pieces]) for key in self.pieces[0][2]}
        res = Result(system, cat(0), *(np.concatenate([piece[1][i] for piece in self.pieces]) for i in range(3)),
                     outputs, batched=False, phase=cat(3), events=[piece[4] for piece in self.pieces], phase_names=names,
                     between=_between_from_states(self.steps, SLACK_FRACTION) if self.steps else {})
        res.attrs["scenario"] = scenario
        return res


def _between_from_states(pieces: list, slack_fraction: float) -> dict:
    """:attr:`Result.between` of a run in pieces (a scenario's phases, in order) from every state it passed.

    Each piece is ``(saves, at_saves, steps, at_steps)``: its saved times (the first its start, the last its
    end) and the tracked values there (``{name: (n_saves,)}``), and the times of its step boundaries (the
    first its start, the last its end) and the values there.  Per save, over the step boundaries from it to
    the next save (within a microsecond; a piece's last save: its end; a save whose window holds no step,
    one closer to the next than a step: its own value): the largest, smallest and mean value and their
    number; for tensions and hook loads the slack entries (below ``slack_fraction`` of the run's first
    value), the time slack (each state to the next) and the largest value from the run's first slack state
    on.  The saves' values are not read otherwise (one off the step grid is interpolated), so these do not
    depend on the save step, and at saves on the step grid they are the figures
    :func:`jaxmbd.simulation.solve_with_extremes` takes at each step of a run without phases."""
    names = list(pieces[0][1])
    merged = [_merge_states(*piece) for piece in pieces]
    out = {}
    for n in names:
        first = merged[0][1][n][0]
        rope = n.endswith(("/tension", "/hook_load"))
        was, ever = False, False
        cols = {k: [] for k in ("max", "min", "mean", "states", "slack_entries", "slack_seconds", "max_once_slack")}
        for t, x, pos in merged:
            x = x[n]
            counts = np.diff(np.append(pos, x.size))  # the windows [save, next save), none empty
            cols["max"].append(np.maximum.reduceat(x, pos))
            cols["min"].append(np.minimum.reduceat(x, pos))
            cols["mean"].append(np.add.reduceat(x, pos) / counts)
            cols["states"].append(counts.astype(np.int32))
            if rope:
                now = (x < slack_fraction * first) & (first > 0)
                entry = now & ~np.concatenate([[was], now[:-1]])
                ever_k = np.logical_or.accumulate(np.concatenate([[ever], now]))[1:]
                dur = np.append(np.diff(t), 0.0) * now
                cols["slack_entries"].append(np.add.reduceat(entry.astype(np.int32), pos).astype(np.int32))
                cols["slack_seconds"].append(np.add.reduceat(dur, pos))
                cols["max_once_slack"].append(np.maximum.reduceat(np.where(ever_k, x, -np.inf), pos))
                was, ever = bool(now[-1]), bool(ever_k[-1])
        out[n] = {k: np.concatenate(v) for k, v in cols.items() if v}
        if rope:
            out[n]["snap"] = _snaps(merged, n, first, slack_fraction)
    return out


def _snaps(merged, n, first, slack_fraction):
    """Per save, the largest snap (:func:`jaxmbd.statistics.slack_events`: the peak that ends a slack spell) of
    the spells that end in its window, over the whole run's step record; NaN where none ends."""
    from .statistics import slack_events

    t = np.concatenate([m[0] for m in merged])
    x = np.concatenate([m[1][n] for m in merged])
    sizes = np.cumsum([0] + [m[1][n].size for m in merged])
    starts = np.concatenate([m[2] + off for m, off in zip(merged, sizes)])  # each window's first state, over the run
    snap = np.full(starts.size, np.nan)
    for e in slack_events(t, x, first, slack_fraction=slack_fraction) if first > 0 else []:
        if e.snap is not None:
            w = np.searchsorted(starts, np.searchsorted(t, e.end), side="right") - 1
            snap[w] = np.fmax(snap[w], e.snap)
    return snap


def _merge_states(saves, at_saves, steps, at_steps):
    """(times, {name: values}, first index of each save's window) of a piece: its step boundaries, binned
    from each save to the next (within a microsecond), and the value of a save whose window holds no step."""
    saves, steps = np.asarray(saves, float), np.asarray(steps, float)
    lo = np.searchsorted(steps, saves - 1e-6)
    empty = np.append(lo[1:], steps.size) <= lo
    t = np.insert(steps, lo[empty], saves[empty])
    pos = lo + np.cumsum(empty) - empty
    values = {n: np.insert(np.asarray(at_steps[n], float), lo[empty], np.asarray(at_saves[n], float)[empty]) for n in at_steps}
    return t, values, pos


def _coord_names(model):
    qn, vn = [], []
    for i, j in enumerate(model.joints):
        jn = model.joint_names[i]
        qn += [f"{jn}[{k}]" for k in range(j.nq)] if j.nq > 1 else ([jn] if j.nq else [])
        vn += [f"{jn}[{k}]" for k in range(j.nv)] if j.nv > 1 else ([jn] if j.nv else [])
    return qn, vn


_DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
_WRENCH = ("fx", "fy", "fz", "mx", "my", "mz")


def _named_in_units(units: str | None, n: int) -> list[str] | None:
    """The components a mixed-units string names, in order (``"N (surge sway), N m (yaw)"`` -> surge, sway, yaw),
    where they are exactly ``n``."""
    if not units or "(" not in units:
        return None
    names = [m for part in units.split(")") if "(" in part for m in part.split("(", 1)[1].replace(",", " ").split()]
    return names if len(names) == n and len(set(names)) == n else None


def component_labels(name: str, n: int, units: str | None = None) -> tuple[str, list[str]]:
    """(dimension name, labels) of the n components of vector output ``name``: the six DOFs of each
    hydrodynamic body (``hydro/eta``, ``hydro/excitation``, ...), force and moment of a wrench, the components its
    ``units`` name (``"N (surge sway), N m (yaw)"``), x y z of a 3-vector, else indices."""
    var = name.replace("/", "_")
    leaf = name.rsplit("/", 1)[-1]
    if n % 6 == 0 and name.split("/")[0] != "joint" and leaf in ("eta", "excitation", "radiation", "hydrostatic"):
        labels = [f"{_DOFS[k % 6]}{'' if n == 6 else k // 6}" for k in range(n)]
        return ("dof" if n == 6 else f"{var}_dof"), labels
    if n == 6:
        return "component", list(_WRENCH)
    named = _named_in_units(units, n)
    if named is not None and named != list(_WRENCH[:n]):
        return f"{var}_component", named
    if n == 3:
        return "xyz", ["x", "y", "z"]
    return f"{var}_index", [str(k) for k in range(n)]


def result_to_dataset(result) -> xr.Dataset:
    """Dataset with dims (realisation,) time, q_coord, v_coord and one variable per output, each with
    ``units`` and ``long_name``; vector outputs have a labelled dimension (``dof``, ``component``,
    ``xyz``)."""
    import xarray as xr

    from . import __version__

    system = result.system
    model = system.model
    qn, vn = _coord_names(model)
    time = np.asarray(result.time)
    ragged = time.ndim == 2  # a batched scenario: each realisation its own (padded) time grid
    lead = ("realisation", "sample" if ragged else "time") if result.batched else ("time",)
    data = {
        "q": (lead + ("q_coord",), np.asarray(result.q), {"long_name": "joint coordinates",
                                                           "units": "m (positions), rad (angles), 1 (quaternions)"}),
        "v": (lead + ("v_coord",), np.asarray(result.v), {"long_name": "joint velocities", "units": "m/s, rad/s"}),
    }
    if np.asarray(result.z).shape[-1]:
        data["z"] = (lead + ("state",), np.asarray(result.z),
                     {"long_name": "force-element internal states", "units": "per element (see its documentation)"})
    units = system.output_units()
    time_attrs = {"units": "s", "long_name": "time"}
    coords = {"q_coord": qn, "v_coord": vn}
    if ragged:
        data["time"] = (lead, time, time_attrs | {"comment": "each realisation's times; NaN after its end"})
    else:
        coords["time"] = ("time", time, time_attrs)
    if result.phase is not None:
        data["phase"] = (lead, np.asarray(result.phase), {"long_name": "scenario phase index (-1: after the end)",
                                                          "units": "1", "phase_names": json.dumps(list(result.phase_names))})
    for name, val in result.outputs.items():
        if name == "phase":
            continue
        val = np.asarray(val)
        dims = lead
        if val.ndim == len(lead) + 1:
            dim, labels = component_labels(name, val.shape[-1], units.get(name))
            coords.setdefault(dim, (dim, labels))
            dims = lead + (dim,)
        elif val.ndim > len(lead) + 1:
            dims = lead + tuple(f"{name.replace('/', '_')}_dim{k}" for k in range(val.ndim - len(lead)))
        data[name] = (dims, val, {"long_name": name, "units": units.get(name, "unknown")})
    for name, b in result.between.items():  # the extremes over every step, not only the saves
        var = name.replace("[", "_").replace("]", "")
        for k, what in (("max", "largest"), ("min", "smallest")):
            data[f"{var}_{k}_between"] = (lead, np.asarray(b[k]), {
                "long_name": f"{name}: {what} value over the integration steps from this save to the next",
                "units": units.get(name.split("[")[0], "unknown")})
        if "slack_entries" in b:
            data[f"{var}_slack_entries"] = (lead, np.asarray(b["slack_entries"]), {
                "long_name": f"{name}: entries into slack (below 10 % of its start value) over the steps from this save "
                             "to the next", "units": "1"})
            data[f"{var}_slack_seconds"] = (lead, np.asarray(b["slack_seconds"]), {
                "long_name": f"{name}: time slack over the steps from this save to the next", "units": "s"})
    if result.batched:
        coords["realisation"] = ("realisation", np.arange(np.asarray(result.q).shape[0]),
                                 {"long_name": "Monte-Carlo realisation (wave seed index)", "units": "1"})
    attrs = {"Conventions": "CF-1.8", "title": f"jaxmbd simulation of {system.name}", "system": system.name,
             "jaxmbd_version": __version__, "history": f"{_now()} jaxmbd",
             "bodies": json.dumps(list(model.body_names)), "joints": json.dumps(list(model.joint_names)),
             "gravity_m_s2": float(np.linalg.norm(np.asarray(model.gravity, float)))}
    if system.waves is not None:
        attrs["sea_state"] = _describe_sea(system.waves)
    if result.phase is not None:
        attrs["events"] = json.dumps(_events(result.events))
    attrs.update({k: (v if isinstance(v, (str, int, float)) else json.dumps(v)) for k, v in result.attrs.items()})
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _events(events):
    if events and isinstance(events[0], list):
        return [_events(e) for e in events]
    return [dataclasses.asdict(e) if dataclasses.is_dataclass(e) else e for e in events]


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _describe_sea(waves) -> str:
    try:
        out = {}
        current = getattr(waves, "current", None)
        if current is not None:
            out["current"] = {"surface_speed_m_s": float(current.speed), "direction_rad": float(current.direction),
                              "profile": None if current.profile_depth is None else
                              [[float(d), float(f)] for d, f in zip(current.profile_depth, current.profile_factor)]}
        if hasattr(getattr(waves, "regular", None), "elevation"):  # a recorded wave
            w = waves.regular
            out["recorded"] = {"samples": int(w.elevation.shape[-1]), "dt_s": w.dt, "hs_record_m": float(4 * np.std(w.elevation)),
                               "omega_min_rad_s": w.omega_min, "omega_max_rad_s": w.omega_max, "direction_rad": float(w.direction)}
            return json.dumps(out)
        if getattr(waves, "regular", None) is not None:
            w = waves.regular
            out["regular"] = {"height_m": float(w.height), "period_s": float(w.period), "direction_rad": float(w.direction)}
            return json.dumps(out)
        spec = getattr(waves, "spectrum", None)
        if spec is None:
            return json.dumps(out | {"waves": "none (calm water)"})
        out |= {"spectrum": type(spec).__name__, "n_frequencies": int(waves.n_frequencies),
                "omega_min_rad_s": float(waves.omega_min), "omega_max_rad_s": float(waves.omega_max),
                "mean_direction_rad": float(waves.mean_direction)}
        for field in ("hs", "tp", "gamma"):
            if hasattr(spec, field):
                out[f"{field}"] = float(getattr(spec, field))
        if hasattr(waves, "energy_fraction"):  # what the band holds of it: the sea modelled
            out["energy_fraction_in_band"] = waves.energy_fraction()
            out["hs_modelled_m"] = waves.modelled_hs()
        return json.dumps(out)
    except (AttributeError, TypeError) as exc:  # a wave description of another kind
        return f"{type(waves).__name__} ({exc})"
