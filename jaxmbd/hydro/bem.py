"""Boundary-element (potential-flow) hydrodynamic coefficients: containers, readers, BEM runs.

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

Readers: :func:`read_capytaine` (Capytaine NetCDF), :func:`read_wamit`
(WAMIT ``.out`` or the numeric ``.1`` / ``.3`` / ``.hst`` files). A new hull:
:func:`run_capytaine` with :func:`box` / :func:`cylinder` or any Capytaine
mesh / body.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..errors import JaxmbdError

__all__ = [
    "HydroData",
    "HydroDataError",
    "read_capytaine",
    "read_wamit",
    "run_capytaine",
    "box",
    "cylinder",
    "make_test_barge",
    "test_barge_path",
]

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
            raise ValueError(
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


# --------------------------------------------------------------------------- Capytaine
def _dof_order(source, names, body_name_attr):
    """Map Capytaine DOF names to (body_names, permutation into surge..yaw order per body)."""
    bodies: list[str] = []
    entries = []
    for idx, full in enumerate(names):
        if "__" in full:
            body, dof = full.rsplit("__", 1)
        else:
            body, dof = body_name_attr, full
        if dof.lower() not in RIGID_DOFS:
            raise HydroDataError(
                source,
                "influenced_dof",
                f"DOF '{full}' is not a rigid-body DOF (surge..yaw); generalised modes are not supported",
            )
        if body not in bodies:
            bodies.append(body)
        entries.append((bodies.index(body), RIGID_DOFS.index(dof.lower()), idx))
    perm = []
    for b in range(len(bodies)):
        have = {d: idx for bb, d, idx in entries if bb == b}
        if len(have) != 6:
            missing = [RIGID_DOFS[d] for d in range(6) if d not in have]
            raise HydroDataError(source, "influenced_dof", f"body '{bodies[b]}' lacks DOFs {missing}")
        perm.extend(have[d] for d in range(6))
    return bodies, np.array(perm)


def _scalar(ds, name, default, source, warn=True):
    if name in ds.variables:
        v = np.asarray(ds[name].values, dtype=float).reshape(-1)
        if v.size != 1:
            raise HydroDataError(source, name, f"several values {v}; select one before reading")
        return float(v[0])
    if warn:
        warnings.warn(f"{source}: no '{name}' in file, using {default}", stacklevel=3)
    return default


def _per_body(ds, name, bodies, source):
    """A (body, space_coordinate) variable or coordinate as (nb, 3), or None."""
    if name not in ds.variables:
        return None
    da = ds[name]
    arr = np.asarray(da.values, dtype=float)
    if arr.ndim == 1 and len(bodies) == 1:
        return arr.reshape(1, 3)
    if "body" in da.dims:
        names = [str(b) for b in np.atleast_1d(ds["body"].values)]
        if set(names) >= set(bodies):
            da = da.sel(body=list(bodies))
            return np.asarray(da.transpose("body", ...).values, dtype=float).reshape(len(bodies), 3)
    if arr.size == 3 * len(bodies):
        return arr.reshape(len(bodies), 3)
    return None


def read_capytaine(
    path,
    *,
    omega_max: float | None = None,
    reference_point=None,
    symmetry_rtol: float = 0.5,
    damping_rtol: float = 0.02,
) -> HydroData:
    """Read a Capytaine NetCDF file (or an in-memory ``xarray.Dataset``) into :class:`HydroData`.

    Understands the layout written by Capytaine 2.x and 3.x
    (``cpt.export_dataset`` / ``separate_complex_values``): coordinates
    ``omega``, ``radiating_dof``, ``influenced_dof``, ``wave_direction``;
    ``added_mass`` and ``radiation_damping`` over (omega, radiating_dof,
    influenced_dof) in any dimension order; ``excitation_force`` (or
    ``diffraction_force`` + ``Froude_Krylov_force``) with a ``complex``
    dimension (re, im); ``hydrostatic_stiffness``; optional ``body_name``,
    ``rotation_center``, ``center_of_buoyancy``, ``disp_mass``. Multi-body
    DOF names ``body__Heave`` are grouped by body, in order of appearance.

    * A(∞): the entry at omega = inf (Capytaine solves it with
      ``omega=np.inf``) or an ``added_mass_inf`` variable; otherwise it is
      estimated from the table with Ogilvie's relation A(∞) = A(ω) +
      (1/ω)∫K(t) sin(ωt) dt averaged over the top third of the frequencies,
      and a warning says so.
    * omega = 0 entries are dropped (no damping, no excitation there).
    * ``omega_max`` drops frequencies above it before validation (use it when
      the top of a table is spoilt by irregular frequencies).
    * ``reference_point`` (nb, 3) overrides / supplies the rotation centres
      when the file has no ``rotation_center`` (then (0, 0, 0) with a warning).

    Raises :class:`HydroDataError` (naming the file and variable) on missing
    variables, NaNs, non-increasing omega, wrong shapes, an added-mass matrix
    asymmetric beyond ``symmetry_rtol`` of sqrt(A_ii A_jj), or diagonal
    damping more negative than ``damping_rtol`` of the largest diagonal
    damping of its kind.
    """
    import xarray as xr

    if isinstance(path, xr.Dataset):
        ds, source = path, path.attrs.get("jaxmbd_source", "<xarray.Dataset>")
    else:
        source = str(path)
        if not Path(path).exists():
            raise FileNotFoundError(path)
        with xr.open_dataset(path) as f:
            ds = f.load()
    return _from_capytaine_dataset(
        ds,
        source,
        omega_max=omega_max,
        reference_point=reference_point,
        symmetry_rtol=symmetry_rtol,
        damping_rtol=damping_rtol,
    )


def _merge_complex(da):
    if "complex" not in da.dims:
        return da
    if "complex" in da.coords:
        labels = [str(v) for v in da["complex"].values]
        re_, im_ = da.isel(complex=labels.index("re")), da.isel(complex=labels.index("im"))
    else:
        re_, im_ = da.isel(complex=0), da.isel(complex=1)
    return re_ + 1j * im_


def _squeeze_extra(da, keep, source, name):
    for d in list(da.dims):
        if d not in keep:
            if da.sizes[d] != 1:
                raise HydroDataError(source, name, f"dimension '{d}' has {da.sizes[d]} entries; select one first")
            da = da.isel({d: 0})
    return da.transpose(*keep)


def _capytaine_checked_axes(ds, source):
    """The dataset with its frequency axis named ``omega``, after checking the variables every table needs."""
    for name in ("added_mass", "radiation_damping"):
        if name not in ds.variables:
            raise HydroDataError(source, name, "missing")
    if "omega" not in ds.variables:
        raise HydroDataError(source, "omega", "missing")
    freq_dim = ds["omega"].dims[0] if ds["omega"].dims else None
    if freq_dim is None:
        raise HydroDataError(source, "omega", "is a scalar; need a frequency dimension")
    if freq_dim != "omega":
        ds = ds.swap_dims({freq_dim: "omega"})
    for name in ("influenced_dof", "radiating_dof"):
        if name not in ds.variables:
            raise HydroDataError(source, name, "missing")
    return ds


def _capytaine_excitation(ds, order, idx_keep, source):
    """(excitation (n_omega, n_beta, n), headings (n_beta,) increasing) at the kept frequencies:
    the file's excitation force, or its diffraction plus Froude-Krylov forces."""
    if "excitation_force" in ds.variables:
        exc_da = _merge_complex(ds["excitation_force"])
    elif "diffraction_force" in ds.variables and "Froude_Krylov_force" in ds.variables:
        exc_da = _merge_complex(ds["diffraction_force"]) + _merge_complex(ds["Froude_Krylov_force"])
    else:
        raise HydroDataError(source, "excitation_force", "missing (and no diffraction_force + Froude_Krylov_force)")
    if "wave_direction" not in exc_da.dims:
        exc_da = exc_da.expand_dims(wave_direction=[0.0])
    exc_da = _squeeze_extra(exc_da, ["omega", "wave_direction", "influenced_dof"], source, "excitation_force")
    exc = np.asarray(exc_da.sel(influenced_dof=order).values)[idx_keep]
    beta = np.asarray(exc_da["wave_direction"].values, dtype=float)
    if beta.size > 1 and np.all(np.diff(beta) < 0):
        beta, exc = beta[::-1], exc[:, ::-1]
    return exc, beta


def _capytaine_reference(ds, reference_point, bodies, source):
    """Each body's reference point (nb, 3): the one given, else the file's rotation centre, else 0."""
    nb = len(bodies)
    if reference_point is not None:
        return np.asarray(reference_point, dtype=float).reshape(nb, 3)
    ref = _per_body(ds, "rotation_center", bodies, source)
    if ref is None:
        warnings.warn(f"{source}: no rotation_center in file; reference_point set to (0, 0, 0)", stacklevel=3)
        ref = np.zeros((nb, 3))
    return ref


def _capytaine_volumes(ds, bodies, rho, source):
    """Each body's displaced volume (nb,) from the file's displaced mass, NaN where it has none."""
    nb = len(bodies)
    vol = np.full(nb, np.nan)
    if "disp_mass" in ds.variables:
        dm = ds["disp_mass"]
        dm = _squeeze_extra(dm, [d for d in dm.dims if d == "body"], source, "disp_mass")
        if "body" in dm.dims:
            dm = dm.sel(body=list(bodies))
        vol = np.asarray(dm.values, dtype=float).reshape(-1) / rho
        if vol.size != nb:
            vol = np.full(nb, np.nan)
    return vol


def _from_capytaine_dataset(ds, source, *, omega_max, reference_point, symmetry_rtol, damping_rtol):
    ds = _capytaine_checked_axes(ds, source)

    body_attr = "body"
    if "body_name" in ds.variables and ds["body_name"].size == 1:
        body_attr = str(np.asarray(ds["body_name"].values).reshape(-1)[0])
    elif "body" in ds.variables and ds["body"].size == 1:
        body_attr = str(np.asarray(ds["body"].values).reshape(-1)[0])
    infl = [str(v) for v in ds["influenced_dof"].values]
    rad = [str(v) for v in ds["radiating_dof"].values]
    if set(infl) != set(rad):
        raise HydroDataError(source, "radiating_dof", f"DOFs {rad} differ from influenced_dof {infl}")
    bodies, perm = _dof_order(source, infl, body_attr)
    order = [infl[p] for p in perm]

    omega_all = np.asarray(ds["omega"].values, dtype=float)
    if np.any(np.isnan(omega_all)):
        raise HydroDataError(source, "omega", "contains NaN")
    is_inf = np.isinf(omega_all)
    keep = np.isfinite(omega_all) & (omega_all > 0)
    if omega_max is not None:
        keep &= omega_all <= omega_max
    if np.any(np.diff(omega_all[np.isfinite(omega_all)]) <= 0):
        w = omega_all[np.isfinite(omega_all)]
        i = int(np.argmax(np.diff(w) <= 0))
        raise HydroDataError(
            source, "omega", f"frequencies are not strictly increasing (omega[{i}] = {w[i]:g}, omega[{i + 1}] = {w[i + 1]:g})"
        )
    idx_keep = np.where(keep)[0]

    def matrix(name):
        da = ds[name]
        if "omega" in da.dims:
            da = _squeeze_extra(da, ["omega", "influenced_dof", "radiating_dof"], source, name)
        else:
            da = _squeeze_extra(da, ["influenced_dof", "radiating_dof"], source, name)
        return np.asarray(da.sel(influenced_dof=order, radiating_dof=order).values, dtype=float)

    A_full = matrix("added_mass")
    B_full = matrix("radiation_damping")
    omega = omega_all[idx_keep]
    A = A_full[idx_keep]
    B = B_full[idx_keep]

    if np.any(is_inf):
        A_inf = A_full[np.where(is_inf)[0][0]]
    elif "added_mass_inf" in ds.variables:
        A_inf = matrix("added_mass_inf")
    else:
        A_inf = _added_mass_inf_ogilvie(omega, A, B)
        warnings.warn(
            f"{source}: no infinite-frequency added mass in file; A(inf) estimated from A(w), B(w) "
            f"by Ogilvie's relation over {omega[len(omega) * 2 // 3]:.3g} ... {omega[-1]:.3g} rad/s",
            stacklevel=2,
        )

    exc, beta = _capytaine_excitation(ds, order, idx_keep, source)

    if "hydrostatic_stiffness" in ds.variables:
        C = matrix("hydrostatic_stiffness")
    else:
        warnings.warn(f"{source}: no hydrostatic_stiffness in file; set to zero", stacklevel=2)
        C = np.zeros((len(order), len(order)))

    rho = _scalar(ds, "rho", 1000.0, source)
    g = _scalar(ds, "g", 9.81, source)
    depth = _scalar(ds, "water_depth", math.inf, source)
    nb = len(bodies)

    ref = _capytaine_reference(ds, reference_point, bodies, source)
    cob = _per_body(ds, "center_of_buoyancy", bodies, source)
    if cob is None:
        cob = np.full((nb, 3), np.nan)
    mass = matrix("inertia_matrix") if "inertia_matrix" in ds.variables else None
    com = _per_body(ds, "center_of_mass", bodies, source)
    vol = _capytaine_volumes(ds, bodies, rho, source)

    return _checked_hydro(
        source, omega, A, B, A_inf, exc, beta, C, vol, cob, ref, rho, g, depth, tuple(bodies),
        symmetry_rtol=symmetry_rtol, damping_rtol=damping_rtol, mass=mass, com=com,
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


# --------------------------------------------------------------------------- WAMIT
_FLOAT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[EeDd][-+]?\d+)?"


def _floats(line):
    return [float(v.replace("D", "E").replace("d", "e")) for v in re.findall(_FLOAT, line)]


def _wamit_scales(n, rho, g, length):
    """Dimensional factors: A ρL^k, B ρωL^k (k = 3 + #rotations), F ρgL^(2+rot), C ρgL^(2+#rot)."""
    rot = _is_rot(n).astype(int)
    k = 3 + rot[:, None] + rot[None, :]
    mass = rho * length**k
    force = rho * g * length ** (2 + rot)
    stiff = rho * g * length ** (2 + rot[:, None] + rot[None, :])
    return mass, force, stiff


_WAMIT_BODY_LINES = (
    ("Volumes (VOLX,VOLY,VOLZ):", "vol"),
    ("Center of Buoyancy (Xb,Yb,Zb):", "cob"),
    ("Center of Gravity  (Xg,Yg,Zg):", "cog"),
    ("C(3,3),C(3,4),C(3,5):", "c3"),
    ("C(4,4),C(4,5),C(4,6):", "c4"),
    ("C(5,5),C(5,6):", "c5"),
)


def _wamit_body_line(s, bodies) -> bool:
    """Record one line of a body's header of a WAMIT .out file in ``bodies[-1]`` (a new body at its
    "Body number" line); False when the line is none of them."""
    if s.startswith("Body number: N="):
        bodies.append({})
        return True
    if not bodies:
        return False
    body = bodies[-1]
    if s.startswith("XBODY ="):
        body["ref"] = [float(v) for _, v in re.findall(r"(XBODY|YBODY|ZBODY)\s*=\s*(" + _FLOAT + ")", s)]
        return True
    for prefix, key in _WAMIT_BODY_LINES:
        if s.startswith(prefix):
            body[key] = _floats(s.split(":", 1)[1])
            return True
    if s.startswith("Radii of gyration:"):
        body["gyration"] = [_floats(s.split(":", 1)[1])]
        return True
    if len(body.get("gyration", [])) in (1, 2) and len(_floats(s)) == 3 and not s[:1].isalpha():
        body["gyration"].append(_floats(s))  # the second and third rows of the radii of gyration
        return True
    return False


def _wamit_period(s, freqs):
    """The tables of the frequency a WAMIT "Wave period" line opens (PER = infinite is ω = 0, zero is
    ω = ∞), or None when the line is not one."""
    if s.startswith("Wave period = infinite"):
        w = 0.0
    elif s.startswith("Wave period = zero"):
        w = math.inf
    elif s.startswith("Wave period (sec) ="):
        w = _TWO_PI / _floats(s.split("=", 1)[1])[0]
    else:
        return None
    return freqs.setdefault(w, {"A": {}, "B": {}, "exc": {}})


class _WamitTables:
    """The numeric tables between the text of a WAMIT .out file's lines."""

    def __init__(self, lines, path):
        self.lines, self.path, self.n = lines, path, len(lines)

    def is_row(self, j, ncols_min):
        tok = self.lines[j].split()
        return bool(tok) and re.fullmatch(r"-?\d+", tok[0]) is not None and len(_floats(self.lines[j])) >= ncols_min

    def unreadable(self, j):
        """The first token of line j that is not a finite number, where line j starts as a table row does."""
        tok = self.lines[j].split()
        if not tok or re.fullmatch(r"-?\d+", tok[0]) is None:
            return None
        for t in tok:
            if re.fullmatch(_FLOAT, t) is None:
                return t
        return None

    def table(self, start, ncols_min):
        """Rows of numbers after at most 4 header/blank lines, up to the first non-row; a row with a
        token that is not a number (NaN, a garbled value) is an error, not the end of the table."""
        j = start
        while j < min(start + 4, self.n) and not self.is_row(j, ncols_min):
            j += 1
        rows = []
        while j < self.n and (self.is_row(j, ncols_min) or self.unreadable(j) is not None):
            bad = self.unreadable(j)
            if bad is not None:
                raise HydroDataError(str(self.path), f"line {j + 1}", f"cannot read {bad!r} as a number in the table "
                                     f"row {self.lines[j].strip()!r}")
            rows.append(_floats(self.lines[j]))
            j += 1
        return rows, j

    def added_mass(self, i, current, damping):
        """Read the added-mass (and damping) table after line i into ``current``; the next line."""
        rows, j = self.table(i + 1, 4 if damping else 3)
        for r in rows:
            ii, jj = int(r[0]), int(r[1])
            current["A"][(ii, jj)] = r[2]
            if damping:
                current["B"][(ii, jj)] = r[3]
        return j

    def excitation(self, i, current, kind):
        """Read the excitation tables (one per heading) after line i into ``current``; the next line."""
        j = i + 1
        while j < self.n:
            t = self.lines[j].strip()
            if t.startswith("Wave Heading (deg)"):
                heading = _floats(t.split(":", 1)[1])[0]
                rows, j = self.table(j + 1, 3)
                exc = current["exc"].setdefault(kind, {}).setdefault(heading, {})
                for r in rows:
                    exc[int(r[0])] = r[1] * np.exp(1j * math.radians(r[2]))
                continue
            if t:
                break
            j += 1
        return j


def _parse_wamit_out(path):
    """Raw nondimensional tables from a WAMIT .out file."""
    lines = Path(path).read_text(errors="replace").splitlines()
    tables = _WamitTables(lines, path)
    bodies, gdf_names = [], []
    freqs = {}  # omega -> dict(A=..., B=..., exc={heading: {dof: complex}})
    current = None
    g_file = None
    i = 0
    in_gdf = False
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("Input from Geometric Data Files"):
            in_gdf = True
        elif in_gdf and s.startswith("Input from Potential Control File"):
            in_gdf = False
        elif in_gdf:
            m = re.match(r"N=\s*(\d+)\s+(\S+)", s)
            if m:
                gdf_names.append(Path(m.group(2)).stem)
        if s.startswith("Gravity:"):
            g_file = _floats(s)[0]
        if _wamit_body_line(s, bodies):
            pass
        elif (opened := _wamit_period(s, freqs)) is not None:
            current = opened
        elif current is not None and s.startswith("ADDED-MASS"):
            i = tables.added_mass(i, current, "DAMPING" in s)
            continue
        elif current is not None and (s.startswith("DIFFRACTION EXCITING FORCES") or s.startswith("HASKIND EXCITING FORCES")):
            i = tables.excitation(i, current, "diffraction" if s.startswith("DIFFRACTION") else "haskind")
            continue
        i += 1
    return bodies, gdf_names, freqs, g_file


def _assemble_wamit(source, freqs_A, freqs_B, exc_tables, n, headings):
    """Dense nondimensional arrays from {omega: {(i, j): value}} dictionaries (1-based i, j)."""
    omegas = sorted(w for w in freqs_A if 0 < w < math.inf)
    A = np.zeros((len(omegas), n, n))
    B = np.zeros((len(omegas), n, n))
    X = np.full((len(omegas), len(headings), n), np.nan + 0j)
    for k, w in enumerate(omegas):
        for (i, j), v in freqs_A[w].items():
            A[k, i - 1, j - 1] = v
        for (i, j), v in freqs_B.get(w, {}).items():
            B[k, i - 1, j - 1] = v
        tab = exc_tables.get(w, {})
        for h_i, h in enumerate(headings):
            for i, v in tab.get(h, {}).items():
                X[k, h_i, i - 1] = v
    # WAMIT leaves out entries it considers negligible; a DOF never printed at
    # a frequency is zero, not missing.
    for k, w in enumerate(omegas):
        for h_i, h in enumerate(headings):
            if h in exc_tables.get(w, {}):
                X[k, h_i] = np.where(np.isnan(X[k, h_i]), 0.0, X[k, h_i])
    return np.array(omegas), A, B, X


def _wamit_numeric_tables(stem, source):
    """(A, B, X) by frequency from WAMIT's numeric files ``stem.1`` and ``stem.3`` (or ``.2``)."""
    f1 = stem.with_suffix(".1")
    if not f1.exists():
        raise FileNotFoundError(f1)
    fA, fB = {}, {}
    # Rows have 4 columns at PER <= 0 (no damping) and 5 otherwise.
    data = [[float(v.replace("D", "E")) for v in ln.split()] for ln in f1.read_text().splitlines() if ln.strip()]
    for row in data:
        per, i, j, a = row[0], int(row[1]), int(row[2]), row[3]
        w = math.inf if per == 0 else (0.0 if per < 0 else _TWO_PI / per)
        fA.setdefault(w, {})[(i, j)] = a
        if len(row) > 4 and 0 < w < math.inf:
            fB.setdefault(w, {})[(i, j)] = row[4]
    f3 = stem.with_suffix(".3")
    if not f3.exists():
        f3 = stem.with_suffix(".2")
    if not f3.exists():
        raise HydroDataError(source, "excitation", f"neither {stem}.3 nor {stem}.2 found")
    fX = {}
    for row in np.loadtxt(f3, ndmin=2):
        w = _TWO_PI / row[0]
        fX.setdefault(w, {}).setdefault(float(row[1]), {})[int(row[2])] = row[5] + 1j * row[6]
    return fA, fB, fX


def _wamit_out_tables(freqs, source):
    """(A, B, X) by frequency from the tables of a WAMIT ``.out`` file (diffraction excitation, else Haskind)."""
    fA = {w: d["A"] for w, d in freqs.items()}
    fB = {w: d["B"] for w, d in freqs.items()}
    fX = {}
    for w, d in freqs.items():
        tabs = d["exc"]
        if "diffraction" in tabs:
            fX[w] = tabs["diffraction"]
        elif "haskind" in tabs:
            fX[w] = tabs["haskind"]
    if not fA:
        raise HydroDataError(source, "added_mass", "no ADDED-MASS tables found")
    return fA, fB, fX


def _wamit_hydrostatics(source, stem, bodies, n):
    """Nondimensional hydrostatic stiffness (n, n): from ``stem.hst`` when there is one, else the
    ``.out`` file's per-body heave-roll-pitch block, else zero (with a warning)."""
    C = np.zeros((n, n))
    if stem is not None and stem.with_suffix(".hst").exists():
        for row in np.loadtxt(stem.with_suffix(".hst"), ndmin=2):
            C[int(row[0]) - 1, int(row[1]) - 1] = row[2]
    elif bodies:
        for b, body in enumerate(bodies):
            o = 6 * b
            c33, c34, c35 = body.get("c3", [0, 0, 0])
            c44, c45, c46 = body.get("c4", [0, 0, 0])
            c55, c56 = body.get("c5", [0, 0])
            blk = np.zeros((6, 6))
            blk[2, 2], blk[2, 3], blk[2, 4] = c33, c34, c35
            blk[3, 3], blk[3, 4], blk[3, 5] = c44, c45, c46
            blk[4, 4], blk[4, 5] = c55, c56
            # WAMIT prints the upper triangle of the symmetric heave-roll-pitch
            # block; C(4,6) and C(5,6) (from the centre of gravity) have no
            # symmetric partner.
            blk[3, 2], blk[4, 2], blk[4, 3] = c34, c35, c45
            C[o : o + 6, o : o + 6] = blk
    else:
        warnings.warn(f"{source}: no hydrostatics found; hydrostatic_stiffness set to zero", stacklevel=3)
    return C


def read_wamit(path, rho: float = 1000.0, g: float = 9.81, length: float = 1.0, *, omega_max=None,
               symmetry_rtol: float = 0.5, damping_rtol: float = 0.02) -> HydroData:
    """Read WAMIT output into dimensional :class:`HydroData` (Capytaine phase convention).

    ``path``: a ``.out`` file, or a stem (``rm3`` or ``rm3.1`` etc.) whose
    numeric files ``stem.1`` (added mass, damping; columns PER I J Ā B̄),
    ``stem.3`` (diffraction excitation; PER BETA I Mod Pha Re Im; ``stem.2``,
    Haskind, if there is no .3) and ``stem.hst`` (I J C̄) are read; ``stem.out``
    supplies body names, reference points, volumes and centres of buoyancy
    when it exists. PER is the period in s; PER = 0 is ω = ∞ (A(∞)), PER < 0
    is ω = 0 (dropped).

    Dimensionalisation (WAMIT's nondimensional form, ρ, g, length L as given,
    since .out/.1 files do not store ρ; WAMIT prints L as "Length scale"):
    A = Ā ρ L^k, B = B̄ ρ ω L^k with k = 3 / 4 / 5 for translation-translation /
    mixed / rotation-rotation; F = X̄ ρ g L^m with m = 2 / 3 for force / moment;
    C = C̄ ρ g L^m with m = 2 / 3 / 4.

    Phase: WAMIT's time factor is e^{+iωt} and its incident wave
    Re(e^{i(ωt − k x')}) is the same wave (crest at the origin at t = 0, same
    direction angle) as Capytaine's Re(e^{i(kx' − ωt)}), so F̂_capytaine =
    conj(X̄_wamit) ρ g L^m. (Checked against the Capytaine run of RM3 in
    tests/test_bem.py.) Reference points are the body origins XBODY, YBODY,
    ZBODY; centres of buoyancy are WAMIT's (body frame) plus that origin.
    """
    path = Path(path)
    source = str(path)
    if path.suffix == ".out":
        out = path
        stem = path.with_suffix("")
        numeric = False
    else:
        stem = path.with_suffix("") if path.suffix in (".1", ".2", ".3", ".hst") else path
        out = stem.with_suffix(".out") if stem.with_suffix(".out").exists() else None
        numeric = True
        source = str(stem)
    if not numeric and not out.exists():
        raise FileNotFoundError(out)

    bodies, gdf_names, freqs, g_file = ([], [], {}, None)
    if out is not None:
        bodies, gdf_names, freqs, g_file = _parse_wamit_out(out)

    fA, fB, fX = _wamit_numeric_tables(stem, source) if numeric else _wamit_out_tables(freqs, source)
    n = int(max(max(i, j) for d in fA.values() for (i, j) in d))
    if n % 6:
        raise HydroDataError(source, "added_mass", f"{n} DOFs is not 6 per body (generalised modes unsupported)")
    nb = n // 6
    if g_file is not None and abs(g_file - g) > 1e-6 * g:
        warnings.warn(f"{source}: file says g = {g_file}, dimensionalising with g = {g}", stacklevel=2)

    headings = sorted({h for tab in fX.values() for h in tab})
    if not headings:
        raise HydroDataError(source, "excitation", "no excitation tables found")
    omega, A, B, X = _assemble_wamit(source, fA, fB, fX, n, headings)
    if omega_max is not None:
        keep = omega <= omega_max
        omega, A, B, X = omega[keep], A[keep], B[keep], X[keep]
    mass, force, stiff = _wamit_scales(n, rho, g, length)
    A = A * mass
    B = B * mass * omega[:, None, None]
    exc = np.conj(X) * force
    if math.inf in fA:
        A_inf = np.zeros((n, n))
        for (i, j), v in fA[math.inf].items():
            A_inf[i - 1, j - 1] = v
        A_inf = A_inf * mass
    else:
        A_inf = _added_mass_inf_ogilvie(omega, A, B)
        warnings.warn(f"{source}: no zero-period (infinite-frequency) entry; A(inf) estimated by Ogilvie's relation",
                      stacklevel=2)

    C = _wamit_hydrostatics(source, stem if numeric else None, bodies, n)
    C = C * stiff

    if len(bodies) == nb:
        ref = np.array([b.get("ref", [0, 0, 0]) for b in bodies], dtype=float) * length
        cob = np.array([b.get("cob", [np.nan] * 3) for b in bodies], dtype=float) * length + ref
        vol = np.array([np.mean(b.get("vol", [np.nan])) for b in bodies], dtype=float) * length**3
        com = np.array([b.get("cog", [np.nan] * 3) for b in bodies], dtype=float) * length + ref
        mass = _wamit_mass_matrix(bodies, vol, com - ref, rho, length)
    else:
        com, mass = None, None
        ref = np.zeros((nb, 3))
        cob = np.full((nb, 3), np.nan)
        vol = np.full(nb, np.nan)
    names = tuple(gdf_names) if len(gdf_names) == nb and len(set(gdf_names)) == nb else tuple(
        f"body{b}" for b in range(nb)
    )
    beta = np.deg2rad(np.array(headings, dtype=float))
    return _checked_hydro(
        source, omega, A, B, A_inf, exc, beta, C, vol, cob, ref, rho, g,
        math.inf if out is None else _wamit_depth(out), names,
        symmetry_rtol=symmetry_rtol, damping_rtol=damping_rtol, mass=mass, com=com,
    )


def _wamit_mass_matrix(bodies, vol, cog_rel, rho, length):
    """The mass matrix a WAMIT run was given, about each body's origin: mass ρ V (WAMIT's bodies
    float freely), the centre of gravity, and the inertia from the radii of gyration r_ij about the
    origin (I_ij = m r_ij |r_ij|, WAMIT's convention).  NaN for a body whose radii are all zero (the
    run was not given them) or whose volume is unknown."""
    nb = len(bodies)
    M = np.full((6 * nb, 6 * nb), np.nan)
    for k, b in enumerate(bodies):
        r = np.asarray(b.get("gyration", []), float) * length
        if r.shape != (3, 3) or not np.any(r) or not np.isfinite(vol[k]):
            continue
        m = rho * vol[k]
        c = np.nan_to_num(cog_rel[k])
        ch = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        blk = np.zeros((6, 6))
        blk[:3, :3] = m * np.eye(3)
        blk[:3, 3:] = -m * ch
        blk[3:, :3] = m * ch
        blk[3:, 3:] = m * r * np.abs(r)
        M[6 * k : 6 * k + 6] = 0.0
        M[6 * k : 6 * k + 6, 6 * k : 6 * k + 6] = blk
    return M


def _wamit_depth(out):
    for line in Path(out).read_text(errors="replace").splitlines()[:2000]:
        s = line.strip()
        if s.startswith("Water depth:"):
            rest = s.split(":", 1)[1]
            if "infinite" in rest.lower():
                return math.inf
            v = _floats(rest)
            if v:
                return v[0]
    return math.inf


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
             rotation_center=None, name="cylinder", lid=True):
    """A floating vertical circular cylinder (Capytaine FloatingBody), rigid-body DOFs.

    Wetted surface only (side and bottom disc), panels of about
    ``panel_size`` (default radius/4), optional internal lid. Rotations about
    ``rotation_center`` (default: centre of mass, default (x, y, 0)).
    """
    import capytaine as cpt

    if panel_size is None:
        panel_size = radius / 4.0
    n_theta = max(8, int(math.ceil(_TWO_PI * radius / panel_size)))
    n_r = max(2, int(math.ceil(radius / panel_size)))
    n_z = max(2, int(math.ceil(draught / panel_size)))
    # A closed cylinder twice as tall, clipped at z = 0: the wetted surface without a top disc.
    full = cpt.mesh_vertical_cylinder(
        length=2.0 * draught, radius=radius, center=(center[0], center[1], 0.0),
        resolution=(n_r, n_theta, 2 * n_z), name=f"{name}_mesh",
    )
    mesh = full.immersed_part()
    return _rigid_body(mesh, name, center_of_mass, rotation_center, lid, draught, panel_size,
                       default_cog=(center[0], center[1], 0.0))


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
        raise NotImplementedError("only dofs='rigid' (six rigid-body DOFs per body) is supported")
    omegas = np.asarray(omegas, dtype=float).reshape(-1)
    if np.any(~np.isfinite(omegas)) or np.any(omegas <= 0):
        raise ValueError("omegas must be finite and > 0; A(inf) is added automatically")
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
