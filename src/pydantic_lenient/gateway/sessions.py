"""A handshake-era client's name, carried by the session id the gateway gives it.

Before 2026-07-28 a client names itself once, in ``initialize``, and its later requests carry only
the ``Mcp-Session-Id`` the server gave it. The gateway keeps no session, so that any replica can
answer any request: the id it gives is the client's ``clientInfo`` itself (name and version,
cleaned and cut as everywhere, `pydantic_lenient.observe.clients`), as base64url JSON behind
`PREFIX`. Any replica reads the client back from it, for what depends on the client: its host's
reading of ``""`` (`pydantic_lenient.hosts`), and the client on spans, metrics and outcomes.

A client names itself as it likes in ``initialize`` too, so nothing here is a secret or a proof:
an id that does not read back is no client, never an error.

    >>> session_id({"name": "cursor-vscode", "version": "1.7.2"})
    'lenient1.eyJuYW1lIjoiY3Vyc29yLXZzY29kZSIsInZlcnNpb24iOiIxLjcuMiJ9'
    >>> client_info_of(session_id({"name": "cursor-vscode", "version": "1.7.2"}))
    {'name': 'cursor-vscode', 'version': '1.7.2'}
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from pydantic_lenient.observe.clients import client_from_info

__all__ = ("PREFIX", "client_info_of", "session_id")

PREFIX = "lenient1."
_LONGEST = 1024  # characters of a session id read at all: a name and version cut as they are fit in far less


def session_id(client_info: Any) -> str | None:
    """The session id that carries ``client_info`` (an ``initialize``'s), or None when it names no
    client. Visible ASCII only, as the Streamable HTTP transport requires."""
    client = client_from_info(client_info)
    if client is None:
        return None
    text = json.dumps({"name": client.name, "version": client.version}, separators=(",", ":"))
    return PREFIX + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def client_info_of(header: str | None) -> dict[str, str] | None:
    """The ``clientInfo`` a session id of `session_id`'s carries, or None for any other text."""
    if header is None or not header.startswith(PREFIX) or len(header) > _LONGEST:
        return None
    encoded = header[len(PREFIX) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("version"), str):
        return None
    client = client_from_info(data)
    return {"name": client.name, "version": client.version} if client is not None else None
