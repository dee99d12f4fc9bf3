"""The lenient types inside real MCP servers, end to end: the official SDK's MCPServer and FastMCP.

In-process clients for both SDKs, and one stdio test that spawns examples/mcp_server.py and talks
to it with the SDK's own client.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient import Normalizer
from tests.sdks import require

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, Any]]]


def plain(count: int) -> dict[str, Any]:
    """A tool whose parameter is a plain int, to show that strictness still applies to it."""
    return {"count": count}


def _payload(result: Any) -> tuple[bool, Any]:
    """(is_error, what the tool returned, or the error text)."""
    text = result.content[0].text if result.content else ""
    if result.is_error:
        return True, text
    return False, json.loads(text)


async def _official(
    use: Callable[[Call, Any], Awaitable[Any]], *, adapter: bool = True, normalizer: Normalizer | None = None
) -> Any:
    mcp = require("mcp")
    from mcp_server import build_server

    server = build_server()
    if not adapter:
        from mail_tools import TOOLS

        server = require("mcp.server.mcpserver").MCPServer("bare")
        for tool in TOOLS:
            server.tool()(tool)
    elif normalizer is not None:
        from pydantic_lenient.mcp_adapter import make_lenient

        server = require("mcp.server.mcpserver").MCPServer("normalized")
        from mail_tools import TOOLS

        for tool in TOOLS:
            server.tool()(tool)
        make_lenient(server, normalizer=normalizer)
    async with mcp.Client(server) as client:

        async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
            return _payload(await client.call_tool(name, arguments))

        async def schemas() -> dict[str, Any]:
            return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

        return await use(call, schemas)


async def _fastmcp(
    use: Callable[[Call, Any], Awaitable[Any]], *, strict: bool = True, normalizer: Normalizer | None = None
) -> Any:
    fastmcp = require("fastmcp")
    from fastmcp_server import build_server

    server = build_server(strict_input_validation=strict)
    if normalizer is not None:
        from pydantic_lenient.fastmcp_adapter import LenientMiddleware

        server = fastmcp.FastMCP("normalized", middleware=[LenientMiddleware(normalizer)])
        from mail_tools import TOOLS

        for tool in TOOLS:
            server.tool(tool)
    server.tool(plain)
    async with fastmcp.Client(server) as client:

        async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
            return _payload(await client.call_tool(name, arguments, raise_on_error=False))

        async def schemas() -> dict[str, Any]:
            return {tool.name: tool.input_schema for tool in await client.list_tools()}

        return await use(call, schemas)


SERVERS = [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")]


@pytest.mark.parametrize("serve", SERVERS)
def test_tools_list_advertises_the_widened_schemas(serve: Any) -> None:
    async def use(call: Call, schemas: Any) -> Any:
        return await schemas()

    listed = asyncio.run(serve(use))
    limit = listed["search"]["properties"]["limit"]
    assert limit["type"] == ["integer", "string", "null"]
    assert (limit["pattern"], limit["minimum"], limit["maximum"]) == ("^[0-9]+$", 0, 500)
    assert listed["move_messages"]["properties"]["dry_run"]["type"] == ["boolean", "string"]
    assert "string" in listed["move_messages"]["properties"]["uids"]["type"]
    assert listed["search"]["type"] == "object"


@pytest.mark.parametrize("serve", SERVERS)
@pytest.mark.parametrize(("limit", "received"), [("100", 100), (100, 100), (None, None)])
def test_tools_call_takes_the_string_the_number_and_null(serve: Any, limit: Any, received: Any) -> None:
    async def use(call: Call, schemas: Any) -> Any:
        return await call("search", {"folder": "Dev", "limit": limit})

    assert asyncio.run(serve(use)) == (False, {"folder": "Dev", "to": None, "limit": received, "offset": 0})


@pytest.mark.parametrize("serve", SERVERS)
def test_a_bad_value_is_a_tool_error_the_model_can_read(serve: Any) -> None:
    async def use(call: Call, schemas: Any) -> Any:
        return await call("search", {"folder": "Dev", "limit": "abc"})

    is_error, text = asyncio.run(serve(use))
    assert is_error
    assert "Input should be an integer or a string of ASCII digits" in text


@pytest.mark.parametrize("serve", SERVERS)
@pytest.mark.parametrize("text", ['["x"]', "null", "0123"])
def test_str_or_none_parameters_keep_their_text(serve: Any, text: str) -> None:
    async def use(call: Call, schemas: Any) -> Any:
        return await call("search", {"folder": text, "to": text})

    assert asyncio.run(serve(use)) == (False, {"folder": text, "to": text, "limit": None, "offset": 0})


@pytest.mark.parametrize(("text", "sdk_alone"), [("null", (False, None)), ('["x"]', (True, "validation error"))])
def test_without_the_adapter_the_sdk_rewrites_str_or_none(text: str, sdk_alone: tuple[bool, Any]) -> None:
    """Pins python-sdk #3055, the case the adapter exists for: when the SDK changes, this says so."""

    async def use(call: Call, schemas: Any) -> Any:
        return await call("search", {"folder": "Dev", "to": text})

    is_error, payload = asyncio.run(_official(use, adapter=False))
    assert is_error == sdk_alone[0]
    if is_error:
        assert sdk_alone[1] in payload
    else:
        assert payload["to"] is sdk_alone[1]


def test_fastmcp_strict_mode_keeps_plain_ints_strict_and_lenient_ones_lenient() -> None:
    async def use(call: Call, schemas: Any) -> Any:
        return await call("search", {"folder": "Dev", "limit": "100"}), await call("plain", {"count": "5"})

    (lenient_error, lenient), (plain_error, plain_text) = asyncio.run(_fastmcp(use, strict=True))
    assert not lenient_error
    assert lenient["limit"] == 100
    assert plain_error
    assert "count" in plain_text
    (_, _), (lax_error, lax) = asyncio.run(_fastmcp(use, strict=False))
    assert not lax_error
    assert lax == {"count": 5}  # plain pydantic lax mode, when strictness is off


@pytest.mark.parametrize("serve", SERVERS)
def test_the_adapter_normalizes_before_validation_and_feeds_stats(serve: Any) -> None:
    normalizer = Normalizer.from_file(EXAMPLES / "mail_rules.json")

    async def use(call: Call, schemas: Any) -> Any:
        renamed = await call("fetch_message", {"uid": "7", "max_bytes": "1024"})
        conflict = await call("fetch_message", {"uid": 7, "max_bytes": 1, "max_body_bytes": 2})
        return renamed, conflict

    renamed, conflict = asyncio.run(serve(use, normalizer=normalizer))
    assert renamed == (False, {"uid": 7, "max_body_bytes": 1024})
    assert conflict[0]
    assert "refusing to drop either" in conflict[1]
    stats = normalizer.stats()
    assert stats["by_rule"]["fetch-max_bytes"]["hits"] == 1
    assert stats["by_tool"]["fetch_message"]["processed"] == 2


def test_the_example_server_over_stdio() -> None:
    mcp = require("mcp")

    async def session() -> Any:
        parameters = mcp.StdioServerParameters(command=sys.executable, args=[str(EXAMPLES / "mcp_server.py")])
        async with mcp.Client(parameters) as client:
            listed = await client.list_tools()
            taken = await client.call_tool("search", {"folder": "Dev", "limit": "100", "to": "null"})
            refused = await client.call_tool("search", {"folder": "Dev", "limit": " 100"})
            return listed, _payload(taken), _payload(refused)

    listed, taken, refused = asyncio.run(asyncio.wait_for(session(), timeout=60))
    assert [tool.name for tool in listed.tools] == ["search", "fetch_message", "move_messages"]
    assert taken == (False, {"folder": "Dev", "to": "null", "limit": 100, "offset": 0})
    assert refused[0]
    assert "Input should be an integer or a string of ASCII digits" in refused[1]


async def _run(agent: Any, prompt: str) -> str:
    result = await agent.run(prompt)
    return str(result.output)


def test_pydantic_ai_tool_definitions_come_out_widened() -> None:
    require("pydantic_ai")
    from pydantic_ai_tool import agent

    definition = agent._function_toolset.tools["search"].tool_def
    limit = definition.parameters_json_schema["properties"]["limit"]
    assert {branch.get("type") for branch in limit["anyOf"]} == {"integer", "string", "null"}
    # asyncio.run closes its loop; run_sync would leave one for a later test's garbage collection.
    assert asyncio.run(_run(agent, "go")) == '{"search":"a: limit=None dry_run=False"}'
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    strict = OpenAIJsonSchemaTransformer(definition.parameters_json_schema, strict=True)
    transformed = strict.walk()
    assert strict.is_strict_compatible
    assert transformed["required"] == ["folder", "limit", "dry_run"]  # OpenAI strict: every property
    assert "default" not in transformed["properties"]["limit"]
