r"""The proxy's message logic, apart from how bytes move between the client and the upstream.

A transport (`pydantic_lenient.proxy.stdio`) hands the relay each message as the bytes of one
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
`ping` for the transport's liveness check, and a ``tools/list`` when a client calls a tool whose
schema the proxy has not seen (a host that cached the list across restarts). That listing happens
once, and again after ``notifications/tools/list_changed``; the client's messages wait behind it,
in order. A call whose normalization conflicts (an alias and its target both sent) is answered by
the proxy with a tool error naming both names, and never forwarded for the server to pick one.

Outcomes: with an `OutcomeRecorder`, every ``tools/call`` is recorded as the MCP adapters record it
(`pydantic_lenient.observe.recorder`): ok; refused by validation, when the upstream answers with an
error a call the proxy found invalid against the tool's schema (each field's error type and value
shape, from the validator's errors); or an error in the tool, for any other error the upstream (or
the proxy, for an upstream that is gone) answers with. With its duration from request to answer and
the normalizer rules and repairs (``repair:<kind>``) applied.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic_core import from_json

from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, FieldFailure, field_failures
from pydantic_lenient.observe.logdir import NORMALIZER_STATS_FILE
from pydantic_lenient.observe.outcomes import Status
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.styles import Style
from pydantic_lenient.schema.widen import widen_schema

if TYPE_CHECKING:
    from pydantic_lenient.observe.otel import ProxyTracer

__all__ = ("ProxyStats", "Routed")

logger = logging.getLogger("pydantic_lenient.proxy")

RequestId = Any  # an int or a str, as JSON-RPC allows
# The proxy's own request ids: a random part per process, so no client can send one by chance or on purpose.
_OWN_PREFIX = f"pydantic-lenient-{secrets.token_hex(8)}-"
_PING_PREFIX = f"{_OWN_PREFIX}ping-"
_LIST_PREFIX = f"{_OWN_PREFIX}list-"
_LIST_PAGES = 100  # pages of its own tools/list the proxy follows before it repairs with what it has
_CONNECTION_CLOSED = -32000  # MCP's error code for a request its transport can no longer answer
_RECENT_LIMIT = 50
REPAIR_STATS_FILE = "repair-stats.json"
_CALLS_LIMIT = 10_000  # unanswered tools/call requests remembered for the recorder (a cancelled one never is)
_BATCH = re.compile(rb"[ \t\r\n]*\[")
_WAITING_LIMIT = 10_000  # unanswered requests remembered, so each gets one answer should the upstream go


@dataclass
class ProxyStats:
    """Counts of the ``tools/call`` requests the proxy saw, saved as ``repair-stats.json``."""

    calls: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_RECENT_LIMIT))
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, tool: str, repairs: list[dict[str, Any]], valid: bool) -> None:
        with self.lock:
            self.calls[tool] += 1
            if repairs and valid:
                self.repaired[tool] += 1
                # The kinds only: a repair's "from", "to" and "path" hold the client's text (values and keys).
                kinds = [{"kind": repair["kind"]} for repair in repairs]
                self.recent.append({"ts": time.time(), "tool": tool, "repairs": kinds})
            if not valid:
                self.invalid[tool] += 1

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "total_calls": sum(self.calls.values()),
                "total_repaired": sum(self.repaired.values()),
                "total_invalid": sum(self.invalid.values()),
                "by_tool": {
                    tool: {"calls": self.calls[tool], "repaired": self.repaired[tool], "invalid": self.invalid[tool]}
                    for tool in sorted(self.calls)
                },
                "recent_repairs": list(self.recent),
            }

    def save(self, path: Path) -> None:
        """Write atomically: a temporary file beside ``path``, then a rename."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(self.snapshot(), indent=2, ensure_ascii=False, default=repr), encoding="utf-8")
        temporary.replace(path)


@dataclass(slots=True)
class _Call:
    """A ``tools/call`` the upstream has yet to answer: what the recorder needs when it does.
    ``invalid``: the arguments as forwarded fail the tool's schema (``failures`` say how)."""

    tool: str
    started: float
    norms: tuple[str, ...] = ()
    invalid: bool = False
    failures: tuple[FieldFailure, ...] = ()


class Routed(NamedTuple):
    """Where a message goes: bytes for the upstream and bytes for the client (each empty for none),
    each one or more whole messages ending in newlines, ready for one write."""

    upstream: bytes = b""
    client: bytes = b""


_NOTHING = Routed()


class _Relay:
    r"""One session's messages, whatever carries them: a transport passes each message from the
    client through `from_client` and each from the upstream through `from_upstream`, and sends on
    what they route where. Neither raises: a message the relay cannot process goes on as it came.

    A message is the bytes of one JSON-RPC message; one the relay writes comes back as one line
    ending in a newline (MCP's stdio framing), which a transport that frames messages otherwise
    splits on newlines. The relay remembers which of the client's requests the upstream still owes
    an answer (``waiting``: each id with the methods in flight under it, at most ``_WAITING_LIMIT``
    requests); a transport that loses its upstream answers them with `abandon`, once each. It saves
    the counts with `save` (every so often, and at the end) and ends the recording with `finish_recording`.

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
        self.style = style
        self.normalizer = normalizer
        self.stats = stats
        self.recorder = recorder
        self.tracer = tracer
        self.calls: dict[RequestId, _Call] = {}
        self.repairers: dict[str, Repairer] = {}
        self.waiting: dict[RequestId, list[str]] = {}
        self.waiting_count = 0
        self.pings: dict[str, Callable[[], None]] = {}
        self.pings_sent = 0
        self.listed = False  # the proxy listed the tools itself since the last list_changed
        self.held: list[bytes] | None = None  # the client's messages waiting behind the proxy's own listing
        self.list_pages = 0

    # ---- messages

    def from_client(self, line: bytes) -> Routed:
        """Where ``line`` goes: upstream (a ``tools/call`` normalized and repaired), or answered here."""
        if self.held is not None:  # the proxy's own listing is under way: keep the client's order
            self.held.append(line)
            return _NOTHING
        try:
            if _BATCH.match(line):
                return self._batch(line, self.from_client, to_client=False)
            return self._from_client(line)
        except Exception:  # never lose a message to a bug in the lenient layer: send it as it came
            logger.exception("could not process a message from the client; forwarded as it came")
            return Routed(upstream=line)

    def from_upstream(self, line: bytes) -> Routed:
        """Where ``line`` goes: to the client (a ``tools/list`` result widened), or nowhere for the
        replies to the proxy's own requests (which may release the client's held messages upstream)."""
        try:
            if _BATCH.match(line):
                return self._batch(line, self.from_upstream, to_client=True)
            return self._from_upstream(line)
        except Exception:
            logger.exception("could not process a message from the upstream; forwarded as it came")
            return Routed(client=line)

    def ping(self, on_reply: Callable[[], None]) -> bytes:
        """A ping request for the upstream; its reply calls ``on_reply`` and goes no further."""
        self.pings_sent += 1
        ping_id = f"{_PING_PREFIX}{self.pings_sent}"
        self.pings[ping_id] = on_reply
        return _dumped({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})

    def abandon(self, reason: str) -> list[bytes]:
        """Error answers, naming ``reason``, to every request the upstream still owes (it is gone),
        the held ones included."""
        held, self.held = self.held or [], None
        for line in held:
            message = _parsed(line) or _members(line)
            if _is_id(message.get("id")) and isinstance(message.get("method"), str):
                self._wait(message["id"], message["method"])
        answers = []
        waiting, self.waiting, self.waiting_count = self.waiting, {}, 0
        for request_id, methods in waiting.items():
            for method in methods:
                if method == "tools/call":
                    self._answered(request_id, None, by_upstream=False)
                answers.append(_error(request_id, f"{reason} before answering this request"))
        return answers

    def refusal(self, line: bytes, reason: str) -> bytes | None:
        """The error answer to ``line`` when it is a request and no upstream can take it, else None."""
        message = _parsed(line)
        request_id = message.get("id")
        if "method" in message and _is_id(request_id):
            return _error(request_id, reason)
        return None

    def _batch(self, line: bytes, route: Callable[[bytes], Routed], to_client: bool) -> Routed:
        """A JSON-RPC batch: each element routed as a single message would be, the elements for
        one side gathered again into one batch (the replies to the proxy's own requests dropped)."""
        elements, verbatim = _message(line)
        if not isinstance(elements, list) or not elements:
            return Routed(client=line) if to_client else Routed(upstream=line)
        lines = [_dumped(element, verbatim) if isinstance(element, dict) else b"" for element in elements]
        if not all(lines):
            return Routed(client=line) if to_client else Routed(upstream=line)
        routed = [route(element) for element in lines]
        if to_client:  # what goes back upstream is the client's held messages, released one by one
            answers = [route.client for route in routed]
            if answers == lines:  # nothing changed: the same bytes
                return Routed(client=line)
            return Routed(upstream=b"".join(route.upstream for route in routed), client=_joined(answers))
        requests = [route.upstream for route in routed]
        answers = [route.client for route in routed]  # the proxy's own answers, as a batch too
        if requests == lines and not any(answers):
            return Routed(upstream=line)
        return Routed(upstream=_joined(requests), client=_joined(answers))

    def _wait(self, request_id: RequestId, method: str) -> None:
        """Remember that the upstream owes ``request_id`` an answer to ``method``; the oldest is forgotten
        past ``_WAITING_LIMIT`` (a client that never waits for its answers must not grow memory)."""
        if self.waiting_count >= _WAITING_LIMIT:
            oldest = next(iter(self.waiting))
            self.waiting_count -= len(self.waiting.pop(oldest))
            self.calls.pop(oldest, None)
        methods = self.waiting.get(request_id)
        if methods is None:
            self.waiting[request_id] = [method]
        else:  # the client reused an id still in flight: told apart by the answer's shape
            methods.append(method)
        self.waiting_count += 1

    def _answered_method(self, request_id: RequestId, message: Mapping[str, Any]) -> str | None:
        """The method of the request ``message`` answers, no longer waited for (None: not waited for)."""
        methods = self.waiting.get(request_id)
        if methods is None:
            return None
        index = 0
        if len(methods) > 1:  # one id for several methods: a tools/list answer is the one with tools
            result = message.get("result")
            listing = isinstance(result, dict) and isinstance(result.get("tools"), list)
            matching = [i for i, method in enumerate(methods) if (method == "tools/list") == listing]
            index = matching[0] if matching else 0
        method = methods.pop(index)
        if not methods:
            del self.waiting[request_id]
        self.waiting_count -= 1
        return method

    def _from_client(self, line: bytes) -> Routed:
        message, verbatim = _message(line)
        if message is None:  # too deep for the parser: its id and method still say what the upstream owes
            message = _members(line)
        if not isinstance(message, dict):
            return Routed(upstream=line)  # not a JSON-RPC message: the upstream's to refuse
        method, request_id = message.get("method"), message.get("id")
        if method == "notifications/cancelled" and isinstance(message.get("params"), dict):
            self._cancelled(message["params"].get("requestId"))
        if not isinstance(method, str) or not _is_id(request_id):
            return Routed(upstream=line)  # a notification, a reply to the upstream, or not JSON-RPC: the upstream's
        if method == "tools/call" and isinstance(message.get("params"), dict):
            params = message["params"]
            tool = params.get("name")
            if isinstance(tool, str) and tool not in self.repairers and not self.listed:
                # A tool the proxy has no schema for: list the tools first (or wait for the client's
                # own listing, already on its way), holding this call and what follows.
                self.listed, self.held, self.list_pages = True, [line], 0
                if any("tools/list" in methods for methods in self.waiting.values()):
                    return _NOTHING
                return Routed(upstream=self._list_request(None))
            self._wait(request_id, method)
            if self.tracer is not None:  # the call's spans, their context in the forwarded _meta
                params = self.tracer.request(request_id, params)
            try:
                params = self._repaired_call(request_id, params)
            except _Conflict as conflict:
                self._answered_method(request_id, {})
                answer = _tool_error(request_id, str(conflict))
                self._answered(request_id, _parsed(answer))
                return Routed(client=answer)
            if params is not message["params"]:
                rewritten = _dumped({**message, "params": params}, verbatim)
                return Routed(upstream=rewritten or line)
            return Routed(upstream=line)
        self._wait(request_id, method)
        return Routed(upstream=line)

    def _cancelled(self, request_id: Any) -> None:
        """The client cancelled a request: the upstream need not answer it (MCP), so it is no longer owed."""
        if _is_id(request_id) and request_id in self.waiting:
            self.waiting_count -= len(self.waiting.pop(request_id))
            self.calls.pop(request_id, None)

    def _from_upstream(self, line: bytes) -> Routed:
        message = _parsed(line) or _exact(line).value
        if not isinstance(message, dict) or not message:
            # Too deep for the parsers: its id still says which request it answers, so none is answered twice.
            message = _members(line)
        request_id = message.get("id")
        if "method" in message:
            if message["method"] == "notifications/tools/list_changed":
                self.listed = False  # the next call for an unknown tool lists again
            return Routed(client=line)
        if not _is_id(request_id):
            return Routed(client=line)
        if isinstance(request_id, str) and request_id.startswith(_OWN_PREFIX):
            return self._own_answer(request_id, message)
        method = self._answered_method(request_id, message)
        if method == "tools/call":
            self._answered(request_id, message)
        if method == "tools/list" and isinstance(message.get("result"), dict):
            exact, verbatim = _message(line)  # numbers beyond a double, as they came
            message = exact if isinstance(exact, dict) and isinstance(exact.get("result"), dict) else message
            result = message["result"]
            if result.get("nextCursor") is None:  # the client has listed every tool: no need to list again
                self.listed = True
            widened = self._widened_listing(result)
            answer = _dumped({**message, "result": widened}, verbatim) or line if widened is not result else line
            if self.held is not None and self.list_pages == 0:  # the held calls waited for this listing
                released = self.release()
                return Routed(upstream=released.upstream, client=answer + released.client)
            return Routed(client=answer)
        return Routed(client=line)

    def _own_answer(self, request_id: str, message: dict[str, Any]) -> Routed:
        """The upstream's reply to the proxy's own ping or listing, which goes no further."""
        on_reply = self.pings.pop(request_id, None)
        if on_reply is not None:
            on_reply()
            return _NOTHING
        if not request_id.startswith(_LIST_PREFIX):
            return _NOTHING
        result = message.get("result")
        if isinstance(result, dict):
            self._widened_listing(result)  # kept even when it comes too late for the held calls
            cursor = result.get("nextCursor")
            if self.held is not None and isinstance(cursor, str) and self.list_pages < _LIST_PAGES:
                return Routed(upstream=self._list_request(cursor))
        elif "error" in message:
            logger.warning("the upstream refused the proxy's own tools/list: calls go on unrepaired")
        return self.release()

    def release(self) -> Routed:
        """Route the client's messages held behind the proxy's own listing (done, or waited for long enough)."""
        held, self.held = self.held or [], None
        routed = [self.from_client(line) for line in held]
        return Routed(
            upstream=b"".join(route.upstream for route in routed), client=b"".join(route.client for route in routed)
        )

    def _list_request(self, cursor: str | None) -> bytes:
        self.list_pages += 1
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": f"{_LIST_PREFIX}{self.list_pages}", "method": "tools/list"}
        if cursor is not None:
            request["params"] = {"cursor": cursor}
        return _dumped(request)

    def _widened_listing(self, result: dict[str, Any]) -> dict[str, Any]:
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        widened = []
        for tool in tools:
            if (
                isinstance(tool, dict)
                and isinstance(tool.get("name"), str)
                and isinstance(tool.get("inputSchema"), dict)
            ):
                schema = tool["inputSchema"]
                self.repairers[tool["name"]] = Repairer(schema)
                if self.tracer is not None:
                    self.tracer.listed([tool["name"]])
                tool = {**tool, "inputSchema": widen_schema(schema, self.style)}
            widened.append(tool)
        return {**result, "tools": widened}

    def _repaired_call(self, request_id: RequestId, params: dict[str, Any]) -> dict[str, Any]:
        """The call's params with its arguments normalized and repaired, or ``params`` itself.
        Raises `_Conflict` for a call whose normalization conflicts."""
        tool, arguments = params.get("name"), params.get("arguments")
        if not isinstance(tool, str):
            return params
        call = self._track(request_id, tool)
        if not isinstance(arguments, Mapping):
            if call is not None and arguments is None:  # a call may leave out its arguments
                self._check(call, {})
            return params
        changed: Any = arguments
        norms: tuple[str, ...] = ()
        if self.normalizer is not None:
            try:
                normalized = self.normalizer.apply(tool, arguments)
            except NormalizationConflict as error:
                if call is not None:
                    call.invalid, call.failures = True, (NORMALIZATION_CONFLICT,)
                raise _Conflict(f"{tool}: {error}") from None
            changed = normalized.arguments
            norms = tuple(entry["rule_id"] for entry in normalized.applied)
            if self.tracer is not None:
                self.tracer.normalized(request_id, normalized.applied)
        repairer = self.repairers.get(tool)
        if repairer is None:  # the upstream lists no such tool: nothing to repair against
            if call is not None:
                call.norms = norms
            return params if changed == arguments else {**params, "arguments": changed}
        if repairer.verdict(changed)[0]:  # valid as it is: one validation, no copy
            if self.stats is not None:
                self.stats.count(tool, [], True)
            if call is not None:
                call.norms = norms
            return params if changed is arguments else {**params, "arguments": changed}
        result = repairer.repair(changed)
        if self.stats is not None:
            self.stats.count(tool, result.repairs, result.valid)
        if not result.valid:  # still invalid: the server's own error tells the model what to fix
            if call is not None:
                self._check(call, arguments)
            return params
        if self.tracer is not None:
            self.tracer.repaired(request_id, result.repairs)
        if call is not None:
            call.norms = norms + tuple(dict.fromkeys(f"repair:{repair['kind']}" for repair in result.repairs))
        return {**params, "arguments": result.arguments}

    # ---- outcomes

    def save(self, log_dir: Path) -> None:
        """Save the repair counts in ``log_dir``, and the normalizer's stats when no recorder does."""
        try:
            if self.stats is not None:
                self.stats.save(log_dir / REPAIR_STATS_FILE)
            # The recorder saves the normalizer's stats when it has them; otherwise they go here.
            if self.normalizer is not None and (self.recorder is None or self.recorder.normalizer is None):
                self.normalizer.save(log_dir / NORMALIZER_STATS_FILE)
        except OSError as error:
            logger.warning("cannot save stats in %s: %s", log_dir, error)

    def finish_recording(self, close: bool) -> None:
        """Flush and save the outcomes at exit, closing the recorder if the relay's owner made it
        (a full or read-only disk is logged, not raised)."""
        recorder = self.recorder
        if recorder is None:
            return
        try:
            if close:
                recorder.close()
            elif recorder.log_dir is not None:
                recorder.save()
            else:
                recorder.flush()
        except Exception:
            logger.exception("cannot save the recorded outcomes")

    def _track(self, request_id: RequestId, tool: str) -> _Call | None:
        if self.recorder is None and self.tracer is None:
            return None
        if len(self.calls) >= _CALLS_LIMIT:
            del self.calls[next(iter(self.calls))]
        call = self.calls[request_id] = _Call(tool, time.perf_counter())
        return call

    def _check(self, call: _Call, arguments: Mapping[str, Any]) -> None:
        """Note why ``arguments``, sent as they came, fail the tool's schema (if it is known)."""
        repairer = self.repairers.get(call.tool)
        if repairer is None:
            return
        call.invalid = not repairer.is_valid(arguments)
        if call.invalid:
            properties = repairer.schema.get("properties") if isinstance(repairer.schema, Mapping) else None
            known = list(properties) if isinstance(properties, Mapping) else ()
            details = repairer.error_details(arguments)
            recorder = self.recorder
            call.failures = (
                recorder.field_failures(details, arguments, known=known)
                if recorder is not None
                else field_failures(details, arguments, known=known)
            )

    def _answered(self, request_id: RequestId, message: dict[str, Any] | None, by_upstream: bool = True) -> None:
        """Record the answer ``message`` to a call (None: the proxy answered for a gone upstream)."""
        call = self.calls.pop(request_id, None)
        if call is None:
            return
        status: Status = "ok"
        if message is None or _failed(message):
            status = "refused" if call.invalid and by_upstream else "error"
        failures = call.failures if status == "refused" else ()
        if self.tracer is not None:
            self.tracer.refused(request_id, failures)
            self.tracer.answered(request_id, message, status)
        if self.recorder is None:
            return
        duration_ms = (time.perf_counter() - call.started) * 1000
        self.recorder.record(call.tool, status, duration_ms, failures=failures, norms=call.norms)


class _Conflict(Exception):
    """A call whose normalization conflicts: answered with a tool error, never forwarded."""


def _is_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class _Verbatim(float):
    """A JSON number a double cannot hold as written (``1e400``, ``1e-400``, 30 significant digits, an
    integer over Python's 4,300 digits): its nearest double for checking, its text for writing."""

    __slots__ = ("text",)
    text: str


class _Exact(NamedTuple):
    """A message parsed by `_exact`; ``verbatim``: it holds a `_Verbatim` number, written back by `_dumped`."""

    value: Any
    verbatim: bool


_made = [0]  # how many `_Verbatim` numbers were ever made: `_exact` tells whether its parse made one
# Stands in for a `_Verbatim` number while the rest of the message is written; no client can guess it.
_TOKEN = f"\x00pydantic-lenient-{secrets.token_hex(8)}-"
_TOKEN_WRITTEN = re.compile(re.escape(json.dumps(_TOKEN)[:-1].encode()) + rb'([0-9]+)"')


def _verbatim(text: str, value: float) -> _Verbatim:
    _made[0] += 1
    number = _Verbatim(value)
    number.text = text
    return number


def _number(text: str) -> float:
    value = float(text)
    if repr(value) == text:
        return value
    try:
        if Decimal(repr(value)) == Decimal(text):  # "1.50" is the double 1.5: nothing to keep
            return value
    except InvalidOperation:
        pass
    return _verbatim(text, value)


def _integer(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # over Python's digit limit for int()
        return _verbatim(text, float("-inf") if text.startswith("-") else float("inf"))


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_EXACT = json.JSONDecoder(parse_float=_number, parse_constant=_not_json)
_EXACT_INTEGERS = json.JSONDecoder(parse_float=_number, parse_int=_integer, parse_constant=_not_json)
# Where a number may not survive a double: 17 digits and dots in a row, or an exponent. Anywhere else
# a number has at most 15 significant digits with a fraction, or is an integer (exact in Python).
_MAYBE_INEXACT = re.compile(rb"[0-9](?:[0-9.]{16}|[eE])")


def _exact(line: bytes) -> _Exact:
    """``line``'s JSON value with every number as exact as it was written, or None when it is not JSON."""
    made = _made[0]
    try:
        text = line.decode()
        try:
            value = _EXACT.decode(text)
        except ValueError:  # an integer over int()'s digit limit, perhaps: again, with each integer checked
            value = _EXACT_INTEGERS.decode(text)
    except (ValueError, RecursionError):
        return _Exact(None, False)
    return _Exact(value, _made[0] != made)


def _message(line: bytes) -> _Exact:
    """`_exact`, by the faster parser when no number in ``line`` can be beyond a double."""
    if _MAYBE_INEXACT.search(line) is None:
        try:
            return _Exact(from_json(line), False)
        except ValueError:  # a lone surrogate, deep nesting: the exact parser may still read it
            pass
    return _exact(line)


def _with_tokens(value: Any, texts: list[str]) -> Any:
    if isinstance(value, _Verbatim):
        texts.append(value.text)
        return f"{_TOKEN}{len(texts) - 1}"
    if isinstance(value, dict):
        return {key: _with_tokens(item, texts) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_tokens(item, texts) for item in value]
    return value


def _dumped(message: dict[str, Any], verbatim: bool = False) -> bytes:
    """``message`` as one line of compact JSON, with each `_Verbatim` number as written (``verbatim``:
    it may hold one) and a lone surrogate as its escape; b"" when it cannot be written (the caller
    then sends the original)."""
    texts: list[str] = []
    try:
        if verbatim:
            message = _with_tokens(message, texts)
        try:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: ASCII escapes keep it
            text = json.dumps(message, separators=(",", ":"), allow_nan=False)
            data = text.encode()
    except (ValueError, RecursionError):
        return b""
    if texts:
        data = _TOKEN_WRITTEN.sub(lambda match: texts[int(match[1])].encode(), data)
    return data + b"\n"


def _joined(lines: list[bytes]) -> bytes:
    """Single messages, each a line, as one batch line (nothing for none)."""
    parts = [line.rstrip(b"\n") for line in lines if line]
    return b"[" + b",".join(parts) + b"]\n" if parts else b""


_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DECODER = json.JSONDecoder()
_PLAIN = re.compile(r'[^"\[\]{}]+')
_NESTED = object()  # a member `_members` did not read: an array or an object


def _members(line: bytes) -> dict[str, Any]:
    """The top-level members of a JSON object too deep for the parsers, arrays and objects left
    unread (`_NESTED`): enough to route it. {} when it is not such an object. No recursion."""
    try:
        text = line.decode()
        position = _SPACE.match(text).end()  # type: ignore[union-attr]
        if text[position : position + 1] != "{":
            return {}
        members: dict[str, Any] = {}
        position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        while text[position : position + 1] != "}":
            key, position = _DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            if text[position] != ":" or not isinstance(key, str):
                return {}
            position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            if text[position] in "[{":
                position, members[key] = _skipped(text, position), _NESTED
            else:
                members[key], position = _DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            if text[position] == ",":
                position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            elif text[position] != "}":
                return {}
    except (ValueError, IndexError):
        return {}
    return members


def _skipped(text: str, position: int) -> int:
    """Where the array or object at ``position`` ends."""
    depth = 0
    while True:
        plain = _PLAIN.match(text, position)
        if plain is not None:
            position = plain.end()
        character = text[position]
        if character == '"':
            match = _STRING.match(text, position)
            if match is None:
                raise ValueError("an unterminated string")
            position = match.end()
            continue
        if character in "[{":
            depth += 1
        elif character in "]}":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1


def _error(request_id: RequestId, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": _CONNECTION_CLOSED, "message": message}}
    return _dumped(error) or _dumped({**error, "id": None})


def _tool_error(request_id: RequestId, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    return _dumped({"jsonrpc": "2.0", "id": request_id, "result": result})


def _failed(message: dict[str, Any]) -> bool:
    """Whether an answer is an error: a JSON-RPC error, or a tool result with ``isError``."""
    result = message.get("result")
    return "error" in message or (isinstance(result, dict) and result.get("isError") is True)


def _parsed(line: bytes) -> dict[str, Any]:
    """The line's JSON object, or {} when it is not one (it is then forwarded as it came)."""
    try:
        message = from_json(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}
