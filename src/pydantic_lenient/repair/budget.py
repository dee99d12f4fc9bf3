"""The limits that keep a hostile schema or hostile arguments from costing without bound, and the cost checks.

Three limits guard the validator: how deep a schema or arguments may nest (`MAX_NESTING`), how many
subschemas one value may be checked against (`MAX_FAN_OUT`: an ``anyOf`` of two references to the
level below, forty levels deep, is 2**40 checks), and how many checks all the arguments of one call
may take (`MAX_WORK`; matching two keys against one ``patternProperties`` pattern is one check).
`ValidationCost` shows once per schema that no arguments can break the first two, or else measures
each call's arguments before they reach the validator; either takes at most `MAX_ANALYSIS` steps,
so that a schema of any size is measured, or refused, at once. A repair's own work (schema nodes
and values visited, and a key matched against each pattern) has a separate allowance
(`pydantic_lenient.schema.locations.Allowance`), and `OverBudget` there ends it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_lenient.schema.locations import DRAFT_7, Node, ScopedSchema

from .coercions import SCALARS
from .scopes import Locator, _SchemaError

__all__ = (
    "MAX_ANALYSIS",
    "MAX_FAN_OUT",
    "MAX_NESTING",
    "MAX_REFERENCES",
    "MAX_SCHEMA_VALUES",
    "MAX_WORK",
    "ValidationCost",
    "nested_deeper_than",
    "schema_refusal",
)

MAX_NESTING = 256
"""Deeper than this, a schema or arguments are not handed to the validator, whose recursion they could exhaust."""

MAX_REFERENCES = 10_000
"""``$ref``, ``$dynamicRef`` and ``$recursiveRef`` keywords one schema may hold. A chain of references
is no longer than their count, and jsonschema-rs follows a chain by recursion when it describes an
error: a flat chain of 50,000 overflows its stack (SIGSEGV, which nothing can catch)."""

MAX_SCHEMA_VALUES = 500_000
"""JSON values (objects, arrays, keys' values and items, at every depth) one schema may hold: about 10 MB
of JSON, far past any tool's schema, so that compiling one takes at most about a second."""

MAX_FAN_OUT = 10_000
"""Subschemas one value may be checked against."""

MAX_WORK = 1_000_000
"""Subschema checks (and key-against-pattern matches) all the arguments of one call may take."""

MAX_ANALYSIS = 300_000
"""Steps measuring a schema, or one call's arguments, may take (a step is about a microsecond)."""

_UNDECLARED = object()  # the memo key of every member name that no schema in a state declares
_UNMEASURABLE_MESSAGE = f"measuring the schema's work would take more than {MAX_ANALYSIS:,} steps"
_IN_PLACE_CYCLE = "the schema has a $ref cycle that never moves into the value"
_IN_PLACE = ("not", "if", "then", "else")
_BELOW = (
    ("additionalProperties", "*"),
    ("unevaluatedProperties", "*"),
    ("propertyNames", "?"),
    ("items", "[]"),
    ("prefixItems", "[]"),
    ("additionalItems", "[]"),
    ("contains", "[]"),
    ("unevaluatedItems", "[]"),
)


class _TooCostly(Exception):
    """Checking a value would take more than `MAX_FAN_OUT` subschema checks."""


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (without recursion, so any depth is safe).

    >>> from pydantic_lenient.repair.budget import nested_deeper_than
    >>> nested_deeper_than({"a": [1, 2]}, 2), nested_deeper_than({"a": [[1], 2]}, 2)
    (False, True)
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item.__class__ is dict or isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        depth += 1
        stack.extend((child, depth) for child in children if child.__class__ not in SCALARS)
    return False


_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def schema_refusal(schema: Any) -> str | None:
    """Why ``schema`` must not reach jsonschema-rs (nested deeper than `MAX_NESTING`, more than
    `MAX_REFERENCES` references or `MAX_SCHEMA_VALUES` values), or None. One pass, without recursion
    and without resolving anything, so that a schema of any size or shape is measured at once.

    >>> from pydantic_lenient.repair.budget import schema_refusal
    >>> chain = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(20_000)}
    >>> schema_refusal({"$defs": chain}), schema_refusal({"$defs": {"a": {"$ref": "#"}}}) is None
    ('the schema holds more than 10,000 references ($ref)', True)
    """
    values, references = 0, 0
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        item, depth = stack.pop()
        values += 1
        if values > MAX_SCHEMA_VALUES:
            return f"the schema holds more than {MAX_SCHEMA_VALUES:,} values"
        if isinstance(item, Mapping):
            references += sum(1 for keyword in _REFERENCE_KEYWORDS if keyword in item)
            if references > MAX_REFERENCES:
                return f"the schema holds more than {MAX_REFERENCES:,} references ($ref)"
            children: Iterable[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= MAX_NESTING:
            return f"the schema nests deeper than {MAX_NESTING} levels"
        depth += 1
        for child in children:
            if child.__class__ in SCALARS:
                values += 1
            else:
                stack.append((child, depth))
    return None if values <= MAX_SCHEMA_VALUES else f"the schema holds more than {MAX_SCHEMA_VALUES:,} values"


def _key_count(value: Any) -> int:
    """How many object members ``value`` holds, at every depth (without recursion)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            count += len(item)
            stack.extend(child for child in item.values() if child.__class__ not in SCALARS)
        elif isinstance(item, (list, tuple)):
            stack.extend(child for child in item if child.__class__ not in SCALARS)
    return count


class _FanOut:
    """The subschemas (with multiplicity) the validator checks one value against, and, memoized,
    those it checks the value's members and items against."""

    __slots__ = ("below", "counts", "total")

    def __init__(self, counts: dict[ScopedSchema, int]) -> None:
        self.counts = counts
        self.total = sum(counts.values())
        self.below: dict[object, _FanOut] = {}


_NO_FAN_OUT = _FanOut({})
_TOO_COSTLY: dict[ScopedSchema, int] = {}
_UNMEASURABLE: dict[ScopedSchema, int] = {}  # memoized so that every later call gets the same verdict


class ValidationCost:
    """How much work the validator can do for one schema's arguments.

    Built once per schema: raises `ValueError` for a ``$ref`` cycle that never moves into the value
    (JS hosts overflow their stack on it). Not thread-safe: its caches are the caller's to guard.

    >>> from pydantic_lenient.repair.budget import ValidationCost
    >>> from pydantic_lenient.repair.scopes import DRAFTS, Locator
    >>> doubling = {"$defs": {"d0": {"type": "integer"}}}
    >>> for level in range(1, 20):
    ...     doubling["$defs"][f"d{level}"] = {"anyOf": [{"$ref": f"#/$defs/d{level - 1}"}] * 2}
    >>> doubling["items"] = {"$ref": "#/$defs/d19"}
    >>> cost = ValidationCost(Locator(doubling, DRAFTS["2020-12"]))
    >>> cost.bounded, cost.too_costly([]), cost.too_costly([1])
    (False, None, 'one value would be checked against more than 10,000 subschemas')
    """

    def __init__(self, locator: Locator) -> None:
        self._locator = locator
        self._closures: dict[ScopedSchema, dict[ScopedSchema, int]] = {}
        self._closing: set[ScopedSchema] = set()
        self._descending_cache: dict[ScopedSchema, tuple[list[tuple[str, Node]], frozenset[str]]] = {}
        self._patterns_cache: dict[ScopedSchema, int] = {}
        self._analysis = MAX_ANALYSIS
        self.bounded = self._statically_bounded()
        # Every key may be matched against every pattern: work that grows with the keys, which the
        # static bound does not see. An over-estimate: all the schema's patterns for each key.
        self._all_patterns = self._pattern_properties_total()

    def too_costly(self, arguments: Any, *, shallow: bool = False) -> str | None:
        """Why ``arguments`` must not reach the validator (nested too deep, or too many checks), or None.
        ``shallow``: the caller knows they nest no deeper than `MAX_NESTING`, so that is not walked."""
        if self.bounded:
            if not shallow and nested_deeper_than(arguments, MAX_NESTING):
                return f"the arguments nest deeper than {MAX_NESTING} levels"
            if self._all_patterns and _key_count(arguments) * self._all_patterns // 2 > MAX_WORK:
                return f"checking the arguments would take more than {MAX_WORK:,} subschema checks"
            return None
        self._analysis = MAX_ANALYSIS
        try:
            stack: list[tuple[Any, _FanOut, int]] = [(arguments, _FanOut(self._closure(self._locator.root)), 0)]
            work = 0
            while stack:
                value, state, depth = stack.pop()
                work += state.total
                if isinstance(value, Mapping):  # each key against each pattern: about half a check each
                    work += len(value) * self._pattern_count(state) // 2
                if work > MAX_WORK:
                    return f"checking the arguments would take more than {MAX_WORK:,} subschema checks"
                if isinstance(value, Mapping):
                    items: Iterable[tuple[str | None, Any]] = ((str(key), item) for key, item in value.items())
                elif isinstance(value, (list, tuple)):
                    items = ((None, item) for item in value)
                else:
                    continue
                if depth >= MAX_NESTING:
                    return f"the arguments nest deeper than {MAX_NESTING} levels"
                stack.extend((item, self._below(state, step), depth + 1) for step, item in items)
        except _TooCostly as error:
            return (
                error.args[0]
                if error.args
                else f"one value would be checked against more than {MAX_FAN_OUT:,} subschemas"
            )
        return None

    def _spend(self, steps: int) -> None:
        self._analysis -= steps
        if self._analysis < 0:
            raise _TooCostly(_UNMEASURABLE_MESSAGE)

    def _pattern_count(self, state: _FanOut) -> int:
        """The ``patternProperties`` patterns a member name of a value under ``state`` is matched against."""
        total = 0
        for node, times in state.counts.items():
            count = self._patterns_cache.get(node)
            if count is None:
                patterns = node.schema.get("patternProperties")
                count = self._patterns_cache[node] = len(patterns) if isinstance(patterns, Mapping) else 0
            total += times * count
        return total

    def _pattern_properties_total(self) -> int:
        """How many ``patternProperties`` patterns the whole schema holds."""
        root = self._locator.root
        stack: list[Any] = [root.schema if isinstance(root, ScopedSchema) else root]
        total = 0
        while stack:
            item = stack.pop()
            if isinstance(item, Mapping):
                patterns = item.get("patternProperties")
                total += len(patterns) if isinstance(patterns, Mapping) else 0
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return total

    def _in_place(self, node: ScopedSchema) -> list[Node]:
        """The subschemas that apply to the same value as ``node`` (references and combinators)."""
        schema, scope, locator = node.schema, node.scope, self._locator
        references = [schema[keyword] for keyword in ("$ref", "$dynamicRef", "$recursiveRef") if keyword in schema]
        children = [locator.resolve(reference, scope) for reference in references]
        if "$ref" in schema and scope.draft <= DRAFT_7:
            return children
        for keyword in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                children.extend(locator.subschema(part, scope) for part in schema[keyword])
        children.extend(locator.subschema(schema[keyword], scope) for keyword in _IN_PLACE if keyword in schema)
        for keyword in ("dependentSchemas", "dependencies"):
            if isinstance(schema.get(keyword), Mapping):
                children.extend(locator.subschema(part, scope) for part in schema[keyword].values())
        return children

    def _descending(self, node: ScopedSchema) -> list[tuple[str, Node]]:
        """The subschemas that apply below ``node``, labelled by where: ``.name`` for a declared
        member, ``~`` for members a pattern may match (any), ``*`` for undeclared members, ``[]`` for
        items, ``?`` for the names themselves."""
        schema, scope, locator = node.schema, node.scope, self._locator
        if "$ref" in schema and scope.draft <= DRAFT_7:
            return []
        children: list[tuple[str, Node]] = []
        properties, patterns = schema.get("properties"), schema.get("patternProperties")
        if isinstance(properties, Mapping):
            children.extend((f".{name}", locator.subschema(part, scope)) for name, part in properties.items())
        if isinstance(patterns, Mapping):
            children.extend(("~", locator.subschema(part, scope)) for part in patterns.values())
        children.extend((label, locator.subschema(schema[key], scope)) for key, label in _BELOW if key in schema)
        for keyword in ("items", "prefixItems", "additionalItems"):
            if isinstance(schema.get(keyword), list):
                children.extend(("[]", locator.subschema(part, scope)) for part in schema[keyword])
        return children

    def _closure(self, node: Node) -> dict[ScopedSchema, int]:
        """The subschemas checked against a value that ``node`` applies to, with multiplicity.
        Raises `_TooCostly` past `MAX_FAN_OUT`."""
        if not isinstance(node, ScopedSchema):
            return {}
        cached = self._closures.get(node)
        if cached is None:
            cached = self._close(node)
        if cached is _TOO_COSTLY:
            raise _TooCostly
        if cached is _UNMEASURABLE:
            raise _TooCostly(_UNMEASURABLE_MESSAGE)
        return cached

    def _close(self, root: ScopedSchema) -> dict[ScopedSchema, int]:
        """Measure and memoize the closure of ``root`` and of every node it reaches in place,
        children first. A loop, not recursion: a chain of references is as long as the schema
        makes it, and the result must not depend on the interpreter's recursion limit. Each member
        copied is a step of `MAX_ANALYSIS`: a chain's closures grow with its square."""
        frames: list[tuple[ScopedSchema, list[ScopedSchema]]] = []

        def enter(node: ScopedSchema) -> None:
            if node in self._closing:
                raise _TooCostly(_IN_PLACE_CYCLE)  # JS hosts overflow their stack on such a schema
            self._closing.add(node)
            children = [child for child in self._in_place(node) if isinstance(child, ScopedSchema)]
            children.reverse()  # popped from the end: in document order
            frames.append((node, children))

        try:
            enter(root)
            while frames:
                node, children = frames[-1]
                while children and children[-1] in self._closures:
                    children.pop()
                if children:
                    enter(children[-1])
                    continue
                frames.pop()
                self._closing.discard(node)
                closure: dict[ScopedSchema, int] = {node: 1}
                for child in self._in_place(node):
                    if not isinstance(child, ScopedSchema):
                        continue
                    child_closure = self._closures[child]
                    if child_closure is _TOO_COSTLY or child_closure is _UNMEASURABLE:
                        closure = child_closure
                        break
                    if self._analysis < len(child_closure):
                        for unmeasured, _ in frames:
                            self._closures[unmeasured] = _UNMEASURABLE
                        self._closures[node] = _UNMEASURABLE
                        raise _TooCostly(_UNMEASURABLE_MESSAGE)
                    self._analysis -= len(child_closure)
                    for member, count in child_closure.items():
                        closure[member] = closure.get(member, 0) + count
                    if sum(closure.values()) > MAX_FAN_OUT:
                        closure = _TOO_COSTLY
                        break
                self._closures[node] = closure
        finally:
            for node, _ in frames:
                self._closing.discard(node)
        return self._closures[root]

    def _below(self, state: _FanOut, step: str | None) -> _FanOut:
        """The subschemas checked against a member named ``step`` (None: an item) of a value under ``state``."""
        key: object = step
        if step is not None and not any(step in self._descendants(node)[1] for node in state.counts):
            key = _UNDECLARED  # every member no node declares meets the same subschemas: measured once
        memo = state.below.get(key)
        if memo is not None:
            return memo
        counts: dict[ScopedSchema, int] = {}
        for node, times in state.counts.items():
            children, declared = self._descendants(node)
            own = "[]" if step is None else f".{step}" if step in declared else "*"
            self._spend(len(children))
            for label, child in children:
                if label == own or (step is not None and label in "~?"):
                    for member, count in self._closure(child).items():
                        counts[member] = counts.get(member, 0) + times * count
            if sum(counts.values()) > MAX_FAN_OUT:
                raise _TooCostly
        result = _FanOut(counts) if counts else _NO_FAN_OUT
        if len(state.below) < 1_000:
            state.below[key] = result
        return result

    def _descendants(self, node: ScopedSchema) -> tuple[list[tuple[str, Node]], frozenset[str]]:
        cached = self._descending_cache.get(node)
        if cached is None:
            children = self._descending(node)
            properties = node.schema.get("properties")
            declared = frozenset(properties) if isinstance(properties, Mapping) else frozenset()
            cached = self._descending_cache[node] = (children, declared)
        return cached

    def _statically_bounded(self) -> bool:
        """Whether no arguments at all can make one value cost more than `MAX_FAN_OUT` checks:
        level by level down, the worst member name's subschemas (an over-estimate). When this
        cannot be shown, each call's arguments are measured before they are validated."""
        try:
            state = _FanOut(self._closure(self._locator.root))
            for _ in range(MAX_NESTING):
                steps: list[str | None] = [None, "\x00undeclared"]
                for node in state.counts:
                    steps.extend(self._descendants(node)[1])
                following: dict[ScopedSchema, int] = {}
                for step in steps:
                    for member, count in self._below(state, step).counts.items():
                        following[member] = max(following.get(member, 0), count)
                if sum(following.values()) > MAX_FAN_OUT:
                    return False
                if not following or following == state.counts:
                    return True
                state = _FanOut(following)
        except _TooCostly as error:
            if error.args == (_IN_PLACE_CYCLE,):
                raise _SchemaError(_IN_PLACE_CYCLE) from None
            return False
        return False
