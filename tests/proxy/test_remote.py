"""`proxy --url` against a hostile Streamable HTTP server (tests/proxy/hostile_http.py), in process, on
127.0.0.1: every host request answered exactly once, whatever the server does; every body bounded;
the server's JSON-RPC errors passed on as sent; any byte refused or handled in one line; no secret in
any output; the GET stream reconnected by the SDK's rules; the 2026-07-28 headers written from the
repaired body. Each case is bounded in time (`hostile_http.ANSWER_WAIT`, the module's guard) and the
large ones in memory (tracemalloc)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.sdks import require

require("httpx2")

import httpx2  # noqa: E402

from pydantic_lenient.proxy.core import ProxyOptions  # noqa: E402

from .hostile_http import Hostile, Request, Through, http, message_event, sse, through  # noqa: E402

T = TypeVar("T")
GUARD = 60.0
ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
CASE = {"jsonrpc": "2.0", "id": 1, "method": "test/case", "params": {}}


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, GUARD)

    return asyncio.run(guarded())


def answered(respond: Any, messages: Sequence[dict[str, Any] | list[dict[str, Any]]] = (), **options: Any) -> Through:
    """The host's ``messages`` (one request, by default) through the proxy to a server answering with ``respond``."""

    async def exercise() -> Through:
        async with Hostile(respond) as server:
            return await through(f"http://127.0.0.1:{server.port}/mcp", messages or [CASE], **options)

    return run(exercise())


def always(raw: bytes) -> Any:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(raw)

    return respond


def closing(raw: bytes) -> Any:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(raw)
        await writer.drain()
        writer.close()

    return respond


# ---- every request answered exactly once, with one clear error naming the cause


async def _silent(request: Request, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(30)


async def _resumable_but_never_resumed(request: Request, writer: asyncio.StreamWriter) -> None:
    if request.method == "POST":
        writer.write(sse(b"id: e1\nretry: 10\ndata: "))  # a priming event: an id, no message
    else:  # every resumption ends at once, bringing nothing new
        writer.write(sse(b"retry: 10"))
    await writer.drain()
    writer.close()


HOSTILE_CASES = {
    "202": (always(http(202)), "answered 202 without a result", -32600),
    "redirect with a trailing slash": (
        always(http(307, b"", None, "location: /mcp/")),
        "the URL redirects to itself with a trailing slash: use that URL",
        -32600,
    ),
    "redirect elsewhere": (
        always(http(302, b"", None, "location: https://other.example:8443/a/TOKEN")),
        "redirects to https://other.example:8443: use that URL",
        -32600,
    ),
    "empty 200": (always(http(200, b"")), "answered HTTP 200 with an empty body", -32700),
    "html 200": (always(http(200, b"<html>hi</html>", "text/html")), "with `text/html`, not JSON", -32600),
    "json 200 that is html": (always(http(200, b"<html>hi</html>")), "a body that is not JSON-RPC", -32700),
    "truncated 200": (
        closing(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n" + b'{"jsonrpc":'),
        "broke the connection",
        -32000,
    ),
    "truncated 200 without a length": (
        closing(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n" + b'{"jsonrpc":'),
        "a body that is not JSON-RPC",
        -32700,
    ),
    "sse closing with no event id": (
        closing(sse(message_event({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))),
        "closed its SSE stream before the answer, with no event id to resume it",
        -32000,
    ),
    "sse event that is not json": (closing(sse(b"data: <html>")), "sent an SSE event that is not JSON-RPC", -32700),
    "resumptions run out": (_resumable_but_never_resumed, "tries to resume it failed", -32000),
    "http 500 without a json-rpc body": (
        always(http(500, b"oops", "text/plain")),
        "answered HTTP 500 with a `text/plain` body, not a JSON-RPC error",
        -32603,
    ),
    "404 outside a session": (always(http(404, b"")), "answered HTTP 404 (no such endpoint or method)", -32601),
    "no answer at all": (_silent, "sent nothing for 0.5 s", -32000),
}


@pytest.mark.parametrize("case", list(HOSTILE_CASES))
def test_every_request_is_answered_once_with_an_error_naming_the_cause(case: str) -> None:
    respond, reason, code = HOSTILE_CASES[case]
    got = answered(respond, read_timeout=0.5)
    answer = got.answer(1)  # exactly one, and every line the host got is JSON
    assert answer["error"]["code"] == code
    assert reason in answer["error"]["message"]
    assert answer["error"]["message"].startswith("the upstream MCP server `http://127.0.0.1:")
    assert "/mcp" not in answer["error"]["message"]  # scheme, host and port only
    assert [line for line in got.answers if "method" not in line] == [answer]


# The cases the official SDK's client answers with an error too (it raises on the others: a body
# cut short of its length, resumptions that fail, and its read timeout).
SDK_ANSWERS = [
    case for case in HOSTILE_CASES if case not in ("truncated 200", "resumptions run out", "no answer at all")
]


@pytest.mark.parametrize("case", SDK_ANSWERS)
def test_the_sdks_client_answers_the_same_case_with_the_same_code(case: str) -> None:
    """Matched case by case: the official SDK's Streamable HTTP client, on the same server."""
    require("mcp")
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

    respond, _, code = HOSTILE_CASES[case]

    async def exercise() -> Any:
        async with (
            Hostile(respond) as server,
            httpx2.AsyncClient(timeout=httpx2.Timeout(5, read=5)) as client,
            streamable_http_client(f"http://127.0.0.1:{server.port}/mcp", http_client=client) as (read, write),
        ):
            await write.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=1, method="test/case", params={})))
            while True:
                received = await read.receive()
                assert not isinstance(received, Exception)
                if isinstance(received.message, JSONRPCError | JSONRPCResponse):
                    return received.message

    answer = run(exercise())
    assert isinstance(answer, JSONRPCError)
    assert answer.error.code == code


def test_an_sse_event_over_the_limit_ends_that_request_only() -> None:
    big = {"jsonrpc": "2.0", "id": 1, "result": {"text": "x" * 200_000}}
    small = {"jsonrpc": "2.0", "id": 2, "result": {"text": "fine"}}

    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        answer = big if request.message.get("id") == 1 else small
        writer.write(sse(message_event(answer)))
        await writer.drain()
        writer.close()

    got = answered(respond, [CASE, {**CASE, "id": 2}], max_message=64 * 1024)
    assert "sent nothing" not in json.dumps(got.answers)
    assert got.answer(1)["error"]["message"].endswith("an SSE event over 65536 bytes")
    assert got.answer(2)["result"] == {"text": "fine"}
    assert got.failure is None


def test_a_large_result_passes_over_httpx_default_sse_limit() -> None:
    """2 MB in one event, where httpx2's parser stops at 1 MiB: the proxy's cap is the stdio side's."""
    result = {"content": [{"type": "text", "text": "y" * 2_000_000}]}
    got = answered(closing(sse(message_event({"jsonrpc": "2.0", "id": 1, "result": result}, "e1"))))
    assert got.answer(1)["result"] == result


# ---- upstream JSON-RPC errors reach the host as sent


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, {"code": -32602, "message": "bad n"}),
        (404, {"code": -32601, "message": "Method not found"}),
        (400, {"code": -32020, "message": "Mcp-Param-Region header does not match"}),
        (400, {"code": -32022, "message": "Unsupported", "data": {"supported": ["2026-07-28"], "requested": "1"}}),
        (500, {"code": -32603, "message": "internal", "data": {"trace": "é\ud800"}}),
        (200, {"code": -32000, "message": "plain"}),
    ],
)
def test_a_json_rpc_error_in_any_http_answer_is_passed_on_as_sent(status: int, error: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()
    got = answered(always(http(status, body)))
    assert got.lines == [body]


def test_an_error_with_a_null_id_is_given_the_requests_id() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request"}}).encode()
    got = answered(always(http(400, body)), [{**CASE, "id": "a"}])
    assert got.answer("a")["error"] == {"code": -32600, "message": "Bad Request"}


def test_a_404_in_a_session_says_the_session_ended() -> None:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "h", "version": "1"}}
            body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode()
            writer.write(http(200, body, "application/json", "mcp-session-id: abc"))
        else:
            writer.write(http(404, b"", None))

    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    got = answered(respond, [initialize, CASE])
    assert "its session has ended" in got.answer(1)["error"]["message"]


# ---- every body bounded after decompression


def _gzip_bomb(megabytes: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"0" * (1024 * 1024)
    parts = [compressor.compress(b'{"jsonrpc":"2.0","id":1,"result":{"text":"')]
    parts += [compressor.compress(zeros) for _ in range(megabytes)]
    return b"".join(parts) + compressor.flush()


async def _endless(request: Request, writer: asyncio.StreamWriter, status: int = 200) -> None:
    writer.write(f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n".encode())
    writer.write(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"')
    for _ in range(200):  # 200 MB, were it all read
        writer.write(b"z" * (1024 * 1024))
        try:
            await writer.drain()
        except ConnectionError:
            return
    writer.close()


async def _endless_error(request: Request, writer: asyncio.StreamWriter) -> None:
    await _endless(request, writer, 400)


@pytest.mark.parametrize(
    ("case", "respond", "reason"),
    [
        (
            "gzip bomb",
            always(http(200, _gzip_bomb(300), "application/json", "content-encoding: gzip")),
            "answered with a body over 1048576 bytes",
        ),
        ("endless json", _endless, "answered with a body over 1048576 bytes"),
        ("endless error body", _endless_error, "answered HTTP 400 with a body over 1048576 bytes"),
    ],
)
def test_every_body_is_bounded_after_decompression(case: str, respond: Any, reason: str) -> None:
    tracemalloc.start()
    try:
        got = answered(respond, max_message=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reason in got.answer(1)["error"]["message"]
    assert peak < 64 * 1024 * 1024, f"{case}: {peak} bytes at the peak"


# ---- bytes a header or URL cannot carry: refused or handled in one line


def test_a_session_id_that_is_not_visible_ascii_ends_the_session_in_one_line(tmp_path: Path) -> None:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}).encode()
        writer.write(http(200, body).replace(b"\r\n\r\n", b"\r\nmcp-session-id: s\xe9\r\n\r\n", 1))

    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    got = answered(respond, [initialize], options=ProxyOptions(log_dir=tmp_path))
    assert "sent a session id that is not visible ASCII" in got.answer(0)["error"]["message"]
    assert got.failure is not None
    assert "session id" in got.failure
    assert (tmp_path / "outcomes.json").exists()  # the session closed, and saved


def test_a_failed_delete_still_saves_the_counts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "DELETE":
            writer.close()  # the connection dropped, no answer
            return
        result = {"protocolVersion": "2025-11-25", "capabilities": {}}
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode()
        writer.write(http(200, body, "application/json", "mcp-session-id: abc"))

    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    with caplog.at_level(logging.WARNING, "pydantic_lenient.proxy"):
        got = answered(respond, [initialize], options=ProxyOptions(log_dir=tmp_path))
    assert got.answer(0)["result"]["protocolVersion"] == "2025-11-25"
    assert (tmp_path / "repair-stats.json").exists()
    assert any("did not end its session" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        (["--url", "http://127.0.0.1:1/mcp", "--header", "X-Api-Key: é-s3cret"], "X-Api-Key: its value must be"),
        (["--url", "http://127.0.0.1:1/mcp", "--header", "X-Api-Key: a\x01s3cret"], "X-Api-Key: its value must be"),
        (["--url", "http://127.0.0.1:1/mcp", "--header", "X Key: s3cret"], "a header name must be a token"),
        (["--url", "http://127.0.0.1:99999/s3cret"], "host or port cannot be read"),
        (["--url", "http://127.0.0.1/mcp?key=s3cret x"], "a space or a control character"),
        (["--url", "ftp://127.0.0.1/s3cret"], "not an http(s) URL"),
    ],
)
def test_a_header_or_url_a_request_cannot_carry_is_one_line_and_exit_code_2(arguments: list[str], shown: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "proxy", *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=GUARD,
        env=ENVIRONMENT,
    )
    stderr = completed.stderr.decode()
    assert completed.returncode == 2
    assert shown in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "s3cret" not in stderr
    assert "Traceback" not in stderr


# ---- no secret in any output


SECRETS = ("PASSWORD-9", "PATHTOKEN-9", "QSECRET-9", "HEADERVALUE-9")


async def _listing_then_down(request: Request, writer: asyncio.StreamWriter) -> None:
    if request.message.get("method") == "tools/list":
        tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
        writer.write(http(200, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}).encode()))
    else:
        writer.write(http(500, b"down", "text/plain"))


def test_no_secret_reaches_a_log_record_an_answer_or_the_log_dir(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Userinfo, a token in the path, a query the HTTP client re-encodes (``%20``, ``+``), a header
    value: in no record of any logger at DEBUG (httpx2 logs each URL at INFO), in no answer, and in
    no file of the log directory (where the failed call is recorded)."""
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {"n": "3"}}}

    async def exercise() -> Through:
        async with Hostile(_listing_then_down) as server:
            url = (
                f"http://user:PASSWORD-9@127.0.0.1:{server.port}/mcp/s/PATHTOKEN-9/mcp?key=QSECRET-9%20x&b=QSECRET-9+y"
            )
            messages = [{**CASE, "method": "tools/list"}, call]
            options = ProxyOptions(log_dir=tmp_path)
            return await through(url, messages, headers=[("X-Api-Key", "HEADERVALUE-9")], options=options)

    with caplog.at_level(logging.DEBUG):
        got = run(exercise())
    assert "answered HTTP 500" in got.answer(2)["error"]["message"]
    assert any(record.name.startswith("httpx2") for record in caplog.records), "httpx2 logged its requests"
    written = [path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()]
    assert any("error" in text for text in written), "the failed call is in the log dir"
    outputs = [b"".join(got.lines).decode(), *written] + [
        f"{record.getMessage()} {record.args!r} {record.__dict__!r}" for record in caplog.records
    ]
    for text in outputs:
        for secret in SECRETS:
            assert secret not in text
            assert secret.replace("-", "%2D") not in text


# ---- the server's GET stream


def test_the_get_stream_is_reconnected_after_any_number_of_normal_ends() -> None:
    """The SDK's rule: a normal end resets the count; the 7th GET brings a notification the host gets."""
    gets: list[int] = []
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET":
            gets.append(1)
            writer.write(sse(b"retry: 10", message_event(changed)) if len(gets) == 7 else sse(b"retry: 10"))
            await writer.drain()
            writer.close()
        elif request.message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}}
            body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode()
            writer.write(http(200, body, "application/json", "mcp-session-id: abc"))
        else:
            writer.write(http(202))

    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    got = answered(respond, messages, wait_for=lambda got: any(b"list_changed" in line for line in got.lines))
    assert changed in got.answers
    assert len(gets) >= 7


# ---- 2026-07-28: headers from the repaired body


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
TOOL = {
    "name": "regional",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "integer", "x-mcp-header": "Region"},
            "place": {"type": "string", "x-mcp-header": "Place"},
        },
        "required": ["region"],
    },
}


def test_a_modern_request_carries_its_headers_from_the_repaired_arguments() -> None:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        message = request.message
        if message.get("method") == "tools/list":
            result = {"tools": [TOOL], "ttlMs": 5000, "cacheScope": "public", "resultType": "complete"}
        else:
            result = {"content": [{"type": "text", "text": "ok"}]}
        writer.write(http(200, json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}).encode()))

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "regional", "arguments": {"region": "7", "place": "Zürich "}, "_meta": META},
        },
    ]

    async def exercise() -> tuple[Through, list[Request]]:
        async with Hostile(respond) as server:
            return await through(f"http://127.0.0.1:{server.port}/mcp", messages), server.requests

    got, requests = run(exercise())
    listing = got.answer(1)["result"]
    assert (listing["ttlMs"], listing["cacheScope"], listing["resultType"]) == (5000, "public", "complete")
    assert got.answer(2)["result"]["content"][0]["text"] == "ok"
    listed, called = (request for request in requests if request.method == "POST")
    assert listed.headers["mcp-protocol-version"] == "2026-07-28"
    assert listed.headers["mcp-method"] == "tools/list"
    assert "mcp-session-id" not in listed.headers
    assert called.message["params"]["arguments"]["region"] == 7  # repaired
    assert called.headers["mcp-method"] == "tools/call"
    assert called.headers["mcp-name"] == "regional"
    assert called.headers["mcp-param-region"] == "7"  # from the repaired body, as the server compares it
    assert called.headers["mcp-param-place"] == "=?base64?WsO8cmljaCA=?="


def test_a_modern_cancellation_closes_the_post_and_is_not_sent() -> None:
    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.message.get("method") == "test/case":
            await asyncio.sleep(30)

    messages: list[dict[str, Any]] = [
        {**CASE, "params": {"_meta": META}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {**CASE, "id": 2, "method": "ping", "params": {"_meta": META}},
    ]

    async def exercise() -> tuple[Through, list[Request]]:
        async with Hostile(respond) as server:
            got = await through(
                f"http://127.0.0.1:{server.port}/mcp",
                messages,
                wait_for=lambda got: len(server.requests) >= 2,
            )
            return got, server.requests

    got, requests = run(exercise())
    methods = [request.message.get("method") for request in requests]
    assert "ping" in methods
    assert "notifications/cancelled" not in methods
    assert all(json.loads(line).get("id") != 1 for line in got.lines)  # cancelled: no answer is due


def test_a_get_stream_that_keeps_breaking_is_given_up_after_the_sdks_tries() -> None:
    """Only failures count: a stream broken off mid-chunk twice in a row is not opened again."""
    gets: list[int] = []

    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET":
            gets.append(1)
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            writer.write(head + b"40\r\nretry: 10\n\n")  # a chunk of 64 bytes, cut short
            await writer.drain()
            writer.close()
        elif request.message.get("method") == "initialize":
            body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}).encode()
            writer.write(http(200, body, "application/json", "mcp-session-id: abc"))
        else:
            writer.write(http(202))

    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]

    async def exercise() -> None:
        async with Hostile(respond) as server:
            # Time for more tries, were there any (1 s apart by default).
            await through(f"http://127.0.0.1:{server.port}/mcp", messages, linger=3.0)

    run(exercise())
    assert len(gets) == 2


def test_an_upstream_made_in_python_with_a_header_it_cannot_send_does_not_start() -> None:
    from pydantic_lenient.proxy.remote import HttpUpstream
    from pydantic_lenient.proxy.upstream import StartError

    async def exercise() -> str:
        async with Hostile(always(http(202))) as server:
            upstream = HttpUpstream(f"http://127.0.0.1:{server.port}/mcp", [("X-Key", "é-s3cret")])
            with pytest.raises(StartError) as raised:
                await upstream.start()
            return str(raised.value)

    error = run(exercise())
    assert error.endswith("the header X-Key: its value must be printable ASCII (no line breaks or control characters)")
    assert "s3cret" not in error


def test_a_batch_is_posted_whole_and_its_answers_go_on_as_they_came(caplog: pytest.LogCaptureFixture) -> None:
    """JSON-RPC batches (before 2025-06-18): one POST, its answer (an array) handed on, no warning."""
    answers = [{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": {}}]

    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(http(200, json.dumps(answers).encode()))

    batch = [{**CASE, "id": 1}, {**CASE, "id": 2}]

    async def exercise() -> tuple[Through, list[Request]]:
        async with Hostile(respond) as server:
            proxy_url = f"http://127.0.0.1:{server.port}/mcp"
            got = await through(proxy_url, [batch], wait_for=lambda got: bool(got.lines))
            return got, server.requests

    with caplog.at_level(logging.WARNING, "pydantic_lenient.proxy"):
        got, requests = run(exercise())
    assert [json.loads(request.body) for request in requests] == [batch]
    assert [json.loads(line) for line in got.lines] == [answers]
    assert not caplog.records


def test_the_command_ends_a_hostile_session_in_one_line_and_saves_its_counts(tmp_path: Path) -> None:
    """Through the command: a session id of ``sé``, then a DELETE that fails. One line on stderr, no
    traceback, only JSON-RPC on stdout, and the counts saved."""

    async def respond(request: Request, writer: asyncio.StreamWriter) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}).encode()
        writer.write(http(200, body).replace(b"\r\n\r\n", b"\r\nmcp-session-id: s\xe9\r\n\r\n", 1))

    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}

    async def exercise() -> tuple[int, bytes, bytes]:
        async with Hostile(respond) as server:
            command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--log-dir", str(tmp_path)]
            process = await asyncio.create_subprocess_exec(
                *command,
                "--url",
                f"http://127.0.0.1:{server.port}/mcp/s/PATHTOKEN-9/mcp",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=ENVIRONMENT,
            )
            stdout, stderr = await process.communicate(json.dumps(initialize).encode() + b"\n")
            return await process.wait(), stdout, stderr

    code, stdout, stderr = run(exercise())
    assert code == 1
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "sent a session id that is not visible ASCII" in lines[0]
    assert "PATHTOKEN-9" not in stderr.decode() + stdout.decode()
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [0]
    assert (tmp_path / "repair-stats.json").exists()
