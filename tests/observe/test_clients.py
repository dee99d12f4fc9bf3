"""Which host sent each call: the client's name and version on every outcome, in ``outcomes.json``
(per client, and per error pattern), in the audit log, on telemetry, and in ``suggest``; bounded,
since a client's name is whatever the client says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.cli.main import main
from pydantic_lenient.hosts import PROFILES
from pydantic_lenient.observe.auditlog import read_audit_log
from pydantic_lenient.observe.clients import (
    CLIENT_INFO_META_KEY,
    CLIENT_NAME_LIMIT,
    CLIENT_VERSION_LIMIT,
    OTHER_HOST,
    Client,
    client_from_info,
    client_from_meta,
    client_of_call,
    host_label,
)
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.outcomes import CallOutcome
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import CLIENTS_PER_PATTERN, load_outcomes
from pydantic_lenient.observe.suggestions import suggest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = FieldFailure("limit", "int_type", "digit string")
CURSOR = Client("cursor-vscode", "1.7.2")
CLAUDE = Client("claude-code", "2.1.0")

hostile_text = st.text(st.characters(codec=None), max_size=CLIENT_NAME_LIMIT * 3)  # lone surrogates, controls


# ---- reading a client's name


@given(name=hostile_text, version=hostile_text | st.integers() | st.none())
def test_any_client_info_is_cut_cleaned_and_labelled_from_a_fixed_set(name: str, version: object) -> None:
    client = client_from_info({"name": name, "version": version})
    if not name:
        assert client is None
        return
    assert client is not None
    # Cut first, then a lone surrogate written as its six-character escape.
    assert len(client.name) <= 6 * CLIENT_NAME_LIMIT
    assert len(client.version) <= 6 * CLIENT_VERSION_LIMIT
    client.name.encode("utf-8")  # always writable
    client.version.encode("utf-8")
    if name.isascii():
        assert client.name == name[:CLIENT_NAME_LIMIT]
    if not isinstance(version, str):
        assert client.version == ""
    assert client.host in {*PROFILES, OTHER_HOST}


def test_known_clients_are_labelled_by_their_host_profile() -> None:
    assert host_label("cursor-vscode") == "cursor"
    assert host_label("claude-code") == "claude-code"
    assert host_label("gemini-cli-mcp-client") == "gemini-cli"
    assert host_label("qwen-cli-mcp-client-myserver") == "qwen-code"
    assert host_label("Cursor") == OTHER_HOST  # the name as sent, not a guess
    assert client_from_info({"version": "1"}) is None
    assert client_from_info(["cursor-vscode"]) is None


def test_the_request_meta_names_the_client_before_the_session_does() -> None:
    meta = {CLIENT_INFO_META_KEY: {"name": "claude-code", "version": "2.1.0"}, "progressToken": 1}
    assert client_from_meta(meta) == CLAUDE
    assert client_of_call({"name": "t", "_meta": meta}, CURSOR) == CLAUDE
    assert client_of_call({"name": "t", "_meta": {"progressToken": 1}}, CURSOR) == CURSOR
    assert client_of_call({"name": "t"}, None) is None
    assert client_from_meta({CLIENT_INFO_META_KEY: "claude-code"}) is None


# ---- the recorder and outcomes.json


def _record(recorder: OutcomeRecorder) -> None:
    for _ in range(3):
        recorder.record("search", "refused", 1.0, failures=(LIMIT,), client=CURSOR)
    recorder.record("search", "ok", 1.0, client=CURSOR, norms=("repair:string_to_integer",))
    recorder.record("search", "refused", 1.0, failures=(LIMIT,), client=CLAUDE)
    recorder.record("search", "error", 1.0, client=CLAUDE)
    recorder.record("search", "ok", 1.0)  # a client that never named itself


def test_the_recorder_counts_calls_and_refusals_by_client_and_the_file_keeps_them(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    _record(recorder)
    recorder.close()
    stats = load_outcomes(tmp_path)
    by_client = {calls.client: calls for calls in stats.clients}
    assert set(by_client) == {"cursor-vscode", "claude-code"}
    cursor, claude = by_client["cursor-vscode"], by_client["claude-code"]
    assert (cursor.version, cursor.host, cursor.ok, cursor.refused, cursor.error, cursor.changed) == (
        "1.7.2",
        "cursor",
        1,
        3,
        0,
        1,
    )
    assert (claude.version, claude.host, claude.ok, claude.refused, claude.error) == ("2.1.0", "claude-code", 0, 1, 1)
    [pattern] = stats.patterns
    assert pattern.count == 4
    assert pattern.clients == {"cursor-vscode": 3, "claude-code": 1}
    assert sum(tool.ok + tool.refused + tool.error for tool in stats.tools) == 7  # every call, named or not
    # The round trip: what was saved reads back as it was, and a second save adds to it.
    again = OutcomeRecorder(tmp_path, flush_every=3600)
    _record(again)
    again.close()
    doubled = load_outcomes(tmp_path)
    assert {c.client: (c.ok, c.refused, c.error, c.changed) for c in doubled.clients} == {
        "cursor-vscode": (2, 6, 0, 2),
        "claude-code": (0, 2, 2, 0),
    }
    assert doubled.patterns[0].clients == {"cursor-vscode": 6, "claude-code": 2}


def test_every_audit_line_names_its_client(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    _record(recorder)
    recorder.close()
    entries = read_audit_log(tmp_path)
    names = [(entry.client.name, entry.client.version) if entry.client else None for entry in entries]
    assert names == [("cursor-vscode", "1.7.2")] * 4 + [("claude-code", "2.1.0")] * 2 + [None]
    last = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    assert "client" not in json.loads(last)  # a line without a client is written as before


def test_an_older_outcomes_file_without_clients_loads_and_is_added_to(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    recorder.record("search", "refused", 1.0, failures=(LIMIT,))
    recorder.close()
    document = json.loads((tmp_path / "outcomes.json").read_text(encoding="utf-8"))
    del document["clients"]  # as releases before client names wrote it
    for pattern in document["patterns"]:
        del pattern["clients"]
    (tmp_path / "outcomes.json").write_text(json.dumps(document), encoding="utf-8")
    assert load_outcomes(tmp_path).clients == []
    later = OutcomeRecorder(tmp_path, flush_every=3600)
    later.record("search", "refused", 1.0, failures=(LIMIT,), client=CURSOR)
    later.close()
    stats = load_outcomes(tmp_path)
    assert [(c.client, c.refused) for c in stats.clients] == [("cursor-vscode", 1)]
    assert stats.patterns[0].count == 2
    assert stats.patterns[0].clients == {"cursor-vscode": 1}


def test_a_client_inventing_names_cannot_grow_the_counts(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(max_patterns=10)
    for number in range(200):
        invented = client_from_info({"name": f"agent-{number}-" + "x" * 500, "version": "v" * 500})
        recorder.record("search", "refused", 1.0, failures=(LIMIT,), client=invented)
    stats = recorder.snapshot()
    assert len(stats.clients) == 10  # the least recently seen go, as tools do
    assert all(len(c.client) <= CLIENT_NAME_LIMIT and len(c.version) <= CLIENT_VERSION_LIMIT for c in stats.clients)
    assert {c.host for c in stats.clients} == {OTHER_HOST}
    [pattern] = stats.patterns
    assert len(pattern.clients) == CLIENTS_PER_PATTERN + 1
    assert pattern.clients[OTHER_HOST] == 200 - CLIENTS_PER_PATTERN
    assert sum(pattern.clients.values()) == pattern.count == 200


_REPLICA = """
import sys
from pydantic_lenient.observe.clients import Client
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.recorder import OutcomeRecorder

log_dir, name, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
recorder = OutcomeRecorder(log_dir, flush_every=3600, save_every=3600)
for number in range(calls):
    recorder.record("search", "refused", 1.0, failures=(FieldFailure("limit", "int_type", "digit string"),),
                    client=Client(name, "1.0"))
    if number % 50 == 0:
        recorder.save()
recorder.close()
"""


def test_two_processes_sharing_a_log_directory_add_up_their_clients(tmp_path: Path) -> None:
    environment = {"PYTHONPATH": str(ROOT / "src")}
    replicas = [
        subprocess.Popen([sys.executable, "-c", _REPLICA, str(tmp_path), name, "300"], env=environment)
        for name in ("cursor-vscode", "claude-code")
    ]
    assert [replica.wait(timeout=120) for replica in replicas] == [0, 0]
    stats = load_outcomes(tmp_path)
    assert {(c.client, c.host, c.refused) for c in stats.clients} == {
        ("cursor-vscode", "cursor", 300),
        ("claude-code", "claude-code", 300),
    }
    assert stats.patterns[0].clients == {"cursor-vscode": 300, "claude-code": 300}


# ---- suggest


def test_suggest_breaks_each_suggestion_and_the_calls_down_by_client(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    _record(recorder)
    recorder.close()
    [suggestion] = suggest(load_outcomes(tmp_path))
    assert suggestion.clients == (("cursor-vscode", 3), ("claude-code", 1))
    assert str(suggestion).endswith(
        "(4 calls refused digit string in `limit`; by client: cursor-vscode 3, claude-code 1)"
    )
    assert main(["suggest", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [
        "by client:",
        "  cursor-vscode 1.7.2 (host cursor): 4 calls, 3 refused, 0 failed, 1 changed by rules or repair",
        "  claude-code 2.1.0 (host claude-code): 2 calls, 1 refused, 1 failed, 0 changed by rules or repair",
    ]


def test_suggest_on_stats_without_clients_says_nothing_of_them() -> None:
    stats = OutcomeRecorder()
    stats.record("search", "refused", 1.0, failures=(LIMIT,))
    stats.record("search", "refused", 1.0, failures=(LIMIT,))
    stats.record("search", "refused", 1.0, failures=(LIMIT,))
    [suggestion] = suggest(stats.snapshot())
    assert suggestion.clients == ()
    assert "by client" not in str(suggestion)


def test_a_call_outcome_built_elsewhere_keeps_its_client() -> None:
    recorder = OutcomeRecorder()
    recorder.record_outcome(CallOutcome("search", "ok", 1.0, client=CURSOR))
    assert [(c.client, c.ok) for c in recorder.snapshot().clients] == [("cursor-vscode", 1)]
