"""The hydrodynamic database: :class:`HydroData`, the linear frequency-domain coefficients of one or
more rigid bodies (dimensional SI, one fixed layout), and their validation.

:class:`HydroData` holds the linear frequency-domain coefficients of one or
more rigid bodies, dimensional SI, in one fixed layout:

* DOF order per body: surge, sway, heave, roll, pitch, yaw, bodies one after
  the other (6 n_bodies DOFs). Rotations are about the body's
  ``reference_point`` (Capytaine's ``rotation_center``, WAMIT's body origin
  XBODY), axes parallel to the world axes (z up).
* Matrices are indexed [force DOF i, motion DOF j]: the radiation force is
  F_i = −A_ij(ω) η̈_j − B_ij(ω) η̇_j (Capytaine stores ``influenced_dof`` =
  i, ``radiating_dof`` = j).
* Excitation F̂(ω, β) is complex, per unit wave amplitude, in Capytaine's
  convention: for the incident wave ζ = Re exp(i(k(x cos β + y sin β) − ωt))
  the force is Re(F̂ e^{−iωt}). WAMIT files (e^{+iωt}) are conjugated on read.

"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InputError, JaxmbdError

RIGID_DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
_TWO_PI = 2.0 * math.pi


class HydroDataError(JaxmbdError, ValueError):
    """A hydrodynamic data file is malformed or physically inconsistent.

    The message names the file and the variable.
    """

    def __init__(self, source, variable, problem):
        self.source = str(source)
        self.variable = variable
        where = variable if variable.startswith("line ") else f"variable '{variable}'"
        super().__init__(f"{source}: {where}: {problem}")


def _f64(x):
    return jnp.asarray(x, dtype=jnp.float64 if jax.config.jax_enable_x64 else jnp.float32)


class HydroData(eqx.Module):
    """Frequency-domain hydrodynamic coefficients of n_bodies rigid bodies (SI units).

    Array leaves (differentiable):

    omega (n_omega,) rad/s, strictly increasing, finite and > 0.
    added_mass (n_omega, 6nb, 6nb): A(ω); kg, kg·m, kg·m² by DOF pair.
    radiation_damping (n_omega, 6nb, 6nb): B(ω); N·s/m, N·s, N·m·s.
    added_mass_inf (6nb, 6nb): A(∞).
    excitation (n_omega, n_dir, 6nb) complex: F̂(ω, β) per unit wave amplitude
        [N/m, N·m/m]; force Re(A F̂ e^{−iωt}) for the wave Re(A e^{i(kx'−ωt)}).
    wave_direction (n_dir,) rad, strictly increasing, direction of travel.
    hydrostatic_stiffness (6nb, 6nb): C (N/m, N, N·m), restoring force −C η.
    displaced_volume (nb,) m³ (NaN when the file does not say).
    centre_of_buoyancy (nb, 3) m, world frame (NaN when unknown).
    reference_point (nb, 3) m, world frame: where the rotations and moments refer.
    mass_matrix (6nb, 6nb): the rigid bodies' mass matrix the file gives (kg, kg·m, kg·m²), about
        the reference points; NaN when the file does not say.
    centre_of_mass (nb, 3) m, world frame (NaN when unknown).

    Static: rho [kg/m³], g [m/s²], water_depth [m] (inf = deep), body_names
    (tuple of str), source (file the data came from).
    """

    omega: jax.Array
    added_mass: jax.Array
    radiation_damping: jax.Array
    added_mass_inf: jax.Array
    excitation: jax.Array
    wave_direction: jax.Array
    hydrostatic_stiffness: jax.Array
    displaced_volume: jax.Array
    centre_of_buoyancy: jax.Array
    reference_point: jax.Array
    mass_matrix: jax.Array
    centre_of_mass: jax.Array
    rho: float = eqx.field(static=True)
    g: float = eqx.field(static=True)
    water_depth: float = eqx.field(static=True)
    body_names: tuple = eqx.field(static=True)
    source: str = eqx.field(static=True)
    # Heading-table metadata, computed once from concrete arrays so that
    # excitation_at needs no concrete values under jit.
    heading_periodic: bool = eqx.field(static=True)
    heading_range: tuple = eqx.field(static=True)

    def __init__(
        self,
        *,
        omega,
        added_mass,
        radiation_damping,
        added_mass_inf,
        excitation,
        wave_direction,
        hydrostatic_stiffness,
        displaced_volume,
        centre_of_buoyancy,
        reference_point,
        rho,
        g,
        water_depth,
        body_names,
        source="",
        mass_matrix=None,
        centre_of_mass=None,
    ):
        nb = len(body_names)
        self.omega = _f64(omega)
        self.added_mass = _f64(added_mass)
        self.radiation_damping = _f64(radiation_damping)
        self.added_mass_inf = _f64(added_mass_inf)
        self.excitation = jnp.asarray(excitation, dtype=complex)
        self.wave_direction = _f64(wave_direction)
        self.hydrostatic_stiffness = _f64(hydrostatic_stiffness)
        self.displaced_volume = _f64(displaced_volume)
        self.centre_of_buoyancy = _f64(centre_of_buoyancy)
        self.reference_point = _f64(reference_point)
        self.mass_matrix = _f64(np.full((6 * nb, 6 * nb), np.nan) if mass_matrix is None else mass_matrix)
        self.centre_of_mass = _f64(np.full((nb, 3), np.nan) if centre_of_mass is None else centre_of_mass)
        self.rho = float(rho)
        self.g = float(g)
        self.water_depth = float(water_depth)
        self.body_names = tuple(str(b) for b in body_names)
        self.source = str(source)
        beta = np.asarray(wave_direction, dtype=float)
        self.heading_periodic, self.heading_range = _heading_table(beta)

    # ------------------------------------------------------------------ sizes
    @property
    def n_bodies(self) -> int:
        return len(self.body_names)

    @property
    def n_dof(self) -> int:
        return 6 * self.n_bodies

    def body(self, i) -> "HydroData":
        """The coefficients of body ``i`` (index or name) alone: its diagonal 6x6 blocks.

        The coupling blocks with the other bodies are dropped, which is right
        only when the bodies are far apart.
        """
        if isinstance(i, str):
            i = self.body_names.index(i)
        s = slice(6 * i, 6 * i + 6)
        return HydroData(
            omega=self.omega,
            added_mass=self.added_mass[:, s, s],
            radiation_damping=self.radiation_damping[:, s, s],
            added_mass_inf=self.added_mass_inf[s, s],
            excitation=self.excitation[:, :, s],
            wave_direction=self.wave_direction,
            hydrostatic_stiffness=self.hydrostatic_stiffness[s, s],
            displaced_volume=self.displaced_volume[i : i + 1],
            centre_of_buoyancy=self.centre_of_buoyancy[i : i + 1],
            reference_point=self.reference_point[i : i + 1],
            mass_matrix=self.mass_matrix[s, s],
            centre_of_mass=self.centre_of_mass[i : i + 1],
            rho=self.rho,
            g=self.g,
            water_depth=self.water_depth,
            body_names=(self.body_names[i],),
            source=self.source,
        )

    def without_body_coupling(self) -> "HydroData":
        """The same data with the radiation coupling between different bodies dropped: the
        off-diagonal 6x6 blocks of A(ω), B(ω), A(∞) and C set to zero (WEC-Sim's default,
        ``bodyToBody`` off).  Each body then radiates as if alone, while its excitation still comes
        from the solution with all bodies present."""
        keep = np.kron(np.eye(self.n_bodies), np.ones((6, 6)))
        return eqx.tree_at(
            lambda h: (h.added_mass, h.radiation_damping, h.added_mass_inf, h.hydrostatic_stiffness),
            self,
            tuple(x * jnp.asarray(keep, dtype=x.dtype) for x in
                  (self.added_mass, self.radiation_damping, self.added_mass_inf, self.hydrostatic_stiffness)),
        )

    def with_xz_symmetry(self) -> "HydroData":
        """Extend the heading table to (−π, π] for hulls symmetric about the xz plane.

        For such a hull F̂(ω, −β) equals F̂(ω, β) with sway, roll and yaw
        negated. Headings in [0, π] are mirrored; the result covers the circle
        when the original table spans [0, π].
        """
        beta = np.asarray(self.wave_direction)
        exc = np.asarray(self.excitation)
        keep = beta > 1e-9
        mirror = -beta[keep]
        sign = np.tile(np.array([1, -1, 1, -1, 1, -1.0]), self.n_bodies)
        exc_m = exc[:, keep, :] * sign
        beta_all = np.concatenate([mirror, beta])
        exc_all = np.concatenate([exc_m, exc], axis=1)
        order = np.argsort(beta_all)
        beta_all, exc_all = beta_all[order], exc_all[:, order]
        # −π and π are the same heading; keep one.
        if beta_all[0] <= -math.pi + 1e-9 and beta_all[-1] >= math.pi - 1e-9:
            beta_all, exc_all = beta_all[1:], exc_all[:, 1:]
        return eqx.tree_at(
            lambda h: (h.wave_direction, h.excitation), self, (_f64(beta_all), jnp.asarray(exc_all))
        )._rebuild()

    def _rebuild(self) -> "HydroData":
        # Recompute the static heading metadata after a tree_at replacement.
        return HydroData(
            **{
                f: getattr(self, f)
                for f in (
                    "omega added_mass radiation_damping added_mass_inf excitation wave_direction "
                    "hydrostatic_stiffness displaced_volume centre_of_buoyancy reference_point "
                    "mass_matrix centre_of_mass rho g water_depth body_names source"
                ).split()
            }
        )

    # ------------------------------------------------------------- excitation
    def check_headings(self, beta) -> None:
        """Raise ValueError when a heading lies outside a table that does not cover the circle."""
        beta = np.atleast_1d(np.asarray(beta, dtype=float))
        if self.heading_periodic:
            return
        lo, hi = self.heading_range
        u = lo + np.mod(beta - lo, _TWO_PI)
        tol = 1e-9
        # u is within [lo, lo + 2π); also accept values just below lo (u ≈ lo + 2π).
        bad = (u > hi + tol) & (u < lo + _TWO_PI - tol)
        if np.any(bad):
            raise InputError(
                f"{self.source}: wave heading(s) {np.rad2deg(beta[bad][:5])} deg outside the "
                f"excitation table [{math.degrees(lo):.1f}, {math.degrees(hi):.1f}] deg, which does "
                "not cover the circle; use HydroData.with_xz_symmetry() for an xz-symmetric hull "
                "or compute the missing headings"
            )

    def excitation_at(self, omega, beta):
        """Excitation F̂(ω, β) [N/m, N·m/m] by bilinear interpolation; complex, shape (..., 6nb).

        ``omega`` [rad/s] and ``beta`` [rad] broadcast together. Linear in ω
        (held constant outside the table: clamped, so check the range of your
        spectrum against ``omega``), linear in β, periodic in β when the table
        covers the circle. When β is concrete (not traced) it is checked
        against the table first; a heading outside a table that does not cover
        the circle raises ValueError.
        """
        try:
            beta_np = np.asarray(beta, dtype=float)
        except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError, TypeError):
            beta_np = None
        if beta_np is not None:
            self.check_headings(beta_np)

        omega = jnp.asarray(omega, dtype=self.omega.dtype)
        beta = jnp.asarray(beta, dtype=self.omega.dtype)
        omega, beta = jnp.broadcast_arrays(omega, beta)

        iw, tw = _bracket(self.omega, omega)
        table = self.excitation
        grid = self.wave_direction
        if grid.shape[0] == 1:
            f = table[:, 0, :]
            return (1 - tw)[..., None] * f[iw] + tw[..., None] * f[iw + 1]
        lo = self.heading_range[0]
        u = lo + jnp.mod(beta - lo, _TWO_PI)
        if self.heading_periodic and (self.heading_range[1] - lo) < _TWO_PI - 1e-9:
            grid = jnp.concatenate([grid, grid[:1] + _TWO_PI])
            table = jnp.concatenate([table, table[:, :1]], axis=1)
        # A value just below lo (u ≈ lo + 2π) maps back onto lo.
        u = jnp.where(u > grid[-1] + 1e-9, u - _TWO_PI, u)
        ib, tb = _bracket(grid, u)
        tw, tb = tw[..., None], tb[..., None]
        return (
            (1 - tw) * (1 - tb) * table[iw, ib]
            + tw * (1 - tb) * table[iw + 1, ib]
            + (1 - tw) * tb * table[iw, ib + 1]
            + tw * tb * table[iw + 1, ib + 1]
        )


def symmetric_part(x):
    """½ (X + Xᵀ) over the last two axes: the radiation matrices A(ω), B(ω) and A(∞) are symmetric (the
    reciprocity of the radiation potentials, without forward speed); a BEM's are so only to its panels'
    error (a few percent in the couplings of a coarse mesh), and the time- and frequency-domain models
    both take their symmetric part, so that they agree (the time domain's A(∞) must be symmetric)."""
    swap = np.swapaxes if isinstance(x, np.ndarray) else jnp.swapaxes  # NumPy in, NumPy out (host-side fits)
    return 0.5 * (x + swap(x, -1, -2))


def _bracket(grid, x):
    """Index i and weight t with x ≈ (1−t) grid[i] + t grid[i+1], t clamped to [0, 1]."""
    n = grid.shape[0]
    if n == 1:
        return jnp.zeros(x.shape, int), jnp.zeros(x.shape, grid.dtype)
    i = jnp.clip(jnp.searchsorted(grid, x, side="right") - 1, 0, n - 2)
    t = jnp.clip((x - grid[i]) / (grid[i + 1] - grid[i]), 0.0, 1.0)
    return i, t


def _heading_table(beta):
    """(periodic, (lo, hi)) for a strictly increasing heading table."""
    if beta.size == 0:
        return False, (0.0, 0.0)
    lo, hi = float(beta[0]), float(beta[-1])
    if beta.size < 3:
        return False, (lo, hi)
    span = hi - lo
    if span >= _TWO_PI - 1e-9:
        return True, (lo, hi)
    spacing = float(np.max(np.diff(beta)))
    return bool(_TWO_PI - span <= spacing * (1 + 1e-6)), (lo, hi)


# --------------------------------------------------------------------------- validation
def _is_rot(n):
    return (np.arange(n) % 6) >= 3


def _checked_hydro(source, omega, A, B, A_inf, exc, beta, C, vol, cob, ref, rho, g, depth, names, *,
                   symmetry_rtol, damping_rtol, mass=None, com=None) -> "HydroData":
    """Validate what a reader assembled (see :func:`_validate`) and wrap it in :class:`HydroData`."""
    _validate(source, omega, A, B, A_inf, exc, beta, C, symmetry_rtol=symmetry_rtol, damping_rtol=damping_rtol)
    if mass is not None:
        M = np.asarray(mass, float)
        if M.shape != C.shape:
            raise HydroDataError(source, "inertia_matrix", f"shape {M.shape}, expected {C.shape}")
        if np.all(np.isfinite(M)) and np.min(np.linalg.eigvalsh(0.5 * (M + M.T))) <= 0:
            raise HydroDataError(source, "inertia_matrix", "not positive definite; expected a rigid-body mass matrix")
    return HydroData(
        omega=omega, added_mass=A, radiation_damping=B, added_mass_inf=A_inf, excitation=exc,
        wave_direction=beta, hydrostatic_stiffness=C, displaced_volume=vol, centre_of_buoyancy=cob,
        reference_point=ref, rho=rho, g=g, water_depth=depth, body_names=names, source=source,
        mass_matrix=mass, centre_of_mass=com,
    )


def _validate_frequencies(source, omega):
    """At least two finite, strictly increasing frequencies."""
    if omega.ndim != 1 or omega.shape[0] < 2:
        raise HydroDataError(source, "omega", f"need at least 2 finite frequencies, got shape {omega.shape}")
    if np.any(~np.isfinite(omega)):
        raise HydroDataError(source, "omega", "contains NaN")
    if np.any(np.diff(omega) <= 0):
        i = int(np.argmax(np.diff(omega) <= 0))
        raise HydroDataError(
            source, "omega", f"frequencies are not strictly increasing (omega[{i}] = {omega[i]:g}, omega[{i + 1}] = {omega[i + 1]:g})"
        )


def _validate(
    source,
    omega,
    added_mass,
    radiation_damping,
    added_mass_inf,
    excitation,
    wave_direction,
    hydrostatic_stiffness,
    *,
    symmetry_rtol,
    damping_rtol,
):
    """Check shapes, NaNs, ordering, symmetry of A, sign of diag B; raise HydroDataError."""
    _validate_frequencies(source, omega)
    n_omega = omega.shape[0]
    n = added_mass.shape[-1]
    if n % 6 or n == 0:
        raise HydroDataError(source, "added_mass", f"{n} DOFs is not 6 per rigid body")
    expected = {
        "added_mass": (added_mass, (n_omega, n, n)),
        "radiation_damping": (radiation_damping, (n_omega, n, n)),
        "added_mass_inf": (added_mass_inf, (n, n)),
        "excitation": (excitation, (n_omega, wave_direction.shape[0], n)),
        "hydrostatic_stiffness": (hydrostatic_stiffness, (n, n)),
    }
    for name, (arr, shape) in expected.items():
        if arr.shape != shape:
            raise HydroDataError(source, name, f"shape {arr.shape}, expected {shape}")
        if np.any(np.isnan(arr)):
            idx = np.argwhere(np.isnan(arr))[0]
            where = f" (first at index {tuple(int(v) for v in idx)}"
            if name in ("added_mass", "radiation_damping", "excitation"):
                where += f", omega = {omega[idx[0]]:g} rad/s"
            raise HydroDataError(source, name, "contains NaN" + where + ")")
    if wave_direction.ndim != 1 or np.any(np.diff(wave_direction) <= 0):
        raise HydroDataError(source, "wave_direction", "headings are not strictly increasing")
    for name, arr in (("added_mass", added_mass), ("radiation_damping", radiation_damping),
                      ("hydrostatic_stiffness", hydrostatic_stiffness), ("excitation", excitation)):
        if not np.all(np.isfinite(arr)):
            raise HydroDataError(source, name, "contains an infinite value")
    heave = np.diagonal(hydrostatic_stiffness)[2::6]
    if np.any(heave < 0):
        b = int(np.argmax(heave < 0))
        raise HydroDataError(source, "hydrostatic_stiffness",
                             f"heave stiffness C[{6 * b + 2},{6 * b + 2}] = {heave[b]:.4g} N/m of body {b} is negative; "
                             "a floating body's is ρ g times its waterplane area (0 for a submerged one)")

    # Symmetry of A: scale each pair by sqrt(max|A_ii| max|A_jj|), the bound a
    # positive-definite matrix puts on |A_ij|. Default 50 %: Capytaine 2.3.1
    # coarse RM3 mesh shows 18 % (surge-pitch of the float), a coarse cylinder
    # ~45 %; the check is for garbled or transposed tables, not solver noise.
    diag = np.abs(np.diagonal(added_mass, axis1=1, axis2=2)).max(axis=0)
    scale = np.sqrt(np.outer(diag, diag)) + 1e-300
    asym = np.abs(added_mass - np.swapaxes(added_mass, 1, 2)).max(axis=0) / scale
    if np.max(asym) > symmetry_rtol:
        i, j = np.unravel_index(np.argmax(asym), asym.shape)
        raise HydroDataError(
            source,
            "added_mass",
            f"not symmetric: |A[{i},{j}] - A[{j},{i}]| reaches {asym[i, j]:.3g} of sqrt(A_ii A_jj) "
            f"(tolerance {symmetry_rtol})",
        )
    # Diagonal damping must be >= 0; tolerance relative to the largest diagonal
    # damping of the same kind (translation / rotation) in the table, so that
    # numerical noise on a DOF with no damping (yaw of a spar) passes.
    bd = np.diagonal(radiation_damping, axis1=1, axis2=2)
    rot = _is_rot(n)
    for kind in (False, True):
        cols = np.where(rot == kind)[0]
        ref = np.abs(bd[:, cols]).max()
        if ref == 0:
            continue
        worst = bd[:, cols].min(axis=0) / ref
        if worst.min() < -damping_rtol:
            c = cols[int(np.argmin(worst))]
            w = omega[int(np.argmin(bd[:, c]))]
            raise HydroDataError(
                source,
                "radiation_damping",
                f"negative diagonal damping B[{c},{c}] = {bd[:, c].min():.4g} at omega = {w:g} rad/s "
                f"({-worst.min():.3g} of the largest diagonal damping, tolerance {damping_rtol}); "
                "often irregular frequencies or too coarse a mesh: pass omega_max to drop the "
                "frequencies above them",
            )


def _added_mass_inf_ogilvie(omega, A, B, fraction=1.0 / 3.0):
    """A(∞) from Ogilvie's relation A(∞) = A(ω) + (1/ω) ∫_0^∞ K(t) sin(ωt) dt.

    K(t) comes from B(ω) (:func:`jaxmbd.hydro.radiation.retardation_function`,
    with its ω^-3 tail); the estimate is averaged over the top third of the
    frequencies, where it is least sensitive to the tail. On the test barge it
    is within 1 % of Capytaine's A(∞) for heave, roll, pitch and 14 % for the
    (small) surge term.
    """
    from jaxmbd.hydro.radiation import retardation_function

    dt = math.pi / (8.0 * omega[-1])
    t = np.arange(0.0, 120.0, dt)
    K = retardation_function(omega, B, t)
    start = int(len(omega) * (1.0 - fraction))
    est = [A[k] + np.trapezoid(K * np.sin(omega[k] * t)[:, None, None], t, axis=0) / omega[k]
           for k in range(start, len(omega))]
    return np.mean(est, axis=0)
