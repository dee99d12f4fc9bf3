"""A handshake-era client's session id: its name, and for a ``per-client`` server its session's key.

Before 2026-07-28 a client names itself once, in ``initialize``, and its later requests carry only
the ``Mcp-Session-Id`` the server gave it. For a ``shared`` server the gateway keeps no session, so
that any replica can answer any request: the id it gives is the client's ``clientInfo`` itself
(name and version, cleaned and cut as everywhere, `pydantic_lenient.observe.clients`), as base64url
JSON behind `PREFIX`. Any replica reads the client back from it, for what depends on the client:
its host's reading of ``""`` (`pydantic_lenient.hosts`), and the client on spans, metrics and
outcomes. A client names itself as it likes in ``initialize`` too, so none of that is a secret or
a proof: an id that does not read back is no client, never an error.

For a ``per-client`` server the id also holds a random key (`new_key`, 192 bits), which finds the
session's own upstream in the worker that made it; that key is what makes the id a bearer of the
session, as any Streamable HTTP session id is.

    >>> session_id({"name": "cursor-vscode", "version": "1.7.2"})
    'lenient1.eyJuYW1lIjoiY3Vyc29yLXZzY29kZSIsInZlcnNpb24iOiIxLjcuMiJ9'
    >>> read_session(session_id({"name": "cursor-vscode", "version": "1.7.2"}))
    SessionId(client_info={'name': 'cursor-vscode', 'version': '1.7.2'}, key=None)
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from typing import Any, NamedTuple

from pydantic_lenient.observe.clients import client_from_info

__all__ = ("PREFIX", "SessionId", "client_info_of", "new_key", "read_session", "session_id")

PREFIX = "lenient1."
_LONGEST = 4096  # characters of a session id read at all: 150 characters of name and version, each
# escaped to 12 as JSON (a character past the BMP is two escapes), then base64, fit in 2,600
_KEY_BYTES = 24


class SessionId(NamedTuple):
    """What a session id says: the client's ``clientInfo`` (None when it named none), and the key of a
    ``per-client`` session (None for a ``shared`` server's)."""

    client_info: dict[str, str] | None
    key: str | None


def new_key() -> str:
    """A new ``per-client`` session's key: random, URL-safe."""
    return secrets.token_urlsafe(_KEY_BYTES)


def session_id(client_info: Any, key: str | None = None) -> str | None:
    """The session id that carries ``client_info`` (an ``initialize``'s) and ``key``, or None when it
    carries neither. Visible ASCII only, as the Streamable HTTP transport requires."""
    client = client_from_info(client_info)
    payload: dict[str, str] = {"name": client.name, "version": client.version} if client is not None else {}
    if key is not None:
        payload["key"] = key
    if not payload:
        return None
    text = json.dumps(payload, separators=(",", ":"))
    return PREFIX + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def read_session(header: str | None) -> SessionId:
    """What a session id of `session_id`'s says; nothing for any other text."""
    nothing = SessionId(None, None)
    if header is None or not header.startswith(PREFIX) or len(header) > _LONGEST:
        return nothing
    encoded = header[len(PREFIX) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (binascii.Error, ValueError):
        return nothing
    if not isinstance(data, dict):
        return nothing
    key = data.get("key")
    client = None
    if isinstance(data.get("name"), str) and isinstance(data.get("version"), str):
        client = client_from_info(data)
    client_info = {"name": client.name, "version": client.version} if client is not None else None
    return SessionId(client_info, key if isinstance(key, str) and key else None)


def client_info_of(header: str | None) -> dict[str, str] | None:
    """The ``clientInfo`` a session id of `session_id`'s carries, or None for any other text."""
    return read_session(header).client_info
