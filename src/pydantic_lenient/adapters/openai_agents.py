"""The OpenAI Agents SDK: `lenient_agent`, one call that makes an agent's tools lenient, its MCP
servers' tools included (requires ``openai-agents``).

Each function tool advertises its schema widened (`widen_schema`) and, in strict mode (the SDK's
default), rewritten for the ``openai`` target: every property required, no keyword strict mode
refuses (``contentMediaType`` and ``contentSchema`` go). Its arguments are repaired against the
tool's own schema (`Repairer`) before the SDK validates them. Each MCP server is wrapped the same
way (`LenientMCPServer`): its tools are listed widened, and the calls the SDK's client sends are
repaired against the server's own schema, so a server that is not lenient gets arguments it accepts.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent, FunctionTool
from agents.mcp import MCPServer
from agents.tool_context import ToolContext

from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.targets import to_target
from pydantic_lenient.schema.widen import widen_schema

__all__ = ("LenientMCPServer", "lenient_agent", "lenient_function_tool")


def lenient_agent(agent: Agent[Any]) -> Agent[Any]:
    """A copy of ``agent`` whose function tools and MCP servers take the wrong-typed forms models send.

    >>> from agents import Agent, function_tool
    >>> from pydantic_lenient.adapters.openai_agents import lenient_agent
    >>> @function_tool
    ... def account_balance(account: str, include_pending: bool) -> str:
    ...     "The balance of an account."
    ...     return f"{account}: {include_pending!r}"
    >>> agent = lenient_agent(Agent(name="bank", tools=[account_balance]))
    >>> agent.tools[0].params_json_schema["properties"]["include_pending"]["anyOf"][1]["type"]
    'string'
    """
    tools = [lenient_function_tool(tool) if isinstance(tool, FunctionTool) else tool for tool in agent.tools]
    servers = [
        server if isinstance(server, LenientMCPServer) else LenientMCPServer(server) for server in agent.mcp_servers
    ]
    return agent.clone(tools=tools, mcp_servers=servers)


def lenient_function_tool(tool: FunctionTool) -> FunctionTool:
    """``tool`` advertising its widened schema, with its arguments repaired before it runs them.

    >>> import asyncio
    >>> from agents import function_tool
    >>> from agents.tool_context import ToolContext
    >>> from pydantic_lenient.adapters.openai_agents import lenient_function_tool
    >>> def search(folder: str, limit: int) -> str:
    ...     "Search a folder."
    ...     return f"{folder}: {limit!r}"
    >>> tool = lenient_function_tool(function_tool(search))
    >>> context = ToolContext(context=None, tool_name="search", tool_call_id="1", tool_arguments="")
    >>> asyncio.run(tool.on_invoke_tool(context, '{"folder": "Dev", "limit": "100"}'))
    'Dev: 100'
    """
    schema = tool.params_json_schema
    repairer = Repairer(schema)
    widened = widen_schema(schema, style="any-of")
    if tool.strict_json_schema:
        widened = to_target(widened, "openai").schema
    return dataclasses.replace(
        tool, params_json_schema=widened, on_invoke_tool=_repairing(tool.on_invoke_tool, repairer)
    )


def _repairing(
    invoke: Callable[[ToolContext[Any], str], Awaitable[Any]], repairer: Repairer
) -> Callable[[ToolContext[Any], str], Awaitable[Any]]:
    async def on_invoke_tool(context: ToolContext[Any], text: str) -> Any:
        try:
            arguments = json.loads(text) if text else {}
        except ValueError:  # not JSON: the tool says so in its own words
            return await invoke(context, text)
        return await invoke(context, json.dumps(repairer.repair(arguments).arguments))

    return on_invoke_tool


class LenientMCPServer(MCPServer):
    """An MCP server as the SDK uses it, its tools listed widened and its calls repaired against the
    server's own schemas. Everything else is the wrapped server's. `lenient_agent` wraps an
    agent's servers in it.

    >>> from agents.mcp import MCPServerStdio
    >>> from pydantic_lenient.adapters.openai_agents import LenientMCPServer
    >>> server = LenientMCPServer(MCPServerStdio(params={"command": "mail-server"}, name="mail"))
    >>> server.name
    'mail'
    """

    def __init__(self, server: MCPServer) -> None:
        # No MCPServer.__init__: every attribute not defined here is read from the wrapped server.
        self._lenient_server = server
        self._lenient_repairers: dict[str, Repairer] = {}
        self._lenient_lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_lenient_"):
            raise AttributeError(name)
        return getattr(self._lenient_server, name)

    @property
    def name(self) -> str:
        return self._lenient_server.name

    async def connect(self) -> None:
        await self._lenient_server.connect()  # type: ignore[no-untyped-call]

    async def cleanup(self) -> None:
        await self._lenient_server.cleanup()  # type: ignore[no-untyped-call]

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Any]:
        tools = await self._lenient_server.list_tools(run_context, agent)
        listed = []
        for tool in tools:
            field = "input_schema" if hasattr(tool, "input_schema") else "inputSchema"  # MCP SDK 2 / 1
            schema = getattr(tool, field)
            with self._lenient_lock:
                self._lenient_repairers[tool.name] = Repairer(schema)
            listed.append(tool.model_copy(update={field: widen_schema(schema, style="any-of")}))
        return listed

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> Any:
        with self._lenient_lock:
            repairer = self._lenient_repairers.get(tool_name)
        if repairer is not None and arguments is not None:
            arguments = repairer.repair(arguments).arguments
        return await self._lenient_server.call_tool(tool_name, arguments, meta)

    async def list_prompts(self) -> Any:
        return await self._lenient_server.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return await self._lenient_server.get_prompt(name, arguments)
