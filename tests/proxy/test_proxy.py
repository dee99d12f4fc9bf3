"""`pydantic-lenient proxy` end to end: the official SDK's client over stdio, through the proxy, to
a published server no one here wrote (`@modelcontextprotocol/server-everything`, pinned in
tests/upstream), and to tiny Python upstreams for the fault cases.

The same suite runs against each transport the proxy speaks upstream: server-everything over stdio
and in its ``streamableHttp`` mode, and the official Python SDK's Streamable HTTP app
(tests/remote_server.py, served by uvicorn), each on 127.0.0.1 only. Each test has a generous
timeout as a hang guard.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TextIO, TypeVar

import pytest

from tests.conftest import SERVER_EVERYTHING, require_external
from tests.sdks import require

require("mcp")

import httpx2  # noqa: E402
import mcp.types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from pydantic_lenient.schema.widen import widen_schema  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "tests" / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
HANG_GUARD = 90.0
T = TypeVar("T")
# The remote Python app's bearer token: it must reach the server, and never the proxy's stderr or logs.
TOKEN = "s3cret-bearer-4c1d"


class Remote(NamedTuple):
    """An upstream MCP server over Streamable HTTP, and the headers each request needs."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()


Upstream = list[str] | Remote  # a command (stdio) or a remote server


def _node() -> str:
    """node, with server-everything installed; skipped (or failed in CI) without them."""
    require_external(SERVER_EVERYTHING)
    node = shutil.which("node")
    assert node is not None
    return node


@contextmanager
def _serving(command: list[str]) -> Iterator[int]:
    """Run a server that prints ``port N`` on stderr once it listens on 127.0.0.1; its port."""
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_environment())
    assert server.stderr is not None
    drain: threading.Thread | None = None
    try:
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = server.stderr.readline().decode(errors="replace")
            if not line:
                break
            if line.startswith("port "):
                port = int(line.split()[1])
        assert port is not None, f"{command[:3]} did not start"
        # Keep reading its stderr, so a full pipe never stops the server.
        drain = threading.Thread(target=server.stderr.read, daemon=True)
        drain.start()
        yield port
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if drain is not None:
            drain.join(timeout=10)
        server.stderr.close()


@pytest.fixture(scope="module")
def everything_http() -> Iterator[Remote]:
    """server-everything in its streamableHttp mode, on 127.0.0.1 only (tests/upstream/loopback.mjs)."""
    loopback = ROOT / "tests" / "upstream" / "loopback.mjs"
    with _serving([_node(), "--import", str(loopback), str(EVERYTHING / "index.js"), "streamableHttp"]) as port:
        yield Remote(f"http://127.0.0.1:{port}/mcp")


@pytest.fixture(scope="module")
def sdk_app() -> Iterator[Remote]:
    """The official Python SDK's Streamable HTTP app (tests/remote_server.py), behind a bearer token."""
    with _serving([sys.executable, str(ROOT / "tests" / "remote_server.py"), TOKEN]) as port:
        yield Remote(f"http://127.0.0.1:{port}/mcp", (("Authorization", f"Bearer {TOKEN}"),))


@pytest.fixture(scope="module", params=["stdio", "streamableHttp"])
def everything(request: pytest.FixtureRequest) -> Upstream:
    """server-everything over stdio (its command) and over Streamable HTTP (its URL)."""
    if request.param == "streamableHttp":
        remote: Remote = request.getfixturevalue("everything_http")
        return remote
    return [_node(), str(EVERYTHING / "index.js"), "stdio"]


@pytest.fixture(scope="module", params=["everything-stdio", "everything-streamableHttp", "python-sdk"])
def upstream(request: pytest.FixtureRequest) -> Upstream:
    """Every upstream the repair suite runs against: server-everything both ways, and the Python SDK app."""
    if request.param != "everything-stdio":
        remote: Remote = request.getfixturevalue("sdk_app" if request.param == "python-sdk" else "everything_http")
        return remote
    return [_node(), str(EVERYTHING / "index.js"), "stdio"]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def _upstream_arguments(upstream: Upstream) -> list[str]:
    if isinstance(upstream, Remote):
        return ["--url", upstream.url, *(f"--header={name}: {value}" for name, value in upstream.headers)]
    return ["--", *upstream]


def proxied(upstream: Upstream, *options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "pydantic_lenient", "proxy", *options, *_upstream_arguments(upstream)],
        env=_environment(),
    )


def direct(upstream: Upstream) -> StdioServerParameters | Remote:
    if isinstance(upstream, Remote):
        return upstream
    return StdioServerParameters(command=upstream[0], args=upstream[1:])


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(guarded())


@asynccontextmanager
async def streams(params: StdioServerParameters | Remote, errlog: TextIO | None = None) -> AsyncIterator[Any]:
    """The client's (read, write) streams: over stdio (the server's stderr to ``errlog``, else nowhere),
    or over Streamable HTTP for a remote server."""
    if isinstance(params, Remote):
        async with (
            httpx2.AsyncClient(headers=dict(params.headers), timeout=httpx2.Timeout(30, read=300)) as client,
            streamable_http_client(params.url, http_client=client) as opened,
        ):
            yield opened[0], opened[1]
        return
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=errlog or quiet) as opened:
            yield opened


@asynccontextmanager
async def connected(
    params: StdioServerParameters | Remote, errlog: TextIO | None = None, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    async with streams(params, errlog) as (read, write), ClientSession(read, write, **callbacks) as session:
        await session.initialize()
        yield session


def _text(result: types.CallToolResult) -> tuple[bool, list[str]]:
    return bool(result.is_error), [item.text for item in result.content if isinstance(item, types.TextContent)]


# ---- server-everything and the Python SDK app, direct and through the proxy


def test_tools_list_keeps_every_tool_and_widens_only_input_schemas(upstream: Upstream) -> None:
    async def both() -> tuple[types.ListToolsResult, types.ListToolsResult]:
        async with connected(direct(upstream)) as plain, connected(proxied(upstream)) as lenient:
            return await plain.list_tools(), await lenient.list_tools()

    plain, lenient = run(both())
    assert [tool.name for tool in lenient.tools] == [tool.name for tool in plain.tools]
    for before, after in zip(plain.tools, lenient.tools, strict=False):
        assert after.model_dump(exclude={"input_schema"}) == before.model_dump(exclude={"input_schema"})
        assert after.input_schema == widen_schema(before.input_schema)  # the portable style, the default
    get_sum = {tool.name: tool for tool in lenient.tools}["get-sum"]
    # A number's text form first: VS Code's Ajv coerces in the first branch that takes a value.
    assert [branch["type"] for branch in get_sum.input_schema["properties"]["a"]["anyOf"]] == ["string", "number"]


def test_any_of_style_is_passed_through_to_the_schemas(upstream: Upstream) -> None:
    async def listed() -> types.ListToolsResult:
        async with connected(proxied(upstream, "--style", "any-of")) as session:
            return await session.list_tools()

    tools = {tool.name: tool for tool in run(listed()).tools}
    assert tools["get-sum"].input_schema["properties"]["a"]["anyOf"][0] == {"type": "number"}


def test_the_portable_style_is_listed_by_every_host_profile(upstream: Upstream) -> None:
    from pydantic_lenient.hosts import PROFILES

    async def both() -> tuple[types.ListToolsResult, types.ListToolsResult]:
        async with connected(direct(upstream)) as plain, connected(proxied(upstream, "--style", "portable")) as ours:
            return await plain.list_tools(), await ours.list_tools()

    plain, portable = run(both())
    for before, after in zip(plain.tools, portable.tools, strict=True):
        assert after.input_schema == widen_schema(before.input_schema, "portable")
        refused = [host.name for host in PROFILES.values() if not host.listing(after.input_schema).accepted]
        assert not refused, (after.name, refused)


CALLS: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    # (tool, correct arguments, recoverable manglings of them)
    ("get-sum", {"a": 1, "b": 2.5}, [{"a": "1", "b": "2.5"}, {"a": "1", "b": 2.5}, {"a": " 1", "b": "2.5e0"}]),
    ("echo", {"message": "it's 100"}, []),
    (
        "get-annotated-message",
        {"messageType": "success", "includeImage": False},
        [{"messageType": "success", "includeImage": "FALSE"}, {"messageType": "success", "includeImage": "false"}],
    ),
    (
        "get-resource-reference",
        {"resourceType": "Text", "resourceId": 2},
        [{"resourceType": "Text", "resourceId": "2"}],
    ),
]


def test_correct_and_recoverable_calls_give_the_direct_result(upstream: Upstream) -> None:
    async def compare() -> list[tuple[Any, Any]]:
        pairs = []
        async with connected(direct(upstream)) as plain, connected(proxied(upstream)) as lenient:
            await lenient.list_tools()
            for tool, correct, mangled in CALLS:
                expected = _text(await plain.call_tool(tool, correct))
                assert not expected[0], (tool, expected)
                pairs.append((expected, _text(await lenient.call_tool(tool, correct))))
                for arguments in mangled:
                    refused_direct = _text(await plain.call_tool(tool, arguments))
                    assert refused_direct[0], (tool, arguments)  # the server alone refuses the mangled form
                    pairs.append((expected, _text(await lenient.call_tool(tool, arguments))))
        return pairs

    for expected, through_proxy in run(compare()):
        assert through_proxy == expected


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get-sum", {"a": "one", "b": 2}),
        ("get-sum", {"a": "0x10", "b": 2}),
        ("get-annotated-message", {"messageType": "success", "includeImage": "yes"}),
        ("echo", {"text": "wrong name"}),
    ],
)
def test_unrecoverable_calls_still_fail_with_the_servers_own_error(
    upstream: Upstream, tool: str, arguments: dict[str, Any]
) -> None:
    async def compare() -> tuple[Any, Any]:
        async with connected(direct(upstream)) as plain, connected(proxied(upstream)) as lenient:
            await lenient.list_tools()
            return _text(await plain.call_tool(tool, arguments)), _text(await lenient.call_tool(tool, arguments))

    plain, lenient = run(compare())
    assert plain[0]
    assert lenient == plain


def test_requests_that_are_not_tools_pass_through(everything: Upstream) -> None:
    async def both(session: ClientSession) -> list[Any]:
        prompt = await session.get_prompt("args-prompt", {"city": "Oslo"})
        completion = await session.complete(
            types.PromptReference(type="ref/prompt", name="completable-prompt"),
            {"name": "department", "value": "E"},
        )
        templates = await session.list_resource_templates()
        resources = await session.list_resources()
        first = resources.resources[0].uri
        return [
            (await session.list_prompts()).model_dump(),
            prompt.model_dump(),
            completion.model_dump(),
            templates.model_dump(),
            resources.model_dump(),
            (await session.read_resource(first)).model_dump(),
            (await session.send_ping()).model_dump(),
        ]

    async def compare() -> tuple[list[Any], list[Any]]:
        async with connected(direct(everything)) as plain, connected(proxied(everything)) as lenient:
            return await both(plain), await both(lenient)

    plain, lenient = run(compare())
    assert lenient == plain
    assert plain[2]["completion"]["values"], "the completion request reached the server and came back"


def test_server_capabilities_reach_the_client_unchanged(everything: Upstream) -> None:
    async def initialize(params: StdioServerParameters | Remote) -> types.InitializeResult:
        async with streams(params) as (read, write), ClientSession(read, write) as session:
            return await session.initialize()

    async def both() -> tuple[types.InitializeResult, types.InitializeResult]:
        return await initialize(direct(everything)), await initialize(proxied(everything))

    plain, lenient = run(both())
    assert lenient.model_dump() == plain.model_dump()
    assert lenient.capabilities.completions is not None


def test_server_to_client_requests_and_their_replies_pass_unchanged(everything: Upstream) -> None:
    """Sampling, elicitation and roots reach the client (so the client's capabilities reached the
    upstream), and what the client answers reaches the upstream as it was sent: the model name too."""
    seen: dict[str, Any] = {}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen["sampling"] = params.model_dump()
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="a sampled reply"), model="client-model-7"
        )

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        seen["elicitation"] = True
        return types.ElicitResult(action="accept", content={"name": "Ada", "check": True})

    async def roots(context: Any) -> types.ListRootsResult:
        seen["roots"] = True
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/lenient-root", name="lenient-root")])

    async def exercise() -> dict[str, Any]:
        callbacks: dict[str, Any] = {
            "sampling_callback": sampling,
            "elicitation_callback": elicitation,
            "list_roots_callback": roots,
        }
        async with connected(proxied(everything), **callbacks) as session:
            await session.list_tools()
            return {
                "sampling": _text(
                    await session.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": "5"})
                ),
                "elicitation": _text(await session.call_tool("trigger-elicitation-request", {})),
                "roots": _text(await session.call_tool("get-roots-list", {})),
            }

    results = run(exercise())
    assert seen["sampling"]["max_tokens"] == 5  # the repaired "5" reached the upstream as a number
    assert "client-model-7" in " ".join(results["sampling"][1])
    assert seen["elicitation"]
    assert "Ada" in " ".join(results["elicitation"][1])
    assert seen["roots"]
    assert "file:///tmp/lenient-root" in " ".join(results["roots"][1])


def test_notifications_pass_through(everything: Upstream) -> None:
    """Progress during a request, log messages sent outside any request, and list-changed."""
    seen_progress: list[float] = []
    logs: list[Any] = []
    notices: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen_progress.append(progress)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            notices.append(message.method)

    async def exercise() -> None:
        async with connected(proxied(everything), logging_callback=on_log, message_handler=on_message) as session:
            await session.list_tools()
            await session.call_tool(
                "trigger-long-running-operation", {"duration": "0.6", "steps": "3"}, progress_callback=on_progress
            )
            await session.call_tool("toggle-simulated-logging", {})
            deadline = time.monotonic() + 30
            while not logs and time.monotonic() < deadline:
                await asyncio.sleep(0.2)

    run(exercise())
    assert len(seen_progress) >= 2
    assert logs, "log messages sent outside a request reached the client"
    if not isinstance(everything, Remote):
        # Over HTTP server-everything sends it before any GET stream is open: no client gets it, direct neither.
        assert "notifications/tools/list_changed" in notices


# ---- calls before any listing, list_changed, conflicts, and no value on disk


def test_a_call_before_any_tools_list_is_repaired(upstream: Upstream) -> None:
    """A host that cached the tool list calls at once: the proxy lists the tools itself, then repairs."""

    async def compare() -> tuple[Any, Any]:
        async with connected(direct(upstream)) as plain, connected(proxied(upstream)) as lenient:
            repaired = _text(await lenient.call_tool("get-sum", {"a": "2", "b": "3.5"}))
            return _text(await plain.call_tool("get-sum", {"a": 2, "b": 3.5})), repaired

    expected, repaired = run(compare())
    assert not expected[0]
    assert repaired == expected


_CHANGING_TOOLS = """
import json, sys
received = open(sys.argv[1], "a")
ITEMS = {"type": "array", "items": {"type": "integer"}}
INNER = {"type": "object", "properties": {"flag": {"type": "boolean"}, "deep": {"type": "object"}}}
COUNT = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}, "s": {"type": "string"},
         "a": {"type": "integer"}, "items": ITEMS, "inner": INNER}}
TOOLS = [{"name": "count", "inputSchema": COUNT}, {"name": "switch", "inputSchema": {"type": "object"}}]
for line in sys.stdin:
    received.write(line)
    received.flush()
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    reply = {"jsonrpc": "2.0", "id": request_id}
    if method == "initialize":
        reply["result"] = {"protocolVersion": message["params"]["protocolVersion"],
                           "capabilities": {"tools": {"listChanged": True}},
                           "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        reply["result"] = {"tools": TOOLS}
    elif method == "tools/call":
        name, arguments = message["params"]["name"], message["params"].get("arguments", {})
        if name == "switch":
            TOOLS.append({"name": "added", "inputSchema": {"type": "object", "properties": {"k": {"type": "integer"}}}})
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}), flush=True)
        text = json.dumps(arguments, sort_keys=True)
        refused = name == "count" and type(arguments.get("n")) is not int
        reply["result"] = {"content": [{"type": "text", "text": text}], "isError": refused}
    else:
        reply["result"] = {}
    print(json.dumps(reply), flush=True)
"""


def _received_calls(path: Path) -> list[dict[str, Any]]:
    messages = [json.loads(line) for line in path.read_text().splitlines()]
    return [message["params"] for message in messages if message.get("method") == "tools/call"]


def test_list_changed_makes_the_proxy_list_again(tmp_path: Path) -> None:
    """The client never lists: the proxy lists for the first call, and again for a tool that
    appeared after notifications/tools/list_changed, so that tool's call is repaired too."""
    received = tmp_path / "received.jsonl"
    upstream = [*_python_upstream(tmp_path, _CHANGING_TOOLS), str(received)]

    async def exercise() -> list[tuple[bool, list[str]]]:
        async with connected(proxied(upstream)) as session:
            return [
                _text(await session.call_tool("count", {"n": "5"})),
                _text(await session.call_tool("switch", {})),
                _text(await session.call_tool("added", {"k": "7"})),
            ]

    counted, _, added = run(exercise())
    assert counted == (False, ['{"n": 5}'])
    assert added == (False, ['{"k": 7}'])
    listings = [line for line in received.read_text().splitlines() if '"tools/list"' in line]
    assert len(listings) >= 2  # once at first, once after list_changed


def test_a_conflicting_call_is_answered_with_a_tool_error_naming_both_names_and_never_forwarded(
    tmp_path: Path,
) -> None:
    received = tmp_path / "received.jsonl"
    upstream = [*_python_upstream(tmp_path, _CHANGING_TOOLS), str(received)]
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps([{"id": "n-from-num", "tools": ["count"], "type": "param_alias", "from": "num", "to": "n"}])
    )

    async def exercise() -> list[tuple[bool, list[str]]]:
        async with connected(proxied(upstream, "--rules", str(rules))) as session:
            await session.list_tools()
            return [
                _text(await session.call_tool("count", {"num": 1, "n": 2})),
                _text(await session.call_tool("count", {"num": "3"})),
            ]

    conflict, aliased = run(exercise())
    assert conflict[0]
    assert "'num'" in conflict[1][0]
    assert "'n'" in conflict[1][0]
    assert aliased == (False, ['{"n": 3}'])
    assert [call["arguments"] for call in _received_calls(received)] == [{"n": 3}]


SECRET = "Pl4nted-s3cret"


def test_a_secret_in_any_argument_position_reaches_no_file_the_proxy_writes(tmp_path: Path) -> None:
    """In a value, a nested key, an unknown name's value, a nested object, an array, JSON text, a
    refused value, a conflicting alias: with --log-dir and --rules (no --sample-chars), no file under
    the log directory holds the secret, while the calls themselves carry it to the upstream. An
    argument name the tool does not declare is recorded by name (issue 23: so that `suggest` can
    propose an alias), never its value."""
    received = tmp_path / "received.jsonl"
    upstream = [*_python_upstream(tmp_path, _CHANGING_TOOLS), str(received)]
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps([{"id": "n-from-num", "tools": ["count"], "type": "param_alias", "from": "num", "to": "n"}])
    )
    log_dir = tmp_path / "logs"
    calls: list[dict[str, Any]] = [
        {"n": 1, "s": SECRET},  # valid
        {"n": "2", "s": SECRET},  # repaired
        {"n": SECRET},  # refused: the value
        {"n": f"{SECRET}1"},
        {"n": 3, "stray": SECRET},  # an unknown name: its name is recorded, its value never
        {"n": 4, "inner": {SECRET: SECRET, "flag": "true"}},  # a nested key and value, repaired
        {"n": 5, "inner": {"deep": {"x": [SECRET]}, "flag": SECRET}},
        {"n": 6, "items": [1, SECRET]},  # an array item
        {"n": 7, "items": json.dumps([1, SECRET])},  # JSON text
        {"n": 8, "items": f'["{SECRET}"]'},
        {"num": SECRET, "n": SECRET},  # a conflict
        {"num": 9, "n": 9, "s": SECRET},
        {"n": 10, "a": SECRET},
        {"N": SECRET},  # a misnamed parameter
    ]

    async def exercise() -> None:
        async with connected(proxied(upstream, "--rules", str(rules), "--log-dir", str(log_dir))) as session:
            await session.list_tools()
            for arguments in calls:
                await session.call_tool("count", arguments)

    run(exercise())
    assert SECRET in received.read_text()  # the calls did carry it
    written = [path for path in log_dir.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {
        "audit.jsonl",
        "outcomes.json",
        "repair-stats.json",
        "normalizer_stats.json",
    }
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path.name
    assert b'"stray"' in (log_dir / "outcomes.json").read_bytes()  # the name, for a suggested alias


def test_the_proxy_records_the_client_an_sdk_client_names_at_initialize(tmp_path: Path) -> None:
    """The official SDK's client names itself at ``initialize``: every call the proxy records, in
    ``outcomes.json`` and the audit log, carries that name and version, and its host profile."""
    from pydantic_lenient.observe.auditlog import read_audit_log
    from pydantic_lenient.observe.stats_file import load_outcomes

    upstream = [*_python_upstream(tmp_path, _CHANGING_TOOLS), str(tmp_path / "received.jsonl")]
    log_dir = tmp_path / "logs"
    client_info = types.Implementation(name="gemini-cli-mcp-client", version="0.9.0")

    async def exercise() -> None:
        async with connected(proxied(upstream, "--log-dir", str(log_dir)), client_info=client_info) as session:
            await session.list_tools()
            await session.call_tool("count", {"n": "2"})  # repaired
            await session.call_tool("count", {"n": "two"})  # refused

    run(exercise())
    stats = load_outcomes(log_dir)
    assert [(c.client, c.version, c.host, c.ok, c.refused, c.changed) for c in stats.clients] == [
        ("gemini-cli-mcp-client", "0.9.0", "gemini-cli", 1, 1, 1)
    ]
    assert [pattern.clients for pattern in stats.patterns] == [{"gemini-cli-mcp-client": 1}]
    entries = read_audit_log(log_dir)
    assert [entry.client.name if entry.client else None for entry in entries] == ["gemini-cli-mcp-client"] * 2


# ---- remote upstreams: sessions, SSE, resumption and headers


def test_a_stream_that_breaks_mid_call_is_resumed_with_last_event_id(sdk_app: Remote) -> None:
    """The Python SDK app closes the call's SSE stream after the first progress event; the answer and
    the rest of the progress come only on the stream the proxy resumes with Last-Event-ID."""
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def exercise() -> tuple[tuple[bool, list[str]], tuple[bool, list[str]]]:
        async with connected(proxied(sdk_app)) as session:
            await session.list_tools()
            resumed = _text(await session.call_tool("resumable", {"steps": "3"}, progress_callback=on_progress))
            return resumed, _text(await session.call_tool("echo", {"message": "same session"}))

    resumed, after = run(exercise())
    assert resumed == (False, ["done in 3 steps"])
    assert seen == [1, 3]
    assert after == (False, ["Echo: same session"])


QUERY_SECRET = "q-s3cret-77"


def test_no_header_value_or_url_query_reaches_the_proxys_stderr(sdk_app: Remote, tmp_path: Path) -> None:
    """A session, a refused token (HTTP 401) and an unreachable server: the proxy's stderr names
    the server, never the token or the URL's query."""
    secret_url = Remote(f"{sdk_app.url}?key={QUERY_SECRET}", sdk_app.headers)
    wrong_token = Remote(sdk_app.url, (("Authorization", f"Bearer {TOKEN}-wrong"),))
    stderr = tmp_path / "stderr.txt"

    async def exercise() -> tuple[bool, list[str]]:
        with stderr.open("w") as errlog:
            async with connected(proxied(secret_url), errlog) as session:
                await session.list_tools()
                return _text(await session.call_tool("get-sum", {"a": "2", "b": "3.5"}))

    assert run(exercise()) == (False, ["The sum of 2.0 and 3.5 is 5.5."])
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    refused = subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "proxy", *_upstream_arguments(wrong_token)],
        input=json.dumps(initialize).encode() + b"\n",
        capture_output=True,
        env=_environment(),
        timeout=HANG_GUARD,
    )
    assert "answered HTTP 401" in json.loads(refused.stdout)["error"]["message"]
    unreachable = subprocess.run(
        [
            sys.executable,
            "-m",
            "pydantic_lenient",
            "proxy",
            *_upstream_arguments(Remote(f"http://127.0.0.1:9/mcp?key={QUERY_SECRET}", sdk_app.headers)),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=_environment(),
        timeout=HANG_GUARD,
    )
    assert unreachable.returncode == 2
    # Shown as scheme, host and port only: a path may hold a token too.
    assert "cannot reach the upstream MCP server `http://127.0.0.1:9`:" in unreachable.stderr.decode()
    for text in (stderr.read_text(), refused.stderr.decode(), unreachable.stderr.decode()):
        assert TOKEN not in text
        assert QUERY_SECRET not in text


def test_no_header_value_or_url_query_reaches_a_log_record(sdk_app: Remote, caplog: pytest.LogCaptureFixture) -> None:
    """The proxy in process, every logger at DEBUG (httpx2's and httpcore's too): no record holds the
    token or the URL's query, while the session works."""
    from pydantic_lenient.proxy.core import Proxy, ProxyOptions
    from pydantic_lenient.proxy.remote import HttpUpstream

    class Collected:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data: bytes) -> None:
            self.data += data

        def is_closing(self) -> bool:
            return False

    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "get-sum", "arguments": {"a": "2", "b": 1}},
        },
    ]

    async def session() -> list[dict[str, Any]]:
        url = f"{sdk_app.url}?key={QUERY_SECRET}"
        proxy = Proxy(HttpUpstream(url, sdk_app.headers), ProxyOptions(), host_transport="pipe")
        collected = Collected()
        proxy.client_out = collected  # type: ignore[assignment]
        await proxy.upstream.start()
        try:
            for request in requests:
                proxy.client_lines([json.dumps(request).encode() + b"\n"])
                while request.get("id") is not None and f'"id":{request["id"]}'.encode() not in collected.data:
                    await asyncio.sleep(0.02)
        finally:
            await proxy.upstream.stop()
        return [json.loads(line) for line in collected.data.splitlines()]

    with caplog.at_level(logging.DEBUG):
        answers = run(session())
    assert answers[-1]["result"]["content"][0]["text"] == "The sum of 2.0 and 1.0 is 3.0."
    assert caplog.records, "the HTTP stack logged at DEBUG"
    for record in caplog.records:
        text = f"{record.getMessage()} {record.args!r} {record.__dict__!r}"
        assert TOKEN not in text, record.name
        assert QUERY_SECRET not in text, record.name


def test_rules_and_stats_in_the_log_dir(everything: Upstream, tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps([{"id": "sum-first", "tools": ["get-sum"], "type": "param_alias", "from": "first", "to": "a"}])
    )
    log_dir = tmp_path / "logs"

    async def exercise() -> tuple[bool, list[str]]:
        params = proxied(everything, "--rules", str(rules), "--log-dir", str(log_dir))
        async with connected(params) as session:
            await session.list_tools()
            return _text(await session.call_tool("get-sum", {"first": "2", "b": "3"}))

    assert run(exercise()) == (False, ["The sum of 2 and 3 is 5."])
    normalizer_stats = json.loads((log_dir / "normalizer_stats.json").read_text())
    assert normalizer_stats["by_rule"]["sum-first"]["hits"] == 1
    repairs = json.loads((log_dir / "repair-stats.json").read_text())
    assert repairs["by_tool"]["get-sum"] == {"calls": 1, "repaired": 1, "invalid": 0}
    # The kinds of repair only: a repair's path and values are the client's text, kept nowhere.
    assert repairs["recent_repairs"][0]["repairs"] == [{"kind": "string_to_number"}] * 2


# ---- outcomes: every tools/call recorded in the log dir


def _audit(log_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (log_dir / "audit.jsonl").read_text().splitlines()]


def _outcomes(log_dir: Path) -> dict[str, Any]:
    outcomes: dict[str, Any] = json.loads((log_dir / "outcomes.json").read_text())
    return outcomes


def _patterns(outcomes: dict[str, Any]) -> set[tuple[str, str, str, str, int]]:
    return {
        (pattern["tool"], pattern["param"], pattern["error_type"], pattern["shape"], pattern["count"])
        for pattern in outcomes["patterns"]
    }


def test_every_call_is_recorded_with_its_outcome(everything: Upstream, tmp_path: Path) -> None:
    """ok (with the rules and repairs applied), refused by validation (field, error type, value
    shape, never the value), and a misnamed parameter as an unknown and a missing name; the audit
    log holds one line per call, and outcomes.json is saved when the proxy stops."""
    from pydantic_lenient.observe.stats_file import load_outcomes
    from pydantic_lenient.observe.suggestions import suggest

    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps([{"id": "sum-first", "tools": ["get-sum"], "type": "param_alias", "from": "first", "to": "a"}])
    )
    log_dir = tmp_path / "logs"

    async def exercise() -> list[tuple[bool, list[str]]]:
        async with connected(proxied(everything, "--rules", str(rules), "--log-dir", str(log_dir))) as session:
            await session.list_tools()
            return [
                _text(await session.call_tool("get-sum", {"first": "2", "b": "3"})),
                _text(await session.call_tool("get-sum", {"a": "s3cret-value", "b": 2})),
                _text(await session.call_tool("echo", {"text": "hello"})),
            ]

    summed, refused, misnamed = run(exercise())
    assert summed == (False, ["The sum of 2 and 3 is 5."])
    assert refused[0]
    assert misnamed[0]
    lines = _audit(log_dir)
    assert [(line["tool"], line["status"]) for line in lines] == [
        ("get-sum", "ok"),
        ("get-sum", "refused"),
        ("echo", "refused"),
    ]
    assert lines[0]["norms"] == ["sum-first", "repair:string_to_number"]
    assert lines[0]["errors"] == []
    assert all(line["duration_ms"] > 0 for line in lines)
    assert lines[1]["errors"] == [{"param": "a", "type": "float_type", "shape": "string"}]
    assert lines[1]["norms"] == []  # a call still invalid goes upstream as it was sent
    assert sorted(lines[2]["errors"], key=lambda error: error["param"]) == [
        {"param": "message", "type": "missing", "shape": "missing parameter `message`"},
        {"param": "text", "type": "unknown_parameter", "shape": "unknown parameter `text`"},
    ]
    outcomes = _outcomes(log_dir)  # only the save at exit wrote it: the proxy saves every minute
    assert {(tools["tool"], tools["ok"], tools["refused"], tools["error"]) for tools in outcomes["tools"]} == {
        ("get-sum", 1, 1, 0),
        ("echo", 0, 1, 0),
    }
    assert _patterns(outcomes) == {
        ("get-sum", "a", "float_type", "string", 1),
        ("echo", "message", "missing", "missing parameter `message`", 1),
        ("echo", "text", "unknown_parameter", "unknown parameter `text`", 1),
    }
    assert [(alias["unknown"], alias["missing"]) for alias in outcomes["aliases"]] == [("text", "message")]
    assert outcomes["normalizer"]["by_rule"]["sum-first"]["hits"] == 1
    rule = suggest(load_outcomes(log_dir), min_count=1)[0].rule
    assert rule is not None
    assert (rule["type"], rule["from"], rule["to"]) == ("param_alias", "text", "message")
    for path in log_dir.iterdir():  # raw values are never stored
        assert "s3cret" not in path.read_text(), path.name
        assert "hello" not in path.read_text(), path.name


_LISTS_TOOLS = """
import json, sys
TOOLS = [{"name": "count", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
          "required": ["n"]}},
         {"name": "broken", "inputSchema": {"type": "object"}},
         {"name": "gone", "inputSchema": {"type": "object"}}]
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    reply = {"jsonrpc": "2.0", "id": request_id}
    if method == "initialize":
        reply["result"] = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        reply["result"] = {"tools": TOOLS}
    elif method == "tools/call":
        name, arguments = message["params"]["name"], message["params"].get("arguments", {})
        if name == "count" and type(arguments.get("n")) is int:
            reply["result"] = {"content": [{"type": "text", "text": str(arguments["n"])}]}
        elif name == "gone":
            reply["error"] = {"code": -32603, "message": "internal error"}
        else:  # a refusal, or a failure in the tool: the same isError either way
            reply["result"] = {"content": [{"type": "text", "text": "no"}], "isError": True}
    else:
        reply["result"] = {}
    print(json.dumps(reply), flush=True)
"""


def test_upstream_errors_are_failures_in_the_tool_and_counts_survive_a_restart(tmp_path: Path) -> None:
    upstream = _python_upstream(tmp_path, _LISTS_TOOLS)
    log_dir = tmp_path / "logs"

    async def exercise() -> list[bool]:
        async with connected(proxied(upstream, "--log-dir", str(log_dir), "--sample-chars", "3")) as session:
            await session.list_tools()
            results = [
                (await session.call_tool("count", {"n": "5"})).is_error,
                (await session.call_tool("count", {"n": "five"})).is_error,
                (await session.call_tool("broken", {})).is_error,
            ]
            with pytest.raises(MCPError):
                await session.call_tool("gone", {})
            return [bool(result) for result in results]

    assert run(exercise()) == [False, True, True]
    lines = _audit(log_dir)
    assert [(line["tool"], line["status"], line["norms"]) for line in lines] == [
        ("count", "ok", ["repair:string_to_number"]),
        ("count", "refused", []),
        ("broken", "error", []),  # isError for arguments the schema takes: a failure in the tool
        ("gone", "error", []),  # a JSON-RPC error
    ]
    assert lines[1]["errors"] == [{"param": "n", "type": "int_type", "shape": "string", "sample": "fiv…"}]
    assert run(exercise()) == [False, True, True]  # a second proxy adds to what the first saved
    tools = {tools["tool"]: (tools["ok"], tools["refused"], tools["error"]) for tools in _outcomes(log_dir)["tools"]}
    assert tools == {"count": (2, 2, 0), "broken": (0, 0, 2), "gone": (0, 0, 2)}
    assert _patterns(_outcomes(log_dir)) == {("count", "n", "int_type", "string", 2)}
    assert len(_audit(log_dir)) == 8


def test_a_call_the_upstream_never_answers_is_recorded_as_an_error(tmp_path: Path) -> None:
    upstream = _upstream(tmp_path, "os._exit(3)")
    log_dir = tmp_path / "logs"

    async def exercise() -> None:
        async with connected(proxied(upstream, "--log-dir", str(log_dir))) as session:
            with pytest.raises(MCPError):
                await session.call_tool("anything", {"a": 1})

    run(exercise())
    assert [(line["tool"], line["status"]) for line in _audit(log_dir)] == [("anything", "error")]
    assert _outcomes(log_dir)["tools"][0]["error"] == 1


def test_a_log_dir_that_cannot_be_written_never_breaks_a_call(tmp_path: Path) -> None:
    """The log dir is a file here (root writes to a read-only directory anyway): every write fails."""
    upstream = _python_upstream(tmp_path, _LISTS_TOOLS)
    log_dir = tmp_path / "not-a-directory"
    log_dir.write_text("taken")
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--log-dir", str(log_dir), "--", *upstream]
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 7}}},
    ]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_environment()
    ) as proxy:
        lines = "".join(json.dumps(request) + "\n" for request in requests).encode()
        try:
            output, errors = proxy.communicate(lines, timeout=HANG_GUARD)
        finally:
            proxy.kill()
    replies = [json.loads(line) for line in output.decode().splitlines()]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "7"}]}}
    assert proxy.returncode == 0
    assert b"cannot save the outcome stats" in errors
    assert log_dir.read_text() == "taken"


def test_the_command_refuses_a_corrupt_outcomes_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from pydantic_lenient.cli.main import main

    (tmp_path / "outcomes.json").write_text('{"format": "pydantic-lenient-outcomes", "tools": 5}')
    assert main(["proxy", "--log-dir", str(tmp_path), "--", "true"]) == 2
    error = capsys.readouterr().err
    assert f"{tmp_path / 'outcomes.json'}: not a saved outcomes file" in error
    assert (tmp_path / "outcomes.json").read_text() == '{"format": "pydantic-lenient-outcomes", "tools": 5}'
    assert main(["proxy", "--sample-chars", "5", "--", "true"]) == 2
    assert "--sample-chars needs --log-dir" in capsys.readouterr().err


def test_an_upstream_started_before_a_corrupt_log_directory_is_found_is_stopped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`serve` starts a child upstream first, so that it starts while the proxy loads; when the proxy
    then cannot go on, that child is stopped as at any other end (its stdin closed)."""
    from pydantic_lenient.cli.main import main

    (tmp_path / "outcomes.json").write_text('{"format": "pydantic-lenient-outcomes", "tools": 5}')
    ended = tmp_path / "ended"
    upstream = _python_upstream(
        tmp_path, f"import sys\nsys.stdin.read()\nopen({str(ended)!r}, 'w').write('stdin closed')\n"
    )
    assert main(["proxy", "--log-dir", str(tmp_path), "--", *upstream]) == 2
    assert "not a saved outcomes file" in capsys.readouterr().err
    assert ended.read_text() == "stdin closed"


# ---- faults, with tiny Python upstreams


def _python_upstream(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "upstream.py"
    script.write_text(textwrap.dedent(body))
    return [sys.executable, str(script)]


_ANSWERS_INITIALIZE = """
import json, os, sys, time
pid_file = sys.argv[1] if len(sys.argv) > 1 else None
if pid_file:
    open(pid_file, "w").write(str(os.getpid()))
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        reply = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "tiny", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": reply}), flush=True)
    elif message.get("method") == "tools/call":
        BEHAVIOUR
"""


def _upstream(tmp_path: Path, behaviour: str) -> list[str]:
    return _python_upstream(tmp_path, _ANSWERS_INITIALIZE.replace("BEHAVIOUR", behaviour))


@pytest.mark.parametrize("stdin", ["a request", "nothing"])
def test_an_upstream_that_cannot_start_is_one_error_and_exit_code_2_at_once(stdin: str) -> None:
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--", "/nonexistent/mcp-server"]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_environment()
    ) as proxy:
        if stdin == "a request":
            assert proxy.stdin is not None
            proxy.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')
            proxy.stdin.flush()
        try:  # stdin stays open: the proxy must not wait for the client to say anything
            code = proxy.wait(timeout=HANG_GUARD / 3)
        finally:
            proxy.kill()
        assert proxy.stderr is not None
        errors = proxy.stderr.read().decode()
    assert code == 2
    assert errors.count("\n") == 1, errors
    assert "cannot start the upstream MCP server `/nonexistent/mcp-server`" in errors


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_an_upstream_that_crashes_mid_session_fails_the_waiting_call(tmp_path: Path) -> None:
    upstream = _upstream(tmp_path, "os._exit(3)")

    async def exercise() -> str:
        async with connected(proxied(upstream)) as session:
            with pytest.raises(MCPError) as caught:
                await session.call_tool("anything", {})
            return str(caught.value)

    assert "exited before answering this request" in run(exercise())


def test_an_upstream_that_stops_answering_is_detected_and_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "upstream.pid"
    upstream = [*_upstream(tmp_path, "time.sleep(3600)"), str(pid_file)]

    async def exercise() -> str:
        async with connected(proxied(upstream, "--ping-interval", "0.3", "--ping-timeout", "0.5")) as session:
            with pytest.raises(MCPError) as caught:
                await session.call_tool("anything", {})
            return str(caught.value)

    assert "stopped answering (no reply to a ping within 0.5 s)" in run(exercise())
    assert _wait_gone(int(pid_file.read_text()))


def _start_proxy(upstream: list[str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--", *upstream]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_environment()
    )


def _started(pid_file: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text():
            return int(pid_file.read_text())
        time.sleep(0.05)
    raise AssertionError("the upstream did not start")


@pytest.mark.parametrize("stop", ["stdin closed", "SIGTERM", "SIGINT"])
def test_the_client_going_away_stops_the_upstream(tmp_path: Path, stop: str) -> None:
    pid_file = tmp_path / "upstream.pid"
    # An upstream that ignores its stdin closing, so only the proxy's SIGTERM can stop it.
    upstream = _python_upstream(
        tmp_path,
        """
        import os, sys, time
        open(sys.argv[1], "w").write(str(os.getpid()))
        sys.stdin.read()
        time.sleep(3600)
        """,
    )
    with _start_proxy([*upstream, str(pid_file)]) as proxy:
        try:
            upstream_pid = _started(pid_file)
            if stop == "stdin closed":
                assert proxy.stdin is not None
                proxy.stdin.close()
            else:
                proxy.send_signal(signal.SIGTERM if stop == "SIGTERM" else signal.SIGINT)
            assert proxy.wait(timeout=30) == 0
            assert _wait_gone(upstream_pid)
        finally:
            proxy.kill()


def test_messages_that_are_not_json_rpc_reach_the_upstream_as_sent(tmp_path: Path) -> None:
    upstream = _python_upstream(
        tmp_path,
        """
        import sys
        for line in sys.stdin:
            sys.stdout.write("got " + line.replace('"', "'"))
            sys.stdout.flush()
        """,
    )
    with _start_proxy(upstream) as proxy:
        lines = b'not json\n["a", "b"]\n{"id": 1, "method": "tools/call", "params": 5}\n'
        output, _ = proxy.communicate(lines, timeout=30)
    assert output.decode().splitlines() == [
        "got not json",
        "got ['a', 'b']",
        "got {'id': 1, 'method': 'tools/call', 'params': 5}",
    ]


def test_the_command_refuses_bad_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from pydantic_lenient.cli.main import main

    assert main(["proxy", "--ping-timeout", "0", "--", "true"]) == 2
    assert "--ping-timeout must be a positive number" in capsys.readouterr().err
    assert main(["proxy", "--rules", str(tmp_path / "missing.json"), "--", "true"]) == 2
    assert "cannot read rules" in capsys.readouterr().err


def test_a_slow_client_is_not_taken_for_a_hung_upstream(tmp_path: Path) -> None:
    """The client stops reading while the upstream sends 8 MB: the upstream blocks on its full pipe
    and cannot answer the proxy's ping, which is not its fault. The call is answered, and the
    proxy exits 0 with no "stopped answering"."""
    upstream = _python_upstream(
        tmp_path,
        """
        import json, sys
        for line in sys.stdin:
            message = json.loads(line)
            if "id" not in message:
                continue
            if message.get("method") == "tools/call":
                note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": "info", "data": "x" * 65536}})
                for _ in range(128):
                    print(note, flush=True)
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}), flush=True)
        """,
    )
    command = [
        sys.executable, "-m", "pydantic_lenient", "proxy", "--ping-interval", "0.2", "--ping-timeout", "0.5",
        "--", *upstream,
    ]  # fmt: skip
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "flood", "arguments": {}}}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_environment()
    ) as proxy:
        assert proxy.stdin is not None
        proxy.stdin.write(json.dumps(call).encode() + b"\n")
        proxy.stdin.flush()
        time.sleep(3)  # not reading: several ping timeouts go by
        try:
            output, errors = proxy.communicate(timeout=HANG_GUARD)
        finally:
            proxy.kill()
    lines = output.splitlines()
    assert json.loads(lines[-1]) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert len(lines) == 129
    assert b"stopped answering" not in errors
    assert proxy.returncode == 0


@pytest.mark.parametrize(("stdin_kind", "stdout_kind"), [("file", "file"), ("devnull", "file"), ("file", "devnull")])
def test_stdin_and_stdout_may_be_files_or_dev_null(tmp_path: Path, stdin_kind: str, stdout_kind: str) -> None:
    """Pipe transports refuse files and /dev/null; the proxy reads and writes them all the same."""
    upstream = _python_upstream(
        tmp_path,
        """
        import sys
        for line in sys.stdin:
            sys.stdout.write(line.replace('"method":"ping"', '"result":{}'))
            sys.stdout.flush()
        """,
    )
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    output = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--", *upstream]
    with (
        open(requests if stdin_kind == "file" else os.devnull, "rb") as stdin,
        open(output if stdout_kind == "file" else os.devnull, "wb") as stdout,
    ):
        done = subprocess.run(
            command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=_environment(), timeout=HANG_GUARD
        )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    if stdout_kind == "file":
        expected = b'{"jsonrpc":"2.0","id":1,"result":{}}\n' if stdin_kind == "file" else b""
        assert output.read_bytes() == expected
