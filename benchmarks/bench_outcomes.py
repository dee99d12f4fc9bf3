"""Cost of recording outcomes: a tools/call handled in process by the official MCP SDK, with
`make_lenient` alone and with a recorder writing the audit log and stats to a log directory.

python benchmarks/bench_outcomes.py
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp
from _timing import print_ratios
from mcp.server.mcpserver import MCPServer

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.mcp_adapter import make_lenient
from pydantic_lenient.outcomes import OutcomeRecorder

NUMBER = 200
ROUNDS = 15


def search(folder: str, query: str, limit: Optional[LenientUInt] = None, unread: StrictBoolish = False) -> str:
    """Search a mail folder."""
    return f"{folder}: {query} ({limit}, {unread})"


def build(recorder: OutcomeRecorder | None) -> MCPServer:
    server = MCPServer("bench")
    server.tool()(search)
    return make_lenient(server, recorder=recorder)


async def best_times(cases: dict[str, Callable[[], Awaitable[Any]]]) -> dict[str, float]:
    """CPU seconds per call, interleaved rounds, best round per case (as `_timing.best_times`, awaited).

    CPU time of the whole process (every thread, the recorder's included) rather than wall time: the
    client, the server and the recorder all run here, and other processes on a shared machine then
    cost nothing."""
    for call in cases.values():
        await call()
    best = dict.fromkeys(cases, float("inf"))
    names = list(cases)
    for _ in range(ROUNDS):
        names.reverse()  # the case after a switch of client runs slower: each takes both places
        for name in names:
            call = cases[name]
            started = time.process_time()
            for _ in range(NUMBER):
                await call()
            best[name] = min(best[name], (time.process_time() - started) / NUMBER)
    return best


async def main() -> None:
    # The SDK logs each refused call through rich; that console cost is not what is measured.
    logging.disable(logging.CRITICAL)
    ok = {"folder": "INBOX", "query": "invoice", "limit": "100", "unread": "false"}
    refused = {"folder": "INBOX", "query": "invoice", "limit": "many"}
    with tempfile.TemporaryDirectory() as log_dir:
        recorder = OutcomeRecorder(log_dir)  # the defaults: flush every second, save every 30 s
        async with contextlib.AsyncExitStack() as stack:
            plain = await stack.enter_async_context(mcp.Client(build(None)))
            recorded = await stack.enter_async_context(mcp.Client(build(recorder)))
            times = await best_times(
                {
                    "plain ok": lambda: plain.call_tool("search", ok),
                    "recorded ok": lambda: recorded.call_tool("search", ok),
                    "plain refused": lambda: plain.call_tool("search", refused),
                    "recorded refused": lambda: recorded.call_tool("search", refused),
                }
            )
        recorder.close()
        assert recorder.snapshot().tools[0].ok >= NUMBER * ROUNDS
    rows = [
        ("tools/call that succeeds, recorded (audit log, stats) vs not", "recorded ok", "plain ok", 1.05),
        ("tools/call refused by validation, recorded vs not", "recorded refused", "plain refused", float("inf")),
    ]
    print_ratios("Recording outcomes, official SDK in process (mcp.Client on the server object)", rows, times)


if __name__ == "__main__":
    asyncio.run(main())
