"""The shapes an input schema can be advertised in, and `input_schema` to produce one.

Every style admits exactly the same JSON values; they differ only in what a host's validator or a
model provider's schema subset can read:

* ``"type-array"``: ``{"type": ["integer", "string", "null"], "minimum": 0, "pattern": "^[0-9]+$"}``.
  Compact; Ajv compiles it with ``allowUnionTypes`` or outside strict mode.
* ``"any-of"``: one ``anyOf`` branch per type. Compiles under strict Ajv and fits providers that
  refuse type arrays.
* ``"strict"``: canonical types only (``{"type": "integer"}``), while the validator stays lenient.
  For hosts that repair arguments against the schema themselves: a widened schema switches that off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema

from ._scalar import canonical_input_schemas
from ._walk import Schema, transform_bottom_up

__all__ = ("STYLES", "LenientJsonSchema", "Style", "apply_style", "generator_for", "input_schema")

Style = Literal["type-array", "any-of", "strict"]
STYLES: tuple[Style, ...] = get_args(Style)

# Keywords that constrain only instances of one JSON type. A type union may be written as a type
# array exactly when each branch uses only its own type's keywords: the others ignore them.
_KEYWORDS_BY_FAMILY: dict[str, frozenset[str]] = {
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "string": frozenset(
        {
            "pattern",
            "minLength",
            "maxLength",
            "format",
            "contentMediaType",
            "contentEncoding",
            "contentSchema",
        }
    ),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "patternProperties",
            "additionalProperties",
            "required",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        }
    ),
    "boolean": frozenset(),
    "null": frozenset(),
}
_FAMILY_OF_TYPE = {
    "integer": "number",
    "number": "number",
    "string": "string",
    "array": "array",
    "object": "object",
    "boolean": "boolean",
    "null": "null",
}
_TYPE_SPECIFIC_KEYWORDS = frozenset().union(*_KEYWORDS_BY_FAMILY.values())


def _flatten_nested_any_of(schema: Schema) -> Schema:
    """``anyOf: [{anyOf: [a, b]}, c]`` is ``anyOf: [a, b, c]`` when the inner node says nothing else."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list):
        return schema
    flat: list[Any] = []
    for member in members:
        if isinstance(member, dict) and set(member) == {"anyOf"} and isinstance(member["anyOf"], list):
            flat.extend(member["anyOf"])
        else:
            flat.append(member)
    return {**schema, "anyOf": flat}


def _any_of_to_type_array(schema: Schema) -> Schema:
    """Write an ``anyOf`` of single-type branches as one type array, where that means the same."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list) or len(members) < 2:
        return schema
    if "type" in schema or not _TYPE_SPECIFIC_KEYWORDS.isdisjoint(schema):
        return schema
    types: list[str] = []
    keywords: dict[str, Any] = {}
    families: set[str] = set()
    for member in members:
        type_name = member.get("type") if isinstance(member, dict) else None
        if not isinstance(type_name, str) or type_name not in _FAMILY_OF_TYPE:
            return schema
        family = _FAMILY_OF_TYPE[type_name]
        if family in families or not set(member) - {"type"} <= _KEYWORDS_BY_FAMILY[family]:
            return schema
        families.add(family)
        types.append(type_name)
        keywords.update((key, value) for key, value in member.items() if key != "type")
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    return {"type": types, **keywords, **rest}


def _type_array_to_any_of(schema: Schema) -> Schema:
    """Write a type array as an ``anyOf`` of single-type branches (strict Ajv refuses type arrays)."""
    types = schema.get("type") if isinstance(schema, dict) else None
    if not isinstance(types, list) or "anyOf" in schema:
        return schema
    if len(types) == 1:
        return {**schema, "type": types[0]}
    if not all(isinstance(name, str) and name in _FAMILY_OF_TYPE for name in types):
        return schema
    branches = []
    for name in types:
        own = _KEYWORDS_BY_FAMILY[_FAMILY_OF_TYPE[name]]
        branches.append({"type": name, **{key: value for key, value in schema.items() if key in own}})
    rest = {key: value for key, value in schema.items() if key != "type" and key not in _TYPE_SPECIFIC_KEYWORDS}
    return {"anyOf": branches, **rest}


_STYLE_REWRITES: dict[str, Callable[[Schema], Schema]] = {
    "type-array": lambda node: _any_of_to_type_array(_flatten_nested_any_of(node)),
    "any-of": lambda node: _flatten_nested_any_of(_type_array_to_any_of(node)),
    # "strict" is decided while the schema is generated (lenient fields render canonically).
    "strict": lambda node: node,
}


def _style_rewrite(style: Style) -> Callable[[Schema], Schema]:
    try:
        return _STYLE_REWRITES[style]
    except KeyError:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}") from None


def apply_style(schema: JsonSchemaValue, style: Style) -> JsonSchemaValue:
    """Rewrite a whole JSON schema into ``style``'s shape without changing what it admits.

    ``"strict"`` leaves the schema as it is: that style is decided while a schema is generated.
    """
    return dict(transform_bottom_up(schema, _style_rewrite(style)))


class LenientJsonSchema(GenerateJsonSchema):
    """pydantic's JSON schema generator, writing lenient fields in one input-schema style, and
    leaving out pydantic's OpenAPI ``discriminator`` keyword (see `input_schema`).

    Use a subclass from `generator_for`, or pass it to ``model_json_schema(schema_generator=...)``.
    """

    style: ClassVar[Style] = "any-of"

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        canonical = canonical_input_schemas() if self.style == "strict" else contextlib.nullcontext()
        with canonical:
            json_schema = super().generate(schema, mode=mode)
        rewrite = _style_rewrite(self.style)
        # One pass: the style's rewrite, and dropping pydantic's OpenAPI-only keywords.
        return dict(transform_bottom_up(json_schema, lambda node: rewrite(_without_openapi_keywords(node))))


_GENERATORS: dict[Style, type[LenientJsonSchema]] = {
    style: type(f"LenientJsonSchema_{style.replace('-', '_')}", (LenientJsonSchema,), {"style": style})
    for style in STYLES
}


def generator_for(style: Style) -> type[LenientJsonSchema]:
    """The `LenientJsonSchema` subclass that writes ``style``."""
    try:
        return _GENERATORS[style]
    except KeyError:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}") from None


def input_schema(model: type[BaseModel], *, style: Style = "type-array") -> dict[str, Any]:
    """The ``inputSchema`` a tool with this input model advertises in ``tools/list``.

    The root is always ``"type": "object"``; ``$defs`` are kept and every ``$ref`` resolves. The
    dialect is JSON Schema 2020-12, MCP's default (pydantic writes tuples with ``prefixItems``).
    """
    schema = model.model_json_schema(schema_generator=generator_for(style), mode="validation")
    return _object_root(schema, getattr(model, "__name__", repr(model)))


def _without_openapi_keywords(schema: Schema) -> Schema:
    """Drop pydantic's OpenAPI ``discriminator``: no JSON Schema meaning, and Ajv in its default
    strict mode refuses to compile a schema that has it. The ``oneOf`` beside it still validates."""
    if isinstance(schema, dict) and isinstance(schema.get("discriminator"), dict):
        return {key: value for key, value in schema.items() if key != "discriminator"}
    return schema


def _object_root(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """Inline a root ``$ref`` (pydantic writes one for recursive models) and insist on an object."""
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        definitions = schema.get("$defs", {})
        target = definitions.get(reference.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            rest = {key: value for key, value in schema.items() if key != "$ref"}
            schema = {**target, **rest}
    if schema.get("type") != "object":
        raise TypeError(f"{name} does not describe a JSON object, so it cannot be a tool's input")
    return schema
