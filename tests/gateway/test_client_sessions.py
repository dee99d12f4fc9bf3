"""``"sessions": "per-client"``, end to end on loopback: each handshake-era client session gets an
upstream of its own, so what the server sends that names no call reaches that client (the official
SDK's client, its callbacks answering): elicitation, sampling-style requests, logging. Sessions end
on DELETE, when idle, and when their upstream ends; past ``maxSessions`` a new one is refused
(docs/gateway.md, "Sessions of their own")."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

pytest.importorskip("uvicorn")

import httpx2
import mcp
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitResult, LoggingMessageNotificationParams, TextContent

from tests.gateway.running import Running, gateway, three_servers
from tests.gateway.test_gateway import _call

T = TypeVar("T")
HANG_GUARD = 90.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(bounded())


def _config(**gateway_options: Any) -> dict[str, Any]:
    config = three_servers("http://127.0.0.1:9/mcp")
    del config["mcpServers"]["remote"]
    config["mcpServers"]["alpha"]["sessions"] = "per-client"
    config["gateway"].update(gateway_options)
    return config


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with gateway(_config(maxSessions=8), tmp_path_factory.mktemp("gateway")) as base:
        yield base


def _texts(result: Any) -> list[str]:
    return [item.text for item in result.content if isinstance(item, TextContent)]


def _answering(asked: list[str], colour: str) -> Any:
    async def elicitation(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"colour": colour})

    return elicitation


def test_each_client_session_answers_its_own_upstreams_elicitation(served: str) -> None:
    """Two clients at once, each asked by its own upstream process, each answering its own."""

    async def client(colour: str) -> tuple[list[str], list[str], str]:
        asked: list[str] = []
        url = f"{served}/servers/alpha/mcp"
        async with mcp.Client(url, mode="legacy", elicitation_callback=_answering(asked, colour)) as session:
            result = await session.call_tool("ask", {"times": "3"})  # "3": repaired, in the session's relay
            pid = _texts(await session.call_tool("pid", {}))[0]
            return asked, _texts(result), pid

    async def both() -> list[tuple[list[str], list[str], str]]:
        return list(await asyncio.gather(client("teal"), client("ochre")))

    (teal_asked, teal, teal_pid), (ochre_asked, ochre, ochre_pid) = run(both())
    assert (teal_asked, teal) == (["Which colour?"], ["alpha: teal x3"])
    assert (ochre_asked, ochre) == (["Which colour?"], ["alpha: ochre x3"])
    assert teal_pid != ochre_pid  # an upstream each


def test_a_servers_log_reaches_the_session_that_caused_it(served: str) -> None:
    async def session() -> tuple[list[Any], list[str]]:
        logged: list[Any] = []

        async def logging(params: LoggingMessageNotificationParams) -> None:
            logged.append(params.data)

        async with mcp.Client(f"{served}/servers/alpha/mcp", mode="legacy", logging_callback=logging) as client:
            texts = _texts(await client.call_tool("note", {"text": "hello from alpha"}))
            return logged, texts

    logged, texts = run(session())
    assert logged == ["hello from alpha"]
    assert texts == ["alpha: noted"]


def test_a_shared_server_beside_it_stays_shared_and_refuses_elicitation_clearly(served: str) -> None:
    async def pids() -> tuple[str, str, str]:
        found = []
        for _ in range(2):
            async with mcp.Client(f"{served}/servers/beta/mcp", mode="legacy") as client:
                found.append(_texts(await client.call_tool("pid", {}))[0])
        asked: list[str] = []
        async with mcp.Client(
            f"{served}/servers/beta/mcp", mode="legacy", elicitation_callback=_answering(asked, "teal")
        ) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("ask", {"times": 1})
        return found[0], found[1], str(refused.value)

    first, second, refused = run(pids())
    assert first == second
    assert "elicitation" in refused


def test_2026_07_28_requests_to_a_per_client_server_stay_stateless(served: str) -> None:
    async def session() -> list[str]:
        asked: list[str] = []
        async with mcp.Client(
            f"{served}/servers/alpha/mcp", mode="2026-07-28", elicitation_callback=_answering(asked, "jade")
        ) as client:
            return _texts(await client.call_tool("ask", {"times": "1"}))

    assert run(session()) == ["alpha: jade x1"]


def _session(base: str) -> tuple[str, dict[str, Any]]:
    answer = httpx2.post(f"{base}/servers/alpha/mcp", json=INITIALIZE, timeout=30)
    return answer.headers["mcp-session-id"], answer.json()


def test_a_session_ends_on_delete_and_its_upstream_with_it(served: str) -> None:
    session, initialized = _session(served)
    url = f"{served}/servers/alpha/mcp"
    assert initialized["result"]["serverInfo"]["name"] == "alpha"
    headers = {"mcp-session-id": session}
    pid = int(
        httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30).json()["result"]["content"][0]["text"]
    )
    assert httpx2.delete(url, headers=headers, timeout=30).status_code == 200
    assert _gone(pid)
    ended = httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30)
    assert ended.status_code == 404
    assert "initialize again" in ended.json()["error"]["message"]
    assert httpx2.post(url, json=_call("pid", {}), timeout=30).status_code == 400  # no session id at all
    forged = {"mcp-session-id": session[:-4] + "AAAA"}
    assert httpx2.post(url, json=_call("pid", {}), headers=forged, timeout=30).status_code == 404


def test_a_session_whose_upstream_dies_ends(served: str) -> None:
    session, _ = _session(served)
    url = f"{served}/servers/alpha/mcp"
    headers = {"mcp-session-id": session}
    pid = int(
        httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30).json()["result"]["content"][0]["text"]
    )
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30)
        if answer.status_code == 404:
            break
        time.sleep(0.2)
    assert answer.status_code == 404


def test_a_sessions_get_stream_is_open_until_the_session_ends(served: str) -> None:
    session, _ = _session(served)
    url = f"{served}/servers/alpha/mcp"
    headers = {"mcp-session-id": session, "accept": "text/event-stream"}

    async def scenario() -> tuple[int, str, bytes]:
        async with httpx2.AsyncClient(timeout=30) as client, client.stream("GET", url, headers=headers) as stream:
            status, kind = stream.status_code, stream.headers["content-type"]
            ending = asyncio.ensure_future(client.delete(url, headers={"mcp-session-id": session}))
            body = b"".join([chunk async for chunk in stream.aiter_bytes()])  # ends when the session does
            await ending
            return status, kind, body

    status, kind, body = run(scenario())
    assert (status, kind.split(";")[0], body) == (200, "text/event-stream", b"")


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_past_max_sessions_a_new_one_is_refused(tmp_path: Any) -> None:
    with gateway(_config(maxSessions=2), tmp_path) as base:
        _session(base)
        _session(base)
        refused = httpx2.post(f"{base}/servers/alpha/mcp", json=INITIALIZE, timeout=30)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "30"
    assert "as many sessions" in refused.json()["error"]["message"]


def test_an_idle_session_ends_and_makes_room(tmp_path: Any) -> None:
    with gateway(_config(maxSessions=1, sessionIdleSeconds=1.0), tmp_path) as base:
        first, _ = _session(base)
        headers = {"mcp-session-id": first}
        url = f"{base}/servers/alpha/mcp"
        pid = int(
            httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30).json()["result"]["content"][0]["text"]
        )
        assert _gone(pid)  # idle for a second: its upstream stopped
        assert httpx2.post(url, json=_call("pid", {}), headers=headers, timeout=30).status_code == 404
        assert httpx2.post(url, json=INITIALIZE, timeout=30).status_code == 200  # room again
