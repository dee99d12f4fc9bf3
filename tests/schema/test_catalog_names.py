"""A tool parameter named like a `BaseModel` method (``copy``, ``json``) is cataloged, audited and
validated under its own name, without pydantic's "shadows an attribute" warning (an error here)."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pydantic_lenient import LenientInt, audit, lenient_tool, tool_catalog
from pydantic_lenient.schema.catalog import model_from_function
from tests.sdks import require


def copy_file(source: str, copy: bool = False, json: Optional[int] = None, limit: LenientInt = 10) -> str:
    """Copy a file."""
    return source


def test_a_parameter_named_copy_is_listed_under_its_own_name() -> None:
    schema = tool_catalog([copy_file])["tools"][0]["inputSchema"]
    assert list(schema["properties"]) == ["source", "copy", "json", "limit"]
    assert schema["properties"]["copy"] == {"default": False, "title": "Copy", "type": "boolean"}
    assert schema["required"] == ["source"]


def test_a_parameter_named_copy_validates_under_its_own_name() -> None:
    model = model_from_function(copy_file)
    arguments = model.model_validate({"source": "a", "copy": True, "json": 3, "limit": "5"})
    assert arguments.model_dump(by_alias=True) == {"source": "a", "copy": True, "json": 3, "limit": 5}


def test_the_audit_names_the_parameter_a_client_sends() -> None:
    assert [str(finding) for finding in audit([copy_file])] == [
        "error: copy_file.copy: bool is not lenient; use StrictBoolish",
        "error: copy_file.json: Optional[int] is not lenient; use Lenient[Optional[LenientInt]]",
    ]


def test_the_lenient_tool_of_it_is_listed_and_passes_the_audit() -> None:
    schema = tool_catalog([lenient_tool(copy_file)])["tools"][0]["inputSchema"]
    assert list(schema["properties"]) == ["source", "copy", "json", "limit"]
    assert audit([lenient_tool(copy_file)]) == []


@pytest.mark.parametrize("keep", [["copy"], ["source", "copy"]])
def test_keep_names_the_parameters(keep: list[str]) -> None:
    model = model_from_function(copy_file, keep=keep)
    assert sorted(field.alias or name for name, field in model.model_fields.items()) == sorted(keep)


@pytest.mark.parametrize("sdk", ["official", "fastmcp"])
def test_a_server_with_a_copy_parameter_is_cataloged_and_audited(sdk: str) -> None:
    if sdk == "official":
        server: Any = require("mcp.server.mcpserver").MCPServer("copying")
        server.tool()(copy_file)
    else:
        server = require("fastmcp").FastMCP("copying")
        server.tool(copy_file)
    schema = tool_catalog(server)["tools"][0]["inputSchema"]
    assert list(schema["properties"]) == ["source", "copy", "json", "limit"]
    assert [finding.path for finding in audit(server)] == ["copy_file.copy", "copy_file.json"]
