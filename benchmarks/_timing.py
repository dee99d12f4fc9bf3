"""Timing shared by the benchmark scripts: interleaved rounds, best round per case, in one run.

Interleaving means a slow moment on a shared machine hits every case alike; the best of many rounds
is the least disturbed estimate of each case's cost.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable, Mapping


def best_times(
    cases: Mapping[str, Callable[[], object]], *, number: int = 20_000, rounds: int = 15
) -> dict[str, float]:
    """Seconds per call for each case."""
    for function in cases.values():  # warm up, and fail before timing if a case is broken
        function()
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(rounds):
        for name, function in cases.items():
            best[name] = min(best[name], timeit.timeit(function, number=number) / number)
    return best


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def print_ratios(title: str, rows: list[tuple[str, str, str, float]], times: Mapping[str, float]) -> list[bool]:
    """Print ``case / baseline`` for each (label, case, baseline, target) row; return which met target."""
    print(f"\n{title}")
    print(f"{'measured':66} {'ratio':>7} {'target':>7}  case / baseline")
    met = []
    for label, case, baseline, target in rows:
        ratio = times[case] / times[baseline]
        met.append(ratio <= target)
        mark = "" if ratio <= target else "  (over target)"
        print(f"{label:66} {ratio:6.2f}x {target:6.2f}x  {_duration(times[case])} / {_duration(times[baseline])}{mark}")
    return met
