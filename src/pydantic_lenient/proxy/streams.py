"""The client's side of the proxy: this process's stdin and stdout, whatever they are, as lines.

stdin and stdout may be pipes, sockets or ttys (watched by the event loop), or regular files and
devices such as ``/dev/null`` (read by a thread, written at once). Each chunk read is split into
lines (MCP's stdio framing: a message never holds a newline) and handed on in one call. A pipe is
written through a `Feed` (the upstream's stdin too), which hands it a slice at a time.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import stat
import sys
from collections import deque
from collections.abc import Callable

__all__ = ("ClientError", "Feed", "FileIn", "FileOut", "Lines", "Writer", "client_input", "client_output")

logger = logging.getLogger("pydantic_lenient.proxy")

_MAX_LINE = 256 * 1024 * 1024  # a message longer than this ends the session rather than memory
_READ_SIZE = 256 * 1024
_SLICE = 256 * 1024  # bytes a `Feed` hands its transport at a time


class Lines(asyncio.Protocol):
    """Splits a byte stream into lines (MCP stdio messages never contain a newline), handed on a
    chunk at a time."""

    def __init__(self, on_lines: Callable[[list[bytes]], None], on_end: Callable[[str | None], None]) -> None:
        self.on_lines, self.on_end = on_lines, on_end
        self.buffer = io.BytesIO()

    def data_received(self, data: bytes) -> None:
        end = data.rfind(b"\n") + 1
        if not end:
            self.buffer.write(data)
            if self.buffer.tell() > _MAX_LINE:
                self.buffer = io.BytesIO()
                self.on_end(f"sent a message longer than {_MAX_LINE} bytes")
            return
        # A line that spans chunks is copied once, into the buffer, which `getvalue` hands over as
        # it is (a bytearray would be copied again into bytes); one within a chunk is sliced out,
        # and a chunk that is one whole line not copied at all.
        if self.buffer.tell():
            self.buffer.write(memoryview(data)[:end])
            text = self.buffer.getvalue()
        else:
            text = data[:end] if end < len(data) else data
        self.buffer = io.BytesIO()
        self.buffer.write(memoryview(data)[end:])
        self.on_lines(_split(text))

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end(None)


def _split(text: bytes) -> list[bytes]:
    r"""The lines of ``text`` (which ends in a newline), each with its newline, blank ones left out.

    >>> _split(b'{"a":1}\n \n{"b":2}\n'), _split(b'{"a":1}\n')
    ([b'{"a":1}\n', b'{"b":2}\n'], [b'{"a":1}\n'])
    """
    if text.find(b"\n") == len(text) - 1:  # one line: no copy
        return [] if text.isspace() else [text]
    lines, start = [], 0
    while start < len(text):
        stop = text.index(b"\n", start) + 1
        line = text[start:stop]
        if not line.isspace():
            lines.append(line)
        start = stop
    return lines


class Feed:
    """A pipe written a slice at a time: what the pipe does not take yet stays the caller's bytes.

    asyncio's pipe transports copy into a buffer of their own whatever the pipe does not take at
    once: for a huge message, one more copy of it. The transport here is given one more slice
    (`_SLICE`) only while it has not paused its protocol (which tells `transport_paused`), so it
    copies a slice at a time. ``on_pause`` is told True while the transport is paused or something
    waits here, False when neither. `close` closes the transport once everything is written, as
    asyncio's own close does with its buffer."""

    def __init__(self, on_pause: Callable[[bool], None]) -> None:
        self.on_pause = on_pause
        self.transport: asyncio.WriteTransport | None = None  # set once the pipe is connected
        self.waiting: deque[memoryview] = deque()
        self.blocked = False  # the transport has paused its protocol
        self.paused = False  # what ``on_pause`` was told last
        self.closing = False

    def write(self, data: bytes) -> None:
        if self.closing or self.transport is None:
            return
        if self.waiting or len(data) > _SLICE:
            self.waiting.append(memoryview(data))
            self._feed()
        else:
            self.transport.write(data)
        self._tell()

    def transport_paused(self, paused: bool) -> None:
        self.blocked = paused
        if not paused:
            self._feed()
        self._tell()

    def is_closing(self) -> bool:
        return self.closing or self.transport is None or self.transport.is_closing()

    def close(self) -> None:
        self.closing = True
        self._feed()

    def _feed(self) -> None:
        transport = self.transport
        if transport is None:
            return
        while self.waiting and not self.blocked:
            if transport.is_closing():  # the reader is gone: what waits goes nowhere
                self.waiting.clear()
                break
            view = self.waiting[0]
            if len(view) > _SLICE:
                self.waiting[0], view = view[_SLICE:], view[:_SLICE]
            else:
                self.waiting.popleft()
            transport.write(view)  # may pause at once (`transport_paused`)
        if self.closing and not self.waiting:
            transport.close()

    def _tell(self) -> None:
        paused = self.blocked or bool(self.waiting)
        if paused != self.paused:
            self.paused = paused
            self.on_pause(paused)


class Writer(asyncio.Protocol):
    """The client's stdout: ``on_pause`` pauses the upstream's output while the client does not keep
    up (the transport's pauses, for its `Feed`); ``on_close`` when the client is gone."""

    def __init__(self, on_pause: Callable[[bool], None], on_close: Callable[[], None]) -> None:
        self.on_pause, self.on_close = on_pause, on_close
        self.closed = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.on_pause(True)

    def resume_writing(self) -> None:
        self.on_pause(False)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.on_close()


class FileOut:
    """The client's stdout when it is a file or a device such as /dev/null: written at once."""

    def __init__(self, fd: int) -> None:
        self.fd, self.closing = fd, False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True


class FileIn:
    """The client's stdin when it is a file or a device such as /dev/null: read by a thread, paused on request."""

    def __init__(self, fd: int, lines: Lines) -> None:
        self.fd, self.lines = fd, lines
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while chunk := await asyncio.to_thread(os.read, self.fd, _READ_SIZE):
                self.lines.data_received(chunk)
                await self.resumed.wait()
        except OSError as error:
            logger.warning("cannot read stdin: %s", error)
        self.lines.connection_lost(None)

    def pause_reading(self) -> None:
        self.resumed.clear()

    def resume_reading(self) -> None:
        self.resumed.set()

    def is_closing(self) -> bool:
        return self.task.done()

    def close(self) -> None:
        self.task.cancel()


class ClientError(Exception):
    """This process's stdin or stdout cannot be used."""


def _kind(fd: int, name: str) -> int:
    try:
        return os.fstat(fd).st_mode
    except OSError as error:
        raise ClientError(f"{name} is not open: {error.strerror}") from None


def _pollable(fd: int, mode: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, a socket or a tty (not a file or /dev/null)."""
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


async def client_output(
    loop: asyncio.AbstractEventLoop, on_pause: Callable[[bool], None], on_close: Callable[[], None]
) -> tuple[Feed | FileOut, Writer | None]:
    """This process's stdout; with the `Writer` watching it when the event loop can."""
    fd = sys.stdout.fileno()
    mode = _kind(fd, "stdout")
    if stat.S_ISDIR(mode):
        raise ClientError("stdout is a directory")
    if not _pollable(fd, mode):
        return FileOut(fd), None
    feed = Feed(on_pause)
    try:
        feed.transport, writer = await loop.connect_write_pipe(
            lambda: Writer(feed.transport_paused, on_close), os.fdopen(fd, "wb", closefd=False)
        )
    except (OSError, ValueError) as error:
        raise ClientError(f"cannot write to stdout: {error}") from None
    return feed, writer


async def client_input(loop: asyncio.AbstractEventLoop, lines: Lines) -> asyncio.ReadTransport | FileIn:
    """This process's stdin, read into ``lines``."""
    fd = sys.stdin.fileno()
    mode = _kind(fd, "stdin")
    if stat.S_ISDIR(mode):
        raise ClientError("stdin is a directory")
    if not _pollable(fd, mode):
        return FileIn(fd, lines)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: lines, os.fdopen(fd, "rb", closefd=False))
    except (OSError, ValueError) as error:
        raise ClientError(f"cannot read stdin: {error}") from None
    return transport
