"""Widening and repairing against schemas with thousands of patternProperties, as ratios of the 1 s
the issue allows for a schema of any size (widened or refused), from one run.

python benchmarks/bench_regex_budget.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient.repair import Repairer
from pydantic_lenient.schema.widen import widen_schema


def _schema(properties: int, patterns: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"prop{index}": {"type": "integer"} for index in range(properties)},
        "patternProperties": {f"^x{index}_[a-z]+$": {"type": "integer"} for index in range(patterns)},
    }


def main() -> None:
    cases: dict[str, Any] = {}
    for properties, patterns in ((200, 5_000), (3_000, 3_000)):
        name = f"{properties} x {patterns:,}"
        # Fresh dicts each time: no cache keyed by the schema object carries over between rounds.
        cases[f"widen {name}"] = lambda p=properties, q=patterns: widen_schema(_schema(p, q))
        cases[f"build a Repairer {name}"] = lambda p=properties, q=patterns: Repairer(_schema(p, q))
        call = {f"prop{index}": str(index) for index in range(properties)}
        repairer = Repairer(_schema(properties, patterns))
        cases[f"repair one call {name}"] = lambda r=repairer, c=call: r.repair(c)
    times = best_times(cases, number=1, rounds=3)
    times["1 s"] = 1.0
    rows = [(name, name, "1 s", 1.0) for name in cases]
    met = print_ratios("hostile patternProperties, against the 1 s allowed", rows, times)
    sys.exit(0 if all(met) else 1)


if __name__ == "__main__":
    main()
