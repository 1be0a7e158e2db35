"""The units a table prints a figure in: result files keep SI (every variable with its ``units``); the run
table shows angles in degrees and forces in the file's ``display_loads`` (kN by default, or MN, N, or t:
tonnes-force, the crane engineer's unit, N / (1000 g))."""

from __future__ import annotations

import math

from .errors import InputError

DISPLAY_LOADS = ("kN", "MN", "N", "t")
"""The units of force a system file's ``display_loads`` may name (moments: that unit times m)."""

TINY = 1e-9
"""An SI figure below this in magnitude (m, rad, N, ...) prints as 0: the round-off of a symmetric problem
(a sway of 1e-16 m in head seas), not a result."""


def display_unit(unit: str, loads: str = "kN", g: float = 9.81) -> tuple[str, float]:
    """(the unit shown, the factor from the SI value) for an SI ``unit``: rad, rad/s and rad/s² in degrees;
    N and N m in ``loads`` (and ``loads`` m); any other unit as it is (factor 1)."""
    if unit in ("rad", "rad/s", "rad/s²"):
        return "deg" + unit[3:], 180.0 / math.pi
    if unit in ("N", "N m"):
        if loads not in DISPLAY_LOADS:
            raise InputError(f"display_loads must be one of {', '.join(DISPLAY_LOADS)}, got {loads!r}")
        factor = 1.0 / (1000.0 * g) if loads == "t" else {"kN": 1e-3, "MN": 1e-6, "N": 1.0}[loads]
        return (loads if unit == "N" else f"{loads} m"), factor
    return unit, 1.0


def display_units_of(system, loads: str = "kN"):
    """``unit -> (unit shown, factor)`` for ``system``'s tables: :func:`display_unit` with its model's g."""
    g = math.sqrt(sum(float(c) ** 2 for c in system.model.gravity))
    return lambda unit: display_unit(unit, loads, g)


def figure(x, factor: float = 1.0, digits: int = 4) -> str:
    """An SI figure ``x`` times ``factor`` to ``digits`` significant digits; 'n/a' for None or NaN; 0 below
    :data:`TINY` (SI)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    if abs(x) < TINY:
        return "0"
    return f"{x * factor:.{digits}g}"


def seconds(t: float) -> str:
    """A duration for a header: whole seconds from 10 s (46 s, not 46.2816 s), else 3 significant digits."""
    return f"{t:.0f} s" if t >= 10 else f"{t:.3g} s"
