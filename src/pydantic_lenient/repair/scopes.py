"""Where each subschema sits, as the validator reads it: its base URI, its draft, and what its ``$ref`` names.

A ``$ref`` resolves inside the schema (JSON pointers, ``$anchor``, ``$id``-scoped embedded
resources) through jsonschema-rs's own registry, or not at all: nothing is ever fetched. Each
schema object read in its scope is one `ScopedSchema` (`pydantic_lenient.schema.locations`),
found and remembered by a `Locator`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

import jsonschema_rs

from pydantic_lenient.schema.locations import DRAFT_7, DRAFTS, Draft, Node, Scope, ScopedSchema, declared_draft

__all__ = (
    "DRAFTS",  # the dialects' names, from `pydantic_lenient.schema.locations`
    "MEMO_LIMIT",
    "ROOT_URI",
    "Draft",
    "Locator",
    "draft_number",
    "refuse_retrieval",
)

ROOT_URI = "https://pydantic-lenient.invalid/schema.json"
"""Where a schema without an absolute ``$id`` lives, for resolving references against it; never fetched."""

MEMO_LIMIT = 50_000
"""Nodes one `Locator` (and the reader that asks it) remembers; past it, work is recomputed rather than stored."""


class _SchemaError(ValueError):
    """A schema the validator cannot compile: malformed, an invalid pattern, a remote ``$ref``.

    Its name is in what users read: jsonschema-rs names the retriever's exception in the message
    for a reference it could not retrieve (``... retrieving it failed: _SchemaError: $ref ...``).
    """


def refuse_retrieval(uri: str) -> Any:
    """The registry's retriever: a ``$ref`` outside the schema is never fetched."""
    raise _SchemaError(f"$ref {uri!r} is outside the schema, and nothing is fetched")


def draft_number(schema: Any, draft: Draft | None) -> int:
    """jsonschema-rs's number for ``draft``, else for the draft the schema's ``$schema`` names, else 2020-12."""
    if draft is not None:
        if draft not in DRAFTS:
            raise _SchemaError(f"draft {draft!r} is not one of {', '.join(DRAFTS)}")
        return DRAFTS[draft]
    declared = schema.get("$schema") if isinstance(schema, Mapping) else None
    return declared_draft(declared) or jsonschema_rs.Draft202012


class Locator:
    """Finds the node for a subschema in its scope, and for a ``$ref``; remembers both.

    ``document`` is the schema as the validator compiled it, read in the draft numbered ``draft``.
    """

    def __init__(self, document: dict[str, Any] | bool, draft: int) -> None:
        self._located: dict[tuple[int, Scope], ScopedSchema] = {}
        self._references: dict[tuple[str, str], Node] = {}
        self._cached = 0
        self.registry: jsonschema_rs.Registry | None = None
        if isinstance(document, bool):
            self.root: Node = document
            return
        # The same kind of registry as the validator's, over the very document it compiled.
        self.registry = jsonschema_rs.Registry([(ROOT_URI, document)], draft=draft, retriever=refuse_retrieval)
        self.root = self.locate(document, self.enter(document, Scope(ROOT_URI, draft)))

    def remember(self) -> bool:
        """Whether one more node may be stored (`MEMO_LIMIT`), counting it if so."""
        self._cached += 1
        return self._cached < MEMO_LIMIT

    def enter(self, schema: Mapping[str, Any], scope: Scope) -> Scope:
        """The scope inside ``schema``: its ``$id`` (and ``$schema``) start an embedded resource."""
        identifier = schema.get("$id")
        if not isinstance(identifier, str) or identifier.startswith("#"):
            return scope
        if scope.draft <= DRAFT_7 and "$ref" in schema:
            return scope  # draft-07: $ref overrides its siblings, $id included
        base = urldefrag(urljoin(scope.base, identifier)).url
        return Scope(base, declared_draft(schema.get("$schema")) or scope.draft)

    def locate(self, schema: Any, scope: Scope) -> Node:
        """The node for ``schema`` read in ``scope``."""
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, Mapping):
            return True  # not a schema: the validator refuses the document; the walk assumes nothing
        key = (id(schema), scope)
        node = self._located.get(key)
        if node is None:
            node = ScopedSchema(schema, scope)
            if self.remember():
                self._located[key] = node  # the node holds the schema, so its id stays taken
        return node

    def subschema(self, schema: Any, scope: Scope) -> Node:
        """A subschema met while descending: enter its scope, then locate it."""
        if isinstance(schema, Mapping):
            return self.locate(schema, self.enter(schema, scope))
        return self.locate(schema, scope)

    def resolve(self, reference: Any, scope: Scope) -> Node:
        """A ``$ref`` through jsonschema-rs's registry; one it cannot resolve constrains nothing here
        (the validator already refused the schema)."""
        if not isinstance(reference, str) or self.registry is None:
            return True
        key = (scope.base, reference)
        node = self._references.get(key)
        if node is None:
            try:
                resolved = self.registry.resolver(scope.base).lookup(reference)
                node = self.locate(resolved.contents, Scope(resolved.resolver.base_uri, resolved.draft))
            except Exception:
                node = True
            if self.remember():
                self._references[key] = node
        return node
