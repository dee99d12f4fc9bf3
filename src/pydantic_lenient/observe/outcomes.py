"""Learn from failures: every tool call's outcome, the error patterns, and the rules they suggest.

    recorder = OutcomeRecorder("logs/")           # what the MCP adapters' ``log_dir=`` builds
    recorder.record("search", "refused", 1.2, failures=recorder.field_failures(error, arguments))
    suggest(recorder.snapshot())                  # or suggest(load_outcomes("logs/"))

A call is ``ok``, ``refused`` by validation (each refused field with its error type and the *shape*
of its value: ``digit string``, ``boolean text``, ``JSON text of an array``, ``unknown parameter
`old_str```, ``missing parameter `old_text```...), or an ``error`` in the tool. Raw values are never
kept unless ``sample_chars`` asks for short, truncated samples.

Failures are grouped into error patterns by tool, parameter, error type and shape, with counts,
first and last seen, and hourly buckets; unknown and missing names that arrive in the same call are
counted as pairs. All of it is bounded (``max_patterns``, ``max_hours``) and, with a log directory,
saved atomically to ``outcomes.json`` every ``save_every`` seconds and at `close`, restored on the
next start, with one JSON line per call in the audit log (`pydantic_lenient.observe.auditlog`).

`record` only appends a small record to a queue, and `record_refusal` appends the validation error
as it was raised: a background thread turns errors into field failures (shapes, samples), folds the
queue into the counts, writes the audit lines and feeds the sinks (`pydantic_lenient.observe.otel`) every
``flush_every`` seconds. A disk that is full or read-only never breaks a call: the failure is
logged and retried.
"""

from __future__ import annotations

import atexit
import difflib
import functools
import json
import logging
import math
import os
import re
import threading
import time
import typing
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, from_json

from pydantic_lenient.normalizer.stats import timestamp, write_json_atomically
from pydantic_lenient.schema.audit import audit
from pydantic_lenient.types.scalar import JSON_NUMBER_TEXT

from .auditlog import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES, AuditLog
from .logdir import NORMALIZER_STATS_FILE, OUTCOMES_FILE, LogDirError, first_problem

__all__ = (
    "NORMALIZATION_CONFLICT",
    "STATUSES",
    "AliasEvidence",
    "CallOutcome",
    "ErrorPattern",
    "FieldAnnotation",
    "FieldFailure",
    "HourCalls",
    "HourCount",
    "LogDirError",
    "OutcomeRecorder",
    "OutcomeSink",
    "OutcomeStats",
    "Status",
    "Suggestion",
    "ToolCalls",
    "adapter_recorder",
    "field_failures",
    "load_outcomes",
    "rules_document",
    "suggest",
    "value_shape",
)

Status = Literal["ok", "refused", "error"]
STATUSES: tuple[Status, ...] = ("ok", "refused", "error")


def _bad_status(status: object) -> str:
    return f"status must be one of {', '.join(STATUSES)}, not {status!r:.80}"


_log = logging.getLogger(__name__)

NAME_LIMIT = 200  # characters kept of a name that came from a client (a tool, a parameter)
_JSON_SHAPE_LIMIT = 100_000  # longer text is not parsed to tell its shape
_SAMPLES_PER_PATTERN = 5
_PAIRS_PER_CALL = 10  # unknown and missing names paired from one call, at most, each
_PENDING_LIMIT = 10_000  # outcomes queued before `record` folds them itself
_UNWRITTEN_LIMIT = 10_000  # audit lines kept to retry while the disk refuses them

_DIGITS = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(JSON_NUMBER_TEXT)
_NUMBER_STARTS = frozenset("-0123456789")
_BOOLEAN_WORDS = frozenset({"true", "false"})
_NULL_WORDS = frozenset({"null", "none", "nil", "undefined"})
_YES_NO_WORDS = frozenset({"yes", "no", "on", "off", "y", "n"})


# --- Shapes ----------------------------------------------------------------------------------


def value_shape(value: Any) -> str:
    """What an offending value looks like, never the value itself: ``digit string``, ``boolean
    text``, ``JSON text of an array``, ``number``, ``array``...

    >>> value_shape("100"), value_shape("FALSE"), value_shape('["a"]'), value_shape(1.5)
    ('digit string', 'boolean text', 'JSON text of an array', 'number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else "non-finite number"
    if isinstance(value, str):
        return _text_shape(value)
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "other value"


def _text_shape(text: str) -> str:
    if not text:
        return "empty string"
    stripped = text.strip()
    if not stripped:
        return "blank string"
    if stripped != text:
        return f"padded {_text_shape(stripped)}"
    if text[0] in _NUMBER_STARTS:  # both patterns start with a digit or a minus sign
        if _DIGITS.fullmatch(text):
            return "digit string"
        if _NUMBER.fullmatch(text):
            return "number string"
    word = text.lower()
    if word in _BOOLEAN_WORDS:
        return "boolean text"
    if word in _NULL_WORDS:
        return "null text"
    if word in _YES_NO_WORDS:
        return "yes/no text"
    if text[0] in "[{" and len(text) <= _JSON_SHAPE_LIMIT:
        try:
            parsed = from_json(text)
        except ValueError:
            return "malformed JSON text"
        return "JSON text of an array" if isinstance(parsed, list) else "JSON text of an object"
    return "string"


def _clean(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with anything UTF-8 cannot hold (lone surrogates) escaped."""
    text = text[:limit]
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _sample(value: Any, chars: int) -> str:
    if isinstance(value, str):
        text = value[: chars + 1]
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)[: chars + 1]
        except (ValueError, TypeError, RecursionError):
            text = "<not JSON>"
    return _clean(text if len(text) <= chars else text[:chars] + "…", chars + 1)


# --- Records ---------------------------------------------------------------------------------


class FieldFailure(NamedTuple):
    """One refused field of a call: its parameter path (``limit``, ``steps[].id``), the error type
    (pydantic's, ``missing``, or ``unknown_parameter``), the value's shape, and a sample only when
    samples are kept."""

    param: str
    error_type: str
    shape: str
    sample: str | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call: how it ended, how long it took (ms), its refused fields and the ids of the
    normalizer rules that changed it."""

    tool: str
    status: Status
    duration_ms: float
    failures: tuple[FieldFailure, ...] = ()
    norms: tuple[str, ...] = ()
    ts: float = field(default_factory=time.time)


def _param_path(location: Sequence[int | str]) -> str:
    """A location as a parameter path without item numbers, so ``steps.3.id`` and ``steps.4.id``
    are one pattern: ``steps[].id``."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += "[]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(arguments)"


# What pydantic's validate_call (FastMCP validates arguments with it) calls a model's "missing" and
# "extra_forbidden", so that both SDKs' refusals form the same patterns.
_CALL_ERROR_TYPES = {"missing_argument": "missing", "unexpected_keyword_argument": "extra_forbidden"}


def field_failures(
    error: ValidationError | Iterable[ErrorDetails],
    arguments: Mapping[str, Any] | None = None,
    *,
    known: Collection[str] = (),
    sample_chars: int = 0,
) -> tuple[FieldFailure, ...]:
    """The refused fields of a call, one per parameter and error type.

    ``error`` is pydantic's, or error details in its shape from elsewhere (a JSON Schema
    validator's: `pydantic_lenient.repair.engine.Repairer.error_details`). With ``known`` (the tool's
    parameter names), argument names outside it are reported as ``unknown_parameter`` too: the SDKs
    ignore extra arguments, but an unknown name next to a missing one is how a misnamed parameter shows.
    """
    failures: dict[tuple[str, str], FieldFailure] = {}
    details = error.errors(include_url=False, include_context=False) if isinstance(error, ValidationError) else error
    for detail in details:
        param, error_type = _clean(_param_path(detail["loc"])), detail["type"]
        error_type = _CALL_ERROR_TYPES.get(error_type, error_type)
        if error_type == "missing":
            shape, sample = f"missing parameter `{param}`", None
        elif error_type == "extra_forbidden":
            error_type = "unknown_parameter"
            shape, sample = f"unknown parameter `{param}`", None
        else:
            value = detail["input"]
            shape, sample = value_shape(value), _sample(value, sample_chars) if sample_chars > 0 else None
        failures.setdefault((param, error_type), FieldFailure(param, error_type, shape, sample))
    if known and arguments:
        for name in arguments:
            if name not in known:
                param = _clean(str(name))
                failures.setdefault(
                    (param, "unknown_parameter"),
                    FieldFailure(param, "unknown_parameter", f"unknown parameter `{param}`"),
                )
    return tuple(failures.values())


# --- The saved file --------------------------------------------------------------------------

Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Name = Annotated[str, Field(max_length=4 * NAME_LIMIT)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HourCount(_Record):
    """Failures in the hour starting at ``start`` (Unix seconds)."""

    start: Seconds
    count: Count


class ErrorPattern(_Record):
    """Refusals grouped by tool, parameter, error type and value shape."""

    tool: Name
    param: Name
    error_type: Name
    shape: Name
    count: Count
    first_seen: Seconds
    last_seen: Seconds
    hourly: list[HourCount] = []
    samples: list[str] = []


class AliasEvidence(_Record):
    """Calls that sent the unknown name ``unknown`` and lacked the required ``missing``."""

    tool: Name
    unknown: Name
    missing: Name
    count: Count
    first_seen: Seconds
    last_seen: Seconds


class ToolCalls(_Record):
    """One tool's calls by status, and their total duration."""

    tool: Name
    ok: Count = 0
    refused: Count = 0
    error: Count = 0
    duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0


class HourCalls(_Record):
    """All tools' calls by status in the hour starting at ``start``."""

    start: Seconds
    ok: Count = 0
    refused: Count = 0
    error: Count = 0


class FieldAnnotation(_Record):
    """A parameter's annotation that the strictness audit would change, and to what."""

    tool: Name
    param: Name
    annotation: str
    suggestion: str


class OutcomeStats(_Record):
    """Everything recorded: the content of ``outcomes.json``."""

    format: Literal["pydantic-lenient-outcomes"] = "pydantic-lenient-outcomes"
    version: Literal[1] = 1
    saved_at: Seconds | None = None
    tools: list[ToolCalls] = []
    hourly: list[HourCalls] = []
    patterns: list[ErrorPattern] = []
    aliases: list[AliasEvidence] = []
    annotations: list[FieldAnnotation] = []
    normalizer: dict[str, Any] | None = None
    audit_lines_dropped: Count = 0


def load_outcomes(log_dir: str | os.PathLike[str]) -> OutcomeStats:
    """What a recorder saved in ``log_dir`` (empty stats if it saved nothing yet).

    Raises `LogDirError`, naming the file, if ``log_dir`` is not a directory or ``outcomes.json``
    cannot be read as saved stats (corrupt, cut short, or of another shape).
    """
    directory = Path(log_dir)
    if not directory.is_dir():
        raise LogDirError(f"{directory}: not a directory")
    path = directory / OUTCOMES_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return OutcomeStats()
    except OSError as error:
        raise LogDirError(f"{path}: cannot be read: {error.strerror}") from None
    try:
        return OutcomeStats.model_validate_json(data)
    except ValidationError as error:
        raise LogDirError(f"{path}: not a saved outcomes file ({first_problem(error)}); it was left as it is") from None


# --- The recorder ----------------------------------------------------------------------------


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


class OutcomeSink(Protocol):
    """Something that also receives every outcome, such as `pydantic_lenient.observe.otel.OtelMetrics`."""

    def record(self, outcome: CallOutcome) -> None: ...


# Named tuples: hashed in C, as the flusher looks each one up for every refused field.
class _PatternKey(NamedTuple):
    tool: str
    param: str
    error_type: str
    shape: str


class _PairKey(NamedTuple):
    tool: str
    unknown: str
    missing: str


class _FoldPlan(NamedTuple):
    """What a call's refused fields add to the counts, worked out once per tool and failures: the
    same mistake, made again, is counted without cleaning names or writing its audit text anew."""

    keys: tuple[_PatternKey, ...]
    samples: tuple[str | None, ...]
    pairs: tuple[_PairKey, ...]
    errors: str  # the audit line's "errors" items


_PLANS_LIMIT = 1024  # distinct (tool, failures) plans kept; past it the cache starts again


def _fold_plan(tool: str, failures: tuple[FieldFailure, ...]) -> _FoldPlan:
    keys = tuple(
        _PatternKey(tool, _clean(failure.param), _clean(failure.error_type), _clean(failure.shape))
        for failure in failures
    )
    unknown = [key.param for key in keys if key.error_type == "unknown_parameter"][:_PAIRS_PER_CALL]
    missing = [key.param for key in keys if key.error_type == "missing"][:_PAIRS_PER_CALL]
    samples = tuple(failure.sample for failure in failures)
    errors = ",".join(
        _audit_error(key.param, key.error_type, key.shape, sample) for key, sample in zip(keys, samples, strict=True)
    )
    pairs = tuple(_PairKey(tool, unknown_name, missing_name) for unknown_name in unknown for missing_name in missing)
    return _FoldPlan(keys, samples, pairs, errors)


@dataclass(slots=True)
class _Seen:
    count: int
    first_seen: float
    last_seen: float
    hourly: dict[int, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)

    def add(self, ts: float, hour: int, max_hours: int) -> None:
        self.count += 1
        if ts < self.first_seen:
            self.first_seen = ts
        if ts > self.last_seen:
            self.last_seen = ts
        hourly = self.hourly
        hourly[hour] = hourly.get(hour, 0) + 1
        if len(hourly) > max_hours:
            _prune_hours(hourly, max_hours)


@dataclass(slots=True)
class _Calls:
    ok: int = 0
    refused: int = 0
    error: int = 0
    duration_ms: float = 0.0


def _prune_hours(hourly: dict[int, Any], max_hours: int) -> None:
    if len(hourly) > max_hours:
        for hour in sorted(hourly)[: len(hourly) - max_hours]:
            del hourly[hour]


_K = TypeVar("_K")
_V = TypeVar("_V")


def _touch(mapping: dict[_K, _V], key: _K, make: Callable[[], _V], limit: int) -> _V:
    """``mapping[key]`` (made if missing), moved to the end; the least recently touched go past ``limit``."""
    value = mapping.pop(key, None)
    if value is None:
        value = make()
    mapping[key] = value
    while len(mapping) > limit:
        del mapping[next(iter(mapping))]
    return value


class OutcomeRecorder:
    """Records call outcomes; with ``log_dir``, keeps the audit log and ``outcomes.json`` there.

    ``normalizer``: its `stats` go into ``outcomes.json`` and it is saved beside it as
    ``normalizer_stats.json`` (and restored from there when it has no ``stats_file`` of its own).
    ``sinks`` receive every outcome. ``sample_chars`` > 0 keeps that many characters of a refused
    value's text (at most five per pattern); by default no value is kept.

    A corrupt ``outcomes.json`` raises `LogDirError` here, before anything is written.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        *,
        normalizer: Any = None,
        sinks: Iterable[OutcomeSink] = (),
        save_every: float = 30.0,
        flush_every: float = 1.0,
        sample_chars: int = 0,
        max_patterns: int = 1000,
        max_hours: int = 168,
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
        self.save_every = save_every
        self.flush_every = flush_every
        self.sample_chars = sample_chars
        self.max_patterns = max_patterns
        self.max_hours = max_hours
        self._lock = threading.RLock()
        self._pending: deque[_Queued | CallOutcome] = deque()
        self._tools: dict[str, _Calls] = {}
        self._hourly: dict[int, _Calls] = {}
        self._patterns: dict[_PatternKey, _Seen] = {}
        self._pairs: dict[_PairKey, _Seen] = {}
        self._plans: dict[tuple[str, tuple[FieldFailure, ...]], _FoldPlan] = {}
        self._annotations: dict[tuple[str, str], FieldAnnotation] = {}
        self._audit = AuditLog(self.log_dir, max_bytes=audit_max_bytes, backups=audit_backups) if self.log_dir else None
        self._unwritten: deque[str] = deque()
        self._dropped = 0
        self._failing: set[str] = set()  # what the disk refuses now: logged once until it works again
        self._save_due = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.log_dir is not None:
            self._restore(load_outcomes(self.log_dir) if self.log_dir.is_dir() else OutcomeStats())
            self._restore_normalizer()
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
    ) -> None:
        """Record one call (folded into the counts on the next `flush`)."""
        if status not in STATUSES:
            raise ValueError(_bad_status(status))
        self._pending.append(_Queued(tool, status, duration_ms, failures, norms, time.time()))
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
    ) -> None:
        """Record a call refused by validation with the error as it was raised: its field failures
        (`field_failures` of ``error``, ``arguments`` and ``known``, with this recorder's
        ``sample_chars``) are worked out on the next `flush`, off the call path. ``arguments`` must
        not change meanwhile: pass what was validated, not a dict the caller goes on to edit."""
        self._pending.append(_Queued(tool, "refused", duration_ms, (), norms, time.time(), error, arguments, known))
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
        for finding in audit([(tool, input_model)]):
            if not finding.suggestion:
                continue  # a field the mapping leaves as it is, with its reason
            param = finding.path.removeprefix(f"{tool}.")
            annotation = FieldAnnotation(
                tool=_clean(tool), param=_clean(param), annotation=finding.annotation, suggestion=finding.suggestion
            )
            with self._lock:
                self._annotations[(annotation.tool, annotation.param)] = annotation

    def flush(self) -> None:
        """Fold queued outcomes into the counts, write their audit lines and feed the sinks."""
        with self._lock:
            queued = [self._resolved(self._pending.popleft()) for _ in range(len(self._pending))]
            if self._audit is None:
                for outcome in queued:
                    self._fold(outcome, audit_line=False)
            else:
                self._unwritten.extend(self._fold(outcome, audit_line=True) for outcome in queued)
                overflow = len(self._unwritten) - _UNWRITTEN_LIMIT
                for _ in range(max(overflow, 0)):
                    self._unwritten.popleft()
                    self._dropped += 1
                self._write_audit()
        if self.sinks:
            outcomes = [
                outcome
                if isinstance(outcome, CallOutcome)
                else CallOutcome(
                    outcome.tool, outcome.status, outcome.duration_ms, outcome.failures, outcome.norms, outcome.ts
                )
                for outcome in queued
            ]
            for sink in self.sinks:
                _feed(sink, outcomes)

    def snapshot(self) -> OutcomeStats:
        """Everything recorded so far (what `save` writes)."""
        self.flush()
        with self._lock:
            return OutcomeStats(
                saved_at=time.time(),
                tools=[ToolCalls(tool=tool, **_calls_fields(calls)) for tool, calls in self._tools.items()],
                hourly=[
                    HourCalls(start=hour, **_calls_fields(calls, False)) for hour, calls in sorted(self._hourly.items())
                ],
                patterns=[
                    ErrorPattern(
                        tool=key.tool,
                        param=key.param,
                        error_type=key.error_type,
                        shape=key.shape,
                        count=seen.count,
                        first_seen=seen.first_seen,
                        last_seen=seen.last_seen,
                        hourly=[HourCount(start=hour, count=count) for hour, count in sorted(seen.hourly.items())],
                        samples=list(seen.samples),
                    )
                    for key, seen in self._patterns.items()
                ],
                aliases=[
                    AliasEvidence(
                        tool=key.tool,
                        unknown=key.unknown,
                        missing=key.missing,
                        count=seen.count,
                        first_seen=seen.first_seen,
                        last_seen=seen.last_seen,
                    )
                    for key, seen in self._pairs.items()
                ],
                annotations=list(self._annotations.values()),
                normalizer=self.normalizer.stats() if self.normalizer is not None else None,
                audit_lines_dropped=self._dropped,
            )

    def save(self) -> bool:
        """Save ``outcomes.json`` (and the normalizer's stats) atomically; True if the disk took it.

        A disk that refuses is logged (once until it works again) and retried on the next flush.
        """
        if self.log_dir is None:
            raise ValueError("the recorder has no log_dir to save to")
        stats = self.snapshot()
        try:
            write_json_atomically(self.log_dir / OUTCOMES_FILE, stats.model_dump(mode="json"))
            if self.normalizer is not None:
                self.normalizer.save(self.log_dir / NORMALIZER_STATS_FILE)
        except OSError as error:
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

    def _resolved(self, queued: _Queued | CallOutcome) -> _Queued | CallOutcome:
        """``queued`` with a refusal's validation error turned into its field failures."""
        if isinstance(queued, CallOutcome) or queued.error is None:
            return queued
        failures: tuple[FieldFailure, ...] = ()
        try:
            failures = self.field_failures(queued.error, queued.arguments, known=queued.known)
        except Exception:  # an error that cannot be read: the call still counts as refused
            _log.exception("cannot read the validation error of a refused call to %r", _clean(queued.tool))
        return _Queued(queued.tool, queued.status, queued.duration_ms, failures, queued.norms, queued.ts)

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

    @typing.overload
    def _fold(self, outcome: _Queued | CallOutcome, *, audit_line: Literal[True]) -> str: ...
    @typing.overload
    def _fold(self, outcome: _Queued | CallOutcome, *, audit_line: Literal[False]) -> None: ...
    def _fold(self, outcome: _Queued | CallOutcome, *, audit_line: bool) -> str | None:
        """Count ``outcome``; with ``audit_line``, return its audit log line, built from the same
        cleaned names as its patterns."""
        tool, ts, status, duration_ms = _clean(outcome.tool), outcome.ts, outcome.status, outcome.duration_ms
        # A caller's NaN, negative or infinite duration, or a time no timestamp can spell, would
        # make every later save fail: such a call counts with no duration, at the time it is folded.
        if not 0 <= duration_ms < math.inf:
            duration_ms = 0.0
        if not 0 <= ts < _LAST_SECOND - 1:
            ts = time.time()
        hour = int(ts // 3600) * 3600
        by_tool = _touch(self._tools, tool, _Calls, self.max_patterns)
        by_hour = self._hourly.get(hour)
        if by_hour is None:
            by_hour = self._hourly[hour] = _Calls()
            _prune_hours(self._hourly, self.max_hours)
        if status == "ok":
            by_tool.ok += 1
            by_hour.ok += 1
        elif status == "refused":
            by_tool.refused += 1
            by_hour.refused += 1
        else:
            by_tool.error += 1
            by_hour.error += 1
        by_tool.duration_ms += duration_ms
        by_hour.duration_ms += duration_ms
        errors = self._fold_failures(tool, ts, hour, outcome.failures, audit_line) if outcome.failures else ""
        if not audit_line:
            return None
        duration_ms = round(duration_ms, 3)
        norms = ",".join([_json_text(_clean(norm)) for norm in outcome.norms]) if outcome.norms else ""
        line = (
            f'{{"ts":"{_timestamp(ts)}","tool":{_json_text(tool)},"status":"{status}",'
            f'"duration_ms":{duration_ms!r},"norms":[{norms}],"errors":[{errors}]}}'
        )
        return line if line.isascii() else line.translate(_LINE_BREAKS)

    def _fold_failures(
        self, tool: str, ts: float, hour: int, failures: tuple[FieldFailure, ...], audit_line: bool
    ) -> str:
        """Count a call's refused fields into the patterns (and its unknown and missing names into
        the pairs); their audit log text, with ``audit_line``."""
        plan = self._plans.get((tool, failures))
        if plan is None:
            if len(self._plans) >= _PLANS_LIMIT:
                self._plans.clear()
            plan = self._plans[(tool, failures)] = _fold_plan(tool, failures)

        def first_seen() -> _Seen:
            return _Seen(0, ts, ts)

        for key, sample in zip(plan.keys, plan.samples, strict=True):
            seen = _touch(self._patterns, key, first_seen, self.max_patterns)
            seen.add(ts, hour, self.max_hours)
            if sample is not None:
                seen.samples = [*seen.samples[1 - _SAMPLES_PER_PATTERN :], sample]
        for pair_key in plan.pairs:
            _touch(self._pairs, pair_key, first_seen, self.max_patterns).add(ts, hour, 1)
        return plan.errors if audit_line else ""

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

    def _restore(self, saved: OutcomeStats) -> None:
        for tool_calls in saved.tools[-self.max_patterns :]:
            self._tools[tool_calls.tool] = _Calls(
                tool_calls.ok, tool_calls.refused, tool_calls.error, tool_calls.duration_ms
            )
        for hour_calls in saved.hourly[-self.max_hours :]:
            self._hourly[int(hour_calls.start)] = _Calls(hour_calls.ok, hour_calls.refused, hour_calls.error)
        for pattern in sorted(saved.patterns, key=lambda pattern: pattern.last_seen)[-self.max_patterns :]:
            key = _PatternKey(pattern.tool, pattern.param, pattern.error_type, pattern.shape)
            hourly = {int(bucket.start): bucket.count for bucket in pattern.hourly}
            _prune_hours(hourly, self.max_hours)
            samples = pattern.samples[-_SAMPLES_PER_PATTERN:]
            self._patterns[key] = _Seen(pattern.count, pattern.first_seen, pattern.last_seen, hourly, samples)
        for alias in sorted(saved.aliases, key=lambda alias: alias.last_seen)[-self.max_patterns :]:
            pair = _PairKey(alias.tool, alias.unknown, alias.missing)
            self._pairs[pair] = _Seen(alias.count, alias.first_seen, alias.last_seen)
        for annotation in saved.annotations:
            self._annotations[(annotation.tool, annotation.param)] = annotation
        self._dropped = saved.audit_lines_dropped

    def _restore_normalizer(self) -> None:
        assert self.log_dir is not None
        path = self.log_dir / NORMALIZER_STATS_FILE
        if self.normalizer is None or getattr(self.normalizer, "stats_file", None) is not None or not path.exists():
            return
        try:
            self.normalizer.restore_stats(path)
        except (OSError, ValueError) as error:
            raise LogDirError(f"{path}: cannot be restored: {error}; it was left as it is") from None


# An alias whose two names both arrived with different values: the adapters refuse such a call
# before validation, and record it as this.
NORMALIZATION_CONFLICT = FieldFailure("(arguments)", "normalization_conflict", "two names for one parameter")


def adapter_recorder(
    recorder: OutcomeRecorder | None, log_dir: str | os.PathLike[str] | None, normalizer: Any = None
) -> OutcomeRecorder | None:
    """The recorder an adapter's ``recorder=`` / ``log_dir=`` options ask for (one or neither)."""
    if recorder is not None and log_dir is not None:
        raise ValueError("give log_dir or recorder, not both")
    if log_dir is not None:
        return OutcomeRecorder(log_dir, normalizer=normalizer)
    return recorder


def _feed(sink: OutcomeSink, outcomes: list[CallOutcome]) -> None:
    try:
        for outcome in outcomes:
            sink.record(outcome)
    except Exception:
        _log.exception("an outcome sink failed: %r", sink)


def _calls_fields(calls: _Calls, with_duration: bool = True) -> dict[str, Any]:
    fields: dict[str, Any] = {"ok": calls.ok, "refused": calls.refused, "error": calls.error}
    if with_duration:
        fields["duration_ms"] = calls.duration_ms
    return fields


# An audit line is written as `json.dumps(entry, ensure_ascii=False, separators=(",", ":"))` would
# write it, byte for byte, without building the dict and an encoder per line: strings through
# json's own string encoder, numbers as their repr (as json writes a finite number).
_json_text: Callable[[str], str] = json.encoder.encode_basestring
# Characters that JSON leaves raw but str.splitlines (and some JSON Lines readers) break lines at;
# they only occur inside the line's strings, where their escapes mean the same.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _audit_error(param: str, error_type: str, shape: str, sample: str | None) -> str:
    text = f'{{"param":{_json_text(param)},"type":{_json_text(error_type)},"shape":{_json_text(shape)}'
    return f'{text},"sample":{_json_text(sample)}}}' if sample is not None else f"{text}}}"


_LAST_SECOND = 253_402_300_800  # 10000-01-01: past it, a time is not written in four-digit years


@functools.lru_cache(maxsize=16)
def _second(whole: int) -> str:
    return timestamp(whole).removesuffix(".000Z")


def _timestamp(seconds: float) -> str:
    """`timestamp`, with the whole second's text kept: the microseconds rounded half to even, as
    ``datetime.fromtimestamp`` rounds them, and cut to milliseconds, as ``isoformat`` cuts them."""
    if not 0 <= seconds < _LAST_SECOND - 1:
        return timestamp(seconds)
    whole = int(seconds)
    microseconds = round((seconds - whole) * 1e6)  # the subtraction is exact, as modf's is
    if microseconds >= 1_000_000:
        whole, microseconds = whole + 1, microseconds - 1_000_000
    return _second(whole) + _MILLISECONDS[microseconds // 1000]


_MILLISECONDS = tuple(f".{millisecond:03d}Z" for millisecond in range(1000))


# --- Suggestions -----------------------------------------------------------------------------

_BOOL_ERRORS = frozenset({"bool_type", "bool_parsing"})
_INT_ERRORS = frozenset({"int_type", "int_parsing", "int_from_float"})
_FLOAT_ERRORS = frozenset({"float_type", "float_parsing"})
_STRUCTURE_ERRORS = frozenset(
    {
        "list_type",
        "tuple_type",
        "set_type",
        "frozen_set_type",
        "dict_type",
        "model_type",
        "model_attributes_type",
        "dataclass_type",
    }
)
# (shape, error types that refused it) -> what a type_coerce or json_accept_both rule converts to.
_COERCIONS: dict[tuple[str, frozenset[str]], tuple[str, str]] = {
    ("boolean text", _BOOL_ERRORS): ("type_coerce", "bool"),
    ("digit string", _INT_ERRORS): ("type_coerce", "int"),
    ("number string", _FLOAT_ERRORS): ("type_coerce", "float"),
    ("JSON text of an array", _STRUCTURE_ERRORS): ("json_accept_both", "json"),
    ("JSON text of an object", _STRUCTURE_ERRORS): ("json_accept_both", "json"),
}
# Shapes of a value the lenient form of an annotation would take.
_LENIENT_TAKES = frozenset(
    {"digit string", "number string", "boolean text", "JSON text of an array", "JSON text of an object"}
)


@dataclass(frozen=True)
class Suggestion:
    """A normalizer rule (``kind="rule"``, with ``rule`` in the rules-file format) or an annotation
    change for the tool's author (``kind="annotation"``), with the number of refusals behind it."""

    kind: Literal["rule", "annotation"]
    tool: str
    param: str
    evidence: int
    reason: str
    rule: dict[str, Any] | None = None
    annotation: str | None = None
    replacement: str | None = None

    def __str__(self) -> str:
        if self.rule is not None:
            change = f"rule {json.dumps(self.rule, ensure_ascii=False)}"
        else:
            change = f"{self.tool}.{self.param}: {self.annotation} -> {self.replacement}"
        return f"{change}  ({self.reason})"


def suggest(stats: OutcomeStats, *, min_count: int = 3) -> list[Suggestion]:
    """Rules and annotation changes that the recorded failures support ``min_count`` times or more.

    * an unknown name sent in calls that lacked a required one → ``param_alias`` (for each unknown
      name, the missing name it came with most often; ties go to the more similar name);
    * boolean text refused for a boolean → ``type_coerce`` to ``bool`` (digit strings for an
      integer → ``int``, number strings for a float → ``float``);
    * JSON text refused for an array or object → ``json_accept_both`` converting to ``json``;
    * a parameter the strictness audit flags, refused for a value its lenient form takes → that form.
    """
    if min_count < 1:
        raise ValueError("min_count must be at least 1")
    suggestions: list[Suggestion] = []
    used_ids: set[str] = set()

    def rule_id(*parts: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts))[:120] or "rule"
        candidate, number = base, 2
        while candidate in used_ids:
            candidate, number = f"{base}-{number}", number + 1
        used_ids.add(candidate)
        return candidate

    best: dict[tuple[str, str], AliasEvidence] = {}
    for alias in stats.aliases:
        if alias.count < min_count or alias.unknown == alias.missing:
            continue
        current = best.get((alias.tool, alias.unknown))
        if current is None or _alias_rank(alias) > _alias_rank(current):
            best[(alias.tool, alias.unknown)] = alias
    for alias in sorted(best.values(), key=lambda alias: (-alias.count, alias.tool, alias.unknown)):
        rule = {
            "id": rule_id(alias.tool, alias.unknown),
            "tools": [alias.tool],
            "type": "param_alias",
            "from": alias.unknown,
            "to": alias.missing,
        }
        reason = f"{alias.count} calls sent `{alias.unknown}` and lacked `{alias.missing}`"
        suggestions.append(Suggestion("rule", alias.tool, alias.unknown, alias.count, reason, rule=rule))

    coercions: dict[tuple[str, str, str, str], int] = {}
    shapes: dict[tuple[str, str, str, str], set[str]] = {}
    refused_lenient: dict[tuple[str, str], int] = {}
    for pattern in stats.patterns:
        if pattern.shape in _LENIENT_TAKES:
            where = (pattern.tool, pattern.param)
            refused_lenient[where] = refused_lenient.get(where, 0) + pattern.count
        if "." in pattern.param or "[" in pattern.param:
            continue  # rules of these types name top-level parameters
        for (shape, error_types), (rule_type, target) in _COERCIONS.items():
            if pattern.shape == shape and pattern.error_type in error_types:
                key = (pattern.tool, pattern.param, rule_type, target)
                coercions[key] = coercions.get(key, 0) + pattern.count
                shapes.setdefault(key, set()).add(shape)
    for key, count in sorted(coercions.items(), key=lambda item: (-item[1], item[0])):
        tool, param, rule_type, target = key
        if count < min_count:
            continue
        rule = {
            "id": rule_id(tool, param, target),
            "tools": [tool],
            "type": rule_type,
            "from": param,
            "coerce_to": target,
        }
        reason = f"{count} calls refused {' or '.join(sorted(shapes[key]))} in `{param}`"
        suggestions.append(Suggestion("rule", tool, param, count, reason, rule=rule))

    for annotation in stats.annotations:
        count = refused_lenient.get((annotation.tool, annotation.param), 0)
        if count >= min_count:
            reason = f"{count} calls refused for a value {annotation.suggestion} takes"
            suggestions.append(
                Suggestion(
                    "annotation",
                    annotation.tool,
                    annotation.param,
                    count,
                    reason,
                    annotation=annotation.annotation,
                    replacement=annotation.suggestion,
                )
            )
    return suggestions


def _alias_rank(alias: AliasEvidence) -> tuple[int, float]:
    return alias.count, difflib.SequenceMatcher(None, alias.unknown, alias.missing).ratio()


def rules_document(suggestions: Iterable[Suggestion]) -> dict[str, list[dict[str, Any]]]:
    """The rule suggestions as a rules file (``{"rules": [...]}``), which `Normalizer.from_file` loads."""
    return {"rules": [suggestion.rule for suggestion in suggestions if suggestion.rule is not None]}
