"""Several processes share one log directory and lose no count: each save adds only its own calls
since its last save to what the file holds, under the file's lock; and adding two saved snapshots
equals counting both streams of calls in one counter, within the bounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pydantic_lenient import Normalizer
from pydantic_lenient.cli._io import MAX_JSON_FILE_BYTES
from pydantic_lenient.cli.main import main
from pydantic_lenient.normalizer.appliers import Change
from pydantic_lenient.normalizer.engine import RuleError
from pydantic_lenient.normalizer.stats import CallCounter, StatsSnapshot, load_stats, merge_stats
from pydantic_lenient.observe.counts import OutcomeCounts, add_outcomes
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.outcomes import STATUSES, CallOutcome
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import OutcomeStats, ToolCalls, load_outcomes

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="flock, FIFOs and devices are POSIX")

HOUR = 3600.0
NOON = 1_780_000_000.0 // HOUR * HOUR
ALIAS = {"id": "edit-old_str", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"}

# One replica: it records ``calls`` calls, saving every few of them and on its own every 2 ms, so
# its saves interleave with the other replicas'.
_REPLICA = """
import json, sys, time
from pathlib import Path
from pydantic_lenient import Normalizer
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.recorder import OutcomeRecorder

logs, calls, start = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
normalizer = Normalizer([json.loads(sys.argv[4])])
recorder = OutcomeRecorder(logs, normalizer=normalizer, flush_every=0.001, save_every=0.002)
time.sleep(max(0.0, start - time.time()))  # all replicas begin together
for number in range(calls):
    normalizer.apply("edit_file", {"old_str": "a"} if number % 2 else {"old_text": "a"})
    if number % 3:
        recorder.record("edit_file", "ok", 1.0)
    else:
        recorder.record("edit_file", "refused", 1.0, failures=(FieldFailure("limit", "int_parsing", "digit string"),))
    if number % 25 == 0:
        recorder.save()
recorder.close()
"""


@POSIX
def test_replicas_sharing_a_log_directory_lose_no_count(tmp_path: Path) -> None:
    replicas, calls = 4, 1500
    start = time.time() + 3  # time for every replica to import and restore
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _REPLICA, str(tmp_path), str(calls), str(start), json.dumps(ALIAS)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        for _ in range(replicas)
    ]
    for process in processes:
        assert process.wait(timeout=300) == 0
    outcomes = load_outcomes(tmp_path)
    refused_each = len(range(0, calls, 3))
    [tool] = outcomes.tools
    assert (tool.tool, tool.ok, tool.refused, tool.error) == (
        "edit_file",
        replicas * (calls - refused_each),
        replicas * refused_each,
        0,
    )
    assert tool.duration_ms == replicas * calls * 1.0
    assert sum(hour.ok + hour.refused + hour.error for hour in outcomes.hourly) == replicas * calls
    [pattern] = outcomes.patterns
    assert pattern.count == replicas * refused_each
    assert sum(bucket.count for bucket in pattern.hourly) == replicas * refused_each
    stats = load_stats(tmp_path / "normalizer_stats.json")
    assert stats["total_processed"] == stats["by_tool"]["edit_file"]["processed"] == replicas * calls
    assert stats["total_normalized"] == stats["by_rule"]["edit-old_str"]["hits"] == replicas * (calls // 2)
    assert len(stats["recent_normalizations"]) == Normalizer.recent_limit


# One proxy: it counts ``calls`` calls into its repair stats, its recorder and its normalizer, and
# saves all three files into the shared directory every few calls, as its autosave does.
_PROXY_WRITER = """
import json, sys, time
from pathlib import Path
from pydantic_lenient import Normalizer
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.proxy.calls import REPAIR_STATS_FILE, ProxyStats

logs, calls, start = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
normalizer = Normalizer([json.loads(sys.argv[4])])
recorder = OutcomeRecorder(logs, normalizer=normalizer, flush_every=3600, save_every=3600)
stats = ProxyStats()
time.sleep(max(0.0, start - time.time()))  # both writers begin together
for number in range(calls):
    normalizer.apply("edit_file", {"old_str": "a"})
    stats.count("edit_file", [{"kind": "string_to_number"}] if number % 2 else [], valid=number % 5 != 0)
    recorder.record("edit_file", "ok", 1.0)
    if number % 7 == 0:
        stats.save(logs / REPAIR_STATS_FILE)
        recorder.save()
stats.save(logs / REPAIR_STATS_FILE)
recorder.close()
"""


@POSIX
def test_two_proxies_saving_all_three_files_into_one_directory_lose_no_count(tmp_path: Path) -> None:
    """``repair-stats.json``, ``outcomes.json`` and ``normalizer_stats.json``, each saved by two
    processes at once under the one file writer: every count of both is there."""
    writers, calls = 2, 400
    start = time.time() + 3  # time for both to import
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _PROXY_WRITER, str(tmp_path), str(calls), str(start), json.dumps(ALIAS)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        for _ in range(writers)
    ]
    for process in processes:
        assert process.wait(timeout=300) == 0
    repairs = json.loads((tmp_path / "repair-stats.json").read_text(encoding="utf-8"))
    invalid_each = len(range(0, calls, 5))
    repaired_each = len([number for number in range(calls) if number % 2 and number % 5])
    expected = {"calls": writers * calls, "repaired": writers * repaired_each, "invalid": writers * invalid_each}
    assert repairs["by_tool"] == {"edit_file": expected}
    assert (repairs["total_calls"], repairs["total_repaired"], repairs["total_invalid"]) == tuple(expected.values())
    assert len(repairs["recent_repairs"]) == 50
    assert load_outcomes(tmp_path).tools[0].ok == writers * calls
    stats = load_stats(tmp_path / "normalizer_stats.json")
    assert stats["total_processed"] == stats["total_normalized"] == writers * calls
    assert not list(tmp_path.glob("*.tmp")), "no temporary file left"


def test_recorders_saving_in_turn_into_one_directory_add_up(tmp_path: Path) -> None:
    normalizers = [Normalizer([ALIAS]), Normalizer([ALIAS])]
    recorders = [OutcomeRecorder(tmp_path, normalizer=normalizer, flush_every=3600) for normalizer in normalizers]
    for round_number in range(3):
        for recorder, normalizer in zip(recorders, normalizers, strict=True):
            normalizer.apply("edit_file", {"old_str": "a"})
            recorder.record("edit_file", "ok", 1.0)
            assert recorder.save()
            assert load_outcomes(tmp_path).tools[0].ok == recorder.snapshot().tools[0].ok
        assert load_outcomes(tmp_path).tools[0].ok == 2 * (round_number + 1)
    for recorder in recorders:
        recorder.close()
    assert load_outcomes(tmp_path).tools[0].ok == 6
    assert load_stats(tmp_path / "normalizer_stats.json")["total_normalized"] == 6
    restarted = Normalizer([ALIAS])
    OutcomeRecorder(tmp_path, normalizer=restarted).close()
    assert restarted.stats()["total_normalized"] == 6  # restored, and a save with no new call adds nothing
    assert load_stats(tmp_path / "normalizer_stats.json")["total_normalized"] == 6


def test_a_save_the_file_refuses_keeps_the_calls_for_the_next_one(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    recorder.record("search", "ok", 1.0)
    assert recorder.save()
    recorder.record("search", "ok", 1.0)
    (tmp_path / "outcomes.json").write_text("{not json", encoding="utf-8")  # another writer's bug
    assert not recorder.save()
    assert (tmp_path / "outcomes.json").read_text(encoding="utf-8") == "{not json"  # never written over
    assert recorder.snapshot().tools[0].ok == 2
    recorder.record("search", "ok", 1.0)
    (tmp_path / "outcomes.json").unlink()
    assert recorder.save()
    recorder.close()
    assert load_outcomes(tmp_path).tools[0].ok == 2  # the calls since the last good save; the file had lost one


def test_a_normalizer_saves_its_calls_once_to_its_home_and_copies_elsewhere(tmp_path: Path) -> None:
    home, copy = tmp_path / "stats.json", tmp_path / "copy.json"
    first, second = Normalizer([ALIAS], stats_file=home), Normalizer([ALIAS], stats_file=home)
    first.apply("edit_file", {"old_str": "a"})
    second.apply("edit_file", {"old_str": "a"})
    second.apply("edit_file", {"old_text": "a"})
    first.save()
    second.save()
    first.save()  # nothing new: adds nothing
    assert load_stats(home)["total_processed"] == 3
    assert first.stats()["total_processed"] == 3  # the file's counts, read when it saved
    first.save(copy)
    first.save(copy)
    assert load_stats(copy) == load_stats(home)
    # Saved into a log directory first, its counts still live in its own stats file, which
    # another process created meanwhile: added to, not replaced by a copy.
    third, other = Normalizer([ALIAS], stats_file=tmp_path / "own.json"), Normalizer([ALIAS])
    recorder = OutcomeRecorder(tmp_path / "logs", normalizer=third)
    third.apply("edit_file", {"old_str": "a"})
    other.apply("edit_file", {"old_str": "a"})
    other.save(tmp_path / "own.json")
    recorder.close()
    third.close()
    assert load_stats(tmp_path / "own.json")["total_processed"] == 2
    assert load_stats(tmp_path / "logs" / "normalizer_stats.json")["total_processed"] == 1


def _in_one_recorder(streams: list[list[CallOutcome]], max_patterns: int, max_hours: int) -> OutcomeStats:
    counts = OutcomeCounts(max_patterns=max_patterns, max_hours=max_hours)
    for stream in streams:
        for outcome in stream:
            counts.fold(outcome)
    return counts.stats()


def _as_dicts(stats: OutcomeStats) -> dict[str, Any]:
    """The counts of ``stats``, keyed; the tools in their order (the least recently touched first)."""
    return {
        "tools": [(tool.tool, tool.ok, tool.refused, tool.error, tool.duration_ms) for tool in stats.tools],
        "hourly": [(hour.start, hour.ok, hour.refused, hour.error) for hour in stats.hourly],
        "patterns": {
            (pattern.tool, pattern.param, pattern.error_type, pattern.shape): (
                pattern.count,
                pattern.first_seen,
                pattern.last_seen,
                [(bucket.start, bucket.count) for bucket in pattern.hourly],
                pattern.samples,
            )
            for pattern in stats.patterns
        },
        "aliases": {
            (alias.tool, alias.unknown, alias.missing): (alias.count, alias.first_seen, alias.last_seen)
            for alias in stats.aliases
        },
        "audit_lines_dropped": stats.audit_lines_dropped,
    }


outcome_streams = st.lists(
    st.builds(
        CallOutcome,
        tool=st.sampled_from(["search", "edit_file", "run"]),
        status=st.sampled_from(STATUSES),
        duration_ms=st.integers(0, 4000).map(lambda quarters: quarters / 4),  # sums are exact in any order
        failures=st.lists(
            st.builds(
                FieldFailure,
                param=st.sampled_from(["limit", "old_str", "old_text"]),
                error_type=st.sampled_from(["int_parsing", "missing", "unknown_parameter"]),
                shape=st.sampled_from(["digit string", "string"]),
                sample=st.sampled_from([None, "12", "x"]),
            ),
            max_size=3,
        ).map(tuple),
        ts=st.floats(NOON, NOON + 5 * HOUR),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(outcome_streams, outcome_streams, st.integers(1, 30), st.integers(1, 7))
def test_adding_two_saved_outcomes_is_recording_both_streams_in_one_recorder(
    first: list[CallOutcome], second: list[CallOutcome], max_patterns: int, max_hours: int
) -> None:
    saved = [_in_one_recorder([stream], max_patterns, max_hours) for stream in (first, second)]
    added = add_outcomes(saved, max_patterns=max_patterns, max_hours=max_hours)
    # Bounded, whatever the streams.
    assert len(added.tools) <= max_patterns
    assert len(added.patterns) <= max_patterns
    assert len(added.aliases) <= max_patterns
    assert len(added.hourly) <= max_hours
    assert all(len(pattern.hourly) <= max_hours and len(pattern.samples) <= 5 for pattern in added.patterns)
    # What is kept is exact: the sum of both snapshots' counts.
    both = [_as_dicts(part) for part in saved]
    for tool, *counts in _as_dicts(added)["tools"]:
        parts = [next((kept for kept in part["tools"] if kept[0] == tool), (tool, 0, 0, 0, 0.0))[1:] for part in both]
        assert counts == [sum(values) for values in zip(*parts, strict=True)]
    for key, (count, *_) in _as_dicts(added)["patterns"].items():
        assert count == sum(part["patterns"].get(key, (0,))[0] for part in both)
    # Within the bounds (one recorder dropped nothing), it is what one recorder counts.
    in_one = _in_one_recorder([first, second], max_patterns, max_hours)
    if _as_dicts(in_one) == _as_dicts(_in_one_recorder([first, second], 10**6, 10**6)):
        assert _as_dicts(added) == _as_dicts(in_one)


RULES = [("a", "param_alias"), ("b", "type_coerce"), ("c", "param_default")]
call_streams = st.lists(
    st.tuples(
        st.sampled_from(["edit_file", "search", "<other tools>"]),
        st.lists(st.sampled_from(RULES), max_size=3).map(lambda rules: sorted(rules)),
    ),
    max_size=40,
)


def _counted(calls: list[tuple[str, list[tuple[str, str]]]], recent_limit: int) -> StatsSnapshot:
    counter = CallCounter(recent_limit)
    for tool, rules in calls:
        counter.add(tool, [Change(rule_id, kind, "p", 1, 2) for rule_id, kind in rules])  # type: ignore[arg-type]
    return counter.snapshot()


def _without_times(stats: StatsSnapshot) -> dict[str, Any]:
    return {
        **stats,
        "last_updated": stats["last_updated"] is not None,
        "recent_normalizations": [(entry["tool"], entry["applied"]) for entry in stats["recent_normalizations"]],
    }


@settings(max_examples=150, deadline=None)
@given(call_streams, call_streams, st.integers(0, 6))
def test_adding_two_saved_normalizer_stats_is_counting_both_streams_in_one_counter(
    first: list[tuple[str, list[tuple[str, str]]]], second: list[tuple[str, list[tuple[str, str]]]], recent_limit: int
) -> None:
    added = merge_stats(_counted(first, recent_limit), _counted(second, recent_limit), recent_limit)
    assert len(added["recent_normalizations"]) <= recent_limit
    assert _without_times(added) == _without_times(_counted(first + second, recent_limit))


def test_a_file_another_writer_saved_meanwhile_is_added_to_never_replaced(tmp_path: Path) -> None:
    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    (tmp_path / "outcomes.json").write_text(
        OutcomeStats(tools=[ToolCalls(tool="search", ok=5)]).model_dump_json(), encoding="utf-8"
    )
    recorder.record("search", "ok", 1.0)
    recorder.close()
    assert Counter({tool.tool: tool.ok for tool in load_outcomes(tmp_path).tools}) == Counter(search=6)


@POSIX
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_rules_or_schema_file_that_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rules.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(RuleError, match="not a regular file"):
        Normalizer.from_file(path)
    for command in (["normalize", "--rules", str(path), "--tool", "edit_file"], ["repair", "--schema", str(path)]):
        assert main([*command, "{}"]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert "not a regular file" in error


def test_a_file_too_large_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "schema.json"
    with path.open("wb") as file:
        file.truncate(MAX_JSON_FILE_BYTES + 1)  # sparse: costs no disk
    assert main(["repair", "--schema", str(path), "{}"]) == 2
    assert "larger than" in capsys.readouterr().err


def test_a_rules_file_reached_through_a_symlink_loads(tmp_path: Path) -> None:
    # As a Kubernetes ConfigMap mounts it: the user named the file, so the link is followed.
    (tmp_path / "data.json").write_text(json.dumps([ALIAS]), encoding="utf-8")
    (tmp_path / "rules.json").symlink_to(tmp_path / "data.json")
    normalizer = Normalizer.from_file(tmp_path / "rules.json")
    assert normalizer.apply("edit_file", {"old_str": "a"}).arguments == {"old_text": "a"}


def test_a_repair_stats_save_that_fails_keeps_its_calls_and_writes_over_nothing(tmp_path: Path) -> None:
    from pydantic_lenient.proxy.calls import ProxyStats

    path = tmp_path / "repair-stats.json"
    stats = ProxyStats()
    stats.count("search", [{"kind": "string_to_number"}], valid=True)
    stats.save(path)
    stats.count("search", [], valid=False)
    path.write_text('{"by_tool": {"search": {"calls": -1}}}', encoding="utf-8")  # another writer's bug
    with pytest.raises(ValueError, match="not a repair stats file"):
        stats.save(path)
    assert path.read_text(encoding="utf-8") == '{"by_tool": {"search": {"calls": -1}}}'  # never written over
    assert stats.snapshot()["by_tool"]["search"] == {"calls": 2, "repaired": 1, "invalid": 1}
    path.unlink()
    stats.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["by_tool"]["search"] == {"calls": 1, "repaired": 0, "invalid": 1}  # the file had lost the first
    assert saved["recent_repairs"] == []


_PROXY_CALL = st.tuples(
    st.integers(0, 1),  # which proxy counts it
    st.sampled_from(["search", "edit_file", "\ud800"]),  # a lone surrogate is a name too
    st.booleans(),  # repaired
    st.booleans(),  # valid
    st.booleans(),  # that proxy saves after it
)


@given(calls=st.lists(_PROXY_CALL, max_size=40))
@settings(max_examples=60, deadline=None)
def test_two_proxies_saving_in_any_order_add_up_to_every_call_counted(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[int, str, bool, bool, bool]]
) -> None:
    """For every interleaving of counts and saves of two proxies sharing ``repair-stats.json``,
    the file ends holding each call exactly once."""
    from pydantic_lenient.proxy.calls import ProxyStats

    path = tmp_path_factory.mktemp("logs") / "repair-stats.json"
    proxies = [ProxyStats(), ProxyStats()]
    expected: dict[str, Counter[str]] = {}
    for which, tool, repaired, valid, save in calls:
        proxies[which].count(tool, [{"kind": "string_to_number"}] if repaired else [], valid)
        counts = expected.setdefault(tool, Counter())
        counts["calls"] += 1
        counts["repaired"] += repaired and valid
        counts["invalid"] += not valid
        if save:
            proxies[which].save(path)
    for stats in proxies:
        stats.save(path)
    saved = json.loads(path.read_text(encoding="ascii"))
    assert saved["by_tool"] == {
        tool: {key: counts[key] for key in ("calls", "repaired", "invalid")} for tool, counts in expected.items()
    }
    assert saved["total_calls"] == len(calls)
    assert len(saved["recent_repairs"]) == min(50, sum(repaired and valid for _, _, repaired, valid, _ in calls))
