"""Cursor: a hand-written type check of each top-level argument, and ``""`` for unset nullables.

Sources:

* cursor/cursor#3540 quotes Cursor's ``MCPHandler`` source: for each argument, with ``a`` its type
  name and ``o`` its value, a property with ``anyOf`` passes when some branch's ``type`` is ``"null"``
  and the value is ``null``, or equals ``a``; otherwise a property with a ``type`` passes when ``a``
  equals it, or it is ``"integer"`` and ``a`` is ``"number"``. Nothing deeper is checked, and nothing
  is converted. Cursor's code is not public; ``a`` is read as JS ``typeof`` with arrays named
  ``"array"`` (an ``{"type": "array"}`` parameter works in Cursor, so arrays cannot be ``"object"``).
* cursor/cursor#3778: ``Parameter 'optionalStr' must be of type null,string, got string`` — a type
  array never equals ``a``, so it refuses every value.
* cursor/cursor#3614: an unset nullable parameter is sent as ``""``.
* ``clientInfo.name``: ``cursor-vscode`` (as servers log it; Cursor's CLI agent sends another name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .profile import Call, HostProfile, Listing, nullable_properties, property_schemas

__all__ = ("CURSOR", "Cursor", "cursor_type_error")


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"  # dicts, and null (typeof null is "object")


def _js_text(kind: Any) -> str:
    if isinstance(kind, list):
        return ",".join(str(item) for item in kind)
    return str(kind)


def cursor_type_error(schema: Any, value: Any) -> str | None:
    """Cursor's check of one top-level argument: None when it passes, else the model's error."""
    if not isinstance(schema, dict):
        return None
    found = _type_name(value)
    branches = schema.get("anyOf")
    if branches:
        types = [branch.get("type") if isinstance(branch, dict) else None for branch in branches]
        if not any((kind == "null" and value is None) or kind == found for kind in types):
            return f"must be one of types [{', '.join(_js_text(kind) for kind in types)}], got {found}"
        return None
    kind = schema.get("type")
    if kind and kind != found and not (kind == "integer" and found == "number"):
        return f"must be of type {_js_text(kind)}, got {found}"
    return None


@dataclass(frozen=True)
class Cursor(HostProfile):
    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        properties = property_schemas(schema)
        for name, value in arguments.items():
            error = cursor_type_error(properties.get(name), value)
            if error:
                return Call(None, f"Parameter '{name}' {error}")
        return Call(arguments)

    def unset(self, listing: Listing) -> dict[str, Any]:
        return dict.fromkeys(nullable_properties(listing.schema), "")


CURSOR = Cursor(
    name="cursor",
    title="Cursor",
    client_names=("cursor-vscode",),
    sources=("cursor/cursor#3540", "cursor/cursor#3778", "cursor/cursor#3614"),
)
