"""`pydantic-lenient proxy` against the same server direct, with a raw JSON-RPC client, in one run.

python benchmarks/bench_proxy.py [--calls 1000]

The upstream is `@modelcontextprotocol/server-everything` (install it with `npm ci --prefix
tests/upstream`), over stdio, and in its ``streamableHttp`` mode on 127.0.0.1 for the remote
start-up. The client writes and reads JSON-RPC lines itself (no SDK on the client side, whose own
cost would hide the proxy's). Each measure alternates the direct and the proxied case, so a slow
moment on a shared machine hits both alike, and prints a ratio:

* start-up added: spawn to the first ``tools/list`` answer (initialize, initialized, tools/list),
  proxied minus direct, over stdio and for a remote server (direct: the same three messages over
  HTTP), median of several starts;
* round trip at concurrency 1: ``echo`` calls one at a time, median, proxied / direct;
* throughput at concurrency 32: ``echo`` calls with 32 in flight, direct / proxied time for the same
  number of calls;
* CPU per call: the proxy process's user + system time over the round trips, per call;
* the floor, in the same run: the round trip and throughput through a relay that only copies
  bytes (`_copy_relay.py`, Python on asyncio; and socat, written in C, when it is installed), and
  the time a Python process takes to start and load what any remote proxy on httpx2 needs
  (asyncio and httpx2), with nothing else;
* the relay's CPU per call in process (no pipes, no event loop): `from_client` on a ``tools/call``
  line and `from_upstream` on its answer, best of interleaved rounds, with an `OutcomeRecorder`, for
  a valid call, a valid call with a list of ten edits, and a call repaired (``"3"`` for an integer).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shlex
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times

from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.proxy.relay import _Relay

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
COPY_RELAY = Path(__file__).resolve().parent / "_copy_relay.py"
LOOPBACK = ROOT / "tests" / "upstream" / "loopback.mjs"
STARTS = 7
CONCURRENCY = 32
TARGETS = {"start-up": 0.150, "round trip": 1.15, "throughput": 0.9}
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench-proxy", "version": "1"},
}


class Client:
    """A raw JSON-RPC client over a process's stdin/stdout: one line per message, answers by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, command: list[str]) -> Client:
        environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=environment,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message: dict[str, Any] = json.loads(line)
            future = self.pending.pop(message["id"], None) if isinstance(message.get("id"), int) else None
            if future is not None and not future.done():
                future.set_result(message)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self.ids)
        future = self.pending[request_id] = asyncio.get_running_loop().create_future()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        answer: dict[str, Any] = await future
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer

    async def open_session(self) -> None:
        await self.request("initialize", INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.request("tools/list")

    async def echo(self) -> None:
        answer = await self.request("tools/call", {"name": "echo", "arguments": {"message": "hello"}})
        assert not answer["result"].get("isError"), answer

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self.reader.cancel()


def _cpu_seconds(pid: int) -> float:
    """User + system time of a live process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _http_session(url: str) -> None:
    """initialize, initialized and tools/list over Streamable HTTP, as a direct remote client starts."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def answer(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            raise RuntimeError(f"HTTP {response.status_code}")

    async with httpx2.AsyncClient(timeout=30) as client:
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
        response = await client.post(url, json=message, headers=accept)
        answer(response)
        headers = {**accept, "mcp-session-id": response.headers["mcp-session-id"]}
        headers["mcp-protocol-version"] = INITIALIZE["protocolVersion"]
        answer(await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers))
        response = await client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
        answer(response)
        assert '"tools"' in response.text
        await client.delete(url, headers=headers)


async def _started(command: list[str]) -> float:
    """Seconds from spawning ``command`` to its first tools/list answer."""
    started = time.perf_counter()
    client = await Client.start(command)
    await client.open_session()
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def _startups(direct: list[str], proxied: list[str]) -> tuple[float, float]:
    times: dict[str, list[float]] = {"direct": [], "proxy": []}
    for _ in range(STARTS):
        times["direct"].append(await _started(direct))
        times["proxy"].append(await _started(proxied))
    return statistics.median(times["direct"]), statistics.median(times["proxy"])


async def _remote_startups(url: str) -> tuple[float, float]:
    proxied = [sys.executable, "-m", "pydantic_lenient", "proxy", "--url", url]
    times: dict[str, list[float]] = {"direct": [], "proxy": []}
    for _ in range(STARTS):
        started = time.perf_counter()
        await _http_session(url)
        times["direct"].append(time.perf_counter() - started)
        times["proxy"].append(await _started(proxied))
    return statistics.median(times["direct"]), statistics.median(times["proxy"])


async def _serve_remote() -> tuple[asyncio.subprocess.Process, str]:
    node = [
        "node",
        "--import",
        str(LOOPBACK),
        str(SERVER / "index.js"),
        "streamableHttp",
    ]
    process = await asyncio.create_subprocess_exec(
        *node, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    while line := (await asyncio.wait_for(process.stderr.readline(), 60)).decode():
        if line.startswith("port "):
            return process, f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    raise RuntimeError("server-everything did not start in streamableHttp mode")


async def _bare_start() -> float:
    """Median seconds a Python process takes to start, load asyncio and httpx2, and exit."""
    times = []
    for _ in range(STARTS):
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", "import asyncio, httpx2")
        await process.wait()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _concurrent(client: Client, calls: int) -> float:
    """Seconds for ``calls`` echo calls with CONCURRENCY in flight."""
    remaining = iter(range(calls))

    async def worker() -> None:
        for _ in remaining:
            await client.echo()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started


async def measure(calls: int) -> dict[str, Any]:
    direct_command = ["node", str(SERVER / "index.js"), "stdio"]
    proxy_command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--", *direct_command]
    results: dict[str, Any] = {}
    results["stdio start-up"] = await _startups(direct_command, proxy_command)
    results["bare start"] = await _bare_start()
    remote, url = await _serve_remote()
    try:
        results["remote start-up"] = await _remote_startups(url)
    finally:
        remote.terminate()
        await remote.wait()

    references = {"copy relay (Python)": [sys.executable, str(COPY_RELAY), *direct_command]}
    if shutil.which("socat"):
        references["copy relay (socat, C)"] = ["socat", "-b", "262144", "-", "EXEC:" + shlex.join(direct_command)]
    commands = {"direct": direct_command, "proxy": proxy_command, **references}
    clients = {name: await Client.start(command) for name, command in commands.items()}
    try:
        for client in clients.values():
            await client.open_session()
            for _ in range(100):  # warm up every path
                await client.echo()
        times: dict[str, list[float]] = {name: [] for name in clients}
        cpu_before = _cpu_seconds(clients["proxy"].process.pid)
        for _ in range(calls):
            for name, client in clients.items():
                started = time.perf_counter()
                await client.echo()
                times[name].append(time.perf_counter() - started)
        results["cpu per call"] = (_cpu_seconds(clients["proxy"].process.pid) - cpu_before) / calls
        round_trips = {name: statistics.median(seconds) for name, seconds in times.items()}
        spans: dict[str, list[float]] = {name: [] for name in clients}
        for _ in range(5):
            for name, client in clients.items():
                spans[name].append(await _concurrent(client, calls))
        throughputs = {name: statistics.median(seconds) for name, seconds in spans.items()}
        relayed = ("proxy", *references)
        results["round trip"] = {name: (round_trips["direct"], round_trips[name]) for name in relayed}
        results["throughput"] = {name: (throughputs["direct"], throughputs[name]) for name in relayed}
    finally:
        for client in clients.values():
            await client.close()
    return results


def relay_cpu() -> dict[str, float]:
    """Seconds of CPU per call (request and answer) in the relay alone, for each kind of call."""
    schema = {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "n": {"type": "integer"},
            "edits": {"type": "array", "items": {"type": "object", "properties": {"oldText": {"type": "string"}}}},
        },
        "required": ["message"],
    }
    edits = [{"oldText": f"line {number}", "newText": f"line {number}!"} for number in range(10)]
    arguments: dict[str, dict[str, Any]] = {
        "valid call": {"message": "hello"},
        "valid call, ten edits": {"message": "hello", "edits": edits},
        "repaired call": {"message": "hello", "n": "3"},
    }
    recorder = OutcomeRecorder()
    relay = _Relay("type-array", None, None, recorder)
    relay.from_client(b'{"jsonrpc":"2.0","id":0,"method":"tools/list"}\n')
    listing = {"jsonrpc": "2.0", "id": 0, "result": {"tools": [{"name": "echo", "inputSchema": schema}]}}
    relay.from_upstream(json.dumps(listing).encode() + b"\n")
    answer = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hello"}]}}\n'

    def case(sent: dict[str, Any]) -> Any:
        params = {"name": "echo", "arguments": sent}
        line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode() + b"\n"
        return lambda: (relay.from_client(line), relay.from_upstream(answer))

    try:
        return best_times({name: case(sent) for name, sent in arguments.items()}, number=2_000, rounds=10)
    finally:
        recorder.close()


def _row(label: str, result: str, target: str, met: bool, direct: float, proxy: float) -> None:
    mark = "" if met else "  (misses target)"
    print(f"{label:48} {result:>9} {target:>10}  {proxy * 1e3:.3g} ms / {direct * 1e3:.3g} ms{mark}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per case for the round trips and throughput")
    calls = parser.parse_args().calls
    if not (SERVER / "index.js").is_file():
        print("server-everything is not installed: npm ci --prefix tests/upstream", file=sys.stderr)
        return 2
    results = asyncio.run(measure(calls))
    print(f"\nserver-everything's echo, raw JSON-RPC client, direct and proxied alternating ({calls} calls per case)")
    print(f"{'measured':48} {'result':>9} {'target':>10}  proxy / direct")
    for name in ("stdio start-up", "remote start-up"):
        direct, proxy = results[name]
        added, target = (proxy - direct) * 1e3, TARGETS["start-up"] * 1e3
        _row(f"{name}: added by the proxy", f"{added:7.0f}ms", f"<= {target:.0f}ms", added <= target, direct, proxy)
    direct, proxy = results["round trip"]["proxy"]
    ratio, target = proxy / direct, TARGETS["round trip"]
    _row("round trip, concurrency 1", f"{ratio:7.2f}x", f"<= {target:.2f}x", ratio <= target, direct, proxy)
    direct, proxy = results["throughput"]["proxy"]
    ratio, target = direct / proxy, TARGETS["throughput"]  # calls per second, proxied over direct
    label = f"throughput, concurrency {CONCURRENCY} (higher is better)"
    _row(label, f"{ratio:7.2f}x", f">= {target:.2f}x", ratio >= target, direct, proxy)
    print(f"{'CPU per call in the proxy (user + system)':48} {results['cpu per call'] * 1e6:7.0f}us")
    print("\nthe floor, in the same run: a relay that only copies bytes (no parsing, no framing)")
    label = "a Python process that loads asyncio and httpx2"
    print(f"{label:48} {results['bare start'] * 1e3:7.0f}ms")
    for measured in ("round trip", "throughput"):
        for name, (direct, relayed) in results[measured].items():
            if name != "proxy":
                ratio = relayed / direct if measured == "round trip" else direct / relayed
                label = f"{measured}, {name}"
                print(f"{label:48} {ratio:7.2f}x {'':>10}  {relayed * 1e3:.3g} ms / {direct * 1e3:.3g} ms")
    print("\nthe relay alone, in process (from_client and from_upstream, with a recorder)")
    for name, seconds in relay_cpu().items():
        print(f"{'CPU per call, ' + name:48} {seconds * 1e6:7.1f}us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
