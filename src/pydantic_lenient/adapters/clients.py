"""MCP clients that repair a model's arguments before sending them (`pydantic_lenient.repair.engine`).

`RepairingClient` wraps the official SDK's ``ClientSession`` or FastMCP's ``Client``. Before each
``call_tool`` it repairs the arguments against that tool's advertised ``inputSchema``, taken from
``tools/list`` and cached; every other attribute passes through to the wrapped client.

    async with ClientSession(read, write) as session:
        await session.initialize()
        client = RepairingClient(session, on_repair=lambda tool, result: print(tool, result.repairs))
        await client.call_tool("search", {"limit": "10"})   # sent as {"limit": 10}

Needs the ``repair`` extra (``jsonschema-rs`` and ``regress``), and the SDK of the client it wraps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_lenient.repair.engine import Repairer, RepairResult

__all__ = ("RepairingClient",)

logger = logging.getLogger("pydantic_lenient.clients")

OnRepair = Callable[[str, RepairResult], None]


def _input_schema(tool: Any) -> Mapping[str, Any] | None:
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
    return schema if isinstance(schema, Mapping) else None


class RepairingClient:
    """Wraps an MCP client (official ``ClientSession`` or FastMCP ``Client``) so that ``call_tool``
    repairs arguments first. Repairs are logged on ``pydantic_lenient.adapters.clients`` and passed to
    ``on_repair(tool_name, result)``; `repair` gives the result without calling the tool.

    >>> import asyncio
    >>> from types import SimpleNamespace
    >>> from pydantic_lenient.adapters.clients import RepairingClient
    >>> class Session:  # stands in for a ClientSession: a tool that takes an integer limit
    ...     async def list_tools(self):
    ...         schema = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    ...         return [SimpleNamespace(name="search", inputSchema=schema)]
    ...     async def call_tool(self, name, arguments=None):
    ...         return f"{name} received {arguments}"
    >>> asyncio.run(RepairingClient(Session()).call_tool("search", {"limit": "10"}))
    "search received {'limit': 10}"
    """

    def __init__(self, client: Any, *, on_repair: OnRepair | None = None) -> None:
        self._client = client
        self._on_repair = on_repair
        self._repairers: dict[str, Repairer] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def refresh_tools(self) -> None:
        """Read every page of ``tools/list`` and rebuild the cached schemas."""
        listed = await self._client.list_tools()
        if isinstance(listed, list):  # FastMCP's Client pages for us
            tools = listed
        else:  # the official ClientSession returns one page and a cursor
            tools = list(listed.tools)
            cursor = getattr(listed, "next_cursor", None)
            while cursor:
                from mcp.types import PaginatedRequestParams

                listed = await self._client.list_tools(params=PaginatedRequestParams(cursor=cursor))
                tools.extend(listed.tools)
                cursor = getattr(listed, "next_cursor", None)
        repairers = {}
        for tool in tools:
            schema = _input_schema(tool)
            if schema is not None:
                repairers[tool.name] = Repairer(schema)
        self._repairers = repairers

    async def repair(self, name: str, arguments: Mapping[str, Any] | None) -> RepairResult | None:
        """The repair of a call's arguments, or None when the server lists no schema for ``name``."""
        if name not in self._repairers:
            await self.refresh_tools()  # a tool we have not seen: the list may have changed
        repairer = self._repairers.get(name)
        if repairer is None:
            return None
        result = repairer.repair(dict(arguments or {}))
        if result.repairs:
            logger.info(
                "repaired %s arguments: %s",
                name,
                ", ".join(f"{repair['path']} ({repair['kind']})" for repair in result.repairs),
                extra={"tool": name, "repairs": result.repairs, "valid": result.valid, "reasons": result.reasons},
            )
            if self._on_repair is not None:
                self._on_repair(name, result)
        return result

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        """``call_tool`` of the wrapped client, with the arguments repaired first."""
        result = await self.repair(name, arguments)
        sent = result.arguments if result is not None else arguments
        return await self._client.call_tool(name, sent, *args, **kwargs)
