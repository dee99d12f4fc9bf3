from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.schema.catalog import ToolSpec, model_from_function, tool_catalog, tool_specs
from pydantic_lenient.testing import host_validator

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class SearchInput(BaseModel):
    """Search a folder."""

    folder: str
    limit: Optional[LenientUInt] = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


def fetch(uid: Annotated[LenientUInt, Field(description="The UID")], dry_run: StrictBoolish = True) -> str:
    """Fetch one message.

    Longer text stays in the description.
    """
    return str(uid)


@dataclass
class ToolObject:
    name: str
    description: str
    input_model: type[BaseModel]


def _names(catalog: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in catalog["tools"]]


@pytest.mark.parametrize(
    ("tools", "names"),
    [
        (("search", SearchInput), ["search"]),
        ([("search", SearchInput), fetch], ["search", "fetch"]),
        ({"find": SearchInput, "get": fetch}, ["find", "get"]),
        (ToolObject("obj", "An object tool.", SearchInput), ["obj"]),
        (SearchInput, ["SearchInput"]),
        ([fetch, [Node]], ["fetch", "Node"]),
    ],
    ids=["pair", "list", "dict", "object", "model", "nested-list"],
)
def test_every_kind_of_tool_is_listed_in_order(tools: Any, names: list[str]) -> None:
    assert _names(tool_catalog(tools)) == names


def test_functions_become_input_models_as_sdks_build_them() -> None:
    (tool,) = tool_catalog([fetch])["tools"]
    assert tool["description"] == "Fetch one message.\n\nLonger text stays in the description."
    schema = tool["inputSchema"]
    assert schema["required"] == ["uid"]
    assert schema["properties"]["uid"]["description"] == "The UID"
    assert schema["properties"]["dry_run"]["default"] is True
    assert model_from_function(fetch).model_validate({"uid": "7", "dry_run": "FALSE"}).model_dump() == {
        "uid": 7,
        "dry_run": False,
    }


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict", "portable"])
def test_every_input_schema_is_an_object_whose_refs_resolve(style: Any) -> None:
    for tool in tool_catalog([SearchInput, Node, fetch], style=style)["tools"]:
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        for reference in _refs(schema):
            assert reference.startswith("#/$defs/")
            assert reference.removeprefix("#/$defs/") in schema["$defs"], reference
        host_validator(schema).is_valid({})  # resolves every $ref it meets, or raises


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if "$ref" in node else []
        return own + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def test_output_is_deterministic() -> None:
    first = json.dumps(tool_catalog([SearchInput, fetch, Node]))
    assert all(json.dumps(tool_catalog([SearchInput, fetch, Node])) == first for _ in range(3))


def test_committed_example_catalog_is_current() -> None:
    """The example's catalog is committed; regenerate it with
    `pydantic-lenient catalog examples/mail_tools.py --output examples/mail_tools.catalog.json`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mail_tools_for_catalog", EXAMPLES / "mail_tools.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    regenerated = json.dumps(tool_catalog(module.TOOLS), indent=2, ensure_ascii=False) + "\n"
    committed = (EXAMPLES / "mail_tools.catalog.json").read_text(encoding="utf-8")
    assert regenerated == committed


@pytest.mark.parametrize(
    ("tools", "error", "message"),
    [
        (42, TypeError, "not a tool"),
        ([("a", SearchInput), ("a", SearchInput)], ValueError, "two tools are named 'a'"),
        ({"x": 42}, TypeError, "neither a model"),
    ],
)
def test_bad_tools_are_refused_with_a_clear_error(tools: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        tool_specs(tools)


def test_tool_spec_is_what_the_catalog_lists() -> None:
    assert tool_specs(("search", SearchInput)) == [ToolSpec("search", "Search a folder.", SearchInput)]
