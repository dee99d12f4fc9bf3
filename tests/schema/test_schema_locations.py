"""One reader of a schema location (`pydantic_lenient.schema.locations`) for repair and widening,
the one ``"null"`` policy there, numbers never rounded by repair, and `json_type`'s one home.

The property at the bottom runs over the JSON-Schema-Test-Suite's schemas (tests/data, MIT): a
string repair converts to something valid is admitted by the widened schema, and a string the
widened schema admits is one repair converts to something valid, up to the listed exceptions
(tests/test_widen.py names them).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, note
from hypothesis import strategies as st

from pydantic_lenient.normalizer.stats import described
from pydantic_lenient.observe.shapes import value_shape
from pydantic_lenient.repair import Repairer, SchemaReader
from pydantic_lenient.schema.hosts import host_validator
from pydantic_lenient.schema.locations import ALL_TYPES, NULL_STRING
from pydantic_lenient.schema.widen import widen_schema
from pydantic_lenient.types.forms import NULL_TEXT, SIGNED_DIGITS, pattern_with_null
from pydantic_lenient.types.json_kinds import JSON_TYPES, json_type
from tests.proxy_agreement import explained_by_repair, host_accepts
from tests.schema.test_widen import _has_listed_string, _json_text_on_trust, _left_as_it_is

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _member(schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"v": schema}, **extra}


def _agree(schema: dict[str, Any], value: Any) -> tuple[bool, bool]:
    """(repair's verdict, the host's verdict on the widened schema) for ``{"v": value}``."""
    result = Repairer(schema).repair({"v": value})
    return result.valid, host_accepts(widen_schema(schema), {"v": value})


# ---- the draft-07 $ref beside "type": the disagreement the issue names


def test_a_draft_07_ref_overrides_its_type_sibling_in_repair_and_widening_alike() -> None:
    schema = {
        "$schema": DRAFT_07,
        "type": "object",
        "definitions": {"count": {"type": "integer"}},
        "properties": {"v": {"$ref": "#/definitions/count", "type": "string"}},
    }
    assert Repairer(schema).repair({"v": "5"}).arguments == {"v": 5}
    assert _agree(schema, "5") == (True, True)
    assert _agree(schema, "five") == (False, False)
    # In 2020-12 the sibling applies: nothing is both an integer and a string, so neither converts.
    later = {**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    assert _agree(later, "5") == (False, False)
    assert sorted(SchemaReader(schema).types(("v",))) == ["integer"]
    assert SchemaReader(later).types(("v",)) == frozenset()


def test_draft_07_ref_siblings_are_ignored_one_step_inside_too() -> None:
    schema = {
        "$schema": DRAFT_07,
        "type": "object",
        "definitions": {"box": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "properties": {"v": {"$ref": "#/definitions/box", "properties": {"n": {"type": "string"}}}},
    }
    assert Repairer(schema).repair({"v": {"n": "5"}}).arguments == {"v": {"n": 5}}
    assert host_accepts(widen_schema(schema), {"v": {"n": "5"}})
    # Read as 2020-12, the sibling applies: an integer and a string at once is nothing to convert to.
    assert not Repairer(schema, draft="2020-12").repair({"v": {"n": "5"}}).valid


def test_widen_refuses_an_unknown_draft() -> None:
    with pytest.raises(ValueError, match="draft"):
        widen_schema({}, draft="3")  # type: ignore[arg-type]


# ---- the one "null" policy in repair and widening


NULLABLE_INTEGER = {"anyOf": [{"type": "integer"}, {"type": "null"}]}


@pytest.mark.parametrize(
    ("schema", "becomes_none"),
    [
        (NULLABLE_INTEGER, True),
        ({"type": ["integer", "null"]}, True),
        ({"type": ["boolean", "null"]}, True),
        ({"type": ["array", "null"]}, True),
        ({"type": "null"}, True),
        ({"enum": ["asc", "desc", None]}, True),
        ({"anyOf": [{"enum": ["asc", "desc"]}, {"type": "null"}]}, True),
        ({"type": ["string", "null"], "enum": ["asc", None]}, True),
        ({"enum": ["null", None]}, False),  # the string "null" is listed: it stays itself
        ({"type": ["string", "null"]}, False),  # any string may be meant as itself
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, False),
        ({"const": "null"}, False),
        ({"type": "integer"}, False),  # no null here: "null" is not a number either
        ({"enum": ["asc", "desc"]}, False),
    ],
)
def test_null_text_is_none_exactly_where_null_is_admitted_and_the_string_null_is_not(
    schema: dict[str, Any], becomes_none: bool
) -> None:
    whole = _member(schema)
    result = Repairer(whole).repair({"v": NULL_TEXT})
    if becomes_none:
        assert result.arguments == {"v": None}
        assert result.valid
        assert [repair["kind"] for repair in result.repairs] == ["string_to_null"]
    else:
        assert result.arguments == {"v": NULL_TEXT}
        assert not result.repairs
    # The widened schema admits the string exactly where repair makes a valid None of it, or it was valid.
    assert host_accepts(widen_schema(whole), {"v": NULL_TEXT}) == result.valid
    assert host_accepts(widen_schema(whole, "any-of"), {"v": NULL_TEXT}) == result.valid


def test_the_issues_example_and_its_widened_pattern() -> None:
    schema = _member(NULLABLE_INTEGER)
    assert Repairer(schema).repair({"v": "null"}).arguments == {"v": None}
    # Written as the lenient types write it: one pattern that also spells null.
    assert widen_schema(schema, "type-array")["properties"]["v"] == {
        "type": ["integer", "string", "null"],
        "pattern": pattern_with_null(SIGNED_DIGITS),
    }
    assert SchemaReader(schema).types(("v",)) == frozenset({"integer", "null"})  # the public answer is JSON types


def test_null_text_inside_one_of_matches_one_branch() -> None:
    schema = _member({"oneOf": [{"type": "integer"}, {"type": "null"}]})
    assert _agree(schema, "null") == (True, True)
    assert _agree(schema, "nul") == (False, False)


@given(st.text(max_size=6) | st.sampled_from(["null", "NULL", " null", "null ", "Null", '"null"']))
@example("0E0")  # the newest nox session's random examples found it: the repair reads it as 0, the host refuses
def test_only_the_exact_word_is_read_as_null(text: str) -> None:
    schema = _member(NULLABLE_INTEGER)
    result = Repairer(schema).repair({"v": text})
    assert (result.arguments == {"v": None}) == (text == NULL_TEXT)
    host = host_accepts(widen_schema(schema), {"v": text})
    if result.valid and not host:  # the listed exception: a number string the pattern does not spell ("0E0")
        assert [repair["kind"] for repair in result.repairs] == ["string_to_number"]
        assert explained_by_repair(result)
    else:
        assert host == result.valid


def test_a_type_set_holds_the_string_null_only_where_that_string_may_be_admitted() -> None:
    assert NULL_STRING in ALL_TYPES
    assert ALL_TYPES - {NULL_STRING} == JSON_TYPES


# ---- numbers are never rounded by repair


@pytest.mark.parametrize(
    "text",
    ["0.10000000000000000001", "3.0000000000000000001", "1e-400", "123456789012345678.5", "1.00000000000000011"],
)
def test_a_number_a_double_cannot_hold_stays_a_string(text: str) -> None:
    number_only = _member({"type": "number"})
    result = Repairer(number_only).repair({"v": text})
    assert result.arguments == {"v": text}
    assert not result.valid
    # Where the location also takes strings (LenientDecimal's string form), it is kept as written.
    both = _member({"anyOf": [{"type": "number"}, {"type": "string", "pattern": "^-?[0-9.e-]+$"}]})
    assert Repairer(both).repair({"v": text}).arguments == {"v": text}


@pytest.mark.parametrize(("text", "number"), [("0.1", 0.1), ("1.50", 1.5), ("1e2", 100.0), ("-0.0", -0.0)])
def test_a_number_a_double_holds_exactly_is_converted(text: str, number: float) -> None:
    assert Repairer(_member({"type": "number"})).repair({"v": text}).arguments == {"v": number}


@given(st.decimals(allow_nan=False, allow_infinity=False, places=None).map(lambda number: f"{number:f}"))
def test_repair_never_changes_a_numbers_value(text: str) -> None:
    repaired = Repairer(_member({"type": "number"})).repair({"v": text}).arguments["v"]
    if repaired is not text and not isinstance(repaired, str):
        assert Decimal(repr(repaired)) == Decimal(text), text


def test_integers_keep_every_digit() -> None:
    digits = "1234567890" * 5
    assert Repairer(_member({"type": "integer"})).repair({"v": digits}).arguments == {"v": int(digits)}


# ---- which JSON type a value has: one function, asked by every layer


@pytest.mark.parametrize(
    ("value", "schema_type", "as_sent"),
    [
        (None, "null", "null"),
        (True, "boolean", "boolean"),
        (3, "integer", "integer"),
        (3.0, "integer", "number"),
        (3.5, "number", "number"),
        ("x", "string", "string"),
        ([1], "array", "array"),
        ((1,), "array", "array"),
        ({"a": 1}, "object", "object"),
        (object(), "unknown", "unknown"),
    ],
)
def test_json_type_and_its_callers(value: Any, schema_type: str, as_sent: str) -> None:
    assert json_type(value) == schema_type
    assert json_type(value, whole_floats_are_integers=False) == as_sent
    if as_sent in {"null", "boolean", "integer", "number", "array", "object"}:
        assert value_shape(value) == as_sent
        assert described(value).split(" ")[0] == as_sent


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(), st.lists, max_leaves=5))
def test_json_type_is_the_schema_validators_type(value: Any) -> None:
    """`json_type(v) == t` exactly when a host's validator takes ``v`` at ``{"type": t}`` (3.0 is an integer)."""
    kind = json_type(value)
    if isinstance(value, float) and not math.isfinite(value):
        return  # not JSON
    for name in JSON_TYPES:
        admitted = host_validator({"type": name}, check=False).is_valid(value)
        assert admitted == (name == kind or (name == "number" and kind == "integer")), (name, value)


# ---- the property over the JSON-Schema-Test-Suite's schemas

SUITE = Path(__file__).parents[1] / "data" / "json-schema-test-suite"
SUITE_SCHEMAS = [
    (group["schema"], "07" if draft == "draft7" else "2020-12", [test["data"] for test in group["tests"]])
    for draft in ("draft2020-12", "draft7")
    for path in sorted((SUITE / draft).glob("*.json"))
    for group in json.loads(path.read_text(encoding="utf-8"))
    if not _left_as_it_is(group["schema"])
]
_CORPUS = ["null", "007", "0", "-1", "1.5", "1e2", "TRUE", "false", "[1]", "{}", "", "x", "-0", "1.0"]


def _as_strings(draw: Any, value: Any, depth: int) -> Any:
    """``value`` with some of its members and items written as the strings models send."""
    if depth and draw(st.booleans()):
        if value is None:
            return NULL_TEXT
        if isinstance(value, bool):
            return draw(st.sampled_from(["true", "TRUE", "false"])) if value else "false"
        if isinstance(value, (int, float, list, dict)):
            return json.dumps(value)
        return draw(st.sampled_from(_CORPUS))
    if isinstance(value, list):
        return [_as_strings(draw, item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: _as_strings(draw, item, depth + 1) for key, item in value.items()}
    return value


@st.composite
def _suite_cases(draw: Any) -> tuple[Any, str, Any]:
    schema, draft, instances = draw(st.sampled_from(SUITE_SCHEMAS))
    return schema, draft, _as_strings(draw, draw(st.sampled_from(instances)), 0)


@given(_suite_cases())
def test_widening_admits_a_string_iff_repair_converts_it_to_something_valid(case: tuple[Any, str, Any]) -> None:
    schema, draft, value = case
    note(f"schema={schema!r} draft={draft} value={value!r}")
    result = Repairer(schema, draft=draft).repair(value)  # type: ignore[arg-type]
    widened = widen_schema(schema, "type-array", draft=draft)  # type: ignore[arg-type]  # exact: no portable 1.5
    host = host_accepts(widened, value, draft)
    if result.valid and not host:
        assert explained_by_repair(result) or any(repair["path"] == "" for repair in result.repairs)
    if host and not result.valid:
        # A converted value that fails a constraint widening cannot spell (``not``, ``oneOf``,
        # ``multipleOf``...), or a listed string form the host cannot judge.
        assert result.repairs or _json_text_on_trust(widened, value) or _has_listed_string(value)


# ---- the "null" policy against a validator's own verdicts, over generated locations

_LISTED = st.sampled_from([NULL_TEXT, None, "asc", "", 1, True, "Null"])
_LEAVES = st.one_of(
    st.sampled_from(sorted(JSON_TYPES)).map(lambda name: {"type": name}),
    st.lists(st.sampled_from(sorted(JSON_TYPES)), min_size=1, max_size=3, unique=True).map(
        lambda names: {"type": names}
    ),
    st.lists(_LISTED, min_size=1, max_size=3, unique_by=repr).map(lambda values: {"enum": values}),
    _LISTED.map(lambda value: {"const": value}),
)
_LOCATIONS = st.recursive(
    _LEAVES,
    lambda inner: st.tuples(st.sampled_from(["anyOf", "allOf"]), st.lists(inner, min_size=1, max_size=3)).map(
        lambda pair: {pair[0]: pair[1]}
    ),
    max_leaves=6,
)


@given(_LOCATIONS)
def test_null_text_is_none_exactly_where_the_validator_takes_null_and_not_the_string(location: dict[str, Any]) -> None:
    """At locations read exactly (types, enums, consts, ``anyOf`` and ``allOf`` of them), the policy
    is the validator's own: ``"null"`` becomes None iff None is admitted there and ``"null"`` is not;
    and the widened schema admits ``"null"`` iff repair's result is valid. (A ``oneOf`` is read as
    the union of its branches, so None matching two of them is the listed exception of docs/proxy.md:
    a converted value that trips a ``oneOf``.)"""
    note(f"location={location!r}")
    checks = host_validator(location, check=False)
    becomes_none = checks.is_valid(None) and not checks.is_valid(NULL_TEXT)
    schema = _member(location)
    result = Repairer(schema).repair({"v": NULL_TEXT})
    assert (result.arguments == {"v": None}) == becomes_none
    assert result.valid == (becomes_none or checks.is_valid(NULL_TEXT))
    assert host_accepts(widen_schema(schema), {"v": NULL_TEXT}) == result.valid
