"""Starting what the gateway's tests and benchmark need, on loopback: the remote test server
(`tests/remote_server.py`) and ``pydantic-lenient serve`` itself, each a process stopped at the end."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STDIO_SERVER = Path(__file__).resolve().parent / "stdio_server.py"
REMOTE_SERVER = ROOT / "tests" / "remote_server.py"
REMOTE_TOKEN = "remote-secret-token-0123456789"
STDIO_SECRET = "stdio-secret-value-9876543210"
START_WAIT = 60.0  # seconds a process may take to print its port (two cores shared by many)


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    environment = {**os.environ, **(extra or {})}
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), environment.get("PYTHONPATH", "")])
    return environment


def _port_of(process: subprocess.Popen[str], pattern: str) -> int:
    """The port ``process`` prints on stderr (a line matching ``pattern``, with the port as group 1)."""
    assert process.stderr is not None
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError(f"the process exited before printing its port (exit {process.wait()})")
        found = re.search(pattern, line)
        if found:
            return int(found.group(1))
    raise RuntimeError("the process printed no port in time")


def _drain(process: subprocess.Popen[str], lines: list[str]) -> threading.Thread:
    """Keep reading ``process``'s stderr into ``lines``, so that its logging never blocks on a full pipe."""
    assert process.stderr is not None
    stderr = process.stderr
    thread = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
    thread.start()
    return thread


def _stop(process: subprocess.Popen[str], drain: threading.Thread | None = None) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    if drain is not None:
        drain.join(5)
    if process.stderr is not None:
        process.stderr.close()


@contextmanager
def remote_server() -> Iterator[str]:
    """The remote test server's URL (it requires ``Authorization: Bearer REMOTE_TOKEN``)."""
    with serving_url([sys.executable, str(REMOTE_SERVER), REMOTE_TOKEN]) as url:
        yield url


def _started(command: list[str], environment: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``command`` started with its stderr (where it says its port) piped, and stdout discarded;
    ``environment``: variables to set on top of this process's."""
    return subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_environment(environment)
    )


@contextmanager
def serving_url(command: list[str]) -> Iterator[str]:
    """The ``/mcp`` URL of a loopback server ``command`` starts (it prints ``port N`` on stderr),
    stopped when done."""
    process = _started(command)
    drain = None
    try:
        port = _port_of(process, r"^port ([0-9]+)")
        drain = _drain(process, [])
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(process, drain)


def three_servers(remote_url: str) -> dict[str, Any]:
    """A config of two stdio servers and one remote one."""
    stdio = {"command": sys.executable, "env": {"GATEWAY_TEST_SECRET": STDIO_SECRET}}
    return {
        "mcpServers": {
            "alpha": {**stdio, "args": [str(STDIO_SERVER), "alpha"]},
            "beta": {**stdio, "type": "stdio", "args": [str(STDIO_SERVER), "beta"]},
            "remote": {"url": remote_url, "headers": {"Authorization": f"Bearer {REMOTE_TOKEN}"}},
        },
        "gateway": {"port": 0},
    }


class Running(str):
    """A running gateway's base URL, with what it has written on stderr so far (``log``) and its
    process id (``pid``: the uvicorn worker's with one worker, else the supervisor's)."""

    log: list[str]
    pid: int


@contextmanager
def gateway(
    config: dict[str, Any], directory: Path, workers: int = 1, environment: dict[str, str] | None = None
) -> Iterator[Running]:
    """``pydantic-lenient serve`` on ``config`` (written to ``directory``), with ``environment`` set
    on top of this process's; its base URL, once every upstream is up."""
    path = directory / "gateway.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    command = [sys.executable, "-m", "pydantic_lenient", "serve", str(path), "--workers", str(workers)]
    process = _started(command, environment)
    drain = None
    try:
        port = _port_of(process, r"gateway on http://127\.0\.0\.1:([0-9]+)")
        base = Running(f"http://127.0.0.1:{port}")
        base.log = []
        base.pid = process.pid
        drain = _drain(process, base.log)
        _wait_healthy(base, len(config["mcpServers"]))
        yield base
    finally:
        _stop(process, drain)


def _wait_healthy(base: str, servers: int) -> None:
    """Until /healthz says every server's handshake-era upstream is up (each worker answers alike)."""
    import httpx2

    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        try:
            health = httpx2.get(f"{base}/healthz", timeout=5).json()
            if sum(health["upstreams"].values()) >= 2 * servers:  # both eras
                return
        except (httpx2.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError("the gateway's upstreams did not come up in time")
