"""Bounds an advertised schema carries where no host can check them.

Pydantic applies a constraint written outside a nullable (``Optional[LenientInt] = Field(None,
ge=1)``) to the inner schema; when that schema is a custom one (a lenient type's), it checks the
bound in a Python validator and advertises it under the constraint's own name (``"ge": 1``), which
is no JSON Schema keyword: hosts ignore it, and admit values the server then refuses
(pydantic/pydantic#11576). A length written that way may also land as a standard keyword that
constrains another type than the one it bounds (``maxLength`` beside an object and its JSON text).

This module reads a finished schema, as pydantic or a server wrote it, and finds both. It looks
only at the JSON, never at the annotations, so what it reports is what a host receives: the day
pydantic advertises these bounds correctly, it reports nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_lenient.types.bounds import BOUND_KEYWORDS, PYDANTIC_BOUND_KEYWORDS

__all__ = ("PYDANTIC_CONSTRAINT_NAMES", "HiddenBound", "hidden_bounds")

PYDANTIC_CONSTRAINT_NAMES = frozenset(
    {*PYDANTIC_BOUND_KEYWORDS, "min_length", "max_length", "max_digits", "decimal_places"}
)
"""pydantic's names for the constraints it checks, none of which is a JSON Schema keyword."""

# The standard bound keywords, by the JSON type family they constrain.
_FAMILY_OF_BOUND = {
    **dict.fromkeys(BOUND_KEYWORDS, "number"),
    **dict.fromkeys(("minLength", "maxLength"), "string"),
    **dict.fromkeys(("minItems", "maxItems"), "array"),
    **dict.fromkeys(("minProperties", "maxProperties"), "object"),
}
_FAMILY_OF_TYPE = {
    "integer": "number",
    "number": "number",
    "string": "string",
    "array": "array",
    "object": "object",
}
# Where a subschema sits, relative to the value it describes: the same value, an item, or a member.
_SAME_VALUE = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else", "contentSchema")
_ITEM = ("items", "additionalItems", "unevaluatedItems", "contains")
_MEMBER = ("additionalProperties", "unevaluatedProperties")


@dataclass(frozen=True)
class HiddenBound:
    """One subschema whose bounds a host cannot check: where it is and what it says.

    ``path`` is written as the audit writes field paths (``.limit``, ``[]`` for an item, ``{}`` for
    a dict's value). ``names`` are pydantic's own constraint names (``{"ge": 1}``); ``misplaced``
    are standard bounds beside a lenient ``anyOf`` whose canonical branch they do not constrain,
    with that branch's type (``{"maxLength": 3}``, ``"object"``).

    >>> from pydantic_lenient.schema.hidden_bounds import hidden_bounds
    >>> node = {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^-?[0-9]+$"}], "ge": 1}
    >>> hidden_bounds({"type": "object", "properties": {"limit": {"anyOf": [node, {"type": "null"}]}}}, "search")
    [HiddenBound(path='search.limit', names={'ge': 1}, misplaced={}, bounded_type='integer')]
    """

    path: str
    names: dict[str, Any]
    misplaced: dict[str, Any]
    bounded_type: str | None

    def describe(self, *, adapters_repair: bool = False) -> str:
        """What the schema advertises, and why a host cannot check it; ``adapters_repair`` adds that
        the adapters' listings advertise pydantic's names as the bounds they mean."""
        parts = []
        if self.names:
            repaired = "; make_lenient and LenientMiddleware list it as JSON Schema" if adapters_repair else ""
            parts.append(
                f"is advertised with pydantic's {_keywords(self.names)}, not JSON Schema keywords:"
                f" hosts ignore them and send values the server refuses (pydantic/pydantic#11576{repaired})"
            )
        if self.misplaced:
            parts.append(
                f"is advertised with {_keywords(self.misplaced)} beside its {self.bounded_type} form,"
                f" which that keyword does not constrain: hosts do not check the bound"
            )
        return "; and ".join(parts)


def hidden_bounds(schema: Mapping[str, Any], path: str = "") -> list[HiddenBound]:
    """Every subschema of ``schema`` (an input schema, or any JSON Schema) that advertises a bound
    hosts cannot check, in document order, following ``$ref``s into ``$defs`` once per path.

    >>> from typing import Annotated, Optional
    >>> from pydantic import BaseModel, Field
    >>> from pydantic_lenient import LenientInt
    >>> from pydantic_lenient.schema.hidden_bounds import hidden_bounds
    >>> class Inside(BaseModel):
    ...     limit: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None
    >>> hidden_bounds(Inside.model_json_schema(), "search")
    []
    >>> class Outside(BaseModel):
    ...     limit: Annotated[Optional[LenientInt], Field(ge=1, le=500)] = None
    >>> [bound.names for bound in hidden_bounds(Outside.model_json_schema(), "search")]
    [{'ge': 1, 'le': 500}]
    """
    found: list[HiddenBound] = []
    for bound in _walk(schema, path, schema, frozenset()):
        if bound not in found:  # a LenientJson's contentSchema repeats its structure's schema
            found.append(bound)
    return found


def _walk(node: Any, path: str, root: Mapping[str, Any], following: frozenset[str]) -> Iterator[HiddenBound]:
    if not isinstance(node, Mapping):
        return
    names = {key: value for key, value in node.items() if key in PYDANTIC_CONSTRAINT_NAMES}
    misplaced, bounded_type = _misplaced(node)
    if names or misplaced:
        yield HiddenBound(path, names, misplaced, bounded_type or _canonical_type(node))
    reference = node.get("$ref")
    if isinstance(reference, str) and reference not in following:
        target = _resolve(root, reference)
        if target is not None:
            yield from _walk(target, path, root, following | {reference})
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            for name, child in value.items():
                yield from _walk(child, f"{path}.{name}", root, following)
        elif key == "patternProperties" and isinstance(value, Mapping):
            for child in value.values():
                yield from _walk(child, f"{path}{{}}", root, following)
        elif key == "dependentSchemas" and isinstance(value, Mapping):
            for child in value.values():
                yield from _walk(child, path, root, following)
        elif key in ("items", "prefixItems") and isinstance(value, list):
            for index, child in enumerate(value):
                yield from _walk(child, f"{path}[{index}]", root, following)
        elif key in _ITEM:
            yield from _walk(value, f"{path}[]", root, following)
        elif key in _MEMBER:
            yield from _walk(value, f"{path}{{}}", root, following)
        elif key in _SAME_VALUE and isinstance(value, list):
            for child in value:
                yield from _walk(child, path, root, following)
        elif key in _SAME_VALUE:
            yield from _walk(value, path, root, following)


def _misplaced(node: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Standard bounds beside an ``anyOf`` (no ``type`` of its own) that do not constrain its first,
    canonical branch: the lenient types write that branch first (`pydantic_lenient.schema.styles`)."""
    bounds = {key: value for key, value in node.items() if key in _FAMILY_OF_BOUND}
    canonical = _canonical_type(node)
    if not bounds or "type" in node or canonical is None:
        return {}, None
    family = _FAMILY_OF_TYPE[canonical]
    wrong = {key: value for key, value in bounds.items() if _FAMILY_OF_BOUND[key] != family}
    return wrong, canonical if wrong else None


def _canonical_type(node: Mapping[str, Any]) -> str | None:
    """The type of the first branch of the node's ``anyOf``, when it has exactly one."""
    members = node.get("anyOf")
    if not isinstance(members, list) or not members or not isinstance(members[0], Mapping):
        return None
    kind = members[0].get("type")
    return kind if isinstance(kind, str) and kind in _FAMILY_OF_TYPE else None


def _resolve(root: Mapping[str, Any], reference: str) -> Any:
    for prefix, container in (("#/$defs/", "$defs"), ("#/definitions/", "definitions")):
        definitions = root.get(container)
        if reference.startswith(prefix) and isinstance(definitions, Mapping):
            return definitions.get(reference.removeprefix(prefix))
    return None


def _keywords(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in values.items())
