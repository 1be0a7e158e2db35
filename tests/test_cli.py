"""The jaxmbd command: input errors are one line, results plot."""

import subprocess
import sys

import jax.numpy as jnp
import pytest

from jaxmbd.cli import main
from jaxmbd.examples import simple_pendulum
from jaxmbd.forces import SpringDamper
from jaxmbd.simulation import Integrator, simulate
from jaxmbd.system import System


def test_bad_system_file_is_one_line_and_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[bodies]]\nname = "a"\nmass = -1.0\n[simulation]\nduration = 1.0\n')
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.toml" in err and "mass" in err


def test_missing_file_is_reported(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nowhere.toml")]) == 2
    assert "nowhere.toml" in capsys.readouterr().err


def test_plot_writes_one_png_per_output(tmp_path):
    spring = SpringDamper(name="spring", body_a="world", body_b="bob", point_a=jnp.array([1.0, 0.0, -1.0]),
                          point_b=jnp.zeros(3), stiffness=jnp.asarray(10.0), damping=jnp.asarray(0.1),
                          rest_length=jnp.asarray(0.5))
    res = simulate(System(simple_pendulum(), (spring,)), 1.0, save_dt=0.1, q0=jnp.array([0.1]),
                   integrator=Integrator("rk4", dt=0.01))
    nc = res.to_netcdf(tmp_path / "r.nc")
    out = subprocess.run([sys.executable, "-m", "jaxmbd.cli", "plot", str(nc), "--out", str(tmp_path / "plots")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert sorted(p.relative_to(tmp_path / "plots").as_posix() for p in (tmp_path / "plots").rglob("*.png")) == [
        "spring/force.png", "spring/length.png"]  # each output at its path in the result file


@pytest.mark.slow  # a speed feature, 27 s of compiling in subprocesses: in the slow suite
def test_the_command_keeps_compiled_programs_between_runs(tmp_path):
    """``jaxmbd run`` twice: the first run writes the compiled programs to the cache folder
    ($XDG_CACHE_HOME/jaxmbd/xla by default), the second finds them (no new entries) and gives the same
    result; ``JAXMBD_CACHE_DIR=off`` writes nothing."""
    import os

    import numpy as np
    import xarray as xr
    from test_system_file import PENDULUM

    (tmp_path / "p.toml").write_text(PENDULUM)

    def run(out, xdg, folder=None):
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / xdg))
        for name in ("JAX_COMPILATION_CACHE_DIR", "JAXMBD_CACHE_DIR"):
            env.pop(name, None)
        if folder:
            env["JAXMBD_CACHE_DIR"] = folder
        done = subprocess.run([sys.executable, "-m", "jaxmbd.cli", "run", str(tmp_path / "p.toml"), "--duration", "2",
                               "--out", str(tmp_path / out)], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        with xr.open_dataset(next((tmp_path / out).glob("*.nc"))) as ds:
            return ds["q"].values

    first = run("a", "xdg")
    cache = tmp_path / "xdg" / "jaxmbd" / "xla"
    entries = sorted(p.name for p in cache.iterdir())
    assert any("solve" in name for name in entries), entries
    second = run("b", "xdg")
    assert sorted(p.name for p in cache.iterdir()) == entries
    np.testing.assert_array_equal(first, second)
    run("c", "xdg_off", "off")
    assert not (tmp_path / "xdg_off").exists()


VECTOR_ONLY = """
name = "moored_block"
[[bodies]]
name = "block"
joint = "free"
mass = 1000.0
radii_of_gyration = [1.0, 1.0, 1.0]
q0_xyz = [0.1, 0.0, 0.0]

[[forces]]
kind = "linear_mooring"
name = "mooring"
body = "block"
point = [0, 0, 0]
reference = [0, 0, 0]
stiffness = [[1e4,0,0,0,0,0],[0,1e4,0,0,0,0],[0,0,1e4,0,0,0],[0,0,0,1e4,0,0],[0,0,0,0,1e4,0],[0,0,0,0,0,1e4]]
damping = [[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0]]

[simulation]
duration = 0.2
save_dt = 0.05
method = "euler"
dt = 0.05
"""


def test_run_prints_vector_outputs_by_component(tmp_path, capsys):
    """A system whose only output is a vector (the mooring's 6-component wrench) prints one labelled
    row per component, not an empty table."""
    (tmp_path / "m.toml").write_text(VECTOR_ONLY)
    assert main(["run", str(tmp_path / "m.toml"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    for lab in ("fx", "fy", "fz", "mx", "my", "mz"):
        assert f"mooring/force[{lab}]" in out
    row = next(line for line in out.splitlines() if "mooring/force[fx]" in line).split()
    assert row[1] == "kN" and next(r for r in out.splitlines() if "[mx]" in r).split()[1:3] == ["kN", "m"]  # display units
    assert float(row[2]) < 0  # the spring pulls the block back towards x = 0: fx < 0 at its largest
