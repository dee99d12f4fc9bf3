"""A remote upstream over MCP's Streamable HTTP transport, for ``pydantic-lenient proxy --url``.

An upstream transport (`pydantic_lenient.proxy.upstream`): it carries each message the relay
session routes upstream as the body of a POST, and hands every message the server answers with
(a JSON body, or each event of an SSE stream) back to the relay as bytes, untouched: nothing is
parsed into a model. It keeps the session (``Mcp-Session-Id``), sends the negotiated
``MCP-Protocol-Version``, opens the GET stream for the server's own messages, resumes a stream that
breaks before its answer with ``Last-Event-ID``, and ends the session with a DELETE. The user's
headers (``--header``, for auth) go with every request; neither their values nor the URL's query
are ever logged, by the proxy or by the HTTP stack (httpx2 logs each request's URL at INFO: a filter
on its loggers takes them out for the session).

Built on httpx2, the HTTP client the official MCP SDK's own Streamable HTTP client uses: its
`EventSource` parses SSE with a bound on an event's size, and one pooled client keeps connections
alive, so a call costs one POST on a warm connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .messages import parsed
from .upstream import Peer, StartError

__all__ = ("HttpUpstream",)

logger = logging.getLogger("pydantic_lenient.proxy")

_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_CONNECT_TIMEOUT = 10.0
_RESUMPTIONS = 3  # tries to resume a stream that broke before its answer
_RESUME_DELAY = 1.0  # seconds before a resumption when the server named no retry interval
_HTTP_LOGGERS = ("httpx2", "httpcore2")
_REDACTED = "[redacted]"


class _Redacting(logging.Filter):
    """Takes the given secrets (header values, the URL's query) out of every record it sees."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        self.secrets = sorted({secret for secret in secrets if secret}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in self.secrets:
                message = message.replace(secret, _REDACTED)
            record.msg, record.args = message, None
        return True


class HttpUpstream:
    """The upstream MCP server at ``url``, over Streamable HTTP, for one proxy session (an `Upstream`)."""

    network_transport = "tcp"

    def __init__(self, url: str, headers: Sequence[tuple[str, str]]) -> None:
        self.peer: Peer | None = None
        self.url = url
        parts = urlsplit(url)
        # The name shown in errors: no credentials, no query (either may hold a token).
        self.name = f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
        self.headers = dict(headers)
        self.redacting = _Redacting([parts.query, *self.headers.values()])
        self.client: httpx2.AsyncClient | None = None
        self.session: str | None = None
        self.version: str | None = None
        self.initialize_id: Any = None
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.tasks: set[asyncio.Task[None]] = set()
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.listening = False

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    async def start(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StartError(f"cannot reach the upstream MCP server `{self.name}`: not an http(s) URL")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:  # reachable now, so a wrong URL is one clear error at once, not a first call that fails
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), _CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as error:  # asyncio's own on Python 3.10
            reason = error.strerror if isinstance(error, OSError) and error.strerror else "no connection"
            raise StartError(f"cannot reach the upstream MCP server `{self.name}`: {reason}") from None
        writer.close()
        for name in _HTTP_LOGGERS:
            logging.getLogger(name).addFilter(self.redacting)
        self.client = httpx2.AsyncClient(
            headers=self.headers,
            # Loading the CA bundle costs tens of ms at start-up: only an https URL needs it (a plain
            # http one never reaches TLS, as redirects are not followed).
            verify=parts.scheme == "https",
            timeout=httpx2.Timeout(_CONNECT_TIMEOUT, read=None),  # a tool may run long: liveness is the pings' job
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
        for task in list(self.tasks):
            task.cancel()
        if self.client is None:
            return
        if self.session is not None:
            with contextlib.suppress(httpx2.HTTPError, asyncio.TimeoutError):
                await asyncio.wait_for(self.client.delete(self.url, headers=self._headers()), 2.0)
        await self.client.aclose()
        for name in _HTTP_LOGGERS:
            logging.getLogger(name).removeFilter(self.redacting)

    # ---- sending

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send_in_order(self) -> None:
        """POST each message. A request runs on its own; anything else (a notification, a reply)
        and ``initialize`` are finished before the next message goes, so the server sees them in order."""
        while True:
            line = await self.outbox.get()
            message = parsed(line)
            request_id = message.get("id")
            if "method" in message and request_id is not None:
                if message["method"] == "initialize":
                    self.initialize_id = request_id
                    await self._post(line, request_id)
                else:
                    self._spawn(self._post(line, request_id))
            else:
                await self._post(line, None)
                if message.get("method") == "notifications/initialized" and not self.listening:
                    self.listening = True
                    self._spawn(self._listen())

    def _headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        headers = {"accept": accept}
        if self.session is not None:
            headers[_SESSION_HEADER] = self.session
        if self.version is not None:
            headers[_VERSION_HEADER] = self.version
        return headers

    async def _post(self, body: bytes, request_id: Any) -> None:
        assert self.client is not None
        headers = {**self._headers(), "content-type": "application/json"}
        try:
            async with self.client.stream("POST", self.url, content=body, headers=headers) as response:
                session = response.headers.get(_SESSION_HEADER)
                if session is not None and self.session is None:
                    self.session = session
                if response.status_code in (202, 204):
                    return
                if response.status_code >= 400:
                    await response.aread()
                    if request_id is not None:
                        await self._deliver(_http_error(request_id, response.status_code, self.session is not None))
                    else:
                        logger.warning("the upstream answered a notification with HTTP %d", response.status_code)
                    return
                await self._read(response, request_id)
        except httpx2.HTTPError as error:
            if self.peer is not None:
                self.peer.upstream_ended(f"cannot be reached ({type(error).__name__})")

    async def _read(self, response: httpx2.Response, request_id: Any) -> None:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type != "text/event-stream":
            body = await response.aread()
            if body.strip():
                await self._deliver(body)
            return
        last_id, retry = await self._events(response)
        for _ in range(_RESUMPTIONS):
            if request_id is None or self.peer is None or not self.peer.owes(request_id) or not last_id:
                return
            await asyncio.sleep(retry / 1000 if retry is not None else _RESUME_DELAY)
            async with self._get(last_id) as resumed:
                if resumed.status_code != 200:
                    break
                last_id, retry = await self._events(resumed, last_id, retry)

    async def _events(
        self, response: httpx2.Response, last_id: str = "", retry: int | None = None
    ) -> tuple[str, int | None]:
        """Deliver each event's message; the last event id and retry interval, for a resumption."""
        with contextlib.suppress(httpx2.HTTPError):  # a broken stream: the caller resumes it
            async for event in httpx2.EventSource(response):
                last_id = event.id or last_id
                retry = event.retry if event.retry is not None else retry
                if event.data.strip():
                    await self._deliver(event.data.encode("utf-8", "surrogatepass"))
        return last_id, retry

    def _get(self, last_id: str | None) -> Any:
        assert self.client is not None
        headers = self._headers("text/event-stream")
        if last_id:
            headers["last-event-id"] = last_id
        return self.client.stream("GET", self.url, headers=headers)

    async def _listen(self) -> None:
        """The GET stream for the server's own requests and notifications, resumed when it breaks."""
        last_id: str | None = None
        retry: int | None = None
        for _ in range(_RESUMPTIONS + 1):
            try:
                async with self._get(last_id) as response:
                    if response.status_code != 200:
                        return  # 405: the server offers no such stream
                    last_id, retry = await self._events(response, last_id or "", retry)
            except httpx2.HTTPError:
                pass
            await asyncio.sleep(retry / 1000 if retry is not None else _RESUME_DELAY)

    async def _deliver(self, body: bytes) -> None:
        await self.resumed.wait()  # the client is not keeping up: leave the rest in the socket
        # Newlines in a JSON text are only ever whitespace between tokens, so one line keeps the meaning.
        line = body.replace(b"\r", b" ").replace(b"\n", b" ").strip() + b"\n"
        if self.version is None and self.initialize_id is not None:
            self._learn_version(line)
        if self.peer is not None:
            self.peer.upstream_lines([line])

    def _learn_version(self, line: bytes) -> None:
        message = parsed(line)
        result = message.get("result")
        if message.get("id") == self.initialize_id and isinstance(result, dict):
            version = result.get("protocolVersion")
            if isinstance(version, str) and version.isascii() and version.isprintable():
                self.version = version


def _http_error(request_id: Any, status: int, in_session: bool) -> bytes:
    reason = f"the upstream answered HTTP {status}"
    if status == 404 and in_session:
        reason += ": its session has ended; reconnect to start a new one"
    message = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": reason}}
    return json.dumps(message, separators=(",", ":")).encode()
