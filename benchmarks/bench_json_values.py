"""Validation cost of LenientJson against plain pydantic fields, as ratios from one run.

python benchmarks/bench_json_values.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Union

from pydantic import BaseModel, Json

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import LenientJson


class Plain(BaseModel):
    urls: list[str]


class Lenient(BaseModel):
    urls: LenientJson[list[str]]


class HandWritten(BaseModel):
    urls: Union[list[str], Json[list[str]]]


def main() -> int:
    urls = [f"https://example.com/page/{index}" for index in range(5)]
    as_list, as_text = {"urls": urls}, {"urls": json.dumps(urls)}
    times = best_times(
        {
            "plain, list": lambda: Plain.model_validate(as_list),
            "lenient, list": lambda: Lenient.model_validate(as_list),
            "lenient, text": lambda: Lenient.model_validate(as_text),
            "hand-written, list": lambda: HandWritten.model_validate(as_list),
            "hand-written, text": lambda: HandWritten.model_validate(as_text),
        }
    )
    met = print_ratios(
        "a list[str] field of five URLs",
        [
            ("LenientJson[list[str]] given a list, vs list[str]", "lenient, list", "plain, list", 1.15),
            (
                "LenientJson[list[str]] given JSON text, vs list[str] given a list",
                "lenient, text",
                "plain, list",
                2.0,
            ),
        ],
        times,
    )
    print_ratios(
        "pydantic's list[str] | Json[list[str]], spelled out by hand, for comparison",
        [
            ("hand-written union given a list, vs list[str]", "hand-written, list", "plain, list", 1.15),
            (
                "hand-written union given JSON text, vs list[str] given a list",
                "hand-written, text",
                "plain, list",
                2.0,
            ),
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
