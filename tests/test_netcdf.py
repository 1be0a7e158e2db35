"""Result files name each output as the tables do: ``element/name`` is the variable ``name`` of the group
``element``; read back flat, every variable, coordinate and attribute is what was written, bit for bit."""

import numpy as np
import pytest
import xarray as xr

from jaxmbd.netcdf import NetcdfError, open_result, write


def _dataset():
    rng = np.random.default_rng(3)
    return xr.Dataset(
        {"q": (("realisation", "time", "q_coord"), rng.normal(size=(2, 5, 3)), {"units": "m"}),
         "hull/eta": (("realisation", "time", "dof"), rng.normal(size=(2, 5, 6)), {"units": "m, rad", "long_name": "hull/eta"}),
         "hoist/tension": (("realisation", "time"), rng.normal(size=(2, 5)), {"units": "N"}),
         "hoist/tension_max_between": (("realisation", "time"), rng.normal(size=(2, 5)), {"units": "N"}),
         "joint/boom/angle": (("time",), rng.normal(size=5), {"units": "rad"})},
        coords={"time": ("time", np.arange(5) * 0.1, {"units": "s"}), "realisation": np.arange(2),
                "q_coord": ["a", "b", "c"], "dof": ["surge", "sway", "heave", "roll", "pitch", "yaw"]},
        attrs={"system": "x", "seed": 3})


def test_groups_round_trip_bit_for_bit(tmp_path):
    ds = _dataset()
    write(ds, tmp_path / "r.nc")
    back = open_result(tmp_path / "r.nc")
    assert sorted(back.data_vars) == sorted(ds.data_vars) and back.attrs == ds.attrs
    for name in ds.variables:
        np.testing.assert_array_equal(back[name].values, ds[name].values)
        assert back[name].dims == ds[name].dims and back[name].attrs == ds[name].attrs, name
    with xr.open_datatree(tmp_path / "r.nc", engine="h5netcdf") as tree:  # the groups, as any NetCDF-4 reader sees them
        assert set(tree.children) == {"hull", "hoist", "joint"} and "tension_max_between" in tree["hoist"].dataset
        assert list(tree["hull/eta"].coords["dof"].values) == list(ds["dof"].values)  # inherited from the root


def test_a_name_that_is_a_variable_and_a_group_is_one_line(tmp_path):
    ds = xr.Dataset({"hoist": ("t", np.zeros(2)), "hoist/tension": ("t", np.zeros(2))})
    with pytest.raises(NetcdfError, match=r"'hoist' is both a variable and a group") as err:
        write(ds, tmp_path / "x.nc")
    assert "\n" not in str(err.value) and "x.nc" in str(err.value)
