"""One intent, one verdict, through every way in that repairs a schema we did not write.

The intent is a nullable integer from 1 to 500. Each way in must give every value one verdict:
the meaning it validates to, or a refusal. The ways: the widened schema as a host checks it
(`widen_schema` + `host_validator`), `Repairer`, `RepairingClient` and the stdio proxy. The types'
ways in (``Lenient[...]``, the hand-written types) have the same rows in tests/test_one_verdict.py.
The ``"null"`` policy (`NULL_TEXT`: the string is None where null is admitted and the string
``"null"`` is not) and the leading-zeros policy (``"007"`` is 7) hold in each.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pydantic_lenient.adapters.clients import RepairingClient
from pydantic_lenient.repair import Repairer
from pydantic_lenient.schema.hosts import host_validator
from pydantic_lenient.schema.widen import widen_schema
from tests.sdks import require

INTENT = {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 500}, {"type": "null"}]}
SCHEMA = {"type": "object", "properties": {"limit": INTENT}, "required": ["limit"]}
REFUSED = "refused"

# What the one policy makes of each value: its meaning, or a refusal.
VERDICTS: dict[str, Any] = {
    '"null"': None,
    '"007"': 7,
    '"0"': REFUSED,
    '"1"': 1,
    '"500"': 500,
    '"501"': REFUSED,
    "0": REFUSED,
    "1": 1,
    "500": 500,
    "501": REFUSED,
    "null": None,
}
VALUES = [json.loads(written) for written in VERDICTS]


def _server_verdict(arguments: dict[str, Any]) -> Any:
    """What the server we did not write does: validate the intent strictly, as JSON Schema says."""
    if host_validator(SCHEMA, check=False).is_valid(arguments):
        return arguments["limit"]
    return REFUSED


def _expected() -> list[Any]:
    return list(VERDICTS.values())


@pytest.mark.parametrize("style", ["type-array", "any-of"])
def test_the_widened_schema_as_a_host_checks_it(style: str) -> None:
    widened = widen_schema(SCHEMA, style)  # type: ignore[arg-type]
    host = host_validator(widened)
    admitted = [host.is_valid({"limit": value}) for value in VALUES]
    assert admitted == [verdict != REFUSED for verdict in _expected()]


def test_repairer() -> None:
    repairer = Repairer(SCHEMA)
    verdicts = []
    for value in VALUES:
        result = repairer.repair({"limit": value})
        verdicts.append(result.arguments["limit"] if result.valid else REFUSED)
    assert verdicts == _expected()


class _Session:
    """Stands in for an MCP client session: lists the intent's tool and answers as the server would."""

    async def list_tools(self) -> list[Any]:
        return [SimpleNamespace(name="pick", inputSchema=SCHEMA)]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return _server_verdict(dict(arguments or {}))


def test_repairing_client() -> None:
    async def every_value() -> list[Any]:
        client = RepairingClient(_Session())
        return [await client.call_tool("pick", {"limit": value}) for value in VALUES]

    assert asyncio.run(every_value()) == _expected()


_UPSTREAM = """
import json, sys
SCHEMA = json.loads(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    reply = {"jsonrpc": "2.0", "id": request_id}
    if method == "initialize":
        reply["result"] = {"protocolVersion": message["params"]["protocolVersion"],
                           "capabilities": {"tools": {}}, "serverInfo": {"name": "intent", "version": "1"}}
    elif method == "tools/list":
        reply["result"] = {"tools": [{"name": "pick", "inputSchema": SCHEMA}]}
    elif method == "tools/call":
        limit = message["params"].get("arguments", {}).get("limit", "missing")
        valid = limit is None or (type(limit) is int and 1 <= limit <= 500)
        reply["result"] = {"content": [{"type": "text", "text": json.dumps(limit)}], "isError": not valid}
    else:
        reply["result"] = {}
    print(json.dumps(reply), flush=True)
"""


def test_the_stdio_proxy(tmp_path: Path) -> None:
    require("mcp")
    import mcp.types as types

    from tests.proxy.test_proxy import connected, proxied, run

    script = tmp_path / "upstream.py"
    script.write_text(textwrap.dedent(_UPSTREAM))
    upstream = [sys.executable, str(script), json.dumps(SCHEMA)]

    async def every_value() -> tuple[list[Any], Any]:
        async with connected(proxied(upstream)) as session:
            listed = await session.list_tools()
            verdicts = []
            for value in VALUES:
                result = await session.call_tool("pick", {"limit": value})
                (content,) = result.content
                assert isinstance(content, types.TextContent)
                verdicts.append(REFUSED if result.is_error else json.loads(content.text))
            return verdicts, listed.tools[0].input_schema

    verdicts, advertised = run(every_value())
    assert verdicts == _expected()
    assert advertised == widen_schema(SCHEMA)  # what the host checks is the widened schema above
