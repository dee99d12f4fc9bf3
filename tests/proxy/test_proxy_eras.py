"""The stdio proxy in both MCP eras, with real SDKs on both sides: dual-era servers (the official SDK's
``MCPServer`` and FastMCP, tests/era_server.py) and clients pinned to 2026-07-28, negotiating, and
on the 2025-11-25 handshake; plus raw requests for what a host with a cached listing sends first.

Run on the lowest supported SDKs (mcp 2.1.0, fastmcp 4.0.11) and the newest (mcp 2.3.0, fastmcp 4.2.3):
both speak the era.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.conftest import SERVER_EVERYTHING, require_external
from tests.eras import (
    ENVELOPE,
    LEGACY,
    MODERN,
    ROOT,
    RawPeer,
    environment,
    modern,
    modern_sdk,
    proxy_command,
    server_command,
    text_of,
)
from tests.sdks import require

require("mcp")
require("fastmcp")

import mcp.types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

T = TypeVar("T")
HANG_GUARD = 120.0
FLAVOURS = ["mcp", "fastmcp"]


@pytest.fixture(autouse=True)
def _modern() -> None:
    modern_sdk()


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(guarded())


async def _raw(command: list[str], exchange: Any, ready: Path | None = None) -> Any:
    peer = await RawPeer.start(command, ready)
    try:
        return await exchange(peer)
    finally:
        await peer.close()


# ---- a host with a cached listing: its first request is a call


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_modern_call_before_any_listing_is_repaired_and_the_connection_stays_modern(
    flavour: str, tmp_path: Path
) -> None:
    """The proxy lists the tools itself before the call, in the client's era: the listing carries the
    call's ``_meta`` envelope, so the dual-era server opens a 2026-07-28 connection, the call is
    repaired, and the client's next modern requests are served (not -32600, "the handshake era")."""

    async def exchange(peer: RawPeer) -> tuple[Any, ...]:
        call = await peer.request(1, "tools/call", modern({"name": "add", "arguments": {"a": "2", "b": 3}}))
        discovered = await peer.request(2, "server/discover", modern())
        listed = await peer.request(3, "tools/list", modern())
        again = await peer.request(
            4, "tools/call", modern({"name": "forecast", "arguments": {"region": 5, "days": "3"}})
        )
        return call, discovered, listed, again

    # The server's start-up is not the proxy's to wait for (it waits 5 s for its own listing): the
    # first request goes once the server is built, as a host's would to a running session.
    call, discovered, listed, again = run(_raw(proxy_command(flavour), exchange, tmp_path / "ready"))
    assert text_of(call) == (False, "5")
    assert MODERN in discovered["result"]["supportedVersions"]
    assert {tool["name"] for tool in listed["result"]["tools"]} >= {"add", "forecast"}
    assert text_of(again) == (False, "3 days in region 5")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_handshake_call_before_any_listing_is_repaired(flavour: str, tmp_path: Path) -> None:
    async def exchange(peer: RawPeer) -> dict[str, Any]:
        initialize = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
        initialized = await peer.request(0, "initialize", initialize)
        assert initialized["result"]["protocolVersion"] == LEGACY
        await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return await peer.request(1, "tools/call", {"name": "add", "arguments": {"a": "2", "b": "3"}})

    assert text_of(run(_raw(proxy_command(flavour), exchange, tmp_path / "ready"))) == (False, "5")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_widened_listing_keeps_ttl_cache_scope_and_result_type(flavour: str) -> None:
    """SEP-2549's caching members reach the client as the server set them; only the schemas change."""

    async def listing(peer: RawPeer) -> dict[str, Any]:
        answer = await peer.request(1, "tools/list", modern())
        return dict(answer["result"])

    direct = run(_raw(server_command(flavour), listing))
    proxied = run(_raw(proxy_command(flavour), listing))
    assert {"ttlMs", "cacheScope", "resultType"} <= direct.keys()
    assert {key: value for key, value in proxied.items() if key != "tools"} == {
        key: value for key, value in direct.items() if key != "tools"
    }
    assert [tool["name"] for tool in proxied["tools"]] == [tool["name"] for tool in direct["tools"]]


# ---- the SDK's own clients, in each era


def _parameters(flavour: str, through_proxy: bool) -> StdioServerParameters:
    command = proxy_command(flavour) if through_proxy else server_command(flavour)
    return StdioServerParameters(command=command[0], args=command[1:], env=environment())


async def _accept(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def _session(flavour: str, mode: str, through_proxy: bool) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with Client(_parameters(flavour, through_proxy), mode=mode, elicitation_callback=_accept) as client:
        seen["version"] = client.protocol_version
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool.input_schema for tool in listed.tools}
        seen["add"] = await client.call_tool("add", {"a": "2", "b": 3})
        seen["forecast"] = await client.call_tool("forecast", {"region": 5, "days": "3"})
        if flavour == "mcp":  # a resolver's question: requestState rounds at 2026-07-28, elicitation before
            seen["confirm"] = await client.call_tool("confirm", {"n": "4"})
        if client.protocol_version == MODERN:
            seen["discover"] = (await client.session.discover()).supported_versions
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    seen["listen"] = subscription.honored.tools_list_changed
            except MCPError as refused:  # FastMCP (4.0.11 to 4.2.3) does not serve subscriptions/listen: -32601
                seen["listen"] = refused.error.code
    return seen


def _text(result: Any) -> tuple[bool, str]:
    return bool(result.is_error), result.content[0].text


@pytest.mark.parametrize("mode", [MODERN, "auto", "legacy"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_client_era_lists_and_calls_through_the_proxy_with_repairs(flavour: str, mode: str) -> None:
    direct = run(_session(flavour, mode, through_proxy=False))
    proxied = run(_session(flavour, mode, through_proxy=True))
    assert proxied["version"] == direct["version"] == (LEGACY if mode == "legacy" else MODERN)
    # No tool is dropped by the modern client: the x-mcp-header property keeps its one type.
    assert proxied["tools"].keys() == direct["tools"].keys() >= {"add", "forecast"}
    region = proxied["tools"]["forecast"]["properties"]["region"]
    assert region == direct["tools"]["forecast"]["properties"]["region"]
    assert region["type"] == "integer"
    assert region["x-mcp-header"] == "Region"
    # The proxy widened the rest, and repairs what it admits.
    assert proxied["tools"]["add"]["properties"]["a"] != direct["tools"]["add"]["properties"]["a"]
    assert _text(direct["add"])[0]
    assert _text(proxied["add"]) == (False, "5")
    assert _text(proxied["forecast"]) == (False, "3 days in region 5")
    if flavour == "mcp":
        assert _text(proxied["confirm"]) == (False, "8")
    if mode != "legacy":
        assert proxied["discover"] == direct["discover"]
        assert MODERN in proxied["discover"]
    if mode != "legacy":  # served (the SDK's server), or refused with the server's own error (FastMCP's)
        assert proxied["listen"] == direct["listen"] == (True if flavour == "mcp" else -32601)


def test_the_proxys_own_listing_carries_the_clients_envelope_upstream(tmp_path: Path) -> None:
    """What reaches the upstream: the proxy's own ``tools/list`` with the held call's envelope, first."""
    received = tmp_path / "received.jsonl"
    recorder = tmp_path / "recording_server.py"
    recorder.write_text(
        "import json, sys\n"
        f"log = open({str(received)!r}, 'a')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    message = json.loads(line)\n"
        "    if 'id' not in message: continue\n"
        "    result = {'tools': [{'name': 'add', 'inputSchema': {'type': 'object', 'properties': "
        "{'a': {'type': 'integer'}}}}]} if message['method'] == 'tools/list' else "
        "{'content': [{'type': 'text', 'text': json.dumps(message['params']['arguments'])}]}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': result}), flush=True)\n"
    )
    command = [*proxy_command("mcp")[:4], "--", proxy_command("mcp")[0], str(recorder)]

    async def exchange(peer: RawPeer) -> dict[str, Any]:
        return await peer.request(7, "tools/call", modern({"name": "add", "arguments": {"a": "2"}}))

    assert text_of(run(_raw(command, exchange))) == (False, '{"a": 2}')
    first, second = (json.loads(line) for line in received.read_text().splitlines())
    assert first["method"] == "tools/list"
    assert first["params"]["_meta"] == ENVELOPE
    assert second["method"] == "tools/call"
    assert second["params"]["arguments"] == {"a": 2}


# ---- the TypeScript SDK's client (its current release, 1.32.2, speaks up to 2025-11-25)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_typescript_sdk_client_lists_and_calls_through_the_proxy_with_repairs(flavour: str) -> None:
    require_external(SERVER_EVERYTHING)  # tests/upstream's node modules, the TypeScript SDK among them
    node = shutil.which("node")
    assert node is not None
    calls = [["add", {"a": "2", "b": 3}], ["forecast", {"region": 5, "days": "3"}]]

    def seen(command: list[str]) -> dict[str, Any]:
        client = [node, str(ROOT / "tests" / "upstream" / "era_client.mjs"), json.dumps(calls), "--", *command]
        finished = subprocess.run(client, capture_output=True, env=environment(), timeout=HANG_GUARD, check=True)
        return dict(json.loads(finished.stdout))

    direct, proxied = seen(server_command(flavour)), seen(proxy_command(flavour))
    assert direct["results"][0][0] is True  # the plain server refuses "2" for a strict integer
    assert proxied["results"] == [[False, "5"], [False, "3 days in region 5"]]
    assert proxied["tools"].keys() == direct["tools"].keys()
    assert proxied["tools"]["forecast"]["properties"]["region"] == direct["tools"]["forecast"]["properties"]["region"]
