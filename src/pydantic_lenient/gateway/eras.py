"""The two eras of MCP a gateway serves, told apart by one request.

A 2026-07-28 request stands alone: its ``params._meta`` carries the protocol version and the
client's capabilities, and ``server/discover`` replaces the ``initialize`` handshake. Every other
request belongs to a handshake-era session (2025-11-25 and before).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = (
    "CLIENT_CAPABILITIES_KEY",
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSION",
    "PROTOCOL_VERSION_KEY",
    "Era",
    "era_of",
    "modern_meta",
)

Era = Literal["legacy", "modern"]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first


def era_of(message: dict[str, Any]) -> Era:
    """The era ``message`` (a request or notification) belongs to.

    >>> era_of({"method": "tools/list", "params": {"_meta": {PROTOCOL_VERSION_KEY: MODERN_VERSION}}})
    'modern'
    >>> era_of({"method": "tools/list"})
    'legacy'
    """
    if message.get("method") == "server/discover":
        return "modern"
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return "modern" if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta else "legacy"


def modern_meta(client_name: str, version: str) -> dict[str, Any]:
    """The ``_meta`` envelope of the gateway's own 2026-07-28 requests."""
    return {
        PROTOCOL_VERSION_KEY: MODERN_VERSION,
        CLIENT_CAPABILITIES_KEY: {},
        CLIENT_INFO_KEY: {"name": client_name, "version": version},
    }
