"""`Repairer` counts regex work in its budgets: compiling ``patternProperties``, matching keys
against them, and measuring what the validator would do with every key against every pattern. A
schema of any size is repaired or refused after a bounded amount of work (benchmarks time it)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("jsonschema_rs")

from pydantic_lenient.repair import Repairer, reader
from pydantic_lenient.repair.budget import MAX_WORK
from tests.guards import within_guard


def _schema(properties: int, patterns: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"prop{index}": {"type": "integer"} for index in range(properties)},
        "patternProperties": {f"^x{index}_[a-z]+$": {"type": "integer"} for index in range(patterns)},
    }


@pytest.fixture
def matched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many patterns each key was matched against, key by key."""
    sizes: list[int] = []
    original = reader._PatternSet.matching

    def matching(self: Any, key: str) -> list[str] | None:
        sizes.append(len(self.patterns))
        return original(self, key)

    monkeypatch.setattr(reader._PatternSet, "matching", matching)
    return sizes


@pytest.mark.parametrize(("properties", "patterns"), [(200, 5_000), (3_000, 3_000)])
def test_many_patterns_against_many_keys_are_refused(matched: list[int], properties: int, patterns: int) -> None:
    repairer = within_guard(lambda: Repairer(_schema(properties, patterns)))
    assert repairer.schema_error is None
    call = {f"prop{index}": str(index) for index in range(properties)}
    result = within_guard(lambda: repairer.repair(call))
    assert result.valid is False
    assert "would take more than" in result.reasons[0]["message"]
    # The key-against-pattern matches the repair made fit in its budget.
    assert sum(1 + size // 16 for size in matched) <= repairer.budget


def test_key_times_pattern_work_counts_against_the_validators_work() -> None:
    patterns = 2_000
    schema = {
        "type": "object",
        "patternProperties": {f"^k{index}_[0-9]+$": {"type": "integer"} for index in range(patterns)},
    }
    repairer = Repairer(schema)
    within = {f"k{index}_{index}": index for index in range(2 * MAX_WORK // patterns)}
    beyond = {**within, "k0_extra": 0}
    assert repairer.repair(within).valid
    refused = repairer.repair(beyond)
    assert refused.valid is False
    assert refused.reasons[0]["message"] == f"checking the arguments would take more than {MAX_WORK:,} subschema checks"


def test_a_moderate_pattern_set_still_repairs() -> None:
    result = Repairer(_schema(200, 50)).repair({f"prop{index}": str(index) for index in range(200)})
    assert result.valid
    assert len(result.repairs) == 200
