"""Reading a JSON Schema as the validator reads it: which types and which members a location admits.

The rules of reading a location live once, in `pydantic_lenient.schema.locations` (widening reads
through them too); here they meet jsonschema-rs: ``$ref`` through its registry (`Locator`),
``patternProperties`` through its pattern engine, and the members an object declares (`Shape`), for
renaming keys. `SchemaReader` asks by location; `NodeReader` asks by node, as the repair walk does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import jsonschema_rs

from pydantic_lenient.schema.ecma_regex import PATTERN_OPTIONS
from pydantic_lenient.schema.locations import (
    DRAFT_7,
    NULL_STRING,
    Allowance,
    LocationReader,
    MergedSchemas,
    Node,
    OverBudget,
    Scope,
    ScopedSchema,
)

from .scopes import Draft, Locator, _SchemaError
from .validation import UNDECIDABLE_KEYS, one_line, prepare_schema

__all__ = ("NodeReader", "SchemaReader", "Shape", "fold", "matching_cost")

_NODE_DEPTH = 64  # how deep through $ref and combinators the declared members are gathered
# Regex work, in units of the allowance (a schema node computed, about a microsecond): compiling a
# pattern costs this much, once; matching a key against a pattern set one unit per this many patterns.
_COMPILE_COST = 25
_PATTERNS_PER_UNIT = 16


def matching_cost(pattern_sets: Iterable[_PatternSet]) -> int:
    """What matching one key against ``pattern_sets`` spends of an allowance."""
    return sum(1 + len(pattern_set.patterns) // _PATTERNS_PER_UNIT for pattern_set in pattern_sets)


_Answer = TypeVar("_Answer")


def fold(name: str) -> str:
    """A property name without case or separators: ``thought_number`` and ``ThoughtNumber`` meet.

    >>> from pydantic_lenient.repair.reader import fold
    >>> fold("thought_number"), fold("Thought-Number")
    ('thoughtnumber', 'thoughtnumber')
    """
    return name.casefold().replace("_", "").replace("-", "")


@dataclass
class Shape:
    """What an object location declares: property names (also by their `fold`), and whether a
    pattern may claim a key (``unknown_patterns``: one that cannot be decided)."""

    declared: frozenset[str]
    folded: dict[str, list[str]]
    pattern_sets: list[_PatternSet]
    unknown_patterns: bool


class _PatternSet:
    """The (rewritten) patterns of one ``patternProperties``: which of them match a key, in one call."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = list(patterns)
        self._validator = jsonschema_rs.validator_for(
            {"patternProperties": dict.fromkeys(self.patterns, False)}, pattern_options=PATTERN_OPTIONS
        )

    def matching(self, key: str) -> list[str] | None:
        """The patterns that match ``key``; None when that cannot be decided within bounds."""
        try:
            if self._validator.is_valid({key: None}):
                return []  # no pattern matches: about eight times faster than collecting the errors
            errors = list(self._validator.iter_errors({key: None}))
        except Exception:  # a key jsonschema-rs cannot take (a lone surrogate)
            return None
        matched = []
        for error in errors:
            if error.kind.name != "falseSchema":
                return None  # the backtracking limit: undecided
            matched.append(str(error.schema_path[1]))
        return matched


class NodeReader(LocationReader):
    """Answers about the schema at a node (`LocationReader`'s accepted types and the node one step
    inside, with ``$ref`` through jsonschema-rs's registry; the declared members, `shape`), and
    remembers each answer on the node.

    Each node computed spends one unit of ``allowance`` (the caller sets it for each question or
    walk), and past it `OverBudget` ends the question. Not thread-safe: the nodes are the caller's
    to guard.
    """

    def __init__(self, locator: Locator, allowance: Allowance) -> None:
        super().__init__(allowance)
        self.locator = locator
        self.root = locator.root
        self._pattern_sets: dict[int, tuple[Mapping[str, Any], _PatternSet | None]] = {}

    def subschema(self, schema: Any, scope: Scope) -> Node:
        return self.locator.subschema(schema, scope)

    def resolve(self, reference: Any, scope: Scope) -> Node:
        return self.locator.resolve(reference, scope)

    def remember(self) -> bool:
        return self.locator.remember()

    def matching_patterns(self, schema: Mapping[str, Any], key: str) -> list[str] | None:
        if UNDECIDABLE_KEYS in schema:
            return None  # patterns that cannot be checked within bounds
        patterns = schema.get("patternProperties")
        if not isinstance(patterns, Mapping) or not patterns:
            return []
        pattern_set = self._pattern_set(patterns)
        self._spend(1 + len(patterns) // _PATTERNS_PER_UNIT)  # the key is matched against every pattern
        return pattern_set.matching(key) if pattern_set is not None else None

    def _pattern_set(self, patterns: Mapping[str, Any]) -> _PatternSet | None:
        cached = self._pattern_sets.get(id(patterns))
        if cached is not None and cached[0] is patterns:
            return cached[1]
        self._spend(_COMPILE_COST * len(patterns))  # compiled once per Repairer, spent by the first question
        try:
            pattern_set: _PatternSet | None = _PatternSet(patterns)
        except Exception:  # the validator refused the schema already
            pattern_set = None
        self._pattern_sets[id(patterns)] = (patterns, pattern_set)
        return pattern_set

    def shape(self, node: Node) -> Shape:
        """The property names ``node`` declares, across ``$ref`` and combinators, and its patterns."""
        if isinstance(node, bool):
            return Shape(frozenset(), {}, [], False)
        if node.shape is None:
            declared: set[str] = set()
            pattern_sets: list[_PatternSet] = []
            unknown = False
            stack: list[tuple[Node, int]] = [(node, 0)]
            seen: set[int] = set()
            while stack:
                current, depth = stack.pop()
                if isinstance(current, bool) or id(current) in seen or depth > _NODE_DEPTH:
                    continue
                seen.add(id(current))
                self._spend()
                if isinstance(current, MergedSchemas):
                    stack.extend((part, depth + 1) for part in current.parts)
                    continue
                assert isinstance(current, ScopedSchema)
                schema, scope = current.schema, current.scope
                if "$ref" in schema:
                    stack.append((self.locator.resolve(schema["$ref"], scope), depth + 1))
                    if scope.draft <= DRAFT_7:
                        continue
                if isinstance(schema.get("properties"), Mapping):
                    declared.update(name for name in schema["properties"] if isinstance(name, str))
                patterns = schema.get("patternProperties")
                if isinstance(patterns, Mapping) and patterns:
                    pattern_set = self._pattern_set(patterns)
                    unknown = unknown or pattern_set is None
                    if pattern_set is not None:
                        pattern_sets.append(pattern_set)
                unknown = unknown or UNDECIDABLE_KEYS in schema
                for keyword in ("allOf", "anyOf", "oneOf"):
                    if isinstance(schema.get(keyword), list):
                        stack.extend((self.locator.subschema(part, scope), depth + 1) for part in schema[keyword])
            folded: dict[str, list[str]] = {}
            for name in sorted(declared):
                folded.setdefault(fold(name), []).append(name)
            node.shape = Shape(frozenset(declared), folded, pattern_sets, unknown)
        shape: Shape = node.shape
        return shape


class SchemaReader:
    """Which JSON types and which member names a location in the arguments admits, read from a schema
    as its validator reads it, without compiling it or repairing anything.

    A location is a tuple of member names (str) and item indexes (int), like pydantic's ``loc``.
    ``draft`` is the dialect, by default the one the schema's ``$schema`` names, else 2020-12.
    Raises `ValueError` for a schema it cannot read: no schema, nested too deep, an unknown draft, a
    pattern that is not ECMA-262, a ``$ref`` outside the schema (nothing is fetched); a ``$ref`` that
    names nothing inside it constrains nothing. Each question may compute ``budget`` schema nodes;
    past that, it answers as if the location said nothing: every type, no members. Safe to share
    between threads.

    >>> from pydantic_lenient.repair import SchemaReader
    >>> schema = {
    ...     "$defs": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}},
    ...     "properties": {"to": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}},
    ... }
    >>> reader = SchemaReader(schema)
    >>> sorted(reader.types(("to",))), sorted(reader.children(("to",))), sorted(reader.types(("to", "zip")))
    (['null', 'object'], ['zip'], ['string'])
    """

    def __init__(self, schema: Mapping[str, Any] | bool, *, draft: Draft | None = None, budget: int = 100_000) -> None:
        try:
            prepared = prepare_schema(schema, draft)
            locator = Locator(prepared.document, prepared.draft)
        except _SchemaError:
            raise
        except Exception as error:  # whatever a hostile schema makes the registry say: one line
            raise _SchemaError(one_line(error)) from error
        self.budget = budget
        self._nodes = NodeReader(locator, Allowance(budget))
        self._lock = threading.Lock()

    def types(self, location: tuple[str | int, ...] = ()) -> frozenset[str]:
        """The JSON types a value at ``location`` may have (``number`` includes ``integer``): never too few."""
        return self._ask(location, self._nodes.accepted) - {NULL_STRING}

    def children(self, location: tuple[str | int, ...] = ()) -> frozenset[str]:
        """The member names declared at ``location`` (``properties``, across ``$ref`` and combinators)."""
        return self._ask(location, lambda node: self._nodes.shape(node).declared)

    def _ask(self, location: tuple[str | int, ...], question: Callable[[Node], _Answer]) -> _Answer:
        with self._lock:
            self._nodes.allowance = Allowance(self.budget)
            try:
                node = self._nodes.root
                for step in location:
                    node = self._nodes.child(node, step)
                return question(node)
            except OverBudget:
                return question(True)
