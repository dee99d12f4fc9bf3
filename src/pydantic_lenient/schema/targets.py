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

The two MCP targets are rewritten here; the providers' rewrites are in `_provider_rewrites`, and the
walk they all share, with the `Loss` it records, in `_rewriting`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from ._provider_rewrites import rewrite_for_anthropic, rewrite_for_gemini, rewrite_for_openai, without_content
from ._rewriting import Loss, Node, bottom_up, check_depth, room_to_recurse
from .styles import DEFAULT_STYLE, Style, apply_style

__all__ = (
    "DRAFT_07",
    "TARGETS",
    "Loss",
    "Target",
    "TargetSchema",
    "default_style_for",
    "input_schema",
    "target_schema",
    "to_target",
)

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
class TargetSchema:
    """A tool's input schema for one target, and what the target had to give up.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, target_schema
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> result = target_schema(Page, "mcp")
    >>> result.target, result.schema["properties"]["size"], result.losses
    ('mcp', {'anyOf': [{'minimum': 0, 'type': 'number'}, {'pattern': '^[0-9]+$', 'type': 'string'}], 'title': 'Size'},
     ())
    """

    target: Target
    schema: dict[str, Any]
    losses: tuple[Loss, ...] = ()


def default_style_for(target: Target) -> Style:
    """The style a target starts from when none is given: `DEFAULT_STYLE` (``"portable"``) for MCP
    hosts, whose quirks it is shaped for; ``"any-of"`` for a model provider, whose own rewrite reads
    unions and which would only lose the portable shape's host-specific hints (``nullable``).

    >>> default_style_for("mcp"), default_style_for("gemini")
    ('portable', 'any-of')
    """
    return DEFAULT_STYLE if target in ("mcp", "mcp-draft-07") else "any-of"


def target_schema(model: type[BaseModel], target: Target, *, style: Style | None = None) -> TargetSchema:
    """The input schema of ``model`` for ``target``, with its losses.

    ``style`` is the style the target starts from (`default_style_for` when not given): ``"strict"``
    gives canonical types only (the provider then holds the model to them), the others the widened
    forms in the target's shape.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, target_schema
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> target_schema(Page, "openai").schema["properties"]["size"]  # providers start from the any-of style
    {'anyOf': [{'minimum': 0, 'type': 'integer'}, {'pattern': '^[0-9]+$', 'type': 'string'}], 'title': 'Size'}
    >>> target_schema(Page, "gpt")
    Traceback (most recent call last):
      ...
    ValueError: unknown target 'gpt'; expected one of mcp, mcp-draft-07, openai, anthropic, gemini
    """
    with room_to_recurse():
        return to_target(input_schema(model, style=default_style_for(target) if style is None else style), target)


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
    check_depth(schema)
    losses: list[Loss] = []
    with room_to_recurse():  # a finished schema (a server's listing) may nest as deep as its generator went
        # Providers read no type arrays: they start from the any-of style (which admits the same values).
        start = (
            dict(schema) if target in ("mcp", "mcp-draft-07") else without_content(apply_style(dict(schema), "any-of"))
        )
        result = rewrite(copy.deepcopy(start), losses)
    return TargetSchema(target, result, tuple(losses))


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

    result = bottom_up(schema, "", visit)
    if renaming:
        result["definitions"] = result.pop("$defs")
    return {"$schema": DRAFT_07, **{key: value for key, value in result.items() if key != "$schema"}}


_REWRITES: dict[str, Callable[[dict[str, Any], list[Loss]], dict[str, Any]]] = {
    "mcp": _mcp,
    "mcp-draft-07": _mcp_draft_07,
    "openai": rewrite_for_openai,
    "anthropic": rewrite_for_anthropic,
    "gemini": rewrite_for_gemini,
}


def input_schema(
    source: type[BaseModel] | Mapping[str, Any], *, style: Style | None = None, target: Target = "mcp"
) -> dict[str, Any]:
    """The ``inputSchema`` a tool with this input model (or this finished schema) advertises.

    The root is always ``"type": "object"``; ``$defs`` are kept and every ``$ref`` resolves. The
    dialect is JSON Schema 2020-12, MCP's default (pydantic writes tuples with ``prefixItems``).
    Another ``target`` rewrites that for a draft-07 host or a model provider; `target_schema` also
    says what the target gave up. ``style`` defaults to `default_style_for` the target.

    >>> from typing import Optional
    >>> from pydantic import BaseModel, RootModel
    >>> from pydantic_lenient import LenientUInt, input_schema
    >>> class Search(BaseModel):
    ...     limit: Optional[LenientUInt] = None
    >>> input_schema(Search)
    {'properties': {'limit': {'anyOf': [{'minimum': 0, 'type': 'number', 'nullable': True},
     {'pattern': '^[0-9]+$', 'type': 'string', 'nullable': True}, {'type': 'null', 'nullable': True}],
     'default': None, 'title': 'Limit'}}, 'title': 'Search', 'type': 'object'}
    >>> input_schema(Search, style="type-array")["properties"]["limit"]
    {'type': ['integer', 'string', 'null'], 'minimum': 0, 'pattern': '^[0-9]+$', 'default': None, 'title': 'Limit'}
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
    with room_to_recurse():  # a lenient model nests as deep as its plain model's schema can
        schema = _object_root(apply_style(source, default_style_for(target) if style is None else style), name)
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
