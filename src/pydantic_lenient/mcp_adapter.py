"""Lenient tools on the official MCP Python SDK's ``MCPServer``.

    server = MCPServer("mail")
    server.tool()(search)
    make_lenient(server, normalizer=Normalizer.from_file("rules.json"))

`make_lenient` does three things, for every tool registered now or later:

* ``tools/list`` advertises each tool's input schema in a chosen style (default ``type-array``),
  as `pydantic_lenient.input_schema` writes it, instead of the SDK's unflattened one.
* The SDK's ``pre_parse_json`` no longer rewrites a string the field already accepts. The SDK
  parses JSON-looking strings for every field not typed exactly ``str``: in a ``str | None`` field
  it turns ``"null"`` into None and ``'["x"]'`` into a list (python-sdk #3055), and it parses text
  for a ``LenientJson`` field before that field's own limits apply. Strings a field takes as they
  are now reach it untouched; other strings are pre-parsed as before.
* With ``lenient_parameters=True``, every tool's parameters are made lenient as
  `pydantic_lenient.lenient_tool` would make them: ``int`` takes ``"100"``, ``bool`` ``"false"``.
* With a ``normalizer``, a server middleware normalizes ``tools/call`` arguments before the SDK
  validates them (feeding the normalizer's stats); a conflict is a tool error the model can read.
  Only calls to the server's tools are normalized, and each tool is registered with the normalizer
  (`Normalizer.register_tools`), so its calls are counted under its name.

Needs the ``mcp`` extra.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import TypeAdapter, ValidationError

from .lenient import lenient_model
from .normalizer import NormalizationConflict, Normalizer
from .schema_styles import Style, input_schema

__all__ = ("LenientServerMiddleware", "make_lenient")

_PATCHED = "__pydantic_lenient_patched__"
_ANNOTATED: Any = Annotated  # subscripted with run-time values below


def make_lenient(
    server: MCPServer,
    *,
    normalizer: Normalizer | None = None,
    style: Style = "type-array",
    lenient_parameters: bool = False,
) -> MCPServer:
    """Make ``server``'s tools lenient end to end (see the module docs); returns the server.

    With ``lenient_parameters``, every tool's parameters also take their lenient form
    (`pydantic_lenient.lenient_model` of the argument model the SDK built), tools registered later
    included: ``int`` parameters take ``"100"`` without editing a single annotation.
    """
    middleware = LenientServerMiddleware(
        server, normalizer=normalizer, style=style, lenient_parameters=lenient_parameters
    )
    server.middleware.append(middleware)
    middleware.patch_tools()
    return server


class LenientServerMiddleware:
    """The server middleware `make_lenient` installs: it patches tools registered since the last
    message, and normalizes ``tools/call`` arguments when it has a normalizer."""

    def __init__(
        self,
        server: MCPServer,
        *,
        normalizer: Normalizer | None = None,
        style: Style = "type-array",
        lenient_parameters: bool = False,
    ):
        self.server = server
        self.normalizer = normalizer
        self.style: Style = style
        self.lenient_parameters = lenient_parameters

    def patch_tools(self) -> None:
        for tool in self.server._tool_manager.list_tools():
            metadata = tool.fn_metadata
            if getattr(metadata, _PATCHED, False):
                continue
            if self.lenient_parameters:
                object.__setattr__(metadata, "arg_model", lenient_model(metadata.arg_model))
            tool.parameters = input_schema(metadata.arg_model, style=self.style)
            # FuncMetadata is a pydantic model: set the override on the instance, past its __setattr__.
            object.__setattr__(metadata, "pre_parse_json", _pre_parse_keeping_accepted_strings(metadata))
            object.__setattr__(metadata, _PATCHED, True)
            if self.normalizer is not None:
                self.normalizer.register_tools([tool.name])  # its calls are counted under its name

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in ("tools/list", "tools/call"):
            self.patch_tools()
        if ctx.method == "tools/call" and self.normalizer is not None and isinstance(ctx.params, dict):
            name, arguments = ctx.params.get("name"), ctx.params.get("arguments")
            # Only calls to tools the server has: the SDK refuses the others, and they count nowhere.
            if isinstance(name, str) and isinstance(arguments, dict) and self.server._tool_manager.get_tool(name):
                try:
                    normalized = self.normalizer.apply(name, arguments).arguments
                except NormalizationConflict as error:
                    return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
                ctx = dataclasses.replace(ctx, params={**ctx.params, "arguments": normalized})
        return await call_next(ctx)


def _pre_parse_keeping_accepted_strings(metadata: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The SDK's pre-parse, except for strings the field accepts as they are."""
    sdk_pre_parse = type(metadata).pre_parse_json
    fields = {}
    for name, info in metadata.arg_model.model_fields.items():
        fields[name] = info
        if info.alias:
            fields[info.alias] = info
    adapters: dict[str, TypeAdapter[Any]] = {}

    def accepts(key: str, value: str) -> bool:
        info = fields.get(key)
        if info is None:
            return False
        if key not in adapters:
            # The field's FieldInfo in Annotated carries its metadata (constraints, lenient markers).
            adapters[key] = TypeAdapter(_ANNOTATED[info.annotation, info])
        try:
            adapters[key].validate_python(value)
        except ValidationError:
            return False
        return True

    def pre_parse_json(data: dict[str, Any]) -> dict[str, Any]:
        parsed: dict[str, Any] = sdk_pre_parse(metadata, data)
        for key, value in data.items():
            if isinstance(value, str) and parsed.get(key) is not value and accepts(key, value):
                parsed[key] = value
        return parsed

    return pre_parse_json
