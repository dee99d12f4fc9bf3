"""Learn from failures: the recorder of every tool call's outcome, its queue and its flusher thread.

    recorder = OutcomeRecorder("logs/")           # what the MCP adapters' ``log_dir=`` builds
    recorder.record("search", "refused", 1.2, failures=recorder.field_failures(error, arguments))
    suggest(recorder.snapshot())                  # or suggest(load_outcomes("logs/"))

A call is ``ok``, ``refused`` by validation (each refused field with its error type and the *shape*
of its value: ``digit string``, ``boolean text``, ``JSON text of an array``, ``unknown parameter
`old_str```, ``missing parameter `old_text```...), or an ``error`` in the tool. Raw values are never
kept unless ``sample_chars`` asks for short, truncated samples.

Failures are grouped into error patterns (`pydantic_lenient.observe.counts`), bounded
(``max_patterns``, ``max_hours``) and, with a log directory, saved atomically to ``outcomes.json``
(`pydantic_lenient.observe.stats_file`) every ``save_every`` seconds and at `close`, restored on the
next start, with one JSON line per call in the audit log (`pydantic_lenient.observe.auditlog`).
Several processes may share one log directory: a save adds only this recorder's calls since its
last save to what ``outcomes.json`` holds now, under the file's lock
(`pydantic_lenient.observe.saving`).

`record` only appends a small record to a queue, and `record_refusal` appends the validation error
as it was raised: a background thread turns errors into field failures (shapes, samples), folds the
queue into the counts, writes the audit lines and feeds the sinks (`pydantic_lenient.observe.otel`) every
``flush_every`` seconds. A disk that is full or read-only never breaks a call: the failure is
logged (to the ``pydantic_lenient.outcomes`` logger) and retried.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from pydantic_lenient.schema.audit import audit

from .auditlog import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES, AuditLog
from .clients import Client
from .counts import DEFAULT_MAX_HOURS, DEFAULT_MAX_PATTERNS, OutcomeCounts
from .failures import FieldFailure, field_failures
from .outcomes import STATUSES, CallOutcome, CallTelemetry, OutcomeSink, Status
from .saving import SharedOutcomesFile
from .shapes import clean_name
from .stats_file import FieldAnnotation, OutcomeStats

__all__ = ("OutcomeRecorder", "adapter_recorder")

_log = logging.getLogger("pydantic_lenient.outcomes")

_PENDING_LIMIT = 10_000  # outcomes queued before `record` folds them itself
_UNWRITTEN_LIMIT = 10_000  # audit lines kept to retry while the disk refuses them


def _bad_status(status: object) -> str:
    return f"status must be one of {', '.join(STATUSES)}, not {status!r:.80}"


class _Queued(NamedTuple):
    """A call as `record` queues it (a named tuple: the cheapest record to build on the call
    path); a refused call carries its validation error, turned into field failures on flush."""

    tool: str
    status: Status
    duration_ms: float
    failures: tuple[FieldFailure, ...]
    norms: tuple[str, ...]
    ts: float
    error: ValidationError | Iterable[ErrorDetails] | None = None
    arguments: Mapping[str, Any] | None = None
    known: Collection[str] = ()
    client: Client | None = None


class OutcomeRecorder:
    """Records call outcomes; with ``log_dir``, keeps the audit log and ``outcomes.json`` there.

    ``normalizer``: its `stats` go into ``outcomes.json`` and it is saved beside it as
    ``normalizer_stats.json`` (and restored from there when it has no ``stats_file`` of its own).
    ``sinks`` receive every outcome, off the call path; ``telemetry`` (a
    `pydantic_lenient.observe.otel.LenientTelemetry`) is told of each call as it ends, on the call's
    own thread, so that its span is still current. ``sample_chars`` > 0 keeps that many characters of a refused
    value's text (at most five per pattern); by default no value is kept.

    A corrupt ``outcomes.json`` raises `LogDirError` here, before anything is written.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        *,
        normalizer: Any = None,
        sinks: Iterable[OutcomeSink] = (),
        telemetry: CallTelemetry | None = None,
        save_every: float = 30.0,
        flush_every: float = 1.0,
        sample_chars: int = 0,
        max_patterns: int = DEFAULT_MAX_PATTERNS,
        max_hours: int = DEFAULT_MAX_HOURS,
        audit_max_bytes: int = DEFAULT_MAX_BYTES,
        audit_backups: int = DEFAULT_BACKUPS,
    ) -> None:
        if save_every <= 0 or flush_every <= 0:
            raise ValueError("save_every and flush_every must be positive numbers of seconds")
        if max_patterns < 1 or max_hours < 1 or sample_chars < 0:
            raise ValueError("max_patterns and max_hours must be at least 1, and sample_chars at least 0")
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.normalizer = normalizer
        self.sinks = tuple(sinks)
        self.telemetry = telemetry
        self._known_tools: set[str] = set()
        self.save_every = save_every
        self.flush_every = flush_every
        self.sample_chars = sample_chars
        self.max_patterns = max_patterns
        self.max_hours = max_hours
        self._lock = threading.RLock()
        self._pending: deque[_Queued | CallOutcome] = deque()
        self._counts = OutcomeCounts(max_patterns=max_patterns, max_hours=max_hours)  # folded since the last save
        self._audit = AuditLog(self.log_dir, max_bytes=audit_max_bytes, backups=audit_backups) if self.log_dir else None
        self._unwritten: deque[str] = deque()
        self._failing: set[str] = set()  # what the disk refuses now: logged once until it works again
        self._save_due = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._outcomes_file = SharedOutcomesFile(self.log_dir, self._counts, self._lock)
        self._outcomes_file.restore_normalizer(normalizer)
        if self.log_dir is not None or self.sinks:
            self._thread = threading.Thread(target=self._run, name="pydantic-lenient-outcomes", daemon=True)
            self._thread.start()
            atexit.register(self.close)

    # The hot path: one small record and one append.
    def record(
        self,
        tool: str,
        status: Status,
        duration_ms: float,
        *,
        failures: tuple[FieldFailure, ...] = (),
        norms: tuple[str, ...] = (),
        client: Client | None = None,
    ) -> None:
        """Record one call (folded into the counts on the next `flush`); ``client``: who sent it
        (`pydantic_lenient.observe.clients.client_from_info`), when it said."""
        if status not in STATUSES:
            raise ValueError(_bad_status(status))
        self._pending.append(_Queued(tool, status, duration_ms, failures, norms, time.time(), None, None, (), client))
        if self.telemetry is not None:
            self._tell(CallOutcome(tool, status, duration_ms, failures, norms, client=client))
        if len(self._pending) > _PENDING_LIMIT:
            self.flush()

    def record_refusal(
        self,
        tool: str,
        duration_ms: float,
        error: ValidationError | Iterable[ErrorDetails],
        arguments: Mapping[str, Any] | None = None,
        *,
        known: Collection[str] = (),
        norms: tuple[str, ...] = (),
        client: Client | None = None,
    ) -> None:
        """Record a call refused by validation with the error as it was raised: its field failures
        (`field_failures` of ``error``, ``arguments`` and ``known``, with this recorder's
        ``sample_chars``) are worked out on the next `flush`, off the call path. ``arguments`` must
        not change meanwhile: pass what was validated, not a dict the caller goes on to edit."""
        queued = _Queued(tool, "refused", duration_ms, (), norms, time.time(), error, arguments, known, client)
        self._pending.append(queued)
        if self.telemetry is not None:
            self._tell(CallOutcome(tool, "refused", duration_ms, norms=norms, client=client), error, arguments, known)
        if len(self._pending) > _PENDING_LIMIT:
            self.flush()

    def record_outcome(self, outcome: CallOutcome) -> None:
        """Record an outcome built elsewhere (a proxy's, or one with its own time)."""
        if outcome.status not in STATUSES:
            raise ValueError(_bad_status(outcome.status))
        self._pending.append(outcome)
        if len(self._pending) > _PENDING_LIMIT:
            self.flush()

    def field_failures(
        self,
        error: ValidationError | Iterable[ErrorDetails],
        arguments: Mapping[str, Any] | None = None,
        *,
        known: Collection[str] = (),
    ) -> tuple[FieldFailure, ...]:
        """`field_failures` with this recorder's ``sample_chars``."""
        return field_failures(error, arguments, known=known, sample_chars=self.sample_chars)

    def describe_tool(self, tool: str, input_model: type[BaseModel]) -> None:
        """Note which of a tool's parameters the strictness audit would change, and to what (the
        library's mapping to lenient forms, as `pydantic_lenient.types.mapping` applies it), for suggestions."""
        self._known_tools.add(tool)
        for annotation in _annotations(tool, input_model):
            with self._lock:
                self._counts.annotate(annotation)

    def _tell(
        self,
        outcome: CallOutcome,
        error: ValidationError | Iterable[ErrorDetails] | None = None,
        arguments: Mapping[str, Any] | None = None,
        known: Collection[str] = (),
    ) -> None:
        """Tell the telemetry of a call as it ends; telemetry that fails never breaks the call."""
        assert self.telemetry is not None
        rules = getattr(self.normalizer, "rules", ())
        rule_params = {rule.id: (rule.type, rule.from_ or "") for rule in rules if rule.id in outcome.norms}
        try:
            self.telemetry.call_ended(
                outcome,
                known_tool=not self._known_tools or outcome.tool in self._known_tools,
                error=error,
                arguments=arguments,
                known=known,
                rule_params=rule_params,
            )
        except Exception:
            _log.exception("telemetry failed: %r", self.telemetry)

    def flush(self) -> None:
        """Fold queued outcomes into the counts, write their audit lines and feed the sinks."""
        with self._lock:
            queued = [_resolved(self._pending.popleft(), self.field_failures) for _ in range(len(self._pending))]
            if self._audit is None:
                for outcome in queued:
                    self._counts.fold(outcome, audit_line=False)
            else:
                self._unwritten.extend(self._counts.fold(outcome, audit_line=True) for outcome in queued)
                overflow = len(self._unwritten) - _UNWRITTEN_LIMIT
                for _ in range(max(overflow, 0)):
                    self._unwritten.popleft()
                    self._counts.audit_lines_dropped += 1
                self._write_audit()
        if self.sinks:
            outcomes = [_as_outcome(outcome) for outcome in queued]
            for sink in self.sinks:
                _feed(sink, outcomes)

    def snapshot(self) -> OutcomeStats:
        """Everything recorded so far (what `save` writes)."""
        self.flush()
        return self._outcomes_file.total(self.normalizer)

    def save(self) -> bool:
        """Save ``outcomes.json`` (and the normalizer's stats) atomically; True if the disk took it.

        Under the file's lock, the calls recorded since the last save are added to what the file
        holds now, so recorders in several processes can share one log directory and lose no
        count (the normalizer's stats are saved the same way). A disk that refuses, or a file that
        is not a saved outcomes file, is logged (once until it works again) and the save retried
        on the next flush; nothing is written over such a file, and no count is lost meanwhile.
        """
        if self.log_dir is None:
            raise ValueError("the recorder has no log_dir to save to")
        try:
            self._outcomes_file.save(self.flush, self.normalizer)
        except (OSError, ValueError) as error:  # a refusing disk; a file that is not ours (LogDirError)
            self._save_due = True
            self._disk_failed("save", f"cannot save the outcome stats in {self.log_dir}: {error}; retrying")
            return False
        self._save_due = False
        self._disk_worked("save", "saved the outcome stats again")
        return True

    def close(self) -> None:
        """Stop the background thread, then flush and save one last time."""
        atexit.unregister(self.close)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if self.log_dir is not None:
            self.save()
        else:
            self.flush()

    # --- inside ---

    def _run(self) -> None:
        next_save = time.monotonic() + self.save_every
        while not self._stop.wait(self.flush_every):
            if self._tick(next_save):
                next_save = time.monotonic() + self.save_every

    def _tick(self, next_save: float) -> bool:
        """Flush, and save when due; True if it saved (or tried to)."""
        try:
            self.flush()
            if self.log_dir is not None and (self._save_due or time.monotonic() >= next_save):
                self.save()
                return True
        except Exception:  # the thread must outlive any one bad moment
            _log.exception("recording outcomes failed")
        return False

    def _write_audit(self) -> None:
        assert self._audit is not None
        if not self._unwritten:
            return
        try:
            self._audit.write(list(self._unwritten))
        except OSError as error:
            self._disk_failed("audit", f"cannot write the audit log {self._audit.path}: {error}; retrying")
            return
        self._unwritten.clear()
        self._disk_worked("audit", f"wrote the audit log {self._audit.path} again")

    def _disk_failed(self, what: str, message: str) -> None:
        if what not in self._failing:
            self._failing.add(what)
            _log.warning(message)

    def _disk_worked(self, what: str, message: str) -> None:
        if what in self._failing:
            self._failing.discard(what)
            _log.warning(message)


def _annotations(tool: str, input_model: type[BaseModel]) -> Iterator[FieldAnnotation]:
    """The parameters of ``tool`` the strictness audit would change, each with its suggestion."""
    for finding in audit([(tool, input_model)]):
        if not finding.suggestion or finding.advertised is not None:
            # A field the mapping leaves as it is (with its reason), or a bound only advertised
            # wrong: rewriting it makes the server take no value it refuses now.
            continue
        param = finding.path.removeprefix(f"{tool}.")
        yield FieldAnnotation(
            tool=clean_name(tool),
            param=clean_name(param),
            annotation=finding.annotation,
            suggestion=finding.suggestion,
        )


def _resolved(
    queued: _Queued | CallOutcome, read_failures: Callable[..., tuple[FieldFailure, ...]]
) -> _Queued | CallOutcome:
    """``queued`` with a refusal's validation error turned into its field failures by ``read_failures``
    (the recorder's `OutcomeRecorder.field_failures`)."""
    if isinstance(queued, CallOutcome) or queued.error is None:
        return queued
    failures: tuple[FieldFailure, ...] = ()
    try:
        failures = read_failures(queued.error, queued.arguments, known=queued.known)
    except Exception:  # an error that cannot be read: the call still counts as refused
        _log.exception("cannot read the validation error of a refused call to %r", clean_name(queued.tool))
    return queued._replace(failures=failures, error=None, arguments=None, known=())


def _as_outcome(queued: _Queued | CallOutcome) -> CallOutcome:
    """A resolved queued call as the `CallOutcome` the sinks receive."""
    if isinstance(queued, CallOutcome):
        return queued
    return CallOutcome(
        queued.tool, queued.status, queued.duration_ms, queued.failures, queued.norms, queued.ts, queued.client
    )


def _feed(sink: OutcomeSink, outcomes: list[CallOutcome]) -> None:
    try:
        for outcome in outcomes:
            sink.record(outcome)
    except Exception:
        _log.exception("an outcome sink failed: %r", sink)


def adapter_recorder(
    recorder: OutcomeRecorder | None, log_dir: str | os.PathLike[str] | None, normalizer: Any = None
) -> OutcomeRecorder | None:
    """The recorder an adapter's ``recorder=`` / ``log_dir=`` options ask for (one or neither)."""
    if recorder is not None and log_dir is not None:
        raise ValueError("give log_dir or recorder, not both")
    if log_dir is not None:
        return OutcomeRecorder(log_dir, normalizer=normalizer)
    return recorder
