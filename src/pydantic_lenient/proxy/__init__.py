"""`pydantic-lenient proxy`: a lenient front for any MCP server.

`core` is the relay session (`Proxy`, with its `ProxyOptions`), transport-neutral: it drives
`relay`, the message logic (which messages change), over `messages` (the JSON, read and written
faithfully), `session` (what the upstream owes, held messages, the proxy's own requests) and
`calls` (repair, counts and outcomes). `stdio` is the host side (this process's stdin and stdout,
`streams`) and `serve`. `upstream` is the contract every upstream transport keeps, and the one
function that picks one: `child` (a stdio server as a child process) and `remote` (Streamable HTTP).

The names load on first use (PEP 562): `serve` starts the upstream before it loads the relay.
"""

import typing

from pydantic_lenient._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from .calls import ProxyStats
    from .core import ProxyOptions
    from .stdio import run_proxy, serve
    from .transports import UpstreamSpec

__all__ = (
    "ProxyOptions",
    "ProxyStats",
    "UpstreamSpec",
    "run_proxy",
    "serve",
)

_MODULE_OF: dict[str, str] = {
    "ProxyOptions": "core",
    "ProxyStats": "calls",
    "UpstreamSpec": "transports",
    "run_proxy": "stdio",
    "serve": "stdio",
}

__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
