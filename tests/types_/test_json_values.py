from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from pydantic_lenient import (
    STYLES,
    AcceptJsonText,
    JsonText,
    JsonTextOf,
    LenientInt,
    LenientJson,
    LenientUInt,
    StrictBoolish,
    input_schema,
)
from pydantic_lenient.testing import host_validator
from tests.strategies import any_input, json_values


class Step(BaseModel):
    action: str
    limit: LenientUInt = 1


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: LenientUInt


class Dog(BaseModel):
    kind: Literal["dog"]
    good: StrictBoolish


class Point(TypedDict):
    x: LenientInt
    y: LenientInt


@dataclass
class Box:
    width: LenientUInt


Pet = Annotated[Cat | Dog, Field(discriminator="kind")]


class Tool(BaseModel):
    urls: Optional[LenientJson[list[str]]] = None
    headers: Optional[LenientJson[dict[str, str]]] = None
    steps: Optional[LenientJson[list[Step]]] = None
    pair: Optional[LenientJson[tuple[LenientInt, str]]] = None
    pet: Optional[LenientJson[Pet]] = None
    point: Optional[LenientJson[Point]] = None
    box: Optional[LenientJson[Box]] = None
    tags: Optional[LenientJson[set[str]]] = None
    note: Optional[str] = None
    edits_json: Optional[JsonText] = None
    typed_edits: Optional[JsonText[list[Step]]] = None


ACCEPTED: list[tuple[str, Any, Any]] = [
    ("urls", ["https://example.com"], ["https://example.com"]),
    ("urls", '["https://example.com"]', ["https://example.com"]),
    ("urls", None, None),
    ("headers", '{"a": "b"}', {"a": "b"}),
    ("steps", '[{"action": "move", "limit": "5"}]', [Step(action="move", limit=5)]),
    ("steps", [{"action": "move", "limit": "5"}], [Step(action="move", limit=5)]),
    ("pair", '[1, "x"]', (1, "x")),
    ("pet", '{"kind": "cat", "lives": "9"}', Cat(kind="cat", lives=9)),
    ("pet", {"kind": "dog", "good": "TRUE"}, Dog(kind="dog", good=True)),
    ("point", '{"x": 1, "y": 2}', {"x": 1, "y": 2}),
    ("box", '{"width": "3"}', Box(width=3)),
    ("tags", '["a", "a", "b"]', {"a", "b"}),
    ("edits_json", '[{"old": "a"}]', '[{"old": "a"}]'),
    ("edits_json", [{"b": 1, "a": 2}], '[{"b":1,"a":2}]'),
    ("edits_json", {"z": [1, {"y": None}]}, '{"z":[1,{"y":null}]}'),
    ("edits_json", "  42 ", "  42 "),
    ("typed_edits", [{"action": "x", "limit": "2"}], '[{"action":"x","limit":"2"}]'),
]


def _case_id(value: Any) -> str:
    """The value's repr, cut short; a set's members sorted, so every pytest-xdist worker has the same ids."""
    text = "{" + ", ".join(sorted(map(repr, value))) + "}" if isinstance(value, (set, frozenset)) else repr(value)
    return text[:40]


@pytest.mark.parametrize(("field", "value", "expected"), ACCEPTED, ids=_case_id)
def test_accepts(field: str, value: Any, expected: Any) -> None:
    assert getattr(Tool.model_validate({field: value}), field) == expected
    assert getattr(Tool.model_validate_json(json.dumps({field: value})), field) == expected


REFUSED: list[tuple[str, Any, str, str]] = [
    ("urls", "nope", "lenient_json", "Input should be a list or the JSON text of a list"),
    ("urls", "", "lenient_json", "Input should be a list or the JSON text of a list"),
    (
        "urls",
        "null",
        "lenient_json",
        "Input should be a list or the JSON text of a list, not the JSON text of null",
    ),
    (
        "urls",
        '{"a": 1}',
        "lenient_json",
        "Input should be a list or the JSON text of a list, not the JSON text of an object",
    ),
    (
        "headers",
        "[]",
        "lenient_json",
        "Input should be an object or the JSON text of an object, not the JSON text of a list",
    ),
    ("urls", '["a", NaN]', "lenient_json", "Input should be a list or the JSON text of a list"),
    ("urls", '["a", 1]', "string_type", "Input should be a valid string"),
    (
        "steps",
        '[{"action": "x", "limit": "-1"}]',
        "lenient_int",
        "Input should be an integer or a string of ASCII digits",
    ),
    ("pet", '{"kind": "cow"}', "union_tag_invalid", ""),
    (
        "edits_json",
        "{not json",
        "lenient_json",
        "Input should be well-formed JSON text, or an array or an object to write as JSON text",
    ),
    (
        "edits_json",
        42,
        "lenient_json",
        "Input should be well-formed JSON text, or an array or an object to write as JSON text",
    ),
    ("typed_edits", '[{"limit": 1}]', "missing", "Field required"),
]


@pytest.mark.parametrize(("field", "value", "error_type", "message"), REFUSED, ids=lambda v: f"{v!r:.40}")
def test_refuses_with_one_clear_error(field: str, value: Any, error_type: str, message: str) -> None:
    for strict in (None, True, False):
        with pytest.raises(ValidationError) as caught:
            Tool.model_validate({field: value}, strict=strict)
        (error,) = caught.value.errors()
        assert error["type"] == error_type
        assert error["loc"][0] == field
        if message:
            assert error["msg"] == message


@pytest.mark.parametrize("text", ['["x"]', "null", "[]", "{}", "0123"])
def test_a_str_field_next_to_lenient_json_keeps_its_text(text: str) -> None:
    tool = Tool.model_validate({"note": text, "urls": text if text.startswith("[") else None})
    assert tool.note == text


@pytest.mark.parametrize(
    "annotation",
    [
        "str",
        "Optional[str]",
        "str | list[str]",
        "Any",
        "int",
        "Optional[list[int]]",
        "JsonText",
        "Literal['a']",
        "bytes",
    ],
)
def test_t_that_accepts_other_than_arrays_or_objects_is_refused_at_definition(annotation: str) -> None:
    with pytest.raises(TypeError, match="does not only take arrays or objects"):
        TypeAdapter(LenientJson[eval(annotation)])  # type: ignore[misc]


def test_limits_are_configurable_and_named_in_the_error() -> None:
    adapter = TypeAdapter(Annotated[list[Any], AcceptJsonText(max_length=10, max_depth=2)])
    assert adapter.validate_python("[[1]]") == [[1]]
    with pytest.raises(ValidationError, match="at most 10 characters"):
        adapter.validate_python("[" + "1," * 10 + "1]")
    with pytest.raises(ValidationError, match="at most 2 levels deep"):
        adapter.validate_python("[[[1]]]")
    text_adapter = TypeAdapter(Annotated[str, JsonTextOf(max_depth=2)])
    with pytest.raises(ValidationError, match="at most 2 levels deep"):
        text_adapter.validate_python([[[1]]])


@pytest.mark.parametrize("depth", [65, 1_000, 100_000])
def test_hostile_nesting_is_a_validation_error(depth: int) -> None:
    nested_text = "[" * depth + "]" * depth
    with pytest.raises(ValidationError, match="at most 64 levels deep"):
        Tool.model_validate({"urls": nested_text})
    nested: list[Any] = []
    for _ in range(depth):
        nested = [nested]
    with pytest.raises(ValidationError, match="at most 64 levels deep"):
        Tool.model_validate({"edits_json": nested})


def test_huge_text_is_refused_before_parsing() -> None:
    with pytest.raises(ValidationError, match="at most 1000000 characters"):
        Tool.model_validate({"urls": "[" + '"x",' * 300_000 + '"x"]'})


@pytest.mark.parametrize(("kwargs", "message"), [({"max_length": 0}, "max_length"), ({"max_depth": True}, "max_depth")])
def test_markers_check_their_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AcceptJsonText(**kwargs)
    with pytest.raises(ValueError, match=message):
        JsonTextOf(**kwargs)


def test_schema_widens_with_json_text_and_stays_canonical_for_output() -> None:
    urls = input_schema(Tool, style="type-array")["properties"]["urls"]
    assert urls == {
        "type": ["array", "string", "null"],
        "items": {"type": "string"},
        "contentMediaType": "application/json",
        "contentSchema": {"items": {"type": "string"}, "type": "array"},
        "default": None,
        "title": "Urls",
    }
    assert Tool.model_json_schema(mode="serialization")["properties"]["urls"] == {
        "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
        "default": None,
        "title": "Urls",
    }
    assert input_schema(Tool, style="strict")["properties"]["edits_json"] == {
        "anyOf": [{"contentMediaType": "application/json", "type": "string"}, {"type": "null"}],
        "default": None,
        "title": "Edits Json",
    }
    assert input_schema(Tool, style="any-of")["properties"]["edits_json"]["anyOf"] == [
        {"contentMediaType": "application/json", "type": "string"},
        {"type": "array"},
        {"type": "object"},
        {"type": "null"},
    ]


# Strategies for valid values of some T, to compare each with its JSON text.
_steps = st.lists(
    st.fixed_dictionaries(
        {"action": st.text(max_size=5)},
        optional={"limit": st.integers(0, 10**6) | st.integers(0, 10**6).map(str)},
    ),
    max_size=3,
)
VALUE_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "urls": st.lists(st.text(max_size=8), max_size=4),
    "headers": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
    "steps": _steps,
    "pair": st.tuples(st.integers(), st.text(max_size=4)).map(list),
    "point": st.fixed_dictionaries({"x": st.integers(), "y": st.integers()}),
}


@pytest.mark.parametrize("field", list(VALUE_STRATEGIES))
@given(data=st.data())
def test_a_value_and_its_json_text_validate_to_the_same_result(field: str, data: st.DataObject) -> None:
    value = data.draw(VALUE_STRATEGIES[field])
    as_value = getattr(Tool.model_validate({field: value}), field)
    as_text = getattr(Tool.model_validate({field: json.dumps(value)}), field)
    assert as_value == as_text


JSON_FIELDS = ["urls", "headers", "steps", "pair", "pet", "point", "box", "tags", "edits_json", "typed_edits"]
# pydantic's own set[str] advertises uniqueItems and then deduplicates: a known mismatch that is not
# this library's (see tests/cross_cutting/test_ajv.py::test_pydantic_sets_accept_duplicates_their_schema_refuses).
CONTRACT_FIELDS = [field for field in JSON_FIELDS if field != "tags"]


@pytest.mark.parametrize("style", [*STYLES[:2], "pydantic-default"])
@pytest.mark.parametrize("field", CONTRACT_FIELDS)
@given(value=st.one_of(any_input, json_values.map(json.dumps), _steps.map(json.dumps), _steps))
# A boolean where T has an integer: a plain `int` member would take it (pydantic lax), hosts refuse it.
@example(value=[False, ""])
@example(value={"x": True, "y": 1})
def test_host_and_model_agree_except_on_strings_that_are_not_json_of_t(field: str, style: Any, value: Any) -> None:
    schema = Tool.model_json_schema() if style == "pydantic-default" else input_schema(Tool, style=style)
    arguments = {field: value}
    host_accepts = _host(style, schema).is_valid(arguments)
    try:
        Tool.model_validate(arguments)
        accepted = True
    except ValidationError:
        accepted = False
    if host_accepts != accepted:
        # The listed exception: the host cannot check that a string holds valid JSON of T.
        assert host_accepts, (field, value)
        assert isinstance(value, str), (field, value)


_HOSTS: dict[str, Any] = {}


def _host(style: str, schema: dict[str, Any]) -> Any:
    if style not in _HOSTS:
        _HOSTS[style] = host_validator(schema)
    return _HOSTS[style]
