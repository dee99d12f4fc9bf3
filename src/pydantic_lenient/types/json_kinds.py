"""Which JSON type a value has: the one home of that question for every layer (no pydantic import).

JSON Schema counts ``3.0`` as an integer (a number with a zero fractional part), so that is the
default; code that describes what a client sent (the normalizer's statistics, the outcome shapes)
asks with ``whole_floats_are_integers=False`` to tell ``3.0`` (a number as written) from ``3``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("JSON_TYPES", "json_type")

JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
"""The seven JSON Schema types."""

# The answer for each plain class at once (one dict lookup on the repair walk's path).
_OF_CLASS = {type(None): "null", bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}


def json_type(value: Any, *, whole_floats_are_integers: bool = True) -> str:
    """The JSON Schema type of a JSON value, or ``"unknown"`` for what JSON cannot hold.

    >>> from pydantic_lenient.types.json_kinds import json_type
    >>> json_type(3.0), json_type(3.0, whole_floats_are_integers=False), json_type(3.5), json_type(True)
    ('integer', 'number', 'number', 'boolean')
    >>> json_type((1, 2)), json_type({"a": 1}), json_type(None), json_type(object())
    ('array', 'object', 'null', 'unknown')
    """
    kind = _OF_CLASS.get(value.__class__)
    if kind is not None:
        return kind
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if whole_floats_are_integers and value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "unknown"
