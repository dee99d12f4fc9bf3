"""Gemini CLI, and the Gemini API's rules for a function declaration's schema.

Sources:

* google-gemini/gemini-cli ``packages/core/src/tools/mcp-client.ts`` (``discoverTools``): the one
  rewrite, a two-entry type array holding ``"null"`` becomes ``type: T, nullable: true``, at every
  depth; nothing else changes. The client introduces itself as ``gemini-cli-mcp-client``.
* google-gemini/gemini-cli ``packages/core/src/utils/schemaValidator.ts`` (``SchemaValidator``): Ajv 8
  (draft-07, or 2020-12 when ``$schema`` says so) with ``strictSchema: false`` and ajv-formats; a schema
  that does not compile is not validated; the arguments are never coerced.
  ``packages/core/src/tools/tools.ts`` validates every call with it before ``callTool``.
  Both run in tests/hosts from ``@google/gemini-cli-core`` on npm.
* The Gemini API answers 400 ``INVALID_ARGUMENT`` to the whole request when one declaration breaks
  its rules (transcribed from the reports, the API is not public code):
  google-gemini/gemini-cli#21094 and #4415 (integer ``enum``: "Invalid value ... (TYPE_STRING)"),
  github/copilot-cli#4623 (a type array in ``items``; a boolean schema), github/copilot-cli#4835 (an
  integer ``enum`` on an array), zereight/gitlab-mcp#166 (an ``anyOf`` branch without ``type``),
  and VS Code's "array type must have items" for an array without ``items``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._ajv import AjvCompileError, AjvOptions, ajv_validate
from .profile import Call, HostProfile

__all__ = ("GEMINI_CLI", "GeminiCli", "gemini_api_refusals", "nullable_for_type_pairs")


def nullable_for_type_pairs(schema: Any) -> Any:
    """Gemini CLI's rewrite: ``{"type": [T, "null"]}`` becomes ``{"type": T, "nullable": true}``, at every depth.

    It walks every value, data included (an ``enum`` or ``default`` holding such an object too), as the
    CLI's own walk does.
    """
    if isinstance(schema, list):
        return [nullable_for_type_pairs(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = dict(schema)
    kind = result.get("type")
    if isinstance(kind, list) and len(kind) == 2 and "null" in kind:
        other = kind[1 - kind.index("null")]
        if isinstance(other, str):
            result["type"] = other
            result["nullable"] = True
    return {key: nullable_for_type_pairs(value) for key, value in result.items()}


def _subschemas(schema: Any, path: str, inside_items: bool = False) -> Iterator[tuple[Any, str, bool]]:
    yield schema, path, inside_items
    if not isinstance(schema, dict):
        return
    for key in ("properties", "$defs", "definitions"):
        members = schema.get(key)
        if isinstance(members, dict):
            for name, sub in members.items():
                yield from _subschemas(sub, f"{path}.{key}.{name}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        members = schema.get(key)
        if isinstance(members, list):
            for index, sub in enumerate(members):
                yield from _subschemas(sub, f"{path}.{key}[{index}]", inside_items)
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        yield from _subschemas(items, f"{path}.items", True)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _subschemas(extra, f"{path}.additionalProperties")


def gemini_api_refusals(schema: dict[str, Any]) -> list[str]:
    """What the Gemini API refuses in a function's parameters schema (see the module's sources)."""
    reasons: list[str] = []
    for node, path, inside_items in _subschemas(schema, "parameters"):
        if isinstance(node, bool):
            reasons.append(f"{path}: a boolean schema")
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if isinstance(kind, list):
            if inside_items:
                reasons.append(f"{path}: a type array in items")
            elif not (len(kind) == 2 and "null" in kind):
                reasons.append(f"{path}: a type array other than [T, null]")
        enum = node.get("enum")
        if isinstance(enum, list) and not all(isinstance(option, str) for option in enum):
            reasons.append(f"{path}: an enum that is not all strings")
        is_array = kind == "array" or (isinstance(kind, list) and "array" in kind)
        if is_array and "items" not in node:
            reasons.append(f"{path}: an array without items")
        items = node.get("items")
        if isinstance(items, dict) and any(key in items for key in ("anyOf", "oneOf")):
            reasons.append(f"{path}.items: a union")
        for key in ("anyOf", "oneOf"):
            for index, branch in enumerate(node.get(key, []) if isinstance(node.get(key), list) else []):
                if isinstance(branch, dict) and not isinstance(branch.get("type"), str):
                    reasons.append(f"{path}.{key}[{index}]: a branch without a type")
    return reasons


def validate_like_gemini_cli(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """``SchemaValidator.validate``: None when the call goes on, else the error the model is shown."""
    draft = "2020-12" if schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema" else "07"
    try:
        valid, _ = ajv_validate(schema, arguments, AjvOptions(strict_schema=False, formats=True, draft=draft))
    except AjvCompileError:
        return None  # not compiled: not validated
    return None if valid else "params does not match the tool's schema"


@dataclass(frozen=True)
class GeminiCli(HostProfile):
    takes_down_every_tool: bool = True

    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        rewritten: dict[str, Any] = nullable_for_type_pairs(schema)
        return rewritten

    def refusals(self, schema: dict[str, Any]) -> list[str]:
        return gemini_api_refusals(schema)

    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        error = validate_like_gemini_cli(schema, arguments)
        return Call(None, error) if error else Call(arguments)


GEMINI_CLI = GeminiCli(
    name="gemini-cli",
    title="Gemini CLI",
    client_names=("gemini-cli-mcp-client",),
    sources=(
        "google-gemini/gemini-cli packages/core/src/tools/mcp-client.ts",
        "google-gemini/gemini-cli packages/core/src/utils/schemaValidator.ts",
        "google-gemini/gemini-cli#21094",
        "github/copilot-cli#4623",
        "github/copilot-cli#4835",
    ),
)
