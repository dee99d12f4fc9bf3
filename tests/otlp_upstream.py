"""A strict MCP server over stdio that exports its own spans over OTLP, for the end-to-end tracing test.

    python tests/otlp_upstream.py        # with OTEL_EXPORTER_OTLP_ENDPOINT set

``search(query: str, limit: int)`` refuses ``"limit": "10"`` as pydantic does, so every repair in
front of it is the proxy's. The official SDK opens its own ``tools/call`` span, continuing the
context the proxy puts in ``params._meta``: the upstream's end of the trace.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

server = MCPServer("otlp-upstream")


@server.tool()
def search(query: str, limit: int) -> str:
    """Find up to ``limit`` documents matching ``query``."""
    return f"{limit} results for {query}"


if __name__ == "__main__":
    provider = TracerProvider(resource=Resource.create({"service.name": "otlp-upstream"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))  # each span sent as it ends
    trace.set_tracer_provider(provider)
    try:
        server.run("stdio")
    finally:
        provider.shutdown()
