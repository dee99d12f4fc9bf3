"""Telemetry for a fleet, end to end: two uvicorn workers export over OTLP/HTTP, as
``examples/gateway/otel-collector.yaml`` receives it, and record outcomes in per-replica
directories that the dashboard reads as one. And a handshake-era client's name, carried by its
session id, reaches every replica.

The OpenTelemetry Collector is a Go binary that no Python or npm registry ships, so a loopback
OTLP/HTTP receiver stands in for its ``otlp`` receiver: the same wire (protobuf
``ExportTraceServiceRequest`` and ``ExportMetricsServiceRequest`` POSTed to ``/v1/traces`` and
``/v1/metrics``, decoded here with ``opentelemetry-proto``), and the example's own pipelines are
read to check that they take what the gateway sends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("yaml")

import httpx2
import mcp
import yaml
from mcp.types import Implementation, TextContent
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from pydantic_lenient.observe.dashboard import dashboard_data
from pydantic_lenient.observe.fleet import replica_dirs
from tests.gateway.running import ROOT, STDIO_SECRET, gateway, three_servers

T = TypeVar("T")
COLLECTOR_CONFIG = ROOT / "examples" / "gateway" / "otel-collector.yaml"
CURSOR = Implementation(name="cursor-vscode", version="1.7.2")
CALLS = 12


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, 120)

    return asyncio.run(bounded())


class _Received:
    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.metric_points: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()


def _attributes(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs:
        value = pair.value
        found[pair.key] = getattr(value, value.WhichOneof("value")) if value.WhichOneof("value") else None
    return found


@pytest.fixture
def collector() -> Iterator[tuple[str, _Received]]:
    """A loopback OTLP/HTTP receiver: what the collector's ``otlp`` receiver takes."""
    received = _Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with received.lock:
                if self.path == "/v1/traces":
                    for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
                        for scope in resource.scope_spans:
                            for span in scope.spans:
                                received.spans.append(
                                    {
                                        "name": span.name,
                                        "attributes": _attributes(span.attributes),
                                        "events": [event.name for event in span.events],
                                    }
                                )
                elif self.path == "/v1/metrics":
                    for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                        for scope in resource.scope_metrics:
                            for metric in scope.metrics:
                                data = getattr(metric, metric.WhichOneof("data"))
                                for point in data.data_points:
                                    received.metric_points.append((metric.name, _attributes(point.attributes)))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def test_the_collector_example_takes_traces_and_metrics_over_otlp_http() -> None:
    config = yaml.safe_load(COLLECTOR_CONFIG.read_text(encoding="utf-8"))
    assert config["receivers"]["otlp"]["protocols"]["http"]["endpoint"].endswith(":4318")  # OTLP/HTTP's port
    pipelines = config["service"]["pipelines"]
    for signal in ("traces", "metrics"):
        assert "otlp" in pipelines[signal]["receivers"]
        assert set(pipelines[signal]["exporters"]) <= set(config["exporters"])
        assert set(pipelines[signal].get("processors", [])) <= set(config["processors"])


def _texts(result: Any) -> list[str]:
    return [item.text for item in result.content if isinstance(item, TextContent)]


def test_a_fleet_exports_who_called_which_upstream_and_the_dashboard_adds_up_its_replicas(
    collector: tuple[str, _Received], tmp_path: Path
) -> None:
    endpoint, received = collector
    config = three_servers("http://127.0.0.1:9/mcp")
    del config["mcpServers"]["remote"]
    log_dir = tmp_path / "logs" / "alpha"
    config["mcpServers"]["alpha"]["logDir"] = str(log_dir)
    environment = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": "lenient-gateway",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
    }

    async def calls(base: str) -> list[str]:
        texts: list[str] = []
        for number in range(CALLS):  # a client each: the workers share them out
            async with mcp.Client(f"{base}/servers/alpha/mcp", mode="legacy", client_info=CURSOR) as client:
                if number % 2:
                    texts += _texts(await client.call_tool("add", {"a": "40", "b": 2}))  # repaired
                else:
                    texts += _texts(await client.call_tool("page", {"limit": ""}))  # Cursor's "": left out
        return texts

    with gateway(config, tmp_path, workers=2, environment=environment) as base:
        texts = run(calls(base))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with received.lock:
                spans = [
                    span for span in received.spans if span["attributes"].get("gen_ai.tool.name") in ("add", "page")
                ]
                points = [point for point in received.metric_points if point[0] == "pydantic_lenient.repairs"]
            if len(spans) >= 2 * CALLS and points:
                break
            time.sleep(0.2)

    assert texts == ["alpha: limit None", "alpha: 42"] * (CALLS // 2)
    assert len(spans) == 2 * CALLS  # a server span and a client span for each call
    for span in spans:
        attributes = span["attributes"]
        assert attributes["pydantic_lenient.upstream.name"] == "alpha"
        assert (attributes["pydantic_lenient.client.name"], attributes["pydantic_lenient.client.host"]) == (
            "cursor-vscode",
            "cursor",
        )
    assert any("pydantic_lenient.repair" in span["events"] for span in spans)
    assert {name for name, attributes in points} == {"pydantic_lenient.repairs"}
    assert all(attributes["pydantic_lenient.upstream.name"] == "alpha" for _, attributes in points)
    assert all(STDIO_SECRET not in repr(span) for span in spans)

    # Each worker wrote its own directory; the dashboard reads them as one.
    assert len(replica_dirs(log_dir)) >= 2  # two workers, each with a directory per era it served
    data = dashboard_data(log_dir)
    assert {row["tool"]: row["ok"] for row in data["outcomes"]["tools"]} == {"add": CALLS // 2, "page": CALLS // 2}
    assert [(row["client"], row["ok"]) for row in data["outcomes"]["clients"]] == [("cursor-vscode", CALLS)]
    assert len(data["recent"]) == CALLS


def test_a_handshake_era_session_id_names_its_client_and_nothing_else(tmp_path: Path) -> None:
    config = three_servers("http://127.0.0.1:9/mcp")
    del config["mcpServers"]["remote"]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "cursor-vscode", "version": "1.7.2"},
        },
    }
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "page", "arguments": {"limit": ""}}}
    with gateway(config, tmp_path) as base:
        url = f"{base}/servers/beta/mcp"
        session = httpx2.post(url, json=initialize, timeout=30).headers["mcp-session-id"]
        named = httpx2.post(url, json=call, headers={"mcp-session-id": session}, timeout=30).json()
        unnamed = httpx2.post(url, json=call, timeout=30).json()
        forged = httpx2.post(url, json=call, headers={"mcp-session-id": "lenient1.!!!"}, timeout=30).json()
    assert session.startswith("lenient1.")
    assert all(0x21 <= ord(character) <= 0x7E for character in session)
    assert named["result"]["content"][0]["text"] == "beta: limit None"
    assert unnamed["result"]["isError"] is True  # no client named: "" is no integer
    assert forged["result"]["isError"] is True
