"""`pydantic-lenient serve` against the same upstream direct, over Streamable HTTP, in one run.

python benchmarks/bench_gateway.py [--seconds 5] [--workers 1] [--load 30]

The upstream is the official Python SDK's Streamable HTTP app (``tests/remote_server.py``) on
127.0.0.1. "Direct" is a raw client talking to it; "gateway" is the same client talking to the
gateway in front of it (``/servers/remote/mcp``), which relays each call through the proxy's relay
(the listing widened, the call checked against its schema). For each era (a 2025-11-25 session,
and 2026-07-28 requests that stand alone) and each concurrency (1, 16, 64 clients, each its own
connection, calls one after another for ``--seconds``), it prints calls per second and p50/p99
latency, direct and through the gateway, and the ratios. The goal (issue 37): at least 0.8x direct
throughput, p99 within 2x direct. FastMCP's proxy (`_fastmcp_proxy.py`, served over HTTP by
uvicorn in front of the same upstream) is measured alike, when fastmcp is installed. Cases
alternate, so a slow moment on a shared machine hits each alike.

``--load N`` then runs the issue's load check for N seconds: 64 clients of both eras, half their
calls needing repair, against two stdio servers and the remote one behind the gateway, and prints
lost, duplicated/misrouted and wrong answers (each must be 0). ``--workers`` sets uvicorn's
workers for both parts. ``--idle N``: the gateway's memory per idle client (N initialized
2025-11-25 sessions, each with its connection left open), one worker.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.gateway.running import (  # noqa: E402
    REMOTE_TOKEN,
    gateway,
    remote_server,
    serving_url,
    three_servers,
)
from tests.gateway.test_gateway import CLIENTS, MODERN_META, _client  # noqa: E402

CONCURRENCIES = (1, 16, 64)
FASTMCP_PROXY = Path(__file__).resolve().parent / "_fastmcp_proxy.py"
TARGETS = {"throughput": 0.8, "p99": 2.0}
_ACCEPT = "application/json, text/event-stream"


def _answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON body or in the last data line of an SSE body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        data = [line for line in data if line]
        return httpx2.Response(200, content=data[-1]).json() if data else {}
    result: dict[str, Any] = response.json()
    return result


async def _legacy_headers(client: httpx2.AsyncClient, url: str, auth: dict[str, str]) -> dict[str, str]:
    """A 2025-11-25 session's headers (the session id, when the server gives one)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    response = await client.post(url, json=initialize, headers={**auth, "accept": _ACCEPT})
    headers = {**auth, "accept": _ACCEPT, "mcp-protocol-version": "2025-11-25"}
    session = response.headers.get("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
    await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


async def _worker(
    url: str, auth: dict[str, str], era: str, clock: _Clock, latencies: list[float], errors: list[int]
) -> None:
    async with httpx2.AsyncClient(timeout=60, verify=False) as client:
        params: dict[str, Any] = {"name": "echo", "arguments": {"message": "hello"}}
        if era == "legacy":
            headers = await _legacy_headers(client, url, auth)
        else:
            params["_meta"] = MODERN_META
            headers = {
                **auth,
                "accept": _ACCEPT,
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "echo",
            }
        until = await clock.ready()  # every client set up (its connection, its session) before the clock starts
        sequence = 0
        while time.monotonic() < until:
            sequence += 1
            started = time.perf_counter()
            response = await client.post(
                url, json={"jsonrpc": "2.0", "id": sequence, "method": "tools/call", "params": params}, headers=headers
            )
            answer = _answer_of(response)
            latencies.append(time.perf_counter() - started)
            if answer.get("id") != sequence or "result" not in answer:
                errors.append(1)


class _Clock:
    """Starts the measured time once all ``clients`` are set up."""

    def __init__(self, clients: int, seconds: float) -> None:
        self.waiting, self.seconds = clients, seconds
        self.started = asyncio.Event()
        self.until = 0.0

    async def ready(self) -> float:
        self.waiting -= 1
        if self.waiting == 0:
            self.until = time.monotonic() + self.seconds
            self.started.set()
        await self.started.wait()
        return self.until


async def _measure(url: str, auth: dict[str, str], era: str, clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors: list[int] = []
    clock = _Clock(clients, seconds)
    await asyncio.gather(*(_worker(url, auth, era, clock, latencies, errors) for _ in range(clients)))
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return {
        "throughput": len(latencies) / seconds,
        "p50": quantiles[49] * 1000,
        "p99": quantiles[98] * 1000,
        "errors": float(len(errors)),
    }


@contextmanager
def _fastmcp_proxy(remote_url: str) -> Iterator[str | None]:
    """FastMCP's proxy over HTTP in front of the same upstream (its URL), or None without fastmcp."""
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        yield None
        return
    with serving_url([sys.executable, str(FASTMCP_PROXY), remote_url, REMOTE_TOKEN]) as url:
        yield url


def _throughput_and_latency(seconds: float, workers: int) -> list[bool]:
    met = []
    with (
        remote_server() as remote_url,
        tempfile.TemporaryDirectory() as directory,
        _fastmcp_proxy(remote_url) as fastmcp_url,
    ):
        config = {
            "mcpServers": {"remote": {"url": remote_url, "headers": {"Authorization": f"Bearer {REMOTE_TOKEN}"}}},
            "gateway": {"port": 0},
        }
        with gateway(config, Path(directory), workers=workers) as base:
            auth = {"authorization": f"Bearer {REMOTE_TOKEN}"}
            cases = {"direct": (remote_url, auth), "gateway": (f"{base}/servers/remote/mcp", {})}
            if fastmcp_url is not None:
                cases["fastmcp"] = (fastmcp_url, {})
            print(f"\nthe gateway ({workers} worker(s)) against direct: echo calls for {seconds:g} s per case")
            print(f"{'era':10} {'clients':>7} {'case':8} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
            for era in ("legacy", "modern"):
                for clients in CONCURRENCIES:
                    measured = {}
                    for case, (url, headers) in cases.items():
                        measured[case] = asyncio.run(_measure(url, headers, era, clients, seconds))
                        row = measured[case]
                        print(
                            f"{era:10} {clients:>7} {case:8} {row['throughput']:>9.0f} {row['p50']:>8.1f}"
                            f" {row['p99']:>8.1f} {row['errors']:>6.0f}"
                        )
                    throughput = measured["gateway"]["throughput"] / measured["direct"]["throughput"]
                    p99 = measured["gateway"]["p99"] / measured["direct"]["p99"]
                    met += [throughput >= TARGETS["throughput"], p99 <= TARGETS["p99"]]
                    print(
                        f"{'':10} {'':>7} ratio    throughput {throughput:.2f}x (goal >= {TARGETS['throughput']}),"
                        f" p99 {p99:.2f}x (goal <= {TARGETS['p99']})"
                    )
                    if "fastmcp" in measured:
                        peer = measured["fastmcp"]["throughput"] / measured["direct"]["throughput"]
                        print(f"{'':10} {'':>7} ratio    FastMCP's proxy: throughput {peer:.2f}x direct")
    return met


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _idle_sessions(count: int) -> None:
    """Memory per idle client: ``count`` clients each initialize a 2025-11-25 session and an
    idle keep-alive connection, and the gateway's resident memory is read before and after."""
    with remote_server() as remote_url, tempfile.TemporaryDirectory() as directory:
        config = {
            "mcpServers": {"remote": {"url": remote_url, "headers": {"Authorization": f"Bearer {REMOTE_TOKEN}"}}},
            "gateway": {"port": 0},
        }
        with gateway(config, Path(directory), workers=1) as base:

            async def idle() -> tuple[int, int]:
                url = f"{base}/servers/remote/mcp"
                clients = [httpx2.AsyncClient(timeout=60, verify=False) for _ in range(count)]
                await _legacy_headers(clients[0], url, {})  # warm
                before = _rss_kib(base.pid)
                await asyncio.gather(*(_legacy_headers(client, url, {}) for client in clients))
                after = _rss_kib(base.pid)
                await asyncio.gather(*(client.aclose() for client in clients))
                return before, after

            before, after = asyncio.run(idle())
    print(
        f"\nidle clients: {count} initialized sessions with open connections: gateway RSS {before} KiB -> {after} KiB,"
        f" {(after - before) * 1024 / count:.0f} bytes per client (no session state: the connection's own cost)"
    )


def _load(seconds: float, workers: int) -> bool:
    tally = dict.fromkeys(("sent", "ok", "lost", "misrouted", "wrong"), 0)
    with (
        remote_server() as remote_url,
        tempfile.TemporaryDirectory() as directory,
        gateway(three_servers(remote_url), Path(directory), workers=workers) as base,
    ):

        async def load() -> None:
            clients = [httpx2.AsyncClient(base_url=base, timeout=60, verify=False) for _ in range(CLIENTS)]
            until = time.monotonic() + seconds
            await asyncio.gather(*(_client(client, number, until, tally) for number, client in enumerate(clients)))
            await asyncio.gather(*(client.aclose() for client in clients))

        asyncio.run(load())
    print(
        f"\nload: {CLIENTS} clients, both eras, half the calls repaired, 3 upstreams, {workers} worker(s),"
        f" {seconds:g} s:"
        f" {tally['sent']} calls ({tally['sent'] / seconds:.0f}/s), {tally['ok']} ok, {tally['lost']} lost,"
        f" {tally['misrouted']} misrouted or duplicated, {tally['wrong']} wrong"
    )
    return tally["ok"] == tally["sent"] and tally["sent"] > 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per throughput case")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers")
    parser.add_argument("--load", type=float, default=0.0, metavar="SECONDS", help="then the load check this long")
    parser.add_argument(
        "--idle", type=int, default=256, metavar="N", help="idle clients for the memory figure (0: none)"
    )
    arguments = parser.parse_args()
    met = _throughput_and_latency(arguments.seconds, arguments.workers)
    print(f"\n{sum(met)} of {len(met)} goals met")
    if arguments.idle > 0:
        _idle_sessions(arguments.idle)
    if arguments.load > 0 and not _load(arguments.load, arguments.workers):
        sys.exit(1)


if __name__ == "__main__":
    main()
