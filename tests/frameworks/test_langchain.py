"""LangChain: `lenient_tool` through `langchain_core.tools.tool` (its schema builder) and the tool's
own call path, `invoke` with a tool call; with `langchain` installed, also `create_agent` on a fake
chat model, whose tool node injects `ToolRuntime`, the config, the state and the call's id."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require

require("langchain_core")

from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import BaseTool, InjectedToolCallId, tool  # noqa: E402


def make(function: Any) -> BaseTool:
    made: BaseTool = tool(function, parse_docstring=True)
    return made


def call(made: BaseTool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    table.forget()
    try:
        made.invoke({"type": "tool_call", "name": made.name, "args": arguments, "id": "call-1"})
    except Exception:  # pydantic's ValidationError, as LangChain raises it
        return None
    return table.last_received()


def schema(made: BaseTool) -> dict[str, Any]:
    """What the model is shown (LangChain leaves injected arguments out)."""
    return made.tool_call_schema.model_json_schema()  # type: ignore[union-attr]


SYNC_PROBES = [probe for probe in table.PROBES if probe.tool is not table.fetch_message]  # invoke is sync


@pytest.mark.parametrize("probe", SYNC_PROBES, ids=lambda probe: probe.id)
def test_every_wrong_typed_form_arrives_converted_and_bad_ones_are_refused(probe: table.Probe) -> None:
    made = make(lenient_tool(probe.tool))
    assert table.same_values(call(made, probe.arguments), probe.received)
    if probe.received is not None:
        assert host_validator(schema(made)).is_valid(probe.arguments)


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_what_the_model_sees_is_kept(function: Any) -> None:
    plain, lenient = make(function), make(lenient_tool(function))
    assert lenient.description == plain.description
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.descriptions(schema(plain)) <= table.descriptions(schema(lenient))


def test_a_model_parameter_stays_under_its_name_with_its_fields_converted() -> None:
    """LangChain advertises a tool's only model parameter under its name, decorated or not."""
    plain, lenient = make(table.book_meeting), make(lenient_tool(table.book_meeting))
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain)) == {"request"}
    assert not host_validator(schema(plain)).is_valid({"request": table.MEETING})
    assert host_validator(schema(lenient)).is_valid({"request": table.MEETING})
    received = call(lenient, {"request": table.MEETING})
    assert received is not None
    assert isinstance(received["request"], table.MeetingRequest)
    assert received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    assert call(lenient, {"request": {**table.MEETING, "remote": "yes"}}) is None
    assert call(lenient, {"request": table.MEETING_TOO_LONG}) is None


def archive(
    limit: int,
    dry_run: bool,
    config: RunnableConfig,
    call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
        config: The run's configuration.
        call_id: The tool call's id.
    """
    assert isinstance(config, dict)
    assert call_id == "call-1"
    return table.record(limit=limit, dry_run=dry_run)


def test_the_config_and_injected_arguments_are_left_to_langchain() -> None:
    plain, lenient = make(archive), make(lenient_tool(archive))
    assert table.property_names(schema(plain)) == {"limit", "dry_run"}
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.left_as_written(archive, {"config", "call_id"})
    assert table.same_values(call(lenient, {"limit": "5", "dry_run": "false"}), {"limit": 5, "dry_run": False})


# --- the one-line switch: lenient_tools ---------------------------------------------------------

from pydantic_lenient.adapters.langchain import lenient_tools  # noqa: E402


@pytest.mark.parametrize("probe", SYNC_PROBES, ids=lambda probe: probe.id)
def test_lenient_tools_delivers_every_form_converted_and_refuses_bad_ones(probe: table.Probe) -> None:
    [made] = lenient_tools([make(probe.tool)])
    assert table.same_values(call(made, probe.arguments), probe.received)
    if probe.received is not None:
        assert host_validator(schema(made)).is_valid(probe.arguments)


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_lenient_tools_keeps_what_the_model_sees(function: Any) -> None:
    plain = make(function)
    for made in lenient_tools([plain, function]):
        assert made.name == plain.name
        assert made.description == plain.description
        assert table.property_names(schema(made)) == table.property_names(schema(plain))
        assert table.descriptions(schema(plain)) <= table.descriptions(schema(made))


def test_lenient_tools_leaves_the_config_and_injected_arguments_to_langchain() -> None:
    [made] = lenient_tools([make(archive)])
    assert table.property_names(schema(made)) == {"limit", "dry_run"}
    assert table.same_values(call(made, {"limit": "5", "dry_run": "false"}), {"limit": 5, "dry_run": False})
