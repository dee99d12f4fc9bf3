"""Qwen Code: Ajv validation, then four repair passes over the arguments, then Ajv again.

Sources:

* QwenLM/qwen-code ``packages/core/src/utils/schemaValidator.ts`` (``SchemaValidator.validate``):
  Ajv 8 (draft-07, or 2020-12 by ``$schema``) with ``strictSchema: false`` and ajv-formats; a
  schema that does not compile is not validated. When the arguments fail, four passes rewrite them
  in place, in this order: ``fixBooleanValues`` (``"true"``/``"false"``, any case, to a boolean
  where the property accepts a boolean and no string), ``fixStringValues`` (a number or boolean to
  its text where the property accepts a string and not the value's type), ``fixStringifiedJsonValues``
  (JSON text in brackets or braces to the array or object, where the property accepts that and no
  string) and ``fixNumericValues`` (``-?digits(.digits)?`` to a number where the property accepts a
  number or integer and no string). The types a property accepts are its ``type`` plus those of its
  ``anyOf``/``oneOf``/``allOf`` branches, through local ``$ref``. Then Ajv validates again, and a
  failure is the error the model sees. It runs in tests/hosts from ``@qwen-code/qwen-code`` on npm.
* Qwen Code sends MCP schemas unchanged to OpenAI-compatible models (its ``schemaConverter.ts``
  rewrites only for Gemini's OpenAPI 3.0 mode).
* ``clientInfo.name``: ``qwen-cli-mcp-client-<server name>`` (``packages/core/src/tools/mcp-client.ts``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ._ajv import AjvCompileError, AjvOptions, ajv_validate
from .profile import Call, HostProfile, resolve

__all__ = ("QWEN_CODE", "QwenCode", "validate_like_qwen")

_NUMERIC = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_DANGEROUS = frozenset({"__proto__", "constructor", "prototype"})


def _variants(schema: dict[str, Any], root: Any) -> list[dict[str, Any]]:
    found = []
    for keyword in ("allOf", "anyOf", "oneOf"):
        for item in schema.get(keyword, []) if isinstance(schema.get(keyword), list) else []:
            if isinstance(item, dict):
                resolved = resolve(item, root)
                if isinstance(resolved, dict):
                    found.append(resolved)
    return found


def _has_object_shape(schema: dict[str, Any], root: Any) -> bool:
    if schema.get("properties") or schema.get("additionalProperties"):
        return True
    return any(v.get("properties") or v.get("additionalProperties") for v in _variants(schema, root))


def _effective_properties(schema: dict[str, Any], root: Any) -> dict[str, Any] | None:
    merged: dict[str, Any] = {}
    for variant in _variants(schema, root):
        for key, value in (variant.get("properties") or {}).items():
            if key not in _DANGEROUS:
                merged.setdefault(key, value)
    merged.update({key: value for key, value in (schema.get("properties") or {}).items() if key not in _DANGEROUS})
    return merged or None


def _accepted(schema: Any, root: Any, depth: int = 0) -> set[str] | None:
    if depth > 64 or not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str):
        schema = resolve(schema, root)
        if not isinstance(schema, dict) or isinstance(schema.get("$ref"), str):
            return None
    types: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        types.add(kind)
    elif isinstance(kind, list):
        types.update(item for item in kind if isinstance(item, str))
    for keyword in ("anyOf", "oneOf", "allOf"):
        for variant in schema.get(keyword, []) if isinstance(schema.get(keyword), list) else []:
            types |= _accepted(variant, root, depth + 1) or set()
    return types or None


def _kind(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None
        return "integer" if float(value).is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _js_typeof(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict) or value is None:
        return "object"
    return "boolean" if isinstance(value, bool) else "number" if isinstance(value, (int, float)) else "string"


def _property_schema(schema: dict[str, Any], root: Any, key: str) -> Any:
    properties = _effective_properties(schema, root) or {}
    extra = schema.get("additionalProperties")
    sub = properties.get(key, extra if isinstance(extra, dict) else None)
    return resolve(sub, root) if sub is not None else None


def _fix_booleans(data: dict[str, Any], schema: dict[str, Any], root: Any, depth: int = 0) -> None:
    if depth > 64 or (not _effective_properties(schema, root) and not schema.get("additionalProperties")):
        return
    for key in list(data):
        value, sub = data[key], _property_schema(schema, root, key)
        if isinstance(value, dict):
            if isinstance(sub, dict) and _has_object_shape(sub, root):
                _fix_booleans(value, sub, root, depth + 1)
        elif isinstance(value, list):
            items = resolve(sub.get("items"), root) if isinstance(sub, dict) and sub.get("items") else None
            if isinstance(items, dict) and _has_object_shape(items, root):
                for item in value:
                    if isinstance(item, dict):
                        _fix_booleans(item, items, root, depth + 1)
            elif isinstance(items, dict):
                accepted = _accepted(items, root) or set()
                if "boolean" in accepted and "string" not in accepted:
                    value[:] = [_boolean_of(item) for item in value]
        elif isinstance(value, str) and value.lower() in ("true", "false"):
            accepted = _accepted(sub, root) or set()
            if "boolean" in accepted and "string" not in accepted:
                data[key] = value.lower() == "true"


def _boolean_of(item: Any) -> Any:
    return item.lower() == "true" if isinstance(item, str) and item.lower() in ("true", "false") else item


def _js_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fix_strings(data: dict[str, Any], schema: dict[str, Any], root: Any, depth: int = 0) -> None:
    if depth > 64 or (not _effective_properties(schema, root) and not schema.get("additionalProperties")):
        return
    for key in list(data):
        value, sub = data[key], _property_schema(schema, root, key)
        if sub is None:
            continue
        if isinstance(value, dict):
            if _has_object_shape(sub, root):
                _fix_strings(value, sub, root, depth + 1)
        elif isinstance(value, list):
            items = resolve(sub.get("items"), root) if sub.get("items") else None
            if isinstance(items, dict) and _has_object_shape(items, root):
                for item in value:
                    if isinstance(item, dict):
                        _fix_strings(item, items, root, depth + 1)
            elif isinstance(items, dict):
                accepted = _accepted(items, root) or set()
                if "string" in accepted:
                    data[key] = [_text_if_refused(item, accepted) for item in value]
        elif isinstance(value, (bool, int, float)):
            accepted = _accepted(sub, root) or set()
            if "string" in accepted:
                data[key] = _text_if_refused(value, accepted)


def _text_if_refused(item: Any, accepted: set[str]) -> Any:
    if item is None or not isinstance(item, (bool, int, float)):
        return item
    kind = _kind(item)
    if kind is None or kind in accepted or (kind == "integer" and "number" in accepted):
        return item
    return _js_text(item)


def _json_in_brackets(text: str) -> Any:
    trimmed = text.strip()
    if not ((trimmed.startswith("[") and trimmed.endswith("]")) or (trimmed.startswith("{") and trimmed.endswith("}"))):
        return None
    try:
        return json.loads(trimmed)
    except ValueError:
        return None


def _fix_json_text(data: dict[str, Any], schema: dict[str, Any], root: Any, depth: int = 0) -> None:
    if depth > 64 or (not _effective_properties(schema, root) and not schema.get("additionalProperties")):
        return
    for key in list(data):
        value, sub = data[key], _property_schema(schema, root, key)
        if sub is None:
            continue
        if isinstance(value, dict):
            if _has_object_shape(sub, root):
                _fix_json_text(value, sub, root, depth + 1)
            continue
        if isinstance(value, list):
            items = resolve(sub.get("items"), root) if sub.get("items") else None
            if isinstance(items, dict):
                accepted = _accepted(items, root)
                for index, item in enumerate(value):
                    if isinstance(item, dict) and _has_object_shape(items, root):
                        _fix_json_text(item, items, root, depth + 1)
                    elif isinstance(item, str) and accepted and "string" not in accepted:
                        parsed = _json_in_brackets(item)
                        if parsed is not None and _js_typeof(parsed) in accepted:
                            value[index] = parsed
            continue
        if not isinstance(value, str):
            continue
        parsed = _json_in_brackets(value)
        accepted = _accepted(sub, root)
        if parsed is None or not accepted or "string" in accepted or not accepted & {"array", "object"}:
            continue
        if _js_typeof(parsed) in accepted:
            data[key] = parsed


def _fix_numbers(data: Any, schema: Any) -> None:
    """``fixNumericValues``: note it reads ``properties`` and ``items`` only, with no ``$ref`` root."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    items = schema.get("items") if isinstance(schema, dict) else None
    keys = range(len(data)) if isinstance(data, list) else list(data)
    for key in keys:
        value = data[key]
        child = items if isinstance(data, list) else (properties or {}).get(key)
        if isinstance(value, (dict, list)):
            _fix_numbers(value, child if child is not None else {})
            continue
        if not isinstance(value, str):
            continue
        accepted = _accepted(child, None) if child else None
        if not accepted or "string" in accepted or not accepted & {"integer", "number"}:
            continue
        trimmed = value.strip(" \t\n\r\v\f")
        if not _NUMERIC.fullmatch(trimmed):
            continue
        number = float(trimmed)
        if "integer" in accepted and "number" not in accepted and not number.is_integer():
            continue
        parsed: float = number if "number" in accepted else int(trimmed.split(".")[0])
        if math.isfinite(parsed):
            data[key] = int(parsed) if isinstance(parsed, float) and parsed.is_integer() else parsed


def validate_like_qwen(schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
    draft = (
        "2020-12"
        if str(schema.get("$schema", "")).rstrip("#") == "https://json-schema.org/draft/2020-12/schema"
        else "07"
    )
    options = AjvOptions(strict_schema=False, formats=True, draft=draft)
    try:
        valid, _ = ajv_validate(schema, arguments, options)
    except AjvCompileError:
        return Call(arguments)
    if valid:
        return Call(arguments)
    _fix_booleans(arguments, schema, schema)
    _fix_strings(arguments, schema, schema)
    _fix_json_text(arguments, schema, schema)
    _fix_numbers(arguments, schema)
    valid, _ = ajv_validate(schema, arguments, options)
    return Call(arguments) if valid else Call(None, "params does not match the tool's schema")


@dataclass(frozen=True)
class QwenCode(HostProfile):
    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        return validate_like_qwen(schema, arguments)


QWEN_CODE = QwenCode(
    name="qwen-code",
    title="Qwen Code",
    client_names=("qwen-cli-mcp-client",),
    sources=(
        "QwenLM/qwen-code packages/core/src/utils/schemaValidator.ts",
        "QwenLM/qwen-code packages/core/src/utils/schemaConverter.ts",
        "QwenLM/qwen-code packages/core/src/tools/mcp-client.ts",
    ),
)
