"""Replay calls to the example mail tools as LLMs send them.

Run from the repository root: ``python examples/replay.py``. Exits 1 if any call is not handled
as expected (taken when it should be, refused with one clear error when it should not).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mail_tools import MANGLED_CALLS, TOOLS

from pydantic_lenient.schema import tool_specs


def main() -> int:
    models = {spec.name: spec.input_model for spec in tool_specs(TOOLS)}
    failures = 0
    for tool, arguments, should_pass in MANGLED_CALLS:
        try:
            result = models[tool].model_validate(arguments)
        except ValidationError as error:
            (first, *rest) = error.errors(include_url=False)
            outcome = f"refused: {'.'.join(map(str, first['loc']))}: {first['msg']} [{first['type']}]"
            ok = not should_pass and not rest
        else:
            outcome = f"taken: {result.model_dump(exclude_defaults=True)}"
            ok = should_pass
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {tool}({json.dumps(arguments)}) -> {outcome}")
    print(f"\n{len(MANGLED_CALLS) - failures} as expected, {failures} not")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
