"""`pydantic-lenient serve`: many MCP servers, made lenient, served to many clients over Streamable HTTP.

`config` reads the ``mcpServers`` document hosts use (`load_config`, `GatewayConfig`); `app` is the
ASGI application (`app`, and `app_from_environment` for ``uvicorn --factory`` with several
workers), behind `security`'s `Guard`; `lanes` multiplexes every client onto one upstream
connection per server and era, through the proxy's relay session; `eras` tells a 2026-07-28
request from a handshake-era one. A remote upstream is the proxy's `HttpUpstream`, which writes a
2026-07-28 request's headers itself.

The names load on first use (PEP 562).
"""

import typing

from pydantic_lenient._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from .app import Gateway, app, app_from_environment
    from .config import ConfigError, GatewayConfig, ServerConfig, load_config

__all__ = ("ConfigError", "Gateway", "GatewayConfig", "ServerConfig", "app", "app_from_environment", "load_config")

_MODULE_OF: dict[str, str] = {
    "ConfigError": "config",
    "Gateway": "app",
    "GatewayConfig": "config",
    "ServerConfig": "config",
    "app": "app",
    "app_from_environment": "app",
    "load_config": "config",
}

__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
