"""Elements describe themselves: every registered force element and controller declares each field
once (jaxmbd.fields), and the docs' element tables are generated from those declarations."""

import pytest

from jaxmbd import control, forces
from jaxmbd.fields import field_specs
from jaxmbd.io import element_docs

ELEMENTS = {**forces.KINDS, **control.KINDS}


@pytest.mark.parametrize("kind", sorted(ELEMENTS))
def test_every_field_of_a_registered_element_is_declared(kind):
    specs = field_specs(ELEMENTS[kind].file_form or ELEMENTS[kind])  # raises on an undeclared field
    for name, (spec, _) in specs.items():
        assert name == "name" or spec.doc, f"{kind}.{name}: no description"
        if spec.kind == "array":
            # a table of any length (shapes None) is checked by the element's own file_rules
            own_rules = "file_rules" in vars(ELEMENTS[kind].file_form or ELEMENTS[kind])
            assert spec.shapes or (spec.shapes is None and own_rules), f"{kind}.{name}: no shape"


def test_the_docs_element_tables_are_generated_from_the_declarations():
    text = element_docs.DOCS.read_text(encoding="utf-8")
    assert element_docs.updated(text) == text, "docs/system_file.md is stale: run python -m jaxmbd.io.element_docs"
    for kind in ELEMENTS:
        assert f"#### `{kind}`" in text


def test_an_element_without_declarations_cannot_be_read_from_a_file():
    import equinox as eqx
    import jax

    from jaxmbd.system import ForceElement

    class Undeclared(ForceElement):
        name: str = eqx.field(static=True)
        gain: jax.Array

    with pytest.raises(TypeError, match="Undeclared.gain: declare it"):
        field_specs(Undeclared)


def _literal_defaults(module):
    """(line, key) of every ``r.number / integer / boolean / string / vector(t, f, KEY, DEFAULT)`` call of
    ``module`` whose default is a literal number, string or bool written there."""
    import ast
    import inspect

    found = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "r" and node.func.attr in ("number", "integer", "boolean", "string", "vector")):
            args = node.args[3:] if node.func.attr != "vector" else node.args[4:]
            if args and isinstance(args[0], ast.Constant) and args[0].value is not None:
                key = node.args[2].value if isinstance(node.args[2], ast.Constant) else "?"
                found.append((node.lineno, key))
    return found


def test_each_default_of_the_sea_the_hydrodynamic_body_and_the_integrator_is_written_once():
    """Their readers take every default from the declared keys, which take it from the class or function
    that holds it (jaxmbd.tables.default_of); the docs tables are generated from the same keys (above)."""
    import dataclasses

    from jaxmbd.hydro import body_file, sea
    from jaxmbd.hydro.body import create_hydro_body
    from jaxmbd.hydro.sea import SeaState
    from jaxmbd.run import SIMULATION_KEYS
    from jaxmbd.simulation import Integrator
    from jaxmbd.tables import default_of

    for module in (sea, body_file):
        assert not _literal_defaults(module), (module.__name__, _literal_defaults(module))
    import jaxmbd.run as run_module

    assert not _literal_defaults(run_module), _literal_defaults(run_module)
    for name in ("n_frequencies", "omega_min", "omega_max", "n_directions", "spreading", "random_frequencies", "water_depth"):
        assert sea.WAVE_KEYS[name].default == default_of(SeaState, name)
    for f in dataclasses.fields(Integrator):
        if f.name in SIMULATION_KEYS:
            assert SIMULATION_KEYS[f.name].default == f.default, f.name
    for name in ("ramp_time", "radiation", "radiation_tol", "added_mass_inf", "excitation", "body_to_body", "hydrostatics",
                 "froude_krylov"):
        assert body_file.HYDRO_KEYS[name].default == default_of(create_hydro_body, name), name


def test_every_element_that_checks_ranges_declares_them_for_the_docs_table():
    """The validity table of docs/system_file.md is generated from the validity_doc rows written beside each
    valid_ranges (above: the docs are regenerated); an element that checks a range must declare it."""
    found = element_docs.elements_with_ranges()
    assert len(found) >= 15
    for cls in found:
        assert cls.validity_doc and all(len(row) == 3 and all(row) for row in cls.validity_doc), cls.__name__
    assert element_docs.VALIDITY_BEGIN in element_docs.DOCS.read_text(encoding="utf-8")
