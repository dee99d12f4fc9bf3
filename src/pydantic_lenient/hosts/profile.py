"""What every host profile says: how the host lists a tool, and what it sends for a call.

A host stands between the model and the server. A profile models its three parts:

* `HostProfile.listing`: whether the host (or the model API behind it) accepts a tool's
  ``inputSchema``, and the schema it then works with (some hosts rewrite it first);
* `HostProfile.call`: what the host does to the arguments the model emitted, and whether it
  refuses the call before the server sees it;
* `HostProfile.client_names`: the ``clientInfo.name`` it sends at ``initialize``.

Profiles are pure functions over JSON values: no host runs here. Each host's module cites its
sources at the top; tests/hosts checks the profiles against the hosts' real code where a registry
ships it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._ajv import json_copy

__all__ = ("Call", "HostProfile", "Listing", "nullable_properties", "property_schemas", "resolve")


@dataclass(frozen=True)
class Listing:
    """A tool as the host lists it."""

    accepted: bool
    schema: dict[str, Any]
    """The schema the host works with: the tool's, rewritten as the host rewrites it."""
    reasons: tuple[str, ...] = ()
    """Why the host refuses the tool (empty when accepted)."""
    takes_down_every_tool: bool = False
    """The refusal is a model API's error for the whole request: no tool of any server works."""


@dataclass(frozen=True)
class Call:
    """What a call becomes: the arguments the server receives, or the host's refusal."""

    arguments: dict[str, Any] | None
    refusal: str | None = None

    @property
    def sent(self) -> bool:
        return self.arguments is not None


@dataclass(frozen=True)
class HostProfile:
    """One host. Subclasses override `rewrite`, `refusals` and `transform`."""

    name: str
    title: str
    client_names: tuple[str, ...]
    """``clientInfo.name`` at ``initialize`` (and in ``_meta`` from protocol 2026-07-28)."""
    sources: tuple[str, ...] = field(default=(), repr=False)

    def rewrite(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema the host works with, from the tool's ``inputSchema``."""
        return schema

    def refusals(self, schema: dict[str, Any]) -> list[str]:
        """Why the host (or its model API) refuses the rewritten schema; empty when it lists it."""
        return []

    takes_down_every_tool: bool = False

    def listing(self, input_schema: Mapping[str, Any]) -> Listing:
        try:
            schema = self.rewrite(json_copy(dict(input_schema)))
            reasons = tuple(self.refusals(schema))
        except RecursionError:  # the host's own walk would overflow its stack too
            return Listing(False, dict(input_schema), (_TOO_DEEP,))
        return Listing(not reasons, schema, reasons, bool(reasons) and self.takes_down_every_tool)

    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        """The host's pipeline over the model's arguments (``schema`` is the listed one)."""
        return Call(arguments)

    def call(self, listing: Listing, arguments: Mapping[str, Any]) -> Call:
        """What the server receives when the model calls the listed tool with ``arguments``
        (the parameters it leaves out may be filled in by the host, `unset`)."""
        if not listing.accepted:
            return Call(None, "the host does not list the tool")
        try:
            call = self.transform(listing.schema, json_copy(dict(arguments)))
        except RecursionError:  # a JS host throws RangeError where Python throws this
            return Call(None, _TOO_DEEP)
        if call.arguments is None:
            return call
        filled = {name: value for name, value in self.unset(listing).items() if name not in call.arguments}
        return Call({**call.arguments, **filled})

    def unset(self, listing: Listing) -> dict[str, Any]:
        """What the host sends for the optional parameters the model left out (nothing, for most)."""
        return {}

    def as_meant(self, schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments this host sent for the tool the server lists as ``schema``, as the model
        meant them: a host's known writing of "left out" (`unset`) read back as left out. The ways
        in that know the client (the adapters, the proxy) apply it before validating; for most
        hosts it is the arguments themselves."""
        return arguments


_TOO_DEEP = "nested deeper than the host's stack"


def resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """``schema`` with a local ``$ref`` followed (up to 32 hops); unresolvable references stay."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        reference: str = schema["$ref"]
        if not reference.startswith("#/"):
            return schema
        node: Any = root
        for part in reference[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return schema
            node = node[part]
        schema, depth = node, depth + 1
    return schema


def property_schemas(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level properties of a tool's input schema."""
    properties = schema.get("properties")
    return dict(properties) if isinstance(properties, dict) else {}


def nullable_properties(schema: Mapping[str, Any]) -> list[str]:
    """The optional top-level properties that admit ``null``, in any writing of it."""
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    names = []
    for name, sub in property_schemas(schema).items():
        if name in required or not isinstance(sub, dict):
            continue
        if _admits_null(resolve(sub, schema), schema):
            names.append(name)
    return names


def _admits_null(schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    if not isinstance(schema, dict):
        return schema is True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or schema.get("nullable") is True:
        return True
    if depth >= _DEEPEST_UNION:  # a $ref cycle or a hostile nesting: not read as nullable
        return False
    branches = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    return any(_admits_null(resolve(branch, root), root, depth + 1) for branch in branches if isinstance(branch, dict))


# How deep a union is read for its null branch (pydantic nests two or three levels).
_DEEPEST_UNION = 32
