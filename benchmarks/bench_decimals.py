"""Validation cost of LenientDecimal against a plain pydantic ``Decimal``, as ratios from one run.

    python benchmarks/bench_decimals.py

Each model has five fields. A plain ``Decimal`` already reads a number string (loosely: it also
takes whitespace, '+', '_' and non-ASCII digits, which its schema does not say); LenientDecimal
reads exactly the JSON number grammar it advertises. Both are given the same value.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import LenientDecimal


def _five(annotation: Any, name: str) -> type[BaseModel]:
    fields = {f"f{i}": annotation for i in range(5)}
    return type(name, (BaseModel,), {"__annotations__": fields})


PlainDecimals = _five(Decimal, "PlainDecimals")
LenientDecimals = _five(LenientDecimal, "LenientDecimals")


def _all(value: Any) -> dict[str, Any]:
    return {f"f{i}": value for i in range(5)}


def main() -> int:
    text, number, integer, native = _all("100.5"), _all(100.5), _all(100), _all(Decimal("100.5"))
    as_json = '{"f0": "100.5", "f1": "100.5", "f2": "100.5", "f3": "100.5", "f4": "100.5"}'
    cases = {
        "plain, '100.5'": lambda: PlainDecimals.model_validate(text),
        "lenient, '100.5'": lambda: LenientDecimals.model_validate(text),
        "plain, 100.5": lambda: PlainDecimals.model_validate(number),
        "lenient, 100.5": lambda: LenientDecimals.model_validate(number),
        "plain, 100": lambda: PlainDecimals.model_validate(integer),
        "lenient, 100": lambda: LenientDecimals.model_validate(integer),
        "plain, Decimal": lambda: PlainDecimals.model_validate(native),
        "lenient, Decimal": lambda: LenientDecimals.model_validate(native),
        "plain, JSON '100.5'": lambda: PlainDecimals.model_validate_json(as_json),
        "lenient, JSON '100.5'": lambda: LenientDecimals.model_validate_json(as_json),
    }
    times = best_times(cases)
    met = print_ratios(
        "LenientDecimal vs a plain Decimal, five fields, given the same value",
        [
            ("given '100.5'", "lenient, '100.5'", "plain, '100.5'", 1.6),
            ("given 100.5 (a JSON number)", "lenient, 100.5", "plain, 100.5", 1.6),
            ("given 100", "lenient, 100", "plain, 100", 1.6),
            ("given Decimal('100.5') (from Python)", "lenient, Decimal", "plain, Decimal", 1.6),
            ("given '100.5' in JSON", "lenient, JSON '100.5'", "plain, JSON '100.5'", 1.6),
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
