"""`pydantic-lenient proxy`: a lenient front for any MCP server.

`relay` holds the message logic (which messages change), apart from how bytes move, over `messages`
(the JSON, read and written faithfully), `session` (what the upstream owes, held messages, the
proxy's own requests) and `calls` (repair, counts and outcomes). `stdio` is the transport: the
upstream as a child process (or `remote`, over Streamable HTTP), its liveness, and `serve`; `streams`
is the client's stdin and stdout.

The names load on first use (PEP 562): `serve` starts the upstream before it loads the relay.
"""

import typing

from pydantic_lenient._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from .calls import ProxyStats
    from .stdio import run_proxy, serve

__all__ = (
    "ProxyStats",
    "run_proxy",
    "serve",
)

_MODULE_OF: dict[str, str] = {"ProxyStats": "calls", "run_proxy": "stdio", "serve": "stdio"}

__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
