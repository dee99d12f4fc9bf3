"""The client's side of the proxy: this process's stdin and stdout, whatever they are, as lines.

stdin and stdout may be pipes, sockets or ttys (watched by the event loop), or regular files and
devices such as ``/dev/null`` (read by a thread, written at once). Each chunk read is split into
lines (MCP's stdio framing: a message never holds a newline) and handed on in one call.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable

__all__ = ("ClientError", "FileIn", "FileOut", "Lines", "Writer", "client_input", "client_output")

logger = logging.getLogger("pydantic_lenient.proxy")

_MAX_LINE = 256 * 1024 * 1024  # a message longer than this ends the session rather than memory
_READ_SIZE = 256 * 1024


class Lines(asyncio.Protocol):
    """Splits a byte stream into lines (MCP stdio messages never contain a newline), handed on a
    chunk at a time."""

    def __init__(self, on_lines: Callable[[list[bytes]], None], on_end: Callable[[str | None], None]) -> None:
        self.on_lines, self.on_end = on_lines, on_end
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        end = data.rfind(b"\n") + 1
        if not end:
            self.buffer += data
            if len(self.buffer) > _MAX_LINE:
                self.buffer = bytearray()
                self.on_end(f"sent a message longer than {_MAX_LINE} bytes")
            return
        # Each line is copied once, and a chunk that is one whole line not at all: a huge message
        # must not cost several times its size before it is even read.
        if self.buffer:
            self.buffer += memoryview(data)[:end]
            text, self.buffer = bytes(self.buffer), bytearray(memoryview(data)[end:])
        else:
            text, self.buffer = data[:end] if end < len(data) else data, bytearray(memoryview(data)[end:])
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


class Writer(asyncio.Protocol):
    """The client's stdout: ``on_pause`` pauses the upstream's output while the client does not keep
    up; ``on_close`` when the client is gone."""

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
) -> tuple[asyncio.WriteTransport | FileOut, Writer | None]:
    """This process's stdout; with the `Writer` watching it when the event loop can."""
    fd = sys.stdout.fileno()
    mode = _kind(fd, "stdout")
    if stat.S_ISDIR(mode):
        raise ClientError("stdout is a directory")
    if not _pollable(fd, mode):
        return FileOut(fd), None
    try:
        return await loop.connect_write_pipe(lambda: Writer(on_pause, on_close), os.fdopen(fd, "wb", closefd=False))
    except (OSError, ValueError) as error:
        raise ClientError(f"cannot write to stdout: {error}") from None


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
