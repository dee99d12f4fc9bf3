"""Properties of repair on any schema a hostile generator makes, and any arguments.

For every schema and arguments: no exception; valid arguments never change; repair is idempotent;
the output differs from the input only at the JSON Pointers the repairs report (``~`` and ``/`` in
keys escaped as ``~0`` and ``~1``); and ``valid`` is the validator's verdict on the output.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pydantic_lenient.repair.engine import Repairer
from tests.strategies import any_input, json_values, near_misses

NAMES = ["a", "b", "a/b", "c~d", "~1", "thoughtNumber", "thought_number", "ThoughtNumber", "x-y", ""]
PATTERNS = ["^a", "b$", ".", "^(a+)+$", "(", "^(a)\\1$", "\\bx", "[^]", "^\\p{L}+$", "(?<=a)b", "^[0-9]+$"]
TYPES = ["null", "boolean", "integer", "number", "string", "array", "object", "nonsense"]
REFERENCES = ["#", "#/$defs/a", "#/$defs/b", "#/properties/a", "#named", "#/$defs/missing", "other.json", "urn:x"]
DRAFTS = ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"]

names = st.sampled_from(NAMES)


def _keywords(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3) | st.integers(0, 3),
            "properties": st.dictionaries(names, children, max_size=3) | st.just([]),
            "patternProperties": st.dictionaries(st.sampled_from(PATTERNS), children, max_size=2),
            "additionalProperties": children,
            "items": children | st.lists(children, max_size=2),
            "prefixItems": st.lists(children, max_size=2),
            "additionalItems": children,
            "anyOf": st.lists(children, min_size=1, max_size=3),
            "oneOf": st.lists(children, min_size=1, max_size=3),
            "allOf": st.lists(children, min_size=1, max_size=3),
            "not": children,
            "$ref": st.sampled_from(REFERENCES),
            "$defs": st.fixed_dictionaries({}, optional={"a": children, "b": children}),
            "$anchor": st.just("named"),
            "$id": st.sampled_from(["https://tools.test/s", "sub/", "#frag"]),
            "enum": st.lists(json_values, max_size=3),
            "const": json_values,
            "pattern": st.sampled_from(PATTERNS),
            "required": st.lists(names, max_size=2, unique=True) | st.integers(),
            "minimum": st.integers(-5, 5) | st.just("x"),
        },
    )


schemas: st.SearchStrategy[Any] = st.recursive(st.booleans() | st.just({}), _keywords, max_leaves=12)
documents = st.tuples(schemas, st.sampled_from([None, *DRAFTS])).map(
    lambda pair: {**pair[0], "$schema": pair[1]} if isinstance(pair[0], dict) and pair[1] else pair[0]
)
# Tool-like schemas, where repairs happen, with hostile schemas in their corners.
_leaves = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES[:-1]) | st.lists(st.sampled_from(TYPES[:-1]), min_size=1, max_size=3, unique=True)}
) | st.builds(
    lambda types: {"anyOf": [{"type": name} for name in types]},
    st.lists(st.sampled_from(TYPES[:-1]), min_size=1, max_size=3),
)
_arrays = _leaves.map(lambda leaf: {"type": "array", "items": leaf})
_members = st.one_of(_leaves, _leaves, _leaves, _arrays, _arrays, schemas)
tool_schemas = st.builds(
    lambda properties, extra: {"type": "object", "properties": properties, **extra},
    st.dictionaries(names, _members, max_size=4),
    st.fixed_dictionaries(
        {},
        optional={
            "additionalProperties": _members,
            "patternProperties": st.dictionaries(st.sampled_from(PATTERNS[:4]), _members, max_size=2),
            "required": st.lists(names, max_size=2, unique=True),
            "$schema": st.sampled_from(DRAFTS),
        },
    ),
)
documents = st.one_of(documents, tool_schemas, tool_schemas, tool_schemas)
arguments = st.dictionaries(names, st.one_of(near_misses, any_input, json_values), max_size=6)


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _apply_renames(value: Any, repairs: list[dict[str, Any]]) -> Any:
    """``value`` with the reported renames applied (parents first, as the walk reports them)."""
    renamed = copy.deepcopy(value)
    for repair in repairs:
        if repair["kind"] != "renamed_key":
            continue
        *parents, _ = repair["path"].split("/")[1:]
        node = renamed
        for part in parents:
            key: Any = int(part) if isinstance(node, list) else _unescape(part)
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, dict) and repair["from"] in node:
            node[repair["to"]] = node.pop(repair["from"])
    return renamed


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """The JSON Pointers where ``after`` differs from ``before``."""
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        return [
            changed
            for key in before
            for changed in changed_paths(before[key], after[key], f"{path}/{key.replace('~', '~0').replace('/', '~1')}")
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            changed
            for index, item in enumerate(before)
            for changed in changed_paths(item, after[index], f"{path}/{index}")
        ]
    return [] if before == after and type(before) is type(after) else [path]


def assert_changes_only_where_reported(before: Any, after: Any, repairs: list[dict[str, Any]]) -> None:
    reported = {repair["path"] for repair in repairs if repair["kind"] != "renamed_key"}
    for path in changed_paths(_apply_renames(before, repairs), after):
        assert any(path == root or path.startswith(root + "/") for root in reported), (path, repairs)


def test_the_checker_escapes_pointers() -> None:
    before, after = {"tags": {"a/b": "true", "c~d": "1"}}, {"tags": {"a/b": True, "c~d": "1"}}
    assert changed_paths(before, after) == ["/tags/a~1b"]
    assert_changes_only_where_reported(before, after, [{"path": "/tags/a~1b", "kind": "string_to_boolean"}])


@settings(max_examples=300)
@given(schema=documents, sent=arguments)
def test_any_schema_any_arguments(schema: Any, sent: dict[str, Any]) -> None:
    before = copy.deepcopy(sent)
    repairer = Repairer(schema)
    result = repairer.repair(sent)
    assert sent == before  # the input is never mutated
    assert isinstance(result.valid, bool)
    assert result.valid == repairer.is_valid(result.arguments)
    assert result.valid == (result.reasons == ())
    if repairer.is_valid(sent):
        assert (result.arguments, result.repairs) == (sent, [])
    assert_changes_only_where_reported(sent, result.arguments, result.repairs)
    again = repairer.repair(result.arguments)
    assert again.arguments == result.arguments
    assert again.repairs == []


@settings(max_examples=200)
@given(schema=documents, sent=arguments)
def test_error_details_describe_only_invalid_arguments(schema: Any, sent: dict[str, Any]) -> None:
    """What the proxy records for a refused call: pydantic-shaped details, none for valid arguments,
    never more than max_reasons, and each at a location inside the arguments (or a name they lack)."""
    repairer = Repairer(schema, max_reasons=5)
    details = repairer.error_details(sent)
    if repairer.is_valid(sent):
        assert details == []
    assert len(details) <= 5
    for detail in details:
        assert isinstance(detail["type"], str)
        assert detail["type"]
        assert isinstance(detail["msg"], str)
        assert all(isinstance(part, (str, int)) for part in detail["loc"])
