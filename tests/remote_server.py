"""A remote MCP server for the proxy's end-to-end tests: the official Python SDK's `MCPServer`,
its Streamable HTTP app served by uvicorn on 127.0.0.1 (a free port, printed as ``port N``).

python tests/remote_server.py TOKEN

Every request must carry ``Authorization: Bearer TOKEN`` (401 otherwise), so a session through the
proxy works only when the proxy passes the header on. Its tools mirror server-everything's that the
suite calls, with strict parameters, so the server alone refuses the wrong-typed forms. Events are
kept (an in-memory event store), so `resumable` can close its SSE stream mid-call and the client
must resume it with ``Last-Event-ID`` to get its answer.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import sys
from typing import Annotated, Any, Literal

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field, StrictBool, StrictFloat, StrictInt
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ()

server = MCPServer("remote-sdk-app")


@server.tool(name="get-sum")
def get_sum(a: StrictFloat, b: StrictFloat) -> str:
    return f"The sum of {a} and {b} is {a + b}."


@server.tool(name="echo")
def echo(message: str) -> str:
    return f"Echo: {message}"


@server.tool(name="get-annotated-message")
def get_annotated_message(messageType: Literal["error", "success", "debug"], includeImage: StrictBool = False) -> str:
    return f"{messageType} message{' with an image' if includeImage else ''}"


@server.tool(name="get-resource-reference")
def get_resource_reference(
    resourceType: Literal["Text", "Blob"],
    resourceId: Annotated[StrictInt, Field(ge=1, le=100)],
) -> str:
    return f"{resourceType} resource {resourceId}"


@server.tool(name="resumable")
async def resumable(steps: StrictInt, ctx: Context) -> str:
    """Closes its SSE stream after a progress event; the answer comes on the resumed stream."""
    await ctx.report_progress(1, steps)
    await ctx.close_sse_stream()
    await asyncio.sleep(0.3)
    await ctx.report_progress(steps, steps)
    return f"done in {steps} steps"


@server.tool(name="big")
def big(kilobytes: StrictInt) -> str:
    """A large result (a file, an image): over httpx2's 1 MiB SSE default, within the proxy's cap."""
    return "x" * (kilobytes * 1024)


@server.tool(name="regional")
def regional(region: Annotated[StrictInt, Field(json_schema_extra={"x-mcp-header": "Region"})], note: str = "") -> str:
    """Mirrors ``region`` into an ``Mcp-Param-Region`` header in the 2026-07-28 era; the server refuses
    a header that disagrees with the body (-32020)."""
    return f"region {region}{note}"


class _Events(EventStore):
    """Every event kept in memory, in order, for replay after a Last-Event-ID."""

    def __init__(self) -> None:
        self.events: list[tuple[EventId, StreamId, Any]] = []
        self.ids = itertools.count()

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        found = [index for index, (event_id, _, _) in enumerate(self.events) if event_id == last_event_id]
        if not found:
            return None
        stream = self.events[found[0]][1]
        for event_id, stream_id, message in self.events[found[0] + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


class _RequireToken:
    """401 for any request without the bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != self.expected:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await self.app(scope, receive, send)


def main() -> None:
    token = sys.argv[1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)  # connections wait in the backlog until uvicorn accepts them
    port = listener.getsockname()[1]
    security = TransportSecuritySettings(allowed_hosts=[f"127.0.0.1:{port}"], allowed_origins=[])
    app = server.streamable_http_app(event_store=_Events(), retry_interval=100, transport_security=security)
    config = uvicorn.Config(_RequireToken(app, token), log_level="warning", lifespan="on")
    print(f"port {port}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()
