"""The one ``"null"`` policy (`NULL_TEXT` in `types.forms`; docs/types.md#the-string-null): the
`NullText` marker on an ``Optional`` none of whose other members takes the very string ``"null"``
as itself makes that string None. The pattern it advertises is `pattern_with_null`'s."""

from __future__ import annotations

import enum
import functools
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .annotations import UNION_TYPES, is_structured, split_annotated
from .bounds import PYDANTIC_BOUND_KEYWORDS
from .family import LenientMarker, scalar_marker_class
from .forms import NULL_TEXT, pattern_with_null
from .portable_rules import Rendering, current_rendering, inlined_branch, nullable_items, portable_branches
from .scalar import resolver, with_null_text

__all__ = ("NullText", "takes_null_text", "takes_strings")


def _null_text_to_none(value: Any) -> Any:
    return None if value == NULL_TEXT else value


@dataclass(frozen=True, slots=True)
class NullText(LenientMarker):
    """Marker for a nullable field none of whose other forms takes the very string ``"null"`` as
    itself: that string (as some hosts send for ``anyOf [integer, null]``) is taken as None, and the
    advertised schema admits it. The mapping adds it to every such ``Optional`` (lenient numbers,
    booleans, JSON-text structures, a ``Literal`` or ``Enum`` without the value ``"null"``);
    ``Optional[str]`` never gets it.

    >>> from typing import Annotated, Literal, Optional
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, NullText
    >>> class Search(BaseModel):
    ...     limit: Annotated[Optional[LenientUInt], NullText()] = 10
    ...     order: Annotated[Optional[Literal["asc", "desc"]], NullText()] = None
    >>> Search.model_validate({"limit": "null", "order": "null"})
    Search(limit=None, order=None)
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
        if len(others) == len(members) or any(takes_null_text(member) for member in others):
            raise TypeError(
                f"NullText() on {_written(source)} is refused: it needs an Optional none of whose other "
                'members takes the string "null" as it is (lenient numbers, booleans, JSON-text '
                'structures, a Literal or Enum without "null"); otherwise "null" could be meant as itself'
            )
        inner = handler(source)
        if inner["type"] == "nullable":
            native = with_null_text(inner["schema"])
            if native is not None:  # one lenient scalar: no Python runs for any value
                return {**inner, "schema": native}
        return core_schema.no_info_before_validator_function(_null_text_to_none, inner)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        mode = current_rendering()
        if mode is Rendering.CANONICAL:  # an item of a portable array: its canonical type, nullable
            rendered = handler(schema)
            return nullable_items(rendered) if handler.mode == "validation" and isinstance(rendered, dict) else rendered
        widened = _with_null_text(handler(schema))
        if mode is Rendering.PORTABLE and handler.mode == "validation" and isinstance(widened.get("anyOf"), list):
            resolve = resolver(handler)
            branches = [inlined_branch(branch, resolve) for branch in _flat_branches(widened["anyOf"])]
            return {**widened, "anyOf": portable_branches(branches)}
        return widened


def _with_null_text(rendered: JsonSchemaValue) -> JsonSchemaValue:
    widened, admitted = _admit_null_text(rendered)
    if admitted or not isinstance(widened, dict):
        return widened
    # No branch can take the text in place (an Enum behind a $ref): one more branch takes exactly it.
    only_null_text = {"type": "string", "const": NULL_TEXT}
    if isinstance(widened.get("anyOf"), list):
        return {**widened, "anyOf": [*widened["anyOf"], only_null_text]}
    return {"anyOf": [widened, only_null_text]}


def _flat_branches(branches: list[Any]) -> list[Any]:
    """A branch that is a marker's ``anyOf`` read as its own branches. pydantic nests it inside the
    Optional's when it carries more than the key: the bounds it writes under its own names beside
    it (pydantic/pydantic#11576), which go to the number branches as the standard keywords."""
    flat: list[Any] = []
    for branch in branches:
        members = branch.get("anyOf") if isinstance(branch, dict) else None
        if not isinstance(members, list) or not set(branch) - {"anyOf"} <= PYDANTIC_BOUND_KEYWORDS.keys():
            flat.append(branch)
            continue
        bounds = {PYDANTIC_BOUND_KEYWORDS[key]: value for key, value in branch.items() if key != "anyOf"}
        flat.extend(
            {**member, **bounds} if isinstance(member, dict) and member.get("type") in ("integer", "number") else member
            for member in members
        )
    return flat


def _written(annotation: Any) -> str:
    """``annotation`` as its source reads, near enough for an error message."""
    return repr(annotation).replace("typing.", "")


def _admit_null_text(schema: JsonSchemaValue) -> tuple[JsonSchemaValue, bool]:
    """``schema`` with each string form (at any depth of ``anyOf``) widened to also take ``"null"``:
    a pattern-checked string of a lenient scalar, a ``Literal``'s ``enum`` or ``const``; and whether
    some branch now admits it (a JSON-text branch admits any string already)."""
    if not isinstance(schema, dict):
        return schema, False
    widened = dict(schema)
    admitted = False
    if widened.get("type") == "string" and not _string_keywords_admit_null(widened):
        pass  # its lengths or format refuse the text: a branch of its own takes it (the caller's)
    elif isinstance(widened.get("pattern"), str) and widened.get("type") == "string":
        widened["pattern"] = pattern_with_null(widened["pattern"])
        admitted = True
    elif isinstance(widened.get("enum"), list):
        widened["enum"] = [*widened["enum"], NULL_TEXT]
        admitted = True
    elif "const" in widened:
        widened["enum"] = [widened.pop("const"), NULL_TEXT]
        admitted = True
    elif widened.get("type") == "string":
        admitted = True
    if isinstance(widened.get("anyOf"), list):
        branches = [_admit_null_text(branch) for branch in widened["anyOf"]]
        widened["anyOf"] = [branch for branch, _ in branches]
        admitted = admitted or any(taken for _, taken in branches)
    return widened, admitted


def _string_keywords_admit_null(schema: JsonSchemaValue) -> bool:
    """Whether a string schema's keywords other than ``pattern`` let ``"null"`` through: its
    lengths (four characters), and no ``format`` (a host may assert it)."""
    lower, upper = schema.get("minLength", 0), schema.get("maxLength", len(NULL_TEXT))
    return "format" not in schema and lower <= len(NULL_TEXT) <= upper


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


def takes_null_text(member: Any) -> bool:
    """Whether a union member may accept the very string ``"null"`` as itself (the ``"null"``
    policy's question): any member that takes strings, except a ``Literal`` or ``Enum`` none of
    whose values is ``"null"``, and a member that refuses that very string when it validates it
    (a ``date``, a ``UUID``, a ``str`` whose pattern refuses it).

    >>> import datetime, uuid
    >>> from typing import Annotated
    >>> from pydantic import Field
    >>> takes_null_text(str), takes_null_text(datetime.date), takes_null_text(uuid.UUID)
    (True, False, False)
    >>> takes_null_text(Annotated[str, Field(pattern="^[a-z]+$")])
    True
    >>> takes_null_text(Annotated[str, Field(pattern="^[0-9]+$")])
    False
    """
    if not takes_strings(member):
        return False
    base, metadata = split_annotated(member)
    if not metadata and typing.get_origin(base) is Literal:
        return any(value == NULL_TEXT for value in typing.get_args(base))
    if not metadata and isinstance(base, type) and issubclass(base, enum.Enum):
        return any(item.value == NULL_TEXT for item in base)  # a str-mixin member equals its value
    if typing.get_origin(base) in UNION_TYPES:  # a nested union: its own policy, mapped or not, decides
        return True
    return _validates_null_text(member)


def _validates_null_text(member: Any) -> bool:
    """Whether ``member``'s own validator takes the string ``"null"`` (from Python or from JSON);
    True when it cannot be asked (a forward reference, an unhashable annotation): nothing is guessed."""
    try:
        return _validates_null_text_cached(member)
    except TypeError:  # unhashable: ask without the cache
        return _asks_validator(member)


@functools.lru_cache(maxsize=512)
def _validates_null_text_cached(member: Any) -> bool:
    return _asks_validator(member)


def _asks_validator(member: Any) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        adapter: TypeAdapter[Any] = TypeAdapter(member)
    except Exception:  # any annotation pydantic cannot build: keep "null" as text
        return True
    try:
        adapter.validate_python(NULL_TEXT)
        return True
    except ValidationError:
        pass
    try:
        adapter.validate_json(f'"{NULL_TEXT}"')
        return True
    except ValidationError:
        return False
