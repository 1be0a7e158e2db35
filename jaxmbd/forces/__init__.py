"""Force elements: one class per kind, registered by name for system files.

Gravity is part of the model (``Model.gravity``), applied inside the dynamics
to every body's rigid inertia; it is not a separate element.
"""

from .mooring import LinearMooring
from .pto import JointPTO
from .rope import WireRope, smooth_tension
from .spring import SpringDamper
from .wind import WindDrag

#: name in a system file -> class
KINDS = {
    "spring_damper": SpringDamper,
    "wire_rope": WireRope,
    "linear_mooring": LinearMooring,
    "wind": WindDrag,
    "pto": JointPTO,
}

__all__ = ["KINDS", "SpringDamper", "WireRope", "LinearMooring", "WindDrag", "JointPTO", "smooth_tension"]
