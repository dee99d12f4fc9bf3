"""The lenient types inside real MCP servers, end to end: the official SDK's MCPServer and FastMCP.

In-process clients for both SDKs, and one stdio test that spawns examples/mcp_server.py and talks
to it with the SDK's own client.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import ValidationError

from pydantic_lenient import LenientJson, LenientUInt, Normalizer
from pydantic_lenient.types.forms import pattern_without_null
from tests.sdks import require

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, Any]]]


def plain(count: int) -> dict[str, Any]:
    """A tool whose parameter is a plain int, to show that strictness still applies to it."""
    return {"count": count}


def labelled(limit: Optional[LenientUInt] = None, labels: Optional[LenientJson[list[str]]] = None) -> str:
    """A tool with lenient parameters the official SDK would pre-parse."""
    return repr((limit, labels))


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
        from pydantic_lenient.adapters.mcp import make_lenient

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
        from pydantic_lenient.adapters.fastmcp import LenientMiddleware

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
    number, text, null = limit["anyOf"]  # the portable style, the default
    assert (number["type"], text["type"], null["type"]) == ("number", "string", "null")
    assert pattern_without_null(text["pattern"]) == "^0*(?:0|[1-9][0-9]?|[1-4][0-9]{2}|500)$"
    assert (number["minimum"], number["maximum"]) == (0, 500)
    dry_run = listed["move_messages"]["properties"]["dry_run"]
    assert [branch["type"] for branch in dry_run["anyOf"]] == ["boolean", "string"]
    assert "string" in [branch["type"] for branch in listed["move_messages"]["properties"]["uids"]["anyOf"]]
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


# Values for each lenient parameter of the mail tools, beside the calls models really send.
EXAMPLE_VALUES: list[Any] = [
    *["100", 100, 100.0, None, "null", "abc", " 100", "1_000", "\uff11", "-1", "600", "4294967296", "9" * 5000],
    *[True, "true", "FALSE", "yes", 0, 1.5, 1e20, "1e3", "", [], {}, [17], ["17", 18], "[17, 18]", "[17, -1]"],
    *['{"a": 1}', "17, 18", "[" * 70 + "]" * 70, "[" + "17," * 300_000 + "17]", 2**70],
]
LENIENT_PARAMETERS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "search": ({"folder": "Dev"}, ["limit", "offset"]),
    "fetch_message": ({"uid": 7}, ["uid", "max_body_bytes"]),
    "move_messages": ({"uids": [17], "destination": "Archive"}, ["uids", "dry_run"]),
}


def _example_calls() -> list[tuple[str, dict[str, Any]]]:
    from mail_tools import MANGLED_CALLS

    calls = [(name, arguments) for name, arguments, _ in MANGLED_CALLS]
    for name, (required, parameters) in LENIENT_PARAMETERS.items():
        calls += [(name, {**required, parameter: value}) for parameter in parameters for value in EXAMPLE_VALUES]
    return calls


def _model_says(name: str, arguments: dict[str, Any], normalizer: Normalizer) -> tuple[bool, Any]:
    """What the tool's own input model makes of a call, after the example's normalizer."""
    from mail_tools import TOOLS

    from pydantic_lenient.schema.catalog import model_from_function

    function = next(tool for tool in TOOLS if tool.__name__ == name)
    normalized = normalizer.apply(name, arguments).arguments
    try:
        validated = model_from_function(function).model_validate(normalized)
    except ValidationError as error:
        return True, [detail["type"] for detail in error.errors()]
    return False, json.loads(json.dumps(function(**dict(validated))))


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict", "portable"])
@pytest.mark.parametrize("server", ["mcp_server.py", "fastmcp_server.py"])
def test_the_example_servers_over_stdio_agree_with_the_model(server: str, style: str) -> None:
    """Each example server, driven by the official client over stdio, in each style: every call comes
    back as the tool's input model says, the same value or the same errors."""
    mcp = require("mcp")
    require("fastmcp" if server.startswith("fastmcp") else "mcp.server.mcpserver")
    calls = _example_calls()

    async def session() -> Any:
        parameters = mcp.StdioServerParameters(
            command=sys.executable, args=[str(EXAMPLES / server), "--style", style], env=dict(os.environ)
        )
        async with mcp.Client(parameters) as client:
            listed = await client.list_tools()
            results = []
            for start in range(0, len(calls), 64):
                batch = calls[start : start + 64]
                results += await asyncio.gather(*(client.call_tool(name, arguments) for name, arguments in batch))
            return listed, results

    listed, results = asyncio.run(asyncio.wait_for(session(), timeout=120))
    assert [tool.name for tool in listed.tools] == ["search", "fetch_message", "move_messages"]
    limit = listed.tools[0].input_schema["properties"]["limit"]
    assert ("pattern" in json.dumps(limit)) == (style != "strict")
    disagreements = []
    normalizer = Normalizer.from_file(EXAMPLES / "mail_rules.json")
    for (name, arguments), result in zip(calls, results, strict=True):
        expected = _model_says(name, arguments, normalizer)
        text = result.content[0].text if result.content else ""
        got = (True, re.findall(r"\[type=([a-z_]+),", text)) if result.is_error else (False, json.loads(text))
        if got != expected:
            disagreements.append((name, repr(arguments)[:80], got, expected))
    assert not disagreements, disagreements[:10]


async def _run(agent: Any, prompt: str) -> str:
    result = await agent.run(prompt)
    return str(result.output)


def test_pydantic_ai_tool_definitions_come_out_widened() -> None:
    require("pydantic_ai")
    from pydantic_ai_tool import agent

    definition = agent._function_toolset.tools["search"].tool_def
    limit = definition.parameters_json_schema["properties"]["limit"]
    # The lenient type's part of the portable shape, under pydantic-ai's own generator (issue 33).
    assert {branch.get("type") for branch in limit["anyOf"]} == {"number", "string", "null"}
    # asyncio.run closes its loop; run_sync would leave one for a later test's garbage collection.
    assert asyncio.run(_run(agent, "go")) == '{"search":"a: limit=None dry_run=False"}'
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    strict = OpenAIJsonSchemaTransformer(definition.parameters_json_schema, strict=True)
    transformed = strict.walk()
    assert strict.is_strict_compatible
    assert transformed["required"] == ["folder", "limit", "dry_run"]  # OpenAI strict: every property
    assert "default" not in transformed["properties"]["limit"]


def test_the_official_sdk_validates_through_the_hooks_make_lenient_replaces() -> None:
    """Pins what `make_lenient` relies on in the official SDK: a tool's arguments go through its
    ``fn_metadata.pre_parse_json`` and then its ``arg_model``, ``fn_metadata`` can be replaced, and
    the SDK's own pre-parse turns a lenient field's ``"null"`` and JSON text into values."""
    mcpserver = require("mcp.server.mcpserver")
    from pydantic_lenient.adapters.mcp import LenientFuncMetadata, make_lenient

    server = mcpserver.MCPServer("pinned")
    server.tool()(labelled)
    (registered,) = server._tool_manager.list_tools()
    sdk_metadata = registered.fn_metadata
    assert sdk_metadata.pre_parse_json({"limit": "null", "labels": "[]"}) == {"limit": None, "labels": []}
    seen: list[dict[str, Any]] = []

    class Recording(type(sdk_metadata)):  # type: ignore[misc]
        def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
            seen.append(data)
            return data

    registered.fn_metadata = Recording(
        **{name: getattr(sdk_metadata, name) for name in type(sdk_metadata).model_fields}
    )
    assert registered.fn_metadata.validate_arguments({"limit": "7"}) == {"limit": 7, "labels": None}
    assert seen == [{"limit": "7"}]

    make_lenient(server)
    assert isinstance(registered.fn_metadata, LenientFuncMetadata)
    assert registered.fn_metadata.pre_parse_json({"limit": "null", "labels": "[]"}) == {"limit": "null", "labels": "[]"}
