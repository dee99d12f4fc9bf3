"""Codex CLI: the schema lowered to a narrow struct; the arguments pass unchecked.

Sources:

* openai/codex ``codex-rs/tools/src/json_schema.rs`` (``parse_tool_input_schema``,
  ``sanitize_json_schema``): local ``$ref`` resolved inline (a cycle becomes a permissive stand-in),
  single-branch ``anyOf``/``oneOf``/``allOf`` unwrapped, ``const`` made a one-value ``enum``, a
  missing ``type`` inferred (object, array, string, number, else string), ``properties`` and
  ``items`` filled in where absent, and everything outside ``type``, ``description``, ``enum``,
  ``items``, ``properties``, ``required``, ``additionalProperties`` and ``anyOf`` dropped: the
  model never sees ``pattern``, ``minimum``, ``maximum``, ``format`` or ``default``. A top-level
  ``{"type": "null"}`` is refused.
* openai/codex#16841: a parameter typed ``array | null`` reaches the server as JSON text.
* Codex does not validate the model's arguments before ``tools/call``.
* ``clientInfo.name``: ``codex-mcp-client`` (``codex-rs/rmcp-client``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .profile import Call, HostProfile, property_schemas, resolve

__all__ = ("CODEX", "Codex", "lower_like_codex")

_KEPT = frozenset({"type", "description", "enum", "items", "properties", "required", "additionalProperties", "anyOf"})
_TYPES = ("string", "number", "boolean", "integer", "object", "array", "null")


def lower_like_codex(schema: Any, root: Any = None, active: tuple[str, ...] = ()) -> Any:
    """``sanitize_json_schema`` followed by the struct's fields."""
    root = schema if root is None else root
    if isinstance(schema, bool):
        return {"type": "string"}
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        if reference in active:
            return {"type": "object", "properties": {}}
        target = resolve({"$ref": reference}, root)
        if isinstance(target, dict) and "$ref" not in target:
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref" and k not in target}}
            return lower_like_codex(merged, root, (*active, reference))
    for combiner in ("oneOf", "anyOf", "allOf"):
        branches = schema.get(combiner)
        if isinstance(branches, list) and len(branches) == 1 and isinstance(branches[0], dict):
            merged = {**branches[0], **{k: v for k, v in schema.items() if k != combiner and k not in branches[0]}}
            return lower_like_codex(merged, root, active)
    node = dict(schema)
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: lower_like_codex(v, root, active) for k, v in node["properties"].items()}
    if "items" in node:
        node["items"] = lower_like_codex(node["items"], root, active)
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = lower_like_codex(node["additionalProperties"], root, active)
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [lower_like_codex(branch, root, active) for branch in node["anyOf"]]
    kind = node.get("type")
    types = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    types = [t for t in types if t in _TYPES]
    if not types and "anyOf" in node:
        return {k: v for k, v in node.items() if k in _KEPT}
    if not types:
        if any(k in node for k in ("properties", "required", "additionalProperties")):
            types = ["object"]
        elif "items" in node or "prefixItems" in node:
            types = ["array"]
        elif "enum" in node or "format" in node:
            types = ["string"]
        elif any(k in node for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
            types = ["number"]
        else:
            types = ["string"]
    node["type"] = types[0] if len(types) == 1 else types
    if "object" in types and "properties" not in node:
        node["properties"] = {}
    if "array" in types and "items" not in node:
        node["items"] = {"type": "string"}
    return {k: v for k, v in node.items() if k in _KEPT}


def _nullable_array(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    for branch in schema.get("anyOf", []) if isinstance(schema.get("anyOf"), list) else []:
        if isinstance(branch, dict):
            inner = branch.get("type")
            kinds |= set(inner) if isinstance(inner, list) else {inner}
    return {"array", "null"} <= kinds


@dataclass(frozen=True)
class Codex(HostProfile):
    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        lowered: dict[str, Any] = lower_like_codex(schema)
        return lowered

    def refusals(self, schema: dict[str, Any]) -> list[str]:
        return ["tool input schema must not be a singleton null type"] if schema.get("type") == "null" else []

    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        properties = property_schemas(schema)
        sent = {
            name: json.dumps(value) if isinstance(value, list) and _nullable_array(properties.get(name)) else value
            for name, value in arguments.items()
        }
        return Call(sent)


CODEX = Codex(
    name="codex",
    title="Codex CLI",
    client_names=("codex-mcp-client",),
    sources=("openai/codex codex-rs/tools/src/json_schema.rs", "openai/codex#16841"),
)
