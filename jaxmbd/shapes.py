"""Array shapes of the public surface, as jaxtyping annotations.

``nq``, ``nv``: the configuration and velocity sizes of a model; ``n``: its bodies.
"""

from jaxtyping import Array, Float

Configuration = Float[Array, "nq"]
Velocity = Float[Array, "nv"]
JointSpaceMatrix = Float[Array, "nv nv"]
BodyWrenches = Float[Array, "n 6"]
BodyInertias = Float[Array, "n 6 6"]
