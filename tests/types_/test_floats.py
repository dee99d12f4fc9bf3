from __future__ import annotations

import math
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from pydantic_lenient import LenientFloat, input_schema
from pydantic_lenient.types.exact_leaves import ExactNumber
from tests.cases import Case, invalid_params, valid_params

CASES = [
    Case(
        LenientFloat,
        [
            (1.5, 1.5),
            (10, 10.0),
            ("10", 10.0),
            ("-1.5", -1.5),
            ("2e3", 2000.0),
            ("2E+3", 2000.0),
            ("-0", -0.0),
            ("0.25", 0.25),
            ("1e-400", 0.0),
            (10**20, 1e20),
        ],
        [
            True,
            False,
            None,
            float("nan"),
            float("inf"),
            -float("inf"),
            "nan",
            "NaN",
            "inf",
            "Infinity",
            "-Infinity",
            "1e999",
            " 1",
            "1 ",
            "+1",
            "01",
            ".5",
            "5.",
            "1_0",
            "1,5",
            "0x1p3",
            "\u0663",
            "",
            "abc",
            [],
            {},
            10**400,
        ],
        "LenientFloat",
    )
]


@pytest.mark.parametrize(("annotation", "value", "expected"), valid_params(CASES))
def test_accepts(annotation: Any, value: Any, expected: float) -> None:
    result = TypeAdapter(annotation).validate_python(value)
    assert type(result) is float
    assert result == expected
    assert math.copysign(1, result) == math.copysign(1, expected)


@pytest.mark.parametrize(("annotation", "value"), invalid_params(CASES))
def test_refuses_with_one_lenient_float_error(annotation: Any, value: Any) -> None:
    for strict in (None, True, False):
        with pytest.raises(ValidationError) as caught:
            TypeAdapter(annotation).validate_python(value, strict=strict)
        assert [error["type"] for error in caught.value.errors()] == ["lenient_float"]
        assert caught.value.errors()[0]["msg"] == (
            "Input should be a finite number, or a string holding one in JSON number syntax"
        )


BEYOND_64_BITS = {"2**63": 2**63, "10**21": 10**21, "-10**21": -(10**21), "10**308": 10**308, "10**309": 10**309}


def _verdict(validate: Any, value: Any) -> Any:
    try:
        return validate(value)
    except ValidationError as error:
        return [e["type"] for e in error.errors()]


@pytest.mark.parametrize("value", BEYOND_64_BITS.values(), ids=BEYOND_64_BITS.keys())
@pytest.mark.parametrize(
    ("annotation", "error_type"),
    [(LenientFloat, "lenient_float"), (Annotated[float, ExactNumber()], "exact_float")],
    ids=["LenientFloat", "ExactNumber"],
)
def test_an_integer_beyond_64_bits_gets_one_verdict_from_python_and_from_json(
    annotation: Any, error_type: str, value: int
) -> None:
    """pydantic-core 2.33 (the lowest pin) reads a JSON integer this large as no float at all."""
    adapter = TypeAdapter(annotation)
    expected = float(value) if value < 10**309 else [error_type]
    assert _verdict(adapter.validate_python, value) == expected
    assert _verdict(adapter.validate_json, str(value)) == expected


class Scaled(BaseModel):
    ratio: Annotated[LenientFloat, Field(gt=0, le=1)] = 0.5


def test_added_bounds_apply_to_both_forms_and_become_standard_keywords() -> None:
    assert Scaled.model_validate({"ratio": "0.25"}).ratio == 0.25
    for value in ("0", 0, "1.5", 1.5):
        with pytest.raises(ValidationError):
            Scaled.model_validate({"ratio": value})
    schema = input_schema(Scaled, style="type-array")["properties"]["ratio"]
    assert schema["exclusiveMinimum"] == 0
    assert schema["maximum"] == 1
    assert schema["type"] == ["number", "string"]
