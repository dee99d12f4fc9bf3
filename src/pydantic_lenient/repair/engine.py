"""Schema-driven argument repair for any tool schema: the client and proxy side.

A client, an agent framework or a proxy sees only a tool's advertised ``inputSchema``, from a
server it may not trust. Before it sends a model's arguments, `repair_arguments` fixes what the
schema can tell apart:

| from | to | kind | when |
|---|---|---|---|
| ``"true"`` / ``"false"``, any case | boolean | ``string_to_boolean`` | the location takes booleans, not strings |
| a numeric string (JSON number syntax) | integer or number | ``string_to_number`` | it takes numbers, not strings (1) |
| JSON text | array or object | ``json_text_to_structure`` | it takes the parsed type, not strings |
| a number or boolean | string | ``scalar_to_string`` | it takes strings, and not the value's type |
| a key in another case convention | the declared name | ``renamed_key`` | (2) |

(1) An integer-only location takes only integral values: ``"3.0"`` becomes 3, ``"5.5"`` stays.
Digits with leading zeros are read as `LenientInt` reads them: ``"007"`` becomes 7.
(2) ``thought_number``, ``thought-number`` or ``ThoughtNumber`` for the declared ``thoughtNumber``:
the key is not declared and no ``patternProperties`` matches it, exactly one declared property is
the same name after case and separator folding, and that one was not sent.

Arguments that validate come back unchanged (as a copy) without a walk: a real validator decides
first. Repair never adds or removes a value and never fills in defaults.

The validator is jsonschema-rs, compiled once per schema, with every ``pattern`` and
``patternProperties`` rewritten so that it reads them as ECMA-262 does
(`pydantic_lenient.schema.ecma_regex`) and never backtracks without limit. Nothing is ever
fetched: a ``$ref`` resolves inside the schema (JSON pointers, ``$anchor``, ``$id``-scoped
embedded resources) or not at all, and then ``valid`` is False. The walk resolves ``$ref``
through jsonschema-rs's own registry and reads each draft as the validator does: in draft-07,
``$ref`` overrides its siblings and ``items`` may be an array (with ``additionalItems``);
``prefixItems`` exists only in 2020-12.

What a location accepts is an over-approximation, never too few types: ``type`` (``number``
includes ``integer``), ``const``, ``enum``, ``$ref``, ``anyOf``/``oneOf`` as the union of their
branches and ``allOf`` as the intersection. Keywords that cannot widen the set (``not``,
``if``/``then``/``else``, ``$dynamicRef``, unknown ones) are ignored, which can only leave a value
alone. Object members are read through ``properties``, ``patternProperties`` and
``additionalProperties``; across combinators only branches that take an object (or an array) count.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict, Union
from urllib.parse import urldefrag, urljoin

from pydantic_core import ErrorDetails, from_json

from pydantic_lenient.schema.ecma_regex import PATTERN_OPTIONS, translate
from pydantic_lenient.schema.subschemas import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS
from pydantic_lenient.types.boolean_text import BOOLEAN_WORDS
from pydantic_lenient.types.scalar import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH

try:
    import jsonschema_rs
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "repair needs jsonschema-rs and regress: pip install 'pydantic-lenient[repair]'"
        " (in a clone: pip install -e '.[repair]')"
    ) from error

__all__ = ("Draft", "Reason", "RepairResult", "Repairer", "repair_arguments")

logger = logging.getLogger("pydantic_lenient.repair")

Draft = Literal["2020-12", "2019-09", "07", "06", "04"]

_ALL = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_NONE: frozenset[str] = frozenset()
_EXPANDED = {name: frozenset({name}) for name in _ALL} | {"number": frozenset({"number", "integer"})}
_JSON_WHITESPACE = " \t\n\r"
_JSON_NUMBER = re.compile(JSON_NUMBER_TEXT)
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_MAX_INTEGER_BITS = int(MAX_DIGIT_STRING_LENGTH * 3.32)  # an integer with about this many digits or fewer
_MISSING: Any = object()
_MEMO_LIMIT = 50_000  # cached nodes per Repairer; past it, work is recomputed rather than stored
_NODE_DEPTH = 64  # how deep through $ref and combinators one question about a location goes
# Deeper than this, a schema or arguments are not handed to the validator, whose recursion they could exhaust.
MAX_NESTING = 256
# Subschemas one value may be checked against, and all the arguments of one call.
MAX_FAN_OUT = 10_000
MAX_WORK = 1_000_000
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
# Where a schema without an absolute $id lives, for resolving references against it; never fetched.
ROOT_URI = "https://pydantic-lenient.invalid/schema.json"
_DRAFTS: dict[str, int] = {
    "2020-12": jsonschema_rs.Draft202012,
    "2019-09": jsonschema_rs.Draft201909,
    "07": jsonschema_rs.Draft7,
    "06": jsonschema_rs.Draft6,
    "04": jsonschema_rs.Draft4,
}
_VALIDATOR_CLASSES: dict[int, type[jsonschema_rs.Validator]] = {
    jsonschema_rs.Draft202012: jsonschema_rs.Draft202012Validator,
    jsonschema_rs.Draft201909: jsonschema_rs.Draft201909Validator,
    jsonschema_rs.Draft7: jsonschema_rs.Draft7Validator,
    jsonschema_rs.Draft6: jsonschema_rs.Draft6Validator,
    jsonschema_rs.Draft4: jsonschema_rs.Draft4Validator,
}
# Hosts treat these as annotations; jsonschema-rs would assert them in draft-07.
_ANNOTATIONS_ONLY = frozenset({"contentEncoding", "contentMediaType", "contentSchema"})
# Stand-ins for a pattern that cannot be checked within bounds: they refuse what the pattern would decide.
_UNDECIDABLE_PATTERN = "x-pydantic-lenient-undecidable-pattern"
_UNDECIDABLE_KEYS = "x-pydantic-lenient-undecidable-pattern-properties"


class Reason(TypedDict):
    """Why arguments are invalid: a validator's message, at a JSON Pointer into the arguments.

    >>> from pydantic_lenient.repair.engine import repair_arguments
    >>> repair_arguments({"properties": {"limit": {"type": "integer"}}}, {"limit": "ten"}).reasons
    ({'path': '/limit', 'message': '"ten" is not of type "integer"'},)
    """

    path: str
    message: str


class RepairResult(NamedTuple):
    """``arguments``: a new object (the input is never mutated); ``repairs``: one
    ``{path, from, to, kind}`` per change, ``path`` a JSON Pointer; ``valid``: whether the result
    validates against the schema, as a real validator decides; ``reasons``: when it does not, why
    (at most ``max_reasons`` of the validator's messages).


    >>> from pydantic_lenient.repair.engine import repair_arguments
    >>> repair_arguments({"properties": {"uids": {"type": "array"}}}, {"uids": "[17, 18]"})
    RepairResult(arguments={'uids': [17, 18]},
                 repairs=[{'path': '/uids', 'from': '[17, 18]', 'to': [17, 18], 'kind': 'json_text_to_structure'}],
                 valid=True, reasons=())
    """

    arguments: Any
    repairs: list[dict[str, Any]]
    valid: bool
    reasons: tuple[Reason, ...] = ()


class _OverBudget(Exception):
    """The schema or the arguments need more work than a repair may take."""


class _TooCostly(Exception):
    """Checking a value would take more than `MAX_FAN_OUT` subschema checks."""


class _FanOut:
    """The subschemas (with multiplicity) the validator checks one value against, and, memoized,
    those it checks the value's members and items against."""

    __slots__ = ("below", "counts", "total")

    def __init__(self, counts: dict[_At, int]) -> None:
        self.counts = counts
        self.total = sum(counts.values())
        self.below: dict[str | None, _FanOut] = {}


_NO_FAN_OUT = _FanOut({})
_TOO_COSTLY: dict[_At, int] = {}


class _SchemaError(ValueError):
    """A schema the validator cannot compile: malformed, an invalid pattern, a remote ``$ref``."""


_SCALARS = frozenset({str, int, bool, float, type(None)})
_JSON_TYPES = {type(None): "null", bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}


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


def _pointer(parts: Iterable[Any]) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _fold(name: str) -> str:
    """A property name without case or separators: ``thought_number`` and ``ThoughtNumber`` meet."""
    return name.casefold().replace("_", "").replace("-", "")


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (without recursion, so any depth is safe)."""
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
        stack.extend((child, depth) for child in children if child.__class__ not in _SCALARS)
    return False


def _one_line(error: Exception) -> str:
    if isinstance(error, jsonschema_rs.ValidationError):  # the schema fails its meta-schema
        where = _pointer(error.instance_path)
        message = error.message.split("\n")[0]
        return f"{message} (at {where})" if where else message
    return " ".join(str(error).split()) or type(error).__name__


def _refuse(uri: str) -> Any:
    raise _SchemaError(f"$ref {uri!r} is outside the schema, and nothing is fetched")


class _UndecidablePattern:
    """A string where a pattern that cannot be checked within bounds would decide: not accepted."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        self.reason = str(value)

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str):
            raise ValueError(self.reason)


class _UndecidableKeys(_UndecidablePattern):
    """An object whose keys ``patternProperties`` would have to match with such a pattern."""

    def validate(self, instance: Any) -> None:
        if isinstance(instance, dict) and instance:
            raise ValueError(self.reason)


_KEYWORDS: dict[str, Any] = {_UNDECIDABLE_PATTERN: _UndecidablePattern, _UNDECIDABLE_KEYS: _UndecidableKeys}


def _for_validator(schema: Any, originals: dict[str, str]) -> Any:
    """``schema`` as jsonschema-rs reads it the way JS hosts do: patterns rewritten
    (`pydantic_lenient.schema.ecma_regex`), content keywords dropped. Raises `_SchemaError` for a
    pattern that is not ECMA-262. Records each rewritten pattern's original in ``originals``."""
    if isinstance(schema, list):
        return [_for_validator(item, originals) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    result: dict[Any, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS_ONLY or key in _KEYWORDS:
            continue
        if key == "pattern" and isinstance(value, str):
            translation = translate(value)
            if translation.invalid:
                raise _SchemaError(translation.problem)
            if translation.pattern is None:
                result[_UNDECIDABLE_PATTERN] = translation.problem
            else:
                originals.setdefault(translation.pattern, value)
                result[key] = translation.pattern
        elif key == "patternProperties" and isinstance(value, Mapping):
            patterns: dict[Any, Any] = {}
            for pattern, subschema in value.items():
                if not isinstance(pattern, str):
                    raise _SchemaError(f"a patternProperties key is not a string: {pattern!r}")
                translation = translate(pattern)
                if translation.invalid:
                    raise _SchemaError(translation.problem)
                if translation.pattern is None:
                    result[_UNDECIDABLE_KEYS] = translation.problem
                else:
                    originals.setdefault(translation.pattern, pattern)
                    rewritten = _for_validator(subschema, originals)
                    if translation.pattern in patterns:  # two spellings of one pattern: both schemas apply
                        rewritten = {"allOf": [patterns[translation.pattern], rewritten]}
                    patterns[translation.pattern] = rewritten
            result[key] = patterns
        elif key in SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            result[key] = {name: _for_validator(subschema, originals) for name, subschema in value.items()}
        elif key == "dependencies" and isinstance(value, Mapping):  # draft-07: schemas, or lists of names
            result[key] = {name: _for_validator(item, originals) for name, item in value.items()}
        elif key in SCHEMA_KEYWORDS or key in SCHEMA_LIST_KEYWORDS:
            result[key] = _for_validator(value, originals)
        else:
            result[key] = value  # data (enum, const, required, ...) or an unknown keyword: as sent
    return result


def _draft_of(schema: Any, draft: Draft | None) -> int:
    if draft is not None:
        if draft not in _DRAFTS:
            raise _SchemaError(f"draft {draft!r} is not one of {', '.join(_DRAFTS)}")
        return _DRAFTS[draft]
    declared = schema.get("$schema") if isinstance(schema, Mapping) else None
    return _declared_draft(declared) or jsonschema_rs.Draft202012


def _declared_draft(declared: Any) -> int | None:
    if not isinstance(declared, str):
        return None
    for name, number in (("draft-04", 4), ("draft-06", 6), ("draft-07", 7), ("2019-09", 19), ("2020-12", 20)):
        if name in declared:
            return number
    return None


@dataclass(frozen=True)
class _Scope:
    """Where a subschema sits: the base URI its references resolve against, and its draft."""

    base: str
    draft: int


class _Node:
    """A location's schema, with what the walk has learned about it (accepted types, children)."""

    __slots__ = ("children", "shape", "types")

    def __init__(self) -> None:
        self.types: frozenset[str] | None = None
        self.children: dict[str | int, Node] = {}
        self.shape: _Shape | None = None


class _At(_Node):
    """One schema object, read in its scope."""

    __slots__ = ("schema", "scope")

    def __init__(self, schema: Mapping[str, Any], scope: _Scope) -> None:
        super().__init__()
        self.schema = schema
        self.scope = scope


class _Merged(_Node):
    """Several schemas at one location: all of them apply (``all``), or any one may be meant (``any``)."""

    __slots__ = ("every", "parts")

    def __init__(self, every: bool, parts: tuple[Node, ...]) -> None:
        super().__init__()
        self.every = every
        self.parts = parts


Node = Union[_Node, bool]


@dataclass
class _Shape:
    """What an object location declares: property names, and whether a pattern may claim a key."""

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
            errors = list(self._validator.iter_errors({key: None}))
        except Exception:  # a key jsonschema-rs cannot take (a lone surrogate)
            return None
        matched = []
        for error in errors:
            if error.kind.name != "falseSchema":
                return None  # the backtracking limit: undecided
            matched.append(str(error.schema_path[1]))
        return matched


class Repairer:
    """Repairs arguments against one schema; build it once per schema and reuse it.

    ``draft`` is the dialect the schema is read in; by default the one its ``$schema`` names, else
    2020-12 (MCP's default). A schema the validator cannot compile (malformed keywords, a pattern
    that is not ECMA-262, a ``$ref`` outside the schema) is kept in ``schema_error``, and every
    result is then ``valid=False`` with it as the reason.

    ``max_depth`` bounds how deep into the arguments repair goes, ``max_text_length`` how long a
    string it will parse as JSON, ``budget`` how many schema nodes and values one repair may visit,
    and ``max_reasons`` how many of the validator's messages a result carries.


    >>> from pydantic_lenient.repair.engine import Repairer
    >>> repairer = Repairer({"type": "object", "properties": {"dry_run": {"type": "boolean"}}})
    >>> repairer.repair({"dry_run": "FALSE"}).arguments
    {'dry_run': False}
    >>> repairer.repair({"dry_run": "no"})  # not a boolean's spelling: left as sent, and still invalid
    RepairResult(arguments={'dry_run': 'no'}, repairs=[], valid=False,
                 reasons=({'path': '/dry_run', 'message': '"no" is not of type "boolean"'},))
    >>> repairer.is_valid({"dry_run": True})
    True
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        draft: Draft | None = None,
        max_depth: int = 64,
        max_text_length: int = 1_000_000,
        budget: int = 100_000,
        max_reasons: int = 10,
    ) -> None:
        self.schema = schema
        self.max_depth = max_depth
        self.max_text_length = max_text_length
        self.budget = budget
        self.max_reasons = max_reasons
        self.schema_error: str | None = None
        self._validator: jsonschema_rs.Validator | None = None
        self._registry: jsonschema_rs.Registry | None = None
        self._root: Node = True
        self._located: dict[tuple[int, _Scope], _At] = {}
        self._references: dict[tuple[str, str], Node] = {}
        self._pattern_sets: dict[int, tuple[Mapping[str, Any], _PatternSet | None]] = {}
        self._cached = 0
        self._remaining = budget
        self._closures: dict[_At, dict[_At, int]] = {}
        self._closing: set[_At] = set()
        self._descending_cache: dict[_At, tuple[list[tuple[str, Node]], frozenset[str]]] = {}
        self._bounded = True
        self._originals: dict[str, str] = {}  # rewritten pattern -> as the schema wrote it
        self._walking = threading.RLock()  # the budget and the caches are shared by every call
        try:
            self._compile(schema, draft)
        except Exception as error:  # whatever a hostile schema makes the compiler say: one line
            self.schema_error = _one_line(error)
            self._validator = None

    def _compile(self, schema: Any, draft: Draft | None) -> None:
        if not isinstance(schema, (Mapping, bool)):
            raise _SchemaError(f"a schema is an object or a boolean, not {type(schema).__name__}")
        if _nested_deeper_than(schema, MAX_NESTING):
            raise _SchemaError(f"the schema nests deeper than {MAX_NESTING} levels")
        number = _draft_of(schema, draft)
        document = _for_validator(schema, self._originals)
        validator_class = _VALIDATOR_CLASSES[number]
        self._validator = validator_class(
            document,
            retriever=_refuse,
            base_uri=ROOT_URI,
            pattern_options=PATTERN_OPTIONS,
            validate_formats=False,
            keywords=_KEYWORDS,
        )
        if isinstance(document, bool):
            self._root = document
            return
        # The walk reads the very document the validator compiled, through the same kind of registry.
        self._registry = jsonschema_rs.Registry([(ROOT_URI, document)], draft=number, retriever=_refuse)
        self._root = self._locate(document, self._enter(document, _Scope(ROOT_URI, number)))
        self._bounded = self._statically_bounded()

    # ---- how much work one value can cost the validator

    def _in_place(self, node: _At) -> list[Node]:
        """The subschemas that apply to the same value as ``node`` (references and combinators)."""
        schema, scope = node.schema, node.scope
        references = [schema[keyword] for keyword in ("$ref", "$dynamicRef", "$recursiveRef") if keyword in schema]
        children = [self._resolve(reference, scope) for reference in references]
        if "$ref" in schema and scope.draft <= jsonschema_rs.Draft7:
            return children
        for keyword in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                children.extend(self._subschema(part, scope) for part in schema[keyword])
        children.extend(self._subschema(schema[keyword], scope) for keyword in _IN_PLACE if keyword in schema)
        for keyword in ("dependentSchemas", "dependencies"):
            if isinstance(schema.get(keyword), Mapping):
                children.extend(self._subschema(part, scope) for part in schema[keyword].values())
        return children

    def _descending(self, node: _At) -> list[tuple[str, Node]]:
        """The subschemas that apply below ``node``, labelled by where: ``.name`` for a declared
        member, ``~`` for members a pattern may match (any), ``*`` for undeclared members, ``[]`` for
        items, ``?`` for the names themselves."""
        schema, scope = node.schema, node.scope
        if "$ref" in schema and scope.draft <= jsonschema_rs.Draft7:
            return []
        children: list[tuple[str, Node]] = []
        properties, patterns = schema.get("properties"), schema.get("patternProperties")
        if isinstance(properties, Mapping):
            children.extend((f".{name}", self._subschema(part, scope)) for name, part in properties.items())
        if isinstance(patterns, Mapping):
            children.extend(("~", self._subschema(part, scope)) for part in patterns.values())
        children.extend((label, self._subschema(schema[key], scope)) for key, label in _BELOW if key in schema)
        for keyword in ("items", "prefixItems", "additionalItems"):
            if isinstance(schema.get(keyword), list):
                children.extend(("[]", self._subschema(part, scope)) for part in schema[keyword])
        return children

    def _closure(self, node: Node) -> dict[_At, int]:
        """The subschemas checked against a value that ``node`` applies to, with multiplicity.
        Raises `_TooCostly` past `MAX_FAN_OUT` (an ``anyOf`` of two references to the level
        below, forty levels deep, is 2**40 checks)."""
        if not isinstance(node, _At):
            return {}
        cached = self._closures.get(node)
        if cached is None:
            if node in self._closing:
                raise _TooCostly(_IN_PLACE_CYCLE)  # JS hosts overflow their stack on such a schema
            self._closing.add(node)
            try:
                cached = {node: 1}
                for child in self._in_place(node):
                    for member, count in self._closure(child).items():
                        cached[member] = cached.get(member, 0) + count
                    if sum(cached.values()) > MAX_FAN_OUT:
                        cached = _TOO_COSTLY
                        break
            finally:
                self._closing.discard(node)
            self._closures[node] = cached
        if cached is _TOO_COSTLY:
            raise _TooCostly
        return cached

    def _below(self, state: _FanOut, step: str | None) -> _FanOut:
        """The subschemas checked against a member named ``step`` (None: an item) of a value under ``state``."""
        memo = state.below.get(step)
        if memo is not None:
            return memo
        counts: dict[_At, int] = {}
        for node, times in state.counts.items():
            children, declared = self._descendants(node)
            own = "[]" if step is None else f".{step}" if step in declared else "*"
            for label, child in children:
                if label == own or (step is not None and label in "~?"):
                    for member, count in self._closure(child).items():
                        counts[member] = counts.get(member, 0) + times * count
            if sum(counts.values()) > MAX_FAN_OUT:
                raise _TooCostly
        result = _FanOut(counts) if counts else _NO_FAN_OUT
        if len(state.below) < 1_000:
            state.below[step] = result
        return result

    def _descendants(self, node: _At) -> tuple[list[tuple[str, Node]], frozenset[str]]:
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
            state = _FanOut(self._closure(self._root))
            for _ in range(MAX_NESTING):
                steps: list[str | None] = [None, "\x00undeclared"]
                for node in state.counts:
                    steps.extend(self._descendants(node)[1])
                following: dict[_At, int] = {}
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

    def _too_costly(self, arguments: Any) -> str | None:
        """Why ``arguments`` must not reach the validator (nested too deep, or too many checks), or None."""
        if self._bounded:
            return (
                f"the arguments nest deeper than {MAX_NESTING} levels"
                if _nested_deeper_than(arguments, MAX_NESTING)
                else None
            )
        try:
            stack: list[tuple[Any, _FanOut, int]] = [(arguments, _FanOut(self._closure(self._root)), 0)]
            work = 0
            while stack:
                value, state, depth = stack.pop()
                work += state.total
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

    # ---- schema locations

    def _spend(self) -> None:
        self._remaining -= 1
        if self._remaining < 0:
            raise _OverBudget

    def _remember(self) -> bool:
        self._cached += 1
        return self._cached < _MEMO_LIMIT

    def _enter(self, schema: Mapping[str, Any], scope: _Scope) -> _Scope:
        """The scope inside ``schema``: its ``$id`` (and ``$schema``) start an embedded resource."""
        identifier = schema.get("$id")
        if not isinstance(identifier, str) or identifier.startswith("#"):
            return scope
        if scope.draft <= jsonschema_rs.Draft7 and "$ref" in schema:
            return scope  # draft-07: $ref overrides its siblings, $id included
        base = urldefrag(urljoin(scope.base, identifier)).url
        return _Scope(base, _declared_draft(schema.get("$schema")) or scope.draft)

    def _locate(self, schema: Any, scope: _Scope) -> Node:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, Mapping):
            return True  # not a schema: the validator refuses the document; the walk assumes nothing
        key = (id(schema), scope)
        node = self._located.get(key)
        if node is None:
            node = _At(schema, scope)
            if self._remember():
                self._located[key] = node  # the node holds the schema, so its id stays taken
        return node

    def _subschema(self, schema: Any, scope: _Scope) -> Node:
        """A subschema met while descending: enter its scope, then locate it."""
        if isinstance(schema, Mapping):
            return self._locate(schema, self._enter(schema, scope))
        return self._locate(schema, scope)

    def _resolve(self, reference: Any, scope: _Scope) -> Node:
        """A ``$ref`` through jsonschema-rs's registry; one it cannot resolve constrains nothing here
        (the validator already refused the schema)."""
        if not isinstance(reference, str) or self._registry is None:
            return True
        key = (scope.base, reference)
        node = self._references.get(key)
        if node is None:
            try:
                resolved = self._registry.resolver(scope.base).lookup(reference)
                node = self._locate(resolved.contents, _Scope(resolved.resolver.base_uri, resolved.draft))
            except Exception:
                node = True
            if self._remember():
                self._references[key] = node
        return node

    def accepted(self, node: Node, depth: int = 0) -> frozenset[str]:
        """The JSON types a value at this node may have (an over-approximation: never too few)."""
        if isinstance(node, bool):
            return _ALL if node else _NONE
        if node.types is not None:
            return node.types
        if depth > _NODE_DEPTH:
            return _ALL
        self._spend()
        node.types = _ALL  # while computing: a cycle back here reads "anything"
        if isinstance(node, _Merged):
            sets = [self.accepted(part, depth + 1) for part in node.parts]
            types = frozenset.intersection(_ALL, *sets) if node.every else frozenset().union(*sets)
        else:
            assert isinstance(node, _At)
            types = self._own_types(node, depth)
        node.types = types
        return types

    def _own_types(self, node: _At, depth: int) -> frozenset[str]:
        schema, scope = node.schema, node.scope
        types = _ALL
        if "$ref" in schema:
            types = self.accepted(self._resolve(schema["$ref"], scope), depth + 1)
            if scope.draft <= jsonschema_rs.Draft7:
                return types
        declared = schema.get("type")
        if isinstance(declared, str):
            types &= _EXPANDED.get(declared, _NONE)
        elif isinstance(declared, list):
            types &= frozenset().union(*(_EXPANDED.get(name, _NONE) for name in declared if isinstance(name, str)))
        if "const" in schema:
            types &= _EXPANDED.get(json_type(schema["const"]), _NONE) | {json_type(schema["const"])}
        if isinstance(schema.get("enum"), list):
            types &= frozenset(json_type(value) for value in schema["enum"])
        if isinstance(schema.get("allOf"), list):
            for part in schema["allOf"]:
                types &= self.accepted(self._subschema(part, scope), depth + 1)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list):
                types &= frozenset().union(
                    *(self.accepted(self._subschema(branch, scope), depth + 1) for branch in branches)
                )
        return types

    def _child(self, node: Node, step: str | int, depth: int = 0) -> Node:
        """The node one step inside ``node``: a member name (str) or an item index (int)."""
        if isinstance(node, bool):
            return True
        child = node.children.get(step)
        if child is None:
            child = self._compute_child(node, step, depth)
            if self._remember():
                node.children[step] = child
        return child

    def _compute_child(self, node: _Node, step: str | int, depth: int) -> Node:
        if depth > _NODE_DEPTH:
            return True
        self._spend()
        if isinstance(node, _Merged):
            return _merge(node.every, [self._child(part, step, depth + 1) for part in node.parts])
        assert isinstance(node, _At)
        schema, scope = node.schema, node.scope
        parts: list[Node] = []
        if "$ref" in schema:
            parts.append(self._child(self._resolve(schema["$ref"], scope), step, depth + 1))
            if scope.draft <= jsonschema_rs.Draft7:
                return _merge(True, parts)
        if isinstance(step, str):
            parts.extend(self._own_members(schema, scope, step))
        else:
            parts.extend(self._own_items(schema, scope, step))
        container = "object" if isinstance(step, str) else "array"
        if isinstance(schema.get("allOf"), list):
            parts.extend(self._child(self._subschema(part, scope), step, depth + 1) for part in schema["allOf"])
        for keyword in ("anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                branches = [self._subschema(branch, scope) for branch in schema[keyword]]
                parts.append(
                    _merge(
                        False,
                        [
                            self._child(branch, step, depth + 1)
                            for branch in branches
                            if container in self.accepted(branch, depth + 1)
                        ],
                    )
                )
        return _merge(True, parts)

    def _pattern_set(self, patterns: Mapping[str, Any]) -> _PatternSet | None:
        cached = self._pattern_sets.get(id(patterns))
        if cached is not None and cached[0] is patterns:
            return cached[1]
        try:
            pattern_set: _PatternSet | None = _PatternSet(patterns)
        except Exception:  # the validator refused the schema already
            pattern_set = None
        self._pattern_sets[id(patterns)] = (patterns, pattern_set)
        return pattern_set

    def _own_members(self, schema: Mapping[str, Any], scope: _Scope, key: str) -> list[Node]:
        """What ``properties``, ``patternProperties`` and ``additionalProperties`` say of ``key``."""
        parts: list[Node] = []
        properties = schema.get("properties")
        matched = isinstance(properties, Mapping) and key in properties
        if matched:
            parts.append(self._subschema(properties[key], scope))  # type: ignore[index]
        patterns = schema.get("patternProperties")
        if isinstance(patterns, Mapping) and patterns:
            pattern_set = self._pattern_set(patterns)
            matching = pattern_set.matching(key) if pattern_set is not None else None
            if matching is None:
                return []  # cannot tell which schemas apply: constrain nothing
            parts.extend(self._subschema(patterns[pattern], scope) for pattern in matching)
            matched = matched or bool(matching)
        if _UNDECIDABLE_KEYS in schema:
            return []
        additional = schema.get("additionalProperties")
        if not matched and isinstance(additional, (Mapping, bool)):
            parts.append(self._subschema(additional, scope))
        return parts

    def _own_items(self, schema: Mapping[str, Any], scope: _Scope, index: int) -> list[Node]:
        """What ``prefixItems``/``items`` (or before 2020-12, array ``items``/``additionalItems``) say of ``index``."""
        items = schema.get("items")
        if scope.draft >= jsonschema_rs.Draft202012:
            prefix = schema.get("prefixItems")
        elif isinstance(items, list):
            prefix, items = items, schema.get("additionalItems")
        else:
            prefix = None
        if isinstance(prefix, list) and index < len(prefix):
            return [self._subschema(prefix[index], scope)]
        return [self._subschema(items, scope)] if isinstance(items, (Mapping, bool)) else []

    def _shape(self, node: Node) -> _Shape:
        """The property names ``node`` declares, across ``$ref`` and combinators, and its patterns."""
        if isinstance(node, bool):
            return _Shape(frozenset(), {}, [], False)
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
                if isinstance(current, _Merged):
                    stack.extend((part, depth + 1) for part in current.parts)
                    continue
                assert isinstance(current, _At)
                schema, scope = current.schema, current.scope
                if "$ref" in schema:
                    stack.append((self._resolve(schema["$ref"], scope), depth + 1))
                    if scope.draft <= jsonschema_rs.Draft7:
                        continue
                if isinstance(schema.get("properties"), Mapping):
                    declared.update(name for name in schema["properties"] if isinstance(name, str))
                patterns = schema.get("patternProperties")
                if isinstance(patterns, Mapping) and patterns:
                    pattern_set = self._pattern_set(patterns)
                    unknown = unknown or pattern_set is None
                    if pattern_set is not None:
                        pattern_sets.append(pattern_set)
                unknown = unknown or _UNDECIDABLE_KEYS in schema
                for keyword in ("allOf", "anyOf", "oneOf"):
                    if isinstance(schema.get(keyword), list):
                        stack.extend((self._subschema(part, scope), depth + 1) for part in schema[keyword])
            folded: dict[str, list[str]] = {}
            for name in sorted(declared):
                folded.setdefault(_fold(name), []).append(name)
            node.shape = _Shape(frozenset(declared), folded, pattern_sets, unknown)
        return node.shape

    # ---- changing values

    def _number(self, text: str, types: frozenset[str]) -> Any:
        trimmed = text.strip(_JSON_WHITESPACE)  # JSON allows whitespace around a number, and only that
        if len(trimmed) > MAX_DIGIT_STRING_LENGTH:
            return _MISSING
        if _INTEGER_TEXT.fullmatch(trimmed):  # leading zeros too: "007" is 7, as LenientInt reads it
            return int(trimmed)
        if not _JSON_NUMBER.fullmatch(trimmed):
            return _MISSING
        number = float(trimmed)
        if not math.isfinite(number):
            return _MISSING
        if "number" in types:
            return number
        return int(number) if number.is_integer() else _MISSING  # "5.5" stays, so the model sees its error

    def _structure(self, text: str, types: frozenset[str]) -> Any:
        if len(text) > self.max_text_length or text.lstrip(_JSON_WHITESPACE)[:1] not in ("[", "{"):
            return _MISSING
        try:
            parsed = from_json(text, allow_inf_nan=False)
        except Exception:  # not JSON, nested past the parser's limit, a lone surrogate
            return _MISSING
        return parsed if json_type(parsed) in types else _MISSING

    def _coerce(self, value: Any, types: frozenset[str]) -> tuple[Any, str] | None:
        """The value in a type ``types`` takes, and the kind of repair, or None."""
        if isinstance(value, str):
            if "boolean" in types and value in BOOLEAN_WORDS:
                return BOOLEAN_WORDS[value], "string_to_boolean"
            if "integer" in types:
                number = self._number(value, types)
                if number is not _MISSING:
                    return number, "string_to_number"
            if "array" in types or "object" in types:
                parsed = self._structure(value, types)
                if parsed is not _MISSING:
                    return parsed, "json_text_to_structure"
            return None
        if "string" in types and isinstance(value, (bool, int, float)):
            if isinstance(value, bool):
                return ("true" if value else "false"), "scalar_to_string"  # the JSON spelling
            if isinstance(value, float) and not math.isfinite(value):
                return None
            if isinstance(value, int) and value.bit_length() > _MAX_INTEGER_BITS:
                return None  # more digits than a number may have as text
            return repr(value), "scalar_to_string"
        return None

    def _renames(self, value: Mapping[Any, Any], node: Node) -> dict[str, str]:
        """Undeclared keys of ``value`` that name exactly one declared, unsent property in another case convention."""
        shape = self._shape(node)
        if not shape.folded or shape.unknown_patterns:
            return {}
        claims: dict[str, list[str]] = {}
        for key in value.keys() - shape.declared:
            if not isinstance(key, str):
                continue
            names = shape.folded.get(_fold(key))
            if names is None or len(names) != 1 or names[0] in value:
                continue
            if any(pattern_set.matching(key) != [] for pattern_set in shape.pattern_sets):
                continue  # a pattern claims the key (or may): it is declared after all
            claims.setdefault(names[0], []).append(key)
        return {keys[0]: name for name, keys in claims.items() if len(keys) == 1}

    def _walk(self, value: Any, node: Node, trail: list[Any], depth: int, repairs: list[dict[str, Any]]) -> Any:
        self._remaining -= 1
        if self._remaining < 0:
            raise _OverBudget
        if node is True or depth > self.max_depth:  # anything goes here and below, or deeper than repair goes
            return value if value.__class__ in _SCALARS else _copy_containers(value, self.max_depth - depth)
        types = node.types if isinstance(node, _Node) and node.types is not None else self.accepted(node)
        if (_JSON_TYPES.get(value.__class__) or json_type(value)) not in types:
            coerced = self._coerce(value, types)
            if coerced is not None:
                after, kind = coerced
                repairs.append({"path": _pointer(trail), "from": value, "to": after, "kind": kind})
                value = after
        if value.__class__ in _SCALARS:
            return value
        children = node.children if isinstance(node, _Node) else {}
        if value.__class__ is dict or isinstance(value, Mapping):
            renames = self._renames(value, node)
            result = {}
            for key, item in value.items():
                name = renames.get(key, key) if renames else key
                if name != key:
                    repairs.append({"path": _pointer([*trail, key]), "from": key, "to": name, "kind": "renamed_key"})
                step = name if name.__class__ is str else str(name)
                child = children.get(step)
                trail.append(name)
                result[name] = self._walk(
                    item, self._child(node, step) if child is None else child, trail, depth + 1, repairs
                )
                trail.pop()
            return result
        if isinstance(value, (list, tuple)):
            items = []
            for index, item in enumerate(value):
                child = children.get(index)
                trail.append(index)
                items.append(
                    self._walk(item, self._child(node, index) if child is None else child, trail, depth + 1, repairs)
                )
                trail.pop()
            return items
        return value

    # ---- deciding

    def verdict(self, arguments: Any) -> tuple[bool, tuple[Reason, ...]]:
        """Whether ``arguments`` validate, and if not, why; False wherever the validator cannot decide
        (a schema it cannot compile, arguments nested too deep or holding what JSON cannot)."""
        problem = self._problem(arguments)
        if problem is None:
            return True, ()
        return False, problem or self._reasons(arguments)

    def _problem(self, arguments: Any) -> tuple[Reason, ...] | None:
        """None when ``arguments`` validate; else why not, or ``()`` when the validator's messages say why."""
        if self._validator is None:
            return (Reason(path="", message=f"the schema cannot be used: {self.schema_error}"),)
        with self._walking:
            too_costly = self._too_costly(arguments)
        if too_costly is not None:
            return (Reason(path="", message=too_costly),)
        try:
            return None if self._validator.is_valid(arguments) else ()
        except Exception as error:  # a lone surrogate, a key that is no string, a value that is not JSON
            return (Reason(path="", message=f"the arguments cannot be validated: {error}"),)

    def _reasons(self, arguments: Any) -> tuple[Reason, ...]:
        reasons = []
        try:
            for error in self._validator.iter_errors(arguments) if self._validator is not None else ():
                reasons.append(Reason(path=_pointer(error.instance_path), message=self._message(error)))
                if len(reasons) >= self.max_reasons:
                    break
        except Exception as error:  # the same odd arguments, met only while describing an error
            reasons.append(Reason(path="", message=f"the arguments cannot be validated: {error}"))
        return tuple(reasons) or (Reason(path="", message="the validator refuses the arguments"),)

    def _message(self, error: jsonschema_rs.ValidationError) -> str:
        """The validator's message, naming a pattern as the schema wrote it rather than rewritten."""
        message = error.message
        if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Pattern):
            rewritten = error.kind.pattern
            original = self._originals.get(rewritten)
            if original is not None and message.endswith(f'"{rewritten}"'):
                return f'{message[: -len(rewritten) - 2]}"{original}"'
        return message

    def error_details(self, arguments: Any) -> list[ErrorDetails]:
        """The validator's errors for ``arguments`` in pydantic's shape (``type``, ``loc``, ``msg``,
        ``input``), so that `pydantic_lenient.observe.outcomes.field_failures` records them as it records a
        pydantic refusal: a ``type`` error is named as pydantic names it (``int_type``,
        ``bool_type``...), a required property is ``missing`` at its name, each undeclared one
        ``extra_forbidden``, and any other keyword is its own name (``minimum``, ``enum``).
        Empty when the arguments validate, or when the validator cannot say why (the schema cannot be
        used, the arguments cost too much or hold what JSON cannot); at most ``max_reasons``.

        >>> from pydantic_lenient.repair.engine import Repairer
        >>> schema = {"properties": {"limit": {"type": "integer"}}, "required": ["query"]}
        >>> [(e["type"], e["loc"]) for e in Repairer(schema).error_details({"limit": "many"})]
        [('missing', ('query',)), ('int_type', ('limit',))]
        """
        if self._validator is None or self._problem(arguments) != ():
            return []
        details: list[ErrorDetails] = []
        try:
            for error in self._validator.iter_errors(arguments):
                details.extend(_details(error, self._message(error)))
                if len(details) >= self.max_reasons:
                    break
        except Exception:  # the same odd arguments, met only while describing an error
            return details
        return details[: self.max_reasons]

    def is_valid(self, arguments: Any) -> bool:
        """Whether ``arguments`` validate (False where the validator cannot decide)."""
        return self.verdict(arguments)[0]

    def repair(self, arguments: Any) -> RepairResult:
        """Repair ``arguments`` (see the module docs). Never raises."""
        problem = self._problem(arguments)
        if problem is None:
            return RepairResult(_copy_containers(arguments, self.max_depth), [], True)
        if self._validator is None:  # a schema that cannot be used decides nothing, repairs included
            return RepairResult(_copy_containers(arguments, self.max_depth), [], False, problem)
        repairs: list[dict[str, Any]] = []
        with self._walking:
            self._remaining = self.budget
            try:
                repaired = self._walk(arguments, self._root, [], 0, repairs)
            except Exception:  # over budget, or something odd in the arguments: change nothing
                repaired, repairs = _copy_containers(arguments, self.max_depth), []
        if not repairs:
            return RepairResult(repaired, repairs, False, problem or self._reasons(arguments))
        logger.info(
            "repaired %d argument(s): %s",
            len(repairs),
            ", ".join(repair["path"] for repair in repairs),
            extra={"repairs": repairs},
        )
        return RepairResult(repaired, repairs, *self.verdict(repaired))


# pydantic's error type for a value that is not of a JSON type, so both kinds of refusal form one pattern.
_TYPE_ERRORS = {
    "integer": "int_type",
    "number": "float_type",
    "boolean": "bool_type",
    "string": "string_type",
    "array": "list_type",
    "object": "dict_type",
    "null": "none_required",
}


def _details(error: jsonschema_rs.ValidationError, message: str) -> list[ErrorDetails]:
    """One validator error as pydantic-shaped details (one per name for required and undeclared names)."""
    kind, location = error.kind, tuple(error.instance_path)
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required) and isinstance(kind.property, str):
        return [ErrorDetails(type="missing", loc=(*location, kind.property), msg=message, input=error.instance)]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties) and isinstance(error.instance, dict):
        return [
            ErrorDetails(type="extra_forbidden", loc=(*location, name), msg=message, input=error.instance.get(name))
            for name in kind.unexpected
            if isinstance(name, str)
        ]
    error_type = kind.name
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Type):
        named = [_TYPE_ERRORS[name] for name in kind.types if name in _TYPE_ERRORS and name != "null"]
        error_type = named[0] if len(named) == 1 else "type"
    elif error_type in _KEYWORDS or error_type == "custom":
        error_type = "pattern"  # a pattern checked by one of the stand-ins
    return [ErrorDetails(type=error_type, loc=location, msg=message, input=error.instance)]


def _merge(every: bool, parts: list[Node]) -> Node:
    """Schemas that all apply (``every``) or of which any may be meant, simplified where that is exact."""
    if every:
        parts = [part for part in parts if part is not True]
        if any(part is False for part in parts):
            return False
        if not parts:
            return True
    elif not parts or any(part is True for part in parts):
        return True  # no branch takes the container, or one takes anything: assume nothing
    return parts[0] if len(parts) == 1 else _Merged(every, tuple(parts))


def _copy_containers(value: Any, depth: int) -> Any:
    """A copy of the containers the walk would rebuild (as deep as it goes), changing nothing."""
    if depth < 0 or value.__class__ in _SCALARS:
        return value
    if value.__class__ is dict or isinstance(value, Mapping):
        return {key: _copy_containers(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_containers(item, depth - 1) for item in value]
    return value


def repair_arguments(schema: Mapping[str, Any] | bool, arguments: Any, *, draft: Draft | None = None) -> RepairResult:
    """Repair ``arguments`` against ``schema``; see the module docs for what changes, and when.

    Builds a `Repairer` each time; keep one per schema to repair many calls.


    >>> from pydantic_lenient.repair.engine import repair_arguments
    >>> schema = {"type": "object", "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}}}
    >>> repair_arguments(schema, {"limit": "10", "query": 42}).arguments
    {'limit': 10, 'query': '42'}
    >>> repair_arguments(schema, {"limit": "5.5"})  # an integer location takes integral values only
    RepairResult(arguments={'limit': '5.5'}, repairs=[], valid=False,
                 reasons=({'path': '/limit', 'message': '"5.5" is not of type "integer"'},))
    """
    return Repairer(schema, draft=draft).repair(arguments)
