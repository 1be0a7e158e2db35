"""Files in and out: system files (TOML) and results (NetCDF through xarray)."""
