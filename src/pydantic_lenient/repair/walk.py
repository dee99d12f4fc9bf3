"""The repair walk: arguments and schema side by side, each value coerced where its location does not
take its type, and each key in another case convention renamed to the declared name.

A key is renamed (``thought_number``, ``thought-number`` or ``ThoughtNumber`` for the declared
``thoughtNumber``) when it is not declared and no ``patternProperties`` matches it, exactly one
declared property is the same name after case and separator folding, and that one was not sent.
The walk never adds or removes a value and never fills in defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_lenient.schema.locations import NULL_STRING, Allowance, Node, OverBudget, SchemaNode
from pydantic_lenient.types.forms import NULL_TEXT
from pydantic_lenient.types.json_kinds import json_type

from .coercions import SCALARS, coerce
from .reader import NodeReader, fold, matching_cost
from .validation import json_pointer

__all__ = ("Walk", "copy_containers")


def copy_containers(value: Any, depth: int) -> Any:
    """A copy of the containers the walk would rebuild (as deep as it goes), changing nothing.

    >>> from pydantic_lenient.repair.walk import copy_containers
    >>> sent = {"a": [{"b": 1}]}
    >>> copied = copy_containers(sent, 64)
    >>> copied == sent, copied["a"] is sent["a"], copy_containers(sent, 0)["a"] is sent["a"]
    (True, False, True)
    """
    if depth < 0 or value.__class__ in SCALARS:
        return value
    if value.__class__ is dict or isinstance(value, Mapping):
        return {key: copy_containers(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_containers(item, depth - 1) for item in value]
    return value


class Walk(Allowance):
    """One walk over arguments beside the nodes of their schema: ``max_depth`` bounds how deep into the
    arguments it goes, ``max_text_length`` how long a string it parses as JSON, and ``budget`` how
    many values it visits and schema nodes the reader computes meanwhile; ``copy=False`` leaves what
    it does not visit (anything goes there, or too deep) shared with the arguments. A walk is its
    own `Allowance`, so that each value spends without a lookup.

    >>> from pydantic_lenient.repair.reader import NodeReader
    >>> from pydantic_lenient.repair.scopes import DRAFTS, Locator
    >>> from pydantic_lenient.repair.walk import Walk
    >>> from pydantic_lenient.schema.locations import Allowance
    >>> schema = {"properties": {"dryRun": {"type": "boolean"}}}
    >>> reader = NodeReader(Locator(schema, DRAFTS["2020-12"]), Allowance(0))
    >>> repairs = []
    >>> Walk(reader, budget=1_000, max_depth=64, max_text_length=1_000).repaired({"dry_run": "TRUE"}, repairs)
    {'dryRun': True}
    >>> [repair["kind"] for repair in repairs]
    ['renamed_key', 'string_to_boolean']
    """

    def __init__(
        self, reader: NodeReader, *, budget: int, max_depth: int, max_text_length: int, copy: bool = True
    ) -> None:
        super().__init__(budget)
        self._reader = reader
        self.max_depth = max_depth
        self.max_text_length = max_text_length
        self.copy = copy

    def repaired(self, arguments: Any, repairs: list[dict[str, Any]]) -> Any:
        """``arguments`` repaired (a new object), each change appended to ``repairs``."""
        self._reader.allowance = self  # what the reader computes meanwhile counts against the walk
        return self._walk(arguments, self._reader.root, [], 0, repairs)

    def _renames(self, value: Mapping[Any, Any], node: Node) -> dict[str, str]:
        """Undeclared keys of ``value`` that name exactly one declared, unsent property in another case convention."""
        shape = node.shape if isinstance(node, SchemaNode) and node.shape is not None else self._reader.shape(node)
        if not shape.folded or shape.unknown_patterns:
            return {}
        claims: dict[str, list[str]] = {}
        for key in value.keys() - shape.declared:
            if not isinstance(key, str):
                continue
            names = shape.folded.get(fold(key))
            if names is None or len(names) != 1 or names[0] in value:
                continue
            self.remaining -= matching_cost(shape.pattern_sets)
            if self.remaining < 0:
                raise OverBudget
            if any(pattern_set.matching(key) != [] for pattern_set in shape.pattern_sets):
                continue  # a pattern claims the key (or may): it is declared after all
            claims.setdefault(names[0], []).append(key)
        return {keys[0]: name for name, keys in claims.items() if len(keys) == 1}

    def _walk(self, value: Any, node: Node, trail: list[Any], depth: int, repairs: list[dict[str, Any]]) -> Any:
        self.remaining -= 1
        if self.remaining < 0:
            raise OverBudget
        if node is True or depth > self.max_depth:  # anything goes here and below, or deeper than repair goes
            if value.__class__ in SCALARS or not self.copy:
                return value
            return copy_containers(value, self.max_depth - depth)
        types = node.types if isinstance(node, SchemaNode) and node.types is not None else self._reader.accepted(node)
        kind = json_type(value)
        if kind == "string" and value == NULL_TEXT:
            kind = NULL_STRING  # admitted only where the string "null" itself is (the "null" policy)
        if kind not in types:
            coerced = coerce(value, types, self.max_text_length)
            if coerced is not None:
                after, kind = coerced
                repairs.append({"path": json_pointer(trail), "from": value, "to": after, "kind": kind})
                value = after
        if value.__class__ in SCALARS:
            return value
        children = node.children if isinstance(node, SchemaNode) else {}
        if value.__class__ is dict or isinstance(value, Mapping):
            renames = self._renames(value, node)
            result = {}
            for key, item in value.items():
                name = renames.get(key, key) if renames else key
                if name != key:
                    repairs.append(
                        {"path": json_pointer([*trail, key]), "from": key, "to": name, "kind": "renamed_key"}
                    )
                step = name if name.__class__ is str else str(name)
                child = children.get(step)
                trail.append(name)
                result[name] = self._walk(
                    item, self._reader.child(node, step) if child is None else child, trail, depth + 1, repairs
                )
                trail.pop()
            return result
        if isinstance(value, (list, tuple)):
            items = []
            for index, item in enumerate(value):
                child = children.get(index)
                trail.append(index)
                items.append(
                    self._walk(
                        item, self._reader.child(node, index) if child is None else child, trail, depth + 1, repairs
                    )
                )
                trail.pop()
            return items
        return value
