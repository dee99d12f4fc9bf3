"""Both MCP adapters record the name and version each real SDK client sends: at ``initialize``
(protocol 2025-11-25) or in every request's ``_meta`` (2026-07-28)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import pytest

from pydantic_lenient.observe.auditlog import read_audit_log
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import OutcomeStats, load_outcomes
from tests.sdks import require


def search(folder: str, limit: Optional[int] = None) -> str:
    """Search a folder."""
    return folder


CALLS = [("search", {"folder": "Dev", "limit": 5}), ("search", {"folder": "Dev", "limit": "many"})]


async def _official(recorder: OutcomeRecorder, mode: str) -> None:
    mcp = require("mcp")
    from mcp.types import Implementation

    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("named")
    server.tool()(search)
    make_lenient(server, recorder=recorder)
    client_info = Implementation(name="cursor-vscode", version="1.7.2")
    async with mcp.Client(server, client_info=client_info, mode=mode) as client:
        for name, arguments in CALLS:
            await client.call_tool(name, arguments)


async def _fastmcp(recorder: OutcomeRecorder, mode: str) -> None:
    fastmcp = require("fastmcp")
    from mcp.types import Implementation

    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("named", middleware=[LenientMiddleware(recorder=recorder)])
    server.tool(search)
    client_info = Implementation(name="cursor-vscode", version="1.7.2")
    async with fastmcp.Client(server, client_info=client_info) as client:
        for name, arguments in CALLS:
            await client.call_tool(name, arguments, raise_on_error=False)


def recorded(sdk: Any, mode: str, log_dir: Path) -> OutcomeStats:
    recorder = OutcomeRecorder(log_dir, flush_every=3600)
    asyncio.run(sdk(recorder, mode))
    recorder.close()
    return load_outcomes(log_dir)


@pytest.mark.parametrize(
    ("sdk", "mode"),
    [
        pytest.param(_official, "legacy", id="official-sdk-initialize"),
        pytest.param(_official, "2026-07-28", id="official-sdk-meta"),
        pytest.param(_fastmcp, "", id="fastmcp"),
    ],
)
def test_each_call_is_recorded_with_the_client_that_sent_it(sdk: Any, mode: str, tmp_path: Path) -> None:
    stats = recorded(sdk, mode, tmp_path)
    assert [(c.client, c.version, c.host, c.ok, c.refused) for c in stats.clients] == [
        ("cursor-vscode", "1.7.2", "cursor", 1, 1)
    ]
    [pattern] = stats.patterns
    assert pattern.clients == {"cursor-vscode": 1}
    entries = read_audit_log(tmp_path)
    assert [(entry.client.name, entry.client.version) if entry.client else None for entry in entries] == [
        ("cursor-vscode", "1.7.2")
    ] * 2
