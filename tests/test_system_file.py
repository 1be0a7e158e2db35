"""System files (TOML) -> System: valid files simulate, malformed ones give one clear error each."""

import copy
import math
import re
from pathlib import Path

import jax
import numpy as np
import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxmbd.hydro import test_barge_path
from jaxmbd.io.system_file import LoadedSystem, SystemFileError, load_system, system_from_dict
from jaxmbd.simulation import Integrator, initial_state, solve

HERE = Path(__file__).resolve().parent
BAD = sorted((HERE / "system_files" / "bad").glob("*.toml"))
DOCS = HERE.parent / "docs" / "system_file.md"

# An arm on a hinge under PD control, and cargo hanging from the arm's tip on a wire rope, with
# a spring, wind, a mooring, waves and a sweep: every section the loader reads except hydro.
PENDULUM = """
name = "rope_pendulum"
report_joints = ["hinge"]

[[bodies]]
name = "arm"
joint = "revolute"
joint_name = "hinge"
axis = [0, 1, 0]
mass = 10.0
com = [0.5, 0, 0]
inertia = [0.1, 1.0, 1.0]
q0_deg = [5.0]

[[bodies]]
name = "cargo"
joint = "free"
mass = 100.0
radii_of_gyration = [0.5, 0.5, 0.5]
q0_xyz = [1.0, 0.0, -4.5]

[[forces]]
kind = "wire_rope"
name = "hoist"
body_a = "arm"
point_a = [1.0, 0, 0]
body_b = "cargo"
point_b = [0, 0, 0.5]
EA = 1.0e6
length = 3.9
damping = 1.0e3

[[forces]]
kind = "spring_damper"
name = "tagline"
body_a = "world"
point_a = [3.0, 0, -4.0]
body_b = "cargo"
point_b = [0, 0, 0]
stiffness = 50.0
damping = 5.0
rest_length = 2.0

[[forces]]
kind = "wind"
body = "cargo"
point = [0, 0, 0]
area = 2.0
speed = 10.0
direction_deg = 45.0

[[forces]]
kind = "linear_mooring"
body = "arm"
point = [0, 0, 0]
reference = [0, 0, 0]
stiffness = [[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0]]
damping = [[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0]]

[[controllers]]
kind = "joint_pd"
joints = ["hinge"]
setpoint_deg = 5.0
kp = 1.0e3
kd = 50.0
gravity_compensation = false

[waves]
type = "jonswap"
hs = 2.0
tp = 8.0
n_frequencies = 10

[simulation]
duration = 0.05
save_dt = 0.01
method = "rk4"
dt = 0.01
seed = 3
checkpoint = "saves"

[sweep]
hs = [1.0, 2.0]
tp = [6.0, 8.0]
[sweep.limits]
"hoist/tension" = 2.0e4
"""


def test_pendulum_on_a_rope_round_trip(tmp_path):
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM)
    loaded = load_system(path)
    assert isinstance(loaded, LoadedSystem)
    sys = loaded.system
    assert sys.name == "rope_pendulum"
    assert sys.model.body_names == ("arm", "cargo")
    assert sys.model.joint_names == ("hinge", "cargo_joint")
    assert [f.name for f in sys.forces] == ["hoist", "tagline", "wind", "linear_mooring", "joint_pd"]
    assert sys.report_joints == ("hinge",)
    np.testing.assert_allclose(loaded.q0, [math.radians(5.0), 1.0, 0.0, -4.5, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(sys.forces[2].direction, math.radians(45.0))
    np.testing.assert_allclose(sys.forces[4].setpoint, math.radians(5.0))
    assert loaded.integrator.method == "rk4" and loaded.integrator.dt == 0.01
    assert loaded.integrator.checkpoint == "saves"
    assert loaded.simulation.duration == 0.05 and loaded.simulation.seed == 3
    assert loaded.sweep.hs == (1.0, 2.0) and loaded.sweep.limits == {"hoist/tension": 2.0e4}
    assert loaded.sweep.statistic == "mpm" and loaded.scenario is None
    assert loaded.path == path and loaded.config["bodies"][0]["name"] == "arm"

    # A few fixed steps (Euler: one trace of the right-hand side keeps the compile short).
    ts = np.arange(6) * loaded.integrator.dt
    ys, ok, _ = solve(sys, initial_state(sys, loaded.q0), ts, integrator=Integrator("euler", dt=loaded.integrator.dt))
    q = np.asarray(ys[0])
    assert bool(ok) and q.shape == (6, sys.model.nq) and np.all(np.isfinite(q))
    # the rope holds the cargo (slightly stretched at q0, it pulls it up): free fall would drop 12 mm
    assert -1e-3 < q[-1, 3] - q[0, 3] < 1e-2


def _docs_example() -> str:
    block = re.search(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S).group(1)
    return block


def test_floating_crane_from_the_docs(tmp_path):
    """The schema's complete example (barge with the packaged BEM data, booms on fixed joints,
    cargo on a wire rope, JONSWAP waves) loads and runs a few fixed steps in one wave realisation."""
    text = _docs_example().replace('"../jaxmbd/data/barge_hydro.nc"', f'"{test_barge_path().as_posix()}"')
    path = tmp_path / "crane.toml"
    path.write_text(text)
    loaded = load_system(path)
    sys = loaded.system
    assert sys.model.body_names == ("barge", "king", "boom1", "boom2", "cargo")
    assert [f.name for f in sys.forces] == ["hydro", "hoist", "mooring", "wind"]
    assert sys.forces[1].winch  # the scenario pays out rope
    assert sys.waves.spectrum is not None and sys.waves.n_frequencies == 60
    assert loaded.simulation.static_equilibrium
    free = loaded.simulation.equilibrium_free
    assert free.shape == (sys.model.nv,) and free.sum() == 9 and free[2] and not free[0]
    assert set(loaded.sweep.limits) == {"hoist/tension", "hoist/sway"}
    assert [p["name"] for p in loaded.scenario_phases] == ["hold", "lower"]
    ts = np.arange(5) * loaded.integrator.dt
    waves = sys.waves.realise(jax.random.key(loaded.simulation.seed))
    ys, ok, _ = solve(sys, initial_state(sys, loaded.q0), ts, integrator=Integrator("euler", dt=loaded.integrator.dt),
                   waves=waves)
    q = np.asarray(ys[0])
    assert bool(ok) and np.all(np.isfinite(q))
    # the barge floats and the rope holds the cargo (free fall would drop 20 cm in 0.2 s)
    cargo_z = q[:, sys.model.q_slice("cargo")][:, 2]
    assert np.min(cargo_z - cargo_z[0]) > -0.02
    assert np.max(np.abs(q[:, 2])) < 0.05


def test_relative_paths_and_file_errors(tmp_path):
    """A data file is found relative to the system file; a missing system file is one error."""
    barge = tmp_path / "data" / "barge.nc"
    barge.parent.mkdir()
    barge.write_bytes(test_barge_path().read_bytes())
    (tmp_path / "s.toml").write_text(
        '[[bodies]]\nname = "barge"\njoint = "free"\nmass = 4.1e5\nradii_of_gyration = [3.5, 5, 5.2]\n'
        '[[hydro]]\nfile = "data/barge.nc"\nradiation = false\n[simulation]\nduration = 1.0\n'
    )
    loaded = load_system(tmp_path / "s.toml")
    assert loaded.system.forces[0].bodies == ("barge",)
    with pytest.raises(SystemFileError, match="does not exist"):
        load_system(tmp_path / "nothing.toml")


def _expected_field(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    m = re.search(r"error names: (.+?)\s*$", first)
    assert first.startswith("#") and m, f"{path.name}: first line must say '# ...; error names: FIELD'"
    return m.group(1)


def test_bad_corpus_is_large_enough():
    assert len(BAD) >= 20


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_malformed_file_gives_one_clear_error(path):
    field = _expected_field(path)
    with pytest.raises(SystemFileError) as info:
        load_system(path)
    err = info.value
    msg = str(err)
    assert "\n" not in msg
    assert msg.startswith(str(path) + ": ")
    assert err.field == field or err.field.startswith(field + "."), f"{msg!r} does not name {field!r}"
    # no chained library exception or traceback behind the message
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


# --------------------------------------------------------------------------- property-based

BASE = tomllib.loads(PENDULUM)
BASE["simulation"]["duration"] = 1.0


def _paths(node, prefix=()):
    """Every key path of the table (tables, array entries and leaves)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append(prefix + (k,))
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (dict, list)):
                out.append(prefix + (i,))
                out += _paths(v, prefix + (i,))
    return out


PATHS = _paths(BASE)
ODD_VALUES = [
    -1.0, 0.0, -1e300, 1e300, math.nan, math.inf, -math.inf, 7, True, "x", "world", "nobody", "arm", "hinge",
    "jonswap", [], [1.0], [1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [[1.0, 2.0], [3.0]], [math.nan, 0.0, 0.0],
    ["a", "b"], {}, {"a": 1.0}, [{"kind": "wind"}],
]


def _mutate(cfg, path, op, value):
    *head, last = path
    node = cfg
    for k in head:
        node = node[k]
    if op == "delete":
        del node[last]
    elif op == "replace":
        node[last] = copy.deepcopy(value)
    elif op == "unknown_key":
        target = node[last]
        if isinstance(target, dict):
            target["surprise"] = copy.deepcopy(value)
        else:
            node[last] = copy.deepcopy(value)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(PATHS), st.sampled_from(["delete", "replace", "unknown_key"]),
                  st.sampled_from(ODD_VALUES)),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_files_load_or_raise_system_file_error(mutations):
    cfg = copy.deepcopy(BASE)
    for path, op, value in mutations:
        try:
            _mutate(cfg, path, op, value)
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed or replaced this path
    try:
        loaded = system_from_dict(cfg, path=HERE / "mutated.toml")
    except SystemFileError as err:
        assert "\n" not in str(err) and str(err).startswith(str(HERE / "mutated.toml"))
        return
    assert loaded.system.model.nq == np.asarray(loaded.q0).shape[0]


def test_the_physical_checks_are_an_explicit_step():
    """``load_system(validate=False)`` only reads: a massless leaf body (singular mass matrix at q0)
    is read, and refused by the validation that ``load_system`` runs by default."""
    import jaxmbd as mbd

    path = Path(__file__).parent / "system_files" / "bad" / "massless_leaf.toml"
    loaded = mbd.load_system(path, validate=False)
    assert loaded.system.model.n_bodies >= 1
    with pytest.raises(mbd.SystemFileError, match="singular mass matrix"):
        mbd.load_system(path)


# The corpus's mistakes that need more than the file to show: what the loader reads after it has built (and so
# compiled) the elements, each with the reason.
_FOUND_AFTER_BUILDING = {
    "controller_free_joint": "the controller's construction checks the kinds of the joints it drives",
    "massless_leaf": "the mass matrix at q0, evaluated",
    "scenario_no_duration": "a [scenario] names the elements' outputs: read after the elements are built",
    "sweep_unknown_output": "a [sweep]'s limits name the elements' outputs",
    "sweep_without_waves": "read with the [sweep], after the elements",
    "hydro_heading_outside": "the hydrodynamic data's headings, read from the data",
}


def test_a_mistake_the_file_alone_shows_is_reported_before_anything_compiles():
    """Of the malformed corpus, every file whose mistake is in what the loader reads before it builds the
    hydrodynamics and the elements ([simulation], the bodies, the elements' keys, types, shapes, bounds and
    names, the waves) is refused with no XLA program compiled before the error (each file after
    jax.clear_caches(), in a fresh process): the error comes in a fraction of a second, not after the
    elements' programs; the others are the listed ones, each with its reason."""
    import json
    import subprocess
    import sys

    code = """
import json, sys, jax
import jaxmbd
from jax import monitoring
from jaxmbd.io.system_file import load_system
n = [0]
monitoring.register_event_duration_secs_listener(
    lambda name, d, **kw: n.__setitem__(0, n[0] + (name == "/jax/core/compile/backend_compile_duration")))
out = {}
for p in sys.argv[1:]:
    jax.clear_caches()
    n[0] = 0
    try:
        load_system(p)
    except Exception:
        pass
    out[p] = n[0]
print(json.dumps(out))
"""
    got = subprocess.run([sys.executable, "-c", code, *map(str, BAD)], capture_output=True, text=True, timeout=300)
    counts = {Path(p).stem: c for p, c in json.loads(got.stdout.splitlines()[-1]).items()}
    compiled = {stem for stem, c in counts.items() if c}
    assert compiled <= set(_FOUND_AFTER_BUILDING), {s: counts[s] for s in compiled - set(_FOUND_AFTER_BUILDING)}
    assert len(counts) == len(BAD) and len(counts) - len(compiled) >= 40
