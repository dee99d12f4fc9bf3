"""`pydantic-lenient serve` end to end, on loopback: two stdio servers and one remote server behind
one gateway, clients of both MCP eras (the official SDK's `mcp.Client`, and raw Streamable HTTP),
repairs, 64 concurrent clients, an upstream killed mid-call, and a client that leaves mid-call.

Every wait is bounded (`HANG_GUARD`); the load test runs `LOAD_SECONDS` (the 30 s run is
``benchmarks/bench_gateway.py --seconds 30``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

import httpx2
import mcp
from mcp.types import TextContent

from tests.gateway.running import (
    REMOTE_TOKEN,
    ROOT,
    STDIO_SECRET,
    Running,
    gateway,
    remote_server,
    three_servers,
)

T = TypeVar("T")
HANG_GUARD = 90.0
LOAD_SECONDS = 6.0
CLIENTS = 64
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def run(coroutine: Awaitable[T]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(coroutine, HANG_GUARD)

    return asyncio.run(guarded())


@pytest.fixture(scope="module")
def remote_url() -> Iterator[str]:
    with remote_server() as url:
        yield url


@pytest.fixture(scope="module")
def two_workers(remote_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The gateway, with two uvicorn workers, in front of two stdio servers and the remote one."""
    with gateway(three_servers(remote_url), tmp_path_factory.mktemp("gateway"), workers=2) as base:
        yield base


def _texts(result: Any) -> list[str]:
    return [item.text for item in result.content if isinstance(item, TextContent)]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
def test_sdk_clients_of_both_eras_get_widened_listings_and_repaired_calls(two_workers: str, mode: str) -> None:
    async def session() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        calls: list[tuple[str, str, dict[str, Any]]] = [
            ("alpha", "add", {"a": "100", "b": 2}),
            ("beta", "flag", {"on": "false"}),
            ("remote", "get-sum", {"a": "1.5", "b": 2}),
        ]
        for server, call, arguments in calls:
            async with mcp.Client(f"{two_workers}/servers/{server}/mcp", mode=mode) as client:
                listing = await client.list_tools()
                schemas = {tool.name: tool.input_schema for tool in listing.tools}
                result = await client.call_tool(call, arguments)
                seen[server] = (schemas[call], bool(result.is_error), _texts(result))
        return seen

    seen = run(session())
    alpha_schema, alpha_error, alpha_text = seen["alpha"]
    # Widened, like the proxy's, in the portable shape by default (docs/hosts.md).
    assert [branch["type"] for branch in alpha_schema["properties"]["a"]["anyOf"]] == ["number", "string"]
    assert (alpha_error, alpha_text) == (False, ["alpha: 102"])
    assert seen["beta"][1:] == (False, ["beta: off"])
    assert seen["remote"][1:] == (False, ["The sum of 1.5 and 2.0 is 3.5."])


def test_the_aggregated_endpoint_lists_every_server_under_prefixed_names(two_workers: str) -> None:
    async def session() -> tuple[list[str], list[str]]:
        async with mcp.Client(f"{two_workers}/mcp", mode="legacy") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("beta__add", {"a": "40", "b": "2"})
            return names, _texts(result)

    names, texts = run(session())
    assert {"alpha__add", "beta__add", "remote__get-sum", "remote__echo"} <= set(names)
    assert texts == ["beta: 42"]


def test_a_config_env_reaches_the_stdio_server(two_workers: str) -> None:
    answer = httpx2.post(
        f"{two_workers}/servers/alpha/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "secret", "arguments": {}}},
        timeout=30,
    ).json()
    assert answer["result"]["content"][0]["text"] == STDIO_SECRET


async def _client(client: httpx2.AsyncClient, number: int, until: float, tally: dict[str, int]) -> None:
    """One client: its own connection and era, calls one after another, each checked for its own answer."""
    modern = number % 2 == 1
    server = ("alpha", "beta", "remote")[number % 3]
    for sequence in itertools.count():
        if time.monotonic() >= until:
            return
        first, second = number * 100_000 + sequence, sequence % 7
        repaired = sequence % 2 == 0  # half the calls need repair: the numbers as strings
        arguments: dict[str, Any]
        if server == "remote":
            name, arguments = "get-sum", {"a": float(first), "b": float(second)}
            expected = f"The sum of {float(first)} and {float(second)} is {float(first + second)}."
        else:
            name, arguments = "add", {"a": first, "b": second}
            expected = f"{server}: {first + second}"
        if repaired:
            arguments = {key: str(value) for key, value in arguments.items()}
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if modern:
            params["_meta"] = MODERN_META
        request_id: Any = f"c{number}-{sequence}" if sequence % 3 else sequence  # ids every client reuses
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        tally["sent"] += 1
        try:
            response = await client.post(f"/servers/{server}/mcp", json=message)
            answer = response.json()
        except (httpx2.HTTPError, ValueError):
            tally["lost"] += 1
            continue
        if answer.get("id") != request_id:
            tally["misrouted"] += 1
        elif answer.get("result", {}).get("content", [{}])[0].get("text") != expected:
            tally["wrong"] += 1
        else:
            tally["ok"] += 1


def test_64_concurrent_clients_of_both_eras_lose_and_misroute_nothing(two_workers: Running) -> None:
    tally = dict.fromkeys(("sent", "ok", "lost", "misrouted", "wrong"), 0)

    async def load() -> None:
        clients = [httpx2.AsyncClient(base_url=two_workers, timeout=30, verify=False) for _ in range(CLIENTS)]
        until = time.monotonic() + LOAD_SECONDS
        await asyncio.gather(*(_client(client, number, until, tally) for number, client in enumerate(clients)))
        await asyncio.gather(*(client.aclose() for client in clients))

    run(load())
    assert tally["sent"] >= CLIENTS  # every client got at least one call through
    assert (tally["lost"], tally["misrouted"], tally["wrong"]) == (0, 0, 0), tally
    assert tally["ok"] == tally["sent"]
    assert not [line for line in two_workers.log if REMOTE_TOKEN in line or STDIO_SECRET in line]


# ---- faults, on a gateway of their own (one worker: the test kills its upstream)


@pytest.fixture
def one_worker(tmp_path: Path) -> Iterator[str]:
    config = three_servers("http://127.0.0.1:9/mcp")
    del config["mcpServers"]["remote"]
    with gateway(config, tmp_path) as base:
        yield base


def _call(name: str, arguments: dict[str, Any], request_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_an_upstream_killed_mid_call_answers_with_an_error_and_is_restarted(one_worker: str) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with httpx2.AsyncClient(base_url=one_worker, timeout=60) as client:
            pid = (await client.post("/servers/alpha/mcp", json=_call("pid", {}))).json()
            pid_number = int(pid["result"]["content"][0]["text"])
            slow = asyncio.ensure_future(client.post("/servers/alpha/mcp", json=_call("slow", {"seconds": 30}, 2)))
            await asyncio.sleep(1.0)
            os.kill(pid_number, signal.SIGKILL)
            killed = (await slow).json()
            deadline = time.monotonic() + 60
            while True:  # restarted with backoff: calls succeed again
                again = (await client.post("/servers/alpha/mcp", json=_call("add", {"a": "1", "b": 1}, 3))).json()
                if "result" in again or time.monotonic() > deadline:
                    return killed, again
                await asyncio.sleep(0.5)

    killed, again = run(scenario())
    assert killed["id"] == 2
    message = killed["error"]["message"]
    assert "alpha" in message
    assert "before answering" in message
    assert STDIO_SECRET not in message
    assert sys.executable not in message
    assert again["result"]["content"][0]["text"] == "alpha: 2"


def test_a_client_that_leaves_mid_call_leaves_the_gateway_serving(one_worker: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with httpx2.AsyncClient(base_url=one_worker, timeout=httpx2.Timeout(30, read=0.5)) as client:
            with pytest.raises(httpx2.ReadTimeout):
                await client.post("/servers/beta/mcp", json=_call("slow", {"seconds": 5}))
        async with httpx2.AsyncClient(base_url=one_worker, timeout=30) as client:
            answer: dict[str, Any] = (
                await client.post("/servers/beta/mcp", json=_call("add", {"a": "2", "b": "3"}))
            ).json()
            return answer

    assert run(scenario())["result"]["content"][0]["text"] == "beta: 5"


def test_a_slow_reader_holds_up_no_one_else(one_worker: str) -> None:
    async def scenario() -> tuple[int, int, dict[str, Any]]:
        port = int(one_worker.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = json.dumps(_call("big", {"size": 8_000_000})).encode()
        head = f"POST /servers/alpha/mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        writer.write(head.encode() + f"content-length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        await asyncio.sleep(2.0)  # the answer is ready, and this client reads none of it yet
        async with httpx2.AsyncClient(base_url=one_worker, timeout=30) as client:
            started = time.monotonic()
            answer = (await client.post("/servers/alpha/mcp", json=_call("add", {"a": "20", "b": "22"}))).json()
            waited = time.monotonic() - started
        received = 0
        while received < 8_000_000:  # then it reads it all, a little at a time
            chunk = await reader.read(65536)
            if not chunk:
                break
            received += len(chunk)
        writer.close()
        return received, int(waited), answer

    received, waited, answer = run(scenario())
    assert answer["result"]["content"][0]["text"] == "alpha: 42"
    assert waited < 10
    assert received > 8_000_000  # the slow reader got its whole answer too


def test_the_front_door_refuses_foreign_origins_oversized_bodies_and_batches(one_worker: str) -> None:
    url = f"{one_worker}/servers/alpha/mcp"
    foreign = httpx2.post(url, json=_call("add", {"a": 1, "b": 1}), headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403
    rebound = httpx2.post(url, json=_call("add", {"a": 1, "b": 1}), headers={"host": "evil.example"})
    assert rebound.status_code == 421
    oversized = httpx2.post(url, content=b"[" + b"0," * (4 * 1024 * 1024) + b"0]")
    assert oversized.status_code == 413
    batch = httpx2.post(url, json=[_call("add", {"a": 1, "b": 1})])
    assert batch.status_code == 400
    assert httpx2.get(url).status_code == 405  # no server-to-client stream in a stateless gateway


def test_a_wide_bind_without_a_token_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "true"}}, "gateway": {"host": "0.0.0.0"}}))
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for arguments in ([str(path)], [str(path), "--host", "::"]):
        done = subprocess.run(
            [sys.executable, "-m", "pydantic_lenient", "serve", *arguments],
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
        )
        assert done.returncode == 2
        assert "refusing to listen" in done.stderr
        assert "without auth" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_the_remote_token_never_reaches_a_client(remote_url: str, tmp_path: Path) -> None:
    config = {
        "mcpServers": {"remote": {"url": remote_url, "headers": {"Authorization": "Bearer wrong-token-abcdef"}}},
        "gateway": {"port": 0, "callTimeout": 3},
    }
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    from pydantic_lenient.gateway import app, load_config

    async def scenario() -> dict[str, Any]:
        application = app(load_config(path), freeze_gc=False)
        transport = httpx2.ASGITransport(application)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            gateway_ = application.app.state.gateway
            await gateway_.start()
            try:
                answer: dict[str, Any] = (
                    await client.post("/servers/remote/mcp", json=_call("echo", {"message": "x"}))
                ).json()
                return answer
            finally:
                await gateway_.close()

    answer = run(scenario())
    assert "error" in answer
    assert "wrong-token-abcdef" not in json.dumps(answer)
    assert REMOTE_TOKEN not in json.dumps(answer)
    assert "`remote`" in answer["error"]["message"]
