"""Where subschemas live inside a JSON Schema (draft 2020-12 and draft-07), and a way to rebuild one.

Only these keywords hold schemas. Everything else (``enum``, ``const``, ``default``, ``examples``,
``required``, and the *names* in ``properties``) is data and must never be rewritten as a schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = (
    "SCHEMA_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "map_subschemas",
    "transform_bottom_up",
)

SCHEMA_KEYWORDS = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",  # a list of schemas in draft-07, handled below
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAP_KEYWORDS = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})

Schema = Any  # a dict, or a boolean schema
SchemaFunction = Callable[[Schema], Schema]


def map_subschemas(schema: Schema, function: SchemaFunction) -> Schema:
    """A copy of ``schema`` with ``function`` applied to each direct subschema."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SCHEMA_KEYWORDS and (isinstance(value, (dict, bool))):
            result[key] = function(value)
        elif key in SCHEMA_KEYWORDS | SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            result[key] = [function(item) for item in value]
        elif key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            result[key] = {name: function(item) for name, item in value.items()}
        elif key == "dependencies" and isinstance(value, dict):  # draft-07: a schema or a list of names
            result[key] = {
                name: function(item) if isinstance(item, (dict, bool)) else item for name, item in value.items()
            }
        else:
            result[key] = value
    return result


def transform_bottom_up(schema: Schema, function: SchemaFunction) -> Schema:
    """Apply ``function`` to every schema in the tree, children first."""

    def visit(node: Schema) -> Schema:
        return function(map_subschemas(node, visit))

    return visit(schema)
