"""smolagents: its ``tool`` decorator builds the inputs from the type hints without their
``Annotated`` markers, and its agents check every call against those inputs before the tool runs.
A `lenient_tool` is therefore exactly as plain there: the same inputs advertised, the same calls
refused, the same values received (docs/frameworks.md says so)."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_lenient import lenient_tool
from tests.frameworks import table
from tests.sdks import require_framework

require_framework("smolagents")

from smolagents import tool  # noqa: E402
from smolagents.tools import Tool, validate_tool_arguments  # noqa: E402

SYNC_TOOLS = [function for function in table.TOOLS if function not in (table.fetch_message, table.book_meeting)]
SYNC_PROBES = [probe for probe in table.PROBES if probe.tool in SYNC_TOOLS]


def call(made: Tool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """As a smolagents agent calls a tool: its own check, then the call."""
    table.forget()
    try:
        validate_tool_arguments(made, arguments)
        made(**arguments)
    except Exception:  # smolagents' refusal, or the wrapper's ValidationError
        return None
    return table.last_received()


@pytest.mark.parametrize("function", SYNC_TOOLS, ids=lambda function: function.__name__)
def test_the_inputs_are_exactly_as_plain(function: Any) -> None:
    plain, lenient = tool(function), tool(lenient_tool(function))
    assert lenient.inputs == plain.inputs
    assert lenient.description == plain.description


@pytest.mark.parametrize("probe", SYNC_PROBES, ids=lambda probe: probe.id)
def test_every_call_goes_as_it_goes_without_the_decorator(probe: table.Probe) -> None:
    plain = call(tool(probe.tool), probe.arguments)
    lenient = call(tool(lenient_tool(probe.tool)), probe.arguments)
    assert table.same_values(lenient, plain)
    if probe.received is None:
        assert lenient is None
