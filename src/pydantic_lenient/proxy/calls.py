"""The ``tools/call`` path of the proxy: each tool's `Repairer` from the listings, a call's arguments
normalized and repaired, and its outcome counted and recorded when the upstream answers.

With an `OutcomeRecorder`, every ``tools/call`` is recorded as the MCP adapters record it
(`pydantic_lenient.observe.recorder`): ok; refused by validation, when the upstream answers with an
error a call the proxy found invalid against the tool's schema (each field's error type and value
shape, from the validator's errors); or an error in the tool, for any other error the upstream (or
the proxy, for an upstream that is gone) answers with. With its duration from request to answer and
the normalizer rules and repairs (``repair:<kind>``) applied. An argument name the tool's schema
does not declare is recorded however the call ends, with the declared name it is near; the
upstream still decides whether it is refused or ignored.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_lenient._files import locked, read_regular_file, write_json_atomically
from pydantic_lenient.observe.clients import Client, client_from_info, client_of_call
from pydantic_lenient.observe.failures import NORMALIZATION_CONFLICT, FieldFailure, field_failures, unknown_parameters
from pydantic_lenient.observe.logdir import NORMALIZER_STATS_FILE
from pydantic_lenient.schema.widen import widen_schema

from .messages import RequestId, failed

# What a session without rules or a log directory never uses loads only with them.
if TYPE_CHECKING:
    from pydantic_lenient.normalizer.engine import Normalizer
    from pydantic_lenient.observe.otel import ProxyTracer
    from pydantic_lenient.observe.outcomes import Status
    from pydantic_lenient.observe.recorder import OutcomeRecorder
    from pydantic_lenient.repair.engine import Repairer
    from pydantic_lenient.schema.styles import Style

__all__ = ("REPAIR_STATS_FILE", "Conflict", "PendingCall", "ProxyStats", "ToolCalls")

logger = logging.getLogger("pydantic_lenient.proxy")

_RECENT_LIMIT = 50
REPAIR_STATS_FILE = "repair-stats.json"
_COUNT_KEYS = ("calls", "repaired", "invalid")
_MAX_STATS_BYTES = 16 * 1024 * 1024  # a real one is a few kilobytes: one count per listed tool
_CALLS_LIMIT = 10_000  # unanswered tools/call requests remembered for the recorder (a cancelled one never is)


class ProxyStats:
    """Counts of the ``tools/call`` requests the proxy saw, saved as ``repair-stats.json``.

    Proxies may share a log directory: a save takes the file's lock, reads what the file holds
    now, adds only the calls counted here since the last save, and writes the sum atomically
    (`pydantic_lenient._files`), so no proxy's counts are lost. A save that fails keeps its calls
    for the next one; a file that is not a repair stats file is never written over.

    >>> stats = ProxyStats()
    >>> stats.count("search", [{"kind": "string_to_number"}], valid=True)
    >>> stats.snapshot()["by_tool"]
    {'search': {'calls': 1, 'repaired': 1, 'invalid': 0}}
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._save_lock = threading.Lock()  # one save at a time: each adds what the last one left
        self._saved = _empty_repair_stats()  # what the file held when last read or written
        self._unsaved: dict[str, Any] | None = None  # the calls a save took but the disk refused
        self._counted = _empty_repair_stats()  # the calls counted since

    def count(self, tool: str, repairs: list[dict[str, Any]], valid: bool) -> None:
        with self.lock:
            counts = self._counted["by_tool"].setdefault(tool, {"calls": 0, "repaired": 0, "invalid": 0})
            counts["calls"] += 1
            if repairs and valid:
                counts["repaired"] += 1
                # The kinds only: a repair's "from", "to" and "path" hold the client's text (values and keys).
                kinds = [{"kind": repair["kind"]} for repair in repairs]
                self._counted["recent_repairs"].append({"ts": time.time(), "tool": tool, "repairs": kinds})
                del self._counted["recent_repairs"][:-_RECENT_LIMIT]
            if not valid:
                counts["invalid"] += 1

    def snapshot(self) -> dict[str, Any]:
        """Everything counted: the file as last saved, and the calls since."""
        with self.lock:
            return _added(self._saved, self._unsaved, self._counted)

    def save(self, path: Path) -> None:
        """Add the calls counted since the last save to ``path``, under its lock. Raises `OSError`
        when the disk refuses and `ValueError` when ``path`` holds something else (nothing is
        written over it); either way the calls wait for the next save."""
        with self._save_lock:
            with self.lock:
                self._unsaved = _added(self._unsaved, self._counted)
                self._counted = _empty_repair_stats()
                unsaved = self._unsaved
            with locked(path):
                saved = _added(_read_repair_stats(path), unsaved)
                write_json_atomically(path, saved)
            with self.lock:
                self._saved, self._unsaved = saved, None


def _empty_repair_stats() -> dict[str, Any]:
    return {"total_calls": 0, "total_repaired": 0, "total_invalid": 0, "by_tool": {}, "recent_repairs": []}


def _added(*parts: dict[str, Any] | None) -> dict[str, Any]:
    """``parts`` added up, as a fresh document: the totals from the tools, the newest repairs kept."""
    by_tool: dict[str, dict[str, int]] = {}
    recent: list[dict[str, Any]] = []
    for part in parts:
        if part is None:
            continue
        for tool, counts in part["by_tool"].items():
            total = by_tool.setdefault(tool, {"calls": 0, "repaired": 0, "invalid": 0})
            for key in _COUNT_KEYS:
                total[key] += counts[key]
        recent += part["recent_repairs"]
    return {
        "total_calls": sum(counts["calls"] for counts in by_tool.values()),
        "total_repaired": sum(counts["repaired"] for counts in by_tool.values()),
        "total_invalid": sum(counts["invalid"] for counts in by_tool.values()),
        "by_tool": {tool: by_tool[tool] for tool in sorted(by_tool)},
        "recent_repairs": [dict(entry) for entry in recent[-_RECENT_LIMIT:]],
    }


def _read_repair_stats(path: Path) -> dict[str, Any]:
    """What ``path`` holds now (nothing, when there is no file); `ValueError` for anything but repair stats."""
    try:
        data = read_regular_file(path, _MAX_STATS_BYTES)
    except FileNotFoundError:
        return _empty_repair_stats()
    try:
        document = json.loads(data)
    except ValueError:
        raise ValueError(f"{path} is not a repair stats file: not JSON; it was left as it is") from None
    by_tool = document.get("by_tool") if isinstance(document, dict) else None
    recent = document.get("recent_repairs") if isinstance(document, dict) else None
    if (
        not isinstance(by_tool, dict)
        or not isinstance(recent, list)
        or not all(
            isinstance(counts, dict) and all(_is_count(counts.get(key)) for key in _COUNT_KEYS)
            for counts in by_tool.values()
        )
    ):
        raise ValueError(f"{path} is not a repair stats file; it was left as it is")
    return {"by_tool": by_tool, "recent_repairs": [entry for entry in recent if isinstance(entry, dict)]}


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


@dataclass(slots=True)
class PendingCall:
    """A ``tools/call`` the upstream has yet to answer: what the recorder needs when it does.
    ``invalid``: the arguments as forwarded fail the tool's schema (``failures`` say how)."""

    tool: str
    started: float
    norms: tuple[str, ...] = ()
    invalid: bool = False
    failures: tuple[FieldFailure, ...] = ()
    unknown: tuple[FieldFailure, ...] = ()  # names the tool does not declare, recorded however it ends
    client: Client | None = None  # who sent it


class Conflict(Exception):
    """A call whose normalization conflicts: answered with a tool error, never forwarded."""


class ToolCalls:
    """The calls of one session: the `Repairer` of each listed tool, and the calls the upstream has
    yet to answer (at most ``_CALLS_LIMIT``), tracked only when a recorder or a tracer wants them."""

    def __init__(
        self,
        style: Style,
        normalizer: Normalizer | None,
        stats: ProxyStats | None,
        recorder: OutcomeRecorder | None,
        tracer: ProxyTracer | None,
    ) -> None:
        self.style = style
        self.normalizer = normalizer
        self.stats = stats
        self.recorder = recorder
        self.tracer = tracer
        self.calls: dict[RequestId, PendingCall] = {}
        # Each listed tool's schema, and its `Repairer` built at the tool's first call: one costs
        # about 18 kB, so a listing of thousands of tools would cost more than its own size.
        self.schemas: dict[str, Mapping[str, Any]] = {}
        self.repairers: dict[str, Repairer] = {}
        self.client: Client | None = None  # as the session's initialize named it

    def note_client(self, initialize_params: Any) -> None:
        """Remember the client an ``initialize`` request names (``clientInfo``)."""
        if isinstance(initialize_params, Mapping):
            self.client = client_from_info(initialize_params.get("clientInfo"))

    def call_client(self, params: Mapping[str, Any]) -> Client | None:
        """The client that sent a call: the one its ``_meta`` names (protocol 2026-07-28), else the
        session's."""
        return client_of_call(params, self.client)

    def forget(self, request_id: RequestId) -> None:
        """The call ``request_id`` will not be answered (cancelled, or forgotten past the bound)."""
        self.calls.pop(request_id, None)

    def widened_listing(self, result: dict[str, Any]) -> dict[str, Any]:
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
                self.schemas[tool["name"]] = schema
                self.repairers.pop(tool["name"], None)  # listed again: its schema may have changed
                if self.tracer is not None:
                    self.tracer.listed([tool["name"]])
                tool = {**tool, "inputSchema": widen_schema(schema, self.style)}
            widened.append(tool)
        return {**result, "tools": widened}

    def repairer(self, tool: str) -> Repairer | None:
        """The `Repairer` of a listed tool (built at its first call), or None for a tool not listed."""
        repairer = self.repairers.get(tool)
        if repairer is None and tool in self.schemas:
            from pydantic_lenient.repair.engine import Repairer  # loaded at the first call, not at start-up

            repairer = self.repairers[tool] = Repairer(self.schemas[tool])
        return repairer

    def repaired_call(
        self, request_id: RequestId, params: dict[str, Any], shallow: bool = False, client: Client | None = None
    ) -> dict[str, Any]:
        """The call's params with its arguments normalized and repaired, or ``params`` itself.
        ``shallow``: the arguments nest no deeper than the parser allows (`Repairer.verdict`);
        ``client``: who sent it, for the recorder. Raises `Conflict` for a call whose normalization
        conflicts."""
        tool, arguments = params.get("name"), params.get("arguments")
        if not isinstance(tool, str):
            return params
        call = self._track(request_id, tool, client)
        if not isinstance(arguments, Mapping):
            if call is not None and arguments is None:  # a call may leave out its arguments
                self._check(call, {})
            return params
        changed: Any = arguments
        listed = self.schemas.get(tool)
        if client is not None and listed is not None and isinstance(arguments, dict) and "" in arguments.values():
            from pydantic_lenient.hosts import arguments_as_meant  # loaded when a host may have filled one in

            # Before renaming: a host fills in the names the tool lists (Cursor's "", `HostProfile.as_meant`).
            changed = arguments_as_meant(client.name, listed, arguments)
        norms: tuple[str, ...] = ()
        if self.normalizer is not None:
            from pydantic_lenient.normalizer.engine import NormalizationConflict  # loaded with the normalizer

            try:
                normalized = self.normalizer.apply(tool, changed)
            except NormalizationConflict as error:
                if call is not None:
                    call.invalid, call.failures = True, (NORMALIZATION_CONFLICT,)
                raise Conflict(f"{tool}: {error}") from None
            changed = normalized.arguments
            norms = tuple(entry["rule_id"] for entry in normalized.applied)
            if self.tracer is not None:
                self.tracer.normalized(request_id, normalized.applied)
        repairer = self.repairer(tool)
        if repairer is None:  # the upstream lists no such tool: nothing to repair against
            if call is not None:
                call.norms = norms
            return params if changed == arguments else {**params, "arguments": changed}
        if call is not None:
            call.unknown = _unknown_names(repairer, changed)  # as sent, whatever repair makes of them
        # Valid as it is: one validation, no copy, and no walk for arguments as parsed (the normalizer
        # may have parsed a text into something deeper).
        if repairer.is_valid(changed, shallow=shallow and changed is arguments):
            if self.stats is not None:
                self.stats.count(tool, [], True)
            if call is not None:
                call.norms = norms
            return params if changed is arguments else {**params, "arguments": changed}
        result = repairer.repair(changed, copy=False)  # only written out: a call repair cannot change is not copied
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

    def save(self, log_dir: Path) -> None:
        """Save the repair counts in ``log_dir``, and the normalizer's stats when no recorder does.
        A save that fails is logged; its counts wait for the next one."""
        saves: list[tuple[Path, Callable[[Path], object]]] = []
        if self.stats is not None:
            saves.append((log_dir / REPAIR_STATS_FILE, self.stats.save))
        # The recorder saves the normalizer's stats when it has them; otherwise they go here.
        if self.normalizer is not None and (self.recorder is None or self.recorder.normalizer is None):
            saves.append((log_dir / NORMALIZER_STATS_FILE, self.normalizer.save))
        for path, save in saves:
            _save_logged(path, save)

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

    def _track(self, request_id: RequestId, tool: str, client: Client | None) -> PendingCall | None:
        if self.recorder is None and self.tracer is None:
            return None
        if len(self.calls) >= _CALLS_LIMIT:
            del self.calls[next(iter(self.calls))]
        call = self.calls[request_id] = PendingCall(tool, time.perf_counter(), client=client)
        return call

    def _check(self, call: PendingCall, arguments: Mapping[str, Any]) -> None:
        """Note why ``arguments``, sent as they came, fail the tool's schema (if it is known)."""
        repairer = self.repairer(call.tool)
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

    def answered(self, request_id: RequestId, message: dict[str, Any] | None, by_upstream: bool = True) -> None:
        """Record the answer ``message`` to a call (None: the proxy answered for a gone upstream)."""
        call = self.calls.pop(request_id, None)
        if call is None:
            return
        status: Status = "ok"
        if message is None or failed(message):
            status = "refused" if call.invalid and by_upstream else "error"
        failures = call.failures if status == "refused" else ()
        if self.tracer is not None:
            self.tracer.refused(request_id, failures)
            self.tracer.answered(request_id, message, status)
        failures = failures or call.unknown
        if self.recorder is None:
            return
        duration_ms = (time.perf_counter() - call.started) * 1000
        self.recorder.record(call.tool, status, duration_ms, failures=failures, norms=call.norms, client=call.client)


def _save_logged(path: Path, save: Callable[[Path], object]) -> None:
    try:
        save(path)
    except (OSError, ValueError) as error:  # a full disk, or a file that is not ours to write over
        logger.warning("cannot save %s: %s", path, error)


def _unknown_names(repairer: Repairer, arguments: Mapping[str, Any]) -> tuple[FieldFailure, ...]:
    """The argument names the tool's schema does not declare (none when it declares no properties)."""
    properties = repairer.schema.get("properties") if isinstance(repairer.schema, Mapping) else None
    if not isinstance(properties, Mapping) or not properties:
        return ()
    return unknown_parameters(arguments, properties.keys())
