"""Properties mirrored into HTTP headers (``x-mcp-header``) keep the shape MCP 2026-07-28 allows
through every style and through the proxy's widening; the official SDK's own check is the judge."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from pydantic_lenient import LenientInt, StrictBoolish, apply_style
from pydantic_lenient.schema.mcp_headers import X_MCP_HEADER, header_properties, with_header_properties
from pydantic_lenient.schema.styles import STYLES, Style, is_in_style
from pydantic_lenient.schema.widen import widen_schema


def _sdk_check() -> Any:
    """The official SDK's ``x-mcp-header`` rules (mcp 2.1.0 and later); skipped without the SDK."""
    try:
        from mcp.shared import inbound
    except ImportError:
        pytest.skip("the installed mcp predates x-mcp-header (mcp 2.1.0 has it)")
    if not hasattr(inbound, "find_invalid_x_mcp_header"):
        pytest.skip("the installed mcp predates x-mcp-header (mcp 2.1.0 has it)")
    return inbound


_SCALARS = ("string", "integer", "boolean")
_names = st.text(alphabet="abcdefgh", min_size=1, max_size=3)


@st.composite
def _object_schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """Object schemas whose properties are scalars (some marked, each with its own header token),
    numbers, arrays, nullable unions and nested objects."""
    members: dict[str, Any] = {}
    for name in draw(st.lists(_names, max_size=4, unique=True)):
        kind = draw(st.sampled_from(["marked", "scalar", "number", "array", "nullable", "object"]))
        if kind == "object" and depth < 3:
            members[name] = draw(_object_schemas(depth + 1))
        elif kind == "marked":
            members[name] = {"type": draw(st.sampled_from(_SCALARS)), X_MCP_HEADER: "H"}
        elif kind == "number":
            members[name] = {"type": "number", "minimum": 0}
        elif kind == "array":
            members[name] = {"type": "array", "items": {"type": "integer"}}
        elif kind == "nullable":
            members[name] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        else:
            members[name] = {"type": draw(st.sampled_from(_SCALARS))}
    return {"type": "object", "properties": members}


def _numbered(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each header token made unique (the spec forbids two alike)."""
    count = 0

    def visit(node: Any) -> Any:
        nonlocal count
        if not isinstance(node, dict):
            return node
        if X_MCP_HEADER in node:
            count += 1
            return {**node, X_MCP_HEADER: f"H{count}"}
        if isinstance(node.get("properties"), dict):
            return {**node, "properties": {name: visit(member) for name, member in node["properties"].items()}}
        return node

    return dict(visit(schema))


def _marked(schema: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Each marked property by its chain of ``properties`` names."""
    found: dict[tuple[str, ...], Any] = {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    for name, member in properties.items() if isinstance(properties, dict) else ():
        where = (*path, name)
        if isinstance(member, dict) and X_MCP_HEADER in member:
            found[where] = member
        found.update(_marked(member, where))
    return found


@given(schema=_object_schemas().map(_numbered), style=st.sampled_from(STYLES))
def test_widening_and_every_style_keep_each_header_property_valid_and_as_it_was(schema: Any, style: Style) -> None:
    inbound = _sdk_check()
    assert inbound.find_invalid_x_mcp_header(schema) is None
    for rewritten in (widen_schema(schema, style), apply_style(schema, style)):
        assert inbound.find_invalid_x_mcp_header(rewritten) is None, rewritten
        assert _marked(rewritten) == _marked(schema)
    # A listing the adapters wrote is in its style, as the catalog of a server checks it.
    assert is_in_style(apply_style(schema, style), style)


def test_widening_still_widens_everything_else() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "region": {"type": "integer", X_MCP_HEADER: "Region"},
            "place": {"type": "object", "properties": {"zip": {"type": "string", X_MCP_HEADER: "Zip"}}},
            "limit": {"type": "integer"},
            "other": {"type": "object", "properties": {"flag": {"type": "boolean"}}},
        },
    }
    widened = widen_schema(schema, "any-of")["properties"]
    assert widened["region"] == schema["properties"]["region"]
    assert widened["place"] == schema["properties"]["place"]  # on the way to a header: never wrapped as JSON text
    assert widened["limit"]["anyOf"][0] == {"type": "integer"}
    assert len(widened["other"]["anyOf"]) == 2  # an object with no header takes its JSON text
    assert len(widened["other"]["anyOf"][0]["properties"]["flag"]["anyOf"]) == 2


@pytest.mark.parametrize("style", STYLES)
def test_a_lenient_header_parameter_is_advertised_in_its_one_canonical_type(style: Style) -> None:
    class Forecast(BaseModel):
        region: Annotated[LenientInt, Field(json_schema_extra={X_MCP_HEADER: "Region"})]
        urgent: Annotated[StrictBoolish, Field(json_schema_extra={X_MCP_HEADER: "Urgent"})] = False
        days: LenientInt = 1

    properties = apply_style(Forecast, style)["properties"]
    assert properties["region"] == {"type": "integer", "title": "Region", X_MCP_HEADER: "Region"}
    assert properties["urgent"]["type"] == "boolean"
    assert properties["days"] == apply_style(Forecast.model_json_schema(), style)["properties"]["days"]
    if style != "strict":
        assert properties["days"] != {"type": "integer", "default": 1, "title": "Days"}


def test_a_hostile_chain_is_read_without_recursion() -> None:
    depth = 200_000
    leaf: dict[str, Any] = {"type": "string", X_MCP_HEADER: "Deep"}
    schema: dict[str, Any] = leaf
    for _ in range(depth):
        schema = {"properties": {"p": schema}}
    found = header_properties(schema)
    assert found.marked == {id(leaf)}
    assert len(found.chain) == depth
    assert with_header_properties({"properties": {"a": {"type": "integer"}}}, lambda node: {}) == {
        "properties": {"a": {"type": "integer"}}
    }
