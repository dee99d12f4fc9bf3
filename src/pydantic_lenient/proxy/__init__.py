"""`pydantic-lenient proxy`: a lenient front for any MCP server.

`relay` holds the message logic (which messages change, and what is recorded), apart from how bytes
move; `stdio` is the transport: the upstream as a child process, its liveness, and `serve`.
"""

from .relay import ProxyStats
from .stdio import run_proxy, serve

__all__ = (
    "ProxyStats",
    "run_proxy",
    "serve",
)
