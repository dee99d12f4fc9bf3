"""Unknown argument names are seen (issue 23, item 5).

An argument name the tool does not declare is recorded as an ``unknown_parameter`` pattern carrying
its name, in both adapters and in the proxy, whether the call succeeds or fails; `suggest` proposes
an alias when the name is near a declared one. No value is ever recorded, and whether the name is
refused or ignored stays the server's own setting.
"""

from __future__ import annotations

import asyncio
import json
import string
from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.observe.failures import near, unknown_parameters
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import OutcomeStats
from pydantic_lenient.observe.suggestions import suggest
from tests.sdks import require

SECRET = "s3cret-value-never-recorded"


def search(folder: str, limit: Optional[int] = None) -> str:
    return f"{limit} from {folder}"


def edit(path: str, old_text: str, new_text: str) -> str:
    return path


def _unknown(stats: OutcomeStats) -> dict[tuple[str, str], int]:
    return {
        (pattern.tool, pattern.param): pattern.count
        for pattern in stats.patterns
        if pattern.error_type == "unknown_parameter"
    }


def _aliases(stats: OutcomeStats) -> set[tuple[str, str, str]]:
    return {
        (suggestion.tool, suggestion.rule["from"], suggestion.rule["to"])
        for suggestion in suggest(stats)
        if suggestion.rule is not None and suggestion.rule["type"] == "param_alias"
    }


# Three ok calls with a case-convention variant, one ok call with a name near nothing, three
# refused calls with old_str for the required old_text.
CALLS: list[tuple[str, dict[str, Any]]] = [
    *[("search", {"folder": "Dev", "Limit": SECRET})] * 3,
    ("search", {"folder": "Dev", "max": SECRET}),
    *[("edit", {"path": "a.txt", "old_str": SECRET, "new_text": "y"})] * 3,
]


def _check_recorded(stats: OutcomeStats, errors: list[bool]) -> None:
    assert _unknown(stats) == {("search", "Limit"): 3, ("search", "max"): 1, ("edit", "old_str"): 3}
    assert _aliases(stats) == {("search", "Limit", "limit"), ("edit", "old_str", "old_text")}
    expected: dict[str, list[int]] = {}
    for (name, _), error in zip(CALLS, errors, strict=True):
        expected.setdefault(name, [0, 0])[error] += 1
    assert {tool.tool: [tool.ok, tool.refused] for tool in stats.tools} == expected
    assert SECRET not in stats.model_dump_json()


def test_the_official_sdk_adapter_records_unknown_names_of_ok_and_refused_calls() -> None:
    mcpserver = require("mcp.server.mcpserver")
    from mcp import Client

    from pydantic_lenient.adapters.mcp import make_lenient

    recorder = OutcomeRecorder()
    server = make_lenient(mcpserver.MCPServer("files"), recorder=recorder)
    server.tool()(search)
    server.tool()(edit)

    async def run() -> list[bool]:
        async with Client(server) as client:
            return [(await client.call_tool(name, arguments)).is_error for name, arguments in CALLS]

    errors = asyncio.run(run())
    assert errors == [False] * 4 + [True] * 3  # the SDK ignores unknown names: we record, we do not refuse
    _check_recorded(recorder.snapshot(), errors)


def test_fastmcp_middleware_records_unknown_names_of_ok_and_refused_calls() -> None:
    fastmcp = require("fastmcp")

    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    recorder = OutcomeRecorder()

    async def run(middleware: list[Any]) -> list[bool]:
        server = fastmcp.FastMCP("files", middleware=middleware)
        server.tool(search)
        server.tool(edit)
        errors = []
        async with fastmcp.Client(server) as client:
            for name, arguments in CALLS:
                result = await client.call_tool(name, arguments, raise_on_error=False)
                errors.append(result.is_error)
        return errors

    errors = asyncio.run(run([LenientMiddleware(recorder=recorder)]))
    assert errors == asyncio.run(run([]))  # FastMCP's own setting decides, as without the middleware
    _check_recorded(recorder.snapshot(), errors)


def test_the_proxy_records_unknown_names_of_ok_and_refused_calls() -> None:
    relay_module = require("pydantic_lenient.proxy.relay")
    recorder = OutcomeRecorder()
    relay = relay_module._Relay("type-array", None, None, recorder)
    tools = [
        {"name": name, "inputSchema": schema}
        for name, schema in [
            ("search", {"type": "object", "properties": {"folder": {"type": "string"}, "limit": {"type": "integer"}}}),
            (
                "edit",
                {
                    "type": "object",
                    "properties": {name: {"type": "string"} for name in ("path", "old_text", "new_text")},
                    "required": ["path", "old_text", "new_text"],
                },
            ),
        ]
    ]
    relay.from_client(b'{"jsonrpc":"2.0","id":0,"method":"tools/list"}\n')
    relay.from_upstream(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"tools": tools}}).encode())
    for request_id, (name, arguments) in enumerate(CALLS, start=1):
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        forwarded = json.loads(relay.from_client(json.dumps(message).encode()).upstream)
        assert forwarded["params"]["arguments"] == arguments  # the upstream decides what an unknown name means
        is_error = name == "edit"
        answer = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [], "isError": is_error}}
        relay.from_upstream(json.dumps(answer).encode())
    _check_recorded(recorder.snapshot(), [name == "edit" for name, _ in CALLS])


@pytest.mark.parametrize(
    ("name", "declared", "expected"),
    [
        ("old_str", ["path", "old_text", "new_text"], "old_text"),
        ("oldText", ["old_text"], "old_text"),
        ("OLD_TEXT", ["old_text"], "old_text"),
        ("old-text", ["oldText"], "oldText"),
        ("folder_dir", ["folder_directory"], "folder_directory"),
        ("max", ["limit"], None),
        ("old_str", ["old_text", "old_string"], None),  # two candidates: no guess
        ("text", ["textual"], None),
    ],
)
def test_near_names(name: str, declared: list[str], expected: str | None) -> None:
    assert near(name, declared) == expected


_WORDS = st.lists(st.text(string.ascii_lowercase, min_size=2, max_size=8), min_size=1, max_size=4)


@given(_WORDS)
def test_every_case_convention_of_a_declared_name_is_near_it(words: list[str]) -> None:
    snake = "_".join(words)
    camel = words[0] + "".join(word.capitalize() for word in words[1:])
    for variant in (camel, snake.upper(), "-".join(words), "".join(word.capitalize() for word in words)):
        assert near(variant, [snake]) in (snake, None if variant == snake else snake)


@given(st.dictionaries(st.text(max_size=300), st.text(max_size=5), max_size=30), st.sets(st.text(max_size=20)))
def test_unknown_names_are_never_values_and_are_bounded(arguments: dict[str, str], known: set[str]) -> None:
    failures = unknown_parameters(arguments, known)
    assert len(failures) <= 10
    for failure in failures:
        assert failure.error_type == "unknown_parameter"
        assert failure.sample is None
        assert len(failure.param) <= 200
        assert failure.near is None or failure.near in known
    assert {failure.param for failure in failures} <= {name[:200] for name in arguments if name not in known} | {
        failure.param for failure in failures if not failure.param.isascii()
    }
