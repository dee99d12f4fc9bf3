"""Tool calls as OpenTelemetry spans and metrics, in the terms of OpenTelemetry's GenAI and MCP
semantic conventions (v1.44.0, `CONVENTIONS_VERSION`), with what only this library knows as span
events under its own ``pydantic_lenient.`` namespace.

    telemetry = LenientTelemetry()                        # the global providers, or pass your own
    recorder = OutcomeRecorder("logs/", telemetry=telemetry)
    make_lenient(server, recorder=recorder)               # or LenientMiddleware(recorder=recorder)

* In the adapters, the SDK already opens the ``tools/call {gen_ai.tool.name}`` server span (and
  continues the trace context in ``params._meta``): as the conventions ask, no second span is made;
  the recorder adds this library's events and attributes to that span, as the call ends. Without a
  recording span (SDK telemetry turned off) one is made, with the call's own start time.
* The proxy (`ProxyTracer`) opens a server span per ``tools/call`` as a child of the host's
  ``params._meta`` context, and a client span for the upstream, whose context it puts in the
  forwarded ``params._meta``: one trace from the host's call to the server's answer.
* Spans carry the client that sent the call, as its ``clientInfo`` named it (the conventions have no
  attribute for it): ``pydantic_lenient.client.name`` and ``pydantic_lenient.client.version``, cut and
  cleaned (`pydantic_lenient.observe.clients`), and ``pydantic_lenient.client.host``, the host
  profile that name belongs to or ``_OTHER``. Metrics carry only the host.
* Events: ``pydantic_lenient.normalization`` (rule, type, JSON pointer), ``pydantic_lenient.repair``
  (kind, JSON pointer), ``pydantic_lenient.refusal`` (field, error type, value shape) and
  ``pydantic_lenient.unknown_argument`` (the name). Never a value.
* Metrics: ``mcp.server.operation.duration`` and ``mcp.client.operation.duration`` (seconds), and
  the counters ``pydantic_lenient.normalizations``, ``.repairs``, ``.refusals`` and
  ``.unknown_arguments``. Their attributes are bounded: a tool the server does not have counts as
  ``_OTHER``, an unknown argument's name is never a metric attribute, a client is counted by its
  host profile's name (else ``_OTHER``), and each kind of name admits at most ``max_names`` distinct
  values, then ``_OTHER``.

Uses only OpenTelemetry's API; the application (or `pydantic_lenient.observe.otel_setup` for the
command line) chooses the SDK and exporters. Needs the ``otel`` extra.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode

from pydantic_lenient._version import __version__

from .clients import Client
from .failures import FieldFailure, field_failures
from .outcomes import CallOutcome
from .shapes import clean_name

__all__ = (
    "CONVENTIONS_VERSION",
    "DURATION_BUCKETS",
    "OTHER",
    "PIPE",
    "TCP",
    "LenientTelemetry",
    "ProxyTracer",
    "tool_call_attributes",
)

CONVENTIONS_VERSION = "1.44.0"
"""The OpenTelemetry semantic conventions followed (GenAI and MCP pages, status Development)."""

_SCHEMA_URL = f"https://opentelemetry.io/schemas/{CONVENTIONS_VERSION}"

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The bucket boundaries (seconds) the MCP conventions advise for the operation durations."""

OTHER = "_OTHER"
"""A metric attribute's value for a name past its bound (the conventions' fallback value)."""

# The conventions' attribute names.
_METHOD = "mcp.method.name"
_PROTOCOL_VERSION = "mcp.protocol.version"
_SESSION_ID = "mcp.session.id"
_REQUEST_ID = "jsonrpc.request.id"
_OPERATION = "gen_ai.operation.name"
_TOOL = "gen_ai.tool.name"
_ERROR_TYPE = "error.type"
_RPC_STATUS = "rpc.response.status_code"
_TRANSPORT = "network.transport"
_TOOLS_CALL = "tools/call"
_EXECUTE_TOOL = "execute_tool"
_TOOL_ERROR = "tool_error"

# This library's own names.
_STATUS = "pydantic_lenient.call.status"
_POINTER = "pydantic_lenient.json_pointer"
_RULE_ID = "pydantic_lenient.rule.id"
_RULE_TYPE = "pydantic_lenient.rule.type"
_REPAIR_KIND = "pydantic_lenient.repair.kind"
_FIELD = "pydantic_lenient.field"
_FIELD_ERROR = "pydantic_lenient.error.type"
_SHAPE = "pydantic_lenient.value.shape"
_ARGUMENT = "pydantic_lenient.argument.name"
_CLIENT_NAME = "pydantic_lenient.client.name"
_CLIENT_VERSION = "pydantic_lenient.client.version"
_CLIENT_HOST = "pydantic_lenient.client.host"
_UPSTREAM = "pydantic_lenient.upstream.name"
_UNKNOWN_ERRORS = frozenset({"unknown_parameter", "extra_forbidden"})

_OPEN_CALLS_LIMIT = 10_000  # proxy calls awaiting an answer, as the relay bounds its own

PIPE = "pipe"
"""``network.transport`` for a pipe: a stdio host or a child process upstream."""

TCP = "tcp"
"""``network.transport`` for a connection over the network: an upstream over Streamable HTTP."""


def tool_call_attributes(
    tool: str,
    *,
    request_id: Any = None,
    transport: str | None = None,
    protocol_version: str | None = None,
    status: str | None = None,
    error_type: str | None = None,
    rpc_status: str | None = None,
    client: Client | None = None,
    host: str | None = None,
    upstream: str | None = None,
) -> dict[str, Any]:
    """The attributes of a ``tools/call`` span or of its metrics, in the conventions' names: the
    method, the operation and ``tool`` always, each other one only when given. ``transport``: the
    ``network.transport`` of the side the span (or metric) measures, told by whoever knows it: the
    host side for a server span, the upstream transport for a client span. ``client``: who sent the
    call, for a span (its name, version and host); ``host``: only its host label, for a metric.
    ``upstream``: the server's name in the gateway's config (never its command or URL).

    >>> tool_call_attributes("search", request_id=7, transport=TCP)
    {'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', \
'jsonrpc.request.id': '7', 'network.transport': 'tcp'}
    >>> tool_call_attributes("search", client=Client("cursor-vscode", "1.0"))["pydantic_lenient.client.host"]
    'cursor'
    """
    attributes: dict[str, Any] = {_METHOD: _TOOLS_CALL, _OPERATION: _EXECUTE_TOOL, _TOOL: tool}
    if request_id is not None:
        attributes[_REQUEST_ID] = str(request_id)
    if transport is not None:
        attributes[_TRANSPORT] = transport
    if protocol_version:
        attributes[_PROTOCOL_VERSION] = protocol_version
    if status is not None:
        attributes[_STATUS] = status
    if error_type is not None:
        attributes[_ERROR_TYPE] = error_type
    if rpc_status is not None:
        attributes[_RPC_STATUS] = rpc_status
    if client is not None:
        attributes[_CLIENT_NAME] = client.name
        attributes[_CLIENT_VERSION] = client.version
        host = client.host
    if host is not None:
        attributes[_CLIENT_HOST] = host
    if upstream is not None:
        attributes[_UPSTREAM] = upstream
    return attributes


def _host(client: Client | None) -> dict[str, str]:
    """A metric's client attribute: the host label only, from a fixed set."""
    return {_CLIENT_HOST: client.host} if client is not None else {}


class _BoundedNames:
    """The first ``limit`` distinct names seen pass; later new ones become `OTHER`."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, name: str) -> str:
        if name in self._seen:
            return name
        with self._lock:
            if len(self._seen) >= self._limit:
                return OTHER
            self._seen.add(name)
        return name


def json_pointer(*tokens: str) -> str:
    """The JSON Pointer (RFC 6901) of ``tokens``.

    >>> json_pointer("a/b", "c~d")
    '/a~1b/c~0d'
    """
    return "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in tokens)


class LenientTelemetry:
    """Spans, span events and metrics for tool calls; ``tracer_provider`` and ``meter_provider``
    default to the global ones. Give it to an `OutcomeRecorder` (``telemetry=``) for the adapters,
    or to the proxy. ``max_names`` bounds each metric attribute's distinct values."""

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        *,
        max_names: int = 200,
    ) -> None:
        if max_names < 1:
            raise ValueError("max_names must be at least 1")
        self.tracer = trace.get_tracer("pydantic_lenient", __version__, tracer_provider, schema_url=_SCHEMA_URL)
        meter = metrics.get_meter("pydantic_lenient", __version__, meter_provider, schema_url=_SCHEMA_URL)
        self.server_duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="MCP request duration as observed on the receiver, until the result is sent.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.client_duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="MCP request duration as observed on the sender, until the response is received.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.normalizations = meter.create_counter(
            "pydantic_lenient.normalizations",
            unit="{normalization}",
            description="Normalizer changes, by tool and rule",
        )
        self.repairs = meter.create_counter(
            "pydantic_lenient.repairs", unit="{repair}", description="Argument repairs, by tool and kind"
        )
        self.refusals = meter.create_counter(
            "pydantic_lenient.refusals", unit="{field}", description="Refused fields, by tool, field and error type"
        )
        self.unknown_arguments = meter.create_counter(
            "pydantic_lenient.unknown_arguments", unit="{argument}", description="Argument names no parameter has"
        )
        self._tools = _BoundedNames(max_names)
        self._rules = _BoundedNames(max_names)
        self._fields = _BoundedNames(max_names)
        self._kinds = _BoundedNames(max_names)

    # ---- the adapters: told by the recorder as each call ends, in the call's own context

    def call_ended(
        self,
        outcome: CallOutcome,
        *,
        known_tool: bool = True,
        error: Any = None,
        arguments: Mapping[str, Any] | None = None,
        known: Collection[str] = (),
        rule_params: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        """Add ``outcome`` to the current span (the SDK's ``tools/call`` span), or to a span of its
        own when none records, and to the metrics. ``error``: the validation error of a refused
        call, read here into its fields; ``rule_params``: each rule id's type and parameter."""
        failures = outcome.failures
        if error is not None:
            failures = field_failures(error, arguments, known=known)
        span = trace.get_current_span()
        own = not span.is_recording()
        if own:
            started = time.time_ns() - int(outcome.duration_ms * 1_000_000)
            span = self.tracer.start_span(
                _span_name(outcome.tool, known_tool),
                kind=SpanKind.SERVER,
                start_time=started,
                attributes=tool_call_attributes(clean_name(outcome.tool)),
            )
        tool = self._tool(outcome.tool, known_tool)
        span.set_attribute(_STATUS, outcome.status)
        client = outcome.client
        if client is not None:
            span.set_attributes({_CLIENT_NAME: client.name, _CLIENT_VERSION: client.version, _CLIENT_HOST: client.host})
        host = _host(client)
        for rule in outcome.norms:
            kind = rule.removeprefix("repair:")
            if kind != rule:  # the proxy's repairs, recorded as norms without their pointers
                continue
            rule_type, param = (rule_params or {}).get(rule, ("", ""))
            self._normalized(span, tool, rule, rule_type, json_pointer(param) if param else "", host)
        self._refused(span, tool, failures, host)
        if own:
            if outcome.status != "ok":
                span.set_attribute(_ERROR_TYPE, _TOOL_ERROR)
                span.set_status(StatusCode.ERROR)
            span.end()
        error_type = _TOOL_ERROR if outcome.status != "ok" else None
        attributes = tool_call_attributes(
            tool, status=outcome.status, error_type=error_type, host=client.host if client else None
        )
        self.server_duration.record(outcome.duration_ms / 1000, attributes)

    # ---- shared by both ways in

    def _tool(self, name: str, known_tool: bool) -> str:
        return self._tools(clean_name(name)) if known_tool else OTHER

    def _normalized(
        self, span: Span, tool: str, rule: str, rule_type: str, pointer: str, host: Mapping[str, str]
    ) -> None:
        rule_id = clean_name(rule)
        span.add_event(
            "pydantic_lenient.normalization", {_RULE_ID: rule_id, _RULE_TYPE: clean_name(rule_type), _POINTER: pointer}
        )
        self.normalizations.add(1, {_TOOL: tool, _RULE_ID: self._rules(rule_id), **host})

    def _repaired(self, span: Span, tool: str, repairs: Iterable[Mapping[str, Any]], host: Mapping[str, str]) -> None:
        for repair in repairs:
            kind = clean_name(str(repair.get("kind", "")))
            span.add_event("pydantic_lenient.repair", {_REPAIR_KIND: kind, _POINTER: str(repair.get("path", ""))})
            self.repairs.add(1, {_TOOL: tool, _REPAIR_KIND: self._kinds(kind), **host})

    def _refused(self, span: Span, tool: str, failures: Iterable[FieldFailure], host: Mapping[str, str]) -> None:
        for failure in failures:
            field, error_type = clean_name(failure.param), clean_name(failure.error_type)
            if error_type in _UNKNOWN_ERRORS:
                span.add_event("pydantic_lenient.unknown_argument", {_ARGUMENT: field})
                self.unknown_arguments.add(1, {_TOOL: tool, **host})
                field = OTHER  # a name the client invented: never a metric attribute
            span.add_event(
                "pydantic_lenient.refusal", {_FIELD: field, _FIELD_ERROR: error_type, _SHAPE: clean_name(failure.shape)}
            )
            bounded = field if field == OTHER else self._fields(f"{tool}.{field}").removeprefix(f"{tool}.")
            self.refusals.add(1, {_TOOL: tool, _FIELD: bounded, _FIELD_ERROR: self._kinds(error_type), **host})


class _ProxyCall:
    """A ``tools/call`` the proxy has forwarded: its two spans, and what the metrics need."""

    __slots__ = ("client", "host", "known_tool", "server", "started", "tool")

    def __init__(self, server: Span, client: Span, tool: str, known_tool: bool, host: dict[str, str]) -> None:
        self.server, self.client, self.tool, self.known_tool = server, client, tool, known_tool
        self.host = host  # the metrics' client and upstream attributes
        self.started = time.perf_counter()


class ProxyTracer:
    """One proxy session's ``tools/call`` spans: the relay tells it of each call (`request`), of
    what it changed (`normalized`, `repaired`), of why it refused (`refused`), and of the answer
    (`answered`). ``host_transport`` and ``upstream_transport``: the ``network.transport`` of the
    server span (the host's side) and of the client span (the upstream's), as each side's
    transport says (`PIPE`, `TCP`). ``upstream_name``: the server's name in the gateway's config,
    on every span and metric of the session (one of a fixed set)."""

    def __init__(
        self,
        telemetry: LenientTelemetry,
        *,
        protocol_version: str | None = None,
        host_transport: str = PIPE,
        upstream_transport: str = PIPE,
        upstream_name: str | None = None,
    ) -> None:
        self.telemetry = telemetry
        self.protocol_version = protocol_version
        self.host_transport = host_transport
        self.upstream_transport = upstream_transport
        self.upstream_name = upstream_name
        self._upstream = {_UPSTREAM: upstream_name} if upstream_name is not None else {}
        self.known_tools: set[str] = set()
        self._calls: dict[Any, _ProxyCall] = {}

    def listed(self, tools: Iterable[str]) -> None:
        """The tools the upstream lists: only these are metric attribute values."""
        self.known_tools.update(tools)

    def request(self, request_id: Any, params: dict[str, Any], client: Client | None = None) -> dict[str, Any]:
        """Open the call's server span (continuing ``params._meta``) and client span, and return
        ``params`` with the client span's context in ``_meta`` for the upstream. ``client``: the
        client that sent the call, on both spans."""
        tool = params.get("name")
        if not isinstance(tool, str):
            return params
        meta = params.get("_meta")
        parent: Context | None = propagate.extract(meta) if isinstance(meta, Mapping) else None
        known_tool = tool in self.known_tools
        tracer = self.telemetry.tracer
        name = _span_name(tool, known_tool)
        server_attributes = self._attributes(tool, request_id, client=client)
        server = tracer.start_span(name, parent, kind=SpanKind.SERVER, attributes=server_attributes)
        upstream = tracer.start_span(
            name,
            trace.set_span_in_context(server),
            kind=SpanKind.CLIENT,
            attributes=self._attributes(tool, request_id, upstream=True, client=client),
        )
        if len(self._calls) >= _OPEN_CALLS_LIMIT:
            self._end(self._calls.pop(next(iter(self._calls))), None)
        self._calls[request_id] = _ProxyCall(server, upstream, tool, known_tool, {**_host(client), **self._upstream})
        carrier: dict[str, Any] = {key: value for key, value in (meta or {}).items() if key not in _TRACE_KEYS}
        propagate.inject(carrier, trace.set_span_in_context(upstream))
        return {**params, "_meta": carrier}

    def _attributes(
        self, tool: str, request_id: Any, *, upstream: bool = False, client: Client | None = None
    ) -> dict[str, Any]:
        transport = self.upstream_transport if upstream else self.host_transport
        return tool_call_attributes(
            clean_name(tool),
            request_id=request_id,
            transport=transport,
            protocol_version=self.protocol_version,
            client=client,
            upstream=self.upstream_name,
        )

    def normalized(self, request_id: Any, applied: Iterable[Mapping[str, Any]]) -> None:
        call = self._calls.get(request_id)
        if call is not None:
            tool = self.telemetry._tool(call.tool, call.known_tool)
            for change in applied:
                param = change.get("param")
                pointer = json_pointer(param) if isinstance(param, str) else ""
                self.telemetry._normalized(
                    call.server, tool, str(change.get("rule_id", "")), str(change.get("type", "")), pointer, call.host
                )

    def repaired(self, request_id: Any, repairs: Iterable[Mapping[str, Any]]) -> None:
        call = self._calls.get(request_id)
        if call is not None:
            tool = self.telemetry._tool(call.tool, call.known_tool)
            self.telemetry._repaired(call.server, tool, repairs, call.host)

    def refused(self, request_id: Any, failures: Iterable[FieldFailure]) -> None:
        call = self._calls.get(request_id)
        if call is not None:
            self.telemetry._refused(call.server, self.telemetry._tool(call.tool, call.known_tool), failures, call.host)

    def answered(self, request_id: Any, message: Mapping[str, Any] | None, status: str | None = None) -> None:
        """End the call's spans with the answer ``message`` (None: the upstream never answered)."""
        call = self._calls.pop(request_id, None)
        if call is not None:
            self._end(call, message, status)

    def _end(self, call: _ProxyCall, message: Mapping[str, Any] | None, status: str | None = None) -> None:
        error = message.get("error") if message is not None else None
        result = message.get("result") if message is not None else None
        error_type = rpc_status = description = None
        if isinstance(error, Mapping):
            error_type = rpc_status = str(error.get("code"))
            message_text = error.get("message")
            description = message_text if isinstance(message_text, str) else None
        elif message is None:
            error_type = "unanswered"
        elif isinstance(result, Mapping) and result.get("isError") is True:
            error_type = _TOOL_ERROR
        outcome = status or ("ok" if error_type is None else "error")
        seconds = time.perf_counter() - call.started
        ended = tool_call_attributes(
            self.telemetry._tool(call.tool, call.known_tool),
            protocol_version=self.protocol_version,
            error_type=error_type,
            rpc_status=rpc_status,
            host=call.host.get(_CLIENT_HOST),
            upstream=self.upstream_name,
        )
        for span in (call.client, call.server):
            span.set_attributes({key: ended[key] for key in (_ERROR_TYPE, _RPC_STATUS) if key in ended})
            if error_type is not None:
                span.set_status(StatusCode.ERROR, description)
        call.server.set_attribute(_STATUS, outcome)
        call.client.end()
        call.server.end()
        self.telemetry.client_duration.record(seconds, ended)
        self.telemetry.server_duration.record(seconds, {**ended, _STATUS: outcome})


_TRACE_KEYS = frozenset({"traceparent", "tracestate"})


def _span_name(tool: str, known_tool: bool) -> str:
    """``tools/call {gen_ai.tool.name}``, or ``tools/call`` for a tool the server does not have
    (a name a client invents is no low-cardinality target)."""
    return f"{_TOOLS_CALL} {clean_name(tool)}" if known_tool else _TOOLS_CALL
