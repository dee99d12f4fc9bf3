"""The model providers' targets: a finished schema rewritten for OpenAI, Anthropic or Gemini.

Each rewrite starts from the ``any-of`` style (providers read no type arrays) without the JSON-text
annotations (`without_content`), and visits every node children first: what all providers share
(``anyOf`` for ``oneOf``, no ``$schema``), then what that provider's function calling can read.
Where it cannot carry a form, the rewrite writes the closest shape that admits no value the
validator refuses, or moves the constraint into the description; each such change is a `Loss`.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic_lenient.types.bounds import inclusive_integer_bound, is_finite_number

from ._rewriting import MAX_DEPTH, Loss, Node, bottom_up, children, describe, move_to_description, pointer_part
from .subschemas import SCHEMA_MAP_KEYWORDS, map_subschemas

__all__ = ("rewrite_for_anthropic", "rewrite_for_gemini", "rewrite_for_openai", "without_content")

_CONTENT_KEYWORDS = ("contentMediaType", "contentEncoding", "contentSchema")
_JSON_SCALARS: dict[str, Any] = {"anyOf": [{"type": t} for t in ("string", "number", "boolean", "null")]}


def without_content(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON-text annotations as a description: no provider reads them, and they constrain nothing
    (hosts do not check ``contentSchema``), so dropping them admits the same values."""

    def rewrite(node: Node) -> Node:
        if not isinstance(node, dict) or not any(key in node for key in _CONTENT_KEYWORDS):
            return node
        result = {key: value for key, value in node.items() if key not in _CONTENT_KEYWORDS}
        if node.get("contentMediaType") == "application/json":
            describe(result, "JSON text")
        return result

    # Top-down, so that nothing inside a contentSchema is rewritten (or reported) before it goes.
    def visit(node: Node) -> Node:
        return map_subschemas(rewrite(node), visit)

    result: dict[str, Any] = visit(schema)
    return result


def _common_provider_rewrite(node: dict[str, Any], location: str, losses: list[Loss]) -> dict[str, Any]:
    """What every provider target does to a node (of an ``any-of`` style schema): ``anyOf`` for
    ``oneOf``, and no ``$schema`` (each provider reads its own dialect)."""
    node.pop("$schema", None)
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and "anyOf" not in node:
        # pydantic writes oneOf only for discriminated unions, whose branches are disjoint, so anyOf
        # admits the same values.
        node["anyOf"] = node.pop("oneOf")
    return node


def _wrap_ref_with_siblings(node: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": R, "description": D}`` as ``{"anyOf": [{"$ref": R}], "description": D}``: strict
    providers refuse (or drop) keywords beside a ``$ref``, and allow them beside ``anyOf``."""
    if isinstance(node.get("$ref"), str) and len(node) > 1 and "anyOf" not in node:
        reference = node.pop("$ref")
        return {"anyOf": [{"$ref": reference}], **node}
    return node


def _close_object(node: dict[str, Any], location: str, losses: list[Loss], *, require_all: bool) -> None:
    """Strict providers take closed objects only: ``additionalProperties: false`` on every object."""
    if node.get("type") != "object":
        return
    # A model's object without additionalProperties: pydantic ignores other keys, so closing it loses
    # nothing. An object with no properties, or with additionalProperties, is data under any key.
    extra = node.get("additionalProperties", "properties" not in node)
    free_form = extra is not False or "patternProperties" in node
    node.setdefault("properties", {})
    node.pop("patternProperties", None)
    node.pop("propertyNames", None)
    node["additionalProperties"] = False
    if free_form:
        losses.append(Loss(location, "keys other than the listed properties cannot be expressed: the object is closed"))
    if require_all:
        required = list(node.get("required", []))
        optional = [name for name in node["properties"] if name not in required]
        node["required"] = required + optional
        losses.extend(
            Loss(
                f"{location}/properties/{pointer_part(name)}",
                "required: the model must send it (null where the field takes null), not leave it out",
            )
            for name in optional
        )


def _widen_tuple(node: dict[str, Any], location: str, losses: list[Loss]) -> None:
    """A tuple's positions as one ``items`` union, its length pinned: positions are not enforced."""
    prefix = node.pop("prefixItems", None)
    if not isinstance(prefix, list):
        return
    members: list[Any] = []
    for item in [*prefix, *([node["items"]] if "items" in node else [])]:
        if item not in members:
            members.append(item)
    node["items"] = members[0] if len(members) == 1 else {"anyOf": members}
    node.setdefault("minItems", len(prefix))
    losses.append(Loss(location, "prefixItems cannot be expressed: each item may be any of the positions' types"))


def rewrite_for_openai(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    def visit(node: dict[str, Any], location: str) -> Node:
        node = _wrap_ref_with_siblings(_common_provider_rewrite(node, location, losses))
        node.pop("default", None)  # not allowed in strict mode; every property is sent anyway
        _widen_tuple(node, location, losses)
        if node.get("type") == "array" and not _typed(node.get("items")):
            node["items"] = _JSON_SCALARS
            losses.append(Loss(location, "untyped items cannot be expressed: only scalar items are admitted"))
        _close_object(node, location, losses, require_all=True)
        move_to_description(node, _OPENAI_UNSUPPORTED, location, losses, "not supported in strict mode")
        if isinstance(node.get("format"), str) and node["format"] not in _OPENAI_FORMATS:
            move_to_description(node, ["format"], location, losses, "not a format strict mode supports")
        return node

    return dict(bottom_up(schema, "", visit))


# Evidence: pydantic-ai's OpenAI transformer, which treats these as incompatible with strict mode.
_OPENAI_UNSUPPORTED = (
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
)
_OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_TYPED_KEYS = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")


def _typed(items: Any) -> bool:
    return isinstance(items, dict) and any(key in items for key in _TYPED_KEYS)


# The keywords the Anthropic SDK's transform_schema keeps; it writes every other one into the
# description, and the API's strict mode takes no other.
_ANTHROPIC_KEPT = frozenset(
    {
        "type",
        "anyOf",
        "allOf",
        "enum",
        "const",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "$ref",
        "$defs",
    }
)
_ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def rewrite_for_anthropic(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    def visit(node: dict[str, Any], location: str) -> Node:
        node = _wrap_ref_with_siblings(_common_provider_rewrite(node, location, losses))
        _widen_tuple(node, location, losses)
        _close_object(node, location, losses, require_all=False)
        if "const" in node or isinstance(node.get("enum"), list):
            node.pop("type", None)  # the SDK drops it beside literals; the literal says the type
        keep = set(_ANTHROPIC_KEPT)
        if node.get("type") == "string" and node.get("format") in _ANTHROPIC_FORMATS:
            keep.add("format")
        if node.get("type") == "array" and node.get("minItems") in (0, 1):
            keep.add("minItems")
        unsupported = [key for key in node if key not in keep]
        move_to_description(node, unsupported, location, losses, "the API's strict schema subset has no such keyword")
        return node

    return dict(bottom_up(schema, "", visit))


# Keywords valid both in google-genai's JSONSchema and in its OpenAPI Schema.
_GEMINI_KEPT = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "additionalProperties",
        "anyOf",
    }
)


def rewrite_for_gemini(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    inlined = _inline_references(schema)

    def visit(node: dict[str, Any], location: str) -> Node:
        node = _common_provider_rewrite(node, location, losses)
        _widen_tuple(node, location, losses)
        _inclusive_bounds(node)
        if "const" in node:
            node.setdefault("enum", [node.pop("const")])
        enum = node.get("enum")
        if isinstance(enum, list) and not all(isinstance(value, str) for value in enum):
            move_to_description(node, ["enum"], location, losses, "Gemini's enum holds strings only")
        unsupported = [key for key in node if key not in _GEMINI_KEPT]
        move_to_description(node, unsupported, location, losses, "not in Gemini's schema subset")
        return _nullable_as_pair(node)

    return dict(bottom_up(inlined, "", visit))


def _inclusive_bounds(node: dict[str, Any]) -> None:
    """``exclusiveMinimum``/``exclusiveMaximum`` as the inclusive bound that admits the same values:
    the next integer for an integer, the next double for a number (JSON numbers are doubles)."""
    bounds = (("exclusiveMinimum", "minimum", math.inf), ("exclusiveMaximum", "maximum", -math.inf))
    for exclusive, inclusive, step in bounds:
        bound = node.get(exclusive)
        if not isinstance(bound, (int, float)) or isinstance(bound, bool) or inclusive in node:
            continue
        integer_bound = inclusive_integer_bound(exclusive, bound) if is_finite_number(bound) else None
        if node.get("type") == "integer" and integer_bound is not None:
            node[inclusive] = integer_bound[1]
        else:
            node[inclusive] = math.nextafter(float(bound), step)
        del node[exclusive]


def _nullable_as_pair(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [A, B, null]`` as ``anyOf: [{anyOf: [A, B]}, null]``: google-genai reads a two-member
    union with null as one nullable schema, and a longer one as a branch with no type at all."""
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) <= 2 or {"type": "null"} not in members:
        return node
    others = [member for member in members if member != {"type": "null"}]
    return {**node, "anyOf": [{"anyOf": others}, {"type": "null"}]}


# Inlining can grow a schema exponentially (a definition used twice by one used twice, ...).
_INLINE_BUDGET = 100_000


def _inline_references(schema: dict[str, Any]) -> dict[str, Any]:
    """Every local ``$ref`` replaced by what it points to; Gemini's ``Schema`` has no definitions."""
    definitions = schema.get("$defs", {})
    budget = [_INLINE_BUDGET]

    def resolve(node: Node, seen: tuple[str, ...], depth: int = 0) -> Node:
        if not isinstance(node, dict):
            return node
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(f"inlining the $refs gives more than {_INLINE_BUDGET} subschemas")
        if depth > MAX_DEPTH:
            raise ValueError(f"inlining the $refs nests the schema deeper than {MAX_DEPTH} levels")
        reference = node.get("$ref")
        if isinstance(reference, str):
            name = reference.removeprefix("#/$defs/")
            if name == reference or not isinstance(definitions.get(name), dict):
                raise ValueError(f"cannot inline $ref {reference!r}: only #/$defs/ references are resolved")
            if name in seen:
                raise ValueError(f"{name} refers to itself: a recursive model cannot be a Gemini function declaration")
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            return resolve({**definitions[name], **siblings}, (*seen, name), depth + 1)
        result = {key: value for key, value in node.items() if key != "$defs"}
        for key, value, _ in children(result, ""):
            if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                result[key] = {name: resolve(item, seen, depth + 1) for name, item in value.items()}
            elif isinstance(value, list):
                result[key] = [resolve(item, seen, depth + 1) for item in value]
            else:
                result[key] = resolve(value, seen, depth + 1)
        return result

    result: dict[str, Any] = resolve(schema, ())
    return result
