"""Spans and metrics by OpenTelemetry's GenAI and MCP conventions, read back with the SDK's in-memory
span exporter and metric reader: every attribute, every event, and never a raw value."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pydantic_lenient.normalizer.engine import Normalizer
from pydantic_lenient.observe.clients import Client
from pydantic_lenient.observe.outcomes import CallOutcome
from pydantic_lenient.observe.recorder import OutcomeRecorder
from tests.sdks import require

require("opentelemetry.sdk")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from pydantic_lenient.observe.otel import (  # noqa: E402
    OTHER,
    PIPE,
    TCP,
    LenientTelemetry,
    ProxyTracer,
    tool_call_attributes,
)

SECRET = "9\u0661\u0662 secret-value"  # a raw value that must never reach telemetry
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Exported:
    """One telemetry's providers, with what they exported."""

    def __init__(self, max_names: int = 200) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.telemetry = LenientTelemetry(
            self.tracer_provider, MeterProvider(metric_readers=[self.reader]), max_names=max_names
        )

    def points(self) -> dict[str, dict[frozenset[tuple[str, Any]], Any]]:
        """Each metric's points by attributes: a counter's value, a histogram's (count, sum)."""
        found: dict[str, dict[frozenset[tuple[str, Any]], Any]] = {}
        data: Any = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points = found.setdefault(metric.name, {})
                    for point in metric.data.data_points:
                        key = frozenset(point.attributes.items())
                        points[key] = (point.count, point.sum) if hasattr(point, "bucket_counts") else point.value
        return found

    def units(self) -> dict[str, str]:
        data: Any = self.reader.get_metrics_data()
        return {
            metric.name: metric.unit
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }


def _no_raw_values(spans: Any, exported: Exported) -> None:
    text = json.dumps([json.loads(span.to_json()) for span in spans]) + repr(exported.points())
    assert "secret-value" not in text
    assert "secret" not in text


def test_a_2026_session_span_carries_the_protocol_version_its_requests_name() -> None:
    """At 2026-07-28 there is no ``initialize``: the version is the one each request's ``_meta`` names."""
    exported = Exported()
    relay = require("pydantic_lenient.proxy.relay")._Relay(
        "type-array", RULES, None, None, ProxyTracer(exported.telemetry)
    )
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search", "inputSchema": SCHEMA}]}}
    relay.from_client(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}).encode()
    )
    relay.from_upstream(json.dumps(listing).encode())
    call = {"name": "search", "arguments": {"limit": 1}, "_meta": meta}
    relay.from_client(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}).encode())
    relay.from_upstream(b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
    spans = exported.spans.get_finished_spans()
    assert spans
    assert all(
        span.attributes is not None and span.attributes["mcp.protocol.version"] == "2026-07-28" for span in spans
    )


def _events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(event.name, dict(event.attributes or {})) for event in span.events]


SCHEMA = {
    "type": "object",
    "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}},
    "required": ["limit"],
}
RULES = Normalizer.from_json(
    json.dumps([{"id": "search-q", "tools": ["search"], "type": "param_alias", "from": "q", "to": "query"}])
)


def _relay(exported: Exported, tracer: ProxyTracer | None = None) -> Any:
    relay_module = require("pydantic_lenient.proxy.relay")
    relay = relay_module._Relay("type-array", RULES, None, None, tracer or ProxyTracer(exported.telemetry))
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search", "inputSchema": SCHEMA}]}}
    relay.from_client(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    relay.from_upstream(json.dumps(listing).encode())
    return relay


def _call(relay: Any, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments, "_meta": {"traceparent": TRACEPARENT, "progressToken": 7}}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    forwarded: dict[str, Any] = json.loads(relay.from_client(json.dumps(message).encode()).upstream)
    return forwarded


def test_a_proxied_call_is_a_server_span_and_a_client_span_continuing_the_hosts_trace() -> None:
    exported = Exported()
    relay = _relay(exported)
    forwarded = _call(relay, 2, "search", {"limit": "100", "q": SECRET})
    assert forwarded["params"]["arguments"] == {"limit": 100, "query": SECRET}
    relay.from_upstream(b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
    client, server = exported.spans.get_finished_spans()
    # The host's context is continued; the upstream gets the client span's, other _meta kept.
    assert server.parent is not None
    assert server.parent.span_id == 0x00F067AA0BA902B7
    assert server.context.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736
    assert client.parent is not None
    assert client.parent.span_id == server.context.span_id
    meta = forwarded["params"]["_meta"]
    assert meta["progressToken"] == 7
    assert meta["traceparent"] == f"00-{client.context.trace_id:032x}-{client.context.span_id:016x}-01"
    assert (server.name, server.kind, client.name, client.kind) == (
        "tools/call search",
        SpanKind.SERVER,
        "tools/call search",
        SpanKind.CLIENT,
    )
    common = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "jsonrpc.request.id": "2",
        "network.transport": "pipe",
    }
    assert dict(client.attributes or {}) == common
    assert dict(server.attributes or {}) == {**common, "pydantic_lenient.call.status": "ok"}
    assert server.status.status_code == StatusCode.UNSET
    assert _events(server) == [
        (
            "pydantic_lenient.normalization",
            {
                "pydantic_lenient.rule.id": "search-q",
                "pydantic_lenient.rule.type": "param_alias",
                "pydantic_lenient.json_pointer": "/q",
            },
        ),
        (
            "pydantic_lenient.repair",
            {"pydantic_lenient.repair.kind": "string_to_number", "pydantic_lenient.json_pointer": "/limit"},
        ),
    ]
    points = exported.points()
    metric = {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    [(key, (count, seconds))] = points["mcp.client.operation.duration"].items()
    assert dict(key) == metric
    assert count == 1
    assert 0 <= seconds < 5
    [key] = points["mcp.server.operation.duration"]
    assert dict(key) == {**metric, "pydantic_lenient.call.status": "ok"}
    assert points["pydantic_lenient.normalizations"] == {
        frozenset({("gen_ai.tool.name", "search"), ("pydantic_lenient.rule.id", "search-q")}): 1
    }
    assert points["pydantic_lenient.repairs"] == {
        frozenset({("gen_ai.tool.name", "search"), ("pydantic_lenient.repair.kind", "string_to_number")}): 1
    }
    assert exported.units()["mcp.server.operation.duration"] == "s"
    _no_raw_values([client, server], exported)


@pytest.mark.parametrize(("host", "upstream"), [(PIPE, TCP), (PIPE, PIPE), (TCP, TCP)])
def test_each_span_says_the_transport_of_its_own_side(host: str, upstream: str) -> None:
    """``network.transport``: the server span's is the host side's, the client span's the upstream
    transport's (``tcp`` to an upstream over Streamable HTTP, ``pipe`` to a child process)."""
    exported = Exported()
    relay = _relay(exported, ProxyTracer(exported.telemetry, host_transport=host, upstream_transport=upstream))
    _call(relay, 5, "search", {"limit": 1})
    relay.from_upstream(b'{"jsonrpc":"2.0","id":5,"result":{"content":[]}}')
    client, server = exported.spans.get_finished_spans()
    assert (client.kind, server.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert dict(client.attributes or {})["network.transport"] == upstream
    assert dict(server.attributes or {})["network.transport"] == host
    # Apart from the transport (and the status, known at the end), both spans carry the one set of attributes.
    expected = tool_call_attributes("search", request_id=5)
    assert {
        key: value for key, value in dict(client.attributes or {}).items() if key != "network.transport"
    } == expected
    server_rest = {key: value for key, value in dict(server.attributes or {}).items() if key != "network.transport"}
    assert server_rest == {**expected, "pydantic_lenient.call.status": "ok"}


@given(
    tool=st.text(min_size=1, max_size=20),
    request_id=st.one_of(st.none(), st.integers(), st.text(max_size=10)),
    transport=st.sampled_from([None, PIPE, TCP]),
    version=st.one_of(st.none(), st.just(""), st.just("2025-06-18")),
    status=st.sampled_from([None, "ok", "refused", "error"]),
    error_type=st.sampled_from([None, "tool_error", "-32602"]),
)
@settings(max_examples=200, deadline=None)
def test_tool_call_attributes_hold_what_was_given_and_nothing_else(
    tool: str,
    request_id: Any,
    transport: Optional[str],
    version: Optional[str],
    status: Optional[str],
    error_type: Optional[str],
) -> None:
    attributes = tool_call_attributes(
        tool, request_id=request_id, transport=transport, protocol_version=version, status=status, error_type=error_type
    )
    given_ones = {
        "jsonrpc.request.id": None if request_id is None else str(request_id),
        "network.transport": transport,
        "mcp.protocol.version": version or None,
        "pydantic_lenient.call.status": status,
        "error.type": error_type,
    }
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        **{key: value for key, value in given_ones.items() if value is not None},
    }
    assert all(isinstance(value, str) for value in attributes.values())  # OpenTelemetry attribute values


def test_a_refused_call_names_its_fields_and_its_unknown_arguments_never_their_values() -> None:
    exported = Exported()
    relay = _relay(exported)
    _call(relay, 3, "search", {"limit": SECRET, "invented_name": SECRET})
    relay.from_upstream(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}')
    _, server = exported.spans.get_finished_spans()
    assert server.status.status_code == StatusCode.ERROR
    assert server.status.description == "Invalid params"
    attributes = dict(server.attributes or {})
    assert (attributes["error.type"], attributes["rpc.response.status_code"]) == ("-32602", "-32602")
    assert attributes["pydantic_lenient.call.status"] == "refused"
    events = _events(server)
    assert ("pydantic_lenient.unknown_argument", {"pydantic_lenient.argument.name": "invented_name"}) in events
    refusals = [attributes for name, attributes in events if name == "pydantic_lenient.refusal"]
    assert {(event["pydantic_lenient.field"], event["pydantic_lenient.error.type"]) for event in refusals} == {
        ("limit", "int_type"),
        (OTHER, "unknown_parameter"),
    }
    points = exported.points()
    assert points["pydantic_lenient.unknown_arguments"] == {frozenset({("gen_ai.tool.name", "search")}): 1}
    fields = {dict(key)["pydantic_lenient.field"] for key in points["pydantic_lenient.refusals"]}
    assert fields == {"limit", OTHER}  # the invented name is no metric attribute
    [key] = points["mcp.server.operation.duration"]
    assert dict(key)["error.type"] == "-32602"
    assert dict(key)["pydantic_lenient.call.status"] == "refused"
    _no_raw_values([server], exported)


def test_an_upstream_that_never_answers_ends_the_spans_as_errors() -> None:
    exported = Exported()
    relay = _relay(exported)
    _call(relay, 4, "search", {"limit": 1})
    relay.abandon("it exited")
    _, server = exported.spans.get_finished_spans()
    assert dict(server.attributes or {})["error.type"] == "unanswered"
    assert server.status.status_code == StatusCode.ERROR


def test_an_unlisted_tool_gets_no_target_and_no_series_of_its_own() -> None:
    exported = Exported()
    relay = _relay(exported)
    _call(relay, 5, "made_up_tool", {})
    relay.from_upstream(b'{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool"}}')
    _, server = exported.spans.get_finished_spans()
    assert server.name == "tools/call"
    [key] = exported.points()["mcp.server.operation.duration"]
    assert dict(key)["gen_ai.tool.name"] == OTHER


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=40))
def test_metric_attributes_stay_bounded_whatever_names_arrive(names: list[str]) -> None:
    exported = Exported(max_names=5)
    for name in names:
        outcome = CallOutcome(name, "refused", 1.0)
        exported.telemetry.call_ended(outcome, error=[_missing(name)], arguments={})
    points = exported.points()
    for metric in ("mcp.server.operation.duration", "pydantic_lenient.refusals"):
        tools = {dict(key)["gen_ai.tool.name"] for key in points[metric]}
        assert len(tools - {OTHER}) <= 5
    fields = {dict(key)["pydantic_lenient.field"] for key in points["pydantic_lenient.refusals"]}
    assert len(fields - {OTHER}) <= 5


def _missing(name: str) -> Any:
    return {"type": "missing", "loc": (name,), "msg": "Field required", "input": {}}


def test_without_a_recording_span_the_adapter_path_makes_its_own() -> None:
    exported = Exported()
    outcome = CallOutcome("search", "error", 250.0, norms=("search-q",))
    exported.telemetry.call_ended(outcome, rule_params={"search-q": ("param_alias", "q")})
    [span] = exported.spans.get_finished_spans()
    assert span.name == "tools/call search"
    assert span.kind == SpanKind.SERVER
    assert span.end_time is not None
    assert span.start_time is not None
    assert span.end_time - span.start_time >= 250_000_000
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "pydantic_lenient.call.status": "error",
        "error.type": "tool_error",
    }
    assert _events(span)[0][1]["pydantic_lenient.json_pointer"] == "/q"


# ---- the adapters: the SDK's own tools/call span, with this library's events added


def search(folder: str, limit: Optional[int] = None) -> str:
    """Search a folder."""
    return folder


@pytest.fixture(scope="module")
def global_spans() -> InMemorySpanExporter:
    """The global tracer provider the SDKs' own spans go to (it can be set once per process)."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    if not isinstance(trace.get_tracer_provider(), TracerProvider):  # pragma: no cover
        pytest.skip("another test set the global tracer provider")
    return spans


def test_the_official_sdks_span_carries_the_refusal_and_continues_the_hosts_trace(
    global_spans: InMemorySpanExporter,
) -> None:
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    exported = Exported()
    recorder = OutcomeRecorder(telemetry=exported.telemetry, flush_every=3600)
    server = require("mcp.server.mcpserver").MCPServer("traced")
    server.tool()(search)
    make_lenient(server, recorder=recorder)
    host = trace.get_tracer("host")
    global_spans.clear()

    async def call() -> bool:
        async with mcp.Client(server) as client:
            with host.start_as_current_span("host call"):
                result = await client.call_tool("search", {"folder": "x", "limit": SECRET, "extra": SECRET})
                return bool(result.is_error)

    assert asyncio.run(call())
    recorder.close()
    spans = {span.name: span for span in global_spans.get_finished_spans()}
    server_span = spans["tools/call search"]
    assert server_span.kind == SpanKind.SERVER
    assert server_span.context.trace_id == spans["host call"].context.trace_id  # continued via params._meta
    attributes = dict(server_span.attributes or {})
    assert attributes["gen_ai.tool.name"] == "search"
    assert attributes["pydantic_lenient.call.status"] == "refused"
    events = _events(server_span)
    assert ("pydantic_lenient.unknown_argument", {"pydantic_lenient.argument.name": "extra"}) in events
    assert any(name == "pydantic_lenient.refusal" and e["pydantic_lenient.field"] == "limit" for name, e in events)
    assert exported.spans.get_finished_spans() == ()  # no second span for the same call
    [key] = exported.points()["mcp.server.operation.duration"]
    assert dict(key)["error.type"] == "tool_error"
    _no_raw_values([server_span], exported)


def test_fastmcps_span_carries_the_refusal(global_spans: InMemorySpanExporter) -> None:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    exported = Exported()
    recorder = OutcomeRecorder(telemetry=exported.telemetry, flush_every=3600)
    server = fastmcp.FastMCP("traced", middleware=[LenientMiddleware(recorder=recorder)], strict_input_validation=True)
    server.tool(search)
    global_spans.clear()

    async def call() -> bool:
        async with fastmcp.Client(server) as client:
            result = await client.call_tool("search", {"folder": "x", "limit": SECRET}, raise_on_error=False)
            return bool(result.is_error)

    assert asyncio.run(call())
    recorder.close()
    traced = [span for span in global_spans.get_finished_spans() if span.name == "tools/call search"]
    server_span = next(span for span in traced if span.kind == SpanKind.SERVER)
    events = _events(server_span)
    assert any(name == "pydantic_lenient.refusal" and e["pydantic_lenient.field"] == "limit" for name, e in events)
    # FastMCP's own span keeps the validation message (with the value) in its status and exception
    # event; what this library adds never holds it.
    ours = [(name, e) for name, e in events if name.startswith("pydantic_lenient.")]
    assert ours
    assert "secret" not in repr(ours) + repr(exported.points())


# ---- the command line: the standard OTEL_* variables


def test_the_environment_configures_exporters_the_standard_way() -> None:
    from pydantic_lenient.observe.otel_setup import TelemetryConfigError, telemetry_from_environment

    assert telemetry_from_environment({"OTEL_SERVICE_NAME": "x"}) is None  # no exporter asked for
    assert telemetry_from_environment({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}) is None
    with pytest.raises(TelemetryConfigError, match="otlp, console or none"):
        telemetry_from_environment({"OTEL_TRACES_EXPORTER": "zipkin"})
    with pytest.raises(TelemetryConfigError, match="http/protobuf or grpc"):
        telemetry_from_environment({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"})
    setup = telemetry_from_environment({"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"})
    assert setup is not None
    assert isinstance(setup.telemetry, LenientTelemetry)
    setup.shutdown()


def test_a_proxied_span_carries_the_protocol_version_the_session_speaks() -> None:
    """``mcp.protocol.version`` comes from the upstream's answer to ``initialize``."""
    exported = Exported()
    relay = require("pydantic_lenient.proxy.relay")._Relay(
        "type-array", RULES, None, None, ProxyTracer(exported.telemetry)
    )
    relay.from_client(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n')
    relay.from_upstream(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}')
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search", "inputSchema": SCHEMA}]}}
    relay.from_client(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    relay.from_upstream(json.dumps(listing).encode())
    _call(relay, 2, "search", {"limit": 1})
    relay.from_upstream(b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
    spans = exported.spans.get_finished_spans()
    assert spans
    assert all(
        span.attributes is not None and span.attributes["mcp.protocol.version"] == "2025-06-18" for span in spans
    )


# ---- which client sent the call


CURSOR_META = {"io.modelcontextprotocol/clientInfo": {"name": "cursor-vscode", "version": "1.7.2"}}


def test_the_adapter_span_names_its_client_and_the_metrics_only_its_host() -> None:
    exported = Exported()
    client = Client("cursor-vscode", "1.7.2")
    exported.telemetry.call_ended(CallOutcome("search", "refused", 1.0, client=client), error=[_missing("limit")])
    invented = Client("my-own-agent " + SECRET, "0")
    exported.telemetry.call_ended(CallOutcome("search", "ok", 1.0, client=invented))
    first, second = exported.spans.get_finished_spans()
    assert {key: value for key, value in (first.attributes or {}).items() if "client" in key} == {
        "pydantic_lenient.client.name": "cursor-vscode",
        "pydantic_lenient.client.version": "1.7.2",
        "pydantic_lenient.client.host": "cursor",
    }
    assert (second.attributes or {})["pydantic_lenient.client.host"] == OTHER
    points = exported.points()
    hosts = {dict(key).get("pydantic_lenient.client.host") for key in points["mcp.server.operation.duration"]}
    assert hosts == {"cursor", OTHER}  # never the name a client invented
    assert {dict(key).get("pydantic_lenient.client.host") for key in points["pydantic_lenient.refusals"]} == {"cursor"}
    assert "my-own-agent" not in repr(points)


def test_a_proxied_call_names_the_client_of_its_initialize_or_of_its_meta() -> None:
    exported = Exported()
    relay = _relay(exported)
    initialize = {"protocolVersion": "2025-11-25", "clientInfo": {"name": "claude-code", "version": "2.1.0"}}
    relay.from_client(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}).encode())
    _call(relay, 2, "search", {"limit": "100"})
    relay.from_upstream(b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
    # At protocol 2026-07-28 each request names its client in _meta.
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    params = {"name": "search", "arguments": {"limit": 1}, "_meta": CURSOR_META}
    relay.from_client(json.dumps({**message, "params": params}).encode())
    relay.from_upstream(b'{"jsonrpc":"2.0","id":3,"result":{"content":[]}}')
    spans = exported.spans.get_finished_spans()
    named = [
        (
            span.kind,
            (span.attributes or {}).get("pydantic_lenient.client.name"),
            (span.attributes or {}).get("pydantic_lenient.client.host"),
        )
        for span in spans
    ]
    assert named == [
        (SpanKind.CLIENT, "claude-code", "claude-code"),
        (SpanKind.SERVER, "claude-code", "claude-code"),
        (SpanKind.CLIENT, "cursor-vscode", "cursor"),
        (SpanKind.SERVER, "cursor-vscode", "cursor"),
    ]
    hosts = {
        dict(key).get("pydantic_lenient.client.host") for key in exported.points()["mcp.client.operation.duration"]
    }
    assert hosts == {"claude-code", "cursor"}
