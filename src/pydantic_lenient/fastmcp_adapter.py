"""Lenient tools on FastMCP: a middleware.

    server = FastMCP("mail", middleware=[LenientMiddleware(normalizer=Normalizer.from_file("rules.json"))])

* ``tools/list`` advertises each tool's input schema in a chosen style (default ``type-array``):
  FastMCP's own schema, rewritten with `pydantic_lenient.apply_style` (``strict`` leaves it as is).
* With a ``normalizer``, ``tools/call`` arguments are normalized before FastMCP validates them
  (feeding the normalizer's stats); a conflict is a tool error the model can read. Only calls to
  tools the server has are normalized; each is registered with the normalizer
  (`Normalizer.register_tools`), so its calls are counted under its name.

FastMCP validates arguments against the function itself, with no pre-parsing, so lenient
parameters need nothing more: they stay lenient even under ``strict_input_validation=True``.
Needs the ``fastmcp`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp.types as mt
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult

from .normalizer import NormalizationConflict, Normalizer
from .schema_styles import Style, apply_style

__all__ = ("LenientMiddleware",)


class LenientMiddleware(Middleware):
    """Normalizes ``tools/call`` arguments (with a ``normalizer``) and restyles ``tools/list``."""

    def __init__(self, normalizer: Normalizer | None = None, *, style: Style = "type-array") -> None:
        self.normalizer = normalizer
        self.style: Style = style

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        params = context.message
        if self.normalizer is not None and await _server_has_tool(context, params.name):
            self.normalizer.register_tools([params.name])  # its calls are counted under its name
            try:
                result = self.normalizer.apply(params.name, params.arguments or {})
            except NormalizationConflict as error:
                raise ToolError(str(error)) from None
            if result.applied:
                context = context.copy(message=params.model_copy(update={"arguments": result.arguments}))
        return await call_next(context)

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        return [_restyled(tool, self.style) for tool in tools]


async def _server_has_tool(context: MiddlewareContext[Any], name: str) -> bool:
    """Whether the server has (and would run) ``name``: calls to other names are not normalized."""
    server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
    return server is not None and await server.get_tool(name) is not None


def _restyled(tool: Tool, style: Style) -> Any:
    return tool.model_copy(update={"parameters": apply_style(tool.parameters, style)})
