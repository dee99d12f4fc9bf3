"""One `lenient_tool`-decorated function, registered with each framework that reads signatures and
called through that framework's own call path with the arguments models really send.

Each test also checks the schema the framework advertises: a host validating the call against it
must accept the same mangled arguments (and, for the undecorated function, refuse them).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Optional

import pytest

from pydantic_lenient.testing import host_validator
from tests.sdks import require

UUID_LIKE = "123e4567-e89b-12d3-a456-426614174000"
MANGLED = {"folder": "Dev", "limit": "100", "dry_run": "false", "tags": '["a"]', "ref": UUID_LIKE, "page": "null"}
RECEIVED = {"folder": "Dev", "limit": 100, "dry_run": False, "tags": ["a"], "ref": UUID_LIKE, "page": None}


def search(folder: str, limit: int, dry_run: bool, tags: list[str], ref: str, page: Optional[int] = None) -> str:
    """Search a mail folder."""
    return json.dumps({"folder": folder, "limit": limit, "dry_run": dry_run, "tags": tags, "ref": ref, "page": page})


def _lenient_search() -> Callable[..., str]:
    from pydantic_lenient.types.tools import lenient_tool

    return lenient_tool(search)


def _host_accepts(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    return bool(host_validator(schema).is_valid(arguments))


def _official_sdk(function: Callable[..., Any]) -> tuple[Any, dict[str, Any]]:
    mcp = require("mcp")
    server = require("mcp.server.mcpserver").MCPServer("t")
    server.tool()(function)

    async def run() -> tuple[Any, dict[str, Any]]:
        async with mcp.Client(server) as client:
            schema = (await client.list_tools()).tools[0].input_schema
            result = await client.call_tool("search", MANGLED)
            return (None if result.is_error else json.loads(result.content[0].text)), schema

    return asyncio.run(run())


def _fastmcp(function: Callable[..., Any]) -> tuple[Any, dict[str, Any]]:
    fastmcp = require("fastmcp")
    server = fastmcp.FastMCP("t", strict_input_validation=True)
    server.tool(function)

    async def run() -> tuple[Any, dict[str, Any]]:
        async with fastmcp.Client(server) as client:
            schema = (await client.list_tools())[0].input_schema
            result = await client.call_tool("search", MANGLED, raise_on_error=False)
            return (None if result.is_error else json.loads(result.content[0].text)), schema

    return asyncio.run(run())


def _pydantic_ai(function: Callable[..., Any]) -> tuple[Any, dict[str, Any]]:
    require("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    schemas: list[dict[str, Any]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        schemas.append(info.function_tools[0].parameters_json_schema)
        returned = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        if returned:
            return ModelResponse(parts=[TextPart(str(returned[-1].content))])
        retried = [part for message in messages for part in message.parts if part.part_kind == "retry-prompt"]
        if retried:
            return ModelResponse(parts=[TextPart("REFUSED")])
        return ModelResponse(parts=[ToolCallPart("search", json.dumps(MANGLED))])

    agent = Agent(FunctionModel(model), retries=0)
    agent.tool_plain(function)
    try:
        # run_sync would leave its event loop open for later tests to find.
        output = asyncio.run(_run_agent(agent))
    except Exception:  # the tool's arguments were refused and no retry is left
        return None, schemas[0]
    return (None if output == "REFUSED" else json.loads(output)), schemas[0]


async def _run_agent(agent: Any) -> str:
    result = await agent.run("search")
    return str(result.output)


async def _invoke(pending: Awaitable[Any]) -> str:
    return str(await pending)


def _openai_agents(function: Callable[..., Any]) -> tuple[Any, dict[str, Any]]:
    require("agents")
    from agents import function_tool
    from agents.tool_context import ToolContext

    tool = function_tool(function, strict_mode=True, failure_error_function=None)
    arguments = json.dumps(MANGLED)
    context = ToolContext(context=None, tool_name="search", tool_call_id="call-1", tool_arguments=arguments)
    try:
        output = asyncio.run(_invoke(tool.on_invoke_tool(context, arguments)))
    except Exception:  # with no failure function, refused arguments raise ModelBehaviorError
        return None, tool.params_json_schema
    return json.loads(output), tool.params_json_schema


def _langchain(function: Callable[..., Any]) -> tuple[Any, dict[str, Any]]:
    require("langchain_core")
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    structured = tool(function)
    schema = convert_to_openai_tool(structured)["function"]["parameters"]
    try:
        output = structured.invoke(MANGLED)
    except Exception:  # pydantic's ValidationError, as LangChain raises it
        return None, schema
    return json.loads(output), schema


FRAMEWORKS = [
    pytest.param(_official_sdk, id="mcp-sdk"),
    pytest.param(_fastmcp, id="fastmcp"),
    pytest.param(_pydantic_ai, id="pydantic-ai"),
    pytest.param(_openai_agents, id="openai-agents-strict"),
    pytest.param(_langchain, id="langchain"),
]


@pytest.mark.parametrize("register_and_call", FRAMEWORKS)
def test_a_decorated_tool_takes_what_models_send(register_and_call: Any) -> None:
    received, schema = register_and_call(_lenient_search())
    assert received == RECEIVED
    assert type(received["limit"]) is int
    assert received["dry_run"] is False
    assert _host_accepts(schema, MANGLED), schema
    limit = schema["properties"]["limit"]
    assert "string" in json.dumps(limit)
    # The lenient integer's part of the portable shape, under any framework's generator (issue 33).
    assert {branch.get("type") for branch in limit["anyOf"]} >= {"number", "string"}
    assert schema["properties"]["ref"].get("type") == "string"


@pytest.mark.parametrize("register_and_call", FRAMEWORKS)
def test_the_same_tool_undecorated_refuses_them(register_and_call: Any) -> None:
    """The control: without the decorator, the framework or a validating host refuses the call."""
    received, schema = register_and_call(search)
    assert not _host_accepts(schema, MANGLED)
    if register_and_call is not _official_sdk:  # its pre-parse and lax int take these, past the host
        assert received != RECEIVED


def test_openai_strict_mode_keeps_its_rules() -> None:
    require("agents")
    from agents import function_tool

    schema = function_tool(_lenient_search(), strict_mode=True).params_json_schema
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(MANGLED)
