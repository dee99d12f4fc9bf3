"""Numeric bounds, read once: pydantic's names for them, the JSON Schema keywords they stand for, and
exclusive bounds as the inclusive integer bounds that admit the same integers.

Plain data and functions, no pydantic: the markers, the mapping and the style stage (which runs
before pydantic loads) all read bounds through here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = (
    "BOUND_KEYWORDS",
    "PYDANTIC_BOUND_KEYWORDS",
    "IntegerRange",
    "inclusive_integer_bound",
    "integer_range",
    "is_finite_number",
)

PYDANTIC_BOUND_KEYWORDS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
"""pydantic's names for the numeric constraints, and the JSON Schema keywords they stand for."""

BOUND_KEYWORDS = frozenset(PYDANTIC_BOUND_KEYWORDS.values())
"""The JSON Schema keywords of the numeric constraints."""

# Each lower or upper bound, under either name, with how it rounds to the inclusive integer bound.
_LOWER = {"ge": False, "minimum": False, "gt": True, "exclusiveMinimum": True}
_UPPER = {"le": False, "maximum": False, "lt": True, "exclusiveMaximum": True}


def is_finite_number(value: Any) -> bool:
    """An int or float (never a bool) that is neither NaN nor infinite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def inclusive_integer_bound(name: str, value: float) -> tuple[str, int] | None:
    """The bound ``name=value`` (pydantic's name or the JSON Schema keyword) as the inclusive integer
    bound that admits the same integers: ``("ge", n)`` or ``("le", n)``; None for another name.
    ``value`` is a finite number (`is_finite_number`).

    >>> from pydantic_lenient.types.bounds import inclusive_integer_bound
    >>> inclusive_integer_bound("gt", 4), inclusive_integer_bound("exclusiveMaximum", 9.5)
    (('ge', 5), ('le', 9))
    """
    if name in _LOWER:
        return "ge", math.floor(value) + 1 if _LOWER[name] else math.ceil(value)
    if name in _UPPER:
        return "le", math.ceil(value) - 1 if _UPPER[name] else math.floor(value)
    return None


class IntegerRange(NamedTuple):
    """Bounds read as one inclusive integer range, and what was not read into it."""

    lower: int | None
    upper: int | None
    unread: dict[str, Any]
    """The items that are no finite lower or upper bound (a step, a ``Decimal``, a title...)."""


def integer_range(
    bounds: Iterable[tuple[str, Any]], lower: int | None = None, upper: int | None = None
) -> IntegerRange:
    """``lower..upper`` narrowed by ``bounds`` (under pydantic's names or JSON Schema's, exclusive or
    inclusive), the tighter bound winning. For integers ``gt=4`` and ``ge=5`` admit the same values.

    >>> from pydantic_lenient.types.bounds import integer_range
    >>> integer_range([("exclusiveMinimum", 0), ("maximum", 9.5), ("multipleOf", 3)], upper=8)
    IntegerRange(lower=1, upper=8, unread={'multipleOf': 3})
    """
    unread: dict[str, Any] = {}
    for name, value in bounds:
        bound = inclusive_integer_bound(name, value) if is_finite_number(value) else None
        if bound is None:
            unread[name] = value
        elif bound[0] == "ge":
            lower = bound[1] if lower is None else max(lower, bound[1])
        else:
            upper = bound[1] if upper is None else min(upper, bound[1])
    return IntegerRange(lower, upper, unread)
