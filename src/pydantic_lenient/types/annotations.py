"""Reading annotations: the parts of ``Annotated``, and which markers make a field lenient."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

import annotated_types
from pydantic import BaseModel

from .booleans import _StrictBoolish
from .floats import _LenientFloat
from .integers import _LenientInt
from .json_values import JsonTextOf

__all__ = (
    "ARRAYS",
    "UNION_TYPES",
    "function_hints",
    "is_lenient",
    "is_structured",
    "is_typeddict",
    "lenient_scalar",
    "split_annotated",
    "with_metadata",
)

_LENIENT_MARKERS = (_LenientInt, _LenientFloat, _StrictBoolish, JsonTextOf)
_ANNOTATED: Any = Annotated  # subscripted with run-time values below
UNION_TYPES = (typing.Union, types.UnionType)


def split_annotated(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(annotation) is Annotated:
        base, *metadata = typing.get_args(annotation)
        return base, tuple(metadata)
    return annotation, ()


def with_metadata(base: Any, metadata: tuple[Any, ...]) -> Any:
    """``Annotated[base, *metadata]``, or ``base`` itself without metadata."""
    if not metadata:
        return base
    parts = (base, *metadata)
    return _ANNOTATED[parts]


def is_lenient(metadata: tuple[Any, ...]) -> bool:
    return any(isinstance(marker, _LENIENT_MARKERS) for marker in metadata)


def lenient_scalar(base: Any, metadata: tuple[Any, ...]) -> str | None:
    """The lenient type for a strict int, float or bool, or None if ``base`` is none of those."""
    if not isinstance(base, type) or issubclass(base, enum.Enum):
        return None
    if issubclass(base, bool):
        return "StrictBoolish"
    if issubclass(base, int):
        lower = _lower_bound(metadata)
        if lower is not None and lower >= 1:
            return "LenientPositiveInt"
        return "LenientUInt" if lower is not None and lower >= 0 else "LenientInt"
    if issubclass(base, float):
        return "LenientFloat"
    return None


def _lower_bound(metadata: tuple[Any, ...]) -> float | None:
    for marker in metadata:
        if isinstance(marker, annotated_types.Ge):
            return float(marker.ge)  # type: ignore[arg-type]
        if isinstance(marker, annotated_types.Gt):
            return float(marker.gt) + 1  # type: ignore[arg-type]
    return None


ARRAYS = frozenset({list, set, frozenset, tuple})


def is_structured(base: Any) -> bool:
    """Whether ``base`` is array- or object-shaped: a list, tuple, set, dict, model, TypedDict or dataclass."""
    origin = typing.get_origin(base) or base
    return (
        origin in ARRAYS
        or origin is dict
        or (isinstance(base, type) and issubclass(base, BaseModel))
        or is_typeddict(base)
        or (dataclasses.is_dataclass(base) and isinstance(base, type))
    )


def is_typeddict(base: Any) -> bool:
    # typing.is_typeddict misses typing_extensions.TypedDict on older Pythons; both have these.
    return isinstance(base, type) and issubclass(base, dict) and hasattr(base, "__total__")


def function_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """``typing.get_type_hints(function, include_extras=True)``, the same on every Python.

    Before 3.11, a parameter whose default is None gets its hint wrapped in ``Optional[...]``; for
    ``Annotated[Optional[int], Field(...)] = None`` that nests the ``Optional`` (pydantic then
    advertises a nested ``anyOf``). Such a wrapper, around an ``Annotated`` that already takes
    None, is taken off again.
    """
    hints = typing.get_type_hints(function, include_extras=True)
    if sys.version_info >= (3, 11):
        return hints
    for name, parameter in inspect.signature(function).parameters.items():
        hint = hints.get(name)
        if parameter.default is not None or typing.get_origin(hint) not in UNION_TYPES:
            continue
        members = typing.get_args(hint)
        if len(members) == 2 and members[1] is type(None) and typing.get_origin(members[0]) is Annotated:
            inner = typing.get_args(members[0])[0]
            if typing.get_origin(inner) in UNION_TYPES and type(None) in typing.get_args(inner):
                hints[name] = members[0]
    return hints
