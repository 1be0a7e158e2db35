"""NetCDF files that name things as the tables do.

An output ``element/name`` (``hoist/tension``, ``hull/eta``) is the variable ``name`` of the NetCDF-4
group ``element``: the same path in the file, in the tables, in ``result.outputs`` and in the limits of a
sweep.  Everything without a ``/`` (the time, the joint coordinates ``q`` and velocities ``v``, the
phase) is in the root group, and so are all coordinates, which the groups inherit.

Reading: :func:`open_result` gives one flat :class:`xarray.Dataset` whose variables are named by their
paths (``ds["hoist/tension"]``); ``xarray.open_datatree(path)["hoist/tension"]`` gives the same variable
with the coordinates, and any HDF5 or NetCDF-4 reader finds it at that path (``ncdump -h`` lists the
groups)."""

from __future__ import annotations

from pathlib import Path

from .errors import JaxmbdError


class NetcdfError(JaxmbdError):
    """A dataset that cannot be written as groups (a name that is both a variable and a group)."""


def write(ds, path, **kwargs) -> Path:
    """Write ``ds`` to ``path`` (NetCDF-4 through h5netcdf), each variable named ``a/b`` as ``b`` in group
    ``a``; the root keeps the other variables, every coordinate and the attributes."""
    import xarray as xr

    root, groups = {}, {}
    for name, var in ds.data_vars.items():
        parent, _, leaf = str(name).rpartition("/")
        (groups.setdefault(parent, {}) if parent else root)[leaf] = var.variable
    clash = sorted(f"{p}/{leaf}" for p in groups for leaf in groups[p] if f"{p}/{leaf}" in groups)
    clash += sorted(leaf for leaf in root if leaf in {p.split("/")[0] for p in groups})
    if clash:
        raise NetcdfError(f"{path}: {clash[0]!r} is both a variable and a group of variables; rename one of them")
    tree = {"/": xr.Dataset(root, coords=ds.coords, attrs=ds.attrs)}
    tree |= {p: xr.Dataset(v) for p, v in groups.items()}
    path = Path(path)
    xr.DataTree.from_dict(tree).to_netcdf(path, engine="h5netcdf", **kwargs)
    return path


def open_result(path):
    """The file at ``path`` as one flat dataset in memory, each group's variable named by its path
    (``hoist/tension``), every group's coordinates and the root's attributes."""
    import xarray as xr

    with xr.open_datatree(path, engine="h5netcdf") as tree:
        data, coords = {}, {}
        for node in tree.subtree:
            prefix = node.path.strip("/")
            own = node.to_dataset(inherit=False)
            coords.update({k: v.variable for k, v in own.coords.items()})
            data.update({(f"{prefix}/{k}" if prefix else str(k)): v.variable for k, v in own.data_vars.items()})
        return xr.Dataset(data, coords=coords, attrs=dict(tree.attrs)).load()
