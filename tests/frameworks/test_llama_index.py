"""LlamaIndex: `lenient_tool` and `lenient_function_tool` through ``FunctionTool`` (its schema
builder) and its call path (``call`` / ``acall`` with the model's arguments as keywords)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from pydantic_lenient import lenient_tool
from pydantic_lenient.testing import host_validator
from tests.frameworks import table
from tests.sdks import require_framework

require_framework("llama_index.core")

from llama_index.core.tools import FunctionTool  # noqa: E402

from pydantic_lenient.adapters.llama_index import lenient_function_tool  # noqa: E402


def make(function: Any) -> FunctionTool:
    if inspect.iscoroutinefunction(function):
        return FunctionTool.from_defaults(async_fn=function)
    return FunctionTool.from_defaults(function)


def call(tool: FunctionTool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    table.forget()
    try:
        output = asyncio.run(tool.acall(**arguments))
    except Exception:  # the wrapper's ValidationError
        return None
    assert not output.is_error, output
    return table.last_received()


def schema(tool: FunctionTool) -> dict[str, Any]:
    parameters: dict[str, Any] = tool.metadata.get_parameters_dict()
    return parameters


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_the_adapter_delivers_every_form_converted_and_refuses_bad_ones(probe: table.Probe) -> None:
    tool = lenient_function_tool(probe.tool)
    assert table.same_values(call(tool, probe.arguments), probe.received)
    if probe.received is not None:
        assert host_validator(schema(tool)).is_valid(probe.arguments)


@pytest.mark.parametrize("probe", table.PROBES, ids=lambda probe: probe.id)
def test_the_decorator_alone_never_passes_raw_text(probe: table.Probe) -> None:
    """LlamaIndex drops a parameter's own markers from its schema (nested ones stay) and passes the
    model's arguments unchecked: the wrapper converts them or refuses."""
    tool = make(lenient_tool(probe.tool))
    assert table.same_values(call(tool, probe.arguments), probe.received)


def test_without_the_decorator_llama_index_passes_raw_text() -> None:
    """The control: "false" reaches the undecorated function as a (truthy) string."""
    received = call(make(table.account_balance), {"account": "main", "include_pending": "false"})
    assert received == {"account": "main", "include_pending": "false"}


@pytest.mark.parametrize("function", table.TOOLS, ids=lambda function: function.__name__)
def test_what_the_model_sees_is_kept(function: Any) -> None:
    plain, lenient = make(function), lenient_function_tool(function)
    assert lenient.metadata.description == plain.metadata.description
    assert lenient.metadata.name == plain.metadata.name
    assert table.property_names(schema(lenient)) == table.property_names(schema(plain))
    assert table.descriptions(schema(plain)) <= table.descriptions(schema(lenient))
