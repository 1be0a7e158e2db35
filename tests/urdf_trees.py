"""Random URDF trees for cross-checks against Pinocchio."""

import numpy as np


def _rpy(rng):
    return rng.uniform(-np.pi, np.pi, 3)


def random_inertia(rng):
    """A random rigid-body inertia (box-like principal moments, random axes): always physical."""
    m = rng.uniform(0.5, 5.0)
    a, b, c = rng.uniform(0.05, 1.0, 3)
    d = np.array([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 12.0
    return m, d


def random_urdf(rng, n_links=8, kinds=("revolute", "continuous", "prismatic", "fixed")):
    lines = ['<robot name="random">']
    for k in range(n_links):
        m, d = random_inertia(rng)
        xyz = rng.uniform(-0.3, 0.3, 3)
        rpy = _rpy(rng)
        lines.append(
            f'<link name="l{k}"><inertial><origin xyz="{xyz[0]:.17g} {xyz[1]:.17g} {xyz[2]:.17g}" '
            f'rpy="{rpy[0]:.17g} {rpy[1]:.17g} {rpy[2]:.17g}"/><mass value="{m:.17g}"/>'
            f'<inertia ixx="{d[0]:.17g}" ixy="0" ixz="0" iyy="{d[1]:.17g}" iyz="0" izz="{d[2]:.17g}"/>'
            "</inertial></link>"
        )
    for k in range(1, n_links):
        parent = rng.integers(0, k)
        kind = kinds[rng.integers(0, len(kinds))]
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        xyz = rng.uniform(-0.5, 0.5, 3)
        rpy = _rpy(rng)
        lim = '<limit lower="-10" upper="10" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
        lines.append(
            f'<joint name="j{k}" type="{kind}"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="{xyz[0]:.17g} {xyz[1]:.17g} {xyz[2]:.17g}" rpy="{rpy[0]:.17g} {rpy[1]:.17g} {rpy[2]:.17g}"/>'
            f'<axis xyz="{axis[0]:.17g} {axis[1]:.17g} {axis[2]:.17g}"/>{lim}</joint>'
        )
    lines.append("</robot>")
    return "\n".join(lines)
