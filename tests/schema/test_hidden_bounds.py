"""Bounds written outside an Optional around a lenient type: what pydantic really advertises for
them, what the audit says, and what the catalog of a plain server shows (issue 23, items 1 and 3).

Pydantic advertises such a bound under its own name (``"ge": 1``), which no host checks
(pydantic/pydantic#11576). The table holds the placements people write, each checked against
pydantic's real JSON schema and a real host validator: if pydantic fixes the issue, the leaking
rows fail here, and the audit, which reads only the JSON, stops reporting them.
"""

# ruff: noqa: B008  (bounds in Field defaults are the placements under test)
from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from annotated_types import Interval
from pydantic import BaseModel, Field, ValidationError

from pydantic_lenient import (
    Lenient,
    LenientFloat,
    LenientInt,
    LenientJson,
    LenientUInt,
    audit,
    render_annotation,
    tool_catalog,
)
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.hidden_bounds import hidden_bounds
from pydantic_lenient.schema.hosts import host_validator
from pydantic_lenient.schema.targets import to_target
from pydantic_lenient.types.annotations import with_metadata
from tests.sdks import require

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().parents[1] / "leaky_server.py"


# One tool per placement, written as people write them; its one parameter is `value`.
def optional_field_default(value: Optional[LenientInt] = Field(None, ge=1, le=500)) -> None: ...
def union_none_field_default(value: LenientInt | None = Field(default=None, ge=1, le=500)) -> None: ...
def annotated_optional_field(value: Annotated[Optional[LenientInt], Field(ge=1, le=500)] = None) -> None: ...
def annotated_optional_interval(value: Annotated[Optional[LenientInt], Interval(ge=1, le=500)] = None) -> None: ...
def float_multiple_of(value: Optional[LenientFloat] = Field(None, multiple_of=0.5)) -> None: ...
def float_gt_lt(value: LenientFloat | None = Field(default=None, gt=0, lt=1)) -> None: ...
def uint_le(value: Optional[LenientUInt] = Field(None, le=10)) -> None: ...
def lenient_optional_int(value: Lenient[Optional[int]] = Field(None, ge=1, le=500)) -> None: ...
def lenient_optional_float(value: Lenient[Optional[float]] = Field(None, ge=0, le=100)) -> None: ...
def json_dict_max_length(value: Optional[LenientJson[dict[str, int]]] = Field(None, max_length=1)) -> None: ...
def required_field_default(value: LenientInt = Field(1, ge=1, le=500)) -> None: ...
def lenient_int_field_default(value: Lenient[int] = Field(1, ge=1, le=500)) -> None: ...
def uint_field_default(value: LenientUInt = Field(1, le=10)) -> None: ...
def float_field_default(value: LenientFloat = Field(1.0, gt=0)) -> None: ...
def bound_inside_optional(value: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None) -> None: ...
def lenient_annotated_optional(value: Lenient[Annotated[Optional[int], Field(ge=1, le=500)]] = None) -> None: ...
def float_inside_optional(value: Optional[Annotated[LenientFloat, Field(multiple_of=0.5)]] = None) -> None: ...
def float_gt_lt_inside(value: Optional[Annotated[LenientFloat, Field(gt=0, lt=1)]] = None) -> None: ...
def uint_inside_optional(value: Optional[Annotated[LenientUInt, Field(le=10)]] = None) -> None: ...
def lenient_int_inside(value: Lenient[Optional[Annotated[LenientInt, Field(ge=1, le=500)]]] = None) -> None: ...
def lenient_float_inside(value: Lenient[Optional[Annotated[LenientFloat, Field(ge=0, le=100)]]] = None) -> None: ...
def json_dict_inside(value: Optional[LenientJson[Annotated[dict[str, int], Field(max_length=1)]]] = None) -> None: ...
def required_bound_in_annotated(value: Annotated[LenientInt, Field(ge=1, le=500)] = 1) -> None: ...
def uint_bound_in_annotated(value: Annotated[LenientUInt, Field(le=10)] = 1) -> None: ...
def float_bound_in_annotated(value: Annotated[LenientFloat, Field(gt=0)] = 1.0) -> None: ...
def lenient_optional_list(value: Lenient[Optional[list[int]]] = Field(None, max_length=3)) -> None: ...
def json_list_max_length(value: Optional[LenientJson[list[int]]] = Field(None, max_length=3)) -> None: ...
def plain_optional_int(value: Optional[int] = Field(None, ge=1, le=500)) -> None: ...


ADVERTISED = "advertised"  # pydantic's JSON carries the bound where no host checks it


@dataclass(frozen=True)
class Placement:
    tool: Callable[..., None]
    hidden: str  # "" or ADVERTISED
    refused: Any  # a value outside the bound: a host admits it exactly when the bound is hidden
    instead: Callable[..., None] | None = None  # for a hidden bound: the clean form the audit suggests

    @property
    def id(self) -> str:
        return self.tool.__name__


PLACEMENTS = [
    Placement(optional_field_default, ADVERTISED, 501, bound_inside_optional),
    Placement(union_none_field_default, ADVERTISED, "0", bound_inside_optional),
    Placement(annotated_optional_field, ADVERTISED, 0, bound_inside_optional),
    Placement(annotated_optional_interval, ADVERTISED, "501", bound_inside_optional),
    Placement(float_multiple_of, ADVERTISED, 0.3, float_inside_optional),
    Placement(float_gt_lt, ADVERTISED, 1, float_gt_lt_inside),
    Placement(uint_le, ADVERTISED, 11, uint_inside_optional),
    Placement(json_dict_max_length, ADVERTISED, {"a": 1, "b": 2}, json_dict_inside),
    # pydantic applies a Field(...) default's bound before the marker (pydantic/pydantic#10507), which takes it in.
    Placement(required_field_default, "", 0),
    Placement(lenient_int_field_default, "", "501"),
    Placement(uint_field_default, "", 11),
    Placement(float_field_default, "", 0),
    Placement(bound_inside_optional, "", 501),
    Placement(lenient_annotated_optional, "", "0"),
    Placement(float_inside_optional, "", 0.3),
    Placement(float_gt_lt_inside, "", 1),
    Placement(uint_inside_optional, "", 11),
    Placement(lenient_int_inside, "", "0"),
    Placement(lenient_float_inside, "", 101),
    Placement(json_dict_inside, "", {"a": 1, "b": 2}),
    Placement(required_bound_in_annotated, "", 0),
    Placement(uint_bound_in_annotated, "", 11),
    Placement(float_bound_in_annotated, "", 0),
    Placement(lenient_optional_list, "", [1, 2, 3, 4]),
    Placement(json_list_max_length, "", [1, 2, 3, 4]),
    Placement(plain_optional_int, "", 0),
    # pydantic writes the bound beside the marker's anyOf under its own names (pydantic/pydantic#11576);
    # the NullText marker, writing its part of the portable shape, moves it onto the number branch.
    Placement(lenient_optional_int, "", 0),
    Placement(lenient_optional_float, "", 101),
]
CLEAN = [case.tool for case in PLACEMENTS if not case.hidden]


def _written(tool: Callable[..., None]) -> str:
    """A tool's `value` annotation as the audit writes annotations."""
    field = model_from_function(tool).model_fields["value"]
    return render_annotation(with_metadata(field.annotation, tuple(field.metadata)))


@pytest.mark.parametrize("case", PLACEMENTS, ids=lambda case: case.id)
def test_what_pydantic_advertises_for_each_placement(case: Placement) -> None:
    model = model_from_function(case.tool)
    advertised = model.model_json_schema()  # what a plain framework lists
    shown = json.dumps(advertised["properties"]["value"])
    assert bool(hidden_bounds(advertised)) is (case.hidden == ADVERTISED), shown
    assert host_validator(advertised).is_valid({"value": case.refused}) is bool(case.hidden), shown
    with pytest.raises(ValidationError):
        model.model_validate({"value": case.refused})


@pytest.mark.parametrize("case", PLACEMENTS, ids=lambda case: case.id)
def test_the_audit_reports_exactly_the_hidden_bounds(case: Placement) -> None:
    found = [finding for finding in audit([case.tool]) if finding.advertised is not None]
    if not case.hidden:
        assert found == []
        return
    assert case.instead in CLEAN
    (finding,) = found
    assert (finding.level, finding.path) == ("error", f"{case.id}.value")
    assert finding.suggestion == _written(case.instead)  # a clean row of this table
    assert finding.annotation == _written(case.tool)
    assert "not JSON Schema keywords" in str(finding) or "does not constrain" in str(finding)
    assert str(finding).endswith(f"; use {finding.suggestion}")


def test_the_audit_says_where_the_adapters_list_the_bound_correctly() -> None:
    (outside,) = [finding for finding in audit([optional_field_default]) if finding.advertised is not None]
    assert "make_lenient and LenientMiddleware list it as JSON Schema" in str(outside)
    (misplaced,) = [finding for finding in audit([json_dict_max_length]) if finding.advertised is not None]
    assert "make_lenient" not in str(misplaced)  # their style stage does not move a maxLength


def test_an_item_of_a_list_is_reported_without_an_annotation_to_rewrite() -> None:
    def tagged(values: list[Annotated[Optional[LenientInt], Field(ge=1)]]) -> None: ...

    (finding,) = [finding for finding in audit([tagged]) if finding.advertised is not None]
    assert (finding.path, finding.annotation, finding.suggestion) == ("tagged.values[]", "", "")
    assert "use the bound inside the Optional" in str(finding)


class Window(BaseModel):
    size: Optional[LenientInt] = Field(None, ge=1)


def scroll(window: Optional[Window] = None) -> None: ...


def test_a_nested_models_field_is_reported_with_its_path() -> None:
    (finding,) = [finding for finding in audit([scroll]) if finding.advertised is not None]
    assert (finding.path, finding.suggestion) == ("scroll.window.size", "Optional[Annotated[LenientInt, Field(ge=1)]]")


# --- plain servers: the catalog is what the server lists, and the audit checks that -----------------


def _fastmcp_server() -> Any:
    require("fastmcp")
    module = importlib.import_module("tests.leaky_server")
    return module.mcp


def _official_server() -> Any:
    require("mcp.server.mcpserver")
    require("fastmcp")  # the module builds its FastMCP server on import
    return importlib.import_module("tests.leaky_server").official_server()


async def _client_listing(server: Any, sdk: str) -> dict[str, Any]:
    """What a client receives, over an in-process connection."""
    if sdk == "fastmcp":
        fastmcp = require("fastmcp")
        async with fastmcp.Client(server) as client:
            return {tool.name: tool.input_schema for tool in await client.list_tools()}
    mcp = require("mcp")
    async with mcp.Client(server) as client:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


SERVERS = [
    pytest.param(_fastmcp_server, "fastmcp", id="fastmcp"),
    pytest.param(_official_server, "official", id="official"),
]


@pytest.mark.parametrize(("make_server", "sdk"), SERVERS)
def test_the_catalog_of_a_plain_server_is_what_its_clients_receive(make_server: Any, sdk: str) -> None:
    server = make_server()
    received = asyncio.run(asyncio.wait_for(_client_listing(server, sdk), timeout=60))
    cataloged = {tool["name"]: tool["inputSchema"] for tool in tool_catalog(server)["tools"]}
    assert cataloged == received
    limit = cataloged["search"]["properties"]["limit"]
    assert hidden_bounds(limit)  # the defect, as sent
    assert "minimum" not in json.dumps(limit)  # not a repaired copy


@pytest.mark.parametrize(("make_server", "sdk"), SERVERS)
def test_the_audit_of_a_plain_server_reports_its_hidden_bounds(make_server: Any, sdk: str) -> None:
    found = [(finding.level, finding.path, finding.suggestion) for finding in audit(make_server())]
    assert found == [
        ("error", "search.limit", "Optional[Annotated[LenientInt, Field(ge=1, le=500)]]"),
        ("error", "search.page", "Optional[Annotated[LenientInt, Field(ge=1)]]"),
    ]


@pytest.mark.parametrize(("make_server", "sdk"), SERVERS)
def test_a_target_rewrites_what_the_server_lists_and_a_style_cannot_change_it(make_server: Any, sdk: str) -> None:
    server = make_server()
    (listed,) = (tool["inputSchema"] for tool in tool_catalog(server)["tools"])
    (draft_07,) = (tool["inputSchema"] for tool in tool_catalog(server, target="mcp-draft-07")["tools"])
    assert draft_07 == to_target(listed, "mcp-draft-07").schema
    assert hidden_bounds(draft_07)  # an MCP target keeps what the server sends, defects included
    with pytest.raises(ValueError, match=r"in another style than 'strict'.*give the style to its adapter"):
        tool_catalog(server, style="strict")


@pytest.mark.parametrize("sdk", ["fastmcp", "official"])
def test_behind_its_adapter_the_same_server_lists_the_bounds_as_json_schema(sdk: str) -> None:
    require("fastmcp")
    require("mcp.server.mcpserver")
    server = importlib.import_module("tests.leaky_server").adapted(sdk)
    (listed,) = (tool["inputSchema"] for tool in tool_catalog(server)["tools"])
    assert hidden_bounds(listed) == []
    number = listed["properties"]["limit"]["anyOf"][0]  # the portable shape: the number branch first
    assert (number["minimum"], number["maximum"]) == (1, 500)
    assert not host_validator(listed).is_valid({"limit": 501})
    assert [finding for finding in audit(server) if finding.level == "error"] == []


def _catalog_command(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", "catalog", str(SERVER), "--check", *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])},
    )


def test_catalog_check_fails_on_a_plain_server_that_hides_a_bound() -> None:
    require("fastmcp")
    completed = _catalog_command()
    assert completed.returncode == 1, completed.stderr
    assert json.loads(completed.stdout) == tool_catalog(_fastmcp_server())  # the listing, as a client gets it
    assert "error: search.limit: Annotated[Optional[LenientInt], Field(ge=1, le=500)] is advertised with" in (
        completed.stderr
    )
    assert "use Optional[Annotated[LenientInt, Field(ge=1, le=500)]]" in completed.stderr
    assert "search.offset" not in completed.stderr
    assert completed.stderr.strip().endswith("2 error(s), 0 note(s)")
    # A provider's schema is rewritten from the listing, but the check is of what the server sends.
    for_openai = _catalog_command("--target", "openai")
    assert for_openai.returncode == 1, for_openai.stderr
    assert "lost: search/properties/limit: required" in for_openai.stderr
    assert for_openai.stderr.strip().endswith("2 error(s), 0 note(s)")
