"""The MCP protocol eras as the era tests need them: which installed SDK speaks 2026-07-28, its
per-request ``_meta`` envelope, and a raw JSON-RPC peer over a child's stdio (to send exactly the
requests a cached host sends, in the order it sends them)."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "era-tests", "version": "1"},
}
ERA_SERVER = ROOT / "tests" / "era_server.py"


def _has(module: str, name: str) -> bool:
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def modern_sdk() -> None:
    """Skip unless the installed ``mcp`` speaks 2026-07-28 on both sides and checks ``Mcp-Param-*``
    headers; every supported release does (2.1.0 to 2.3.0), so where CI requires the SDKs
    (PYDANTIC_LENIENT_REQUIRE_SDKS) an ``mcp`` without the era fails instead."""
    from mcp import Client

    pinned = "mode" in {field.name for field in dataclasses.fields(Client)}
    checks_headers = _has("mcp.shared.inbound", "validate_mcp_param_headers")
    if not (pinned and checks_headers and _modern_versions()):
        message = f"the installed mcp does not speak the {MODERN} era (mcp 2.1.0 and later do)"
        if os.environ.get("PYDANTIC_LENIENT_REQUIRE_SDKS"):
            pytest.fail(message)
        pytest.skip(message)


def _modern_versions() -> bool:
    try:
        version = importlib.import_module("mcp_types.version")
    except ImportError:
        return False
    return MODERN in getattr(version, "MODERN_PROTOCOL_VERSIONS", ())


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def server_command(flavour: str) -> list[str]:
    """The dual-era test server of ``flavour`` (``mcp`` or ``fastmcp``) over stdio."""
    return [sys.executable, str(ERA_SERVER), flavour]


def proxy_command(flavour: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "pydantic_lenient", "proxy", *options, "--", *server_command(flavour)]


class RawPeer:
    """A JSON-RPC peer over a child's stdin and stdout, one message a line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.unmatched: list[dict[str, Any]] = []

    @classmethod
    async def start(cls, command: list[str], ready: Path | None = None) -> RawPeer:
        """Start ``command``; with ``ready``, wait until the era server behind it has written that
        file (it is built and reading), so a first request is not timed against its start-up."""
        extra = {"ERA_SERVER_READY": str(ready)} if ready is not None else {}
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**environment(), **extra},
            limit=2**24,
        )
        while ready is not None and not ready.exists():
            assert process.returncode is None, "the server exited before it was ready"
            await asyncio.sleep(0.05)
        return cls(process)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The reply to ``request_id`` (what else arrives first is kept in ``unmatched``)."""
        assert self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            assert line, "the peer closed its output before answering"
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return dict(message)
            self.unmatched.append(message)

    async def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer(request_id)

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 20)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()


def modern(params: dict[str, Any] | None = None) -> dict[str, Any]:
    """``params`` with the 2026-07-28 envelope in ``_meta``."""
    return {**(params or {}), "_meta": dict(ENVELOPE)}


def text_of(answer: dict[str, Any]) -> tuple[bool, str]:
    """(isError, the first text) of a ``tools/call`` answer."""
    result = answer["result"]
    return bool(result.get("isError")), result["content"][0]["text"]
