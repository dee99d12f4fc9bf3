"""Issue 23, item 2: the contract on real tool parameters from public MCP servers (tests/real_signatures.py).

Each row goes through the same checks as the property test over generated annotations
(tests/cross_cutting/test_contract_property.py): every way in advertises the same schema, and the host gives the
server's verdict on values around the row (its bounds and one past them, their string forms, JSON
text, ``"null"``, and values of the wrong type).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from pydantic_lenient import apply_style
from tests.annotation_strategies import Annotation, Parameter
from tests.cross_cutting.test_contract_property import (
    _MAPPED,
    _WRITTEN,
    _advertised,
    _mismatches,
    _ways,
    _without_null_text,
    _without_patterns,
)
from tests.real_signatures import SIGNATURES, Signature

_BOUND = re.compile(r"\b(ge|gt|le|lt|min_length|max_length)=(-?[0-9]+(?:\.[0-9]+)?)")
_OTHERS: tuple[Any, ...] = (
    None,
    "null",
    "",
    "abc",
    True,
    "true",
    "1.5",
    1.5,
    0,
    "0",
    -1,
    "2026-01-31",
    [],
    ["a"],
    "[1]",
    {},
)


def _annotation_source(written: str) -> str:
    """The annotation without its default (``X = Field(...)`` keeps its Field for the bounds)."""
    annotation, _, default = written.partition(" = ")
    return annotation if not default.startswith("Field(") else f"Annotated[{annotation}, {default}]"


def _values(written: str) -> list[Any]:
    """Values at and one past each bound, in their native, string and JSON-text forms."""
    values: list[Any] = list(_OTHERS)
    for keyword, number in _BOUND.findall(written):
        bound = float(number) if "." in number else int(number)
        for edge in (bound - 1, bound, bound + 1):
            if keyword.endswith("length"):
                values += ["a" * max(int(edge), 0), ["a"] * max(int(edge), 0)]
            else:
                values += [edge, str(edge), float(edge), json.dumps(edge), edge - 0.5]
    return values


def _parameter(row: Signature) -> Parameter:
    values = _values(row.written)
    annotation = Annotation(_annotation_source(row.written), st.sampled_from(values))
    return Parameter(annotation, row.written, None)


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: _without_descriptions(value) for key, value in schema.items() if key not in ("description", "title")}


def _id(row: Signature) -> str:
    return f"{row.tool}.{row.parameter}"


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path


def test_the_table_is_large_and_each_row_is_sourced() -> None:
    assert len(SIGNATURES) >= 20
    assert all(row.source.startswith("https://github.com/") for row in SIGNATURES)
    assert len({(row.tool, row.parameter, row.written) for row in SIGNATURES}) == len(SIGNATURES)


@pytest.mark.parametrize("row", SIGNATURES, ids=_id)
def test_every_way_in_advertises_the_same_schema(directory: Path, row: Signature) -> None:
    ways = _ways(directory, _parameter(row))
    for style in ("type-array", "any-of"):
        reference = _advertised(ways.lenient["lenient_tool"], style)
        for way in _MAPPED:
            advertised = _advertised(ways.lenient[way], style)
            if way == "Lenient[T]":  # built from the annotation alone: the Field's description stays behind
                advertised, reference_here = _without_descriptions(advertised), _without_descriptions(reference)
            else:
                reference_here = reference
            assert advertised == reference_here, (way, style, row.written)
        for way in _WRITTEN:
            if way in ways.lenient:
                # Restyled once the null text is gone, on both sides (test_contract_property does the same).
                written = _without_patterns(
                    apply_style(_without_null_text(_advertised(ways.lenient[way], style)), style)
                )
                expected = _without_patterns(apply_style(_without_null_text(reference), style))
                assert written == expected, (way, style, row.written)


# JSON Schema's `format` is an annotation hosts do not assert (draft 2020-12), so a host admits any
# string for `date`, where pydantic (every way in, and plain pydantic too) refuses a non-date.
# Not a listed README exception yet: pinned until the README lists it or the mapping advertises a pattern.
# docs/guarantees.md: hosts do not assert `format`, so they admit any string for a date, which the
# server refuses clearly. The verdict checks here hold host and server to the same verdict, so the
# date rows are expected to fail them, by that listed exception.
_FORMAT_NOT_ASSERTED = pytest.mark.xfail(
    strict=True, reason="the listed exception: hosts do not assert format: date; the server refuses non-dates"
)
_VERDICT_ROWS = [
    pytest.param(row, marks=_FORMAT_NOT_ASSERTED, id=_id(row)) if row.written.startswith("date") else row
    for row in SIGNATURES
]


@pytest.mark.parametrize("row", _VERDICT_ROWS, ids=_id)
def test_every_way_in_gets_the_hosts_verdict(directory: Path, row: Signature) -> None:
    values = _values(row.written)
    ways = _ways(directory, _parameter(row))
    for way, model in ways.lenient.items():
        for style in ("type-array", "any-of"):
            problems = list(_mismatches(model, _advertised(model, style), values))
            assert not problems, (way, style, row.written, problems)
