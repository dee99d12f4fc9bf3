"""What the upstream sends a gateway's client besides answers, end to end on loopback: progress on
the request's own event stream (both eras, stdio and remote upstreams, the aggregated endpoint,
two clients with the same token at once), a 2026-07-28 elicitation's `InputRequiredResult` and its
retry, and the one clear error a handshake-era elicitation gets (docs/gateway.md, "Server-to-client
messages")."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

import httpx2
import mcp
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitResult, TextContent

from tests.gateway.running import Running, gateway, remote_server, three_servers

T = TypeVar("T")
HANG_GUARD = 90.0
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
BOTH_ACCEPTED = {"accept": "application/json, text/event-stream"}


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(bounded())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with remote_server() as url, gateway(three_servers(url), tmp_path_factory.mktemp("gateway")) as base:
        yield base


def _texts(result: Any) -> list[str]:
    return [item.text for item in result.content if isinstance(item, TextContent)]


def _events(body: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an event stream's ``data:`` lines."""
    return [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("path", "tool"), [("/servers/alpha/mcp", "count"), ("/mcp", "beta__count")])
def test_progress_reaches_the_client_that_asked_for_it(served: str, mode: str, path: str, tool: str) -> None:
    async def session() -> tuple[list[tuple[float, float | None, str | None]], list[str]]:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        async with mcp.Client(f"{served}{path}", mode=mode) as client:
            result = await client.call_tool(tool, {"steps": "3"}, progress_callback=on_progress)  # "3": repaired
            return seen, _texts(result)

    seen, texts = run(session())
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert texts[0].endswith("counted 3")


def test_progress_from_a_remote_upstream_reaches_the_client(served: str) -> None:
    async def session() -> tuple[list[float], list[str]]:
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        async with mcp.Client(f"{served}/servers/remote/mcp", mode="legacy") as client:
            result = await client.call_tool("resumable", {"steps": "4"}, progress_callback=on_progress)
            return seen, _texts(result)

    seen, texts = run(session())
    assert seen == [1.0, 4.0]
    assert texts == ["done in 4 steps"]  # the remote closed its stream mid-call: the relay resumed it


def _counting(steps: int, modern: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"progressToken": 1, **(MODERN_META if modern else {})}
    arguments = {"steps": steps}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "count", "arguments": arguments, "_meta": meta},
    }


@pytest.mark.parametrize("modern", [False, True])
def test_two_clients_with_the_same_token_each_get_only_their_own_progress(served: str, modern: bool) -> None:
    async def call(client: httpx2.AsyncClient, steps: int) -> tuple[str, list[dict[str, Any]]]:
        answer = await client.post("/servers/alpha/mcp", json=_counting(steps, modern), headers=BOTH_ACCEPTED)
        return answer.headers["content-type"], _events(answer.text)

    async def scenario() -> list[tuple[str, list[dict[str, Any]]]]:
        async with (
            httpx2.AsyncClient(base_url=served, timeout=60) as first,
            httpx2.AsyncClient(base_url=served, timeout=60) as second,
        ):
            return list(await asyncio.gather(call(first, 3), call(second, 6)))

    for (content_type, events), steps in zip(run(scenario()), (3, 6), strict=True):
        assert content_type.startswith("text/event-stream")
        *progress, answer = events
        assert [event["params"] for event in progress] == [
            {"progressToken": 1, "progress": step, "total": steps, "message": f"step {step}"}
            for step in range(1, steps + 1)
        ]
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == f"alpha: counted {steps}"


def test_a_client_that_accepts_only_json_gets_one_json_answer(served: str) -> None:
    answer = httpx2.post(
        f"{served}/servers/alpha/mcp", json=_counting(2, False), headers={"accept": "application/json"}, timeout=60
    )
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["result"]["content"][0]["text"] == "alpha: counted 2"


def test_a_client_that_leaves_mid_stream_leaves_the_gateway_serving(served: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with httpx2.AsyncClient(base_url=served, timeout=60) as client:
            request = _counting(100, False)  # about 5 s of progress
            async with client.stream("POST", "/servers/beta/mcp", json=request, headers=BOTH_ACCEPTED) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data: "):
                        break  # one progress event read: leave
        async with httpx2.AsyncClient(base_url=served, timeout=60) as client:
            answer: dict[str, Any] = (await client.post("/servers/beta/mcp", json=_counting(1, False))).json()
            return answer

    assert run(scenario())["result"]["content"][0]["text"] == "beta: counted 1"


@pytest.mark.parametrize("modern", [False, True])
def test_a_client_that_leaves_has_its_call_cancelled_upstream(served: str, modern: bool) -> None:
    meta = {"_meta": MODERN_META} if modern else {}

    def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments, **meta}
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

    async def cancellations(client: httpx2.AsyncClient) -> int:
        answer = (await client.post("/servers/beta/mcp", json=call("cancellations", {}))).json()
        return int(answer["result"]["content"][0]["text"])

    async def scenario() -> tuple[int, int]:
        async with httpx2.AsyncClient(base_url=served, timeout=30) as client:
            before = await cancellations(client)
            with pytest.raises(httpx2.ReadTimeout):
                await client.post("/servers/beta/mcp", json=call("slow", {"seconds": 30}), timeout=1.0)
            for _ in range(100):
                after = await cancellations(client)
                if after > before:
                    break
                await asyncio.sleep(0.1)
            return before, after

    before, after = run(scenario())
    assert after == before + 1


def _answering(colours: list[str]) -> Any:
    async def elicitation(context: Any, params: ElicitRequestParams) -> ElicitResult:
        colours.append(params.message)
        return ElicitResult(action="accept", content={"colour": "teal"})

    return elicitation


@pytest.mark.parametrize(("path", "tool"), [("/servers/alpha/mcp", "ask"), ("/mcp", "beta__ask")])
def test_a_2026_07_28_elicitation_is_answered_through_the_gateway(served: str, path: str, tool: str) -> None:
    """The upstream answers ``InputRequiredResult``; the client retries with its answer, and the
    retry is repaired as the first call was, so the upstream's sealed ``requestState`` still binds."""

    async def session() -> tuple[list[str], list[str], bool]:
        asked: list[str] = []
        async with mcp.Client(f"{served}{path}", mode="2026-07-28", elicitation_callback=_answering(asked)) as client:
            result = await client.call_tool(tool, {"times": "2"})
            return asked, _texts(result), bool(result.is_error)

    asked, texts, is_error = run(session())
    assert asked == ["Which colour?"]
    assert (is_error, texts[0].endswith("teal x2")) == (False, True)


def test_a_handshake_era_elicitation_gets_one_clear_error(served: str) -> None:
    """Before 2026-07-28 an elicitation is a server-to-client request, which a stdio server sends
    without naming the call it belongs to; the gateway declares no elicitation, and the upstream
    refuses the call at once."""

    async def session() -> str:
        asked: list[str] = []
        async with mcp.Client(
            f"{served}/servers/alpha/mcp", mode="legacy", elicitation_callback=_answering(asked)
        ) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("ask", {"times": "2"})
            assert asked == []
            return str(refused.value)

    assert "elicitation" in run(session())


def test_a_2026_07_28_listen_gets_its_own_servers_events_until_it_leaves(served: str) -> None:
    """Two clients listen to ``alpha`` and one to ``beta``; a tool of ``alpha`` says its tools
    changed: both of ``alpha``'s listeners hear it, under their own listen request's id, and
    ``beta``'s does not."""

    async def first_event(path: str, heard: list[str], listening: asyncio.Event) -> None:
        async with (
            mcp.Client(f"{served}{path}", mode="2026-07-28") as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            listening.set()
            async for event in subscription:
                heard.append(type(event).__name__)
                return

    async def scenario() -> tuple[list[str], list[str], list[str], str]:
        heard: tuple[list[str], list[str], list[str]] = ([], [], [])
        paths = ("/servers/alpha/mcp", "/servers/alpha/mcp", "/servers/beta/mcp")
        ready = [asyncio.Event() for _ in paths]
        listeners = [
            asyncio.ensure_future(first_event(path, into, event))
            for path, into, event in zip(paths, heard, ready, strict=True)
        ]
        await asyncio.gather(*(event.wait() for event in ready))
        async with mcp.Client(f"{served}/servers/alpha/mcp", mode="2026-07-28") as client:
            grown = _texts(await client.call_tool("grow", {}))[0]
        await asyncio.wait_for(asyncio.gather(*listeners[:2]), 30)
        await asyncio.sleep(0.5)
        assert not listeners[2].done()  # beta's listener heard nothing, and is still listening
        listeners[2].cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listeners[2]
        return *heard, grown

    first, second, third, grown = run(scenario())
    assert (first, second, third, grown) == (["ToolsListChanged"], ["ToolsListChanged"], [], "alpha: changed")


def test_a_listen_needs_an_event_stream(served: str) -> None:
    listen = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {"filter": {"toolsListChanged": True}, "_meta": MODERN_META},
    }
    answer = httpx2.post(f"{served}/servers/alpha/mcp", json=listen, headers={"accept": "application/json"}, timeout=30)
    assert answer.status_code == 406
