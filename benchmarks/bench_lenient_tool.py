"""What `lenient_tool`'s own validation costs a call, against pydantic's ``validate_call``.

    python benchmarks/bench_lenient_tool.py

A four-parameter tool (``str``, ``int``, ``bool``, ``list[int]``) called directly with native values
and with the string forms models send. The baseline is pydantic's ``validate_call`` over the same
lenient annotations (what a user would write by hand to get converted values); the plain function's
time is printed for scale. Target: the wrapper within 3x ``validate_call``: it matches the arguments to
the parameters in Python (``validate_call`` does it in pydantic-core), then validates the model's
parameters in one pydantic-core call.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import validate_call

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import Lenient, lenient_tool


def search(folder: str, limit: int, dry_run: bool, uids: list[int]) -> int:
    return limit


def search_by_hand(folder: str, limit: Lenient[int], dry_run: Lenient[bool], uids: Lenient[list[int]]) -> int:
    return limit


def main() -> int:
    wrapped = lenient_tool(search)
    by_hand = validate_call(search_by_hand)
    native = ("Dev", 100, False, [1, 2])
    strings: tuple[Any, ...] = ("Dev", "100", "false", '["1", 2]')  # what models send
    times = best_times(
        {
            "plain": lambda: search(*native),
            "lenient_tool, native": lambda: wrapped(*native),
            "validate_call, native": lambda: by_hand(*native),
            "lenient_tool, strings": lambda: wrapped(*strings),
            "validate_call, strings": lambda: by_hand(*strings),
        },
        number=5_000,
    )
    met = print_ratios(
        "a four-parameter tool called directly",
        [
            ("lenient_tool, native values / validate_call", "lenient_tool, native", "validate_call, native", 3.0),
            ("lenient_tool, string forms / validate_call", "lenient_tool, strings", "validate_call, strings", 3.0),
        ],
        times,
    )
    print(f"(the plain function, for scale: {times['plain'] * 1e9:.0f} ns a call)")
    return 0 if all(met) else 1


if __name__ == "__main__":
    raise SystemExit(main())
