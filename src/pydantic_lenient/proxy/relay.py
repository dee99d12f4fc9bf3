r"""The proxy's message logic, apart from how bytes move between the client and the upstream.

A transport (`pydantic_lenient.proxy.stdio`) hands the relay each message as the bytes of one
JSON-RPC message and sends on what comes back. The relay changes exactly two kinds of message:

* a ``tools/list`` result: each tool's ``inputSchema`` is widened (`widen_schema`) in the chosen
  style; everything else in the tool (name, description, annotations, output schema) is kept;
* a ``tools/call`` request: the optional normalizer rules, then repair against the upstream's
  *original* schema; a call that is still invalid goes upstream as it was sent.

Those two are read and written as the official SDK's envelope types (`JSONRPCRequest`,
`JSONRPCResponse`). Every other message goes on as the same bytes: initialize (so the client's
capabilities reach the upstream and the upstream's reach the client), resources, prompts,
completions, logging, progress, cancellation, list-changed notifications, and server-to-client
requests such as sampling, elicitation and roots, with their replies. The proxy is not an MCP
session of its own, so it cannot drop or rewrite what it does not know.

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
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

try:
    from mcp.types import CONNECTION_CLOSED, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the proxy needs the official MCP SDK: pip install 'pydantic-lenient[proxy]'"
        " (in a clone: pip install -e '.[proxy]')"
    ) from error

from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, FieldFailure
from pydantic_lenient.observe.logdir import NORMALIZER_STATS_FILE
from pydantic_lenient.observe.outcomes import Status
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.styles import Style
from pydantic_lenient.schema.widen import widen_schema

__all__ = ("ProxyStats",)

logger = logging.getLogger("pydantic_lenient.proxy")

RequestId = Any  # an int or a str, as JSON-RPC allows
_PING_PREFIX = "pydantic-lenient-ping-"
_RECENT_LIMIT = 50
REPAIR_STATS_FILE = "repair-stats.json"
_CALLS_LIMIT = 10_000  # unanswered tools/call requests remembered for the recorder (a cancelled one never is)


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
                self.recent.append({"ts": time.time(), "tool": tool, "repairs": repairs})
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


class _Relay:
    r"""One session's messages, whatever carries them: a transport passes each message from the
    client through `from_client` and each from the upstream through `from_upstream`, and sends on
    what they return. Neither raises: a message the relay cannot process goes on as it came.

    A message is the bytes of one JSON-RPC message; one the relay rewrites comes back as one line
    ending in a newline (MCP's stdio framing), which a transport that frames messages otherwise
    strips. The relay remembers which of the client's requests the upstream still owes an answer
    (``waiting``); a transport that loses its upstream answers them with `abandon`. It saves the
    counts with `save` (every so often, and at the end) and ends the recording with `finish_recording`.

    >>> relay = _Relay("type-array", normalizer=None, stats=None)
    >>> relay.from_client(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    >>> schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    >>> listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "add", "inputSchema": schema}]}}
    >>> widened = json.loads(relay.from_upstream(json.dumps(listing).encode() + b"\n"))
    >>> widened["result"]["tools"][0]["inputSchema"]["properties"]
    {'n': {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$'}}
    >>> call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"n": "3"}}}
    >>> relay.from_client(json.dumps(call).encode() + b"\n")
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
    ) -> None:
        self.style = style
        self.normalizer = normalizer
        self.stats = stats
        self.recorder = recorder
        self.calls: dict[RequestId, _Call] = {}
        self.repairers: dict[str, Repairer] = {}
        self.listing: set[RequestId] = set()
        self.waiting: dict[RequestId, str] = {}
        self.pings: dict[str, Callable[[], None]] = {}
        self.pings_sent = 0

    # ---- messages

    def from_client(self, line: bytes) -> bytes:
        """The message to send upstream for ``line``: a ``tools/call`` normalized and repaired."""
        try:
            return self._from_client(line)
        except Exception:  # never lose a message to a bug in the lenient layer: send it as it came
            logger.exception("could not process a message from the client; forwarded as it came")
            return line

    def from_upstream(self, line: bytes) -> bytes | None:
        """The message to pass on to the client for ``line``, or None for the reply to a `ping`."""
        try:
            return self._from_upstream(line)
        except Exception:
            logger.exception("could not process a message from the upstream; forwarded as it came")
            return line

    def ping(self, on_reply: Callable[[], None]) -> bytes:
        """A ping request for the upstream; its reply calls ``on_reply`` and goes no further."""
        self.pings_sent += 1
        ping_id = f"{_PING_PREFIX}{self.pings_sent}"
        self.pings[ping_id] = on_reply
        return _dumped(JSONRPCRequest(jsonrpc="2.0", id=ping_id, method="ping"))

    def abandon(self, reason: str) -> list[bytes]:
        """Error answers, naming ``reason``, to every request the upstream still owes (it is gone)."""
        answers = []
        for request_id in list(self.waiting):
            del self.waiting[request_id]
            self._answered(request_id, failed=True, by_upstream=False)
            answers.append(_error(request_id, f"{reason} before answering this request"))
        return answers

    def refusal(self, line: bytes, reason: str) -> bytes | None:
        """The error answer to ``line`` when it is a request and no upstream can take it, else None."""
        message = _parsed(line)
        request_id = message.get("id")
        if "method" in message and isinstance(request_id, (int, str)):
            return _error(request_id, reason)
        return None

    def _from_client(self, line: bytes) -> bytes:
        message = _parsed(line)
        method, request_id = message.get("method"), message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            return line  # a notification, a reply to the upstream, or not JSON-RPC: the upstream's to judge
        self.waiting[request_id] = method
        if method == "tools/list":
            self.listing.add(request_id)
        elif method == "tools/call" and isinstance(message.get("params"), dict):
            try:
                request = JSONRPCRequest.model_validate(message)
            except ValidationError:
                return line
            params = self._repaired_call(request_id, message["params"])
            if params is not message["params"]:
                return _dumped(request.model_copy(update={"params": params}))
        return line

    def _from_upstream(self, line: bytes) -> bytes | None:
        message = _parsed(line)
        request_id = message.get("id")
        if "method" in message or not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            return line
        if isinstance(request_id, str) and request_id in self.pings:
            self.pings.pop(request_id)()
            return None
        self.waiting.pop(request_id, None)
        self._answered(request_id, _failed(message))
        if request_id in self.listing:
            self.listing.discard(request_id)
            if "result" in message:
                response = JSONRPCResponse.model_validate(message)
                return _dumped(response.model_copy(update={"result": self._widened_listing(response.result)}))
        return line

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
                tool = {**tool, "inputSchema": widen_schema(schema, self.style)}
            widened.append(tool)
        return {**result, "tools": widened}

    def _repaired_call(self, request_id: RequestId, params: dict[str, Any]) -> dict[str, Any]:
        """The call's params with its arguments normalized and repaired, or ``params`` itself."""
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
                logger.warning("%s: sent as it came: %s", tool, error)
                if call is not None:
                    call.invalid, call.failures = True, (NORMALIZATION_CONFLICT,)
                return params
            changed = normalized.arguments
            norms = tuple(entry["rule_id"] for entry in normalized.applied)
        repairer = self.repairers.get(tool)
        if repairer is None:  # the client never listed this tool: nothing to repair against
            if call is not None:
                call.norms = norms
            return params if changed == arguments else {**params, "arguments": changed}
        result = repairer.repair(changed)
        if self.stats is not None:
            self.stats.count(tool, result.repairs, result.valid)
        if not result.valid:  # still invalid: the server's own error tells the model what to fix
            if call is not None:
                self._check(call, arguments)
            return params
        if call is not None:
            call.norms = norms + tuple(dict.fromkeys(f"repair:{repair['kind']}" for repair in result.repairs))
        if changed is arguments and not result.repairs:
            return params
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
        if self.recorder is None:
            return None
        if len(self.calls) >= _CALLS_LIMIT:
            del self.calls[next(iter(self.calls))]
        call = self.calls[request_id] = _Call(tool, time.perf_counter())
        return call

    def _check(self, call: _Call, arguments: Mapping[str, Any]) -> None:
        """Note why ``arguments``, sent as they came, fail the tool's schema (if it is known)."""
        assert self.recorder is not None
        repairer = self.repairers.get(call.tool)
        if repairer is None:
            return
        call.invalid = not repairer.is_valid(arguments)
        if call.invalid:
            properties = repairer.schema.get("properties") if isinstance(repairer.schema, Mapping) else None
            known = list(properties) if isinstance(properties, Mapping) else ()
            call.failures = self.recorder.field_failures(repairer.error_details(arguments), arguments, known=known)

    def _answered(self, request_id: RequestId, failed: bool, by_upstream: bool = True) -> None:
        call = self.calls.pop(request_id, None)
        if call is None or self.recorder is None:
            return
        status: Status = "ok"
        if failed:
            status = "refused" if call.invalid and by_upstream else "error"
        duration_ms = (time.perf_counter() - call.started) * 1000
        failures = call.failures if status == "refused" else ()
        self.recorder.record(call.tool, status, duration_ms, failures=failures, norms=call.norms)


def _dumped(message: JSONRPCRequest | JSONRPCResponse | JSONRPCError) -> bytes:
    # As the SDK's transports write a message: by alias, without unset fields, one line.
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def _error(request_id: RequestId, message: str) -> bytes:
    return _dumped(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=CONNECTION_CLOSED, message=message)))


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
