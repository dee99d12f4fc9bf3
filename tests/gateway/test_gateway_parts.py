"""The gateway's parts, in process: the config's checks, the front door (`Guard`), the id a lane
writes back, the routing headers of a 2026-07-28 request, the event stream of a request's
progress, and the client a handshake-era session id names."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette")

import httpx2
from starlette.types import Receive, Scope, Send

from pydantic_lenient.gateway import event_stream
from pydantic_lenient.gateway.auth import SharedToken
from pydantic_lenient.gateway.config import ConfigError, config_from_document, is_loopback
from pydantic_lenient.gateway.event_stream import StreamedAnswer, accepts_event_stream
from pydantic_lenient.gateway.lanes import _with_id
from pydantic_lenient.gateway.security import Guard
from pydantic_lenient.gateway.sessions import client_info_of, session_id
from pydantic_lenient.observe.clients import RELAYED_CLIENT_META_KEY, client_from_info, without_relayed_client
from pydantic_lenient.proxy.messages import dumped, parsed

TOKEN = "a-token-of-at-least-16-characters"

# ---- config


def test_the_hosts_mcp_servers_format_is_read_with_the_gateways_options() -> None:
    config = config_from_document(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server"], "env": {"KEY": "v"}, "rules": "r.json"},
                "issues": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "x"}},
            },
            "gateway": {"port": 9000, "maxBodyBytes": 65536, "tokenEnv": "GATEWAY_TOKEN"},
        }
    )
    assert config.mcp_servers["files"].args == ("-y", "server")
    assert config.mcp_servers["issues"].remote
    assert (config.gateway.host, config.gateway.port, config.gateway.max_body_bytes) == ("127.0.0.1", 9000, 65536)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}, "not both"),
        ({"mcpServers": {"a": {"url": "http://h/mcp", "env": {"K": "v"}}}}, "go with a command"),
        ({"mcpServers": {"a": {"type": "stdio", "url": "http://h/mcp"}}}, "does not match"),
        ({"mcpServers": {"a/b": {"command": "x"}}}, "server name"),
        ({"mcpServers": {"a": {"command": "x", "comand": "y"}}}, "comand"),
        ({"mcpServers": {}}, "mcpServers"),
        ({"mcpServers": {"a": {"url": "ftp://h/x"}}}, "http"),
        ({"mcpServers": {"a": {"command": "x", "style": "loose"}}}, "style must be one of portable, type-array"),
    ],
)
def test_a_config_that_cannot_be_used_is_one_line(document: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config_from_document(document)
    assert expected in str(raised.value)
    assert "\n" not in str(raised.value)


def test_no_config_error_quotes_a_value() -> None:
    secret = "sk-very-secret-value"
    for document in (
        {"mcpServers": {"a": {"command": "x", "env": {"KEY": [secret]}}}},
        {"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"Authorization": {"v": secret}}}}},
        {"mcpServers": {"a": {"command": "x", "headers": {"Authorization": secret}}}},
    ):
        with pytest.raises(ConfigError) as raised:
            config_from_document(document)
        assert secret not in str(raised.value)


def test_a_token_must_be_long_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_from_document({"mcpServers": {"a": {"command": "x"}}, "gateway": {"tokenEnv": "GW_TOKEN"}})
    monkeypatch.setenv("GW_TOKEN", "short")
    with pytest.raises(ConfigError, match="at least 16"):
        config.token()
    monkeypatch.setenv("GW_TOKEN", f"  {TOKEN}\n")
    assert config.token() == TOKEN


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("localhost", True), ("0.0.0.0", False), ("::", False)],
)
def test_which_binds_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# ---- the front door


class _Held:
    """An app that answers 200, each request held until ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _guarded(app: Any, **options: Any) -> httpx2.AsyncClient:
    settings: dict[str, Any] = {
        "authenticator": None,
        "loopback_bind": True,
        "allowed_hosts": (),
        "allowed_origins": (),
        "max_body_bytes": 1024,
        "max_concurrency": 8,
        **options,
    }
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(Guard(app, **settings)), base_url="http://127.0.0.1:8765")


def test_the_token_is_required_and_compared_exactly() -> None:
    async def statuses() -> list[int]:
        async with _guarded(_Held(), authenticator=SharedToken(TOKEN)) as client:
            return [
                (await client.post("/mcp", headers=headers)).status_code
                for headers in (
                    {},
                    {"authorization": f"Bearer {TOKEN[:-1]}"},
                    {"authorization": f"Bearer {TOKEN}x"},
                    {"authorization": f"bearer {TOKEN}"},
                    {"authorization": f"Bearer {TOKEN}"},
                )
            ] + [(await client.get("/healthz")).status_code]

    assert asyncio.run(statuses()) == [401, 401, 401, 401, 200, 200]


def test_host_and_origin_are_checked_against_dns_rebinding() -> None:
    async def statuses() -> list[int]:
        async with _guarded(_Held()) as client:
            return [
                (await client.post("/mcp", headers=headers)).status_code
                for headers in (
                    {"host": "evil.example:8765"},
                    {"host": "localhost:1"},
                    {"origin": "https://evil.example"},
                    {"origin": "http://localhost:3000"},
                    {"origin": "null"},
                )
            ]

    assert asyncio.run(statuses()) == [421, 200, 403, 200, 403]


def test_a_wide_bind_checks_hosts_only_when_named() -> None:
    async def statuses() -> list[int]:
        async with _guarded(_Held(), loopback_bind=False, authenticator=SharedToken(TOKEN)) as client:
            open_host = (await client.get("/healthz", headers={"host": "gw.example"})).status_code
        async with _guarded(
            _Held(), loopback_bind=False, authenticator=SharedToken(TOKEN), allowed_hosts=("gw.example",)
        ) as client:
            named = (await client.get("/healthz", headers={"host": "gw.example:443"})).status_code
            other = (await client.get("/healthz", headers={"host": "other.example"})).status_code
        return [open_host, named, other]

    assert asyncio.run(statuses()) == [200, 200, 421]


def test_a_declared_body_over_the_cap_is_refused_before_it_is_read() -> None:
    async def statuses() -> list[int]:
        async with _guarded(_Held()) as client:
            return [
                (await client.post("/mcp", content=b"x" * 1025)).status_code,
                (await client.post("/mcp", content=b"x" * 1024)).status_code,
            ]

    assert asyncio.run(statuses()) == [413, 200]


def test_past_the_concurrency_cap_requests_get_503() -> None:
    async def statuses() -> list[int]:
        held = _Held()
        held.release.clear()
        async with _guarded(held, max_concurrency=3) as client:
            waiting = [asyncio.ensure_future(client.get("/healthz")) for _ in range(3)]
            await asyncio.sleep(0.05)
            refused = await client.get("/healthz")
            held.release.set()
            answered = await asyncio.gather(*waiting)
            after = await client.get("/healthz")
        return [refused.status_code, *(response.status_code for response in answered), after.status_code]

    assert asyncio.run(statuses()) == [503, 200, 200, 200, 200]


# ---- the ids a lane writes back

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(exclude_categories=["Cs"])),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
_CLIENT_IDS = st.integers() | st.text(st.characters(exclude_categories=["Cs"]))


@given(client_id=_CLIENT_IDS, result=_JSON, echoed=st.booleans(), first=st.booleans())
def test_every_answer_goes_back_under_the_clients_id_and_nothing_else_changes(
    client_id: Any, result: Any, echoed: bool, first: bool
) -> None:
    lane_id = "gw-0123456789ab-42"
    if echoed:  # a server that echoes the lane's id in its result, even as a JSON text: left alone
        result = {"echo": lane_id, "text": json.dumps({"id": lane_id}), "value": result}
    answer = {"jsonrpc": "2.0", "id": lane_id, "result": result} if first else {"result": result, "id": lane_id}
    line = dumped(answer).rstrip(b"\n")
    assert parsed(_with_id(line, lane_id, client_id)) == {**answer, "id": client_id}


def test_past_the_per_client_rate_requests_get_429() -> None:
    async def statuses() -> list[int]:
        async with _guarded(_Held(), per_client=2.0) as client:
            return [(await client.post("/mcp")).status_code for _ in range(3)] + [
                (await client.get("/healthz")).status_code
            ]

    assert asyncio.run(statuses()) == [200, 200, 429, 200]


def test_past_the_per_tool_rate_calls_get_429(tmp_path: Any) -> None:
    from pydantic_lenient.gateway import app

    config = config_from_document(
        {
            "mcpServers": {"gone": {"command": "true"}},
            "gateway": {"callTimeout": 0.5, "rateLimits": {"perTool": 1}},
        }
    )

    async def answers() -> list[tuple[int, str]]:
        application = app(config, freeze_gc=False)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
        other = {**call, "params": {"name": "u", "arguments": {}}}
        transport = httpx2.ASGITransport(application)
        try:
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                responses = [await client.post("/servers/gone/mcp", json=body) for body in (call, call, other)]
        finally:
            await application.app.state.gateway.close()
        return [(response.status_code, response.json()["error"]["message"]) for response in responses]

    first, second, third = asyncio.run(answers())
    assert first[0] == 200
    assert "`gone` is not available" in first[1]  # it exits at once: a clear error, not a hang
    assert second[0] == 429
    assert "rate limit" in second[1]
    assert third[0] == 200  # another tool has its own bucket


# ---- a request's progress (`StreamedAnswer`)


class _Wire:
    """What an ASGI response sent, and a client that leaves when told to (``leave``)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.left = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(dict(message))

    @property
    def content_type(self) -> bytes:
        headers: dict[bytes, bytes] = dict(self.sent[0]["headers"])
        return headers[b"content-type"]

    @property
    def body(self) -> bytes:
        return b"".join(message.get("body", b"") for message in self.sent[1:])


def _progress(step: int) -> bytes:
    return dumped(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": step}}
    )


def _answered(answer: Any) -> _Wire:
    wire = _Wire()
    asyncio.run(StreamedAnswer(answer)({"type": "http"}, wire.receive, wire.send))
    return wire


def test_an_answer_before_any_progress_is_one_json_body() -> None:
    async def answer(notified: Any) -> bytes:
        return b'{"jsonrpc":"2.0","id":1,"result":{}}\n'

    wire = _answered(answer)
    assert wire.content_type == b"application/json"
    assert wire.body == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_progress_then_the_answer_make_one_event_stream() -> None:
    async def answer(notified: Any) -> bytes:
        for step in (1, 2):
            notified(_progress(step))
            await asyncio.sleep(0)
        return b'{"jsonrpc":"2.0","id":1,"result":{}}\n'

    wire = _answered(answer)
    assert wire.content_type == b"text/event-stream"
    events = [json.loads(line[6:]) for line in wire.body.decode().splitlines() if line.startswith("data: ")]
    assert [event.get("params", {}).get("progress") for event in events] == [1, 2, None]
    assert events[-1] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert wire.sent[-1]["more_body"] is False


def test_a_reader_that_falls_behind_misses_progress_never_its_answer() -> None:
    async def answer(notified: Any) -> bytes:
        for step in range(event_stream.QUEUED * 4):  # all before the response can write one
            notified(_progress(step))
        return b'{"jsonrpc":"2.0","id":1,"result":{"done":true}}\n'

    events = [line for line in _answered(answer).body.decode().splitlines() if line.startswith("data: ")]
    assert len(events) == event_stream.QUEUED + 1
    assert json.loads(events[-1][6:])["result"] == {"done": True}


def test_a_silent_upstream_gets_the_stream_pinged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_stream, "PING_INTERVAL", 0.01)

    async def answer(notified: Any) -> bytes:
        notified(_progress(1))
        await asyncio.sleep(0.2)
        return b'{"jsonrpc":"2.0","id":1,"result":{}}\n'

    assert b": ping\r\n\r\n" in _answered(answer).body


def test_a_client_that_leaves_cancels_its_request() -> None:
    cancelled = asyncio.Event()

    async def scenario() -> _Wire:
        wire = _Wire()

        async def answer(notified: Any) -> bytes:
            notified(_progress(1))
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return b""

        async def leave() -> None:
            while not wire.sent:
                await asyncio.sleep(0.01)
            wire.left.set()

        await asyncio.wait_for(
            asyncio.gather(StreamedAnswer(answer)({"type": "http"}, wire.receive, wire.send), leave()), 10
        )
        return wire

    wire = asyncio.run(scenario())
    assert cancelled.is_set()
    assert all(message.get("more_body", True) for message in wire.sent[1:])  # no answer was written


@pytest.mark.parametrize(
    ("accept", "streams"),
    [
        ("application/json, text/event-stream", True),
        ("text/event-stream;q=0.9", True),
        ("Text/Event-Stream", True),
        ("application/json", False),
        ("text/event-streams", False),
        ("", False),
    ],
)
def test_which_accept_headers_take_an_event_stream(accept: str, streams: bool) -> None:
    assert accepts_event_stream(accept) is streams


# ---- a handshake-era client's name in its session id (`gateway.sessions`)


@given(st.text(max_size=300), st.text(max_size=100))
def test_every_client_name_round_trips_through_a_visible_ascii_session_id(name: str, version: str) -> None:
    session = session_id({"name": name, "version": version})
    client = client_from_info({"name": name, "version": version})
    if client is None:
        assert session is None
        return
    assert session is not None
    assert all(0x21 <= ord(character) <= 0x7E for character in session)
    assert client_info_of(session) == {"name": client.name, "version": client.version}


@given(st.one_of(st.text(max_size=2000), st.text(max_size=2000).map(lambda text: "lenient1." + text)))
def test_no_header_text_breaks_the_reading_of_a_session_id(header: str) -> None:
    found = client_info_of(header)
    assert found is None or set(found) == {"name", "version"}


def test_the_relay_reads_the_gateways_note_and_sends_the_call_on_without_it() -> None:
    note = {RELAYED_CLIENT_META_KEY: {"name": "cursor-vscode", "version": "1"}, "progressToken": 3}
    params, client = without_relayed_client({"name": "page", "arguments": {}, "_meta": note})
    assert client == client_from_info({"name": "cursor-vscode", "version": "1"})
    assert params == {"name": "page", "arguments": {}, "_meta": {"progressToken": 3}}
    untouched = {"name": "page", "arguments": {}}
    assert without_relayed_client(untouched) == (untouched, None)


# ---- a per-client session is bound to the credential that opened it


def test_a_client_session_answers_only_to_the_credential_that_opened_it() -> None:
    from starlette.requests import Request

    from pydantic_lenient.gateway.app import Gateway, _credential
    from pydantic_lenient.gateway.client_lanes import ClientLane
    from pydantic_lenient.gateway.sessions import new_key

    config = config_from_document(
        {"mcpServers": {"alpha": {"command": "python", "sessions": "per-client"}}, "gateway": {"tokenEnv": "X"}}
    )
    gateway = Gateway(config)

    def request(session: str, authorization: str) -> Request:
        headers = [(b"mcp-session-id", session.encode()), (b"authorization", authorization.encode())]
        return Request({"type": "http", "method": "POST", "path": "/", "headers": headers})

    async def scenario() -> list[bool]:
        key = new_key()
        lane = ClientLane("alpha", config.mcp_servers["alpha"], gateway.options[("alpha", "legacy")], {})
        lane.credential = _credential(request("", "Bearer first-user-token"))
        gateway.sessions.lanes[key] = lane
        session = session_id({"name": "c", "version": "1"}, key)
        assert session is not None
        return [
            gateway._client_lane(request(session, "Bearer first-user-token")) is lane,
            gateway._client_lane(request(session, "Bearer other-user-token")) is None,
            gateway._client_lane(request(session_id({"name": "c"}, new_key()) or "", "Bearer first-user-token"))
            is None,
        ]

    assert asyncio.run(scenario()) == [True, True, True]
