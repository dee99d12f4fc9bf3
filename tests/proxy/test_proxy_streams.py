"""The proxy's byte plumbing on its own: lines split out of the chunks read, and writes fed to a
pipe a slice at a time. What a huge message costs here is the memory test's (test_proxy_memory.py);
these check that nothing is lost, reordered or copied on the way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.sdks import require

require("jsonschema_rs")

from pydantic_lenient.proxy import streams  # noqa: E402
from pydantic_lenient.proxy.streams import Feed, Lines  # noqa: E402

SLICE = streams._SLICE


def _lines() -> tuple[Lines, list[bytes], list[str | None]]:
    handed: list[bytes] = []
    ends: list[str | None] = []
    return Lines(handed.extend, ends.append), handed, ends


def test_lines_are_split_out_of_chunks_whatever_their_bounds() -> None:
    lines, handed, ends = _lines()
    for chunk in (b'{"a":', b"1}\n", b'{"b":2}\n \n{"c"', b":", b"3}\n{", b'"d":4}\n'):
        lines.data_received(chunk)
    assert handed == [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n', b'{"d":4}\n']
    assert all(type(line) is bytes for line in handed)  # the buffer handed over as bytes, not a bytearray
    lines.connection_lost(None)
    assert ends == [None]


def test_a_chunk_that_is_one_whole_line_is_handed_on_as_it_came() -> None:
    lines, handed, _ = _lines()
    chunk = b'{"a":1}\n'
    lines.data_received(chunk)
    assert handed[0] is chunk


def test_a_line_longer_than_the_limit_ends_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "_MAX_LINE", 10)
    lines, handed, ends = _lines()
    lines.data_received(b"x" * 8)
    lines.data_received(b"x" * 8)
    assert handed == []
    assert ends == ["sent a message longer than 10 bytes"]


class _Pipe(asyncio.WriteTransport):
    """A pipe that takes everything into its buffer and pauses its writer past ``high`` bytes, as
    asyncio's pipe transports do; `drain` is the reader catching up."""

    def __init__(self, high: int) -> None:
        super().__init__()
        self.high = high
        self.feed: Feed | None = None
        self.written: list[bytes] = []
        self.buffered = 0
        self.closed = False

    def write(self, data: Any) -> None:
        assert len(data) <= SLICE, "given more than a slice"
        self.written.append(bytes(data))
        self.buffered += len(data)
        if self.buffered > self.high and self.feed is not None:
            self.feed.transport_paused(True)

    def drain(self) -> None:
        self.buffered = 0
        if self.feed is not None:
            self.feed.transport_paused(False)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def _feed(high: int = 64 * 1024) -> tuple[Feed, _Pipe, list[bool]]:
    pauses: list[bool] = []
    feed = Feed(pauses.append)
    pipe = _Pipe(high)
    feed.transport, pipe.feed = pipe, feed
    return feed, pipe, pauses


def test_a_huge_write_is_fed_a_slice_at_a_time_and_holds_the_callers_bytes() -> None:
    feed, pipe, pauses = _feed()
    huge = bytes(range(256)) * (SLICE // 64)  # four slices
    small = b"after\n"
    feed.write(huge)
    feed.write(small)  # waits behind the huge one
    assert pipe.written == [huge[:SLICE]]
    assert feed.waiting[0].obj is huge  # not copied: what the pipe has not taken is the caller's
    assert pauses == [True]
    while feed.waiting:
        pipe.drain()
    pipe.drain()
    assert b"".join(pipe.written) == huge + small
    assert pauses == [True, False]


def test_a_small_write_goes_straight_to_the_pipe() -> None:
    feed, pipe, pauses = _feed()
    feed.write(b"one\n")
    feed.write(b"two\n")
    assert pipe.written == [b"one\n", b"two\n"]
    assert pauses == []


def test_close_waits_for_what_waits_and_a_closed_pipe_drops_it() -> None:
    feed, pipe, _ = _feed()
    feed.write(b"x" * (3 * SLICE))
    feed.close()
    assert feed.is_closing()
    assert not pipe.closed
    feed.write(b"too late\n")
    while feed.waiting:
        pipe.drain()
    assert pipe.closed
    assert b"".join(pipe.written) == b"x" * (3 * SLICE)

    feed, pipe, _ = _feed()
    feed.write(b"x" * (3 * SLICE))
    pipe.closed = True  # the reader went away
    pipe.drain()
    assert not feed.waiting
    assert len(pipe.written) == 1
