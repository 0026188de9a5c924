"""The TypedDict -> JSON Schema generator: each type form it knows, and a loud error for those it does not."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict, Union

import jsonschema
import pytest

from gpudoctor.render.json_schema import DRAFT_2020_12, def_name, json_schema
from gpudoctor.report_json import OPEN, Schema


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


class InnerJson(TypedDict):
    n: int


class OpenPart(TypedDict, total=False):
    label: str


class Base(TypedDict):
    base_key: str


class Example(Base):
    text: str
    number: int
    ratio: float
    flag: bool
    nothing: None
    maybe: Optional[str]
    either: Union[int, str, None]
    pep604: int | None
    strings: list[str]
    inners: list[InnerJson]
    table: dict[str, int]
    anything: dict[str, Any]
    free: Any
    one: Literal["x"]
    several: Literal[1, 2, 3]
    color: Color
    color_name: Annotated[str, Color]
    level_number: Annotated[int, Level, Schema(description="A level's value.")]
    inner: InnerJson
    maybe_inner: Optional[InnerJson]
    opened: Annotated[OpenPart, OPEN]
    limited: Annotated[int, Schema(minimum=0, description="d")]
    optional_key: NotRequired[str]


class Partial(TypedDict, total=False):
    must: Required[int]
    may: int


def _schema(root: type) -> dict[str, Any]:
    return json_schema(root, schema_id="urn:test", title="t", description="d")


def test_every_type_form():
    schema = _schema(Example)
    assert schema["$schema"] == DRAFT_2020_12
    assert (schema["$id"], schema["title"], schema["description"]) == ("urn:test", "t", "d")
    assert schema["additionalProperties"] is False
    assert schema["properties"] == {
        "base_key": {"type": "string"},
        "text": {"type": "string"},
        "number": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "maybe": {"type": ["string", "null"]},
        "either": {"type": ["integer", "string", "null"]},
        "pep604": {"type": ["integer", "null"]},
        "strings": {"type": "array", "items": {"type": "string"}},
        "inners": {"type": "array", "items": {"$ref": "#/$defs/inner"}},
        "table": {"type": "object", "additionalProperties": {"type": "integer"}},
        "anything": {"type": "object"},
        "free": {},
        "one": {"const": "x"},
        "several": {"enum": [1, 2, 3]},
        "color": {"$ref": "#/$defs/color"},
        "color_name": {"$ref": "#/$defs/color"},
        "level_number": {"description": "A level's value.", "$ref": "#/$defs/level"},
        "inner": {"$ref": "#/$defs/inner"},
        "maybe_inner": {"anyOf": [{"$ref": "#/$defs/inner"}, {"type": "null"}]},
        "opened": {"$ref": "#/$defs/open_part"},
        "limited": {"description": "d", "type": "integer", "minimum": 0},
        "optional_key": {"type": "string"},
    }
    assert schema["$defs"] == {
        "inner": {
            "type": "object",
            "required": ["n"],
            "additionalProperties": False,
            "properties": {"n": {"type": "integer"}},
        },
        "color": {"enum": ["red", "blue"]},
        "level": {"enum": [1, 2]},
        "open_part": {"type": "object", "additionalProperties": True, "properties": {"label": {"type": "string"}}},
    }
    jsonschema.Draft202012Validator.check_schema(schema)


def test_required_keys_follow_total_required_and_not_required():
    assert _schema(Example)["required"] == [key for key in _schema(Example)["properties"] if key != "optional_key"]
    partial = _schema(Partial)
    assert partial["required"] == ["must"]
    assert list(partial["properties"]) == ["must", "may"]
    assert "required" not in _schema(OpenPart)


def _document(**changes: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "base_key": "b",
        "text": "t",
        "number": 1,
        "ratio": 0.5,
        "flag": True,
        "nothing": None,
        "maybe": None,
        "either": "two",
        "pep604": 3,
        "strings": ["a"],
        "inners": [{"n": 1}],
        "table": {"a": 1},
        "anything": {"a": [1, "b"]},
        "free": [None],
        "one": "x",
        "several": 2,
        "color": "red",
        "color_name": "blue",
        "level_number": 2,
        "inner": {"n": 2},
        "maybe_inner": None,
        "opened": {"label": "l", "more": 1},
        "limited": 0,
    }
    doc.update(changes)
    return doc


def test_a_document_of_that_shape_validates_and_others_do_not():
    validator = jsonschema.Draft202012Validator(_schema(Example))
    validator.validate(_document())
    validator.validate(_document(optional_key="present"))
    for broken in (
        _document(extra=1),  # closed
        _document(inner={"n": 1, "extra": 1}),  # nested closed
        _document(number=1.5),
        _document(flag=1),
        _document(one="y"),
        _document(several=4),
        _document(color="green"),
        _document(level_number=3),
        _document(limited=-1),
        _document(table={"a": "1"}),
        _document(opened={"label": 1}),
        _document(maybe_inner={"n": "1"}),
    ):
        assert not validator.is_valid(broken), broken
    missing = _document()
    del missing["base_key"]
    assert not validator.is_valid(missing)


def test_def_names():
    assert [def_name(t) for t in (InnerJson, OpenPart, Color)] == ["inner", "open_part", "color"]


class WithTuple(TypedDict):
    pair: tuple[int, int]


class WithIntKeys(TypedDict):
    table: dict[int, str]


class OpenList(TypedDict):
    items: Annotated[list[str], OPEN]


class ColorAsInt(TypedDict):
    color: Annotated[int, Color]


class OpenAndClosed(TypedDict):
    opened: Annotated[InnerJson, OPEN]
    closed: InnerJson


class Inner(TypedDict):  # $defs/inner, as InnerJson's
    m: str


class NameClash(TypedDict):
    first: InnerJson
    second: Inner


@pytest.mark.parametrize(
    ("root", "why"),
    [
        (WithTuple, "no JSON Schema for tuple"),
        (WithIntKeys, "keys are strings"),
        (OpenList, "only a TypedDict can be marked open"),
        (ColorAsInt, "Color's values are not all"),
        (OpenAndClosed, r"\$defs/inner: .*open=True.*open=False"),
        (NameClash, r"\$defs/inner: .*open=False.*open=False"),
    ],
)
def test_what_it_cannot_say_is_an_error(root, why):
    with pytest.raises(TypeError, match=why):
        _schema(root)


def test_a_root_that_is_not_a_typeddict_is_an_error():
    with pytest.raises(TypeError):
        _schema(dict)
