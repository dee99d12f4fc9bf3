"""A remote upstream for the 2026-07-28 era: `HttpUpstream` that sends each request's routing headers.

A 2026-07-28 request over Streamable HTTP carries its protocol version, method and name twice, in
``params._meta`` and in the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers, and a
server refuses a request whose two disagree. `HttpUpstream` learns its one version from
``initialize``, which this era does not have, so this subclass reads the headers off each message.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)

from pydantic_lenient.proxy.messages import parsed
from pydantic_lenient.proxy.remote import HttpUpstream

from .eras import PROTOCOL_VERSION_KEY

__all__ = ("ModernHttpUpstream", "routing_headers")


def routing_headers(body: bytes) -> dict[str, str]:
    """The headers a 2026-07-28 request must carry, read from the request itself ({} for other messages)."""
    message = parsed(body)
    params, method = message.get("params"), message.get("method")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(method, str) or not isinstance(meta, dict):
        return {}
    version = meta.get(PROTOCOL_VERSION_KEY)
    headers = {MCP_METHOD_HEADER: encode_header_value(method)}
    if isinstance(version, str):
        headers[MCP_PROTOCOL_VERSION_HEADER] = encode_header_value(version)
    name_key = NAME_BEARING_METHODS.get(method)
    name = params.get(name_key) if name_key is not None and isinstance(params, dict) else None
    if isinstance(name, str):
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    return headers


class ModernHttpUpstream(HttpUpstream):
    """`HttpUpstream` whose every POST carries the routing headers its body asks for."""

    def __init__(self, url: str, headers: Any) -> None:
        super().__init__(url, headers)
        self.next_headers: dict[str, str] = {}

    async def _post(self, body: bytes, request_id: Any) -> None:
        self.next_headers = routing_headers(body)  # read by `_headers`, before `_post` first awaits
        await super()._post(body, request_id)

    def _headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        headers = super()._headers(accept)
        headers.update(self.next_headers)
        self.next_headers = {}
        return headers
