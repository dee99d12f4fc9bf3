"""LangChain's `create_agent` on a scripted chat model: its tool node injects `ToolRuntime` and the
state into a `lenient_tool`, and the model's arguments arrive converted (needs `langchain`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic_lenient import lenient_tool
from tests.frameworks import table
from tests.sdks import require_framework

require_framework("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.tools import InjectedState, ToolRuntime, tool  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402


def with_runtime(
    limit: int, dry_run: bool, runtime: ToolRuntime, state: Annotated[dict[str, Any], InjectedState]
) -> str:
    """Archive old messages.

    Args:
        limit: How many.
        dry_run: Only say what would happen.
    """
    assert isinstance(runtime, ToolRuntime)
    assert "messages" in state
    return table.record(limit=limit, dry_run=dry_run)


class ScriptedModel(GenericFakeChatModel):
    """Answers with the messages it was given, whatever tools are bound."""

    def bind_tools(self, tools: Any, **options: Any) -> Any:
        return self


def run(arguments: dict[str, Any]) -> dict[str, Any] | None:
    table.forget()
    call = {"name": "with_runtime", "args": arguments, "id": "call-1"}
    model = ScriptedModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("done")]))
    agent = create_agent(model, [tool(lenient_tool(with_runtime))])
    agent.invoke({"messages": [HumanMessage("go")]})
    return table.last_received()


def test_the_runtime_and_the_state_are_left_to_langchain() -> None:
    assert table.left_as_written(with_runtime, {"runtime", "state"})
    call_schema: Any = tool(lenient_tool(with_runtime)).tool_call_schema
    assert set(call_schema.model_json_schema()["properties"]) == {"limit", "dry_run"}


def test_an_agent_passes_the_model_s_arguments_converted() -> None:
    assert table.same_values(run({"limit": "5", "dry_run": "false"}), {"limit": 5, "dry_run": False})
    assert run({"limit": "5", "dry_run": "yes"}) is None


def test_langchain_mcp_tools_send_repaired_calls_to_a_strict_server() -> None:
    """``langchain.mcp`` over an in-memory FastMCP server that is not lenient: the tool advertises
    the widened schema, and the server receives the arguments repaired against its own schema."""
    import asyncio
    import warnings

    from langchain_core._api import LangChainBetaWarning

    with warnings.catch_warnings():  # langchain.mcp warns that it is in beta, on import
        warnings.simplefilter("ignore", LangChainBetaWarning)
        require_framework("langchain.mcp")
    from fastmcp import Client, FastMCP
    from langchain.mcp import as_langchain_tool

    from pydantic_lenient.adapters.langchain import lenient_tools
    from pydantic_lenient.testing import host_validator

    server = FastMCP("strict", strict_input_validation=True)
    server.tool(table.move_messages)
    sent = {"uids": '["17", 18]', "dry_run": "false"}

    async def run() -> tuple[dict[str, Any], Any]:
        client = Client(server)
        async with client:
            [listed] = await client.list_tools()
        [made] = lenient_tools([await as_langchain_tool(listed, client)])
        schema = made.tool_call_schema if isinstance(made.tool_call_schema, dict) else {}
        table.forget()
        result = await made.ainvoke({"type": "tool_call", "name": made.name, "args": sent, "id": "call-1"})
        return schema, result

    schema, result = asyncio.run(run())
    assert host_validator(schema).is_valid(sent)
    assert table.same_values(table.last_received(), {"uids": [17, 18], "dry_run": False}), result
