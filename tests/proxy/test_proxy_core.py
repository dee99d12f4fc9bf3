"""The relay session knows no transport: any class keeping the upstream contract serves it, and each
side's transport reaches the spans as that side says it."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest

from tests.sdks import require

require("jsonschema_rs")
from pydantic_lenient.proxy.child import ChildUpstream  # noqa: E402
from pydantic_lenient.proxy.core import Proxy, ProxyOptions  # noqa: E402
from pydantic_lenient.proxy.transports import UpstreamSpec, open_upstream  # noqa: E402
from pydantic_lenient.proxy.upstream import Peer, Upstream  # noqa: E402

LIMIT: dict[str, Any] = {"type": "integer"}
SCHEMA = {"type": "object", "properties": {"limit": LIMIT}, "required": ["limit"]}


class InMemoryUpstream:
    """An upstream transport in a few lines: a server in this process that lists one tool and
    echoes each call's arguments. What a new transport module would hold, over its own wire."""

    name = "in-memory"
    network_transport = "inproc"

    def __init__(self) -> None:
        self.peer: Peer | None = None
        self.received: list[dict[str, Any]] = []
        self.stopped = False

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    async def start(self) -> None:
        pass

    def send(self, data: bytes) -> None:
        assert self.peer is not None
        for line in data.splitlines():
            message = json.loads(line)
            self.received.append(message)
            if "id" not in message:
                continue
            if message["method"] == "tools/list":
                result: dict[str, Any] = {"tools": [{"name": "search", "inputSchema": SCHEMA}]}
            else:
                result = {"content": [{"type": "text", "text": json.dumps(message["params"]["arguments"])}]}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self.peer.upstream_lines([json.dumps(answer).encode() + b"\n"])

    def pause_output(self, paused: bool) -> None:
        pass

    async def stop(self) -> None:
        self.stopped = True


class Collected:
    """The host's side: what the session writes to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def _contract(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")} | set(getattr(cls, "__annotations__", {}))


def test_each_upstream_transport_keeps_the_contract_and_says_its_network_transport() -> None:
    """``pipe`` for a child process, ``tcp`` for Streamable HTTP (OpenTelemetry's values)."""
    contract = _contract(Upstream)
    transports: list[tuple[Any, str]] = [(ChildUpstream(["true"]), "pipe"), (InMemoryUpstream(), "inproc")]
    try:
        transports.append((open_upstream(UpstreamSpec(url="http://127.0.0.1:9/mcp")), "tcp"))
    except ImportError:  # httpx2 (the proxy extra) is missing: the remote transport cannot load
        pytest.skip("needs httpx2")
    for upstream, transport in transports:
        missing = {name for name in contract if not hasattr(upstream, name)}
        assert not missing, type(upstream).__name__
        assert upstream.network_transport == transport
        for name in ("start", "stop"):
            assert inspect.iscoroutinefunction(getattr(upstream, name)), name
    assert isinstance(open_upstream(UpstreamSpec(["python", "server.py"])), ChildUpstream)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "command or a url"),
        ({"command": ["x"], "url": "http://a/mcp"}, "command or a url"),
        ({"command": ["x"], "headers": [("a", "b")]}, "headers go to a url"),
    ],
)
def test_an_upstream_spec_names_one_upstream(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UpstreamSpec(**spec)


def test_a_session_over_any_upstream_transport_repairs_and_answers_each_request_once() -> None:
    require("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from pydantic_lenient.observe.otel import LenientTelemetry

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    upstream = InMemoryUpstream()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"limit": "7"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"limit": 8}}},
    ]

    async def session() -> Proxy:
        proxy = Proxy(upstream, ProxyOptions(telemetry=LenientTelemetry(provider)), host_transport="pipe")
        proxy.client_out = Collected()
        await proxy.start()
        proxy.client_lines([json.dumps(message).encode() + b"\n" for message in messages])
        proxy.client_ended(None)  # every answer is in: the session ends
        await asyncio.wait_for(proxy.done.wait(), 5)
        await proxy.close()
        return proxy

    proxy = asyncio.run(session())
    assert proxy.failure is None
    assert upstream.stopped
    assert isinstance(proxy.client_out, Collected)
    answers = [json.loads(line) for line in proxy.client_out.data.splitlines()]
    assert sorted(answer["id"] for answer in answers) == [1, 2, 3]  # each exactly once
    widened = answers[0]["result"]["tools"][0]["inputSchema"]["properties"]["limit"]
    assert widened != LIMIT  # the listing is widened: "7" is admitted
    forwarded = [message["params"]["arguments"] for message in upstream.received if message.get("id") in (2, 3)]
    assert forwarded == [{"limit": 7}, {"limit": 8}]  # repaired on its way
    by_kind = {span.kind.name: dict(span.attributes or {}) for span in spans.get_finished_spans()[:2]}
    assert by_kind["CLIENT"]["network.transport"] == "inproc"  # the upstream transport's own word
    assert by_kind["SERVER"]["network.transport"] == "pipe"  # the host side's


def test_no_module_of_the_proxy_imports_one_that_imports_it_back() -> None:
    """The split holds: the session, the host side and each transport import one way only."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("pydantic_lenient")
    modules = sorted(module for module in graph.modules if module.startswith("pydantic_lenient.proxy."))
    assert "pydantic_lenient.proxy.core" in modules
    cycles = [
        (first, second)
        for first in modules
        for second in modules
        if first < second and graph.chain_exists(first, second) and graph.chain_exists(second, first)
    ]
    assert cycles == []
