"""Both adapters in both MCP eras, over Streamable HTTP on loopback: `make_lenient` on the official SDK's
``MCPServer`` and `LenientMiddleware` on FastMCP, beside the same servers plain.

An ``x-mcp-header`` tool stays in the shape the spec allows (a modern client never drops it), and the
SDK's header/body integrity check keeps working: a mismatched or missing ``Mcp-Param-*`` header is
refused with -32020 exactly as the plain server refuses it, before and after a listing.

Run on the lowest supported SDKs (mcp 2.1.0, fastmcp 4.0.11) and the newest (mcp 2.3.0, fastmcp 4.2.3):
both speak the era and check the headers.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest

from tests.eras import ENVELOPE, LEGACY, MODERN, modern_sdk
from tests.sdks import require

require("mcp")
require("fastmcp")
require("uvicorn")

import httpx2  # noqa: E402
import uvicorn  # noqa: E402
from mcp import Client  # noqa: E402

T = TypeVar("T")
HANG_GUARD = 120.0
WAYS = ["mcp-plain", "make_lenient", "fastmcp-plain", "LenientMiddleware"]
HEADER_MISMATCH = -32020


@pytest.fixture(autouse=True)
def _modern() -> None:
    modern_sdk()


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(guarded())


def _app(way: str) -> Any:
    from tests.era_server import build  # the SDK's era names: imported once the SDK is known to have them

    if way.startswith("fastmcp") or way == "LenientMiddleware":
        fast = build("fastmcp")
        if way == "LenientMiddleware":
            from pydantic_lenient.adapters.fastmcp import LenientMiddleware

            fast.add_middleware(LenientMiddleware(lenient_parameters=True))
        return fast.http_app()
    server = build("mcp")
    if way == "make_lenient":
        from pydantic_lenient.adapters.mcp import make_lenient

        make_lenient(server, lenient_parameters=True)
    return server.streamable_http_app()


@asynccontextmanager
async def serving(way: str) -> AsyncIterator[str]:
    """The way's server on 127.0.0.1 (a free port), in this event loop; its URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_app(way), log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        while not server.started:
            assert not task.done(), "the server did not start"
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await task
        listener.close()


async def _post(http: httpx2.AsyncClient, url: str, method: str, params: dict[str, Any], **headers: str) -> Any:
    """One 2026-07-28 request as a conforming client sends it, with ``headers`` added; (status, body)."""
    sent = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        **({"mcp-name": params["name"]} if method == "tools/call" else {}),
        **headers,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": dict(ENVELOPE)}}
    response = await http.post(url, json=body, headers=sent)
    return response.status_code, response.json()


def _forecast(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "forecast", "arguments": arguments}


@pytest.mark.parametrize("listed_first", [False, True], ids=["unlisted", "listed"])
@pytest.mark.parametrize("way", WAYS)
def test_a_header_that_disagrees_with_the_body_is_refused_as_the_plain_server_refuses_it(
    way: str, listed_first: bool
) -> None:
    async def exchange() -> list[tuple[int, Any]]:
        async with serving(way) as url, httpx2.AsyncClient(timeout=30) as http:
            if listed_first:
                status, listing = await _post(http, url, "tools/list", {})
                assert status == 200, listing
            return [
                await _post(http, url, "tools/call", _forecast({"region": 5}), **{"mcp-param-region": "7"}),
                await _post(http, url, "tools/call", _forecast({"region": 5})),  # the header left out
                await _post(http, url, "tools/call", _forecast({"days": 2}), **{"mcp-param-region": "5"}),
            ]

    for status, body in run(exchange()):
        assert status == 400, body
        assert body["error"]["code"] == HEADER_MISMATCH, body


@pytest.mark.parametrize("way", WAYS)
def test_a_header_that_agrees_with_the_body_is_served_and_repaired_by_the_lenient_ways(way: str) -> None:
    lenient = way in ("make_lenient", "LenientMiddleware")

    async def exchange() -> list[tuple[int, Any]]:
        async with serving(way) as url, httpx2.AsyncClient(timeout=30) as http:
            return [
                await _post(
                    http, url, "tools/call", _forecast({"region": 5, "days": "3"}), **{"mcp-param-region": "5"}
                ),
                # The model sent the mirrored argument as text: the header mirrors the body as sent,
                # and the lenient validator converts it.
                await _post(http, url, "tools/call", _forecast({"region": "5"}), **{"mcp-param-region": "5"}),
                await _post(http, url, "tools/call", _forecast({"region": "5"}), **{"mcp-param-region": "6"}),
            ]

    (status, repaired), (text_status, text_region), (mismatch_status, mismatch) = run(exchange())
    assert status == 200
    assert text_status == 200
    if lenient:
        assert repaired["result"]["content"][0]["text"] == "3 days in region 5"
        assert text_region["result"]["content"][0]["text"] == "1 days in region 5"
    else:  # the plain servers refuse "3" for a strict integer (a tool error), as they always did
        assert repaired["result"]["isError"] is True
    assert mismatch_status == 400
    assert mismatch["error"]["code"] == HEADER_MISMATCH


@pytest.mark.parametrize("mode", [MODERN, "auto", "legacy"])
@pytest.mark.parametrize("way", ["make_lenient", "LenientMiddleware"])
def test_every_client_era_lists_the_header_tool_and_calls_with_repairs(way: str, mode: str) -> None:
    async def session() -> tuple[str, dict[str, Any], Any]:
        async with serving(way) as url, Client(url, mode=mode) as client:
            listed = await client.list_tools()
            called = await client.call_tool("forecast", {"region": 5, "days": "3"})
            return client.protocol_version, {tool.name: tool.input_schema for tool in listed.tools}, called

    version, tools, called = run(session())
    assert version == (LEGACY if mode == "legacy" else MODERN)
    assert "forecast" in tools  # a modern client drops a tool whose x-mcp-header is out of shape
    region, days = tools["forecast"]["properties"]["region"], tools["forecast"]["properties"]["days"]
    assert region["type"] == "integer"
    assert region["x-mcp-header"] == "Region"
    assert [branch["type"] for branch in days["anyOf"]] == ["number", "string"]  # the rest is widened as ever
    assert not called.is_error
    assert called.content[0].text == "3 days in region 5"
