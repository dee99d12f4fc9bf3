"""``pydantic-lenient proxy``: put any MCP server (any language) behind a lenient front over stdio.

The proxy starts the upstream server as a child process and relays MCP's stdio framing (one
JSON-RPC message per line) between it and its own client, changing exactly two kinds of message:

* a ``tools/list`` result: each tool's ``inputSchema`` is widened (`widen_schema`) in the chosen
  style; everything else in the tool (name, description, annotations, output schema) is kept;
* a ``tools/call`` request: the optional normalizer rules, then repair against the upstream's
  *original* schema; a call that is still invalid goes upstream as it was sent.

Those two are read and written as the official SDK's envelope types (`JSONRPCRequest`,
`JSONRPCResponse`). Every other line is forwarded as the same bytes, in order, in both directions:
initialize (so the client's capabilities reach the upstream and the upstream's reach the client),
resources, prompts, completions, logging, progress, cancellation, list-changed notifications, and
server-to-client requests such as sampling, elicitation and roots, with their replies. The proxy is
not an MCP session of its own, so it cannot drop or rewrite what it does not know.

Outcomes: with a ``log_dir`` (or an `OutcomeRecorder` as ``recorder``), every ``tools/call`` is
recorded as the MCP adapters record it (`pydantic_lenient.observe.recorder`): ok; refused by validation,
when the upstream answers with an error a call the proxy found invalid against the tool's schema
(each field's error type and value shape, from the validator's errors); or an error in the tool,
for any other error the upstream (or the proxy, for an upstream that is gone) answers with. With its
duration from request to answer and the normalizer rules and repairs (``repair:<kind>``) applied.

Faults: an upstream that cannot start, exits, or stops answering pings while a request waits gets
every waiting request answered with a JSON-RPC error naming the cause, and the proxy exits 1. A
client that closes stdin, SIGTERM, SIGINT or SIGHUP stop the upstream as the MCP specification's
stdio shutdown says: close its stdin, wait, then SIGTERM and finally SIGKILL its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

try:
    from mcp.types import CONNECTION_CLOSED, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("the proxy needs the official MCP SDK: pip install -e '.[proxy]' from a clone") from error

from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, FieldFailure
from pydantic_lenient.observe.logdir import NORMALIZER_STATS_FILE
from pydantic_lenient.observe.outcomes import Status
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.styles import Style
from pydantic_lenient.schema.widen import widen_schema

__all__ = ("ProxyStats", "run_proxy", "serve")

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


def _dumped(message: JSONRPCRequest | JSONRPCResponse | JSONRPCError) -> bytes:
    # As the SDK's transports write a message: by alias, without unset fields, one line.
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


class _Relay:
    """Reads each line once, changes tools/list results and tools/call requests, and remembers
    which of the client's requests the upstream still owes an answer."""

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
        self.pongs: dict[str, asyncio.Event] = {}

    def from_client(self, line: bytes) -> bytes:
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

    def from_upstream(self, line: bytes) -> bytes | None:
        """The line to pass on to the client, or None for the reply to one of the proxy's pings."""
        message = _parsed(line)
        request_id = message.get("id")
        if "method" in message or not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            return line
        if isinstance(request_id, str) and request_id in self.pongs:
            self.pongs.pop(request_id).set()
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

    def unanswered(self, request_id: RequestId) -> None:
        """The proxy answers ``request_id`` itself with an error (the upstream is gone)."""
        self._answered(request_id, failed=True, by_upstream=False)

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


_MAX_LINE = 256 * 1024 * 1024  # a message longer than this ends the session rather than memory
_START_FAILURE_WAIT = 30.0  # seconds to wait for a request to answer with why the upstream did not start
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_STOP_GRACE = 2.0  # seconds the upstream gets after its stdin closes, and again after SIGTERM


class _Lines(asyncio.Protocol):
    """Splits a byte stream into lines (MCP stdio messages never contain a newline)."""

    def __init__(self, on_line: Callable[[bytes], None], on_end: Callable[[str | None], None]) -> None:
        self.on_line, self.on_end = on_line, on_end
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\n" not in data:
            if len(self.buffer) > _MAX_LINE:
                self.buffer.clear()
                self.on_end(f"sent a message longer than {_MAX_LINE} bytes")
            return
        *lines, rest = self.buffer.split(b"\n")
        self.buffer = bytearray(rest)
        for line in lines:
            if line.strip():
                self.on_line(bytes(line) + b"\n")

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end(None)


class _Writer(asyncio.Protocol):
    """The client's stdout: pauses the upstream's output while the client does not keep up."""

    def __init__(self, proxy: _Proxy) -> None:
        self.proxy = proxy
        self.closed = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.proxy.pause_upstream_output(True)

    def resume_writing(self) -> None:
        self.proxy.pause_upstream_output(False)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.proxy.finish(None)  # the client is gone


class _Upstream(asyncio.SubprocessProtocol):
    def __init__(self, proxy: _Proxy) -> None:
        self.proxy = proxy
        self.lines = _Lines(proxy.upstream_line, proxy.upstream_ended)
        self.exited = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.lines.data_received(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.lines.connection_lost(exc)

    def pause_writing(self) -> None:
        self.proxy.pause_client_input(True)

    def resume_writing(self) -> None:
        self.proxy.pause_client_input(False)

    def process_exited(self) -> None:
        self.exited.set()


@dataclass(frozen=True)
class _Options:
    command: Sequence[str]
    style: Style
    normalizer: Normalizer | None
    log_dir: Path | None
    ping_interval: float
    ping_timeout: float
    save_every: float
    recorder: OutcomeRecorder | None = None
    owns_recorder: bool = False  # built here from log_dir: closed at exit, not only saved


class _Proxy:
    def __init__(self, options: _Options) -> None:
        self.options = options
        self.stats = ProxyStats() if options.log_dir is not None else None
        self.relay = _Relay(options.style, options.normalizer, self.stats, options.recorder)
        self.name = shlex.join(options.command)
        self.failure: str | None = None
        self.start_failure: str | None = None
        self.done = asyncio.Event()
        self.client_in: asyncio.ReadTransport | None = None
        self.client_out: asyncio.WriteTransport | None = None
        self.upstream: asyncio.SubprocessTransport | None = None
        self.upstream_in: asyncio.WriteTransport | None = None
        self.upstream_protocol: _Upstream | None = None

    # ---- lines

    def client_line(self, line: bytes) -> None:
        if self.start_failure is not None:
            request_id = _parsed(line).get("id")
            if "method" in _parsed(line) and isinstance(request_id, (int, str)):
                self.send_client(_error(request_id, self.start_failure))
                self.finish(self.start_failure)
            return
        try:
            forwarded = self.relay.from_client(line)
        except Exception:  # never lose a message to a bug in the lenient layer: send it as it came
            logger.exception("could not process a message from the client; forwarded as it came")
            forwarded = line
        if self.upstream_in is not None and not self.upstream_in.is_closing():
            self.upstream_in.write(forwarded)

    def upstream_line(self, line: bytes) -> None:
        try:
            forwarded = self.relay.from_upstream(line)
        except Exception:
            logger.exception("could not process a message from the upstream; forwarded as it came")
            forwarded = line
        if forwarded is not None:
            self.send_client(forwarded)

    def send_client(self, data: bytes) -> None:
        if self.client_out is not None and not self.client_out.is_closing():
            self.client_out.write(data)

    # ---- flow control

    def pause_upstream_output(self, paused: bool) -> None:
        output = self.upstream.get_pipe_transport(1) if self.upstream is not None else None
        if isinstance(output, asyncio.ReadTransport) and not output.is_closing():
            output.pause_reading() if paused else output.resume_reading()

    def pause_client_input(self, paused: bool) -> None:
        if self.client_in is not None and not self.client_in.is_closing():
            self.client_in.pause_reading() if paused else self.client_in.resume_reading()

    # ---- endings

    def client_ended(self, problem: str | None) -> None:
        if problem is not None:
            logger.warning("the client %s", problem)
        self.finish(None)

    def upstream_ended(self, problem: str | None) -> None:
        what = problem or "exited"
        self.fail(f"the upstream MCP server `{self.name}` {what}")

    def fail(self, reason: str) -> None:
        """Answer every request the upstream still owes with ``reason``, then stop."""
        if self.done.is_set():  # already stopping (the client left, or a signal): nothing to answer
            return
        for request_id in list(self.relay.waiting):
            del self.relay.waiting[request_id]
            self.relay.unanswered(request_id)
            self.send_client(_error(request_id, f"{reason} before answering this request"))
        self.finish(reason)

    def finish(self, failure: str | None) -> None:
        if not self.done.is_set():
            self.failure = failure
            self.done.set()

    # ---- the session

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.client_out, writer = await loop.connect_write_pipe(
            lambda: _Writer(self), os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
        )
        for number in _STOP_SIGNALS:
            loop.add_signal_handler(number, self.finish, None)
        tasks: list[asyncio.Task[None]] = []
        try:
            try:
                self.upstream, self.upstream_protocol = await loop.subprocess_exec(
                    lambda: _Upstream(self),
                    *self.options.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=None,
                    start_new_session=True,  # one process group, so a stop reaches its children too
                )
            except (OSError, ValueError) as error:
                self.start_failure = f"cannot start the upstream MCP server `{self.name}`: {error}"
            else:
                upstream_in = self.upstream.get_pipe_transport(0)
                assert isinstance(upstream_in, asyncio.WriteTransport)
                self.upstream_in = upstream_in
                tasks.append(asyncio.create_task(self._watch()))
                if self.options.log_dir is not None:
                    tasks.append(asyncio.create_task(self._autosave()))
            # Read the client only now, so no message arrives before there is somewhere to send it.
            self.client_in, _ = await loop.connect_read_pipe(
                lambda: _Lines(self.client_line, self.client_ended),
                os.fdopen(sys.stdin.fileno(), "rb", closefd=False),
            )
            if self.start_failure is None:
                await self.done.wait()
            else:  # answer the client's first request (its initialize) with the reason, then stop
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.done.wait(), _START_FAILURE_WAIT)
                self.failure = self.start_failure
        finally:
            for task in tasks:
                task.cancel()
            if self.client_in is not None:
                self.client_in.close()
            await self._stop_upstream()
            self._save()
            self._finish_recording()
            self.client_out.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(writer.closed), _STOP_GRACE)
            for number in _STOP_SIGNALS:
                loop.remove_signal_handler(number)
        if self.failure is not None:
            print(f"pydantic-lenient proxy: {self.failure}", file=sys.stderr)
            return 1
        return 0

    async def _stop_upstream(self) -> None:
        """The MCP stdio shutdown: close the upstream's stdin, wait, then SIGTERM, then SIGKILL."""
        if self.upstream is None or self.upstream_protocol is None:
            return
        exited = self.upstream_protocol.exited
        if self.upstream_in is not None:
            self.upstream_in.close()
        for stop in (None, signal.SIGTERM, signal.SIGKILL):
            if stop is not None:
                try:
                    os.killpg(self.upstream.get_pid(), stop)
                except (ProcessLookupError, PermissionError):
                    break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(exited.wait(), _STOP_GRACE)
            if exited.is_set():
                break
        # Children the upstream left in its group (npx starts node) go with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.upstream.get_pid(), signal.SIGTERM)
        self.upstream.close()

    async def _watch(self) -> None:
        """Ping the upstream while a request waits for it; no reply in time means it hangs."""
        number = 0
        while True:
            await asyncio.sleep(self.options.ping_interval)
            if not self.relay.waiting or self.upstream_in is None:
                continue
            number += 1
            ping_id = f"{_PING_PREFIX}{number}"
            answered = self.relay.pongs[ping_id] = asyncio.Event()
            ping = JSONRPCRequest(jsonrpc="2.0", id=ping_id, method="ping")
            self.upstream_in.write(_dumped(ping))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), self.options.ping_timeout)
            if not answered.is_set():
                self.fail(
                    f"the upstream MCP server `{self.name}` stopped answering "
                    f"(no reply to a ping within {self.options.ping_timeout:g} s)"
                )
                return

    async def _autosave(self) -> None:
        while True:
            await asyncio.sleep(self.options.save_every)
            await asyncio.to_thread(self._save)

    def _save(self) -> None:
        log_dir = self.options.log_dir
        if log_dir is None:
            return
        try:
            if self.stats is not None:
                self.stats.save(log_dir / REPAIR_STATS_FILE)
            # The recorder saves the normalizer's stats when it has them; otherwise they go here.
            recorder = self.options.recorder
            if self.options.normalizer is not None and (recorder is None or recorder.normalizer is None):
                self.options.normalizer.save(log_dir / NORMALIZER_STATS_FILE)
        except OSError as error:
            logger.warning("cannot save stats in %s: %s", log_dir, error)

    def _finish_recording(self) -> None:
        """Flush and save the outcomes at exit (a full or read-only disk is logged, not raised)."""
        recorder = self.options.recorder
        if recorder is None:
            return
        try:
            if self.options.owns_recorder:
                recorder.close()
            elif recorder.log_dir is not None:
                recorder.save()
            else:
                recorder.flush()
        except Exception:
            logger.exception("cannot save the recorded outcomes")


def _error(request_id: RequestId, message: str) -> bytes:
    return _dumped(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=CONNECTION_CLOSED, message=message)))


async def serve(
    command: Sequence[str],
    *,
    style: Style = "type-array",
    normalizer: Normalizer | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    recorder: OutcomeRecorder | None = None,
    sample_chars: int = 0,
    ping_interval: float = 30.0,
    ping_timeout: float = 30.0,
    save_every: float = 60.0,
) -> int:
    """Serve MCP on this process's stdin/stdout in front of ``command``; returns the exit code.

    ``ping_interval``: how often, while a request waits for the upstream, the proxy pings it;
    ``ping_timeout``: how long a ping may go unanswered before the upstream counts as hung.
    ``log_dir``: where every ``tools/call`` is recorded (an `OutcomeRecorder` with the
    ``normalizer``: the audit log, ``outcomes.json`` and the normalizer's stats) and repair counts
    are saved, every ``save_every`` seconds and at exit; ``sample_chars`` > 0 keeps that many
    characters of each refused value there (by default no value is kept). Or pass your own ``recorder`` (for samples,
    sinks, other bounds); repair counts then go to its ``log_dir``, if it has one. A corrupt
    ``outcomes.json`` raises `pydantic_lenient.observe.logdir.LogDirError` before the upstream starts.
    Runs on asyncio.
    """
    if not command:
        raise ValueError("no upstream command given")
    if log_dir is not None and recorder is not None:
        raise ValueError("give log_dir or recorder, not both")
    owns_recorder = log_dir is not None
    if log_dir is not None:
        recorder = OutcomeRecorder(log_dir, normalizer=normalizer, save_every=save_every, sample_chars=sample_chars)
    elif recorder is not None:
        log_dir = recorder.log_dir
    options = _Options(
        command=list(command),
        style=style,
        normalizer=normalizer,
        log_dir=Path(log_dir) if log_dir is not None else None,
        ping_interval=ping_interval,
        ping_timeout=ping_timeout,
        save_every=save_every,
        recorder=recorder,
        owns_recorder=owns_recorder,
    )
    return await _Proxy(options).run()


def run_proxy(command: Sequence[str], **options: Any) -> int:
    """`serve` on a new event loop (what the ``proxy`` command runs)."""
    return asyncio.run(serve(command, **options))
