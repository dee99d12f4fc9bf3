from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from pydantic_lenient import LenientFloat, LenientJson, LenientUInt, StrictBoolish
from pydantic_lenient.audit import Finding, audit, format_findings


class Step(BaseModel):
    count: int
    done: bool
    label: str = ""


class Point(TypedDict):
    x: float


@dataclass
class Box:
    width: int


def strict_tool(
    folder: str,
    limit: Optional[int] = None,
    offset: Annotated[int, Field(ge=0)] = 0,
    page: Annotated[int, Field(gt=0)] = 1,
    dry_run: bool = False,
    ratio: float = 1.0,
    ids: list[int] = [],  # noqa: B006
    steps: Optional[list[Step]] = None,
    point: Optional[Point] = None,
    box: Optional[Box] = None,
    weights: dict[str, float] = {},  # noqa: B006
    pair: tuple[int, str] = (1, "a"),
    either: int | str = 1,
) -> None:
    """A tool that has not moved to lenient types."""


def lenient_tool(
    folder: str,
    limit: Optional[LenientUInt] = None,
    dry_run: StrictBoolish = False,
    ratio: LenientFloat = 1.0,
    steps: Optional[LenientJson[list[Step]]] = None,
) -> None:
    """The same tool, half moved: its Step model is still strict."""


EXPECTED_STRICT = [
    ("error", "strict_tool.limit", "Optional[int]", "Optional[LenientInt]"),
    ("error", "strict_tool.offset", "int", "LenientUInt"),
    ("error", "strict_tool.page", "int", "LenientPositiveInt"),
    ("error", "strict_tool.dry_run", "bool", "StrictBoolish"),
    ("error", "strict_tool.ratio", "float", "LenientFloat"),
    ("note", "strict_tool.ids", "list[int]", "LenientJson[list[int]]"),
    ("error", "strict_tool.ids[]", "int", "LenientInt"),
    ("note", "strict_tool.steps", "Optional[list[Step]]", "Optional[LenientJson[list[Step]]]"),
    ("error", "strict_tool.steps[].count", "int", "LenientInt"),
    ("error", "strict_tool.steps[].done", "bool", "StrictBoolish"),
    ("note", "strict_tool.point", "Optional[Point]", "Optional[LenientJson[Point]]"),
    ("error", "strict_tool.point.x", "float", "LenientFloat"),
    ("note", "strict_tool.box", "Optional[Box]", "Optional[LenientJson[Box]]"),
    ("error", "strict_tool.box.width", "int", "LenientInt"),
    ("note", "strict_tool.weights", "dict[str, float]", "LenientJson[dict[str, float]]"),
    ("error", "strict_tool.weights{}", "float", "LenientFloat"),
    ("note", "strict_tool.pair", "tuple[int, str]", "LenientJson[tuple[int, str]]"),
    ("error", "strict_tool.pair[0]", "int", "LenientInt"),
]


def test_audit_finds_every_strict_field_at_any_depth() -> None:
    found = [(f.level, f.path, f.annotation, f.suggestion) for f in audit([strict_tool])]
    assert found == EXPECTED_STRICT


def test_audit_follows_lenient_json_into_nested_models() -> None:
    found = [(f.level, f.path) for f in audit([lenient_tool])]
    assert found == [("error", "lenient_tool.steps[].count"), ("error", "lenient_tool.steps[].done")]


def test_recursive_models_are_audited_once() -> None:
    class Tree(BaseModel):
        size: int
        children: list[Tree] = []

    assert [f.path for f in audit([("tree", Tree)])] == ["tree.size", "tree.children"]


def test_report_is_readable() -> None:
    report = format_findings(audit([strict_tool])[:2])
    assert report.splitlines() == [
        "error: strict_tool.limit: Optional[int] is not lenient; use Optional[LenientInt]",
        "error: strict_tool.offset: int is not lenient; use LenientUInt",
        "2 error(s), 0 note(s)",
    ]
    assert str(Finding("note", "t.x", "list[int]", "LenientJson[list[int]]")) == (
        "note: t.x: list[int] does not accept JSON text; use LenientJson[list[int]]"
    )


@pytest.mark.parametrize("annotation", [str, Any, "Literal['a']", "Optional[str]"])
def test_fields_that_take_strings_anyway_are_not_findings(annotation: Any) -> None:
    from typing import Literal  # noqa: F401 - used by eval

    resolved = eval(annotation) if isinstance(annotation, str) else annotation

    class Model(BaseModel):
        value: resolved  # type: ignore[valid-type]

    assert audit([("tool", Model)]) == []
