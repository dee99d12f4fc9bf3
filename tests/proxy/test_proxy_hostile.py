"""The stdio proxy, run as a process, under what a hostile upstream or environment gives it (issue 36):
a tool whose schema is a 100,000-long ``$ref`` chain (jsonschema-rs overflows its stack on one and
the process dies of SIGSEGV), and console telemetry, whose exporters would write to stdout, the
proxy's channel to the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.sdks import require

require("jsonschema_rs")

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 120.0
# Lists "t" (an integer n) and "chain", whose n is the end of a flat chain of CHAIN references (about
# 3.8 MB of JSON for 100,000), and answers every call "ok".
UPSTREAM = """
import json, sys
CHAIN = int(sys.argv[1])
chain = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(CHAIN)}
chain[f"d{CHAIN}"] = {"type": "integer"}
TOOLS = [
    {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "chain", "inputSchema": {"type": "object", "properties": {"n": {"$ref": "#/$defs/d0"}}, "$defs": chain}},
]
out = sys.stdout
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    result = {}
    if message["method"] == "tools/list":
        result = {"tools": TOOLS}
    elif message["method"] == "tools/call":
        result = {"content": [{"type": "text", "text": "ok " + json.dumps(message["params"]["arguments"])}]}
    out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
    out.flush()
"""


def _session(
    tmp_path: Path, chain: int, messages: list[dict[str, Any]], **environment: str
) -> tuple[int, bytes, bytes]:
    """Runs the proxy in front of UPSTREAM, sends ``messages`` one at a time (each awaited when it has
    an id), closes its stdin; its exit code, stdout and stderr."""
    script = tmp_path / "upstream.py"
    script.write_text(textwrap.dedent(UPSTREAM))
    command = [sys.executable, "-m", "pydantic_lenient", "proxy", "--", sys.executable, str(script), str(chain)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), **environment}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proxy:
        assert proxy.stdin is not None
        assert proxy.stdout is not None
        lines: list[bytes] = []
        try:
            for message in messages:
                proxy.stdin.write(json.dumps(message).encode() + b"\n")
                proxy.stdin.flush()
                if "id" in message:
                    lines.append(proxy.stdout.readline())
            rest, errors = proxy.communicate(timeout=HANG_GUARD)
        finally:
            proxy.kill()
    return proxy.returncode, b"".join(lines) + rest, errors


def _call(request_id: int, tool: str, n: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": {"n": n}}}


def test_a_100k_reference_chain_is_refused_and_the_proxy_stays_alive(tmp_path: Path) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    messages = [listing, _call(2, "chain", "5"), _call(3, "chain", "x"), _call(4, "t", "7"), listing]
    code, stdout, stderr = _session(tmp_path, 100_000, messages)
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert code == 0, stderr.decode(errors="replace")[-2000:]  # no SIGSEGV (-11)
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4, 1]
    # The chain is listed as the upstream wrote it (too large to widen), its calls reach the upstream
    # unrepaired (the repairer refuses the schema before jsonschema-rs sees it).
    chain = next(tool for tool in answers[0]["result"]["tools"] if tool["name"] == "chain")
    assert chain["inputSchema"]["properties"]["n"] == {"$ref": "#/$defs/d0"}
    assert len(chain["inputSchema"]["$defs"]) == 100_001
    assert answers[1]["result"]["content"][0]["text"] == 'ok {"n": "5"}'
    assert answers[2]["result"]["content"][0]["text"] == 'ok {"n": "x"}'
    # The other tool stays repaired.
    assert answers[3]["result"]["content"][0]["text"] == 'ok {"n": 7}'


def test_console_telemetry_never_writes_to_the_hosts_channel(tmp_path: Path) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    messages = [listing, *(_call(request_id, "t", str(request_id)) for request_id in range(2, 12))]
    code, stdout, stderr = _session(
        tmp_path,
        1,
        messages,
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="console",
        OTEL_METRIC_EXPORT_INTERVAL="50",
        OTEL_BSP_SCHEDULE_DELAY="50",
    )
    assert code == 0, stderr.decode(errors="replace")[-2000:]
    answers = [json.loads(line) for line in stdout.splitlines()]  # every line is JSON-RPC
    assert [answer["id"] for answer in answers] == list(range(1, 12))
    assert all(answer.get("jsonrpc") == "2.0" for answer in answers)
    # The exporters did export: spans and metrics went to stderr.
    assert b'"trace_id"' in stderr
    assert b'"resource_metrics"' in stderr
