"""One trace from the host's call to the server's answer, exported over OTLP to a real receiver.

The receiver is Arize Phoenix (``arize-phoenix`` on PyPI), started here on loopback ports with its
own telemetry off: an OTLP/HTTP receiver that stores spans and lists them over a REST API, the same
backend docs/observability.md shows. It brings many dependencies, so it lives in its own venv:

    python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install arize-phoenix
    PYDANTIC_LENIENT_PHOENIX=.venv-phoenix/bin/phoenix pytest tests/observe/test_otlp_end_to_end.py

Without it the module is skipped at collection, unless PYDANTIC_LENIENT_REQUIRE_OTLP is set (CI
sets it), in which case it fails. The host (this test, with its own tracer provider), the proxy
(``pydantic-lenient proxy`` with the standard ``OTEL_*`` variables) and the upstream (the official
SDK, tests/otlp_upstream.py) each export their own spans.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.sdks import require

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = os.environ.get("PYDANTIC_LENIENT_PHOENIX") or shutil.which("phoenix")
INSTALL = (
    "Arize Phoenix not installed: python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install arize-phoenix, "
    "then set PYDANTIC_LENIENT_PHOENIX=.venv-phoenix/bin/phoenix"
)
HANG_GUARD = 90.0

pytestmark = pytest.mark.skipif(PHOENIX is None and not os.environ.get("PYDANTIC_LENIENT_REQUIRE_OTLP"), reason=INSTALL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Phoenix's base URL, on loopback; both its ports are free ones, so runs never share a receiver."""
    if PHOENIX is None:
        pytest.fail(INSTALL)
    port = _free_port()
    environment = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(tmp_path_factory.mktemp("phoenix")),
        "PHOENIX_TELEMETRY_ENABLED": "false",  # nothing leaves the machine
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    with open(os.devnull, "w") as quiet:
        process = subprocess.Popen(
            [PHOENIX, "serve"], env=environment, stdout=quiet, stderr=quiet, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _get_json(url + "/v1/projects")
                break
            except (OSError, urllib.error.URLError):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not start (exit code {process.poll()})")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # Phoenix and the workers it started, nothing else
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def received_spans(phoenix: str, trace_id: str, count: int) -> list[dict[str, Any]]:
    """The spans of ``trace_id`` Phoenix has stored, once there are ``count`` of them (export is batched)."""
    deadline = time.monotonic() + 60
    while True:
        listed = _get_json(phoenix + "/v1/projects/default/spans?limit=1000")["data"]
        spans = [span for span in listed if span["context"]["trace_id"] == trace_id]
        if len(spans) >= count or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def test_a_proxied_call_is_one_trace_from_the_host_to_the_upstream(phoenix: str) -> None:
    require("mcp")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import RequestParamsMeta, TextContent
    from opentelemetry import propagate, trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    # The host: its own provider (never the global one, which other tests may set), exporting to Phoenix.
    host_provider = TracerProvider(resource=Resource.create({"service.name": "test-host"}))
    host_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=phoenix + "/v1/traces")))
    host_tracer = host_provider.get_tracer("test-host")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": "pydantic-lenient-proxy",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",  # Phoenix receives traces only
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pydantic_lenient", "proxy", "--", sys.executable, str(ROOT / "tests" / "otlp_upstream.py")],
        env=environment,
    )

    async def call() -> tuple[bool, list[str], str, str, bool, str]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.list_tools()
                with host_tracer.start_as_current_span("host calls search", kind=trace.SpanKind.CLIENT) as span:
                    carrier: dict[str, Any] = {}
                    propagate.inject(carrier)
                    result = await session.call_tool(
                        "search", {"query": "otel", "limit": "10"}, meta=cast(RequestParamsMeta, carrier)
                    )
                    context = span.get_span_context()
                # A value no repair can give a meaning: the upstream refuses it, and the trace says why.
                with host_tracer.start_as_current_span("host calls search badly", kind=trace.SpanKind.CLIENT) as span:
                    carrier = {}
                    propagate.inject(carrier)
                    refused = await session.call_tool(
                        "search", {"query": "otel", "limit": "a dozen"}, meta=cast(RequestParamsMeta, carrier)
                    )
                    refused_trace = f"{span.get_span_context().trace_id:032x}"
        texts = [item.text for item in result.content if isinstance(item, TextContent)]
        trace_id, span_id = f"{context.trace_id:032x}", f"{context.span_id:016x}"
        return bool(result.is_error), texts, trace_id, span_id, bool(refused.is_error), refused_trace

    is_error, texts, trace_id, host_span_id, refused_is_error, refused_trace = asyncio.run(
        asyncio.wait_for(call(), HANG_GUARD)
    )
    host_provider.shutdown()
    assert (is_error, texts) == (False, ["10 results for otel"])  # the proxy repaired "10" for a strict int

    spans = received_spans(phoenix, trace_id, 4)
    assert len(spans) == 4, [(span["name"], span["span_kind"]) for span in spans]
    names = sorted(span["name"] for span in spans)
    assert names == ["host calls search", "tools/call search", "tools/call search", "tools/call search"]
    host = next(span for span in spans if span["name"] == "host calls search")
    assert host["context"]["span_id"] == host_span_id
    # The chain: host -> the proxy's server span -> its client span -> the upstream SDK's server span,
    # which saw the proxy's client span in the forwarded params._meta.
    children = {span["parent_id"]: span for span in spans if span["parent_id"]}
    proxy_server = children.get(host_span_id)
    if proxy_server is None:
        # Another test in this process set the global tracer provider (it can be set only once), so
        # the host's MCP client opened a tools/call span of its own, exported there and not here,
        # between the host's span and the proxy's: the proxy's server span is the one whose parent
        # Phoenix does not hold, in the host's trace.
        assert isinstance(trace.get_tracer_provider(), TracerProvider)
        in_phoenix = {span["context"]["span_id"] for span in spans}
        [proxy_server] = [span for span in spans if span["parent_id"] and span["parent_id"] not in in_phoenix]
    proxy_client = children[proxy_server["context"]["span_id"]]
    upstream = children[proxy_client["context"]["span_id"]]
    # Phoenix keeps OpenInference's kinds (TOOL), not OpenTelemetry's: the links above say who called whom.
    for span in (proxy_server, proxy_client):
        attributes = span["attributes"]
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == "search"
        assert attributes["network.transport"] == "pipe"
        assert attributes["jsonrpc.request.id"]
        assert "error.type" not in attributes
    assert proxy_server["attributes"]["pydantic_lenient.call.status"] == "ok"
    assert upstream["attributes"]["gen_ai.tool.name"] == "search"
    # The repair is an event on the proxy's server span, with its kind and JSON pointer, never the value.
    repairs = [event for event in proxy_server["events"] if event["name"] == "pydantic_lenient.repair"]
    assert [event["attributes"]["pydantic_lenient.json_pointer"] for event in repairs] == ["/limit"]
    assert repairs[0]["attributes"]["pydantic_lenient.repair.kind"]
    exported = json.dumps([proxy_server, proxy_client])
    assert "otel" not in exported.replace("pydantic_lenient", "")  # the query's value

    # The refused call: its own trace, the refused field and its error type as an event, never the value.
    assert refused_is_error
    refused_spans = received_spans(phoenix, refused_trace, 4)
    proxy_refused = next(span for span in refused_spans if "pydantic_lenient.call.status" in span["attributes"])
    assert proxy_refused["attributes"]["pydantic_lenient.call.status"] == "refused"
    assert proxy_refused["status_code"] == "ERROR"
    assert proxy_refused["attributes"]["error.type"]
    refusals = [event["attributes"] for event in proxy_refused["events"] if event["name"] == "pydantic_lenient.refusal"]
    assert [refusal["pydantic_lenient.field"] for refusal in refusals] == ["limit"]
    assert refusals[0]["pydantic_lenient.error.type"]
    assert "dozen" not in json.dumps(refused_spans)
