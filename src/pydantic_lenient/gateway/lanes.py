"""One upstream connection shared by many clients: a `Lane` multiplexes their requests onto it.

A stdio server is a single session, and a gateway has many clients. Each server gets one upstream
connection per era (a stdio child, or a Streamable HTTP session on one pooled HTTP client), driven
by the proxy's relay session (`pydantic_lenient.proxy.core.Proxy`), so every ``tools/list`` is
widened and every ``tools/call`` normalized, repaired and recorded exactly as the proxy does. Each
client request goes upstream under an id of the lane's own (``gw-<random>-<n>``, so clients that
all number their requests 1, 2, 3 never collide), and its answer comes back under the client's id.

The lane holds the session itself: a handshake-era lane sends ``initialize`` once and answers every
client's ``initialize`` from that (`Lane.handshake`); a 2026-07-28 lane asks ``server/discover``.
What a stateful server sees is therefore one client: state a tool keeps between calls is shared by
every client of the gateway (documented in ``docs/gateway.md``).

Notifications that name their request reach its client, on that request's stream (`exchange`'s
``notified``), under the client's own names:

* progress: a request that asks for it (``params._meta.progressToken``) goes upstream with the
  token replaced by its lane id, so that tokens two clients both chose never collide;
* a 2026-07-28 ``subscriptions/listen``: every event the upstream sends on it carries the listen
  request's id (``_meta["io.modelcontextprotocol/subscriptionId"]``), which is its lane id. Its
  answer ends the stream, so the lane waits for it without a timeout, until the client leaves.

No other notification names the request it belongs to (a stdio server's logging does not), so a
shared lane sends none of them to a client: with many clients on one upstream, it would reach the
wrong one. A `pydantic_lenient.gateway.client_lanes.ClientLane` serves one client, and sends it all.

Faults: an upstream that exits, hangs (the relay's pings) or cannot be reached has every request in
flight answered with a JSON-RPC error naming the server (never its command, URL or headers), and
is started again with exponential backoff; a request waits for the lane at most its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_lenient._version import __version__
from pydantic_lenient.observe.logdir import LogDirError
from pydantic_lenient.proxy.core import Proxy, ProxyOptions
from pydantic_lenient.proxy.messages import dumped, is_id, parsed
from pydantic_lenient.proxy.upstream import StartError, Upstream

from .config import ServerConfig
from .eras import HANDSHAKE_VERSIONS, Era, modern_meta

__all__ = ("SUBSCRIPTION_ID", "Lane", "LaneUnavailable", "Notified", "error_response", "progress_token")

logger = logging.getLogger("pydantic_lenient.gateway")

_HANDSHAKE_WAIT = 30.0  # seconds the upstream may take to answer the lane's initialize or discover
_FIRST_BACKOFF = 0.5
_MAX_BACKOFF = 30.0
_STABLE = 30.0  # seconds a session must last for the backoff to start again from the first delay
_CLIENT_NAME = "pydantic-lenient-gateway"
_UPSTREAM_ERROR = -32000
_LISTEN = "subscriptions/listen"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class LaneUnavailable(Exception):
    """The upstream cannot answer now; the message names the server, never its address or secrets."""


def error_response(request_id: Any, message: str, code: int = _UPSTREAM_ERROR) -> bytes:
    """A JSON-RPC error answer, one line."""
    return dumped({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


Notified = Callable[[bytes], None]
"""Where a request's notifications go: called with each line, under the client's own token or id."""


@dataclass
class _Pending:
    future: asyncio.Future[bytes]
    client_id: Any
    notified: Notified | None = None
    client_token: Any = None


class Lane:
    """The upstream ``server`` (named ``name``) in one ``era``, shared by every client of that era.

    `exchange` sends one client request and returns its answer (bytes, under the client's id);
    `notify` sends a notification. The lane is its `Proxy`'s client side (`write`, `is_closing`,
    `close`)."""

    def __init__(self, name: str, server: ServerConfig, era: Era, options: ProxyOptions) -> None:
        self.name, self.server, self.era, self.options = name, server, era, options
        self.prefix = f"gw-{secrets.token_hex(6)}-"
        self.ids = itertools.count(1)
        self.pending: dict[str, _Pending] = {}
        self.proxy: Proxy | None = None
        self.ready = asyncio.Event()
        self.handshake: dict[str, Any] = {}
        self.failure: str | None = None
        self.sessions = 0
        self.closing = False
        self.ended = asyncio.Event()  # set when the lane stops for good
        self.supervisor: asyncio.Task[None] | None = None

    restarts = True
    """Whether an upstream that ends is started again (`ClientLane`'s is not: its session ends with it)."""

    # ---- the client side of the relay session (`pydantic_lenient.proxy.core.ClientOutput`)

    def write(self, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                self._from_upstream(line)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        """Nothing to close: the lane outlives its sessions."""

    def _from_upstream(self, line: bytes) -> None:
        message = parsed(line)
        request_id = message.get("id")
        if "method" in message:
            if request_id is not None:
                self._server_request(line, request_id)
            elif not self._notification(message):
                self._unrouted(line)
            return
        if not isinstance(request_id, str):
            return  # not an answer to the lane: the lane sends nothing else
        pending = self.pending.pop(request_id, None)
        if pending is None or pending.future.done():
            return
        pending.future.set_result(_with_id(line, request_id, pending.client_id))

    def _server_request(self, line: bytes, request_id: Any) -> None:
        """A request of the upstream's own: a shared lane has no one client to ask (`ClientLane` has)."""
        self._send(error_response(request_id, "the gateway does not relay server-to-client requests", -32601))

    def _unrouted(self, line: bytes) -> None:
        """A notification that names no request: a shared lane sends it to no one (`ClientLane` does)."""

    def _notification(self, message: dict[str, Any]) -> bool:
        """``message`` to the client whose request it names (see the module's docstring); False
        when it names none."""
        params = message.get("params")
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        subscription = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if isinstance(subscription, str):
            pending = self.pending.get(subscription)
            if pending is not None and pending.notified is not None:
                assert isinstance(meta, dict)
                named = {**params, "_meta": {**meta, SUBSCRIPTION_ID: pending.client_id}}
                pending.notified(dumped({**message, "params": named}))
            return True
        if message["method"] == "notifications/progress":
            token = params.get("progressToken")
            pending = self.pending.get(token) if isinstance(token, str) else None
            if pending is not None and pending.notified is not None and pending.client_token is not None:
                pending.notified(dumped({**message, "params": {**params, "progressToken": pending.client_token}}))
            return True
        return False

    # ---- requests

    def start(self) -> None:
        """Start (once) the task that keeps the upstream running."""
        if self.supervisor is None or self.supervisor.done():
            self.closing = False
            self.supervisor = asyncio.create_task(self._supervise(), name=f"gateway lane {self.name} {self.era}")

    async def wait_ready(self, timeout: float) -> None:
        """Wait until the upstream can take requests; `LaneUnavailable` after ``timeout`` seconds."""
        if not self.ended.is_set():
            self.start()
        if self.ready.is_set():
            return
        waiters = [asyncio.ensure_future(self.ready.wait()), asyncio.ensure_future(self.ended.wait())]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not self.ready.is_set():
            why = f": {self.failure}" if self.failure else ""
            raise LaneUnavailable(f"the upstream MCP server `{self.name}` is not available{why}")

    async def exchange(
        self, message: dict[str, Any], timeout: float, verbatim: bool = False, notified: Notified | None = None
    ) -> bytes:
        """Send the request ``message`` upstream and return its answer, under the client's own id;
        the notifications that name it go to ``notified`` (when given). ``timeout``: seconds for the
        answer, except a ``subscriptions/listen``'s, which ends its stream whenever it comes."""
        started = time.monotonic()
        await self.wait_ready(timeout)
        client_id = message.get("id")
        lane_id = f"{self.prefix}{next(self.ids)}"
        pending = _Pending(asyncio.get_running_loop().create_future(), client_id)
        sent = {**message, "id": lane_id}
        token = progress_token(message)
        if notified is not None:
            pending.notified = notified
            if token is not None:
                params, meta = message["params"], message["params"]["_meta"]
                sent["params"] = {**params, "_meta": {**meta, "progressToken": lane_id}}
                pending.client_token = token
        line = dumped(sent, verbatim)
        if not line:
            return error_response(client_id, "the request cannot be written as JSON", -32600)
        future = pending.future
        self.pending[lane_id] = pending
        self._send(line)
        remaining = None if message.get("method") == _LISTEN else max(timeout - (time.monotonic() - started), 0.001)
        try:
            return await asyncio.wait_for(future, remaining)
        except asyncio.TimeoutError:
            return error_response(client_id, f"the upstream MCP server `{self.name}` did not answer in {timeout:g} s")
        finally:
            if self.pending.pop(lane_id, None) is not None:  # timed out or the client left: the upstream may stop
                self._cancel(lane_id)

    def notify(self, message: dict[str, Any]) -> None:
        """Send a notification upstream (dropped while the upstream is down)."""
        if self.ready.is_set():
            if self.era == "modern":
                return  # the 2026-07-28 core protocol has no client notifications: cancelling is closing the stream
            self._send(dumped(message))

    def _cancel(self, lane_id: str) -> None:
        """Tell the upstream to stop working on ``lane_id``. In both eras: a stdio server reads
        ``notifications/cancelled`` in each, and the proxy's remote transport closes a 2026-07-28
        request's POST instead of sending it."""
        if self.ready.is_set():
            self._send(
                dumped({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": lane_id}})
            )

    def _send(self, line: bytes) -> None:
        if self.proxy is not None and line:
            self.proxy.client_lines([line])

    # ---- the upstream's life

    async def shutdown(self, reason: str = "the gateway is shutting down") -> None:
        """Stop the upstream for good, answering what is in flight with ``reason``."""
        self.closing = True
        if self.supervisor is not None:
            self.supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.supervisor
        await self._end_session(reason)
        self.ended.set()

    async def _supervise(self) -> None:
        delay = _FIRST_BACKOFF
        while not self.closing:
            opened = time.monotonic()
            try:
                await self._open()
            except (StartError, LaneUnavailable, LogDirError, OSError) as error:
                self.failure = str(error)
                logger.warning(
                    "upstream `%s` (%s) could not start: %s; %s", self.name, self.era, error, self._next(delay)
                )
                await self._end_session(str(error))
                if not self.restarts:
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, _MAX_BACKOFF)
                continue
            assert self.proxy is not None
            self.failure = None
            self.ready.set()
            await self.proxy.done.wait()
            reason = self.proxy.failure or f"the upstream MCP server `{self.name}` ended its session"
            self.failure = reason
            logger.warning("upstream `%s` (%s) stopped: %s; %s", self.name, self.era, reason, self._next(delay))
            await self._end_session(reason)
            if not self.restarts:
                break
            if time.monotonic() - opened > _STABLE:
                delay = _FIRST_BACKOFF
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_BACKOFF)
        self.ended.set()

    def _next(self, delay: float) -> str:
        return f"starting again in {delay:g} s" if self.restarts else "its session ends"

    async def _end_session(self, reason: str) -> None:
        """Answer every request still in flight with ``reason``, and stop the session."""
        self.ready.clear()
        for lane_id, pending in list(self.pending.items()):
            del self.pending[lane_id]
            if not pending.future.done():
                pending.future.set_result(error_response(pending.client_id, f"{reason} before answering this request"))
        proxy, self.proxy = self.proxy, None
        if proxy is not None:
            proxy.finish(reason)
            await proxy.close()

    async def _open(self) -> None:
        self.sessions += 1
        upstream = self._upstream()
        if self.server.url is None:  # a child is attached its reader once started, as `proxy.stdio.serve` does
            await upstream.start()
        try:
            proxy = Proxy(upstream, self.options, host_transport="tcp")
        except BaseException:
            await upstream.stop()
            raise
        proxy.client_out = self
        self.proxy = proxy
        await proxy.start()
        if self.era == "legacy":
            self.handshake = await self._own_request("initialize", self._initialize_params())
            self._send(dumped({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            await self._own_request("tools/list", {})  # the relay keeps the schemas, for the first calls
        else:
            meta = modern_meta(_CLIENT_NAME, __version__)
            self.handshake = await self._own_request("server/discover", {"_meta": meta})
            await self._own_request("tools/list", {"_meta": meta})

    def _initialize_params(self) -> dict[str, Any]:
        """What the lane's ``initialize`` says: the gateway, with no capabilities (it cannot tell which
        client a server's request would be for)."""
        client_info = {"name": _CLIENT_NAME, "version": __version__}
        return {"protocolVersion": HANDSHAKE_VERSIONS[0], "capabilities": {}, "clientInfo": client_info}

    async def _own_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        lane_id = f"{self.prefix}{next(self.ids)}"
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.pending[lane_id] = _Pending(future, lane_id)
        self._send(dumped({"jsonrpc": "2.0", "id": lane_id, "method": method, "params": params}))
        try:
            answer = parsed(await asyncio.wait_for(future, _HANDSHAKE_WAIT))
        except asyncio.TimeoutError:
            raise LaneUnavailable(f"the upstream MCP server `{self.name}` did not answer {method}") from None
        finally:
            self.pending.pop(lane_id, None)
        result = answer.get("result")
        if not isinstance(result, dict):
            error = answer.get("error")
            why = error.get("message") if isinstance(error, dict) else None
            raise LaneUnavailable(f"the upstream MCP server `{self.name}` refused {method}: {str(why)[:200]}")
        return result

    def _upstream(self) -> Upstream:
        """A new connection to the server; it names itself by the server's name in the config only."""
        server = self.server
        upstream: Upstream
        if server.url is not None:
            headers = tuple(server.headers.items())
            from pydantic_lenient.proxy.transports import http_upstream

            upstream = http_upstream()(server.url, headers)  # it speaks both eras, headers included
        else:
            from pydantic_lenient.proxy.child import ChildUpstream

            assert server.command is not None
            upstream = ChildUpstream((server.command, *server.args), env=server.env, cwd=server.cwd)
        upstream.name = self.name  # errors name the server as configured: no command line, URL or header
        return upstream

    def initialize_answer(self, client_id: Any, requested: Any) -> bytes:
        """The answer to a client's ``initialize``: the upstream's own, at the client's version when
        the gateway speaks it."""
        result = {**self.handshake, "protocolVersion": self.negotiated(requested)}
        return dumped({"jsonrpc": "2.0", "id": client_id, "result": result})

    def negotiated(self, requested: Any) -> Any:
        """The version a client asking for ``requested`` is answered with: its own when the gateway
        speaks it (the relay passes messages on as they are), else the upstream's."""
        if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
            return requested
        return self.handshake.get("protocolVersion", HANDSHAKE_VERSIONS[0])


def progress_token(message: dict[str, Any]) -> Any:
    """The request's ``params._meta.progressToken`` (a string or an integer), or None."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if is_id(token) else None


_ID_MEMBER = re.compile(rb'"id"[ \t\r\n]*:[ \t\r\n]*"([^"\\]*)"')


def _with_id(line: bytes, lane_id: str, client_id: Any) -> bytes:
    """``line`` (the answer to ``lane_id``) under ``client_id``, every other byte kept: the
    answer's top-level ``"id"`` member is the first ``"id":"<lane id>"`` in it, as the lane id
    is random and a string inside a JSON string would be escaped."""
    wanted = lane_id.encode()
    for found in _ID_MEMBER.finditer(line):
        if found.group(1) == wanted:
            replacement = dumped({"id": client_id})[6:-2] if client_id is not None else b"null"
            return b"".join((line[: found.start()], b'"id":', replacement, line[found.end() :]))
    return line
