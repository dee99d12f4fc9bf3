"""VS Code Copilot Chat: Ajv with ``coerceTypes: true`` on every call, and arrays must have ``items``.

Sources:

* microsoft/vscode-copilot-chat ``src/extension/tools/common/toolsService.ts``
  (``BaseToolsService.validateToolInput``, ``ajvValidateForTool``): ``new Ajv({ coerceTypes: true })``
  (draft-07, Ajv's strict mode), one compiled function per tool; a schema that does not compile is
  not validated; the arguments are validated with coercion *in place*, and when a ``type`` error
  says an ``object`` or ``array`` was expected where a string stands, that string is parsed as JSON
  and validation runs again. Ajv is 8.18.0 there (its ``package-lock.json``); tests/hosts runs that
  exact code on the real Ajv.
* "tool parameters array type must have items": VS Code refuses a tool whose schema has an array
  without ``items`` (reported by many servers, e.g. the changelog of the wordpress MCP adapter #6).
* With a Gemini model behind it, the Gemini API's rules apply too (`pydantic_lenient.hosts.gemini`).
* ``clientInfo.name``: ``Visual Studio Code`` (``Visual Studio Code - Insiders`` for Insiders), from
  microsoft/vscode ``src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._ajv import AjvCompileError, AjvOptions, ajv_validate
from .gemini import gemini_api_refusals
from .profile import Call, HostProfile, property_schemas, resolve

__all__ = ("VSCODE", "VSCODE_ON_GEMINI", "VsCode", "arrays_without_items", "validate_like_vscode")

_OPTIONS = AjvOptions(coerce_types=True)


def arrays_without_items(schema: Any, path: str = "parameters") -> list[str]:
    """Every array schema without ``items``, anywhere in ``schema``."""
    found: list[str] = []
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            found += arrays_without_items(item, f"{path}[{index}]")
        return found
    if not isinstance(schema, dict):
        return found
    kind = schema.get("type")
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and "items" not in schema:
        found.append(f"{path}: tool parameters array type must have items")
    for key, value in schema.items():
        if key not in ("enum", "const", "default", "examples", "required"):
            found += arrays_without_items(value, f"{path}.{key}")
    return found


def validate_like_vscode(schema: dict[str, Any], arguments: Any) -> Call:
    """``validateToolInput`` after JSON parsing: the arguments as coerced, or the error."""
    try:
        valid, coerced = ajv_validate(schema, arguments, _OPTIONS)
    except AjvCompileError:
        return Call(arguments)  # compiling failed: the input goes on unvalidated
    if valid:
        return Call(coerced)
    # ajvValidateForTool: strings where an object or array is expected are parsed as JSON, then again.
    if isinstance(coerced, dict):
        reparsed = _parse_json_strings(schema, coerced)
        if reparsed is not None:
            return validate_like_vscode(schema, reparsed)
    return Call(None, "ERROR: Your input to the tool was invalid")


def _expects_structure(schema: Any, root: dict[str, Any], depth: int = 0) -> bool:
    """Whether Ajv, failing a string here, reports a ``type`` error for ``object`` or ``array``: some
    schema it tries (through ``$ref`` and the branches of ``anyOf``, ``oneOf``, ``allOf``) says that type."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict) or depth > 32:
        return False
    if schema.get("type") in ("object", "array"):
        return True
    branches = [
        b for key in ("anyOf", "oneOf", "allOf") for b in schema.get(key, []) if isinstance(schema.get(key), list)
    ]
    return any(_expects_structure(branch, root, depth + 1) for branch in branches)


def _parse_json_strings(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The top-level strings whose property expects an object or array, parsed (None if none parses).

    Ajv stops at the first error, so the real code fixes one property per round; the fixed point is the same.
    """
    properties = property_schemas(schema)
    changed = False
    result = dict(arguments)
    for name, value in arguments.items():
        if not (isinstance(value, str) and _expects_structure(properties.get(name), schema)):
            continue
        try:
            parsed = json.loads(value)
        except ValueError:
            continue
        if isinstance(parsed, (dict, list)):
            result[name] = parsed
            changed = True
    return result if changed else None


@dataclass(frozen=True)
class VsCode(HostProfile):
    on_gemini: bool = False

    def refusals(self, schema: dict[str, Any]) -> list[str]:
        return arrays_without_items(schema) + (gemini_api_refusals(schema) if self.on_gemini else [])

    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        return validate_like_vscode(schema, arguments)


_SOURCES = (
    "microsoft/vscode-copilot-chat src/extension/tools/common/toolsService.ts",
    "microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts",
)
VSCODE = VsCode(
    name="vscode",
    title="VS Code Copilot Chat",
    client_names=("Visual Studio Code", "Visual Studio Code - Insiders"),
    sources=_SOURCES,
)
VSCODE_ON_GEMINI = VsCode(
    name="vscode+gemini",
    title="VS Code Copilot Chat on a Gemini model",
    client_names=(),
    sources=(*_SOURCES, "github/copilot-cli#4623"),
    on_gemini=True,
    takes_down_every_tool=True,
)
