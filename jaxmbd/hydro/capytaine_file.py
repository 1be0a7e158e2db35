"""Reading Capytaine's NetCDF output into :class:`~jaxmbd.hydro.coefficients.HydroData`."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from ..errors import DataFileNotFoundError
from .coefficients import RIGID_DOFS, HydroData, HydroDataError, _added_mass_inf_ogilvie, _checked_hydro


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
            raise DataFileNotFoundError(path)
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
