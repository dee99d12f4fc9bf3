"""Table-driven cases in the annotated-types style: an annotation, what it takes, what it refuses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Case:
    annotation: Any
    valid: Sequence[tuple[Any, Any]]  # (input, expected value)
    invalid: Sequence[Any]
    id: str


def valid_params(cases: Sequence[Case]) -> list[Any]:
    return [
        pytest.param(case.annotation, value, expected, id=f"{case.id}-{value!r:.30}")
        for case in cases
        for value, expected in case.valid
    ]


def invalid_params(cases: Sequence[Case]) -> list[Any]:
    return [
        pytest.param(case.annotation, value, id=f"{case.id}-{value!r:.30}") for case in cases for value in case.invalid
    ]
