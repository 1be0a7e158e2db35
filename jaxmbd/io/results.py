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


def result_to_dataset(result) -> xr.Dataset:
    """Dataset with dims (realisation,) time, q_coord, v_coord and one variable per output."""
    model = result.system.model
    qn, vn = _coord_names(model)
    lead = ("realisation", "time") if result.batched else ("time",)
    data = {
        "q": (lead + ("q_coord",), np.asarray(result.q), {"long_name": "joint coordinates", "units": "m, rad, quaternion"}),
        "v": (lead + ("v_coord",), np.asarray(result.v), {"long_name": "joint velocities", "units": "m/s, rad/s"}),
    }
    if np.asarray(result.z).shape[-1]:
        data["z"] = (lead + ("state",), np.asarray(result.z), {"long_name": "force-element internal states"})
    for name, val in result.outputs.items():
        val = np.asarray(val)
        extra = tuple(f"{name.replace('/', '_')}_dim{k}" for k in range(val.ndim - len(lead)))
        data[name.replace("/", "_")] = (lead + extra, val, {"long_name": name})
    coords = {"time": ("time", np.asarray(result.time), {"units": "s"}), "q_coord": qn, "v_coord": vn}
    if result.batched:
        coords["realisation"] = np.arange(np.asarray(result.q).shape[0])
    attrs = {"system": result.system.name, "bodies": json.dumps(list(model.body_names)),
             "joints": json.dumps(list(model.joint_names))}
    attrs.update({k: (v if isinstance(v, (str, int, float)) else json.dumps(v)) for k, v in result.attrs.items()})
    return xr.Dataset(data, coords=coords, attrs=attrs)
