"""What a recorder has counted: calls by tool and by hour, error patterns, alias pairs and
annotations, all bounded, folded in one outcome at a time and read out as `OutcomeStats`.

    counts = OutcomeCounts(max_patterns=1000, max_hours=168)
    line = counts.fold(outcome, audit_line=True)   # counted; its audit log line
    counts.stats(saved_at=time.time())             # what outcomes.json holds
    add_outcomes([saved, counts.take()], max_patterns=1000, max_hours=168)  # two processes' counts

Failures are grouped into error patterns by tool, parameter, error type and shape, with counts,
first and last seen, and hourly buckets; unknown and missing names that arrive in the same call are
counted as pairs, and so is an unknown name with the declared name it is near (`FieldFailure.near`).
"""

from __future__ import annotations

import math
import time
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from .audit_text import LAST_SECOND, audit_error_text, audit_line_text
from .clients import OTHER_HOST, Client
from .failures import FieldFailure
from .outcomes import Status
from .shapes import clean_name
from .stats_file import (
    CLIENTS_PER_PATTERN,
    AliasEvidence,
    ClientCalls,
    ErrorPattern,
    FieldAnnotation,
    HourCalls,
    HourCount,
    OutcomeStats,
    ToolCalls,
)

__all__ = ("DEFAULT_MAX_HOURS", "DEFAULT_MAX_PATTERNS", "OutcomeCounts", "add_outcomes")

_SAMPLES_PER_PATTERN = 5
_PAIRS_PER_CALL = 10  # unknown and missing names paired from one call, at most, each
_PLANS_LIMIT = 1024  # distinct (tool, failures) plans kept; past it the cache starts again


DEFAULT_MAX_PATTERNS = 1000
"""Tools, patterns and pairs a recorder keeps by default (`OutcomeRecorder`'s ``max_patterns``)."""
DEFAULT_MAX_HOURS = 168
"""Hourly buckets a recorder keeps by default: a week."""


class _Outcome(Protocol):
    """A call to count: a `CallOutcome`, or the recorder's cheaper record of one."""

    @property
    def tool(self) -> str: ...
    @property
    def status(self) -> Status: ...
    @property
    def duration_ms(self) -> float: ...
    @property
    def failures(self) -> tuple[FieldFailure, ...]: ...
    @property
    def norms(self) -> tuple[str, ...]: ...
    @property
    def ts(self) -> float: ...
    @property
    def client(self) -> Client | None: ...


# Named tuples: hashed in C, as folding looks each one up for every refused field.
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


def _fold_plan(tool: str, failures: tuple[FieldFailure, ...]) -> _FoldPlan:
    keys = tuple(
        _PatternKey(tool, clean_name(failure.param), clean_name(failure.error_type), clean_name(failure.shape))
        for failure in failures
    )
    unknown = [key.param for key in keys if key.error_type == "unknown_parameter"][:_PAIRS_PER_CALL]
    missing = [key.param for key in keys if key.error_type == "missing"][:_PAIRS_PER_CALL]
    samples = tuple(failure.sample for failure in failures)
    errors = ",".join(
        audit_error_text(key.param, key.error_type, key.shape, sample)
        for key, sample in zip(keys, samples, strict=True)
    )
    pairs = [_PairKey(tool, unknown_name, missing_name) for unknown_name in unknown for missing_name in missing]
    # An unknown name near a declared one the call did not send is alias evidence too, the call
    # ok or not (``max_len`` for an optional ``maxLen``).
    nearby = [failure for failure in failures if failure.error_type == "unknown_parameter" and failure.near]
    pairs += [
        _PairKey(tool, clean_name(failure.param), clean_name(failure.near or ""))
        for failure in nearby[:_PAIRS_PER_CALL]
    ]
    return _FoldPlan(keys, samples, tuple(dict.fromkeys(pairs)), errors)


@dataclass(slots=True)
class _Seen:
    count: int
    first_seen: float
    last_seen: float
    hourly: dict[int, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)
    clients: dict[str, int] = field(default_factory=dict)

    def add_client(self, name: str, count: int = 1) -> None:
        """Count ``count`` refusals from the client ``name``: past `CLIENTS_PER_PATTERN` names, as
        ``_OTHER``, so that a client inventing names cannot grow a pattern."""
        clients = self.clients
        if name not in clients and len(clients) >= CLIENTS_PER_PATTERN:
            name = OTHER_HOST
        clients[name] = clients.get(name, 0) + count

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


@dataclass(slots=True)
class _ClientCalls:
    version: str = ""
    host: str = OTHER_HOST
    ok: int = 0
    refused: int = 0
    error: int = 0
    changed: int = 0  # calls the normalizer or repair changed


def _add_verdicts(counts: _Calls | _ClientCalls, saved: ToolCalls | ClientCalls | HourCalls) -> None:
    """Add a saved count of calls taken, refused and failed to the same counts kept here."""
    counts.ok += saved.ok
    counts.refused += saved.refused
    counts.error += saved.error


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


def _latest_seen(seen_by_key: dict[_K, _Seen], limit: int) -> dict[_K, _Seen]:
    """``seen_by_key`` if it is within ``limit``; else its ``limit`` entries seen last, in order."""
    if len(seen_by_key) <= limit:
        return seen_by_key
    kept = set(sorted(seen_by_key, key=lambda key: seen_by_key[key].last_seen)[-limit:])
    return {key: seen for key, seen in seen_by_key.items() if key in kept}


def add_outcomes(
    parts: Iterable[OutcomeStats],
    *,
    max_patterns: int,
    max_hours: int,
    saved_at: float | None = None,
    normalizer: dict[str, Any] | None = None,
) -> OutcomeStats:
    """The counts of ``parts`` added up, in order, within the bounds: what one recorder would
    have counted from all their calls (while they fit in the bounds), as ``outcomes.json`` holds it.
    How processes sharing a log directory put their counts together.

    >>> one = OutcomeStats(tools=[ToolCalls(tool="search", ok=2)], hourly=[HourCalls(start=3600, ok=2)])
    >>> both = add_outcomes([one, one], max_patterns=10, max_hours=24)
    >>> both.tools[0].ok, both.hourly[0].ok
    (4, 4)
    """
    counts = OutcomeCounts(max_patterns=max_patterns, max_hours=max_hours)
    for part in parts:
        counts.add(part)
    return counts.stats(saved_at=saved_at, normalizer=normalizer)


def _calls_fields(calls: _Calls, with_duration: bool = True) -> dict[str, Any]:
    fields: dict[str, Any] = {"ok": calls.ok, "refused": calls.refused, "error": calls.error}
    if with_duration:
        fields["duration_ms"] = calls.duration_ms
    return fields


class OutcomeCounts:
    """Calls by tool and by hour, error patterns, alias pairs and annotations: the least recently
    seen tools, patterns and pairs go past ``max_patterns``, the oldest hours past ``max_hours``.
    Not thread-safe: `pydantic_lenient.observe.recorder.OutcomeRecorder` holds its lock around it.

    >>> from pydantic_lenient.observe.outcomes import CallOutcome
    >>> from pydantic_lenient.observe.failures import FieldFailure
    >>> counts = OutcomeCounts(max_patterns=10, max_hours=24)
    >>> counts.fold(CallOutcome("search", "refused", 2.0, (FieldFailure("limit", "int_parsing", "string"),)))
    >>> [(pattern.tool, pattern.param, pattern.count) for pattern in counts.stats().patterns]
    [('search', 'limit', 1)]
    """

    def __init__(self, *, max_patterns: int, max_hours: int) -> None:
        self.max_patterns = max_patterns
        self.max_hours = max_hours
        self.audit_lines_dropped = 0  # by the recorder, when the disk refused them too long
        self._tools: dict[str, _Calls] = {}
        self._clients: dict[str, _ClientCalls] = {}
        self._hourly: dict[int, _Calls] = {}
        self._patterns: dict[_PatternKey, _Seen] = {}
        self._pairs: dict[_PairKey, _Seen] = {}
        self._plans: dict[tuple[str, tuple[FieldFailure, ...]], _FoldPlan] = {}
        self._annotations: dict[tuple[str, str], FieldAnnotation] = {}

    @typing.overload
    def fold(self, outcome: _Outcome, *, audit_line: Literal[True]) -> str: ...
    @typing.overload
    def fold(self, outcome: _Outcome, *, audit_line: Literal[False] = False) -> None: ...
    def fold(self, outcome: _Outcome, *, audit_line: bool = False) -> str | None:
        """Count ``outcome``; with ``audit_line``, return its audit log line, built from the same
        cleaned names as its patterns."""
        tool, ts, status, duration_ms = clean_name(outcome.tool), outcome.ts, outcome.status, outcome.duration_ms
        # A caller's NaN, negative or infinite duration, or a time no timestamp can spell, would
        # make every later save fail: such a call counts with no duration, at the time it is folded.
        if not 0 <= duration_ms < math.inf:
            duration_ms = 0.0
        if not 0 <= ts < LAST_SECOND - 1:
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
        client = outcome.client
        if client is not None:
            self._fold_client(client, status, bool(outcome.norms))
        errors = (
            self._fold_failures(tool, ts, hour, outcome.failures, audit_line, client.name if client else None)
            if outcome.failures
            else ""
        )
        if not audit_line:
            return None
        return audit_line_text(ts, tool, status, duration_ms, outcome.norms, errors, client)

    def _fold_client(self, client: Client, status: Status, changed: bool) -> None:
        by_client = _touch(self._clients, client.name, _ClientCalls, self.max_patterns)
        by_client.version = client.version or by_client.version
        by_client.host = client.host
        if status == "ok":
            by_client.ok += 1
        elif status == "refused":
            by_client.refused += 1
        else:
            by_client.error += 1
        by_client.changed += changed

    def annotate(self, annotation: FieldAnnotation) -> None:
        """Keep what the strictness audit would change in a tool's parameter, for suggestions."""
        self._annotations[(annotation.tool, annotation.param)] = annotation

    def add(self, saved: OutcomeStats) -> None:
        """Add what a recorder saved to these counts, as if its calls had been folded in here after
        those already counted, within this one's bounds: past them, the least recently touched
        tools, the oldest hours and the least recently seen patterns and pairs go."""
        for tool_calls in saved.tools:  # added up in full, then bounded: a tool kept keeps all its calls
            calls = _touch(self._tools, tool_calls.tool, _Calls, len(self._tools) + 1)
            _add_verdicts(calls, tool_calls)
            calls.duration_ms += tool_calls.duration_ms
        while len(self._tools) > self.max_patterns:
            del self._tools[next(iter(self._tools))]
        for client_calls in saved.clients:
            by_client = _touch(self._clients, client_calls.client, _ClientCalls, len(self._clients) + 1)
            by_client.version = client_calls.version or by_client.version
            by_client.host = client_calls.host
            _add_verdicts(by_client, client_calls)
            by_client.changed += client_calls.changed
        while len(self._clients) > self.max_patterns:
            del self._clients[next(iter(self._clients))]
        for hour_calls in saved.hourly:
            _add_verdicts(self._hourly.setdefault(int(hour_calls.start), _Calls()), hour_calls)
        _prune_hours(self._hourly, self.max_hours)
        for pattern in saved.patterns:
            key = _PatternKey(pattern.tool, pattern.param, pattern.error_type, pattern.shape)
            seen = self._added(self._patterns, key, pattern.count, pattern.first_seen, pattern.last_seen)
            for bucket in pattern.hourly:
                hour = int(bucket.start)
                seen.hourly[hour] = seen.hourly.get(hour, 0) + bucket.count
            _prune_hours(seen.hourly, self.max_hours)
            seen.samples = [*seen.samples, *pattern.samples][-_SAMPLES_PER_PATTERN:]
            for client_name, count in pattern.clients.items():
                seen.add_client(client_name, count)
        for alias in saved.aliases:
            pair = _PairKey(alias.tool, alias.unknown, alias.missing)
            pair_seen = self._added(self._pairs, pair, alias.count, alias.first_seen, alias.last_seen)
            for client_name, count in alias.clients.items():
                pair_seen.add_client(client_name, count)
        self._patterns = _latest_seen(self._patterns, self.max_patterns)
        self._pairs = _latest_seen(self._pairs, self.max_patterns)
        for annotation in saved.annotations:
            self._annotations[(annotation.tool, annotation.param)] = annotation
        self.audit_lines_dropped += saved.audit_lines_dropped

    @staticmethod
    def _added(seen_by_key: dict[_K, _Seen], key: _K, count: int, first_seen: float, last_seen: float) -> _Seen:
        """``seen_by_key[key]`` with a saved count added, moved to the end as `fold` would move it."""
        seen = seen_by_key.pop(key, None)
        if seen is None:
            seen = _Seen(0, first_seen, last_seen)
        seen.count += count
        seen.first_seen = min(seen.first_seen, first_seen)
        seen.last_seen = max(seen.last_seen, last_seen)
        seen_by_key[key] = seen
        return seen

    def take(self) -> OutcomeStats:
        """Everything counted, as `stats` gives it, and start counting again from nothing (the
        recorder saves what it took). The annotations stay: they describe tools, not calls."""
        stats = self.stats()
        self._tools.clear()
        self._clients.clear()
        self._hourly.clear()
        self._patterns.clear()
        self._pairs.clear()
        self.audit_lines_dropped = 0
        return stats

    def stats(self, *, saved_at: float | None = None, normalizer: dict[str, Any] | None = None) -> OutcomeStats:
        """Everything counted, as ``outcomes.json`` holds it, with the normalizer's stats if given."""
        return OutcomeStats(
            saved_at=saved_at,
            tools=[ToolCalls(tool=tool, **_calls_fields(calls)) for tool, calls in self._tools.items()],
            clients=[
                ClientCalls(
                    client=name,
                    version=calls.version,
                    host=calls.host,
                    ok=calls.ok,
                    refused=calls.refused,
                    error=calls.error,
                    changed=calls.changed,
                )
                for name, calls in self._clients.items()
            ],
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
                    clients=dict(seen.clients),
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
                    clients=dict(seen.clients),
                )
                for key, seen in self._pairs.items()
            ],
            annotations=list(self._annotations.values()),
            normalizer=normalizer,
            audit_lines_dropped=self.audit_lines_dropped,
        )

    def _fold_failures(
        self,
        tool: str,
        ts: float,
        hour: int,
        failures: tuple[FieldFailure, ...],
        audit_line: bool,
        client_name: str | None,
    ) -> str:
        """Count a call's refused fields into the patterns, by client when it named itself (and its
        unknown and missing names into the pairs); their audit log text, with ``audit_line``."""
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
            if client_name is not None:
                seen.add_client(client_name)
            if sample is not None:
                seen.samples = [*seen.samples[1 - _SAMPLES_PER_PATTERN :], sample]
        for pair_key in plan.pairs:
            pair_seen = _touch(self._pairs, pair_key, first_seen, self.max_patterns)
            pair_seen.add(ts, hour, 1)
            if client_name is not None:
                pair_seen.add_client(client_name)
        return plan.errors if audit_line else ""
