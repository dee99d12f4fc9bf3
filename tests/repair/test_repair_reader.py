"""The schema reader on its own: which types and which member names a location admits, per draft."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any

import pytest

from pydantic_lenient.repair import SchemaReader

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
ALL = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
ADDRESS = {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string"}}}


@dataclass(frozen=True)
class Case:
    """A schema, a location in its arguments, and what the reader must say is admitted there."""

    id: str
    schema: Any
    location: tuple[str | int, ...]
    types: Set[str]
    children: Set[str]


CASES = [
    Case("root-object", {"type": "object", "properties": {"a": {}}}, (), {"object"}, {"a"}),
    Case("number-includes-integer", {"properties": {"n": {"type": "number"}}}, ("n",), {"number", "integer"}, set()),
    Case("type-list", {"type": ["string", "null"]}, (), {"string", "null"}, set()),
    Case("enum", {"enum": [1, "a", None, 2.5]}, (), {"integer", "string", "null", "number"}, set()),
    Case("const", {"const": 3}, (), {"integer"}, set()),
    Case("true-schema", True, ("anything", 0), ALL, set()),
    Case("false-schema", False, (), set(), set()),
    Case("unknown-keyword-constrains-nothing", {"not": {"type": "string"}}, (), ALL, set()),
    # $ref, into $defs and through an $anchor; a pointer that names nothing constrains nothing
    Case(
        "ref",
        {"$defs": {"A": ADDRESS}, "properties": {"to": {"$ref": "#/$defs/A"}}},
        ("to",),
        {"object"},
        {"street", "zip"},
    ),
    Case(
        "ref-member",
        {"$defs": {"A": ADDRESS}, "properties": {"to": {"$ref": "#/$defs/A"}}},
        ("to", "zip"),
        {"string"},
        set(),
    ),
    Case(
        "anchor",
        {"$defs": {"A": {"$anchor": "address", **ADDRESS}}, "properties": {"to": {"$ref": "#address"}}},
        ("to",),
        {"object"},
        {"street", "zip"},
    ),
    Case("ref-to-nothing", {"properties": {"a": {"$ref": "#/nope"}, "b": {"type": "integer"}}}, ("a",), ALL, set()),
    Case(
        "ref-cycle",
        {
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            "$ref": "#/$defs/node",
        },
        ("next", "next", "next"),
        {"object"},
        {"next"},
    ),
    # an embedded resource: its $id is the base its own references resolve against
    Case(
        "nested-id",
        {
            "$id": "https://example.com/root.json",
            "$defs": {
                "n": {"type": "string"},
                "item": {
                    "$id": "item.json",
                    "$defs": {"n": {"type": "integer"}},
                    "properties": {"n": {"$ref": "#/$defs/n"}},
                },
            },
            "properties": {"x": {"$ref": "item.json"}, "y": {"$ref": "#/$defs/n"}},
        },
        ("x", "n"),
        {"integer"},
        set(),
    ),
    Case(
        "nested-id-root-ref",
        {
            "$id": "https://example.com/root.json",
            "$defs": {"n": {"type": "string"}, "item": {"$id": "item.json", "$defs": {"n": {"type": "integer"}}}},
            "properties": {"y": {"$ref": "#/$defs/n"}},
        },
        ("y",),
        {"string"},
        set(),
    ),
    # combinators: anyOf/oneOf as the union, allOf as the intersection; members from the branches taking objects
    Case("anyOf", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, (), {"integer", "string"}, set()),
    Case(
        "anyOf-members",
        {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "$defs": {"A": ADDRESS}},
        (),
        {"object", "null"},
        {"street", "zip"},
    ),
    Case(
        "anyOf-member-of-the-object-branch",
        {"anyOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}}, {"type": "null"}]},
        ("a",),
        {"boolean"},
        set(),
    ),
    Case("allOf", {"allOf": [{"type": ["integer", "string"]}, {"type": ["string", "null"]}]}, (), {"string"}, set()),
    Case(
        "allOf-members",
        {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {}}}]},
        (),
        ALL,
        {"a", "b"},
    ),
    Case(
        "allOf-member-both-apply",
        {"allOf": [{"properties": {"a": {"type": ["integer", "string"]}}}, {"properties": {"a": {"type": "string"}}}]},
        ("a",),
        {"string"},
        set(),
    ),
    # members: properties, then patternProperties, then additionalProperties
    Case(
        "pattern-member",
        {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}},
        ("x-rate",),
        {"integer"},
        set(),
    ),
    Case(
        "additional-member",
        {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}},
        ("rate",),
        {"boolean"},
        set(),
    ),
    # draft-07: $ref overrides its siblings; 2020-12 reads both
    Case(
        "draft-07-ref-overrides",
        {
            "$schema": DRAFT_07,
            "definitions": {"s": {"type": "string"}},
            "properties": {"a": {"$ref": "#/definitions/s", "type": "integer"}},
        },
        ("a",),
        {"string"},
        set(),
    ),
    Case(
        "2020-12-ref-and-siblings",
        {
            "$defs": {"s": {"type": ["string", "integer"]}},
            "properties": {"a": {"$ref": "#/$defs/s", "type": "integer"}},
        },
        ("a",),
        {"integer"},
        set(),
    ),
    Case(
        "draft-07-ref-hides-properties",
        {
            "$schema": DRAFT_07,
            "definitions": {"o": {"type": "object"}},
            "$ref": "#/definitions/o",
            "properties": {"a": {}},
        },
        (),
        {"object"},
        set(),
    ),
    # items: prefixItems then items in 2020-12; an array items then additionalItems before it
    Case("prefixItems", {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, (0,), {"integer"}, set()),
    Case(
        "items-after-prefix",
        {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
        (1,),
        {"string"},
        set(),
    ),
    Case("draft-07-no-prefixItems", {"$schema": DRAFT_07, "prefixItems": [{"type": "integer"}]}, (0,), ALL, set()),
    Case(
        "draft-07-array-items",
        {"$schema": DRAFT_07, "items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        (0,),
        {"integer"},
        set(),
    ),
    Case(
        "draft-07-additionalItems",
        {"$schema": DRAFT_07, "items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        (3,),
        {"string"},
        set(),
    ),
    Case("2020-12-array-items-ignored", {"items": [{"type": "integer"}]}, (0,), ALL, set()),
    Case("items-of-a-member", {"properties": {"tags": {"items": {"type": "string"}}}}, ("tags", 5), {"string"}, set()),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_reader(case: Case) -> None:
    reader = SchemaReader(case.schema)
    assert reader.types(case.location) == case.types
    assert reader.children(case.location) == case.children


def test_the_draft_argument_overrides_schema() -> None:
    schema = {"prefixItems": [{"type": "integer"}]}
    assert SchemaReader(schema).types((0,)) == {"integer"}
    assert SchemaReader(schema, draft="07").types((0,)) == ALL


def test_answers_are_the_same_when_asked_again() -> None:
    reader = SchemaReader({"properties": {"a": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}}})
    first = [reader.types(("a",)), reader.types(("a", "a")), reader.children(("a",))]
    assert [reader.types(("a",)), reader.types(("a", "a")), reader.children(("a",))] == first
    assert first == [ALL, ALL, {"a"}]


def test_past_the_budget_a_location_says_nothing() -> None:
    schema = {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}}
    assert SchemaReader(schema, budget=2).types(("a", "b")) == ALL
    assert SchemaReader(schema, budget=1).children(("a",)) == set()
    assert SchemaReader(schema).types(("a", "b")) == {"integer"}


@pytest.mark.parametrize(
    ("schema", "draft", "message"),
    [
        ([], None, "a schema is an object or a boolean"),
        ({"pattern": "("}, None, "is not an ECMA-262 regular expression"),
        ({"properties": {"a": {"$ref": "https://127.0.0.1:9/schema.json"}}}, None, "nothing is fetched"),
        ({}, "08", "is not one of 2020-12"),
    ],
    ids=["not-a-schema", "invalid-pattern", "remote-ref", "unknown-draft"],
)
def test_a_schema_it_cannot_read_raises_value_error(schema: Any, draft: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SchemaReader(schema, draft=draft)


def test_a_deep_schema_raises_value_error() -> None:
    schema: dict[str, Any] = {}
    for _ in range(300):
        schema = {"not": schema}
    with pytest.raises(ValueError, match="nests deeper than 256 levels"):
        SchemaReader(schema)
