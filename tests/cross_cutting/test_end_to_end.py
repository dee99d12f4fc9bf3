"""The contract over a real transport: every lenient type, through each SDK's adapter, over stdio.

A server (tests/contract_server.py) with one tool per lenient type, required and Optional, runs in a
child process for each SDK and style; the SDK's own client sends it the contract's hostile values.
Every tool result must be what ``model_validate`` says of the same call: the same value, or the same
errors. What ``tools/list`` advertises must be the style stage's rewrite of what the SDK alone
advertises, and a host validating against it must agree with the result, within the README's
listed exceptions (the ``strict`` style may only refuse more).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import to_json

from pydantic_lenient import Style, input_schema
from pydantic_lenient.testing import host_validator
from tests.contract import FIXED_VALUES, JSON_CORPUS, Verdict, agrees, server_verdict, tool_model
from tests.contract_server import JSON_TYPES, TOOL_TYPES, build_fastmcp, build_official, tool_name
from tests.sdks import require

SERVER = Path(__file__).resolve().parents[1] / "contract_server.py"
ROOT = SERVER.parent.parent

# JSON text over the limits the issue found leaking through the official SDK's pre-parse.
HUGE_TEXT = "[" + '"x",' * 300_000 + '"x"]'
DEEP_TEXT = "[" * 70 + "]" * 70
JSON_VALUES: list[Any] = [
    *JSON_CORPUS,
    "[1,2,3,4,5,6,7,8,9,10,11,12]",  # 28 characters
    "[[[[1]]]]",
    '{"a": 1}',
    ' ["x"]',
    HUGE_TEXT,
    DEEP_TEXT,
]
# A few values of every kind, for the styles whose listing is checked but whose calls repeat.
SAMPLE_VALUES: list[Any] = [None, "null", "100", 100, "-1", "true", "FALSE", 1.5, "1e999", "[1]", [1], '{"a": 1}', ""]


def _values(type_name: str, *, full: bool) -> list[Any]:
    if not full:
        return SAMPLE_VALUES
    return JSON_VALUES if type_name in JSON_TYPES else [*FIXED_VALUES, "[1]", '["1"]', '{"value": 1}']


@functools.cache
def _model(type_name: str, optional: bool) -> type[BaseModel]:
    return tool_model(TOOL_TYPES[type_name], optional=optional)


def _expected(type_name: str, optional: bool, value: Any) -> tuple[Verdict, Any]:
    model = _model(type_name, optional)
    verdict = server_verdict(model, {"value": value})
    if not verdict.accepted:
        return verdict, None
    return verdict, json.loads(to_json(model.model_validate({"value": value}).value))  # type: ignore[attr-defined]


_ERROR_TYPE = re.compile(r"\[type=([a-z_]+),")


async def _session(sdk: str, style: Style, *, full: bool) -> list[str]:
    """Drive one server process; return every disagreement found, as readable lines."""
    mcp = require("mcp")
    parameters = mcp.StdioServerParameters(
        command=sys.executable, args=[str(SERVER), sdk, style], cwd=str(ROOT), env=dict(os.environ)
    )
    problems: list[str] = []
    async with mcp.Client(parameters) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        sdk_alone = await _sdk_alone_schemas(sdk)
        calls: list[tuple[str, str, bool, Any]] = []
        for type_name in TOOL_TYPES:
            for optional in (False, True):
                name = tool_name(type_name, optional)
                if listed[name] != input_schema(sdk_alone[name], style=style):
                    problems.append(f"{name}: tools/list is not the {style} style of the SDK's own schema")
                calls += [(name, type_name, optional, value) for value in _values(type_name, full=full)]

        async def call(name: str, value: Any) -> Any:
            return await client.call_tool(name, {"value": value})

        results = []
        for start in range(0, len(calls), 64):  # pipelined, so the transport's latency is paid once a batch
            batch = calls[start : start + 64]
            results += await asyncio.gather(*(call(name, value) for name, _, _, value in batch))
        hosts = {name: host_validator(schema) for name, schema in listed.items()}
        for (name, type_name, optional, value), result in zip(calls, results, strict=True):
            verdict, value_out = _expected(type_name, optional, value)
            text = result.content[0].text if result.content else ""
            shown = repr(value)[:60]
            if result.is_error:
                got = _ERROR_TYPE.findall(text)
                if verdict.accepted or got != [error["type"] for error in verdict.errors]:
                    problems.append(f"{name} {shown}: tool error {text[:200]!r}, model says {verdict.errors or 'ok'}")
            elif not verdict.accepted or json.loads(text) != value_out:
                problems.append(
                    f"{name} {shown}: tool took it as {text[:80]}, model says {verdict.errors or value_out}"
                )
            host_accepts = hosts[name].is_valid({"value": value})
            # The listed exceptions: a host takes a string the model refuses (out of range, not JSON of T).
            excepted = host_accepts and (isinstance(value, str) if type_name in JSON_TYPES else None)
            listed_exception = excepted if excepted is not None else agrees(host_accepts, value, verdict)
            if style == "strict":  # canonical values only: the host may refuse more, never take more
                if host_accepts and result.is_error and not listed_exception:
                    problems.append(f"{name} {shown}: the strict schema admits it and the tool refuses it")
            elif host_accepts != (not result.is_error) and not listed_exception:
                problems.append(f"{name} {shown}: host {host_accepts}, tool error {result.is_error}")
    return problems


async def _sdk_alone_schemas(sdk: str) -> dict[str, dict[str, Any]]:
    """What the same tools advertise on the SDK without the adapter, as its own client receives it."""
    if sdk == "official":
        async with require("mcp").Client(build_official(adapter=False)) as client:
            return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    async with require("fastmcp").Client(build_fastmcp(middleware=False)) as client:
        return {tool.name: tool.input_schema for tool in await client.list_tools()}


@pytest.mark.parametrize("sdk", ["official", "fastmcp"])
@pytest.mark.parametrize("style", ["type-array", "any-of", "strict"])
def test_every_lenient_type_keeps_the_contract_over_stdio(sdk: str, style: Style) -> None:
    require("fastmcp" if sdk == "fastmcp" else "mcp.server.mcpserver")
    problems = asyncio.run(asyncio.wait_for(_session(sdk, style, full=style == "type-array"), timeout=300))
    assert not problems, "\n".join(problems[:30])
