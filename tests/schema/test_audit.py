from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from pydantic_lenient import LenientFloat, LenientJson, LenientUInt, StrictBoolish
from pydantic_lenient.schema.audit import Finding, audit, format_findings


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
    ("error", "strict_tool.limit", "Optional[int]", "Lenient[Optional[LenientInt]]"),
    ("error", "strict_tool.offset", "Annotated[int, Field(ge=0)]", "LenientUInt"),
    ("error", "strict_tool.page", "Annotated[int, Field(gt=0)]", "LenientPositiveInt"),
    ("error", "strict_tool.dry_run", "bool", "StrictBoolish"),
    ("error", "strict_tool.ratio", "float", "LenientFloat"),
    ("note", "strict_tool.ids", "list[int]", "LenientJson[list[LenientInt]]"),
    ("error", "strict_tool.ids[]", "int", "LenientInt"),
    ("note", "strict_tool.steps", "Optional[list[Step]]", "Lenient[Optional[LenientJson[list[Lenient[Step]]]]]"),
    ("error", "strict_tool.steps[].count", "int", "LenientInt"),
    ("error", "strict_tool.steps[].done", "bool", "StrictBoolish"),
    ("note", "strict_tool.point", "Optional[Point]", "Lenient[Optional[Lenient[Point]]]"),
    ("error", "strict_tool.point.x", "float", "LenientFloat"),
    ("note", "strict_tool.box", "Optional[Box]", "Lenient[Optional[Lenient[Box]]]"),
    ("error", "strict_tool.box.width", "int", "LenientInt"),
    ("note", "strict_tool.weights", "dict[str, float]", "LenientJson[dict[str, LenientFloat]]"),
    ("error", "strict_tool.weights{}", "float", "LenientFloat"),
    ("note", "strict_tool.pair", "tuple[int, str]", "LenientJson[tuple[LenientInt, str]]"),
    ("error", "strict_tool.pair[0]", "int", "LenientInt"),
    ("note", "strict_tool.either", "int | str", ""),
]


def test_audit_finds_every_strict_field_at_any_depth() -> None:
    found = [(f.level, f.path, f.annotation, f.suggestion) for f in audit([strict_tool])]
    assert found == EXPECTED_STRICT


def test_audit_follows_lenient_json_into_nested_models() -> None:
    found = [(f.level, f.path) for f in audit([lenient_tool])]
    assert found == [
        ("note", "lenient_tool.limit"),  # a hand-written Optional[LenientUInt] refuses "null"
        ("error", "lenient_tool.steps[].count"),
        ("error", "lenient_tool.steps[].done"),
    ]


def test_recursive_models_are_audited_once() -> None:
    class Tree(BaseModel):
        size: int
        children: list[Tree] = []

    assert [f.path for f in audit([("tree", Tree)])] == ["tree.size", "tree.children"]


def test_report_is_readable() -> None:
    report = format_findings(audit([strict_tool])[:2])
    assert report.splitlines() == [
        "error: strict_tool.limit: Optional[int] is not lenient; use Lenient[Optional[LenientInt]]",
        "error: strict_tool.offset: Annotated[int, Field(ge=0)] is not lenient; use LenientUInt",
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


def bounded_tool(
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
    page: Optional[Annotated[int, Field(ge=1)]] = None,
    byte: Annotated[int, Field(ge=0, le=255)] = 0,
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5,
) -> None:
    """Bounds the suggestions must keep."""


def test_suggestions_keep_bounds() -> None:
    found = [(f.path, f.annotation, f.suggestion) for f in audit([bounded_tool])]
    assert found == [
        ("bounded_tool.limit", "Annotated[int, Field(ge=1, le=500)]", "Annotated[LenientInt, Field(ge=1, le=500)]"),
        ("bounded_tool.page", "Optional[Annotated[int, Field(ge=1)]]", "Lenient[Optional[LenientPositiveInt]]"),
        ("bounded_tool.byte", "Annotated[int, Field(ge=0, le=255)]", "LenientU8"),
        ("bounded_tool.ratio", "Annotated[float, Field(gt=0, lt=1)]", "Annotated[LenientFloat, Field(gt=0, lt=1)]"),
    ]


def test_a_field_that_cannot_be_made_lenient_is_a_note_saying_why() -> None:
    class Model(BaseModel):
        either: int | str = 1
        wide: Annotated[float, Field(allow_inf_nan=True)] = 0.0

    report = format_findings(audit([("tool", Model)]))
    assert report.splitlines() == [
        "note: tool.either: int | str stays as it is: str already takes any string, "
        "so a string such as '1' could be meant for either member",
        "note: tool.wide: Annotated[float, Field(allow_inf_nan=True)] stays as it is: "
        "it allows NaN and Infinity, which LenientFloat refuses",
        "0 error(s), 2 note(s)",
    ]


def test_every_suggestion_is_what_the_mapping_gives() -> None:
    """The audit and lenient_annotation are one mapping: a model rebuilt from the suggestions'
    mapping passes the audit."""
    from pydantic_lenient.types.tools import lenient_tool as make_lenient_tool

    assert audit([make_lenient_tool(strict_tool)]) == [
        Finding(
            "note",
            "strict_tool.either",
            "Annotated[int, ExactNumber()] | str",
            "",
            reason="str already takes any string, so a string such as '1' could be meant for either member",
        )
    ]


def test_a_hand_written_optional_that_refuses_null_text_is_a_note_naming_the_form_that_takes_it() -> None:
    """pydantic builds ``Optional[LenientInt]`` without telling the type it is optional, so it
    refuses ``"null"`` (the policy's one exception): the audit says so and names the form that
    takes it, whose own audit is clean."""
    from typing import Literal

    from pydantic_lenient import Lenient

    class Written(BaseModel):
        limit: Optional[LenientUInt] = None
        ratio: LenientFloat | None = None
        order: Optional[Literal["asc", "desc"]] = None

    class Suggested(BaseModel):
        limit: Lenient[Optional[LenientUInt]] = None
        ratio: Lenient[LenientFloat | None] = None
        order: Lenient[Optional[Literal["asc", "desc"]]] = None

    report = format_findings(audit([("tool", Written)]))
    assert report.splitlines() == [
        'note: tool.limit: Optional[LenientUInt] refuses the string "null"; use Lenient[Optional[LenientUInt]]',
        'note: tool.ratio: Optional[LenientFloat] refuses the string "null"; use Lenient[Optional[LenientFloat]]',
        "note: tool.order: Optional[Literal['asc', 'desc']] refuses the string \"null\"; "
        "use Lenient[Optional[Literal['asc', 'desc']]]",
        "0 error(s), 3 note(s)",
    ]
    nulls = {"limit": "null", "ratio": "null", "order": "null"}
    assert Suggested.model_validate(nulls) == Suggested(limit=None, ratio=None, order=None)
    with pytest.raises(ValueError, match="3 validation errors"):
        Written.model_validate(nulls)
    assert audit([("tool", Suggested)]) == []
