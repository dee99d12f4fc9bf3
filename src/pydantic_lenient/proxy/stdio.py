"""``pydantic-lenient proxy`` over stdio: put any MCP server (any language) behind a lenient front.

The proxy starts the upstream server as a child process and relays MCP's stdio framing (one
JSON-RPC message per line) between it and its own client; what it changes in those messages, and
what it records, is the relay's job (`pydantic_lenient.proxy.relay`). This module moves the bytes:
it splits the two streams into lines, keeps the order, and pauses the side that reads while the
side that writes does not keep up.

Faults: an upstream that cannot start, exits, or stops answering pings while a request waits gets
every waiting request answered with a JSON-RPC error naming the cause, and the proxy exits 1. A
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
from typing import Any

from pydantic_lenient.normalizer.engine import Normalizer
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.schema.styles import Style

from .relay import ProxyStats, _Relay

__all__ = ("run_proxy", "serve")

logger = logging.getLogger("pydantic_lenient.proxy")

_MAX_LINE = 256 * 1024 * 1024  # a message longer than this ends the session rather than memory
_START_FAILURE_WAIT = 30.0  # seconds to wait for a request to answer with why the upstream did not start
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_STOP_GRACE = 2.0  # seconds the upstream gets after its stdin closes, and again after SIGTERM


class _Lines(asyncio.Protocol):
    """Splits a byte stream into lines (MCP stdio messages never contain a newline)."""

    def __init__(self, on_line: Callable[[bytes], None], on_end: Callable[[str | None], None]) -> None:
        self.on_line, self.on_end = on_line, on_end
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\n" not in data:
            if len(self.buffer) > _MAX_LINE:
                self.buffer.clear()
                self.on_end(f"sent a message longer than {_MAX_LINE} bytes")
            return
        *lines, rest = self.buffer.split(b"\n")
        self.buffer = bytearray(rest)
        for line in lines:
            if line.strip():
                self.on_line(bytes(line) + b"\n")

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end(None)


class _Writer(asyncio.Protocol):
    """The client's stdout: pauses the upstream's output while the client does not keep up."""

    def __init__(self, proxy: _Proxy) -> None:
        self.proxy = proxy
        self.closed = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.proxy.pause_upstream_output(True)

    def resume_writing(self) -> None:
        self.proxy.pause_upstream_output(False)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.proxy.finish(None)  # the client is gone


class _Upstream(asyncio.SubprocessProtocol):
    """The upstream's process: its stdout as lines, and a pause of the client's input while its stdin is full."""

    def __init__(self, proxy: _Proxy) -> None:
        self.proxy = proxy
        self.lines = _Lines(proxy.upstream_line, proxy.upstream_ended)
        self.exited = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.lines.data_received(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.lines.connection_lost(exc)

    def pause_writing(self) -> None:
        self.proxy.pause_client_input(True)

    def resume_writing(self) -> None:
        self.proxy.pause_client_input(False)

    def process_exited(self) -> None:
        self.exited.set()


@dataclass(frozen=True)
class _Options:
    command: Sequence[str]
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
    """One session over stdio: the client on this process's stdin/stdout, the upstream as a child
    process, and the relay between them."""

    def __init__(self, options: _Options) -> None:
        self.options = options
        self.stats = ProxyStats() if options.log_dir is not None else None
        tracer = None
        if options.telemetry is not None:
            from pydantic_lenient.observe.otel import ProxyTracer  # the otel extra, only when asked for

            tracer = ProxyTracer(options.telemetry)
        self.relay = _Relay(options.style, options.normalizer, self.stats, options.recorder, tracer)
        self.name = shlex.join(options.command)
        self.failure: str | None = None
        self.start_failure: str | None = None
        self.done = asyncio.Event()
        self.client_in: asyncio.ReadTransport | None = None
        self.client_out: asyncio.WriteTransport | None = None
        self.upstream: asyncio.SubprocessTransport | None = None
        self.upstream_in: asyncio.WriteTransport | None = None
        self.upstream_protocol: _Upstream | None = None

    # ---- lines

    def client_line(self, line: bytes) -> None:
        if self.start_failure is not None:
            refusal = self.relay.refusal(line, self.start_failure)
            if refusal is not None:
                self.send_client(refusal)
                self.finish(self.start_failure)
            return
        forwarded = self.relay.from_client(line)
        if self.upstream_in is not None and not self.upstream_in.is_closing():
            self.upstream_in.write(forwarded)

    def upstream_line(self, line: bytes) -> None:
        forwarded = self.relay.from_upstream(line)
        if forwarded is not None:
            self.send_client(forwarded)

    def send_client(self, data: bytes) -> None:
        if self.client_out is not None and not self.client_out.is_closing():
            self.client_out.write(data)

    # ---- flow control

    def pause_upstream_output(self, paused: bool) -> None:
        output = self.upstream.get_pipe_transport(1) if self.upstream is not None else None
        if isinstance(output, asyncio.ReadTransport) and not output.is_closing():
            output.pause_reading() if paused else output.resume_reading()

    def pause_client_input(self, paused: bool) -> None:
        if self.client_in is not None and not self.client_in.is_closing():
            self.client_in.pause_reading() if paused else self.client_in.resume_reading()

    # ---- endings

    def client_ended(self, problem: str | None) -> None:
        if problem is not None:
            logger.warning("the client %s", problem)
        self.finish(None)

    def upstream_ended(self, problem: str | None) -> None:
        what = problem or "exited"
        self.fail(f"the upstream MCP server `{self.name}` {what}")

    def fail(self, reason: str) -> None:
        """Answer every request the upstream still owes with ``reason``, then stop."""
        if self.done.is_set():  # already stopping (the client left, or a signal): nothing to answer
            return
        for answer in self.relay.abandon(reason):
            self.send_client(answer)
        self.finish(reason)

    def finish(self, failure: str | None) -> None:
        if not self.done.is_set():
            self.failure = failure
            self.done.set()

    # ---- the session

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.client_out, writer = await loop.connect_write_pipe(
            lambda: _Writer(self), os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
        )
        for number in _STOP_SIGNALS:
            loop.add_signal_handler(number, self.finish, None)
        tasks: list[asyncio.Task[None]] = []
        try:
            try:
                self.upstream, self.upstream_protocol = await loop.subprocess_exec(
                    lambda: _Upstream(self),
                    *self.options.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=None,
                    start_new_session=True,  # one process group, so a stop reaches its children too
                )
            except (OSError, ValueError) as error:
                self.start_failure = f"cannot start the upstream MCP server `{self.name}`: {error}"
            else:
                upstream_in = self.upstream.get_pipe_transport(0)
                assert isinstance(upstream_in, asyncio.WriteTransport)
                self.upstream_in = upstream_in
                tasks.append(asyncio.create_task(self._watch()))
                if self.options.log_dir is not None:
                    tasks.append(asyncio.create_task(self._autosave()))
            # Read the client only now, so no message arrives before there is somewhere to send it.
            self.client_in, _ = await loop.connect_read_pipe(
                lambda: _Lines(self.client_line, self.client_ended),
                os.fdopen(sys.stdin.fileno(), "rb", closefd=False),
            )
            if self.start_failure is None:
                await self.done.wait()
            else:  # answer the client's first request (its initialize) with the reason, then stop
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.done.wait(), _START_FAILURE_WAIT)
                self.failure = self.start_failure
        finally:
            for task in tasks:
                task.cancel()
            if self.client_in is not None:
                self.client_in.close()
            await self._stop_upstream()
            self._save()
            self.relay.finish_recording(close=self.options.owns_recorder)
            self.client_out.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(writer.closed), _STOP_GRACE)
            for number in _STOP_SIGNALS:
                loop.remove_signal_handler(number)
        if self.failure is not None:
            print(f"pydantic-lenient proxy: {self.failure}", file=sys.stderr)
            return 1
        return 0

    async def _stop_upstream(self) -> None:
        """The MCP stdio shutdown: close the upstream's stdin, wait, then SIGTERM, then SIGKILL."""
        if self.upstream is None or self.upstream_protocol is None:
            return
        exited = self.upstream_protocol.exited
        if self.upstream_in is not None:
            self.upstream_in.close()
        for stop in (None, signal.SIGTERM, signal.SIGKILL):
            if stop is not None:
                try:
                    os.killpg(self.upstream.get_pid(), stop)
                except (ProcessLookupError, PermissionError):
                    break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(exited.wait(), _STOP_GRACE)
            if exited.is_set():
                break
        # Children the upstream left in its group (npx starts node) go with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.upstream.get_pid(), signal.SIGTERM)
        self.upstream.close()

    async def _watch(self) -> None:
        """Ping the upstream while a request waits for it; no reply in time means it hangs."""
        while True:
            await asyncio.sleep(self.options.ping_interval)
            if not self.relay.waiting or self.upstream_in is None:
                continue
            answered = asyncio.Event()
            self.upstream_in.write(self.relay.ping(answered.set))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), self.options.ping_timeout)
            if not answered.is_set():
                self.fail(
                    f"the upstream MCP server `{self.name}` stopped answering "
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


async def serve(
    command: Sequence[str],
    *,
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
    """Serve MCP on this process's stdin/stdout in front of ``command``; returns the exit code.

    ``ping_interval``: how often, while a request waits for the upstream, the proxy pings it;
    ``ping_timeout``: how long a ping may go unanswered before the upstream counts as hung.
    ``log_dir``: where every ``tools/call`` is recorded (an `OutcomeRecorder` with the
    ``normalizer``: the audit log, ``outcomes.json`` and the normalizer's stats) and repair counts
    are saved, every ``save_every`` seconds and at exit; ``sample_chars`` > 0 keeps that many
    characters of each refused value there (by default no value is kept). Or pass your own ``recorder`` (for samples,
    sinks, other bounds); repair counts then go to its ``log_dir``, if it has one. ``telemetry``: a
    `pydantic_lenient.observe.otel.LenientTelemetry` for each call's spans and metrics. A corrupt
    ``outcomes.json`` raises `pydantic_lenient.observe.logdir.LogDirError` before the upstream starts.
    Runs on asyncio.
    """
    if not command:
        raise ValueError("no upstream command given")
    if log_dir is not None and recorder is not None:
        raise ValueError("give log_dir or recorder, not both")
    owns_recorder = log_dir is not None
    if log_dir is not None:
        recorder = OutcomeRecorder(log_dir, normalizer=normalizer, save_every=save_every, sample_chars=sample_chars)
    elif recorder is not None:
        log_dir = recorder.log_dir
    options = _Options(
        command=list(command),
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
    return await _Proxy(options).run()


def run_proxy(command: Sequence[str], **options: Any) -> int:
    """`serve` on a new event loop (what the ``proxy`` command runs)."""
    return asyncio.run(serve(command, **options))
