"""The contract, for every lenient scalar, required or Optional, under every schema style.

A JSON value passes the advertised schema (checked by a real validator reading patterns as ECMA-262)
if and only if the model accepts it, except for the README's listed exceptions.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given
from pydantic import BaseModel

from pydantic_lenient import input_schema
from pydantic_lenient.testing import Draft, host_validator
from tests.contract import SCALAR_TYPES, agrees, server_verdict, server_verdict_json, tool_model
from tests.strategies import any_input

SCHEMA_SOURCES = ("type-array", "any-of", "pydantic-default")


@functools.cache
def _model(name: str, optional: bool) -> type[BaseModel]:
    return tool_model(SCALAR_TYPES[name][0], optional=optional)


@functools.cache
def _host(name: str, optional: bool, source: str, draft: Draft) -> Any:
    model = _model(name, optional)
    schema = model.model_json_schema() if source == "pydantic-default" else input_schema(model, style=source)  # type: ignore[arg-type]
    return host_validator(schema, draft=draft)


CASES = [
    pytest.param(name, optional, source, id=f"{name}{'-optional' if optional else ''}-{source}")
    for name in SCALAR_TYPES
    for optional in (False, True)
    for source in SCHEMA_SOURCES
]


@pytest.mark.parametrize(("name", "optional", "source"), CASES)
@given(value=any_input)
def test_host_accepts_exactly_what_the_model_accepts(name: str, optional: bool, source: str, value: Any) -> None:
    arguments = {"value": value}
    verdict = server_verdict(_model(name, optional), arguments)
    for draft in ("2020-12", "07"):
        host_accepts = _host(name, optional, source, draft).is_valid(arguments)
        # pydantic's own generator: the types write their part of the portable shape (issue 33).
        assert agrees(host_accepts, value, verdict, portable=source == "pydantic-default"), (
            f"draft {draft}: host {'accepts' if host_accepts else 'rejects'} {value!r}, "
            f"model says {verdict.errors or 'ok'}"
        )


@pytest.mark.parametrize("optional", [False, True], ids=["required", "optional"])
@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@given(value=any_input)
def test_strict_style_admits_canonical_values_exactly(name: str, optional: bool, value: Any) -> None:
    """The strict style advertises canonical types only: the model still takes the string forms
    (that is the style's point), and on every other value host and model agree."""
    arguments = {"value": value}
    verdict = server_verdict(_model(name, optional), arguments)
    host_accepts = host_validator(input_schema(_model(name, optional), style="strict")).is_valid(arguments)
    if isinstance(value, str):
        assert verdict.accepted or not host_accepts
    else:
        assert agrees(host_accepts, value, verdict), (value, verdict)


@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@given(value=any_input)
def test_python_and_json_input_get_the_same_verdict(name: str, value: Any) -> None:
    model = _model(name, True)
    arguments = {"value": value}
    in_python = server_verdict(model, arguments)
    in_json = server_verdict_json(model, arguments)
    assert in_python.accepted == in_json.accepted, (value, in_python, in_json)
    assert [e["type"] for e in in_python.errors] == [e["type"] for e in in_json.errors]
    if in_python.accepted:
        assert model.model_validate(arguments) == model.model_validate_json(json.dumps(arguments))


@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@given(value=any_input)
def test_runtime_strictness_changes_nothing(name: str, value: Any) -> None:
    """The annotation decides: strict=True and strict=False at call time give the same result."""
    model = _model(name, True)
    arguments = {"value": value}
    verdicts = {strict: server_verdict(model, arguments, strict=strict) for strict in (None, True, False)}
    assert verdicts[True] == verdicts[None] == verdicts[False], (value, verdicts)
    if verdicts[None].accepted:
        results = {repr(model.model_validate(arguments, strict=strict)) for strict in (None, True, False)}
        assert len(results) == 1, results
