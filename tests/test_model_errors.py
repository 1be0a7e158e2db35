"""Bad models are refused before any tracing, with a message naming the culprit."""

import numpy as np
import pytest

import jaxmbd as mbd
from jaxmbd.model import Body, ModelBuilder, Placement

GOOD = Body(1.0, (0, 0, 0), np.eye(3))


def build(*entries, **kw):
    b = ModelBuilder(source="test.model")
    for name, parent, joint, body in entries:
        b.add_body(name, body=body, joint=joint, parent=parent)
    return b.build(**kw)


@pytest.mark.parametrize(
    "entries, match",
    [
        ([("a", "nowhere", mbd.Revolute(), GOOD)], "unknown parent 'nowhere'"),
        ([("a", "b", mbd.Revolute(), GOOD), ("b", "a", mbd.Revolute(), GOOD)], "cycle"),
        ([("a", "world", mbd.Revolute(), GOOD), ("a", "world", mbd.Revolute(), GOOD)], "duplicate body name 'a'"),
        ([("a", "world", mbd.Revolute((0, 0, 0)), GOOD)], "axis is zero"),
        ([("a", "world", mbd.Revolute((0, 0, 2)), GOOD)], "expected a unit vector"),
        ([("a", "world", mbd.Revolute(), Body(-1.0))], "mass must be"),
        ([("a", "world", mbd.Revolute(), Body(1.0, inertia=np.diag([1.0, -1.0, 1.0])))], "not positive semi-definite"),
        ([("a", "world", mbd.Revolute(), Body(1.0, inertia=np.diag([1.0, 1.0, 3.0])))], "triangle inequality"),
        ([("a", "world", mbd.Universal((1, 0, 0), (1, 0, 0)), GOOD)], "parallel"),
    ],
)
def test_bad_model_is_refused(entries, match):
    with pytest.raises(mbd.ModelError, match=match) as e:
        build(*entries)
    assert "test.model" in str(e.value)


def test_two_roots_where_one_is_expected():
    with pytest.raises(mbd.ModelError, match="expected one root"):
        build(("a", "world", mbd.Revolute(), GOOD), ("b", "world", mbd.Revolute(), GOOD), single_root=True)


def test_bad_placement_is_refused():
    b = ModelBuilder(source="test.model")
    b.add_body("a", body=GOOD, placement=Placement(R=np.diag([1.0, 1.0, -1.0])))
    with pytest.raises(mbd.ModelError, match="proper rotation"):
        b.build()


URDF_FLOATING = """<robot name="r"><link name="a"/><link name="b"/>
<joint name="slide" type="floating"><parent link="a"/><child link="b"/></joint></robot>"""
URDF_TWO_ROOTS = """<robot name="r"><link name="a"/><link name="b"/></robot>"""
URDF_MIMIC = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/><mimic joint="j1"/></joint></robot>"""
URDF_MISSING = """<robot name="r"><link name="a"/>
<joint name="j" type="revolute"><parent link="a"/><child link="ghost"/><axis xyz="0 0 1"/></joint></robot>"""


@pytest.mark.parametrize(
    "xml, match",
    [
        (URDF_FLOATING, "joint 'slide': joint type 'floating' is not supported"),
        (URDF_TWO_ROOTS, "expected one root link"),
        (URDF_MIMIC, r"joint 'j2': <mimic> is not supported"),
        (URDF_MISSING, "child link 'ghost' is not defined"),
        ("<robot><link", "cannot read URDF"),
    ],
)
def test_bad_urdf_is_refused(tmp_path, xml, match):
    path = tmp_path / "bad.urdf"
    path.write_text(xml)
    with pytest.raises(mbd.ModelError, match=match) as e:
        mbd.load_urdf(path)
    assert "bad.urdf" in str(e.value)


def test_slices_and_names():
    model = mbd.load_urdf(None, xml="""<robot name="r"><link name="base"/>
      <link name="arm"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint></robot>""",
                          floating=True)
    assert model.body_names == ("base", "arm")
    assert model.joint_names == ("root_joint", "shoulder")
    assert model.q_slice("arm") == slice(7, 8) and model.q_slice("shoulder") == slice(7, 8)
    assert model.v_slice("base") == slice(0, 6)
    np.testing.assert_array_equal(model.neutral(), [0, 0, 0, 1, 0, 0, 0, 0])
