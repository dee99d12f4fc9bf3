"""Cost of the one "null" policy on the hot path, as ratios from one run.

    python benchmarks/bench_null_text.py

``Lenient[Optional[Annotated[int, Field(ge=1, le=500)]]]`` takes the string ``"null"`` as None
(`NullText`), natively: the text is a form of the marker's string branch, so a value that arrives
as a JSON integer never meets it and no Python runs. Issue 32 asks at most 1.6x a plain bounded
``int`` given 100. Each model has five such fields.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import Lenient

_BOUNDED = Annotated[int, Field(ge=1, le=500)]
_LENIENT: Any = Lenient  # subscripted at run time


def _five(annotation: Any, name: str) -> type[BaseModel]:
    fields = {f"f{i}": annotation for i in range(5)}
    return type(name, (BaseModel,), {"__annotations__": fields})


PlainBounded = _five(_BOUNDED, "PlainBounded")
PlainOptionalBounded = _five(Optional[_BOUNDED], "PlainOptionalBounded")
LenientOptionalBounded = _five(_LENIENT[Optional[_BOUNDED]], "LenientOptionalBounded")
LenientBounded = _five(_LENIENT[_BOUNDED], "LenientBounded")


def _call(model: type[BaseModel], value: Any) -> Any:
    data = {f"f{i}": value for i in range(5)}
    return lambda: model.model_validate(data)


def main() -> int:
    times = best_times(
        {
            "plain bounded, 100": _call(PlainBounded, 100),
            "plain bounded, '100'": _call(PlainBounded, "100"),
            "plain Optional bounded, 100": _call(PlainOptionalBounded, 100),
            "plain Optional bounded, None": _call(PlainOptionalBounded, None),
            "Lenient bounded, 100": _call(LenientBounded, 100),
            "Lenient Optional bounded, 100": _call(LenientOptionalBounded, 100),
            "Lenient Optional bounded, '100'": _call(LenientOptionalBounded, "100"),
            "Lenient Optional bounded, None": _call(LenientOptionalBounded, None),
            "Lenient Optional bounded, 'null'": _call(LenientOptionalBounded, "null"),
        }
    )
    met = print_ratios(
        "Lenient[Optional[Annotated[int, Field(ge=1, le=500)]]] (takes 'null'), five fields",
        [
            (
                "given 100, vs a plain bounded int (issue 32)",
                "Lenient Optional bounded, 100",
                "plain bounded, 100",
                1.6,
            ),
            (
                "given 100, vs a plain Optional bounded int",
                "Lenient Optional bounded, 100",
                "plain Optional bounded, 100",
                1.6,
            ),
            (
                "given 100, vs Lenient[bounded int] (the 'null' form's own cost)",
                "Lenient Optional bounded, 100",
                "Lenient bounded, 100",
                1.15,
            ),
        ],
        times,
    )
    print_ratios(
        "the other inputs, for reference",
        [
            (
                "given '100', vs a lax plain bounded int given '100'",
                "Lenient Optional bounded, '100'",
                "plain bounded, '100'",
                1.6,
            ),
            (
                "given 'null', vs a plain Optional bounded int given None",
                "Lenient Optional bounded, 'null'",
                "plain Optional bounded, None",
                3.0,
            ),
            (
                "given None, vs a plain Optional bounded int given None",
                "Lenient Optional bounded, None",
                "plain Optional bounded, None",
                1.15,
            ),
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
