"""The contract every lenient type keeps, as code the tests share.

For any JSON value, a host validating against the advertised schema and the model validating the
value give the same verdict. The listed exceptions (README, "The contract") are the only cases where
the host accepts and the model refuses; the model never accepts what the host refuses.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Optional

import annotated_types
from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_core import ErrorDetails, to_jsonable_python

import pydantic_lenient as pl
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.forms import (
    JSON_NUMBER,
    MAX_DIGIT_STRING_LENGTH,
    POSITIVE_DIGITS,
    SIGNED_DIGITS,
    UNSIGNED_DIGITS,
)

# Every lenient scalar type, by name, with the canonical JSON type it widens.
SCALAR_TYPES: dict[str, tuple[Any, str]] = {
    "LenientInt": (pl.LenientInt, "integer"),
    "LenientUInt": (pl.LenientUInt, "integer"),
    "LenientPositiveInt": (pl.LenientPositiveInt, "integer"),
    "LenientU8": (pl.LenientU8, "integer"),
    "LenientU16": (pl.LenientU16, "integer"),
    "LenientU32": (pl.LenientU32, "integer"),
    "LenientU64": (pl.LenientU64, "integer"),
    "LenientI8": (pl.LenientI8, "integer"),
    "LenientI16": (pl.LenientI16, "integer"),
    "LenientI32": (pl.LenientI32, "integer"),
    "LenientI64": (pl.LenientI64, "integer"),
    "LenientFloat": (pl.LenientFloat, "number"),
    "LenientDecimal": (pl.LenientDecimal, "number"),
    "StrictBoolish": (pl.StrictBoolish, "boolean"),
    # Bounds added outside the marker, whose advertised patterns are tightened (README, "Bounds compose").
    "LenientInt[1..500]": (Annotated[pl.LenientInt, Field(ge=1, le=500)], "integer"),
    "LenientInt[>=0]": (Annotated[pl.LenientInt, annotated_types.Ge(0)], "integer"),
    "LenientInt(-3..3)": (Annotated[pl.LenientInt, Field(gt=-3, lt=3)], "integer"),
    "LenientUInt[>=1]": (Annotated[pl.LenientUInt, Field(ge=1)], "integer"),
    "LenientU8[<=100]": (Annotated[pl.LenientU8, Field(le=100)], "integer"),
    "LenientFloat(0..1]": (Annotated[pl.LenientFloat, Field(gt=0, le=1)], "number"),
    "LenientDecimal[0..100)": (Annotated[pl.LenientDecimal, Field(ge=0, lt=Decimal("100"))], "number"),
    "Lenient[Decimal(0.1..2.5]]": (pl.Lenient[Annotated[Decimal, Field(gt=Decimal("0.1"), le=2.5)]], "number"),
}

# Hostile and ordinary values every scalar type is checked with, against hosts and over transports.
FIXED_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    7,
    100,
    255,
    256,
    -128,
    -129,
    2**31 - 1,
    2**31,
    -(2**31),
    2**53 - 1,
    0.0,
    -0.0,
    1.0,
    100.0,
    1.5,
    -2.5,
    1e20,
    1e300,
    5e-324,
    "",
    " ",
    "0",
    "00",
    "007",
    "-0",
    "-00",
    "-",
    "--1",
    "+1",
    " 1",
    "1 ",
    "1\n",
    "\n1",
    "\t1",
    "1_000",
    "1,000",
    "1.0",
    "1.",
    ".5",
    "1e3",
    "1E+3",
    "2e-3",
    "0x1f",
    "0b1",
    "1\u00a0",
    "\u0663",
    "\uff11",
    "\u0661\u0660\u0660",
    "abc",
    "100",
    "-100",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775809",
    "9" * 5000,
    "0" * 4301,
    "1" * 4300,
    "true",
    "false",
    "True",
    "FALSE",
    "tRuE",
    "fAlSe",
    " true",
    "true ",
    "true\n",
    "yes",
    "no",
    "on",
    "off",
    "1",
    "t",
    "f",
    "null",
    "None",
    "nan",
    "NaN",
    "inf",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "1e-999",
    "-1.5",
    "-1.5e3",
    "2E3",
    "0.0",
    "-0.0",
    "01.5",
    "1.5.1",
    [],
    {},
    [1],
    ["1"],
    {"value": 1},
]

# The same for array- and object-shaped fields (LenientJson, JsonText).
JSON_CORPUS: list[Any] = [
    None,
    0,
    "",
    "x",
    "null",
    "[]",
    "{}",
    "[1]",
    '["a"]',
    '["a", 1]',
    '{"a": "b"}',
    '{"a": 1}',
    "[[[]]]",
    '[{"action": "x", "limit": "5"}]',
    '[{"action": "x", "limit": "-5"}]',
    '[{"action": "x"}]',
    "[1, NaN]",
    '[1, "x"]',
    '{"kind": "cat", "lives": "9"}',
    '{"kind": "cow"}',
    '{"x": 1, "y": 2}',
    '{"width": "3"}',
    [],
    {},
    ["a"],
    ["a", 1],
    {"a": "b"},
    {"a": 1},
    [{"action": "x", "limit": "5"}],
    [{"action": "x", "limit": "-5"}],
    [1, "x"],
    [1, "x", 2],
    {"kind": "dog", "good": "TRUE"},
    {"kind": "dog", "good": "yes"},
    {"x": 1, "y": 2},
    {"width": "3"},
    {"width": "-3"},
    ["a", "a"],
    "[" * 70 + "]" * 70,
    [[[[1]]]],
    True,
]

RANGE_ERROR_TYPES = frozenset({"greater_than_equal", "less_than_equal", "greater_than", "less_than", "multiple_of"})
ALL_DIGIT_PATTERNS = (SIGNED_DIGITS, UNSIGNED_DIGITS, POSITIVE_DIGITS)


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    errors: tuple[ErrorDetails, ...] = ()


def tool_model(annotation: Any, *, optional: bool) -> type[BaseModel]:
    """A one-field tool input model; the Optional variant may also be left out."""
    if optional:
        return create_model("Tool", value=(Optional[annotation], None))
    return create_model("Tool", value=(annotation, ...))


def server_verdict(model: type[BaseModel], arguments: dict[str, Any], **kwargs: Any) -> Verdict:
    try:
        model.model_validate(arguments, **kwargs)
    except ValidationError as error:
        return Verdict(False, tuple(error.errors(include_url=False)))
    return Verdict(True)


def server_verdict_json(model: type[BaseModel], arguments: dict[str, Any]) -> Verdict:
    try:
        model.model_validate_json(json.dumps(arguments))
    except ValidationError as error:
        return Verdict(False, tuple(error.errors(include_url=False)))
    return Verdict(True)


def is_portable_exception(value: Any, verdict: Verdict) -> bool:
    """The portable style's listed exception (docs/guarantees.md, 8): a JSON number that is no
    integer, or an integer between an integer enum's members, which its ``number`` branch or its
    range admits and the model refuses clearly (beside, in a union, its other members' errors)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and any(error["type"] in ("lenient_int", "int_from_float", "literal_error", "enum") for error in verdict.errors)
    )


def is_nested_portable_exception(verdict: Verdict) -> bool:
    """`is_portable_exception` for every error of ``verdict``, at any depth (an item's or a member's
    ``number`` branch): each refuses a native number the portable listing admits."""
    return bool(verdict.errors) and all(
        is_portable_exception(error["input"], Verdict(False, (error,))) for error in verdict.errors
    )


def is_listed_exception(value: Any, verdict: Verdict, *, portable: bool = False) -> bool:
    """Host accepted ``value`` and the model refused it for one of the README's listed reasons."""
    if portable and is_portable_exception(value, verdict):
        return True
    if not isinstance(value, str) or len(verdict.errors) != 1:
        return False
    error_type = verdict.errors[0]["type"]
    if error_type in RANGE_ERROR_TYPES:  # a digit (or JSON-number) string the pattern admits, out of range
        return any(re.fullmatch(pattern, value) for pattern in (*ALL_DIGIT_PATTERNS, JSON_NUMBER))
    if error_type == "lenient_int":  # longer than Python's int/str conversion limit
        return len(value) > MAX_DIGIT_STRING_LENGTH
    if error_type == "lenient_float":  # JSON number text whose value overflows a double
        return re.fullmatch(JSON_NUMBER, value) is not None and math.isinf(float(value))
    if error_type == "lenient_decimal":  # JSON number text whose exponent a Decimal cannot hold
        return re.fullmatch(JSON_NUMBER, value) is not None and not _decimal_holds(value)
    return False


def _decimal_holds(text: str) -> bool:
    try:
        return Decimal(text).is_finite()
    except InvalidOperation:
        return False


def agrees(host_accepts: bool, value: Any, verdict: Verdict, *, portable: bool = False) -> bool:
    if host_accepts == verdict.accepted:
        return True
    return host_accepts and is_listed_exception(value, verdict, portable=portable)


def is_portable_item_text(model: type[BaseModel], schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """The portable style's listed exception the other way round (docs/guarantees.md, 9): an array's
    ``items`` advertise the canonical type only (the Gemini API refuses a union ``items``), so a host
    refuses a text form inside an array that the model takes. The host takes the model's own result."""
    if not holds_text_in_an_array(arguments):
        return False
    try:
        taken = model.model_validate(arguments).model_dump(include=set(arguments))
    except ValidationError:
        return False
    return host_validator(schema).is_valid(to_jsonable_python(_decimals_as_numbers(taken)))


def _decimals_as_numbers(value: Any) -> Any:
    """A Decimal as the JSON number it is (pydantic writes it as text, which no ``number`` item takes)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_decimals_as_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _decimals_as_numbers(item) for key, item in value.items()}
    return value


def holds_text_in_an_array(value: Any, in_array: bool = False) -> bool:
    if isinstance(value, str):
        return in_array
    if isinstance(value, dict):
        return any(holds_text_in_an_array(item, in_array) for item in value.values())
    if isinstance(value, list):
        return any(holds_text_in_an_array(item, True) for item in value)
    return False
