"""The upstream as a child process: a stdio MCP server (any language) the proxy starts and stops.

It speaks MCP's stdio framing (one JSON-RPC message per line) on its stdin and stdout; its stderr
is the proxy's. It may start before the session that reads it exists (the proxy starts it first, so
its start-up and the loading of pydantic overlap): until `ChildUpstream.attach`, what it writes is
kept, in order. While its stdin is full, the host's input is paused (`Peer.pause_client_input`).

Its stop is the MCP specification's stdio shutdown: close its stdin, wait, then SIGTERM and finally
SIGKILL its process group (children it started, such as the node that npx starts, go with it).

Standard library only: it starts before pydantic loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Mapping, Sequence

from .streams import Feed, Lines
from .upstream import Peer, StartError

__all__ = ("ChildUpstream",)

_STOP_GRACE = 2.0  # seconds the upstream gets after its stdin closes, and again after SIGTERM


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

    def attach(self, peer: Peer) -> None:
        self.lines = Lines(peer.upstream_lines, peer.upstream_ended)
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


class ChildUpstream:
    """The upstream as a child process speaking MCP's stdio framing (an `Upstream`)."""

    network_transport = "pipe"

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.command = list(command)
        self.env = {**os.environ, **env} if env else None  # added to this process's, as hosts do
        self.cwd = cwd
        self.name = shlex.join(self.command)
        self.peer: Peer | None = None
        self.process: asyncio.SubprocessTransport | None = None
        self.protocol: _ChildProtocol | None = None
        self.stdin = Feed(self._pause_client)  # the client's input paused while the upstream's stdin is full

    def _pause_client(self, paused: bool) -> None:
        if self.peer is not None:
            self.peer.pause_client_input(paused)

    def attach(self, peer: Peer) -> None:
        """Hand the upstream's output, from its first byte, to ``peer``."""
        self.peer = peer
        if self.protocol is not None:
            self.protocol.attach(peer)

    async def start(self) -> None:
        if self.process is not None:  # started early, before the session that reads it
            return
        loop = asyncio.get_running_loop()
        try:
            self.process, self.protocol = await loop.subprocess_exec(
                lambda: _ChildProtocol(self.stdin),
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None,
                env=self.env,
                cwd=self.cwd,
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
