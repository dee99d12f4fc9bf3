"""Dual-era MCP servers (2025-11-25 and 2026-07-28) for the era tests: the official SDK's ``MCPServer``
or FastMCP, plain, over stdio (``python tests/era_server.py mcp`` or ``fastmcp``).

Their tools, the same on both:

* ``add(a, b)``: strict integers, so ``"2"`` is refused unless something repairs it;
* ``forecast(region, days)``: ``region`` is mirrored into the ``Mcp-Param-Region`` header
  (``x-mcp-header``), ``days`` a strict integer;
* ``confirm(n)`` (``MCPServer`` only): asks the client to confirm, which at 2026-07-28 is an
  ``InputRequiredResult`` and a second round carrying ``requestState``.

`build` makes them for the adapters' tests too, which make them lenient in process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer, Resolve
from mcp.server.mcpserver.resolve import Elicit
from pydantic import BaseModel, Field, StrictInt

REGION = Field(json_schema_extra={"x-mcp-header": "Region"})


class Confirmation(BaseModel):
    ok: bool


def add(a: StrictInt, b: StrictInt) -> str:
    return str(a + b)


def forecast(region: Annotated[int, REGION], days: StrictInt = 1) -> str:
    return f"{days} days in region {region}"


def ask(n: StrictInt) -> Elicit[Confirmation]:
    return Elicit(f"double {n}?", Confirmation)


def confirm(n: StrictInt, answer: Annotated[Confirmation, Resolve(ask)]) -> str:
    return str(n * 2 if answer.ok else n)


def build(flavour: str) -> Any:
    """A plain server of ``flavour`` (``"mcp"``: the SDK's ``MCPServer``; ``"fastmcp"``) with the tools."""
    if flavour == "fastmcp":
        from fastmcp import FastMCP

        fast = FastMCP("era")
        fast.tool(add)
        fast.tool(forecast)
        return fast
    server = MCPServer("era")
    server.tool()(add)
    server.tool()(forecast)
    server.tool()(confirm)
    return server


if __name__ == "__main__":
    built = build(sys.argv[1])
    ready = os.environ.get("ERA_SERVER_READY")
    if ready:  # built and about to read: a test may send its first request now, timed from here
        Path(ready).write_text("ready")
    if sys.argv[1] == "fastmcp":
        built.run(show_banner=False)
    else:
        built.run()
