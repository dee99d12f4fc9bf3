"""Issue 23: constraints on the annotations people really write reach the advertised schema as
standard JSON Schema, through every way in, and ride in the lenient marker."""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional, Union

import pytest
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

from pydantic_lenient import (
    Lenient,
    LenientFloat,
    LenientInt,
    LenientJson,
    input_schema,
    lenient_model,
    lenient_tool,
    tool_catalog,
)
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.digit_ranges import DigitForm, exact_digit_pattern

# Every keyword a schema we emit may hold (JSON Schema 2020-12, with the annotations pydantic writes).
_KNOWN_KEYWORDS = frozenset(
    {
        *("type", "anyOf", "oneOf", "allOf", "not", "enum", "const", "$ref", "$defs", "default", "title"),
        *("description", "examples", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
        *("multipleOf", "pattern", "minLength", "maxLength", "format", "items", "prefixItems", "minItems"),
        *("maxItems", "uniqueItems", "properties", "required", "additionalProperties", "minProperties"),
        *("maxProperties", "contentMediaType", "contentSchema", "propertyNames", "patternProperties"),
    }
)


def _unknown_keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*map(_unknown_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = {key for key in schema if key not in _KNOWN_KEYWORDS}
    for key, value in schema.items():
        if key in ("properties", "$defs", "patternProperties"):
            found |= set().union(*map(_unknown_keywords, value.values())) if value else set()
        elif key not in ("default", "examples", "enum", "const", "required"):
            found |= _unknown_keywords(value)
    return found


def test_an_exact_range_pattern_for_one_to_a_hundred_thousand() -> None:
    pattern = exact_digit_pattern(1, 100000, DigitForm(signed=False))
    assert pattern == "^0*(?:[1-9][0-9]{0,4}|100000)$"
    assert pattern is not None
    for value in (0, 1, 99999, 100000, 100001):
        assert (re.fullmatch(pattern, str(value)) is not None) == (1 <= value <= 100000)


class HandWritten(BaseModel):
    a: Annotated[Optional[LenientInt], Field(ge=1, le=500)] = None
    b: Annotated[Optional[LenientInt], Field(gt=1, lt=500)] = None
    c: Annotated[Optional[LenientFloat], Field(multiple_of=0.5)] = None
    d: Lenient[Annotated[Optional[int], Field(ge=1, le=500)]] = None
    e: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None
    f: Annotated[Optional[LenientJson[list[int]]], Field(max_length=3)] = None


class Plain(BaseModel):
    limit: Optional[int] = Field(None, ge=1, le=100000)
    year: int | None = Field(default=None, ge=2000, le=6500)
    share: float | None = Field(default=None, ge=0, le=100)
    count: int = Field(100, ge=1, le=100)


def _plain_tool(
    limit: Optional[int] = Field(None, ge=1, le=100000),
    year: int | None = Field(default=None, ge=2000, le=6500),
    share: float | None = Field(default=None, ge=0, le=100),
    count: int = Field(100, ge=1, le=100),
) -> None:
    """The issue's shapes from real servers."""


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict"])
def test_no_pydantic_keyword_reaches_an_advertised_schema(style: Any) -> None:
    assert _unknown_keywords(input_schema(HandWritten, style=style)) == set()
    assert _unknown_keywords(input_schema(lenient_model(Plain), style=style)) == set()
    for tool in tool_catalog([lenient_tool(_plain_tool)], style=style)["tools"]:
        assert _unknown_keywords(tool["inputSchema"]) == set()


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(lambda: input_schema(lenient_model(Plain), style="type-array")["properties"], id="lenient_model"),
        pytest.param(
            lambda: tool_catalog([lenient_tool(_plain_tool)], style="type-array")["tools"][0]["inputSchema"][
                "properties"
            ],
            id="tool",
        ),
    ],
)
def test_every_bound_reaches_the_schema_of_every_way_in(schema: Any) -> None:
    properties = schema()
    assert (properties["limit"]["minimum"], properties["limit"]["maximum"]) == (1, 100000)
    assert properties["limit"]["pattern"] == "^(?:0*(?:[1-9][0-9]{0,4}|100000)|null)$"
    assert (properties["year"]["minimum"], properties["year"]["maximum"]) == (2000, 6500)
    assert (properties["share"]["minimum"], properties["share"]["maximum"]) == (0, 100)
    assert (properties["count"]["minimum"], properties["count"]["maximum"]) == (1, 100)  # no longer dropped


@pytest.mark.parametrize("value", [0, 101, "0", "101"])
def test_a_bound_the_author_wrote_is_never_dropped(value: Any) -> None:
    with pytest.raises(ValidationError):
        lenient_model(Plain).model_validate({"count": value})
    with pytest.raises(ValidationError):
        lenient_model(Plain).model_validate({"limit": value if value not in (101, "101") else 100001})


def test_bounds_ride_in_the_marker_not_in_python_validators() -> None:
    adapter = TypeAdapter(Lenient[Annotated[int, Field(ge=1, le=500)]])
    assert adapter.core_schema["type"] == "chain"
    assert adapter.validate_python("500") == 500
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python("501")
    assert caught.value.errors()[0]["type"] == "less_than_equal"


def test_length_limits_reach_the_json_text_form() -> None:
    field = input_schema(HandWritten, style="any-of")["properties"]["f"]
    structure, text, _ = field["anyOf"]
    assert structure["maxItems"] == 3
    assert text["contentSchema"]["maxItems"] == 3


class BoundOutsideTheNullable(BaseModel):
    """What `fix` writes for `Optional[int] = Field(None, gt=-2, lt=438)`: the bounds in the
    `Field` default, outside the `Lenient[Optional[...]]` that takes "null"."""

    value: Lenient[Optional[int]] = Field(None, gt=-2, lt=438)


@pytest.mark.parametrize(
    ("value", "taken"), [("312", True), ("-1", True), ("null", True), ("438", False), ("-2", False)]
)
def test_a_nullable_digit_pattern_is_narrowed_whole(value: str, taken: bool) -> None:
    """The style stage narrowed a nullable digit pattern after cutting one character too many off
    it (``-?[0-9]+`` became ``-?[0-9]``), so hosts refused "312" that the server takes (found by the
    property test over annotations as people write them)."""
    schema = input_schema(BoundOutsideTheNullable)
    assert host_validator(schema).is_valid({"value": value}) is taken
    try:
        BoundOutsideTheNullable.model_validate({"value": value})
    except ValidationError:
        assert not taken
    else:
        assert taken


_LENIENT: Any = Lenient  # subscripted with run-time values
_SPELLINGS: dict[str, Any] = {
    "Union[LenientInt, None], outside": Annotated[Union[LenientInt, None], Field(gt=0, lt=10)],
    "Optional[LenientInt], outside": Annotated[Optional[LenientInt], Field(gt=0, lt=10)],
    "LenientInt | None, outside": Annotated[LenientInt | None, Field(gt=0, lt=10)],
    "Union[LenientInt, None], inside": Union[Annotated[LenientInt, Field(gt=0, lt=10)], None],
    "Optional[LenientInt], inside": Optional[Annotated[LenientInt, Field(gt=0, lt=10)]],
    "LenientInt | None, inside": Annotated[LenientInt, Field(gt=0, lt=10)] | None,
    "Lenient[...]": _LENIENT[Annotated[Optional[int], Field(gt=0, lt=10)]],
}


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict"])
@pytest.mark.parametrize("spelling", list(_SPELLINGS))
def test_exclusive_bounds_reach_the_schema_in_every_hand_written_spelling(spelling: str, style: Any) -> None:
    """Issue 32 item 4: `gt`/`lt` outside `Union[LenientInt, None]` advertised as JSON Schema keywords,
    exactly (inclusive integer bounds), in every style; a host refuses 0 and 10 as the server does."""
    model = create_model("Tool", value=(_SPELLINGS[spelling], None))
    schema = input_schema(model, style=style)
    assert _unknown_keywords(schema) == set(), spelling
    host = host_validator(schema)
    for value in (0, 1, 9, 10, "0", "1", "9", "10", "09"):
        try:
            model.model_validate({"value": value})
        except ValidationError:
            accepted = False
        else:
            accepted = True
        assert accepted == (value in (1, 9, "1", "9", "09")), (spelling, value)
        if style != "strict" or not isinstance(value, str):  # the strict style advertises no string form
            assert host.is_valid({"value": value}) is accepted, (spelling, style, value)


def test_pydantics_own_generator_still_writes_its_names_for_a_bound_outside_the_optional() -> None:
    """What a server without the adapter lists (pydantic's generator, pydantic/pydantic#11576): the
    marker cannot see a bound pydantic applies around it, so `gt`/`lt` stay pydantic's names there;
    every schema this package writes reads them into keywords (above), and the audit reports the
    plain server (docs/types.md). If pydantic fixes it, this fails: drop the exception from the docs."""
    schema = TypeAdapter(_SPELLINGS["Union[LenientInt, None], outside"]).json_schema()
    assert {"gt", "lt"} <= set(schema["anyOf"][0])
