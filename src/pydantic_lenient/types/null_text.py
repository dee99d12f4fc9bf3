"""The string ``"null"`` as None: the `NullText` marker on an ``Optional`` none of whose other
members takes a string. The pattern it advertises is `pattern_with_null`'s (`types.forms`)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .annotations import UNION_TYPES, is_structured, split_annotated
from .family import LenientMarker, scalar_marker_class
from .forms import pattern_with_null

__all__ = ("NullText", "takes_strings")


def _null_text_to_none(value: Any) -> Any:
    return None if value == "null" else value


@dataclass(frozen=True, slots=True)
class NullText(LenientMarker):
    """Marker for a nullable field none of whose other forms is a string: the string ``"null"``
    (as some hosts send for ``anyOf [integer, null]``) is taken as None, and the advertised
    schema admits it. The mapping adds it to ``Optional[...]`` whose other members are lenient
    numbers, booleans or JSON-text structures; ``Optional[str]`` never gets it.

    >>> from typing import Annotated, Optional
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, NullText
    >>> class Search(BaseModel):
    ...     limit: Annotated[Optional[LenientUInt], NullText()] = 10
    >>> Search.model_validate({"limit": "null"})
    Search(limit=None)
    >>> class Note(BaseModel):
    ...     text: Annotated[Optional[str], NullText()]
    Traceback (most recent call last):
      ...
    TypeError: NullText() on Optional[str] is refused: ...
    """

    keeps_meaning = True

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        base, _ = split_annotated(source)
        members = typing.get_args(base) if typing.get_origin(base) in UNION_TYPES else (base,)
        others = [member for member in members if member is not type(None)]
        if len(others) == len(members) or any(takes_strings(member) for member in others):
            from .rendering import render_annotation  # rendering knows NullText: imported here, not at the top

            raise TypeError(
                f"NullText() on {render_annotation(source)} is refused: it needs an Optional whose other "
                "members never take a string (lenient numbers, booleans, JSON-text structures); "
                'otherwise the string "null" could be meant as itself'
            )
        return core_schema.no_info_before_validator_function(_null_text_to_none, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _admit_null_text(handler(schema))


def _admit_null_text(schema: JsonSchemaValue) -> JsonSchemaValue:
    """``schema`` with each string form of a lenient scalar (a pattern-checked string branch, at
    any depth of ``anyOf``) widened to also match ``null``. JSON-text branches admit any string
    already, so they already admit it."""
    if not isinstance(schema, dict):
        return schema
    widened = dict(schema)
    if widened.get("type") == "string" and isinstance(widened.get("pattern"), str):
        widened["pattern"] = pattern_with_null(widened["pattern"])
    if isinstance(widened.get("anyOf"), list):
        widened["anyOf"] = [_admit_null_text(branch) for branch in widened["anyOf"]]
    return widened


def takes_strings(member: Any) -> bool:
    """Whether a union member may accept a string argument as it is: anything not a number, a
    boolean, None, an array or an object (or already lenient, whose strings are never text)."""
    base, metadata = split_annotated(member)
    said = {marker.strings_as_text for marker in metadata if isinstance(marker, LenientMarker)}
    if True in said or False in said:
        return True in said  # the markers say; text (JSON text kept as text) wins
    if base is type(None) or scalar_marker_class(base) is not None or is_structured(base):
        return False
    return not (
        typing.get_origin(base) is Literal and not any(isinstance(value, str) for value in typing.get_args(base))
    )
