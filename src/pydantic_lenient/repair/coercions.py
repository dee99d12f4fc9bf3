"""The coercion table: a value in a type its location does not take, in one that it does.

| from | to | kind | when |
|---|---|---|---|
| ``"true"`` / ``"false"``, any case | boolean | ``string_to_boolean`` | the location takes booleans, not strings |
| a numeric string (JSON number syntax) | integer or number | ``string_to_number`` | it takes numbers, not strings (1) |
| JSON text | array or object | ``json_text_to_structure`` | it takes the parsed type, not strings (2) |
| a number or boolean | string | ``scalar_to_string`` | it takes strings, and not the value's type |

(1) An integer-only location takes only integral values: ``"3.0"`` becomes 3, ``"5.5"`` stays.
Digits with leading zeros are read as `LenientInt` reads them: ``"007"`` becomes 7.
(2) Also JSON text quoted once more (``'"[1, 2]"'``, as a model that stringified the text twice
sends it): the one parse gives text, and that text is parsed too. Never more than twice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import from_json

from pydantic_lenient.types.boolean_text import BOOLEAN_WORDS
from pydantic_lenient.types.forms import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH

__all__ = ("SCALARS", "coerce", "json_type")

SCALARS = frozenset({str, int, bool, float, type(None)})
"""The classes of JSON's scalar values: nothing to look inside."""

_JSON_WHITESPACE = " \t\n\r"
_JSON_NUMBER = re.compile(JSON_NUMBER_TEXT)
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_MAX_INTEGER_BITS = int(MAX_DIGIT_STRING_LENGTH * 3.32)  # an integer with about this many digits or fewer
_MISSING: Any = object()


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (``3.0`` is an integer, as JSON Schema says).

    >>> from pydantic_lenient.repair.coercions import json_type
    >>> json_type(3.0), json_type(3.5), json_type((1, 2)), json_type(object())
    ('integer', 'number', 'array', 'unknown')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "unknown"


def coerce(value: Any, types: frozenset[str], max_text_length: int) -> tuple[Any, str] | None:
    """The value in a type ``types`` takes, and the kind of repair, or None (see the table above).
    JSON text longer than ``max_text_length`` is not parsed.

    >>> from pydantic_lenient.repair.coercions import coerce
    >>> coerce("007", frozenset({"integer"}), 1_000), coerce("5.5", frozenset({"integer"}), 1_000)
    ((7, 'string_to_number'), None)
    >>> coerce(True, frozenset({"string", "null"}), 1_000)
    ('true', 'scalar_to_string')
    >>> coerce('"[1, 2]"', frozenset({"array"}), 1_000), coerce('"\\"[1]\\""', frozenset({"array"}), 1_000)
    (([1, 2], 'json_text_to_structure'), None)
    """
    if isinstance(value, str):
        if "boolean" in types and value in BOOLEAN_WORDS:
            return BOOLEAN_WORDS[value], "string_to_boolean"
        if "integer" in types:
            number = _number(value, types)
            if number is not _MISSING:
                return number, "string_to_number"
        if "array" in types or "object" in types:
            parsed = _structure(value, types, max_text_length)
            if parsed is not _MISSING:
                return parsed, "json_text_to_structure"
        return None
    if "string" in types and isinstance(value, (bool, int, float)):
        if isinstance(value, bool):
            return ("true" if value else "false"), "scalar_to_string"  # the JSON spelling
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, int) and value.bit_length() > _MAX_INTEGER_BITS:
            return None  # more digits than a number may have as text
        return repr(value), "scalar_to_string"
    return None


def _number(text: str, types: frozenset[str]) -> Any:
    trimmed = text.strip(_JSON_WHITESPACE)  # JSON allows whitespace around a number, and only that
    if len(trimmed) > MAX_DIGIT_STRING_LENGTH:
        return _MISSING
    if _INTEGER_TEXT.fullmatch(trimmed):  # leading zeros too: "007" is 7, as LenientInt reads it
        return int(trimmed)
    if not _JSON_NUMBER.fullmatch(trimmed):
        return _MISSING
    number = float(trimmed)
    if not math.isfinite(number):
        return _MISSING
    if "number" in types:
        return number
    return int(number) if number.is_integer() else _MISSING  # "5.5" stays, so the model sees its error


def _structure(text: str, types: frozenset[str], max_text_length: int) -> Any:
    if len(text) > max_text_length:
        return _MISSING
    start = text.lstrip(_JSON_WHITESPACE)[:1]
    if start == '"':  # the JSON text stringified once more: unwrap that one string first
        unwrapped = _parsed(text)
        if not isinstance(unwrapped, str):
            return _MISSING
        text, start = unwrapped, unwrapped.lstrip(_JSON_WHITESPACE)[:1]
    if start not in ("[", "{"):
        return _MISSING
    parsed = _parsed(text)
    return parsed if json_type(parsed) in types else _MISSING


def _parsed(text: str) -> Any:
    try:
        return from_json(text, allow_inf_nan=False)
    except Exception:  # not JSON, nested past the parser's limit, a lone surrogate
        return _MISSING
