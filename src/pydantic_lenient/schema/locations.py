"""What a location in the arguments admits, read from a JSON Schema: the one reader of repair and widening.

A location is a path into the arguments: member names (str) and item indexes (int). What it
accepts is an over-approximation, never too few types: ``type`` (``number`` includes
``integer``), ``const``, ``enum``, ``$ref``, ``anyOf``/``oneOf`` as the union of their branches and
``allOf`` as the intersection. Keywords that cannot widen the set (``not``, ``if``/``then``/``else``,
``$dynamicRef``, unknown ones) are ignored. Object members are read through ``properties``,
``patternProperties`` and ``additionalProperties``; array items through ``prefixItems`` and
``items``, or before 2020-12 an array ``items`` with ``additionalItems``; across combinators only
branches that take an object (or an array) count. In draft-07 and before, ``$ref`` overrides its
siblings.

`LocationReader` holds these rules once. Repair (`pydantic_lenient.repair.reader`) subclasses it
with jsonschema-rs's registry for ``$ref`` and its pattern engine; widening
(`pydantic_lenient.schema.widen`) with local JSON pointers and the ECMA-262 translation, without
loading pydantic or jsonschema-rs. Every node computed spends one unit of an `Allowance`.

A type set may also hold `NULL_STRING`: the location may admit the string ``"null"`` itself (any
string, a listed ``"null"``). The one ``"null"`` policy (`pydantic_lenient.types.forms.NULL_TEXT`)
reads it: where null is admitted and `NULL_STRING` is not, the string ``"null"`` means None.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union
from urllib.parse import unquote

from pydantic_lenient.types.forms import NULL_TEXT
from pydantic_lenient.types.json_kinds import JSON_TYPES, json_type

__all__ = (
    "ALL_TYPES",
    "DRAFTS",
    "DRAFT_7",
    "DRAFT_2020_12",
    "NULL_STRING",
    "Allowance",
    "Draft",
    "LocationReader",
    "MergedSchemas",
    "Node",
    "OverBudget",
    "SchemaNode",
    "Scope",
    "ScopedSchema",
    "declared_draft",
    "listed_types",
    "merge",
    "pointer_tokens",
)

NULL_STRING = f'"{NULL_TEXT}"'
"""The entry of a type set for the string ``"null"`` itself: present where that very string may be admitted."""

ALL_TYPES = JSON_TYPES | {NULL_STRING}
"""What a location that says nothing accepts: the seven JSON types, the string ``"null"`` included."""

_NONE: frozenset[str] = frozenset()
_EXPANDED = {name: frozenset({name}) for name in JSON_TYPES} | {
    "number": frozenset({"number", "integer"}),
    "string": frozenset({"string", NULL_STRING}),
}
_NODE_DEPTH = 64  # how deep through $ref and combinators one question about a location goes

# The drafts by jsonschema-rs's numbers (``jsonschema_rs.Draft7`` is 7), without importing it.
DRAFT_7 = 7
DRAFT_2020_12 = 20

Draft = Literal["2020-12", "2019-09", "07", "06", "04"]
"""The JSON Schema dialects a schema can be read in; 2020-12 (MCP's default) unless its ``$schema`` says otherwise.

>>> from pydantic_lenient.repair import repair_arguments
>>> schema = {"prefixItems": [{"type": "integer"}]}
>>> repair_arguments(schema, ["1"]).arguments, repair_arguments(schema, ["1"], draft="07").arguments
([1], ['1'])
"""

DRAFTS: dict[str, int] = {"2020-12": DRAFT_2020_12, "2019-09": 19, "07": DRAFT_7, "06": 6, "04": 4}
"""jsonschema-rs's number for each `Draft`; a later draft has a larger number."""


def declared_draft(declared: Any) -> int | None:
    """The draft a ``$schema`` value names (4, 6, 7, 19 or 20, jsonschema-rs's numbers), or None."""
    if not isinstance(declared, str):
        return None
    for name, number in (("draft-04", 4), ("draft-06", 6), ("draft-07", 7), ("2019-09", 19), ("2020-12", 20)):
        if name in declared:
            return number
    return None


def listed_types(value: Any) -> frozenset[str]:
    """The type set of one ``enum`` value: its JSON type, and `NULL_STRING` for the string ``"null"``."""
    kind = json_type(value)
    return frozenset({kind, NULL_STRING}) if value == NULL_TEXT and kind == "string" else frozenset({kind})


def pointer_tokens(reference: str) -> list[str] | None:
    """The tokens of a local JSON pointer reference (``#/a/b``), or None for anything else."""
    if reference == "#":
        return []
    if not reference.startswith("#/"):
        return None
    return [unquote(token).replace("~1", "/").replace("~0", "~") for token in reference[2:].split("/")]


class OverBudget(Exception):
    """The schema or the arguments need more work than a repair (or a widening) may take."""


class Allowance:
    """The work one repair (or one question about a location, or one widening) may still do: each
    schema node computed and each value visited spends one unit of ``remaining``; below zero,
    `OverBudget` ends it.

    >>> from pydantic_lenient.repair import SchemaReader
    >>> schema = {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}}
    >>> sorted(SchemaReader(schema).types(("a", "b"))), len(SchemaReader(schema, budget=2).types(("a", "b")))
    (['integer'], 7)
    """

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining


@dataclass(frozen=True)
class Scope:
    """Where a subschema sits: the base URI its references resolve against, and its draft."""

    base: str
    draft: int


class SchemaNode:
    """A location's schema, with what has been learned about it (accepted types, children, and
    ``shape``: what the reader above this one learns of its members)."""

    __slots__ = ("children", "shape", "types")

    def __init__(self) -> None:
        self.types: frozenset[str] | None = None
        self.children: dict[str | int, Node] = {}
        self.shape: Any = None


class ScopedSchema(SchemaNode):
    """One schema object, read in its scope."""

    __slots__ = ("schema", "scope")

    def __init__(self, schema: Mapping[str, Any], scope: Scope) -> None:
        super().__init__()
        self.schema = schema
        self.scope = scope


class MergedSchemas(SchemaNode):
    """Several schemas at one location: all of them apply (``every``), or any one may be meant."""

    __slots__ = ("every", "parts")

    def __init__(self, every: bool, parts: tuple[Node, ...]) -> None:
        super().__init__()
        self.every = every
        self.parts = parts


Node = Union[SchemaNode, bool]
"""The schema at a location: a node, or a boolean schema (True: anything goes; False: nothing does)."""


def merge(every: bool, parts: list[Node]) -> Node:
    """Schemas that all apply (``every``) or of which any may be meant, simplified where that is exact."""
    if every:
        parts = [part for part in parts if part is not True]
        if any(part is False for part in parts):
            return False
        if not parts:
            return True
    elif not parts or any(part is True for part in parts):
        return True  # no branch takes the container, or one takes anything: assume nothing
    return parts[0] if len(parts) == 1 else MergedSchemas(every, tuple(parts))


class LocationReader(ABC):
    """Answers about the schema at a node (the accepted types, the node one step inside), and
    remembers each answer on the node. Each node computed spends one unit of ``allowance``; past
    it, `OverBudget` ends the question. Not thread-safe: the nodes are the caller's to guard.

    A subclass says where subschemas and references lead (`subschema`, `resolve`), which
    ``patternProperties`` patterns match a key (`matching_patterns`), and how many answers it may
    keep (`remember`).
    """

    def __init__(self, allowance: Allowance) -> None:
        self.allowance = allowance

    @abstractmethod
    def subschema(self, schema: Any, scope: Scope) -> Node:
        """The node for a subschema met while descending from a schema in ``scope``."""

    @abstractmethod
    def resolve(self, reference: Any, scope: Scope) -> Node:
        """The node a ``$ref`` in ``scope`` names; True (constrains nothing) where it names none."""

    @abstractmethod
    def matching_patterns(self, schema: Mapping[str, Any], key: str) -> list[str] | None:
        """The ``patternProperties`` patterns of ``schema`` matching ``key``; None when that cannot be decided."""

    def remember(self) -> bool:
        """Whether one more answer may be stored on a node."""
        return True

    def _spend(self, cost: int = 1) -> None:
        allowance = self.allowance
        allowance.remaining -= cost
        if allowance.remaining < 0:
            raise OverBudget

    def accepted(self, node: Node, depth: int = 0) -> frozenset[str]:
        """The JSON types a value at this node may have (an over-approximation: never too few)."""
        if isinstance(node, bool):
            return ALL_TYPES if node else _NONE
        if node.types is not None:
            return node.types
        if depth > _NODE_DEPTH:
            return ALL_TYPES
        self._spend()
        node.types = ALL_TYPES  # while computing: a cycle back here reads "anything"
        if isinstance(node, MergedSchemas):
            sets = [self.accepted(part, depth + 1) for part in node.parts]
            types = frozenset.intersection(ALL_TYPES, *sets) if node.every else frozenset().union(*sets)
        else:
            assert isinstance(node, ScopedSchema)
            types = self._own_types(node, depth)
        node.types = types
        return types

    def _own_types(self, node: ScopedSchema, depth: int) -> frozenset[str]:
        schema, scope = node.schema, node.scope
        types = ALL_TYPES
        if "$ref" in schema:
            types = self.accepted(self.resolve(schema["$ref"], scope), depth + 1)
            if scope.draft <= DRAFT_7:
                return types
        declared = schema.get("type")
        if isinstance(declared, str):
            types &= _EXPANDED.get(declared, _NONE)
        elif isinstance(declared, list):
            types &= frozenset().union(*(_EXPANDED.get(name, _NONE) for name in declared if isinstance(name, str)))
        if "const" in schema:
            constant = listed_types(schema["const"])
            types &= constant | _EXPANDED.get(json_type(schema["const"]), _NONE) - {NULL_STRING}
        if isinstance(schema.get("enum"), list):
            types &= frozenset().union(*(listed_types(value) for value in schema["enum"]))
        if isinstance(schema.get("allOf"), list):
            for part in schema["allOf"]:
                types &= self.accepted(self.subschema(part, scope), depth + 1)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list):
                types &= frozenset().union(
                    *(self.accepted(self.subschema(branch, scope), depth + 1) for branch in branches)
                )
        return types

    def child(self, node: Node, step: str | int, depth: int = 0) -> Node:
        """The node one step inside ``node``: a member name (str) or an item index (int)."""
        if isinstance(node, bool):
            return True
        child = node.children.get(step)
        if child is None:
            child = self._compute_child(node, step, depth)
            if self.remember():
                node.children[step] = child
        return child

    def _compute_child(self, node: SchemaNode, step: str | int, depth: int) -> Node:
        if depth > _NODE_DEPTH:
            return True
        self._spend()
        if isinstance(node, MergedSchemas):
            return merge(node.every, [self.child(part, step, depth + 1) for part in node.parts])
        assert isinstance(node, ScopedSchema)
        schema, scope = node.schema, node.scope
        parts: list[Node] = []
        if "$ref" in schema:
            parts.append(self.child(self.resolve(schema["$ref"], scope), step, depth + 1))
            if scope.draft <= DRAFT_7:
                return merge(True, parts)
        if isinstance(step, str):
            parts.extend(self._own_members(schema, scope, step))
        else:
            parts.extend(self._own_items(schema, scope, step))
        container = "object" if isinstance(step, str) else "array"
        if isinstance(schema.get("allOf"), list):
            parts.extend(self.child(self.subschema(part, scope), step, depth + 1) for part in schema["allOf"])
        for keyword in ("anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                branches = [self.subschema(branch, scope) for branch in schema[keyword]]
                taking = [branch for branch in branches if container in self.accepted(branch, depth + 1)]
                parts.append(merge(False, [self.child(branch, step, depth + 1) for branch in taking]))
        return merge(True, parts)

    def _own_members(self, schema: Mapping[str, Any], scope: Scope, key: str) -> list[Node]:
        """What ``properties``, ``patternProperties`` and ``additionalProperties`` say of ``key``."""
        parts: list[Node] = []
        properties = schema.get("properties")
        matched = isinstance(properties, Mapping) and key in properties
        if matched:
            parts.append(self.subschema(properties[key], scope))  # type: ignore[index]
        matching = self.matching_patterns(schema, key)
        if matching is None:
            return []  # cannot tell which schemas apply: constrain nothing
        if matching:
            patterns: Mapping[str, Any] = schema["patternProperties"]
            parts.extend(self.subschema(patterns[pattern], scope) for pattern in matching)
            matched = True
        additional = schema.get("additionalProperties")
        if not matched and isinstance(additional, (Mapping, bool)):
            parts.append(self.subschema(additional, scope))
        return parts

    def _own_items(self, schema: Mapping[str, Any], scope: Scope, index: int) -> list[Node]:
        """What ``prefixItems``/``items`` (or before 2020-12, array ``items``/``additionalItems``) say of ``index``."""
        items = schema.get("items")
        if scope.draft >= DRAFT_2020_12:
            prefix = schema.get("prefixItems")
        elif isinstance(items, list):
            prefix, items = items, schema.get("additionalItems")
        else:
            prefix = None
        if isinstance(prefix, list) and index < len(prefix):
            return [self.subschema(prefix[index], scope)]
        return [self.subschema(items, scope)] if isinstance(items, (Mapping, bool)) else []
