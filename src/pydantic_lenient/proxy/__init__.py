"""`pydantic-lenient proxy`: a lenient front for any MCP server."""

from .server import ProxyStats, run_proxy, serve

__all__ = (
    "ProxyStats",
    "run_proxy",
    "serve",
)
