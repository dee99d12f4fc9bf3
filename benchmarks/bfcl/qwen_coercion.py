"""A Python port of qwen-code's four coercion passes, for the repair benchmark.

Written from the behaviour documented in qwen-code's ``packages/core/src/utils/schemaValidator.ts``
(QwenLM/qwen-code at commit 0700c6ed3336d088d99b28b754ccc3c9c9fb0d2a, Apache-2.0) and the pull
requests that introduced each pass (QwenLM/qwen-code#1284 booleans, #4618 scoping them to boolean
fields, #4793 strings). What ``SchemaValidator.validate`` does:

1. Validate the arguments (Ajv, draft-07 unless ``$schema`` says 2020-12). Valid: done, unchanged.
2. Otherwise run, in place and in this order:
   ``fixBooleanValues`` (``"true"``/``"false"`` in any letter case to a boolean, where the field takes
   boolean and not string), ``fixStringValues`` (a number or boolean to its JavaScript ``String()``,
   where the field takes string and not the value's type), ``fixStringifiedJsonValues`` (trimmed
   text in ``[...]`` or ``{...}`` parsed, where the field takes array or object and not string, and
   the parsed type is taken), ``fixNumericValues`` (``-?\\d+(\\.\\d+)?`` text to a number, where the
   field takes integer or number and not string; a fraction is left for an integer-only field).
   The first three walk ``properties`` (also inside ``allOf``/``anyOf``/``oneOf``),
   ``additionalProperties``, ``items`` and ``prefixItems``, resolving local ``$ref``; the fourth
   walks only ``properties`` and ``items``, and resolves no ``$ref``.
3. Validate again: valid, the coerced arguments are used; invalid, the call is refused.

The validator here is jsonschema-rs (draft-07) in place of Ajv; BFCL's schemas use no keyword
where the two differ.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

import jsonschema_rs

__all__ = ("QwenCoercion",)

_MAX_DEPTH = 64
_NUMERIC_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_Schema = dict[str, Any]


def _resolve_ref(reference: str, root: _Schema) -> _Schema | None:
    if not reference.startswith("#/"):
        return None
    current: Any = root
    for raw in reference[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return current if isinstance(current, dict) else None


def _resolved(schema: _Schema | None, root: _Schema) -> _Schema | None:
    if schema is None:
        return None
    current, depth = schema, 0
    while isinstance(current.get("$ref"), str) and depth < _MAX_DEPTH:
        depth += 1
        target = _resolve_ref(current["$ref"], root)
        if target is None:
            return schema
        current = target
    return current


def _variants(schema: _Schema, root: _Schema | None) -> list[_Schema]:
    found = []
    for keyword in ("allOf", "anyOf", "oneOf"):
        for item in schema.get(keyword) or ():
            if isinstance(item, dict):
                resolved = _resolved(item, root) if root is not None else item
                if resolved is not None:
                    found.append(resolved)
    return found


def _has_object_shape(schema: _Schema, root: _Schema) -> bool:
    if schema.get("properties") or schema.get("additionalProperties"):
        return True
    return any(v.get("properties") or v.get("additionalProperties") for v in _variants(schema, root))


def _properties(schema: _Schema, root: _Schema) -> dict[str, _Schema] | None:
    merged: dict[str, _Schema] = {}
    for variant in _variants(schema, root):
        for name, sub in (variant.get("properties") or {}).items():
            merged.setdefault(name, sub)
    merged.update(schema.get("properties") or {})
    return merged or None


def _accepted(schema: Any, root: _Schema | None = None, depth: int = 0) -> set[str] | None:
    """The types a schema names through ``type`` and the combinators (allOf read as a union, as qwen-code does)."""
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str) and root is not None:
        resolved = _resolved(schema, root)
        if resolved is None or isinstance(resolved.get("$ref"), str):
            return None
        schema = resolved
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    for keyword in ("anyOf", "oneOf", "allOf"):
        for variant in schema.get(keyword) or ():
            types |= _accepted(variant, root, depth + 1) or set()
    return types or None


def _type_of(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return ("integer" if value.is_integer() else "number") if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None


def _taken(value_type: str, accepted: set[str]) -> bool:
    return value_type in accepted or (value_type == "integer" and "number" in accepted)


def _js_string(value: bool | int | float) -> str:
    """JavaScript's ``String()`` of a JSON number or boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _member_schema(schema: _Schema, properties: dict[str, _Schema] | None, key: str) -> _Schema | None:
    extra = schema.get("additionalProperties")
    return (properties or {}).get(key) or (extra if isinstance(extra, dict) else None)


def _element_schema(parent: _Schema, root: _Schema, index: int) -> _Schema | None:
    prefix = parent.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return _resolved(prefix[index], root) if isinstance(prefix[index], dict) else None
    items = parent.get("items")
    return _resolved(items, root) if isinstance(items, dict) else None


def _boolean_word(value: Any) -> bool | None:
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _boolean_if_taken(value: Any, accepted: set[str] | None) -> Any:
    word = _boolean_word(value)
    if word is not None and accepted and "boolean" in accepted and "string" not in accepted:
        return word
    return value


def _fix_booleans(data: dict[str, Any], schema: _Schema, root: _Schema, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        return
    properties = _properties(schema, root)
    if not properties and not schema.get("additionalProperties"):
        return
    for key, value in list(data.items()):
        member = _member_schema(schema, properties, key)
        resolved = _resolved(member, root) if member else None
        if isinstance(value, list):
            if resolved is not None and isinstance(resolved.get("prefixItems"), list):
                for index, item in enumerate(value):
                    element = _element_schema(resolved, root, index)
                    if element is None:
                        continue
                    if isinstance(item, dict):
                        if _has_object_shape(element, root):
                            _fix_booleans(item, element, root, depth + 1)
                    else:
                        value[index] = _boolean_if_taken(item, _accepted(element, root))
                continue
            items = (
                _resolved(resolved.get("items"), root) if resolved and isinstance(resolved.get("items"), dict) else None
            )
            if items is None:
                continue
            if _has_object_shape(items, root):
                for item in value:
                    if isinstance(item, dict):
                        _fix_booleans(item, items, root, depth + 1)
            else:
                accepted = _accepted(items, root)
                for index, item in enumerate(value):
                    value[index] = _boolean_if_taken(item, accepted)
        elif isinstance(value, dict):
            if resolved is not None and _has_object_shape(resolved, root):
                _fix_booleans(value, resolved, root, depth + 1)
        else:
            data[key] = _boolean_if_taken(value, _accepted(resolved, root) if resolved else None)


def _stringified(value: Any, accepted: set[str] | None) -> Any:
    """``value`` as a string if it is a number or boolean of a type not taken where strings are."""
    if isinstance(value, (bool, int, float)) and accepted and "string" in accepted:
        value_type = _type_of(value)
        if value_type is not None and not _taken(value_type, accepted):
            return _js_string(value)
    return value


def _fix_strings(data: dict[str, Any], schema: _Schema, root: _Schema, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        return
    properties = _properties(schema, root)
    if not properties and not schema.get("additionalProperties"):
        return
    for key, value in list(data.items()):
        member = _member_schema(schema, properties, key)
        resolved = _resolved(member, root) if member else None
        if resolved is None:
            continue
        if isinstance(value, list):
            tuple_like = isinstance(resolved.get("prefixItems"), list)
            items = None if tuple_like else _resolved(resolved.get("items"), root)
            if not tuple_like and items is None:
                continue
            if items is not None and _has_object_shape(items, root):
                for item in value:
                    if isinstance(item, dict):
                        _fix_strings(item, items, root, depth + 1)
                continue
            coerced, changed = list(value), False
            for index, item in enumerate(value):
                element = items if items is not None else _element_schema(resolved, root, index)
                if element is None:
                    continue
                if isinstance(item, dict) and tuple_like and _has_object_shape(element, root):
                    _fix_strings(item, element, root, depth + 1)
                coerced[index] = _stringified(item, _accepted(element, root))
                changed = changed or coerced[index] is not item
            if changed:  # a new list, as qwen-code builds one only when an element changes
                data[key] = coerced
        elif isinstance(value, dict):
            if _has_object_shape(resolved, root):
                _fix_strings(value, resolved, root, depth + 1)
        else:
            data[key] = _stringified(value, _accepted(resolved, root))


def _parsed_json(value: Any, accepted: set[str] | None) -> Any:
    """``value`` parsed if it is ``[...]`` or ``{...}`` text where structures and not strings are taken."""
    if not isinstance(value, str) or not accepted or "string" in accepted:
        return value
    text = value.strip()
    if not ((text.startswith("[") and text.endswith("]")) or (text.startswith("{") and text.endswith("}"))):
        return value
    try:
        parsed = json.loads(text)
    except ValueError:
        return value
    return parsed if ("array" if isinstance(parsed, list) else "object") in accepted else value


def _fix_json_in_array(array: list[Any], schema: _Schema, root: _Schema) -> None:
    if isinstance(schema.get("prefixItems"), list):
        for index, item in enumerate(array):
            element = _element_schema(schema, root, index)
            if element is not None:
                array[index] = _parsed_json(item, _accepted(element, root))
        return
    resolved = _resolved(schema, root)
    inner = _resolved(resolved.get("items"), root) if resolved and isinstance(resolved.get("items"), dict) else None
    accepted = _accepted(inner, root) if inner else None
    if accepted and "string" not in accepted:
        for index, item in enumerate(array):
            array[index] = _parsed_json(item, accepted)


def _is_array_schema(schema: _Schema) -> bool:
    return schema.get("type") == "array" or bool(schema.get("items")) or bool(schema.get("prefixItems"))


def _fix_json(data: dict[str, Any], schema: _Schema, root: _Schema, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        return
    properties = _properties(schema, root)
    if not properties and not schema.get("additionalProperties"):
        return
    for key, value in list(data.items()):
        member = _member_schema(schema, properties, key)
        resolved = _resolved(member, root) if member else None
        if resolved is None:
            continue
        if isinstance(value, dict):
            if _has_object_shape(resolved, root):
                _fix_json(value, resolved, root, depth + 1)
        elif isinstance(value, list):
            if isinstance(resolved.get("prefixItems"), list):
                for index, item in enumerate(value):
                    element = _element_schema(resolved, root, index)
                    if element is None:
                        continue
                    if isinstance(item, dict):
                        if _has_object_shape(element, root):
                            _fix_json(item, element, root, depth + 1)
                    elif isinstance(item, list):
                        if _is_array_schema(element):
                            _fix_json_in_array(item, element, root)
                    else:
                        value[index] = _parsed_json(item, _accepted(element, root))
                continue
            items = _resolved(resolved.get("items"), root) if isinstance(resolved.get("items"), dict) else None
            if items is None:
                continue
            if _has_object_shape(items, root):
                accepted = _accepted(items, root)
                for index, item in enumerate(value):
                    if isinstance(item, dict):
                        _fix_json(item, items, root, depth + 1)
                    else:
                        value[index] = _parsed_json(item, accepted)
            elif _is_array_schema(items):  # arrays of arrays: only the inner arrays are looked into
                for item in value:
                    if isinstance(item, list):
                        _fix_json_in_array(item, items, root)
            else:
                accepted = _accepted(items, root)
                for index, item in enumerate(value):
                    value[index] = _parsed_json(item, accepted)
        else:
            accepted = _accepted(resolved, root)
            if accepted and ("array" in accepted or "object" in accepted):
                data[key] = _parsed_json(value, accepted)


def _fix_numbers(data: Any, schema: _Schema) -> None:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else None
    items = schema.get("items") if isinstance(schema.get("items"), dict) else None
    keys = range(len(data)) if isinstance(data, list) else list(data)
    for key in keys:
        value = data[key]
        child = items if isinstance(data, list) else (properties or {}).get(key)
        if isinstance(value, (dict, list)):
            _fix_numbers(value, child or {})
            continue
        if not isinstance(value, str):
            continue
        accepted = _accepted(child) if child else None  # no root: $ref is not followed here
        if not accepted or "string" in accepted or not ({"integer", "number"} & accepted):
            continue
        text = value.strip()
        if _NUMERIC_TEXT.fullmatch(text) is None:
            continue
        number = float(text)
        if "integer" in accepted and "number" not in accepted and not number.is_integer():
            continue
        if not math.isfinite(number):
            continue
        # A JavaScript number: written as an integer when it is integral.
        data[key] = int(number) if number.is_integer() else number


class QwenCoercion:
    """qwen-code's ``SchemaValidator.validate`` for one tool schema: the coerced arguments, or None if refused."""

    def __init__(self, schema: _Schema) -> None:
        self.schema = schema
        self._validator = jsonschema_rs.Draft7Validator(schema)

    def __call__(self, arguments: dict[str, Any]) -> dict[str, Any] | None:
        if self._validator.is_valid(arguments):
            return arguments
        data = copy.deepcopy(arguments)  # qwen-code coerces in place; the caller's copy stays as sent
        _fix_booleans(data, self.schema, self.schema)
        _fix_strings(data, self.schema, self.schema)
        _fix_json(data, self.schema, self.schema)
        _fix_numbers(data, self.schema)
        return data if self._validator.is_valid(data) else None
