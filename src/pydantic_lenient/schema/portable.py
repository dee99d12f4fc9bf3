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

from pydantic_lenient.types.forms import JSON_NUMBER, pattern_without_null

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
    return dict(_portable(any_of_schema, any_of_schema, canonical))


def _portable(node: Any, root: Mapping[str, Any], canonical: Canonical) -> Any:
    if not isinstance(node, dict):
        return node
    node = dict(node)
    items = node.get("items")
    if isinstance(items, dict):
        node["items"] = _nullable_items(canonical(items))
    node = map_subschemas(node, lambda child: _portable(child, root, canonical))
    node = _integer_enum_as_range(node)
    node = _with_items(node, canonical)
    alternatives = node.get("oneOf")
    if isinstance(alternatives, list) and alternatives:
        node["oneOf"] = [_typed(branch, root) for branch in alternatives]
    branches = node.get("anyOf")
    if isinstance(branches, list) and branches:
        node["anyOf"] = _portable_branches(branches, root)
    return node


def _nullable_items(items: dict[str, Any]) -> dict[str, Any]:
    """``items`` that are one type or ``null`` as that type with ``nullable: true``: the Gemini API
    refuses a union ``items``, and Ajv (VS Code, Gemini CLI, Qwen Code) and Gemini read ``nullable``."""
    branches = items.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and all(isinstance(b, dict) for b in branches)):
        return items
    null = [b for b in branches if b == {"type": "null"}]
    others = [b for b in branches if b != {"type": "null"}]
    if len(null) != 1 or not isinstance(others[0].get("type"), str) or others[0].keys() & items.keys() - {"anyOf"}:
        return items
    rest = {key: value for key, value in items.items() if key != "anyOf"}
    return {**others[0], "nullable": True, **rest}


def _integer_enum_as_range(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("enum")
    if not (isinstance(options, list) and options):
        return node
    if not all(isinstance(option, int) and not isinstance(option, bool) for option in options):
        return node
    rest = {key: value for key, value in node.items() if key != "enum"}
    return {**rest, "type": "integer", "minimum": min(options), "maximum": max(options)}


def _with_items(node: dict[str, Any], canonical: Canonical) -> dict[str, Any]:
    kind = node.get("type")
    if kind != "array" or "items" in node:
        return node
    prefix = node.get("prefixItems")
    positions = [canonical(item) for item in prefix if isinstance(item, dict)] if isinstance(prefix, list) else []
    kinds = {item.get("type") for item in positions}
    shared = kinds.pop() if len(kinds) == 1 and len(positions) == len(prefix or []) else None
    # A tuple's positions as the one type they share; else any item (the Gemini API refuses a union items).
    return {**node, "items": {"type": shared} if isinstance(shared, str) else {}}


def _resolved_type(branch: dict[str, Any], root: Mapping[str, Any], depth: int = 0) -> str | None:
    """The one JSON type ``branch`` admits, through ``$ref``s and a union of branches of that one
    type (pydantic's ``oneOf`` of models); None when it admits several or cannot say."""
    target: Any = branch
    for _ in range(32):
        reference = target.get("$ref") if isinstance(target, dict) else None
        if not (isinstance(reference, str) and reference.startswith("#/")):
            break
        target = root
        for part in reference[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
    if not isinstance(target, dict):
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
            kinds = {_resolved_type(m, root, depth + 1) if isinstance(m, dict) else None for m in members}
            return kinds.pop() if len(kinds) == 1 else None
    return None


def _typed(branch: Any, root: Mapping[str, Any]) -> Any:
    """A union's branch with the ``type`` it admits written beside its ``$ref`` or its own union
    (Cursor and the Gemini API read a branch without ``type`` as no type at all)."""
    if not isinstance(branch, dict) or "type" in branch or not ({"$ref", "oneOf", "anyOf"} & branch.keys()):
        return branch
    kind = _resolved_type(branch, root)
    return branch if kind is None else {**branch, "type": kind}


def _portable_branches(branches: list[Any], root: Mapping[str, Any]) -> list[Any]:
    typed = []
    for branch in branches:
        if isinstance(branch, dict):
            branch = dict(_typed(branch, root))
            if branch.get("type") == "integer":
                branch["type"] = "number"
        typed.append(branch)
    typed = _number_text_first(typed)
    null = [b for b in typed if isinstance(b, dict) and b.get("type") == "null"]
    if not null:
        return typed
    others = [b for b in typed if not (isinstance(b, dict) and b.get("type") == "null")]
    return [
        {**branch, "nullable": True} if isinstance(branch, dict) and isinstance(branch.get("type"), str) else branch
        for branch in [*others, *null]
    ]


def _number_text_first(branches: list[Any]) -> list[Any]:
    """A number's text form (JSON number syntax) before the ``number`` branch: Ajv with ``coerceTypes``
    (VS Code) tries the branches in order and coerces in place, so number text meeting ``number``
    first would become a double (a decimal's ``"0.1000000000000000000001"`` would reach the server as
    ``0.1``); meeting its own branch first, it goes on as written, and a number still meets ``number``."""
    text = [b for b in branches if isinstance(b, dict) and b.get("type") == "string" and _is_number_text(b)]
    number = [b for b in branches if isinstance(b, dict) and b.get("type") == "number"]
    if not text or not number:
        return branches
    rest = [b for b in branches if not any(b is t for t in text)]
    first = min(index for index, b in enumerate(rest) if any(b is n for n in number))
    return [*rest[:first], *text, *rest[first:]]


def _is_number_text(branch: Mapping[str, Any]) -> bool:
    pattern = branch.get("pattern")
    return isinstance(pattern, str) and JSON_NUMBER in (pattern, pattern_without_null(pattern))
