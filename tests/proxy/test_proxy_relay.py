"""The proxy's relay on its own, message by message (issue 26, item 7): what it rewrites keeps every
value and member, each request is answered exactly once, ids are told apart by method, batches are
handled like single messages, and what it remembers is bounded. No process, no network."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.proxy import messages as messages_module
from pydantic_lenient.proxy import relay as relay_module
from pydantic_lenient.proxy import session as session_module
from pydantic_lenient.proxy.messages import dumped, exact
from pydantic_lenient.proxy.relay import _Relay

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
LISTING = {"jsonrpc": "2.0", "id": "list", "result": {"tools": [{"name": "count", "inputSchema": SCHEMA}]}}
WIDENED_N = {"type": ["integer", "string"], "pattern": "^-?[0-9]+$"}


def _line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _exactly(data: bytes) -> Any:
    """A JSON text with every number as a Decimal, so nothing is rounded in the comparison."""
    return json.loads(data, parse_float=Decimal, parse_int=Decimal)


def _listed(recorder: OutcomeRecorder | None = None) -> _Relay:
    relay = _Relay("type-array", normalizer=None, stats=None, recorder=recorder)
    relay.from_client(_line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
    relay.from_upstream(_line(LISTING))
    return relay


def _call(request_id: Any, arguments: dict[str, Any], **members: Any) -> dict[str, Any]:
    params = {"name": "count", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params, **members}


# ---- re-serialising keeps every value and member


def test_a_rewritten_call_keeps_numbers_beyond_a_double_and_unknown_members_as_written() -> None:
    relay = _listed()
    line = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","x-trace":{"big":1e400,"tiny":1e-400},'
        b'"params":{"name":"count","arguments":{"n":"3","extra":123456789.123456789123456789},'
        b'"_meta":{"huge":' + b"9" * 5000 + b"}}}\n"
    )
    forwarded = relay.from_client(line).upstream
    assert forwarded != line  # rewritten: "3" became 3
    assert b'"n":3' in forwarded
    assert b'"x-trace":{"big":1e400,"tiny":1e-400}' in forwarded
    assert b'"extra":123456789.123456789123456789' in forwarded
    assert b'"huge":' + b"9" * 5000 + b"}" in forwarded


def test_a_widened_listing_keeps_numbers_beyond_a_double_as_written() -> None:
    relay = _Relay("type-array", normalizer=None, stats=None)
    relay.from_client(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    tool = b'{"name":"count","inputSchema":' + json.dumps(SCHEMA).encode() + b',"outputSchema":{"maximum":1e400}}'
    answer = relay.from_upstream(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[' + tool + b"]}}\n").client
    assert b'"outputSchema":{"maximum":1e400}' in answer
    assert json.loads(answer)["result"]["tools"][0]["inputSchema"]["properties"]["n"] == WIDENED_N


def test_a_lone_surrogate_in_a_rewritten_call_is_kept_as_its_escape() -> None:
    relay = _listed()
    arguments = b'{"n":"3","s":"\\ud800"}'
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":' + arguments + b"}}\n"
    forwarded = relay.from_client(line).upstream
    assert b'"n":3' in forwarded
    assert b'"s":"\\ud800"' in forwarded


_numbers = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.builds(
        lambda mantissa, exponent: f"{mantissa}e{exponent}",
        st.integers(min_value=1, max_value=10**30),
        st.integers(min_value=-500, max_value=500),
    ),
    st.decimals(allow_nan=False, allow_infinity=False, places=25).map(str),
)
_json_texts = st.recursive(
    st.one_of(_numbers, st.sampled_from(["true", "false", "null"]), st.text(max_size=5).map(json.dumps)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(
            lambda members: "{" + ",".join(f"{json.dumps(key)}:{value}" for key, value in members.items()) + "}"
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(envelope=_json_texts, argument=_json_texts, meta=_json_texts)
def test_every_value_and_member_of_a_rewritten_call_is_kept(envelope: str, argument: str, meta: str) -> None:
    """Everything but the repaired argument reaches the upstream as the same JSON, number for number."""
    relay = _listed()
    line = (
        f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","x-member":{envelope},'
        f'"params":{{"name":"count","_meta":{meta},"arguments":{{"n":"12","other":{argument}}}}}}}\n'
    ).encode()
    forwarded = _exactly(relay.from_client(line).upstream)
    sent = _exactly(line)
    sent["params"]["arguments"]["n"] = Decimal(12)
    assert forwarded == sent


_texts = st.text(
    st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", '"', "\\", "\n", "é", "😀"])), max_size=8
)
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_infinity=False), _texts),
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(_texts, inner, max_size=4)),
    max_leaves=40,
)


@contextmanager
def _tiny_pieces() -> Iterator[None]:
    """The writer's pieces, runs and depth made tiny, so that small values take every path through it."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"_PIECE": 3, "_RUN_BYTES": 16, "_SHORT_TEXT": 2, "_SMALL": 8, "_DEEP": 3}.items():
            patch.setattr(messages_module, name, value)
        yield


@settings(max_examples=300, deadline=None)
@given(value=_values)
@example(value={1: "a", 2.5: [], False: 0, None: None})  # keys no parsed message has, written as json.dumps does
def test_a_huge_message_is_written_piece_by_piece_as_json_dumps_writes_it(value: Any) -> None:
    """From 1 MB on, a message is written a piece at a time (never held as text and bytes at once):
    byte for byte what it would be in one go, lone surrogates, NaN and all."""
    message = {"jsonrpc": "2.0", "id": 1, "result": value}
    with _tiny_pieces():
        assert dumped(message, size=messages_module._STREAMED) == dumped(message)


@settings(max_examples=150, deadline=None)
@given(text=_json_texts)
def test_numbers_beyond_a_double_are_written_as_read_piece_by_piece(text: str) -> None:
    line = f'{{"jsonrpc":"2.0","id":1,"result":{text}}}'.encode()
    read = exact(line)
    with _tiny_pieces():
        written = dumped(read.value, read.verbatim, size=messages_module._STREAMED)
    assert _exactly(written) == _exactly(line)


# ---- each id answered exactly once


def test_an_answer_the_parser_cannot_read_is_still_the_answer() -> None:
    """A lone-surrogate escape, or nesting past pydantic-core's limit: forwarded as it came, and the
    request counts as answered (ok), so an upstream that then exits answers nothing twice."""
    recorder = OutcomeRecorder()
    relay = _listed(recorder)
    answers = [
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\\ud800"}]}}\n',
        b'{"jsonrpc":"2.0","id":2,"result":{"content":' + b"[" * 300 + b"]" * 300 + b"}}\n",
        b'{"jsonrpc":"2.0","id":3,"result":{"content":' + b"[" * 5000 + b'"]"' + b"]" * 5000 + b"}}\n",
    ]
    for request_id, answer in enumerate(answers, start=1):
        relay.from_client(_line(_call(request_id, {"n": 1})))
        assert relay.from_upstream(answer).client == answer
    assert relay.waiting == {}
    assert relay.abandon("it exited") == []
    assert [(tools.tool, tools.ok, tools.error) for tools in recorder.snapshot().tools] == [("count", 3, 0)]


def test_a_request_the_parser_cannot_read_is_answered_once_when_the_upstream_goes() -> None:
    relay = _listed()
    request = b'{"jsonrpc":"2.0","id":9,"method":"resources/read","params":' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    assert relay.from_client(request).upstream == request
    assert [json.loads(answer)["id"] for answer in relay.abandon("it exited")] == [9]


# ---- an id is tracked with its method


def test_one_id_for_a_call_and_a_listing_in_flight_keeps_them_apart() -> None:
    for listing_first in (False, True):
        relay = _listed()
        relay.schemas.clear()  # the tools listed again, so the second listing is the one to check
        relay.from_client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count"}}))
        relay.from_client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        call_answer = _line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
        listing = _line({**LISTING, "id": 1})
        answers = [listing, call_answer] if listing_first else [call_answer, listing]
        routed = [relay.from_upstream(answer).client for answer in answers]
        widened = json.loads(routed[0] if listing_first else routed[1])
        assert widened["result"]["tools"][0]["inputSchema"]["properties"]["n"] == WIDENED_N
        assert relay.waiting == {}


# ---- batches


def test_a_batch_from_the_client_is_repaired_element_by_element() -> None:
    relay = _listed()
    batch = [_call(1, {"n": "4"}), {"jsonrpc": "2.0", "id": 2, "method": "ping"}, _call(3, {"n": 5})]
    routed = relay.from_client(_line(batch))
    assert json.loads(routed.upstream) == [_call(1, {"n": 4}), batch[1], batch[2]]
    assert routed.client == b""
    assert set(relay.waiting) == {1, 2, 3}


def test_a_batch_that_needs_no_change_goes_on_as_the_same_bytes() -> None:
    relay = _listed()
    line = b'[ {"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","method":"notifications/x"} ]\n'
    assert relay.from_client(line) == relay_module.Routed(upstream=line)


def test_a_batched_listing_from_the_upstream_is_widened() -> None:
    relay = _Relay("type-array", normalizer=None, stats=None)
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    relay.from_client(_line(requests))
    answers = [{**LISTING, "id": 1}, {"jsonrpc": "2.0", "id": 2, "result": {}}]
    routed = json.loads(relay.from_upstream(_line(answers)).client)
    assert routed[0]["result"]["tools"][0]["inputSchema"]["properties"]["n"] == WIDENED_N
    assert routed[1] == answers[1]
    # A call repaired against the listing the batch brought.
    assert json.loads(relay.from_client(_line(_call(3, {"n": "6"}))).upstream)["params"]["arguments"] == {"n": 6}


def test_a_batch_whose_call_conflicts_answers_it_and_forwards_the_rest() -> None:
    from pydantic_lenient.normalizer.engine import Normalizer

    rule = {"id": "n-alias", "tools": ["count"], "type": "param_alias", "from": "num", "to": "n"}
    rules = Normalizer.from_json(json.dumps([rule]))
    relay = _Relay("type-array", normalizer=rules, stats=None)
    relay.from_client(_line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
    relay.from_upstream(_line(LISTING))
    routed = relay.from_client(_line([_call(1, {"num": 1, "n": 2}), _call(2, {"num": "3"})]))
    assert json.loads(routed.upstream) == [_call(2, {"n": 3})]
    (answer,) = json.loads(routed.client)
    assert answer["id"] == 1
    assert answer["result"]["isError"] is True
    assert "'num'" in answer["result"]["content"][0]["text"]
    assert "'n'" in answer["result"]["content"][0]["text"]


# ---- bounded memory


def test_requests_never_answered_are_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(session_module, "_WAITING_LIMIT", 100)
    relay = _listed()
    for request_id in range(250):
        relay.from_client(_line({"jsonrpc": "2.0", "id": request_id, "method": "resources/list"}))
        relay.from_client(_line(_call(f"call-{request_id}", {"n": 1})))
    assert relay.waiting_count == sum(len(methods) for methods in relay.waiting.values()) == 100
    assert len(relay.calls) <= 100
    # The newest are the ones remembered, and answered should the upstream go.
    assert json.loads(relay.abandon("it exited")[-1])["id"] == "call-249"


def test_a_listed_tool_gets_its_repairer_at_its_first_call() -> None:
    """A repairer costs about 18 kB: a listing of thousands of tools builds none, a call builds its
    tool's, and a listing again drops it (the schema may have changed)."""
    relay = _Relay("type-array", normalizer=None, stats=None)
    tools = [{"name": f"t{index}", "inputSchema": SCHEMA} for index in range(500)]
    relay.from_client(_line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
    relay.from_upstream(_line({"jsonrpc": "2.0", "id": "list", "result": {"tools": tools}}))
    assert len(relay.schemas) == 500
    assert relay.repairers == {}
    call = {**_call(1, {"n": "3"}), "params": {"name": "t7", "arguments": {"n": "3"}}}
    assert json.loads(relay.from_client(_line(call)).upstream)["params"]["arguments"] == {"n": 3}
    assert list(relay.repairers) == ["t7"]
    boolean = {"type": "object", "properties": {"n": {"type": "boolean"}}}
    relay.from_client(_line({"jsonrpc": "2.0", "id": "again", "method": "tools/list"}))
    relay.from_upstream(
        _line({"jsonrpc": "2.0", "id": "again", "result": {"tools": [{"name": "t7", "inputSchema": boolean}]}})
    )
    assert relay.repairers == {}
    call = {**_call(2, {}), "params": {"name": "t7", "arguments": {"n": "true"}}}
    assert json.loads(relay.from_client(_line(call)).upstream)["params"]["arguments"] == {"n": True}


def test_a_cancelled_request_is_no_longer_owed() -> None:
    relay = _listed()
    relay.from_client(_line(_call(1, {"n": 1})))
    relay.from_client(_line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
    assert relay.waiting == {}
    assert relay.calls == {}
    assert relay.abandon("it exited") == []


# ---- the proxy's own ids


def test_a_client_id_that_looks_like_the_proxys_own_is_the_clients() -> None:
    """The proxy's ids carry a random part per process: a client's "pydantic-lenient-ping-1" (or its
    listing's id) is the client's request, forwarded and answered, never swallowed."""
    relay = _listed()
    own_ping = json.loads(relay.ping(lambda: None))["id"]
    for request_id in ("pydantic-lenient-ping-1", "pydantic-lenient-list-1", 1):
        request = _line({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert relay.from_client(request).upstream == request
        answer = _line({"jsonrpc": "2.0", "id": request_id, "result": {}})
        assert relay.from_upstream(answer).client == answer
    # The proxy's own ping reply still goes no further.
    assert relay.from_upstream(_line({"jsonrpc": "2.0", "id": own_ping, "result": {}})).client == b""


# ---- a valid call's cost (issue 25, item 6)


def test_a_valid_call_is_validated_once_and_forwarded_as_the_same_bytes(monkeypatch: Any) -> None:
    from pydantic_lenient.repair import budget
    from pydantic_lenient.repair.engine import Repairer

    counts = {"validation": 0, "repair": 0, "walk": 0}
    is_valid, walk = Repairer.is_valid, budget.nested_deeper_than

    def counted_is_valid(self: Repairer, arguments: Any, **options: Any) -> bool:
        counts["validation"] += 1
        return is_valid(self, arguments, **options)

    def counted_walk(value: Any, limit: int) -> bool:
        counts["walk"] += 1
        return walk(value, limit)

    def no_repair(self: Repairer, arguments: Any) -> Any:
        counts["repair"] += 1
        raise AssertionError("a valid call is not repaired")

    monkeypatch.setattr(Repairer, "is_valid", counted_is_valid)
    monkeypatch.setattr(Repairer, "verdict", lambda *_, **__: pytest.fail("no reasons are asked for"))
    monkeypatch.setattr(Repairer, "repair", no_repair)
    monkeypatch.setattr(budget, "nested_deeper_than", counted_walk)
    relay = _listed(OutcomeRecorder())
    line = _line(_call(1, {"n": 3}))
    assert relay.from_client(line).upstream is line
    assert counts == {"validation": 1, "repair": 0, "walk": 0}
    # A message the exact parser read (a number beyond a double) may nest deeper than pydantic-core
    # allows: its depth is checked.
    deep = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","x":1e400,"params":{"name":"count","arguments":{"n":3}}}\n'
    assert relay.from_client(deep).upstream is deep
    assert counts == {"validation": 2, "repair": 0, "walk": 1}


# ---- which client sent each call


def test_each_call_is_recorded_with_the_client_of_its_meta_else_of_the_sessions_initialize() -> None:
    recorder = OutcomeRecorder()
    relay = _listed(recorder)
    initialize = {"protocolVersion": "2025-11-25", "clientInfo": {"name": "cursor-vscode", "version": "1.7.2"}}
    relay.from_client(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}))
    relay.from_client(_line(_call(1, {"n": "1"})))
    relay.from_upstream(_line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))
    meta = {"io.modelcontextprotocol/clientInfo": {"name": "x" * 10_000, "version": 7}}
    call = _call(2, {"n": 2})
    call["params"]["_meta"] = meta
    relay.from_client(_line(call))
    relay.from_upstream(_line({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}))
    clients = {(c.client, c.version, c.host, c.ok, c.changed) for c in recorder.snapshot().clients}
    assert clients == {("cursor-vscode", "1.7.2", "cursor", 1, 1), ("x" * 100, "", "_OTHER", 1, 0)}
