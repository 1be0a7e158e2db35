"""Hydrostatics and intact stability of a closed hull, by the pressure integration of the dynamics.

Everything here integrates the still-water pressure −ρ g z over the wetted part of the hull in a
pose (:mod:`.pressure`), the same expression the non-linear hydrostatics of
:class:`~jaxmbd.hydro.HydroBody` evaluate at every step; so a GZ curve and a time-domain run agree
by construction.

* :func:`hydrostatics`: displaced volume, centre of buoyancy, waterplane area and the transverse
  and longitudinal metacentric heights of a hull floating at its draught (the waterline z = 0).
* :func:`float_hull`: the heave (and trim) of a hull of given mass and centre of gravity at a
  given heel, where weight and buoyancy balance.
* :func:`righting_arm`: the GZ curve over heel with free trim, its maximum, the angle of deck-edge
  immersion and the angle of vanishing stability.

Heel φ is a rotation about the x axis (roll: positive lowers the starboard side, −y), trim θ
about y (pitch, positive bow down), both about the centre of gravity G; the righting arm is
GZ = −M_x(G) / (m g), positive when the moment returns the hull upright.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from .hull import HullMesh, posed_corners
from .pressure import buoyancy, clip_below, panel_geometry


@eqx.filter_jit
def still_water_loads(hull: HullMesh, R, p, about, rho: float = 1025.0, g: float = 9.81):
    """Force (3,) [N] and moment about ``about`` (3,) [N m] of the still water (waterline z = 0) on
    ``hull`` placed at rotation ``R`` and translation ``p`` (world = p + R x)."""
    return buoyancy(posed_corners(hull, R, p), about, rho * g)


def _rotation(heel, trim, axis):
    """Heel about the axis (x for ``"roll"``, y for ``"pitch"``), then trim about the other one."""
    ex, ey = jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0])
    if axis == "roll":
        return spatial.axis_angle_to_matrix(ex, heel) @ spatial.axis_angle_to_matrix(ey, trim)
    return spatial.axis_angle_to_matrix(ey, heel) @ spatial.axis_angle_to_matrix(ex, trim)


@dataclasses.dataclass(frozen=True)
class Hydrostatics:
    """A hull's hydrostatics at its draught (waterline z = 0), SI units.

    ``volume`` [m³], ``centre_of_buoyancy`` (3,) [m], ``waterplane_area`` [m²], ``bm_t``, ``bm_l`` [m]
    (I_wp / V about the centre of flotation's axes), and, given the centre of gravity's height,
    ``gm_t``, ``gm_l`` [m] = z_B + BM − z_G."""

    volume: float
    centre_of_buoyancy: np.ndarray
    waterplane_area: float
    bm_t: float
    bm_l: float
    gm_t: float | None
    gm_l: float | None


def displaced_volume(hull: HullMesh, R=None, p=None):
    """Volume [m³] and centre of buoyancy (3,) [m] of the part of ``hull`` (placed at ``R``, ``p``)
    below z = 0, exactly, by the divergence theorem over its wetted panels (the waterplane, at z = 0,
    adds nothing): V = ∮ z n_z dA, V x_B = ∮ x²/2 n_x dA, and so on; the integrands are quadratic
    and the edges' midpoint rule is exact for them."""
    R = jnp.eye(3) if R is None else jnp.asarray(R)
    p = jnp.zeros(3) if p is None else jnp.asarray(p)
    V, first = _volume_integrals(hull, R, p)
    return float(V), np.asarray(first / V)


@eqx.filter_jit
def _volume_integrals(hull, R, p):
    corners = posed_corners(hull, R, p)
    n_hat, area = panel_geometry(corners)
    V = 0.0
    first = jnp.zeros(3, dtype=corners.dtype)
    for P, fraction in clip_below(corners, corners[2]):
        A = fraction * area
        mids = [0.5 * (P[i] + P[(i + 1) % 3]) for i in range(3)]  # the edges' midpoints: exact for quadratics

        def integral(f):  # ∫ f dA over each panel's wetted part (n,)
            return A * (f(mids[0]) + f(mids[1]) + f(mids[2])) / 3.0

        V = V + jnp.sum(integral(lambda m: m[2]) * n_hat[2])
        first = first + jnp.stack([jnp.sum(integral(lambda m, i=i: 0.5 * m[i] ** 2) * n_hat[i]) for i in range(3)])
    return V, first


def hydrostatics(hull: HullMesh, cog_z: float | None = None, *, rho: float = 1025.0, g: float = 9.81,
                 step: float = 1e-4) -> Hydrostatics:
    """:class:`Hydrostatics` of ``hull`` as it lies (waterline z = 0): volume and centre of buoyancy
    exactly (:func:`displaced_volume`); the waterplane's area and centre of flotation from the
    pressure integration's heave stiffness, and BM = I_wp / V from its restoring moment under a
    rotation about the centre of flotation (ρ g (I_wp + V z_B) per radian), both by central
    differences over ±``step`` (m, rad), whose relative error is of order step² (nil for a
    wall-sided hull in heave)."""
    V, B = displaced_volume(hull)
    eye, zero = jnp.eye(3), jnp.zeros(3)
    up = still_water_loads(hull, eye, jnp.array([0.0, 0.0, step]), zero, rho, g)
    down = still_water_loads(hull, eye, jnp.array([0.0, 0.0, -step]), zero, rho, g)
    dF = float(down[0][2] - up[0][2])
    awp = dF / (2 * step * rho * g)
    xf = -float(down[1][1] - up[1][1]) / dF  # M = r × F: M_x = y F_z, M_y = −x F_z
    yf = float(down[1][0] - up[1][0]) / dF
    flotation = jnp.array([xf, yf, 0.0])

    def bm(axis):
        M = []
        for s in (1.0, -1.0):
            R = _rotation(s * step, 0.0, "roll" if axis == 0 else "pitch")
            M.append(float(still_water_loads(hull, R, flotation - R @ flotation, flotation, rho, g)[1][axis]))
        return -(M[0] - M[1]) / (2 * step) / (rho * g * V) - B[2]

    bm_t, bm_l = bm(0), bm(1)
    gm_t = None if cog_z is None else B[2] + bm_t - cog_z
    gm_l = None if cog_z is None else B[2] + bm_l - cog_z
    return Hydrostatics(V, B, awp, bm_t, bm_l, gm_t, gm_l)


def _residual(hull, mass, cog, rho, g, axis):
    G = jnp.asarray(cog)

    def res(x, heel):
        heave, trim = x
        R = _rotation(heel, trim, axis)
        F, M = still_water_loads(hull, R, G - R @ G + jnp.array([0.0, 0.0, heave]), G + jnp.array([0.0, 0.0, heave]), rho, g)
        k = 1 if axis == "roll" else 0
        scale = mass * g
        return jnp.stack([(F[2] - scale) / scale, M[k] / (scale * hull_size(hull))]), M

    return res


def hull_size(hull: HullMesh):
    """The hull's largest extent along the axes [m]."""
    V = jnp.asarray(hull.vertices)
    return jnp.max(jnp.max(V, axis=0) - jnp.min(V, axis=0))


def float_hull(hull: HullMesh, mass: float, cog, heel=0.0, *, axis: str = "roll", free_trim: bool = True,
               rho: float = 1025.0, g: float = 9.81, iterations: int = 40):
    """(heave, trim) [m, rad] of a hull of ``mass`` [kg] with centre of gravity ``cog`` (3,) [m] at
    heel ``heel`` [rad] about ``axis`` (``"roll"``: x; ``"pitch"``: y, trim then about x), where its
    weight and buoyancy balance: heave moves G vertically from ``cog``; trim (``free_trim``) turns
    the hull about the other axis until the moment about it vanishes.  Newton iterations on both."""
    X, _, _ = _curve(hull, jnp.asarray(float(mass)), jnp.asarray(cog, float), jnp.array([float(heel)]), axis=axis, free_trim=free_trim,
                     rho=float(rho), g=float(g), iterations=int(iterations))
    return float(X[0, 0]), float(X[0, 1])


def _newton(res, x0, heel, free_trim, iterations, tol=1e-13):
    """Newton iterations on the (heave, trim) residual from ``x0``, until the step is below ``tol``
    (relative: heave over the hull's size, trim in rad) or after ``iterations``."""
    mask = jnp.array([1.0, 1.0 if free_trim else 0.0])

    def step(x):
        r = res(x, heel)[0] * mask
        J = jax.jacfwd(lambda y: res(y, heel)[0])(x)
        J = J * mask[:, None] * mask[None, :] + jnp.diag(1.0 - mask)
        dx = jnp.linalg.solve(J, r)
        # a step no longer than 0.2 (m in heave, rad in trim) keeps the first iterations from leaving the
        # hull dry or sunk
        return dx * jnp.minimum(1.0, 0.2 / (jnp.max(jnp.abs(dx)) + 1e-30))

    def body(carry):
        x, _, k = carry
        dx = step(x)
        return x - dx, jnp.max(jnp.abs(dx)), k + 1

    x, _, _ = jax.lax.while_loop(lambda c: (c[1] > tol) & (c[2] < iterations), body,
                                 (x0, jnp.asarray(jnp.inf, dtype=x0.dtype), jnp.asarray(0)))
    return x


@dataclasses.dataclass(frozen=True)
class StabilityCurve:
    """A GZ curve: ``heel_deg`` (n,), ``gz`` (n,) [m], ``heave`` (n,) [m] of G from its upright
    position, ``trim_deg`` (n,) and ``residual`` (n,) (relative force and moment imbalance left by the
    solver); ``gm`` [m] (the curve's slope at zero heel, per rad), ``max_gz`` [m] (the weaker side's
    largest righting arm) at ``angle_of_max_gz_deg``, ``deck_edge_immersion_deg`` and
    ``vanishing_stability_deg`` (signed; None when not reached in the range), ``mass`` [kg], ``cog``
    (3,) [m] and ``equilibrium_heel_deg`` (the static list, None if none in the range)."""

    heel_deg: np.ndarray
    gz: np.ndarray
    heave: np.ndarray
    trim_deg: np.ndarray
    residual: np.ndarray
    gm: float
    max_gz: float
    angle_of_max_gz_deg: float
    deck_edge_immersion_deg: float | None
    vanishing_stability_deg: float | None
    mass: float
    cog: np.ndarray
    axis: str = "roll"
    equilibrium_heel_deg: float | None = None
    other_floating_deg: np.ndarray | None = None
    """(n,) where the solve failed: NaN where the moment about the free axis has a zero within 20 deg of the
    last floating position found (the solve failed near one), else the free angle [deg] of the nearest
    floating position left (inf: none at any angle): the position followed from upright is gone and the
    hull capsizes about the free axis there."""

    def unconverged(self) -> str:
        """'' when every point's floating solve converged (relative imbalance under :data:`RESIDUAL`), else
        one line naming the angles where no equilibrium exists and those where the solve did not converge;
        the curve (GZ, heave, trim) is NaN at both."""
        bad = np.asarray(self.residual) > RESIDUAL
        if not bad.any():
            return ""
        free = "trim" if self.axis == "roll" else "heel"
        other = "y" if self.axis == "roll" else "x"
        away = np.asarray(self.other_floating_deg, float) if self.other_floating_deg is not None else np.full(bad.shape, np.nan)
        gone = bad & ~np.isnan(away)
        failed = bad & ~gone
        heel = np.asarray(self.heel_deg)
        parts = []
        if gone.any():
            left = away[gone][np.isfinite(away[gone])]
            where = (f"the only floating positions left have the {free} at {np.min(left):.0f} to {np.max(left):.0f} deg"
                     if left.size else f"none is left at any {free} from -89 to 89 deg")
            parts.append(f"at {_ranges(heel[gone])} deg the floating position followed from upright is gone (no {free} within "
                         f"20 deg of it balances the moment about {other}: the hull capsizes about {other} there; {where})")
        if failed.any():
            parts.append(f"the floating solve (heave and free {free}) did not converge at {_ranges(heel[failed])} deg "
                         f"(largest relative imbalance {float(np.max(np.asarray(self.residual)[failed])):.2g})")
        return "; ".join(parts) + f": the curve is left out (NaN) at {int(bad.sum())} of {bad.size} angles"

    def table(self) -> str:
        """The curve as text: one line per heel, then the summary, units in the header."""
        lines = [f"# GZ curve ({self.axis}), mass {self.mass:.6g} kg, G at {np.round(self.cog, 4).tolist()} m",
                 f"# GM {self.gm:.4f} m; static list {_deg(self.equilibrium_heel_deg)}; max righting arm {self.max_gz:.4f} m at "
                 f"{self.angle_of_max_gz_deg:.2f} deg; "
                 f"deck-edge immersion {_deg(self.deck_edge_immersion_deg)}; vanishing stability {_deg(self.vanishing_stability_deg)}",
                 f"#{'heel_deg':>9} {'GZ_m':>10} {'heave_m':>10} {'trim_deg':>10} {'residual':>10}"]
        if self.unconverged():
            lines.insert(2, f"# WARNING: {self.unconverged()}")
        for *row, residual in zip(self.heel_deg, self.gz, self.heave, self.trim_deg, self.residual):
            lines.append("".join(f"{x:>11.5f}" for x in row) + f"{residual:>11.1e}")
        return "\n".join(lines) + "\n"


def _deg(x):
    return "not reached" if x is None else f"{x:.2f} deg"


RESIDUAL = 1e-6
"""The relative force and moment imbalance above which a GZ point's floating solve is reported unconverged."""


def _ranges(values) -> str:
    """``[-39, -38, -37, 5]`` -> ``"-39 to -37, 5"``: the runs of a curve's evenly spaced angles."""
    v = np.sort(np.asarray(values, float))
    step = np.min(np.diff(v)) if v.size > 1 else 0.0
    runs, start = [], v[0]
    for a, b in zip(v[:-1], v[1:]):
        if b - a > 1.5 * step:
            runs.append((start, a))
            start = b
    runs.append((start, v[-1]))
    return ", ".join(f"{a:g}" if a == b else f"{a:g} to {b:g}" for a, b in runs)


_Y_TO_X = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
"""The turn about z by −90°: a vector's y becomes its x (and its x, −y)."""


def righting_arm(hull: HullMesh, mass: float, cog, heel_deg=None, *, axis: str = "roll", free_trim: bool = True,
                 rho: float = 1025.0, g: float = 9.81, iterations: int = 40, explain: bool = True) -> StabilityCurve:
    """The GZ curve of ``hull`` with ``mass`` [kg] and centre of gravity ``cog`` [m] (hydrodynamic
    frame, waterline z = 0) at the heels ``heel_deg`` (default 0..90° by 1°, and 0..−90° too when G is
    off the plane of symmetry of that axis), each in equilibrium of weight and buoyancy
    (:func:`float_hull`; trim free unless ``free_trim=False``).

    GZ = −M(G) / (m g) about the heel's axis, continuous through upright: positive when the moment
    turns the hull back from a positive heel, negative from a negative one (on a side's own terms, the
    righting arm is GZ there times the side's sign).  Each side is followed outwards from upright.  The
    summary values are those of the weaker side (the smaller angle of vanishing stability, signed) and
    ``equilibrium_heel_deg``, where GZ crosses zero upwards nearest upright (the list of a hull whose G is
    off its centreplane).  ``explain=False`` leaves out the deck-edge immersion and the reasons where the
    floating solve failed (``deck_edge_immersion_deg`` and ``other_floating_deg`` None: not computed), for
    a check that reads the curve and its angle of vanishing stability only."""
    cog = np.asarray(cog, float)
    if axis == "pitch":
        # the pitch curve is the roll curve of the hull turned so that its y axis lies along x (trim, the free
        # angle, then turns about −x): one compiled program for both curves of a hull
        turned = HullMesh(np.asarray(hull.vertices, float) @ _Y_TO_X.T, hull.triangles, hull.source)
        c = righting_arm(turned, mass, _Y_TO_X @ cog, heel_deg, axis="roll", free_trim=free_trim, rho=rho, g=g,
                         iterations=iterations, explain=explain)
        # the free angle turns sign; inf (no floating position at any angle) stays inf
        away = None if c.other_floating_deg is None else np.where(np.isinf(c.other_floating_deg), np.inf, -c.other_floating_deg)
        return dataclasses.replace(c, trim_deg=-c.trim_deg, cog=cog, axis="pitch", other_floating_deg=away)
    if heel_deg is None:
        off = abs(cog[1]) > 1e-9 * float(hull_size(hull))
        heel_deg = np.arange(-90.0 if off else 0.0, 90.5, 1.0)
    heels = np.radians(np.asarray(heel_deg, float))
    options = dict(axis=axis, free_trim=free_trim, rho=float(rho), g=float(g), iterations=int(iterations))
    a = 1e-4  # GM: the curve's slope at zero by central differences at ±a first (error of order a²)
    # each side from upright outwards, both in one batched scan (padded to a common length by
    # repeating their last heel)
    wanted = [(sign, np.sort(sign * heels[sign * heels >= (0.0 if sign > 0 else 1e-12)]) * sign) for sign in (1.0, -1.0)]
    wanted = [(sign, side) for sign, side in wanted if len(side)]
    k = max(len(side) for _, side in wanted)
    batch = np.stack([np.concatenate([[a, -a], side, np.full(k - len(side), side[-1])]) for _, side in wanted])
    out = [np.array(v) for v in _curves(hull, jnp.asarray(float(mass)), jnp.asarray(cog), jnp.asarray(batch), **options)]
    gm = float(out[2][0, 0] - out[2][0, 1]) / (2 * a)
    sides = [(sign, side, out[0][j, 2 : 2 + len(side)], out[1][j, 2 : 2 + len(side)], out[2][j, 2 : 2 + len(side)])
             for j, (sign, side) in enumerate(wanted)]
    for sign, side, X, residual, gz in sides:  # no floating position found: left out, not a number that looks like one
        X[residual > RESIDUAL] = np.nan
        gz[residual > RESIDUAL] = np.nan
    summary = []
    for sign, side, _, _, gz in sides:
        righting = sign * gz
        end = np.flatnonzero(~np.isfinite(righting))  # the summary follows the floating position from upright
        end = end[0] if end.size else righting.size
        righting, side = righting[: max(end, 1)], side[: max(end, 1)]
        i = int(np.nanargmax(righting)) if np.isfinite(righting).any() else 0
        summary.append((_vanishing(np.abs(side), righting, sign), float(righting[i]), float(np.degrees(side[i]))))
    weak = min(summary, key=lambda t: abs(t[0]) if t[0] is not None else np.inf)
    order = np.argsort(np.concatenate([s[1] for s in sides]))
    heel, X, residual, gz = (np.concatenate([s[k] for s in sides])[order] for k in (1, 2, 3, 4))
    deck = _deck_edge_immersion(hull, cog, heel, X, axis) if explain else None
    away = _other_floating(hull, mass, cog, heel, X, residual > RESIDUAL, axis, rho, g) if explain else None
    return StabilityCurve(np.degrees(heel), gz, X[:, 0], np.degrees(X[:, 1]), residual, gm, weak[1], weak[2], deck, weak[0],
                          float(mass), cog, axis, _equilibrium(heel, gz), away)


def _other_floating(hull, mass, cog, heel, X, bad, axis, rho, g):
    """Where the solve failed (``bad``), why: the moment about the free axis over every free angle (1 deg
    apart, the heave floating the hull at each); its zeros are the floating positions at that heel.  NaN
    where one lies within 20 deg of the last converged free angle of the curve's side, else the nearest
    zero [deg] (inf: none)."""
    away = np.full(heel.shape, np.nan)
    if not bad.any():
        return away
    trims = np.arange(-89.0, 90.0, 1.0)
    moments = np.asarray(_free_moments(hull, jnp.asarray(float(mass)), jnp.asarray(cog), jnp.asarray(heel[bad]),
                                       jnp.radians(jnp.asarray(trims)), axis=axis, rho=float(rho), g=float(g)))
    for k, row in zip(np.flatnonzero(bad), moments):
        side = np.sign(heel) == np.sign(heel[k])
        good = np.flatnonzero(side & ~bad & (np.abs(heel) < abs(heel[k])))
        last = np.degrees(X[good[np.argmax(np.abs(heel[good]))], 1]) if good.size else 0.0
        roots = trims[:-1][np.sign(row[:-1]) != np.sign(row[1:])] + 0.5
        if roots.size and np.min(np.abs(roots - last)) <= 20.0:
            continue  # a floating position near the curve's: the solve failed, the position is there
        away[k] = roots[np.argmin(np.abs(roots - last))] if roots.size else np.inf
    return away


@eqx.filter_jit
def _free_moments(hull, mass, cog, heels, trims, *, axis, rho, g):
    """(n, m) moment residuals about the free axis at each heel and each trim of a grid, with the heave that
    floats the hull there (Newton on the force alone, which the heave moves monotonically): where one heel's
    row keeps one sign, no trim balances it."""
    res = _residual(hull, mass, cog, rho, g, axis)
    size = hull_size(hull)

    def at(heel, trim):
        def newton(h, _):
            r, dr = jax.jvp(lambda hh: res(jnp.stack([hh, trim]), heel)[0][0], (h,), (jnp.ones_like(h),))
            dr = jnp.where(jnp.abs(dr) > 1e-12, dr, -1e-12)  # dry or sunk: no waterplane to move
            return h - jnp.clip(r / dr, -0.05 * size, 0.05 * size), None

        h = jax.lax.scan(newton, jnp.zeros((), cog.dtype), None, length=80)[0]
        return res(jnp.stack([h, trim]), heel)[0][1]

    return jax.vmap(lambda heel: jax.vmap(lambda trim: at(heel, trim))(trims))(heels)


def _equilibrium(heel, gz):
    """The heel [deg] nearest upright where GZ crosses zero upwards (a stable list), or None."""
    up = [j for j in range(len(heel) - 1) if gz[j] <= 0 < gz[j + 1] or gz[j] < 0 <= gz[j + 1]]
    if not up:
        return None
    x = [heel[j] - gz[j] * (heel[j + 1] - heel[j]) / (gz[j + 1] - gz[j]) for j in up]
    return float(np.degrees(min(x, key=abs)))


@eqx.filter_jit
def _curves(hull, mass, cog, heels, *, axis, free_trim, rho, g, iterations):
    """:func:`_curve` for a batch of heel sequences (n, k)."""
    return jax.vmap(lambda h: _curve(hull, mass, cog, h, axis=axis, free_trim=free_trim, rho=rho, g=g, iterations=iterations))(heels)


@eqx.filter_jit
def _curve(hull, mass, cog, heels, *, axis, free_trim, rho, g, iterations):
    """(heave, trim) (n, 2), residual (n,) and GZ (n,) at the heels, by continuation: each heel's Newton
    iterations start from the previous one's equilibrium."""
    res = _residual(hull, mass, cog, rho, g, axis)
    k = 0 if axis == "roll" else 1
    mask = jnp.array([1.0, 1.0 if free_trim else 0.0])

    def one(x, heel):
        x = _newton(res, x, heel, free_trim, iterations)
        r, M = res(x, heel)
        return x, (x, jnp.max(jnp.abs(r * mask)), -M[k] / (mass * g))

    return jax.lax.scan(one, jnp.zeros(2, dtype=cog.dtype), heels)[1]


def _deck_edge_immersion(hull, cog, heels, X, axis):
    """The smallest |heel| at which the lowest corner of the deck (the hull's top) reaches the still
    waterline, signed, interpolated between the curve's heels; None if it stays dry."""
    deck = np.asarray(hull.vertices)[hull.deck_vertices()]
    G = np.asarray(cog, float)
    heave, trim = np.asarray(X, float).T
    first, second = (np.cos(heels), np.sin(heels)), (np.cos(trim), np.sin(trim))
    if axis != "roll":
        first, second = second, first
    (cx, sx), (cy, sy) = first, second  # about x, about y: R = Rx Ry (roll) or Ry Rx (pitch), as _rotation
    # the third row of R (the heights), for all the heels at once
    rx = np.stack([np.zeros_like(cx), sx, cx], axis=-1)  # Rx's third row
    ry = np.stack([-sy, np.zeros_like(cy), cy], axis=-1)  # Ry's third row
    if axis == "roll":  # (Rx Ry)[2] = Rx[2] Ry
        z_row = np.stack([rx[:, 0] * cy - rx[:, 2] * sy, rx[:, 1], rx[:, 0] * sy + rx[:, 2] * cy], axis=-1)
    else:  # (Ry Rx)[2] = Ry[2] Rx
        z_row = np.stack([ry[:, 0], ry[:, 1] * cx + ry[:, 2] * sx, -ry[:, 1] * sx + ry[:, 2] * cx], axis=-1)
    lowest = G[2] + np.min((deck - G) @ z_row.T, axis=0) + heave
    found = []
    for sign in (1.0, -1.0):
        on = sign * heels >= 0
        order = np.argsort(sign * heels[on])
        x = _first_crossing(np.abs(heels[on][order]), lowest[on][order])
        if x is not None:
            found.append(sign * x)
    return min(found, key=abs) if found else None


def _vanishing(heels, gz, sign=1.0):
    """The first |heel| beyond the curve's maximum where GZ falls through zero, with ``sign``; None if it
    does not (``heels`` ascending from upright)."""
    if not np.isfinite(gz).any():
        return None
    i = int(np.nanargmax(gz))
    if gz[i] <= 0:
        return 0.0
    x = _first_crossing(heels[i:], gz[i:])
    return None if x is None else sign * x


def _first_crossing(x, y):
    below = np.nonzero(y <= 0)[0]
    if len(below) == 0:
        return None
    j = int(below[0])
    if j == 0 or not np.isfinite(y[j - 1]):  # at the first point, or after a stretch left out: no interpolation
        return float(np.degrees(x[j]))
    t = y[j - 1] / (y[j - 1] - y[j])
    return float(np.degrees(x[j - 1] + t * (x[j] - x[j - 1])))


def wall_sided_gz(heel, gm, bm):
    """GZ = sin φ (GM + ½ BM tan² φ) [m] of a wall-sided hull, valid until the deck edge immerses or
    the bilge emerges (both sides wall-sided at the waterline)."""
    return np.sin(heel) * (gm + 0.5 * bm * np.tan(heel) ** 2)


__all__ = ["Hydrostatics", "StabilityCurve", "displaced_volume", "float_hull", "hydrostatics", "righting_arm",
           "still_water_loads", "wall_sided_gz", "hull_size"]
