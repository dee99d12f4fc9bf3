"""What a client's value looks like, never the value itself, and its names cut and made safe to keep.

    value_shape("100")     # 'digit string': how a refused value is recorded
    clean_name("x" * 500)  # a tool or parameter name cut to NAME_LIMIT characters

Both are what the recorder keeps of a call, so that ``outcomes.json``, the audit log and the
OpenTelemetry attributes hold no raw value and no name that UTF-8 cannot write.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic_core import from_json

from pydantic_lenient.types.forms import JSON_NUMBER_TEXT
from pydantic_lenient.types.json_kinds import json_type

__all__ = ("NAME_LIMIT", "clean_name", "value_shape")

NAME_LIMIT = 200
"""Characters kept of a name that came from a client (a tool, a parameter)."""

_JSON_SHAPE_LIMIT = 100_000  # longer text is not parsed to tell its shape

_DIGITS = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(JSON_NUMBER_TEXT)
_NUMBER_STARTS = frozenset("-0123456789")
_BOOLEAN_WORDS = frozenset({"true", "false"})
_NULL_WORDS = frozenset({"null", "none", "nil", "undefined"})
_YES_NO_WORDS = frozenset({"yes", "no", "on", "off", "y", "n"})


def value_shape(value: Any) -> str:
    """What an offending value looks like, never the value itself: ``digit string``, ``boolean
    text``, ``JSON text of an array``, ``number``, ``array``...

    >>> value_shape("100"), value_shape("FALSE"), value_shape('["a"]'), value_shape(1.5)
    ('digit string', 'boolean text', 'JSON text of an array', 'number')
    """
    kind = json_type(value, whole_floats_are_integers=False)  # 3.0 was sent as a number
    if kind == "number" and not math.isfinite(value):
        return "non-finite number"
    if kind == "string":
        return _text_shape(value)
    return "other value" if kind == "unknown" else kind


def _text_shape(text: str) -> str:
    if not text:
        return "empty string"
    stripped = text.strip()
    if not stripped:
        return "blank string"
    if stripped != text:
        return f"padded {_text_shape(stripped)}"
    if text[0] in _NUMBER_STARTS:  # both patterns start with a digit or a minus sign
        if _DIGITS.fullmatch(text):
            return "digit string"
        if _NUMBER.fullmatch(text):
            return "number string"
    word = text.lower()
    if word in _BOOLEAN_WORDS:
        return "boolean text"
    if word in _NULL_WORDS:
        return "null text"
    if word in _YES_NO_WORDS:
        return "yes/no text"
    if text[0] in "[{" and len(text) <= _JSON_SHAPE_LIMIT:
        try:
            parsed = from_json(text)
        except ValueError:
            return "malformed JSON text"
        return "JSON text of an array" if isinstance(parsed, list) else "JSON text of an object"
    return "string"


def clean_name(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with anything UTF-8 cannot hold (lone surrogates) escaped.

    >>> clean_name("search"), clean_name("a\\ud800b"), len(clean_name("x" * 500))
    ('search', 'a\\\\ud800b', 200)
    """
    text = text[:limit]
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
