"""The contract checked against Ajv 8, the validator JS hosts (Claude Code, Gemini CLI, ...) run.

One node process validates a fixed corpus of hostile and ordinary values against every advertised
schema; the model must agree with every verdict, within the README's listed exceptions.
"""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest
from pydantic import create_model

from pydantic_lenient import Style, input_schema
from tests.conftest import AjvRunner
from tests.contract import FIXED_VALUES, JSON_CORPUS, SCALAR_TYPES, agrees, server_verdict, tool_model
from tests.strategies import JS_SAFE_INTEGER


def _corpus() -> list[Any]:
    """The fixed values plus a seeded sample of numbers, digit strings and boolean spellings."""
    rng = random.Random(20261122)
    values = list(FIXED_VALUES)
    for _ in range(150):
        number = rng.randint(-JS_SAFE_INTEGER, JS_SAFE_INTEGER) >> rng.randint(0, 52)
        values += [number, str(number), f"{number}.0", float(number) / 4]
        word = rng.choice(["true", "false"])
        values.append("".join(c.upper() if rng.random() < 0.5 else c for c in word))
        junk = "".join(rng.choice("0123456789-+._ eE\u0663") for _ in range(rng.randint(0, 6)))
        values.append(junk)
    return values


CORPUS = _corpus()
SOURCES = ("type-array", "any-of", "pydantic-default")


def _schema(model: Any, source: str) -> dict[str, Any]:
    if source == "pydantic-default":
        schema: dict[str, Any] = model.model_json_schema()
        return schema
    return input_schema(model, style=source)  # type: ignore[arg-type]


def test_ajv_and_the_model_agree_on_every_value(ajv: AjvRunner) -> None:
    combinations = [
        (name, optional, source, draft)
        for name in SCALAR_TYPES
        for optional in (False, True)
        for source in SOURCES
        for draft in ("2020-12", "07")
    ]
    models = {
        (name, optional): tool_model(SCALAR_TYPES[name][0], optional=optional)
        for name in SCALAR_TYPES
        for optional in (False, True)
    }
    arguments = [{"value": value} for value in CORPUS]
    results = ajv(
        [
            {
                "schema": _schema(models[name, optional], source),
                "values": arguments,
                "draft": draft,
                "options": {},
            }
            for name, optional, source, draft in combinations
        ]
    )
    disagreements = []
    for (name, optional, source, draft), result in zip(combinations, results, strict=True):
        assert result["compile_error"] is None, (name, source, draft, result["compile_error"])
        model = models[name, optional]
        for value, host_accepts in zip(CORPUS, result["verdicts"], strict=True):
            verdict = server_verdict(model, {"value": value})
            # pydantic's own generator: the types write their part of the portable shape (issue 33).
            if not agrees(host_accepts, value, verdict, portable=source == "pydantic-default"):
                disagreements.append((name, optional, source, draft, value, host_accepts, verdict.errors))
    assert not disagreements, disagreements[:10]


@pytest.mark.parametrize("name", list(SCALAR_TYPES))
def test_any_of_style_compiles_under_strict_ajv_and_type_array_needs_union_types(ajv: AjvRunner, name: str) -> None:
    model = tool_model(SCALAR_TYPES[name][0], optional=True)
    strict = {"strict": True}
    any_of, type_array = input_schema(model, style="any-of"), input_schema(model, style="type-array")
    refused, allowed, clean = ajv(
        [
            {"schema": type_array, "values": [], "draft": "2020-12", "options": strict},
            {
                "schema": type_array,
                "values": [],
                "draft": "2020-12",
                "options": {**strict, "allowUnionTypes": True},
            },
            {"schema": any_of, "values": [], "draft": "2020-12", "options": strict},
        ]
    )
    assert refused["compile_error"] is not None
    assert "union type" in refused["compile_error"]
    assert allowed["compile_error"] is None, allowed["compile_error"]
    assert clean["compile_error"] is None, clean["compile_error"]


def test_ajv_and_the_model_agree_on_json_shaped_fields(ajv: AjvRunner) -> None:
    from tests.types_.test_json_values import JSON_FIELDS, Tool

    # pydantic's own set[str] is left out: it advertises uniqueItems and then deduplicates (see
    # test_pydantic_sets_accept_duplicates_their_schema_refuses).
    cases = [(field, style) for field in JSON_FIELDS if field != "tags" for style in SOURCES]
    schemas = {style: _schema(Tool, style) for style in SOURCES}
    arguments = {field: [{field: value} for value in JSON_CORPUS] for field in JSON_FIELDS}
    results = ajv(
        [
            {
                "schema": schemas[style],
                "values": arguments[field],
                "draft": "2020-12",
                "options": {"strict": False},
            }
            for field, style in cases
        ]
    )
    disagreements = []
    for (field, style), result in zip(cases, results, strict=True):
        assert result["compile_error"] is None, (style, result["compile_error"])
        for value, host_accepts in zip(JSON_CORPUS, result["verdicts"], strict=True):
            verdict = server_verdict(Tool, {field: value})
            # The listed exception: a host cannot check that a string holds valid JSON of T.
            if host_accepts != verdict.accepted and not (host_accepts and isinstance(value, str)):
                disagreements.append((field, style, value, host_accepts, verdict.errors))
    assert not disagreements, disagreements[:10]


@pytest.mark.parametrize("draft", ["2020-12", "07"])
def test_json_shaped_fields_compile_in_hosts_default_ajv(ajv: AjvRunner, draft: str) -> None:
    from tests.types_.test_json_values import Tool

    # Ajv's default is strict mode. Tuples are 2020-12 only (prefixItems), so draft-07 leaves them out.
    model = Tool if draft == "2020-12" else create_model("NoTuple", __base__=Tool, pair=(Optional[int], None))
    setups: list[tuple[Style, dict[str, Any]]] = [
        ("any-of", {}),
        ("any-of", {"strict": True}),
        ("type-array", {"allowUnionTypes": True}),
    ]
    cases = [
        {"schema": input_schema(model, style=style), "values": [], "draft": draft, "options": options}
        for style, options in setups
    ]
    results = ajv(cases)
    assert [result["compile_error"] for result in results] == [None, None, None]


def test_pydantic_sets_accept_duplicates_their_schema_refuses(ajv: AjvRunner) -> None:
    """A known pydantic behaviour (README, "The contract"), pinned so a change in pydantic is noticed."""
    model = create_model("Tags", tags=(set[str], ...))
    (result,) = ajv(
        [{"schema": input_schema(model), "values": [{"tags": ["a", "a"]}], "draft": "2020-12", "options": {}}]
    )
    assert result["verdicts"] == [False]
    assert getattr(model.model_validate({"tags": ["a", "a"]}), "tags") == {"a"}  # noqa: B009
