"""CrewAI: `lenient_tool` through its ``tool`` decorator (the args schema it builds from the
signature) and its call path, ``run``. CrewAI pins pydantic below the newest, so this runs in a venv
of its own (the `crewai` nox session); elsewhere it skips."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require_framework

require_framework("crewai.tools", required_by="PYDANTIC_LENIENT_REQUIRE_CREWAI")

from crewai.tools import BaseTool, tool  # noqa: E402

SYNC_PROBES = [probe for probe in table.PROBES if probe.tool is not table.fetch_message]


def call(made: BaseTool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    table.forget()
    try:
        made.run(**arguments)
    except Exception:  # CrewAI's ValueError around pydantic's ValidationError
        return None
    return table.last_received()


def schema(made: BaseTool) -> dict[str, Any]:
    parameters: dict[str, Any] = made.args_schema.model_json_schema()
    return parameters


@pytest.mark.parametrize("probe", SYNC_PROBES, ids=lambda probe: probe.id)
def test_every_wrong_typed_form_arrives_converted_and_bad_ones_are_refused(probe: table.Probe) -> None:
    made = tool(lenient_tool(probe.tool))
    assert table.same_values(call(made, probe.arguments), probe.received)
    if probe.received is not None:
        assert host_validator(schema(made)).is_valid(probe.arguments)


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_what_the_model_sees_is_kept(function: Any) -> None:
    plain, lenient = tool(function), tool(lenient_tool(function))
    assert lenient.name == plain.name
    assert lenient.description == plain.description
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.descriptions(schema(plain)) <= table.descriptions(schema(lenient))


def test_a_model_parameter_takes_its_fields_converted() -> None:
    made = tool(lenient_tool(table.book_meeting))
    received = call(made, {"request": table.MEETING})
    assert received is not None
    assert received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    assert call(made, {"request": table.MEETING_TOO_LONG}) is None
