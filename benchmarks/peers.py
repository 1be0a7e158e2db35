"""The same models in Pinocchio and MuJoCo, and the maps between their states and ours.

* Pinocchio: built joint by joint from a jaxmbd ``Model`` (RX/RY/RZ for axis-aligned
  revolute joints, as Pinocchio's URDF parser does; free-flyer for Free).  q differs
  only in the free-flyer quaternion, scalar last in Pinocchio.
* MuJoCo: an MJCF string generated from the ``Model`` (nested bodies, hinge / slide /
  ball / free joints, full inertias).  Its free joint takes the linear velocity in the
  world frame (ours: body frame), so v, τ and v̇ are mapped accordingly.
"""

from __future__ import annotations

import numpy as np

from jaxmbd import spatial
from jaxmbd.joints import Fixed, Free, Prismatic, Revolute, Spherical

_AXES = {(1.0, 0.0, 0.0): "X", (0.0, 1.0, 0.0): "Y", (0.0, 0.0, 1.0): "Z"}


def _parts(model, i):
    m, c, Ic = spatial.inertia_parts(np.asarray(model.inertia[i]))
    return float(m), np.asarray(c, float), np.asarray(Ic, float)


def _check_supported(model):
    for name, j in zip(model.joint_names, model.joints):
        if not isinstance(j, (Free, Revolute, Prismatic, Spherical)):
            raise NotImplementedError(f"peer models: joint {name!r} of kind {j.name} is not mapped")


# ---------------------------------------------------------------------------
# Pinocchio


def pinocchio_model(model):
    import pinocchio as pin

    _check_supported(model)
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([np.asarray(model.gravity, float), np.zeros(3)]))
    ids = []
    for i, j in enumerate(model.joints):
        parent = 0 if model.parents[i] < 0 else ids[model.parents[i]]
        M = pin.SE3(np.asarray(model.placement_R[i], float), np.asarray(model.placement_p[i], float))
        if isinstance(j, Free):
            jm = pin.JointModelFreeFlyer()
        elif isinstance(j, Spherical):
            jm = pin.JointModelSpherical()
        elif isinstance(j, Revolute):
            ax = _AXES.get(tuple(float(a) for a in j.axis))
            jm = getattr(pin, f"JointModelR{ax}")() if ax else pin.JointModelRevoluteUnaligned(np.asarray(j.axis))
        else:
            ax = _AXES.get(tuple(float(a) for a in j.axis))
            jm = getattr(pin, f"JointModelP{ax}")() if ax else pin.JointModelPrismaticUnaligned(np.asarray(j.axis))
        jid = pm.addJoint(parent, jm, M, model.joint_names[i])
        m, c, Ic = _parts(model, i)
        pm.appendBodyToJoint(jid, pin.Inertia(m, c, Ic), pin.SE3.Identity())
        ids.append(jid)
    return pm


def to_pinocchio_q(model, Q):
    """(n, nq) ours -> Pinocchio's (quaternion scalar last in free-flyers and spherical joints)."""
    Q = np.array(Q, dtype=float, copy=True)
    for i, j in enumerate(model.joints):
        s = model.q_start[i]
        if isinstance(j, Free):
            Q[:, s + 3 : s + 7] = Q[:, [s + 4, s + 5, s + 6, s + 3]]
        elif isinstance(j, Spherical):
            Q[:, s : s + 4] = Q[:, [s + 1, s + 2, s + 3, s]]
    return Q


# ---------------------------------------------------------------------------
# MuJoCo


def _fmt(x):
    return " ".join(f"{float(v):.17g}" for v in np.ravel(x))


def mjcf(model, name: str = "model") -> str:
    """MJCF text of a jaxmbd Model (no geoms: nothing collides; timing is of the dynamics)."""
    _check_supported(model)
    kids = {}
    for i, lam in enumerate(model.parents):
        kids.setdefault(lam, []).append(i)

    def body(i, indent):
        j = model.joints[i]
        R = np.asarray(model.placement_R[i], float)
        p = np.asarray(model.placement_p[i], float)
        quat = spatial.matrix_to_quat(R)
        m, c, Ic = _parts(model, i)
        full = [Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2]]
        pad = "  " * indent
        out = [f'{pad}<body name="{model.body_names[i]}" pos="{_fmt(p)}" quat="{_fmt(quat)}">']
        out.append(f'{pad}  <inertial pos="{_fmt(c)}" mass="{m:.17g}" fullinertia="{_fmt(full)}"/>')
        jn = model.joint_names[i]
        if isinstance(j, Free):
            out.append(f'{pad}  <freejoint name="{jn}"/>')
        elif isinstance(j, Spherical):
            out.append(f'{pad}  <joint name="{jn}" type="ball"/>')
        elif isinstance(j, Revolute):
            out.append(f'{pad}  <joint name="{jn}" type="hinge" axis="{_fmt(j.axis)}"/>')
        elif isinstance(j, Prismatic):
            out.append(f'{pad}  <joint name="{jn}" type="slide" axis="{_fmt(j.axis)}"/>')
        for k in kids.get(i, []):
            out.extend(body(k, indent + 1))
        out.append(f"{pad}</body>")
        return out

    lines = [
        f'<mujoco model="{name}">',
        '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
        f'  <option gravity="{_fmt(model.gravity)}" timestep="0.001" integrator="Euler">',
        '    <flag contact="disable" constraint="disable"/>',
        "  </option>",
        "  <worldbody>",
    ]
    for i in kids.get(-1, []):
        lines.extend(body(i, 2))
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines)


def _free_rotations(model, Q):
    """World rotation of each free joint's child frame for each state: {i: (n, 3, 3)}.  Only root
    free joints (parent = world, identity placement is not assumed) are mapped."""
    out = {}
    for i, j in enumerate(model.joints):
        if isinstance(j, Free):
            if model.parents[i] >= 0:
                raise NotImplementedError("MuJoCo map: only free joints under the world")
            s = model.q_start[i]
            Rq = np.asarray(spatial.quat_to_matrix(np.asarray(Q[:, s + 3 : s + 7])))
            out[i] = np.einsum("ij,njk->nik", np.asarray(model.placement_R[i], float), Rq)
    return out


def to_mujoco(model, Q, V, T):
    """Our (q, v, τ) -> MuJoCo's (qpos, qvel, qfrc_applied): free-joint linear velocity and force in
    the world frame (the power τ·v is the same in both)."""
    Q, V, T = (np.array(x, dtype=float, copy=True) for x in (Q, V, T))
    for i, R in _free_rotations(model, Q).items():
        s, sv = model.q_start[i], model.v_start[i]
        P = np.asarray(model.placement_R[i], float)
        Q[:, s : s + 3] = np.asarray(model.placement_p[i], float) + Q[:, s : s + 3] @ P.T
        Q[:, s + 3 : s + 7] = np.asarray(spatial.quat_multiply(spatial.matrix_to_quat(P)[None, :], Q[:, s + 3 : s + 7]))
        V[:, sv : sv + 3] = np.einsum("nij,nj->ni", R, V[:, sv : sv + 3])
        T[:, sv : sv + 3] = np.einsum("nij,nj->ni", R, T[:, sv : sv + 3])
    return Q, V, T


def from_mujoco_qacc(model, Q, V, A):
    """MuJoCo's qacc -> our v̇ (free joint: world-frame linear acceleration of the origin)."""
    A = np.array(A, dtype=float, copy=True)
    for i, R in _free_rotations(model, Q).items():
        sv = model.v_start[i]
        vl, w = V[:, sv : sv + 3], V[:, sv + 3 : sv + 6]
        # d/dt (R v) = R (v̇ + ω × v)  =>  v̇ = Rᵀ a_world − ω × v
        A[:, sv : sv + 3] = np.einsum("nji,nj->ni", R, A[:, sv : sv + 3]) - np.cross(w, vl)
    return A


def mujoco_check(model, mjm, Q, V, T, ours_qdd, ours_M):
    """Largest relative differences (mass matrix, accelerations) between MuJoCo and jaxmbd on the
    first state: a check that the generated MJCF is the same model."""
    import mujoco

    d = mujoco.MjData(mjm)
    Qm, Vm, Tm = to_mujoco(model, Q[:1], V[:1], T[:1])
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = Qm[0], Vm[0], Tm[0]
    mujoco.mj_forward(mjm, d)
    Mm = np.zeros((mjm.nv, mjm.nv))
    mujoco.mj_fullM(mjm, d, Mm)
    # v_ours = A v_mj with A = blockdiag(Rᵀ, 1): M_mj = Aᵀ M A
    Amap = np.eye(model.nv)
    for i, R in _free_rotations(model, Q[:1]).items():
        sv = model.v_start[i]
        Amap[sv : sv + 3, sv : sv + 3] = R[0].T
    M_expect = Amap.T @ np.asarray(ours_M) @ Amap
    qdd = from_mujoco_qacc(model, Q[:1], V[:1], d.qacc[None, :])[0]
    rel = lambda a, b: float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))  # noqa: E731
    return rel(Mm, M_expect), rel(qdd, np.asarray(ours_qdd))
