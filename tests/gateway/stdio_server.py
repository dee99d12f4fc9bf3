"""A small stdio MCP server for the gateway's tests: the official Python SDK's `MCPServer`, with
strict parameters (so the server alone refuses ``"100"`` for an integer) and a ``slow`` tool that
waits, so a test can kill the process mid-call.

python tests/gateway/stdio_server.py NAME
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from pydantic import StrictBool, StrictInt

__all__ = ()

server = MCPServer(sys.argv[1] if len(sys.argv) > 1 else "stdio-test")


@server.tool(name="add")
def add(a: StrictInt, b: StrictInt) -> str:
    return f"{server.name}: {a + b}"


@server.tool(name="flag")
def flag(on: StrictBool) -> str:
    return f"{server.name}: {'on' if on else 'off'}"


@server.tool(name="pid")
def pid() -> str:
    return str(os.getpid())


@server.tool(name="secret")
def secret() -> str:
    """The config's ``env`` reached the process."""
    return os.environ.get("GATEWAY_TEST_SECRET", "")


@server.tool(name="big")
def big(size: StrictInt) -> str:
    """An answer of ``size`` characters, for a client that reads it slowly."""
    return "x" * size


@server.tool(name="slow")
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    server.run("stdio")
