"""Properties mirrored into HTTP headers (MCP 2026-07-28 ``x-mcp-header``), kept in the shape the spec allows.

A tool's input schema may mark a property with ``"x-mcp-header": "Region"``: a client then sends the
argument's value in an ``Mcp-Param-Region`` HTTP header too, and the server refuses a call whose
header disagrees with its body (-32020). The spec allows the mark only on a property with one
``type`` (``string``, ``integer`` or ``boolean``), reached from the root by a plain chain of
``properties``; a client drops a tool whose mark is elsewhere, and the SDKs' servers skip their
header check for it. So a widened schema never widens such a property, nor wraps any property on
the chain to it: leniency for a mirrored argument happens in repair or in the server's validator.

Nothing here loads pydantic: the proxy reads it before pydantic has loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = ("X_MCP_HEADER", "HeaderProperties", "header_properties", "with_header_properties")

X_MCP_HEADER = "x-mcp-header"


class HeaderProperties(NamedTuple):
    """Where the marked properties are, by the ``id`` of each schema object: ``marked``, the
    properties marked ``x-mcp-header``; ``chain``, the schemas on the plain chains of
    ``properties`` from the root to them (the root included, the marked properties not)."""

    marked: frozenset[int]
    chain: frozenset[int]


def header_properties(schema: Any) -> HeaderProperties:
    """The properties marked ``x-mcp-header`` reached from the root by a plain chain of
    ``properties``, and the schemas on those chains.

    Only ``properties`` is followed, never a ``$ref``; each schema is visited once, with an explicit
    stack, so the walk is linear and total on any finite schema, however deep.

    >>> region = {"type": "string", "x-mcp-header": "Region"}
    >>> place = {"type": "object", "properties": {"region": region, "street": {"type": "string"}}}
    >>> schema = {"type": "object", "properties": {"place": place, "n": {"type": "integer"}}}
    >>> found = header_properties(schema)
    >>> found.marked == {id(region)}, found.chain == {id(schema), id(place)}
    (True, True)
    """
    if not isinstance(schema, Mapping):
        return HeaderProperties(frozenset(), frozenset())
    parents: dict[int, int | None] = {id(schema): None}
    marked: set[int] = set()
    chain: set[int] = set()
    stack: list[Mapping[str, Any]] = [schema]
    while stack:
        node = stack.pop()
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            continue
        for member in properties.values():
            if not isinstance(member, dict):
                continue
            if X_MCP_HEADER in member:
                marked.add(id(member))
                ancestor: int | None = id(node)
                while ancestor is not None and ancestor not in chain:
                    chain.add(ancestor)
                    ancestor = parents[ancestor]
            # Only a member with properties of its own can lead to a mark; one shared by two
            # properties is read once.
            if "properties" in member and id(member) not in parents:
                parents[id(member)] = id(node)
                stack.append(member)
    return HeaderProperties(frozenset(marked), frozenset(chain))


def with_header_properties(schema: Any, rewrite: Callable[[Mapping[str, Any]], Any]) -> Any:
    """``schema`` with each marked property (`header_properties`) replaced by ``rewrite`` of it;
    the schemas on the chains to them copied, everything else shared.

    >>> schema = {"properties": {"r": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-mcp-header": "R"}}}
    >>> with_header_properties(schema, lambda node: {"type": "integer", "x-mcp-header": node["x-mcp-header"]})
    {'properties': {'r': {'type': 'integer', 'x-mcp-header': 'R'}}}
    """
    found = header_properties(schema)
    if not found.marked:
        return schema

    def rebuilt(node: Mapping[str, Any]) -> Any:
        if id(node) in found.marked:
            return rewrite(node)
        if id(node) not in found.chain:
            return node
        properties = node["properties"]
        members = {
            name: rebuilt(member) if isinstance(member, Mapping) else member for name, member in properties.items()
        }
        return {**node, "properties": members}

    return rebuilt(schema)
