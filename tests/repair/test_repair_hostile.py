"""Schemas and arguments from someone who means harm: nothing fetched, nothing raised, nothing hangs.

Every case runs under a generous hang guard (a thread with a time limit): a failure here is a
verdict, never a timing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from pydantic_lenient.repair.budget import (
    MAX_ANALYSIS,
    MAX_NESTING,
    MAX_REFERENCES,
    MAX_SCHEMA_VALUES,
    schema_refusal,
)
from pydantic_lenient.repair.engine import Repairer, RepairResult, repair_arguments
from tests.guards import within_guard
from tests.local_http import serving

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@dataclass(frozen=True)
class Case:
    """A schema and arguments, what repair must return (``after``: the arguments, unchanged when
    None) and a piece of the first reason when invalid."""

    id: str
    schema: Any
    arguments: Any
    valid: bool
    after: Any = None
    reason: str | None = None
    kinds: list[str] = field(default_factory=list)


def _deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(depth):
        schema = {"not": schema}
    return schema


def _doubling(keyword: str, levels: int) -> dict[str, Any]:
    definitions: dict[str, Any] = {"d0": {"type": "integer"}}
    for level in range(1, levels):
        definitions[f"d{level}"] = {keyword: [{"$ref": f"#/$defs/d{level - 1}"}] * 2}
    return {"$defs": definitions, "properties": {"a": {"$ref": f"#/$defs/d{levels - 1}"}}}


def _chain(key: str, depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {key: value}
    return value


CATASTROPHIC = "^(a+)+$"
LOOKAROUND_BLOWUP = "^(?:(?=a)a|(?=a)a)*$"

CASES = [
    # Patterns: bounded, exact, and never Python's `re`.
    Case("nested-quantifier", _object(a={"type": "string", "pattern": CATASTROPHIC}), {"a": "a" * 28 + "!"}, False),
    Case(
        "nested-quantifier-long",
        _object(a={"type": "string", "pattern": CATASTROPHIC}),
        {"a": "a" * 50_000 + "!"},
        False,
    ),
    Case("nested-quantifier-match", _object(a={"type": "string", "pattern": CATASTROPHIC}), {"a": "a" * 50_000}, True),
    Case("alternation-star", _object(a={"type": "string", "pattern": "^(a|a)*$"}), {"a": "a" * 30}, True),
    Case(
        "lookaround-backtracking-limit",
        _object(a={"type": "string", "pattern": LOOKAROUND_BLOWUP}),
        {"a": "a" * 40 + "!"},
        False,
        reason="backtracking",
    ),
    Case(
        "pattern-properties-key",
        {"patternProperties": {CATASTROPHIC: {"type": "integer"}}, "additionalProperties": False},
        {"a" * 28 + "!": 1},
        False,
    ),
    Case(
        "property-names",
        {"propertyNames": {"pattern": CATASTROPHIC}},
        {"a" * 28 + "!": 1},
        False,
    ),
    Case(
        "huge-repetition",
        _object(a={"type": "string", "pattern": "(?:(?:a{1000}){1000}){1000}"}),
        {"a": "a"},
        False,
        reason="too large",
    ),
    Case("invalid-pattern", _object(a={"type": "string", "pattern": "("}), {"a": "x"}, False, reason="ECMA-262"),
    Case("invalid-in-u-mode", _object(a={"type": "string", "pattern": "^]$"}), {"a": "]"}, False, reason="ECMA-262"),
    Case(
        "backreference",
        _object(a={"type": "string", "pattern": "^(a)\\1$"}),
        {"a": "aa"},
        False,
        reason="backreference",
    ),
    Case("backreference-not-a-string", _object(a={"pattern": "^(a)\\1$"}), {"a": 1}, True),
    Case("lookbehind", _object(a={"type": "string", "pattern": "(?<=a)b"}), {"a": "ab"}, False, reason="lookbehind"),
    Case(
        "undecidable-pattern-property",
        {"patternProperties": {"^(a)\\1$": {"type": "integer"}}},
        {"aa": "1"},
        False,
        reason="backreference",
    ),
    Case(
        "unicode-property-under-own-schema",
        _object(a={"$schema": DRAFT_07, "type": "string", "pattern": "^\\p{Letter}+$"}),
        {"a": "é"},
        True,
    ),
    Case(
        "unicode-property-under-own-schema-refused",
        _object(a={"$schema": DRAFT_07, "type": "string", "pattern": "^\\p{Letter}+$"}),
        {"a": "1"},
        False,
    ),
    Case(
        "unicode-property-pattern-properties",
        {"patternProperties": {"^\\p{Letter}$": {"type": "integer"}}, "additionalProperties": False},
        {"é": "1"},
        True,
        after={"é": 1},
        kinds=["string_to_number"],
    ),
    Case(
        "two-spellings-of-one-pattern",
        {"patternProperties": {".": {"type": "integer"}, "[^\\n\\r\\u2028\\u2029]": {"minimum": 5}}},
        {"a": "3"},
        False,
        after={"a": 3},
        kinds=["string_to_number"],
        reason="less than",
    ),
    Case("dot-and-carriage-return", _object(a={"type": "string", "pattern": "^.$"}), {"a": "\r"}, False),
    Case("dollar-before-newline", _object(a={"type": "string", "pattern": "^[0-9]+$"}), {"a": "100\n"}, False),
    # Malformed schemas: valid=False with the reason, never an exception.
    Case("properties-list", {"properties": []}, {"a": 1}, False, reason="is not of type"),
    Case("required-number", {"required": 5}, {"a": 1}, False, reason="(at /required)"),
    Case(
        "unusable-schema-repairs-nothing",
        {**_object(n={"type": "integer"}), "required": 5},
        {"n": "1"},
        False,
        after={"n": "1"},
        reason="cannot be used",
    ),
    Case("minimum-string", {"minimum": "x"}, {"a": 1}, False, reason="(at /minimum)"),
    Case("type-number", {"type": 5}, {"a": 1}, False, reason="(at /type)"),
    Case("array-items-in-2020-12", {"items": [{"type": "integer"}]}, [1], False, reason="(at /items)"),
    Case("not-a-schema", [1, 2], {"a": 1}, False, reason="not list"),
    Case("pattern-property-not-a-string", {"patternProperties": {1: {}}}, {"a": 1}, False, reason="not a string"),
    Case("deep-schema", _deep_schema(MAX_NESTING + 5), {}, False, reason="nests deeper"),
    # References: inside the schema only, and read as the validator reads them.
    Case(
        "anchor",
        {"properties": {"a": {"$ref": "#count"}}, "$defs": {"c": {"$anchor": "count", "type": "integer"}}},
        {"a": "5"},
        True,
        after={"a": 5},
        kinds=["string_to_number"],
    ),
    Case(
        "anchor-not-the-root",
        {"properties": {"a": {"$ref": "#count"}}, "$defs": {"c": {"$anchor": "count", "type": "integer"}}},
        {"a": {"a": "5"}},
        False,
    ),
    Case(
        "nested-id",
        {
            "$defs": {"n": {"type": "integer"}},
            "properties": {
                "a": {
                    "$id": "https://tools.test/sub",
                    "$defs": {"n": {"type": "boolean"}},
                    "properties": {"b": {"$ref": "#/$defs/n"}},
                }
            },
        },
        {"a": {"b": "true"}},
        True,
        after={"a": {"b": True}},
        kinds=["string_to_boolean"],
    ),
    Case(
        "draft-07-ref-overrides-siblings",
        {
            "$schema": DRAFT_07,
            "definitions": {"i": {"type": "integer"}},
            "properties": {"x": {"$ref": "#/definitions/i", "type": "string"}},
        },
        {"x": 5},
        True,
    ),
    Case(
        "draft-07-no-prefix-items",
        {
            "$schema": DRAFT_07,
            "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}},
            "required": ["q"],
        },
        {"p": ["1"]},
        False,
    ),
    Case(
        "2020-12-prefix-items",
        {"properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}}, "required": ["q"]},
        {"p": ["1"]},
        False,
        after={"p": [1]},
        kinds=["string_to_number"],
    ),
    Case(
        "ref-cycle",
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"a": "1"},
        False,
    ),
    Case(
        "missing-pointer",
        {"properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"a": "1"},
        False,
        reason="/$defs/missing",
    ),
    # Combinators that multiply the validator's work.
    Case("any-of-doubling", _doubling("anyOf", 40), {"a": "x"}, False, reason="subschemas"),
    Case("all-of-doubling", _doubling("allOf", 40), {"a": 1}, False, reason="subschemas"),
    Case(
        "doubling-per-level",
        {"type": "object", "allOf": [_object(a={"$ref": "#"}), _object(a={"$ref": "#"})]},
        _chain("a", 40),
        False,
        reason="subschemas",
    ),
    # Odd arguments.
    Case(
        "lone-surrogate-json-text",
        _object(a={"type": "array"}),
        {"a": '["\ud800"]'},
        False,
        reason="cannot be validated",
    ),
    Case("lone-surrogate-string", _object(a={"type": "string"}), {"a": "\ud800"}, True),  # as in JS
    Case(
        "lone-surrogate-pattern",
        _object(a={"type": "string", "pattern": "^.$"}),
        {"a": "\ud800"},
        False,
        reason="cannot be validated",
    ),
    Case("huge-integer-for-a-string", _object(a={"type": "string"}), {"a": 10**5000}, False),
    Case("not-json", _object(a={"type": "string"}), {"a": object()}, False, reason="cannot be validated"),
    Case("key-not-a-string", _object(a={"type": "string"}), {1: "x"}, False, reason="cannot be validated"),
    Case("deep-arguments", _object(v={}), {"v": _chain("v", 100_000)}, False, reason="nest deeper"),
    Case("nan", _object(a={"type": "number"}), {"a": float("nan")}, False),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_case(case: Case) -> None:
    result = within_guard(lambda: repair_arguments(case.schema, case.arguments))
    assert isinstance(result, RepairResult)
    assert result.valid is case.valid, result.reasons
    if case.after is not None:
        assert result.arguments == case.after
    assert [repair["kind"] for repair in result.repairs] == case.kinds
    if case.valid:
        assert result.reasons == ()
    else:
        assert result.reasons, "an invalid result says why"
        assert all(set(reason) == {"path", "message"} for reason in result.reasons)
    if case.reason is not None:
        assert case.reason in result.reasons[0]["message"], result.reasons


# ---- nothing reaches the network


class _Counter(BaseHTTPRequestHandler):
    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = b'{"type": "integer"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves a schema for any path and counts the requests it gets."""
    requests: list[str] = []
    with serving(type("Handler", (_Counter,), {"requests": requests})) as url:
        yield url, requests


def _remote_schemas(url: str) -> list[Any]:
    return [
        _object(a={"$ref": f"{url}/x.json"}),
        {"$id": f"{url}/root.json", **_object(a={"$ref": "x.json"})},
        {"$id": f"{url}/root.json", **_object(a={"$ref": "x.json#/definitions/n"})},
        _object(a={"$id": f"{url}/dir/", "$ref": "y.json"}),
        {"$schema": DRAFT_07, **_object(a={"$ref": f"{url}/x.json"})},
        {"$schema": DRAFT_07, "$id": f"{url}/root.json", **_object(a={"$ref": "x.json"})},
        _object(a={"$dynamicRef": f"{url}/x.json"}),
        {"$schema": f"{url}/meta.json", **_object(a={"type": "integer"})},
        {"$ref": f"{url}/root.json"},
    ]


def test_no_schema_reaches_the_network(server: tuple[str, list[str]]) -> None:
    url, requests = server
    for schema in _remote_schemas(url):
        repairer = within_guard(lambda schema=schema: Repairer(schema))  # type: ignore[misc]
        for arguments in ({"a": "1"}, {}, {"a": {"b": 1}}):
            result = within_guard(lambda arguments=arguments, repairer=repairer: repairer.repair(arguments))  # type: ignore[misc]
            if repairer.schema_error is not None:
                assert result.valid is False
                assert result.reasons[0]["message"].startswith("the schema cannot be used")
    assert requests == []


def test_a_remote_ref_is_refused_with_a_reason(server: tuple[str, list[str]]) -> None:
    url, requests = server
    result = repair_arguments(_object(a={"$ref": f"{url}/x.json"}), {"a": "1"})
    assert result.valid is False
    assert "nothing is fetched" in result.reasons[0]["message"]
    assert requests == []


# ---- large schemas and calls: bounded, and compiled once


def test_a_thousand_pattern_properties_against_a_thousand_keys() -> None:
    schema = {
        "type": "object",
        "patternProperties": {f"^k{index}_[0-9]+$": {"type": "integer"} for index in range(1_000)},
        "additionalProperties": False,
    }
    arguments = {f"k{index}_{index}": str(index) for index in range(1_000)}
    repairer = within_guard(lambda: Repairer(schema))
    for _ in range(2):
        result = within_guard(lambda: repairer.repair(arguments))
        assert result.valid
        assert result.arguments == {key: int(value) for key, value in arguments.items()}


def test_many_catastrophic_patterns_in_one_call() -> None:
    schema = _object(**{f"f{index}": {"type": "string", "pattern": CATASTROPHIC} for index in range(200)})
    arguments = {f"f{index}": "a" * 40 + "!" for index in range(200)}
    result = within_guard(lambda: repair_arguments(schema, arguments))
    assert result.valid is False
    assert len(result.reasons) == 10


# ---- schemas too large for the validator (issue 36, item 7): measured before jsonschema-rs sees them


def _reference_chain(length: int) -> dict[str, Any]:
    chain: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(length)}
    chain[f"d{length}"] = {"type": "integer"}
    return {"type": "object", "properties": {"n": {"$ref": "#/$defs/d0"}}, "$defs": chain}


def test_a_long_reference_chain_is_refused_before_the_validator_sees_it() -> None:
    # 100,000 references made jsonschema-rs overflow its stack describing the error (SIGSEGV).
    repairer = Repairer(_reference_chain(100_000))
    assert repairer.schema_error == f"the schema holds more than {MAX_REFERENCES:,} references ($ref)"
    result = repairer.repair({"n": "5"})
    assert (result.valid, result.arguments, result.repairs) == (False, {"n": "5"}, [])
    # At the limit the schema compiles, but measuring a chain's work grows with its square: every
    # call is refused in one line, the same each time, and never reaches the validator.
    at_limit = Repairer(_reference_chain(MAX_REFERENCES - 1))
    assert at_limit.schema_error is None
    refusal = ({"path": "", "message": f"measuring the schema's work would take more than {MAX_ANALYSIS:,} steps"},)
    for _ in range(3):
        assert at_limit.repair({"n": 5}).reasons == refusal
    # A chain of hundreds is measured: the validator follows it, and describes the error.
    hundreds = Repairer(_reference_chain(500))
    assert hundreds.repair({"n": 5}).valid
    assert hundreds.repair({"n": "x"}).reasons == ({"path": "/n", "message": '"x" is not of type "integer"'},)


def test_measuring_a_reference_chain_does_not_depend_on_the_recursion_limit() -> None:
    # The closure was once measured by recursion: under the default limit a chain of 2,000 raised
    # RecursionError mid-measure and was taken as cheap, and under a raised limit it was refused.
    verdicts = []
    for limit in (1_000, 100_000):
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(limit)
        try:
            verdicts.append(Repairer(_reference_chain(2_000)).repair({"n": 5}))
        finally:
            sys.setrecursionlimit(previous)
    assert verdicts[0] == verdicts[1]
    assert not verdicts[0].valid


def test_a_schema_of_too_many_values_or_too_deep_is_refused() -> None:
    wide = {"type": "object", "enum": [[0] * 1_000] * (MAX_SCHEMA_VALUES // 1_000)}
    assert schema_refusal(wide) == f"the schema holds more than {MAX_SCHEMA_VALUES:,} values"
    assert schema_refusal({"type": "object", "enum": [[0] * 1_000] * (MAX_SCHEMA_VALUES // 1_001 - 1)}) is None
    deep: dict[str, Any] = {"type": "integer"}
    for _ in range(MAX_NESTING):
        deep = {"items": deep}
    assert schema_refusal(deep) == f"the schema nests deeper than {MAX_NESTING} levels"
    assert schema_refusal(deep["items"]) is None


def test_the_command_line_refuses_a_reference_chain_in_one_line(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    schema = tmp_path / "chain.json"
    schema.write_text(json.dumps(_reference_chain(100_000)))
    completed = subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "repair", "--schema", str(schema), '{"n": "x"}'],
        capture_output=True,
        timeout=120,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert completed.returncode in (1, 2), completed.stderr  # not -11
    assert "10,000 references" in completed.stderr.decode()
    assert "Traceback" not in completed.stderr.decode()
