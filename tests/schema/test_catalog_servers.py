"""Catalogs and audits read from real MCP server objects: the official SDK's MCPServer and FastMCP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from pydantic_lenient import LenientJson, LenientUInt, StrictBoolish
from pydantic_lenient.schema.audit import audit
from pydantic_lenient.schema.catalog import tool_catalog
from tests.sdks import require


def search(folder: str, limit: Optional[LenientUInt] = None, offset: int = 0) -> str:
    """Search a folder."""
    return folder


def move(uids: LenientJson[list[int]], dry_run: StrictBoolish = True) -> str:
    """Move messages."""
    return "ok"


def official_server() -> Any:
    mcpserver = require("mcp.server.mcpserver")
    server = mcpserver.MCPServer("mail")
    server.tool()(search)
    server.tool()(move)
    return server


def fastmcp_server() -> Any:
    fastmcp = require("fastmcp")
    server = fastmcp.FastMCP("mail")
    server.tool(search)
    server.tool(move)
    return server


SERVERS = [pytest.param(official_server, id="official-sdk"), pytest.param(fastmcp_server, id="fastmcp")]


async def _listed(server: Any) -> dict[str, Any]:
    tools = await server.list_tools()
    return {tool.name: getattr(tool, "input_schema", None) or tool.parameters for tool in tools}


@pytest.mark.parametrize("make_server", SERVERS)
def test_catalog_reads_a_servers_registered_tools(make_server: Any) -> None:
    server = make_server()
    catalog = tool_catalog(server)
    assert [tool["name"] for tool in catalog["tools"]] == ["search", "move"]
    search_schema = catalog["tools"][0]["inputSchema"]
    assert catalog["tools"][0]["description"] == "Search a folder."
    assert search_schema["type"] == "object"
    # A plain server lists pydantic's own schema, and its catalog is that listing, not restyled.
    assert {tool["name"]: tool["inputSchema"] for tool in catalog["tools"]} == asyncio.run(_listed(server))
    limit_types = [branch.get("type") for branch in search_schema["properties"]["limit"]["anyOf"]]
    assert set(limit_types) == {"number", "string", "null"}  # the type's part of the portable shape
    assert search_schema["properties"]["offset"]["type"] == "integer"


@pytest.mark.parametrize("make_server", SERVERS)
def test_audit_reads_a_servers_tools(make_server: Any) -> None:
    found = [(finding.level, finding.path, finding.suggestion) for finding in audit(make_server())]
    assert found == [
        ("note", "search.limit", "Lenient[Optional[LenientUInt]]"),  # a hand-written Optional refuses "null"
        ("error", "search.offset", "LenientInt"),
        ("error", "move.uids[]", "LenientInt"),
    ]


@pytest.mark.parametrize("make_server", SERVERS)
def test_catalog_works_inside_a_running_event_loop(make_server: Any) -> None:
    server = make_server()

    async def from_async_code() -> dict[str, Any]:
        return tool_catalog(server)

    assert len(asyncio.run(from_async_code())["tools"]) == 2


@pytest.mark.parametrize(
    ("sdk", "source"),
    [
        ("mcp.server.mcpserver", "from mcp.server.mcpserver import MCPServer\nmcp = MCPServer('x')\n"),
        ("fastmcp", "from fastmcp import FastMCP\napp_server = FastMCP('x')\n"),
    ],
)
def test_cli_finds_the_server_object_in_a_module(tmp_path: Path, sdk: str, source: str) -> None:
    require(sdk)
    decorator = "@mcp.tool()" if "MCPServer" in source else "@app_server.tool"
    module = tmp_path / "server_module.py"
    module.write_text(source + f"{decorator}\ndef ping(count: int = 1) -> str:\n    'Ping.'\n    return 'pong'\n")
    completed = subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "catalog", str(module), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    assert json.loads(completed.stdout)["tools"][0]["name"] == "ping"
    assert "error: ping.count: int is not lenient; use LenientInt" in completed.stderr
