"""Exact JSON for the normalizer: reading, writing, comparing and checking values as JSON means them.

Python's ``json`` reads a repeated key, ``NaN`` or ``1e999`` without a word, and its ``==`` says
``true`` is ``1``; a rule's value or a call's payload must mean what its JSON text says, so the
normalizer reads, writes and compares JSON only through these. `short_repr` is how every message
shows a value that came from outside, and `ABSENT` is "no value" where None is a JSON value.
"""

from __future__ import annotations

import json
import math
import reprlib
from typing import Any

from pydantic_lenient.types.json_values import DEFAULT_MAX_DEPTH

__all__ = (
    "ABSENT",
    "json_value_problem",
    "load_json_exactly",
    "read_json_text",
    "same_json_value",
    "short_repr",
    "write_json_text",
)


class _Absent:
    """The marker for "no value": a rule without ``value``, a change that dropped nothing."""

    def __repr__(self) -> str:
        return "<no value>"


ABSENT: Any = _Absent()

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxdict, _SHORT.maxlist = 3, 60, 60, 4, 4


def short_repr(value: Any) -> str:
    """``repr`` cut to a readable length and depth, for messages about values from outside."""
    try:
        return _SHORT.repr(value)
    except ValueError:  # an int past Python's 4,300-digit str limit, somewhere inside
        return f"<{type(value).__name__} too large to show>"


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` is not a JSON value a rule can hold (None when it is one), without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > DEFAULT_MAX_DEPTH:
            return f"is nested deeper than {DEFAULT_MAX_DEPTH} levels"
        kind = type(item)
        if kind is dict:
            if not all(type(key) is str for key in item):
                return "has an object key that is not a string"
            stack.extend((child, depth + 1) for child in item.values())
        elif kind is list:
            stack.extend((child, depth + 1) for child in item)
        elif kind is float and not math.isfinite(item):
            return "holds NaN or an infinity, which JSON has no spelling for"
        elif kind is int and item.bit_length() > 14_000:  # about Python's 4,300-digit str limit
            return "holds an integer too large to write as JSON"
        elif kind not in (str, int, float, bool, type(None)):
            return f"must be a JSON value, not {kind.__name__}"
    return None


# ---- comparing and parsing JSON values


def same_json_value(left: Any, right: Any) -> bool:
    """Equality of JSON values: unlike Python's ``==``, ``true`` is not ``1``. Iterative, for any depth."""
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            if a is not b:
                return False
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, (dict, list)) or isinstance(b, (dict, list)) or a != b:
            return False
    return True


class _Unreadable(ValueError):
    """JSON that ``json.loads`` would read, but not as written: a repeated key, NaN, 1e999."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:  # reading on would silently drop the first value
            raise _Unreadable(f"the key {short_repr(key)} appears twice in one object")
        result[key] = value
    return result


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Unreadable(f"the number {short_repr(text)} is out of range")
    return number


def _no_constant(text: str) -> Any:
    raise _Unreadable(f"{text} is not JSON")


def load_json_exactly(text: str) -> Any:
    """``json.loads``, refusing what it would read lossily or as something JSON does not have (a
    repeated key, ``NaN``, a number out of range). Raises ValueError, or RecursionError when the
    text is nested too deeply."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_no_constant)


def read_json_text(text: str) -> Any:
    """The value of JSON text (`load_json_exactly`), or `ABSENT` where that fails."""
    try:
        return load_json_exactly(text)
    except (ValueError, RecursionError):  # ValueError includes over-long integers
        return ABSENT


def write_json_text(value: Any) -> str | None:
    """Compact JSON text of ``value``, or None when it has none (NaN, a huge int, too deep)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None
