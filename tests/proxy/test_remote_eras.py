"""`proxy --url` in both protocol eras, with the official SDK on both ends: its `Client` pinned to
2026-07-28, negotiating (``auto``: ``server/discover``, then the era the server offers) and on the
2025-11-25 handshake (``legacy``), over stdio to the proxy, which reaches the SDK's own Streamable HTTP
app (tests/remote_server.py, dual-era) at ``--url``. Each lists and calls with repairs working; a
2 MB result passes; ``subscriptions/listen`` passes; the ``Mcp-Param-*`` header of an ``x-mcp-header``
tool is written from the repaired body, so the server's check (-32020 on a header that disagrees) passes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sdks import require

require("mcp")

import httpx2  # noqa: E402
from mcp.client import Client  # noqa: E402

from .test_proxy import EVERYTHING, HANG_GUARD, ROOT, TOKEN, Remote, _node, _serving, proxied  # noqa: E402

AUTHORIZATION = (("Authorization", f"Bearer {TOKEN}"),)
MODES = ["2026-07-28", "auto", "legacy"]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def dual_era_app() -> Iterator[Remote]:
    with _serving([sys.executable, str(ROOT / "tests" / "remote_server.py"), TOKEN]) as port:
        yield Remote(f"http://127.0.0.1:{port}/mcp", AUTHORIZATION)


def _run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD))


@pytest.mark.parametrize("mode", MODES)
def test_each_era_lists_and_calls_through_url_with_repairs(dual_era_app: Remote, mode: str) -> None:
    async def exercise() -> dict[str, Any]:
        async with Client(proxied(dual_era_app), mode=mode) as client:
            listing = await client.list_tools()
            summed = await client.call_tool("get-sum", {"a": "2", "b": "3.5"})  # strings, repaired to numbers
            regional = await client.call_tool("regional", {"region": "7"})  # its Mcp-Param-Region from the repair
            big = await client.call_tool("big", {"kilobytes": 2048})  # 2 MB: over httpx2's 1 MiB SSE default
            return {
                "version": client.protocol_version,
                "tools": {tool.name for tool in listing.tools},
                "sum": (summed.is_error, summed.content[0].text),  # type: ignore[union-attr]
                "regional": (regional.is_error, regional.content[0].text),  # type: ignore[union-attr]
                "big": (big.is_error, len(big.content[0].text)),  # type: ignore[union-attr]
            }

    got = _run(exercise())
    assert got["version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert {"get-sum", "echo", "big", "regional"} <= got["tools"]  # an x-mcp-header tool is never dropped
    assert got["sum"] == (False, "The sum of 2.0 and 3.5 is 5.5.")
    assert got["regional"] == (False, "region 7")
    assert got["big"] == (False, 2048 * 1024)


def test_subscriptions_listen_passes_through_url(dual_era_app: Remote) -> None:
    async def exercise() -> bool:
        async with Client(proxied(dual_era_app), mode="2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                honored = subscription.honored is not None
            # The listen's POST was closed (its cancellation, in this era): the session goes on.
            echoed = await client.call_tool("echo", {"message": "after"})
            return honored and echoed.content[0].text == "Echo: after"  # type: ignore[union-attr]

    assert _run(exercise())


def test_the_servers_header_check_is_real(dual_era_app: Remote) -> None:
    """The control for the calls above: without the ``Mcp-Param-Region`` header the proxy writes, or
    with one that disagrees with the body, the server refuses the call with -32020."""

    async def post(param: str | None) -> dict[str, Any]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "regional",
        }
        if param is not None:
            headers["mcp-param-region"] = param
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "regional", "arguments": {"region": 7}, "_meta": META},
        }
        async with httpx2.AsyncClient(headers=dict(AUTHORIZATION)) as client:
            response = await client.post(dual_era_app.url, content=json.dumps(call), headers=headers)
            text = response.text
            data = text.split("data: ", 1)[1] if text.startswith(("event", "id", "data", ":")) else text
            answer: dict[str, Any] = json.loads(data.strip().splitlines()[0])
            return answer

    assert _run(post(None))["error"]["code"] == -32020
    assert _run(post("5"))["error"]["code"] == -32020
    assert "error" not in _run(post("7"))


@pytest.fixture(scope="module")
def handshake_only_app() -> Iterator[Remote]:
    """server-everything's streamableHttp mode: a TypeScript server with no 2026-07-28 era."""
    loopback = ROOT / "tests" / "upstream" / "loopback.mjs"
    with _serving([_node(), "--import", str(loopback), str(EVERYTHING / "index.js"), "streamableHttp"]) as port:
        yield Remote(f"http://127.0.0.1:{port}/mcp")


def test_a_negotiating_client_falls_back_through_url_as_it_does_direct(handshake_only_app: Remote) -> None:
    """The server refuses ``server/discover``; the proxy passes its answer on as sent, so the client
    falls back to the handshake exactly as it does talking to the server itself."""

    async def exercise(server: Any) -> tuple[str, str]:
        async with Client(server, mode="auto") as client:
            echoed = await client.call_tool("echo", {"message": 5})  # a number for a string: repaired
            return client.protocol_version, echoed.content[0].text  # type: ignore[union-attr]

    async def direct() -> str:
        async with Client(handshake_only_app.url, mode="auto") as client:
            return client.protocol_version

    version, text = _run(exercise(proxied(handshake_only_app)))
    assert version == _run(direct())
    assert version != "2026-07-28"
    assert text == "Echo: 5"
