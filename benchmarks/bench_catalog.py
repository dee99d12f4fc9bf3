"""Cost of a 1,000-tool catalog, and of its audit, against pydantic's own model_json_schema() for the
same models. The audit reads that schema once per tool (for bounds it hides from hosts), so it costs
at least as much.

python benchmarks/bench_catalog.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field, create_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import print_ratios

from pydantic_lenient import LenientJson, LenientU32, LenientUInt, StrictBoolish
from pydantic_lenient.schema.audit import audit
from pydantic_lenient.schema.catalog import tool_catalog


class Step(BaseModel):
    action: str
    count: LenientUInt = 1


def generated_tools(count: int) -> list[tuple[str, type[BaseModel]]]:
    """Tool inputs of five to eight fields mixing plain, lenient, Optional, nested and JSON-text fields."""
    shapes: list[tuple[str, Any]] = [
        ("folder", (str, ...)),
        ("limit", (Optional[Annotated[LenientUInt, Field(le=500)]], None)),
        ("offset", (LenientUInt, 0)),
        ("uid", (LenientU32, 0)),
        ("dry_run", (StrictBoolish, True)),
        ("steps", (Optional[LenientJson[list[Step]]], None)),
        ("note", (Optional[str], None)),
        ("tags", (list[str], [])),
    ]
    tools = []
    for index in range(count):
        fields = dict(shapes[: 5 + index % 4])
        tools.append((f"tool_{index}", create_model(f"Tool{index}", **fields)))
    return tools


def main() -> int:
    tools = generated_tools(1000)
    models = [model for _, model in tools]
    best = {"catalog": float("inf"), "audit": float("inf"), "pydantic": float("inf")}
    for _ in range(5):  # interleaved rounds, best of each
        start = time.perf_counter()
        tool_catalog(tools)
        best["catalog"] = min(best["catalog"], time.perf_counter() - start)
        start = time.perf_counter()
        audit(tools)
        best["audit"] = min(best["audit"], time.perf_counter() - start)
        start = time.perf_counter()
        for model in models:
            model.model_json_schema()
        best["pydantic"] = min(best["pydantic"], time.perf_counter() - start)
    met = print_ratios(
        "1,000 generated tools",
        [
            ("tool_catalog(tools), vs model_json_schema() per model", "catalog", "pydantic", 1.5),
            ("audit(tools), vs model_json_schema() per model", "audit", "pydantic", 1.6),
        ],
        best,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
