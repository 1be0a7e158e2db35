"""``[[hydro]]`` of a system file: a hydrodynamic body (:class:`~jaxmbd.hydro.body.HydroBody`) from a
Capytaine or WAMIT file or a Capytaine run on a mesh, box or cylinder, with its closed hull for the
non-linear modes, checked against the sea's headings and frequencies."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..tables import SystemFileError

_HYDRO_KEYS = (
    "name", "bodies", "file", "wamit", "mesh", "box", "cylinder",
    "omega_max", "xz_symmetry", "wamit_length",
    "omegas", "omega_range", "wave_directions_deg", "rho", "g", "water_depth", "center_of_mass", "rotation_center",
    "origin", "ramp_time", "radiation", "radiation_tol", "added_mass_inf", "mass", "com",
    "linear_damping", "quadratic_drag", "excitation", "body_to_body", "hydrostatics", "froude_krylov", "hull", "hull_scale",
)


def read_hydro(reader, cfg):
    out = []
    r = reader.r
    for k, h in enumerate(r.tables(cfg.get("hydro", []), "hydro")):
        f = f"hydro[{k}]"
        r.table(h, f, _HYDRO_KEYS)
        out.append((f, _hydro_element(reader, h, f, k)))
    return out


def _hydro_element(reader, h, f, k):
    from .bem import HydroDataError
    from .body import HydroBody

    r = reader.r
    sources = [s for s in ("file", "wamit", "mesh", "box", "cylinder") if s in h]
    if len(sources) != 1:
        r.fail(f, f"needs exactly one of file (Capytaine NetCDF), wamit (.out), mesh, box, cylinder; got {sources or 'none'}")
    src = sources[0]
    name = r.string(h, f, "name", "hydro" if k == 0 else f"hydro{k}")
    reader.file_name(name, f"{f}.name")
    hydro = _hydro_data(reader, h, f, src, name)
    if r.boolean(h, f, "xz_symmetry", False):
        hydro = hydro.with_xz_symmetry()
    _check_headings(reader, f, hydro, reader.waves)
    nb = hydro.n_bodies
    bodies = r.strings(h, f, "bodies", list(hydro.body_names))
    if len(bodies) != nb:
        r.fail(f"{f}.bodies", f"expected {nb} model bodies (one per body of {hydro.source}), got {len(bodies)}")
    reader.names(bodies, f"{f}.bodies")
    origin = r.vector(h, f, "origin", 3, (0.0, 0.0, 0.0))
    ramp = r.number(h, f, "ramp_time", 0.0, ge=0.0)
    radiation = r.boolean(h, f, "radiation", True)
    tol = r.number(h, f, "radiation_tol", 0.02, gt=0.0, le=1.0)
    ainf = r.string(h, f, "added_mass_inf", "fit", choices=("fit", "file"))
    mass = None
    if "mass" in h:
        mass = r.array(h["mass"], f"{f}.mass", [(), (nb,)]).reshape(-1)
        if np.any(mass <= 0):
            r.fail(f"{f}.mass", f"must be > 0 kg, got {h['mass']!r}")
    com = r.array(h["com"], f"{f}.com", [(3,), (nb, 3)]).reshape(nb, 3) if "com" in h else None
    lin = r.array(h["linear_damping"], f"{f}.linear_damping", [(6 * nb, 6 * nb)]) if "linear_damping" in h else None
    quad = r.array(h["quadratic_drag"], f"{f}.quadratic_drag", [(6 * nb,)]) if "quadratic_drag" in h else None
    if quad is not None and np.any(quad < 0):
        r.fail(f"{f}.quadratic_drag", "must be >= 0")
    excitation = r.boolean(h, f, "excitation", True)
    body_to_body = r.boolean(h, f, "body_to_body", True)
    hull_boxes = None
    if src == "box":  # its dimensions bound the linear hydrostatics' range (jaxmbd.validity)
        box = h["box"]
        depth = r.number(box, f"{f}.box", "depth", None, gt=float(box["draught"]))
        hull_boxes = ((float(box["length"]), float(box["beam"]), float(box["draught"]), depth),)
    modes = {key: r.string(h, f, key, "linear", choices=("linear", "nonlinear")) for key in ("hydrostatics", "froude_krylov")}
    hulls = _hulls(reader, h, f, src, nb, modes["hydrostatics"] == "nonlinear")
    try:
        return HydroBody.create(
            reader.model, hydro, name=name, bodies=tuple(bodies), q_equilibrium=reader.q0, origin=origin,
            radiation=radiation, radiation_tol=tol, mass=mass, com=com, linear_damping=lin,
            quadratic_drag=quad, excitation=excitation, ramp_time=ramp, added_mass_inf=ainf,
            body_to_body=body_to_body, hull_boxes=hull_boxes, hulls=hulls, **modes,
        )
    except (HydroDataError, ValueError, np.linalg.LinAlgError) as exc:
        r.fail(f, str(exc))


def _hulls(reader, h, f, src, nb, nonlinear):
    """The closed hulls of a ``[[hydro]]`` entry for non-linear hydrostatics: read from ``hull`` (a
    mesh file, times ``hull_scale``), or a box with ``depth`` or a cylinder with ``height``."""
    from .hull import HullMeshError, box_hull, cylinder_hull, load_hull

    r = reader.r
    for key in ("hull", "hull_scale"):
        if key in h and not nonlinear:
            r.fail(f"{f}.{key}", "a closed hull is used by hydrostatics = \"nonlinear\" only; set that, or remove it")
    if not nonlinear:
        return None
    if nb != 1:
        r.fail(f"{f}.hydrostatics", f"non-linear hydrostatics from a system file take one body per [[hydro]] entry; this one has {nb}")
    try:
        if isinstance(h.get("hull"), dict):
            return (_hull_shape(reader, h["hull"], f"{f}.hull"),)
        if "hull" in h:
            return (load_hull(r.path(h, f, "hull"), scale=r.number(h, f, "hull_scale", 1.0, gt=0.0)),)
        if src == "box" and "depth" in h["box"]:
            b = h["box"]
            return (box_hull(b["length"], b["beam"], b["depth"], b["draught"], panel_size=b.get("panel_size"), name=f"{f}.box"),)
        if src == "cylinder" and "height" in h["cylinder"]:
            c = h["cylinder"]
            height = r.number(c, f"{f}.cylinder", "height", gt=float(c["draught"]))
            return (cylinder_hull(c["radius"], height, c["draught"], panel_size=c.get("panel_size"), name=f"{f}.cylinder"),)
    except HullMeshError as exc:
        r.fail(f"{f}.hull", str(exc))
    r.fail(f"{f}.hull", "hydrostatics = \"nonlinear\" needs the closed hull: hull = \"FILE\" (a closed mesh in metres), "
           "or depth in box, or height in cylinder")


def _hull_shape(reader, t, f):
    """A closed box (``length``, ``beam``, ``depth``, ``draught``) or vertical cylinder (``radius``,
    ``height``, ``draught``) hull, optional ``panel_size`` and ``center`` (x, y), in the BEM frame."""
    from .hull import box_hull, cylinder_hull

    r = reader.r
    shape = "box" if "length" in t else "cylinder" if "radius" in t else None
    if shape is None:
        r.fail(f, "expected a mesh file, or a box {length, beam, depth, draught} or a cylinder {radius, height, draught} (m)")
    dims = ("length", "beam", "depth", "draught") if shape == "box" else ("radius", "height", "draught")
    r.table(t, f, dims + ("panel_size", "center"))
    vals = [r.number(t, f, d, gt=0.0) for d in dims]
    if vals[-1] >= vals[-2]:
        r.fail(f"{f}.draught", f"expected less than the {dims[-2]} ({vals[-2]:g} m), got {vals[-1]:g}")
    panel = r.number(t, f, "panel_size", None, gt=0.0)
    center = r.vector(t, f, "center", 2, (0.0, 0.0))
    make = box_hull if shape == "box" else cylinder_hull
    return make(*vals, panel_size=panel, center=center, name=f)


def _hydro_data(reader, h, f, src, name):
    """The hydrodynamic coefficients of a ``[[hydro]]`` entry: read from a Capytaine or WAMIT file,
    or computed by a Capytaine run on a mesh, box or cylinder."""
    from .bem import HydroDataError, read_capytaine, read_wamit

    r = reader.r
    run_keys = ("omegas", "omega_range", "wave_directions_deg", "water_depth", "center_of_mass", "rotation_center")
    if src in ("file", "wamit"):
        for key in run_keys:
            if key in h:
                r.fail(f"{f}.{key}", f"only for a Capytaine run (mesh, box, cylinder), not with {src!r}")
    if src not in ("file", "wamit") and "omega_max" in h:
        r.fail(f"{f}.omega_max", "cuts a file's table at that frequency; a Capytaine run computes the frequencies of "
               "omegas or omega_range (rad/s), so set those instead")
    omega_max = r.number(h, f, "omega_max", None, gt=0.0)
    try:
        if src == "file":
            hydro = read_capytaine(r.path(h, f, "file"), omega_max=omega_max)
        elif src == "wamit":
            rho = r.number(h, f, "rho", reader.water_density or 1000.0, gt=0.0)  # WAMIT's usual
            g = r.number(h, f, "g", reader.g, gt=0.0)
            length = r.number(h, f, "wamit_length", 1.0, gt=0.0)
            hydro = read_wamit(r.path(h, f, "wamit"), rho=rho, g=g, length=length, omega_max=omega_max)
        else:
            hydro = _capytaine_run(reader, h, f, src, name)
    except HydroDataError as exc:
        r.fail(f"{f}.{src}", str(exc))
    except (OSError, ValueError) as exc:
        if isinstance(exc, SystemFileError):
            raise
        r.fail(f"{f}.{src}", f"cannot read hydrodynamic data: {exc}")
    return hydro


def _capytaine_run(reader, h, f, src, name):
    """Hydrodynamic data of a hull from Capytaine, cached next to the system file."""
    from . import bem

    r = reader.r
    rho = r.number(h, f, "rho", reader.water_density or 1025.0, gt=0.0)
    g = r.number(h, f, "g", reader.g, gt=0.0)
    depth = r.number(h, f, "water_depth", math.inf, gt=0.0, allow_inf=True)
    if ("omegas" in h) == ("omega_range" in h):
        r.fail(f"{f}.omegas", "a Capytaine run needs exactly one of omegas (list, rad/s) and omega_range ([min, max, count])")
    if "omegas" in h:
        omegas = r.array(h["omegas"], f"{f}.omegas", None).reshape(-1)
        where = f"{f}.omegas"
    else:
        lo, hi, n = r.array(h["omega_range"], f"{f}.omega_range", [(3,)])
        if not (0 < lo < hi) or n != int(n) or n < 2:
            r.fail(f"{f}.omega_range", f"expected [min, max, count] with 0 < min < max and an integer count >= 2, got {h['omega_range']!r}")
        omegas = np.linspace(lo, hi, int(n))
        where = f"{f}.omega_range"
    if omegas.size < 2 or np.any(omegas <= 0) or np.any(np.diff(omegas) <= 0):
        r.fail(where, "expected at least 2 increasing frequencies > 0 rad/s")
    dirs = np.deg2rad(r.array(r.get(h, f, "wave_directions_deg", [0.0]), f"{f}.wave_directions_deg", None).reshape(-1))
    cog = r.vector(h, f, "center_of_mass", 3, None)
    rc = r.vector(h, f, "rotation_center", 3, None)
    try:
        import capytaine as cpt
    except ImportError:
        r.fail(f"{f}.{src}", "computing hydrodynamic data from a hull needs Capytaine (pip install capytaine)")
    if src == "mesh":
        mesh_path = r.path(h, f, "mesh")
        try:
            hull = cpt.load_mesh(str(mesh_path))
        except Exception as exc:  # Capytaine's readers raise many kinds; the file is what is wrong
            r.fail(f"{f}.mesh", f"cannot read the mesh {str(mesh_path)!r}: {type(exc).__name__}: {exc}")
        stem = mesh_path.stem
    else:
        dims = ("length", "beam", "draught") if src == "box" else ("radius", "draught")
        t = r.table(h[src], f"{f}.{src}", dims + ("panel_size",) + (("depth",) if src == "box" else ("height",)))
        vals = [r.number(t, f"{f}.{src}", d, gt=0.0) for d in dims]
        panel = r.number(t, f"{f}.{src}", "panel_size", None, gt=0.0)
        make = bem.box if src == "box" else bem.cylinder
        hull = make(*vals, panel_size=panel, center_of_mass=cog, rotation_center=rc, name=name)
        stem = src
    base = Path(reader.path).stem if reader.path else "system"
    cache = r.base / f"{base}.{name}.{stem}.capytaine.nc"
    return bem.run_capytaine(
        hull, omegas=omegas, wave_directions=dirs, rho=rho, g=g, water_depth=depth, cache=cache,
        name=name, center_of_mass=cog, rotation_center=rc,
    )


def _check_headings(reader, f, hydro, waves):
    """The wave directions and frequencies against a hydro table.  Inside a run the
    directions are traced, so the table would silently clamp a heading it does not cover."""
    if waves is None or (waves.regular is None and waves.spectrum is None):  # none, or a current in calm water
        return
    if waves.regular is not None:
        dirs = np.atleast_1d(float(waves.regular.direction))
        wmax = float(waves.regular.omega)
    else:
        mean = float(waves.mean_direction)
        m = waves.n_directions
        # realise() puts m bins over mean ± π/2 and may draw anywhere inside them
        dirs = np.array([mean]) if m == 1 else mean + np.linspace(-0.5 * np.pi, 0.5 * np.pi, 2 * m + 1)
        wmax = waves.omega_max
    try:
        hydro.check_headings(dirs)
    except ValueError as exc:
        reader.r.fail("waves.direction_deg", f"{exc} (data of {f}; xz_symmetry = true mirrors a symmetric hull's table)")
    top = float(hydro.omega[-1])
    if wmax > 1.05 * top:
        key = "period" if waves.regular is not None else "omega_max"
        fix = ("a longer period" if waves.regular is not None else "a lower waves.omega_max") + \
            " or hydrodynamic data to higher frequencies (omega_range of a Capytaine run)"
        reader.r.fail(f"waves.{key}", f"wave frequencies reach {wmax:.3g} rad/s, beyond the hydrodynamic table of {f} "
                    f"(up to {top:.3g} rad/s): {fix}")
