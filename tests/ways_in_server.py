"""One MCP server per way in, for the test that what a server advertises is one document.

    python tests/ways_in_server.py official|fastmcp WAY [STYLE]

The ways (`WAYS`): ``types`` (hand-written lenient types, the adapter's defaults), ``lenient_tool``
(plain annotations under the decorator), ``lenient_parameters`` (plain annotations, the adapter
making them lenient). The adapter is installed before any tool is registered, as servers written
in one module usually do, so a tool registered later must come out the same as one registered
earlier. Every tool has a bounded optional integer, a boolean, a list of integers and a model.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic_lenient import LenientInt, LenientJson, StrictBoolish, Style, lenient_tool

WAYS = ("types", "lenient_tool", "lenient_parameters")


class Window(BaseModel):
    start: int = 0
    size: Annotated[int, Field(ge=1, le=100)] = 10


class LenientWindow(BaseModel):
    start: LenientInt = 0
    size: Annotated[LenientInt, Field(ge=1, le=100)] = 10


def search(
    folder: str,
    limit: Annotated[Optional[int], Field(ge=1, le=500)] = None,
    dry_run: bool = False,
    uids: Optional[list[int]] = None,
    window: Optional[Window] = None,
) -> str:
    """Search a folder."""
    return folder


def search_typed(
    folder: str,
    limit: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None,
    dry_run: StrictBoolish = False,
    uids: Optional[LenientJson[list[LenientInt]]] = None,
    window: Optional[LenientJson[LenientWindow]] = None,
) -> str:
    """Search a folder."""
    return folder


def move(uid: int, to: str, keep_copy: bool = False) -> str:
    """Move one message."""
    return to


def move_typed(uid: LenientInt, to: str, keep_copy: StrictBoolish = False) -> str:
    """Move one message."""
    return to


def tools(way: str) -> dict[str, Callable[..., str]]:
    """The tool functions a way registers, by tool name."""
    if way == "types":
        return {"search": search_typed, "move": move_typed}
    if way == "lenient_tool":
        return {"search": lenient_tool(search), "move": lenient_tool(move)}
    return {"search": search, "move": move}


def build(sdk: str, way: str, style: Style = "type-array") -> Any:
    """The server for ``sdk`` and ``way``, its adapter installed first, then its tools."""
    lenient_parameters = way == "lenient_parameters"
    if sdk == "official":
        from mcp.server.mcpserver import MCPServer

        from pydantic_lenient.adapters.mcp import make_lenient

        server: Any = make_lenient(MCPServer("ways"), style=style, lenient_parameters=lenient_parameters)
        for name, function in tools(way).items():
            server.tool(name=name)(function)
        return server
    from fastmcp import FastMCP

    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    middleware = LenientMiddleware(style=style, lenient_parameters=lenient_parameters)
    server = FastMCP("ways", middleware=[middleware], strict_input_validation=True)
    for name, function in tools(way).items():
        server.tool(function, name=name)
    return server


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    sdk, way, style = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "type-array"
    if sdk == "official":
        build(sdk, way, style).run("stdio")  # type: ignore[arg-type]
    else:
        build(sdk, way, style).run("stdio", show_banner=False)  # type: ignore[arg-type]
