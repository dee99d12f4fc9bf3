"""Which client (host) sent a call: its ``clientInfo`` name and version, cut and cleaned, and the
host profile it names, as a bounded label for metrics and breakdowns.

    client_from_info({"name": "cursor-vscode", "version": "1.0.0"})  # Client('cursor-vscode', '1.0.0')
    client_from_meta(params.get("_meta"))   # the per-request clientInfo of protocol 2026-07-28
    host_label("cursor-vscode"), host_label("evil" * 99)              # ('cursor', '_OTHER')

A client learns its name at ``initialize`` (``params.clientInfo``, protocol 2025-11-25) or sends it
with every request (``params._meta["io.modelcontextprotocol/clientInfo"]``, protocol 2026-07-28).
Either is attacker-controlled text: it is cut to `CLIENT_NAME_LIMIT` characters and cleaned as
every other name (`clean_name`), and only a known host profile's name is ever a metric attribute.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

from .shapes import clean_name

__all__ = (
    "CLIENT_INFO_META_KEY",
    "CLIENT_NAME_LIMIT",
    "CLIENT_VERSION_LIMIT",
    "OTHER_HOST",
    "RELAYED_CLIENT_META_KEY",
    "Client",
    "client_from_info",
    "client_from_meta",
    "client_of_call",
    "host_label",
    "without_relayed_client",
)

CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
"""Where protocol 2026-07-28 puts the client's ``Implementation`` in each request's ``_meta``."""

RELAYED_CLIENT_META_KEY = "dev.pydantic-lenient/clientInfo"
"""Where the gateway puts a handshake-era client's ``Implementation`` (which its session id carries)
in a call's ``_meta`` for the relay; the relay reads it and sends the call on without it."""

CLIENT_NAME_LIMIT = 100
"""Characters kept of a client's name."""

CLIENT_VERSION_LIMIT = 50
"""Characters kept of a client's version."""

OTHER_HOST = "_OTHER"
"""The host label of a client no profile names (the conventions' fallback value)."""


class Client(NamedTuple):
    """A client as it named itself, cleaned: ``name`` and ``version`` (``""`` when it sent none)."""

    name: str
    version: str = ""

    @property
    def host(self) -> str:
        """The host profile this client's name belongs to, else `OTHER_HOST` (`host_label`)."""
        return host_label(self.name)


def client_from_info(info: Any) -> Client | None:
    """The client an ``Implementation`` describes: a ``clientInfo`` mapping, or an SDK's object
    with ``name`` and ``version``; None when it has no name that is text.

    >>> client_from_info({"name": "cursor-vscode", "version": "1.0.0"})
    Client(name='cursor-vscode', version='1.0.0')
    >>> client_from_info({"name": 7}), len(client_from_info({"name": "x" * 5000}).name)
    (None, 100)
    """
    if type(info) is dict or isinstance(info, Mapping):  # a dict first: an ABC check costs more
        name, version = info.get("name"), info.get("version")
    else:
        name, version = getattr(info, "name", None), getattr(info, "version", None)
    if not isinstance(name, str) or not name:
        return None
    return _client(name, version if isinstance(version, str) else "")


@functools.lru_cache(maxsize=64)
def _client(name: str, version: str) -> Client:
    """A session sends the same name on every call: cleaned once."""
    return Client(clean_name(name, CLIENT_NAME_LIMIT), clean_name(version, CLIENT_VERSION_LIMIT))


def client_from_meta(meta: Any) -> Client | None:
    """The client a request's ``_meta`` names (protocol 2026-07-28), or None.

    >>> client_from_meta({CLIENT_INFO_META_KEY: {"name": "claude-code", "version": "2.1"}})
    Client(name='claude-code', version='2.1')
    """
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return None
    info = meta.get(CLIENT_INFO_META_KEY)
    return None if info is None else client_from_info(info)


def client_of_call(params: Any, session: Client | None = None) -> Client | None:
    """The client that sent a request with ``params``: the one its ``_meta`` names (protocol
    2026-07-28), else ``session``, the one the session's ``initialize`` named.

    >>> client_of_call({"name": "search"}, Client("mcp", "1.0"))
    Client(name='mcp', version='1.0')
    """
    meta = params.get("_meta") if type(params) is dict or isinstance(params, Mapping) else None
    return (None if meta is None else client_from_meta(meta)) or session


@functools.lru_cache(maxsize=256)
def host_label(client_name: str) -> str:
    """The name of the host profile whose client sends ``client_name``, else `OTHER_HOST`: a
    label drawn from a fixed set, so a metric attribute or a breakdown stays bounded.

    >>> host_label("cursor-vscode"), host_label("Visual Studio Code"), host_label("my-agent")
    ('cursor', 'vscode', '_OTHER')
    """
    from pydantic_lenient.hosts import profile_for_client  # the profiles load when a client names itself

    profile = profile_for_client(client_name)
    return profile.name if profile is not None else OTHER_HOST


def without_relayed_client(params: dict[str, Any]) -> tuple[dict[str, Any], Client | None]:
    """``params`` without the gateway's note of its client (`RELAYED_CLIENT_META_KEY`), and that
    client; ``params`` itself and None when it holds no note.

    >>> without_relayed_client({"name": "f", "_meta": {RELAYED_CLIENT_META_KEY: {"name": "cursor-vscode"}}})
    ({'name': 'f', '_meta': {}}, Client(name='cursor-vscode', version=''))
    """
    meta = params.get("_meta")
    if type(meta) is not dict or RELAYED_CLIENT_META_KEY not in meta:
        return params, None
    kept = {key: value for key, value in meta.items() if key != RELAYED_CLIENT_META_KEY}
    return {**params, "_meta": kept}, client_from_info(meta[RELAYED_CLIENT_META_KEY])
