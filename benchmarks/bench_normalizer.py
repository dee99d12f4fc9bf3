"""Cost of normalizing a call with the example's 14 rules against pydantic validating the same call.

Targets: at most 1.0x for a call needing no fix, 2.5x for the call needing five.

python benchmarks/bench_normalizer.py
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.normalizer.engine import Normalizer

RULES = Path(__file__).resolve().parent.parent / "examples" / "fs_rules.json"


class EditFile(BaseModel):
    path: str
    old_text: str
    new_text: str
    force: StrictBoolish = False
    dry_run: StrictBoolish = False
    whole_word: StrictBoolish = False
    case_sensitive: StrictBoolish = True
    occurrence: LenientUInt = 0
    encoding: str = "utf-8"
    backup: bool = False


# Ten arguments, as a host sends them: two wrong names and three string booleans (five fixes).
CALL = {
    "path": "src/app.py",
    "old_str": "return 1",
    "new_str": "return 2",
    "force": "true",
    "dry_run": "false",
    "whole_word": "TRUE",
    "case_sensitive": True,
    "occurrence": 1,
    "encoding": "utf-8",
    "backup": False,
}


# The most common mangling, Claude Desktop's names for edit_file's text (two fixes).
TYPICAL = {**CALL, "force": True, "dry_run": False, "whole_word": True}
# A call that needs nothing.
CLEAN = {
    ("old_text" if key == "old_str" else "new_text" if key == "new_str" else key): value
    for key, value in TYPICAL.items()
}


# Normalizing costs microseconds and a tool call costs seconds: the targets only keep it that way.
TARGETS = {"clean": 1.0, "typical": 2.5, "five fixes": 2.5}


def main() -> int:
    normalizer = Normalizer.from_file(RULES)
    calls = {"clean": CLEAN, "typical": TYPICAL, "five fixes": CALL}
    cases: dict[str, Callable[[], object]] = {}
    for name, call in calls.items():
        normalized = normalizer.apply("edit_file", call).arguments
        EditFile.model_validate(normalized)  # the normalized call is valid
        cases[f"normalize, {name}"] = functools.partial(normalizer.apply, "edit_file", call)
        cases[f"validate, {name}"] = functools.partial(EditFile.model_validate, normalized)
    times = best_times(cases)
    met = print_ratios(
        "a 10-argument edit_file call, the 14 example rules, stats counted",
        [
            (f"Normalizer.apply, {name} call, vs validating it", f"normalize, {name}", f"validate, {name}", target)
            for name, target in TARGETS.items()
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
