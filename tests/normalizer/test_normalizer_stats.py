"""Stats files: saved atomically, validated in full when read, and a failing autosave never stops counting."""

from __future__ import annotations

import datetime
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pydantic_lenient._files import write_json_atomically
from pydantic_lenient.normalizer.engine import Normalizer
from pydantic_lenient.normalizer.stats import StatsFileError, described, load_stats

ALIAS = {"id": "r", "tools": ["t"], "type": "param_alias", "from": "old_str", "to": "old_text"}
VALID: dict[str, Any] = {
    "total_processed": 2,
    "total_normalized": 1,
    "last_updated": "2026-01-01T00:00:00.000Z",
    "by_tool": {"t": {"processed": 2, "normalized": 1}},
    "by_rule": {"r": {"rule_id": "r", "type": "param_alias", "hits": 1, "tools": ["t"]}},
    "recent_normalizations": [
        {
            "ts": "2026-01-01T00:00:00.000Z",
            "tool": "t",
            "applied": [{"rule_id": "r", "type": "param_alias", "param": "a", "from": "a", "to": "b"}],
        }
    ],
}


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _with(path: str, value: Any) -> str:
    """VALID with the value at a dotted path replaced (or removed, for ...)."""
    document = json.loads(json.dumps(VALID))
    *parents, last = path.split(".")
    node = document
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is ...:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return json.dumps(document)


# Each file is not a stats file, and says what is wrong with it.
CORRUPT = [
    ("[]", "the document: Input should be a valid dictionary"),
    ("null", "the document: Input should be a valid dictionary"),
    ('"stats"', "the document"),
    ("{}", "total_processed: Field required"),
    ('{"a": 1}', "not a normalizer stats file"),
    (_deep(100_000), "nested too deeply"),
    ('{"total_processed": ' + _deep(100_000) + "}", "nested too deeply"),
    (_with("total_processed", "2"), "total_processed: Input should be a valid integer"),
    (_with("total_processed", -1), "total_processed: Input should be greater than or equal to 0"),
    (_with("total_processed", True), "total_processed: Input should be a valid integer"),
    (_with("total_processed", 2.0), "total_processed: Input should be a valid integer"),
    (_with("total_processed", 0), "total_normalized is larger than total_processed"),
    (_with("by_tool", []), "by_tool: Input should be a valid dictionary"),
    (_with("by_tool.t", 5), "by_tool.t: Input should be a valid dictionary"),
    (_with("by_tool.t.processed", None), "by_tool.t.processed"),
    (_with("by_tool.t.normalized", 3), "by_tool.t: normalized is larger than processed"),
    (_with("by_tool.t.extra", 3), "by_tool.t.extra: Extra inputs are not permitted"),
    (_with("by_rule.r.tools", "t"), "by_rule.r.tools: Input should be a valid list"),
    (_with("by_rule.r.rule_id", "s"), "by_rule.r: rule_id is 's'"),
    (_with("by_rule.r.hits", ...), "by_rule.r.hits: Field required"),
    (_with("recent_normalizations", {}), "recent_normalizations: Input should be a valid list"),
    (_with("recent_normalizations.0", None), "recent_normalizations.0"),
    (_with("recent_normalizations.0.applied", [1]), "recent_normalizations.0.applied.0"),
    (_with("recent_normalizations.0.applied.0.rule_id", ...), "applied.0.rule_id: Field required"),
    (_with("last_updated", 5), "last_updated: Input should be a valid string"),
    (_with("extra", 1), "extra: Extra inputs are not permitted"),
    ('{"total_processed": 1' + "0" * 5000 + "}", "not valid JSON"),
    ("{", "not valid JSON"),
]
BAD_BYTES = [(b"\xff\xfe{}", "not UTF-8 text"), (json.dumps(VALID).encode("utf-16"), "not UTF-8 text")]


@pytest.mark.parametrize(("content", "message"), CORRUPT, ids=lambda value: f"{value!r:.40}")
def test_a_corrupt_stats_file_fails_at_load_naming_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "stats.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StatsFileError) as raised:
        Normalizer([ALIAS], stats_file=path)
    assert str(path) in str(raised.value)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("content", "message"), BAD_BYTES)
def test_a_stats_file_that_is_not_utf8_fails_at_load(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "stats.json"
    path.write_bytes(content)
    with pytest.raises(StatsFileError, match=message):
        load_stats(path)


def test_a_valid_file_loads_and_counting_goes_on_from_it(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(VALID))
    normalizer = Normalizer([ALIAS], stats_file=path)
    normalizer.apply("t", {"old_str": "a"})
    stats = normalizer.stats()
    assert (stats["total_processed"], stats["total_normalized"]) == (3, 2)
    assert stats["by_tool"]["t"] == {"processed": 3, "normalized": 2}
    assert stats["by_rule"]["r"]["hits"] == 2
    assert [entry["tool"] for entry in stats["recent_normalizations"]] == ["t", "t"]
    stats["by_rule"]["r"]["tools"].append("changed")  # a snapshot is the caller's to change
    assert normalizer.stats()["by_rule"]["r"]["tools"] == ["t"]


def test_saved_stats_load_back_even_with_awkward_values(tmp_path: Path) -> None:
    normalizer = Normalizer([ALIAS], on_conflict="keep_target")
    normalizer.apply("t", {"old_str": "\ud800 lone", "old_text": "kept"})
    normalizer.apply("t", {"old_str": ["\u00e9", {"deep": [1.5, None, True]}]})
    path = normalizer.save(tmp_path / "stats.json")
    assert load_stats(path) == json.loads(json.dumps(normalizer.stats()))
    assert load_stats(path)["recent_normalizations"][0]["applied"][0]["dropped"] == "string of 6 characters"
    assert sorted(item.name for item in tmp_path.iterdir()) == [".stats.json.lock", "stats.json"]  # no temp file


@pytest.mark.parametrize(
    "dropped",
    [float("nan"), float("inf"), b"bytes", datetime.date(2026, 1, 1), {1: "int key"}, [object()]],
    ids=["nan", "infinity", "bytes", "date", "int-key", "object-in-list"],
)
def test_a_dropped_value_json_cannot_hold_never_stops_a_save(tmp_path: Path, dropped: Any) -> None:
    # A Python caller (or a JSON parser that reads NaN) can send anything; the save must still work.
    normalizer = Normalizer([ALIAS], on_conflict="keep_target")
    result = normalizer.apply("t", {"old_str": dropped, "old_text": "kept"})
    assert result.applied[0]["dropped"] is dropped  # the caller still sees the value itself
    saved = load_stats(normalizer.save(tmp_path / "stats.json"))
    entry = saved["recent_normalizations"][0]["applied"][0]
    assert entry["dropped"] == described(dropped)  # its shape and size, never the value
    assert entry["note"] == "conflict: kept old_text, dropped old_str"
    assert saved["total_normalized"] == 1


@given(secret=st.text(min_size=8).map(lambda text: f"SECRET-{text}"))
@settings(max_examples=50, deadline=None)
def test_no_value_a_client_sent_reaches_the_stats(secret: str) -> None:
    coerce = {"id": "c", "tools": ["t"], "type": "type_coerce", "from": "n", "coerce_to": "int"}
    normalizer = Normalizer([ALIAS, coerce], on_conflict="keep_target")
    normalizer.apply("t", {"old_str": secret, "old_text": "kept", "n": "12345678"})
    normalizer.apply("t", {"old_str": {"nested": [secret]}, "old_text": secret})
    text = json.dumps(normalizer.stats(), ensure_ascii=False)
    assert "SECRET-" not in text
    assert "12345678" not in text


def test_write_json_atomically_leaves_the_old_file_when_it_fails(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    write_json_atomically(path, {"a": 1})
    with pytest.raises(ValueError):
        write_json_atomically(path, {"a": float("nan")})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [item.name for item in tmp_path.iterdir()] == ["doc.json"]


def test_a_failing_autosave_is_logged_retried_and_never_stops_counting(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    path = blocker / "stats.json"  # cannot be written while `blocker` is a file
    normalizer = Normalizer([ALIAS])
    with caplog.at_level(logging.WARNING, logger="pydantic_lenient.normalizer"):
        normalizer.autosave(0.01, path)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(caplog.records) < 2:
            normalizer.apply("t", {"old_str": "a"})
            time.sleep(0.005)
        assert len(caplog.records) >= 2  # it failed, and tried again
        assert "could not save normalizer stats" in caplog.records[0].getMessage()
        blocker.unlink()
        blocker.mkdir()
        normalizer.apply("t", {"old_str": "a"})
        while time.monotonic() < deadline and not path.exists():
            time.sleep(0.005)
    normalizer.close()
    assert load_stats(path)["total_processed"] == normalizer.stats()["total_processed"] > 2
