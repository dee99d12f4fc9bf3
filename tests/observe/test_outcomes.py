"""Call outcomes, error patterns, their persistence, the audit log, and the suggestions they make."""

from __future__ import annotations

import json
import logging
import math
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from pydantic_lenient import Normalizer
from pydantic_lenient.normalizer.stats import timestamp
from pydantic_lenient.observe.audit_text import audit_timestamp
from pydantic_lenient.observe.auditlog import AuditLog, read_audit_log
from pydantic_lenient.observe.clients import client_from_info
from pydantic_lenient.observe.failures import FieldFailure, field_failures
from pydantic_lenient.observe.logdir import LogDirError
from pydantic_lenient.observe.outcomes import STATUSES, CallOutcome, Status
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.shapes import clean_name, value_shape
from pydantic_lenient.observe.stats_file import load_outcomes
from pydantic_lenient.observe.suggestions import rules_document, suggest

HOUR = 3600.0
NOON = 1_780_000_000.0 // HOUR * HOUR  # the start of an hour


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        pytest.param("100", "digit string", id="digits"),
        pytest.param("-7", "digit string", id="signed-digits"),
        pytest.param("2.5e3", "number string", id="number-text"),
        pytest.param("FALSE", "boolean text", id="boolean-text"),
        pytest.param("null", "null text", id="null-text"),
        pytest.param("yes", "yes/no text", id="yes"),
        pytest.param('["a", "b"]', "JSON text of an array", id="json-array"),
        pytest.param('{"a": 1}', "JSON text of an object", id="json-object"),
        pytest.param("[not json", "malformed JSON text", id="bad-json"),
        pytest.param(" 100", "padded digit string", id="padded"),
        pytest.param("", "empty string", id="empty"),
        pytest.param("  ", "blank string", id="blank"),
        pytest.param("٣", "string", id="non-ascii-digit"),
        pytest.param("hello", "string", id="text"),
        pytest.param(3, "integer", id="int"),
        pytest.param(1.5, "number", id="float"),
        pytest.param(float("nan"), "non-finite number", id="nan"),
        pytest.param(True, "boolean", id="bool"),
        pytest.param(None, "null", id="none"),
        pytest.param([1], "array", id="list"),
        pytest.param({"a": 1}, "object", id="dict"),
        pytest.param("[" * 10_000, "malformed JSON text", id="deep-nesting"),
    ],
)
def test_value_shape(value: Any, shape: str) -> None:
    assert value_shape(value) == shape


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(json_values)
def test_value_shape_never_holds_the_value(value: Any) -> None:
    """A shape is one of a few fixed words, so no value (a secret) ever ends up in a pattern."""
    shape = value_shape(value)
    assert shape.removeprefix("padded ") in {
        "digit string", "number string", "boolean text", "null text", "yes/no text", "JSON text of an array",
        "JSON text of an object", "malformed JSON text", "empty string", "blank string", "string", "integer",
        "number", "non-finite number", "boolean", "null", "array", "object",
    }  # fmt: skip


class Search(BaseModel):
    """Strict, as under FastMCP's strict_input_validation: ``"100"`` is refused for the int."""

    model_config = ConfigDict(strict=True)

    folder: str
    limit: Optional[int] = None
    dry_run: bool = False
    uids: list[int] = []


class EditFile(BaseModel):
    model_config = ConfigDict(strict=True)

    path: str
    old_text: str
    new_text: str
    dry_run: bool = False


def refusal(model: type[BaseModel], arguments: dict[str, Any], **options: Any) -> tuple[FieldFailure, ...]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(arguments)
    return field_failures(caught.value, arguments, known=set(model.model_fields), **options)


def test_field_failures_name_each_field_and_shape() -> None:
    failures = refusal(Search, {"fold": "Dev", "limit": "ten", "dry_run": "maybe", "uids": "[1, 2]"})
    assert {(f.param, f.error_type, f.shape) for f in failures} == {
        ("folder", "missing", "missing parameter `folder`"),
        ("limit", "int_type", "string"),
        ("dry_run", "bool_type", "string"),
        ("uids", "list_type", "JSON text of an array"),
        ("fold", "unknown_parameter", "unknown parameter `fold`"),
    }
    assert all(failure.sample is None for failure in failures)


def test_item_numbers_do_not_split_a_pattern() -> None:
    failures = refusal(Search, {"folder": "x", "uids": [1, "a", 3, "b"]})
    assert [(f.param, f.error_type) for f in failures] == [("uids[]", "int_type")]


def recorder_with(tmp_path: Path, **options: Any) -> OutcomeRecorder:
    options.setdefault("flush_every", 3600.0)  # the tests flush themselves
    return OutcomeRecorder(tmp_path, **options)


def test_values_are_never_kept_unless_asked(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    arguments = {"folder": "x", "limit": secret}
    recorder = recorder_with(tmp_path / "plain")
    recorder.record("search", "refused", 1.0, failures=recorder.field_failures(_error(Search, arguments), arguments))
    recorder.close()
    for path in (tmp_path / "plain").iterdir():
        assert secret not in path.read_text(encoding="utf-8"), path.name

    sampled = recorder_with(tmp_path / "sampled", sample_chars=6)
    sampled.record("search", "refused", 1.0, failures=sampled.field_failures(_error(Search, arguments), arguments))
    sampled.close()
    [pattern] = load_outcomes(tmp_path / "sampled").patterns
    assert pattern.samples == ["sk-liv…"]
    assert read_audit_log(tmp_path / "sampled")[0].errors[0].sample == "sk-liv…"
    assert secret not in (tmp_path / "sampled" / "outcomes.json").read_text(encoding="utf-8")


def _error(model: type[BaseModel], arguments: dict[str, Any]) -> ValidationError:
    try:
        model.model_validate(arguments)
    except ValidationError as error:
        return error
    raise AssertionError("the arguments were valid")


def test_patterns_count_first_last_seen_and_hourly_buckets(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    limit = FieldFailure("limit", "int_parsing", "digit string")
    for ts in (NOON + 10, NOON + 20, NOON + HOUR + 5):
        recorder.record_outcome(CallOutcome("search", "refused", 2.0, (limit,), ts=ts))
    recorder.record_outcome(CallOutcome("search", "ok", 1.0, norms=("r1",), ts=NOON + 30))
    stats = recorder.snapshot()
    [pattern] = stats.patterns
    assert (pattern.count, pattern.first_seen, pattern.last_seen) == (3, NOON + 10, NOON + HOUR + 5)
    assert [(bucket.start, bucket.count) for bucket in pattern.hourly] == [(NOON, 2), (NOON + HOUR, 1)]
    [search] = stats.tools
    assert (search.ok, search.refused, search.error, search.duration_ms) == (1, 3, 0, 7.0)
    assert [(hour.start, hour.ok, hour.refused) for hour in stats.hourly] == [(NOON, 1, 2), (NOON + HOUR, 0, 1)]
    recorder.close()


def test_memory_is_bounded(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path, max_patterns=3, max_hours=2)
    for number in range(10):
        failure = FieldFailure(f"p{number}", "int_parsing", "digit string")
        recorder.record_outcome(CallOutcome(f"tool{number}", "refused", 1.0, (failure,), ts=NOON + number * HOUR))
    stats = recorder.snapshot()
    assert [pattern.param for pattern in stats.patterns] == ["p7", "p8", "p9"]
    assert [tool.tool for tool in stats.tools] == ["tool7", "tool8", "tool9"]
    assert [hour.start for hour in stats.hourly] == [NOON + 8 * HOUR, NOON + 9 * HOUR]
    long_name = "x" * 10_000
    recorder.record(long_name, "error", 1.0, failures=(FieldFailure(long_name, "missing", "missing parameter"),))
    assert max(len(tool.tool) for tool in recorder.snapshot().tools) == 200
    recorder.close()


outcomes = st.lists(
    st.builds(
        CallOutcome,
        tool=st.sampled_from(["search", "edit_file", "\udcff odd"]),
        status=st.sampled_from(STATUSES),
        duration_ms=st.floats(0, 1000),
        failures=st.lists(
            st.builds(
                FieldFailure,
                param=st.sampled_from(["limit", "old_str", "old_text"]),
                error_type=st.sampled_from(["int_parsing", "missing", "unknown_parameter"]),
                shape=st.sampled_from(["digit string", "string"]),
            ),
            max_size=3,
        ).map(tuple),
        ts=st.floats(NOON, NOON + 5 * HOUR),
    ),
    max_size=30,
)


@given(outcomes, outcomes)
def test_counts_are_exact_and_survive_a_restart(first: list[CallOutcome], second: list[CallOutcome]) -> None:
    with _temporary_directory() as directory:
        recorder = recorder_with(directory)
        for outcome in first:
            recorder.record_outcome(outcome)
        recorder.close()
        restarted = recorder_with(directory)
        for outcome in second:
            restarted.record_outcome(outcome)
        restarted.close()
        stats = load_outcomes(directory)
        entries = read_audit_log(directory, limit=1000)
    everything = first + second
    expected = Counter(
        (outcome.tool.encode("utf-8", "backslashreplace").decode(), outcome.status) for outcome in everything
    )
    recorded: Counter[tuple[str, str]] = Counter()
    for tool in stats.tools:
        for status in STATUSES:
            recorded[(tool.tool, status)] += getattr(tool, status)
    assert +recorded == expected
    failures = sum(len(outcome.failures) for outcome in everything)
    distinct = sum(len({(f.param, f.error_type) for f in outcome.failures}) for outcome in everything)
    assert distinct <= sum(pattern.count for pattern in stats.patterns) <= failures
    assert sum(hour.ok + hour.refused + hour.error for hour in stats.hourly) == len(everything)
    assert [(entry.tool, entry.status) for entry in entries] == [
        (outcome.tool.encode("utf-8", "backslashreplace").decode(), outcome.status) for outcome in everything
    ]


class _temporary_directory:
    """A fresh directory per hypothesis example (pytest's tmp_path is one per test)."""

    def __enter__(self) -> Path:
        import tempfile

        self.path = Path(tempfile.mkdtemp(prefix="outcomes-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path)


def test_counts_are_exact_under_concurrent_calls(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path, flush_every=0.001)
    statuses: list[Status] = ["ok", "refused", "error"]

    def call_many(status: Status) -> None:
        for _ in range(3000):
            recorder.record("search", status, 0.5)

    threads = [threading.Thread(target=call_many, args=(status,)) for status in statuses]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    recorder.close()
    [search] = load_outcomes(tmp_path).tools
    assert (search.ok, search.refused, search.error) == (3000, 3000, 3000)
    assert len(read_audit_log(tmp_path, limit=10_000)) == 9000


# --- Bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b'{"format": "pydantic-lenient-outcomes", "version": 1, "tools": [{"tool": "a", "ok": 3', "EOF",
                     id="cut-short"),
        pytest.param(b"\xff\xfe not utf-8", "outcomes.json", id="not-utf-8"),
        pytest.param(b'{"format": "pydantic-lenient-outcomes", "version": 1, "tools": [{"tool": "a", "ok": -1}]}',
                     "tools.0.ok", id="negative-count"),
        pytest.param(b'{"format": "something-else", "version": 1}', "format", id="other-format"),
        pytest.param(b"[]", "outcomes.json", id="wrong-shape"),
        pytest.param(b"[" * 100_000, "outcomes.json", id="deep-nesting"),
    ],
)  # fmt: skip
def test_a_corrupt_stats_file_is_one_clear_error_and_is_kept(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "outcomes.json").write_bytes(content)
    with pytest.raises(LogDirError, match=r"outcomes\.json") as caught:
        OutcomeRecorder(tmp_path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert (tmp_path / "outcomes.json").read_bytes() == content
    with pytest.raises(LogDirError, match=r"outcomes\.json"):
        load_outcomes(tmp_path)


def test_a_corrupt_normalizer_stats_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "normalizer_stats.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(LogDirError, match=r"normalizer_stats\.json"):
        OutcomeRecorder(tmp_path, normalizer=Normalizer([]))
    assert (tmp_path / "normalizer_stats.json").read_text(encoding="utf-8") == "{not json"


def test_a_corrupt_audit_line_is_one_clear_error(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    audit = tmp_path / "audit.jsonl"
    audit.write_text(audit.read_text(encoding="utf-8") + '{"ts": 1}\n', encoding="utf-8")
    with pytest.raises(LogDirError, match=r"audit\.jsonl: a line is not an audit entry"):
        read_audit_log(tmp_path)


def test_a_line_cut_short_is_skipped_and_the_next_lines_start_a_new_file(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    audit = tmp_path / "audit.jsonl"
    with audit.open("a", encoding="utf-8") as file:
        file.write('{"ts": "2026-')  # a crash in the middle of a line
    assert [entry.tool for entry in read_audit_log(tmp_path)] == ["search"]
    restarted = recorder_with(tmp_path)
    restarted.record("fetch", "ok", 1.0)
    restarted.close()
    assert (tmp_path / "audit.jsonl.1").read_text(encoding="utf-8").endswith('{"ts": "2026-')
    assert [entry.tool for entry in read_audit_log(tmp_path)] == ["search", "fetch"]


def test_the_audit_log_rotates_by_size(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, max_bytes=200, backups=2)
    lines = [json.dumps({"ts": f"t{n}", "tool": "t", "status": "ok", "duration_ms": 1, "norms": [], "errors": []})
             for n in range(12)]  # fmt: skip
    for line in lines:
        log.write([line])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    assert all(path.stat().st_size <= 200 for path in tmp_path.iterdir())
    kept = [entry.ts for entry in read_audit_log(tmp_path, limit=100)]
    assert kept == [f"t{n}" for n in range(12)][-len(kept) :]
    assert 2 <= len(kept) < 12


def test_a_disk_that_refuses_never_breaks_a_call_and_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = recorder_with(tmp_path)
    # Root ignores permissions, so the disk's refusal is a directory where each file should be.
    (tmp_path / "audit.jsonl").mkdir()
    (tmp_path / "outcomes.json").mkdir()
    with caplog.at_level(logging.WARNING, logger="pydantic_lenient.outcomes"):
        for _ in range(3):
            recorder.record("search", "ok", 1.0)
            recorder.flush()
        assert recorder.save() is False
        assert recorder.save() is False
    refusals = [record.getMessage() for record in caplog.records]
    assert len(refusals) == 2, refusals  # once for the audit log, once for the stats: no flood
    assert "retrying" in refusals[0]
    (tmp_path / "audit.jsonl").rmdir()
    (tmp_path / "outcomes.json").rmdir()
    recorder.record("search", "ok", 1.0)
    recorder.close()
    assert len(read_audit_log(tmp_path)) == 4
    assert load_outcomes(tmp_path).tools[0].ok == 4


def test_the_background_thread_flushes_and_retries_the_save(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.write_text("a file where the directory should be", encoding="utf-8")
    recorder = OutcomeRecorder(log_dir, flush_every=0.01, save_every=0.01)
    recorder.record("search", "ok", 1.0)
    _wait_for(lambda: recorder._failing == {"audit", "save"})
    log_dir.unlink()
    _wait_for(lambda: (log_dir / "outcomes.json").is_file() and (log_dir / "audit.jsonl").is_file())
    recorder.close()
    assert load_outcomes(log_dir).tools[0].ok == 1
    assert len(read_audit_log(log_dir)) == 1


def _wait_for(condition: Any, timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_load_outcomes_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(LogDirError, match="not a directory"):
        load_outcomes(tmp_path / "missing")
    assert load_outcomes(tmp_path).tools == []


def test_the_normalizer_stats_are_saved_and_restored(tmp_path: Path) -> None:
    rules = [{"id": "edit-old_str", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"}]
    normalizer = Normalizer.from_json(json.dumps(rules))
    recorder = recorder_with(tmp_path, normalizer=normalizer)
    normalizer.apply("edit_file", {"old_str": "a"})
    recorder.close()
    assert load_outcomes(tmp_path).normalizer is not None
    assert json.loads((tmp_path / "normalizer_stats.json").read_text(encoding="utf-8"))["total_normalized"] == 1
    restarted = Normalizer.from_json(json.dumps(rules))
    recorder_with(tmp_path, normalizer=restarted).close()
    assert restarted.stats()["total_normalized"] == 1


# --- Suggestions -----------------------------------------------------------------------------


def _refuse(
    recorder: OutcomeRecorder, model: type[BaseModel], tool: str, arguments: dict[str, Any], times: int
) -> None:
    for _ in range(times):
        recorder.record(tool, "refused", 1.0, failures=refusal(model, arguments))


def test_suggested_rules_fix_the_calls_that_failed(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    edit = {"path": "a.txt", "old_str": "a", "new_str": "b", "dry_run": "FALSE"}
    search = {"folder": "Dev", "uids": "[1, 2]"}
    _refuse(recorder, EditFile, "edit_file", edit, 4)
    _refuse(recorder, Search, "search", search, 3)
    recorder.close()
    suggestions = suggest(load_outcomes(tmp_path), min_count=3)
    rules = rules_document(suggestions)["rules"]
    assert {(rule["type"], rule["from"], rule.get("to"), rule.get("coerce_to")) for rule in rules} == {
        ("param_alias", "old_str", "old_text", None),  # not new_text: it came with both, equally often
        ("param_alias", "new_str", "new_text", None),
        ("type_coerce", "dry_run", None, "bool"),
        ("json_accept_both", "uids", None, "json"),
    }
    assert all(suggestion.evidence >= 3 for suggestion in suggestions)
    normalizer = Normalizer.from_json(json.dumps(rules_document(suggestions)))
    EditFile.model_validate(normalizer.apply("edit_file", edit).arguments)
    Search.model_validate(normalizer.apply("search", search).arguments)


def test_suggestions_need_enough_evidence(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    _refuse(recorder, EditFile, "edit_file", {"path": "a", "old_str": "a", "new_text": "b"}, 2)
    stats = recorder.snapshot()
    recorder.close()
    assert suggest(stats, min_count=3) == []
    [alias] = suggest(stats, min_count=2)
    assert (alias.rule or {})["to"] == "old_text"
    assert alias.evidence == 2
    with pytest.raises(ValueError, match="min_count"):
        suggest(stats, min_count=0)


def test_annotation_suggestions_use_the_audits_lenient_form(tmp_path: Path) -> None:
    recorder = recorder_with(tmp_path)
    recorder.describe_tool("search", Search)
    _refuse(recorder, Search, "search", {"folder": "x", "limit": "100"}, 3)
    _refuse(recorder, Search, "search", {"folder": "x", "dry_run": "maybe"}, 5)  # no lenient form takes it
    stats = recorder.snapshot()
    recorder.close()
    annotations = [s for s in suggest(stats) if s.kind == "annotation"]
    assert [(s.param, s.annotation, s.replacement, s.evidence) for s in annotations] == [
        ("limit", "Optional[int]", "Lenient[Optional[LenientInt]]", 3)
    ]
    assert str(annotations[0]).startswith("search.limit: Optional[int] -> Lenient[Optional[LenientInt]]")
    assert load_outcomes(tmp_path).annotations  # kept for `pydantic-lenient suggest LOG_DIR`


search_arguments = st.dictionaries(
    st.sampled_from(["folder", "limit", "dry_run", "uids", "fold", "old_str"]), json_values, max_size=5
)


@given(search_arguments, st.sampled_from([0, 3]))
def test_a_refusal_recorded_as_raised_is_recorded_as_one_worked_out_on_the_call(
    arguments: dict[str, Any], sample_chars: int
) -> None:
    """`record_refusal` works the failures out on flush: the audit line, the patterns and what the
    sinks see are those of `record` with `field_failures` worked out on the call path."""
    try:
        Search.model_validate(arguments)
    except ValidationError as error:
        caught = error
    else:
        return
    known = set(Search.model_fields)
    with tempfile.TemporaryDirectory() as eager_dir, tempfile.TemporaryDirectory() as deferred_dir:
        eager_seen: list[CallOutcome] = []
        deferred_seen: list[CallOutcome] = []
        options: dict[str, Any] = {"sample_chars": sample_chars, "flush_every": 3600}
        eager = OutcomeRecorder(eager_dir, sinks=[_Collect(eager_seen)], **options)
        deferred = OutcomeRecorder(deferred_dir, sinks=[_Collect(deferred_seen)], **options)
        failures = eager.field_failures(caught, arguments, known=known)
        eager.record("search", "refused", 1.5, failures=failures, norms=("n",))
        deferred.record_refusal("search", 1.5, caught, arguments, known=known, norms=("n",))
        seen = {"first_seen", "last_seen", "hourly"}
        timeless: Any = {"saved_at": True, "hourly": True, "patterns": {"__all__": seen}, "aliases": {"__all__": seen}}
        assert deferred.snapshot().model_dump(exclude=timeless) == eager.snapshot().model_dump(exclude=timeless)
        eager.close()
        deferred.close()
        assert [replace(outcome, ts=0) for outcome in deferred_seen] == [
            replace(outcome, ts=0) for outcome in eager_seen
        ]
        assert _audit_lines(deferred_dir) == _audit_lines(eager_dir)


def _audit_lines(log_dir: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (Path(log_dir) / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines
    return [{key: value for key, value in line.items() if key != "ts"} for line in lines]


class _Collect:
    def __init__(self, seen: list[CallOutcome]) -> None:
        self.seen = seen

    def record(self, outcome: CallOutcome) -> None:
        self.seen.append(outcome)


def test_a_refusal_whose_error_cannot_be_read_still_counts(caplog: pytest.LogCaptureFixture) -> None:
    def unreadable() -> Iterator[ErrorDetails]:
        raise RuntimeError("not an error list")
        yield  # a generator

    recorder = OutcomeRecorder()
    recorder.record_refusal("search", 1.0, unreadable(), {"limit": "x"})
    with caplog.at_level(logging.ERROR, logger="pydantic_lenient.outcomes"):
        stats = recorder.snapshot()
    assert [(tool.tool, tool.refused) for tool in stats.tools] == [("search", 1)]
    assert stats.patterns == []
    assert "cannot read the validation error of a refused call to 'search'" in caplog.text


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-6.2e10, max_value=2.5e11))
def test_audit_times_are_written_as_the_stats_write_them(seconds: float) -> None:
    assert audit_timestamp(seconds) == timestamp(seconds)


@pytest.mark.parametrize("seconds", [0.0, 0.0009995, 1_780_000_000.9999995, 1_780_000_000.0004999, 253_402_300_798.5])
def test_audit_times_round_as_datetime_rounds(seconds: float) -> None:
    assert audit_timestamp(seconds) == timestamp(seconds)


hostile_text = st.text(st.characters(codec=None), max_size=300)  # lone surrogates, controls, quotes


@given(
    tool=hostile_text,
    status=st.sampled_from(STATUSES),
    duration_ms=st.one_of(st.floats(), st.integers(min_value=0, max_value=10**20)),
    norms=st.lists(hostile_text, max_size=3),
    failures=st.lists(
        st.builds(FieldFailure, hostile_text, hostile_text, hostile_text, st.none() | hostile_text), max_size=3
    ),
    client_info=st.none() | st.fixed_dictionaries({"name": hostile_text, "version": hostile_text}),
)
def test_an_audit_line_is_what_json_dumps_writes(
    tool: str,
    status: Status,
    duration_ms: float,
    norms: list[str],
    failures: list[FieldFailure],
    client_info: dict[str, str] | None,
) -> None:
    """The audit line is built without json.dumps, byte for byte as json.dumps would write it, but
    for the three characters str.splitlines breaks at that JSON leaves raw."""
    ts = 1_780_000_000.123
    recorder = OutcomeRecorder()
    client = client_from_info(client_info)
    line = recorder._counts.fold(
        CallOutcome(tool, status, duration_ms, tuple(failures), tuple(norms), ts, client), audit_line=True
    )
    errors = []
    for failure in failures:
        error = {
            "param": clean_name(failure.param),
            "type": clean_name(failure.error_type),
            "shape": clean_name(failure.shape),
        }
        if failure.sample is not None:
            error["sample"] = failure.sample
        errors.append(error)
    entry = {
        "ts": timestamp(ts),
        "tool": clean_name(tool),
        "status": status,
        "duration_ms": round(duration_ms, 3) if 0 <= duration_ms < math.inf else 0.0,
        "norms": [clean_name(norm) for norm in norms],
        "errors": errors,
    }
    if client_info is not None and client is not None:
        entry["client"] = {
            "name": clean_name(client_info["name"], 100),
            "version": clean_name(client_info["version"], 50),
        }
    dumped = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    # json.dumps leaves U+0085, U+2028 and U+2029 raw; the audit line escapes them, so that every
    # reader finds one line per call.
    for character in ("\x85", "\u2028", "\u2029"):
        dumped = dumped.replace(character, f"\\u{ord(character):04x}")
    assert line == dumped
    assert line.splitlines() == [line]
    assert json.loads(line) == entry


def test_repeated_and_distinct_mistakes_are_counted_alike_past_the_plan_cache() -> None:
    """Folding reuses what it worked out for a (tool, failures) it saw before; counts must not
    depend on that, nor on the cache starting again once it holds ``_PLANS_LIMIT`` plans."""
    from pydantic_lenient.observe.counts import _PLANS_LIMIT

    recorder = OutcomeRecorder()
    expected: Counter[tuple[str, str, str]] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for number in range(_PLANS_LIMIT + 300):
        unknown = FieldFailure(f"old_{number % 7}", "unknown_parameter", "unknown parameter")
        missing = FieldFailure(f"new_{number % 11}", "missing", "missing parameter")
        if number >= _PLANS_LIMIT:  # new plans once the cache is full
            missing = FieldFailure(f"late_{number}", "missing", "missing parameter")
        failures = (unknown, missing) if number % 3 else (FieldFailure("limit", "int_type", "digit string"),)
        recorder.record("edit", "refused", 1.0, failures=failures)
        expected.update((failure.param, failure.error_type, failure.shape) for failure in failures)
        if number % 3:
            pairs[(unknown.param, missing.param)] += 1
    recorder.flush()
    assert len(recorder._counts._plans) <= _PLANS_LIMIT
    stats = recorder.snapshot()
    assert Counter({(p.param, p.error_type, p.shape): p.count for p in stats.patterns}) == expected
    assert Counter({(a.unknown, a.missing): a.count for a in stats.aliases}) == pairs


@pytest.mark.parametrize("character", ["\x85", "\u2028", "\u2029"], ids=["NEL", "LS", "PS"])
def test_an_audit_line_stays_one_line_for_every_line_splitter(tmp_path: Path, character: str) -> None:
    recorder = OutcomeRecorder(tmp_path, sample_chars=10)
    failure = FieldFailure(f"a{character}b", "int_type", "string", f"x{character}y")
    recorder.record(f"tool{character}", "refused", 1.0, failures=(failure,), norms=(f"n{character}",))
    recorder.close()
    text = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    [line] = text.splitlines()
    entry = json.loads(line)
    assert entry["tool"] == f"tool{character}"
    assert entry["errors"][0]["sample"] == f"x{character}y"
    assert [item.tool for item in read_audit_log(tmp_path)] == [f"tool{character}"]


@pytest.mark.parametrize(
    ("duration_ms", "ts"),
    [(math.nan, NOON), (-5.0, NOON), (math.inf, NOON), (1.0, -1e300), (1.0, math.nan), (1.0, 1e20)],
    ids=["nan", "negative", "infinite", "before-year-1", "nan-time", "past-year-9999"],
)
def test_a_hostile_duration_or_time_never_stops_a_save(tmp_path: Path, duration_ms: float, ts: float) -> None:
    recorder = OutcomeRecorder(tmp_path)
    recorder.record_outcome(CallOutcome("search", "ok", duration_ms, ts=ts))
    recorder.record("search", "ok", 2.0)
    recorder.close()
    [tool] = load_outcomes(tmp_path).tools
    assert (tool.ok, tool.duration_ms) == (2, 2.0 if duration_ms != 1.0 else 3.0)
    assert [entry.duration_ms for entry in read_audit_log(tmp_path)] == [0.0 if duration_ms != 1.0 else 1.0, 2.0]


def test_an_unknown_status_is_refused_where_it_is_recorded() -> None:
    recorder = OutcomeRecorder()
    with pytest.raises(ValueError, match="status must be one of ok, refused, error, not 'bogus'"):
        recorder.record("search", "bogus", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not 'timeout'"):
        recorder.record_outcome(CallOutcome("search", "timeout", 1.0))  # type: ignore[arg-type]
    recorder.flush()
    assert recorder.snapshot().tools == []
