"""Whole servers in one line: ``make_lenient(server, lenient_parameters=True)`` for the official SDK
and ``LenientMiddleware(lenient_parameters=True)`` for FastMCP make every tool's plain parameters
lenient, tools registered after the adapter included."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from pydantic_lenient.testing import host_validator
from tests.sdks import require

UUID_LIKE = "123e4567-e89b-12d3-a456-426614174000"
MANGLED = {"folder": "Dev", "limit": "100", "dry_run": "false", "tags": '["a"]', "to": UUID_LIKE, "page": "null"}
RECEIVED = {"folder": "Dev", "limit": 100, "dry_run": False, "tags": ["a"], "to": UUID_LIKE, "page": None}


def search(
    folder: str, limit: int, dry_run: bool, tags: list[str], to: Optional[str] = None, page: Optional[int] = None
) -> str:
    """Registered before the adapter."""
    return json.dumps({"folder": folder, "limit": limit, "dry_run": dry_run, "tags": tags, "to": to, "page": page})


def later(
    folder: str, limit: int, dry_run: bool, tags: list[str], to: Optional[str] = None, page: Optional[int] = None
) -> str:
    """Registered after the adapter."""
    return search(folder, limit, dry_run, tags, to, page)


async def _official(lenient: bool) -> dict[str, Any]:
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("t")
    server.tool()(search)
    make_lenient(server, lenient_parameters=lenient)
    server.tool()(later)
    async with mcp.Client(server) as client:
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        results = {}
        for name in ("search", "later"):
            for arguments in (MANGLED, {**MANGLED, "to": "null"}, {**MANGLED, "to": '["x"]'}):
                result = await client.call_tool(name, arguments)
                key = f"{name}:{arguments['to']}"
                results[key] = None if result.is_error else json.loads(result.content[0].text)
        return {"schemas": schemas, "results": results}


async def _fastmcp(lenient: bool) -> dict[str, Any]:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("t", middleware=[LenientMiddleware(lenient_parameters=lenient)])
    server.tool(search)
    async with fastmcp.Client(server) as client:
        server.tool(later)  # while the server is running
        results = {}
        for name in ("later", "search"):  # a call before any tools/list
            for arguments in (MANGLED, {**MANGLED, "to": "null"}, {**MANGLED, "to": '["x"]'}):
                result = await client.call_tool(name, arguments, raise_on_error=False)
                key = f"{name}:{arguments['to']}"
                results[key] = None if result.is_error else json.loads(result.content[0].text)
        schemas = {tool.name: tool.input_schema for tool in await client.list_tools()}
        return {"schemas": schemas, "results": results}


SERVERS = [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")]


@pytest.mark.parametrize("serve", SERVERS)
def test_every_tool_takes_what_models_send(serve: Any) -> None:
    served = asyncio.run(serve(True))
    for name in ("search", "later"):
        assert served["results"][f"{name}:{UUID_LIKE}"] == RECEIVED
        # A str parameter keeps "null" and JSON-looking text as the strings they are.
        assert served["results"][f"{name}:null"] == {**RECEIVED, "to": "null"}
        assert served["results"][f'{name}:["x"]'] == {**RECEIVED, "to": '["x"]'}
        schema = served["schemas"][name]
        assert host_validator(schema).is_valid(MANGLED), schema
        assert [branch["type"] for branch in schema["properties"]["limit"]["anyOf"]] == ["number", "string"]


@pytest.mark.parametrize("serve", SERVERS)
def test_without_the_option_plain_parameters_stay_strict(serve: Any) -> None:
    served = asyncio.run(serve(False))
    for name in ("search", "later"):
        assert not host_validator(served["schemas"][name]).is_valid(MANGLED)
        assert served["schemas"][name]["properties"]["limit"]["type"] == "integer"
