"""Where a tool schema goes: MCP hosts, or a model provider's function calling, each in its own shape.

A target is a JSON Schema draft, a style (`pydantic_lenient.schema.styles`) and a post-transform
for what that consumer can read. Each is checked against the consumer's own code (see the tests):

* ``"mcp"``: MCP hosts, JSON Schema 2020-12 (MCP's default dialect). The style as given; nothing else
  changes.
* ``"mcp-draft-07"``: MCP hosts that validate with draft-07 (the MCP TypeScript SDK's Ajv). Tuples
  use draft-07's array ``items`` with ``additionalItems`` (a draft-07 host ignores ``prefixItems``,
  and would let ``["x", 5]`` through for a ``tuple[int, str]``), ``$defs`` become ``definitions``,
  and ``$schema`` says draft-07.
* ``"openai"``: OpenAI strict function calling. ``anyOf`` instead of type arrays, every object
  closed (``additionalProperties: false``) with every property required, no ``default``.
* ``"anthropic"``: Anthropic tools, including strict tool use: the subset the Anthropic SDK's
  ``transform_schema`` keeps (``anyOf``, no numeric or string constraints). Constraints it cannot
  carry are written into the description.
* ``"gemini"``: Google Gemini function declarations, as a schema that is valid both as the SDK's
  ``JSONSchema`` (``parameters_json_schema``, ``Schema.from_json_schema``) and as its OpenAPI
  ``Schema`` (``parameters``): ``anyOf`` instead of type arrays, ``$ref``s inlined, no
  ``prefixItems``, ``const``, ``oneOf``, exclusive bounds or content keywords.

Where a provider cannot express a form, the target writes the closest shape that admits no value
the validator refuses (a property the model must send, a closed object) or, for a constraint it
cannot carry (a ``pattern`` for Anthropic, a tuple's positions), drops the constraint and says so
in the schema's ``description``. Every such change is a `Loss` in `TargetSchema.losses`.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from .styles import Style, apply_style
from .subschemas import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, map_subschemas

__all__ = ("DRAFT_07", "TARGETS", "Loss", "Target", "TargetSchema", "input_schema", "target_schema", "to_target")

Target = Literal["mcp", "mcp-draft-07", "openai", "anthropic", "gemini"]
"""Where an input schema goes: an MCP host (2020-12 or draft-07) or a model provider's tool API.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import Target
>>> TypeAdapter(Target).validate_python("openai")
'openai'
"""

TARGETS: tuple[Target, ...] = get_args(Target)
"""Every `Target`, the default first.

>>> from pydantic_lenient import TARGETS
>>> TARGETS
('mcp', 'mcp-draft-07', 'openai', 'anthropic', 'gemini')
"""

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


@dataclass(frozen=True)
class Loss:
    """One thing a target could not say as the validator means it.

    ``location`` is a JSON pointer into the target's schema; ``what`` says what changed and what a
    host now admits or refuses that the validator does not.
    """

    location: str
    what: str


@dataclass(frozen=True)
class TargetSchema:
    """A tool's input schema for one target, and what the target had to give up.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, target_schema
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> result = target_schema(Page, "mcp")
    >>> result.target, result.schema["properties"]["size"], result.losses
    ('mcp', {'type': ['integer', 'string'], 'minimum': 0, 'pattern': '^[0-9]+$', 'title': 'Size'}, ())
    """

    target: Target
    schema: dict[str, Any]
    losses: tuple[Loss, ...] = ()


def target_schema(model: type[BaseModel], target: Target, *, style: Style = "type-array") -> TargetSchema:
    """The input schema of ``model`` for ``target``, with its losses.

    ``style`` is the style the target starts from: ``"strict"`` gives canonical types only (the
    provider then holds the model to them), the others the widened forms in the target's shape.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, target_schema
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> target_schema(Page, "openai").schema["properties"]["size"]  # providers read no type arrays
    {'anyOf': [{'type': 'integer', 'minimum': 0}, {'type': 'string', 'pattern': '^[0-9]+$'}], 'title': 'Size'}
    >>> target_schema(Page, "gpt")
    Traceback (most recent call last):
      ...
    ValueError: unknown target 'gpt'; expected one of mcp, mcp-draft-07, openai, anthropic, gemini
    """
    return to_target(input_schema(model, style=style), target)


def to_target(schema: Mapping[str, Any], target: Target) -> TargetSchema:
    """Rewrite a finished input schema (any style, an object at its root) for ``target``.

    >>> from pydantic_lenient import to_target
    >>> schema = {"type": "object", "properties": {"n": {"type": ["integer", "string"], "pattern": "^[0-9]+$"}}}
    >>> to_target(schema, "mcp-draft-07").schema["$schema"]
    'http://json-schema.org/draft-07/schema#'
    """
    try:
        rewrite = _REWRITES[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(TARGETS)}") from None
    _check_depth(schema)
    losses: list[Loss] = []
    # Providers read no type arrays: they start from the any-of style (which admits the same values).
    start = dict(schema) if target in ("mcp", "mcp-draft-07") else _without_content(apply_style(dict(schema), "any-of"))
    result = rewrite(copy.deepcopy(start), losses)
    return TargetSchema(target, result, tuple(losses))


# --- walking a schema with the location of each node -------------------------------------------

Node = Any  # a dict, or a boolean schema
Visit = Callable[[dict[str, Any], str], Node]


def _pointer_part(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _children(schema: dict[str, Any], location: str) -> Iterator[tuple[str, Any, str]]:
    """(keyword, child, location) for every subschema container of ``schema``."""
    for key, value in schema.items():
        if key in SCHEMA_KEYWORDS | SCHEMA_LIST_KEYWORDS | SCHEMA_MAP_KEYWORDS:
            yield key, value, f"{location}/{_pointer_part(key)}"


# Schemas can come from servers we do not own: nesting deeper than this is refused, not recursed into.
MAX_DEPTH = 200


def _check_depth(schema: Any) -> None:
    """Refuse nesting deeper than `MAX_DEPTH` before anything recurses into it (iteratively)."""
    pending: list[tuple[Any, int]] = [(schema, 0)]
    while pending:
        node, depth = pending.pop()
        if depth > 2 * MAX_DEPTH:  # a schema level is a keyword and its value: two container levels
            raise ValueError(f"the schema nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            pending.extend((child, depth + 1) for child in node.values() if isinstance(child, (dict, list)))
        elif isinstance(node, list):
            pending.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))


def _bottom_up(node: Node, location: str, visit: Visit, depth: int = 0) -> Node:
    """Apply ``visit(node, location)`` to every schema in the tree, children first."""
    if not isinstance(node, dict):
        return node
    if depth > MAX_DEPTH:
        raise ValueError(f"the schema nests deeper than {MAX_DEPTH} levels at {location}")
    result = dict(node)
    deeper = depth + 1
    for key, value, here in _children(node, location):
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            result[key] = {
                name: _bottom_up(item, f"{here}/{_pointer_part(name)}", visit, deeper) for name, item in value.items()
            }
        elif key in SCHEMA_KEYWORDS | SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            result[key] = [_bottom_up(item, f"{here}/{index}", visit, deeper) for index, item in enumerate(value)]
        elif key in SCHEMA_KEYWORDS and isinstance(value, (dict, bool)):
            result[key] = _bottom_up(value, here, visit, deeper)
    return visit(result, location)


def _describe(node: dict[str, Any], text: str) -> None:
    """Add ``text`` to the node's description, so the model still reads what the schema cannot say."""
    current = node.get("description")
    node["description"] = f"{current} ({text})" if isinstance(current, str) and current else text


def _move_to_description(
    node: dict[str, Any], keywords: Iterable[str], location: str, losses: list[Loss], why: str
) -> None:
    moved = [key for key in keywords if key in node]
    if not moved:
        return
    text = "; ".join(f"{key}: {json.dumps(node[key], ensure_ascii=False, sort_keys=True)}" for key in moved)
    for key in moved:
        del node[key]
    _describe(node, text)
    constraints = [key for key in moved if key not in _ANNOTATIONS]
    if constraints:
        losses.append(Loss(location, f"{', '.join(constraints)} moved into the description: {why}"))


# Keywords that constrain nothing: moving one into the description changes no verdict.
_ANNOTATIONS = frozenset({"default", "examples", "title", "$comment", "deprecated", "readOnly", "writeOnly"})


# --- the MCP targets ------------------------------------------------------------------------------


def _mcp(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    return schema


def _mcp_draft_07(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    # $defs become draft-07's definitions, unless the schema has both (then its refs stay as they are).
    renaming = "$defs" in schema and "definitions" not in schema

    def visit(node: dict[str, Any], location: str) -> Node:
        prefix = node.pop("prefixItems", None)
        if isinstance(prefix, list):
            rest = node.pop("items", None)
            node["items"] = prefix
            if rest is not None:
                node["additionalItems"] = rest
            elif node.get("maxItems") == len(prefix):
                node["additionalItems"] = False
        if renaming and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            node["$ref"] = "#/definitions/" + node["$ref"].removeprefix("#/$defs/")
        return node

    result = _bottom_up(schema, "", visit)
    if renaming:
        result["definitions"] = result.pop("$defs")
    return {"$schema": DRAFT_07, **{key: value for key, value in result.items() if key != "$schema"}}


# --- the provider targets -------------------------------------------------------------------------

_CONTENT_KEYWORDS = ("contentMediaType", "contentEncoding", "contentSchema")
_JSON_SCALARS: dict[str, Any] = {"anyOf": [{"type": t} for t in ("string", "number", "boolean", "null")]}


def _without_content(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON-text annotations as a description: no provider reads them, and they constrain nothing
    (hosts do not check ``contentSchema``), so dropping them admits the same values."""

    def rewrite(node: Node) -> Node:
        if not isinstance(node, dict) or not any(key in node for key in _CONTENT_KEYWORDS):
            return node
        result = {key: value for key, value in node.items() if key not in _CONTENT_KEYWORDS}
        if node.get("contentMediaType") == "application/json":
            _describe(result, "JSON text")
        return result

    # Top-down, so that nothing inside a contentSchema is rewritten (or reported) before it goes.
    def visit(node: Node) -> Node:
        return map_subschemas(rewrite(node), visit)

    result: dict[str, Any] = visit(schema)
    return result


def _common_provider_rewrite(node: dict[str, Any], location: str, losses: list[Loss]) -> dict[str, Any]:
    """What every provider target does to a node (of an ``any-of`` style schema): ``anyOf`` for
    ``oneOf``, and no ``$schema`` (each provider reads its own dialect)."""
    node.pop("$schema", None)
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and "anyOf" not in node:
        # pydantic writes oneOf only for discriminated unions, whose branches are disjoint, so anyOf
        # admits the same values.
        node["anyOf"] = node.pop("oneOf")
    return node


def _wrap_ref_with_siblings(node: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": R, "description": D}`` as ``{"anyOf": [{"$ref": R}], "description": D}``: strict
    providers refuse (or drop) keywords beside a ``$ref``, and allow them beside ``anyOf``."""
    if isinstance(node.get("$ref"), str) and len(node) > 1 and "anyOf" not in node:
        reference = node.pop("$ref")
        return {"anyOf": [{"$ref": reference}], **node}
    return node


def _close_object(node: dict[str, Any], location: str, losses: list[Loss], *, require_all: bool) -> None:
    """Strict providers take closed objects only: ``additionalProperties: false`` on every object."""
    if node.get("type") != "object":
        return
    # A model's object without additionalProperties: pydantic ignores other keys, so closing it loses
    # nothing. An object with no properties, or with additionalProperties, is data under any key.
    extra = node.get("additionalProperties", "properties" not in node)
    free_form = extra is not False or "patternProperties" in node
    node.setdefault("properties", {})
    node.pop("patternProperties", None)
    node.pop("propertyNames", None)
    node["additionalProperties"] = False
    if free_form:
        losses.append(Loss(location, "keys other than the listed properties cannot be expressed: the object is closed"))
    if require_all:
        required = list(node.get("required", []))
        optional = [name for name in node["properties"] if name not in required]
        node["required"] = required + optional
        losses.extend(
            Loss(
                f"{location}/properties/{_pointer_part(name)}",
                "required: the model must send it (null where the field takes null), not leave it out",
            )
            for name in optional
        )


def _widen_tuple(node: dict[str, Any], location: str, losses: list[Loss]) -> None:
    """A tuple's positions as one ``items`` union, its length pinned: positions are not enforced."""
    prefix = node.pop("prefixItems", None)
    if not isinstance(prefix, list):
        return
    members: list[Any] = []
    for item in [*prefix, *([node["items"]] if "items" in node else [])]:
        if item not in members:
            members.append(item)
    node["items"] = members[0] if len(members) == 1 else {"anyOf": members}
    node.setdefault("minItems", len(prefix))
    losses.append(Loss(location, "prefixItems cannot be expressed: each item may be any of the positions' types"))


def _openai(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    def visit(node: dict[str, Any], location: str) -> Node:
        node = _wrap_ref_with_siblings(_common_provider_rewrite(node, location, losses))
        node.pop("default", None)  # not allowed in strict mode; every property is sent anyway
        _widen_tuple(node, location, losses)
        if node.get("type") == "array" and not _typed(node.get("items")):
            node["items"] = _JSON_SCALARS
            losses.append(Loss(location, "untyped items cannot be expressed: only scalar items are admitted"))
        _close_object(node, location, losses, require_all=True)
        _move_to_description(node, _OPENAI_UNSUPPORTED, location, losses, "not supported in strict mode")
        if isinstance(node.get("format"), str) and node["format"] not in _OPENAI_FORMATS:
            _move_to_description(node, ["format"], location, losses, "not a format strict mode supports")
        return node

    return dict(_bottom_up(schema, "", visit))


# Evidence: pydantic-ai's OpenAI transformer, which treats these as incompatible with strict mode.
_OPENAI_UNSUPPORTED = (
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
)
_OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_TYPED_KEYS = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")


def _typed(items: Any) -> bool:
    return isinstance(items, dict) and any(key in items for key in _TYPED_KEYS)


# The keywords the Anthropic SDK's transform_schema keeps; it writes every other one into the
# description, and the API's strict mode takes no other.
_ANTHROPIC_KEPT = frozenset(
    {
        "type",
        "anyOf",
        "allOf",
        "enum",
        "const",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "$ref",
        "$defs",
    }
)
_ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def _anthropic(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    def visit(node: dict[str, Any], location: str) -> Node:
        node = _wrap_ref_with_siblings(_common_provider_rewrite(node, location, losses))
        _widen_tuple(node, location, losses)
        _close_object(node, location, losses, require_all=False)
        if "const" in node or isinstance(node.get("enum"), list):
            node.pop("type", None)  # the SDK drops it beside literals; the literal says the type
        keep = set(_ANTHROPIC_KEPT)
        if node.get("type") == "string" and node.get("format") in _ANTHROPIC_FORMATS:
            keep.add("format")
        if node.get("type") == "array" and node.get("minItems") in (0, 1):
            keep.add("minItems")
        unsupported = [key for key in node if key not in keep]
        _move_to_description(node, unsupported, location, losses, "the API's strict schema subset has no such keyword")
        return node

    return dict(_bottom_up(schema, "", visit))


# Keywords valid both in google-genai's JSONSchema and in its OpenAPI Schema.
_GEMINI_KEPT = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "additionalProperties",
        "anyOf",
    }
)


def _gemini(schema: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    inlined = _inline_references(schema)

    def visit(node: dict[str, Any], location: str) -> Node:
        node = _common_provider_rewrite(node, location, losses)
        _widen_tuple(node, location, losses)
        _inclusive_bounds(node)
        if "const" in node:
            node.setdefault("enum", [node.pop("const")])
        enum = node.get("enum")
        if isinstance(enum, list) and not all(isinstance(value, str) for value in enum):
            _move_to_description(node, ["enum"], location, losses, "Gemini's enum holds strings only")
        unsupported = [key for key in node if key not in _GEMINI_KEPT]
        _move_to_description(node, unsupported, location, losses, "not in Gemini's schema subset")
        return _nullable_as_pair(node)

    return dict(_bottom_up(inlined, "", visit))


def _inclusive_bounds(node: dict[str, Any]) -> None:
    """``exclusiveMinimum``/``exclusiveMaximum`` as the inclusive bound that admits the same values:
    the next integer for an integer, the next double for a number (JSON numbers are doubles)."""
    bounds = (("exclusiveMinimum", "minimum", math.inf), ("exclusiveMaximum", "maximum", -math.inf))
    for exclusive, inclusive, step in bounds:
        bound = node.get(exclusive)
        if not isinstance(bound, (int, float)) or isinstance(bound, bool) or inclusive in node:
            continue
        if node.get("type") == "integer":
            node[inclusive] = math.floor(bound) + 1 if step > 0 else math.ceil(bound) - 1
        else:
            node[inclusive] = math.nextafter(float(bound), step)
        del node[exclusive]


def _nullable_as_pair(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [A, B, null]`` as ``anyOf: [{anyOf: [A, B]}, null]``: google-genai reads a two-member
    union with null as one nullable schema, and a longer one as a branch with no type at all."""
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) <= 2 or {"type": "null"} not in members:
        return node
    others = [member for member in members if member != {"type": "null"}]
    return {**node, "anyOf": [{"anyOf": others}, {"type": "null"}]}


# Inlining can grow a schema exponentially (a definition used twice by one used twice, ...).
_INLINE_BUDGET = 100_000


def _inline_references(schema: dict[str, Any]) -> dict[str, Any]:
    """Every local ``$ref`` replaced by what it points to; Gemini's ``Schema`` has no definitions."""
    definitions = schema.get("$defs", {})
    budget = [_INLINE_BUDGET]

    def resolve(node: Node, seen: tuple[str, ...], depth: int = 0) -> Node:
        if not isinstance(node, dict):
            return node
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError(f"inlining the $refs gives more than {_INLINE_BUDGET} subschemas")
        if depth > MAX_DEPTH:
            raise ValueError(f"inlining the $refs nests the schema deeper than {MAX_DEPTH} levels")
        reference = node.get("$ref")
        if isinstance(reference, str):
            name = reference.removeprefix("#/$defs/")
            if name == reference or not isinstance(definitions.get(name), dict):
                raise ValueError(f"cannot inline $ref {reference!r}: only #/$defs/ references are resolved")
            if name in seen:
                raise ValueError(f"{name} refers to itself: a recursive model cannot be a Gemini function declaration")
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            return resolve({**definitions[name], **siblings}, (*seen, name), depth + 1)
        result = {key: value for key, value in node.items() if key != "$defs"}
        for key, value, _ in _children(result, ""):
            if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                result[key] = {name: resolve(item, seen, depth + 1) for name, item in value.items()}
            elif isinstance(value, list):
                result[key] = [resolve(item, seen, depth + 1) for item in value]
            else:
                result[key] = resolve(value, seen, depth + 1)
        return result

    result: dict[str, Any] = resolve(schema, ())
    return result


_REWRITES: dict[str, Callable[[dict[str, Any], list[Loss]], dict[str, Any]]] = {
    "mcp": _mcp,
    "mcp-draft-07": _mcp_draft_07,
    "openai": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def input_schema(
    source: type[BaseModel] | Mapping[str, Any], *, style: Style = "type-array", target: Target = "mcp"
) -> dict[str, Any]:
    """The ``inputSchema`` a tool with this input model (or this finished schema) advertises.

    The root is always ``"type": "object"``; ``$defs`` are kept and every ``$ref`` resolves. The
    dialect is JSON Schema 2020-12, MCP's default (pydantic writes tuples with ``prefixItems``).
    Another ``target`` rewrites that for a draft-07 host or a model provider; `target_schema` also
    says what the target gave up.

    >>> from typing import Optional
    >>> from pydantic import BaseModel, RootModel
    >>> from pydantic_lenient import LenientUInt, input_schema
    >>> class Search(BaseModel):
    ...     limit: Optional[LenientUInt] = None
    >>> input_schema(Search)
    {'properties': {'limit': {'type': ['integer', 'string', 'null'], 'minimum': 0, 'pattern': '^[0-9]+$',
     'default': None, 'title': 'Limit'}}, 'title': 'Search', 'type': 'object'}
    >>> input_schema(Search, style="any-of")["properties"]["limit"]
    {'anyOf': [{'minimum': 0, 'type': 'integer'}, {'pattern': '^[0-9]+$', 'type': 'string'}, {'type': 'null'}],
     'default': None, 'title': 'Limit'}
    >>> input_schema(Search, style="strict")["properties"]["limit"]
    {'anyOf': [{'minimum': 0, 'type': 'integer'}, {'type': 'null'}], 'default': None, 'title': 'Limit'}
    >>> input_schema(RootModel[list[int]])
    Traceback (most recent call last):
      ...
    TypeError: RootModel[list[int]] does not describe a JSON object, so it cannot be a tool's input
    """
    name = getattr(source, "__name__", "the schema")
    schema = _object_root(apply_style(source, style), name)
    if target == "mcp":
        return schema
    return to_target(schema, target).schema


def _object_root(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """Inline a root ``$ref`` (pydantic writes one for recursive models) and insist on an object."""
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        definitions = schema.get("$defs", {})
        target = definitions.get(reference.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            rest = {key: value for key, value in schema.items() if key != "$ref"}
            schema = {**target, **rest}
    if schema.get("type") != "object":
        raise TypeError(f"{name} does not describe a JSON object, so it cannot be a tool's input")
    return schema
