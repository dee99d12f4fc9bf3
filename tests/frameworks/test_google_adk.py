"""Google ADK: `lenient_tool` through ADK's ``FunctionTool`` (its declaration builder, and
``run_async``), with ADK's argument validation off (its default) and on; and `LenientFunctionTool`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, cast

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require_framework

require_framework("google.adk")

from google.adk.features import FeatureName, override_feature_enabled  # noqa: E402
from google.adk.tools.function_tool import FunctionTool  # noqa: E402
from google.adk.tools.tool_context import ToolContext  # noqa: E402

from pydantic_lenient.adapters.google_adk import LenientFunctionTool  # noqa: E402


@pytest.fixture(params=[False, True], ids=["validation-off", "validation-on"])
def adk_validation(request: pytest.FixtureRequest) -> Iterator[bool]:
    override_feature_enabled(FeatureName.FUNCTION_TOOL_ARG_VALIDATION, request.param)
    yield request.param
    override_feature_enabled(FeatureName.FUNCTION_TOOL_ARG_VALIDATION, False)


def call(tool: FunctionTool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    table.forget()
    try:
        # No context parameter in the table's tools: ADK injects none, and reads none.
        asyncio.run(tool.run_async(args=arguments, tool_context=cast(Any, None)))
    except Exception:  # the wrapper's ValidationError
        return None
    return table.last_received()  # None too when ADK answered the model with its own error


def schema(tool: FunctionTool) -> dict[str, Any]:
    declaration = tool._get_declaration()
    assert declaration is not None
    return dict(cast(Any, declaration.parameters_json_schema))


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_the_adapter_delivers_every_form_converted_and_refuses_bad_ones(
    probe: table.Probe, adk_validation: bool
) -> None:
    tool = LenientFunctionTool(probe.tool)
    assert table.same_values(call(tool, probe.arguments), probe.received)
    if probe.received is not None:
        assert host_validator(schema(tool)).is_valid(probe.arguments)


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_the_decorator_alone_never_passes_raw_text(probe: table.Probe) -> None:
    """ADK's default passes the model's arguments unchecked: the wrapper converts them or refuses."""
    assert table.same_values(call(FunctionTool(lenient_tool(probe.tool)), probe.arguments), probe.received)


def test_without_the_decorator_adk_passes_raw_text() -> None:
    """The control: "false" reaches the undecorated function as a (truthy) string."""
    received = call(FunctionTool(table.account_balance), {"account": "main", "include_pending": "false"})
    assert received == {"account": "main", "include_pending": "false"}


def test_a_model_parameter_is_validated_by_its_lenient_class(adk_validation: bool) -> None:
    tool = LenientFunctionTool(table.book_meeting)
    received = call(tool, {"request": table.MEETING})
    assert received is not None
    assert received["request"].model_dump() == table.MEETING_RECEIVED.model_dump()
    assert call(tool, {"request": {**table.MEETING, "remote": "yes"}}) is None  # ADK's lax pydantic takes "yes"


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_what_the_model_sees_is_kept(function: Any) -> None:
    plain, lenient = FunctionTool(function), LenientFunctionTool(function)
    assert lenient.description == plain.description
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.descriptions(schema(plain)) <= table.descriptions(schema(lenient))


def archive(limit: int, dry_run: bool, tool_context: ToolContext) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
    """
    return table.record(limit=limit, dry_run=dry_run)


def test_the_tool_context_is_left_to_adk() -> None:
    plain, lenient = FunctionTool(archive), LenientFunctionTool(archive)
    assert table.property_names(schema(plain)) == {"limit", "dry_run"}
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.left_as_written(archive, {"tool_context"})
    assert table.same_values(call(lenient, {"limit": "5", "dry_run": "false"}), {"limit": 5, "dry_run": False})
