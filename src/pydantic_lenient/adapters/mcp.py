"""Lenient tools on the official MCP Python SDK's ``MCPServer``.

    server = MCPServer("mail")
    server.tool()(search)
    make_lenient(server, normalizer=Normalizer.from_file("rules.json"))

`make_lenient` does this for every tool registered now or later, as it is registered, so an
in-process ``await server.list_tools()``, `pydantic_lenient.tool_catalog` of the server and a
client over any transport all see the same schemas:

* ``tools/list`` advertises each tool's input schema in a chosen style (default ``portable``):
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
* With a ``log_dir`` (or an `OutcomeRecorder` as ``recorder``), every ``tools/call`` is recorded:
  ok, refused by validation (each field's error type and value shape), or failed in the tool, with
  its duration and the normalizations applied (`pydantic_lenient.observe.recorder`). An argument
  name the tool does not declare is recorded in every case, with the declared name it is near;
  the SDK still decides whether it is refused or ignored.

The SDK's public hooks carry all of it: server middleware, the ``Tool.fn_metadata`` field and its
``FuncMetadata.pre_parse_json`` method. The one private name, the server's tool manager, is read in
`_registered_tools`, `_tool` and `_patch_on_registration` only. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import time
import types
import typing
from contextvars import ContextVar
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import CallToolResult, TextContent
from pydantic import PrivateAttr, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from pydantic_lenient.hosts import arguments_as_meant
from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer
from pydantic_lenient.observe.clients import Client, client_from_info, client_of_call
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, FieldFailure, unknown_parameters
from pydantic_lenient.observe.outcomes import Status
from pydantic_lenient.observe.recorder import OutcomeRecorder, adapter_recorder
from pydantic_lenient.schema.styles import DEFAULT_STYLE, Style
from pydantic_lenient.schema.targets import Target, input_schema
from pydantic_lenient.types.annotations import is_lenient, split_annotated
from pydantic_lenient.types.json_values import AcceptJsonText, JsonText
from pydantic_lenient.types.mapping import lenient_model
from pydantic_lenient.types.portable_rules import Rendering, rendering

__all__ = ("LenientServerMiddleware", "make_lenient")

_LOG = logging.getLogger("pydantic_lenient.adapters")

_ANNOTATED: Any = Annotated  # subscripted with run-time values below


@dataclasses.dataclass(slots=True)
class _Refusal:
    """Where a tool's argument validation leaves its error, for the middleware recording the call."""

    error: ValidationError | None = None
    metadata: LenientFuncMetadata | None = None


# Set by the middleware around a recorded call; the SDK validates inside it, in the same task.
_REFUSAL: ContextVar[_Refusal | None] = ContextVar("pydantic_lenient_refusal", default=None)


def make_lenient(
    server: MCPServer,
    *,
    normalizer: Normalizer | None = None,
    style: Style = DEFAULT_STYLE,
    lenient_parameters: bool = False,
    target: Target = "mcp",
    log_dir: str | os.PathLike[str] | None = None,
    recorder: OutcomeRecorder | None = None,
) -> MCPServer:
    """Make ``server``'s tools lenient end to end (see the module docs); returns the server.

    With ``lenient_parameters``, every tool's parameters also take their lenient form
    (`pydantic_lenient.lenient_model` of the argument model the SDK built), tools registered later
    included: ``int`` parameters take ``"100"`` without editing a single annotation.
    ``target`` (`pydantic_lenient.schema.targets`) is the shape ``tools/list`` advertises: ``"mcp"``, or
    ``"mcp-draft-07"`` for hosts that validate with draft-07. ``log_dir`` records every call there
    (an `OutcomeRecorder` with the ``normalizer``, saving every 30 s and at exit); pass your own
    ``recorder`` instead for other settings.

    >>> import asyncio
    >>> from mcp import Client
    >>> from mcp.server.mcpserver import MCPServer
    >>> from pydantic_lenient.adapters.mcp import make_lenient
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
    ({'anyOf': [{'type': 'number'}, {'pattern': '^-?[0-9]+$', 'type': 'string'}], 'default': 10, 'title': 'Limit'},
     '5 from Dev')
    """
    middleware = LenientServerMiddleware(
        server,
        normalizer=normalizer,
        style=style,
        lenient_parameters=lenient_parameters,
        target=target,
        recorder=adapter_recorder(recorder, log_dir, normalizer),
    )
    server.middleware.append(middleware)
    middleware.patch_tools()
    _patch_on_registration(server, middleware)
    return server


# The SDK's only private name this adapter uses, the server's tool manager, is read here alone.
def _registered_tools(server: MCPServer) -> list[Tool]:
    """The server's tools, with the argument models it validates with."""
    return server._tool_manager.list_tools()


def _tool(server: MCPServer, name: str) -> Tool | None:
    return server._tool_manager.get_tool(name)


def _patch_on_registration(server: MCPServer, middleware: LenientServerMiddleware) -> None:
    """Patch each tool as the server registers it, not at the next message: the SDK lists tools
    (in process, or to a transport) without running middleware first."""
    manager = server._tool_manager
    register = manager.add_tool

    @functools.wraps(register)
    def add_tool(*args: Any, **kwargs: Any) -> Tool:
        tool = register(*args, **kwargs)
        middleware.patch_tools()
        return tool

    manager.add_tool = add_tool  # type: ignore[method-assign]  # on this server's manager only


def _metadata(server: MCPServer, name: str) -> LenientFuncMetadata | None:
    tool = _tool(server, name)
    return tool.fn_metadata if tool is not None and isinstance(tool.fn_metadata, LenientFuncMetadata) else None


class LenientServerMiddleware:
    """The server middleware `make_lenient` installs: it patches tools registered since the last
    message, and normalizes ``tools/call`` arguments when it has a normalizer.

    >>> from mcp.server.mcpserver import MCPServer
    >>> from pydantic_lenient.adapters.mcp import make_lenient
    >>> server = make_lenient(MCPServer("mail"))
    >>> type(server.middleware[-1]).__name__
    'LenientServerMiddleware'
    """

    def __init__(
        self,
        server: MCPServer,
        *,
        normalizer: Normalizer | None = None,
        style: Style = DEFAULT_STYLE,
        lenient_parameters: bool = False,
        target: Target = "mcp",
        recorder: OutcomeRecorder | None = None,
    ):
        self.server = server
        self.recorder = recorder
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
                try:
                    lenient = LenientFuncMetadata.from_sdk(metadata, arg_model=lenient_model(metadata.arg_model))
                    with rendering(Rendering.RESTYLED):  # restyled below, as input_schema does
                        parameters = lenient.arg_model.model_json_schema(by_alias=True)  # as the SDK writes it
                except Exception as error:  # a way in never makes a tool worse than plain: this one stays plain
                    _LOG.warning("%s: left as written, its lenient form does not build: %s", tool.name, error)
                else:
                    metadata = lenient
                    # The lenient model takes JSON text exactly where its schema says; the SDK's
                    # pre-parse would also turn "null" into None where the schema refuses that text.
                    metadata.every_value_as_sent = True
                    tool.parameters = parameters
            tool.parameters = input_schema(tool.parameters, style=self.style, target=self.target)
            tool.fn_metadata = metadata
            if self.normalizer is not None:
                self.normalizer.register_tools([tool.name])  # its calls are counted under its name
            if self.recorder is not None:
                self.recorder.describe_tool(tool.name, metadata.arg_model)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in ("tools/list", "tools/call"):
            self.patch_tools()
        if ctx.method != "tools/call" or not isinstance(ctx.params, dict):
            return await call_next(ctx)
        params: dict[str, Any] = ctx.params
        name, arguments = params.get("name"), params.get("arguments")
        arguments = {} if arguments is None else arguments  # a call may leave out its arguments
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return await call_next(ctx)
        started = time.perf_counter()
        norms: tuple[str, ...] = ()
        filled = "" in arguments.values()  # what a host may have filled in (Cursor: `HostProfile.as_meant`)
        client = _client(ctx) if self.recorder is not None or filled else None
        tool = _tool(self.server, name) if filled or self.normalizer is not None else None
        if filled and tool is not None and client is not None:  # before renaming: a host fills in listed names
            meant = arguments_as_meant(client.name, tool.parameters, arguments)
            if meant is not arguments:
                arguments = meant
                params = {**params, "arguments": arguments}
                ctx = dataclasses.replace(ctx, params=params)
        # Only calls to tools the server has are normalized: the SDK refuses the others.
        if self.normalizer is not None and tool is not None:
            try:
                result = self.normalizer.apply(name, arguments)
            except NormalizationConflict as error:
                self._record(name, started, "refused", (NORMALIZATION_CONFLICT,), norms, client)
                return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
            if result.applied:
                arguments = result.arguments
                norms = tuple(entry["rule_id"] for entry in result.applied)
                params = {**params, "arguments": arguments}
                ctx = dataclasses.replace(ctx, params=params)
        if self.recorder is None:
            return await call_next(ctx)
        refusal = _Refusal()
        token = _REFUSAL.set(refusal)
        try:
            response = await call_next(ctx)
        except BaseException:
            self._record(name, started, "error", (), norms, client)
            raise
        finally:
            _REFUSAL.reset(token)
        duration_ms = (time.perf_counter() - started) * 1000
        metadata = _metadata(self.server, name)
        # Names the tool does not declare are recorded however the call ends; whether they are
        # refused or ignored stays the SDK's (and the tool's) own setting.
        unknown = unknown_parameters(arguments, metadata.parameter_names) if metadata is not None else ()
        if not _is_error(response):
            self.recorder.record(name, "ok", duration_ms, failures=unknown, norms=norms, client=client)
        elif (
            refusal.error is not None
            and refusal.metadata is not None
            and refusal.metadata is _metadata(self.server, name)
        ):
            # The SDK's own validation error for this tool (not one a tool met calling another in
            # process), kept as it raised it: a refused call is validated once.
            known = refusal.metadata.parameter_names
            refused = refusal.error.with_traceback(None)  # handled: its frames need not live until the flush
            self.recorder.record_refusal(name, duration_ms, refused, arguments, known=known, norms=norms, client=client)
        else:
            self.recorder.record(name, "error", duration_ms, failures=unknown, norms=norms, client=client)
        return response

    def _record(
        self,
        name: str,
        started: float,
        status: Status,
        failures: tuple[FieldFailure, ...],
        norms: tuple[str, ...],
        client: Client | None,
    ) -> None:
        if self.recorder is not None:
            duration_ms = (time.perf_counter() - started) * 1000
            self.recorder.record(name, status, duration_ms, failures=failures, norms=norms, client=client)


def _client(ctx: ServerRequestContext[Any, Any]) -> Client | None:
    """The client that sent the request: named in its ``_meta`` (protocol 2026-07-28), else at the
    session's ``initialize``."""
    initialize = getattr(ctx.session, "client_params", None)
    return client_of_call(ctx.params, client_from_info(getattr(initialize, "client_info", None)))


def _is_error(response: HandlerResult) -> bool:
    """Whether a ``tools/call`` result is a tool error (the SDK hands middleware its result dict)."""
    if isinstance(response, dict):
        return response.get("isError") is True
    return getattr(response, "is_error", False) is True


class LenientFuncMetadata(FuncMetadata):
    """The SDK's ``FuncMetadata`` with a pre-parse that hands lenient fields their value as sent."""

    _keys: dict[str, FieldInfo] = PrivateAttr(default_factory=dict)
    _lenient_keys: frozenset[str] = PrivateAttr(default=frozenset())
    _adapters: dict[str, TypeAdapter[Any]] = PrivateAttr(default_factory=dict)
    _parameter_names: frozenset[str] = PrivateAttr(default=frozenset())
    _every_value_as_sent: bool = PrivateAttr(default=False)

    @property
    def every_value_as_sent(self) -> bool:
        """Whether every argument reaches validation as sent (no pre-parse of JSON-looking text)."""
        return self._every_value_as_sent

    @every_value_as_sent.setter
    def every_value_as_sent(self, value: bool) -> None:
        self._every_value_as_sent = value

    @property
    def parameter_names(self) -> frozenset[str]:
        """Every name a parameter may be sent under: its field name and its alias."""
        return self._parameter_names

    @classmethod
    def from_sdk(cls, metadata: FuncMetadata, **changes: Any) -> LenientFuncMetadata:
        """``metadata`` with this pre-parse (and any fields in ``changes`` replaced)."""
        lenient = cls(**{name: getattr(metadata, name) for name in FuncMetadata.model_fields} | changes)
        for name, info in lenient.arg_model.model_fields.items():
            for key in {name, info.alias or name}:
                lenient._keys[key] = info
        lenient._lenient_keys = frozenset(key for key, info in lenient._keys.items() if _is_lenient_field(info))
        lenient._parameter_names = frozenset(lenient._keys)
        return lenient

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as error:
            refusal = _REFUSAL.get()
            if refusal is not None:  # a recorded call: its middleware records the error as raised
                refusal.error, refusal.metadata = error, self
            raise

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        if self._every_value_as_sent:
            return dict(data)
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
