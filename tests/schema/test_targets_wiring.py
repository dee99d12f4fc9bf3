"""Targets where tools are listed: tool_catalog, the catalog command, and both MCP adapters."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient import TARGETS, LenientUInt, Target, apply_style, input_schema, to_target, tool_catalog
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.targets import DRAFT_07
from tests.sdks import require

ROOT = Path(__file__).resolve().parents[2]


def pair(point: tuple[LenientUInt, str], limit: LenientUInt = 10) -> dict[str, Any]:
    """A tool with a tuple parameter, which only the draft-07 target writes with draft-07's items."""
    return {"point": list(point), "limit": limit}


@pytest.mark.parametrize("target", TARGETS)
def test_tool_catalog_writes_each_target(target: Target) -> None:
    catalog = tool_catalog([pair], target=target)
    (entry,) = catalog["tools"]
    assert entry["inputSchema"] == input_schema(model_from_function(pair), target=target)
    assert (entry["inputSchema"].get("$schema") == DRAFT_07) == (target == "mcp-draft-07")


def _catalog(target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "catalog", "examples/mail_tools.py", "--target", target],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_catalog_command_takes_a_target() -> None:
    completed = _catalog("openai")
    assert completed.returncode == 0, completed.stderr
    for tool in json.loads(completed.stdout)["tools"]:
        schema = tool["inputSchema"]
        assert schema["additionalProperties"] is False
        assert schema["required"] == list(schema["properties"])
    lost = completed.stderr.splitlines()
    assert "lost: search/properties/limit: required: the model must send it" in completed.stderr
    assert all(line.startswith("lost: ") for line in lost)


def test_catalog_command_reports_no_losses_for_mcp_hosts() -> None:
    completed = _catalog("mcp-draft-07")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""


def test_catalog_command_refuses_an_unknown_target_in_one_line() -> None:
    completed = _catalog("claude")
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert "claude" in completed.stderr


@pytest.mark.parametrize("target", ["mcp", "mcp-draft-07"])
def test_official_sdk_adapter_advertises_the_target_and_still_takes_strings(target: Target) -> None:
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("pairs")
    server.tool()(pair)
    make_lenient(server, target=target)

    async def use() -> tuple[dict[str, Any], Any]:
        async with mcp.Client(server) as client:
            listed = (await client.list_tools()).tools[0].input_schema
            result = await client.call_tool("pair", {"point": ["7", "x"], "limit": "3"})
            return listed, json.loads(result.content[0].text)

    listed, returned = asyncio.run(use())
    assert listed == input_schema(model_from_function(pair), target=target)
    assert returned == {"point": [7, "x"], "limit": 3}


@pytest.mark.parametrize("target", ["mcp", "mcp-draft-07"])
def test_fastmcp_middleware_advertises_the_target_and_still_takes_strings(target: Target) -> None:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    bare = fastmcp.FastMCP("bare")
    bare.tool(pair)
    server = fastmcp.FastMCP("pairs", middleware=[LenientMiddleware(target=target)])
    server.tool(pair)

    async def use() -> tuple[dict[str, Any], dict[str, Any], Any]:
        async with fastmcp.Client(bare) as client:
            original = (await client.list_tools())[0].input_schema
        async with fastmcp.Client(server) as client:
            listed = (await client.list_tools())[0].input_schema
            result = await client.call_tool("pair", {"point": ["7", "x"], "limit": "3"})
            return original, listed, result.structured_content

    original, listed, returned = asyncio.run(use())
    assert listed == to_target(apply_style(original, "portable"), target).schema
    if target == "mcp-draft-07":
        assert listed["$schema"] == DRAFT_07
        assert "prefixItems" not in json.dumps(listed)
    assert returned == {"point": [7, "x"], "limit": 3}
