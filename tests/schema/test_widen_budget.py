"""`widen_schema` counts regex work in its budget: translating, compiling and matching patterns are
spent like schema nodes, so a schema of any size is widened or refused (returned as it was) after a
bounded amount of work. The time this takes is measured by benchmarks, never here."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_lenient.schema import ecma_regex, widen
from pydantic_lenient.schema.widen import widen_schema

pytest.importorskip("jsonschema_rs")


class _Counted:
    """A compiled pattern check that counts the keys it is asked about."""

    def __init__(self, check: Any, counts: dict[str, int]) -> None:
        self.check, self.counts = check, counts

    def is_valid(self, key: str) -> bool:
        self.counts["matches"] += 1
        return bool(self.check.is_valid(key))

    def iter_errors(self, key: str) -> Any:
        return self.check.iter_errors(key)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counted = {"matches": 0, "matcher_calls": 0, "compilations": 0}
    original = ecma_regex.matcher
    seen: set[str] = set()

    def matcher(pattern: str) -> Any:
        counted["matcher_calls"] += 1  # `translate` asks once per pattern too
        seen.add(pattern)
        counted["compilations"] = len(seen)
        check = original(pattern)
        return None if check is None else _Counted(check, counted)

    monkeypatch.setattr(ecma_regex, "matcher", matcher)
    return counted


def _schema(properties: int, patterns: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"prop{index}": {"type": "integer"} for index in range(properties)},
        "patternProperties": {f"^x{index}_[a-z]+$": {"type": "integer"} for index in range(patterns)},
    }


@pytest.mark.parametrize(("properties", "patterns"), [(200, 5_000), (3_000, 3_000)])
def test_many_patterns_are_refused_within_the_budget(counts: dict[str, int], properties: int, patterns: int) -> None:
    schema = _schema(properties, patterns)
    assert widen_schema(schema) is schema  # too much work: returned as it was, for repair to refuse
    assert counts["compilations"] <= widen._BUDGET // widen._COMPILE_COST
    assert counts["matches"] <= widen._BUDGET // widen._MATCH_COST
    assert counts["matches"] < properties * patterns // 10  # far from every key against every pattern


def test_each_pattern_is_compiled_once_per_widening(counts: dict[str, int]) -> None:
    schema = _schema(50, 20)
    widened = widen_schema(schema)
    assert widened is not schema
    assert counts["compilations"] == 20
    assert counts["matcher_calls"] <= 2 * 20  # not once per key: 50 keys x 20 patterns
    assert counts["matches"] == 50 * 20


def test_patterns_still_decide_what_a_member_takes() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "integer"}, "count": {"type": "integer"}},
        "patternProperties": {"^na": {"type": "string"}},
    }
    widened = widen_schema(schema, "any-of")
    assert widened["properties"]["name"] == {"type": "integer"}  # takes strings through the pattern
    assert widened["properties"]["count"] != {"type": "integer"}  # widened with its string form
