"""The normalizer's stats: counting calls, the stats file's format, and reading and writing it.

`CallCounter` counts calls exactly under threads without a lock per call: a call appends one
`CallEvent` to a deque (``deque.append`` is atomic), and the events are folded into the counts in
bulk, under a lock, every `FOLD_EVERY` calls and before every read, each exactly once.

`load_stats` reads a stats file and validates its whole shape (`StatsSnapshot`), failing with one
`StatsFileError` that names the file; `write_json_atomically` writes any JSON document so that a
reader never sees half of it. Both are meant for any code that keeps normalizer stats.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict  # pydantic needs this TypedDict before 3.12

from ._json import json_value_problem
from .appliers import Change

__all__ = (
    "FOLD_EVERY",
    "MAX_STATS_FILE_BYTES",
    "OTHER_TOOLS",
    "AppliedEntry",
    "CallCounter",
    "CallEvent",
    "RecentEntry",
    "RuleHits",
    "StatsFileError",
    "StatsSnapshot",
    "ToolCounts",
    "load_stats",
    "timestamp",
    "write_json_atomically",
)

OTHER_TOOLS = "<other tools>"
"""The one ``by_tool`` name under which calls to tools that no rule names and that were never
registered (`Normalizer.register_tools`) are counted, so invented tool names cannot grow the stats."""

FOLD_EVERY = 256
"""Calls between two folds of the event queue into the counts."""

MAX_STATS_FILE_BYTES = 64 * 1024 * 1024
"""A stats file larger than this is refused before it is read (a real one is a few kilobytes)."""

_Count = Annotated[int, Field(ge=0)]
_STRICT = ConfigDict(strict=True, extra="forbid")


@with_config(_STRICT)
class ToolCounts(TypedDict):
    processed: _Count
    normalized: _Count


@with_config(_STRICT)
class RuleHits(TypedDict):
    rule_id: str
    type: str
    hits: _Count
    tools: list[str]


# "from" is a Python keyword, so this one is spelled the functional way.
AppliedEntry = TypedDict(
    "AppliedEntry",
    {
        "rule_id": str,
        "type": str,
        "param": str,
        "from": Any,
        "to": Any,
        "note": NotRequired[str],
        "dropped": NotRequired[Any],
    },
)
AppliedEntry.__pydantic_config__ = _STRICT  # type: ignore[attr-defined]


@with_config(_STRICT)
class RecentEntry(TypedDict):
    ts: str | None
    tool: str
    applied: list[AppliedEntry]


@with_config(_STRICT)
class StatsSnapshot(TypedDict):
    """What `Normalizer.stats` returns and `Normalizer.save` writes (the README documents it)."""

    total_processed: _Count
    total_normalized: _Count
    last_updated: str | None
    by_tool: dict[str, ToolCounts]
    by_rule: dict[str, RuleHits]
    recent_normalizations: list[RecentEntry]


@functools.cache
def _snapshot_adapter() -> TypeAdapter[StatsSnapshot]:
    # Built on first load, not at import: a TypeAdapter costs `import pydantic_lenient` tens of milliseconds.
    return TypeAdapter(StatsSnapshot)


class StatsFileError(ValueError):
    """A stats file that cannot be read, or is not a normalizer stats file; the message names it.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from pydantic_lenient import Normalizer
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     stats = Path(folder, "stats.json")
    ...     _ = stats.write_text('{"total_processed": "many"}')
    ...     Normalizer(stats_file=stats)
    Traceback (most recent call last):
      ...
    pydantic_lenient...StatsFileError: ...stats.json...
    """


def load_stats(path: str | os.PathLike[str]) -> StatsSnapshot:
    """The stats saved in ``path``, validated in full; `StatsFileError` naming the file otherwise."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_STATS_FILE_BYTES + 1)
    except OSError as error:
        raise StatsFileError(f"cannot read stats file {path}: {error.strerror or error}") from None
    if len(data) > MAX_STATS_FILE_BYTES:
        raise StatsFileError(f"{path} is not a normalizer stats file: larger than {MAX_STATS_FILE_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise StatsFileError(f"{path} is not UTF-8 text") from None
    except RecursionError:
        raise StatsFileError(f"{path} is nested too deeply") from None
    except ValueError as error:
        raise StatsFileError(f"{path} is not valid JSON: {error}") from None
    try:
        stats = _snapshot_adapter().validate_python(document)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
        raise StatsFileError(f"{path} is not a normalizer stats file: {where}: {first['msg']}{more}") from None
    if (problem := _inconsistency(stats)) is not None:
        raise StatsFileError(f"{path} is not a normalizer stats file: {problem}")
    return stats


def _inconsistency(stats: StatsSnapshot) -> str | None:
    if stats["total_normalized"] > stats["total_processed"]:
        return "total_normalized is larger than total_processed"
    for tool, counts in stats["by_tool"].items():
        if counts["normalized"] > counts["processed"]:
            return f"by_tool.{tool}: normalized is larger than processed"
    for key, hits in stats["by_rule"].items():
        if hits["rule_id"] != key:
            return f"by_rule.{key}: rule_id is {hits['rule_id']!r}"
    return None


def write_json_atomically(path: str | os.PathLike[str], document: Any) -> Path:
    """Write ``document`` as JSON to ``path``: a temporary file beside it, flushed, then renamed
    over it, so a reader sees the old file or the new one, never half of one. ASCII-escaped, so
    even a lone surrogate in a value is written as valid JSON text."""
    target = Path(path)
    text = json.dumps(document, ensure_ascii=True, allow_nan=False, indent=2)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def timestamp(seconds: float) -> str:
    """ISO 8601 UTC with milliseconds and a ``Z``, as the stats write times."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class CallEvent(NamedTuple):
    """A call that changed something, as it waits to be counted: when, the tool it is counted
    under, and the changes."""

    time: float
    tool: str
    changes: Sequence[Change]


class CallCounter:
    """The counts behind `Normalizer.stats`, exact under concurrent calls.

    `add` is all a call does: one append to `events` (a `CallEvent`, or for a call that changed
    nothing just the tool's name, which allocates nothing), and a fold every `FOLD_EVERY` calls.
    `snapshot` folds what is pending and returns the documented dict; `restore` replaces the
    counts with saved ones.
    """

    def __init__(self, recent_limit: int) -> None:
        self._lock = threading.Lock()
        self.events: deque[CallEvent | str] = deque()
        self.latest_call: float | None = None  # time.time() of the latest call
        # The newest normalized calls: saved entries, then events made into entries when read.
        self._recent: deque[RecentEntry | CallEvent] = deque(maxlen=recent_limit)
        self._reset(None)

    def _reset(self, saved: StatsSnapshot | None) -> None:
        self._processed = saved["total_processed"] if saved else 0
        self._normalized = saved["total_normalized"] if saved else 0
        self._last_updated: str | None = saved["last_updated"] if saved else None
        self._by_tool: dict[str, ToolCounts] = saved["by_tool"] if saved else {}
        self._by_rule: dict[str, RuleHits] = saved["by_rule"] if saved else {}
        self._recent.clear()
        self._recent.extend(saved["recent_normalizations"] if saved else ())
        self.latest_call = None

    def add(self, tool: str, changes: Sequence[Change]) -> None:
        """Count one call to ``tool`` (the name it is counted under) that made ``changes``."""
        self.latest_call = now = time.time()
        events = self.events
        events.append(CallEvent(now, tool, changes) if changes else tool)
        if len(events) >= FOLD_EVERY:
            self.fold()

    def fold(self) -> None:
        with self._lock:
            # Only fold pops, under the lock: the events counted now stay put while we take them.
            pending = self.events
            batch = list(itertools.starmap(pending.popleft, itertools.repeat((), len(pending))))
            if not batch:
                return
            by_tool, by_rule = self._by_tool, self._by_rule
            normalized: list[CallEvent] = []
            for event in batch:
                tool = event if isinstance(event, str) else event.tool
                counts = by_tool.get(tool)
                if counts is None:
                    counts = by_tool[tool] = {"processed": 0, "normalized": 0}
                counts["processed"] += 1
                if isinstance(event, str):
                    continue
                counts["normalized"] += 1
                normalized.append(event)
                counted = None
                for change in event.changes:
                    if change.rule_id == counted:
                        continue  # a rule's changes are adjacent, and a rule counts once per call
                    counted = change.rule_id
                    hits = by_rule.get(counted)
                    if hits is None:
                        hits = by_rule[counted] = {"rule_id": counted, "type": change.type, "hits": 0, "tools": []}
                    hits["hits"] += 1
                    if tool not in hits["tools"]:
                        hits["tools"].append(tool)
            self._processed += len(batch)
            self._normalized += len(normalized)
            if self.latest_call is not None:
                self._last_updated = timestamp(self.latest_call)
            self._recent.extend(normalized[-(self._recent.maxlen or 0) :])

    def snapshot(self) -> StatsSnapshot:
        """The counts now, as fresh dicts the caller may keep and change."""
        self.fold()
        with self._lock:
            return {
                "total_processed": self._processed,
                "total_normalized": self._normalized,
                "last_updated": self._last_updated,
                "by_tool": {tool: {**counts} for tool, counts in self._by_tool.items()},
                "by_rule": {rule_id: {**hits, "tools": [*hits["tools"]]} for rule_id, hits in self._by_rule.items()},
                "recent_normalizations": [_recent_entry(entry) for entry in self._recent],
            }

    def restore(self, saved: StatsSnapshot) -> None:
        """Replace the counts with ``saved`` (validated, and not used by the caller afterwards)."""
        self.fold()
        with self._lock:
            self._reset(saved)


def _recent_entry(call: RecentEntry | CallEvent) -> RecentEntry:
    """A fresh ``recent_normalizations`` entry, for a call counted now or one restored from a file."""
    if isinstance(call, CallEvent):
        applied: list[Any] = [_writable(change.as_dict()) for change in call.changes]
        return {"ts": timestamp(call.time), "tool": call.tool, "applied": applied}
    return {**call, "applied": [{**entry} for entry in call["applied"]]}


def _writable(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` without a ``dropped`` value JSON cannot hold (NaN, bytes, a date from a Python
    caller): its ``note`` still shows it, and the stats file stays writable."""
    if "dropped" in entry and json_value_problem(entry["dropped"]) is not None:
        del entry["dropped"]
    return entry
