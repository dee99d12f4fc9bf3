"""The HTTP headers a 2026-07-28 request carries over Streamable HTTP, written as the official SDK writes them.

In the 2026-07-28 era each request names its protocol version in ``params._meta``, and over HTTP it
mirrors that and more into headers, which a server checks against the body (-32020 when they
disagree) and gateways route on: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` (a tool's or a
prompt's name, a resource's URI) and, for a ``tools/call``, one ``Mcp-Param-<token>`` for each argument
whose property the tool's schema annotates with ``x-mcp-header``. The proxy writes them from the body
it sends, that is from the arguments *as repaired*, so header and body always agree.

Matched case by case with ``mcp.shared.inbound`` (``mcp`` 2.3.0): the value codec (a value that is
not printable ASCII, or has edge whitespace, is sent as ``=?base64?…?=``), the walk that finds the
annotations (only a plain chain of ``properties`` counts; an annotation anywhere else makes the whole
schema's annotations invalid, and then none is sent, as a conforming client drops such a tool), and how
a value is rendered. Standard library only.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic_lenient.schema.mcp_headers import param_headers_of

__all__ = (
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "encode_header_value",
    "listed_param_headers",
    "modern_headers",
)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"  # in a request's params._meta
MODERN_VERSIONS = frozenset({"2026-07-28"})  # the eras with per-request versions and no session

_NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_SAFE_VALUE = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")


def encode_header_value(value: str) -> str:
    """``value`` as a header carries it: as it is when printable ASCII without edge whitespace, else
    base64 in the ``=?base64?…?=`` sentinel.

    >>> encode_header_value("eu-west"), encode_header_value("é")
    ('eu-west', '=?base64?w6k=?=')
    """
    if _SAFE_VALUE.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8', 'surrogatepass')).decode('ascii')}?="


def listed_param_headers(message: Mapping[str, Any]) -> Iterator[tuple[str, dict[tuple[str, ...], str]]]:
    """Each tool a ``tools/list`` answer lists, with its ``x-mcp-header`` annotations (empty: none)."""
    result = message.get("result")
    tools = result.get("tools") if isinstance(result, Mapping) else None
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            yield tool["name"], param_headers_of(tool.get("inputSchema"))


def _rendered(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        return None
    try:
        return str(value)
    except ValueError:  # an integer over Python's digit limit
        return None


def modern_headers(
    message: Mapping[str, Any], param_headers: Mapping[str, Mapping[tuple[str, ...], str]]
) -> dict[str, str] | None:
    """The headers of ``message`` when it is a 2026-07-28 request (its ``params._meta`` names a
    version), else None. ``param_headers``: each listed tool's `param_headers_of`.

    >>> call = {"method": "tools/call", "params": {"name": "t", "arguments": {"region": 5},
    ...         "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}}
    >>> modern_headers(call, {"t": {("region",): "Region"}})
    {'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 't', 'Mcp-Param-Region': '5'}
    """
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    method = message.get("method")
    if not isinstance(version, str) or not isinstance(method, str) or not isinstance(params, dict):
        return None
    headers: dict[str, str] = {}
    if _SAFE_VALUE.fullmatch(version):  # else the server's own check refuses the request
        headers["mcp-protocol-version"] = version
    if _SAFE_VALUE.fullmatch(method):
        headers["mcp-method"] = method
    name = params.get(_NAME_BEARING.get(method, ""))
    if isinstance(name, str):
        headers["mcp-name"] = encode_header_value(name)
    arguments = params.get("arguments")
    if method == "tools/call" and isinstance(name, str) and isinstance(arguments, dict):
        for path, token in param_headers.get(name, {}).items():
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            rendered = _rendered(value) if value is not None else None
            if rendered is not None:
                headers[f"Mcp-Param-{token}"] = encode_header_value(rendered)
    return headers
