"""Results as xarray Datasets / NetCDF, with units and the configuration in the attributes."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr


def _coord_names(model):
    qn, vn = [], []
    for i, j in enumerate(model.joints):
        jn = model.joint_names[i]
        qn += [f"{jn}[{k}]" for k in range(j.nq)] if j.nq > 1 else ([jn] if j.nq else [])
        vn += [f"{jn}[{k}]" for k in range(j.nv)] if j.nv > 1 else ([jn] if j.nv else [])
    return qn, vn


_DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
_WRENCH = ("fx", "fy", "fz", "mx", "my", "mz")


def component_labels(name: str, n: int) -> tuple[str, list[str]]:
    """(dimension name, labels) of the n components of vector output ``name``: the six DOFs of each
    hydrodynamic body (``hydro/eta``, ``hydro/excitation``, ...), force and moment of a wrench, x y z
    of a 3-vector, else indices."""
    var = name.replace("/", "_")
    leaf = name.rsplit("/", 1)[-1]
    if n % 6 == 0 and name.split("/")[0] != "joint" and leaf in ("eta", "excitation", "radiation", "hydrostatic"):
        labels = [f"{_DOFS[k % 6]}{'' if n == 6 else k // 6}" for k in range(n)]
        return ("dof" if n == 6 else f"{var}_dof"), labels
    if n == 6:
        return "component", list(_WRENCH)
    if n == 3:
        return "xyz", ["x", "y", "z"]
    return f"{var}_index", [str(k) for k in range(n)]


def result_to_dataset(result) -> xr.Dataset:
    """Dataset with dims (realisation,) time, q_coord, v_coord and one variable per output, each with
    ``units`` and ``long_name``; vector outputs have a labelled dimension (``dof``, ``component``,
    ``xyz``)."""
    from . import __version__

    system = result.system
    model = system.model
    qn, vn = _coord_names(model)
    lead = ("realisation", "time") if result.batched else ("time",)
    data = {
        "q": (lead + ("q_coord",), np.asarray(result.q), {"long_name": "joint coordinates",
                                                           "units": "m (positions), rad (angles), 1 (quaternions)"}),
        "v": (lead + ("v_coord",), np.asarray(result.v), {"long_name": "joint velocities", "units": "m/s, rad/s"}),
    }
    if np.asarray(result.z).shape[-1]:
        data["z"] = (lead + ("state",), np.asarray(result.z),
                     {"long_name": "force-element internal states", "units": "per element (see its documentation)"})
    units = system.output_units()
    coords = {"time": ("time", np.asarray(result.time), {"units": "s", "long_name": "time"}), "q_coord": qn,
              "v_coord": vn}
    for name, val in result.outputs.items():
        val = np.asarray(val)
        dims = lead
        if val.ndim == len(lead) + 1:
            dim, labels = component_labels(name, val.shape[-1])
            coords.setdefault(dim, (dim, labels))
            dims = lead + (dim,)
        elif val.ndim > len(lead) + 1:
            dims = lead + tuple(f"{name.replace('/', '_')}_dim{k}" for k in range(val.ndim - len(lead)))
        data[name.replace("/", "_")] = (dims, val, {"long_name": name, "units": units.get(name, "unknown")})
    if result.batched:
        coords["realisation"] = ("realisation", np.arange(np.asarray(result.q).shape[0]),
                                 {"long_name": "Monte-Carlo realisation (wave seed index)", "units": "1"})
    attrs = {"Conventions": "CF-1.8", "title": f"jaxmbd simulation of {system.name}", "system": system.name,
             "jaxmbd_version": __version__, "history": f"{_now()} jaxmbd",
             "bodies": json.dumps(list(model.body_names)), "joints": json.dumps(list(model.joint_names))}
    if system.waves is not None:
        attrs["sea_state"] = _describe_sea(system.waves)
    attrs.update({k: (v if isinstance(v, (str, int, float)) else json.dumps(v)) for k, v in result.attrs.items()})
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _describe_sea(waves) -> str:
    try:
        out = {}
        current = getattr(waves, "current", None)
        if current is not None:
            out["current"] = {"surface_speed_m_s": float(current.speed), "direction_rad": float(current.direction),
                              "profile": None if current.profile_depth is None else
                              [[float(d), float(f)] for d, f in zip(current.profile_depth, current.profile_factor)]}
        if getattr(waves, "regular", None) is not None:
            w = waves.regular
            out["regular"] = {"height_m": float(w.height), "period_s": float(w.period), "direction_rad": float(w.direction)}
            return json.dumps(out)
        spec = getattr(waves, "spectrum", None)
        if spec is None:
            return json.dumps(out | {"waves": "none (calm water)"})
        out |= {"spectrum": type(spec).__name__, "n_frequencies": int(waves.n_frequencies),
                "omega_min_rad_s": float(waves.omega_min), "omega_max_rad_s": float(waves.omega_max),
                "mean_direction_rad": float(waves.mean_direction)}
        for field in ("hs", "tp", "gamma"):
            if hasattr(spec, field):
                out[f"{field}"] = float(getattr(spec, field))
        return json.dumps(out)
    except (AttributeError, TypeError) as exc:  # a wave description of another kind
        return f"{type(waves).__name__} ({exc})"
