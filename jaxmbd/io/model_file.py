"""``[[bodies]]`` and ``[model]`` (a URDF file) of a system file: the model's bodies and joints and the
start configuration q0."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..tables import float_array, shape_text

_MODEL_KEYS = ("urdf", "floating", "q0")
_BODY_KEYS = (
    "name", "parent", "joint", "joint_name", "axis", "axis1", "axis2", "xyz", "rpy_deg",
    "mass", "com", "inertia", "radii_of_gyration", "spatial_inertia",
    "q0", "q0_deg", "q0_xyz", "q0_rpy_deg",
)


def read_model(reader, cfg, gravity):
    from ..joints import ModelError
    from ..model import WORLD, Body, ModelBuilder, Placement

    r = reader.r
    builder = ModelBuilder(gravity=gravity, source=r.source)
    reader.origin_of = {}  # body or joint name -> field path where it was defined (for later errors)
    joint_names = set()
    q0_entries = []  # (body name, field, q0 (nq,) or None, source key)
    if "model" in cfg:
        _model_from_urdf(reader, cfg, gravity, builder, joint_names, q0_entries)

    bodies = r.tables(cfg.get("bodies", []), "bodies")
    if not bodies and "model" not in cfg:
        r.fail("bodies", "the file defines no bodies: add [[bodies]] entries or [model] urdf = ...")
    entries = []
    for k, b in enumerate(bodies):
        f = f"bodies[{k}]"
        r.table(b, f, _BODY_KEYS)
        name = r.string(b, f, "name")
        if name == WORLD:
            r.fail(f + ".name", f"{WORLD!r} is the fixed world frame; choose another name")
        if name in reader.origin_of:
            r.fail(f + ".name", f"duplicate body name {name!r} (already defined in {reader.origin_of[name]})")
        joint_name = r.string(b, f, "joint_name", f"{name}_joint")
        if joint_name in reader.origin_of:
            r.fail(f + ".joint_name", f"duplicate joint name {joint_name!r} (already in {reader.origin_of[joint_name]})")
        reader.origin_of[name] = f
        reader.origin_of[joint_name] = f
        joint_names.add(joint_name)
        joint = _body_joint(reader, b, f)
        xyz = r.vector(b, f, "xyz", 3, (0.0, 0.0, 0.0))
        rpy = np.deg2rad(r.vector(b, f, "rpy_deg", 3, (0.0, 0.0, 0.0)))
        body = _body_inertia(reader, b, f, Body)
        parent = r.string(b, f, "parent", WORLD)
        builder.add_body(
            name, body=body, joint=joint, parent=parent,
            placement=Placement.from_xyz_rpy(xyz, rpy), joint_name=joint_name,
        )
        entries.append((name, parent, f))
        q0 = _joint_q0(reader, b, f, joint)
        if q0 is not None:
            q0_entries.append((name, f, q0[0], q0[1]))
    known = set(reader.origin_of)
    body_names = [n for n in reader.origin_of if n not in joint_names]
    for name, parent, f in entries:
        if parent != WORLD and parent not in known:
            r.fail(f"{f}.parent", f"unknown parent {parent!r}; bodies: {', '.join(body_names)} or 'world'")
        if parent == name:
            r.fail(f"{f}.parent", f"body {name!r} cannot hang from itself")
    try:
        model = builder.build()
    except ModelError as exc:
        r.fail("bodies", str(exc))
    reader.model = model
    reader.known_names = set(model.body_names) | set(model.joint_names)

    q0 = np.asarray(model.neutral(), dtype=float).copy()
    for name, f, val, key in q0_entries:
        i = model.index(name)
        j = model.joints[i]
        if val.shape != (j.nq,):
            r.fail(f"{f}.{key}" if not f.startswith("model.") else f,
                   f"expected {shape_text((j.nq,))} for a {j.name!r} joint (nq = {j.nq}), got {shape_text(val.shape)}")
        if not np.all(np.isfinite(val)):
            r.fail(f"{f}.{key}" if not f.startswith("model.") else f, "expected finite numbers")
        val = _unit_quaternions(reader, val, j, f if f.startswith("model.") else f"{f}.{key}")
        q0[model.q_start[i] : model.q_start[i] + j.nq] = val
    reader.q0 = float_array(q0)


def _model_from_urdf(reader, cfg, gravity, builder, joint_names, q0_entries):
    """``[model]``: every link of a URDF file as a body of the builder, and its ``q0`` table."""
    from ..joints import ModelError
    from ..model import WORLD, Body, Placement

    r = reader.r
    m = r.table(cfg["model"], "model", _MODEL_KEYS)
    urdf = r.path(m, "model", "urdf")
    floating = r.boolean(m, "model", "floating", False)
    try:
        from ..loops import load_urdf_with_loops

        base, reader.urdf_loops = load_urdf_with_loops(urdf, floating=floating, gravity=gravity)
    except ModelError as exc:
        r.fail("model.urdf", str(exc))
    for i, n in enumerate(base.body_names):
        lam = base.parents[i]
        builder.add_body(
            n,
            body=Body(spatial_inertia=np.asarray(base.inertia[i])),
            joint=base.joints[i],
            parent=WORLD if lam < 0 else base.body_names[lam],
            placement=Placement(np.asarray(base.placement_R[i]), np.asarray(base.placement_p[i])),
            joint_name=base.joint_names[i],
        )
        reader.origin_of[n] = "model.urdf"
        reader.origin_of[base.joint_names[i]] = "model.urdf"
        joint_names.add(base.joint_names[i])
    q0_urdf = r.table(m.get("q0", {}), "model.q0", list(base.joint_names) + list(base.body_names))
    for jn, val in q0_urdf.items():
        q0_entries.append((jn, f"model.q0.{jn}", r.array(val, f"model.q0.{jn}", None), "q0"))


def _body_joint(reader, b, f):
    """The joint a ``[[bodies]]`` entry hangs from: its kind and unit axes, checked."""
    from ..joints import KINDS as JOINT_KINDS
    from ..joints import ModelError

    r = reader.r
    kind_name = r.string(b, f, "joint", "fixed", choices=tuple(JOINT_KINDS))
    cls = JOINT_KINDS[kind_name]
    axis_keys = [x.name for x in dataclasses.fields(cls)]
    for key in ("axis", "axis1", "axis2"):
        if key in b and key not in axis_keys:
            r.fail(f"{f}.{key}", f"not used by a {kind_name!r} joint (its keys: {', '.join(axis_keys) or 'none'})")
    kw = {}
    for key in axis_keys:
        if key in b:
            a = r.array(b[key], f"{f}.{key}", [(3,)])
            n = float(np.linalg.norm(a))
            if not abs(n - 1.0) <= 1e-3:
                r.fail(f"{f}.{key}", f"expected a unit vector, got {a.tolist()} with norm {n:.6g}")
            kw[key] = tuple(float(x) for x in a / n)
    joint = cls(**kw)
    try:
        joint = joint.check(f"{r.source}: {f}")
    except ModelError as exc:
        r.fail(f"{f}.joint", str(exc))
    return joint


def _body_inertia(reader, b, f, Body):
    r = reader.r
    from ..joints import ModelError

    if "spatial_inertia" in b:
        for key in ("mass", "com", "inertia", "radii_of_gyration"):
            if key in b:
                r.fail(f"{f}.{key}", "give either spatial_inertia or mass/com/inertia, not both")
        I = r.array(b["spatial_inertia"], f"{f}.spatial_inertia", [(6, 6)])
        body = Body(spatial_inertia=I)
        key = "spatial_inertia"
    else:
        mass = r.number(b, f, "mass", ge=0.0)
        com = r.vector(b, f, "com", 3, (0.0, 0.0, 0.0))
        if "inertia" in b and "radii_of_gyration" in b:
            r.fail(f"{f}.radii_of_gyration", "give either inertia or radii_of_gyration, not both")
        if "radii_of_gyration" in b:
            k = r.array(b["radii_of_gyration"], f"{f}.radii_of_gyration", [(3,)])
            if np.any(k < 0):
                r.fail(f"{f}.radii_of_gyration", f"radii of gyration must be >= 0 m, got {k.tolist()}")
            I = np.diag(mass * k**2)
            key = "radii_of_gyration"
        else:
            I = r.array(b.get("inertia", [0.0, 0.0, 0.0]), f"{f}.inertia", [(3,), (3, 3)])
            key = "inertia"
        body = Body(mass=mass, com=com, inertia=I)
    try:
        body.matrix(f"{r.source}: {f}")
    except ModelError as exc:
        r.fail(f"{f}.{key}", str(exc).split(": ", 2)[-1])
    return body


def _joint_q0(reader, b, f, joint):
    """(q0 of the joint, the key it came from) or None."""
    r = reader.r
    given = [k for k in ("q0", "q0_deg", "q0_xyz", "q0_rpy_deg") if k in b]
    if not given:
        return None
    if "q0" in given and len(given) > 1:
        r.fail(f"{f}.{given[1]}", "give either q0 (joint coordinates, SI) or q0_deg / q0_xyz / q0_rpy_deg, not both")
    if "q0" in given:
        return r.array(b["q0"], f"{f}.q0", None), "q0"
    if "q0_deg" in given:
        if joint.name not in ("revolute", "universal"):
            r.fail(f"{f}.q0_deg", f"q0_deg is for revolute and universal joints (angles in degrees), not {joint.name!r}; use q0")
        return np.deg2rad(r.array(b["q0_deg"], f"{f}.q0_deg", [(joint.nq,)])), "q0_deg"
    from .. import spatial
    from ..model import rpy_matrix

    if joint.name not in ("free", "spherical"):
        r.fail(f"{f}.{given[0]}", f"q0_xyz / q0_rpy_deg are for free and spherical joints, not {joint.name!r}; use q0")
    if "q0_xyz" in given and joint.name != "free":
        r.fail(f"{f}.q0_xyz", "a spherical joint has no position; use q0_rpy_deg")
    xyz = r.vector(b, f, "q0_xyz", 3, (0.0, 0.0, 0.0))
    rpy = np.deg2rad(r.vector(b, f, "q0_rpy_deg", 3, (0.0, 0.0, 0.0)))
    quat = spatial.matrix_to_quat(rpy_matrix(rpy))
    return (np.concatenate([xyz, quat]) if joint.name == "free" else quat), "q0"


def _unit_quaternions(reader, val, joint, where):
    sl = {"free": slice(3, 7), "spherical": slice(0, 4)}.get(joint.name)
    if sl is None:
        return val
    qn = float(np.linalg.norm(val[sl]))
    if not abs(qn - 1.0) <= 1e-3:
        reader.r.fail(where, f"the quaternion [qw, qx, qy, qz] = {val[sl].tolist()} has norm {qn:.6g}; expected a unit quaternion")
    val = val.copy()
    val[sl] = val[sl] / qn
    return val
