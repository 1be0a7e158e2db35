"""The hydrodynamic force element: linear potential flow on one or several floating bodies.

For the bodies' displacements η and velocities ν (surge, sway, heave, roll,
pitch, yaw of each hydrodynamic reference point from its equilibrium, in the
equilibrium frame; docs/conventions.md), Cummins' equation gives the loads

    F = F_exc(t) − A(∞) ν̇ − ∫₀ᵗ K(t − τ) ν(τ) dτ − C_b η + W_b − B_v ν − D |ν − u_c| (ν − u_c)

* A(∞) multiplies ν̇, the acceleration of the reference points in the equilibrium (world) frame, as in
  the linear seakeeping model; with ν_k = T_k(q) V_k (V_k the body twist, T_k = diag(R_k, R_k) [[1, −r̂_k],
  [0, 1]]) its force on body k is −T_kᵀ Σ_l A_kl (T_l a_l + Ṫ_l V_l): an inertia T_kᵀ A_kl T_l that turns
  with the body (:meth:`extra_inertia`, inside the articulated-body recursion; coupling blocks between
  bodies through the mass-matrix route of :class:`~jaxmbd.system.System`) and the velocity product
  −T_kᵀ Σ_l A_kl [ω_l × ṗ_l; 0] (a wrench of :meth:`contribution`).  No Munk moment and no body-frame
  gyroscopic terms arise: a pure heave push makes no surge, and a body coasting in a straight line stays
  on it (docs/hydro.md, "Frames").
* The memory integral is the state-space model of :mod:`.radiation` (internal states of this element).
* Excitation: F_exc = Re Σ_j A_j F̂(ω_j, β_j) e^{−iω_j t}, with the RAO interpolated onto each wave
  component once per realisation (:meth:`prepare`).
* Hydrostatics: the model applies the weight of every body exactly; this
  element adds the buoyancy: a constant wrench W_b = ρ g V through the
  centre of buoyancy at rest, and the linear buoyancy stiffness
  C_b = C − C_g, the file's restoring matrix C (Capytaine's and WAMIT's
  include the weight's −m g z_G terms) less the linearised weight C_g of the
  mass it was computed with.
* Optional: extra linear damping B_v (viscous roll damping, a PTO) and quadratic drag D (diagonal), on the
  velocity through the water: u_c the sea's current at the reference point (translations), fading in with
  the excitation.

Non-linear hydrostatics and Froude-Krylov force (``hydrostatics = "nonlinear"``,
``froude_krylov = "nonlinear"``, each body given a closed hull, :mod:`.hull`), the weakly
non-linear model of WEC-Sim's non-linear hydro and OrcaFlex's non-linear hydrostatics:

* ``hydrostatics = "nonlinear"``: the still-water pressure −ρ g z is integrated over the part of
  the hull under the still waterline in its instantaneous pose, every evaluation
  (:mod:`.pressure`); the constant buoyancy W_b and the linear stiffness C_b are left out.  The
  excitation (Froude-Krylov and diffraction) stays the BEM's, linear.
* ``froude_krylov = "nonlinear"`` (with non-linear hydrostatics): the hull is cut by the incident
  wave's surface ζ(x, y, t) instead, and the pressure over its wetted part is
  ρ g (ζ_d(x, y, z, t) − z), ζ_d the incident wave's dynamic pressure head (e^{kz} or its
  finite-depth form, held at its z = 0 value above the still waterline); the excitation is then
  the diffraction force only: the BEM's total less the linear Froude-Krylov force of the same
  hull's mean wetted surface (computed once per realisation), so nothing is counted twice.
* In both, radiation (A(∞), the memory) and diffraction stay linear about the equilibrium, and
  gravity stays in the model.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import spatial
from ..errors import InputError
from ..kinematics import attitude, placements
from ..model import Model
from ..system import Context, Contribution, ForceElement
from .bem import HydroData
from .hull import HullMesh, posed_corners
from .pressure import buoyancy, incident_wave, panel_loads, pressure_loads
from .radiation import RadiationStateSpace, consistent_added_mass_inf, fit_radiation
from .waves import complex_amplitudes, ramp


def gravity_stiffness(mass, com_rel, g=9.81):
    """Linearised restoring matrix of a weight m g at ``com_rel`` from the reference point (6x6).

    The moment of −m g e_z about the reference point after a small rotation α
    changes by m g (r_z α − r α_z), so C_g[3:, 3:] = −m g (r_z 1 − r e_zᵀ):
    −m g z_G on roll and pitch, +m g x_G, +m g y_G in the roll-yaw and
    pitch-yaw entries (the terms Capytaine adds for the weight).
    """
    r = np.asarray(com_rel, float)
    C = np.zeros((6, 6))
    C[3:, 3:] = -mass * g * (r[2] * np.eye(3) - np.outer(r, [0.0, 0.0, 1.0]))
    return C


def _hulls_in_body_frames(model, name, bodies, hulls, hydrostatics, froude_krylov, origin, pw) -> tuple:
    """The hulls (BEM frame at rest) in their bodies' frames, after the checks of the modes."""
    for key, val in (("hydrostatics", hydrostatics), ("froude_krylov", froude_krylov)):
        if val not in ("linear", "nonlinear"):
            raise InputError(f"hydro element {name!r}: {key} must be 'linear' or 'nonlinear', got {val!r}")
    if froude_krylov == "nonlinear" and hydrostatics != "nonlinear":
        raise InputError(f"hydro element {name!r}: froude_krylov = 'nonlinear' integrates the wave's pressure over the "
                         "instantaneous wetted hull, which needs hydrostatics = 'nonlinear' too")
    if hydrostatics == "linear":
        return ()
    hulls = tuple(hulls or ())
    if len(hulls) != len(bodies) or any(h is None for h in hulls):
        raise InputError(f"hydro element {name!r}: hydrostatics = 'nonlinear' needs a closed hull for each of its {len(bodies)} "
                         "bodies (hulls=..., or hull, box depth or cylinder height in a system file)")
    # BEM frame -> body frame: the bodies' axes are the world's at rest (checked by create)
    return tuple(HullMesh(np.asarray(h.vertices, float) + origin - np.asarray(pw[model.index(b)]), h.triangles, h.source)
                 for h, b in zip(hulls, bodies))


def _carried_masses(model, q, bodies) -> tuple:
    """Per hydro body: the mass [kg] and centre of gravity (world, at ``q``) of the model bodies it
    carries (itself and every body below it that is not below another hydro body)."""
    from ..spatial import inertia_parts

    Rw, pw = (np.asarray(a) for a in placements(model, q))
    m, c, _ = (np.asarray(a) for a in inertia_parts(model.inertia))
    owner = {}
    for i in range(model.n_bodies):
        chain = (i,) + tuple(model.ancestors(i))
        hits = [b for b in chain if model.body_names[b] in bodies]
        if hits:
            owner.setdefault(hits[0], []).append(i)
    out = []
    for b in bodies:
        idx = owner.get(model.index(b), [])
        mass = float(sum(m[i] for i in idx))
        cog = sum(m[i] * (pw[i] + Rw[i] @ c[i]) for i in idx) / mass
        out.append((mass, tuple(float(x) for x in cog)))
    return tuple(out)


class ExcitationTable(eqx.Module):
    """Excitation force at t0 + k h (rows), looked up at times on that grid (a fixed-step solver's
    stage times); built by :meth:`HydroBody.tabulate`."""

    t0: jnp.ndarray
    h: jnp.ndarray
    values: jnp.ndarray  # (n + 1, 6 nb)

    def at(self, t):
        k = jnp.clip(jnp.round((t - self.t0) / self.h).astype(jnp.int32), 0, self.values.shape[0] - 1)
        return self.values[k]


_VALIDITY_DOC = (  # (entry, range, beyond it): the docs' validity table of [[hydro]]
    ('`[[hydro]]` (linear hydrostatics, radiation, excitation)',
     'roll and pitch of each body within ±15°',
     'the waterplane and wetted hull have changed too much for a restoring matrix; a deck edge immerses or a bilge emerges on most '
     'hulls before that (a barge of beam B and freeboard f at atan(2f/B))'),
    ('`[[hydro]]` with `box = {...}`',
     'the lowest bilge corner under, and with `depth` the lowest deck corner above, the still waterline',
     "a wall-sided hull's restoring changes as the bilge emerges or the deck edge immerses (green water starts earlier in waves, "
     'whose elevation the check leaves out)'),
    ('`[[hydro]]` with `hydrostatics = "nonlinear"`',
     "roll and pitch within ±15° (its radiation and diffraction stay linear); and within each hull's angle of vanishing stability "
     '(its GZ curve at rest, both sides, the weaker one)',
     'capsize: the run reports it with its first time and the realisations that did'),
    ('`[[hydro]]` with `hydrostatics = "nonlinear"` and the linear `froude_krylov`',
     "the incident wave's elevation within the hull's lowest freeboard",
     "the linear wave force takes the wave's waterline on the hull's sides; a crest over the deck edge leaves the still-water "
     'restoring to fall while that force goes on (`froude_krylov = "nonlinear"` has no such range)'),
)


class HydroBody(ForceElement):
    """Linear hydrodynamic loads on the model bodies ``bodies`` (one per body of ``hydro``).

    Build it with :meth:`create`, which finds each body's equilibrium pose in
    the model, fits the radiation memory and separates buoyancy from weight.
    States: the radiation memory.  Outputs: ``excitation`` (6nb,), ``radiation``
    (6nb,), ``eta`` (6nb,): the loads at the reference points in world axes and
    the displacements; ``wave_elevation`` (m, with waves): the incident wave at the BEM
    frame's origin (``origin``), without the excitation's ramp.
    """
    validity_doc: ClassVar[tuple] = _VALIDITY_DOC

    name: str = eqx.field(static=True)
    bodies: tuple = eqx.field(static=True)
    hydro: HydroData
    radiation: RadiationStateSpace | None
    added_mass_inf: jnp.ndarray  # (6nb, 6nb) A(∞) used in the time domain
    ref_world: jnp.ndarray  # (nb, 3) reference points at rest, world
    ref_body: jnp.ndarray  # (nb, 3) reference points in body coordinates
    buoyancy_stiffness: jnp.ndarray  # (6nb, 6nb)
    buoyancy_wrench: jnp.ndarray  # (6nb,) at the reference points, world axes
    linear_damping: jnp.ndarray  # (6nb, 6nb)
    quadratic_drag: jnp.ndarray  # (6nb,)
    origin: jnp.ndarray  # (3,) world position of the BEM frame's origin
    coupled_pairs: tuple = eqx.field(static=True, default=())  # (k, l) hydro bodies with A(∞) coupling
    excitation_on: bool = eqx.field(static=True, default=True)
    ramp_time: float = eqx.field(static=True, default=0.0)
    # per hydro body: (length, beam, draught, depth or None) of a box hull, or None (validity checks only)
    hull_boxes: tuple = eqx.field(static=True, default=())
    # per hydro body: its closed hull in body coordinates (non-linear hydrostatics), or None
    hulls: tuple = ()
    hydrostatics: str = eqx.field(static=True, default="linear")
    froude_krylov: str = eqx.field(static=True, default="linear")
    # per hydro body with a hull: (mass [kg], centre of gravity (3,) [m], world at rest) of the bodies it
    # carries at rest, for its stability curve (the capsize check)
    carried: tuple = eqx.field(static=True, default=())

    # -- structure -----------------------------------------------------------------

    smooth_at_rest = property(lambda self: self.hydrostatics == "linear")  # a non-linear hull's panels meet the waterline

    @property
    def n_states(self) -> int:
        return 0 if self.radiation is None else self.radiation.n_states

    def initial_state(self, model, q, v):
        return jnp.zeros(self.n_states, dtype=model.inertia.dtype)

    def _reference_map(self, ctx: Context, k):
        """T_k (6x6) with ν_k = T_k V_k: the body twist to the reference point's velocity and the
        angular velocity, both in world axes; T = [[R, −R r̂], [0, R]], written element-wise."""
        R = ctx.kin.rotation(ctx.body_index(self.bodies[k]))
        r = self.ref_body[k].astype(R.dtype)
        # −R r̂, column by column: −R (r × e_j)
        Rr = jnp.stack([R[:, 2] * r[1] - R[:, 1] * r[2], R[:, 0] * r[2] - R[:, 2] * r[0],
                        R[:, 1] * r[0] - R[:, 0] * r[1]], -1)
        zero = jnp.zeros_like(R)
        return jnp.concatenate([jnp.concatenate([R, Rr], 1), jnp.concatenate([zero, R], 1)], 0)

    def _block_inertia(self, ctx: Context, k, l):
        """A(∞) block (k, l) as an inertia between the body frames: T_kᵀ A_kl T_l."""
        A = self.added_mass_inf[6 * k : 6 * k + 6, 6 * l : 6 * l + 6].astype(ctx.R.dtype)
        Tk, Tl = self._reference_map(ctx, k), self._reference_map(ctx, l)
        return Tk.T @ A @ Tl

    def extra_inertia(self, ctx: Context):
        model = ctx.model
        blocks = {model.index(b): self._block_inertia(ctx, k, k) for k, b in enumerate(self.bodies)}
        # stacked, not scattered into zeros: the bodies without a block keep literal zeros
        zero = jnp.zeros((6, 6), dtype=ctx.R.dtype)
        return jnp.stack([blocks.get(i, zero) for i in range(model.n_bodies)])

    def coupled_inertia(self, ctx: Context):
        """Off-diagonal A(∞) blocks between different bodies: list of (i, j, 6x6) or []."""
        # which blocks are non-zero is decided once, from concrete data, in create()
        model = ctx.model
        return [
            (model.index(self.bodies[k]), model.index(self.bodies[l]), self._block_inertia(ctx, k, l))
            for k, l in self.coupled_pairs
        ]

    def _added_mass_velocity_force(self, nu):
        """−A(∞) Ṫ V: the part of −A(∞) ν̇ that does not depend on the accelerations (6nb,), world axes
        at the reference points.  d/dt (R_k (v + ω × r)) = R_k (a_lin + ω̇ × r) + ω_w × ṗ_ref, and
        d/dt (R_k ω) = R_k ω̇: only the linear rows carry a velocity product."""
        nb = len(self.bodies)
        n = nu.reshape(nb, 2, 3)
        c = spatial.cross(n[:, 1], n[:, 0])  # (nb, 3): ω × ṗ of each body
        A = self.added_mass_inf.astype(nu.dtype).reshape(6 * nb, nb, 2, 3)[:, :, 0, :]  # the columns of ṗ
        return -jnp.sum(A * c[None], axis=(1, 2))

    # -- per realisation ---------------------------------------------------------------

    def prepare(self, waves):
        """Complex excitation coefficients c_j = A_j F̂(ω_j, β_j) e^{i k_j x'_0} (n_components, 6nb)."""
        if waves is None or not self.excitation_on:
            return None
        F = self.hydro.excitation_at(waves.omega, waves.direction)
        shift = waves.wavenumber * (self.origin[0] * jnp.cos(waves.direction) + self.origin[1] * jnp.sin(waves.direction))
        c = complex_amplitudes(waves) * jnp.exp(1j * shift)
        # the excitation's 6nb columns, then the incident elevation at the origin (an output)
        cF = jnp.concatenate([c[:, None] * F, c[:, None].astype(F.dtype)], axis=1)
        if self.froude_krylov == "nonlinear":
            cF = cF.at[:, :-1].add(-self._linear_froude_krylov(waves))
        # real and imaginary parts apart: the integrator carries only real arrays; in the hydrodynamic
        # data's precision (waves are drawn in float64; a float32 system stays float32)
        real = jnp.real(F).dtype
        return (jnp.real(cF).astype(real), jnp.imag(cF).astype(real), waves.omega.astype(real))

    def _linear_froude_krylov(self, waves):
        """c_j F̂_FK,j (n_components, 6nb): the linear Froude-Krylov force of each wave component on
        the hulls' mean wetted surface (at rest, under z = 0), at the reference points in world axes,
        with the pressure of :func:`~.pressure.incident_wave` (so it cancels the non-linear one's
        first-order part exactly)."""
        from .pressure import depth_factor

        rho, g = float(self.hydro.rho), float(self.hydro.g)
        A = complex_amplitudes(waves)
        out = []
        for k, hull in enumerate(self.hulls):
            origin_body = self.ref_world[k] - self.ref_body[k]  # the body frame's origin at rest
            corners = (jnp.asarray(hull.vertices) + origin_body)[hull.triangles.indices]  # (n, 3, 3)
            xp = corners[..., :1] * jnp.cos(waves.direction) + corners[..., 1:2] * jnp.sin(waves.direction)  # (n, 3, nc)
            P = rho * g * A * depth_factor(waves.wavenumber, corners[..., 2:3], self.hydro.water_depth) * jnp.exp(1j * waves.wavenumber * xp)
            F, M, _ = pressure_loads(corners, corners[..., 2], jnp.concatenate([jnp.real(P), jnp.imag(P)], -1), self.ref_world[k])
            nc = P.shape[-1]
            out.append(jnp.concatenate([F[:nc] + 1j * F[nc:], M[:nc] + 1j * M[nc:]], axis=1))
        return jnp.concatenate(out, axis=1)

    def _ramp(self, t):
        return ramp(t, self.ramp_time)

    def pressure_wrenches(self, ctx: Context):
        """The non-linear hydrostatic (and Froude-Krylov) loads of every hydro body: (nb, 6) body-frame
        wrenches about the body origins, and (6nb,) the same at the reference points in world axes."""
        rho, g = float(self.hydro.rho), float(self.hydro.g)
        dtype = ctx.p.dtype
        waves = ctx.waves if (self.froude_krylov == "nonlinear" and self.excitation_on) else None
        body, world = [], []
        for k, (b, hull) in enumerate(zip(self.bodies, self.hulls)):
            i = ctx.body_index(b)
            R, p = ctx.kin.rotation(i), ctx.kin.origin(i)
            if waves is None:  # still water: ρ g V through the centre of buoyancy
                F, M = buoyancy(posed_corners(hull, R, p), p, rho * g)
            else:  # the wave at each vertex once, then the panels' corners
                verts = p + jnp.asarray(hull.vertices, dtype=dtype) @ R.T
                zeta, dyn = incident_wave(waves, verts, ctx.t, self.hydro.water_depth, self._ramp(ctx.t))
                tri = hull.triangles.indices.T  # (3, n)
                corners = verts[tri].transpose(2, 0, 1)
                d, head = (verts[:, 2] - zeta)[tri], (dyn - verts[:, 2])[tri]
                F, M, _ = panel_loads(corners, d, (rho * g * head)[None], p)
                F, M = F[0], M[0]
            body.append(jnp.concatenate([spatial.mtv(R, F), spatial.mtv(R, M)]))
            ref = ctx.point_position(i, self.ref_body[k].astype(dtype))
            world.append(jnp.concatenate([F, M + spatial.cross(p - ref, F)]))
        return jnp.stack(body), jnp.concatenate(world)

    # -- loads ---------------------------------------------------------------------

    def _motion(self, ctx: Context):
        etas, nus = [], []
        for k, b in enumerate(self.bodies):
            i = ctx.body_index(b)
            pos, vel = ctx.point(b, self.ref_body[k])
            ang, w = attitude(ctx, i)
            etas.append(jnp.concatenate([pos - self.ref_world[k], ang]))
            nus.append(jnp.concatenate([vel, w]))
        return jnp.concatenate(etas), jnp.concatenate(nus)

    def _current(self, ctx: Context, eta):
        """(6nb,): the sea's current at each reference point (translations; fading in with the excitation, as a Morison element's)."""
        if ctx.waves is None or ctx.waves.current is None:
            return None  # still water: nothing to subtract (no work added to a run without a current)
        z = eta.reshape(-1, 6)[:, 2] + self.ref_world[:, 2]
        u = jax.vmap(ctx.waves.current.velocity)(z).astype(eta.dtype) * self._ramp(ctx.t)
        return jnp.concatenate([u, jnp.zeros_like(u)], -1).reshape(-1)

    def tabulate(self, prepared, t0, h, n):
        """The excitation (without the ramp) at t0 + k h, k = 0..n, as an :class:`ExcitationTable`.

        Phasors by blocks, e^{iω(t0 + (aB + b)h)} = e^{iω(t0 + aBh)} e^{iωbh}, so the table costs
        about 2 (n/B + B) trigonometric evaluations per component instead of 2n (a fixed-step RK4
        run evaluates the excitation four times per step, at three distinct times)."""
        if prepared is None or isinstance(prepared, ExcitationTable):
            return prepared
        re, im, omega = prepared
        B = max(1, int(np.ceil(np.sqrt(n + 1))))
        nA = int(np.ceil((n + 1) / B))
        ta = t0 + B * h * jnp.arange(nA, dtype=omega.dtype)
        tb = h * jnp.arange(B, dtype=omega.dtype)
        ca, sa = jnp.cos(omega * ta[:, None]), jnp.sin(omega * ta[:, None])  # (nA, nc)
        cb, sb = jnp.cos(omega * tb[:, None]), jnp.sin(omega * tb[:, None])  # (B, nc)

        def block(a):
            c = ca[a][None, :] * cb - sa[a][None, :] * sb  # cos(ω(ta + tb)), (B, nc)
            s = sa[a][None, :] * cb + ca[a][None, :] * sb
            return c @ re + s @ im

        values = jax.lax.map(block, jnp.arange(nA)).reshape(nA * B, -1)[: n + 1].astype(re.dtype)
        return ExcitationTable(jnp.asarray(t0, dtype=omega.dtype), jnp.asarray(h, dtype=omega.dtype), values)

    def _excitation_and_elevation(self, t, prepared):
        if isinstance(prepared, ExcitationTable):
            return prepared.at(t)
        re, im, omega = prepared
        wt = omega * t
        return jnp.cos(wt) @ re + jnp.sin(wt) @ im

    def wave_elevation(self, t, prepared):
        """The incident wave's elevation ζ(t) at ``origin`` (the hydrodynamic reference in the world's
        x-y plane) [m], without the ramp; None without waves."""
        if prepared is None:
            return None
        dtype = prepared.values.dtype if isinstance(prepared, ExcitationTable) else prepared[0].dtype
        return self._excitation_and_elevation(t, prepared)[-1].astype(dtype)

    def sea_density(self) -> float:
        """The density the hydrodynamic data were computed for (kg/m³): the sea's."""
        return float(self.hydro.rho)

    def excitation_force(self, t, prepared):
        if prepared is None:
            return None
        F = self._excitation_and_elevation(t, prepared)[:-1]
        dtype = prepared.values.dtype if isinstance(prepared, ExcitationTable) else prepared[0].dtype
        if self.ramp_time > 0:
            F = F * self._ramp(t)
        # the solvers pass the time in float64 even in a float32 run (a precise clock and table lookup);
        # the force keeps the coefficients' dtype
        return F.astype(dtype)

    def loads(self, ctx: Context, z):
        """(F, excitation, radiation, eta, nu, zdot): the loads at the reference points in world axes
        (without the non-linear pressure's, :meth:`pressure_wrenches`), the excitation and radiation
        parts of F, the displacements and velocities, the memory's state derivative."""
        eta, nu = self._motion(ctx)
        rel = nu if (current := self._current(ctx, eta)) is None else nu - current  # the drag's: through the water
        F = -self.linear_damping @ nu - self.quadratic_drag * jnp.abs(rel) * rel
        if self.hydrostatics == "linear":
            F = F + self._linear_hydrostatics(eta)
        rad = jnp.zeros_like(F) if self.radiation is None else self.radiation.force(z)
        exc = self.excitation_force(ctx.t, ctx.prepared.get(self.name) if ctx.prepared else None)
        exc = jnp.zeros_like(F) if exc is None else exc
        zdot = None if self.radiation is None else self.radiation.derivative(z, nu)
        return F + rad + exc, exc, rad, eta, nu, zdot

    def _linear_hydrostatics(self, eta):
        return self.buoyancy_wrench - self.buoyancy_stiffness @ eta

    def contribution(self, ctx: Context, z) -> Contribution:
        F, _, _, _, nu, zdot = self.loads(ctx, z)
        F = F + self._added_mass_velocity_force(nu)
        f_ext = ctx.zeros_f_ext()
        for k, b in enumerate(self.bodies):
            i = ctx.body_index(b)
            Fk = F[6 * k : 6 * k + 6]
            f_ext = ctx.add_point_force(f_ext, b, self.ref_body[k], Fk[:3])
            f_ext = f_ext.at[i, 3:].add(spatial.mtv(ctx.kin.rotation(i), Fk[3:]))
        if self.hydrostatics == "nonlinear":
            wrenches, _ = self.pressure_wrenches(ctx)
            for k, b in enumerate(self.bodies):
                f_ext = f_ext.at[ctx.body_index(b)].add(wrenches[k].astype(f_ext.dtype))
        return Contribution(f_ext=f_ext, zdot=zdot)

    def valid_ranges(self, model) -> tuple:
        return hydro_valid_ranges(self, model)

    def stability_curves(self, heel_deg=None):
        """The GZ curves of the hulls (:func:`hydro_stability_curves`)."""
        return hydro_stability_curves(self, heel_deg)

    def freeboards(self) -> list:
        """Each hull's freeboard at rest (:func:`hydro_freeboards`)."""
        return hydro_freeboards(self)

    def output_units(self, model) -> dict:
        loads = "N (surge sway heave), N m (roll pitch yaw)"  # per DOF, as the outputs' components are named
        return {"excitation": loads, "radiation": loads, "hydrostatic": loads,
                "eta": "m (surge sway heave), rad (roll pitch yaw)", "wave_elevation": "m"}

    def outputs(self, ctx: Context, z) -> dict:
        _, exc, rad, eta, _, _ = self.loads(ctx, z)
        if self.hydrostatics == "nonlinear":
            hs = self.pressure_wrenches(ctx)[1]
        else:
            hs = self._linear_hydrostatics(eta)
        out = {"excitation": exc, "radiation": rad, "hydrostatic": hs.astype(exc.dtype), "eta": eta}
        zeta = self.wave_elevation(ctx.t, ctx.prepared.get(self.name) if ctx.prepared else None)
        if zeta is not None:
            out["wave_elevation"] = zeta
        return out


def create_hydro_body(
    model: Model,
    hydro: HydroData,
    *,
    name: str = "hydro",
    bodies=None,
    q_equilibrium=None,
    origin=(0.0, 0.0, 0.0),
    radiation: bool | RadiationStateSpace = True,
    radiation_tol: float = 0.02,
    mass=None,
    com=None,
    linear_damping=None,
    quadratic_drag=None,
    excitation: bool = True,
    ramp_time: float = 0.0,
    added_mass_inf: str = "fit",
    body_to_body: bool = True,
    hull_boxes=None,
    hulls=None,
    hydrostatics: str = "linear",
    froude_krylov: str = "linear",
) -> "HydroBody":
    """``bodies``: model body names for the hydro bodies (default: ``hydro.body_names``).
    ``q_equilibrium``: the model configuration at rest (default: neutral); the bodies'
    axes must be parallel to the world's there.  ``origin``: where the BEM frame's
    origin sits in the world.  ``mass``/``com`` (per hydro body): the mass and centre of
    mass (BEM frame) the restoring matrix was computed with (default: read from
    ``hydro`` when it records them, else ρ V at the centre of buoyancy's x, y and the
    reference point's z).  ``ramp_time`` (s): the excitation rises smoothly from zero over
    this time (½(1 − cos πt/T)), which keeps the start-up transient and the drift of
    unmoored bodies small.  ``added_mass_inf``: ``"fit"`` (default) takes the A(∞) that
    makes the time-domain model reproduce the BEM A(ω) best with the fitted memory
    (:func:`~jaxmbd.hydro.radiation.consistent_added_mass_inf`); ``"file"`` the file's.
    ``body_to_body``: keep the radiation coupling between the bodies (A(∞), the memory);
    False drops it (:meth:`HydroData.without_body_coupling`, WEC-Sim's default).
    ``hull_boxes``: per hydro body, (length, beam, draught[, depth]) of a box hull or None: the run
    then checks that the bilge stays under and the deck edge above the still waterline
    (:mod:`jaxmbd.validity`).  ``hulls``: per hydro body, its closed :class:`~jaxmbd.hydro.hull.HullMesh`
    in the BEM frame at rest (waterline z = 0), needed by ``hydrostatics = "nonlinear"`` and
    ``froude_krylov = "nonlinear"`` (the module's docstring says which terms each includes)."""

    bodies = tuple(hydro.body_names if bodies is None else bodies)
    if not body_to_body:
        hydro = hydro.without_body_coupling()
    nb = len(bodies)
    if 6 * nb != hydro.added_mass_inf.shape[-1]:
        raise InputError(f"{hydro.source}: {nb} bodies named for {hydro.added_mass_inf.shape[-1] // 6} hydro bodies")
    q = model.neutral() if q_equilibrium is None else jnp.asarray(q_equilibrium)
    Rw, pw = placements(model, q)
    origin = np.asarray(origin, float)
    ref_world = np.asarray(hydro.reference_point, float) + origin
    ref_body = []
    for k, b in enumerate(bodies):
        i = model.index(b)
        if np.max(np.abs(np.asarray(Rw[i]) - np.eye(3))) > 1e-6:
            raise InputError(
                f"hydro element {name!r}: body {b!r} is rotated at rest; hydrodynamic bodies must have "
                "their axes parallel to the world's at rest (q_equilibrium; in a system file, the body's joint frame, "
                "its placement's rpy_deg with the joint at zero)"
            )
        ref_body.append(ref_world[k] - np.asarray(pw[i]))
    rho, g = float(hydro.rho), float(hydro.g)
    V = np.asarray(hydro.displaced_volume, float)
    cob = np.asarray(hydro.centre_of_buoyancy, float)
    C = np.asarray(hydro.hydrostatic_stiffness, float)
    Cb = C.copy()
    W = np.zeros(6 * nb)
    for k in range(nb):
        bk = cob[k] if np.all(np.isfinite(cob[k])) else np.asarray(hydro.reference_point[k], float)
        m_file = float(np.asarray(hydro.mass_matrix)[6 * k, 6 * k])
        c_file = np.asarray(hydro.centre_of_mass, float)[k]
        mk = float(np.atleast_1d(mass)[k]) if mass is not None else m_file
        vk = _displaced_volume(hydro, bodies[k], V[k], mk, rho, hydrostatics)
        if not np.isfinite(mk):
            mk = rho * vk
        if com is not None:
            ck = np.asarray(com, float).reshape(nb, 3)[k]
        elif np.all(np.isfinite(c_file)):
            ck = c_file
        else:
            ck = np.array([bk[0], bk[1], float(hydro.reference_point[k][2])])
        s = slice(6 * k, 6 * k + 6)
        Cb[s, s] = C[s, s] - gravity_stiffness(mk, ck - np.asarray(hydro.reference_point[k], float), g)
        r = bk - np.asarray(hydro.reference_point[k], float)
        Fb = np.array([0.0, 0.0, rho * g * vk])
        W[s] = np.concatenate([Fb, np.cross(r, Fb)])
    if radiation is True:
        rad, _ = fit_radiation(hydro, tol=radiation_tol)
    elif radiation is False:
        rad = None
    else:
        rad = radiation
    if added_mass_inf == "fit" and rad is not None:
        Ainf = consistent_added_mass_inf(hydro, rad)
    elif added_mass_inf in ("file", "fit"):
        Ainf = np.asarray(hydro.added_mass_inf, float)
    else:
        raise InputError(f"hydro element {name!r}: added_mass_inf must be 'fit' or 'file', got {added_mass_inf!r}")
    # A(∞) is symmetric in theory; a BEM's or the fit's is so only to a percent or so (surge-pitch,
    # sway-roll), and the articulated-body recursion reads the lower triangle of each body's
    # inertia while the mass-matrix routes read all of it: keep the symmetric part, so both agree
    Ainf = 0.5 * (Ainf + Ainf.T)
    hulls_body = _hulls_in_body_frames(model, name, bodies, hulls, hydrostatics, froude_krylov, origin, pw)
    pairs = tuple(
        (k, l)
        for k in range(nb)
        for l in range(nb)
        if k != l and np.any(Ainf[6 * k : 6 * k + 6, 6 * l : 6 * l + 6] != 0.0)
    )
    return HydroBody(
        name=name,
        coupled_pairs=pairs,
        bodies=bodies,
        hydro=hydro,
        radiation=rad,
        added_mass_inf=jnp.asarray(Ainf),
        ref_world=jnp.asarray(ref_world),
        ref_body=jnp.asarray(np.stack(ref_body)),
        buoyancy_stiffness=jnp.asarray(Cb),
        buoyancy_wrench=jnp.asarray(W),
        linear_damping=jnp.zeros((6 * nb, 6 * nb)) if linear_damping is None else jnp.asarray(linear_damping),
        quadratic_drag=jnp.zeros(6 * nb) if quadratic_drag is None else jnp.asarray(quadratic_drag),
        origin=jnp.asarray(origin),
        excitation_on=excitation,
        ramp_time=float(ramp_time),
        hull_boxes=tuple(None if b is None else (float(b[0]), float(b[1]), float(b[2]),
                                                 None if len(b) < 4 or b[3] is None else float(b[3]))
                         for b in (hull_boxes or ())),
        hulls=hulls_body,
        carried=_carried_masses(model, q, bodies) if hulls_body else (),
        hydrostatics=hydrostatics,
        froude_krylov=froude_krylov,
    )


HydroBody.create = staticmethod(create_hydro_body)


def _displaced_volume(hydro, body, volume, mass, rho, hydrostatics) -> float:
    """The body's volume under the still water at rest: the data's, else its mass over ρ (floating at rest,
    it displaces its mass); with neither, refused where the linear hydrostatics need it (zero buoyancy
    under the whole weight, the heave stiffness kept, was the silent answer)."""
    if np.isfinite(volume):
        return float(volume)
    if np.isfinite(mass):
        return mass / rho
    if hydrostatics == "linear":
        raise InputError(f"{hydro.source}: body {body!r}: the data give neither its displaced volume (Capytaine's "
                         "disp_mass, WAMIT's VOL) nor its mass, so its buoyancy is unknown; give its mass "
                         "([[hydro]] mass, kg) or data with the volume")
    return 0.0  # the non-linear hydrostatics integrate the pressure on the hull: no constant buoyancy


def hydro_valid_ranges(element, model) -> tuple:
    import math

    from ..validity import ValidRange

    lim = math.radians(15.0)
    what = "linear hydrostatics and radiation" if element.hydrostatics == "linear" else "linear radiation and diffraction"
    ranges = [ValidRange("eta", f"{dof} of {body}", what, "|angle| <= 15 deg", component=6 * k + c, upper=lim)
              for k, body in enumerate(element.bodies) for c, dof in ((3, "roll"), (4, "pitch"))]
    if element.hydrostatics == "nonlinear":
        return tuple(ranges) + _capsize_ranges(element) + _freeboard_ranges(element)
    for k, box in enumerate(element.hull_boxes):
        if box is None:
            continue
        L, B, T, D = box
        model_name = "linear hydrostatics of a wall-sided hull"

        # the corner that roll and pitch move furthest: half-beam and half-length out, a height h
        # above the waterline; its height becomes heave + h cos φ cos θ ± (B/2 |sin φ| + L/2 |sin θ|)
        def corner(e, h, sign, k=k, L=L, B=B):
            phi, theta = e[..., 6 * k + 3], e[..., 6 * k + 4]
            lever = 0.5 * B * np.abs(np.sin(phi)) + 0.5 * L * np.abs(np.sin(theta))
            return e[..., 6 * k + 2] + h * np.cos(phi) * np.cos(theta) + sign * lever

        ranges.append(ValidRange("eta", f"bilge of {element.bodies[k]}", model_name,
                                 "lowest bilge corner under the still waterline", upper=0.0, signed=True,
                                 transform=lambda e, T=T, corner=corner: corner(e, -T, 1.0)))
        if D is not None:
            ranges.append(ValidRange("eta", f"deck edge of {element.bodies[k]}", model_name,
                                     "lowest deck corner above the still waterline", lower=0.0,
                                     transform=lambda e, f=D - T, corner=corner: corner(e, f, -1.0)))
    return tuple(ranges)


def hydro_stability_curves(element, heel_deg=None, explain=True):
    """Per hydro body with a hull: its GZ curves about roll and pitch (:func:`~.stability.righting_arm`)
    with the mass and centre of gravity it carries at rest (:attr:`carried`), in the world at rest."""
    from .stability import righting_arm

    out = []
    for k, hull in enumerate(element.hulls):
        mass, cog = element.carried[k]
        world = HullMesh(np.asarray(hull.vertices) + np.asarray(element.ref_world[k] - element.ref_body[k]), hull.triangles, hull.source)
        out.append({axis: righting_arm(world, mass, np.asarray(cog), heel_deg, axis=axis, rho=float(element.hydro.rho),
                                       g=float(element.hydro.g), explain=explain) for axis in ("roll", "pitch")})
    return out


def hydro_freeboards(element) -> list:
    """Per hull, its lowest freeboard at rest [m]: the lowest of the hull's tops (the highest
    vertex over each point of its plan) above the still waterline."""
    out = []
    for k, hull in enumerate(element.hulls):
        world = np.asarray(hull.vertices) + np.asarray(element.ref_world[k] - element.ref_body[k])
        tops: dict = {}
        for x, y, z in np.round(world, 6):
            tops[(x, y)] = max(z, tops.get((x, y), -np.inf))
        out.append(float(min(z for z in tops.values() if z > 0.0)))
    return out


def _freeboard_ranges(element) -> tuple:
    """With the linear Froude-Krylov force beside non-linear hydrostatics, the incident wave's
    elevation within the lowest freeboard: the linear force takes the wave's waterline on the
    hull's sides, and a crest over the deck edge leaves the still-water restoring to fall while
    that force goes on as if it had not (a docs example capsized so, and did not with both
    non-linear)."""
    from ..validity import ValidRange

    if element.froude_krylov != "linear" or not element.hulls:
        return ()
    fb = min(hydro_freeboards(element))
    return (ValidRange("wave_elevation", "incident wave elevation",
                       "non-linear hydrostatics with the linear Froude-Krylov force",
                       f"|elevation| <= lowest freeboard {fb:.3g} m (else froude_krylov = \"nonlinear\")", upper=fb),)


def _capsize_ranges(element) -> tuple:
    """|roll| and |pitch| below the angle of vanishing stability of each hull (its stability curve
    at ±90° by 2°, free trim, with what it carries at rest; the weaker side's): beyond it the hull
    capsizes."""
    from ..validity import ValidRange

    ranges = []
    # 2° steps: the angle is interpolated between them, to a fraction of a degree
    for k, curves in enumerate(hydro_stability_curves(element, np.arange(-90.0, 90.5, 2.0), explain=False)):
        for c, axis in ((3, "roll"), (4, "pitch")):
            avs = curves[axis].vanishing_stability_deg
            if avs is None:
                continue
            ranges.append(ValidRange("eta", f"{axis} of {element.bodies[k]}", "intact stability (capsize)",
                                     f"|{axis}| < angle of vanishing stability {abs(avs):.1f} deg (its weaker side)",
                                     component=6 * k + c, upper=float(np.radians(abs(avs)))))
    return tuple(ranges)
