"""The OpenAI Agents SDK: `lenient_tool` through `function_tool` (strict mode, its default) and the
tool's own call path, `on_invoke_tool`, with the probe's arguments as the model's JSON."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require

require("agents")

from agents import FunctionTool, RunContextWrapper, function_tool  # noqa: E402
from agents.strict_schema import ensure_strict_json_schema  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402


def call(tool: FunctionTool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """What the function received when the model sends ``arguments`` (None: refused)."""
    table.forget()
    text = json.dumps(arguments)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=text)
    try:
        asyncio.run(_invoke(tool, context, text))
    except Exception:  # with no failure function, refused arguments raise ModelBehaviorError
        return None
    return table.last_received()


async def _invoke(tool: FunctionTool, context: ToolContext[Any], text: str) -> Any:
    return await tool.on_invoke_tool(context, text)


def make(function: Any) -> FunctionTool:
    return function_tool(function, failure_error_function=None)


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_every_wrong_typed_form_arrives_converted_and_bad_ones_are_refused(probe: table.Probe) -> None:
    tool = make(lenient_tool(probe.tool))
    assert table.same_values(call(tool, probe.arguments), probe.received)
    if probe.received is not None and set(probe.arguments) == set(tool.params_json_schema["required"]):
        # (strict mode makes every property required: OpenAI sends them all)
        assert host_validator(tool.params_json_schema).is_valid(probe.arguments)


@pytest.mark.parametrize("tool", table.TOOLS, ids=lambda tool: tool.__name__)
def test_what_the_model_sees_is_kept(tool: Any) -> None:
    plain, lenient = make(tool), make(lenient_tool(tool))
    assert lenient.description == plain.description
    assert table.property_names(lenient.params_json_schema) == table.property_names(plain.params_json_schema)
    assert table.descriptions(plain.params_json_schema) <= table.descriptions(lenient.params_json_schema)
    # strict mode's own rules: every property required, no other property
    schema = lenient.params_json_schema
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(schema["properties"])


def test_a_model_parameter_takes_its_fields_converted() -> None:
    """The SDK advertises a tool's only model parameter under its name, decorated or not."""
    plain, tool = make(table.book_meeting), make(lenient_tool(table.book_meeting))
    assert table.property_names(tool.params_json_schema) == table.property_names(plain.params_json_schema)
    assert table.property_names(tool.params_json_schema) == {"request"}
    assert not host_validator(plain.params_json_schema).is_valid({"request": table.MEETING})
    assert host_validator(tool.params_json_schema).is_valid({"request": table.MEETING})
    assert call(tool, {"request": {**table.MEETING, "remote": "yes"}}) is None
    received = call(tool, {"request": table.MEETING})
    assert received is not None
    assert isinstance(received["request"], table.MeetingRequest)
    assert received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    assert call(tool, {"request": table.MEETING_TOO_LONG}) is None


def with_wrapper(ctx: RunContextWrapper[None], limit: int, dry_run: bool) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
    """
    assert isinstance(ctx, RunContextWrapper)
    return table.record(limit=limit, dry_run=dry_run)


def with_tool_context(ctx: ToolContext[None], limit: int, dry_run: bool) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
    """
    assert isinstance(ctx, ToolContext)
    return table.record(limit=limit, dry_run=dry_run)


@pytest.mark.parametrize("function", [with_wrapper, with_tool_context], ids=lambda function: function.__name__)
def test_the_context_is_left_to_the_sdk(function: Any) -> None:
    plain, lenient = make(function), make(lenient_tool(function))
    assert table.property_names(lenient.params_json_schema) == table.property_names(plain.params_json_schema)
    assert table.property_names(plain.params_json_schema) == {"limit", "dry_run"}
    assert table.descriptions(plain.params_json_schema) <= table.descriptions(lenient.params_json_schema)
    assert table.same_values(call(lenient, {"limit": "5", "dry_run": "false"}), {"limit": 5, "dry_run": False})


# --- the one-line switch: lenient_agent -------------------------------------------------------

from agents import Agent  # noqa: E402
from agents.mcp import MCPServer  # noqa: E402
from mcp.types import CallToolResult, TextContent  # noqa: E402
from mcp.types import Tool as MCPTool  # noqa: E402

from pydantic_lenient.adapters.openai_agents import lenient_agent  # noqa: E402


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_lenient_agent_makes_undecorated_tools_take_every_form(probe: table.Probe) -> None:
    """Repair against each tool's own schema, then the SDK validates as usual: what the widened
    schema admits arrives converted; the rest is refused, or taken as the SDK takes it without the
    switch, never worse."""
    tool = lenient_agent(Agent(name="a", tools=[make(probe.tool)])).tools[0]
    assert isinstance(tool, FunctionTool)
    received = call(tool, probe.arguments)
    if probe.received is not None and host_validator(tool.params_json_schema).is_valid(_all_sent(tool, probe)):
        assert table.same_values(received, probe.received), received
    if not table.same_values(received, probe.received):
        assert received is None or table.same_values(received, call(make(probe.tool), probe.arguments))


def _all_sent(tool: FunctionTool, probe: table.Probe) -> dict[str, Any]:
    """The probe as strict mode sends it: every property, null for those the model leaves out."""
    return {name: probe.arguments.get(name) for name in tool.params_json_schema["properties"]}


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_lenient_agent_schemas_are_valid_strict_schemas(function: Any) -> None:
    plain = make(function)
    tool = lenient_agent(Agent(name="a", tools=[plain])).tools[0]
    assert isinstance(tool, FunctionTool)
    schema = tool.params_json_schema
    text = json.dumps(schema)
    assert not any(keyword in text for keyword in UNDOCUMENTED_IN_STRICT_MODE)
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(schema["properties"])
    assert table.descriptions(plain.params_json_schema) <= table.descriptions(schema)
    assert tool.description == plain.description


JSON_TEXT_KEYWORDS = ("contentMediaType", "contentSchema")
UNDOCUMENTED_IN_STRICT_MODE = (*JSON_TEXT_KEYWORDS, "nullable")
"""What a bare `lenient_tool` may write that OpenAI's strict subset does not list (docs/frameworks.md)."""


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_a_bare_lenient_tool_s_strict_schema_keeps_the_json_text_keywords(function: Any) -> None:
    """Pinned (docs/frameworks.md): `function_tool`'s strict mode (`ensure_strict_json_schema`)
    accepts a bare `lenient_tool`'s schema as it is, and keeps `contentMediaType`/`contentSchema`
    wherever a parameter takes JSON text: they go to OpenAI, whose documented strict subset does not
    list them. `lenient_agent` (or `lenient_function_tool`) writes the `openai` target instead: no
    such keyword, still a schema the SDK's strict checks leave as it is, and the calls converted."""
    tool = make(lenient_tool(function))
    assert tool.strict_json_schema
    schema = tool.params_json_schema
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema
    takes_json_text = "AcceptJsonText" in repr(lenient_tool(function).__annotations__)
    assert all((keyword in json.dumps(schema)) == takes_json_text for keyword in JSON_TEXT_KEYWORDS)
    switched = lenient_agent(Agent(name="a", tools=[tool])).tools[0]
    assert isinstance(switched, FunctionTool)
    assert not any(keyword in json.dumps(switched.params_json_schema) for keyword in UNDOCUMENTED_IN_STRICT_MODE)
    assert ensure_strict_json_schema(copy.deepcopy(switched.params_json_schema)) == switched.params_json_schema
    for probe in (probe for probe in table.PROBES if probe.tool is function):
        assert table.same_values(call(switched, probe.arguments), probe.received), probe.id


def test_some_bare_lenient_tool_takes_json_text() -> None:
    """The control for the test above: the table has a tool whose strict schema has the keywords."""
    assert any(
        keyword in json.dumps(make(lenient_tool(table.move_messages)).params_json_schema)
        for keyword in JSON_TEXT_KEYWORDS
    )


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_a_bare_lenient_tool_writes_nullable_exactly_for_parameters_that_take_null(function: Any) -> None:
    """The other keyword the docs name: the default style's ``nullable``, on the branches of a
    parameter that takes null, and nowhere else."""
    schema = make(lenient_tool(function)).params_json_schema
    for name, parameter in schema["properties"].items():
        branches = parameter.get("anyOf", [parameter])
        takes_null = any(branch.get("type") == "null" for branch in branches)
        assert ("nullable" in json.dumps(parameter)) == takes_null, name


def test_some_bare_lenient_tool_writes_nullable() -> None:
    """The control for the test above."""
    functions: list[Any] = list(table.TOOLS)
    assert any("nullable" in json.dumps(make(lenient_tool(function)).params_json_schema) for function in functions)


class StrictServer(MCPServer):
    """An MCP server that is not lenient, in memory: it refuses what its schema refuses."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, Any] | None] = []
        self.schema = {
            "type": "object",
            "properties": {"uids": {"type": "array", "items": {"type": "integer"}}, "dry_run": {"type": "boolean"}},
            "required": ["uids", "dry_run"],
        }

    @property
    def name(self) -> str:
        return "strict"

    async def connect(self) -> None:
        pass

    async def cleanup(self) -> None:
        pass

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[MCPTool]:
        return [MCPTool(name="move_messages", description="Move messages.", inputSchema=self.schema)]

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        self.calls.append(arguments)
        valid = host_validator(self.schema).is_valid(arguments)
        return CallToolResult(
            content=[TextContent(type="text", text="moved" if valid else "invalid")], isError=not valid
        )

    async def list_prompts(self) -> Any:
        raise NotImplementedError

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError


def test_lenient_agent_repairs_the_calls_sent_to_an_mcp_server() -> None:
    server = StrictServer()
    agent = lenient_agent(Agent(name="a", mcp_servers=[server]))
    tools = asyncio.run(agent.get_mcp_tools(RunContextWrapper(context=None)))
    assert len(tools) == 1
    assert isinstance(tools[0], FunctionTool)
    schema = tools[0].params_json_schema
    sent = {"uids": '["17", 18]', "dry_run": "false"}
    assert host_validator(schema).is_valid(sent)
    text = json.dumps(sent)
    context = ToolContext(context=None, tool_name="move_messages", tool_call_id="call-1", tool_arguments=text)
    output = asyncio.run(_invoke(tools[0], context, text))
    assert server.calls == [{"uids": [17, 18], "dry_run": False}]
    assert "moved" in str(output)
