"""A fleet's log directories read as one (`pydantic_lenient.observe.fleet`): the gateway's
per-replica layout (``HOST-PID-ERA`` under a server's ``logDir``), read by the dashboard and
``suggest`` as one recorder would have counted every call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pydantic_lenient.cli.main import main
from pydantic_lenient.observe.dashboard import dashboard_data
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.fleet import MAX_REPLICAS, fleet_audit_log, fleet_outcomes, replica_dirs
from pydantic_lenient.observe.logdir import LogDirError
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import load_outcomes

LIMIT = FieldFailure("limit", "int_type", "digit string")
TOOLS = ("search", "edit_file", "list")
STATUSES = ("ok", "refused", "error")

Call = tuple[str, str]


def _write(log_dir: Path, calls: list[Call]) -> None:
    recorder = OutcomeRecorder(log_dir, flush_every=3600)
    for tool, status in calls:
        recorder.record(tool, status, 1.0, failures=(LIMIT,) if status == "refused" else ())  # type: ignore[arg-type]
    recorder.close()


def _totals(stats: object) -> dict[str, tuple[int, int, int]]:
    return {calls.tool: (calls.ok, calls.refused, calls.error) for calls in stats.tools}  # type: ignore[attr-defined]


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(STATUSES)), max_size=30),
    st.lists(st.integers(0, 3), min_size=30, max_size=30),
)
def test_a_fleet_counts_as_one_recorder_would(calls: list[Call], replica_of: list[int]) -> None:
    """For every split of the calls among replicas, the fleet's counts are one recorder's."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        parent, alone = Path(scratch) / "fleet", Path(scratch) / "alone"
        for replica in range(4):
            mine = [call for call, owner in zip(calls, replica_of, strict=False) if owner == replica]
            if mine:
                _write(parent / f"host-{replica}-legacy", mine)
        parent.mkdir(exist_ok=True)
        _write(alone, calls)
        fleet, one = fleet_outcomes(parent), load_outcomes(alone)
        assert _totals(fleet) == _totals(one)
        assert sorted((p.tool, p.param, p.count) for p in fleet.patterns) == sorted(
            (p.tool, p.param, p.count) for p in one.patterns
        )  # in the order each was last seen, which differs
        assert len(fleet_audit_log(parent, limit=100)) == len(calls)


def test_the_dashboard_and_suggest_read_a_gateways_log_dir_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "host-1-legacy", [("search", "refused")] * 2 + [("search", "ok")])
    _write(tmp_path / "host-1-modern", [("search", "refused")])
    _write(tmp_path / "host-2-legacy", [("list", "error")])
    data = dashboard_data(tmp_path, min_count=3)
    tools = {row["tool"]: (row["ok"], row["refused"], row["error"]) for row in data["outcomes"]["tools"]}
    assert tools == {"search": (1, 3, 0), "list": (0, 0, 1)}
    assert len(data["recent"]) == 5
    assert [entry["ts"] for entry in data["recent"]] == sorted(entry["ts"] for entry in data["recent"])
    assert [suggestion["param"] for suggestion in data["suggestions"]] == ["limit"]  # 3 refusals: only together
    assert main(["suggest", str(tmp_path), "--min-count", "3"]) == 0
    assert "limit" in capsys.readouterr().out


def test_a_recorders_own_directory_is_read_alone(tmp_path: Path) -> None:
    _write(tmp_path, [("search", "ok")])
    _write(tmp_path / "copied-elsewhere", [("search", "ok")] * 5)
    assert replica_dirs(tmp_path) == [tmp_path]
    assert _totals(fleet_outcomes(tmp_path)) == {"search": (1, 0, 0)}


def test_an_empty_parent_reads_as_nothing_and_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "unrelated").mkdir()
    assert replica_dirs(tmp_path) == [tmp_path]
    assert fleet_outcomes(tmp_path).tools == []
    assert fleet_audit_log(tmp_path) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(LogDirError, match="not a directory"):
        fleet_outcomes(tmp_path / "file")


def test_a_symlinked_replica_is_not_followed(tmp_path: Path) -> None:
    _write(tmp_path / "elsewhere", [("search", "ok")])
    parent = tmp_path / "fleet"
    _write(parent / "real", [("list", "ok")])
    os.symlink(tmp_path / "elsewhere", parent / "linked")
    assert replica_dirs(parent) == [parent / "real"]


def test_past_max_replicas_the_most_recently_written_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pydantic_lenient.observe.fleet.MAX_REPLICAS", 2)
    for number in range(4):
        _write(tmp_path / f"replica-{number}", [("search", "ok")])
        os.utime(tmp_path / f"replica-{number}" / "outcomes.json", (1000 + number, 1000 + number))
        os.utime(tmp_path / f"replica-{number}" / "audit.jsonl", (1000 + number, 1000 + number))
    assert replica_dirs(tmp_path) == [tmp_path / "replica-2", tmp_path / "replica-3"]
    assert MAX_REPLICAS == 1000


def test_a_corrupt_replica_is_named(tmp_path: Path) -> None:
    _write(tmp_path / "good", [("search", "ok")])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "outcomes.json").write_text("{not json")
    with pytest.raises(LogDirError, match="bad"):
        fleet_outcomes(tmp_path)
