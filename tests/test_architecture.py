"""The package's structure: imports go down the layers only, no private name crosses a package, no
submodule is hidden behind a function of the same name, and every error is a JaxmbdError."""

import ast
import builtins
import importlib
import pathlib
import pkgutil

import jaxmbd

ROOT = pathlib.Path(jaxmbd.__file__).parent

# Lowest first: a module may import from its own layer and those before it.  The force elements,
# hydrodynamics, flexible bodies and controllers are one layer (elements) above the system.
LAYERS = [
    {"errors", "_xla", "config", "shapes", "tables", "units", "netcdf"},
    {"spatial"},
    {"joints"},
    {"model"},
    {"kinematics"},
    {"dynamics"},
    {"validity", "system"},
    {"forces", "control", "hydro", "flex", "statistics", "fields", "loops"},
    {"paths"},
    {"results", "equilibrium", "simulation", "mooring", "conditions", "report"},
    {"examples", "cluster"},
    {"scenario"},
    {"run"},
    {"sweep"},
    {"operability"},
    {"io"},
    {"optim"},
    {"cli"},
]


def _layer(name: str) -> int | None:
    for k, layer in enumerate(LAYERS):
        if name in layer:
            return k
    return None


def _imports(path: pathlib.Path):
    """(line, imported module, names) of every ``from ... import`` in a module of the package."""
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    package = parts[:-1] if path.name != "__init__.py" else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module, [a.name for a in node.names]


def _first_level(module: str, names) -> list[str]:
    parts = module.split(".")
    if parts[0] != "jaxmbd":
        return []
    return [parts[1]] if len(parts) > 1 else list(names)


def test_imports_go_down_the_layers_and_no_private_name_crosses_a_package():
    upward, private = [], []
    for path in ROOT.rglob("*.py"):
        me = path.relative_to(ROOT).parts[0].removesuffix(".py")
        if me == "__init__":
            continue  # the package's own namespace re-exports every layer
        for line, module, names in _imports(path):
            for other in _first_level(module, names):
                if other == me or _layer(other) is None:
                    continue
                assert _layer(me) is not None, f"{path}: module {me!r} is in no layer of this test"
                if _layer(other) > _layer(me):
                    upward.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
                private += [f"{path.relative_to(ROOT)}:{line} imports {module}.{n}" for n in names
                            if n.startswith("_") and not n.startswith("__")]
    assert not upward, upward
    assert not private, private


def test_no_submodule_is_shadowed_and_the_public_names_exist():
    for info in pkgutil.iter_modules(jaxmbd.__path__):
        module = importlib.import_module(f"jaxmbd.{info.name}")
        attr = getattr(jaxmbd, info.name, module)
        assert attr is module, f"jaxmbd.{info.name} is {attr!r}, not the module"
    for name in jaxmbd.__all__:
        assert hasattr(jaxmbd, name), name


def test_every_error_jaxmbd_raises_on_purpose_is_a_jaxmbd_error():
    from jaxmbd.cli import ResultFileError
    from jaxmbd.hydro.bem import HydroDataError
    from jaxmbd.scenario import ScenarioError
    from jaxmbd.sweep import SweepError

    for cls in (jaxmbd.ModelError, jaxmbd.SystemFileError, HydroDataError, ScenarioError, SweepError,
                jaxmbd.SimulationError, ResultFileError):
        assert issubclass(cls, jaxmbd.JaxmbdError), cls


def _raised_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name):
                yield node.lineno, exc.id


def test_every_raise_in_the_package_is_a_jaxmbd_error():
    """``raise X(...)`` names a JaxmbdError subclass everywhere (still a ValueError, TypeError or
    KeyError where that is what callers catch); only abstract methods raise NotImplementedError."""
    plain, classes = [], {}
    paths = sorted(ROOT.rglob("*.py"))
    for path in paths:  # every class of the package by name (some errors are imported inside a function)
        rel = path.relative_to(ROOT).with_suffix("")
        module = importlib.import_module(".".join(["jaxmbd", *(p for p in rel.parts if p != "__init__")]))
        classes |= {k: v for k, v in vars(module).items() if isinstance(v, type) and issubclass(v, BaseException)}
    for path in paths:
        rel = path.relative_to(ROOT).with_suffix("")
        for line, name in _raised_names(ast.parse(path.read_text(encoding="utf-8"))):
            if name == "NotImplementedError" or name in ("exc", "err", "e"):
                continue
            cls = classes.get(name) or getattr(builtins, name, None)
            if not (isinstance(cls, type) and issubclass(cls, jaxmbd.JaxmbdError)):
                plain.append(f"{rel}:{line} raises {name}")
    assert not plain, plain


_DEPENDENCIES = {"jax", "jnp", "diffrax", "equinox", "eqx", "optimistix", "optx", "optax", "numpy", "np", "scipy",
                 "xarray", "xr", "capytaine", "cpt", "matplotlib", "plt"}


def test_no_private_name_of_a_dependency_is_used():
    """``diffrax.RESULTS._index_to_message``, ``jax._src``: private names change without notice."""
    found = []
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and any(p.startswith("_") for p in node.module.split(".")):
                if node.module.split(".")[0] in _DEPENDENCIES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} from {node.module}")
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in _DEPENDENCIES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert not found, found


def test_no_module_over_700_lines_and_no_class_over_300():
    """Size is where structure hides: a module past 700 lines or a class past 300 holds two jobs."""
    big = []
    for path in ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 700:
            big.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 300:
                big.append(f"{path.relative_to(ROOT)}: class {node.name} {node.end_lineno - node.lineno + 1} lines")
    assert not big, big


def test_the_version_is_written_once():
    import importlib.metadata

    assert importlib.metadata.version("jaxmbd") == jaxmbd.__version__
    text = (ROOT.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text and "\nversion =" not in text.split("[tool.setuptools.dynamic]")[0]


def test_importing_the_package_computes_nothing():
    """jax.distributed.initialize must come before any computation: a multi-process sweep imports jaxmbd
    first.  An array made at import (a default built with jnp) broke it; every module is imported here in a
    fresh process, then the distributed runtime starts (one process)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    modules = sorted({f"jaxmbd.{p.relative_to(ROOT).with_suffix('').as_posix().replace('/', '.')}".removesuffix(".__init__")
                      for p in ROOT.rglob("*.py") if p.name != "__main__.py"})
    code = (f"import importlib\nfor m in {modules!r}: importlib.import_module(m)\nimport jax\n"
            f"jax.distributed.initialize(coordinator_address='127.0.0.1:{port}', num_processes=1, process_id=0)\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]
