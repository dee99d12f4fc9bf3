"""`widen_schema`: a host checking the widened schema and the proxy (repair against the original,
then validation) agree on every value, within the README's listed exceptions.

The two directions are checked separately, because the exceptions run one way each:

* **A host never refuses what the proxy would take**, except where repair turns a number or a
  boolean into a string, or reads a number string the widened pattern does not spell (``" 5"``,
  ``"5.0"``, ``"007"`` where a number goes): the repair report names those.
* **A host never lets through what the proxy refuses**, for values without the listed forms the host
  cannot check (a converted value outside a bound; JSON text that is not JSON of the location's
  type; digit strings over 4,300 characters).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.repair import Draft
from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.styles import Style
from pydantic_lenient.schema.widen import widen_schema
from pydantic_lenient.types.boolean_text import TRUE_OR_FALSE
from pydantic_lenient.types.forms import JSON_NUMBER, SIGNED_DIGITS, narrowed_digit_pattern, pattern_with_null
from tests.conftest import AjvRunner
from tests.guards import within_guard
from tests.proxy_agreement import SPELLED, explained_by_repair, host_accepts, proxy_result
from tests.strategies import near_misses

STYLES: list[Style] = ["type-array", "any-of"]

# After JSON whitespace, the bracket, or the text stringified once more (a JSON string whose
# content opens with the bracket, after whitespace, escaped or not).
ARRAY_TEXT = r'^[ \t\n\r]*(?:\[|"(?: |\\[tnr]|\\u00(?:20|09|0[aAdD]))*(?:\[|\\u005[bB]))'
OBJECT_TEXT = r'^[ \t\n\r]*(?:\{|"(?: |\\[tnr]|\\u00(?:20|09|0[aAdD]))*(?:\{|\\u007[bB]))'


# ---- examples


def test_examples_in_both_styles() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 0, "description": "Most results"},
            "ratio": {"type": "number"},
            "dry_run": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string"},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]},
        },
        "required": ["limit"],
    }
    widened = widen_schema(schema, "type-array")
    assert widened["properties"]["limit"] == {
        "type": ["integer", "string"],
        "minimum": 0,
        "pattern": narrowed_digit_pattern(SIGNED_DIGITS, 0, None),  # within the bounds, as repair reads digits
        "description": "Most results",
    }
    assert widened["properties"]["ratio"] == {"type": ["number", "string"], "pattern": JSON_NUMBER}
    assert widened["properties"]["dry_run"] == {"type": ["boolean", "string"], "pattern": TRUE_OR_FALSE}
    assert widened["properties"]["tags"] == {
        "type": ["array", "string"],
        "items": {"type": "string"},
        "pattern": ARRAY_TEXT,
        "contentMediaType": "application/json",
    }
    assert widened["properties"]["name"] == {"type": "string"}
    # The one "null" policy: "null" is None at a nullable location that takes no strings.
    assert widened["properties"]["maybe"] == {
        "type": ["integer", "string", "null"],
        "pattern": pattern_with_null(SIGNED_DIGITS),
        "default": None,
    }
    # A location that already takes strings keeps them as they are: repair leaves its strings alone.
    assert widen_schema(schema, "any-of")["properties"]["either"] == schema["properties"]["either"]
    assert widened["required"] == ["limit"]
    any_of = widen_schema(schema, "any-of")
    assert any_of["properties"]["limit"] == {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^(?:0*(?:0|[1-9][0-9]*)|-0+)$"}],
        "description": "Most results",
    }
    assert widen_schema(schema, "strict") == schema


def test_definitions_are_widened_inside_and_at_each_reference() -> None:
    schema = {
        "type": "object",
        "$defs": {"Step": {"type": "object", "properties": {"count": {"type": "integer"}}}},
        "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}}},
    }
    widened = widen_schema(schema, "any-of")
    assert widened["$defs"]["Step"]["properties"]["count"]["anyOf"][1] == {"type": "string", "pattern": SIGNED_DIGITS}
    assert widened["properties"]["steps"]["anyOf"][0]["items"] == {
        "anyOf": [
            {"$ref": "#/$defs/Step"},
            {"type": "string", "pattern": OBJECT_TEXT, "contentMediaType": "application/json"},
        ]
    }
    value = {"steps": '[{"count": "3"}]'}
    assert host_accepts(widened, value)
    twice = {"steps": json.dumps('[{"count": "3"}]')}  # the text stringified once more
    assert host_accepts(widened, twice)
    assert Repairer(schema).repair(twice).arguments == {"steps": [{"count": 3}]}
    assert proxy_result(schema, value).arguments == {"steps": [{"count": 3}]}


def test_a_pointer_into_properties_keeps_its_target() -> None:
    """zod-to-json-schema writes `{"$ref": "#/properties/a"}`: the target must not move."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/properties/a"}},
    }
    widened = widen_schema(schema, "any-of")
    assert widened["properties"]["a"] == {"type": "integer"}
    assert widened["properties"]["b"]["anyOf"][0] == {"$ref": "#/properties/a"}
    assert host_accepts(widened, {"a": 1, "b": "2"})
    assert not host_accepts(widened, {"a": 1, "b": "x"})


def test_the_root_stays_an_object_and_odd_schemas_come_back_whole() -> None:
    assert widen_schema(True) is True
    assert widen_schema({"type": "object"}) == {"type": "object"}
    deep: dict[str, Any] = {"type": "integer"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"a": deep}}
    assert widen_schema(deep) == deep  # deeper than the widening reads: unchanged, not a crash
    cycle = {
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
        "properties": {"x": {"$ref": "#/$defs/A"}},
    }
    assert widen_schema(cycle)["properties"]["x"] == {"$ref": "#/$defs/A"}
    with pytest.raises(ValueError, match="unknown style"):
        widen_schema({}, "loose")  # type: ignore[arg-type]


def test_listed_exceptions() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0},
            "e": {"type": "integer", "enum": [1, 2]},
            "s": {"type": "string"},
            "a": {"type": "array"},
        },
    }
    widened = widen_schema(schema)
    host_lets_through: list[dict[str, Any]] = [
        {"n": "9" * 5000},
        {"a": "[1,"},
        {"a": " [nope"},
    ]
    for value in host_lets_through:
        assert host_accepts(widened, value)
        assert not proxy_result(schema, value).valid, value
    # A digit form is narrowed to the location's own bounds, so host and proxy agree there.
    assert not host_accepts(widened, {"n": "-1"})
    assert not proxy_result(schema, {"n": "-1"}).valid
    # An enum's string form spells only its own values, so host and proxy agree there.
    assert not host_accepts(widened, {"e": "3"})
    assert not proxy_result(schema, {"e": "3"}).valid
    host_refuses: list[dict[str, Any]] = [{"s": 5}, {"n": " 5"}, {"n": "5.0"}, {"n": "1e2"}]
    assert not host_accepts(widened, {"a": "not json"})
    assert not host_accepts(widened, {"a": "{}"})
    for value in host_refuses:
        assert not host_accepts(widened, value)
        result = proxy_result(schema, value)
        assert result.valid, value
        assert explained_by_repair(result)
    # Leading zeros: the host takes "007" where an integer goes, and so does the proxy (as 7).
    assert host_accepts(widened, {"n": "007"})
    assert proxy_result(schema, {"n": "007"}).arguments == {"n": 7}


# ---- generated schemas


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    simple = st.sampled_from(["integer", "number", "boolean", "string", "null"]).map(lambda name: {"type": name})
    arrays = st.lists(
        st.sampled_from(["integer", "number", "boolean", "string", "null"]), min_size=2, max_size=3, unique=True
    )
    return st.one_of(simple, arrays.map(lambda names: {"type": names}), st.just({}))


def _schemas(constrained: bool) -> st.SearchStrategy[Any]:
    leaves = _leaf()
    if constrained:
        bounded = st.builds(lambda low: {"type": "integer", "minimum": low}, st.integers(-3, 3))
        listed = st.lists(st.integers(-2, 2) | st.booleans(), min_size=1, max_size=3).map(
            lambda values: {"enum": values}
        )
        leaves = st.one_of(leaves, bounded, listed, st.just({"type": "string", "maxLength": 2}))

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        names = st.sampled_from(["a", "b", "c"])
        objects = st.builds(
            lambda properties, additional: {"type": "object", "properties": properties, **additional},
            st.dictionaries(names, children, max_size=3),
            st.sampled_from([{}, {"additionalProperties": False}])
            | children.map(lambda c: {"additionalProperties": c}),
        )
        arrays = children.map(lambda items: {"type": "array", "items": items})
        tuples = st.lists(children, min_size=1, max_size=2).map(lambda prefix: {"type": "array", "prefixItems": prefix})
        any_of = st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches})
        all_of = st.lists(children, min_size=1, max_size=2).map(lambda branches: {"allOf": branches})
        choices = [objects, arrays, tuples, any_of, all_of]
        if constrained:
            choices.append(st.lists(children, min_size=2, max_size=2).map(lambda branches: {"oneOf": branches}))
        return st.one_of(*choices)

    inner = st.recursive(leaves, extend, max_leaves=6)
    return st.builds(
        lambda properties, definition: {
            "type": "object",
            "$defs": {"D": definition},
            "properties": {**properties, "r": {"$ref": "#/$defs/D"}},
        },
        st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2),
        inner,
    )


def _mangled(value: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """``value`` with some scalars written as strings, and some nested structures as JSON text."""
    if isinstance(value, bool):
        return st.sampled_from([value, "true" if value else "false", "TRUE" if value else "False"])
    if isinstance(value, (int, float)):
        return st.sampled_from([value, json.dumps(value)])
    if isinstance(value, list):
        items = st.tuples(*[_mangled(item, depth + 1) for item in value]).map(list)
        return items | st.just(json.dumps(value)) if depth else items
    if isinstance(value, dict):
        members = st.tuples(*[_mangled(item, depth + 1) for item in value.values()]).map(
            lambda v: dict(zip(value, v, strict=True))
        )
        return members | st.just(json.dumps(value)) if depth else members
    return st.just(value)


_word = st.text(alphabet="abcxyz", max_size=3)
_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "integer": st.integers(-3, 3),
    "number": st.integers(-3, 3) | st.sampled_from([0.5, -1.5, 2.0]),
    "boolean": st.booleans(),
    "string": _word,
    "null": st.none(),
}


@st.composite
def instances(draw: st.DrawFn, schema: Any, root: Any, depth: int = 0) -> Any:
    """A value the schema mostly accepts (the validators decide; this only aims there)."""
    if not isinstance(schema, dict) or depth > 8:
        return draw(_SCALARS["integer"] | _word)
    if "$ref" in schema:
        return draw(instances(root["$defs"]["D"], root, depth + 1))
    for keyword in ("anyOf", "oneOf", "allOf"):
        if keyword in schema:
            branch = draw(st.sampled_from(schema[keyword]))
            return draw(instances(branch, root, depth + 1))
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    declared = schema.get("type", draw(st.sampled_from(sorted(_SCALARS))))
    name = draw(st.sampled_from(declared)) if isinstance(declared, list) else declared
    if name == "object":
        properties = schema.get("properties", {})
        chosen = draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
        return {key: draw(instances(properties[key], root, depth + 1)) for key in chosen}
    if name == "array":
        if "prefixItems" in schema:
            return [draw(instances(item, root, depth + 1)) for item in schema["prefixItems"]]
        return draw(st.lists(instances(schema.get("items", {}), root, depth + 1), max_size=2))
    value = draw(_SCALARS.get(name, _word))
    if "minimum" in schema and isinstance(value, int) and not isinstance(value, bool):
        value = max(value, schema["minimum"])
    return value


def _calls(schema: Any) -> st.SearchStrategy[Any]:
    """Calls of a tool with this input schema: mostly valid ones, mangled as models mangle them."""
    return instances(schema, schema).flatmap(_mangled)


@given(data=st.data(), schema=_schemas(constrained=True), style=st.sampled_from(STYLES))
def test_a_host_never_refuses_what_the_proxy_takes(data: st.DataObject, schema: Any, style: Style) -> None:
    near_miss = st.dictionaries(st.sampled_from(["x", "y", "r"]), near_misses, min_size=1, max_size=2)
    value = data.draw(_calls(schema) | near_miss)
    result = proxy_result(schema, value)
    if result.valid and not explained_by_repair(result):
        assert host_accepts(widen_schema(schema, style), value)


@given(data=st.data(), schema=_schemas(constrained=False), style=st.sampled_from(STYLES))
def test_a_host_never_lets_through_what_the_proxy_refuses(data: st.DataObject, schema: Any, style: Style) -> None:
    near_miss = st.dictionaries(
        st.sampled_from(["x", "y", "r"]), near_misses.filter(_not_listed), min_size=1, max_size=2
    )
    value = data.draw(_calls(schema) | near_miss)
    widened = widen_schema(schema, style)
    if host_accepts(widened, value):
        result = proxy_result(schema, value)
        assert result.valid or _json_text_on_trust(widened, value), (widened, value, result)


def _not_listed(value: Any) -> bool:
    """Not a string of a listed exception: a number a double cannot hold."""
    if not isinstance(value, str):
        return True
    return not (SPELLED["number"].match(value) and math.isinf(float(value)))


def _json_text_on_trust(widened: Any, value: Any) -> bool:
    """The listed exception for JSON text: the host took a string only because a location admits
    JSON text, which it cannot look inside. Checked by refusing such strings and asking again."""
    return not host_accepts(_without_json_text(widened), value)


def _without_json_text(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_json_text(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("contentMediaType") == "application/json" and schema.get("type") == "string":
        return False
    rewritten = {key: _without_json_text(item) for key, item in schema.items()}
    if isinstance(rewritten.get("type"), list) and rewritten.get("contentMediaType") == "application/json":
        rewritten["type"] = [name for name in rewritten["type"] if name != "string"]
        del rewritten["contentMediaType"]
    return rewritten


# ---- the official JSON Schema Test Suite


SUITE = Path(__file__).parent.parent / "data" / "json-schema-test-suite"
SUITE_CASES: list[tuple[dict[str, Any], str, str]] = [
    (group, draft, f"{draft}/{path.stem}/{index}")
    for draft in ("draft2020-12", "draft7")
    for path in sorted((SUITE / draft).glob("*.json"))
    for index, group in enumerate(json.loads(path.read_text(encoding="utf-8")))
]
SUITE_GROUPS = [pytest.param(group, draft, id=name) for group, draft, name in SUITE_CASES]


def _suite_values(group: dict[str, Any]) -> list[Any]:
    """The suite's instances, and the valid ones with scalars written as strings (as an object's
    member: the root of a tool's arguments is always an object, and is never widened)."""
    values = [test["data"] for test in group["tests"]]
    return values + [_stringified(test["data"]) for test in group["tests"] if test["valid"]]


def _stringified(value: Any, depth: int = 0) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and depth:
        return json.dumps(value)
    if isinstance(value, list):
        return [_stringified(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: _stringified(item, depth + 1) for key, item in value.items()}
    return value


@pytest.mark.parametrize(("group", "draft"), SUITE_GROUPS)
@pytest.mark.parametrize("style", STYLES)
def test_suite_schemas_agree(group: dict[str, Any], draft: str, style: Style) -> None:
    schema = group["schema"]
    draft_name: Draft = "07" if draft == "draft7" else "2020-12"
    widened = widen_schema(schema, style, draft=draft_name)
    for value in _suite_values(group):
        result = proxy_result(schema, value, draft_name)
        host = host_accepts(widened, value, draft_name)
        if result.valid and not host:
            at_root = any(repair["path"] == "" for repair in result.repairs)
            assert explained_by_repair(result) or at_root or _left_as_it_is(schema), value
        if host and not result.valid:
            # A converted value that fails another constraint (a bound, enum, const, not, oneOf, ...),
            # or a listed string form the host cannot judge.
            assert result.repairs or _json_text_on_trust(widened, value) or _has_listed_string(value), value


def _left_as_it_is(schema: Any) -> bool:
    """Whether the schema has parts widening leaves alone: a reference other than a JSON pointer to
    a definition (a target that must not move, or one widening does not read, such as a
    metaschema), or an embedded resource with its own ``$id``."""
    found = False

    def visit(node: Any, depth: int) -> None:
        nonlocal found
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str):  # only a pointer to a definition is followed
                found |= not re.fullmatch(r"#(/(\$defs|definitions)/[^/]+)?", reference)
            found |= depth > 0 and "$id" in node
            for item in node.values():
                visit(item, depth + 1)
        elif isinstance(node, list):
            for item in node:
                visit(item, depth + 1)

    visit(schema, 0)
    return found


def _has_listed_string(value: Any) -> bool:
    if isinstance(value, str):
        return not _not_listed(value) or len(value) > 4300
    if isinstance(value, list):
        return any(_has_listed_string(item) for item in value)
    if isinstance(value, dict):
        return any(_has_listed_string(item) for item in value.values())
    return False


# ---- Ajv 8, the validator JS hosts run, on the widened schemas


def test_ajv_reads_widened_schemas_as_the_host_validator_does(ajv: AjvRunner) -> None:
    """The properties above use a Python validator as the host; Ajv must give the same verdicts on
    the widened schemas, for the suite's schemas and a corpus of mangled and hostile values."""
    corpus: list[Any] = ["1", "-0", "007", "1.5", "1e2", " 1", "TRUE", "false", "yes", "[1]", " {}", "[", "", None]
    cases: list[dict[str, Any]] = []
    expected: list[tuple[Any, list[bool]]] = []
    originals: list[list[bool]] = []
    for group, draft, name in SUITE_CASES:
        if "/unevaluated" in name:  # Ajv 8.17 throws while validating some of these; widening skips them
            continue
        draft_name: Draft = "07" if draft == "draft7" else "2020-12"
        tests = group["tests"]
        originals.append([test["valid"] for test in tests])
        cases.append(
            {"schema": group["schema"], "values": [test["data"] for test in tests], "draft": draft_name, "options": {}}
        )
        for style in STYLES:
            widened = widen_schema(group["schema"], style, draft=draft_name)
            values = [
                value
                for value in [*_suite_values(group), *corpus, *({"foo": item} for item in corpus)]
                if not _beyond_double_precision(value)
            ]
            cases.append({"schema": widened, "values": values, "draft": draft_name, "options": {"strict": False}})
            expected.append((widened, [host_accepts(widened, value, draft_name) for value in values]))
    results = iter(ajv(cases))
    compiled = checked = 0
    for suite_verdicts in originals:
        original = next(results)
        # Where Ajv itself reads the suite's schema differently (remote references, `__proto__`
        # keys in JS), the widened schema is not ours to compare.
        comparable = original["compile_error"] is None and original["verdicts"] == suite_verdicts
        for _ in STYLES:
            result, (widened, verdicts) = next(results), expected[checked]
            checked += 1
            if comparable and result["compile_error"] is None:
                compiled += 1
                assert result["verdicts"] == verdicts, widened
    assert compiled > len(expected) * 0.8


def _beyond_double_precision(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > 2**53
    if isinstance(value, list):
        return any(_beyond_double_precision(item) for item in value)
    if isinstance(value, dict):
        return any(_beyond_double_precision(item) for item in value.values())
    return False


def test_an_enum_or_const_admits_only_its_own_values_spellings() -> None:
    """Inside ``oneOf``, a digit pattern at ``{"enum": [1]}`` made ``"0"`` match two branches on the
    host while repair's ``0`` matches one: found by the property above. A ``oneOf`` is now widened
    as a whole, so the host takes ``"1"`` there, which repair's ``1`` trips (two branches): the
    listed exception a host lets through and the server refuses, never the reverse."""
    one_of = {"oneOf": [{"enum": [1]}, {"type": "integer"}]}
    schema = {
        "type": "object",
        "$defs": {"D": {"type": "array", "prefixItems": [one_of]}},
        "properties": {"r": {"$ref": "#/$defs/D"}, "flag": {"const": True}, "size": {"enum": [0.5, 2.0]}},
    }
    for style in STYLES:
        widened = widen_schema(schema, style)
        for value in ({"r": ["0"]}, {"flag": "TRUE"}, {"size": "0.5"}, {"size": "2"}):
            assert proxy_result(schema, value).valid
            assert host_accepts(widened, value), (style, value)
        for value in ({"flag": "false"}, {"size": "3"}):
            assert not proxy_result(schema, value).valid
            assert not host_accepts(widened, value), (style, value)
        assert not proxy_result(schema, {"r": ["1"]}).valid
        assert host_accepts(widened, {"r": ["1"]}), style


def test_a_one_of_is_widened_as_a_whole() -> None:
    """A string form on each branch loses what tells the branches apart: ``"0"`` matched both
    widened branches of ``oneOf [integer, integer >= 1]`` (and of ``oneOf [integer, string]``) on
    the host, where repair's ``0`` matches one. Found by the property above."""
    for one_of in (
        {"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 1}]},
        {"allOf": [{"type": "integer"}, {"oneOf": [{"type": "integer"}, {"type": "string"}]}]},
        {"oneOf": [{"const": 1}, {"const": 2}]},
    ):
        schema = {"type": "object", "properties": {"r": {"type": "array", "items": one_of}}}
        for style in STYLES:
            widened = widen_schema(schema, style)
            for value in ({"r": ["0"]}, {"r": ["1"]}, {"r": ["1", "2"]}):
                if proxy_result(schema, value).valid:  # what the proxy takes, the host takes
                    assert host_accepts(widened, value), (one_of, style, value)
            assert host_accepts(widened, {"r": ["1"]}), (one_of, style)
    only_listed = widen_schema({"type": "object", "properties": {"r": {"oneOf": [{"const": 1}, {"const": 2}]}}})
    assert not host_accepts(only_listed, {"r": "3"})  # every branch lists its values: only their spellings


def test_an_enum_of_an_integer_past_the_digit_limit_widens_without_it() -> None:
    """Only Python hands over such a value (JSON parsers refuse it); it has no string to admit."""
    schema = {"type": "object", "properties": {"e": {"enum": [10**5000, 2]}}}
    widened = widen_schema(schema)
    assert {"type": "string", "enum": ["2"]} in widened["properties"]["e"]["anyOf"]


def test_a_pattern_property_is_matched_within_bounds_or_not_at_all() -> None:
    """A key is matched against ``patternProperties`` as repair matches it: on a linear-time
    engine, so ``^(a+)+$`` costs nothing; a pattern that cannot be decided (not ECMA-262, a lone
    surrogate, a backreference, the backtracking limit) leaves the member as it is, as repair leaves
    its value."""
    key = "a" * 40 + "!"
    members = {key: {"type": "integer"}, "\ud800": {"type": "integer"}}
    widened = within_guard(
        lambda: widen_schema(
            {"type": "object", "patternProperties": {"^(a+)+$": {}}, "properties": members}, "type-array"
        )
    )
    assert widened["properties"][key] == {"type": ["integer", "string"], "pattern": SIGNED_DIGITS}
    for pattern in ("(", "\ud800", "^(a)\\1$", "^(?:(?=a)a|(?=a)a)*$"):
        schema = {"type": "object", "patternProperties": {pattern: {}}, "properties": members}
        for style in STYLES:
            widened = within_guard(lambda schema=schema, style=style: widen_schema(schema, style))  # type: ignore[misc]
            assert widened["properties"] == members, (pattern, style)
        assert not proxy_result(schema, {key: "5"}).repairs


def test_a_schema_too_deep_to_restyle_comes_back_whole() -> None:
    """Keywords repair does not read are copied as they are, however deep; restyling them too
    deep for the stack leaves the schema as it was."""
    deep: dict[str, Any] = {}
    for _ in range(100_000):
        deep = {"not": deep}
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "not": deep}
    assert widen_schema(schema, "type-array") is schema


def test_the_portable_style_widens_an_upstream_schema_every_host_lists() -> None:
    from pydantic_lenient.hosts import PROFILES

    upstream = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 0},
            "tags": {"type": ["array", "null"], "items": {"type": "integer"}},
            "mode": {"enum": [1, 2, 3]},
        },
        "required": ["limit"],
    }
    assert not PROFILES["gemini-cli"].listing(upstream).accepted  # an integer enum
    widened = widen_schema(upstream, "portable")
    assert [host.name for host in PROFILES.values() if not host.listing(widened).accepted] == []
    assert widened["properties"]["limit"] == {
        "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": "^(?:0*(?:0|[1-9][0-9]*)|-0+)$"}]
    }
    assert widened["properties"]["tags"]["anyOf"][-1] == {"type": "null", "nullable": True}
    with pytest.raises(ValueError, match="expected one of portable, type-array, any-of, strict"):
        widen_schema(upstream, "loose")  # type: ignore[arg-type]
