"""Server-sent events read from bytes, each bounded in size: the stream of a Streamable HTTP answer.

The WHATWG rules: lines end in CR, LF or CRLF (a CR at the end of one chunk and the LF at the start
of the next are one line end); ``data`` lines join with LF; a blank line dispatches the event; a line
starting with ``:`` is a comment; ``id`` (without NUL) sets the last event id, ``retry`` (ASCII digits)
the reconnection time; a UTF-8 BOM at the start is dropped; an event not ended by a blank line when
the stream ends is dropped. Bytes are kept as bytes: an event's data goes on as it came.

One event (its pending line included) over ``limit`` bytes raises `EventTooLarge`, so a stream never
holds more than that in memory. The limit is the proxy's, the same as a stdio message's: the 1 MiB
of httpx2's SSE parser is that library's default, not the protocol's. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ("Event", "EventReader", "EventTooLarge")

_LINE_END = re.compile(rb"\r\n|\r|\n")
_DIGITS = re.compile(rb"[0-9]{1,9}")
_VISIBLE_ASCII = re.compile(rb"[\x21-\x7e]+")


class EventTooLarge(Exception):
    """An event grew past the reader's limit."""


@dataclass(frozen=True)
class Event:
    """One dispatched event: its data (bytes, without the last LF), the last event id so far, the
    last retry interval so far (milliseconds)."""

    data: bytes
    last_id: str | None
    retry: int | None


class EventReader:
    """Feeds bytes in, gets whole events out.

    >>> reader = EventReader(limit=100)
    >>> reader.feed(b'id: 7\\r\\ndata: {"a":\\r')
    []
    >>> reader.feed(b'\\ndata: 1}\\n\\n')
    [Event(data=b'{"a":\\n1}', last_id='7', retry=None)]
    """

    def __init__(self, limit: int, last_id: str | None = None, retry: int | None = None) -> None:
        self.limit = limit
        self.last_id = last_id
        self.retry = retry
        self.line = bytearray()
        self.data = bytearray()
        self.has_data = False
        self.after_cr = False  # the last chunk ended in CR: an LF starting this one ends nothing
        self.started = False

    def feed(self, chunk: bytes) -> list[Event]:
        if self.after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        if chunk:
            self.after_cr = False
        if not self.started and (self.line or chunk):
            joined = bytes(self.line) + chunk
            if len(joined) < 3 and b"\xef\xbb\xbf".startswith(joined):
                self.line = bytearray(joined)  # may still be a BOM: wait for the rest
                return []
            self.started = True
            self.line = bytearray()
            chunk = joined[3:] if joined.startswith(b"\xef\xbb\xbf") else joined
        events: list[Event] = []
        start = 0
        for end in _LINE_END.finditer(chunk):
            self.line += chunk[start : end.start()]
            self._check()
            event = self._line(bytes(self.line))
            self.line = bytearray()
            if event is not None:
                events.append(event)
            start = end.end()
            self.after_cr = end.group() == b"\r" and end.end() == len(chunk)
        self.line += chunk[start:]
        self._check()
        return events

    def _check(self) -> None:
        if len(self.line) + len(self.data) > self.limit:
            raise EventTooLarge(f"an SSE event over {self.limit} bytes")

    def _line(self, line: bytes) -> Event | None:
        if not line:
            if not self.has_data:
                return None
            data = bytes(self.data[:-1])
            self.data, self.has_data = bytearray(), False
            return Event(data, self.last_id, self.retry)
        if line.startswith(b":"):
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self.data += value + b"\n"
            self.has_data = True
        elif name == b"id" and b"\0" not in value:
            # An id goes back in a header (Last-Event-ID): only visible ASCII can; any other is not kept.
            self.last_id = value.decode("ascii") if _VISIBLE_ASCII.fullmatch(value) else None
        elif name == b"retry" and _DIGITS.fullmatch(value):
            self.retry = int(value)
        return None
