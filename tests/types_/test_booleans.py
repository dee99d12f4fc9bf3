from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from pydantic_lenient import StrictBoolish, input_schema
from tests.cases import Case, invalid_params, valid_params

CASES = [
    Case(
        StrictBoolish,
        [
            (True, True),
            (False, False),
            ("true", True),
            ("false", False),
            ("TRUE", True),
            ("False", False),
            ("tRuE", True),
            ("fAlSe", False),
        ],
        [
            "yes",
            "no",
            "on",
            "off",
            "1",
            "0",
            "t",
            "f",
            "y",
            "n",
            "",
            " true",
            "true ",
            "true\n",
            "truee",
            1,
            0,
            1.0,
            None,
            [],
            {},
            "null",
            "\uff54\uff52\uff55\uff45",
            "TRUE\u00a0",
        ],
        "StrictBoolish",
    )
]


@pytest.mark.parametrize(("annotation", "value", "expected"), valid_params(CASES))
def test_accepts(annotation: Any, value: Any, expected: bool) -> None:
    for strict in (None, True, False):
        assert TypeAdapter(annotation).validate_python(value, strict=strict) is expected


@pytest.mark.parametrize(("annotation", "value"), invalid_params(CASES))
def test_refuses_without_truthiness(annotation: Any, value: Any) -> None:
    for strict in (None, True, False):
        with pytest.raises(ValidationError) as caught:
            TypeAdapter(annotation).validate_python(value, strict=strict)
        (error,) = caught.value.errors()
        assert error["type"] == "lenient_bool"
        assert error["msg"] == "Input should be a boolean, or the string 'true' or 'false' in any letter case"


class Delete(BaseModel):
    dry_run: StrictBoolish = True


@pytest.mark.parametrize("text", ["false", "False", "FALSE"])
def test_false_never_becomes_true(text: str) -> None:
    assert Delete.model_validate({"dry_run": text}).dry_run is False
    assert Delete.model_validate_json(f'{{"dry_run": "{text}"}}').dry_run is False


def test_schema_widens_with_a_case_insensitive_pattern() -> None:
    assert input_schema(Delete, style="type-array")["properties"]["dry_run"] == {
        "type": ["boolean", "string"],
        "pattern": "^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$",
        "default": True,
        "title": "Dry Run",
    }
