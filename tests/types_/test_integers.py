from __future__ import annotations

import sys
from decimal import Decimal
from enum import IntEnum
from typing import Annotated, Any, Optional

import annotated_types as at
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from pydantic_lenient import (
    Lenient,
    LenientI8,
    LenientI64,
    LenientInt,
    LenientPositiveInt,
    LenientU8,
    LenientU32,
    LenientU64,
    LenientUInt,
    input_schema,
)
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.integers import _LenientInt
from tests.cases import Case, invalid_params, valid_params

_LENIENT: Any = Lenient  # subscripted with run-time values

NOT_INTEGERS: list[Any] = [
    True,
    False,
    None,
    1.5,
    -0.5,
    float("nan"),
    float("inf"),
    "",
    " 1",
    "1 ",
    "1\n",
    "+1",
    "1_000",
    "1.0",
    "1e3",
    "0x1f",
    "\u0663",
    "\uff11",
    "abc",
    "--1",
    "-",
    [],
    {},
    b"1",
    Decimal("1.5"),
]

CASES = [
    Case(
        LenientInt,
        [
            (100, 100),
            ("100", 100),
            ("-5", -5),
            ("007", 7),
            ("-0", 0),
            (100.0, 100),
            (1e20, 10**20),
            (-0.0, 0),
            (10**30, 10**30),
            (str(10**30), 10**30),
        ],
        NOT_INTEGERS,
        "LenientInt",
    ),
    Case(LenientUInt, [(0, 0), ("0", 0), ("00", 0), ("42", 42)], [-1, "-1", "-0", *NOT_INTEGERS], "LenientUInt"),
    Case(
        LenientPositiveInt,
        [(1, 1), ("1", 1), ("10", 10), ("01", 1), ("007", 7)],  # leading zeros everywhere (issue 32)
        [0, "0", "0000", "-1", *NOT_INTEGERS],
        "LenientPositiveInt",
    ),
    Case(LenientU8, [(255, 255), ("255", 255), ("0255", 255)], [256, "256", -1, *NOT_INTEGERS], "LenientU8"),
    Case(LenientU32, [(2**32 - 1, 2**32 - 1), ("4294967295", 2**32 - 1)], ["4294967296", 2**32], "LenientU32"),
    Case(LenientU64, [("18446744073709551615", 2**64 - 1)], ["18446744073709551616", 2**64], "LenientU64"),
    Case(LenientI8, [(-128, -128), ("-128", -128), ("127", 127)], [-129, "-129", "128", 128], "LenientI8"),
    Case(LenientI64, [(str(-(2**63)), -(2**63))], [str(2**63), -(2**63) - 1], "LenientI64"),
]


@pytest.mark.parametrize(("annotation", "value", "expected"), valid_params(CASES))
def test_accepts(annotation: Any, value: Any, expected: int) -> None:
    adapter = TypeAdapter(annotation)
    result = adapter.validate_python(value)
    assert result == expected
    assert type(result) is int


@pytest.mark.parametrize(("annotation", "value"), invalid_params(CASES))
def test_refuses_with_exactly_one_error(annotation: Any, value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(annotation).validate_python(value)
    assert len(caught.value.errors()) == 1


@pytest.mark.parametrize(
    ("annotation", "value", "error_type", "message"),
    [
        (LenientUInt, "abc", "lenient_int", "Input should be an integer or a string of ASCII digits"),
        (
            LenientInt,
            True,
            "lenient_int",
            "Input should be an integer, or a string of ASCII digits with an optional leading '-'",
        ),
        (LenientPositiveInt, "0000", "greater_than_equal", "Input should be greater than or equal to 1"),
        (LenientPositiveInt, "-1", "lenient_int", "Input should be an integer or a string of ASCII digits"),
        (LenientU32, "4294967296", "less_than_equal", "Input should be less than or equal to 4294967295"),
        (LenientU32, -1, "greater_than_equal", "Input should be greater than or equal to 0"),
        (
            LenientInt,
            1.5,
            "lenient_int",
            "Input should be an integer, or a string of ASCII digits with an optional leading '-'",
        ),
    ],
)
def test_error_type_and_message_say_what_is_accepted(
    annotation: Any, value: Any, error_type: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(annotation).validate_python(value)
    (error,) = caught.value.errors()
    assert (error["type"], error["msg"]) == (error_type, message)


@pytest.mark.parametrize("text", ["9" * 5000, "1" * 4301, "0" * 4300 + "1", "-" + "9" * 100_000])
@pytest.mark.parametrize("strict", [None, True, False])
def test_huge_digit_strings_fail_as_validation_errors(text: str, strict: bool | None) -> None:
    assert sys.get_int_max_str_digits() == 4300  # the limit these strings are built around
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(LenientInt).validate_python(text, strict=strict)
    assert [error["type"] for error in caught.value.errors()] == ["lenient_int"]


def test_huge_digit_string_out_of_range_for_a_bounded_type() -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(LenientU64).validate_python("9" * 4300)
    assert [error["type"] for error in caught.value.errors()] == ["less_than_equal"]


class Search(BaseModel):
    query: str
    note: Optional[str] = None
    limit: LenientUInt = 10
    count: int = 0
    flag: bool = False


class StrictSearch(Search):
    model_config = ConfigDict(strict=True)


@pytest.mark.parametrize(
    "validate",
    [
        lambda data: Search.model_validate(data, strict=True),
        Search.model_validate,
        StrictSearch.model_validate,
    ],
    ids=["strict-call", "default", "strict-config"],
)
def test_lenient_field_stays_lenient_whatever_the_strictness(validate: Any) -> None:
    assert validate({"query": "x", "limit": "100"}).limit == 100


def test_other_fields_keep_pydantic_behaviour() -> None:
    lax = Search.model_validate({"query": "x", "limit": "5", "count": " 7 ", "flag": "yes"})
    assert (lax.count, lax.flag) == (7, True)
    with pytest.raises(ValidationError) as caught:
        Search.model_validate({"query": "x", "limit": "5", "count": "7"}, strict=True)
    assert [error["loc"] for error in caught.value.errors()] == [("count",)]


@pytest.mark.parametrize("text", ["0123", "123e4567-e89b-12d3-a456-426614174000", "null", "100", "true", "[1]"])
def test_string_fields_are_never_coerced(text: str) -> None:
    model = Search.model_validate({"query": text, "note": text, "limit": "1"})
    assert (model.query, model.note) == (text, text)


class IntegerFlag(IntEnum):
    ONE = 1


@pytest.mark.parametrize("value", [IntegerFlag.ONE, Decimal("3"), Decimal("3.5"), 3.0, b"3", "3"])
def test_python_only_inputs_get_the_same_verdict_under_any_strictness(value: Any) -> None:
    adapter = TypeAdapter(LenientInt)
    outcomes = [
        _outcome(lambda strict=strict: adapter.validate_python(value, strict=strict)) for strict in (None, True, False)
    ]
    assert len(set(outcomes)) == 1, outcomes


def _outcome(validate: Any) -> str:
    try:
        return repr(validate())
    except ValidationError as error:
        return str(error.errors()[0]["type"])


class Paged(BaseModel):
    page: Annotated[LenientInt, Field(ge=1, le=500)] = 1
    size: Annotated[LenientInt, at.Interval(ge=1, le=500)] = 1
    offset: Annotated[LenientInt, Field(ge=0)] = 0
    above: Annotated[LenientInt, Field(gt=0, lt=10)] = 1
    byte: Annotated[LenientU8, Field(le=100)] = 0


@pytest.mark.parametrize("field", ["page", "size"])
@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (1, True),
        ("1", True),
        ("500", True),
        (0, False),
        ("0", False),
        ("501", False),
        (501, False),
        ("007", True),
    ],
)
def test_added_bounds_are_enforced_on_both_forms(field: str, value: Any, ok: bool) -> None:
    if ok:
        Paged.model_validate({field: value})
    else:
        with pytest.raises(ValidationError) as caught:
            Paged.model_validate({field: value})
        assert caught.value.errors()[0]["type"] in {"greater_than_equal", "less_than_equal"}


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict"])
def test_added_bounds_become_standard_keywords_and_tighten_the_pattern(style: Any) -> None:
    properties = input_schema(Paged, style=style)["properties"]
    text = str(properties)
    for key in ("'ge'", "'le'", "'gt'", "'lt'"):
        assert key not in text
    # The exact digit-range patterns: a host's verdict on a string is the server's.
    expected = {
        "page": (1, 500, "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"),
        "size": (1, 500, "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"),
        "offset": (0, None, "^(?:0*(?:0|[1-9][0-9]*)|-0+)$"),
        "above": (1, 9, "^0*[1-9]$"),
        "byte": (0, 100, "^0*(?:0|[1-9][0-9]?|100)$"),
    }
    for name, (minimum, maximum, pattern) in expected.items():
        flat = _merged_branches(properties[name])
        assert flat.get("minimum") == minimum, name
        assert flat.get("maximum") == maximum, name
        assert flat.get("pattern") == (None if style == "strict" else pattern), name


def _merged_branches(schema: dict[str, Any]) -> dict[str, Any]:
    merged = dict(schema)
    for branch in schema.get("anyOf", []):
        merged.update(branch)
    return merged


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ge": 5, "le": 1}, "must not be greater"),
        ({"ge": 1.5}, "must be an int"),
        ({"le": True}, "must be an int"),
    ],
)
def test_marker_checks_its_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        _LenientInt(**kwargs)


def test_serialization_schema_stays_canonical() -> None:
    schema = Search.model_json_schema(mode="serialization")["properties"]["limit"]
    assert schema == {"default": 10, "minimum": 0, "title": "Limit", "type": "integer"}
    assert Search(query="x", limit=3).model_dump_json() == '{"query":"x","note":null,"limit":3,"count":0,"flag":false}'


@settings(max_examples=60, deadline=None)
@given(
    lower=st.integers(-300, 300),
    span=st.integers(0, 600),
    value=st.integers(-1000, 1000),
    zeros=st.integers(0, 4),
    spelling=st.sampled_from(["Lenient", "hand-written", "positive"]),
)
def test_leading_zeros_are_one_policy_bounded_or_not(
    lower: int, span: int, value: int, zeros: int, spelling: str
) -> None:
    """Issue 32: a digit string may start with zeros wherever digits are taken, bounded or not, and
    its value alone decides (``"0000"`` is 0): server and host agree for every spelling of one range."""
    upper = lower + span
    bounds = Field(ge=max(lower, 1), le=max(upper, 1)) if spelling == "positive" else Field(ge=lower, le=upper)
    annotation = {
        "Lenient": _LENIENT[Annotated[int, bounds]],
        "hand-written": Annotated[LenientInt, bounds],
        "positive": Annotated[LenientPositiveInt, bounds],
    }[spelling]
    model = create_model("Tool", value=(annotation, ...))
    text = ("-" if value < 0 else "") + "0" * zeros + str(abs(value))
    low, high = (max(lower, 1), max(upper, 1)) if spelling == "positive" else (lower, upper)
    expected = low <= value <= high and (value >= 0 or spelling != "positive")
    try:
        model.model_validate({"value": text})
    except ValidationError:
        accepted = False
    else:
        accepted = True
    assert accepted == expected, (spelling, low, high, text)
    assert host_validator(input_schema(model)).is_valid({"value": text}) == expected, (spelling, low, high, text)
