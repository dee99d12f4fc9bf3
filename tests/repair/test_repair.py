from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.repair.engine import Repairer, RepairResult, repair_arguments
from pydantic_lenient.testing import Draft, host_validator
from tests.repair.test_repair_properties import assert_changes_only_where_reported
from tests.strategies import any_input, json_values

STEP = {"type": "object", "properties": {"n": {"type": "integer"}, "ok": {"type": "boolean"}}}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# (schema of one property "v", value sent, value expected after repair, kind or None)
CASES: list[tuple[str, dict[str, Any], Any, Any, str | None]] = [
    ("bool-lower", {"type": "boolean"}, "true", True, "string_to_boolean"),
    ("bool-any-case", {"type": "boolean"}, "FaLsE", False, "string_to_boolean"),
    ("bool-not-yes", {"type": "boolean"}, "yes", "yes", None),
    ("bool-not-1", {"type": "boolean"}, "1", "1", None),
    ("bool-or-string-keeps-false", {"type": ["boolean", "string"]}, "false", "false", None),
    ("int", {"type": "integer"}, "3", 3, "string_to_number"),
    ("int-from-3.0", {"type": "integer"}, "3.0", 3, "string_to_number"),
    ("int-keeps-5.5", {"type": "integer"}, "5.5", "5.5", None),
    ("int-from-exponent", {"type": "integer"}, "2e3", 2000, "string_to_number"),
    ("int-json-whitespace", {"type": "integer"}, " \t7\n", 7, "string_to_number"),
    ("int-no-plus", {"type": "integer"}, "+7", "+7", None),
    ("int-no-underscore", {"type": "integer"}, "1_000", "1_000", None),
    ("int-no-arabic-digits", {"type": "integer"}, "\u0663", "\u0663", None),
    ("int-no-nbsp", {"type": "integer"}, "\u00a07", "\u00a07", None),
    ("int-no-hex", {"type": "integer"}, "0x10", "0x10", None),
    ("int-no-overflow", {"type": "integer"}, "1e999", "1e999", None),
    ("int-leading-zeros", {"type": "integer"}, "007", 7, "string_to_number"),
    ("int-negative-leading-zeros", {"type": "integer"}, "-007", -7, "string_to_number"),
    ("int-minus-zero", {"type": "integer"}, "-0", 0, "string_to_number"),
    ("number-leading-zeros", {"type": "number"}, "007", 7, "string_to_number"),
    ("number-no-leading-zero-fraction", {"type": "number"}, "007.5", "007.5", None),
    ("int-no-digits-past-the-limit", {"type": "integer"}, "0" * 4301, "0" * 4301, None),
    ("number", {"type": "number"}, "-2.5", -2.5, "string_to_number"),
    ("number-int", {"type": "number"}, "4", 4, "string_to_number"),
    ("number-no-nan", {"type": "number"}, "NaN", "NaN", None),
    ("number-or-string-untouched", {"type": ["number", "string"]}, "4", "4", None),
    ("array-from-text", {"type": "array", "items": {"type": "string"}}, '["a"]', ["a"], "json_text_to_structure"),
    ("object-from-text", {"type": "object"}, '{"a": 1}', {"a": 1}, "json_text_to_structure"),
    ("array-not-from-object-text", {"type": "array"}, '{"a": 1}', '{"a": 1}', None),
    ("array-not-from-bad-json", {"type": "array"}, "[1,", "[1,", None),
    ("array-or-null", {"anyOf": [{"type": "array"}, {"type": "null"}]}, "[1]", [1], "json_text_to_structure"),
    ("array-or-string-untouched", {"anyOf": [{"type": "array"}, {"type": "string"}]}, "[1]", "[1]", None),
    ("array-from-text-twice", {"type": "array"}, '"[1, 2]"', [1, 2], "json_text_to_structure"),
    ("object-from-text-twice", {"type": "object"}, '" {\\"a\\": 1}"', {"a": 1}, "json_text_to_structure"),
    ("array-not-from-text-thrice", {"type": "array"}, '"\\"[1]\\""', '"\\"[1]\\""', None),
    ("array-not-from-quoted-word", {"type": "array"}, '"abc"', '"abc"', None),
    ("array-not-from-quoted-object-text", {"type": "array"}, '"{}"', '"{}"', None),
    ("quoted-text-where-strings-go-untouched", {"type": ["array", "string"]}, '"[1]"', '"[1]"', None),
    ("int-to-string", {"type": "string"}, 42, "42", "scalar_to_string"),
    ("float-to-string", {"type": "string"}, 1.5, "1.5", "scalar_to_string"),
    ("bool-to-string", {"type": "string"}, True, "true", "scalar_to_string"),
    ("no-string-where-number-too", {"type": ["string", "number"]}, 42, 42, None),
    ("int-to-string-or-null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, 8, "8", "scalar_to_string"),
    ("float-to-string-or-null", {"type": ["string", "null"]}, 2.5, "2.5", "scalar_to_string"),
    ("bool-to-string-or-integer", {"type": ["string", "integer"]}, True, "true", "scalar_to_string"),
    ("int-to-string-through-ref", {"$ref": "#/$defs/text"}, 7, "7", "scalar_to_string"),
    ("null-not-to-string", {"type": ["string", "integer"]}, None, None, None),
    ("null-stays", {"type": "string"}, None, None, None),
    ("enum-string-number", {"enum": [1, 2, 3]}, "2", 2, "string_to_number"),
    ("const-bool", {"const": True}, "true", True, "string_to_boolean"),
    (
        "allOf-intersection",
        {"allOf": [{"type": ["integer", "string"]}, {"type": ["integer", "null"]}]},
        "5",
        5,
        "string_to_number",
    ),
    ("oneOf-union", {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}, "true", True, "string_to_boolean"),
    ("ref-defs", {"$ref": "#/$defs/count"}, "9", 9, "string_to_number"),
    ("ref-definitions", {"$ref": "#/definitions/flag"}, "TRUE", True, "string_to_boolean"),
]
DEFINITIONS = {
    "$defs": {"count": {"type": "integer"}, "text": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    "definitions": {"flag": {"type": "boolean"}},
}


@pytest.mark.parametrize(("name", "schema", "value", "expected", "kind"), CASES, ids=[case[0] for case in CASES])
def test_coercions(name: str, schema: dict[str, Any], value: Any, expected: Any, kind: str | None) -> None:
    document = {**_object(v=schema, other={"type": "string"}), **DEFINITIONS, "required": ["v"]}
    arguments = {"v": value, "other": "42"}  # a string field next to the repaired one keeps "42"
    before = copy.deepcopy(arguments)
    result = repair_arguments(document, arguments)
    assert arguments == before
    assert result.arguments == {"v": expected, "other": "42"}
    assert type(result.arguments["v"]) is type(expected)
    assert [(repair["path"], repair["kind"]) for repair in result.repairs] == ([("/v", kind)] if kind else [])
    assert result.valid == host_validator(document).is_valid(result.arguments)


NESTED = {
    "type": "object",
    "$defs": {"Step": STEP},
    "properties": {
        "steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}},
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        "flags": {"type": "array", "items": {"type": "boolean"}},
        "maybe": {"anyOf": [_object(x={"type": "integer"}), {"type": "null"}]},
        "tags": {
            "type": "object",
            "patternProperties": {"^n_": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"},
        },
        "both": {"allOf": [_object(a={"type": "integer"}), _object(b={"type": "boolean"})]},
        "name": {"type": "string"},
        "deep": _object(inner=_object(value={"type": "number"})),
    },
}


def test_nested_locations_are_repaired_with_json_pointer_paths() -> None:
    arguments = {
        "steps": '[{"n": "4", "ok": "true"}, 7]',
        "pair": ["1", 2],
        "flags": ["true", "False", "maybe"],
        "maybe": {"x": "7"},
        "tags": {"n_a": "5", "other": "TRUE", "a/b~c": "true"},
        "both": {"a": "1", "b": "false"},
        "name": "42",
        "deep": {"inner": {"value": "1e2"}},
    }
    result = repair_arguments(NESTED, arguments)
    assert result.arguments == {
        "steps": [{"n": 4, "ok": True}, 7],
        "pair": [1, "2"],
        "flags": [True, False, "maybe"],
        "maybe": {"x": 7},
        "tags": {"n_a": 5, "other": True, "a/b~c": True},
        "both": {"a": 1, "b": False},
        "name": "42",
        "deep": {"inner": {"value": 100.0}},
    }
    paths = [repair["path"] for repair in result.repairs]
    assert "/steps" in paths
    assert "/steps/0/n" in paths
    assert "/tags/a~1b~0c" in paths
    assert "/name" not in paths


def test_draft_07_tuple_items() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        **_object(pair={"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "boolean"}}),
    }
    result = repair_arguments(schema, {"pair": ["3", "false", "x"]})
    assert result.arguments == {"pair": [3, False, "x"]}
    assert result.valid is False  # "x" is no boolean, and repair leaves it for the model to see


def test_valid_arguments_come_back_as_an_unchanged_copy() -> None:
    schema = _object(n={"type": "integer"}, s={"type": "string"}, o=_object())
    arguments = {"n": 1, "s": "x", "o": {"k": ["1"]}}
    result = repair_arguments(schema, arguments)
    assert result == RepairResult({"n": 1, "s": "x", "o": {"k": ["1"]}}, [], True, ())
    assert result.arguments is not arguments
    assert result.arguments["o"] is not arguments["o"]
    assert repair_arguments(schema, {"n": "1"}).arguments == {"n": 1}


def test_without_a_copy_what_repair_does_not_change_is_the_sent_value_itself() -> None:
    """``copy=False`` (the proxy's: it only writes the result out): a call that validates, that repair
    cannot change, or that is over the budget comes back as sent; a repaired one shares what repair
    did not visit (an undeclared member, which any schema takes)."""
    schema = _object(n={"type": "integer"}, o=_object(k={"type": "array", "items": {"type": "integer"}}))
    repairer = Repairer(schema)
    for sent in ({"n": 1, "o": {"k": [1]}}, {"n": "x", "o": {"k": [1]}}):
        assert repairer.repair(sent, copy=False).arguments is sent
        assert repairer.repair(sent, copy=False) == repairer.repair(sent)
    huge = {"n": "1", "o": {"k": ["1"] * 50}}
    starved = Repairer(schema, budget=20).repair(huge, copy=False)
    assert starved.arguments is huge
    assert starved == Repairer(schema, budget=20).repair(huge)
    sent = {"n": "1", "free": {"deep": [1, {"x": "2"}]}}
    shared, copied = repairer.repair(sent, copy=False), repairer.repair(sent)
    assert shared == copied
    assert shared.arguments == {"n": 1, "free": {"deep": [1, {"x": "2"}]}}
    assert shared.arguments["free"] is sent["free"]
    assert copied.arguments["free"] is not sent["free"]
    assert sent == {"n": "1", "free": {"deep": [1, {"x": "2"}]}}  # never mutated


THOUGHT = {**_object(thoughtNumber={"type": "integer"}, nextThought={"type": "boolean"}), "required": ["thoughtNumber"]}


@pytest.mark.parametrize(
    ("schema", "sent", "expected", "renamed"),
    [
        pytest.param(THOUGHT, {"thought_number": 3}, {"thoughtNumber": 3}, ["thought_number"], id="snake"),
        pytest.param(THOUGHT, {"thought-number": "3"}, {"thoughtNumber": 3}, ["thought-number"], id="kebab-and-value"),
        pytest.param(
            THOUGHT,
            {"ThoughtNumber": 3, "next_thought": "true"},
            {"thoughtNumber": 3, "nextThought": True},
            ["ThoughtNumber", "next_thought"],
            id="pascal-and-two",
        ),
        pytest.param(
            _object(thoughtNumber={"type": "integer"}),
            {"thought_number": 3},
            {"thought_number": 3},
            [],
            id="valid-as-sent",
        ),
        pytest.param(
            THOUGHT,
            {"thought_number": 3, "thoughtNumber": "x"},
            {"thought_number": 3, "thoughtNumber": "x"},
            [],
            id="target-sent",
        ),
        pytest.param(
            THOUGHT,
            {"thought_number": 3, "THOUGHT_NUMBER": 4},
            {"thought_number": 3, "THOUGHT_NUMBER": 4},
            [],
            id="two-claims",
        ),
        pytest.param(
            {**THOUGHT, "properties": {**THOUGHT["properties"], "thought_number": {"type": "string"}}},
            {"Thought-Number": 3},
            {"Thought-Number": 3},
            [],
            id="two-declared-fold-alike",
        ),
        pytest.param(
            {**THOUGHT, "patternProperties": {"_": {}}},
            {"thought_number": 3},
            {"thought_number": 3},
            [],
            id="pattern-claims-key",
        ),
        pytest.param(
            _object(step={**THOUGHT, "type": "object"}),
            {"step": {"thought_number": "2"}},
            {"step": {"thoughtNumber": 2}},
            ["thought_number"],
            id="nested",
        ),
        pytest.param(
            {"allOf": [{"$ref": "#/$defs/t"}], "$defs": {"t": THOUGHT}},
            {"thought_number": 1},
            {"thoughtNumber": 1},
            ["thought_number"],
            id="through-ref",
        ),
    ],
)
def test_names_in_another_case_convention(
    schema: dict[str, Any], sent: dict[str, Any], expected: dict[str, Any], renamed: list[str]
) -> None:
    result = repair_arguments(schema, sent)
    assert result.arguments == expected
    renames = [repair for repair in result.repairs if repair["kind"] == "renamed_key"]
    assert [repair["from"] for repair in renames] == renamed
    for repair in renames:
        assert repair["path"].endswith("/" + repair["from"])
        assert repair["to"] in result.arguments or repair["to"] in result.arguments.get("step", {})


def test_never_adds_removes_or_defaults() -> None:
    schema = {**_object(a={"type": "integer", "default": 5}), "required": ["a"], "additionalProperties": False}
    result = repair_arguments(schema, {"b": "1"})
    assert result.arguments == {"b": "1"}
    assert result.repairs == []
    assert result.valid is False


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"$ref": "#/$defs/missing"},
        {"$ref": "https://example.invalid/remote.json"},
        {"anyOf": [{"anyOf": [{"anyOf": [{"type": "integer"}]}]}]},
    ],
)
def test_ref_cycles_and_unresolvable_refs_are_bounded(schema: dict[str, Any]) -> None:
    result = Repairer(schema).repair({"a": "1"})
    assert result.arguments == {"a": "1"}


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "arguments",
    [
        {"v": "[" * 100_000 + "]" * 100_000},
        {"v": "9" * 1_000_000},
        {"v": _nested(5_000, "1")},
        {"v": "[" + "1," * 600_000 + "1]"},
    ],
    ids=["deep-text", "huge-digits", "deep-structure", "long-text"],
)
def test_hostile_input_gets_bounded_work(arguments: dict[str, Any]) -> None:
    recursive = {
        "$defs": {"r": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/r"}}, {"type": "integer"}]}},
        **_object(v={"$ref": "#/$defs/r"}),
    }
    result = Repairer(recursive, max_text_length=1_000_000).repair(arguments)
    assert isinstance(result.valid, bool)


def test_a_huge_schema_or_call_stops_at_the_budget() -> None:
    schema = _object(**{f"f{index}": {"type": "integer"} for index in range(50)})
    arguments = {f"f{index}": str(index) for index in range(50)}
    assert len(Repairer(schema).repair(arguments).repairs) == 50
    starved = Repairer(schema, budget=10).repair(arguments)
    assert (starved.arguments, starved.repairs, starved.valid) == (arguments, [], False)
    assert len(starved.reasons) == 10  # max_reasons of the 50 errors
    assert starved.reasons[0] == {"path": "/f0", "message": '"0" is not of type "integer"'}


def test_repairs_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="pydantic_lenient.repair"):
        repair_arguments(_object(n={"type": "integer"}), {"n": "1"})
    (record,) = caplog.records
    assert record.repairs == [{"path": "/n", "from": "1", "to": 1, "kind": "string_to_number"}]  # type: ignore[attr-defined]


# ---- properties, on arbitrary values against the nested schema above

_arguments = st.dictionaries(
    st.sampled_from(sorted(NESTED["properties"])), st.one_of(any_input, json_values), max_size=5
)


@given(arguments=_arguments)
def test_repair_never_changes_valid_arguments(arguments: dict[str, Any]) -> None:
    if host_validator(NESTED).is_valid(arguments):
        assert repair_arguments(NESTED, arguments).arguments == arguments


@given(arguments=_arguments)
def test_repair_is_idempotent(arguments: dict[str, Any]) -> None:
    once = repair_arguments(NESTED, arguments)
    twice = repair_arguments(NESTED, once.arguments)
    assert twice.arguments == once.arguments
    assert twice.repairs == []


@given(arguments=_arguments)
def test_repair_without_a_copy_gives_the_same_result(arguments: dict[str, Any]) -> None:
    sent = copy.deepcopy(arguments)
    repairer = Repairer(NESTED)
    assert repairer.repair(arguments, copy=False) == repairer.repair(arguments)
    assert arguments == sent


@given(arguments=_arguments)
def test_output_changes_only_at_reported_paths(arguments: dict[str, Any]) -> None:
    result = repair_arguments(NESTED, arguments)
    assert_changes_only_where_reported(arguments, result.arguments, result.repairs)
    assert result.valid == host_validator(NESTED).is_valid(result.arguments)


# ---- the official JSON Schema Test Suite: arbitrary schemas and instances

SUITE = Path(__file__).parent.parent / "data" / "json-schema-test-suite"
SUITE_GROUPS = [
    pytest.param(group, draft, id=f"{draft}/{path.stem}/{index}")
    for draft in ("draft2020-12", "draft7")
    for path in sorted((SUITE / draft).glob("*.json"))
    for index, group in enumerate(json.loads(path.read_text(encoding="utf-8")))
]


@pytest.mark.parametrize(("group", "draft"), SUITE_GROUPS)
def test_suite_valid_instances_are_never_changed_and_nothing_crashes(group: dict[str, Any], draft: str) -> None:
    schema = group["schema"]
    draft_name: Draft = "07" if draft == "draft7" else "2020-12"
    validator = host_validator(schema, draft=draft_name, check=False)  # the suite uses ECMA-only patterns
    repairer = Repairer(schema, draft=draft_name)
    for test in group["tests"]:
        assert validator.is_valid(test["data"]) == test["valid"], test["description"]  # ECMA patterns hold
        result = repairer.repair(test["data"])
        if test["valid"]:
            assert result.arguments == test["data"], test["description"]
            assert result.repairs == []
        assert result.valid == validator.is_valid(result.arguments)


def test_error_details_name_errors_as_pydantic_does() -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "dry_run": {"type": ["boolean", "null"]},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "either": {"type": ["integer", "string"]},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    sent = {"limit": 0, "dry_run": "yes", "ids": [1, "two"], "either": None, "old_query": "x", "q": "y"}
    details = {(detail["type"], detail["loc"]) for detail in Repairer(schema).error_details(sent)}
    assert details == {
        ("minimum", ("limit",)),
        ("bool_type", ("dry_run",)),
        ("int_type", ("ids", 1)),
        ("type", ("either",)),  # two types it could have been: no one pydantic name
        ("extra_forbidden", ("old_query",)),
        ("extra_forbidden", ("q",)),
        ("missing", ("query",)),
    }
    assert Repairer(schema).error_details({"query": "x"}) == []
    assert Repairer({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}).error_details({"a": 1}) == []
