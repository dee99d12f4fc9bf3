"""Cursor's ``""`` for a parameter the model left out (cursor/cursor#3614; issue 33, item 4).

Cursor fills every optional, nullable parameter the model leaves out with ``""``. Where ``""`` is
none of the parameter's values, the ways in that know the client (`make_lenient`,
`LenientMiddleware`, the proxy) read it as left out, so the default applies; a parameter that takes
``""`` (text) keeps it, and no other host's arguments change.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient import input_schema, lenient_tool
from pydantic_lenient.hosts import PROFILES, arguments_as_meant
from pydantic_lenient.proxy.relay import _Relay
from pydantic_lenient.schema.catalog import model_from_function
from tests.sdks import require

CURSOR = PROFILES["cursor"]


def fetch(
    folder: str,
    limit: Optional[int] = None,
    order: Optional[Literal["asc", "desc"]] = None,
    note: Optional[str] = None,
    pages: Optional[list[int]] = None,
) -> str:
    """Fetch messages."""
    return json.dumps({"folder": folder, "limit": limit, "order": order, "note": note, "pages": pages})


SCHEMA = input_schema(model_from_function(lenient_tool(fetch)))
LEFT_OUT = {"folder": "Dev", "limit": "", "order": "", "note": "", "pages": ""}


def test_cursor_s_empty_text_is_left_out_where_it_is_no_value_and_kept_for_text() -> None:
    assert CURSOR.as_meant(SCHEMA, dict(LEFT_OUT)) == {"folder": "Dev", "note": ""}


def test_what_cursor_fills_in_is_what_it_reads_back() -> None:
    """The profile's own filling (`Cursor.unset`) of a call that leaves everything optional out."""
    listing = CURSOR.listing(SCHEMA)
    sent = CURSOR.call(listing, {"folder": "Dev"}).arguments
    assert sent == LEFT_OUT
    assert model_from_function(lenient_tool(fetch)).model_validate(CURSOR.as_meant(SCHEMA, sent)).model_dump() == {
        "folder": "Dev",
        "limit": None,
        "order": None,
        "note": "",
        "pages": None,
    }


def test_a_required_parameter_keeps_its_empty_text_and_is_refused_clearly() -> None:
    schema = {"type": "object", "properties": {"n": {"anyOf": [{"type": "number"}, {"type": "null"}]}}}
    assert CURSOR.as_meant({**schema, "required": ["n"]}, {"n": ""}) == {"n": ""}
    assert CURSOR.as_meant(schema, {"n": ""}) == {}


def test_a_parameter_that_admits_no_null_keeps_it() -> None:
    """Cursor fills only nullable parameters; elsewhere ``""`` was sent by the model itself."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 5}}}
    assert CURSOR.as_meant(schema, {"n": ""}) == {"n": ""}


@pytest.mark.parametrize(
    "text",
    [
        {"type": "string"},
        {"type": "string", "maxLength": 5},
        {"type": "string", "pattern": "^[a-z]*$"},
        {"type": "string", "format": "password"},
        {"type": "string", "pattern": "^\\p{L}+$"},  # a pattern Python cannot read: taken as admitting ""
        {"enum": ["", "a"]},
        {"const": ""},
        {},
    ],
)
def test_a_parameter_that_may_take_empty_text_keeps_it(text: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"t": {"anyOf": [text, {"type": "null"}]}}}
    assert CURSOR.as_meant(schema, {"t": ""}) == {"t": ""}


_TEXT = st.fixed_dictionaries(
    {"type": st.just("string")},
    optional={
        "maxLength": st.integers(0, 10),
        "pattern": st.sampled_from(["^.*$", "^[a-z]*$", "", "x?", "^(?:a|)$"]),
        "format": st.sampled_from(["password", "binary", "unknown-format"]),
    },
)


@given(text=_TEXT, others=st.lists(st.sampled_from([{"type": "integer"}, {"type": "boolean"}]), max_size=2))
def test_a_string_that_takes_empty_text_is_never_changed(text: dict[str, Any], others: list[Any]) -> None:
    """For every text branch that admits ``""``, beside any other branches, Cursor's ``""`` stays."""
    schema = {"type": "object", "properties": {"t": {"anyOf": [*others, text, {"type": "null"}]}}}
    assert CURSOR.as_meant(schema, {"t": ""}) == {"t": ""}


@given(
    arguments=st.dictionaries(
        st.sampled_from(["folder", "limit", "order", "note", "pages", "other"]),
        st.one_of(st.just(""), st.none(), st.integers(), st.text(max_size=3)),
    )
)
def test_only_cursor_reads_a_call_again_and_only_its_empty_texts(arguments: dict[str, Any]) -> None:
    for name, host in PROFILES.items():
        meant = host.as_meant(SCHEMA, dict(arguments))
        if name != "cursor":
            assert meant == arguments
            continue
        assert {key: value for key, value in arguments.items() if key not in meant} == dict.fromkeys(
            set(arguments) - set(meant), ""
        )
        assert all(meant[key] == arguments[key] for key in meant)


def test_arguments_as_meant_picks_the_host_by_client_name() -> None:
    assert arguments_as_meant("cursor-vscode", SCHEMA, {"limit": ""}) == {}
    sent = {"limit": ""}
    assert arguments_as_meant("claude-code", SCHEMA, sent) is sent
    assert arguments_as_meant(None, SCHEMA, sent) is sent
    assert arguments_as_meant("x" * 10_000, SCHEMA, sent) is sent


def test_a_hostile_listing_is_read_cautiously() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"anyOf": [deep, {"type": "null"}]}
    cyclic = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/A"}, "t": deep},
        "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}},
    }
    assert CURSOR.as_meant(cyclic, {"n": "", "t": ""}) == {"n": "", "t": ""}
    huge = {
        "type": "object",
        "properties": {"t": {"anyOf": [{"type": "string", "pattern": "a" * 5000}, {"type": "null"}]}},
    }
    assert CURSOR.as_meant(huge, {"t": ""}) == {"t": ""}


# ---- the ways in that know the client


CALL = {"folder": "Dev", "limit": "", "order": "", "note": ""}
TAKEN = {"folder": "Dev", "limit": None, "order": None, "note": "", "pages": None}


async def _official(client_name: str, mode: str) -> Any:
    mcp = require("mcp")
    from mcp.types import Implementation

    from pydantic_lenient.adapters.mcp import make_lenient

    server = make_lenient(require("mcp.server.mcpserver").MCPServer("mail"), lenient_parameters=True)
    server.tool()(fetch)
    async with mcp.Client(server, client_info=Implementation(name=client_name, version="1"), mode=mode) as client:
        result = await client.call_tool("fetch", CALL)
    return None if result.is_error else json.loads(result.content[0].text)


async def _fastmcp(client_name: str, mode: str) -> Any:
    fastmcp = require("fastmcp")
    from mcp.types import Implementation

    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("mail", middleware=[LenientMiddleware(lenient_parameters=True)])
    server.tool(fetch)
    async with fastmcp.Client(server, client_info=Implementation(name=client_name, version="1")) as client:
        result = await client.call_tool("fetch", CALL, raise_on_error=False)
    return None if result.is_error else json.loads(result.content[0].text)


@pytest.mark.parametrize(
    ("serve", "mode"),
    [
        pytest.param(_official, "legacy", id="official-sdk-initialize"),
        pytest.param(_official, "2026-07-28", id="official-sdk-meta"),
        pytest.param(_fastmcp, "", id="fastmcp"),
    ],
)
def test_an_adapter_reads_cursor_s_empty_text_as_left_out(serve: Any, mode: str) -> None:
    assert asyncio.run(serve("cursor-vscode", mode)) == TAKEN
    assert asyncio.run(serve("claude-code", mode)) is None  # another host's "" is refused, clearly


def _relay_call(client_name: str, meta: bool) -> Any:
    relay = _Relay("portable", normalizer=None, stats=None)
    info = {"name": client_name, "version": "1"}
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
    relay.from_client(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}).encode() + b"\n"
    )
    relay.from_upstream(
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}\n'
    )
    relay.from_client(b'{"jsonrpc":"2.0","id":"list","method":"tools/list"}\n')
    plain = model_from_function(fetch).model_json_schema()
    listing = {"jsonrpc": "2.0", "id": "list", "result": {"tools": [{"name": "fetch", "inputSchema": plain}]}}
    relay.from_upstream(json.dumps(listing).encode() + b"\n")
    params: dict[str, Any] = {"name": "fetch", "arguments": CALL}
    if meta:
        params["_meta"] = {"io.modelcontextprotocol/clientInfo": {"name": client_name, "version": "1"}}
    forwarded = relay.from_client(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode() + b"\n"
    )
    return json.loads(forwarded.upstream)["params"]["arguments"]


@pytest.mark.parametrize("meta", [False, True], ids=["initialize", "meta"])
def test_the_proxy_reads_cursor_s_empty_text_as_left_out(meta: bool) -> None:
    assert _relay_call("cursor-vscode", meta) == {"folder": "Dev", "note": ""}
    assert _relay_call("claude-code", meta) == CALL
