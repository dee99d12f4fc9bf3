"""What pydantic applies before a lenient marker, the marker takes into account.

Pydantic puts the constraints of a ``Field(...)`` default before the annotation's own metadata
(pydantic/pydantic#10507): ``LenientInt = Field(100, ge=1, le=100)`` is ``int, Ge(1), Le(100),
<marker>``, as is ``Annotated[int, Field(ge=1, le=100), <marker>]``. Each marker moves the bounds it
can hold into itself (checked natively, advertised exactly as through the mapping), and validates
its result through whatever else came before it. The contract: no placement accepts a value that the
author's plain annotation refuses, and the schema a host checks carries the bound.
"""

from __future__ import annotations

import json
import math
import operator
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    Strict,
    TypeAdapter,
    ValidationError,
    create_model,
)

from pydantic_lenient import (
    JsonText,
    Lenient,
    LenientFloat,
    LenientI8,
    LenientInt,
    LenientJson,
    LenientPositiveInt,
    LenientU8,
    LenientUInt,
    StrictBoolish,
    input_schema,
    lenient_annotation,
)
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.annotations import with_metadata
from pydantic_lenient.types.exact_leaves import ExactNumber
from pydantic_lenient.types.json_values import JsonTextOf
from tests.cases import Case, invalid_params, valid_params

_LENIENT: Any = Lenient  # subscripted at run time


def _marker(alias: Any) -> tuple[Any, ...]:
    """The metadata of a public alias (its marker), to write after other metadata."""
    return tuple(typing.get_args(alias)[1:])


def _model(annotation: Any, default: Any, strict: bool = False) -> type[BaseModel]:
    config = ConfigDict(strict=True) if strict else None
    return create_model("Tool", __config__=config, value=(annotation, default))


def _verdict(model: type[BaseModel], value: Any, *, strict: bool | None = None) -> Any:
    """The validated value with its type, or "refused"."""
    try:
        result: Any = model.model_validate({"value": value}, strict=strict).model_dump()["value"]
    except ValidationError:
        return "refused"
    return (type(result), result)


def _host(model: type[BaseModel]) -> Callable[[Any], bool]:
    validator = host_validator(model.model_json_schema())
    return lambda value: validator.is_valid({"value": value})


def _merged(schema: dict[str, Any]) -> dict[str, Any]:
    merged = dict(schema)
    for branch in schema.get("anyOf", []):
        merged.update(branch)
    return merged


# --- integers: every placement, at and past every bound --------------------------------------------

# Each integer alias with the bounds it holds itself: the author's plain annotation is an int in them.
INTEGER_ALIASES: dict[str, tuple[Any, dict[str, Any]]] = {
    "LenientInt": (LenientInt, {}),
    "Lenient[int]": (_LENIENT[int], {}),
    "LenientUInt": (LenientUInt, {"ge": 0}),
    "LenientPositiveInt": (LenientPositiveInt, {"ge": 1}),
    "LenientU8": (LenientU8, {"ge": 0, "le": 255}),
    "LenientI8": (LenientI8, {"ge": -128, "le": 127}),
}
INTEGER_CONSTRAINTS: list[dict[str, Any]] = [
    {"ge": 1, "le": 100},
    {"gt": 0, "lt": 101},
    {"ge": -5},
    {"le": 10},
    {"gt": -3, "lt": 3},
    {"multiple_of": 3},
    {"ge": 1, "le": 500, "multiple_of": 5},
]


@dataclass(frozen=True)
class Placement:
    """How a user writes a constraint on a lenient type: the field's annotation and default."""

    name: str
    field: Callable[[Any, dict[str, Any], Any], tuple[Any, Any]]  # (alias, constraints, default) -> field


PLACEMENTS = [
    Placement("X = Field(default, ...)", lambda alias, bounds, default: (alias, Field(default, **bounds))),
    Placement("X = Field(..., ...)", lambda alias, bounds, default: (alias, Field(..., **bounds))),
    Placement(
        "Annotated[X, Field(...)] = default",
        lambda alias, bounds, default: (Annotated[alias, Field(**bounds)], default),
    ),
    Placement(
        "Annotated[base, Field(...), marker] = default",
        lambda alias, bounds, default: (
            with_metadata(typing.get_args(alias)[0], (Field(**bounds), *_marker(alias))),
            default,
        ),
    ),
]


def _values_around(*bounds: dict[str, Any]) -> list[int]:
    found = {0, 1, -1, 7, 99, 100, 101, 255, 256, 500, 501}
    for group in bounds:
        for name, value in group.items():
            if name != "multiple_of":
                found |= {value - 1, value, value + 1}
    return sorted(found)


def _plain_takes(own: dict[str, Any], bounds: dict[str, Any], value: int) -> Any:
    """The author's plain annotation: an int within the alias's own bounds, with ``bounds``."""
    inside = own.get("ge", -math.inf) <= value <= own.get("le", math.inf)
    return _verdict(_model(int, Field(0, **bounds)), value) if inside else "refused"


def _integer_strings(value: int) -> list[str]:
    """The digit strings a host might send for ``value``: canonical, with leading zeros, minus zero."""
    text = str(value)
    forms = [text, f"00{text}" if value >= 0 else f"-00{text[1:]}"]
    return [*forms, "-0"] if value == 0 else forms


@pytest.mark.parametrize("bounds", INTEGER_CONSTRAINTS, ids=lambda bounds: json.dumps(bounds))
@pytest.mark.parametrize("alias_name", list(INTEGER_ALIASES))
@pytest.mark.parametrize("placement", PLACEMENTS, ids=lambda placement: placement.name)
def test_an_integer_bound_is_kept_in_every_placement(
    placement: Placement, alias_name: str, bounds: dict[str, Any]
) -> None:
    alias, own = INTEGER_ALIASES[alias_name]
    model = _model(*placement.field(alias, bounds, 1))
    host = _host(model)
    steps = "multiple_of" in bounds
    for value in _values_around(own, bounds):
        plain = _plain_takes(own, bounds, value)
        # The contract on native values: exactly the plain annotation's verdict, and the host's.
        assert _verdict(model, value) == plain, value
        assert host(value) is (plain != "refused"), value
        for text in _integer_strings(value):
            taken = _verdict(model, text)
            if taken != "refused":
                assert taken == plain, text  # a string never takes what its value would not
            # Hosts read the exact digit range; `multipleOf` never reaches a string form (exception 1).
            assert host(text) is (taken != "refused") or (steps and host(text)), text


@pytest.mark.parametrize("bounds", INTEGER_CONSTRAINTS, ids=lambda bounds: json.dumps(bounds))
@pytest.mark.parametrize("alias_name", list(INTEGER_ALIASES))
def test_a_default_field_bound_is_the_mapped_bound(alias_name: str, bounds: dict[str, Any]) -> None:
    """``X = Field(d, ...)`` advertises and decides exactly as the mapping's
    ``Lenient[Annotated[int, Field(<X's bounds>), Field(...)]]``."""
    alias, own = INTEGER_ALIASES[alias_name]
    written = _model(alias, Field(1, **bounds))
    mapped = _model(_LENIENT[Annotated[int, Field(**own), Field(**bounds)]], 1)
    assert written.model_json_schema() == mapped.model_json_schema()
    for style in ("type-array", "any-of", "strict"):
        assert input_schema(written, style=style) == input_schema(mapped, style=style)
    for value in _values_around(own, bounds):
        for sent in (value, *_integer_strings(value), float(value)):
            assert _verdict(written, sent) == _verdict(mapped, sent), sent


@pytest.mark.parametrize(
    ("bounds", "minimum", "maximum", "pattern"),
    [
        ({"ge": 1, "le": 100}, 1, 100, "^0*(?:[1-9][0-9]?|100)$"),
        ({"gt": 0, "lt": 101}, 1, 100, "^0*(?:[1-9][0-9]?|100)$"),
        ({"ge": 1, "le": 500}, 1, 500, "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"),
        ({"le": 10}, None, 10, "^(?:0*(?:0|[1-9]|10)|-0*[1-9][0-9]*|-0+)$"),
    ],
)
def test_the_schema_carries_the_bound_and_the_exact_digit_range(
    bounds: dict[str, Any], minimum: int | None, maximum: int | None, pattern: str
) -> None:
    properties = input_schema(_model(LenientInt, Field(1, **bounds)), style="any-of")["properties"]["value"]
    canonical, string = properties["anyOf"]
    assert (canonical.get("minimum"), canonical.get("maximum")) == (minimum, maximum)
    assert string == {"type": "string", "pattern": pattern}
    assert not {"ge", "le", "gt", "lt"} & _merged(properties).keys()


def test_the_bound_rides_in_the_marker_with_no_python_validator() -> None:
    """The order pydantic gives a default's bounds, built to the mapping's very core schema."""
    model = _model(LenientInt, Field(100, ge=1, le=100))
    assert [type(part).__name__ for part in model.model_fields["value"].metadata] == ["Ge", "Le", "_LenientInt"]
    before = TypeAdapter(with_metadata(int, (Field(ge=1, le=100), *_marker(LenientInt)))).core_schema
    mapped = TypeAdapter(_LENIENT[Annotated[int, Field(ge=1, le=100)]]).core_schema
    assert _without_metadata(before) == _without_metadata(mapped)
    assert before["type"] == "chain"
    assert before["steps"][-1] == {"type": "int", "strict": True, "ge": 1, "le": 100}


def _without_metadata(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "metadata"}


def test_a_bare_marker_builds_the_schema_it_always_built() -> None:
    """No bound before it: one native tagged union, no chain and nothing added to its metadata."""
    schema = TypeAdapter(LenientInt).core_schema
    assert schema["type"] == "custom-error"
    assert set(schema.get("metadata", {})) <= {"pydantic_js_annotation_functions"}


@pytest.mark.parametrize("strict", [None, True, False])
@pytest.mark.parametrize("config_strict", [False, True])
def test_strictness_changes_nothing(strict: bool | None, config_strict: bool) -> None:
    model = _model(LenientInt, Field(100, ge=1, le=100), strict=config_strict)
    assert _verdict(model, "100", strict=strict) == (int, 100)
    assert _verdict(model, 100.0, strict=strict) == (int, 100)
    assert _verdict(model, "007", strict=strict) == (int, 7)  # leading zeros everywhere (issue 32)
    for refused in ("0", "0000", "101", 0, 101, True):
        assert _verdict(model, refused, strict=strict) == "refused", refused


@given(
    lower=st.integers(-(10**6), 10**6),
    span=st.integers(0, 10**4),
    offset=st.integers(-10, 10**4 + 10),
    default=st.integers(),
)
def test_for_every_value_a_default_bound_decides_as_the_plain_int(
    lower: int, span: int, offset: int, default: int
) -> None:
    upper = lower + span
    value = lower + offset
    lenient = _model(LenientInt, Field(default, ge=lower, le=upper))
    plain = _model(int, Field(default, ge=lower, le=upper))
    expected = _verdict(plain, value)
    assert _verdict(lenient, value) == expected
    assert _verdict(lenient, str(value)) == expected
    assert _host(lenient)(value) is (expected != "refused")
    assert _host(lenient)(str(value)) is (expected != "refused")


# --- floats ---------------------------------------------------------------------------------------

FLOAT_CONSTRAINTS: list[dict[str, Any]] = [
    {"gt": 0},
    {"gt": 0, "le": 1},
    {"ge": -1.5, "lt": 2.5},
    {"multiple_of": 0.5},
    {"ge": 0, "allow_inf_nan": False},
]
FLOAT_ALIASES = {"LenientFloat": LenientFloat, "Lenient[float]": _LENIENT[float]}


def _float_values(bounds: dict[str, Any]) -> list[float]:
    found = {0.0, -0.5, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, -1.0, 100.0}
    for name, value in bounds.items():
        if name not in ("multiple_of", "allow_inf_nan"):
            found |= {value - 0.25, float(value), value + 0.25}
    return sorted(found)


@pytest.mark.parametrize("bounds", FLOAT_CONSTRAINTS, ids=lambda bounds: json.dumps(bounds))
@pytest.mark.parametrize("alias_name", list(FLOAT_ALIASES))
@pytest.mark.parametrize("placement", PLACEMENTS, ids=lambda placement: placement.name)
def test_a_float_bound_is_kept_in_every_placement(
    placement: Placement, alias_name: str, bounds: dict[str, Any]
) -> None:
    model = _model(*placement.field(FLOAT_ALIASES[alias_name], bounds, 1.0))
    host = _host(model)
    plain_model = _model(float, Field(1.0, **bounds))
    for value in _float_values(bounds):
        plain = _verdict(plain_model, value)
        assert _verdict(model, value) == plain, value
        assert host(value) is (plain != "refused"), value
        text = json.dumps(value)
        taken = _verdict(model, text)
        assert taken in ("refused", plain), text
        if taken != "refused":
            assert host(text), text  # a host's verdict on a number string is never the stricter one (exception 1)


@pytest.mark.parametrize("bounds", FLOAT_CONSTRAINTS, ids=lambda bounds: json.dumps(bounds))
def test_a_default_field_float_bound_is_the_mapped_bound(bounds: dict[str, Any]) -> None:
    written = _model(LenientFloat, Field(1.0, **bounds))
    mapped = _model(_LENIENT[Annotated[float, Field(**bounds)]], 1.0)
    assert written.model_json_schema() == mapped.model_json_schema()
    for value in _float_values(bounds):
        for sent in (value, json.dumps(value)):
            assert _verdict(written, sent) == _verdict(mapped, sent), sent


# --- everything else written before a marker: validated after it -----------------------------------

_LI, _LF, _SB = _marker(LenientInt), _marker(LenientFloat), _marker(StrictBoolish)
_QUARTER_STEPS = _marker(_LENIENT[Annotated[float, Field(multiple_of=0.25)]])


def _double(value: int) -> int:
    return value * 2


def _add_one(value: Any) -> Any:
    return value + 1 if isinstance(value, int) else value


BEFORE_A_MARKER = [
    Case(
        with_metadata(int, (Field(ge=1), AfterValidator(_double), *_LI)),
        [(1, 2), ("3", 6), (3.0, 6), ("1", 2)],
        [0, "0", "-1", "x", True],
        "bound-then-AfterValidator",
    ),
    Case(
        with_metadata(int, (Strict(), Field(le=5), *_LI)), [("5", 5), (5, 5), (-3, -3)], ["6", 6, "x"], "Strict-bound"
    ),
    Case(
        with_metadata(int, (BeforeValidator(_add_one), *_LI)),
        [("1", 2), (1, 2), ("-1", 0)],
        ["x", "1.5"],
        "BeforeValidator",
    ),
    Case(with_metadata(int, (PlainValidator(_double), *_LI)), [("2", 4), (2, 4)], ["x", True], "PlainValidator"),
    Case(with_metadata(int, (Field(ge=5, le=1), *_LI)), [], [1, 3, 5, "3"], "empty-range"),
    Case(
        with_metadata(float, (Field(multiple_of=0.5), *_QUARTER_STEPS)),
        [(1.5, 1.5), ("0.5", 0.5), (2, 2.0)],
        [0.75, "0.25", "x"],
        "two-float-steps",
    ),
    Case(
        with_metadata(float, (Field(gt=0, allow_inf_nan=True), *_LF)),
        [("0.5", 0.5), (2, 2.0)],
        [0, "0", float("inf"), "Infinity", float("nan")],
        "allow_inf_nan",
    ),
    Case(
        with_metadata(bool, (AfterValidator(operator.not_), *_SB)),
        [(True, False), ("false", True)],
        ["yes", 1],
        "bool-validator",
    ),
    Case(with_metadata(bool, (Strict(), *_SB)), [("TRUE", True), (False, False)], ["1", 0], "bool-Strict"),
    Case(
        with_metadata(bool, (AfterValidator(operator.not_), ExactNumber())),
        [(True, False), (False, True)],
        ["x", None],  # (an explicit strict=False makes ExactNumber's bool lax, before as now)
        "ExactNumber-bool-validator",
    ),
    Case(
        with_metadata(int, (Field(le=5), ExactNumber())),
        [(5, 5), (-1, -1)],
        [6, "5", True],
        "ExactNumber-bound",
    ),
    Case(
        with_metadata(str, (Field(min_length=3), JsonTextOf())),
        [("[1]", "[1]"), ([1], "[1]"), ({"a": 1}, '{"a":1}')],
        ["[]", [], {}],
        "JsonTextOf-min_length",
    ),
    Case(
        with_metadata(str, (Field(pattern=r"^\["), JsonTextOf())),
        [([1], "[1]"), ("[2]", "[2]")],
        [{"a": 1}, '{"a":1}'],
        "JsonTextOf-pattern",
    ),
]


@pytest.mark.parametrize(("annotation", "value", "expected"), valid_params(BEFORE_A_MARKER))
def test_what_comes_before_a_marker_validates_its_result(annotation: Any, value: Any, expected: Any) -> None:
    adapter = TypeAdapter(annotation)
    for strict in (None, True, False):
        result = adapter.validate_python(value, strict=strict)
        assert (type(result), result) == (type(expected), expected)


@pytest.mark.parametrize(("annotation", "value"), invalid_params(BEFORE_A_MARKER))
def test_what_comes_before_a_marker_can_refuse(annotation: Any, value: Any) -> None:
    for strict in (None, True, False):
        with pytest.raises(ValidationError):
            TypeAdapter(annotation).validate_python(value, strict=strict)


@pytest.mark.parametrize("case", BEFORE_A_MARKER, ids=lambda case: case.id)
def test_a_host_never_refuses_what_the_model_takes(case: Case) -> None:
    """What cannot be advertised exactly is left out of the schema: the host lets more through
    (the model then refuses it), never less."""
    host = host_validator(TypeAdapter(case.annotation).json_schema())
    for value, _ in case.valid:
        assert host.is_valid(value), value


def test_a_bound_before_a_validator_is_advertised_and_one_after_it_is_not() -> None:
    on_the_argument = TypeAdapter(with_metadata(int, (Field(ge=1), AfterValidator(_double), *_LI))).json_schema()
    assert on_the_argument["anyOf"][0] == {"type": "number", "minimum": 1}
    on_the_result = TypeAdapter(with_metadata(int, (AfterValidator(_double), Field(ge=4), *_LI))).json_schema()
    assert on_the_result["anyOf"][0] == {"type": "number"}  # 1 doubles to 2, which ge=4 refuses; 2 is taken
    assert TypeAdapter(with_metadata(int, (AfterValidator(_double), Field(ge=4), *_LI))).validate_python("2") == 4


@pytest.mark.parametrize(
    "alias",
    [LenientInt, LenientFloat, StrictBoolish, JsonText[list[int]]],
    ids=["int", "float", "bool", "JsonText"],
)
def test_a_description_given_before_a_marker_stays_in_its_schema(alias: Any) -> None:
    item = with_metadata(typing.get_args(alias)[0], (Field(description="how many"), *_marker(alias)))
    assert TypeAdapter(list[item]).json_schema()["items"]["description"] == "how many"  # type: ignore[valid-type]


# --- structures and JSON text ---------------------------------------------------------------------

JSON_CASES = [
    # (annotation, Field default, the plain annotation, values native)
    (LenientJson[list[int]], Field([], max_length=3), list[int], [[], [1], [1, 2, 3], [1, 2, 3, 4]]),
    (LenientJson[list[int]], Field([1], min_length=1), list[int], [[], [1], [1, 2]]),
    (LenientJson[dict[str, Any]], Field({}, max_length=1), dict[str, Any], [{}, {"a": 1}, {"a": 1, "b": 2}]),
]


@pytest.mark.parametrize(("annotation", "default", "plain", "values"), JSON_CASES)
def test_a_structure_bound_in_the_default_bounds_both_forms(
    annotation: Any, default: Any, plain: Any, values: Any
) -> None:
    model = _model(annotation, default)
    plain_model = _model(plain, default)
    host = _host(model)
    for value in values:
        expected = _verdict(plain_model, value)
        assert _verdict(model, value) == expected, value
        assert _verdict(model, json.dumps(value)) == expected, value
        assert host(value) is (expected != "refused"), value


@pytest.mark.parametrize(
    ("texts", "bounds"),
    [
        (["[]", "[1]", "[1,2,3]", "[1,2,3,4]", "[10,20]"], {"max_length": 5}),
        (["[]", "[1]", "[1,2]"], {"min_length": 3}),
        (["[]", "[1]", "[1,2]", "[1,2,3,4]"], {"min_length": 3, "max_length": 7}),
    ],
)
def test_json_text_lengths_in_the_default_bound_the_text(texts: list[str], bounds: dict[str, Any]) -> None:
    model = _model(JsonText[list[int]], Field("[1]", **bounds))
    plain_model = _model(str, Field("[1]", **bounds))
    host = _host(model)
    for text in texts:
        expected = _verdict(plain_model, text)
        assert _verdict(model, text) == expected, text
        assert host(text) is (expected != "refused"), text
        structure = json.loads(text)  # as a raw array: the text it becomes is bounded the same way
        assert _verdict(model, structure) == expected, text
        assert host(structure)  # hosts never see that text (docs/guarantees.md)
    text_form = input_schema(model, style="any-of")["properties"]["value"]["anyOf"][0]
    assert {key: text_form[key] for key in ("minLength", "maxLength") if key in text_form} == {
        {"min_length": "minLength", "max_length": "maxLength"}[name]: value for name, value in bounds.items()
    }


def test_the_unbounded_json_text_schema_is_unchanged() -> None:
    schema = input_schema(_model(JsonText[list[int]], "[]"), style="any-of")["properties"]["value"]
    assert "maxLength" not in json.dumps(schema)
    assert lenient_annotation(JsonText[list[int]]) == JsonText[list[int]]
