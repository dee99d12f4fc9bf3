"""Cost of recording outcomes: a tools/call handled in process by the official MCP SDK, through
`make_lenient`, with and without a recorder writing the audit log and stats to a log directory.

python benchmarks/bench_outcomes.py

One server and one client serve every case; a case with recording on gives the middleware its
recorder for the round, a case without takes it away, so both run the same objects and differ only
by the recording. The recorder's background work (turning refusals into field failures, folding
the counts, writing the audit lines) is done at the end of each recording round and timed with it:
the first ratio of each pair is all that recording costs; the second, the call path's share alone
(what a call waits for, the rest being the background thread's).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp
from _timing import print_ratios
from mcp.server.mcpserver import MCPServer

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.mcp_adapter import LenientServerMiddleware, make_lenient
from pydantic_lenient.outcomes import OutcomeRecorder

NUMBER = 100
ROUNDS = 30
SETTLE = 20  # untimed calls of a case before its timed ones, so no case pays for the one before it


def search(folder: str, query: str, limit: Optional[LenientUInt] = None, unread: StrictBoolish = False) -> str:
    """Search a mail folder."""
    return f"{folder}: {query} ({limit}, {unread})"


CALLS: dict[str, dict[str, Any]] = {
    "ok": {"folder": "INBOX", "query": "invoice", "limit": "100", "unread": "false"},
    "refused": {"folder": "INBOX", "query": "invoice", "limit": "many", "unread": "false"},
}


async def best_times(
    client: mcp.Client, middleware: LenientServerMiddleware, recorder: OutcomeRecorder
) -> dict[str, float]:
    """CPU seconds per call for each (call, recorded or not), interleaved rounds, best round per case.

    CPU time of the whole process (every thread) rather than wall time: the client, the server and
    the recorder all run here, and other processes on a shared machine then cost nothing. Each
    timed round starts settled: a few untimed calls of its own case (and their flush) first, so the
    caches hold what this case uses rather than what the case before it left, then the collector,
    so no round pays for garbage another left."""
    cases = [(call, recorded) for call in CALLS for recorded in (False, True)]
    order = random.Random(0)
    best: dict[str, float] = {}
    for _ in range(ROUNDS):
        order.shuffle(cases)  # and in no fixed order
        for call, recorded in cases:
            name = f"{'recorded' if recorded else 'plain'} {call}"
            middleware.recorder = recorder if recorded else None
            arguments = CALLS[call]
            for _ in range(SETTLE):
                await client.call_tool("search", arguments)
            recorder.flush()
            gc.collect()
            started = time.process_time()
            for _ in range(NUMBER):
                await client.call_tool("search", arguments)
            called = time.process_time()
            if recorded:
                recorder.flush()  # the background thread's work for these calls, timed with them
                best[f"{name}, call path"] = min(
                    best.get(f"{name}, call path", float("inf")), (called - started) / NUMBER
                )
            best[name] = min(best.get(name, float("inf")), (time.process_time() - started) / NUMBER)
    return best


def check(log_dir: str, recorder: OutcomeRecorder) -> Mapping[str, int]:
    """What was recorded, so that a broken recording cannot pass for a cheap one."""
    stats = recorder.snapshot()
    [tool] = stats.tools
    assert tool.ok == tool.refused == (NUMBER + SETTLE) * ROUNDS, tool  # every recorded call, none other
    shapes = {(pattern.param, pattern.shape) for pattern in stats.patterns}
    assert shapes == {("limit", "string")}, shapes
    lines = (Path(log_dir) / "audit.jsonl").read_text(encoding="utf-8").count("\n")
    assert lines == tool.ok + tool.refused, (lines, tool)
    return {"ok": tool.ok, "refused": tool.refused}


async def main() -> None:
    # The SDK logs each refused call through rich; that console cost is not what is measured.
    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as log_dir:
        # The defaults but for the thread's own flushes: each recording round flushes, timed.
        recorder = OutcomeRecorder(log_dir, flush_every=3600)
        server = make_lenient(MCPServer("bench"), recorder=recorder)
        server.tool()(search)
        [middleware] = [item for item in server.middleware if isinstance(item, LenientServerMiddleware)]
        async with mcp.Client(server) as client:
            times = await best_times(client, middleware, recorder)
        middleware.recorder = recorder
        check(log_dir, recorder)
        recorder.close()
    rows = [
        ("tools/call that succeeds, recorded (audit log, stats) vs not", "recorded ok", "plain ok", 1.05),
        ("  the call path alone", "recorded ok, call path", "plain ok", 1.05),
        ("tools/call refused by validation (one field), recorded vs not", "recorded refused", "plain refused", 1.05),
        ("  the call path alone", "recorded refused, call path", "plain refused", 1.05),
    ]
    print_ratios("Recording outcomes, official SDK in process (mcp.Client on the server object)", rows, times)


if __name__ == "__main__":
    asyncio.run(main())
