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
small against the wavelength, as in any panel method).  Over a wetted sub-triangle of area A, outward
unit normal n and corners x_i with pressures p_i, the load on the hull is

    F = −∫ p n dA = −(A/3) Σ p_i n,      M_c = −∫ (x − c) × n p dA = −(∫ p (x − c) dA) × n

with the integrals of the products of the linear shape functions (:func:`pressure_loads`); the
sub-triangles' areas are fractions of their panel's, products of the edges' cut parameters.
"""

from __future__ import annotations

import jax.numpy as jnp


def _fraction(dp, dq):
    """Where d = 0 on the edge from a corner at height dp ≤ 0 to one at dq > 0, as the fraction of the
    edge from the first (0 where the edge does not cross)."""
    den = dq - dp
    ok = den > 0
    return jnp.where(ok, -dp / jnp.where(ok, den, 1.0), 0.0)


def clip_below(X, d):
    """The parts of triangles where d ≤ 0, as two sub-triangles per triangle.

    ``X`` (C, 3, n): the panels' corners with C channels (the position's three first, then anything
    interpolated linearly over the panel, such as the pressure), the panels last (structure of
    arrays: every operation below is element-wise over the panels); ``d`` (3, n): the corners' height
    above the surface.  Returns two sub-triangles, each a tuple of three corners (C, n), and their
    areas as fractions of their panel's (n,); a sub-triangle that is not needed has fraction 0.

    With the corners a, b, c by height and t_xy the fraction along the edge from x to y where it
    crosses: one wet corner gives (a, p_ab, p_ac), t_ab t_ac of the area; two give (a, b, p_bc), t_bc,
    and (a, p_bc, p_ac), t_ac (1 − t_bc); three the whole triangle."""
    rank = _ranks(d)

    def corner(r):
        w = [(rk == r).astype(X.dtype) for rk in rank]
        return (w[0] * X[:, 0] + w[1] * X[:, 1] + w[2] * X[:, 2]), (w[0] * d[0] + w[1] * d[1] + w[2] * d[2])

    (a, da), (b, db), (c, dc) = corner(0), corner(1), corner(2)
    return _clip_sorted(a, b, c, da, db, dc)


def _ranks(d):
    """Each corner's rank by height (ties broken by index), as comparisons: no sort, no gather."""
    d0, d1, d2 = d[0], d[1], d[2]
    one = jnp.ones_like(d0)
    return ((d1 < d0) * one + (d2 < d0), (d0 <= d1) * one + (d2 < d1), (d0 <= d2) * one + (d1 <= d2))


def _clip_sorted(a, b, c, da, db, dc):
    t_ab, t_ac, t_bc = _fraction(da, db), _fraction(da, dc), _fraction(db, dc)
    pab, pac, pbc = (P + t * (Q - P) for P, Q, t in ((a, b, t_ab), (a, c, t_ac), (b, c, t_bc)))
    all_wet, two_wet, one_wet = dc <= 0, (db <= 0) & (dc > 0), (da <= 0) & (db > 0)
    zero = jnp.zeros_like(da)
    first_w = jnp.where(all_wet, 1.0, jnp.where(two_wet, t_bc, jnp.where(one_wet, t_ab * t_ac, zero)))
    second_w = jnp.where(two_wet, t_ac * (1.0 - t_bc), zero)
    first = (a, jnp.where(one_wet, pab, b), jnp.where(one_wet, pac, jnp.where(two_wet, pbc, c)))
    second = (a, jnp.where(two_wet, pbc, a), jnp.where(two_wet, pac, a))
    return (first, first_w), (second, second_w)


def buoyancy(corners, about, rho_g):
    """Force (3,) [N] and moment about ``about`` (3,) [N m] of the still water (surface z = 0) on the
    triangles ``corners`` (3, 3, n) of a closed hull, as ρ g V through the centre of buoyancy: the
    displaced volume and its centroid by the divergence theorem, as the signed tetrahedra from a
    point on the waterplane to each wetted sub-triangle (the waterplane itself closes the volume and
    adds nothing).  The same value as :func:`panel_loads` with p = −ρ g z, for a third of its work."""
    rank = _ranks(corners[2])
    # a sub-triangle's corners run by height: its orientation is the panel's times the parity of that order
    parity = jnp.where((rank[0] - rank[1]) * (rank[1] - rank[2]) * (rank[2] - rank[0]) > 0, 1.0, -1.0)
    # (r0 − r1)(r1 − r2)(r2 − r0) is +2 for the even orders (0 1 2, 1 2 0, 2 0 1) and −2 for the odd ones
    origin = jnp.stack([about[0], about[1], jnp.zeros_like(about[2])])
    X = corners - origin[:, None, None]

    def corner(r):
        w = [(rk == r).astype(X.dtype) for rk in rank]
        return w[0] * X[:, 0] + w[1] * X[:, 1] + w[2] * X[:, 2]

    a, b, c = corner(0), corner(1), corner(2)
    V = jnp.zeros((), X.dtype)
    moment = jnp.zeros(3, X.dtype)  # ∫ x dV from the origin
    for (P0, P1, P2), fraction in _clip_sorted(a, b, c, a[2], b[2], c[2]):
        used = fraction > 0
        vol = parity * jnp.where(used, jnp.sum(P0 * _cross0(P1[None], P2[None])[0], axis=0), 0.0) / 6.0  # (n,)
        V = V + jnp.sum(vol)
        moment = moment + (P0 + P1 + P2) @ vol / 4.0
    F = jnp.stack([jnp.zeros_like(V), jnp.zeros_like(V), rho_g * V])
    lever = moment / V + origin - about
    return F, jnp.stack([lever[1] * F[2], -lever[0] * F[2], jnp.zeros_like(V)])


def panel_geometry(corners):
    """Outward unit normals (3, n) and areas (n,) of triangles whose corners (3, 3, n) (coordinate,
    corner, panel) run counter-clockwise seen from outside."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    nrm = _cross0((b - a)[None], (c - a)[None])[0]
    norm = jnp.sqrt(jnp.sum(nrm * nrm, axis=0))
    return nrm / norm, 0.5 * norm


def panel_loads(corners, d, p, about):
    """Force and moment of pressures on the wetted part of triangles, panels last.

    ``corners`` (3, 3, n) [m] (coordinate, corner, panel); ``d`` (3, n) [m]: each corner's height
    above the free surface; ``p`` (m, 3, n) [Pa]: m pressure fields at the corners (linear over each
    panel); ``about`` (3,): the moments' point.  Returns F (m, 3) [N] and M (m, 3) [N m] on the hull
    (the water pushing on it) and the wetted area [m²].

    Over a sub-triangle of area A with corners x_i and pressures p_i, both linear:
    ∫ p dA = A S_p / 3 and ∫ p (x − c) dA = A/12 (S_p S_x + Σ p_i x_i), with x measured from c and S
    the sums over the corners (the integrals of products of the linear shape functions)."""
    n_hat, area = panel_geometry(corners)
    X = jnp.concatenate([corners - about[:, None, None], p], axis=0)
    F = M = wetted = 0.0
    for P, fraction in clip_below(X, d):
        A = fraction * area  # (n,)
        x, pk = [Pi[:3] for Pi in P], [Pi[3:] for Pi in P]  # (3, n) and (m, n) per corner
        Sp, Sx = pk[0] + pk[1] + pk[2], x[0] + x[1] + x[2]
        px = sum(pi[:, None] * xi[None] for pi, xi in zip(pk, x))  # (m, 3, n)
        w = A / 12.0
        F = F - (A / 3.0 * Sp) @ n_hat.T  # (m, 3)
        integral_px = w * (Sp[:, None] * Sx[None] + px)  # (m, 3, n)
        M = M - jnp.sum(_cross0(integral_px, n_hat[None]), axis=-1)
        wetted = wetted + jnp.sum(A)
    return F, M, wetted


def _cross0(a, b):
    """a × b along the second axis of (m, 3, n) arrays."""
    return jnp.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                      a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def pressure_loads(corners, d, p, about):
    """:func:`panel_loads` with the panels first: ``corners`` (n, 3, 3), ``d`` (n, 3), ``p`` (n, 3, m)."""
    return panel_loads(jnp.transpose(corners, (2, 1, 0)), d.T, jnp.transpose(p, (2, 1, 0)), about)


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
