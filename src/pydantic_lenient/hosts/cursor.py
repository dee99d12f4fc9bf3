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

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .profile import Call, HostProfile, Listing, nullable_properties, property_schemas, resolve

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

    def as_meant(self, schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """``""`` for a parameter Cursor fills in when the model leaves it out (cursor/cursor#3614:
        optional and nullable) is left out again where ``""`` is none of the parameter's values (a
        number, a boolean, a list, a ``Literal``, a date): it cannot be meant as a value, so the
        server's default applies, as for any host that omits it. A parameter that takes ``""`` (text)
        keeps it: there ``""`` is a value like any other, and a string is never changed."""
        empty = [name for name, value in arguments.items() if type(value) is str and value == ""]
        if not empty:
            return arguments
        properties = property_schemas(schema)
        unset = {
            name
            for name in nullable_properties(schema)
            if name in empty and not _admits_empty_text(properties[name], schema)
        }
        return {name: value for name, value in arguments.items() if name not in unset}


def _admits_empty_text(schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    """Whether ``schema`` may take ``""`` as a value: a string branch that no ``enum``/``const``,
    ``minLength`` or ``pattern`` refuses it from, and that is no JSON text (``""`` is no JSON). A
    pattern is read as Python reads it on the empty string only; one it cannot read, or any
    keyword it does not know, counts as taking ``""`` (the cautious answer)."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return schema is not False
    branches = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    if branches:
        return depth >= 32 or any(_admits_empty_text(branch, root, depth + 1) for branch in branches)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" not in kinds and kind is not None:
        return False
    if kind is None and not ({"enum", "const"} & schema.keys()):
        return True
    if "const" in schema:
        return bool(schema["const"] == "")
    if isinstance(schema.get("enum"), list):
        return "" in schema["enum"]
    if schema.get("contentMediaType") == "application/json" or schema.get("format") in _NEVER_EMPTY_FORMATS:
        return False
    min_length = schema.get("minLength", 0)
    if isinstance(min_length, int) and min_length >= 1:
        return False
    pattern = schema.get("pattern")
    return not isinstance(pattern, str) or _pattern_takes_empty(pattern)


@functools.lru_cache(maxsize=1024)
def _pattern_takes_empty(pattern: str) -> bool:
    if len(pattern) > _LONGEST_PATTERN_READ:
        return True
    try:
        return re.search(pattern, "") is not None
    except (re.error, RecursionError, OverflowError):
        return True


# Formats no empty string meets (pydantic writes them for dates, URLs, UUIDs...); others, such as
# pydantic's "password", may hold "".
_NEVER_EMPTY_FORMATS = frozenset(
    {"date", "date-time", "time", "duration", "email", "idn-email", "hostname", "ipv4", "ipv6", "uri", "uuid"}
)

# Longer patterns are not compiled here (compiling is linear, but a hostile listing may hold many).
_LONGEST_PATTERN_READ = 2_000


CURSOR = Cursor(
    name="cursor",
    title="Cursor",
    client_names=("cursor-vscode",),
    sources=("cursor/cursor#3540", "cursor/cursor#3778", "cursor/cursor#3614"),
)
