"""Lenient tools on FastMCP: a middleware.

    server = FastMCP("mail", middleware=[LenientMiddleware(normalizer=Normalizer.from_file("rules.json"))])

* ``tools/list`` advertises each tool's input schema in a chosen style (default ``portable``):
  FastMCP's own schema, through the style stage (`pydantic_lenient.apply_style`), which reads the
  lenient types' widened forms back, so every style works on it, ``strict`` included; then for a
  ``target`` (`pydantic_lenient.schema.targets`; ``"mcp-draft-07"`` for draft-07 hosts).
* With ``lenient_parameters=True``, every function tool's parameters are made lenient as
  `pydantic_lenient.lenient_tool` would make them, tools registered later included.
* With a ``normalizer``, ``tools/call`` arguments are normalized before FastMCP validates them
  (feeding the normalizer's stats); a conflict is a tool error the model can read. Only calls to
  tools the server has are normalized; each is registered with the normalizer
  (`Normalizer.register_tools`), so its calls are counted under its name.
* With a ``log_dir`` (or an `OutcomeRecorder` as ``recorder``), every ``tools/call`` is recorded:
  ok, refused by validation (each field's error type and value shape), or failed in the tool, with
  its duration and the normalizations applied (`pydantic_lenient.observe.recorder`). An argument
  name the tool does not declare is recorded in every case, with the declared name it is near;
  FastMCP still decides whether it is refused or ignored.

FastMCP validates arguments against the function itself, with no pre-parsing, so lenient
parameters need nothing more: they stay lenient even under ``strict_input_validation=True``.
Needs the ``fastmcp`` extra.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import weakref
from collections.abc import Sequence
from typing import Any

import mcp.types as mt
from fastmcp.exceptions import ToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.tools.function_parsing import ParsedFunction
from pydantic import ValidationError

from pydantic_lenient.hosts import profile_for_client
from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer
from pydantic_lenient.observe.clients import Client, client_from_info, client_of_call
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, unknown_parameters
from pydantic_lenient.observe.outcomes import Status
from pydantic_lenient.observe.recorder import OutcomeRecorder, adapter_recorder
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.styles import DEFAULT_STYLE, Style
from pydantic_lenient.schema.targets import Target, input_schema
from pydantic_lenient.types.portable_rules import Rendering, rendering
from pydantic_lenient.types.tools import lenient_tool

__all__ = ("LenientMiddleware",)

_PATCHED = "__pydantic_lenient_patched__"
_LEFT_PLAIN: weakref.WeakSet[Any] = weakref.WeakSet()  # functions whose lenient form did not build
_LOG = logging.getLogger("pydantic_lenient.adapters")


class LenientMiddleware(Middleware):
    """Normalizes ``tools/call`` arguments (with a ``normalizer``) and restyles ``tools/list``.

    >>> import asyncio
    >>> from fastmcp import Client, FastMCP
    >>> from pydantic_lenient import Normalizer, StrictBoolish
    >>> from pydantic_lenient.adapters.fastmcp import LenientMiddleware
    >>> rename = {"id": "dry", "tools": ["*"], "type": "param_alias", "from": "dryRun", "to": "dry_run"}
    >>> server = FastMCP("files", middleware=[LenientMiddleware(Normalizer([rename]))])
    >>> @server.tool
    ... def delete_file(path: str, dry_run: StrictBoolish = True) -> str:
    ...     return f"{'would delete' if dry_run else 'deleted'} {path}"
    >>> async def ask() -> str:
    ...     async with Client(server) as client:
    ...         return (await client.call_tool("delete_file", {"path": "a.txt", "dryRun": "FALSE"})).data
    >>> asyncio.run(ask())
    'deleted a.txt'
    """

    def __init__(
        self,
        normalizer: Normalizer | None = None,
        *,
        style: Style = DEFAULT_STYLE,
        lenient_parameters: bool = False,
        target: Target = "mcp",
        log_dir: str | os.PathLike[str] | None = None,
        recorder: OutcomeRecorder | None = None,
    ) -> None:
        """``log_dir`` records every call there (an `OutcomeRecorder` with the ``normalizer``,
        saving every 30 s and at exit); pass your own ``recorder`` instead for other settings."""
        self.recorder = adapter_recorder(recorder, log_dir, normalizer)
        self._described: set[str] = set()
        self._parameters: dict[str, frozenset[str]] = {}  # each described tool's parameter names
        self.normalizer = normalizer
        self.style: Style = style
        self.lenient_parameters = lenient_parameters
        self.target: Target = target

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        started = time.perf_counter()
        params = context.message
        norms: tuple[str, ...] = ()
        sent = params.arguments or {}
        filled = "" in sent.values()  # what a host may have filled in (Cursor: `HostProfile.as_meant`)
        client = _client(context) if self.recorder is not None or filled else None
        host = profile_for_client(client.name) if filled and client is not None else None
        # Calls to names the server does not have are left alone: FastMCP refuses them.
        wanted = self.lenient_parameters or self.normalizer is not None or host is not None
        tool = await _server_tool(context, params.name) if wanted else None
        if tool is not None and self.lenient_parameters:
            _make_parameters_lenient(tool)
        if host is not None and tool is not None:  # before renaming: a host fills in listed names
            meant = host.as_meant(tool.parameters, sent)
            if meant is not sent:
                params = params.model_copy(update={"arguments": meant})
                context = context.copy(message=params)
        if tool is not None and self.normalizer is not None:
            self.normalizer.register_tools([params.name])  # its calls are counted under its name
            try:
                result = self.normalizer.apply(params.name, params.arguments or {})
            except NormalizationConflict as error:
                if self.recorder is not None:
                    failures = (NORMALIZATION_CONFLICT,)
                    self.recorder.record(params.name, "refused", _since(started), failures=failures, client=client)
                raise ToolError(str(error)) from None
            if result.applied:
                norms = tuple(entry["rule_id"] for entry in result.applied)
                context = context.copy(message=params.model_copy(update={"arguments": result.arguments}))
        if self.recorder is None:
            return await call_next(context)
        if params.name not in self._described:
            await self._describe(context, params.name)
        arguments = context.message.arguments or {}
        known = self._parameters.get(params.name, ())
        # Names the tool does not declare are recorded however the call ends; whether they are
        # refused or ignored stays FastMCP's (and the tool's) own setting.
        unknown = unknown_parameters(arguments, known) if known else ()
        try:
            response = await call_next(context)
        except BaseException as error:
            refusal = _validation_error(error)
            if refusal is not None:  # its field failures are worked out off the call path
                self.recorder.record_refusal(
                    params.name, _since(started), refusal, arguments, known=known, norms=norms, client=client
                )
            else:
                status: Status = "refused" if isinstance(error, FastMCPValidationError) else "error"
                self.recorder.record(params.name, status, _since(started), failures=unknown, norms=norms, client=client)
            raise
        self.recorder.record(params.name, "ok", _since(started), failures=unknown, norms=norms, client=client)
        return response

    async def _describe(self, context: MiddlewareContext[Any], name: str) -> None:
        """Tell the recorder the tool's parameters, once, for annotation suggestions."""
        assert self.recorder is not None
        server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
        tool = await server.get_tool(name) if server is not None else None
        if tool is None:
            return  # an unknown name: not remembered, so names sent by clients cannot pile up here
        self._described.add(name)
        self._parameters[name] = frozenset(tool.parameters.get("properties", {}))
        function = getattr(tool, "fn", None)
        if function is not None:
            model = model_from_function(function, keep=tool.parameters.get("properties", {}))
            self.recorder.describe_tool(name, model)

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        if self.lenient_parameters:
            for tool in tools:
                _make_parameters_lenient(tool)
        return [_restyled(tool, self.style, self.target) for tool in tools]


async def _server_tool(context: MiddlewareContext[Any], name: str) -> Tool | None:
    """The server's tool called ``name`` (one it would run), or None."""
    server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
    return await server.get_tool(name) if server is not None else None


def _validation_error(error: BaseException) -> ValidationError | None:
    """The pydantic error behind a refusal: FastMCP raises it, or its own error caused by it."""
    for _ in range(5):  # a short chain: FastMCP wraps once
        if isinstance(error, ValidationError):
            return error
        if error.__cause__ is None:
            return None
        error = error.__cause__
    return None


def _client(context: MiddlewareContext[mt.CallToolRequestParams]) -> Client | None:
    """The client that sent the call: named in its ``_meta`` (protocol 2026-07-28), else at the
    session's ``initialize``."""
    initialize = None
    if context.fastmcp_context is not None:
        with contextlib.suppress(RuntimeError):  # no session: a call made in process
            initialize = context.fastmcp_context.session.client_params
    meta = context.message.meta
    return client_of_call({"_meta": meta}, client_from_info(getattr(initialize, "client_info", None)))


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _make_parameters_lenient(tool: Tool) -> None:
    """Give a function tool (once) the `lenient_tool` form of its function, and the schema FastMCP
    builds from that. The tool object is the one the server keeps, so later calls find it done."""
    function = getattr(tool, "fn", None)
    if function is None or getattr(function, _PATCHED, False) or function in _LEFT_PLAIN:
        return
    try:
        lenient = lenient_tool(function)
        with rendering(Rendering.RESTYLED):  # restyled when listed (`_restyled`), as input_schema does
            parameters = ParsedFunction.from_function(lenient).input_schema
    except Exception as error:  # a way in never makes a tool worse than plain: this one stays plain
        _LEFT_PLAIN.add(function)
        _LOG.warning("%s: left as written, its lenient form does not build: %s", tool.name, error)
        return
    setattr(lenient, _PATCHED, True)
    # Tools are pydantic models; these fields are set in place, past any assignment validation.
    object.__setattr__(tool, "fn", lenient)
    object.__setattr__(tool, "parameters", parameters)


def _restyled(tool: Tool, style: Style, target: Target) -> Any:
    return tool.model_copy(update={"parameters": input_schema(tool.parameters, style=style, target=target)})
