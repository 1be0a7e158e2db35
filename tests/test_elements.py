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
