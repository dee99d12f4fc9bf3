"""The coercion table: a value in a type its location does not take, in one that it does.

| from | to | kind | when |
|---|---|---|---|
| ``"null"`` | null | ``string_to_null`` | the location takes null, and not the string ``"null"`` itself (3) |
| ``"true"`` / ``"false"``, any case | boolean | ``string_to_boolean`` | the location takes booleans, not strings |
| a numeric string (JSON number syntax) | integer or number | ``string_to_number`` | it takes numbers, not strings (1) |
| JSON text | array or object | ``json_text_to_structure`` | it takes the parsed type, not strings (2) |
| a number or boolean | string | ``scalar_to_string`` | it takes strings, and not the value's type |

(1) An integer-only location takes only integral values: ``"3.0"`` becomes 3, ``"5.5"`` stays.
Digits with leading zeros are read as `LenientInt` reads them: ``"007"`` becomes 7. A number is
never rounded: a string whose value a double does not hold exactly (more than 17 significant digits,
``"1e-400"``) stays a string, so the validator refuses it (the model sees its error) or, where the
location also takes strings (`LenientDecimal`'s string form), keeps it as written.
(2) Also JSON text quoted once more (``'"[1, 2]"'``, as a model that stringified the text twice
sends it): the one parse gives text, and that text is parsed too. Never more than twice.
(3) The one ``"null"`` policy (`pydantic_lenient.types.forms.NULL_TEXT`): at ``{"enum": ["asc", null]}``
``"null"`` is None; at ``{"enum": ["null", null]}`` or ``{"type": ["string", "null"]}`` it stays.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from pydantic_core import from_json

from pydantic_lenient.schema.locations import NULL_STRING
from pydantic_lenient.types.boolean_text import BOOLEAN_WORDS
from pydantic_lenient.types.forms import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH, NULL_TEXT
from pydantic_lenient.types.json_kinds import json_type

__all__ = ("SCALARS", "coerce")

SCALARS = frozenset({str, int, bool, float, type(None)})
"""The classes of JSON's scalar values: nothing to look inside."""

_JSON_WHITESPACE = " \t\n\r"
_JSON_NUMBER = re.compile(JSON_NUMBER_TEXT)
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_MAX_INTEGER_BITS = int(MAX_DIGIT_STRING_LENGTH * 3.32)  # an integer with about this many digits or fewer
_MISSING: Any = object()


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
    >>> coerce("null", frozenset({"integer", "null"}), 1_000)
    (None, 'string_to_null')
    >>> coerce("0.10000000000000000001", frozenset({"number"}), 1_000) is None  # a double would round it
    True
    """
    if isinstance(value, str):
        if value == NULL_TEXT and "null" in types and NULL_STRING not in types:
            return None, "string_to_null"
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
    if not math.isfinite(number) or Decimal(repr(number)) != Decimal(trimmed):
        return _MISSING  # a double cannot hold it as written: never round a value
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
