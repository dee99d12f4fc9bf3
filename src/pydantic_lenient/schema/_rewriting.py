"""What every target's rewrite is made of: a walk over a schema, and the `Loss` it records.

`bottom_up` visits each schema in the tree, children first, with its JSON pointer, so that a
rewrite can say where it changed something; `check_depth` refuses a schema (which may come from
a server we do not own) nested deeper than `MAX_DEPTH` before anything recurses into it. When a
target cannot carry a keyword, `move_to_description` writes it into the description, so the model
still reads it, and records a `Loss` for each constraint among them. `room_to_recurse` gives the
generation of a lenient model's schema the stack depth its extra frames per level need.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .subschemas import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS

__all__ = (
    "MAX_DEPTH",
    "Loss",
    "Node",
    "Visit",
    "bottom_up",
    "check_depth",
    "children",
    "describe",
    "move_to_description",
    "pointer_part",
    "room_to_recurse",
)


@dataclass(frozen=True)
class Loss:
    """One thing a target could not say as the validator means it.

    ``location`` is a JSON pointer into the target's schema; ``what`` says what changed and what a
    host now admits or refuses that the validator does not.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import target_schema
    >>> class Move(BaseModel):
    ...     to: tuple[int, str]
    >>> target_schema(Move, "openai").losses
    (Loss(location='/properties/to', what="prefixItems cannot be expressed: each item may be any of ..."),)
    """

    location: str
    what: str


Node = Any  # a dict, or a boolean schema
Visit = Callable[[dict[str, Any], str], Node]


def pointer_part(name: str) -> str:
    """``name`` as one part of a JSON pointer: ``~`` as ``~0``, ``/`` as ``~1``."""
    return name.replace("~", "~0").replace("/", "~1")


def children(schema: dict[str, Any], location: str) -> Iterator[tuple[str, Any, str]]:
    """(keyword, child, location) for every subschema container of ``schema``."""
    for key, value in schema.items():
        if key in SCHEMA_KEYWORDS | SCHEMA_LIST_KEYWORDS | SCHEMA_MAP_KEYWORDS:
            yield key, value, f"{location}/{pointer_part(key)}"


# Schemas can come from servers we do not own: nesting deeper than this is refused, not recursed into.
MAX_DEPTH = 200


def check_depth(schema: Any) -> None:
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


# A lenient field's JSON schema goes through its own hook as well as pydantic's: about 1.5 to 2
# times the frames per nesting level a plain model takes. This much more room lets a lenient model
# nest as deep as the plain model's schema can.
_RECURSION_FACTOR = 2
_recursion_lock = threading.Lock()
_recursion_users = 0
_recursion_base = 0


@contextmanager
def room_to_recurse() -> Iterator[None]:
    """Raise the recursion limit by `_RECURSION_FACTOR` while any thread is inside this block.

    The first thread in raises it and the last one out restores it, so threads that overlap never
    lower it under one another.
    """
    global _recursion_users, _recursion_base
    with _recursion_lock:
        if _recursion_users == 0:
            _recursion_base = sys.getrecursionlimit()
            sys.setrecursionlimit(_recursion_base * _RECURSION_FACTOR)
        _recursion_users += 1
    try:
        yield
    finally:
        with _recursion_lock:
            _recursion_users -= 1
            if _recursion_users == 0:
                sys.setrecursionlimit(_recursion_base)


def bottom_up(node: Node, location: str, visit: Visit, depth: int = 0) -> Node:
    """Apply ``visit(node, location)`` to every schema in the tree, children first."""
    if not isinstance(node, dict):
        return node
    if depth > MAX_DEPTH:
        raise ValueError(f"the schema nests deeper than {MAX_DEPTH} levels at {location}")
    result = dict(node)
    deeper = depth + 1
    for key, value, here in children(node, location):
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            result[key] = {
                name: bottom_up(item, f"{here}/{pointer_part(name)}", visit, deeper) for name, item in value.items()
            }
        elif key in SCHEMA_KEYWORDS | SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            result[key] = [bottom_up(item, f"{here}/{index}", visit, deeper) for index, item in enumerate(value)]
        elif key in SCHEMA_KEYWORDS and isinstance(value, (dict, bool)):
            result[key] = bottom_up(value, here, visit, deeper)
    return visit(result, location)


def describe(node: dict[str, Any], text: str) -> None:
    """Add ``text`` to the node's description, so the model still reads what the schema cannot say."""
    current = node.get("description")
    node["description"] = f"{current} ({text})" if isinstance(current, str) and current else text


def move_to_description(
    node: dict[str, Any], keywords: Iterable[str], location: str, losses: list[Loss], why: str
) -> None:
    """Write the ``keywords`` ``node`` has into its description, and record a `Loss` for those that
    constrain (``why`` says why the target cannot carry them); annotations move without a loss."""
    moved = [key for key in keywords if key in node]
    if not moved:
        return
    text = "; ".join(f"{key}: {json.dumps(node[key], ensure_ascii=False, sort_keys=True)}" for key in moved)
    for key in moved:
        del node[key]
    describe(node, text)
    constraints = [key for key in moved if key not in _ANNOTATIONS]
    if constraints:
        losses.append(Loss(location, f"{', '.join(constraints)} moved into the description: {why}"))


# Keywords that constrain nothing: moving one into the description changes no verdict.
_ANNOTATIONS = frozenset({"default", "examples", "title", "$comment", "deprecated", "readOnly", "writeOnly"})
