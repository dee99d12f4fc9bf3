"""Targets: each one's schema, checked against the model with a real validator.

For every lenient type, Optional or not, with bounds, and for every JSON-shaped field (LenientJson,
JsonText, nested models, tuples), a host validating against a target's schema and the model agree,
except where the target reports a `Loss` for that field (and, as everywhere, the README's listed
exceptions). The provider SDKs' own conversions are checked in tests/schema/test_providers.py.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from typing import Annotated, Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from pydantic_lenient import TARGETS, LenientFloat, LenientInt, LenientUInt, Target, input_schema, target_schema
from pydantic_lenient.schema.targets import DRAFT_07, TargetSchema, default_style_for, to_target
from pydantic_lenient.testing import host_validator
from tests.contract import SCALAR_TYPES, agrees, is_nested_portable_exception, server_verdict, tool_model
from tests.losses import explained
from tests.strategies import any_input, json_values
from tests.types_.test_json_values import JSON_FIELDS, Step, Tool

# Targets whose schema says exactly what the validator means for every scalar type.
EXACT_FOR_SCALARS: tuple[Target, ...] = ("mcp", "mcp-draft-07", "openai", "gemini")


@functools.cache
def _scalar_model(name: str, optional: bool) -> type[BaseModel]:
    return tool_model(SCALAR_TYPES[name][0], optional=optional)


@functools.cache
def _scalar_target(name: str, optional: bool, target: Target) -> TargetSchema:
    return target_schema(_scalar_model(name, optional), target)


@functools.cache
def _validator(target: Target, schema_json: str) -> Any:
    return host_validator(json.loads(schema_json))


def _host_accepts(result: TargetSchema, arguments: dict[str, Any]) -> bool:
    return bool(_validator(result.target, json.dumps(result.schema)).is_valid(arguments))


@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@given(value=any_input)
def test_every_target_and_the_model_agree_on_scalars(name: str, value: Any) -> None:
    for optional, target in itertools.product((False, True), TARGETS):
        result = _scalar_target(name, optional, target)
        arguments = {"value": value}
        verdict = server_verdict(_scalar_model(name, optional), arguments)
        host_accepts = _host_accepts(result, arguments)
        if agrees(host_accepts, value, verdict, portable=target in ("mcp", "mcp-draft-07")):
            continue
        message = f"{target}: host {'accepts' if host_accepts else 'refuses'} {value!r}; model: {verdict.errors}"
        # A form the validator takes is never lost; a constraint a target cannot carry is reported.
        assert host_accepts, message
        assert target not in EXACT_FOR_SCALARS, message
        assert explained(result, "value"), message


@pytest.mark.parametrize("target", EXACT_FOR_SCALARS)
def test_scalars_lose_nothing_but_optional_properties_in_exact_targets(target: Target) -> None:
    for name in SCALAR_TYPES:
        assert _scalar_target(name, False, target).losses == ()
        losses = _scalar_target(name, True, target).losses
        expected = ["required: the model must send it"] if target == "openai" else []
        assert [loss.what.split(" (")[0] for loss in losses] == expected, (name, losses)


def test_anthropic_moves_bounds_and_patterns_into_the_description() -> None:
    result = target_schema(tool_model(Annotated[LenientInt, Field(ge=1, le=500)], optional=False), "anthropic")
    assert result.schema["properties"]["value"]["anyOf"] == [
        {"type": "integer", "description": "maximum: 500; minimum: 1"},
        {"type": "string", "description": 'pattern: "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"'},
    ]
    assert {loss.location for loss in result.losses} == {"/properties/value/anyOf/0", "/properties/value/anyOf/1"}


def _full(arguments: dict[str, Any]) -> dict[str, Any]:
    """Every Tool property present (null where absent), as strict providers make the model send them."""
    return dict.fromkeys(Tool.model_fields) | arguments


_step = st.fixed_dictionaries({"action": st.text(max_size=3)}, optional={"limit": any_input})
JSON_INPUT = st.one_of(
    any_input, json_values.map(json.dumps), st.lists(_step, max_size=2), st.lists(_step).map(json.dumps)
)
CONTRACT_FIELDS = [field for field in JSON_FIELDS if field != "tags"]  # pydantic's own set mismatch


@functools.cache
def _tool_target(target: Target) -> TargetSchema:
    return target_schema(Tool, target)


@pytest.mark.parametrize("field", CONTRACT_FIELDS)
@given(value=JSON_INPUT)
def test_every_target_and_the_model_agree_on_json_shaped_fields(field: str, value: Any) -> None:
    arguments = _full({field: value})
    verdict = server_verdict(Tool, arguments)
    for target in TARGETS:
        result = _tool_target(target)
        host_accepts = _host_accepts(result, arguments)
        if host_accepts == verdict.accepted or (host_accepts and isinstance(value, str)):
            continue  # agreement, or the listed exception: hosts do not check that a string is JSON of T
        if host_accepts and default_style_for(target) == "portable" and is_nested_portable_exception(verdict):
            continue  # the portable listing's number branch (docs/guarantees.md, 8)
        assert explained(result, field), (target, field, value, host_accepts, verdict.errors)


def test_mcp_targets_lose_nothing_on_json_shaped_fields() -> None:
    assert _tool_target("mcp").losses == ()
    assert _tool_target("mcp-draft-07").losses == ()
    assert _tool_target("mcp").schema == input_schema(Tool)


def test_gemini_loses_only_the_tuple_positions_and_unique_items() -> None:
    assert [(loss.location, loss.what.split(":")[0]) for loss in _tool_target("gemini").losses] == [
        ("/properties/pair/anyOf/0", "prefixItems cannot be expressed"),
        ("/properties/tags/anyOf/0", "uniqueItems moved into the description"),
    ]


class Pair(BaseModel):
    pair: tuple[int, str]
    rest: tuple[int, ...] = ()
    head: Optional[tuple[str, LenientUInt]] = None
    step: Optional[Step] = None


def test_draft_07_writes_tuples_as_item_arrays_and_definitions() -> None:
    schema = input_schema(Pair, style="type-array", target="mcp-draft-07")
    assert schema["$schema"] == DRAFT_07
    assert schema["properties"]["pair"]["items"] == [{"type": "integer"}, {"type": "string"}]
    assert schema["properties"]["pair"]["additionalItems"] is False
    assert "prefixItems" not in json.dumps(schema)
    assert "$defs" not in schema
    assert schema["definitions"]["Step"]["type"] == "object"
    assert "#/definitions/Step" in json.dumps(schema)
    host = host_validator(schema)
    assert host.is_valid({"pair": [5, "x"], "head": ["a", "7"], "step": {"action": "a"}})
    assert not host.is_valid({"pair": ["x", 5]})
    assert not host.is_valid({"pair": [5, "x", 6]})
    assert not host.is_valid({"pair": [5, "x"], "head": ["a", "-7"]})


def test_draft_07_hosts_let_2020_12_tuples_through() -> None:
    """The reason for the draft-07 target: a draft-07 host ignores prefixItems."""
    schema = input_schema(Pair)
    assert host_validator(schema, draft="07").is_valid({"pair": ["x", 5]})
    assert not host_validator(schema, draft="2020-12").is_valid({"pair": ["x", 5]})


def test_openai_closes_every_object_and_requires_every_property() -> None:
    result = target_schema(Tool, "openai")
    objects = [node for node in _nodes(result.schema) if node.get("type") == "object"]
    assert objects
    for node in objects:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    assert '"default"' not in json.dumps(result.schema)
    assert "contentMediaType" not in json.dumps(result.schema)


def test_gemini_inlines_definitions_and_writes_inclusive_bounds() -> None:
    model = create_model(
        "Bounded",
        ratio=(Annotated[LenientFloat, Field(gt=0, lt=1)], ...),
        count=(Annotated[LenientInt, Field(gt=-3, lt=3)], ...),
        step=(Step, ...),
    )
    schema = input_schema(model, target="gemini")
    ratio, count = schema["properties"]["ratio"]["anyOf"][0], schema["properties"]["count"]["anyOf"][0]
    assert ratio == {"type": "number", "minimum": math.nextafter(0.0, 1.0), "maximum": math.nextafter(1.0, 0.0)}
    assert count == {"type": "integer", "minimum": -2, "maximum": 2}
    assert "$ref" not in json.dumps(schema)
    assert "$defs" not in schema
    assert schema["properties"]["step"]["properties"]["action"] == {"title": "Action", "type": "string"}


class Node(BaseModel):
    children: list[Node] = []


def test_gemini_refuses_a_recursive_model_with_one_clear_error() -> None:
    with pytest.raises(ValueError, match="refers to itself"):
        target_schema(Node, "gemini")


def test_gemini_refuses_a_ref_fan_out_that_would_explode() -> None:
    definitions: dict[str, Any] = {
        f"D{level}": {"anyOf": [{"$ref": f"#/$defs/D{level + 1}"}] * 4} for level in range(12)
    }
    definitions["D12"] = {"type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": definitions}
    with pytest.raises(ValueError, match="more than"):
        to_target(schema, "gemini")


def test_an_unknown_target_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown target 'claude'"):
        input_schema(Tool, target="claude")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected one of mcp, mcp-draft-07, openai, anthropic, gemini"):
        to_target({"type": "object"}, "nope")  # type: ignore[arg-type]


@pytest.mark.parametrize("target", TARGETS)
def test_targets_do_not_change_their_input(target: Target) -> None:
    schema = input_schema(Tool)
    before = json.dumps(schema)
    to_target(schema, target)
    assert json.dumps(schema) == before


@pytest.mark.parametrize("target", TARGETS)
def test_the_strict_style_gives_canonical_types_in_every_target(target: Target) -> None:
    model = tool_model(LenientUInt, optional=True)
    schema = target_schema(model, target, style="strict").schema
    host = host_validator(schema)
    assert host.is_valid({"value": 5})
    assert not host.is_valid({"value": "5"})
    assert model.model_validate({"value": "5"}).model_dump() == {"value": 5}


def _nodes(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found.append(node)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


@pytest.mark.parametrize("target", TARGETS)
def test_hostile_nesting_is_one_clear_error(target: Target) -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        schema = {"type": "array", "items": schema}
    root = {"type": "object", "properties": {"x": schema}}
    with pytest.raises(ValueError, match="deeper than"):
        to_target(root, target)


def test_draft_07_replaces_a_declared_dialect_and_keeps_refs_resolvable() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/definitions/B"}},
        "$defs": {"A": {"type": "integer"}},
        "definitions": {"B": {"type": "string"}},
    }
    result = to_target(schema, "mcp-draft-07").schema
    assert result["$schema"] == DRAFT_07
    host = host_validator(result)
    assert host.is_valid({"a": 1, "b": "x"})
    assert not host.is_valid({"a": "1"})
    assert not host.is_valid({"b": 1})


def test_gemini_refuses_a_ref_chain_that_nests_too_deep() -> None:
    definitions: dict[str, Any] = {
        f"D{n}": {"type": "array", "items": {"$ref": f"#/$defs/D{n + 1}"}} for n in range(300)
    }
    definitions["D300"] = {"type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": definitions}
    with pytest.raises(ValueError, match="deeper than"):
        to_target(schema, "gemini")
