"""Plain MCP servers (no adapter) with hand-written lenient types, bounds outside the Optional.

Pydantic advertises those bounds as ``ge``/``le``, which hosts ignore (pydantic/pydantic#11576):
the servers list the defect, and the catalog and the audit must show it, not a repaired copy.
``mcp`` is the FastMCP server `pydantic-lenient catalog tests/leaky_server.py --check` reads;
`official_server` builds the same tool on the official SDK, and `adapted` either one behind its
adapter, whose listing advertises the bounds as JSON Schema.
"""

# ruff: noqa: B008  (a bound in a Field default is the placement under test)
from __future__ import annotations

from typing import Annotated, Any, Optional

from fastmcp import FastMCP
from pydantic import Field

from pydantic_lenient import LenientInt, LenientUInt

mcp = FastMCP("leaky")


def search(
    limit: Optional[LenientInt] = Field(None, ge=1, le=500),
    page: Annotated[Optional[LenientInt], Field(ge=1)] = None,
    offset: Optional[Annotated[LenientUInt, Field(le=1000)]] = None,
) -> str:
    """Search: two bounds outside the Optional (advertised as ge/le), one inside it (clean)."""
    return "ok"


mcp.tool(search)


def official_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("leaky")
    server.tool()(search)
    return server


def adapted(sdk: str) -> Any:
    """The same tool, on ``sdk``'s server behind its adapter."""
    if sdk == "official":
        from mcp.server.mcpserver import MCPServer

        from pydantic_lenient.adapters.mcp import make_lenient

        server: Any = make_lenient(MCPServer("adapted"))
        server.tool()(search)
        return server
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = FastMCP("adapted", middleware=[LenientMiddleware()])
    server.tool(search)
    return server
