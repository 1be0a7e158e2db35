"""``[[hydro]]`` of a system file: a hydrodynamic body (:class:`~jaxmbd.hydro.body.HydroBody`) from a
Capytaine or WAMIT file or a Capytaine run on a mesh, box or cylinder, with its closed hull for the
non-linear modes, checked against the sea's headings and frequencies."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..tables import Key, SystemFileError, default_of, keys
from .body import create_hydro_body
from .capytaine_run import run_capytaine
from .hull import load_hull
from .wamit import read_wamit
from .waves import RegularWave


def _hydro_keys():
    make = create_hydro_body
    return keys(
        Key("name", "string", "", "hydro", "element name (output prefix)", "`hydro`, `hydro1`, ..."),
        Key("bodies", "list of names", "", None, "one model body per hydrodynamic body", "the data's body names"),
        Key("file", "path", "", None, "Capytaine NetCDF"),
        Key("wamit", "path", "", None, "WAMIT `.out` (with `.1`, `.3` beside it)"),
        Key("wamit_length", "number", "m", default_of(read_wamit, "length"), "WAMIT ULEN"),
        Key("mesh", "path", "", None, "hull mesh in any format Capytaine reads"),
        Key("box", "table", "m", None, "`length`, `beam`, `draught`, optional `panel_size`; optional `depth` (keel to deck, > "
            "draught): with linear hydrostatics the run checks that the deck edge stays above the still waterline, as it "
            "always checks that the bilge stays under it (heave, roll and pitch; the wave elevation is not counted); with "
            "non-linear hydrostatics it makes the closed hull"),
        Key("cylinder", "table", "m", None, "`radius`, `draught`, optional `panel_size`; optional `height` (bottom to top, > "
            "draught): the closed hull of non-linear hydrostatics"),
        Key("omegas", "list", "rad/s", None, "hull runs: frequencies"),
        Key("omega_range", "[min, max, count]", "rad/s", None, "hull runs: frequencies, evenly spaced"),
        Key("wave_directions_deg", "list", "deg", [0.0], "hull runs: headings", "[0]"),
        Key("rho", "number", "kg/m³", None, "hull runs and WAMIT scaling", "`[water]` density, else 1025 (1000 WAMIT)"),
        Key("g", "number", "m/s²", None, "hull runs and WAMIT scaling", "the model's gravity"),
        Key("water_depth", "number", "m", default_of(run_capytaine, "water_depth"), "hull runs"),
        Key("center_of_mass", "3 numbers", "m", None, "hull runs"),
        Key("rotation_center", "3 numbers", "m", None, "hull runs"),
        Key("omega_max", "number", "rad/s", None, "drop frequencies above it when reading"),
        Key("xz_symmetry", "bool", "", False, "mirror the heading table of an xz-symmetric hull"),
        Key("origin", "3 numbers", "m", default_of(make, "origin"), "world position of the BEM frame's origin", "0"),
        Key("ramp_time", "number", "s", default_of(make, "ramp_time"), "excitation fades in over this time"),
        Key("radiation", "bool", "", default_of(make, "radiation"), "radiation memory (state-space fit)"),
        Key("radiation_tol", "number", "", default_of(make, "radiation_tol"), "fit tolerance on K(t)"),
        Key("added_mass_inf", "string", "", default_of(make, "added_mass_inf"), "`fit` or `file`"),
        Key("mass", "per body", "kg", None, "mass the restoring matrix was computed with", "from the data"),
        Key("com", "per body", "m", None, "centre of mass the restoring matrix was computed with", "from the data"),
        Key("linear_damping", "6nb x 6nb", "SI", None, "extra linear damping", "0"),
        Key("quadratic_drag", "6nb numbers", "SI", None, "diagonal quadratic drag, on each reference point's velocity through "
            "the water (less the `[current]` there, which fades in over `ramp_time`)", "0"),
        Key("excitation", "bool", "", default_of(make, "excitation"), "wave excitation on/off"),
        Key("body_to_body", "bool", "", default_of(make, "body_to_body"), "radiation coupling between the table's bodies "
            "(A(∞) and memory); false drops it, as WEC-Sim does by default"),
        Key("hydrostatics", "string", "", default_of(make, "hydrostatics"), "`linear` (ρ g V and the restoring matrix) or "
            "`nonlinear` (the still-water pressure on the closed hull's instantaneous wetted part; [hydro.md](hydro.md), "
            "\"Large motions\")"),
        Key("froude_krylov", "string", "", default_of(make, "froude_krylov"), "`nonlinear` (with non-linear hydrostatics): "
            "the incident wave's pressure on the hull under the wave's surface, and the excitation reduced to diffraction"),
        Key("hull", "path or table", "m", None, "the closed hull of non-linear hydrostatics in the BEM frame at rest: a mesh "
            "file (STL; `.gdf`, `.dat` and others through Capytaine), a box `{length, beam, depth, draught, panel_size, "
            "center}` or a cylinder `{radius, height, draught, panel_size, center}`; default: the `box` or `cylinder` "
            "source's own, given `depth` or `height`"),
        Key("hull_scale", "number", "", default_of(load_hull, "scale"), "multiplies a hull file's coordinates (0.001 for "
            "millimetres)"),
    )


HYDRO_KEYS = _hydro_keys()


def read_hydro(reader, cfg):
    out = []
    r = reader.r
    for k, h in enumerate(r.tables(cfg.get("hydro", []), "hydro")):
        f = f"hydro[{k}]"
        r.table(h, f, tuple(HYDRO_KEYS))
        out.append((f, _hydro_element(reader, h, f, k)))
    return out


def _hydro_element(reader, h, f, k):
    from .bem import HydroDataError
    from .body import HydroBody

    r = reader.r
    K = {k: v.default for k, v in HYDRO_KEYS.items()}
    sources = [s for s in ("file", "wamit", "mesh", "box", "cylinder") if s in h]
    if len(sources) != 1:
        r.fail(f, f"needs exactly one of file (Capytaine NetCDF), wamit (.out), mesh, box, cylinder; got {sources or 'none'}")
    src = sources[0]
    name = r.string(h, f, "name", "hydro" if k == 0 else f"hydro{k}")
    reader.file_name(name, f"{f}.name")
    hydro = _hydro_data(reader, h, f, src, name)
    if r.boolean(h, f, "xz_symmetry", K["xz_symmetry"]):
        hydro = hydro.with_xz_symmetry()
    _check_headings(reader, f, hydro, reader.waves)
    nb = hydro.n_bodies
    bodies = r.strings(h, f, "bodies", list(hydro.body_names))
    if len(bodies) != nb:
        r.fail(f"{f}.bodies", f"expected {nb} model bodies (one per body of {hydro.source}), got {len(bodies)}")
    reader.names(bodies, f"{f}.bodies")
    origin = r.vector(h, f, "origin", 3, K["origin"])
    ramp = r.number(h, f, "ramp_time", K["ramp_time"], ge=0.0)
    radiation = r.boolean(h, f, "radiation", K["radiation"])
    tol = r.number(h, f, "radiation_tol", K["radiation_tol"], gt=0.0, le=1.0)
    ainf = r.string(h, f, "added_mass_inf", K["added_mass_inf"], choices=("fit", "file"))
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
    excitation = r.boolean(h, f, "excitation", K["excitation"])
    body_to_body = r.boolean(h, f, "body_to_body", K["body_to_body"])
    hull_boxes = None
    if src == "box":  # its dimensions bound the linear hydrostatics' range (jaxmbd.validity)
        box = h["box"]
        depth = r.number(box, f"{f}.box", "depth", None, gt=float(box["draught"]))
        hull_boxes = ((float(box["length"]), float(box["beam"]), float(box["draught"]), depth),)
    modes = {key: r.string(h, f, key, K[key], choices=("linear", "nonlinear")) for key in ("hydrostatics", "froude_krylov")}
    hulls = _hulls(reader, h, f, src, nb, modes["hydrostatics"] == "nonlinear")
    try:
        element = HydroBody.create(
            reader.model, hydro, name=name, bodies=tuple(bodies), q_equilibrium=rest_configuration(reader.model, reader.q0, bodies),
            origin=origin,
            radiation=radiation, radiation_tol=tol, mass=mass, com=com, linear_damping=lin,
            quadratic_drag=quad, excitation=excitation, ramp_time=ramp, added_mass_inf=ainf,
            body_to_body=body_to_body, hull_boxes=hull_boxes, hulls=hulls, **modes,
        )
    except (HydroDataError, ValueError, np.linalg.LinAlgError) as exc:
        r.fail(f, str(exc))
    _check_start_heading(reader, bodies)
    return element


START_YAW_DEG = 15.0
"""How far a hydrodynamic body may start yawed from the heading its data describe it at: the linear
model's small angles (its roll and pitch range too)."""


def _check_start_heading(reader, bodies):
    """A start yawed far from rest is refused: the data's excitation and radiation hold at the rest heading,
    and the linear model's yaw is a small angle; turning the sea is the way to meet it from another side."""
    from ..kinematics import forward_kinematics

    R = np.asarray(forward_kinematics(reader.model, reader.q0)[0])
    for b in bodies:
        Rb = R[reader.model.index(b)]
        yaw = float(np.degrees(np.arctan2(Rb[1, 0], Rb[0, 0])))
        if abs(yaw) > START_YAW_DEG:
            reader.r.fail(reader.origin_of.get(b, "bodies"),
                          f"body {b!r} starts yawed {yaw:.3g}° from the heading its hydrodynamic data describe it at; the "
                          f"linear model holds within ±{START_YAW_DEG:g}°: turn the waves instead ([waves] direction_deg, "
                          "or the run's heading)")


def rest_configuration(model, q0, bodies):
    """The configuration at which the hydrodynamic ``bodies`` float as their data put them: ``q0`` with the
    joints of each body and of the bodies above it at their neutral values (zero offsets and angles,
    identity quaternions), so the body's frame at rest is its joint's frame, and ``origin`` places the
    BEM frame in the world.  A start away from it (``q0_xyz``, a heel) is a displacement from rest that
    the run carries, not a new rest; the other bodies keep their ``q0`` relative to their parents."""
    q = np.asarray(q0, dtype=float).copy()
    neutral = np.asarray(model.neutral(), dtype=float)
    for b in bodies:
        for i in model.ancestors(model.index(b)):
            s = model.q_slice(i)
            q[s] = neutral[s]
    return q


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
            return (load_hull(r.path(h, f, "hull"), scale=r.number(h, f, "hull_scale", HYDRO_KEYS["hull_scale"].default, gt=0.0)),)
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
            length = r.number(h, f, "wamit_length", HYDRO_KEYS["wamit_length"].default, gt=0.0)
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
    depth = r.number(h, f, "water_depth", HYDRO_KEYS["water_depth"].default, gt=0.0, allow_inf=True)
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
    dirs = r.get(h, f, "wave_directions_deg", HYDRO_KEYS["wave_directions_deg"].default)
    dirs = np.deg2rad(r.array(dirs, f"{f}.wave_directions_deg", None).reshape(-1))
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
    dirs = waves.headings()
    wmax = float(waves.regular.omega) if waves.regular is not None else waves.omega_max
    try:
        hydro.check_headings(dirs)
    except ValueError as exc:
        reader.r.fail("waves.direction_deg", f"{exc} (data of {f}; xz_symmetry = true mirrors a symmetric hull's table)")
    top = float(hydro.omega[-1])
    if wmax > 1.05 * top:
        regular = isinstance(waves.regular, RegularWave)  # a recorded wave's band ends at its omega_max, as a spectrum's
        key = "period" if regular else "omega_max"
        fix = ("a longer period" if regular else "a lower waves.omega_max") + \
            " or hydrodynamic data to higher frequencies (omega_range of a Capytaine run)"
        reader.r.fail(f"waves.{key}", f"wave frequencies reach {wmax:.3g} rad/s, beyond the hydrodynamic table of {f} "
                    f"(up to {top:.3g} rad/s): {fix}")
