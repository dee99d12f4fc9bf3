"""Constraints as the mapping reads them: every numeric bound pydantic accepts, wherever it is written
(annotated-types markers, ``Interval``, ``conint``, ``Field(...)``), moved into a lenient scalar's
marker, where pydantic-core checks it natively and the marker advertises it as standard JSON Schema.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, NamedTuple

import annotated_types
from pydantic.fields import FieldInfo

from .annotations import with_metadata
from .bounds import PYDANTIC_BOUND_KEYWORDS
from .floats import LenientFloat, _LenientFloat
from .integers import LenientInt, _LenientInt

__all__ = (
    "SplitConstraints",
    "float_marker",
    "int_marker",
    "is_strict",
    "split_constraints",
    "with_bounds_in_marker",
)

_NUMERIC = (annotated_types.Ge, annotated_types.Gt, annotated_types.Le, annotated_types.Lt, annotated_types.MultipleOf)
_LENGTHS = (annotated_types.MinLen, annotated_types.MaxLen)
_CONSTRAINT_NAMES = frozenset({*PYDANTIC_BOUND_KEYWORDS, "min_length", "max_length"})


class SplitConstraints(NamedTuple):
    """Metadata read apart: numeric bounds, length limits, and everything else in its order."""

    numeric: tuple[Any, ...]
    lengths: tuple[Any, ...]
    rest: tuple[Any, ...]


def split_constraints(metadata: Iterable[Any]) -> SplitConstraints:
    """``metadata`` with grouped markers (``Interval``) spread out and ``Field(...)``'s constraints
    taken out of it; a ``Field`` that also says something else (a description) stays in ``rest``
    without them. Nones (``conint`` leaves some) are dropped."""
    numeric: list[Any] = []
    lengths: list[Any] = []
    rest: list[Any] = []
    for marker in metadata:
        if isinstance(marker, FieldInfo):
            parts = tuple(_spread(marker.metadata))
            constraints = [part for part in parts if isinstance(part, (*_NUMERIC, *_LENGTHS))]
            numeric.extend(part for part in constraints if isinstance(part, _NUMERIC))
            lengths.extend(part for part in constraints if isinstance(part, _LENGTHS))
            others = [part for part in parts if part not in constraints]
            # pydantic 2.11 also lists the constraints among the attributes set; later versions do not.
            attributes = {key: value for key, value in marker._attributes_set.items() if key not in _CONSTRAINT_NAMES}
            if not constraints:
                rest.append(marker)
            elif others or attributes:
                kept = copy.copy(marker)
                kept.metadata = others
                kept._attributes_set = attributes
                rest.append(kept)
            continue
        for part in _spread((marker,)):
            target = numeric if isinstance(part, _NUMERIC) else lengths if isinstance(part, _LENGTHS) else rest
            target.append(part)
    return SplitConstraints(tuple(numeric), tuple(lengths), tuple(rest))


def _spread(metadata: Iterable[Any]) -> Iterable[Any]:
    for marker in metadata:
        if isinstance(marker, annotated_types.GroupedMetadata) and not isinstance(marker, FieldInfo):
            yield from (part for part in marker if part is not None)
        elif marker is not None:
            yield marker


def is_strict(marker: Any) -> bool:
    """pydantic's ``Strict`` and annotated-types' look-alikes: the lenient marker decides strictness."""
    return type(marker).__name__ == "Strict" and hasattr(marker, "strict")


def _bound_pairs(numeric: tuple[Any, ...]) -> list[tuple[str, Any]]:
    """Numeric annotated-types markers as ``(name, value)``: ``Ge(1)`` is ``("ge", 1)``."""
    return [
        next((name, getattr(bound, name)) for name in PYDANTIC_BOUND_KEYWORDS if hasattr(bound, name))
        for bound in numeric
    ]


def int_marker(numeric: tuple[Any, ...], base: _LenientInt | None = None) -> _LenientInt | None:
    """One `_LenientInt` checking ``base``'s bounds and ``numeric``'s, as inclusive integer bounds;
    None when a bound is not a finite number (a ``Decimal``), a ``multiple_of`` not an int, or the
    bounds admit no integer (pydantic then keeps checking them itself)."""
    marker, whole = (base or _LenientInt()).tightened(_bound_pairs(numeric))
    return marker if whole else None


def float_marker(numeric: tuple[Any, ...]) -> _LenientFloat | None:
    """One `_LenientFloat` checking ``numeric``'s bounds; None for a bound that is not a finite number,
    or two different steps."""
    marker, whole = _LenientFloat().tightened(_bound_pairs(numeric))
    return marker if whole else None


def with_bounds_in_marker(annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
    """``annotation`` (a lenient int or float) with the numeric bounds written after its marker moved
    into it: checked natively rather than by pydantic's Python after-validators, and advertised by
    the marker as standard JSON Schema on the branches they apply to."""
    split = split_constraints(metadata)
    markers = [marker for marker in split.rest if isinstance(marker, (_LenientInt, _LenientFloat))]
    others = tuple(marker for marker in split.rest if not isinstance(marker, (_LenientInt, _LenientFloat)))
    if len(markers) > 1 or (not markers and base not in (int, float)) or isinstance(base, bool):
        return annotation
    own = markers[0] if markers else None
    if base is int and (own is None or isinstance(own, _LenientInt)):
        marker: Any = int_marker(split.numeric, own)
    elif base is float and (own is None or own == _LenientFloat()):
        marker = float_marker(split.numeric)
    else:
        return annotation
    if marker is None:  # a bound the marker cannot hold: pydantic keeps checking it after the marker
        return with_metadata(LenientInt if base is int else LenientFloat, metadata) if own is None else annotation
    if not split.numeric and own is not None:
        return annotation
    return with_metadata(base, (marker, *split.lengths, *others))
