"""An annotation as source text (`render_annotation`), with lenient markers written as the names users
import: for suggestions, the audit and the codemod."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any, Literal

import annotated_types
from pydantic.fields import FieldInfo

from .annotations import UNION_TYPES, split_annotated, with_metadata
from .family import LenientScalar, alias_names
from .json_values import AcceptJsonText
from .lenient_classes import ORIGINALS
from .null_text import NullText

__all__ = ("ALIAS_NAMES", "render_annotation")

# Every scalar alias's name by its marker.
ALIAS_NAMES: dict[Any, str] = alias_names()

_FIELD_ATTRIBUTES = ("alias", "title", "description", "examples", "pattern")


def render_annotation(annotation: Any) -> str:
    """``annotation`` as source text, with lenient markers written as the names users import.

    ``render_annotation(lenient_annotation(Annotated[int, Field(ge=1, le=500)]))`` is
    ``"Annotated[LenientInt, Field(ge=1, le=500)]"``; a generated lenient model is written as
    ``Lenient[Model]``, and an ``Optional`` that takes the string ``"null"`` (`NullText`) as
    ``Lenient[Optional[...]]``, which is exactly that annotation (``Optional[LenientInt]`` alone
    refuses ``"null"``). Annotated-types constraints are written as one ``Field(...)``.

    >>> from typing import Annotated, Optional
    >>> from pydantic import Field
    >>> from pydantic_lenient import lenient_annotation, render_annotation
    >>> render_annotation(lenient_annotation(Optional[Annotated[int, Field(ge=1, le=500)]]))
    'Lenient[Optional[Annotated[LenientInt, Field(ge=1, le=500)]]]'
    """
    base, metadata = split_annotated(annotation)
    if metadata:
        return _render_annotated(base, metadata)
    origin = typing.get_origin(base)
    arguments = typing.get_args(base)
    if origin in UNION_TYPES:
        members = [member for member in arguments if member is not type(None)]
        inner = " | ".join(render_annotation(member) for member in members)
        return f"Optional[{inner}]" if len(members) < len(arguments) else inner
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, arguments))}]"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join('...' if part is Ellipsis else render_annotation(part) for part in arguments)}]"
    if base is Any:
        return "Any"
    if base is type(None):
        return "None"
    if isinstance(base, type) and base in ORIGINALS:
        return f"Lenient[{ORIGINALS[base].__name__}]"
    return getattr(base, "__name__", repr(base))


def _render_annotated(base: Any, metadata: tuple[Any, ...]) -> str:
    rest = [marker for marker in metadata if not isinstance(marker, NullText)]
    if len(rest) < len(metadata):
        # The mapping adds NullText to such an Optional, so Lenient[...] of the rest is this annotation.
        return f"Lenient[{render_annotation(with_metadata(base, tuple(rest)))}]"
    if rest and isinstance(rest[0], LenientScalar) and rest[0] not in ALIAS_NAMES:
        # Bounds the mapping moved into the marker: written as they would be by hand.
        marker = rest.pop(0)
        head = marker.alias_name
        keywords = [f"{name}={value!r}" for name, value in marker.held_bounds().items()]
        if rest and isinstance(rest[0], FieldInfo):
            keywords.append(_render_marker(rest.pop(0))[len("Field(") : -1])
        parts = [f"Field({', '.join(keyword for keyword in keywords if keyword)})", *_render_metadata(tuple(rest))]
        return f"Annotated[{head}, {', '.join(parts)}]"
    if rest and isinstance(rest[0], LenientScalar) and rest[0] in ALIAS_NAMES:
        head = ALIAS_NAMES[rest.pop(0)]
    elif rest and rest[-1] == AcceptJsonText():
        rest.pop()
        inner = with_metadata(base, tuple(rest))
        if not rest and isinstance(base, type) and base in ORIGINALS:
            return f"Lenient[{ORIGINALS[base].__name__}]"
        return f"LenientJson[{render_annotation(inner)}]"
    else:
        head = render_annotation(base)
    if not rest:
        return head
    return f"Annotated[{head}, {', '.join(_render_metadata(tuple(rest)))}]"


def _render_metadata(metadata: tuple[Any, ...]) -> Iterator[str]:
    constraints: list[str] = []
    for marker in metadata:
        if marker is None:  # conint() leaves Nones in its Annotated
            continue
        keywords = _constraint_keywords(marker)
        if keywords is not None:
            constraints.extend(keywords)
            continue
        if constraints:
            yield f"Field({', '.join(constraints)})"
            constraints = []
        yield _render_marker(marker)
    if constraints:
        yield f"Field({', '.join(constraints)})"


# The metadata ``Field(...)`` keywords make (annotated-types', and pydantic's own such as
# ``AllowInfNan``); a validator or anything else is not a constraint and is written as itself.
_CONSTRAINT_TYPES: tuple[type, ...] = (
    annotated_types.BaseMetadata,
    *(marker for marker in FieldInfo.metadata_lookup.values() if isinstance(marker, type)),
)


def _constraint_keywords(marker: Any) -> list[str] | None:
    """``["ge=1"]`` for an annotated-types constraint (or ``Interval``), None for anything else."""
    if isinstance(marker, annotated_types.GroupedMetadata) and not isinstance(marker, FieldInfo):
        return [keyword for part in marker if part is not None for keyword in _constraint_keywords(part) or []]
    if not isinstance(marker, _CONSTRAINT_TYPES) or isinstance(marker, FieldInfo):
        return None
    if dataclasses.is_dataclass(marker):
        values = {field.name: getattr(marker, field.name) for field in dataclasses.fields(marker)}
    else:  # pydantic's grouped general metadata (pattern=, max_digits=) keeps its values as attributes
        values = dict(getattr(marker, "__dict__", {}))
    return [f"{name}={value!r}" for name, value in values.items() if value is not None]


def _render_marker(marker: Any) -> str:
    if isinstance(marker, FieldInfo):
        keywords = [keyword for part in marker.metadata for keyword in (_constraint_keywords(part) or [])]
        keywords += [
            f"{name}={getattr(marker, name)!r}" for name in _FIELD_ATTRIBUTES if getattr(marker, name, None) is not None
        ]
        return f"Field({', '.join(keywords)})"
    return repr(marker)
