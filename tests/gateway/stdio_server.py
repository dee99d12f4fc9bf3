"""A small stdio MCP server for the gateway's tests: the official Python SDK's `MCPServer`, with
strict parameters (so the server alone refuses ``"100"`` for an integer), a ``slow`` tool that
waits, so a test can kill the process mid-call, a ``count`` tool that reports progress, and an
``ask`` tool that asks the client a question (elicitation: an `InputRequiredResult` at 2026-07-28,
a server-to-client request before), a ``grow`` tool that tells listeners the tools changed, and a
``note`` tool that logs to the client.

python tests/gateway/stdio_server.py NAME
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel, StrictBool, StrictInt

__all__ = ()

server = MCPServer(sys.argv[1] if len(sys.argv) > 1 else "stdio-test")


@server.tool(name="add")
def add(a: StrictInt, b: StrictInt) -> str:
    return f"{server.name}: {a + b}"


@server.tool(name="flag")
def flag(on: StrictBool) -> str:
    return f"{server.name}: {'on' if on else 'off'}"


@server.tool(name="page")
def page(limit: StrictInt | None = None) -> str:
    """An optional, nullable integer: Cursor sends ``""`` for it when the model leaves it out."""
    return f"{server.name}: limit {limit}"


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


CANCELLED = [0]


@server.tool(name="slow")
async def slow(seconds: float) -> str:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        CANCELLED[0] += 1
        raise
    return "slept"


@server.tool(name="cancellations")
def cancellations() -> str:
    """How many ``slow`` calls this process has had cancelled."""
    return str(CANCELLED[0])


@server.tool(name="count")
async def count(steps: StrictInt, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await asyncio.sleep(0.05)
    return f"{server.name}: counted {steps}"


@server.tool(name="note")
async def note(text: str, ctx: Context) -> str:
    """Logs ``text`` to the client (``notifications/message``), which names no request."""
    await ctx.info(text)
    return f"{server.name}: noted"


@server.tool(name="grow")
async def grow(ctx: Context) -> str:
    """Tells `subscriptions/listen` subscribers (2026-07-28) that the tools changed."""
    await ctx.notify_tools_changed()
    return f"{server.name}: changed"


class Colour(BaseModel):
    colour: str


async def ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


@server.tool(name="ask")
async def ask(colour: Annotated[Colour, Resolve(ask_colour)], times: StrictInt) -> str:
    return f"{server.name}: {colour.colour} x{times}"


if __name__ == "__main__":
    server.run("stdio")
