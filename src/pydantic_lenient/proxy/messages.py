r"""The proxy's messages as JSON, faithfully: parsed and written again without losing a value or a member.

A message is parsed by pydantic-core's parser unless a number in it may be beyond a double; then by
the standard library's, keeping each such number (``1e400``, 30 significant digits, an integer over
Python's digit limit) as a `float` subclass that remembers its text, which `dumped` writes back as it
came. A lone surrogate is written as its escape. A message too deep for either parser is still read
for its top-level members (`members`, no recursion), so it can be routed by its id.
"""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

from pydantic_core import from_json

__all__ = (
    "NESTED",
    "Exact",
    "RequestId",
    "dumped",
    "error_answer",
    "exact",
    "failed",
    "is_batch",
    "is_id",
    "joined",
    "may_be_inexact",
    "members",
    "parsed",
    "parsed_message",
    "tool_error",
)

RequestId = Any  # an int or a str, as JSON-RPC allows
_CONNECTION_CLOSED = -32000  # MCP's error code for a request its transport can no longer answer
_BATCH = re.compile(rb"[ \t\r\n]*\[")


def is_batch(line: bytes) -> bool:
    """Whether ``line`` is a JSON-RPC batch (an array), by its first character."""
    return _BATCH.match(line) is not None


def is_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class _Verbatim(float):
    """A JSON number a double cannot hold as written (``1e400``, ``1e-400``, 30 significant digits, an
    integer over Python's 4,300 digits): its nearest double for checking, its text for writing."""

    __slots__ = ("text",)
    text: str


class Exact(NamedTuple):
    """A message parsed by `exact`; ``verbatim``: it holds a `_Verbatim` number, written back by `dumped`;
    ``shallow``: read by pydantic-core's parser, which refuses nesting deeper than 200 levels."""

    value: Any
    verbatim: bool
    shallow: bool = False


_made = [0]  # how many `_Verbatim` numbers were ever made: `exact` tells whether its parse made one


def _verbatim(text: str, value: float) -> _Verbatim:
    _made[0] += 1
    number = _Verbatim(value)
    number.text = text
    return number


def _number(text: str) -> float:
    value = float(text)
    if repr(value) == text:
        return value
    try:
        if Decimal(repr(value)) == Decimal(text):  # "1.50" is the double 1.5: nothing to keep
            return value
    except InvalidOperation:
        pass
    return _verbatim(text, value)


def _integer(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # over Python's digit limit for int()
        return _verbatim(text, float("-inf") if text.startswith("-") else float("inf"))


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_EXACT = json.JSONDecoder(parse_float=_number, parse_constant=_not_json)
_EXACT_INTEGERS = json.JSONDecoder(parse_float=_number, parse_int=_integer, parse_constant=_not_json)
# Where a number may not survive a double: 17 digits and dots in a row, or an exponent. Anywhere else
# a number has at most 15 significant digits with a fraction, or is an integer (exact in Python).
_MAYBE_INEXACT = re.compile(rb"[0-9](?:[0-9.]{16}|[eE])")


def exact(line: bytes) -> Exact:
    """``line``'s JSON value with every number as exact as it was written, or None when it is not JSON."""
    made = _made[0]
    try:
        text = line.decode()
        try:
            value = _EXACT.decode(text)
        except ValueError:  # an integer over int()'s digit limit, perhaps: again, with each integer checked
            value = _EXACT_INTEGERS.decode(text)
    except (ValueError, RecursionError):
        return Exact(None, False)
    return Exact(value, _made[0] != made)


def may_be_inexact(line: bytes) -> bool:
    """Whether a number in ``line`` may be beyond a double, so that `parsed` may not keep it as written."""
    return _MAYBE_INEXACT.search(line) is not None


def parsed_message(line: bytes) -> Exact:
    """`exact`, by the faster parser when no number in ``line`` can be beyond a double."""
    if not may_be_inexact(line):
        try:
            return Exact(from_json(line), False, shallow=True)
        except ValueError:  # a lone surrogate, deep nesting: the exact parser may still read it
            pass
    return exact(line)


def dumped(message: dict[str, Any], verbatim: bool = False, size: int = 0) -> bytes:
    """``message`` as one line of compact JSON, with each `_Verbatim` number as written (``verbatim``:
    it may hold one) and a lone surrogate as its escape; b"" when it cannot be written (the caller
    then sends the original). ``size``: about how long it is written (the line it was read from).

    A message of `_STREAMED` bytes or more, or one that may hold a `_Verbatim` number, is written a
    piece at a time into one buffer (`_Writer`), so it is held once, as bytes, while the parsed
    message and the line it came from are held too: one text of it, then its bytes, then those
    with a newline would be two copies more."""
    try:
        if verbatim or size >= _STREAMED:
            try:
                return _Writer(ensure_ascii=False, verbatim=verbatim).written(message)
            except UnicodeEncodeError:  # a lone surrogate: ASCII escapes keep it
                return _Writer(ensure_ascii=True, verbatim=verbatim).written(message)
        try:
            data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except UnicodeEncodeError:
            data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    except (ValueError, RecursionError):
        return b""
    return data + b"\n"


_STREAMED = 1 << 20  # bytes from which a message is written a piece at a time
_PIECE = 1 << 16  # characters of a long string encoded at a time
_RUN_BYTES = 1 << 16  # about how long a run of array items encoded at a time is
_SHORT_TEXT = 256  # characters a string in such a run may have
_SMALL = 512  # bytes an item may take, on average, for containers to join runs
_SHORT = frozenset((str, int, float, bool, type(None)))  # exact classes: a `_Verbatim` number is none of them
_CONTAINERS = frozenset((dict, list))
_UNQUOTED = frozenset((int, float, bool, type(None)))
_TEXT = frozenset((str,))
_DEEP = 64  # from this depth on, a value is encoded whole (unless it holds a `_Verbatim` number)


class _Writer:
    """Writes a value exactly as ``json.dumps(value, ensure_ascii=..., separators=(",", ":"),
    allow_nan=False)`` would, into one buffer, a piece at a time: containers member by member,
    short scalars in runs, a long string in slices (JSON escapes one character at a time, so the
    slices escape as the whole does), and each `_Verbatim` number as its text (``verbatim``: the
    value may hold one, at any depth). `io.BytesIO` hands its buffer over without copying it.
    Raises what ``json.dumps`` raises, and `UnicodeEncodeError` for a lone surrogate unless
    ``ensure_ascii``."""

    def __init__(self, ensure_ascii: bool, verbatim: bool) -> None:
        self.out = io.BytesIO()
        self.encode = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=(",", ":"), allow_nan=False).encode
        self.verbatim = verbatim

    def written(self, message: Any) -> bytes:
        self.value(message, 0)
        self.out.write(b"\n")
        return self.out.getvalue()

    def put(self, text: str) -> None:
        self.out.write(text.encode())

    def value(self, value: Any, depth: int) -> None:
        if value.__class__ is str and len(value) > _PIECE:
            self.out.write(b'"')
            for start in range(0, len(value), _PIECE):
                self.put(self.encode(value[start : start + _PIECE])[1:-1])
            self.out.write(b'"')
        elif isinstance(value, _Verbatim):
            self.put(value.text)
        elif value.__class__ in _SHORT or (depth >= _DEEP and not (self.verbatim and _holds_verbatim(value))):
            self.put(self.encode(value))
        elif isinstance(value, dict):
            self.members(value, depth + 1)
        elif isinstance(value, (list, tuple)):
            self.items(value, depth + 1)
        else:  # what JSON cannot hold: json.dumps's error
            self.put(self.encode(value))

    def members(self, value: dict[Any, Any], depth: int) -> None:
        self.out.write(b"{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                self.out.write(b",")
            # A key that is no string as json.dumps writes it (1, True: "1", "true"), or its error.
            self.put(self.encode(key) if isinstance(key, str) else self.encode({key: 0})[1:-3])
            self.out.write(b":")
            self.value(item, depth)
        self.out.write(b"}")

    def items(self, value: list[Any] | tuple[Any, ...], depth: int) -> None:
        """An array, in runs of items encoded by one call each (`run`); any other item on its own."""
        out = self.out
        out.write(b"[")
        begin, start, count = out.tell(), 0, len(value)
        while start < count:
            if start:
                out.write(b",")
            average = (out.tell() - begin) // start if start else _SMALL + 1  # bytes an item took so far
            limit = min(count, start + max(1, _RUN_BYTES // max(average, 8)))
            stop = self.run(value, start, limit, containers=average <= _SMALL and not self.verbatim)
            if stop > start:
                self.put(self.encode(value[start:stop])[1:-1])
                start = stop
            else:
                self.value(value[start], depth)
                start += 1
        out.write(b"]")

    @staticmethod
    def run(value: list[Any] | tuple[Any, ...], start: int, limit: int, containers: bool) -> int:
        """Where a run of items from ``start`` ends (``limit`` at most): short scalars, and arrays
        and objects too when ``containers`` (the items so far took `_SMALL` bytes or less each)."""
        kinds = set(map(type, value[start:limit]))  # at C speed: an array's items are mostly of one kind
        if kinds <= _UNQUOTED or (containers and kinds <= _CONTAINERS):
            return limit
        if kinds == _TEXT and sum(map(len, value[start:limit])) <= _RUN_BYTES:
            return limit
        stop = start
        while stop < limit:
            item = value[stop]
            if item.__class__ in _SHORT:
                if item.__class__ is str and len(item) > _SHORT_TEXT:
                    break
            elif not containers or item.__class__ not in _CONTAINERS:
                break
            stop += 1
        return stop


def _holds_verbatim(value: Any) -> bool:
    """Whether a `_Verbatim` number is anywhere in ``value`` (no recursion; each container once)."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, _Verbatim):
            return True
        if isinstance(item, (dict, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return False


def joined(lines: list[bytes]) -> bytes:
    """Single messages, each a line, as one batch line (nothing for none)."""
    parts = [line.rstrip(b"\n") for line in lines if line]
    return b"[" + b",".join(parts) + b"]\n" if parts else b""


_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DECODER = json.JSONDecoder()
_PLAIN = re.compile(r'[^"\[\]{}]+')
NESTED = object()  # a member `members` did not read: an array or an object


def members(line: bytes) -> dict[str, Any]:
    """The top-level members of a JSON object too deep for the parsers, arrays and objects left
    unread (`NESTED`): enough to route it. {} when it is not such an object. No recursion."""
    try:
        text = line.decode()
        position = _SPACE.match(text).end()  # type: ignore[union-attr]
        if text[position : position + 1] != "{":
            return {}
        members: dict[str, Any] = {}
        position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        while text[position : position + 1] != "}":
            key, position = _DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            if text[position] != ":" or not isinstance(key, str):
                return {}
            position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            if text[position] in "[{":
                position, members[key] = _skipped(text, position), NESTED
            else:
                members[key], position = _DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            if text[position] == ",":
                position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            elif text[position] != "}":
                return {}
    except (ValueError, IndexError):
        return {}
    return members


def _skipped(text: str, position: int) -> int:
    """Where the array or object at ``position`` ends."""
    depth = 0
    while True:
        plain = _PLAIN.match(text, position)
        if plain is not None:
            position = plain.end()
        character = text[position]
        if character == '"':
            match = _STRING.match(text, position)
            if match is None:
                raise ValueError("an unterminated string")
            position = match.end()
            continue
        if character in "[{":
            depth += 1
        elif character in "]}":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1


def error_answer(request_id: RequestId, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": _CONNECTION_CLOSED, "message": message}}
    return dumped(error) or dumped({**error, "id": None})


def tool_error(request_id: RequestId, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    return dumped({"jsonrpc": "2.0", "id": request_id, "result": result})


def failed(message: dict[str, Any]) -> bool:
    """Whether an answer is an error: a JSON-RPC error, or a tool result with ``isError``."""
    result = message.get("result")
    return "error" in message or (isinstance(result, dict) and result.get("isError") is True)


def parsed(line: bytes) -> dict[str, Any]:
    """The line's JSON object, or {} when it is not one (it is then forwarded as it came)."""
    try:
        message = from_json(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}
