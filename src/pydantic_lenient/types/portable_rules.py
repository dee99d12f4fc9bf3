"""The rules of the portable shape that a single node or union decides, and the rendering mode that
tells a lenient marker which shape to write (issue 33).

Two writers use these rules:

* `pydantic_lenient.schema.portable` rewrites a whole finished schema (the ``portable`` style, which
  every way in writes): it follows ``$ref``s from the root and applies the rules below node by node;
* a lenient marker rendered by pydantic's *own* generator (a hand-written ``LenientInt`` or
  ``Lenient[T]`` in a tool that an SDK lists with ``model_json_schema()``) writes its own part of
  the same shape, because no style stage runs after it (`Rendering.PORTABLE`).

The library's own generator (`pydantic_lenient.LenientJsonSchema`) and every way in that restyles
a model's schema ask the markers for the ``any-of`` fragment instead (`Rendering.RESTYLED`), which
the style stage reads and rewrites into any style.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .forms import JSON_NUMBER, pattern_without_null

__all__ = (
    "Rendering",
    "Resolve",
    "current_rendering",
    "inlined_branch",
    "integer_enum_as_range",
    "nullable_items",
    "portable_branches",
    "portable_node",
    "rendering",
    "structure_rendering",
    "with_items",
)


class Rendering(enum.Enum):
    """What a lenient marker writes for its JSON schema (validation mode)."""

    PORTABLE = "portable"
    """Its part of the portable shape: pydantic's own generator, which no style stage follows."""
    RESTYLED = "restyled"
    """``anyOf`` of its canonical schema, first, and its alternative form: the library's generator,
    whose style stage rewrites it into the style asked for (`pydantic_lenient.apply_style`)."""
    CANONICAL = "canonical"
    """Its canonical schema alone: inside the ``items`` of a portable array (the Gemini API refuses
    a union ``items``; a list's text forms stay at the list itself)."""


_RENDERING: ContextVar[Rendering] = ContextVar("pydantic_lenient_rendering", default=Rendering.PORTABLE)


def current_rendering() -> Rendering:
    return _RENDERING.get()


@contextmanager
def rendering(mode: Rendering) -> Iterator[None]:
    """Render lenient markers as ``mode`` for the duration (restored after, also on an error)."""
    token = _RENDERING.set(mode)
    try:
        yield
    finally:
        _RENDERING.reset(token)


Resolve = Callable[[str], Any]
"""Looks up a ``$ref`` (``"#/$defs/Name"``): the schema it names, or None when it cannot say."""


def inlined_branch(branch: Any, resolve: Resolve) -> Any:
    """A union's ``$ref`` branch as a copy of the definition it names, which says its ``type``.

    A lenient type writes this under pydantic's own generator, where its listing may go to a model
    API through an agent framework as well as to an MCP host: Cursor and the Gemini API read a
    branch without ``type`` as no type at all, and OpenAI's strict mode (openai-agents) refuses a
    ``type`` beside a ``$ref``. A definition not written yet (a model that holds itself) stays a
    ``$ref``."""
    if not isinstance(branch, dict) or not isinstance(branch.get("$ref"), str):
        return branch
    target = resolve(branch["$ref"])
    if not isinstance(target, Mapping):
        return branch
    rest = {key: value for key, value in branch.items() if key != "$ref"}
    return {**target, **rest}


def integer_enum_as_range(node: dict[str, Any]) -> dict[str, Any]:
    """An integer ``enum`` as the range ``minimum``..``maximum`` (the Gemini API takes only string
    enums); the server stays exact and refuses a value inside the range that is not a member."""
    options = node.get("enum")
    if not (isinstance(options, list) and options):
        return node
    if not all(isinstance(option, int) and not isinstance(option, bool) for option in options):
        return node
    rest = {key: value for key, value in node.items() if key != "enum"}
    return {**rest, "type": "integer", "minimum": min(options), "maximum": max(options)}


def with_items(node: dict[str, Any], canonical: Callable[[Any], Any]) -> dict[str, Any]:
    """An array always has ``items`` (VS Code refuses a tool without one): a tuple's positions as the
    one ``canonical`` type they share, else any item (the Gemini API refuses a union ``items``)."""
    kind = node.get("type")
    if kind != "array" or "items" in node:
        return node
    prefix = node.get("prefixItems")
    positions = [canonical(item) for item in prefix if isinstance(item, dict)] if isinstance(prefix, list) else []
    kinds = {item.get("type") if isinstance(item, dict) else None for item in positions}
    shared = kinds.pop() if len(kinds) == 1 and len(positions) == len(prefix or []) else None
    return {**node, "items": {"type": shared} if isinstance(shared, str) else {}}


def nullable_items(items: dict[str, Any]) -> dict[str, Any]:
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


def portable_branches(branches: list[Any]) -> list[Any]:
    """An ``anyOf``'s branches (each with its ``type``: `inlined_branch`, or the portable style's
    typed ``$ref``) in the portable shape:

    * an ``integer`` branch says ``number`` (Cursor compares each branch's ``type`` with ``typeof``,
      which says ``number``); the server stays exact and refuses ``1.5`` clearly;
    * a number's text form comes before the ``number`` branch (`_number_text_first`);
    * a ``null`` branch goes last and every branch says ``nullable: true``: Ajv with ``coerceTypes``
      (VS Code) then passes ``null`` through the first branch unchanged, where it would otherwise
      coerce it to ``0``, ``false`` or ``""``.
    """
    typed = []
    for branch in branches:
        if isinstance(branch, dict) and branch.get("type") == "integer":
            branch = {**branch, "type": "number"}
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


# Core schemas a value passes through on its way to its structure.
_WRAPPERS = frozenset({"function-before", "function-after", "function-wrap", "function-plain"})
# Structures pydantic lists as an array whose ``items`` hold every element.
_ITEM_ARRAYS = frozenset({"list", "set", "frozenset", "generator"})


def structure_rendering(structure: Mapping[str, Any], render: Callable[[Any], Any]) -> Rendering:
    """The rendering for the inside of a JSON-text structure (the core schema ``structure``, which
    ``render`` writes): its ``items`` canonical when it is a portable array, else as around it.

    A model inside the items is one definition, styled as a whole schema is: ``structure`` is
    rendered once as it is first, so that every definition it reaches is written (and kept) before
    its items are rendered again, canonical, and meet only their ``$ref``."""
    mode = current_rendering()
    if mode is Rendering.RESTYLED:
        return mode
    node: Any = structure
    while isinstance(node, Mapping) and node.get("type") in _WRAPPERS and isinstance(node.get("schema"), Mapping):
        node = node["schema"]
    kind = node.get("type") if isinstance(node, Mapping) else None
    if kind in _ITEM_ARRAYS or (kind == "tuple" and node.get("variadic_item_index") is not None):
        if mode is Rendering.PORTABLE:
            render(structure)
        return Rendering.CANONICAL
    return mode


def portable_node(node: Mapping[str, Any], canonical: Callable[[Any], Any]) -> dict[str, Any]:
    """A marker's canonical schema (or its JSON text's content) as it goes into a portable listing:
    an integer ``enum`` as a range, an array with ``items`` (``canonical``: a tuple position's
    canonical part). Unchanged under the library's generator, whose style stage does the same."""
    if current_rendering() is Rendering.RESTYLED:
        return dict(node)
    return with_items(integer_enum_as_range(dict(node)), canonical)
