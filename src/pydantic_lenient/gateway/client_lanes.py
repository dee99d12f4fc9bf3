"""An upstream connection for one client session: `ClientLane`, for ``"sessions": "per-client"``.

A shared `pydantic_lenient.gateway.lanes.Lane` cannot send a client what names no request of
that client's: a stdio server's elicitation, sampling or roots request, or its logging, says nothing
of the call it belongs to. A handshake-era client session of a ``per-client`` server therefore gets
a lane of its own: its ``initialize`` is the client's (its capabilities, so the server asks what the
client can answer), and whatever the upstream sends that no request claims goes to that client, on
the stream of its latest request in flight, else on its ``GET`` stream. The client's answers to the
upstream's requests come back as POSTs, which `reply` passes on as they are.

The lane lives in the worker that answered the client's ``initialize``; a load balancer routes the
session there by its ``Mcp-Session-Id`` (docs/gateway.md). It is not restarted: when its upstream
ends, the session ends, and the client's next request is answered 404, upon which the client
initializes again, as the Streamable HTTP transport says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import time
from typing import Any

from pydantic_lenient.proxy.core import ProxyOptions

from .config import GatewaySettings, ServerConfig
from .lanes import Lane, LaneUnavailable, Notified, error_response
from .sessions import new_key, read_session, session_id

__all__ = ("ClientLane", "ClientSessions", "TooManySessions")

_NO_STREAM = -32603
_REAP_EVERY = 30.0  # seconds between looks for idle sessions


class ClientLane(Lane):
    """The upstream ``server`` (named ``name``) for the one client whose ``initialize`` params are
    ``initialize``."""

    restarts = False

    def __init__(self, name: str, server: ServerConfig, options: ProxyOptions, initialize: dict[str, Any]) -> None:
        super().__init__(name, server, "legacy", options)
        self.initialize = initialize
        self.streams: list[Notified] = []  # the client's open streams, the latest last
        self.last_used = time.monotonic()
        self.credential = b""  # a digest of the Authorization that opened the session (`app._credential`)

    def _initialize_params(self) -> dict[str, Any]:
        return self.initialize

    def _server_request(self, line: bytes, request_id: Any) -> None:
        if not self._to_client(line):
            self._send(error_response(request_id, "the client has no stream open to take this request", _NO_STREAM))

    def _unrouted(self, line: bytes) -> None:
        self._to_client(line)

    def _to_client(self, line: bytes) -> bool:
        if not self.streams:
            return False
        self.streams[-1](line)
        return True

    async def exchange(
        self, message: dict[str, Any], timeout: float, verbatim: bool = False, notified: Notified | None = None
    ) -> bytes:
        """`Lane.exchange`, with the request's stream open to what the upstream sends meanwhile."""
        if notified is not None:
            self.streams.append(notified)
        self.last_used = time.monotonic()
        try:
            return await super().exchange(message, timeout, verbatim, notified)
        finally:
            if notified is not None:
                self.streams.remove(notified)
            self.last_used = time.monotonic()

    async def listen(self, notified: Notified) -> bytes:
        """The client's ``GET`` stream: open until the session ends (or the client leaves)."""
        self.streams.insert(0, notified)  # a request's own stream, when one is open, goes first
        try:
            await self.ended.wait()
        finally:
            self.streams.remove(notified)
            self.last_used = time.monotonic()
        return b""

    def reply(self, line: bytes) -> None:
        """The client's answer to a request of the upstream's (a response, or a notification)."""
        self.last_used = time.monotonic()
        if self.ready.is_set():
            self._send(line)

    def cancel(self, client_id: Any) -> None:
        """The client cancelled its request ``client_id``: the upstream is told, and the request is
        answered now (the client reads no answer to it)."""
        for lane_id, pending in list(self.pending.items()):
            if pending.client_id == client_id and not pending.future.done():
                pending.future.set_result(error_response(client_id, "the client cancelled this request", -32800))
                del self.pending[lane_id]
                self._cancel(lane_id)

    def idle(self, now: float, limit: float) -> bool:
        """Whether the session has gone ``limit`` seconds with nothing in flight and no stream open."""
        return not self.pending and not self.streams and now - self.last_used > limit


class TooManySessions(Exception):
    """The worker holds ``maxSessions`` sessions already."""


class ClientSessions:
    """The ``per-client`` sessions one worker holds, by key: opened at a client's ``initialize``
    (`open`), found by the session id and the credential that opened them (`find`), and ended on
    ``DELETE``, when idle past ``sessionIdleSeconds`` (`reap`), or with their upstream.

    ``options`` gives a server's relay options; every session of a server shares one outcome
    recorder (`recorder`), so that a session costs no flusher thread of its own."""

    def __init__(self, settings: GatewaySettings, options: dict[str, ProxyOptions]) -> None:
        self.settings = settings
        self.options = options
        self.lanes: dict[str, ClientLane] = {}
        self.recorders: dict[str, Any] = {}
        self.reaper: asyncio.Task[None] | None = None

    async def open(
        self, name: str, server: ServerConfig, initialize: dict[str, Any], credential: bytes
    ) -> tuple[ClientLane, str]:
        """A new session's lane, its upstream up, and its session id. Raises `TooManySessions`,
        `LaneUnavailable`, or `pydantic_lenient.observe.logdir.LogDirError` (its ``logDir``)."""
        self.lanes = {key: lane for key, lane in self.lanes.items() if not lane.ended.is_set()}
        if len(self.lanes) >= self.settings.max_sessions:
            raise TooManySessions
        lane = ClientLane(name, server, self._options(name), initialize)
        lane.credential = credential
        key = new_key()
        self.lanes[key] = lane
        try:
            await lane.wait_ready(self.settings.call_timeout)
        except LaneUnavailable as unavailable:
            del self.lanes[key]
            await lane.shutdown(str(unavailable))
            raise
        lane.last_used = time.monotonic()  # idle from now, not from before its upstream started
        session = session_id(initialize.get("clientInfo"), key)
        assert session is not None  # it holds the key
        return lane, session

    def _options(self, name: str) -> ProxyOptions:
        options = self.options[name]
        if options.log_dir is None:
            return options
        recorder = self.recorders.get(name)
        if recorder is None:
            from pydantic_lenient.observe.recorder import OutcomeRecorder

            recorder = self.recorders[name] = OutcomeRecorder(
                options.log_dir, normalizer=options.normalizer, save_every=options.save_every
            )
        return dataclasses.replace(options, log_dir=None, recorder=recorder)

    def find(self, header: str | None, credential: bytes) -> ClientLane | None:
        """The live session ``header`` (an ``Mcp-Session-Id``) names, if ``credential`` opened it."""
        key = read_session(header).key
        lane = self.lanes.get(key) if key is not None else None
        if lane is None or lane.ended.is_set() or not hmac.compare_digest(lane.credential, credential):
            return None
        return lane

    def start(self) -> None:
        self.reaper = asyncio.create_task(self._reap())

    async def _reap(self) -> None:
        limit = self.settings.session_idle_seconds
        while True:
            await asyncio.sleep(min(_REAP_EVERY, limit / 2))
            now = time.monotonic()
            for key, lane in list(self.lanes.items()):
                if lane.ended.is_set() or lane.idle(now, limit):
                    del self.lanes[key]
                    await lane.shutdown(f"the session was idle for {limit:g} s")

    async def close(self) -> None:
        if self.reaper is not None:
            self.reaper.cancel()
        await asyncio.gather(*(lane.shutdown() for lane in self.lanes.values()))
        for recorder in self.recorders.values():
            recorder.close()
