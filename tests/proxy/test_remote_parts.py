"""The parts of ``proxy --url``, for every value (hypothesis): the SSE reader gives the same events
however the stream is cut into chunks, and never holds more than its limit; the 2026-07-28 headers
are the official SDK's (`mcp.shared.inbound`), value by value and schema by schema; no spelling of a
URL's or a header's secret survives the log filter."""

from __future__ import annotations

import logging
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.sdks import require

require("mcp")
require("httpx2")

import httpx2  # noqa: E402
from mcp.shared import inbound  # noqa: E402

from pydantic_lenient.proxy.addresses import Redacting  # noqa: E402
from pydantic_lenient.proxy.events import Event, EventReader, EventTooLarge  # noqa: E402
from pydantic_lenient.proxy.mcp_headers import PROTOCOL_VERSION_KEY, encode_header_value, modern_headers  # noqa: E402
from pydantic_lenient.schema.mcp_headers import param_headers_of  # noqa: E402

# ---- the SSE reader

_LINE_ENDS = st.sampled_from([b"\n", b"\r", b"\r\n"])
_DATA = st.binary(max_size=40).map(lambda data: data.replace(b"\r", b"").replace(b"\n", b""))


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    """An SSE stream: events of data, id, retry and comment lines, with any line ends."""
    parts = [b"\xef\xbb\xbf"] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 5))):
        for field in draw(st.lists(st.sampled_from([b"data", b"id", b"retry", b":", b"event"]), max_size=4)):
            value = draw(_DATA) if field != b"retry" else str(draw(st.integers(0, 10**6))).encode()
            space = b" " if draw(st.booleans()) else b""
            parts.append((field if field == b":" else field + b":") + space + value + draw(_LINE_ENDS))
        parts.append(draw(_LINE_ENDS))
    return b"".join(parts)


def _read(stream: bytes, cuts: list[int], limit: int = 10**6) -> tuple[list[Event], str | None]:
    reader = EventReader(limit)
    events: list[Event] = []
    start = 0
    for cut in [*sorted(cuts), len(stream)]:
        events += reader.feed(stream[start:cut])
        start = cut
    return events, reader.last_id


@given(_streams(), st.data())
def test_the_same_events_however_the_stream_is_cut(stream: bytes, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=8))
    assert _read(stream, cuts) == _read(stream, [])


@given(_streams())
def test_events_are_those_of_a_reference_reader(stream: bytes) -> None:
    """The WHATWG algorithm, written plainly on the whole stream: the reader agrees."""
    text = stream[3:] if stream.startswith(b"\xef\xbb\xbf") else stream
    lines = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")[:-1]
    expected, data, last_id, retry = [], None, None, None
    for line in lines:
        if not line:
            if data is not None:
                expected.append(Event(b"\n".join(data), last_id, retry))
            data = None
            continue
        name, colon, value = line.partition(b":")
        value = value[1:] if colon and value.startswith(b" ") else value
        if name == b"data":
            data = [*(data or []), value]
        elif name == b"id" and b"\0" not in value:
            last_id = value.decode() if value and all(0x21 <= byte <= 0x7E for byte in value) else None
        elif name == b"retry" and 0 < len(value) <= 9 and all(0x30 <= byte <= 0x39 for byte in value):
            retry = int(value)
    assert _read(stream, [])[0] == expected


@given(st.integers(1, 5000), st.integers(1, 4096))
def test_an_event_over_the_limit_is_refused_without_holding_it(limit: int, chunk: int) -> None:
    reader = EventReader(limit)
    stream = b"data: " + b"x" * (limit + 1)
    refused: EventTooLarge | None = None
    for start in range(0, len(stream), chunk):
        try:
            reader.feed(stream[start : start + chunk])
        except EventTooLarge as error:
            refused = error
            break
        assert len(reader.line) + len(reader.data) <= limit
    assert refused is not None
    assert str(refused) == f"an SSE event over {limit} bytes"


# ---- the 2026-07-28 headers, as the SDK writes them

_VALUES = st.text(max_size=20) | st.sampled_from(["=?base64?eA==?=", " x", "x ", "", "é", "\t"])


@given(_VALUES)
def test_a_header_value_is_encoded_as_the_sdk_encodes_it(value: str) -> None:
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in value))  # the SDK cannot encode a lone surrogate
    encoded = encode_header_value(value)
    assert encoded == inbound.encode_header_value(value)
    assert inbound.decode_header_value(encoded) == value
    assert encoded.isascii()
    assert encoded.isprintable()


_TOKENS = st.sampled_from(["Region", "region", "Place", "X", "bad token", "", "é"])
_TYPES = st.sampled_from(["string", "integer", "boolean", "number", ["string"], None])


@st.composite
def _schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    kind = draw(_TYPES)
    if kind is not None:
        schema["type"] = kind
    if depth and draw(st.booleans()):
        schema["x-mcp-header"] = draw(_TOKENS | st.integers(0, 3))
    if depth < 3:
        names = draw(st.lists(st.sampled_from(["a", "b", "region"]), max_size=3, unique=True))
        if names:
            schema["properties"] = {name: draw(_schemas(depth + 1)) for name in names}
        keyword = draw(st.sampled_from([None, "items", "anyOf", "additionalProperties", "$defs"]))
        if keyword == "anyOf":
            schema["anyOf"] = [draw(_schemas(depth + 1))]
        elif keyword == "$defs":
            schema["$defs"] = {"d": draw(_schemas(depth + 1))}
        elif keyword is not None:
            schema[keyword] = draw(_schemas(depth + 1))
    return schema


@settings(max_examples=300)
@given(_schemas())
def test_the_annotated_properties_are_those_the_sdk_finds(schema: dict[str, Any]) -> None:
    expected = inbound.x_mcp_header_map(schema) if inbound.find_invalid_x_mcp_header(schema) is None else {}
    assert param_headers_of(schema) == expected


_ARGUMENTS = st.dictionaries(
    st.sampled_from(["a", "b", "region"]),
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8) | st.just({"a": 1}),
    max_size=3,
)


@given(_schemas(), _ARGUMENTS, st.text(min_size=1, max_size=10))
def test_the_param_headers_are_those_the_sdk_sends_and_checks(
    schema: dict[str, Any], arguments: dict[str, Any], name: str
) -> None:
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in name))
    headers = param_headers_of(schema)
    call = {
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}},
    }
    sent = modern_headers(call, {name: headers})
    assert sent is not None
    params = {key: value for key, value in sent.items() if key.startswith("Mcp-Param-")}
    assert params == inbound.mcp_param_headers(headers, arguments)
    # The server's own check passes on what the proxy sends.
    assert inbound.validate_mcp_param_headers(schema, arguments, {k.lower(): v for k, v in sent.items()}) is None
    assert inbound.decode_header_value(sent["mcp-name"]) == name


# ---- no secret in a log record


_SECRETS = st.text(
    st.characters(min_codepoint=0x21, blacklist_categories=("Cs", "Cc")), min_size=4, max_size=12
).filter(lambda secret: secret not in "[redacted]" and not set(secret) & set("#?/&=;%+"))


@settings(max_examples=200)
@given(_SECRETS, _SECRETS, _SECRETS, _SECRETS)
def test_no_spelling_of_a_secret_survives_the_filter(path: str, query: str, password: str, header: str) -> None:
    url = f"http://user:{password}@127.0.0.1:8000/mcp/{path}/mcp?key={query}%20x"
    sent = httpx2.URL(url)
    redacting = Redacting([url, str(sent)], [header])
    record = logging.LogRecord(
        "httpx2", logging.INFO, __file__, 1, "HTTP Request: %s %s %s %s", ("POST", sent, header, path), None
    )
    redacting.filter(record)
    message = record.getMessage()
    for secret in (path, query, password, header):
        assert secret not in message
    assert sent.raw_path.decode() not in message
