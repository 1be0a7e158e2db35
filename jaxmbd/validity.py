"""Ranges of validity of the models, and the check of a result against them.

Each force element states where its model holds (:meth:`ForceElement.valid_ranges`), as bounds on
its own outputs:

* a hydrodynamic body (linear hydrostatics, radiation and excitation about the equilibrium
  position): roll and pitch within ±15°.  Beyond, the waterplane and the wetted hull have changed
  too much for a restoring matrix and small-angle radiation; a deck edge immerses or a bilge
  emerges on most hulls well before 15° of roll (a barge of beam B and freeboard f at
  atan(2 f / B));
* a box hull given its dimensions (``box = {length, beam, draught[, depth]}`` of a system file, or
  ``hull_boxes`` of :meth:`HydroBody.create`): in still water, the bilge's lowest-immersed corner
  stays under the waterline and, with ``depth``, the deck's lowest corner above it (heave, roll and
  pitch of the reference point; the wave's own elevation is not counted, so green water in waves
  starts earlier);
* a hydrodynamic body with non-linear hydrostatics (the pressure on its closed hull's wetted part):
  roll and pitch within ±15° for its linear radiation and diffraction, and within the angle of
  vanishing stability of its GZ curve at rest (both sides, the weaker one): beyond, it capsizes;
* a wire rope (elastic, no bending or fibre dynamics): tension at least 10 % of its value at the
  start (the static load).  Below, DNV-ST-N001 treats the rope as slack: the load is no longer
  carried by the rope, and the snap when it comes tight again needs a rope model with its own
  wave dynamics; the check reports the largest tension after the first slack, over the static
  one (the snap load's amplification).

:func:`check` counts, for each range, the samples and realisations outside it and the first time a
realisation left it; ``jaxmbd run`` prints them as a WARNING block and writes them into the result.

The fixed step is held against the stiffest mode the elements state (:func:`stiffest_mode`: a rope's,
a fender's or a linear mooring's stiffness between the bodies they join, a lumped line's segments):
beyond RK4's stability bound (ω h > 2√2) a system file is refused with the largest stable step; beyond
ω h = 1, where RK4 takes 4 % of that mode's amplitude a period and a peak tension comes out several per
cent off, the run reports it (:func:`check_step`).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

SLACK_FRACTION = 0.1
"""A tension or hook load is slack below this fraction of its value at the start of the run (DNV-ST-N001's
10 %, DNV-RP-H103's slack-sling criterion; :func:`jaxmbd.statistics.slack_events`)."""


@dataclasses.dataclass(frozen=True)
class ValidRange:
    """Where one output of an element stays for its model to hold.

    ``output``: the element's output (``eta``); ``component``: its index for a vector output, or
    ``transform``: a function of the whole output (…, n) giving the checked quantity (…);
    ``upper``: |x| ≤ upper (``signed``: x ≤ upper); ``lower``: x ≥ lower;
    ``lower_fraction_of_start``: x ≥ fraction · x(t = 0) (where x(0) > 0)."""

    output: str
    quantity: str
    model: str
    limit: str
    component: int | None = None
    upper: float | None = None
    lower_fraction_of_start: float | None = None
    transform: object = None
    signed: bool = False
    lower: float | None = None

    def outside(self, x):
        """Boolean array: the samples of x (…, time) outside the range."""
        if self.upper is not None:
            return (x if self.signed else np.abs(x)) > self.upper
        if self.lower is not None:
            return x < self.lower
        start = x[..., :1]
        return (start > 0) & (x < self.lower_fraction_of_start * start)

    def outside_between(self, hi, lo, start):
        """Boolean array: the save intervals whose largest ``hi`` and smallest ``lo`` values (…, time) leave
        the range; ``start`` (…, 1): the value at the start of the run."""
        if self.upper is not None:
            return (hi if self.signed else np.maximum(np.abs(hi), np.abs(lo))) > self.upper
        if self.lower is not None:
            return lo < self.lower
        return (start > 0) & (lo < self.lower_fraction_of_start * start)


@dataclasses.dataclass(frozen=True)
class Excursion:
    """One range left by a run."""

    element: str
    quantity: str
    model: str
    limit: str
    fraction: float  # of all saved samples (every realisation)
    realisations: int  # realisations that leave the range at least once
    n_realisations: int
    first_time: float  # s, the earliest exit over the realisations
    extreme: float  # the largest |x| (upper bound) or the smallest x (lower bound)
    # lower bounds (a slack rope): the largest x after a realisation first left the range, over its value at
    # the start (the snap load as a dynamic amplification factor); None for upper bounds
    after_exit: float | None = None
    spells: int | None = None  # slack spells counted at every step (a tracked tension), over all realisations
    intervals: bool = False  # fraction: of the save intervals (judged at every step between them), not of the time
    first_before: float | None = None  # s: judged at every step, the first exit lies in [first_time, first_before)

    def line(self) -> str:
        snap = "" if self.after_exit is None else f"; afterwards up to {self.after_exit:.2f} x its start value (snap loads)"
        spells = "" if self.spells is None else f", {self.spells} slack spell(s)"
        first = (f"first at t = {self.first_time:.1f} s" if self.first_before is None
                 else f"first between t = {self.first_time:.2f} and {self.first_before:.2f} s")
        return (f"{self.element}: {self.quantity} outside the range of {self.model} ({self.limit}) in "
                f"{self.realisations} of {self.n_realisations} realisations{spells}, {100 * self.fraction:.1f} % of the "
                f"{'save intervals' if self.intervals else 'time'}, {first}{snap}")

    @property
    def everywhere(self) -> bool:
        return self.realisations == self.n_realisations


def check(system, time, outputs: dict, batched: bool, between: dict | None = None) -> list[Excursion]:
    """Each element's ranges held against ``outputs`` (name -> (realisation,) time (, component)); an
    output the run tracked at every step (``between``, :attr:`jaxmbd.results.Result.between`) is judged
    by its largest and smallest values between the saves, so that what falls between them is seen."""
    t = np.asarray(time)
    found = []
    for f in system.elements:
        for r in f.valid_ranges(system.model):
            name = f"{f.name}/{r.output}"
            if name not in outputs:
                continue
            x = np.asarray(outputs[name], float)
            b = (between or {}).get(name + ("" if r.component is None else f"[{r.component}]")) if r.transform is None else None
            if r.transform is not None:
                x = np.asarray(r.transform(x), float)
            elif r.component is not None:
                x = x[..., r.component]
            x = x if batched else x[None]
            if b is None:
                hi = lo = x
                out = r.outside(x)
            else:
                hi, lo = (np.reshape(np.asarray(b[k], float), x.shape) for k in ("max", "min"))
                out = r.outside_between(hi, lo, x[..., :1])
            if not out.any():
                continue
            rows = out.any(axis=-1)
            first = float(min(t[np.argmax(o)] for o in out[rows]))
            extreme = float((np.max(hi) if r.signed else max(np.max(np.abs(hi)), np.max(np.abs(lo)))) if r.upper is not None
                            else np.min(lo))
            after = spells = None
            if r.lower_fraction_of_start is not None:  # the largest value once slack, over the start's
                if b is not None and "slack_entries" in b and r.lower_fraction_of_start == SLACK_FRACTION:
                    spells = int(np.sum(b["slack_entries"]))  # and the largest value from the first slack step on
                    once = np.reshape(np.asarray(b["max_once_slack"], float), x.shape)[rows]
                    after = float(max(np.max(o) / xr[0] for o, xr in zip(once, x[rows])))
                else:
                    after = float(max(np.max(hr[np.argmax(o):]) / xr[0] for hr, xr, o in zip(hi[rows], x[rows], out[rows])))
            fraction = float(out.mean())
            if spells is not None and t.size > 1:  # the time slack, counted at every step
                fraction = float(np.sum(b["slack_seconds"]) / (x.shape[0] * (t[-1] - t[0])))
            found.append(Excursion(f.name, r.quantity, r.model, r.limit, fraction, int(rows.sum()),
                                   int(x.shape[0]), first, extreme, after, spells, b is not None and spells is None,
                                   first + (t[1] - t[0]) if b is not None and t.size > 1 else None))
    return found


RK4_STABLE = 2.0 * np.sqrt(2.0)
"""ω h of an undamped mode at RK4's stability bound (the imaginary axis of its stability region)."""
ACCURATE_STEP = 1.0
"""ω h above which a fixed step is reported: RK4 damps the mode by 4 % a period (|R(i)|^2π = 0.96) and
lags it; a rope's peak tension comes out several per cent off."""


def stiffest_mode(system, q, M) -> tuple[float, str] | None:
    """(ω rad/s, element name) of the stiffest mode the elements state at ``q``: the largest ω² of
    K φ = ω² M φ, K = Σ k gᵀ g over the springs of :meth:`~jaxmbd.system.ForceElement.springs` (g the
    row of their points' relative displacement along their direction; springs in parallel add up) and M
    the joint-space mass matrix ``M`` (the elements' added inertia in it; the loops' constraints taken
    out of its inverse), named by the spring that stores most of the mode's energy; or a larger
    :meth:`~jaxmbd.system.ForceElement.internal_frequency`.  None when no element states one."""
    from .kinematics import body_jacobian

    model = system.model
    ctx = system.context(0.0, q, np.zeros(model.nv))
    jac = {}

    def point(body, p):  # (world position (3,), world point Jacobian (3, nv)); a world point: no Jacobian
        if body == "world":
            return np.asarray(p, float), np.zeros((3, model.nv))
        if body not in jac:
            jac[body] = np.asarray(body_jacobian(model, q, body, ctx.kin))
        i = model.index(body)
        R, pos, p = np.asarray(ctx.R[i]), np.asarray(ctx.p[i]), np.asarray(p, float)
        J = jac[body]
        return pos + R @ p, R @ (J[:3] + np.cross(J[3:].T, p).T)

    rows, best = [], None  # (k, g, element) of every spring
    for f in system.forces:
        w = f.internal_frequency()
        if w is not None and np.isfinite(w) and (best is None or w > best[0]):
            best = (float(w), f.name)
        for spring in f.springs(ctx):
            (xa, Ja), (xb, Jb) = point(spring[0], spring[1]), point(spring[2], spring[3])
            u = np.asarray(spring[5] if len(spring) > 5 else xa - xb, float)
            rows.append((float(spring[4]), u / max(np.linalg.norm(u), 1e-300) @ (Ja - Jb), f.name))
    if rows and model.nv:
        Minv = np.linalg.inv(np.asarray(M, float))
        if getattr(system, "loops", ()):  # the loops' constraints: M⁻¹ − M⁻¹ J_cᵀ S⁺ J_c M⁻¹
            from .dynamics.constrained import loop_terms

            Jc = np.asarray(loop_terms(system.loops, model, q, np.zeros(model.nv))[1])
            MJ = Minv @ Jc.T
            Minv = Minv - MJ @ np.linalg.pinv(Jc @ MJ, rcond=1e-9) @ MJ.T
        K = sum(k * np.outer(g, g) for k, g, _ in rows)
        lam, vec = np.linalg.eig(Minv @ K)
        top = int(np.argmax(lam.real))
        if lam.real[top] > 0.0:
            phi = vec[:, top].real
            energy = {}
            for k, g, name in rows:
                energy[name] = energy.get(name, 0.0) + k * float(g @ phi) ** 2
            w = float(np.sqrt(lam.real[top]))
            if best is None or w > best[0]:
                best = (w, max(energy, key=energy.get))
    return best


def step_problem(stiffest, integrator) -> str | None:
    """Why a fixed RK4 step cannot run ``stiffest`` ((ω, element) of :func:`stiffest_mode`), or None."""
    dt = getattr(integrator, "dt", None)
    if stiffest is None or dt is None or integrator.method != "rk4":
        return None
    w, name = stiffest
    if w * dt <= RK4_STABLE:
        return None
    return (f"dt {dt:g} s is beyond RK4's stability bound for the stiffest mode, {name!r} at {w:.3g} rad/s (period "
            f"{2 * np.pi / w:.3g} s): the largest stable step is {RK4_STABLE / w:.3g} s, and {ACCURATE_STEP / w:.2g} s "
            "or less keeps it accurate")


def check_step(stiffest, integrator, n_realisations: int) -> list[Excursion]:
    """A fixed step that resolves the stiffest mode poorly (ω h > :data:`ACCURATE_STEP`), as an excursion
    of the run (every realisation, from the start)."""
    dt = getattr(integrator, "dt", None)
    if stiffest is None or dt is None or stiffest[0] * dt <= ACCURATE_STEP:
        return []
    w, name = stiffest
    return [Excursion(name, f"the fixed step ({integrator.method}, dt {dt:g} s) against its stiffest mode ({w:.3g} rad/s)",
                      "an explicit step that resolves every mode it integrates",
                      f"ω dt <= {ACCURATE_STEP:g}: dt <= {ACCURATE_STEP / w:.2g} s (the step damps and lags the mode: "
                      "its peaks come out several per cent off)", 1.0, n_realisations, n_realisations, 0.0, w * dt)]


SEA_ENERGY_FRACTION = 0.99
"""The share of the spectrum's energy a sea's frequency band must hold (its Hs then within 0.5 %)."""


def check_sea(waves, n_realisations: int, *, steepness: bool = True) -> list[Excursion]:
    """The sea asked for against the sea modelled: a spectrum whose band [omega_min, omega_max] holds less
    than :data:`SEA_ENERGY_FRACTION` of its energy (a short sea cut by the default band, a band limited
    to the hydrodynamic data) is reported with the Hs the realisations carry; with ``steepness``, a sea of Hs and
    Tp steeper than DNV-RP-C205's limiting steepness (it would break) is reported too."""
    return _check_band(waves, n_realisations) + (_check_steepness(waves, n_realisations) if steepness else [])


def _check_steepness(waves, n_realisations: int) -> list[Excursion]:
    excess = waves.steepness_excess() if waves is not None and hasattr(waves, "steepness_excess") else None
    if excess is None:
        return []
    hs, tp, sp, limit, breaking = excess
    return [Excursion("waves", f"the sea's steepness 2π Hs/(g Tp²) = 1/{1 / sp:.3g}",
                      f"linear waves (Hs {hs:g} m at Tp {tp:g} s breaks above {breaking:.3g} m)",
                      f"<= 1/{1 / limit:.3g} at Tp {tp:g} s (DNV-RP-C205: 1/15 to Tp 8 s, 1/25 from 15 s)",
                      1.0, n_realisations, n_realisations, 0.0, sp)]


def _check_band(waves, n_realisations: int) -> list[Excursion]:
    fraction = waves.energy_fraction() if waves is not None and hasattr(waves, "energy_fraction") else None
    if fraction is None or fraction >= SEA_ENERGY_FRACTION:
        return []
    hs, modelled = float(waves.spectrum.hs), waves.modelled_hs()
    return [Excursion("waves", f"the spectrum's energy in {waves.omega_min:g}-{waves.omega_max:g} rad/s ({100 * fraction:.1f} %)",
                      f"the discretised spectrum (Hs {hs:g} m asked, {modelled:.3g} m modelled)",
                      f">= {100 * SEA_ENERGY_FRACTION:g} % of the spectrum's energy (widen omega_min, omega_max)",
                      1.0, n_realisations, n_realisations, 0.0, fraction)]


def merge(per_realisation: list[list[Excursion]]) -> list[Excursion]:
    """One excursion per range over realisations each checked alone (a scenario's, on their own time grids)."""
    n = len(per_realisation)
    merged = {}
    for e in (e for found in per_realisation for e in found):
        key = (e.element, e.quantity)
        if key not in merged:
            merged[key] = dataclasses.replace(e, n_realisations=n, fraction=e.fraction / n)
        else:
            m = merged[key]
            merged[key] = dataclasses.replace(m, realisations=m.realisations + e.realisations,
                                              fraction=m.fraction + e.fraction / n,
                                              first_time=min(m.first_time, e.first_time),
                                              extreme=max(m.extreme, e.extreme) if "<=" in e.limit else min(m.extreme, e.extreme))
    return list(merged.values())


def to_attrs(found: list[Excursion]) -> dict:
    """Result-file attributes: ``validity`` (JSON list) and ``validity_summary`` (text)."""
    return {"validity": json.dumps([dataclasses.asdict(e) for e in found]),
            "validity_summary": "; ".join(e.line() for e in found) or "every model stayed in its range"}


def warning_block(found: list[Excursion]) -> str:
    """The WARNING block ``jaxmbd run`` prints above its table; '' if every range held."""
    if not found:
        return ""
    head = ("WARNING: the run left the range of validity of its models"
            + (" in every realisation" if all(e.everywhere for e in found) else "")
            + "; the numbers below are outside what the models can answer where it did:")
    return "\n".join([head] + [f"  - {e.line()}" for e in found])
