"""Water pressure integrated over the instantaneous wetted part of a closed hull.

Each triangle of the hull is clipped exactly by the free surface: with d the height of a corner
above the surface (z − ζ(x, y, t)), the wetted part of a triangle is the polygon where the linear
interpolation of d between its corners is negative, found by cutting the edges whose ends have
opposite signs.  It is empty, a triangle or a quadrilateral (two triangles), so every panel gives
two sub-triangles (of zero area when unused) and the whole hull is one vectorised expression: the
wetted area, the force and the moment are continuous in the pose, and differentiable except at the
instants when a corner crosses the surface.

The pressure is interpolated linearly over each panel from its corners' values (exact for the
hydrostatic pressure −ρ g z, which is linear; for the incident wave's pressure, a panel should be
small against the wavelength, as in any panel method).  Over a triangle of area A, outward unit
normal n and corners x_i with pressures p_i, the load on the hull is

    F = −∫ p n dA = −A p̄ n,        M_c = −∫ (x − c) × n p dA = −(A/3 Σ_m p_m (x_m − c)) × n

with p̄ the mean of the corners' pressures and the sum over the edges' midpoints m (that rule is
exact for the quadratic integrand (x − c) p).
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import spatial


def _cut(P, Q, dp, dq):
    """The point where d = 0 on the edge from P (d = dp ≤ 0) to Q (d = dq > 0), all channels of the
    corners interpolated; P itself where the edge does not cross."""
    den = dq - dp
    ok = den > 0
    t = jnp.where(ok, -dp / jnp.where(ok, den, 1.0), 0.0)
    return P + t[..., None] * (Q - P)


def clip_below(X, d):
    """The parts of triangles where d ≤ 0, as two sub-triangles per triangle.

    ``X`` (n, 3, C): the corners with C channels (the position first, then anything that is
    interpolated linearly over the panel, such as the pressure); ``d`` (n, 3): the corners' height
    above the surface.  Returns (2, n, 3, C); a sub-triangle that is not needed has coincident
    corners (zero area)."""
    order = jnp.argsort(d, axis=1)
    Xs = jnp.take_along_axis(X, order[..., None], axis=1)
    ds = jnp.take_along_axis(d, order, axis=1)
    a, b, c = Xs[:, 0], Xs[:, 1], Xs[:, 2]
    da, db, dc = ds[:, 0], ds[:, 1], ds[:, 2]
    pab, pac, pbc = _cut(a, b, da, db), _cut(a, c, da, dc), _cut(b, c, db, dc)
    all_wet, two_wet, one_wet = dc <= 0, (db <= 0) & (dc > 0), (da <= 0) & (db > 0)

    def pick(cases, default):
        out = default
        for cond, val in cases:
            out = jnp.where(cond[:, None, None], val, out)
        return out

    zero = jnp.stack([a, a, a], 1)
    first = pick([(one_wet, jnp.stack([a, pab, pac], 1)), (two_wet, jnp.stack([a, b, pbc], 1)),
                  (all_wet, jnp.stack([a, b, c], 1))], zero)
    second = pick([(two_wet, jnp.stack([a, pbc, pac], 1))], zero)
    return jnp.stack([first, second])


def unit_normals(corners):
    """Outward unit normals (n, 3) of triangles (n, 3, 3) given counter-clockwise from outside."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    nrm = spatial.cross(b - a, c - a)
    return nrm / jnp.sqrt(jnp.sum(nrm * nrm, axis=-1, keepdims=True))


def pressure_loads(corners, d, p, about):
    """Force and moment of a pressure on the wetted part of triangles.

    ``corners`` (n, 3, 3) [m]; ``d`` (n, 3) [m]: each corner's height above the free surface;
    ``p`` (n, 3, m) [Pa]: m pressure fields at the corners (linear over each panel); ``about`` (3,):
    the moments' point.  Returns F (m, 3) [N] and M (m, 3) [N m] on the hull (the water pushing
    on it) and the wetted area [m²]."""
    n_hat = unit_normals(corners)
    X = jnp.concatenate([corners, p], axis=-1)
    subs = clip_below(X, d)  # (2, n, 3, 3 + m)
    P = subs[..., :3]
    e1, e2 = P[:, :, 1] - P[:, :, 0], P[:, :, 2] - P[:, :, 0]
    area = 0.5 * jnp.abs(jnp.sum(spatial.cross(e1, e2) * n_hat[None], axis=-1))  # (2, n)
    mids = 0.5 * (subs + jnp.roll(subs, -1, axis=2))  # the edges' midpoints (2, n, 3, C)
    pm = mids[..., 3:]  # (2, n, 3, m)
    w = area[..., None] / 3.0  # (2, n, 1)
    pbar = jnp.sum(pm, axis=2) * w  # (2, n, m): A p̄
    F = -jnp.einsum("snm,nj->mj", pbar, n_hat)
    lever = mids[..., :3] - about  # (2, n, 3, 3)
    s = jnp.einsum("snkm,snkj->snmj", pm, lever) * w[..., None]  # A/3 Σ p_m (x_m − c): (2, n, m, 3)
    M = -jnp.sum(spatial.cross(s, n_hat[None, :, None, :]), axis=(0, 1))
    return F, M, jnp.sum(area)


def depth_factor(k, z, water_depth):
    """cosh(k (z + h)) / cosh(k h) of the incident wave's pressure and velocity (e^{k z} in deep
    water), taken at min(z, 0): above the still waterline the pressure is extrapolated at constant
    depth factor, so it vanishes on the wave's surface to first order."""
    z = jnp.minimum(z, 0.0)
    if water_depth == float("inf"):
        return jnp.exp(k * z)
    h = water_depth
    # cosh(k(z + h)) / cosh(kh) = e^{kz} (1 + e^{−2k(z + h)}) / (1 + e^{−2kh}), without overflow
    return jnp.exp(k * z) * (1.0 + jnp.exp(-2.0 * k * (z + h))) / (1.0 + jnp.exp(-2.0 * k * h))


def incident_wave(components, points, t, water_depth, scale=1.0):
    """The incident wave at world points (n, 3): its elevation ζ(x, y, t) (n,) [m] and the dynamic
    pressure over ρ g (n,) [m] at the points' depth (:func:`depth_factor`), each times ``scale``
    (the excitation's ramp)."""
    c = components
    dtype = points.dtype
    k, om, beta, ph = (jnp.asarray(x).astype(dtype) for x in (c.wavenumber, c.omega, c.direction, c.phase))
    a = jnp.asarray(c.amplitude).astype(dtype) * scale
    xp = points[:, :1] * jnp.cos(beta) + points[:, 1:2] * jnp.sin(beta)  # (n, nc)
    cos = a * jnp.cos(k * xp - om * jnp.asarray(t).astype(dtype) - ph)
    return jnp.sum(cos, axis=-1), jnp.sum(cos * depth_factor(k, points[:, 2:3], water_depth), axis=-1)
