"""The proxy's own requests speak the client's era: the relay alone, no SDK, no process."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.proxy.relay import _Relay
from tests.eras import ENVELOPE, LEGACY, modern


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _messages(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line]


def _call(request_id: int, params: dict[str, Any]) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def test_a_modern_call_before_any_listing_sends_the_listing_with_its_envelope() -> None:
    relay = _Relay("type-array", normalizer=None, stats=None)
    sent = _messages(relay.from_client(_call(1, modern({"name": "add", "arguments": {"a": "2"}}))).upstream)
    assert [message["method"] for message in sent] == ["tools/list"]
    assert sent[0]["params"] == {"_meta": ENVELOPE}
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    listing = {"jsonrpc": "2.0", "id": sent[0]["id"], "result": {"tools": [{"name": "add", "inputSchema": schema}]}}
    released = _messages(relay.from_upstream(_line(listing)).upstream)
    assert released[0]["params"]["arguments"] == {"a": 2}
    assert released[0]["params"]["_meta"] == ENVELOPE  # the client's own envelope, untouched


def test_the_next_page_and_the_pings_carry_the_envelope_too() -> None:
    relay = _Relay("type-array", normalizer=None, stats=None)
    first = _messages(relay.from_client(_call(1, modern({"name": "add", "arguments": {}}))).upstream)[0]
    page = {"jsonrpc": "2.0", "id": first["id"], "result": {"tools": [], "nextCursor": "c2"}}
    second = _messages(relay.from_upstream(_line(page)).upstream)[0]
    assert second["params"] == {"cursor": "c2", "_meta": ENVELOPE}
    ping = json.loads(relay.ping(lambda: None))
    assert ping["method"] == "server/discover"  # 2026-07-28 has no ping
    assert ping["params"] == {"_meta": ENVELOPE}


def test_after_a_handshake_the_proxys_requests_carry_no_envelope() -> None:
    relay = _Relay("type-array", normalizer=None, stats=None)
    handshake = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    relay.from_client(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": handshake}))
    sent = _messages(relay.from_client(_call(1, {"name": "add", "arguments": {}})).upstream)
    assert sent == [{"jsonrpc": "2.0", "id": sent[0]["id"], "method": "tools/list"}]
    ping = json.loads(relay.ping(lambda: None))
    assert ping["method"] == "ping"
    assert "params" not in ping


@given(
    meta=st.dictionaries(
        st.sampled_from([*ENVELOPE, "io.modelcontextprotocol/logLevel", "progressToken", "traceparent"]),
        st.one_of(st.text(), st.integers(), st.dictionaries(st.text(), st.text())),
    )
)
def test_only_the_envelope_keys_of_a_request_naming_its_version_are_copied(meta: dict[str, Any]) -> None:
    """Nothing else of the client's ``_meta`` (its progress token, trace context, log level) is
    ever sent again in the proxy's own requests."""
    relay = _Relay("type-array", normalizer=None, stats=None)
    sent = json.loads(relay.from_client(_call(1, {"name": "add", "arguments": {}, "_meta": meta})).upstream)
    if isinstance(meta.get("io.modelcontextprotocol/protocolVersion"), str):
        assert sent["params"]["_meta"] == {key: value for key, value in meta.items() if key in ENVELOPE}
    else:
        assert "params" not in sent
