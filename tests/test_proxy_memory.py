"""What one huge message costs the proxy (issue 26, item 6): the proxy runs as a process, with
``--log-dir`` (so every refusal is described and recorded), in front of a tiny Python upstream, and
its peak resident memory (``VmHWM`` in /proc, Linux) is compared with its size before the message.

A message whose bulk is text (a file's contents) costs about 2 times its size. One whose bulk is
millions of small values costs more: parsed, each value is a Python object and each item a pointer
(16 MB of ``"a1",`` is 27 MB of list), and repair copies the containers it was given; the bound
there is what keeps the validator's errors from being built for every item again (it was about
390 times the message, and minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.sdks import require

require("jsonschema_rs")

ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 120.0
SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "integer"}},
        "text": {"type": "string"},
    },
    "required": ["n"],
}
# Answers tools/list with SCHEMA (or, for id "big", with TOOLS tools of about 10 kB each), a small
# tools/call with a result, and a huge one with the error a server gives for invalid params, read
# without parsing it (the upstream's memory is not the proxy's).
UPSTREAM = """
import json, re, sys
SCHEMA = json.loads(sys.argv[1])
TOOLS = int(sys.argv[2])
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    if len(line) > 100_000:
        request_id = re.search(rb'"id":([0-9]+)', line[:200])[1]
        out.write(b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid params"}}\\n' % request_id)
        out.flush()
        continue
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    result = {}
    if message["method"] == "tools/list":
        tools = [{"name": "t", "inputSchema": SCHEMA}]
        if message["id"] == "big":
            tools = [{"name": f"t{i}", "description": "d" * 9_700, "inputSchema": SCHEMA} for i in range(TOOLS)]
        result = {"tools": tools}
    elif message["method"] == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}]}
    out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\\n")
    out.flush()
"""


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def _peak_added(tmp_path: Path, message: bytes, tools: int = 0) -> tuple[float, bytes]:
    """The proxy's peak memory over its resident memory before ``message``, as a multiple of the
    larger of ``message`` and its answer; and the answer."""
    script = tmp_path / "upstream.py"
    script.write_text(textwrap.dedent(UPSTREAM))
    upstream = [sys.executable, str(script), json.dumps(SCHEMA), str(tools)]
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--log-dir", str(tmp_path / "logs"), "--", *upstream]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment
    ) as proxy:
        stdin, stdout = proxy.stdin, proxy.stdout
        assert stdin is not None
        assert stdout is not None

        def send(data: Any) -> bytes:
            stdin.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
            stdin.flush()
            return stdout.readline()

        try:
            # Warm: the listing, and a call repaired and recorded, so the baseline holds what every call needs.
            send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {"n": "1"}}}
            assert json.loads(send(call))["result"]["content"][0]["text"] == "ok"
            before = _status(proxy.pid, "VmRSS:")
            answer = send(message)
            peak = _status(proxy.pid, "VmHWM:")
        finally:
            stdin.close()
            proxy.wait(HANG_GUARD)
    assert proxy.returncode == 0
    return (peak - before) / max(len(message), len(answer)), answer


def _call(arguments: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":' + arguments + b"}}\n"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc (Linux)")
def test_a_huge_invalid_call_costs_at_most_three_times_its_size(tmp_path: Path) -> None:
    message = _call(b'{"n":"not a number","text":"' + b"a" * 30_000_000 + b'"}')
    ratio, answer = _peak_added(tmp_path, message)
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Invalid params"}}
    assert ratio <= 2.5  # the line, read once, and its text parsed: about 2
    # Recorded as refused, the value described by its shape only.
    audit = (tmp_path / "logs" / "audit.jsonl").read_text()
    assert '"refused"' in audit
    assert "aaaa" not in audit


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc (Linux)")
def test_a_huge_tools_list_answer_is_widened_within_bounds(tmp_path: Path) -> None:
    ratio, answer = _peak_added(tmp_path, b'{"jsonrpc":"2.0","id":"big","method":"tools/list"}\n', tools=2_000)
    tools = json.loads(answer)["result"]["tools"]
    assert len(tools) == 2_000
    assert tools[-1]["inputSchema"]["properties"]["n"]["type"] == ["integer", "string"]
    assert ratio <= 7.5  # the line, its parse, the answer written (twice, briefly), and the write's buffer


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc (Linux)")
def test_a_huge_call_of_many_wrong_items_does_not_describe_every_one(tmp_path: Path) -> None:
    message = _call(b'{"n":"x","items":[' + b",".join([b'"a1"'] * 3_000_000) + b"]}")
    ratio, answer = _peak_added(tmp_path, message)
    assert json.loads(answer)["error"]["message"] == "Invalid params"
    assert ratio <= 7.0


def test_huge_arguments_are_described_by_their_first_error_and_small_ones_by_all() -> None:
    """jsonschema-rs's iter_errors builds every error (each with a copy of its value) before the first:
    arguments with more values than a repair could ever visit get only the validator's first error."""
    import tracemalloc

    from pydantic_lenient.repair.engine import Repairer

    repairer = Repairer(SCHEMA)
    small = {"n": "x", "items": ["a", "b"]}
    assert [detail["loc"] for detail in repairer.error_details(small)] == [("n",), ("items", 0), ("items", 1)]
    huge = {"n": "x", "items": ["a1"] * 200_000}
    tracemalloc.start()
    try:
        details = repairer.error_details(huge)
        reasons = repairer.verdict(huge)[1]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(detail["type"], detail["loc"]) for detail in details] == [("int_type", ("n",))]
    assert [reason["path"] for reason in reasons] == ["/n"]
    assert peak < 1_000_000  # the 200,000 errors took about 300 MB
