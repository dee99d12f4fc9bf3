"""Widen any JSON schema so a host lets through the wrong-typed values repair can fix.

`widen_schema(schema, style)` is what the ``proxy`` command advertises for a server's tools: at
every location where `pydantic_lenient.repair.engine` would turn a string into another type, the widened
schema also admits that string, written as the lenient scalar types write it:

| the location takes | it also admits |
|---|---|
| integers (not strings) | a string matching ``^-?[0-9]+$`` (`LenientInt`'s pattern) within the node's bounds |
| numbers (not strings) | a string in JSON number syntax (`LenientFloat`'s pattern) |
| booleans (not strings) | ``"true"`` / ``"false"`` in any ASCII case (`StrictBoolish`'s pattern) |
| arrays or objects (not strings) | a string marked ``contentMediaType: application/json`` |
| null (not the string ``"null"``) | ``"null"`` (the one ``"null"`` policy, `NULL_TEXT`), joined to a sibling pattern |

A location's types are read by the reader repair reads them with (`pydantic_lenient.schema.locations`:
``type``, ``enum``, ``const``, local ``$ref`` (overriding its siblings in draft-07 and before),
``allOf`` as the intersection, ``anyOf``/``oneOf`` as the union), across every subschema that
applies there, so a location that already takes strings is never widened: repair leaves its
strings alone. Keywords repair does not read (``not``, ``if``/``then``/``else``, ``contains``, ...)
are left as they are, and so are embedded resources (a subschema with its own ``$id``) and the
properties mirrored into HTTP headers (``x-mcp-header``, with every property on the way to them:
`pydantic_lenient.schema.mcp_headers`); repair still fixes their values. The root
stays an object schema, and no ``$ref`` target moves: a location that a JSON pointer elsewhere
points at (``#/properties/a``) is left as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic_lenient.types.boolean_text import TRUE_OR_FALSE
from pydantic_lenient.types.forms import JSON_NUMBER, NULL_TEXT, SIGNED_DIGITS, pattern_with_null, split_annotations

from .locations import (
    DRAFT_2020_12,
    DRAFTS,
    NULL_STRING,
    Allowance,
    Draft,
    LocationReader,
    Node,
    OverBudget,
    Scope,
    ScopedSchema,
    declared_draft,
    pointer_tokens,
)
from .mcp_headers import header_properties
from .styles import DEFAULT_STYLE, Style, _inclusive_integer_bounds, apply_style

__all__ = ("widen_schema",)

_STRUCTURES = frozenset({"array", "object"})
# JSON text repair parses: after JSON whitespace, the bracket that opens an array or an object, or
# that text stringified once more: a JSON string whose content (after its own whitespace, escaped
# or not) opens with the bracket, escaped or not.
_QUOTED = r'"(?: |\\[tnr]|\\u00(?:20|09|0[aAdD]))*'
_JSON_TEXT = {
    opening: rf"^[ \t\n\r]*(?:{bracket}|{_QUOTED}(?:{bracket}|{escaped}))"
    for opening, bracket, escaped in (
        ("[", r"\[", r"\\u005[bB]"),
        ("{", r"\{", r"\\u007[bB]"),
        ("[{", r"[[{]", r"\\u00(?:5[bB]|7[bB])"),
    )
}
_MAX_DEPTH = 64
_BUDGET = 200_000  # schema nodes one widening may visit; past it, the schema is returned unchanged
# Regex work counts in the same budget, in node visits of about the same time (a few µs each):
# translating and compiling a pattern (once per widening) costs 25, matching one key against one
# (and telling a mismatch from the engine's backtracking limit) 4, more for long keys and patterns.
# 200 properties against 5,000 patterns is then refused in well under a second, not widened in 100 s.
_COMPILE_COST = 25
_MATCH_COST = 4
_MATCH_CHARACTERS = 256  # one more unit per this many characters of key and pattern
_DEFINITIONS = ("$defs", "definitions")
# Keywords whose subschemas repair does not read: copied as they are.
_OPAQUE = frozenset(
    {"not", "if", "then", "else", "contains", "propertyNames", "dependentSchemas", "dependencies", "contentSchema"}
    | {"unevaluatedItems", "unevaluatedProperties"}
)


class _Reader(LocationReader):
    """The locations of one schema, read by the rules repair reads them with (`LocationReader`):
    ``$ref`` as a local JSON pointer (nothing else is followed), patterns on the bounded ECMA-262
    engine, and an embedded resource (a subschema with its own ``$id``, which widening leaves as it
    is) as admitting anything. Compiling and matching patterns spend the widening's allowance."""

    def __init__(self, root: Any, draft: int) -> None:
        super().__init__(Allowance(_BUDGET))
        self.root = root
        self.scope = Scope("#", draft)
        self._located: dict[int, tuple[Any, Node]] = {}
        self._references: dict[str, Node] = {}
        self._matchers: dict[str, Any] = {}  # each pattern's check, compiled once per widening

    def spend(self, cost: int = 1) -> None:
        self._spend(cost)

    def locate(self, schema: Any) -> Node:
        """The node of one subschema (True for what is not a schema, or an embedded resource)."""
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, Mapping):
            return True
        cached = self._located.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        node: Node = True if schema is not self.root and "$id" in schema else ScopedSchema(schema, self.scope)
        self._located[id(schema)] = (schema, node)
        return node

    def subschema(self, schema: Any, scope: Scope) -> Node:
        return self.locate(schema)

    def resolve(self, reference: Any, scope: Scope) -> Node:
        """A local JSON pointer; anything else constrains nothing (it is never fetched)."""
        if not isinstance(reference, str) or not reference.startswith("#"):
            return True
        if reference not in self._references:
            node: Any = self.root
            for token in pointer_tokens(reference) or ():
                if isinstance(node, Mapping) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isascii() and token.isdecimal() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    node = True
                    break
            self._references[reference] = self.locate(node)
        return self._references[reference]

    def matching_patterns(self, schema: Mapping[str, Any], key: str) -> list[str] | None:
        """The patterns matching ``key``, on repair's bounded engine; None when that cannot be decided
        (a pattern that is not ECMA-262 or not checkable within bounds, the backtracking limit).
        Compiling and matching are spent from the budget."""
        patterns = schema.get("patternProperties")
        if not isinstance(patterns, Mapping):
            return []
        matching = []
        for pattern in patterns:
            check = self._matcher(pattern)
            if check is None:
                return None
            self._spend(_MATCH_COST + (len(key) + len(pattern)) // _MATCH_CHARACTERS)
            try:
                if check.is_valid(key):
                    matching.append(pattern)
                    continue
                errors = list(check.iter_errors(key))
            except Exception:  # a key the engine cannot take (a lone surrogate)
                return None
            if not errors or any("Error executing regex" in error.message for error in errors):
                return None
        return matching

    def _matcher(self, pattern: Any) -> Any:
        """The compiled check of ``pattern`` (None when it has none), spending its compilation once."""
        from .ecma_regex import matcher, translate

        if not isinstance(pattern, str):
            return None
        if pattern not in self._matchers:
            self._spend(_COMPILE_COST + len(pattern) // _MATCH_CHARACTERS)
            translation = translate(pattern)
            self._matchers[pattern] = None if translation.pattern is None else matcher(translation.pattern)
        return self._matchers[pattern]

    def types(self, schema: Any) -> frozenset[str]:
        """What a value at one subschema (not the whole location) may be."""
        return self.accepted(self.locate(schema))


_NULL_FORM = {"type": "string", "const": NULL_TEXT}


def _alternatives(location: frozenset[str] | None, here: frozenset[str]) -> list[dict[str, Any]]:
    """The string forms repair turns into a type that both the location and this part take."""
    if location is None:
        return []
    both = location & here
    forms: list[dict[str, Any]] = []
    if "string" not in location:
        if "integer" in both:
            number = "number" in location and "number" in here
            forms.append({"type": "string", "pattern": JSON_NUMBER if number else SIGNED_DIGITS})
        if "boolean" in both:
            forms.append({"type": "string", "pattern": TRUE_OR_FALSE})
        if both & _STRUCTURES:
            opening = "[{" if both >= _STRUCTURES else "[" if "array" in both else "{"
            forms.append({"type": "string", "pattern": _JSON_TEXT[opening], "contentMediaType": "application/json"})
    if "null" in both and NULL_STRING not in location:  # the one "null" policy (types/forms.py NULL_TEXT)
        forms.append(dict(_NULL_FORM))
    return forms


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _within_bounds(node: Mapping[str, Any], forms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The digit form narrowed to the integers the node's own bounds admit (leading zeros included,
    as repair reads them), so that a host refuses the digit strings whose value the validator refuses."""
    bounds = {key: node[key] for key in _BOUNDS if key in node}
    if not bounds or any(isinstance(bound, bool) for bound in bounds.values()):  # draft-04's flags: unread
        return forms
    narrowed = []
    for form in forms:
        if set(form) == {"type", "pattern"} and form["pattern"] == SIGNED_DIGITS:
            _, form = _inclusive_integer_bounds({"type": "integer", **bounds}, form)
        narrowed.append(form)
    return narrowed


def _with_null_joined(branches: list[Any]) -> list[Any]:
    """Alternatives with the ``"null"`` form joined into a sibling scalar string form, as the lenient
    types write it (``^(?:-?[0-9]+|null)$``, `pattern_with_null`), so the type-array style can
    flatten them; unchanged without such a sibling."""
    if _NULL_FORM not in branches:
        return branches
    for branch in branches:
        if not isinstance(branch, dict) or branch.get("type") != "string":
            continue
        joined: dict[str, Any]
        if set(branch) == {"type", "pattern"} and isinstance(branch["pattern"], str):
            joined = {"type": "string", "pattern": pattern_with_null(branch["pattern"])}
        elif set(branch) == {"type", "enum"} and isinstance(branch["enum"], list):
            joined = {"type": "string", "enum": [*branch["enum"], NULL_TEXT]}
        else:
            continue
        rest = [other for other in branches if other != _NULL_FORM]
        return [joined if other is branch else other for other in rest]
    return branches


def _listed_by_every_branch(branches: list[Any]) -> dict[str, Any]:
    """``{"enum": [...]}`` with every value the branches list, when each branch is an ``enum`` or a
    ``const`` (so the whole ``oneOf`` admits only their spellings), else ``{}``."""
    listed: list[Any] = []
    for branch in branches:
        if isinstance(branch, Mapping) and "const" in branch:
            listed.append(branch["const"])
        elif isinstance(branch, Mapping) and isinstance(branch.get("enum"), list):
            listed.extend(branch["enum"])
        else:
            return {}
    return {"enum": listed}


def _spelling_only_listed_values(node: Mapping[str, Any], forms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At an ``enum`` or ``const``, a number or boolean string form admits only the listed values'
    spellings: a pattern for every number would let ``"0"`` match ``{"enum": [1]}`` on the host, where
    repair's ``0`` does not (and inside ``oneOf`` would match two branches instead of one)."""
    if "const" in node:
        listed: list[Any] = [node["const"]]
    elif isinstance(node.get("enum"), list):
        listed = node["enum"]
    else:
        return forms
    numbers = [value for value in listed if isinstance(value, (int, float)) and not isinstance(value, bool)]
    spelled = (_number_spelling(value) for value in numbers)
    spellings = sorted({spelling for spelling in spelled if spelling is not None})
    words = sorted({"true" if value else "false" for value in listed if isinstance(value, bool)})
    kept: list[dict[str, Any]] = []
    for form in forms:
        if form.get("pattern") in (JSON_NUMBER, SIGNED_DIGITS):
            if spellings:
                kept.append({"type": "string", "enum": spellings})
        elif form.get("pattern") == TRUE_OR_FALSE:
            if words:
                kept.append({"type": "string", "pattern": _any_case(words)})
        else:
            kept.append(form)
    return kept


def _number_spelling(value: float) -> str | None:
    """How repair's reading of a number string gives back ``value``: ``"1"`` for 1 and 1.0; None
    for what no string repair reads can reach (NaN, infinities, an integer past Python's 4,300
    digits)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) or value.is_integer():
        try:
            return str(int(value))
        except ValueError:
            return None
    return repr(value)


def _any_case(words: list[str]) -> str:
    """``^(?:[Tt][Rr][Uu][Ee])$``: the words in any ASCII letter case, as TRUE_OR_FALSE spells them."""
    spelled = ("".join(f"[{letter.upper()}{letter}]" for letter in word) for word in words)
    return "^(?:" + "|".join(spelled) + ")$"


# Keywords at a node's own level that can refuse a string (its combinators are widened branch by branch).
_REFUSES_STRINGS = frozenset(
    {"type", "enum", "const", "$ref", "pattern", "minLength", "maxLength", "not", "if", "then", "else"}
)


class _Widener:
    def __init__(self, root: Any, draft: int) -> None:
        self.reader = _Reader(root, draft)
        self.root = root
        self.pinned = self._pinned_nodes(root)
        # x-mcp-header properties and the schemas on the way to them keep the spec's shape (`mcp_headers`).
        self.headers = header_properties(root)

    def _pinned_nodes(self, root: Any) -> set[int]:
        """Nodes a local ``$ref`` points at or into, and their ancestors: they must not move."""
        pinned: set[int] = set()
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.reader.spend()
            if isinstance(node, Mapping):
                tokens = pointer_tokens(node["$ref"]) if isinstance(node.get("$ref"), str) else None
                if tokens:
                    target: Any = root
                    for token in tokens:
                        pinned.add(id(target))
                        if isinstance(target, Mapping) and token in target:
                            target = target[token]
                        elif (
                            isinstance(target, list)
                            and token.isascii()
                            and token.isdecimal()
                            and int(token) < len(target)
                        ):
                            target = target[int(token)]
                        else:
                            break
                    else:
                        pinned.add(id(target))
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return pinned

    def widen(self) -> Any:
        if not isinstance(self.root, Mapping):
            return self.root
        return self.node(self.root, None, self.reader.locate(self.root), 0)

    def node(self, node: Any, location: frozenset[str] | None, part: Node, depth: int) -> Any:
        """``node`` (one of the subschemas that apply at a location), widened; ``location`` is
        what the whole location takes (None: add no string forms here), ``part`` all that applies."""
        if not isinstance(node, Mapping) or (depth and "$id" in node):
            return node  # an embedded resource: its references resolve against its own $id, unread here
        if id(node) in self.headers.marked:
            return dict(node)  # mirrored into an HTTP header: the spec's shape, as the server wrote it
        if depth > _MAX_DEPTH:
            raise OverBudget
        self.reader.spend()
        one_of = node.get("oneOf")
        # A oneOf is widened as a whole: a string form on each branch would lose what tells the
        # branches apart (a bound, another branch taking strings), so a string could match two
        # branches where repair's value matches one.
        own_forms = not _REFUSES_STRINGS.isdisjoint(node) or isinstance(one_of, list)
        forms = _alternatives(location, self.reader.types(node)) if own_forms else []
        forms = _spelling_only_listed_values(node, forms)
        if isinstance(one_of, list):
            forms = _spelling_only_listed_values(_listed_by_every_branch(one_of), forms)
        forms = _with_null_joined(_within_bounds(node, forms))
        wrapped = bool(forms) and id(node) not in self.pinned and id(node) not in self.headers.chain
        inner_location = None if wrapped else location
        result: dict[str, Any] = {}
        for key, value in node.items():
            result[key] = self._keyword(node, key, value, inner_location, part, depth)
        if not wrapped:
            return result
        core, annotations = split_annotations(result)
        return {"anyOf": [core, *forms], **annotations}

    def _keyword(
        self, node: Mapping[str, Any], key: str, value: Any, location: frozenset[str] | None, part: Node, depth: int
    ) -> Any:
        if key in _OPAQUE:
            return value
        if key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            branches = [self.node(branch, location, part, depth + 1) for branch in value]
            if key == "anyOf" and id(node) not in self.pinned:
                branches = _with_null_joined([inner for branch in branches for inner in _spliced(branch)])
            return branches
        if key in _DEFINITIONS and isinstance(value, Mapping):
            return {
                name: self.node(schema, None, self.reader.locate(schema), depth + 1) for name, schema in value.items()
            }
        if key in ("properties", "patternProperties") and isinstance(value, Mapping):
            return {
                name: self._member(schema, part, name if key == "properties" else None, depth)
                for name, schema in value.items()
            }
        if key == "additionalProperties":
            return self._member(value, part, None, depth)
        if key == "prefixItems" and isinstance(value, list):
            return [self._item(schema, part, index, depth) for index, schema in enumerate(value)]
        if key == "items" and isinstance(value, list):  # draft-07 tuple form
            return [self._item(schema, part, index, depth) for index, schema in enumerate(value)]
        if key == "items":
            prefix = node.get("prefixItems")
            return self._item(value, part, len(prefix) if isinstance(prefix, list) else 0, depth)
        if key == "additionalItems":
            items = node.get("items")
            return self._item(value, part, len(items) if isinstance(items, list) else 0, depth)
        return value

    def _member(self, schema: Any, part: Node, name: str | None, depth: int) -> Any:
        # A member reached through patternProperties or additionalProperties has no one name: its
        # location is read from the schema alone.
        child = self.reader.child(part, name) if name is not None else self.reader.locate(schema)
        return self.node(schema, self.reader.accepted(child), child, depth + 1)

    def _item(self, schema: Any, part: Node, index: int, depth: int) -> Any:
        child = self.reader.child(part, index)
        return self.node(schema, self.reader.accepted(child), child, depth + 1)


def _spliced(branch: Any) -> list[Any]:
    """A wrapper that says nothing but ``anyOf`` joins its parent's ``anyOf``."""
    if isinstance(branch, dict) and set(branch) == {"anyOf"} and isinstance(branch["anyOf"], list):
        return list(branch["anyOf"])
    return [branch]


def _moves_nothing_referenced(schema: Any) -> bool:
    """Whether every local ``$ref`` points at the root or at a ``$defs``/``definitions`` entry."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            reference = node.get("$ref")
            if isinstance(reference, str):
                tokens = pointer_tokens(reference)
                if tokens and not (len(tokens) == 2 and tokens[0] in _DEFINITIONS):
                    return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def widen_schema(schema: Any, style: Style = DEFAULT_STYLE, *, draft: Draft | None = None) -> Any:
    """``schema`` widened to admit the string forms repair fixes (see the module docs); a new object.

    ``style`` is how the string forms are written: ``"any-of"`` as extra ``anyOf`` branches,
    ``"portable"`` (the default) as ``"any-of"`` adapted for every profiled host
    (`pydantic_lenient.schema.portable`), ``"type-array"`` flattened into type arrays where that means
    the same, and ``"strict"`` not at all (the schema comes back as it was, for hosts that repair
    themselves).
    A schema too large or deep to read within the widening's bounds also comes back as it was.
    ``draft`` is the dialect, as `Repairer` reads it: by default the one the schema's ``$schema``
    names, else 2020-12.

    >>> widen_schema({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 0}}}, "type-array")
    {'type': 'object', 'properties': {'limit': {'type': ['integer', 'string'], 'minimum': 0,
     'pattern': '^(?:0*(?:0|[1-9][0-9]*)|-0+)$'}}}
    """
    if style == "strict":
        return schema
    if style not in ("type-array", "any-of", "portable"):
        raise ValueError(f"unknown style {style!r}; expected one of portable, type-array, any-of, strict")
    if draft is not None and draft not in DRAFTS:
        raise ValueError(f"draft {draft!r} is not one of {', '.join(DRAFTS)}")
    declared = schema.get("$schema") if isinstance(schema, Mapping) else None
    number = DRAFTS[draft] if draft is not None else declared_draft(declared) or DRAFT_2020_12
    try:
        widened = _Widener(schema, number).widen()
    except (OverBudget, RecursionError):
        return schema
    if style in ("type-array", "portable") and isinstance(widened, dict) and _moves_nothing_referenced(widened):
        try:
            return apply_style(widened, style)
        except RecursionError:  # a keyword copied as it is (``not``) nests too deep to restyle
            return schema
    return widened
