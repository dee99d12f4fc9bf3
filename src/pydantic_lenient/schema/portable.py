"""The ``portable`` style: one listing that every profiled host accepts and reads right (issue 33).

A pure rewrite of a finished schema, like the other styles (`apply_style` runs it for
``style="portable"``): it starts from the ``any-of`` style and changes, node by node, only what
some host reads wrong (`pydantic_lenient.hosts` models each):

* **no type arrays** anywhere (Cursor refuses every value of one; the Gemini API refuses the whole
  request for most of them): the ``any-of`` style already writes them as ``anyOf``;
* inside an ``anyOf``, an ``integer`` branch says ``number`` (Cursor compares each branch's ``type``
  with ``typeof``, which says ``number``); the server stays exact and refuses ``1.5`` clearly;
* a ``$ref`` branch, or a branch that is itself a union of one type (pydantic's ``oneOf`` of
  models), gets the ``type`` it admits, in an ``anyOf`` and in a ``oneOf`` (Cursor and the Gemini
  API read a branch without ``type`` as no type at all);
* an ``anyOf`` that admits ``null`` has its ``null`` branch last, and every branch says
  ``nullable: true``: Ajv with ``coerceTypes`` (VS Code) then passes ``null`` through the first
  branch unchanged, where it would otherwise coerce it to ``0``, ``false`` or ``""``; and the
  null branch, last, can no longer turn ``0``, ``false`` or ``""`` into ``null`` first. ``nullable``
  is OpenAPI's word that Gemini reads; standard validators ignore it, so the values admitted stay
  the same;
* a number's text form (JSON number syntax, a float's or a decimal's) comes before the ``number``
  branch: Ajv with ``coerceTypes`` (VS Code) coerces in place in the first branch that takes a
  value, and a decimal's text would otherwise reach the server as a double;
* an integer ``enum`` becomes the range ``minimum``..``maximum`` (the Gemini API takes only string
  enums); the server stays exact and refuses a value inside the range that is not a member;
* an array always has ``items`` (VS Code refuses a tool without; tuples get the type their
  ``prefixItems`` share), and ``items`` keeps only its canonical branches (the ``strict`` style):
  the Gemini API refuses a union ``items``, and a list's text forms stay at the list itself; items
  of one type or ``null`` are that type with ``nullable: true`` (which a validator that does not
  read ``nullable`` refuses for a ``null`` item, clearly: the hosts profiled all read it).

The top level stays an object (the Anthropic API refuses a top-level ``anyOf``). Nothing here
changes what the server validates; only the advertised document changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic_lenient.types.portable_rules import (
    Resolve,
    integer_enum_as_range,
    nullable_items,
    portable_branches,
    with_items,
)

from .locations import pointer_tokens
from .subschemas import map_subschemas

__all__ = ("portable_shape",)

Canonical = Callable[[Any], Any]
"""The ``strict`` style of a subschema: its canonical branches only (`apply_style` passes it in,
so that this module, below `pydantic_lenient.schema.styles`, imports nothing of it)."""


def portable_shape(any_of_schema: Mapping[str, Any], canonical: Canonical) -> dict[str, Any]:
    """``any_of_schema`` (a finished input schema in the ``any-of`` style) in the portable shape.

    Call it through `apply_style` (``style="portable"``), which writes any schema in the ``any-of``
    style first:

    >>> from pydantic_lenient import apply_style
    >>> apply_style({"type": "object", "properties": {"n": {"type": ["integer", "string", "null"]}}}, "portable")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'type': 'object', 'properties': {'n': {'anyOf': [{'type': 'number', 'nullable': True},
        {'type': 'string', 'nullable': True}, {'type': 'null', 'nullable': True}]}}}
    """
    return dict(_portable(any_of_schema, _resolver(any_of_schema), canonical))


def _resolver(root: Mapping[str, Any]) -> Resolve:
    def resolve(reference: str) -> Any:
        tokens = pointer_tokens(reference)
        target: Any = None if tokens is None else root
        for token in tokens or ():
            target = target.get(token) if isinstance(target, Mapping) else None
        return target

    return resolve


def _portable(node: Any, resolve: Resolve, canonical: Canonical) -> Any:
    if not isinstance(node, dict):
        return node
    node = dict(node)
    items = node.get("items")
    if isinstance(items, dict):
        node["items"] = nullable_items(canonical(items))
    node = map_subschemas(node, lambda child: _portable(child, resolve, canonical))
    node = integer_enum_as_range(node)
    node = with_items(node, canonical)
    alternatives = node.get("oneOf")
    if isinstance(alternatives, list) and alternatives:
        node["oneOf"] = [_typed_branch(branch, resolve) for branch in alternatives]
    branches = node.get("anyOf")
    if isinstance(branches, list) and branches:
        node["anyOf"] = portable_branches([_typed_branch(branch, resolve) for branch in branches])
    return node


def _resolved_type(branch: Mapping[str, Any], resolve: Resolve, depth: int = 0) -> str | None:
    """The one JSON type ``branch`` admits, through ``$ref``s and a union of branches of that one
    type (pydantic's ``oneOf`` of models); None when it admits several or cannot say."""
    target: Any = branch
    for _ in range(32):
        reference = target.get("$ref") if isinstance(target, Mapping) else None
        if not isinstance(reference, str):
            break
        target = resolve(reference)
    if not isinstance(target, Mapping):
        return None
    kind = target.get("type")
    if isinstance(kind, str):
        return kind
    if "properties" in target:
        return "object"
    options = target.get("enum")
    if isinstance(options, list) and options and all(isinstance(option, str) for option in options):
        return "string"
    for keyword in ("oneOf", "anyOf"):
        members = target.get(keyword)
        if isinstance(members, list) and members and depth < 8:
            kinds = {_resolved_type(m, resolve, depth + 1) if isinstance(m, Mapping) else None for m in members}
            return kinds.pop() if len(kinds) == 1 else None
    return None


def _typed_branch(branch: Any, resolve: Resolve) -> Any:
    """A union's branch with the ``type`` it admits written beside its ``$ref`` or its own union
    (Cursor and the Gemini API read a branch without ``type`` as no type at all)."""
    if not isinstance(branch, dict) or "type" in branch or not ({"$ref", "oneOf", "anyOf"} & branch.keys()):
        return branch
    kind = _resolved_type(branch, resolve)
    return branch if kind is None else {**branch, "type": kind}
