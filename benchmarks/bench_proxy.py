"""Round trips of a cheap tool call through `pydantic-lenient proxy` against the same server direct.

python benchmarks/bench_proxy.py

The upstream is `@modelcontextprotocol/server-everything`'s `echo` tool (install it with
`npm ci --prefix tests/upstream`); the client is the official SDK's `ClientSession` over stdio.
Calls alternate between the two sessions, so a slow moment on a shared machine hits both alike.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = (
    ROOT / "tests" / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
ROUND_TRIPS = 200
TARGET = 1.3


async def measure() -> tuple[float, float]:
    upstream = ["node", str(SERVER), "stdio"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    direct = StdioServerParameters(command=upstream[0], args=upstream[1:])
    proxied = StdioServerParameters(
        command=sys.executable, args=["-m", "pydantic_lenient", "proxy", "--", *upstream], env=environment
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(direct, errlog=quiet) as (direct_read, direct_write),
            stdio_client(proxied, errlog=quiet) as (proxy_read, proxy_write),
            ClientSession(direct_read, direct_write) as direct_session,
            ClientSession(proxy_read, proxy_write) as proxy_session,
        ):
            times: dict[str, list[float]] = {"direct": [], "proxy": []}
            sessions = {"direct": direct_session, "proxy": proxy_session}
            for session in sessions.values():
                await session.initialize()
                await session.list_tools()
                for _ in range(20):  # warm up both paths
                    await session.call_tool("echo", {"message": "hello"})
            for _ in range(ROUND_TRIPS):
                for name, session in sessions.items():
                    start = time.perf_counter()
                    result = await session.call_tool("echo", {"message": "hello"})
                    times[name].append(time.perf_counter() - start)
                    assert not result.is_error
    return statistics.median(times["direct"]), statistics.median(times["proxy"])


def main() -> int:
    if not SERVER.is_file():
        print("server-everything is not installed: npm ci --prefix tests/upstream", file=sys.stderr)
        return 2
    direct, proxy = anyio.run(measure)
    ratio = proxy / direct
    mark = "" if ratio <= TARGET else "  (over target)"
    print(f"\n{ROUND_TRIPS} round trips of server-everything's echo, official SDK client over stdio (median)")
    print(f"{'measured':44} {'ratio':>7} {'target':>7}")
    times = f"{proxy * 1e3:.3g} ms / {direct * 1e3:.3g} ms"
    print(f"{'through the proxy, vs direct':44} {ratio:6.2f}x {TARGET:6.2f}x  {times}{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
