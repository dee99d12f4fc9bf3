"""What the lenient scalars' exact-type dispatch costs, against the native alternative it replaced.

    python benchmarks/bench_dispatch.py

Five-field typed dicts validated by pydantic-core directly, given the int 100:

* plain ``int``;
* ``LenientInt`` as shipped: a tagged union on ``type(value)`` (a callable discriminator), which no
  ``strict=`` passed at validation time can loosen;
* a native router: ``lax_or_strict`` sending the default and ``strict=True`` to a left-to-right
  union of strict schemas, and ``strict=False`` to the tagged union. Faster, but wrong: inside a
  user's smart union an explicit ``strict=False`` runs the strict branch in lax mode, where ``True``
  passes as 1 (`tests/types_/test_scalar.py` pins that pydantic-core behaviour).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import CoreSchema, SchemaValidator, core_schema

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times

from pydantic_lenient import LenientInt

SHIPPED = TypeAdapter(LenientInt).core_schema
_DIGITS = core_schema.chain_schema(
    [
        core_schema.str_schema(strict=True, pattern="^-?[0-9]+$", max_length=4300),
        core_schema.lax_or_strict_schema(
            lax_schema=core_schema.int_schema(strict=False),
            strict_schema=core_schema.no_info_plain_validator_function(int),
            strict=False,
        ),
    ]
)
_NATIVE_UNION = core_schema.union_schema(
    [core_schema.int_schema(strict=True), _DIGITS],
    mode="left_to_right",
    custom_error_type="lenient_int",
    custom_error_message="Input should be an integer, or a string of ASCII digits with an optional leading '-'",
)
ROUTED = core_schema.lax_or_strict_schema(lax_schema=SHIPPED, strict_schema=_NATIVE_UNION, strict=True)


def _five(schema: CoreSchema) -> SchemaValidator:
    fields = {f"f{i}": core_schema.typed_dict_field(schema) for i in range(5)}
    return SchemaValidator(core_schema.typed_dict_schema(fields))


def main() -> int:
    data: dict[str, Any] = {f"f{i}": 100 for i in range(5)}
    plain, shipped, routed = _five(core_schema.int_schema()), _five(SHIPPED), _five(ROUTED)
    times = best_times(
        {
            "plain": lambda: plain.validate_python(data),
            "shipped": lambda: shipped.validate_python(data),
            "routed": lambda: routed.validate_python(data),
            "shipped, strict=True": lambda: shipped.validate_python(data, strict=True),
            "routed, strict=True": lambda: routed.validate_python(data, strict=True),
        }
    )
    print("five int fields given 100 (pydantic-core alone, so no model overhead in the baseline)")
    for label, case in (
        ("LenientInt as shipped (exact-type tagged union)", "shipped"),
        ("native router (wrong under strict=False in a union)", "routed"),
        ("LenientInt as shipped, strict=True", "shipped, strict=True"),
        ("native router, strict=True", "routed, strict=True"),
    ):
        print(f"{label:56} {times[case] / times['plain']:5.2f}x plain int")
    per_field = (times["shipped"] - times["routed"]) / 5
    print(f"\nthe exact-type dispatch costs {per_field * 1e9:.0f} ns per field more than the native router")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
