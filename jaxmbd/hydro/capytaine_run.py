"""New hulls through Capytaine: :func:`box` and :func:`cylinder` meshes, :func:`run_capytaine` (cached by
its inputs), and the packaged test barge."""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from pathlib import Path

import numpy as np

from ..errors import InputError
from .capytaine_file import read_capytaine
from .coefficients import _TWO_PI, HydroData


# --------------------------------------------------------------------------- Capytaine runs
def box(length, beam, draught, *, panel_size=None, center=(0.0, 0.0), center_of_mass=None,
        rotation_center=None, name="box", lid=True):
    """A floating rectangular barge (Capytaine FloatingBody), rigid-body DOFs.

    Wetted surface only (bottom and four sides, z from −draught to 0), panels
    of about ``panel_size`` m (default: min(length, beam)/10 and at most
    draught/2), and an internal lid at z = −0.01·draught that removes the
    irregular frequencies. Rotations about ``rotation_center`` (default: the
    centre of mass, default (x, y, 0) on the waterline).
    """
    import capytaine as cpt

    if panel_size is None:
        panel_size = min(min(length, beam) / 10.0, draught / 2.0)
    res = (
        max(2, int(math.ceil(length / panel_size))),
        max(2, int(math.ceil(beam / panel_size))),
        max(1, int(math.ceil(draught / panel_size))),
    )
    mesh = cpt.mesh_parallelepiped(
        size=(length, beam, draught),
        center=(center[0], center[1], -draught / 2.0),
        resolution=res,
        missing_sides={"top"},
        name=f"{name}_mesh",
    )
    return _rigid_body(mesh, name, center_of_mass, rotation_center, lid, draught, panel_size,
                       default_cog=(center[0], center[1], 0.0))


def cylinder(radius, draught, *, panel_size=None, center=(0.0, 0.0), center_of_mass=None,
             rotation_center=None, name="cylinder", lid=True, n_around=None, growth=1.0):
    """A floating vertical circular cylinder (Capytaine FloatingBody), rigid-body DOFs.

    Wetted surface only (side and bottom disc), panels of about
    ``panel_size`` (default radius/4), optional internal lid. Rotations about
    ``rotation_center`` (default: centre of mass, default (x, y, 0)).  ``n_around``: panels round the
    circumference (default its length over ``panel_size``); ``growth`` > 1: the side's panels ``panel_size``
    tall at the waterline, each row below ``growth`` times the one above (fine where the waves are, coarse
    where they have died away).
    """
    import capytaine as cpt

    if panel_size is None:
        panel_size = radius / 4.0
    n_theta = n_around or max(8, int(math.ceil(_TWO_PI * radius / panel_size)))
    n_r = max(2, int(math.ceil(radius / panel_size)))
    n_z = max(2, int(math.ceil(draught / panel_size)))
    if growth != 1.0:
        if growth < 1.0:
            raise InputError(f"cylinder: growth is the ratio of successive panel rows downwards, expected >= 1, got {growth}")
        mesh = _graded_cylinder(radius, draught, center, panel_size, growth, n_theta, max(2, n_r // 2), name)
        return _rigid_body(mesh, name, center_of_mass, rotation_center, lid, draught, panel_size,
                           default_cog=(center[0], center[1], 0.0))
    # A closed cylinder twice as tall, clipped at z = 0: the wetted surface without a top disc.
    full = cpt.mesh_vertical_cylinder(
        length=2.0 * draught, radius=radius, center=(center[0], center[1], 0.0),
        resolution=(n_r, n_theta, 2 * n_z), name=f"{name}_mesh",
    )
    mesh = full.immersed_part()
    return _rigid_body(mesh, name, center_of_mass, rotation_center, lid, draught, panel_size,
                       default_cog=(center[0], center[1], 0.0))


def _graded_cylinder(radius, draught, center, top, growth, n_theta, n_r, name):
    """The wetted side and bottom of a vertical cylinder: ``n_theta`` panels round, rows ``top`` tall at the waterline
    growing by ``growth`` downwards, the bottom disc in ``n_r`` rings; normals outwards."""
    import capytaine as cpt

    z, h = [0.0], top
    while -z[-1] + h < draught - 0.25 * h:
        z.append(z[-1] - h)
        h *= growth
    z = np.append(z, -draught)
    th = np.linspace(0.0, _TWO_PI, n_theta + 1)[:-1]
    ring = np.stack([np.cos(th), np.sin(th)], axis=1)
    rows = [np.column_stack([center[0] + radius * ring[:, 0], center[1] + radius * ring[:, 1], np.full(n_theta, zi)]) for zi in z]
    rs = np.linspace(radius, 0.0, n_r + 1)[1:-1]
    rows += [np.column_stack([center[0] + r * ring[:, 0], center[1] + r * ring[:, 1], np.full(n_theta, -draught)]) for r in rs]
    vertices = np.concatenate(rows + [np.array([[center[0], center[1], -draught]])])
    j = np.arange(n_theta)
    faces = [np.stack([k * n_theta + j, (k + 1) * n_theta + j, (k + 1) * n_theta + (j + 1) % n_theta, k * n_theta + (j + 1) % n_theta], 1)
             for k in range(len(rows) - 1)]
    apex = len(vertices) - 1
    last = (len(rows) - 1) * n_theta
    faces.append(np.stack([last + j, np.full(n_theta, apex), last + (j + 1) % n_theta, last + (j + 1) % n_theta], 1))  # triangles
    return cpt.Mesh(vertices, np.concatenate(faces), name=f"{name}_mesh")


def _rigid_body(mesh, name, center_of_mass, rotation_center, lid, draught, panel_size, default_cog):
    import capytaine as cpt

    cog = np.asarray(default_cog if center_of_mass is None else center_of_mass, dtype=float)
    rc = cog if rotation_center is None else np.asarray(rotation_center, dtype=float)
    # Lid panels about as large as the hull's (the default sizing can return an empty lid).
    lid_mesh = mesh.generate_lid(z=-0.01 * draught, faces_max_radius=0.75 * panel_size) if lid else None
    return cpt.FloatingBody(
        mesh=mesh,
        lid_mesh=lid_mesh,
        dofs=cpt.rigid_body_dofs(rotation_center=rc),
        center_of_mass=cog,
        name=name,
    )


def _as_body(mesh, name, center_of_mass, rotation_center):
    """Capytaine mesh / FloatingBody / list of them -> (body, list of components)."""
    import capytaine as cpt

    if isinstance(mesh, (list, tuple)):
        parts = [_as_body(m, f"{name}_{i}", center_of_mass, rotation_center)[0] for i, m in enumerate(mesh)]
        return cpt.Multibody(parts, name=name), parts
    if isinstance(mesh, cpt.FloatingBody):
        body = mesh
        if not body.dofs:
            rc = rotation_center if rotation_center is not None else (
                body.center_of_mass if body.center_of_mass is not None else (0.0, 0.0, 0.0))
            body.dofs = dict(cpt.rigid_body_dofs(rotation_center=rc))
        if body.center_of_mass is None:
            body.center_of_mass = np.asarray(center_of_mass if center_of_mass is not None else (0.0, 0.0, 0.0), float)
        return body, [body]
    if isinstance(mesh, cpt.Multibody):
        return mesh, list(mesh.bodies)
    # A bare mesh: keep the immersed part, rigid-body DOFs.
    cog = np.asarray(center_of_mass if center_of_mass is not None else (0.0, 0.0, 0.0), float)
    rc = cog if rotation_center is None else np.asarray(rotation_center, float)
    body = cpt.FloatingBody(mesh=mesh, dofs=cpt.rigid_body_dofs(rotation_center=rc), center_of_mass=cog, name=name)
    return body.immersed_part(), [body]


def _inputs_hash(parts, omegas, directions, rho, g, water_depth, dofs):
    h = hashlib.sha256()
    for b in parts:
        m = b.mesh
        for attr in ("faces_centers", "faces_areas"):
            try:
                h.update(np.ascontiguousarray(np.asarray(getattr(m, attr), dtype=float)).tobytes())
            except Exception:  # meshes without these arrays: fall back on their repr
                h.update(repr(m).encode())
        h.update(str(b.name).encode())
        h.update(np.asarray(b.center_of_mass, float).tobytes())
        h.update(str(b.lid_mesh is not None and b.lid_mesh.nb_faces).encode())
        h.update(json.dumps(sorted(b.dofs)).encode())
        rc = np.asarray(getattr(b, "rotation_center", np.zeros(3)), float)
        h.update(np.nan_to_num(rc).tobytes())
    h.update(np.asarray(omegas, float).tobytes())
    h.update(np.asarray(directions, float).tobytes())
    h.update(json.dumps([float(rho), float(g), str(water_depth), str(dofs)]).encode())
    return h.hexdigest()


def run_capytaine(
    mesh,
    *,
    omegas,
    wave_directions,
    rho: float = 1025.0,
    g: float = 9.81,
    water_depth: float = math.inf,
    dofs: str = "rigid",
    cache=None,
    name: str = "body",
    center_of_mass=None,
    rotation_center=None,
    n_jobs: int = 1,
) -> HydroData:
    """Solve radiation and diffraction with Capytaine and return :class:`HydroData`.

    ``mesh``: a Capytaine mesh (its immersed part gets rigid-body DOFs about
    ``rotation_center``, default ``center_of_mass``, default the origin), a
    ``FloatingBody`` (e.g. from :func:`box` / :func:`cylinder`), a
    ``Multibody``, or a list of bodies solved together (coupling blocks
    included). ``omegas`` [rad/s] finite and > 0; A(∞) is solved in addition
    (Capytaine's omega = inf). ``wave_directions`` [rad]. Hydrostatics
    (stiffness about each body's rotation centre with its centre of mass,
    displaced volume, centre of buoyancy) from Capytaine's hydrostatics.

    ``cache``: a NetCDF path. If it exists and was written for the same inputs
    (a hash of mesh panels, DOFs, centre of mass, frequencies, headings, ρ, g,
    depth, stored in the file's attributes) it is read instead of solving;
    otherwise the result is written there in Capytaine's own NetCDF layout
    (``cpt.export_dataset``). The returned data equal ``read_capytaine(cache)``.
    """
    import capytaine as cpt
    import xarray as xr

    if dofs != "rigid":
        raise InputError("only dofs='rigid' (six rigid-body DOFs per body) is supported")
    omegas = np.asarray(omegas, dtype=float).reshape(-1)
    if np.any(~np.isfinite(omegas)) or np.any(omegas <= 0):
        raise InputError("omegas must be finite and > 0; A(inf) is added automatically")
    directions = np.asarray(wave_directions, dtype=float).reshape(-1)
    body, parts = _as_body(mesh, name, center_of_mass, rotation_center)
    key = _inputs_hash(parts, omegas, directions, rho, g, water_depth, dofs)
    if cache is not None and Path(cache).exists():
        with xr.open_dataset(cache) as f:
            stored = f.attrs.get("jaxmbd_inputs_hash")
        if stored == key:
            return read_capytaine(cache)
        warnings.warn(f"{cache}: cached run is for other inputs; recomputing", stacklevel=2)

    for b in parts:
        b.inertia_matrix = b.compute_rigid_body_inertia(rho=rho)
        b.hydrostatic_stiffness = b.compute_hydrostatic_stiffness(rho=rho, g=g)
    if len(parts) > 1 and not isinstance(body, cpt.Multibody):
        body = cpt.Multibody(parts, name=name)
    elif len(parts) > 1:
        body = cpt.Multibody(parts, name=body.name)

    env = dict(rho=rho, g=g, water_depth=water_depth)
    problems = [
        cpt.RadiationProblem(body=body, omega=w, radiating_dof=d, **env)
        for w in list(omegas) + [np.inf]
        for d in body.dofs
    ]
    problems += [
        cpt.DiffractionProblem(body=body, omega=w, wave_direction=b, **env) for w in omegas for b in directions
    ]
    solver = cpt.BEMSolver()
    results = solver.solve_all(problems, n_jobs=n_jobs, progress_bar=False)
    ds = cpt.assemble_dataset(results, hydrostatics=True)
    ds.attrs["jaxmbd_inputs_hash"] = key
    ds.attrs["jaxmbd_note"] = "written by jaxmbd.hydro.run_capytaine"
    if cache is not None:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        cpt.export_dataset(str(cache), ds)
        return read_capytaine(cache)
    buf = cpt.io.xarray.separate_complex_values(ds)
    buf.attrs["jaxmbd_source"] = f"run_capytaine({name})"
    return read_capytaine(buf)


def capytaine_drift(mesh, *, omegas, wave_directions, rho: float = 1025.0, g: float = 9.81, water_depth: float = math.inf,
                    fixed: bool = False, mass=None, stiffness_ext=None, damping_ext=None, n_theta: int = 361, name: str = "body",
                    center_of_mass=None, rotation_center=None, method: str = "far_field", control_radius=None):
    """Mean drift coefficients of one body (a :class:`~jaxmbd.hydro.drift.DriftTable`: surge, sway, yaw per squared
    wave amplitude) by the far-field (Maruo) formula (:mod:`jaxmbd.hydro.far_field`) from Capytaine's Kochin
    functions of its diffraction and radiation, over ``n_theta`` directions round the circle.  ``fixed``: the body held still (no radiation);
    otherwise it moves with its motion RAOs, Capytaine's from its inertia (``mass``: a 6x6 mass matrix about the
    rotation centre, default the displaced water's rigid-body inertia), hydrostatics and the extra
    ``stiffness_ext`` and ``damping_ext`` (a mooring, viscous damping).  The far field needs one body (no
    neighbours whose waves it would mix) and a closed waterline.

    ``method="control_surface"``: the flux of momentum through a vertical cylinder round each body
    (:mod:`jaxmbd.hydro.control_surface`; radius ``control_radius`` or the body's reach plus a quarter of it or its
    draught), which takes several bodies (a list of meshes or a ``Multibody``, each with its own cylinder that no
    other body enters, all moving on the group's coupled RAOs) and returns one table per body, in their order.
    The yaw moment is about each body's rotation centre in both methods.

    Finite ``water_depth``: the far field with the finite-depth coefficients of :mod:`jaxmbd.hydro.far_field`
    (within 0.7 % of MacCamy and Fuchs' drift on a cylinder standing on the seabed from kh = 0.5 to pi; Capytaine's
    own formula is 51 % low at kh = 0.5); the control surface in deep water only (Capytaine's finite-depth field off
    the body moves its flux by +-4 % with the radius at kh = pi), refused in finite depth."""
    import capytaine as cpt
    import xarray as xr

    from .control_surface import reference_point, symmetric_radiation
    from .drift import DriftTable
    from .far_field import far_field_drift

    omegas = np.asarray(omegas, dtype=float).reshape(-1)
    directions = np.asarray(wave_directions, dtype=float).reshape(-1)
    if np.any(~np.isfinite(omegas)) or np.any(omegas <= 0):
        raise InputError("omegas must be finite and > 0")
    if method not in ("far_field", "control_surface"):
        raise InputError(f"capytaine_drift: method is 'far_field' or 'control_surface', got {method!r}")
    if not water_depth > 0:
        raise InputError(f"capytaine_drift: water_depth must be > 0 (m, inf for deep water), got {water_depth}")
    if math.isfinite(water_depth) and method == "control_surface":
        raise InputError(f"capytaine_drift: water_depth {water_depth:g} m: the control surface in deep water only; expected "
                         "water_depth=inf, or method='far_field' (one body) in finite depth")
    body, parts = _as_body(mesh, name, center_of_mass, rotation_center)
    if len(parts) > 1 and method == "far_field":
        raise InputError("capytaine_drift: one body for the far field (it sums every body's waves into one field); "
                         "method='control_surface' gives each body's drift")
    if len(parts) > 1 and mass is not None:
        raise InputError("capytaine_drift: mass is one body's 6x6 matrix; several bodies take their displaced water's inertia")
    if method == "far_field" and np.any(reference_point(parts[0]) != 0.0):
        # Kochin functions about the rotation centre: their angular derivative, which the yaw takes, is then free of
        # the fast phase e^{-ik c·(cos θ, sin θ)} of a body away from the origin (the drift does not depend on where it is)
        c = reference_point(parts[0])
        parts = [parts[0].translated((-c[0], -c[1], 0.0), name=parts[0].name)]
    for b in parts:
        b.inertia_matrix = b.compute_rigid_body_inertia(rho=rho) if mass is None else b.add_dofs_labels_to_matrix(np.asarray(mass))
        b.hydrostatic_stiffness = b.compute_hydrostatic_stiffness(rho=rho, g=g)
    body = cpt.Multibody(parts, name=body.name) if len(parts) > 1 else parts[0]
    heads = np.mod(directions, 2 * np.pi)
    order = np.argsort(heads)
    if method == "control_surface":
        from .control_surface import control_surface_drift

        values = control_surface_drift(body, parts, omegas, heads, rho, g, water_depth, control_radius, fixed, stiffness_ext, damping_ext)
        tables = tuple(DriftTable.of(omegas, heads[order], v[:, order], f"Capytaine control-surface drift of {p.name}")
                       for p, v in zip(parts, values))
        return tables[0] if len(parts) == 1 else tables
    step = 2 * np.pi / (n_theta - 1)
    theta = np.concatenate([-step * np.arange(2, 0, -1), np.linspace(0.0, 2 * np.pi, n_theta), 2 * np.pi + step * np.arange(1, 3)])
    # beyond [0, 2π] on both sides (no heading on the range's border), 0 and 2π themselves on the grid
    ds = xr.Dataset(coords={"omega": omegas, "wave_direction": heads, "radiating_dof": list(body.dofs),
                            "water_depth": [water_depth], "rho": [rho], "g": [g], "theta": theta})
    ds = cpt.BEMSolver().fill_dataset(ds, body, hydrostatics=True, progress_bar=False)
    if fixed:
        X = xr.zeros_like(ds["excitation_force"]).rename(influenced_dof="radiating_dof").transpose("omega", "wave_direction", "radiating_dof")
    else:
        kw = {k: body.add_dofs_labels_to_matrix(np.asarray(v)) for k, v in (("stiffness", stiffness_ext), ("dissipation", damping_ext))
              if v is not None}
        X = cpt.post_pro.rao(symmetric_radiation(ds), **kw).transpose("omega", "wave_direction", "radiating_dof")
    # Capytaine returns its coordinates sorted: the frequencies and headings are read back from its dataset
    H = 1j * (ds["kochin_diffraction"] + (ds["kochin_radiation"] * X).sum("radiating_dof"))
    H = H.squeeze([d for d in H.dims if d not in ("omega", "wave_direction", "theta")]).transpose("omega", "wave_direction", "theta")
    k = ds["wavenumber"].squeeze([d for d in ds["wavenumber"].dims if d != "omega"]).transpose("omega")
    w_ds, b_ds = np.asarray(H["omega"].values, float), np.asarray(H["wave_direction"].values, float)
    values = far_field_drift(H.values, theta, b_ds, w_ds, np.asarray(k.values, float), water_depth, rho)
    return DriftTable.of(w_ds, b_ds, values, f"Capytaine far-field drift of {name}")


# --------------------------------------------------------------------------- test barge
def test_barge_path() -> Path:
    """Path of the packaged Capytaine run of the test barge (``jaxmbd/data/barge_hydro.nc``)."""
    return Path(__file__).resolve().parents[1] / "data" / "barge_hydro.nc"


test_barge_path.__test__ = False  # not a pytest test despite the name


def make_test_barge(path=None) -> HydroData:
    """Regenerate the cached test barge (``jaxmbd/data/barge_hydro.nc``) with Capytaine.

    Box barge 20 m long (x), 10 m beam (y), 2 m draught, 1 m panels
    (20 x 10 on the bottom, 2 rows on the sides: 320 hull panels, plus a
    171-panel
    lid against irregular frequencies; about 15 s on 2 cores); ρ = 1025 kg/m³, g = 9.81, deep water;
    30 frequencies 0.2 ... 2.5 rad/s plus ω = ∞; headings 0, 45, 90, 135,
    180 deg. Centre of mass and rotation centre at (0, 0, 0), on the
    waterline above the centre of the bottom (GM_T = 1 + 100/24 − 2 = 3.17 m,
    GM_L = 1 + 400/24 − 2 = 15.7 m; Capytaine's panel quadrature of the
    waterplane inertia gives C44, C55 1.3 % / 0.3 % below these exact values).
    Mass = displaced water, 410 t.
    Reuses the file when it already holds this run.
    """
    path = test_barge_path() if path is None else Path(path)
    body = box(20.0, 10.0, 2.0, panel_size=1.0, name="barge")
    return run_capytaine(
        body,
        omegas=np.linspace(0.2, 2.5, 30),
        wave_directions=np.deg2rad([0.0, 45.0, 90.0, 135.0, 180.0]),
        rho=1025.0,
        g=9.81,
        water_depth=math.inf,
        cache=path,
        name="barge",
    )


test_barge_path.__doc__ = test_barge_path.__doc__

