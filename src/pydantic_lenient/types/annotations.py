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

from pydantic import BaseModel

from .family import LenientMarker, LenientScalar, scalar_marker_class_of_subclass

__all__ = (
    "ARRAYS",
    "UNION_TYPES",
    "function_hints",
    "is_lenient",
    "is_structured",
    "is_typeddict",
    "lenient_scalar",
    "lenient_scalar_class",
    "split_annotated",
    "with_metadata",
)

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
    return any(isinstance(marker, LenientMarker) and marker.makes_lenient for marker in metadata)


def lenient_scalar_class(base: Any) -> type[LenientScalar] | None:
    """The lenient marker class for a plain scalar type or its subclass (``bool``, ``int``, ``float``,
    ``Decimal``...), or None (an enum, anything else)."""
    if not isinstance(base, type) or issubclass(base, enum.Enum):
        return None
    return scalar_marker_class_of_subclass(base)


def lenient_scalar(base: Any, metadata: tuple[Any, ...]) -> str | None:
    """The name of the lenient type for a strict scalar (``"LenientInt"``...), or None if ``base`` is none."""
    marker_class = lenient_scalar_class(base)
    return None if marker_class is None else marker_class.suggested_name(metadata)


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
