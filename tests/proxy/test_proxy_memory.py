"""What one huge message costs the proxy (issue 26, item 6): the proxy runs as a process, with
``--log-dir`` (so every refusal is described and recorded), in front of a tiny Python upstream, and
its peak resident memory (``VmHWM`` in /proc, Linux) is compared with its size before the message.

The proxy holds, at its peak, the line as read (a line that spans reads is copied once, into a
buffer handed over as bytes), the line parsed, and, for a message it rewrites, the line written
again (piece by piece into one buffer, never also as text); what the pipe does not take at once
stays those bytes (a write is fed to the pipe a slice at a time, so the transport never copies it
whole). A tool's repairer is built at its first call, not when it is listed, and repair copies no
arguments it does not change. So, as a multiple of the message:

* 30 MB of text: the line and its parsed string, about 2.0 (it was 2.0);
* a 20 MB ``tools/list`` answer of 2,000 tools of about 10 kB: the line 1.0, its parse 1.1, the
  widened tools 0.2 (new dicts and schemas; the descriptions are shared), the answer written 1.0:
  about 3.25 (it was 6.8: 2,000 repairers of about 18 kB, the answer as text and as bytes and again
  with its newline, and the pipe's copy of it);
* a 16 MB call of 3,000,000 items ``"a1"`` (5 bytes each, one Python string shared by all): the
  line 1.0, and pydantic-core's parser, which gathers an array's items in a growing vector before
  it builds the list (8 bytes a pointer, twice: 16 bytes an item, 3.2 times the message), so about
  4.2, and 2.6 once the list is built. It was 5.6: repair copied the 24 MB list, and the line's
  buffer, copied into bytes and freed, made glibc's malloc serve the parser's vector from its heap
  (it raises its mmap threshold to the size of a large block freed), where each growth copied it.
  The bound also keeps the validator's errors from being built for every item again (that was
  about 390 times the message, and minutes).
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

ROOT = Path(__file__).resolve().parents[2]
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
    assert ratio <= 2.3  # the line, read once, and its text parsed: about 2.0
    # Recorded as refused, the value described by its shape only.
    audit = (tmp_path / "logs" / "audit.jsonl").read_text()
    assert '"refused"' in audit
    assert "aaaa" not in audit


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc (Linux)")
def test_a_huge_tools_list_answer_is_widened_within_bounds(tmp_path: Path) -> None:
    ratio, answer = _peak_added(tmp_path, b'{"jsonrpc":"2.0","id":"big","method":"tools/list"}\n', tools=2_000)
    tools = json.loads(answer)["result"]["tools"]
    assert len(tools) == 2_000
    assert [branch["type"] for branch in tools[-1]["inputSchema"]["properties"]["n"]["anyOf"]] == ["number", "string"]
    assert ratio <= 3.5  # the line, its parse, the widened tools and the answer written once: about 3.25


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc (Linux)")
def test_a_huge_call_of_many_wrong_items_does_not_describe_every_one(tmp_path: Path) -> None:
    message = _call(b'{"n":"x","items":[' + b",".join([b'"a1"'] * 3_000_000) + b"]}")
    ratio, answer = _peak_added(tmp_path, message)
    assert json.loads(answer)["error"]["message"] == "Invalid params"
    assert ratio <= 4.5  # the line, and the parser's 16 bytes an item while it builds the list: about 4.2


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
