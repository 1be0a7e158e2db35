"""Force elements: one class per kind, one file each.

Every module of this package is imported here, so a new file with a new ``ForceElement`` subclass
that sets ``kind`` is registered, readable from system files and documented with no other change.
Gravity is part of the model (``Model.gravity``), applied inside the dynamics to every body's rigid
inertia; it is not a separate element.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from ..system import ELEMENT_KINDS as _ELEMENT_KINDS

for _module in _pkgutil.iter_modules(__path__):
    _importlib.import_module(f"{__name__}.{_module.name}")

from .mooring import LinearMooring  # noqa: E402
from .pto import JointPTO  # noqa: E402
from .rope import WireRope, smooth_tension  # noqa: E402
from .spring import SpringDamper  # noqa: E402
from .wind import WindDrag  # noqa: E402

KINDS = _ELEMENT_KINDS["forces"]
"""Name in a system file's ``[[forces]]`` -> class (every registered force element)."""

__all__ = ["KINDS", "SpringDamper", "WireRope", "LinearMooring", "WindDrag", "JointPTO", "smooth_tension"]
