"""Validation cost of the lenient scalars against plain pydantic fields, as ratios from one run.

    python benchmarks/bench_scalars.py

Each model has five fields. "all-lenient" models make every field lenient (the worst case);
"search tool" is the realistic shape (two str fields, two integers, one flag).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel, BeforeValidator, Field, Strict, WithJsonSchema

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient import Lenient, LenientInt, LenientUInt, StrictBoolish, lenient_annotation, lenient_model
from pydantic_lenient.codemod.fix import fix_file


# The naive way: a Python callback before a strict field, and a hand-written schema.
def _digits_to_int(value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch("-?[0-9]+", value):
        return int(value)
    return value


def _true_false_to_bool(value: Any) -> Any:
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


NaiveInt = Annotated[
    int,
    BeforeValidator(_digits_to_int),
    Strict(),
    WithJsonSchema({"type": ["integer", "string"], "pattern": "^-?[0-9]+$"}),
]
NaiveBool = Annotated[
    bool,
    BeforeValidator(_true_false_to_bool),
    Strict(),
    WithJsonSchema({"type": ["boolean", "string"], "pattern": "^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"}),
]


def _five(annotation: Any, name: str) -> type[BaseModel]:
    fields = {f"f{i}": annotation for i in range(5)}
    return type(name, (BaseModel,), {"__annotations__": fields})


PlainInts, LenientInts, NaiveInts = (
    _five(int, "PlainInts"),
    _five(LenientInt, "LenientInts"),
    _five(NaiveInt, "NaiveInts"),
)
PlainBools, LenientBools, NaiveBools = (
    _five(bool, "PlainBools"),
    _five(StrictBoolish, "LenientBools"),
    _five(NaiveBool, "NaiveBools"),
)


# The same bounded field written by hand, and made lenient by the mapping (as Lenient[...],
# lenient_tool and the codemod do).
_BOUNDS = Field(ge=1, le=500)
HandBounded = _five(Annotated[LenientInt, _BOUNDS], "HandBounded")
PlainBounded = _five(Annotated[int, _BOUNDS], "PlainBounded")
MappedBounded = _five(lenient_annotation(Annotated[int, _BOUNDS]), "MappedBounded")


def _five_with_default(annotation: Any, name: str) -> type[BaseModel]:
    """Five fields written ``f0: annotation = Field(100, ge=1, le=500)``: pydantic applies the
    default's bounds before the annotation's marker, which takes them in."""
    fields = {f"f{i}": annotation for i in range(5)}
    defaults = {f"f{i}": Field(100, ge=1, le=500) for i in range(5)}
    return type(name, (BaseModel,), {"__annotations__": fields, **defaults})


DefaultBounded = _five_with_default(LenientInt, "DefaultBounded")
PlainDefaultBounded = _five_with_default(int, "PlainDefaultBounded")


class PlainSearch(BaseModel):
    folder: str
    to: str
    limit: int
    offset: int
    dry_run: bool


class LenientSearch(BaseModel):
    folder: str
    to: str
    limit: LenientUInt
    offset: LenientUInt
    dry_run: StrictBoolish


MappedSearch = lenient_model(PlainSearch)
# Optional: the mapping also takes the string "null" (one Python check per field), the
# hand-written Optional[LenientInt] does not.
HandOptional = _five(Optional[LenientInt], "HandOptional")
MappedOptional = _five(lenient_annotation(Optional[int]), "MappedOptional")


# The commonest real shape, bounds in the default, as written and as `fix` rewrites it (the
# codemod itself writes it here), and as `fix` wrote it before it moved the bounds.
_OPTIONAL_BOUNDED = (
    "from pydantic import BaseModel, Field\n\n\nclass Bounded(BaseModel):\n"
    + "".join(f"    f{i}: int | None = Field(default=None, ge=1, le=500)\n" for i in range(5))
    + '\n\nTOOLS = [("bounded", Bounded)]\n'
)


def _import(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _written_and_fixed(source: str) -> tuple[type[BaseModel], type[BaseModel], str]:
    """The model ``Bounded`` of ``source``, before and after `fix`, and the line `fix` wrote."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench_bounded.py"
        path.write_text(source, encoding="utf-8")
        written = _import(path, "bench_bounded_written").Bounded
        fix_file(path)
        fixed = _import(path, "bench_bounded_fixed").Bounded
        line = next(line for line in path.read_text(encoding="utf-8").splitlines() if "f0:" in line)
    return written, fixed, line.strip()


PlainOptionalBounded, FixedOptionalBounded, FIXED_LINE = _written_and_fixed(_OPTIONAL_BOUNDED)
_LENIENT: Any = Lenient  # subscripted at run time
_OLD_FIX = _LENIENT[Optional[int]]
OldFixOptionalBounded = type(
    "OldFixOptionalBounded",
    (BaseModel,),
    {
        "__annotations__": dict.fromkeys((f"f{i}" for i in range(5)), _OLD_FIX),
        **{f"f{i}": Field(default=None, ge=1, le=500) for i in range(5)},
    },
)


def _call(model: type[BaseModel], value: Any, *, strict: bool | None = None) -> Any:
    data = {f"f{i}": value for i in range(5)}
    return lambda: model.model_validate(data, strict=strict)


def main() -> int:
    search_native = {"folder": "Dev", "to": "a@b.c", "limit": 100, "offset": 20, "dry_run": True}
    search_strings = {"folder": "Dev", "to": "a@b.c", "limit": "100", "offset": "20", "dry_run": "true"}
    cases = {
        "plain int, 100": _call(PlainInts, 100),
        "lenient, 100": _call(LenientInts, 100),
        "naive, 100": _call(NaiveInts, 100),
        "plain int, '100'": _call(PlainInts, "100"),
        "lenient, '100'": _call(LenientInts, "100"),
        "naive, '100'": _call(NaiveInts, "100"),
        "plain bool, true": _call(PlainBools, True),
        "lenient bool, true": _call(LenientBools, True),
        "naive bool, true": _call(NaiveBools, True),
        "plain bool, 'true'": _call(PlainBools, "true"),
        "lenient bool, 'true'": _call(LenientBools, "true"),
        "naive bool, 'true'": _call(NaiveBools, "true"),
        "plain search, native": lambda: PlainSearch.model_validate(search_native),
        "lenient search, native": lambda: LenientSearch.model_validate(search_native),
        "plain search, strings": lambda: PlainSearch.model_validate(search_strings),
        "lenient search, strings": lambda: LenientSearch.model_validate(search_strings),
        "hand-written bounded, '100'": _call(HandBounded, "100"),
        "mapped bounded, '100'": _call(MappedBounded, "100"),
        "hand-written bounded, 100": _call(HandBounded, 100),
        "mapped bounded, 100": _call(MappedBounded, 100),
        "plain bounded, 100": _call(PlainBounded, 100),
        "default-bounded, 100": _call(DefaultBounded, 100),
        "plain default-bounded, 100": _call(PlainDefaultBounded, 100),
        "mapped search, strings": lambda: MappedSearch.model_validate(search_strings),
        "hand-written Optional, '100'": _call(HandOptional, "100"),
        "mapped Optional, '100'": _call(MappedOptional, "100"),
        "hand-written Optional, 100": _call(HandOptional, 100),
        "mapped Optional, 100": _call(MappedOptional, 100),
        "plain Optional bounded, 100": _call(PlainOptionalBounded, 100),
        "fixed Optional bounded, 100": _call(FixedOptionalBounded, 100),
        "old fix Optional bounded, 100": _call(OldFixOptionalBounded, 100),
        # An explicit strict=True, as FastMCP's strict_input_validation passes it.
        "lenient, 100, strict=True": _call(LenientInts, 100, strict=True),
        "lenient, '100', strict=True": _call(LenientInts, "100", strict=True),
        "lenient bool, true, strict=True": _call(LenientBools, True, strict=True),
        "lenient bool, 'true', strict=True": _call(LenientBools, "true", strict=True),
    }
    times = best_times(cases)
    met = print_ratios(
        "five-field models, all fields lenient",
        [
            ("LenientInt given 100, vs int", "lenient, 100", "plain int, 100", 1.15),
            ("LenientInt given '100', vs lax int given '100'", "lenient, '100'", "plain int, '100'", 1.6),
            ("StrictBoolish given true, vs bool", "lenient bool, true", "plain bool, true", 1.15),
            (
                "StrictBoolish given 'true', vs lax bool given 'true'",
                "lenient bool, 'true'",
                "plain bool, 'true'",
                1.6,
            ),
        ],
        times,
    )
    print_ratios(
        "the same fields built the naive way (BeforeValidator + WithJsonSchema), for comparison",
        [
            ("naive int given 100, vs int", "naive, 100", "plain int, 100", 1.15),
            ("naive int given '100', vs lax int given '100'", "naive, '100'", "plain int, '100'", 1.6),
            ("naive bool given true, vs bool", "naive bool, true", "plain bool, true", 1.15),
            (
                "naive bool given 'true', vs lax bool given 'true'",
                "naive bool, 'true'",
                "plain bool, 'true'",
                1.6,
            ),
        ],
        times,
    )
    print_ratios(
        "realistic search tool (folder, to, limit, offset, dry_run)",
        [
            (
                "lenient tool given native values, vs plain",
                "lenient search, native",
                "plain search, native",
                1.15,
            ),
            (
                "lenient tool given strings, vs lax plain",
                "lenient search, strings",
                "plain search, strings",
                1.6,
            ),
        ],
        times,
    )
    met += print_ratios(
        "made lenient by the mapping (lenient_annotation, lenient_model), vs written by hand",
        [
            (
                "Annotated[int, Field(ge=1, le=500)] mapped, given '100'",
                "mapped bounded, '100'",
                "hand-written bounded, '100'",
                1.05,
            ),
            ("the same, given 100", "mapped bounded, 100", "hand-written bounded, 100", 1.05),
            (
                "lenient_model(search tool) given strings, vs hand-written",
                "mapped search, strings",
                "lenient search, strings",
                1.05,
            ),
        ],
        times,
    )
    met += print_ratios(
        "bounds in the marker (issue 23, item 7), vs a plain bounded int",
        [
            (
                # What Lenient[...], lenient_tool, lenient_model and `fix` (Lenient[Annotated[int, Field(...)]]) give.
                "Annotated[int, Field(ge=1, le=500)] mapped or fixed, given 100",
                "mapped bounded, 100",
                "plain bounded, 100",
                1.6,
            )
        ],
        times,
    )
    met += print_ratios(
        "`LenientInt = Field(100, ge=1, le=500)`: the marker takes in the bounds pydantic applies before it",
        [("given 100, vs `int = Field(100, ge=1, le=500)`", "default-bounded, 100", "plain default-bounded, 100", 1.6)],
        times,
    )
    met += print_ratios(
        f"`fix` of `int | None = Field(default=None, ge=1, le=500)`: {FIXED_LINE}",
        [("given 100, vs the plain field", "fixed Optional bounded, 100", "plain Optional bounded, 100", 1.6)],
        times,
    )
    # What `fix` wrote before moving the bounds: pydantic checks them after the marker in Python.
    print_ratios(
        "`Lenient[int | None] = Field(default=None, ge=1, le=500)`, as `fix` wrote it before",
        [("given 100, vs the plain field", "old fix Optional bounded, 100", "plain Optional bounded, 100", 1.6)],
        times,
    )
    # Written by hand, pydantic checks bounds after the marker in Python after-validators: reported only.
    print_ratios(
        "Annotated[LenientInt, Field(ge=1, le=500)] written by hand, vs a plain bounded int",
        [("given 100", "hand-written bounded, 100", "plain bounded, 100", 1.6)],
        times,
    )
    print_ratios(
        "Optional[int] mapped (also takes the string 'null'), vs Optional[LenientInt] by hand",
        [
            ("given '100'", "mapped Optional, '100'", "hand-written Optional, '100'", 1.2),
            ("given 100", "mapped Optional, 100", "hand-written Optional, 100", 1.2),
        ],
        times,
    )
    met += print_ratios(
        "under model_validate(..., strict=True); strict int cannot take strings, so all against the native value",
        [
            ("LenientInt given 100, vs int given 100", "lenient, 100, strict=True", "plain int, 100", 1.15),
            ("LenientInt given '100', vs int given 100", "lenient, '100', strict=True", "plain int, 100", 2.0),
            (
                "StrictBoolish given true, vs bool given true",
                "lenient bool, true, strict=True",
                "plain bool, true",
                1.15,
            ),
            (
                "StrictBoolish given 'true', vs bool given true",
                "lenient bool, 'true', strict=True",
                "plain bool, true",
                2.0,
            ),
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
