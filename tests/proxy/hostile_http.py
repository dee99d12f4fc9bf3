"""A hostile Streamable HTTP server on 127.0.0.1, and the proxy in process in front of it.

`Hostile` is a raw asyncio HTTP/1.1 server: each request (method, target, headers, body) is kept, and
a test's ``respond`` writes whatever bytes it likes back (a wrong status, a broken body, a stream that
closes, nothing at all). `through` runs the relay session (`Proxy`) with an `HttpUpstream` to it, sends
the host's messages, and returns every line the host got, once each request is answered or a bound
of time has passed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_lenient.proxy.core import Proxy, ProxyOptions
from pydantic_lenient.proxy.remote import HttpUpstream

__all__ = ("Hostile", "Request", "Through", "http", "sse", "through")

ANSWER_WAIT = 20.0  # seconds the host waits for every answer: a hang guard, never reached when it works


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def message(self) -> dict[str, Any]:
        try:
            parsed = json.loads(self.body)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}


Respond = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]


def http(status: int, body: bytes = b"", content_type: str | None = "application/json", *extra: str) -> bytes:
    """One whole HTTP/1.1 response."""
    headers = [f"HTTP/1.1 {status} X", f"content-length: {len(body)}", *extra]
    if content_type is not None:
        headers.append(f"content-type: {content_type}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body


def sse(*events: bytes, extra: Sequence[str] = ()) -> bytes:
    """An SSE response that ends (the connection closes) after ``events`` (each the raw lines of one event)."""
    head = ["HTTP/1.1 200 OK", "content-type: text/event-stream", "connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + b"".join(event + b"\n\n" for event in events)


def message_event(message: dict[str, Any], event_id: str | None = None) -> bytes:
    lines = [f"id: {event_id}".encode()] if event_id is not None else []
    return b"\n".join([*lines, b"data: " + json.dumps(message).encode()])


@dataclass
class Hostile:
    """A raw HTTP/1.1 server answering each request with ``respond``."""

    respond: Respond
    requests: list[Request] = field(default_factory=list)
    server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def __aenter__(self) -> Hostile:
        self.server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not writer.is_closing():
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                request = Request(method, target, headers, body)
                self.requests.append(request)
                await self.respond(request, writer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


class _Collected:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def lines(self) -> list[bytes]:
        return bytes(self.data).splitlines()


@dataclass
class Through:
    """What the host got (each line, parsed), and the session's failure (None: it did not fail)."""

    lines: list[bytes]
    failure: str | None

    @property
    def answers(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]  # every line is JSON, or this fails

    def answer(self, request_id: Any) -> dict[str, Any]:
        found = [answer for answer in self.answers if answer.get("id") == request_id and "method" not in answer]
        assert len(found) == 1, f"{len(found)} answers to {request_id!r}: {found}"
        return found[0]


async def through(
    url: str,
    messages: Sequence[dict[str, Any] | list[dict[str, Any]]],
    *,
    headers: Sequence[tuple[str, str]] = (),
    wait_for: Callable[[Through], bool] | None = None,
    options: ProxyOptions | None = None,
    linger: float = 0.0,
    **upstream: Any,
) -> Through:
    """The host's ``messages`` through the proxy to ``url``; what it got once each request is answered
    (or ``wait_for`` holds), and ``linger`` seconds more. The session is closed as the command closes
    it (its counts saved)."""
    proxy = Proxy(HttpUpstream(url, headers, **upstream), options or ProxyOptions(), host_transport="pipe")
    collected = _Collected()
    proxy.client_out = collected
    await proxy.start()
    ids = [
        message["id"] for message in messages if isinstance(message, dict) and "id" in message and "method" in message
    ]
    try:
        for message in messages:
            proxy.client_lines([json.dumps(message).encode() + b"\n"])
            await asyncio.sleep(0.01)  # in order, as a host sends them one by one

        def done() -> bool:
            got = Through(collected.lines(), proxy.failure)
            if wait_for is not None:
                return wait_for(got)
            answered = {json.loads(line).get("id") for line in got.lines}
            return all(request_id in answered for request_id in ids)

        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANSWER_WAIT
        while not done() and loop.time() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1 + linger)  # a second answer, were there one, would come now
    finally:
        await proxy.close()
    return Through(collected.lines(), proxy.failure)
