"""Cibicik et al. (2019)'s crane vessel in plain NumPy: the peer of the end-to-end benchmark.

This is the model a user would write by hand without jaxmbd, for SciPy's
``solve_ivp``: NumPy arrays, 6x6 Plücker matrices and Python loops over the
eight bodies.  It describes the same system as
``studies/crane_vessel_mc/system.py`` (``build(mc=..., location=...)``) and
takes its numbers from that ``System`` (every leaf read once with
``np.asarray``), but computes every load and acceleration itself:

* kinematics of the serial chain vessel (free joint) / q1 ... q7 (revolute),
  body twists and velocity-product accelerations;
* joint accelerations from the joint-space mass matrix (composite rigid
  bodies, with the vessel's infinite-frequency added mass, which acts on the
  reference point's acceleration in world axes: Tᵀ diag(R, R)ᵀ A(∞) diag(R, R) T
  in the vessel frame, and the velocity product −A(∞) [ω × ṗ; 0]) and the bias forces
  (recursive Newton-Euler with gravity and the external wrenches), solved with
  ``np.linalg.solve`` (jaxmbd uses the articulated-body algorithm instead);
* the vessel's hydrodynamics: buoyancy wrench and linear restoring, viscous
  roll damping, the radiation memory as a linear state-space model (its states
  are part of the ODE state), and the wave excitation as a sum over the wave
  components of the force RAO, interpolated bilinearly in frequency and
  heading here, ramped in over the first seconds;
* the platform's motion compensation (PD on its world roll and pitch, or on
  q1, q2 when "off") and the crane's joint PD on q3..q5, both with gravity
  compensation (a Newton-Euler pass at zero velocity and acceleration);
* the dynamic positioning as a linear spring-damper on surge, sway and yaw.

State vector (flat, as ``solve_ivp`` wants it): ``y = [q (14), v (13), z (n_rad)]``,
the concatenation of jaxmbd's state ``(q, v, z)`` from
``jaxmbd.simulation.initial_state``: q = [vessel x, y, z, qw, qx, qy, qz, q1 .. q7],
v = [vessel linear and angular velocity in the vessel frame, q̇1 .. q̇7],
z = the radiation states (the hydro element is the only one with states).

``CraneVesselNumpy(system).set_waves(components)`` takes one wave realisation
(amplitudes, frequencies, wavenumbers, directions and phases, e.g. the arrays of
``system.waves.realise(key)``); ``rhs(t, y)`` is then the right-hand side for
``scipy.integrate.solve_ivp`` and ``outputs(t, y)`` gives the payload sway and
the joint reaction wrenches at q1 and q3.  ``run_rk45`` and ``run_rk4`` drive it.
"""

from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------------------
# small helpers (linear-first spatial vectors, as in every seakeeping table)


def skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def cross(a, b):
    """a × b (``np.cross`` costs tens of microseconds on 3-vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def quat_to_matrix(q):
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def roll_pitch_yaw(R):
    """z-y-x Euler angles of R = Rz(ψ) Ry(θ) Rx(φ)."""
    return np.array(
        [
            math.atan2(R[2, 1], R[2, 2]),
            math.asin(min(1.0, max(-1.0, -R[2, 0]))),
            math.atan2(R[1, 0], R[0, 0]),
        ]
    )


def motion_transform(R, p):
    """6x6 transform of twists from the parent frame to the child frame whose pose in the parent is (R, p)."""
    Rt = R.T
    X = np.zeros((6, 6))
    X[:3, :3] = Rt
    X[:3, 3:] = -Rt @ skew(p)
    X[3:, 3:] = Rt
    return X


def crm(v):
    """Motion cross product matrix: crm(v) m = v × m for twists [linear; angular]."""
    X = np.zeros((6, 6))
    W = skew(v[3:])
    X[:3, :3] = W
    X[:3, 3:] = skew(v[:3])
    X[3:, 3:] = W
    return X


def crf(v):
    """Force cross product matrix: crf(v) f = v ×* f = −crm(v)ᵀ f."""
    return -crm(v).T


def _bracket(grid, x):
    """Index i and weight t with x ≈ (1 − t) grid[i] + t grid[i + 1], t clamped to [0, 1]."""
    i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    t = np.clip((x - grid[i]) / (grid[i + 1] - grid[i]), 0.0, 1.0)
    return i, t


# ---------------------------------------------------------------------------


class CraneVesselNumpy:
    """Cibicik et al. (2019)'s crane vessel (``studies/crane_vessel_mc/system.py``), NumPy only.

    ``system``: the jaxmbd ``System`` returned by ``build``; its numbers are
    copied here with ``np.asarray`` and nothing of jaxmbd is called afterwards.
    """

    N_BODIES = 8

    def __init__(self, system):
        from jaxmbd.control import JointPD, MotionCompensation
        from jaxmbd.forces import LinearMooring
        from jaxmbd.hydro import HydroBody
        from jaxmbd.joints import Free, Revolute

        model = system.model
        n = self.N_BODIES
        if model.parents != tuple(range(-1, n - 1)) or not isinstance(model.joints[0], Free) or not all(
            isinstance(j, Revolute) for j in model.joints[1:]
        ):
            raise ValueError("expected the crane vessel's chain: a free vessel and seven revolute joints in series")
        self.body_names = model.body_names
        self.nq, self.nv = model.nq, model.nv
        self.pl_R = np.asarray(model.placement_R, float)
        self.pl_p = np.asarray(model.placement_p, float)
        self.inertia = np.asarray(model.inertia, float)  # (8, 6, 6) rigid spatial inertias about body origins
        self.gravity = np.asarray(model.gravity, float)
        self.S = [np.eye(6)] + [np.concatenate([np.zeros(3), np.asarray(j.axis, float)])[:, None] for j in model.joints[1:]]
        self.axes = [None] + [np.asarray(j.axis, float) for j in model.joints[1:]]
        # R(a, q) = 1 + sin q K + (1 − cos q) K² with K = â, the joint frame's placement in front
        self._rot_terms = [None] + [
            (self.pl_R[i], self.pl_R[i] @ skew(a), self.pl_R[i] @ skew(a) @ skew(a)) for i, a in enumerate(self.axes) if i
        ]

        forces = system.forces
        hydro = next(f for f in forces if isinstance(f, HydroBody))
        mc = next(f for f in forces if isinstance(f, MotionCompensation))
        crane = next(f for f in forces if isinstance(f, JointPD))
        dp = next(f for f in forces if isinstance(f, LinearMooring))
        sway = next(f for f in forces if f.name == "sway")
        if hydro.bodies != ("vessel",) or dp.body != "vessel" or crane.integral or hydro.radiation is None:
            raise ValueError("expected hydrodynamics and DP on the vessel, a PD crane without integral action")

        # hydrodynamics of the vessel at its reference point r (vessel frame)
        self.r_ref = np.asarray(hydro.ref_body, float)[0]
        self.ref_world = np.asarray(hydro.ref_world, float)[0]
        self.A_inf = np.asarray(hydro.added_mass_inf, float)  # at the reference point, world axes
        self.T_ref = np.eye(6)
        self.T_ref[:3, 3:] = -skew(self.r_ref)  # vessel twist -> reference point velocity, vessel axes
        self.C_b = np.asarray(hydro.buoyancy_stiffness, float)
        self.W_b = np.asarray(hydro.buoyancy_wrench, float)
        self.B_v = np.asarray(hydro.linear_damping, float)
        self.D_q = np.asarray(hydro.quadratic_drag, float)
        self.rad_A = np.asarray(hydro.radiation.A, float)
        self.rad_B = np.asarray(hydro.radiation.B, float)
        self.rad_C = np.asarray(hydro.radiation.C, float)
        self.n_rad = self.rad_A.shape[0]
        self.ramp_time = float(hydro.ramp_time)
        self.bem_origin = np.asarray(hydro.origin, float)
        hd = hydro.hydro
        self.rao_omega = np.asarray(hd.omega, float)
        self.rao_heading = np.asarray(hd.wave_direction, float)
        self.rao = np.asarray(hd.excitation)[:, :, :6]  # (n_omega, n_heading, 6), complex, per unit amplitude
        self.rao_periodic = bool(hd.heading_periodic)
        self.excitation_on = bool(hydro.excitation_on)
        self.exc_re = self.exc_im = self.exc_omega = None

        # controllers
        self.mc_on = mc.mode == "on"
        self.mc_kp = np.asarray(mc.kp, float) * np.ones(2)
        self.mc_kd = np.asarray(mc.kd, float) * np.ones(2)
        self.mc_gravity = bool(mc.gravity_compensation)
        self.mc_joints = [model.index(mc.roll_joint), model.index(mc.pitch_joint)]
        self.platform = model.index(mc.platform)
        self.crane_joints = [model.index(j) for j in crane.joints]
        self.crane_set = np.asarray(crane.setpoint, float)
        self.crane_kp = np.asarray(crane.kp, float) * np.ones(len(crane.joints))
        self.crane_kd = np.asarray(crane.kd, float) * np.ones(len(crane.joints))
        self.crane_gravity = bool(crane.gravity_compensation)
        # dynamic positioning
        self.dp_point = np.asarray(dp.point, float)
        self.dp_reference = np.asarray(dp.reference, float)
        self.dp_K = np.asarray(dp.stiffness, float)
        self.dp_C = np.asarray(dp.damping, float)
        self.dp_pre = np.asarray(dp.pretension, float)
        # outputs
        self.sway_body = model.index(sway.body)
        self.sway_axis = np.asarray(sway.axis, float)
        self.report = {name: model.index(name) for name in system.report_joints}

    # -- layout ------------------------------------------------------------------

    @property
    def n_state(self) -> int:
        return self.nq + self.nv + self.n_rad

    def split(self, y):
        return y[: self.nq], y[self.nq : self.nq + self.nv], y[self.nq + self.nv :]

    def initial_state(self, q0):
        """Flat state at rest in configuration q0 (fluid at rest)."""
        q0 = np.asarray(q0, float).copy()
        q0[3:7] /= np.linalg.norm(q0[3:7])
        return np.concatenate([q0, np.zeros(self.nv), np.zeros(self.n_rad)])

    # -- waves -------------------------------------------------------------------

    def rao_at(self, omega, beta):
        """Force RAO at each component: bilinear in frequency (clamped) and heading (periodic)."""
        grid, table = self.rao_heading, self.rao
        iw, tw = _bracket(self.rao_omega, omega)
        if grid.size == 1:
            return (1 - tw)[:, None] * table[iw, 0] + tw[:, None] * table[iw + 1, 0]
        u = beta
        if self.rao_periodic:
            lo = grid[0]
            u = lo + np.mod(beta - lo, 2 * np.pi)
            if grid[-1] - lo < 2 * np.pi - 1e-9:
                grid = np.concatenate([grid, grid[:1] + 2 * np.pi])
                table = np.concatenate([table, table[:, :1]], axis=1)
            u = np.where(u > grid[-1] + 1e-9, u - 2 * np.pi, u)
        ib, tb = _bracket(grid, u)
        tw, tb = tw[:, None], tb[:, None]
        return ((1 - tw) * (1 - tb) * table[iw, ib] + tw * (1 - tb) * table[iw + 1, ib]
                + (1 - tw) * tb * table[iw, ib + 1] + tw * tb * table[iw + 1, ib + 1])

    def set_waves(self, waves):
        """Excitation of one realisation: c_j = a_j e^{−iφ_j} e^{i k_j x'_0} F̂(ω_j, β_j), (N, 6).

        ``waves``: anything with arrays ``amplitude``, ``omega``, ``wavenumber``,
        ``direction``, ``phase`` (jaxmbd's ``WaveComponents``), or None for calm water."""
        if waves is None or not self.excitation_on:
            self.exc_re = self.exc_im = self.exc_omega = None
            return self
        a, w, k, beta, phi = (np.asarray(getattr(waves, n), float)
                              for n in ("amplitude", "omega", "wavenumber", "direction", "phase"))
        F = self.rao_at(w, beta)
        shift = k * (self.bem_origin[0] * np.cos(beta) + self.bem_origin[1] * np.sin(beta))
        cF = (a * np.exp(-1j * phi) * np.exp(1j * shift))[:, None] * F
        self.exc_re, self.exc_im, self.exc_omega = cF.real.copy(), cF.imag.copy(), w.copy()
        return self

    def excitation(self, t):
        """Wave excitation at the reference point, world axes (6,): Re Σ c_j e^{−iω_j t}, ramped in."""
        if self.exc_re is None:
            return np.zeros(6)
        wt = self.exc_omega * t
        F = np.cos(wt) @ self.exc_re + np.sin(wt) @ self.exc_im
        if self.ramp_time > 0:
            F = F * 0.5 * (1.0 - math.cos(math.pi * min(max(t / self.ramp_time, 0.0), 1.0)))
        return F

    # -- kinematics and dynamics -------------------------------------------------------

    def kinematics(self, q, v):
        """Per body: transform from the parent X (6x6), world rotation and position, twist, c = v × v_J."""
        n = self.N_BODIES
        X, Rw, pw, vel, c = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        R0 = quat_to_matrix(q[3:7])
        R = self.pl_R[0] @ R0
        p = self.pl_p[0] + self.pl_R[0] @ q[:3]
        X[0], Rw[0], pw[0] = motion_transform(R, p), R, p
        vel[0] = v[:6].copy()
        c[0] = np.zeros(6)
        for i in range(1, n):
            P, PK, PK2 = self._rot_terms[i]  # placement_R @ rodrigues(axis, q)
            R = P + math.sin(q[6 + i]) * PK + (1.0 - math.cos(q[6 + i])) * PK2
            p = self.pl_p[i]
            X[i] = motion_transform(R, p)
            Rw[i] = Rw[i - 1] @ R
            pw[i] = pw[i - 1] + Rw[i - 1] @ p
            vJ = self.S[i][:, 0] * v[5 + i]
            vel[i] = X[i] @ vel[i - 1] + vJ
            c[i] = crm(vel[i]) @ vJ
        return X, Rw, pw, vel, c

    def _joint_forces(self, f):
        """Joint forces Sᵀ f from the transmitted wrenches: the vessel's six, then one per revolute joint."""
        return np.concatenate([f[0], [self.axes[i] @ f[i, 3:] for i in range(1, self.N_BODIES)]])

    def newton_euler(self, kin, vdot, f_ext, *, velocity=True, added_mass=True):
        """Body wrenches transmitted by each joint (recursive Newton-Euler): (8, 6), body frames.

        Gravity acts as the wrench I [Rᵀ g; 0] on each rigid inertia; the added mass takes part in
        the acceleration terms only (no weight, no velocity products)."""
        X, Rw, _, vel, c = kin
        n = self.N_BODIES
        f = np.zeros((n, 6))
        a_parent = None
        for i in range(n):
            # a_i = X_i a_parent + c_i + S_i v̇_i
            a = c[i].copy() if velocity else np.zeros(6)
            if i > 0:
                a += X[i] @ a_parent
            if vdot is not None:
                a += vdot[:6] if i == 0 else self.S[i][:, 0] * vdot[5 + i]
            a_parent = a
            I = self.inertia[i]
            Ia = I + self.added_mass(kin) if (i == 0 and added_mass) else I
            fi = Ia @ a - I[:, :3] @ (Rw[i].T @ self.gravity)
            if velocity:
                fi = fi + crf(vel[i]) @ (I @ vel[i])
            if f_ext is not None:
                fi = fi - f_ext[i]
            f[i] = fi
        for i in range(n - 1, 0, -1):
            f[i - 1] += X[i].T @ f[i]
        return f

    def added_mass(self, kin):
        """A(∞) as an inertia of the vessel about its origin, vessel axes, at this orientation."""
        R = kin[1][0]
        R6 = np.zeros((6, 6))
        R6[:3, :3] = R6[3:, 3:] = R
        M = R6 @ self.T_ref
        return M.T @ self.A_inf @ M

    def mass_matrix(self, kin):
        """Joint-space inertia (13x13) by composite rigid bodies, the added mass included."""
        X = kin[0]
        n = self.N_BODIES
        Ic = [self.inertia[i].copy() for i in range(n)]
        Ic[0] = Ic[0] + self.added_mass(kin)
        for i in range(n - 1, 0, -1):
            Ic[i - 1] = Ic[i - 1] + X[i].T @ Ic[i] @ X[i]
        M = np.zeros((self.nv, self.nv))
        dof = [slice(0, 6)] + [slice(5 + i, 6 + i) for i in range(1, n)]
        for i in range(n):
            F = Ic[i] @ self.S[i]
            M[dof[i], dof[i]] = self.S[i].T @ F
            j = i
            while j > 0:
                F = X[j].T @ F
                j -= 1
                M[dof[j], dof[i]] = self.S[j].T @ F
                M[dof[i], dof[j]] = M[dof[j], dof[i]].T
        return M

    # -- loads -------------------------------------------------------------------------

    def _point(self, kin, body, r):
        _, Rw, pw, vel, _ = kin
        tw = vel[body]
        return pw[body] + Rw[body] @ r, Rw[body] @ (tw[:3] + cross(tw[3:], r))

    def _add_wrench(self, f_ext, kin, body, r, F):
        """Add a world-axes wrench F = [force; moment] acting at body point r."""
        R = kin[1][body]
        fb = R.T @ F[:3]
        f_ext[body, :3] += fb
        f_ext[body, 3:] += cross(r, fb) + R.T @ F[3:]

    def vessel_motion(self, kin, r, origin):
        """Displacement η of vessel point r from ``origin`` (world) and its rate ν, world axes."""
        R, omega = kin[1][0], kin[1][0] @ kin[3][0][3:]
        pos, vel = self._point(kin, 0, r)
        return np.concatenate([pos - origin, roll_pitch_yaw(R)]), np.concatenate([vel, omega])

    def hydro_loads(self, t, kin, z):
        """(F at the reference point in world axes, excitation part, ż of the radiation states)."""
        eta, nu = self.vessel_motion(kin, self.r_ref, self.ref_world)
        exc = self.excitation(t)
        F = self.W_b - self.C_b @ eta - self.B_v @ nu - self.D_q * np.abs(nu) * nu - self.rad_C @ z + exc
        return F, exc, self.rad_A @ z + self.rad_B @ nu

    def added_mass_velocity_force(self, kin):
        """−A(∞) [ω × ṗ; 0]: the part of −A(∞) ν̇ that the accelerations do not carry (world axes)."""
        _, nu = self.vessel_motion(kin, self.r_ref, self.ref_world)
        return -self.A_inf @ np.concatenate([cross(nu[3:], nu[:3]), np.zeros(3)])

    def loads(self, t, q, v, z, kin):
        """External body wrenches (8, 6), joint forces (13,) and ż."""
        f_ext = np.zeros((self.N_BODIES, 6))
        F, _, zdot = self.hydro_loads(t, kin, z)
        self._add_wrench(f_ext, kin, 0, self.r_ref, F + self.added_mass_velocity_force(kin))
        eta, etadot = self.vessel_motion(kin, self.dp_point, self.dp_reference)
        self._add_wrench(f_ext, kin, 0, self.dp_point, -self.dp_K @ eta - self.dp_C @ etadot + self.dp_pre)

        tau = np.zeros(self.nv)
        grav = None
        if self.mc_gravity or self.crane_gravity:  # torques that hold the chain still against gravity
            grav = self._joint_forces(self.newton_euler(kin, None, None, velocity=False, added_mass=False))
        mi = [5 + i for i in self.mc_joints]
        if self.mc_on:
            rpy = roll_pitch_yaw(kin[1][self.platform])
            tau[mi] += -self.mc_kp * rpy[:2] - self.mc_kd * kin[3][self.platform][3:5]
        else:
            tau[mi] += -self.mc_kp * q[[6 + i for i in self.mc_joints]] - self.mc_kd * v[mi]
        if self.mc_gravity:
            tau[mi] += grav[mi]
        ci = [5 + i for i in self.crane_joints]
        tau[ci] += self.crane_kp * (self.crane_set - q[[6 + i for i in self.crane_joints]]) - self.crane_kd * v[ci]
        if self.crane_gravity:
            tau[ci] += grav[ci]
        return f_ext, tau, zdot

    # -- the right-hand side -------------------------------------------------------------

    def accelerations(self, t, y):
        q, v, z = self.split(y)
        q = q.copy()
        q[3:7] /= np.linalg.norm(q[3:7])
        kin = self.kinematics(q, v)
        f_ext, tau, zdot = self.loads(t, q, v, z, kin)
        h = self._joint_forces(self.newton_euler(kin, None, f_ext))
        vdot = np.linalg.solve(self.mass_matrix(kin), tau - h)
        return q, v, vdot, zdot, kin, f_ext

    def rhs(self, t, y):
        """dy/dt for ``scipy.integrate.solve_ivp``: [q̇, v̇, ż] (the quaternion is normalised where read)."""
        q, v, vdot, zdot, kin, _ = self.accelerations(t, y)
        w, x, yq, zq = q[3:7]
        ox, oy, oz = v[3:6]
        quat_dot = 0.5 * np.array([-x * ox - yq * oy - zq * oz, w * ox + yq * oz - zq * oy,
                                   w * oy + zq * ox - x * oz, w * oz + x * oy - yq * ox])
        return np.concatenate([kin[1][0] @ v[:3], quat_dot, v[6:], vdot, zdot])

    def outputs(self, t, y):
        """Payload sway θ1, θ2 (rad) and the reaction wrenches of the reported joints (body frames)."""
        q, v, vdot, zdot, kin, f_ext = self.accelerations(t, y)
        u = kin[1][self.sway_body] @ self.sway_axis
        out = {"sway/theta1": math.atan2(u[1], -u[2]), "sway/theta2": math.atan2(-u[0], math.hypot(u[1], u[2]))}
        if self.report:
            W = self.newton_euler(kin, vdot, f_ext)
            for name, i in self.report.items():
                out[f"joint/{name}/wrench"] = W[i].copy()
        return out

    def output_series(self, ts, ys):
        """Outputs along a trajectory: dict of arrays with a leading time axis."""
        rows = [self.outputs(t, y) for t, y in zip(ts, ys)]
        return {k: np.asarray([r[k] for r in rows]) for k in rows[0]}


# ---------------------------------------------------------------------------
# drivers


def run_rk45(peer, y0, duration, save_dt, *, rtol=1e-6, atol=1e-6):
    """``scipy.integrate.solve_ivp`` (RK45) over [0, duration], states at multiples of save_dt.

    Returns (times, states (n_save, n_state), number of right-hand-side evaluations)."""
    from scipy.integrate import solve_ivp

    ts = save_dt * np.arange(int(math.floor(duration / save_dt + 1e-9)) + 1)
    sol = solve_ivp(peer.rhs, (0.0, ts[-1]), y0, method="RK45", t_eval=ts, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.t, sol.y.T, sol.nfev


def run_rk4(peer, y0, duration, dt, save_dt):
    """Classical fixed-step RK4 in a Python loop, the quaternion renormalised after every step
    (what jaxmbd's fixed-step integrator does).  Returns (times, states, evaluations)."""
    per = int(round(save_dt / dt))
    n_save = int(math.floor(duration / (per * dt) + 1e-9)) + 1
    ys = np.empty((n_save, y0.size))
    ys[0] = y = np.asarray(y0, float).copy()
    f = peer.rhs
    step = 0
    for k in range(1, n_save):
        for _ in range(per):
            t = step * dt
            k1 = f(t, y)
            k2 = f(t + 0.5 * dt, y + 0.5 * dt * k1)
            k3 = f(t + 0.5 * dt, y + 0.5 * dt * k2)
            k4 = f(t + dt, y + dt * k3)
            y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
            y[3:7] /= np.linalg.norm(y[3:7])
            step += 1
        ys[k] = y
    return per * dt * np.arange(n_save), ys, 4 * step


# ---------------------------------------------------------------------------
# the benchmarked system


def build_system(mc="on", location="I", **overrides):
    """Cibicik et al. (2019)'s crane vessel from ``studies/crane_vessel_mc/system.py``: ``(System, q0)``."""
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    from studies.crane_vessel_mc.system import build

    system, q0 = build(mc, location, **overrides)
    return system, q0
