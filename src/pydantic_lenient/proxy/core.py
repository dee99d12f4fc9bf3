"""The relay session: one host and one upstream, with the relay between them, whatever carries either.

A `Proxy` knows no transport. Its host side (`pydantic_lenient.proxy.stdio` today: this process's
stdin and stdout) hands it the host's messages (`Proxy.client_lines`, `Proxy.client_ended`) and gives
it somewhere to write (`Proxy.client_out`) and something to pause (`Proxy.client_in`); its upstream
is any `pydantic_lenient.proxy.upstream.Upstream`, to which it is the `Peer`. In between it routes
each batch of lines through the relay (`pydantic_lenient.proxy.relay`), keeps the flow control of
both directions, pings an upstream that owes answers, saves the counts, and ends the session.

Faults: an upstream that exits, or stops answering pings while a request waits, gets every waiting
request answered with a JSON-RPC error naming the cause, and the session ends with that failure.
Time the host's output spends paused does not count against the upstream's ping. A host whose input
ends gets the answers still owed, for a while, then the session ends.

Standard library only until a session is made: the relay (and with it pydantic and the validators)
loads in `Proxy.__init__`, after a child upstream has been started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic_lenient.schema.styles import DEFAULT_STYLE

from .upstream import Upstream

if TYPE_CHECKING:
    from pydantic_lenient.normalizer.engine import Normalizer
    from pydantic_lenient.observe.otel import LenientTelemetry
    from pydantic_lenient.observe.recorder import OutcomeRecorder
    from pydantic_lenient.schema.styles import Style

    from .relay import Routed

__all__ = ("ClientInput", "ClientOutput", "Proxy", "ProxyOptions")

logger = logging.getLogger("pydantic_lenient.proxy")

_DRAIN_WAIT = 10.0  # seconds the answers still owed may take once the client's input has ended
_LIST_WAIT = 5.0  # seconds held calls wait for the proxy's own tools/list before going on unrepaired


@dataclass(frozen=True)
class ProxyOptions:
    """What a proxy session does, whatever its transports.

    ``style``: how widened schemas are written (`pydantic_lenient.schema.styles`). ``normalizer``:
    rules applied to each ``tools/call`` before repair. ``log_dir``: where every ``tools/call`` is
    recorded (an `OutcomeRecorder` with the ``normalizer``: the audit log, ``outcomes.json`` and the
    normalizer's stats) and repair counts are saved, every ``save_every`` seconds and at exit;
    ``sample_chars`` > 0 keeps that many characters of each refused value there (by default no
    value is kept). Or your own ``recorder`` (for samples, sinks, other bounds); repair counts then
    go to its ``log_dir``, if it has one. ``ping_interval``: how often, while a request waits for
    the upstream, the proxy pings it; ``ping_timeout``: how long a ping may go unanswered before the
    upstream counts as hung. ``telemetry``: a `pydantic_lenient.observe.otel.LenientTelemetry` for
    each call's spans and metrics; ``upstream_name``: the name they give the upstream (the gateway's
    name for the server).

    >>> ProxyOptions(ping_timeout=5.0).ping_timeout
    5.0
    """

    style: Style = DEFAULT_STYLE
    normalizer: Normalizer | None = None
    log_dir: str | os.PathLike[str] | None = None
    recorder: OutcomeRecorder | None = None
    sample_chars: int = 0
    ping_interval: float = 30.0
    ping_timeout: float = 30.0
    save_every: float = 60.0
    telemetry: LenientTelemetry | None = None
    upstream_name: str | None = None

    def __post_init__(self) -> None:
        if self.log_dir is not None and self.recorder is not None:
            raise ValueError("give log_dir or recorder, not both")


class ClientOutput(Protocol):
    """Where the host side has the session write: a stream to the host."""

    def write(self, data: bytes) -> None: ...

    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


class ClientInput(Protocol):
    """What the host side reads from, for the session to pause while the upstream is full."""

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


class Proxy:
    """One session: a host, the ``upstream``, and the relay between them. ``host_transport``: the
    host side's ``network.transport`` (OpenTelemetry's value), for the calls' server spans.

    A corrupt ``outcomes.json`` in ``options.log_dir`` raises
    `pydantic_lenient.observe.logdir.LogDirError` here, before anything starts."""

    def __init__(self, upstream: Upstream, options: ProxyOptions, *, host_transport: str) -> None:
        from .calls import ProxyStats
        from .relay import _Relay

        self.options = options
        recorder, self.owns_recorder = options.recorder, options.log_dir is not None
        if options.log_dir is not None:  # built here: closed at exit, not only saved
            from pydantic_lenient.observe.recorder import OutcomeRecorder

            recorder = OutcomeRecorder(
                options.log_dir,
                normalizer=options.normalizer,
                save_every=options.save_every,
                sample_chars=options.sample_chars,
            )
        log_dir = options.log_dir if options.log_dir is not None else recorder.log_dir if recorder else None
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.stats = ProxyStats() if self.log_dir is not None else None
        tracer = None
        if options.telemetry is not None:
            from pydantic_lenient.observe.otel import ProxyTracer  # the otel extra, only when asked for

            tracer = ProxyTracer(
                options.telemetry,
                host_transport=host_transport,
                upstream_transport=upstream.network_transport,
                upstream_name=options.upstream_name,
            )
        self.relay = _Relay(options.style, options.normalizer, self.stats, recorder, tracer)
        self.upstream = upstream
        self.failure: str | None = None
        self.done = asyncio.Event()
        self.client_in: ClientInput | None = None
        self.client_out: ClientOutput | None = None
        self.output_paused = False
        self.client_done = False
        self.output_resumed = asyncio.Event()
        self.output_resumed.set()
        self.tasks: list[asyncio.Task[None]] = []
        upstream.attach(self)

    # ---- messages

    def client_lines(self, lines: list[bytes]) -> None:
        """The host sent ``lines`` (each a message ending in ``\\n``)."""
        holding = self.relay.held is not None
        upstream, client = _each_routed(lines, self.relay.from_client)
        self.send_upstream(upstream)
        self.send_client(client)
        if not holding and self.relay.held is not None:  # the proxy lists the tools: wait for it, not for ever
            asyncio.get_running_loop().call_later(_LIST_WAIT, self._release, self.relay.held)

    def _release(self, held: list[bytes]) -> None:
        if self.relay.held is held:
            logger.warning("no answer to the proxy's own tools/list in %g s: calls go on unrepaired", _LIST_WAIT)
            routed = self.relay.release()
            self.send_upstream(routed.upstream)
            self.send_client(routed.client)

    def upstream_lines(self, lines: list[bytes]) -> None:
        upstream, client = _each_routed(lines, self.relay.from_upstream)
        self.send_client(client)
        self.send_upstream(upstream)
        self._finish_when_answered()

    def owes(self, request_id: Any) -> bool:
        return request_id in self.relay.waiting

    def send_client(self, data: bytes) -> None:
        if data and self.client_out is not None and not self.client_out.is_closing():
            self.client_out.write(data)

    def send_upstream(self, data: bytes) -> None:
        if data and not self.done.is_set():
            self.upstream.send(data)

    # ---- flow control

    def pause_upstream_output(self, paused: bool) -> None:
        """The host does not keep up (or does again): leave the upstream's messages where they are."""
        self.output_paused = paused
        self.output_resumed.clear() if paused else self.output_resumed.set()
        self.upstream.pause_output(paused)

    def pause_client_input(self, paused: bool) -> None:
        if self.client_in is not None and not self.client_in.is_closing():
            self.client_in.pause_reading() if paused else self.client_in.resume_reading()

    # ---- endings

    def client_ended(self, problem: str | None) -> None:
        """The host's input ended (``problem``: why, when it was not a plain end)."""
        if problem is not None:
            logger.warning("the client %s", problem)
            self.finish(None)
        # Its input ended (stdin from a file does so at once): first the answers the upstream owes, for a while.
        self.client_done = True
        self._finish_when_answered()
        asyncio.get_running_loop().call_later(_DRAIN_WAIT, self.finish, None)

    def _finish_when_answered(self) -> None:
        if self.client_done and not self.relay.waiting and self.relay.held is None:
            self.finish(None)

    def upstream_ended(self, problem: str | None) -> None:
        what = problem or "exited"
        self.fail(f"the upstream MCP server `{self.upstream.name}` {what}")

    def fail(self, reason: str) -> None:
        """Answer every request the upstream still owes with ``reason``, then stop."""
        if self.done.is_set():  # already stopping (the client left, or a signal): nothing to answer
            return
        self.send_client(b"".join(self.relay.abandon(reason)))
        self.finish(reason)

    def finish(self, failure: str | None) -> None:
        """End the session (``failure``: why, when it failed)."""
        if not self.done.is_set():
            self.failure = failure
            self.done.set()

    # ---- the session

    async def start(self) -> None:
        """Start the upstream (`StartError` when it cannot be), then the pings and the autosave."""
        await self.upstream.start()
        self.tasks.append(asyncio.create_task(self._watch()))
        if self.log_dir is not None:
            self.tasks.append(asyncio.create_task(self._autosave()))

    async def close(self) -> None:
        """Stop the upstream, save the counts and the outcomes (the host side closes its own streams)."""
        for task in self.tasks:
            task.cancel()
        await self.upstream.stop()
        self._save()
        self.relay.finish_recording(close=self.owns_recorder)

    async def _watch(self) -> None:
        """Ping the upstream while a request waits for it; no reply in time means it hangs. Time
        the client's output spends paused is not counted: the reply may be waiting behind it."""
        while True:
            await asyncio.sleep(self.options.ping_interval)
            if not self.relay.waiting and self.relay.held is None:
                continue
            answered = asyncio.Event()
            self.send_upstream(self.relay.ping(answered.set))
            waited = 0.0
            while not answered.is_set() and waited < self.options.ping_timeout:
                await self.output_resumed.wait()
                started = _loop_time()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(answered.wait(), self.options.ping_timeout - waited)
                if not self.output_paused:
                    waited += _loop_time() - started
            if not answered.is_set():
                self.fail(
                    f"the upstream MCP server `{self.upstream.name}` stopped answering "
                    f"(no reply to a ping within {self.options.ping_timeout:g} s)"
                )
                return

    async def _autosave(self) -> None:
        while True:
            await asyncio.sleep(self.options.save_every)
            await asyncio.to_thread(self._save)

    def _save(self) -> None:
        if self.log_dir is not None:
            self.relay.save(self.log_dir)


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _each_routed(lines: list[bytes], route: Callable[[bytes], Routed]) -> tuple[bytes, bytes]:
    """Each line through the relay: what goes upstream, and what goes back to the client, each joined."""
    upstream, client = [], []
    for line in lines:
        routed = route(line)
        upstream.append(routed.upstream)
        client.append(routed.client)
    return b"".join(upstream), b"".join(client)
