"""Cost of recording outcomes: a tools/call handled in process by the official MCP SDK, through
`make_lenient`, with and without a recorder writing the audit log and stats to a log directory.

python benchmarks/bench_outcomes.py

One server and one client serve every call; a recorded call gives the middleware its recorder, a
plain one takes it away, so both run the same objects and differ only by the recording. Within a
round, recorded and plain calls alternate one by one, each timed alone, so a slow moment of the
machine hits both alike; each case's best round is kept. The recorder's background work (turning a
refusal into field failures, folding the counts, writing the audit lines) runs every
`FLUSH_ROUNDS` rounds, on about 1,000 calls: fewer than its thread gathers in its one second at
this rate, so what each flush costs whatever its size counts more here, not less. It is timed:
"recorded" is the best call path plus that work's mean cost per call, everything recording costs;
"the call path alone" is what a call waits for.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp
from _timing import print_ratios
from mcp.server.mcpserver import MCPServer

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.adapters.mcp import LenientServerMiddleware, make_lenient
from pydantic_lenient.observe.recorder import OutcomeRecorder

PAIRS = 50  # recorded and plain calls per round, alternating
ROUNDS = 60
FLUSH_ROUNDS = 20  # (PAIRS + SETTLE) * 20: about 1,000 recorded calls per flush
SETTLE = 2  # untimed pairs after the collector ran, so no timed call meets caches it emptied


async def search(folder: str, query: str, limit: Optional[LenientUInt] = None, unread: StrictBoolish = False) -> str:
    """Search a mail folder (async: no worker thread whose scheduling would blur the figures)."""
    return f"{folder}: {query} ({limit}, {unread})"


CALLS: dict[str, dict[str, Any]] = {
    "ok": {"folder": "INBOX", "query": "invoice", "limit": "100", "unread": "false"},
    "refused": {"folder": "INBOX", "query": "invoice", "limit": "many", "unread": "false"},
}


async def best_times(
    client: mcp.Client, middleware: LenientServerMiddleware, recorder: OutcomeRecorder
) -> dict[str, float]:
    """CPU seconds per call: best round of the plain calls and of the recorded calls' call path,
    and the recorder's work per call on average.

    CPU time of the whole process (every thread) rather than wall time: the client, the server and
    the recorder all run here, and other processes on a shared machine then cost nothing. The
    collector runs before each round and is off while it is timed, as `timeit` does."""
    best: dict[str, float] = {}
    for call, arguments in CALLS.items():
        flushed, flushes = 0, 0.0
        for round_number in range(ROUNDS):
            spent = {"plain": 0.0, "recorded": 0.0}
            gc.collect()
            for number in range(2 * SETTLE):
                middleware.recorder = recorder if number % 2 else None
                await client.call_tool("search", arguments)
            gc.disable()
            for number in range(2 * PAIRS):
                recorded = number % 4 in (0, 3)  # recorded, plain, plain, recorded: each goes first as often
                middleware.recorder = recorder if recorded else None
                started = time.process_time()
                await client.call_tool("search", arguments)
                spent["recorded" if recorded else "plain"] += time.process_time() - started
            gc.enable()
            flushed += PAIRS + SETTLE
            if (round_number + 1) % FLUSH_ROUNDS == 0:
                gc.collect()
                gc.disable()  # as the calls are timed
                started = time.process_time()
                recorder.flush()  # the background thread's work for the calls since its last flush
                flushes += time.process_time() - started
                gc.enable()
            for case, seconds in spent.items():
                name = f"{case} {call}"
                best[name] = min(best.get(name, float("inf")), seconds / PAIRS)
        best[f"recorded {call}, call path"] = best[f"recorded {call}"]
        best[f"recorded {call}"] += flushes / flushed
    return best


def check(log_dir: str, recorder: OutcomeRecorder) -> None:
    """What was recorded, so that a broken recording cannot pass for a cheap one."""
    stats = recorder.snapshot()
    [tool] = stats.tools
    recorded = (PAIRS + SETTLE) * ROUNDS
    assert tool.ok == tool.refused == recorded, tool  # every recorded call, and no plain one
    shapes = {(pattern.param, pattern.error_type, pattern.shape) for pattern in stats.patterns}
    assert shapes == {("limit", "lenient_int", "string")}, shapes
    lines = (Path(log_dir) / "audit.jsonl").read_text(encoding="utf-8").count("\n")
    assert lines == 2 * recorded, lines


async def main() -> None:
    # The SDK logs each refused call; that console cost is not what is measured.
    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as log_dir:
        # The defaults but for the thread's own flushes: each round flushes, timed.
        recorder = OutcomeRecorder(log_dir, flush_every=3600)
        server = make_lenient(MCPServer("bench"), recorder=recorder)
        server.tool()(search)
        [middleware] = [item for item in server.middleware if isinstance(item, LenientServerMiddleware)]
        async with mcp.Client(server) as client:
            times = await best_times(client, middleware, recorder)
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
