"""`pydantic-lenient proxy`: a lenient front for any MCP server.

`relay` holds the message logic (which messages change), apart from how bytes move, over `messages`
(the JSON, read and written faithfully), `session` (what the upstream owes, held messages, the
proxy's own requests) and `calls` (repair, counts and outcomes). `stdio` is the transport: the
upstream as a child process (or `remote`, over Streamable HTTP), its liveness, and `serve`; `streams`
is the client's stdin and stdout.
"""

from .calls import ProxyStats
from .stdio import run_proxy, serve

__all__ = (
    "ProxyStats",
    "run_proxy",
    "serve",
)
