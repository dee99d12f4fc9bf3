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
from .family import LenientScalar, scalar_marker_class

__all__ = (
    "SplitConstraints",
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


def with_bounds_in_marker(annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
    """``annotation`` (a lenient scalar, or a plain one the mapping makes lenient) with the numeric
    bounds written after its marker moved into it: checked natively rather than by pydantic's Python
    after-validators, and advertised by the marker as standard JSON Schema on the branches they
    apply to. A bound the marker cannot hold (not a finite number, a second float step, any bound on
    a boolean) stays where it is, for pydantic to check after the marker."""
    marker_class = scalar_marker_class(base)
    split = split_constraints(metadata)
    markers = [marker for marker in split.rest if isinstance(marker, LenientScalar)]
    others = tuple(marker for marker in split.rest if not isinstance(marker, LenientScalar))
    if marker_class is None or len(markers) > 1 or any(type(marker) is not marker_class for marker in markers):
        return annotation
    own = markers[0] if markers else None
    # Limits pydantic keeps in its general metadata (a Decimal's ``max_digits``), where the marker
    # holds them too: pydantic 2.11 would not apply them after a marker at all.
    held = [name for name in marker_class.bound_names if name not in PYDANTIC_BOUND_KEYWORDS]
    general = [(name, value) for part in others for name, value in _general_limits(part, held)]
    others = tuple(_without_general_limits(part, held) for part in others)
    others = tuple(part for part in others if part is not None)
    marker, whole = (own or marker_class()).tightened([*_bound_pairs(split.numeric), *general])
    if not whole:  # pydantic keeps checking the bounds after the marker
        return with_metadata(base, (marker_class(), *metadata)) if own is None else annotation
    if not split.numeric and not general and own is not None:
        return annotation
    return with_metadata(base, (marker, *split.lengths, *others))


def _general_limits(part: Any, names: list[str]) -> list[tuple[str, Any]]:
    """``(name, value)`` for each of ``names`` that ``part`` (pydantic's general metadata, or a
    ``Field`` holding it) sets."""
    found: list[tuple[str, Any]] = []
    for inner in part.metadata if isinstance(part, FieldInfo) else (part,):
        if type(inner).__name__ == "_PydanticGeneralMetadata":
            found.extend((name, value) for name, value in vars(inner).items() if name in names and value is not None)
    return found


def _without_general_limits(part: Any, names: list[str]) -> Any:
    """``part`` without the limits `_general_limits` found (None when nothing else is left)."""
    if not _general_limits(part, names):
        return part
    if not isinstance(part, FieldInfo):
        return None
    kept = copy.copy(part)
    kept.metadata = [inner for inner in part.metadata if not _general_limits(inner, names)]
    kept._attributes_set = {key: value for key, value in part._attributes_set.items() if key not in names}
    return kept if kept.metadata or kept._attributes_set else None
