"""RepairingClient against real in-process servers: the official SDK's and FastMCP's."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from pydantic_lenient.adapters.clients import RepairingClient
from pydantic_lenient.repair.engine import RepairResult
from tests.sdks import require


def search(limit: int, flag: bool = False, note: str | None = None, tags: list[str] | None = None) -> str:
    """Echo the arguments the server received."""
    return json.dumps({"limit": limit, "flag": flag, "note": note, "tags": tags})


def _text(result: Any) -> dict[str, Any]:
    content = result.content if hasattr(result, "content") else result
    decoded: dict[str, Any] = json.loads(content[0].text)
    return decoded


async def _with_official(call: Any) -> Any:
    mcp = require("mcp")
    server = require("mcp.server.mcpserver").MCPServer("echo")
    server.tool()(search)
    async with mcp.Client(server) as client:
        return await call(client.session)


async def _with_fastmcp(call: Any) -> Any:
    fastmcp = require("fastmcp")
    server = fastmcp.FastMCP("echo")
    server.tool(search)
    async with fastmcp.Client(server) as client:
        return await call(client)


CLIENTS = [pytest.param(_with_official, id="official-ClientSession"), pytest.param(_with_fastmcp, id="fastmcp-Client")]


@pytest.mark.parametrize("connect", CLIENTS)
def test_call_tool_repairs_against_the_advertised_schema(connect: Any, caplog: pytest.LogCaptureFixture) -> None:
    reported: list[tuple[str, RepairResult]] = []

    async def call(client: Any) -> Any:
        repairing = RepairingClient(client, on_repair=lambda tool, result: reported.append((tool, result)))
        return await repairing.call_tool("search", {"limit": "10", "flag": "TRUE", "note": "42", "tags": '["a", "b"]'})

    with caplog.at_level(logging.INFO, logger="pydantic_lenient.clients"):
        result = asyncio.run(connect(call))
    assert _text(result) == {"limit": 10, "flag": True, "note": "42", "tags": ["a", "b"]}
    ((tool, repair),) = reported
    assert tool == "search"
    assert sorted(item["path"] for item in repair.repairs) == ["/flag", "/limit", "/tags"]
    assert repair.valid
    assert any(getattr(record, "tool", None) == "search" for record in caplog.records)


@pytest.mark.parametrize("connect", CLIENTS)
def test_valid_calls_and_unknown_tools_pass_through(connect: Any) -> None:
    async def call(client: Any) -> Any:
        repairing = RepairingClient(client)
        repaired = await repairing.repair("search", {"limit": 3})
        unknown = await repairing.repair("no_such_tool", {"x": "1"})
        listed = await repairing.list_tools()  # any other attribute reaches the wrapped client
        return repaired, unknown, listed

    repaired, unknown, listed = asyncio.run(connect(call))
    assert repaired == RepairResult({"limit": 3}, [], True)
    assert unknown is None
    assert listed


@pytest.mark.parametrize("connect", CLIENTS)
def test_the_null_text_policy_before_the_call(connect: Any) -> None:
    """``"null"`` becomes None where the schema takes null and not that string (``tags``), and stays
    text where a string is taken (``note``): the one ``"null"`` policy, applied by `Repairer`."""
    reported: list[RepairResult] = []

    async def call(client: Any) -> Any:
        repairing = RepairingClient(client, on_repair=lambda tool, result: reported.append(result))
        return await repairing.call_tool("search", {"limit": "3", "note": "null", "tags": "null"})

    received = _text(asyncio.run(connect(call)))
    # (The official SDK's server then turns a "null" note into None on its own: its pre_parse_json.)
    assert (received["limit"], received["tags"]) == (3, None)
    ((repair,),) = [reported]
    assert repair.arguments == {"limit": 3, "note": "null", "tags": None}
    assert sorted((item["path"], item["kind"]) for item in repair.repairs) == [
        ("/limit", "string_to_number"),
        ("/tags", "string_to_null"),
    ]
