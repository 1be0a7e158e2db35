"""Mean wave drift by momentum conservation on a control surface round each body (the "middle field").

The mean horizontal force and yaw moment on a body equal the mean flux of momentum through any fixed surface
that encloses it and no other body, in second order of the wave amplitude.  Here that surface is a vertical
circular cylinder of radius R round the body, from the seabed (or deep enough for the waves to have died away)
to the free surface, with outward normal n (away from the body); with U the complex velocity and η the complex
elevation of the total first-order field (incident, diffracted, and radiated by every body on its RAOs), per
unit wave amplitude:

    F_i = − ∮ ρ g/4 |η|² n_i dl − ∬ ρ/2 [ Re(U_i conj(U·n)) − ½ |U|² n_i ] dS
    M_z = − ∬ ρ/2 Re((r × U)_z conj(U·n)) dS                (r from the circle's centre; (r × n)_z = 0 on it)

The first term is the pressure between the mean and the instantaneous free surface on the cylinder, the second
Bernoulli's quadratic pressure and the flux of momentum.  Unlike the far-field (Maruo) formula it needs no
asymptotic wave field: a surface round each body gives each body's own drift among several; unlike integrating
the pressure over the hull it needs no velocities at the hull's panels (singular at its corners and edges).  The
fields come from Capytaine's source distributions (``compute_velocity``, ``compute_free_surface_elevation``),
the sources of a body's diffraction and radiation combined with its RAOs into one field.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..errors import InputError

_GAUSS = 24  # Gauss-Legendre points per depth interval
_CHUNK = 1500  # field points per Capytaine influence matrix (3 x points x panels complex numbers)


def symmetric_radiation(ds):
    """A Capytaine dataset with the symmetric part of its added mass and radiation damping, as jaxmbd's own
    solutions take them (:func:`~jaxmbd.hydro.coefficients.symmetric_part`), for the RAOs the drift rides on."""
    out = ds.copy()
    for name in ("added_mass", "radiation_damping"):
        a = ds[name]
        out[name] = 0.5 * (a + a.rename(radiating_dof="influenced_dof", influenced_dof="radiating_dof").transpose(*a.dims))
    return out


def reference_point(part):
    """(x, y) of a body's rotation centre, or of its centre of mass where its DOFs name none (the yaw's reference)."""
    rc = np.asarray(part.rotation_center, float) if isinstance(part.rotation_center, np.ndarray) else np.full(3, np.nan)
    if np.any(np.isnan(rc)):
        rc = np.asarray(part.center_of_mass if part.center_of_mass is not None else np.nan, float) * np.ones(3)
    if np.any(np.isnan(rc[:2])):
        raise InputError(f"capytaine_drift: body '{part.name}' has neither a rotation centre in its DOFs nor a centre of mass; "
                         "expected one of them (the yaw moment's reference)")
    return rc[:2]


def body_circle(part, others, radius=None):
    """Centre (x, y) and radius of the control cylinder of one body: centred on its rotation centre (its centre of
    mass without one), of radius ``radius`` or its farthest panel vertex's horizontal distance plus a quarter of
    it or its draught, whichever is more.  The cylinder keeps clear of the body's panels by a tenth of its
    draught or a twentieth of its reach, whichever is more (the field beside a panel's edges is singular), and no
    other body comes within that margin of it."""
    v = np.asarray(part.mesh.vertices, float)
    centre = reference_point(part)
    reach = float(np.max(np.hypot(*(v[:, :2] - centre).T)))
    draught = float(-np.min(v[:, 2]))
    margin = max(0.1 * draught, 0.05 * reach)
    r = max(1.25 * reach, reach + draught) if radius is None else float(radius)
    if not r >= reach + margin:
        raise InputError(f"capytaine_drift: control_radius {r:g} m cuts body '{part.name}' or passes within {margin:.3g} m of it "
                         f"(its panels reach {reach:.3g} m from its centre); expected at least {reach + margin:.3g} m")
    for o in others:
        near = float(np.min(np.hypot(*(np.asarray(o.mesh.vertices, float)[:, :2] - centre).T)))
        if near <= r + margin:
            raise InputError(f"capytaine_drift: body '{o.name}' reaches {near:.3g} m from body '{part.name}', within {margin:.3g} m of "
                             f"its control surface of radius {r:.3g} m; expected the bodies farther apart or a smaller control_radius")
    return centre, r, draught


def depth_rule(k, water_depth, draught, radius):
    """Nodes and weights in z over the cylinder's depth: Gauss-Legendre on [−2 d, 0] (d the body's draught) and on
    [−2 d − 2 R, −2 d] (the body's local, non-wave disturbance dies away over depths of the order of the distance R),
    then on to the seabed, or in deep water in s = e^{kz} down to where e^{2kz} < 1e-14 (the propagating waves'
    energy falls as e^{2kz}; in s the integrand is smooth), where that is deeper still."""
    x, w = np.polynomial.legendre.leggauss(_GAUSS)
    edges = [0.0, min(2.0 * draught, water_depth), min(2.0 * draught + 2.0 * radius, water_depth)]
    if math.isfinite(water_depth):
        edges.append(water_depth)
    z, wz = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            z.append(-a - (b - a) * (x + 1) / 2)
            wz.append(w * (b - a) / 2)
    if not math.isfinite(water_depth):
        s_top, s_end = math.exp(-k * edges[-1]), 1e-7
        if s_top > s_end:
            s = s_end + (s_top - s_end) * (x + 1) / 2
            z.append(np.log(s) / k)
            wz.append(w * (s_top - s_end) / 2 / (k * s))
    return np.concatenate(z), np.concatenate(wz)


def total_field(solver, diffraction, radiation, rao):
    """The diffraction result with the sources of the total scattered field: its own plus each radiation result's
    times the body's motion per unit wave amplitude (Capytaine's radiation is for a unit displacement)."""
    r = copy.copy(diffraction)
    r.sources = diffraction.sources + sum(x * rad.sources for x, rad in zip(rao, radiation))
    r.potential = None
    return r


def _velocity(solver, points, field, problem):
    from capytaine.bem.airy_waves import airy_waves_velocity

    out = [solver.compute_velocity(points[i:i + _CHUNK], field) for i in range(0, len(points), _CHUNK)]
    return np.concatenate(out) + airy_waves_velocity(points, problem)


def _elevation(solver, points, field, problem):
    from capytaine.bem.airy_waves import airy_waves_free_surface_elevation

    out = [solver.compute_free_surface_elevation(points[i:i + _CHUNK], field) for i in range(0, len(points), _CHUNK)]
    return np.concatenate(out) + airy_waves_free_surface_elevation(points, problem)


def drift_on_circle(solver, field, problem, centre, radius, draught, rho, g):
    """Surge, sway and yaw (about ``centre``) mean drift per squared wave amplitude through the circle."""
    k = float(problem.wavenumber)
    n_theta = 4 * math.ceil(k * radius) + 64  # the product of two fields varies as e^{±2ikR cos θ} round it
    th = 2 * np.pi * np.arange(n_theta) / n_theta
    nrm = np.stack([np.cos(th), np.sin(th), np.zeros_like(th)], 1)
    dl = 2 * np.pi * radius / n_theta
    z, wz = depth_rule(k, problem.water_depth, draught, radius)
    rim = np.column_stack([centre[0] + radius * nrm[:, 0], centre[1] + radius * nrm[:, 1]])
    eta = _elevation(solver, rim, field, problem)
    pts = np.concatenate([np.column_stack([rim, np.full(n_theta, zj)]) for zj in z])
    u = _velocity(solver, pts, field, problem).reshape(len(z), n_theta, 3)
    un = np.einsum("zti,ti->zt", u, nrm)
    sq = np.sum(np.abs(u) ** 2, axis=-1)
    flux = 0.5 * rho * (np.real(u * np.conj(un)[..., None]) - 0.5 * sq[..., None] * nrm[None])  # (z, θ, 3)
    area = wz[:, None] * dl
    force = -np.sum(rho * g / 4 * np.abs(eta)[:, None] ** 2 * nrm * dl, axis=0) - np.einsum("zt,zti->i", area, flux)
    arm = radius * nrm[:, :2]
    swirl = arm[:, 0] * u[..., 1] - arm[:, 1] * u[..., 0]
    yaw = -np.sum(area * 0.5 * rho * np.real(swirl * np.conj(un)))
    return np.array([force[0], force[1], yaw])


def control_surface_drift(body, parts, omegas, directions, rho, g, water_depth, radius, fixed, stiffness_ext, damping_ext):
    """(bodies, frequencies, headings, 3) mean drift of each of ``parts`` through its own control cylinder, every
    body on the RAOs of the whole group (or held, ``fixed``)."""
    import capytaine as cpt

    solver = cpt.BEMSolver()
    env = dict(rho=rho, g=g, water_depth=water_depth)
    circles = [body_circle(p, [o for o in parts if o is not p], radius) for p in parts]
    dofs = list(body.dofs)
    rad = [[cpt.RadiationProblem(body=body, omega=w, radiating_dof=d, **env) for d in dofs] for w in omegas]
    dif = [[cpt.DiffractionProblem(body=body, omega=w, wave_direction=b, **env) for b in directions] for w in omegas]
    rad_r = [[solver.solve(p, keep_details=True) for p in row] for row in rad]
    dif_r = [[solver.solve(p, keep_details=True) for p in row] for row in dif]
    if fixed:
        motion = np.zeros((len(omegas), len(directions), len(dofs)), complex)
    else:
        ds = cpt.assemble_dataset([r for row in rad_r + dif_r for r in row], hydrostatics=True)
        kw = {k: body.add_dofs_labels_to_matrix(np.asarray(v)) for k, v in (("stiffness", stiffness_ext), ("dissipation", damping_ext))
              if v is not None}
        x = cpt.post_pro.rao(symmetric_radiation(ds), **kw).transpose("omega", "wave_direction", "radiating_dof")
        motion = x.sel(omega=list(omegas), wave_direction=list(directions), radiating_dof=dofs).values
    out = np.zeros((len(parts), len(omegas), len(directions), 3))
    for i in range(len(omegas)):
        for j in range(len(directions)):
            field = total_field(solver, dif_r[i][j], rad_r[i], motion[i, j])
            for b, (centre, r, draught) in enumerate(circles):
                out[b, i, j] = drift_on_circle(solver, field, dif[i][j], centre, r, draught, rho, g)
    return out
