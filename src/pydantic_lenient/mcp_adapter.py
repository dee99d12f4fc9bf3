"""Lenient tools on the official MCP Python SDK's ``MCPServer``.

    server = MCPServer("mail")
    server.tool()(search)
    make_lenient(server, normalizer=Normalizer.from_file("rules.json"))

`make_lenient` does this for every tool registered now or later:

* ``tools/list`` advertises each tool's input schema in a chosen style (default ``type-array``):
  the SDK's own schema, through the style stage (`pydantic_lenient.apply_style`).
* Each tool's arguments reach its fields as they were sent. The SDK's ``pre_parse_json`` parses
  JSON-looking strings for every field not typed exactly ``str``: it turns ``"null"`` into None
  and ``'["x"]'`` into a list (python-sdk #3055), before the field's own rules run. A lenient
  field (one whose annotation holds a lenient type, alone or in a union) now always receives the
  string as sent, so its limits, its ``"null"`` rule and its error type are those of
  ``model_validate``. Any other field keeps the SDK's pre-parse, except that a string the field
  accepts as it is stays a string.
* With ``lenient_parameters=True``, every tool's parameters are made lenient as
  `pydantic_lenient.lenient_tool` would make them: ``int`` takes ``"100"``, ``bool`` ``"false"``.
* With a ``normalizer``, a server middleware normalizes ``tools/call`` arguments before the SDK
  validates them (feeding the normalizer's stats); a conflict is a tool error the model can read.
  Only calls to the server's tools are normalized, and each tool is registered with the normalizer
  (`Normalizer.register_tools`), so its calls are counted under its name.

The SDK's public hooks carry all of it: server middleware, the ``Tool.fn_metadata`` field and its
``FuncMetadata.pre_parse_json`` method. The one private name, the server's tool manager, is read in
`_registered_tools` and `_has_tool` only. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import CallToolResult, TextContent
from pydantic import PrivateAttr, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ._annotations import is_lenient, split_annotated
from .json_values import AcceptJsonText, JsonText
from .lenient import lenient_model
from .normalizer import NormalizationConflict, Normalizer
from .schema_styles import Style, input_schema
from .targets import Target

__all__ = ("LenientServerMiddleware", "make_lenient")

_ANNOTATED: Any = Annotated  # subscripted with run-time values below


def make_lenient(
    server: MCPServer,
    *,
    normalizer: Normalizer | None = None,
    style: Style = "type-array",
    lenient_parameters: bool = False,
    target: Target = "mcp",
) -> MCPServer:
    """Make ``server``'s tools lenient end to end (see the module docs); returns the server.

    With ``lenient_parameters``, every tool's parameters also take their lenient form
    (`pydantic_lenient.lenient_model` of the argument model the SDK built), tools registered later
    included: ``int`` parameters take ``"100"`` without editing a single annotation.
    ``target`` (`pydantic_lenient.targets`) is the shape ``tools/list`` advertises: ``"mcp"``, or
    ``"mcp-draft-07"`` for hosts that validate with draft-07.

    >>> import asyncio
    >>> from mcp import Client
    >>> from mcp.server.mcpserver import MCPServer
    >>> from pydantic_lenient.mcp_adapter import make_lenient
    >>> server = MCPServer("mail")
    >>> @server.tool()
    ... def search(folder: str, limit: int = 10) -> str:
    ...     return f"{limit} from {folder}"
    >>> server = make_lenient(server, lenient_parameters=True)
    >>> async def ask() -> tuple[dict, str]:
    ...     async with Client(server) as client:
    ...         listed = await client.list_tools()
    ...         called = await client.call_tool("search", {"folder": "Dev", "limit": "5"})
    ...         return listed.tools[0].input_schema["properties"]["limit"], called.content[0].text
    >>> asyncio.run(ask())
    ({'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'default': 10, 'title': 'Limit'}, '5 from Dev')
    """
    middleware = LenientServerMiddleware(
        server, normalizer=normalizer, style=style, lenient_parameters=lenient_parameters, target=target
    )
    server.middleware.append(middleware)
    middleware.patch_tools()
    return server


# The SDK's only private name this adapter uses, the server's tool manager, is read here alone.
def _registered_tools(server: MCPServer) -> list[Tool]:
    """The server's tools, with the argument models it validates with."""
    return server._tool_manager.list_tools()


def _has_tool(server: MCPServer, name: str) -> bool:
    return server._tool_manager.get_tool(name) is not None


class LenientServerMiddleware:
    """The server middleware `make_lenient` installs: it patches tools registered since the last
    message, and normalizes ``tools/call`` arguments when it has a normalizer.

    >>> from mcp.server.mcpserver import MCPServer
    >>> from pydantic_lenient.mcp_adapter import make_lenient
    >>> server = make_lenient(MCPServer("mail"))
    >>> type(server.middleware[-1]).__name__
    'LenientServerMiddleware'
    """

    def __init__(
        self,
        server: MCPServer,
        *,
        normalizer: Normalizer | None = None,
        style: Style = "type-array",
        lenient_parameters: bool = False,
        target: Target = "mcp",
    ):
        self.server = server
        self.normalizer = normalizer
        self.style: Style = style
        self.lenient_parameters = lenient_parameters
        self.target: Target = target

    def patch_tools(self) -> None:
        for tool in _registered_tools(self.server):
            if isinstance(tool.fn_metadata, LenientFuncMetadata):
                continue
            metadata = LenientFuncMetadata.from_sdk(tool.fn_metadata)
            if self.lenient_parameters:
                metadata = LenientFuncMetadata.from_sdk(metadata, arg_model=lenient_model(metadata.arg_model))
                tool.parameters = metadata.arg_model.model_json_schema(by_alias=True)  # as the SDK writes it
            tool.parameters = input_schema(tool.parameters, style=self.style, target=self.target)
            tool.fn_metadata = metadata
            if self.normalizer is not None:
                self.normalizer.register_tools([tool.name])  # its calls are counted under its name

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in ("tools/list", "tools/call"):
            self.patch_tools()
        if ctx.method == "tools/call" and self.normalizer is not None and isinstance(ctx.params, dict):
            name, arguments = ctx.params.get("name"), ctx.params.get("arguments")
            # Only calls to tools the server has: the SDK refuses the others, and they count nowhere.
            if isinstance(name, str) and isinstance(arguments, dict) and _has_tool(self.server, name):
                try:
                    normalized = self.normalizer.apply(name, arguments).arguments
                except NormalizationConflict as error:
                    return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
                ctx = dataclasses.replace(ctx, params={**ctx.params, "arguments": normalized})
        return await call_next(ctx)


class LenientFuncMetadata(FuncMetadata):
    """The SDK's ``FuncMetadata`` with a pre-parse that hands lenient fields their value as sent."""

    _keys: dict[str, FieldInfo] = PrivateAttr(default_factory=dict)
    _lenient_keys: frozenset[str] = PrivateAttr(default=frozenset())
    _adapters: dict[str, TypeAdapter[Any]] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_sdk(cls, metadata: FuncMetadata, **changes: Any) -> LenientFuncMetadata:
        """``metadata`` with this pre-parse (and any fields in ``changes`` replaced)."""
        lenient = cls(**{name: getattr(metadata, name) for name in FuncMetadata.model_fields} | changes)
        for name, info in lenient.arg_model.model_fields.items():
            for key in {name, info.alias or name}:
                lenient._keys[key] = info
        lenient._lenient_keys = frozenset(key for key, info in lenient._keys.items() if _is_lenient_field(info))
        return lenient

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        for key, value in data.items():
            kept = isinstance(value, str) and parsed.get(key) is not value
            if kept and (key in self._lenient_keys or self._accepts_as_sent(key, value)):
                parsed[key] = value
        return parsed

    def _accepts_as_sent(self, key: str, value: str) -> bool:
        info = self._keys.get(key)
        if info is None:
            return False
        if key not in self._adapters:
            # The field's FieldInfo in Annotated carries its metadata (constraints, markers).
            self._adapters[key] = TypeAdapter(_ANNOTATED[info.annotation, info])
        try:
            self._adapters[key].validate_python(value)
        except ValidationError:
            return False
        return True


def _is_lenient_field(info: FieldInfo) -> bool:
    """Whether a lenient type makes up the field, alone or as a member of its union."""
    return _has_lenient_marker(tuple(info.metadata)) or _holds_lenient_type(info.annotation)


def _has_lenient_marker(metadata: tuple[Any, ...]) -> bool:
    return is_lenient(metadata) or any(isinstance(marker, AcceptJsonText) for marker in metadata)


def _holds_lenient_type(annotation: Any) -> bool:
    base, metadata = split_annotated(annotation)
    if _has_lenient_marker(metadata) or base is JsonText:
        return True
    if typing.get_origin(base) in (typing.Union, types.UnionType):
        return any(_holds_lenient_type(member) for member in typing.get_args(base))
    return False
