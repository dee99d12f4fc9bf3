"""``pydantic-lenient proxy`` over stdio: put any MCP server (any language) behind a lenient front.

The proxy starts the upstream server as a child process and relays MCP's stdio framing (one
JSON-RPC message per line) between it and its own client; what it changes in those messages, and
what it records, is the relay's job (`pydantic_lenient.proxy.relay`). This module moves the bytes:
it splits the two streams into lines, keeps the order, and pauses the side that reads while the
side that writes does not keep up.

The upstream is a child process here (`_Child`), or a remote server over Streamable HTTP
(`pydantic_lenient.proxy.remote`); the client side is the same for both: this process's stdin and
stdout, whatever they are (`pydantic_lenient.proxy.streams`). Each chunk read is relayed with one
write.

Faults: an upstream that cannot start is one line on stderr and exit code 2, at once. One that
exits, or stops answering pings while a request waits, gets every waiting request answered with a
JSON-RPC error naming the cause, and the proxy exits 1. Time the client's output spends paused does
not count against the upstream's ping. A
client that closes stdin, SIGTERM, SIGINT or SIGHUP stop the upstream as the MCP specification's
stdio shutdown says: close its stdin, wait, then SIGTERM and finally SIGKILL its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .streams import ClientError, Feed, FileIn, FileOut, Lines, client_input, client_output

# The relay and what it needs (repair, widening, recording: pydantic and the validators) load in
# `serve` once the upstream has been started, so its start-up and theirs overlap.
if TYPE_CHECKING:
    from pydantic_lenient.normalizer.engine import Normalizer
    from pydantic_lenient.observe.recorder import OutcomeRecorder
    from pydantic_lenient.schema.styles import Style

    from .remote import HttpUpstream

__all__ = ("StartError", "http_upstream", "run_proxy", "serve")

logger = logging.getLogger("pydantic_lenient.proxy")

_DRAIN_WAIT = 10.0  # seconds the answers still owed may take once the client's input has ended
_LIST_WAIT = 5.0  # seconds held calls wait for the proxy's own tools/list before going on unrepaired
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_STOP_GRACE = 2.0  # seconds the upstream gets after its stdin closes, and again after SIGTERM


class StartError(Exception):
    """The upstream cannot be started (or reached): one line on stderr, exit code 2."""


class _Upstream(Protocol):
    """How the proxy reaches its upstream: a child process (`_Child`) or a remote server."""

    name: str

    async def start(self) -> None:
        """Start or reach the upstream; raise `StartError` when it cannot be."""

    def send(self, data: bytes) -> None:
        """Send one or more messages, each a line."""

    def pause_output(self, paused: bool) -> None:
        """Stop or go on handing the upstream's messages to the proxy."""

    async def stop(self) -> None:
        """End the session with the upstream."""


class _ChildProtocol(asyncio.SubprocessProtocol):
    """The upstream's process: its stdout as lines, and a pause of the client's input while its stdin is full.

    It starts before the proxy that reads it exists (`_Child.attach`): until then the event loop is
    busy loading the proxy, so nothing arrives, and anything that does is kept in order.
    """

    def __init__(self, stdin: Feed) -> None:
        self.stdin = stdin
        self.lines: Lines | None = None
        self.early: list[tuple[bytes | None, Exception | None]] = []  # data, or the end of stdout
        self.exited = asyncio.Event()

    def attach(self, proxy: _Proxy) -> None:
        self.lines = Lines(proxy.upstream_lines, proxy.upstream_ended)
        early, self.early = self.early, []
        for data, problem in early:
            self.lines.data_received(data) if data is not None else self.lines.connection_lost(problem)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if self.lines is None:
            self.early.append((data, None))
        else:
            self.lines.data_received(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd != 1:
            return
        if self.lines is None:
            self.early.append((None, exc))
        else:
            self.lines.connection_lost(exc)

    def pause_writing(self) -> None:
        self.stdin.transport_paused(True)

    def resume_writing(self) -> None:
        self.stdin.transport_paused(False)

    def process_exited(self) -> None:
        self.exited.set()


class _Child:
    """The upstream as a child process speaking MCP's stdio framing."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.name = shlex.join(self.command)
        self.proxy: _Proxy | None = None
        self.process: asyncio.SubprocessTransport | None = None
        self.protocol: _ChildProtocol | None = None
        self.stdin = Feed(self._pause_client)  # the client's input paused while the upstream's stdin is full

    def _pause_client(self, paused: bool) -> None:
        if self.proxy is not None:
            self.proxy.pauseclient_input(paused)

    def attach(self, proxy: _Proxy) -> _Child:
        """Hand the upstream's output, from its first byte, to ``proxy``."""
        self.proxy = proxy
        if self.protocol is not None:
            self.protocol.attach(proxy)
        return self

    async def start(self) -> None:
        if self.process is not None:  # started early, by `serve`
            return
        loop = asyncio.get_running_loop()
        try:
            self.process, self.protocol = await loop.subprocess_exec(
                lambda: _ChildProtocol(self.stdin),
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None,
                start_new_session=True,  # one process group, so a stop reaches its children too
            )
        except (OSError, ValueError) as error:
            raise StartError(f"cannot start the upstream MCP server `{self.name}`: {error}") from None
        stdin = self.process.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        self.stdin.transport = stdin

    def send(self, data: bytes) -> None:
        if not self.stdin.is_closing():
            self.stdin.write(data)

    def pause_output(self, paused: bool) -> None:
        output = self.process.get_pipe_transport(1) if self.process is not None else None
        if isinstance(output, asyncio.ReadTransport) and not output.is_closing():
            output.pause_reading() if paused else output.resume_reading()

    async def stop(self) -> None:
        """The MCP stdio shutdown: close the upstream's stdin, wait, then SIGTERM, then SIGKILL."""
        if self.process is None or self.protocol is None:
            return
        exited = self.protocol.exited
        self.stdin.close()
        for stop in (None, signal.SIGTERM, signal.SIGKILL):
            if stop is not None:
                try:
                    os.killpg(self.process.get_pid(), stop)
                except (ProcessLookupError, PermissionError):
                    break
            with contextlib.suppress(asyncio.TimeoutError):  # on Python 3.10 not the builtin TimeoutError
                await asyncio.wait_for(exited.wait(), _STOP_GRACE)
            if exited.is_set():
                break
        # Children the upstream left in its group (npx starts node) go with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.get_pid(), signal.SIGTERM)
        self.process.close()


@dataclass(frozen=True)
class _Options:
    upstream: Callable[[_Proxy], _Upstream]
    style: Style
    normalizer: Normalizer | None
    log_dir: Path | None
    ping_interval: float
    ping_timeout: float
    save_every: float
    recorder: OutcomeRecorder | None = None
    owns_recorder: bool = False  # built here from log_dir: closed at exit, not only saved
    telemetry: Any = None  # a LenientTelemetry: spans and metrics for each tools/call


class _Proxy:
    """One session: the client on this process's stdin/stdout, the upstream, and the relay between them."""

    def __init__(self, options: _Options) -> None:
        from .calls import ProxyStats
        from .relay import _Relay

        self.options = options
        self.stats = ProxyStats() if options.log_dir is not None else None
        tracer = None
        if options.telemetry is not None:
            from pydantic_lenient.observe.otel import ProxyTracer  # the otel extra, only when asked for

            tracer = ProxyTracer(options.telemetry)
        self.relay = _Relay(options.style, options.normalizer, self.stats, options.recorder, tracer)
        self.upstream = options.upstream(self)
        self.failure: str | None = None
        self.done = asyncio.Event()
        self.client_in: asyncio.ReadTransport | FileIn | None = None
        self.client_out: Feed | FileOut | None = None
        self.output_paused = False
        self.client_done = False
        self.output_resumed = asyncio.Event()
        self.output_resumed.set()

    # ---- messages

    def client_lines(self, lines: list[bytes]) -> None:
        holding = self.relay.held is not None
        upstream, client = [], []
        for line in lines:
            routed = self.relay.from_client(line)
            upstream.append(routed.upstream)
            client.append(routed.client)
        self.send_upstream(b"".join(upstream))
        self.send_client(b"".join(client))
        if not holding and self.relay.held is not None:  # the proxy lists the tools: wait for it, not for ever
            asyncio.get_running_loop().call_later(_LIST_WAIT, self._release, self.relay.held)

    def _release(self, held: list[bytes]) -> None:
        if self.relay.held is held:
            logger.warning("no answer to the proxy's own tools/list in %g s: calls go on unrepaired", _LIST_WAIT)
            routed = self.relay.release()
            self.send_upstream(routed.upstream)
            self.send_client(routed.client)

    def upstream_lines(self, lines: list[bytes]) -> None:
        upstream, client = [], []
        for line in lines:
            routed = self.relay.from_upstream(line)
            upstream.append(routed.upstream)
            client.append(routed.client)
        self.send_client(b"".join(client))
        self.send_upstream(b"".join(upstream))
        self._finish_when_answered()

    def send_client(self, data: bytes) -> None:
        if data and self.client_out is not None and not self.client_out.is_closing():
            self.client_out.write(data)

    def send_upstream(self, data: bytes) -> None:
        if data and not self.done.is_set():
            self.upstream.send(data)

    # ---- flow control

    def pause_upstream_output(self, paused: bool) -> None:
        self.output_paused = paused
        self.output_resumed.clear() if paused else self.output_resumed.set()
        self.upstream.pause_output(paused)

    def pauseclient_input(self, paused: bool) -> None:
        if self.client_in is not None and not self.client_in.is_closing():
            self.client_in.pause_reading() if paused else self.client_in.resume_reading()

    # ---- endings

    def client_ended(self, problem: str | None) -> None:
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
        if not self.done.is_set():
            self.failure = failure
            self.done.set()

    # ---- the session

    async def run(self, stop_asked: asyncio.Event | None = None) -> int:
        """The session, to its exit code. ``stop_asked``: set by a signal that came before it began."""
        loop = asyncio.get_running_loop()
        try:
            self.client_out, writer = await client_output(loop, self.pause_upstream_output, lambda: self.finish(None))
        except ClientError as error:
            print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
            await self.upstream.stop()  # a child may have been started already
            _on_stop_signals(None)
            return 2
        # Before the upstream starts: a signal that comes while it starts must still stop it.
        _on_stop_signals(lambda: self.finish(None))
        tasks: list[asyncio.Future[Any]] = []
        if stop_asked is not None:  # a signal may be set now, or still be on its way through the loop
            asked = asyncio.ensure_future(stop_asked.wait())
            asked.add_done_callback(lambda waited: None if waited.cancelled() else self.finish(None))
            tasks.append(asked)
        try:
            await self.upstream.start()
        except StartError as error:
            print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
            self.client_out.close()
            for task in tasks:
                task.cancel()
            _on_stop_signals(None)
            return 2
        tasks.append(asyncio.create_task(self._watch()))
        if self.options.log_dir is not None:
            tasks.append(asyncio.create_task(self._autosave()))
        try:
            try:
                # Read the client only now, so no message arrives before there is somewhere to send it.
                self.client_in = await client_input(loop, Lines(self.client_lines, self.client_ended))
            except ClientError as error:
                self.finish(str(error))
            await self.done.wait()
        finally:
            for task in tasks:
                task.cancel()
            if self.client_in is not None:
                self.client_in.close()
            await self.upstream.stop()
            self._save()
            self.relay.finish_recording(close=self.options.owns_recorder)
            self.client_out.close()
            if writer is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(writer.closed), _STOP_GRACE)
            _on_stop_signals(None)
        if self.failure is not None:
            print(f"pydantic-lenient proxy: {self.failure}", file=sys.stderr)
            return 1
        return 0

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
        if self.options.log_dir is not None:
            self.relay.save(self.options.log_dir)


def _on_stop_signals(handler: Callable[[], object] | None) -> None:
    """Call ``handler`` on SIGTERM, SIGINT and SIGHUP, or (None) give them back their defaults."""
    loop = asyncio.get_running_loop()
    for number in _STOP_SIGNALS:
        if handler is None:
            loop.remove_signal_handler(number)
        else:
            loop.add_signal_handler(number, handler)


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


async def serve(
    command: Sequence[str] = (),
    *,
    url: str | None = None,
    headers: Sequence[tuple[str, str]] = (),
    style: Style = "type-array",
    normalizer: Normalizer | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    recorder: OutcomeRecorder | None = None,
    sample_chars: int = 0,
    ping_interval: float = 30.0,
    ping_timeout: float = 30.0,
    save_every: float = 60.0,
    telemetry: Any = None,
) -> int:
    """Serve MCP on this process's stdin/stdout in front of ``command`` (a stdio server started as a
    child process) or ``url`` (a remote server over Streamable HTTP, sent ``headers`` with each
    request); returns the exit code: 0, 1 when the upstream failed mid-session, 2 when it could not
    be started or reached, or stdin or stdout cannot be used.

    ``ping_interval``: how often, while a request waits for the upstream, the proxy pings it;
    ``ping_timeout``: how long a ping may go unanswered before the upstream counts as hung.
    ``log_dir``: where every ``tools/call`` is recorded (an `OutcomeRecorder` with the
    ``normalizer``: the audit log, ``outcomes.json`` and the normalizer's stats) and repair counts
    are saved, every ``save_every`` seconds and at exit; ``sample_chars`` > 0 keeps that many
    characters of each refused value there (by default no value is kept). Or pass your own ``recorder`` (for samples,
    sinks, other bounds); repair counts then go to its ``log_dir``, if it has one. ``telemetry``: a
    `pydantic_lenient.observe.otel.LenientTelemetry` for each call's spans and metrics. A corrupt
    ``outcomes.json`` raises `pydantic_lenient.observe.logdir.LogDirError` (a child upstream, started
    first, is stopped again).
    Runs on asyncio.
    """
    if bool(command) == (url is not None):
        raise ValueError("give an upstream command or a url, not both")
    if log_dir is not None and recorder is not None:
        raise ValueError("give log_dir or recorder, not both")
    upstream: Callable[[_Proxy], _Upstream]
    child: _Child | None = None
    stop_asked = asyncio.Event()
    if url is not None:
        remote = http_upstream()
        remote_url, remote_headers = url, list(headers)
        upstream = lambda proxy: remote(proxy, remote_url, remote_headers)  # noqa: E731
    else:
        # Started first: a server takes longer to start than the rest of the proxy takes to load,
        # and the two overlap. Its output waits in the pipe until the proxy reads it; a signal that
        # comes meanwhile stops the session as soon as it begins.
        _on_stop_signals(stop_asked.set)
        child = _Child(command)
        try:
            await child.start()
        except StartError as error:
            print(f"pydantic-lenient proxy: {error}", file=sys.stderr)
            _on_stop_signals(None)
            return 2
        upstream = child.attach
    try:
        owns_recorder = log_dir is not None
        if log_dir is not None:
            from pydantic_lenient.observe.recorder import OutcomeRecorder

            recorder = OutcomeRecorder(log_dir, normalizer=normalizer, save_every=save_every, sample_chars=sample_chars)
        elif recorder is not None:
            log_dir = recorder.log_dir
        options = _Options(
            upstream=upstream,
            style=style,
            normalizer=normalizer,
            log_dir=Path(log_dir) if log_dir is not None else None,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            save_every=save_every,
            recorder=recorder,
            owns_recorder=owns_recorder,
            telemetry=telemetry,
        )
        proxy = _Proxy(options)
    except BaseException:  # a corrupt log directory, say: the upstream started early is stopped
        if child is not None:
            await child.stop()
            _on_stop_signals(None)
        raise
    return await proxy.run(stop_asked)


def http_upstream() -> type[HttpUpstream]:
    """The remote upstream's class, or an ImportError that says what to install: it needs httpx2
    (the ``proxy`` extra), and a stdio upstream does not."""
    try:
        from .remote import HttpUpstream
    except ImportError as error:
        raise ImportError(
            "a remote upstream (--url) needs httpx2: pip install 'pydantic-lenient[proxy]'"
            f" (in a clone: pip install -e '.[proxy]') ({error})"
        ) from None
    return HttpUpstream


def run_proxy(command: Sequence[str] = (), **options: Any) -> int:
    """`serve` on a new event loop (what the ``proxy`` command runs)."""
    return asyncio.run(serve(command, **options))
