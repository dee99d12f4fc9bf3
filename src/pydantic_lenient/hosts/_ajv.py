"""Ajv 8 as the JS hosts run it, in Python: compiling, validating, and ``coerceTypes`` rewriting the value.

The hosts whose code is public validate arguments with Ajv 8 (VS Code Copilot Chat with
``coerceTypes: true``; Gemini CLI and Qwen Code with ``strictSchema: false`` and ajv-formats). What
the server then receives depends on Ajv's exact order of work, because with ``coerceTypes`` Ajv
rewrites the value in place while it validates: at each schema node the ``type`` check (and its
coercion) comes first, then the keywords of no type (``$ref``, ``const``, ``enum``, ``not``,
``anyOf``, ``oneOf``, ``allOf``), then those of the value's type; the first failing keyword ends the
node (``allErrors`` is off). A coercion made inside an ``anyOf`` branch stays even when that branch
then fails. Sources: ajv-validator/ajv ``lib/compile/validate/dataType.ts`` (``coerceData``) and
``lib/compile/rules.ts``. The tests check this module against the real Ajv 8.18 (tests/hosts).

Only what tool schemas use is modelled; a schema outside it raises `AjvCompileError` where Ajv would,
and is otherwise validated as standard JSON Schema.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("AjvCompileError", "AjvOptions", "ajv_validate", "js_equal", "js_number_from_string", "json_copy")


class AjvCompileError(ValueError):
    """Ajv refuses to compile the schema (a host then skips validation, or refuses the tool)."""


@dataclass(frozen=True)
class AjvOptions:
    coerce_types: bool = False
    strict_schema: bool = True
    """Ajv's default: an unknown keyword or format is a compile error."""
    formats: bool = False
    """ajv-formats is installed: ``format`` is asserted for the formats it knows."""
    draft: str = "07"
    """``"07"`` (``new Ajv()``) or ``"2020-12"`` (``new Ajv2020()``)."""


_DRAFT_07_KEYWORDS = frozenset(
    {
        "$id", "$schema", "$ref", "$comment", "$defs", "definitions", "title", "description", "default",
        "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "contentSchema",
        "type", "nullable", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "items", "additionalItems",
        "maxItems", "minItems", "uniqueItems", "contains", "maxProperties", "minProperties", "required",
        "properties", "patternProperties", "additionalProperties", "dependencies", "propertyNames",
        "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    }
)  # fmt: skip
_DRAFT_2020_KEYWORDS = _DRAFT_07_KEYWORDS - {"additionalItems", "dependencies"} | {
    "prefixItems", "dependentRequired", "dependentSchemas", "unevaluatedItems",
    "unevaluatedProperties", "minContains", "maxContains", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
}  # fmt: skip
# The formats ajv-formats adds ("full" mode); the ones modelled are checked, the rest admit any string.
_FORMATS: dict[str, Callable[[str], bool]] = {}


def _date(text: str) -> bool:
    found = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", text)
    if not found:
        return False
    year, month, day = map(int, found.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(z|[+-][0-9]{2}(?::?[0-9]{2})?)?"


def _time(text: str, *, zone: bool = True) -> bool:
    found = re.fullmatch(_TIME, text, re.IGNORECASE)
    if not found or (zone and not found.group(4)):
        return False
    hour, minute, second = int(found.group(1)), int(found.group(2)), float(found.group(3))
    return hour <= 23 and minute <= 59 and second < 61


def _date_time(text: str) -> bool:
    parts = re.split(r"t|\s", text, maxsplit=1, flags=re.IGNORECASE)
    return len(parts) == 2 and _date(parts[0]) and _time(parts[1])


_FORMATS.update(
    {
        "date": _date,
        "time": _time,
        "date-time": _date_time,
        "uuid": lambda text: (
            re.fullmatch(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", text, re.I) is not None
        ),
        "email": lambda text: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text) is not None,
        "uri": lambda text: re.match(r"[a-z][a-z0-9+.-]*:", text, re.I) is not None,
    }
)
_KNOWN_FORMATS = frozenset(
    {*_FORMATS, "duration", "uri-reference", "uri-template", "url", "hostname", "ipv4", "ipv6", "regex",
     "json-pointer", "relative-json-pointer", "byte", "int32", "int64", "float", "double", "password", "binary",
     "iso-time", "iso-date-time"}
)  # fmt: skip

# JS's StrWhiteSpaceChar: what `+text` trims.
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def js_number_from_string(text: str) -> float:
    """``+text`` in JS (NaN when it is no number)."""
    body = text.strip(_JS_SPACE)
    if body == "":
        return 0.0
    if body in ("Infinity", "+Infinity"):
        return math.inf
    if body == "-Infinity":
        return -math.inf
    if _JS_DECIMAL.fullmatch(body):
        return float(body)
    radix = _JS_RADIX.fullmatch(body)
    if radix:
        digits = radix.group(1)
        return float(int(digits[1:], {"x": 16, "o": 8, "b": 2}[digits[0].lower()]))
    return math.nan


def _js_string_of_number(number: float) -> str:
    if isinstance(number, int):
        return str(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    text = repr(number)
    return re.sub(r"e([+-]?)0*([0-9])", lambda m: f"e{m.group(1) or '+'}{m.group(2)}", text)


def _as_number(number: float) -> int | float:
    """A JS number as JSON would carry it: integral values as ints."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 2**53:
        return int(number)
    return number


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_matches(name: str, value: Any) -> bool:
    if name == "integer":
        return _is_number(value) and math.isfinite(value) and float(value).is_integer()
    if name == "number":
        return _is_number(value) and math.isfinite(value)
    return {
        "string": lambda: isinstance(value, str),
        "boolean": lambda: isinstance(value, bool),
        "null": lambda: value is None,
        "array": lambda: isinstance(value, list),
        "object": lambda: isinstance(value, dict),
    }.get(name, lambda: False)()


def js_equal(left: Any, right: Any) -> bool:
    """fast-deep-equal over JSON values: ``1 == 1.0``, ``true != 1``."""
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(js_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(js_equal(left[key], right[key]) for key in left)
    return bool(left == right)


_UNSET = object()


def _coerced(value: Any, types: list[str]) -> Any:
    """Ajv's ``coerceData``: the first type, in the schema's order, that the value coerces to."""
    for name in types:
        if name == "string":
            if _is_number(value) or isinstance(value, bool):
                return ("true" if value else "false") if isinstance(value, bool) else _js_string_of_number(value)
            if value is None:
                return ""
        elif name in ("number", "integer"):
            if isinstance(value, bool) or value is None:
                return int(bool(value))
            if isinstance(value, str) and value:
                number = js_number_from_string(value)
                if not math.isnan(number) and (name == "number" or not math.isfinite(number) or number.is_integer()):
                    return _as_number(number)
        elif name == "boolean":
            if value == "false" or value is None or (_is_number(value) and value == 0):
                return False
            if value == "true" or (_is_number(value) and value == 1):
                return True
        elif name == "null" and (value == "" or value is False or (_is_number(value) and value == 0)):
            return None
    return _UNSET


class _Compiled:
    def __init__(self, root: Mapping[str, Any], options: AjvOptions) -> None:
        self.root = root
        self.options = options
        self.keywords = _DRAFT_2020_KEYWORDS if options.draft == "2020-12" else _DRAFT_07_KEYWORDS
        self.check(root, "#")

    # -- compiling -------------------------------------------------------------------------------
    def check(self, schema: Any, path: str) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise AjvCompileError(f"schema at {path} must be an object or a boolean")
        if self.options.strict_schema:
            unknown = sorted(set(schema) - self.keywords)
            if unknown:
                raise AjvCompileError(f'strict mode: unknown keyword: "{unknown[0]}"')
        self.types(schema)
        form = schema.get("format")
        known = _KNOWN_FORMATS if self.options.formats else frozenset()
        if isinstance(form, str) and form not in known and self.options.strict_schema:
            raise AjvCompileError(f'unknown format "{form}" ignored in schema at path "{path}"')
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            _regex(pattern)
        reference = schema.get("$ref")
        if isinstance(reference, str):
            self.resolve(reference)
        for key, value in schema.items():
            if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
                if isinstance(value, dict):
                    for name, sub in value.items():
                        self.check(sub, f"{path}/{key}/{name}")
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") or (key == "items" and isinstance(value, list)):
                for index, sub in enumerate(value if isinstance(value, list) else []):
                    self.check(sub, f"{path}/{key}/{index}")
            elif key in ("items", "additionalItems", "additionalProperties", "not", "contains", "propertyNames",
                         "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"):  # fmt: skip
                self.check(value, f"{path}/{key}")

    @staticmethod
    def types(schema: Mapping[str, Any]) -> list[str]:
        """Ajv's ``getSchemaTypes``: ``type``, plus ``"null"`` for ``nullable: true``."""
        declared = schema.get("type")
        types = list(declared) if isinstance(declared, list) else [declared] if isinstance(declared, str) else []
        if "null" in types:
            if schema.get("nullable") is False:
                raise AjvCompileError("type: null contradicts nullable: false")
        else:
            if not types and "nullable" in schema:
                raise AjvCompileError('"nullable" cannot be used without "type"')
            if schema.get("nullable") is True:
                types.append("null")
        return types

    def resolve(self, reference: str) -> Any:
        if not reference.startswith("#"):
            raise AjvCompileError(f"can't resolve reference {reference}")
        node: Any = self.root
        for part in [p for p in reference[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and re.fullmatch("[0-9]+", part) and int(part) < len(node):
                node = node[int(part)]
            else:
                raise AjvCompileError(f"can't resolve reference {reference}")
        return node

    # -- validating ------------------------------------------------------------------------------
    def valid(self, schema: Any, holder: Any, key: Any) -> bool:
        """Validate ``holder[key]`` against ``schema``, coercing it in place as Ajv does."""
        if isinstance(schema, bool):
            return schema
        types = self.types(schema)
        if types and not any(_type_matches(name, holder[key]) for name in types):
            if not self.options.coerce_types:
                return False
            coerced = _coerced(holder[key], [t for t in types if t in _COERCIBLE])
            if coerced is _UNSET:
                return False
            holder[key] = coerced
        for keyword in _UNTYPED_ORDER:
            if keyword in schema and not self.keyword(keyword, schema, holder, key):
                return False
        value = holder[key]
        if _is_number(value) and not self.number(schema, value):
            return False
        if isinstance(value, str) and not self.string(schema, value):
            return False
        if isinstance(value, list) and not self.array(schema, value):
            return False
        return not (isinstance(value, dict) and not self.object(schema, value))

    def keyword(self, keyword: str, schema: Mapping[str, Any], holder: Any, key: Any) -> bool:
        argument = schema[keyword]
        if keyword == "$ref":
            return self.valid(self.resolve(argument), holder, key)
        if keyword == "const":
            return js_equal(holder[key], argument)
        if keyword == "enum":
            return any(js_equal(holder[key], option) for option in argument)
        if keyword == "not":
            return not self.valid(argument, [json_copy(holder[key])], 0)
        if keyword == "anyOf":
            return any(self.valid(branch, holder, key) for branch in argument)
        if keyword == "oneOf":
            return sum(1 for branch in argument if self.valid(branch, holder, key)) == 1
        # allOf
        return all(self.valid(branch, holder, key) for branch in argument)

    def number(self, schema: Mapping[str, Any], value: float) -> bool:
        checks: tuple[tuple[str, Callable[[float], bool]], ...] = (
            ("maximum", lambda bound: value <= bound),
            ("minimum", lambda bound: value >= bound),
            ("exclusiveMaximum", lambda bound: value < bound),
            ("exclusiveMinimum", lambda bound: value > bound),
            ("multipleOf", lambda step: step != 0 and value % step == 0),  # Ajv: `data % multipleOf !== 0` fails
        )
        for keyword, check in checks:
            bound = schema.get(keyword)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not check(bound):
                return False
        return self.format(schema, value)

    def string(self, schema: Mapping[str, Any], value: str) -> bool:
        length = len(value.encode("utf-16-le")) // 2 - sum(1 for c in value if ord(c) > 0xFFFF)  # code points
        if _is_number(schema.get("maxLength")) and length > schema["maxLength"]:
            return False
        if _is_number(schema.get("minLength")) and length < schema["minLength"]:
            return False
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and _regex(pattern).find(value) is None:
            return False
        return self.format(schema, value)

    def format(self, schema: Mapping[str, Any], value: Any) -> bool:
        form = schema.get("format")
        if not (self.options.formats and isinstance(value, str) and isinstance(form, str)):
            return True
        check = _FORMATS.get(form)
        return check is None or check(value)

    def array(self, schema: Mapping[str, Any], value: list[Any]) -> bool:
        if _is_number(schema.get("maxItems")) and len(value) > schema["maxItems"]:
            return False
        if _is_number(schema.get("minItems")) and len(value) < schema["minItems"]:
            return False
        if schema.get("uniqueItems") is True:
            for index, item in enumerate(value):
                if any(js_equal(item, other) for other in value[:index]):
                    return False
        prefix = schema.get("prefixItems") if self.options.draft == "2020-12" else None
        items = schema.get("items")
        if isinstance(items, list):  # draft-07 tuple form
            prefix, items = items, schema.get("additionalItems")
        start = 0
        if isinstance(prefix, list):
            for index, sub in enumerate(prefix[: len(value)]):
                if not self.valid(sub, value, index):
                    return False
            start = len(prefix)
        if items is not None and not isinstance(items, list):
            for index in range(start, len(value)):
                if not self.valid(items, value, index):
                    return False
        contains = schema.get("contains")
        return contains is None or any(self.valid(contains, [json_copy(item)], 0) for item in value)

    def object(self, schema: Mapping[str, Any], value: dict[str, Any]) -> bool:
        if _is_number(schema.get("maxProperties")) and len(value) > schema["maxProperties"]:
            return False
        if _is_number(schema.get("minProperties")) and len(value) < schema["minProperties"]:
            return False
        required = schema.get("required")
        if isinstance(required, list) and not all(name in value for name in required):
            return False
        properties = _members(schema, "properties")
        patterns = _members(schema, "patternProperties")
        additional = schema.get("additionalProperties")
        if additional is not None:
            for name in list(value):
                if name in properties or any(_regex(p).find(name) is not None for p in patterns):
                    continue
                if not self.valid(additional, value, name):
                    return False
        for name, sub in properties.items():
            if name in value and not self.valid(sub, value, name):
                return False
        for pattern, sub in patterns.items():
            for name in list(value):
                if _regex(pattern).find(name) is not None and not self.valid(sub, value, name):
                    return False
        return True


_COERCIBLE = ("string", "number", "integer", "boolean", "null")
_UNTYPED_ORDER = ("$ref", "const", "enum", "not", "anyOf", "oneOf", "allOf")


def _members(schema: Mapping[str, Any], keyword: str) -> dict[str, Any]:
    members = schema.get(keyword)
    return members if isinstance(members, dict) else {}


def json_copy(value: Any) -> Any:
    """A copy of a JSON value (its lists and objects), which a host's pass may then change in place."""
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    return value


def _regex(pattern: str) -> Any:
    try:
        import regress
    except ImportError as error:  # pragma: no cover - exercised only without the extras
        raise ImportError(
            "host profiles need regress: pip install 'pydantic-lenient[testing]'"
            " (in a clone: pip install -e '.[testing]')"
        ) from error
    try:
        return regress.Regex(pattern, "u")
    except regress.RegressError as error:
        raise AjvCompileError(f"pattern {pattern!r} does not compile: {error}") from None


def ajv_validate(schema: Mapping[str, Any], value: Any, options: AjvOptions) -> tuple[bool, Any]:
    """Compile ``schema`` and validate a copy of ``value`` as Ajv would: (valid, the value after coercion).

    Raises `AjvCompileError` where Ajv's ``compile`` throws.
    """
    compiled = _Compiled(schema, options)
    holder = [json_copy(value)]
    return compiled.valid(schema, holder, 0), holder[0]


def ajv_compiles(schema: Mapping[str, Any], options: AjvOptions) -> str | None:
    """None when Ajv compiles ``schema``, else its error."""
    try:
        _Compiled(schema, options)
    except AjvCompileError as error:
        return str(error)
    return None
