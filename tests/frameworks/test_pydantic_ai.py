"""pydantic-ai: `lenient_tool` through its own schema builder and call path (an `Agent` on a
`FunctionModel`, which sends the probe's arguments as the model's tool call)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require

require("pydantic_ai")

from pydantic_ai import Agent, RunContext  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

REFUSED = "REFUSED"


class Run:
    """One agent run: the tool as advertised, and what its function received."""

    def __init__(self, register: Any, name: str, arguments: dict[str, Any], toolsets: tuple[Any, ...] = ()) -> None:
        self.tool: Any = None
        table.forget()

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.tool = info.function_tools[0]
            parts = [part for message in messages for part in message.parts]
            if any(part.part_kind == "retry-prompt" for part in parts):
                return ModelResponse(parts=[TextPart(REFUSED)])
            if any(isinstance(part, ToolReturnPart) for part in parts):
                return ModelResponse(parts=[TextPart("ok")])
            return ModelResponse(parts=[ToolCallPart(name, json.dumps(arguments))])

        agent: Agent[None, str] = Agent(FunctionModel(model), retries=1, toolsets=toolsets)
        register(agent)
        # run_sync would leave its event loop open for later tests to find.
        self.output = asyncio.run(_run(agent))
        self.received = table.last_received()
        listed: Any = self.tool
        self.schema: dict[str, Any] = listed.parameters_json_schema


async def _run(agent: Agent[None, str]) -> str:
    return (await agent.run("go")).output


def plain_tool(function: Any) -> Any:
    return lambda agent: agent.tool_plain(function)


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_every_wrong_typed_form_arrives_converted_and_bad_ones_are_refused(probe: table.Probe) -> None:
    run = Run(plain_tool(lenient_tool(probe.tool)), probe.tool.__name__, probe.arguments)
    assert table.same_values(run.received, probe.received), (run.received, run.output)
    if probe.received is not None:
        assert host_validator(run.schema).is_valid(probe.arguments)


@pytest.mark.parametrize("tool", table.TOOLS, ids=lambda tool: tool.__name__)
def test_what_the_model_sees_is_kept(tool: Any) -> None:
    """The tool's description, every field's and model's, and the argument names."""
    plain = Run(plain_tool(tool), tool.__name__, {})
    lenient = Run(plain_tool(lenient_tool(tool)), tool.__name__, {})
    assert lenient.tool.description == plain.tool.description
    if tool is not table.book_meeting:  # a sole model: under its name by default (the tests below)
        assert table.property_names(lenient.schema) == table.property_names(plain.schema)
    assert table.descriptions(plain.schema) <= table.descriptions(lenient.schema)


def test_a_bare_lenient_tool_takes_a_single_model_under_its_name() -> None:
    """By default a model parameter also takes the model's JSON text (as every way in: an MCP host
    may send an object behind a ``$ref`` as text), so pydantic-ai advertises it under its name, and
    validates what it advertises."""
    run = Run(plain_tool(lenient_tool(table.book_meeting)), "book_meeting", {"request": table.MEETING})
    assert table.property_names(run.schema) == {"request"}
    assert host_validator(run.schema).is_valid({"request": table.MEETING})
    assert run.received is not None
    assert isinstance(run.received["request"], table.MeetingRequest)
    assert run.received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    text = Run(plain_tool(lenient_tool(table.book_meeting)), "book_meeting", {"request": json.dumps(table.MEETING)})
    assert text.received is not None
    assert text.received["request"].minutes == 30


def outline(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema without what makes a field lenient: its keywords, and each field's name, title,
    description and default."""
    kept = ("title", "description", "default")
    properties = {
        name: {key: value for key, value in field.items() if key in kept}
        for name, field in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}


def book_with_context(ctx: RunContext[None], request: table.MeetingRequest) -> str:
    """Book a meeting.

    Args:
        request: The meeting.
    """
    assert isinstance(ctx, RunContext)
    return table.record(request=request)


@pytest.mark.parametrize(
    ("function", "register"),
    [(table.book_meeting, plain_tool), (book_with_context, lambda function: lambda agent: agent.tool(function))],
    ids=["plain", "with-context"],
)
def test_a_single_model_tool_keeps_its_fields_at_the_top_level(function: Any, register: Any) -> None:
    """pydantic-ai advertises a tool's only model parameter's fields as the tool's own, and builds
    the model from the top-level arguments: `lenient_tool(..., keep_model_class=True)` keeps that
    shape (its parameter stays a class: the lenient model), with the fields lenient where the plain
    ones are plain."""
    name = function.__name__
    arguments = {"title": "Review", "minutes": "100", "remote": "false"}
    plain = Run(register(function), name, arguments)
    run = Run(register(lenient_tool(function, keep_model_class=True)), name, arguments)
    assert table.property_names(run.schema) == {"title", "minutes", "remote"}
    assert outline(run.schema) == outline(plain.schema)
    assert run.tool.description == plain.tool.description
    # The plain schema refuses the strings (pydantic-ai's lax validation would take them, but a
    # validating host never sends them); the lenient one admits them, and they arrive converted.
    assert not host_validator(plain.schema).is_valid(arguments)
    assert host_validator(run.schema).is_valid(arguments)
    assert run.received is not None, run.output
    request = run.received["request"]
    assert isinstance(request, table.MeetingRequest)
    assert table.same_values(request.model_dump(), {"title": "Review", "minutes": 100, "remote": False})
    # pydantic-ai's lax validation takes "yes" for the plain model; the lenient model refuses it.
    kept = lenient_tool(function, keep_model_class=True)
    assert Run(register(kept), name, {**arguments, "remote": "yes"}).received is None
    assert Run(register(kept), name, table.MEETING_TOO_LONG).received is None


def test_the_toolset_keeps_a_single_model_tool_s_fields_at_the_top_level() -> None:
    plain = Run(plain_tool(table.book_meeting), "book_meeting", table.MEETING)
    run = Run(lambda agent: None, "book_meeting", table.MEETING, toolset_of(table.book_meeting))
    assert table.property_names(plain.schema) == {"title", "minutes", "remote"}
    assert table.property_names(run.schema) == table.property_names(plain.schema)
    assert run.tool.description == plain.tool.description
    assert table.descriptions(plain.schema) <= table.descriptions(run.schema)
    assert run.received is not None
    assert run.received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    # The control: without the switch pydantic-ai's lax validation takes "30", but its schema
    # refuses it, so a validating host never sends it.
    assert not host_validator(plain.schema).is_valid(table.MEETING)
    assert host_validator(run.schema).is_valid(table.MEETING)


def with_context(ctx: RunContext[None], limit: int = 10, dry_run: bool = True) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
    """
    assert isinstance(ctx, RunContext)
    return table.record(limit=limit, dry_run=dry_run)


def test_the_run_context_is_left_to_pydantic_ai() -> None:
    plain = Run(lambda agent: agent.tool(with_context), "with_context", {"limit": 5})
    run = Run(lambda agent: agent.tool(lenient_tool(with_context)), "with_context", {"limit": "5", "dry_run": "false"})
    assert table.property_names(run.schema) == table.property_names(plain.schema) == {"limit", "dry_run"}
    assert table.descriptions(plain.schema) <= table.descriptions(run.schema)
    assert table.same_values(run.received, {"limit": 5, "dry_run": False})


def toolset_of(function: Any) -> tuple[Any, ...]:
    from pydantic_ai.toolsets import FunctionToolset

    from pydantic_lenient.adapters.pydantic_ai import LenientToolset

    return (LenientToolset(FunctionToolset([function])),)


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_the_toolset_wrapper_makes_undecorated_tools_lenient(probe: table.Probe) -> None:
    """`LenientToolset` repairs against each tool's own schema, then pydantic-ai validates as
    usual. What the widened schema admits arrives converted; the rest is refused, or taken as
    pydantic-ai takes it without the wrapper (its lax " 100"), never worse."""
    run = Run(lambda agent: None, probe.tool.__name__, probe.arguments, toolset_of(probe.tool))
    if probe.received is not None and host_validator(run.schema).is_valid(probe.arguments):
        assert table.same_values(run.received, probe.received), run.received
    if not table.same_values(run.received, probe.received):
        plain = Run(plain_tool(probe.tool), probe.tool.__name__, probe.arguments)
        assert run.received is None or table.same_values(run.received, plain.received)


def test_the_toolset_wrapper_widens_what_repair_fixes() -> None:
    run = Run(lambda agent: None, "search_mail", {}, toolset_of(table.search_mail))
    assert host_validator(run.schema).is_valid({"folder": "Dev", "limit": "100", "include_archived": "false"})
    assert table.descriptions(Run(plain_tool(table.search_mail), "search_mail", {}).schema) <= table.descriptions(
        run.schema
    )
