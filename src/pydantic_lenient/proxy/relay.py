r"""The proxy's message logic, apart from how bytes move between the client and the upstream.

The relay session (`pydantic_lenient.proxy.core`) hands the relay each message as the bytes of one
JSON-RPC message and sends on what comes back. The relay changes exactly two kinds of message:

* a ``tools/list`` result: each tool's ``inputSchema`` is widened (`widen_schema`) in the chosen
  style; everything else in the tool (name, description, annotations, output schema) is kept;
* a ``tools/call`` request: the optional normalizer rules, then repair against the upstream's
  *original* schema; a call that is still invalid goes upstream as it was sent.

Only those two are parsed and written again, as plain JSON that keeps every member of the envelope
(nothing is parsed into a model: no SDK is imported, and unknown members survive) and every value:
a number a double cannot hold (``1e400``, 30 significant digits) is written as it came, and a lone
surrogate as its escape. A JSON-RPC batch is handled element by element, like single messages.
Every other message goes on as the same bytes: initialize (so the client's
capabilities reach the upstream and the upstream's reach the client), resources, prompts,
completions, logging, progress, cancellation, list-changed notifications, and server-to-client
requests such as sampling, elicitation and roots, with their replies. The proxy is not an MCP
session of its own, so it cannot drop or rewrite what it does not know.

The relay sends requests of its own, with ids no client can guess (a random part per process): a
`ping` for the transport's liveness check (``server/discover`` at 2026-07-28, which has no ping),
and a ``tools/list`` when a client calls a tool whose schema the proxy has not seen (a host that
cached the list across restarts, or a 2026-07-28 client using the listing's ``ttlMs``). Each
speaks the client's protocol era: at 2026-07-28 it carries the envelope of the client's latest
request in ``_meta`` (`Session.note_era`). That listing happens
once, and again after ``notifications/tools/list_changed``; the client's messages wait behind it,
in order. A call whose normalization conflicts (an alias and its target both sent) is answered by
the proxy with a tool error naming both names, and never forwarded for the server to pick one.

Outcomes and repairs are `pydantic_lenient.proxy.calls`'s job, the faithful JSON
`pydantic_lenient.proxy.messages`'s, and what a session remembers `pydantic_lenient.proxy.session`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic_lenient.observe.clients import without_relayed_client

from .calls import Conflict, ProxyStats, ToolCalls
from .messages import (
    dumped,
    error_answer,
    exact,
    is_batch,
    is_id,
    joined,
    may_be_inexact,
    members,
    parsed,
    parsed_message,
    tool_error,
)
from .session import LIST_PREFIX, OWN_PREFIX, Session

if TYPE_CHECKING:
    from pydantic_lenient.normalizer.engine import Normalizer
    from pydantic_lenient.observe.otel import ProxyTracer
    from pydantic_lenient.observe.recorder import OutcomeRecorder
    from pydantic_lenient.schema.styles import Style

__all__ = ("Routed",)

logger = logging.getLogger("pydantic_lenient.proxy")

_LIST_PAGES = 100  # pages of its own tools/list the proxy follows before it repairs with what it has


class Routed(NamedTuple):
    """Where a message goes: bytes for the upstream and bytes for the client (each empty for none),
    each one or more whole messages ending in newlines, ready for one write."""

    upstream: bytes = b""
    client: bytes = b""


_NOTHING = Routed()


class _Relay(Session, ToolCalls):
    r"""One session's messages, whatever carries them: a transport passes each message from the
    client through `from_client` and each from the upstream through `from_upstream`, and sends on
    what they route where. Neither raises: a message the relay cannot process goes on as it came.

    A message is the bytes of one JSON-RPC message; one the relay writes comes back as one line
    ending in a newline (MCP's stdio framing), which a transport that frames messages otherwise
    splits on newlines. As a `Session` it remembers which of the client's requests the upstream
    still owes an answer (``waiting``, bounded); a transport that loses its upstream answers them
    with `abandon`, once each. As `ToolCalls` it repairs and records the calls: it saves the counts
    with `save` (every so often, and at the end) and ends the recording with `finish_recording`.

    >>> import json
    >>> relay = _Relay("type-array", normalizer=None, stats=None)
    >>> relay.from_client(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n').upstream
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    >>> schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    >>> listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "add", "inputSchema": schema}]}}
    >>> widened = json.loads(relay.from_upstream(json.dumps(listing).encode() + b"\n").client)
    >>> widened["result"]["tools"][0]["inputSchema"]["properties"]
    {'n': {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$'}}
    >>> call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"n": "3"}}}
    >>> relay.from_client(json.dumps(call).encode() + b"\n").upstream
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"n":3}}}\n'
    >>> relay.abandon("it exited")  # the upstream is gone: what it owes is answered with an error
    [b'{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"it exited before answering this request"}}\n']
    """

    def __init__(
        self,
        style: Style,
        normalizer: Normalizer | None,
        stats: ProxyStats | None,
        recorder: OutcomeRecorder | None = None,
        tracer: ProxyTracer | None = None,
    ) -> None:
        Session.__init__(self)
        ToolCalls.__init__(self, style, normalizer, stats, recorder, tracer)

    # ---- messages

    def from_client(self, line: bytes) -> Routed:
        """Where ``line`` goes: upstream (a ``tools/call`` normalized and repaired), or answered here."""
        if self.held is not None:  # the proxy's own listing is under way: keep the client's order
            self.held.append(line)
            return _NOTHING
        try:
            if is_batch(line):
                return self._batch(line, self.from_client, to_client=False)
            return self._from_client(line)
        except Exception:  # never lose a message to a bug in the lenient layer: send it as it came
            logger.exception("could not process a message from the client; forwarded as it came")
            return Routed(upstream=line)

    def from_upstream(self, line: bytes) -> Routed:
        """Where ``line`` goes: to the client (a ``tools/list`` result widened), or nowhere for the
        replies to the proxy's own requests (which may release the client's held messages upstream)."""
        try:
            if is_batch(line):
                return self._batch(line, self.from_upstream, to_client=True)
            return self._from_upstream(line)
        except Exception:
            logger.exception("could not process a message from the upstream; forwarded as it came")
            return Routed(client=line)

    def abandon(self, reason: str) -> list[bytes]:
        """Error answers, naming ``reason``, to every request the upstream still owes (it is gone),
        the held ones included."""
        held, self.held = self.held or [], None
        for line in held:
            message = parsed(line) or members(line)
            if is_id(message.get("id")) and isinstance(message.get("method"), str):
                self._wait(message["id"], message["method"])
        answers = []
        for request_id, methods in self.abandoned().items():
            for method in methods:
                if method == "tools/call":
                    self.answered(request_id, None, by_upstream=False)
                answers.append(error_answer(request_id, f"{reason} before answering this request"))
        return answers

    def release(self) -> Routed:
        """Route the client's messages held behind the proxy's own listing (done, or waited for long enough)."""
        held, self.held = self.held or [], None
        routed = [self.from_client(line) for line in held]
        return Routed(
            upstream=b"".join(route.upstream for route in routed), client=b"".join(route.client for route in routed)
        )

    def _batch(self, line: bytes, route: Callable[[bytes], Routed], to_client: bool) -> Routed:
        """A JSON-RPC batch: each element routed as a single message would be, the elements for
        one side gathered again into one batch (the replies to the proxy's own requests dropped)."""
        elements, verbatim, _ = parsed_message(line)
        if not isinstance(elements, list) or not elements:
            return Routed(client=line) if to_client else Routed(upstream=line)
        lines = [dumped(element, verbatim, len(line)) if isinstance(element, dict) else b"" for element in elements]
        if not all(lines):
            return Routed(client=line) if to_client else Routed(upstream=line)
        routed = [route(element) for element in lines]
        if to_client:  # what goes back upstream is the client's held messages, released one by one
            answers = [route.client for route in routed]
            if answers == lines:  # nothing changed: the same bytes
                return Routed(client=line)
            return Routed(upstream=b"".join(route.upstream for route in routed), client=joined(answers))
        requests = [route.upstream for route in routed]
        answers = [route.client for route in routed]  # the proxy's own answers, as a batch too
        if requests == lines and not any(answers):
            return Routed(upstream=line)
        return Routed(upstream=joined(requests), client=joined(answers))

    def _wait(self, request_id: Any, method: str) -> None:
        """`Session.wait`, forgetting the call of a request forgotten past the bound."""
        forgotten = self.wait(request_id, method)
        if forgotten is not None:
            self.forget(forgotten)

    def _from_client(self, line: bytes) -> Routed:
        message, verbatim, shallow = parsed_message(line)
        if message is None:  # too deep for the parser: its id and method still say what the upstream owes
            message = members(line)
        if not isinstance(message, dict):
            return Routed(upstream=line)  # not a JSON-RPC message: the upstream's to refuse
        method, request_id = message.get("method"), message.get("id")
        if isinstance(method, str) and is_id(request_id):
            self.note_era(method, message.get("params"))
            if self.tracer is not None and self.protocol_version is not None:
                self.tracer.protocol_version = self.protocol_version  # no initialize at 2026-07-28
        if method == "notifications/cancelled" and isinstance(message.get("params"), dict):
            cancelled = message["params"].get("requestId")
            if is_id(cancelled) and self.cancelled(cancelled):
                self.forget(cancelled)
        if not isinstance(method, str) or not is_id(request_id):
            return Routed(upstream=line)  # a notification, a reply to the upstream, or not JSON-RPC: the upstream's
        if method == "tools/call" and isinstance(message.get("params"), dict):
            params = message["params"]
            tool = params.get("name")
            if isinstance(tool, str) and tool not in self.schemas and not self.listed:
                # A tool the proxy has no schema for: list the tools first (or wait for the client's
                # own listing, already on its way), holding this call and what follows.
                self.hold(line)
                if any("tools/list" in methods for methods in self.waiting.values()):
                    return _NOTHING
                return Routed(upstream=self.list_request(None))
            self._wait(request_id, method)
            params, relayed = without_relayed_client(params)  # the gateway's note: read here, never sent on
            client = relayed or self.call_client(params)
            if self.tracer is not None:  # the call's spans, their context in the forwarded _meta
                params = self.tracer.request(request_id, params, client)
            try:
                params = self.repaired_call(request_id, params, shallow, client)
            except Conflict as conflict:
                self.answered_method(request_id, {})
                answer = tool_error(request_id, str(conflict))
                self.answered(request_id, parsed(answer))
                return Routed(client=answer)
            if params is not message["params"]:
                rewritten = dumped({**message, "params": params}, verbatim, len(line))
                return Routed(upstream=rewritten or line)
            return Routed(upstream=line)
        if method == "initialize":  # the client names itself (until protocol 2026-07-28)
            self.note_client(message.get("params"))
        self._wait(request_id, method)
        return Routed(upstream=line)

    def _from_upstream(self, line: bytes) -> Routed:
        message = parsed(line) or exact(line).value
        if not isinstance(message, dict) or not message:
            # Too deep for the parsers: its id still says which request it answers, so none is answered twice.
            message = members(line)
        request_id = message.get("id")
        if "method" in message:
            if message["method"] == "notifications/tools/list_changed":
                self.listed = False  # the next call for an unknown tool lists again
            return Routed(client=line)
        if not is_id(request_id):
            return Routed(client=line)
        if isinstance(request_id, str) and request_id.startswith(OWN_PREFIX):
            return self._own_answer(request_id, message)
        method = self.answered_method(request_id, message)
        if method == "tools/call":
            self.answered(request_id, message)
        if method == "initialize" and self.tracer is not None:
            self._note_protocol_version(message.get("result"))
        if method == "tools/list" and isinstance(message.get("result"), dict):
            verbatim = False
            if may_be_inexact(line):  # read again, keeping numbers beyond a double as they came
                exact_message, verbatim, _ = parsed_message(line)
                if isinstance(exact_message, dict) and isinstance(exact_message.get("result"), dict):
                    message = exact_message
            result = message["result"]
            if result.get("nextCursor") is None:  # the client has listed every tool: no need to list again
                self.listed = True
            widened = self.widened_listing(result)
            answer = line
            if widened is not result:
                answer = dumped({**message, "result": widened}, verbatim, len(line)) or line
            if self.held is not None and self.list_pages == 0:  # the held calls waited for this
                released = self.release()
                return Routed(upstream=released.upstream, client=answer + released.client)
            return Routed(client=answer)
        return Routed(client=line)

    def _note_protocol_version(self, result: Any) -> None:
        """The version the session speaks (the upstream's answer to ``initialize``), for its spans'
        ``mcp.protocol.version``."""
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str) and self.tracer is not None:
            self.tracer.protocol_version = version

    def _own_answer(self, request_id: str, message: dict[str, Any]) -> Routed:
        """The upstream's reply to the proxy's own ping or listing, which goes no further."""
        if self.own_reply(request_id) or not request_id.startswith(LIST_PREFIX):
            return _NOTHING
        result = message.get("result")
        if isinstance(result, dict):
            self.widened_listing(result)  # kept even when it comes too late for the held calls
            cursor = result.get("nextCursor")
            if self.held is not None and isinstance(cursor, str) and self.list_pages < _LIST_PAGES:
                return Routed(upstream=self.list_request(cursor))
        elif "error" in message:
            logger.warning("the upstream refused the proxy's own tools/list: calls go on unrepaired")
        return self.release()
