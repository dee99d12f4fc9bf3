"""The answer to a request that may have notifications for its client (its progress, or the events
of a ``subscriptions/listen``): `StreamedAnswer`, an ASGI response.

Like the MCP SDK's own Streamable HTTP server (``mcp/server/_streamable_http_modern.py``), it waits
to choose its content type: a request whose answer comes before any notification is answered with
one JSON body, as every other request; the first notification commits the answer to
``text/event-stream``, which then carries each notification as it comes, a comment line every
`PING_INTERVAL` seconds while the upstream is silent (so that a proxy's idle timeout does not close
it), and the answer last.

A client that reads slowly misses notifications, never its answer: at most `QUEUED` wait for it,
and newer ones are dropped (progress is a hint, and a listen event says "fetch again", which a
later one says too). A client that leaves cancels the request, as closing a JSON
request does (the lane sends the upstream ``notifications/cancelled``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .lanes import Notified

__all__ = ("PING_INTERVAL", "QUEUED", "StreamedAnswer", "accepts_event_stream", "disconnected")

PING_INTERVAL = 15.0
QUEUED = 64
_EVENT_STREAM = "text/event-stream"
_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on as it comes
]
_JSON_HEADERS = [(b"content-type", b"application/json")]


def accepts_event_stream(accept: str) -> bool:
    """Whether an ``Accept`` header's value admits ``text/event-stream``."""
    return any(part.split(";", 1)[0].strip().lower() == _EVENT_STREAM for part in accept.split(","))


def _event(line: bytes) -> bytes:
    return b"event: message\r\ndata: " + line.rstrip(b"\r\n") + b"\r\n\r\n"


class StreamedAnswer(Response):
    """Runs ``answer(notified)`` and writes what it sends to ``notified``, then what it returns
    (which must be an answer, never an exception; ``b""`` ends the stream with no answer).
    ``at_once``: commit to ``text/event-stream`` before anything comes (a client's ``GET`` stream)."""

    def __init__(self, answer: Callable[[Notified], Awaitable[bytes]], *, at_once: bool = False) -> None:
        super().__init__(status_code=200)
        self.answer = answer
        self.at_once = at_once

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUED)

        def notified(line: bytes) -> None:
            with contextlib.suppress(asyncio.QueueFull):  # a reader that falls behind misses notifications
                queue.put_nowait(line)

        answering = asyncio.ensure_future(self.answer(notified))
        leaving = asyncio.ensure_future(disconnected(receive))
        committed = self.at_once
        try:
            if committed:
                await send({"type": "http.response.start", "status": 200, "headers": _STREAM_HEADERS})
            while not (answering.done() and queue.empty()):
                if queue.empty():
                    waiting = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait(
                        {answering, waiting, leaving},
                        timeout=PING_INTERVAL if committed else None,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if not waiting.done():
                        waiting.cancel()  # `Queue.get` cancelled before it wakes loses no item
                    if leaving in done:
                        return
                    if waiting.done() and not waiting.cancelled():
                        line = waiting.result()
                    elif not done:  # the upstream has been silent: keep the stream open
                        await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})
                        continue
                    else:
                        continue
                else:
                    line = queue.get_nowait()
                if not committed:
                    await send({"type": "http.response.start", "status": 200, "headers": _STREAM_HEADERS})
                    committed = True
                await send({"type": "http.response.body", "body": _event(line), "more_body": True})
            body = answering.result()
            if committed:
                await send({"type": "http.response.body", "body": _event(body) if body else b"", "more_body": False})
            else:
                headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
        finally:
            leaving.cancel()
            if not answering.done():
                answering.cancel()  # the client left: the lane cancels the request upstream
                with contextlib.suppress(asyncio.CancelledError):
                    await answering


async def disconnected(receive: Receive) -> None:
    """Return when the client has closed its connection (its request body already read)."""
    while (await receive())["type"] != "http.disconnect":
        pass
