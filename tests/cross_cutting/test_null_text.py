"""The string "null" for nullable lenient fields, in every way the library offers, against hosts.

``Lenient[Optional[...]]``, `lenient_tool`, the whole-server option (`lenient_model` of the
argument model), what ``pydantic-lenient fix`` writes and what `render_annotation` writes all take
"null" as None where no other form of the field is a string, and advertise it in every style; a
hand-written ``Optional[LenientUInt]`` refuses it on both sides (as a plain ``Optional[Literal]``); a
Literal or Enum without the value "null" takes it through the mapping; a field that takes strings keeps
it as a string. Hypothesis against ``jsonschema``, and a corpus against Ajv 8.
"""

from __future__ import annotations

import enum
import importlib.util
import tempfile
import textwrap
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from pydantic_lenient import LenientUInt, input_schema, lenient_annotation, render_annotation
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.mapping import Lenient, lenient_model
from pydantic_lenient.types.tools import lenient_tool
from tests.conftest import AjvRunner
from tests.contract import Verdict, agrees, is_portable_item_text, server_verdict
from tests.strategies import any_input

_LENIENT: Any = Lenient  # subscripted with run-time values below


def _field(annotation: Any) -> type[BaseModel]:
    return create_model("Tool", value=(annotation, None))


def _decorated() -> type[BaseModel]:
    def tool(value: Optional[Annotated[int, Field(ge=1, le=500)]] = None) -> None:
        """A tool whose source says Optional[int]."""

    return model_from_function(lenient_tool(tool))


def _whole_server() -> type[BaseModel]:
    def tool(value: Optional[bool] = None) -> None:
        """Made lenient the way make_lenient(..., lenient_parameters=True) does: its argument model."""

    return lenient_model(model_from_function(tool))


_SOURCE_DIRECTORY = Path(tempfile.mkdtemp(prefix="null_text_"))
_HAS_LIBCST = importlib.util.find_spec("libcst") is not None


def _module(name: str, source: str) -> Any:
    path = _SOURCE_DIRECTORY / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"null_text_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PLAIN_TOOL = """
    from typing import Annotated, Optional

    from pydantic import Field

    from pydantic_lenient import LenientUInt


    def tool(
        plain: Optional[int] = None,
        bounded: Annotated[Optional[int], Field(ge=1, le=500, description="Most")] = None,
        inner_bounds: Optional[Annotated[int, Field(ge=1, le=500)]] = None,
        by_hand: Optional[LenientUInt] = None,
        flag: bool | None = None,
        numbers: Optional[list[int]] = None,
    ) -> None:
        \"\"\"A tool as its author wrote it.\"\"\"


    TOOLS = [tool]
"""
_PARAMETERS = ("plain", "bounded", "inner_bounds", "by_hand", "flag", "numbers")


def _fixed() -> Any:
    """The tool after ``pydantic-lenient fix``: every parameter takes "null" (by hand or not)."""
    from pydantic_lenient.codemod.fix import fix_file

    module = _module("plain_tool", _PLAIN_TOOL)
    result = fix_file(module.__file__)
    assert len(result.changes) == len(_PARAMETERS), result.changes
    assert fix_file(module.__file__).changes == []  # idempotent
    return _module("fixed_tool", result.fixed).tool


def _rendered() -> Any:
    """Each parameter's lenient form as `render_annotation` writes it, imported back as source."""
    plain = _module("rendered_from", _PLAIN_TOOL).tool
    hints = {name: lenient_annotation(plain.__annotations__[name]) for name in _PARAMETERS}
    lines = [f"    {name}: {render_annotation(hint)} = None," for name, hint in hints.items()]
    source = "\n".join(
        [
            "from typing import Annotated, Optional",
            "from pydantic import Field",
            "from pydantic_lenient import Lenient, LenientInt, LenientJson, LenientUInt, StrictBoolish",
            "def tool(",
            *lines,
            ") -> None:",
            "    pass",
        ]
    )
    tool = _module("rendered_tool", source).tool
    for name, hint in hints.items():  # the text is exactly the annotation it was written from
        assert render_annotation(lenient_annotation(tool.__annotations__[name])) == render_annotation(hint), name
    return tool


def _parameter(make: Callable[[], Any], parameter: str) -> Callable[[], type[BaseModel]]:
    """What makes a one-field model (named ``value``) of ``parameter`` of the tool ``make`` gives."""

    def model() -> type[BaseModel]:
        return _field(typing.get_type_hints(make(), include_extras=True)[parameter])

    return model


class _Order(enum.Enum):
    ASC = "asc"
    DESC = "desc"


class _Word(enum.Enum):
    NULL = "null"
    OTHER = "other"


# name: (model, what "null" gives: None, the string itself, or refused on both sides)
NULL_REFUSED = object()
FIELDS: dict[str, tuple[Callable[[], type[BaseModel]], Any]] = {
    "Lenient[Optional[int]]": (lambda: _field(_LENIENT[Optional[int]]), None),
    "Lenient[Optional[1..500]]": (lambda: _field(_LENIENT[Optional[Annotated[int, Field(ge=1, le=500)]]]), None),
    "Lenient[Optional[LenientUInt]]": (lambda: _field(_LENIENT[Optional[LenientUInt]]), None),
    "Lenient[Optional[float]]": (lambda: _field(_LENIENT[Optional[float]]), None),
    "Lenient[Optional[int | bool]]": (lambda: _field(_LENIENT[Union[int, bool, None]]), None),
    "Lenient[Optional[list[int]]]": (lambda: _field(_LENIENT[Optional[list[int]]]), None),
    "lenient_tool": (_decorated, None),
    "whole server": (_whole_server, None),
    "Optional[LenientUInt] by hand": (lambda: _field(Optional[LenientUInt]), NULL_REFUSED),
    **{f"render_annotation: {parameter}": (_parameter(_rendered, parameter), None) for parameter in _PARAMETERS},
    **{
        f"fix: {parameter}": (_parameter(_fixed, parameter), None) for parameter in (_PARAMETERS if _HAS_LIBCST else ())
    },
    # A Literal or Enum none of whose values is "null" (issue 32); one with that value keeps it.
    'Lenient[Optional[Literal["asc", "desc"]]]': (lambda: _field(_LENIENT[Optional[Literal["asc", "desc"]]]), None),
    "Lenient[Optional[Enum]]": (lambda: _field(_LENIENT[Optional[_Order]]), None),
    'Lenient[Optional[Literal["null", "x"]]]': (lambda: _field(_LENIENT[Optional[Literal["null", "x"]]]), "null"),
    'Lenient[Optional[Enum with "null"]]': (lambda: _field(_LENIENT[Optional[_Word]]), _Word.NULL),
    'Optional[Literal["asc", "desc"]] by hand': (lambda: _field(Optional[Literal["asc", "desc"]]), NULL_REFUSED),
    "Lenient[Optional[str]]": (lambda: _field(_LENIENT[Optional[str]]), "null"),
    "Lenient[Optional[int | str]]": (lambda: _field(_LENIENT[Union[int, str, None]]), "null"),
}
MODELS = {name: make() for name, (make, _) in FIELDS.items()}
# Plain pydantic fields left as they are, which decide alone what their strings mean.
STRING_FIELDS = frozenset({"Lenient[Optional[str]]", "Lenient[Optional[int | str]]"})
REFUSING_NULL = frozenset(name for name, (_, expected) in FIELDS.items() if expected is NULL_REFUSED)
STYLES = ("type-array", "any-of", "pydantic-default")


def _schema(model: type[BaseModel], style: str) -> dict[str, Any]:
    if style == "pydantic-default":
        return model.model_json_schema()
    return input_schema(model, style=style)  # type: ignore[arg-type]


def _agrees(name: str, host_accepts: bool, value: Any, verdict: Verdict, style: str) -> bool:
    # pydantic's own generator: the types write their part of the portable shape (issue 33).
    if agrees(host_accepts, value, verdict, portable=style == "pydantic-default"):
        return True
    # Hosts do not check JSON text's content (the README's listed exception 4).
    return name.endswith(("[list[int]]]", ": numbers")) and host_accepts and isinstance(value, str)


@pytest.mark.parametrize("name", list(FIELDS))
def test_null_gives_what_the_field_says_on_both_sides(name: str) -> None:
    model, expected = MODELS[name], FIELDS[name][1]
    verdict = server_verdict(model, {"value": "null"})
    if expected is NULL_REFUSED:
        assert not verdict.accepted
    else:
        assert model.model_validate({"value": "null"}).value == expected  # type: ignore[attr-defined]
        assert model.model_validate_json('{"value": "null"}').value == expected  # type: ignore[attr-defined]
    for style in STYLES:
        assert host_validator(_schema(model, style)).is_valid({"value": "null"}) == verdict.accepted, style


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", list(FIELDS))
@given(value=st.one_of(any_input, st.sampled_from(["null", "NULL", "Null", " null", "null\n", "nul", "None"])))
def test_host_and_server_agree_on_every_value(name: str, style: str, value: Any) -> None:
    model = MODELS[name]
    if name in STRING_FIELDS:  # a plain pydantic field left as it is: strings stay strings
        if isinstance(value, str):
            assert model.model_validate({"value": value}).value == value  # type: ignore[attr-defined]
        return
    schema = _schema(model, style)
    host_accepts = bool(host_validator(schema).is_valid({"value": value}))
    verdict = server_verdict(model, {"value": value})
    if style == "pydantic-default" and not host_accepts and verdict.accepted:
        # The portable items pydantic's own generator now writes list their canonical type (exception 9).
        assert is_portable_item_text(model, schema, {"value": value}), value
        return
    assert _agrees(name, host_accepts, value, verdict, style), (host_accepts, value)


CORPUS: list[Any] = [
    "null",
    "NULL",
    "Null",
    " null",
    "null ",
    "null\n",
    "nul",
    "None",
    "",
    None,
    "100",
    "007",
    "-1",
    "501",
    100,
    501,
    1.5,
    "1.5",
    "1e3",
    True,
    "true",
    "FALSE",
    [],
    [1],
    "[1]",
    '["a"]',
    "[",
    {},
]


def test_ajv_and_the_server_agree(ajv: AjvRunner) -> None:
    combinations = [(name, style, draft) for name in FIELDS for style in STYLES for draft in ("2020-12", "07")]
    arguments = [{"value": value} for value in CORPUS]
    results = ajv(
        [
            {"schema": _schema(MODELS[name], style), "values": arguments, "draft": draft, "options": {}}
            for name, style, draft in combinations
        ]
    )
    disagreements = []
    for (name, style, draft), result in zip(combinations, results, strict=True):
        assert result["compile_error"] is None, (name, style, draft, result["compile_error"])
        for value, host_accepts in zip(CORPUS, result["verdicts"], strict=True):
            if name in STRING_FIELDS and value != "null":  # plain pydantic, as it decides
                continue
            verdict = server_verdict(MODELS[name], {"value": value})
            if not _agrees(name, host_accepts, value, verdict, style):
                disagreements.append((name, style, draft, value, host_accepts, verdict.errors))
    assert not disagreements, disagreements[:10]
    null_verdicts = {
        (name, style): result["verdicts"][0] for (name, style, _), result in zip(combinations, results, strict=True)
    }
    assert not any(null_verdicts[name, "any-of"] for name in REFUSING_NULL)
    assert all(accepted for (name, _), accepted in null_verdicts.items() if name not in REFUSING_NULL)


def test_the_strict_style_drops_the_string_form_that_takes_null() -> None:
    schema = input_schema(MODELS["Lenient[Optional[1..500]]"], style="strict")["properties"]["value"]
    assert schema["anyOf"] == [{"type": "integer", "minimum": 1, "maximum": 500}, {"type": "null"}]


def test_null_text_by_hand_is_refused_where_null_could_be_a_string() -> None:
    from pydantic import TypeAdapter

    from pydantic_lenient import NullText

    assert TypeAdapter(Annotated[Optional[LenientUInt], NullText()]).validate_python("null") is None
    refused: list[Any] = [Optional[str], Optional[Union[LenientUInt, str]], LenientUInt]
    for annotation in refused:
        marked: Any = Annotated[annotation, NullText()]
        with pytest.raises(TypeError, match="NullText"):
            TypeAdapter(marked)


_BOUNDED = Annotated[int, Field(ge=1, le=500)]
_WITH_NULL_TEXT = _field(_LENIENT[Optional[_BOUNDED]])
_WITHOUT_NULL_TEXT = _field(_LENIENT[_BOUNDED])


@given(value=st.one_of(any_input, st.from_regex(r"\A(null|[0-9]{1,4}|-?0*[0-9]{1,3})\Z")))
def test_the_null_text_form_changes_no_other_verdict(value: Any) -> None:
    """The native null text (issue 32) is one more string form: for every value but the text
    "null" (and None), the nullable field's verdict, value and errors are the plain field's."""
    if value is None or value == "null":
        assert _WITH_NULL_TEXT.model_validate({"value": value}).value is None  # type: ignore[attr-defined]
        return
    with_null = server_verdict(_WITH_NULL_TEXT, {"value": value})
    without = server_verdict(_WITHOUT_NULL_TEXT, {"value": value})
    assert with_null == without, value
    if with_null.accepted:
        taken = _WITH_NULL_TEXT.model_validate({"value": value}).value  # type: ignore[attr-defined]
        assert taken == _WITHOUT_NULL_TEXT.model_validate({"value": value}).value  # type: ignore[attr-defined]


def test_the_null_text_of_a_lenient_scalar_runs_no_python() -> None:
    """The hot path stays pydantic-core: no Python function in the nullable bounded int's schema,
    apart from the marker's own rare forms (a float or a Decimal)."""
    schema = _LENIENT[Optional[_BOUNDED]]
    core = create_model("Tool", value=(schema, None)).__pydantic_core_schema__
    assert "_null_text_to_none" not in repr(core)
