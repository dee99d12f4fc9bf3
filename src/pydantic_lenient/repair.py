"""Schema-driven argument repair for any tool schema: the client and proxy side.

A client, an agent framework or a proxy sees only a tool's advertised ``inputSchema``. Before it
sends a model's arguments, `repair_arguments` fixes the wrong JSON types the schema can tell apart:

| from | to | when |
|---|---|---|
| ``"true"`` / ``"false"``, any letter case | boolean | the location takes booleans, not strings |
| a numeric string (JSON number syntax) | integer or number | it takes numbers, not strings (1) |
| JSON text | array or object | it takes the parsed type, not strings |
| a number or boolean | string | it takes strings and nothing else |

(1) An integer-only location takes only integral values: ``"3.0"`` becomes 3, ``"5.5"`` stays.

A value is changed only where the schema does not accept its current type, so a valid value is
never touched. Repair never adds or removes keys and never fills in defaults.

How a location's accepted types are read: ``type`` (a string or an array; ``number`` includes
``integer``), ``const`` and ``enum`` (the types of their values), ``$ref`` to a local JSON pointer,
``anyOf`` and ``oneOf`` (the *union* of their branches: a value of any branch's type may be meant)
and ``allOf`` (the *intersection*: every branch must take the type). Keywords that cannot widen the
set (``not``, ``if``/``then``/``else``) are ignored, which can only leave a value alone, never
change a valid one. Object members are read through ``properties``, ``patternProperties`` and
``additionalProperties``, array items through ``prefixItems``, ``items`` (and draft-07's array
``items`` with ``additionalItems``), merged the same way across combinators.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Union
from urllib.parse import unquote

from pydantic_core import from_json

from ._jsonschema import Draft, Unresolvable, Validator, ecma_regex, host_validator
from ._scalar import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH

__all__ = ("RepairResult", "Repairer", "repair_arguments")

logger = logging.getLogger("pydantic_lenient.repair")

_ALL = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_NONE: frozenset[str] = frozenset()
_EXPANDED = {name: frozenset({name}) for name in _ALL} | {"number": frozenset({"number", "integer"})}
_JSON_WHITESPACE = " \t\n\r"
_JSON_NUMBER = re.compile(JSON_NUMBER_TEXT)
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_MISSING: Any = object()
_MEMO_LIMIT = 50_000  # cached nodes per Repairer; past it, work is recomputed rather than stored

# A schema node as the walk sees it: a schema (dict or bool), or ("all" | "any", parts).
Node = Union[Mapping[str, Any], bool, tuple[str, tuple["Node", ...]]]


class RepairResult(NamedTuple):
    """``arguments``: a new object (the input is never mutated); ``repairs``: one
    ``{path, from, to, kind}`` per change, ``path`` a JSON Pointer; ``valid``: whether the result
    validates against the schema, as a real validator decides."""

    arguments: Any
    repairs: list[dict[str, Any]]
    valid: bool


class _OverBudget(Exception):
    """The schema or the arguments need more work than a repair may take."""


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (``3.0`` is an integer, as JSON Schema says)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "unknown"


def _pointer_part(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


class Repairer:
    """Repairs arguments against one schema; build it once per schema and reuse it.

    ``draft`` ("2020-12" or "07") is the dialect the result is validated in; by default the one the
    schema's ``$schema`` names, else 2020-12 (MCP's default). Repair itself reads both.

    ``max_depth`` bounds how deep into the arguments repair goes, ``max_text_length`` how long a
    string it will parse as JSON, and ``budget`` how many schema nodes and values one repair may
    visit: hostile input (huge strings, deep nesting, ``$ref`` cycles) gets bounded work.
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        draft: Draft | None = None,
        max_depth: int = 64,
        max_text_length: int = 1_000_000,
        budget: int = 100_000,
    ) -> None:
        self.schema = schema
        self.max_depth = max_depth
        self.max_text_length = max_text_length
        self.budget = budget
        self._validator: Validator = host_validator(schema, draft=draft, check=False)
        # Memos keyed by id(); each entry also holds its node, so no id can be reused while cached.
        self._types: dict[int, tuple[Node, frozenset[str]]] = {}
        self._children: dict[tuple[int, str | int], tuple[Node, Node]] = {}
        self._references: dict[str, Node] = {}
        self._remaining = budget

    # ---- what a location accepts

    def _spend(self) -> None:
        self._remaining -= 1
        if self._remaining < 0:
            raise _OverBudget

    def _resolve(self, reference: Any) -> Node:
        """A local ``$ref`` (``#``, ``#/$defs/x``, any JSON pointer); anything else constrains nothing."""
        if not isinstance(reference, str) or not reference.startswith("#"):
            return True
        resolved = self._references.get(reference)
        if resolved is None:
            resolved = self._references[reference] = self._follow(reference)
        return resolved

    def _follow(self, reference: str) -> Node:
        node: Any = self.schema
        for part in reference[1:].split("/")[1:] if reference != "#" else ():
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isascii() and part.isdecimal() and int(part) < len(node):
                node = node[int(part)]
            else:
                return True
        return node if isinstance(node, (Mapping, bool)) else True

    def accepted(self, node: Node, depth: int = 0) -> frozenset[str]:
        """The JSON types a value at this node may have (an over-approximation: never too few)."""
        if node is True:
            return _ALL
        if node is False:
            return _NONE
        if isinstance(node, tuple):
            memo = self._types.get(id(node))
            if memo is not None and memo[0] is node:
                return memo[1]
            kind, parts = node
            sets = [self.accepted(part, depth + 1) for part in parts]
            result = frozenset.intersection(_ALL, *sets) if kind == "all" else frozenset().union(*sets)
            if len(self._types) < _MEMO_LIMIT:
                self._types[id(node)] = (node, result)
            return result
        if not isinstance(node, Mapping):
            return _ALL
        key = id(node)
        cached = self._types.get(key)
        if cached is not None:
            return cached[1]
        if depth > 64:  # nesting this deep, or a $ref cycle: constrain nothing
            return _ALL
        self._spend()
        self._types[key] = (node, _ALL)  # while computing: a cycle back here reads "anything"
        types = _ALL
        if "$ref" in node:
            types &= self.accepted(self._resolve(node["$ref"]), depth + 1)
        declared = node.get("type")
        if isinstance(declared, str):
            types &= _EXPANDED.get(declared, _NONE)
        elif isinstance(declared, list):
            types &= frozenset().union(*(_EXPANDED.get(name, _NONE) for name in declared if isinstance(name, str)))
        if "const" in node:
            types &= _EXPANDED.get(json_type(node["const"]), _NONE) | {json_type(node["const"])}
        if isinstance(node.get("enum"), list):
            types &= frozenset(json_type(value) for value in node["enum"])
        for part in node.get("allOf", ()) if isinstance(node.get("allOf"), list) else ():
            types &= self.accepted(part, depth + 1)
        for keyword in ("anyOf", "oneOf"):
            branches = node.get(keyword)
            if isinstance(branches, list):
                types &= frozenset().union(*(self.accepted(branch, depth + 1) for branch in branches))
        self._types[key] = (node, types)
        return types

    def _memo(self, node: Node, key: str | int, compute: Callable[[], Node]) -> Node:
        memo = self._children.get((id(node), key))
        if memo is not None and memo[0] is node:
            return memo[1]
        child = compute()
        if len(self._children) < _MEMO_LIMIT:
            self._children[(id(node), key)] = (node, child)
        return child

    def _member(self, node: Node, key: str) -> Node:
        """The node for an object member ``key``, merged across ``$ref`` and combinators."""
        return self._child(node, key, 0)

    def _item(self, node: Node, index: int) -> Node:
        """The node for array item ``index`` (2020-12 ``prefixItems``/``items``, or draft-07's)."""
        return self._child(node, index, 0)

    def _child(self, node: Node, step: str | int, depth: int) -> Node:
        """The node one step inside ``node``: a member name (str) or an item index (int)."""
        if isinstance(node, bool):
            return True
        return self._memo(node, step, lambda: self._compute_child(node, step, depth))

    def _compute_child(self, node: Node, step: str | int, depth: int) -> Node:
        if isinstance(node, tuple):
            kind, nodes = node
            return (kind, tuple(self._child(part, step, depth + 1) for part in nodes))
        if not isinstance(node, Mapping) or depth > 64:
            return True
        self._spend()
        parts: list[Node] = []
        if "$ref" in node:
            parts.append(self._child(self._resolve(node["$ref"]), step, depth + 1))
        parts.extend(self._own_members(node, step) if isinstance(step, str) else self._own_items(node, step))
        container = "object" if isinstance(step, str) else "array"
        parts.extend(self._combined(node, container, lambda part: self._child(part, step, depth + 1)))
        return ("all", tuple(parts)) if parts else True

    @staticmethod
    def _own_members(node: Mapping[str, Any], key: str) -> list[Node]:
        """What ``properties``, ``patternProperties`` and ``additionalProperties`` say of ``key``."""
        parts: list[Node] = []
        properties = node.get("properties")
        matched = isinstance(properties, Mapping) and key in properties
        if matched:
            parts.append(properties[key])  # type: ignore[index]
        patterns = node.get("patternProperties")
        if isinstance(patterns, Mapping):
            for pattern, schema in patterns.items():
                if ecma_regex(pattern).find(key) is not None:
                    parts.append(schema)
                    matched = True
        additional = node.get("additionalProperties")
        if not matched and isinstance(additional, (Mapping, bool)):
            parts.append(additional)
        return parts

    @staticmethod
    def _own_items(node: Mapping[str, Any], index: int) -> list[Node]:
        """What ``prefixItems``/``items`` (or draft-07's array ``items``/``additionalItems``) say of ``index``."""
        prefix, items = node.get("prefixItems"), node.get("items")
        if isinstance(items, list):  # draft-07 tuple form
            prefix, items = items, node.get("additionalItems")
        if isinstance(prefix, list) and index < len(prefix):
            return [prefix[index]]
        return [items] if isinstance(items, (Mapping, bool)) else []

    def _combined(self, node: Mapping[str, Any], container: str, child: Callable[[Node], Node]) -> list[Node]:
        """Children through combinators: every ``allOf`` branch applies; of ``anyOf``/``oneOf``, any
        branch that takes the container's type (``object`` or ``array``) may be the one meant."""
        parts: list[Node] = []
        if isinstance(node.get("allOf"), list):
            parts.extend(child(part) for part in node["allOf"])
        parts.extend(
            ("any", tuple(child(part) for part in node[keyword] if container in self.accepted(part)))
            for keyword in ("anyOf", "oneOf")
            if isinstance(node.get(keyword), list)
        )
        return parts

    # ---- changing values

    def _number(self, text: str, types: frozenset[str]) -> Any:
        trimmed = text.strip(_JSON_WHITESPACE)  # JSON allows whitespace around a number, and only that
        if len(trimmed) > MAX_DIGIT_STRING_LENGTH or not _JSON_NUMBER.fullmatch(trimmed):
            return _MISSING
        number: int | float = int(trimmed) if _JSON_INTEGER.fullmatch(trimmed) else float(trimmed)
        if isinstance(number, float) and not math.isfinite(number):
            return _MISSING
        if "number" in types:
            return number
        if isinstance(number, int):
            return number
        return int(number) if number.is_integer() else _MISSING  # "5.5" stays, so the model sees its error

    def _structure(self, text: str, types: frozenset[str]) -> Any:
        if len(text) > self.max_text_length or text.lstrip(_JSON_WHITESPACE)[:1] not in ("[", "{"):
            return _MISSING
        try:
            parsed = from_json(text, allow_inf_nan=False)
        except ValueError:  # not JSON, or nested past the parser's limit
            return _MISSING
        return parsed if json_type(parsed) in types else _MISSING

    def _coerce(self, value: Any, types: frozenset[str]) -> tuple[Any, str] | None:
        """The value in a type ``types`` takes, and the kind of repair, or None."""
        if isinstance(value, str):
            if "boolean" in types and value.isascii() and value.lower() in ("true", "false"):
                return value.lower() == "true", "string_to_boolean"
            if "integer" in types:
                number = self._number(value, types)
                if number is not _MISSING:
                    return number, "string_to_number"
            if "array" in types or "object" in types:
                parsed = self._structure(value, types)
                if parsed is not _MISSING:
                    return parsed, "json_text_to_structure"
            return None
        if types == {"string"} and isinstance(value, (bool, int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                return None
            text = ("true" if value else "false") if isinstance(value, bool) else repr(value)  # JSON spelling
            return text, "scalar_to_string"
        return None

    def _walk(self, value: Any, node: Node, path: str, depth: int, repairs: list[dict[str, Any]]) -> Any:
        self._spend()
        if depth > self.max_depth:
            return value  # deeper than repair goes: left as sent (never modified)
        types = self.accepted(node)
        if json_type(value) not in types:
            coerced = self._coerce(value, types)
            if coerced is not None:
                after, kind = coerced
                repairs.append({"path": path, "from": value, "to": after, "kind": kind})
                value = after
        if isinstance(value, Mapping):
            return {
                key: self._walk(item, self._member(node, str(key)), f"{path}/{_pointer_part(key)}", depth + 1, repairs)
                for key, item in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [
                self._walk(item, self._item(node, index), f"{path}/{index}", depth + 1, repairs)
                for index, item in enumerate(value)
            ]
        return value

    def is_valid(self, arguments: Any) -> bool:
        """Whether ``arguments`` validate; False where the validator cannot decide (arguments nested
        deeper than it can follow, or a ``$ref`` it cannot resolve: nothing is fetched)."""
        try:
            return bool(self._validator.is_valid(arguments))
        except (RecursionError, Unresolvable):
            return False

    def repair(self, arguments: Any, *, only_if_invalid: bool = True) -> RepairResult:
        """Repair ``arguments`` (see the module docs).

        Valid arguments always come back unchanged (as a copy), with no repairs, so
        ``only_if_invalid=True`` needs no validation of its own: a value changes only where its type
        is outside an over-approximation of what can validate there, so any repair means the input
        was invalid. Walking first and validating only the result gives both answers with one
        validation. ``only_if_invalid=False`` gives the same result; it is there for callers that
        want to say so.
        """
        self._remaining = self.budget
        repairs: list[dict[str, Any]] = []
        try:
            repaired = self._walk(arguments, self.schema, "", 0, repairs)
        except (_OverBudget, RecursionError):
            repaired, repairs = _copy_containers(arguments, self.max_depth), []
        if repairs:
            logger.info(
                "repaired %d argument(s): %s",
                len(repairs),
                ", ".join(repair["path"] for repair in repairs),
                extra={"repairs": repairs},
            )
        return RepairResult(repaired, repairs, self.is_valid(repaired))


def _copy_containers(value: Any, depth: int) -> Any:
    """A copy of the containers the walk would rebuild (as deep as it goes), changing nothing."""
    if depth < 0:
        return value
    if isinstance(value, Mapping):
        return {key: _copy_containers(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_containers(item, depth - 1) for item in value]
    return value


def repair_arguments(
    schema: Mapping[str, Any] | bool, arguments: Any, *, only_if_invalid: bool = True, draft: Draft | None = None
) -> RepairResult:
    """Repair ``arguments`` against ``schema``; see the module docs for what changes, and when.

    Builds a `Repairer` each time; keep one per schema to repair many calls.
    """
    return Repairer(schema, draft=draft).repair(arguments, only_if_invalid=only_if_invalid)
