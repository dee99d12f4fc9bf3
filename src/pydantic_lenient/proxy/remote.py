"""A remote upstream over MCP's Streamable HTTP transport, for ``pydantic-lenient proxy --url``.

An upstream transport (`pydantic_lenient.proxy.upstream`): it carries each message the relay
session routes upstream as the body of a POST, and hands every message the server answers with
(a JSON body, or each event of an SSE stream) back to the relay as bytes, untouched: nothing is
parsed into a model. Both protocol eras:

* 2025-11-25 and before: the session (``Mcp-Session-Id``), the ``MCP-Protocol-Version`` the
  ``initialize`` answer names, the GET stream for the server's own messages (reconnected by the
  SDK's rules: a normal end resets the count of tries, only failures count), and a DELETE at the end;
* 2026-07-28: no session; each request's ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
  ``Mcp-Param-*`` headers written from the body sent, the arguments as repaired
  (`pydantic_lenient.proxy.mcp_headers`); a ``notifications/cancelled`` closes the request's POST
  instead of being sent (that era defines no client notifications over HTTP).

The host's client negotiates the era; the proxy passes every answer on as the server sent it, so a
fall-back works as the client's SDK makes it.

**Every request is answered exactly once**, whatever the server does: a POST that ends without the
request's answer (202, a redirect, an HTTP error without a JSON-RPC body, an empty, HTML or truncated
body, an SSE stream that closes with no event id to resume it, resumptions that run out, an event over
the size limit, nothing at all for ``read_timeout`` seconds) gets one JSON-RPC error naming the cause.
A JSON-RPC error in any HTTP answer reaches the host as the server sent it (only a null id is given
the request's). Nothing that is not one JSON-RPC message ever reaches the host.

**Every body is bounded**, after decompression: a JSON answer and an SSE event at ``max_message``
bytes (the stdio side's cap), an error body at ``MAX_ERROR_BODY``. Over it ends that request, not
the process.

**No secret in any output**: errors name the server by scheme, host and port only
(`pydantic_lenient.proxy.addresses.shown_url`), and a filter on the HTTP stack's loggers takes the
URL's userinfo, path and query and every header value out of their records, in any spelling.

The official SDK's client (``mcp.client.streamable_http``) answers the same cases, and this module
follows its rules case by case, but is not built on it: the SDK parses every message into a model and
writes it again (the relay's bytes, numbers beyond a double and members it does not know would not
come through as sent), and loading it costs more than the proxy's start-up target.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from .addresses import header_problem, shown_url, url_problem
from .events import EventReader, EventTooLarge
from .http_answers import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    MAX_ERROR_BODY,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Unanswerable,
    bounded_body,
    content_type_of,
    message_of,
    redirect_reason,
)
from .http_logs import redact_http_logs, redacting_for, stop_redacting_http_logs
from .mcp_headers import MODERN_VERSIONS, listed_param_headers, modern_headers
from .messages import dumped, is_batch
from .session import OWN_PREFIX
from .streams import _MAX_LINE
from .upstream import Peer, StartError

__all__ = ("HttpUpstream",)

logger = logging.getLogger("pydantic_lenient.proxy")

_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_CONNECT_TIMEOUT = 10.0
_READ_TIMEOUT = 300.0  # seconds a request's answer may send nothing (the SDK's SSE read timeout)
_RESUMPTIONS = 2  # failed tries to resume a stream (the SDK's MAX_RECONNECTION_ATTEMPTS); a normal end resets
_RESUME_DELAY = 1.0  # seconds before a resumption when the server named no retry interval
_BROKEN = (httpx2.TransportError, httpx2.StreamError, httpx2.DecodingError)  # a stream that broke off
_NO_READ_DEADLINE = httpx2.Timeout(_CONNECT_TIMEOUT, read=None)
_MAX_TOOLS = 100_000  # tools whose x-mcp-header annotations are remembered
_VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")  # what a session id may hold (MCP)


@dataclass
class _Exchange:
    """One message's POST: the request it carries (None for a notification or a reply) and whether
    its answer has been handed on."""

    request_id: Any
    method: str | None
    headers: dict[str, str]
    batch: bool = False  # a JSON-RPC batch (before 2025-06-18): whatever comes back goes on
    answered: bool = False
    delivered: int = 0
    listing: bool = field(init=False)

    def __post_init__(self) -> None:
        self.listing = self.method == "tools/list"


class HttpUpstream:
    """The upstream MCP server at ``url``, over Streamable HTTP, for one proxy session (an `Upstream`).

    ``max_message``: the largest JSON answer or SSE event, in bytes after decompression;
    ``read_timeout``: seconds a request's answer may send nothing before it is answered with an error.
    """

    network_transport = "tcp"

    def __init__(
        self,
        url: str,
        headers: Sequence[tuple[str, str]],
        *,
        max_message: int = _MAX_LINE,
        read_timeout: float = _READ_TIMEOUT,
    ) -> None:
        self.peer: Peer | None = None
        self.url = url
        self.name = shown_url(url)  # errors name it without a secret
        self.headers = dict(headers)
        self.max_message = max_message
        self.read_timeout = read_timeout
        self.redacting = redacting_for(url, self.headers.values())
        self.client: httpx2.AsyncClient | None = None
        self.session: str | None = None
        self.version: str | None = None
        self.initialize_id: Any = None
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.tasks: set[asyncio.Task[None]] = set()
        self.in_flight: dict[Any, tuple[asyncio.Task[None], bool]] = {}  # request id: its POST, and if modern
        self.param_headers: dict[str, dict[tuple[str, ...], str]] = {}
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.listening = False

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    async def start(self) -> None:
        problem = url_problem(self.url) or next(filter(None, (header_problem(*h) for h in self.headers.items())), None)
        if problem is not None:
            raise StartError(f"cannot reach the upstream MCP server `{self.name}`: {problem}")
        try:
            url = httpx2.URL(self.url)
        except Exception:  # httpx2's own rules (an IDNA host, say): one line, never the URL
            raise StartError(f"cannot reach the upstream MCP server `{self.name}`: the URL cannot be read") from None
        port = url.port or (443 if url.scheme == "https" else 80)
        try:  # reachable now, so a wrong URL is one clear error at once, not a first call that fails
            _, writer = await asyncio.wait_for(asyncio.open_connection(url.host, port), _CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError, UnicodeError) as error:  # asyncio's own on Python 3.10
            reason = error.strerror if isinstance(error, OSError) and error.strerror else "no connection"
            raise StartError(f"cannot reach the upstream MCP server `{self.name}`: {reason}") from None
        writer.close()
        redact_http_logs(self.redacting)
        self.client = httpx2.AsyncClient(
            headers=self.headers,
            # Loading the CA bundle costs tens of ms at start-up: only an https URL needs it (a plain
            # http one never reaches TLS, as redirects are not followed).
            verify=url.scheme == "https",
            timeout=httpx2.Timeout(_CONNECT_TIMEOUT, read=self.read_timeout),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64),
        )
        self._spawn(self._send_in_order())

    def send(self, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                self.outbox.put_nowait(line)

    def pause_output(self, paused: bool) -> None:
        self.resumed.clear() if paused else self.resumed.set()

    async def stop(self) -> None:
        """Never raises: the session saves its counts after it, whatever the server did."""
        for task in list(self.tasks):
            task.cancel()
        if self.client is None:
            return
        if self.session is not None:
            try:
                await asyncio.wait_for(self.client.delete(self.url, headers=self._headers()), 2.0)
            except Exception as error:  # the session ends anyway; the server forgets it in its time
                logger.warning(
                    "the upstream MCP server `%s` did not end its session (%s)", self.name, type(error).__name__
                )
        with contextlib.suppress(Exception):
            await self.client.aclose()
        stop_redacting_http_logs(self.redacting)

    # ---- sending

    def _spawn(self, coroutine: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _send_in_order(self) -> None:
        """POST each message. A request runs on its own; anything else (a notification, a reply)
        and ``initialize`` are finished before the next message goes, so the server sees them in order.
        The headers are worked out here, in the order sent, as the version a message names holds for
        those after it."""
        while True:
            line = await self.outbox.get()
            try:
                await self._send_one(line)
            except Exception as error:  # never lose the sender: the next message still goes
                logger.error("could not send a message to the upstream (%s)", type(error).__name__)

    async def _send_one(self, line: bytes) -> None:
        message = message_of(line)
        request_id, method = message.get("id"), message.get("method")
        method = method if isinstance(method, str) else None
        if method == "initialize":
            self.version = None  # the handshake negotiates anew
        headers = self._headers()
        modern = modern_headers(message, self.param_headers)
        if modern is not None:
            headers.update(modern)
            self.version = modern.get(_VERSION_HEADER, self.version)
        if method == "notifications/cancelled" and self._cancelled(message):
            return
        exchange = _Exchange(request_id if method is not None else None, method, headers, batch=is_batch(line))
        if method is not None and request_id is not None:
            if method == "initialize":
                self.initialize_id = request_id
                await self._post(line, exchange)
            else:
                superseded = self.in_flight.get(request_id)
                if superseded is not None:  # the id reused: the old POST answers nothing more
                    superseded[0].cancel()
                task = self._spawn(self._post(line, exchange))
                self.in_flight[request_id] = (task, self.version in MODERN_VERSIONS)
                task.add_done_callback(lambda done: self._forget(request_id, done))
        else:
            await self._post(line, exchange)
            if method == "notifications/initialized" and not self.listening:
                self.listening = True
                self._spawn(self._listen())

    def _forget(self, request_id: Any, task: asyncio.Task[None]) -> None:
        post = self.in_flight.get(request_id)
        if post is not None and post[0] is task:
            del self.in_flight[request_id]

    def _cancelled(self, message: dict[str, Any]) -> bool:
        """A cancellation in the 2026-07-28 era: its request's POST is closed, and nothing is sent."""
        params = message.get("params")
        cancelled = params.get("requestId") if isinstance(params, dict) else None
        post = self.in_flight.get(cancelled) if isinstance(cancelled, (int, str)) else None
        if post is not None:
            if not post[1]:
                return False
            post[0].cancel()
            return True
        return self.version in MODERN_VERSIONS

    def _headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        headers = {"accept": accept}
        if self.session is not None:
            headers[_SESSION_HEADER] = self.session
        if self.version is not None:
            headers[_VERSION_HEADER] = self.version
        return headers

    # ---- one POST, to its answer

    async def _post(self, body: bytes, exchange: _Exchange) -> None:
        assert self.client is not None
        problem: Unanswerable | None = None
        try:
            problem = await self._exchange(body, exchange)
        except Unanswerable as refused:
            problem = refused
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as error:
            if self.peer is not None:  # the server is gone: every request it owes is answered
                self.peer.upstream_ended(f"cannot be reached ({type(error).__name__})")
            return
        except httpx2.TimeoutException:
            problem = Unanswerable(f"sent nothing for {self.read_timeout:g} s")
        except httpx2.HTTPError as error:
            problem = Unanswerable(f"broke the connection ({type(error).__name__})")
        except Exception as error:  # a bug here must still answer the request, never stay silent
            logger.error("a POST to the upstream failed (%s)", type(error).__name__)
            problem = Unanswerable(f"could not be read ({type(error).__name__})", INTERNAL_ERROR)
        if problem is None or exchange.answered:
            return
        if exchange.request_id is None:
            logger.warning("the upstream MCP server `%s` %s, to a notification", self.name, problem)
        elif self._owed(exchange):
            reason = f"the upstream MCP server `{self.name}` {problem}"
            answer = {"jsonrpc": "2.0", "id": exchange.request_id, "error": {"code": problem.code, "message": reason}}
            await self._deliver(dumped(answer), exchange)

    def _owed(self, exchange: _Exchange) -> bool:
        """Whether the request still waits for an answer (the relay's own requests: none came on this POST)."""
        request_id = exchange.request_id
        if isinstance(request_id, str) and request_id.startswith(OWN_PREFIX):
            return exchange.delivered == 0
        return self.peer is not None and self.peer.owes(request_id)

    async def _exchange(self, body: bytes, exchange: _Exchange) -> Unanswerable | None:
        """POST ``body`` and hand on what comes back; why the answer cannot come, or None (it came, or
        none is due)."""
        assert self.client is not None
        headers = {**exchange.headers, "content-type": "application/json"}
        # A listen stream stays open while nothing changes: no read deadline (the pings watch the server).
        timeout = _NO_READ_DEADLINE if exchange.method == "subscriptions/listen" else httpx2.USE_CLIENT_DEFAULT
        async with self.client.stream("POST", self.url, content=body, headers=headers, timeout=timeout) as response:
            self._take_session(response)
            status = response.status_code
            if exchange.request_id is None and not exchange.batch:  # a notification or a reply: nothing is due
                return None if 200 <= status < 300 else Unanswerable(f"answered HTTP {status}")
            if status in (202, 204):
                return Unanswerable(f"answered {status} without a result", INVALID_REQUEST)
            if 300 <= status < 400:
                return Unanswerable(redirect_reason(response), INVALID_REQUEST)
            if status != 200:
                return await self._http_error(response, exchange)
            content_type = content_type_of(response)
            if content_type == "text/event-stream":
                return await self._stream(response, exchange)
            if content_type != "application/json":
                shown = f"`{content_type}`" if content_type else "no content type"
                return Unanswerable(f"answered HTTP 200 with {shown}, not JSON or an SSE stream", INVALID_REQUEST)
            data = await bounded_body(response, self.max_message)
            if not data.strip():
                return Unanswerable("answered HTTP 200 with an empty body", PARSE_ERROR)
            if not await self._deliver(data, exchange):
                return Unanswerable(
                    f"answered HTTP 200 with a body that is not JSON-RPC ({len(data)} bytes)", PARSE_ERROR
                )
            if exchange.answered or exchange.batch:  # a batch's answers go on as they came
                return None
            return Unanswerable("answered with JSON that is not this request's answer")

    def _take_session(self, response: httpx2.Response) -> None:
        session = response.headers.get(_SESSION_HEADER)
        if session is None or self.session is not None:
            return
        if not _VISIBLE_ASCII.fullmatch(session):
            # MCP: visible ASCII only. One that is not could never be sent back: refused in one line.
            problem = "sent a session id that is not visible ASCII (MCP allows 0x21 to 0x7E)"
            if self.peer is not None:
                self.peer.upstream_ended(problem)
            raise Unanswerable(problem, INVALID_REQUEST)
        self.session = session

    async def _http_error(self, response: httpx2.Response, exchange: _Exchange) -> Unanswerable | None:
        """An HTTP error: a JSON-RPC error in its body goes on as sent; else one error naming the status."""
        status = response.status_code
        content_type = content_type_of(response)
        try:
            data = await bounded_body(response, MAX_ERROR_BODY)
        except Unanswerable:
            return Unanswerable(f"answered HTTP {status} with a body over {MAX_ERROR_BODY} bytes", INTERNAL_ERROR)
        message = message_of(data) if data else {}
        error = message.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int) and "method" not in message:
            if message.get("id") != exchange.request_id:  # null, before the server read the id: the request's
                data = dumped({**message, "id": exchange.request_id}) or data
            await self._deliver(data, exchange)
            return None
        reason = f"answered HTTP {status}"
        if status == 404:
            if self.session is not None:
                return Unanswerable(f"{reason}: its session has ended; reconnect to start a new one", INVALID_REQUEST)
            return Unanswerable(f"{reason} (no such endpoint or method)", METHOD_NOT_FOUND)
        shown = f"a `{content_type}` body" if data.strip() else "no body"
        return Unanswerable(f"{reason} with {shown}, not a JSON-RPC error", INTERNAL_ERROR)

    async def _stream(self, response: httpx2.Response, exchange: _Exchange) -> Unanswerable | None:
        """The POST's SSE stream, resumed with ``Last-Event-ID`` while it breaks before the answer:
        a normal end resets the count of tries, as the SDK's client does; only failures count."""
        reader = EventReader(self.max_message)
        try:
            problem = await self._events(response, reader, exchange)
        except httpx2.TimeoutException:
            raise  # the request's deadline: answered as such
        except _BROKEN:
            problem = None  # resumed below, when it can be
        failures = 0
        while not exchange.answered and not exchange.batch and problem is None:
            if reader.last_id is None:
                return Unanswerable("closed its SSE stream before the answer, with no event id to resume it")
            if failures >= _RESUMPTIONS:
                return Unanswerable(f"closed its SSE stream before the answer; {failures} tries to resume it failed")
            if not self._owed(exchange):
                return None  # cancelled meanwhile: no answer is due
            await asyncio.sleep(reader.retry / 1000 if reader.retry is not None else _RESUME_DELAY)
            before = reader.last_id
            try:
                async with self._get(reader.last_id) as resumed:
                    if resumed.status_code != 200 or content_type_of(resumed) != "text/event-stream":
                        failures += 1
                        continue
                    reader = EventReader(self.max_message, reader.last_id, reader.retry)
                    problem = await self._events(resumed, reader, exchange)
            except httpx2.TimeoutException:
                raise
            except _BROKEN:
                failures += 1
                continue
            # Ended normally: the count starts again, unless the stream brought nothing new.
            failures = 0 if reader.last_id != before else failures + 1
        return problem

    async def _events(self, response: httpx2.Response, reader: EventReader, exchange: _Exchange) -> Unanswerable | None:
        """Hand on each event's message until the answer (then the stream is left); None when the
        stream ended, or the problem that ends the request. A broken stream raises (`_BROKEN`)."""
        try:
            async for chunk in response.aiter_bytes():
                for event in reader.feed(chunk):
                    if event.data.strip() and not await self._deliver(event.data, exchange):
                        problem = f"sent an SSE event that is not JSON-RPC ({len(event.data)} bytes)"
                        return Unanswerable(problem, PARSE_ERROR)
                    if exchange.answered:
                        return None
        except EventTooLarge as error:
            return Unanswerable(str(error), INTERNAL_ERROR)
        return None

    def _get(self, last_id: str | None) -> Any:
        assert self.client is not None
        headers = self._headers("text/event-stream")
        if last_id:
            headers["last-event-id"] = last_id
        return self.client.stream("GET", self.url, headers=headers)

    async def _listen(self) -> None:
        """The GET stream for the server's own requests and notifications, reconnected by the SDK's
        rules: a normal end resets the count of failures; only failures count."""
        reader = EventReader(self.max_message)
        failures = 0
        while failures < _RESUMPTIONS:
            try:
                async with self._get(reader.last_id) as response:
                    if response.status_code != 200 or content_type_of(response) != "text/event-stream":
                        return  # 405: the server offers no such stream; a redirect would come again
                    reader = EventReader(self.max_message, reader.last_id, reader.retry)
                    problem = await self._events(response, reader, _Exchange(None, None, {}))
                    if problem is not None:
                        logger.warning("the upstream MCP server `%s` %s, on its GET stream", self.name, problem)
                        failures += 1
                    else:
                        failures = 0
            except httpx2.TimeoutException:
                pass  # a quiet server, not a failing one: reconnect, as after a normal end
            except _BROKEN:
                failures += 1
            except Exception as error:  # never a traceback from a background task
                logger.warning("the GET stream of `%s` failed (%s)", self.name, type(error).__name__)
                failures += 1
            if failures < _RESUMPTIONS:
                await asyncio.sleep(reader.retry / 1000 if reader.retry is not None else _RESUME_DELAY)

    # ---- to the host

    async def _deliver(self, body: bytes, exchange: _Exchange) -> bool:
        """Hand one message on as one line; False (nothing handed on) when it is not JSON-RPC."""
        message = message_of(body)
        if not message and not (is_batch(body) and body.rstrip().endswith(b"]")):
            return False
        await self.resumed.wait()  # the client is not keeping up: leave the rest in the socket
        # Newlines in a JSON text are only ever whitespace between tokens, so one line keeps the meaning.
        line = body.replace(b"\r", b" ").replace(b"\n", b" ").strip() + b"\n"
        if exchange.request_id is not None and message.get("id") == exchange.request_id and "method" not in message:
            exchange.answered = True
            if self.version is None and exchange.request_id == self.initialize_id:
                self._learn_version(message)
            if exchange.listing:
                self._learn_param_headers(message)
        exchange.delivered += 1
        if self.peer is not None:
            self.peer.upstream_lines([line])
        return True

    def _learn_version(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str) and version.isascii() and version.isprintable():
            self.version = version

    def _learn_param_headers(self, message: dict[str, Any]) -> None:
        """Each listed tool's ``x-mcp-header`` annotations, for the ``Mcp-Param-*`` headers of its calls."""
        for name, headers in listed_param_headers(message):
            if not headers:
                self.param_headers.pop(name, None)
            elif len(self.param_headers) < _MAX_TOOLS:
                self.param_headers[name] = headers
