"""`pydantic-lenient proxy` end to end: the official SDK's client over stdio, through the proxy, to
a published server no one here wrote (`@modelcontextprotocol/server-everything`, pinned in
tests/upstream), and to tiny Python upstreams for the fault cases.

Each test has a generous timeout as a hang guard.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.conftest import SERVER_EVERYTHING, require_external
from tests.sdks import require

require("mcp")

import mcp.types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from pydantic_lenient.schema.widen import widen_schema  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests" / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
HANG_GUARD = 90.0
T = TypeVar("T")


@pytest.fixture(scope="module")
def everything() -> list[str]:
    """The command that starts server-everything over stdio; skipped (or failed in CI) without it."""
    require_external(SERVER_EVERYTHING)
    node = shutil.which("node")
    assert node is not None
    return [node, str(EVERYTHING / "index.js"), "stdio"]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def proxied(upstream: list[str], *options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "pydantic_lenient", "proxy", *options, "--", *upstream],
        env=_environment(),
    )


def direct(upstream: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=upstream[0], args=upstream[1:])


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(guarded())


@asynccontextmanager
async def connected(params: StdioServerParameters, **callbacks: Any) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write, **callbacks) as session,
        ):
            await session.initialize()
            yield session


def _text(result: types.CallToolResult) -> tuple[bool, list[str]]:
    return bool(result.is_error), [item.text for item in result.content if isinstance(item, types.TextContent)]


# ---- server-everything, direct and through the proxy


def test_tools_list_keeps_every_tool_and_widens_only_input_schemas(everything: list[str]) -> None:
    async def both() -> tuple[types.ListToolsResult, types.ListToolsResult]:
        async with connected(direct(everything)) as plain, connected(proxied(everything)) as lenient:
            return await plain.list_tools(), await lenient.list_tools()

    plain, lenient = run(both())
    assert [tool.name for tool in lenient.tools] == [tool.name for tool in plain.tools]
    for before, after in zip(plain.tools, lenient.tools, strict=False):
        assert after.model_dump(exclude={"input_schema"}) == before.model_dump(exclude={"input_schema"})
        assert after.input_schema == widen_schema(before.input_schema, "type-array")
    get_sum = {tool.name: tool for tool in lenient.tools}["get-sum"]
    assert get_sum.input_schema["properties"]["a"]["type"] == ["number", "string"]


def test_any_of_style_is_passed_through_to_the_schemas(everything: list[str]) -> None:
    async def listed() -> types.ListToolsResult:
        async with connected(proxied(everything, "--style", "any-of")) as session:
            return await session.list_tools()

    tools = {tool.name: tool for tool in run(listed()).tools}
    assert tools["get-sum"].input_schema["properties"]["a"]["anyOf"][0] == {"type": "number"}


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


def test_correct_and_recoverable_calls_give_the_direct_result(everything: list[str]) -> None:
    async def compare() -> list[tuple[Any, Any]]:
        pairs = []
        async with connected(direct(everything)) as plain, connected(proxied(everything)) as lenient:
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
    everything: list[str], tool: str, arguments: dict[str, Any]
) -> None:
    async def compare() -> tuple[Any, Any]:
        async with connected(direct(everything)) as plain, connected(proxied(everything)) as lenient:
            await lenient.list_tools()
            return _text(await plain.call_tool(tool, arguments)), _text(await lenient.call_tool(tool, arguments))

    plain, lenient = run(compare())
    assert plain[0]
    assert lenient == plain


def test_requests_that_are_not_tools_pass_through(everything: list[str]) -> None:
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


def test_server_capabilities_reach_the_client_unchanged(everything: list[str]) -> None:
    async def initialize(params: StdioServerParameters) -> types.InitializeResult:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                return await session.initialize()

    async def both() -> tuple[types.InitializeResult, types.InitializeResult]:
        return await initialize(direct(everything)), await initialize(proxied(everything))

    plain, lenient = run(both())
    assert lenient.model_dump() == plain.model_dump()
    assert lenient.capabilities.completions is not None


def test_server_to_client_requests_and_their_replies_pass_unchanged(everything: list[str]) -> None:
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
        callbacks = {"sampling_callback": sampling, "elicitation_callback": elicitation, "list_roots_callback": roots}
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


def test_notifications_pass_through(everything: list[str]) -> None:
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
    assert "notifications/tools/list_changed" in notices


def test_rules_and_stats_in_the_log_dir(everything: list[str], tmp_path: Path) -> None:
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
    assert sorted(repair["path"] for repair in repairs["recent_repairs"][0]["repairs"]) == ["/a", "/b"]


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


def test_every_call_is_recorded_with_its_outcome(everything: list[str], tmp_path: Path) -> None:
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


def test_an_upstream_that_cannot_start_gives_a_clear_error() -> None:
    async def exercise() -> str:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(proxied(["/nonexistent/mcp-server"]), errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                with pytest.raises(MCPError) as caught:
                    await session.initialize()
                return str(caught.value)

    message = run(exercise())
    assert "cannot start the upstream MCP server `/nonexistent/mcp-server`" in message


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
