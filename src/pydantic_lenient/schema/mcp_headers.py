"""Properties mirrored into HTTP headers (MCP 2026-07-28 ``x-mcp-header``), kept in the shape the spec allows.

A tool's input schema may mark a property with ``"x-mcp-header": "Region"``: a client then sends the
argument's value in an ``Mcp-Param-Region`` HTTP header too, and the server refuses a call whose
header disagrees with its body (-32020). The spec allows the mark only on a property with one
``type`` (``string``, ``integer`` or ``boolean``), reached from the root by a plain chain of
``properties``; a client drops a tool whose mark is elsewhere, and the SDKs' servers skip their
header check for it. So a widened schema never widens such a property, nor wraps any property on
the chain to it: leniency for a mirrored argument happens in repair or in the server's validator.

`param_headers_of` reads a schema's marks as a conforming client does (matched case by case with the
official SDK's ``mcp.shared.inbound``): each mark's ``Mcp-Param-*`` token by its property's path, or
none at all when any mark is invalid; the proxy writes the headers from it.

Nothing here loads pydantic: the proxy reads it before pydantic has loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

__all__ = ("X_MCP_HEADER", "HeaderProperties", "header_properties", "param_headers_of", "with_header_properties")

X_MCP_HEADER = "x-mcp-header"

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_SINGLE = frozenset(
    {
        "items",
        "contains",
        "unevaluatedItems",
        "additionalProperties",
        "propertyNames",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})
_WALK_LIMIT = 100_000  # schema positions looked at: a hostile schema costs no more


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


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Each schema position with its chain of ``properties`` keys (None once off that chain)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    seen = 0
    while stack and seen < _WALK_LIMIT:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        seen += 1
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif keyword in _SINGLE:
                stack.append((None, value))
            elif keyword in _LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def param_headers_of(input_schema: Any) -> dict[tuple[str, ...], str]:
    """The ``Mcp-Param-*`` token of each annotated property, by its path; {} when the schema has
    none, or any annotation is invalid (the tool is then dropped by a conforming client).

    >>> param_headers_of({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})
    {('region',): 'Region'}
    >>> param_headers_of({"properties": {"n": {"type": "number", "x-mcp-header": "N"}}})
    {}
    """
    found: dict[tuple[str, ...], str] = {}
    seen: set[str] = set()
    for path, node in _positions(input_schema):
        if X_MCP_HEADER not in node:
            continue
        token = node[X_MCP_HEADER]
        if not path or not isinstance(token, str) or not _TOKEN.fullmatch(token):
            return {}
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _HEADER_TYPES or token.lower() in seen:
            return {}
        seen.add(token.lower())
        found[path] = token
    return found
