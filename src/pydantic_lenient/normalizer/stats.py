"""The normalizer's stats: counting calls, the stats file's format, and reading and writing it.

`CallCounter` counts calls exactly under threads without a lock per call: a call appends one
`CallEvent` to a deque (``deque.append`` is atomic), and the events are folded into the counts in
bulk, under a lock, every `FOLD_EVERY` calls and before every read, each exactly once.

Several processes may count into one stats file (replicas sharing a log directory): a save takes
the file's lock (`locked`), reads what the file holds now, adds only the calls this process counted
since its last save (`merge_stats`), and writes the sum, so no process's counts are lost.

`load_stats` reads a stats file and validates its whole shape (`StatsSnapshot`), failing with one
`StatsFileError` that names the file. Reading, locking and writing the file are
`pydantic_lenient._files`'s, the one writer of every file the library saves.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict  # pydantic needs this TypedDict before 3.12

from pydantic_lenient._files import locked, read_regular_file, write_json_atomically
from pydantic_lenient.types.json_kinds import json_type

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
    "described",
    "load_stats",
    "merge_stats",
    "timestamp",
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
        data = read_regular_file(path, MAX_STATS_FILE_BYTES)
    except OSError as error:
        raise StatsFileError(f"cannot read stats file {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise StatsFileError(f"cannot read stats file {path}: {error}") from None
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


def merge_stats(first: StatsSnapshot, second: StatsSnapshot, recent_limit: int) -> StatsSnapshot:
    """The counts of ``first`` and ``second`` added up, as fresh dicts: what one counter would
    hold had it counted both streams of calls, ``second`` after ``first`` (the ``recent_limit``
    newest normalizations kept).

    >>> calls = {"by_tool": {"t": {"processed": 2, "normalized": 1}}, "recent_normalizations": []}
    >>> one = {"total_processed": 2, "total_normalized": 1, "last_updated": "2026-01-01T00:00:00.000Z",
    ...        "by_rule": {"r": {"rule_id": "r", "type": "param_alias", "hits": 1, "tools": ["t"]}}, **calls}
    >>> merged = merge_stats(one, one, recent_limit=50)
    >>> merged["total_processed"], merged["by_tool"], merged["by_rule"]["r"]["hits"]
    (4, {'t': {'processed': 4, 'normalized': 2}}, 2)
    """
    by_tool: dict[str, ToolCounts] = {tool: {**counts} for tool, counts in first["by_tool"].items()}
    for tool, counts in second["by_tool"].items():
        total = by_tool.setdefault(tool, {"processed": 0, "normalized": 0})
        total["processed"] += counts["processed"]
        total["normalized"] += counts["normalized"]
    by_rule: dict[str, RuleHits] = {
        rule_id: {**hits, "tools": [*hits["tools"]]} for rule_id, hits in first["by_rule"].items()
    }
    for rule_id, hits in second["by_rule"].items():
        kept = by_rule.get(rule_id)
        if kept is None:
            by_rule[rule_id] = {**hits, "tools": [*hits["tools"]]}
            continue
        kept["type"] = hits["type"]  # the newer process's rules say what the rule is now
        kept["hits"] += hits["hits"]
        kept["tools"] += [tool for tool in hits["tools"] if tool not in kept["tools"]]
    times = [stamp for stamp in (first["last_updated"], second["last_updated"]) if stamp is not None]
    recent = [*first["recent_normalizations"], *second["recent_normalizations"]][-recent_limit:] if recent_limit else []
    return {
        "total_processed": first["total_processed"] + second["total_processed"],
        "total_normalized": first["total_normalized"] + second["total_normalized"],
        "last_updated": max(times, default=None),
        "by_tool": by_tool,
        "by_rule": by_rule,
        "recent_normalizations": [_recent_entry(entry) for entry in recent],
    }


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
    """The counts behind `Normalizer.stats`, exact under concurrent calls and across processes.

    `add` is all a call does: one append to `events` (a `CallEvent`, or for a call that changed
    nothing just the tool's name, which allocates nothing), and a fold every `FOLD_EVERY` calls.
    The counts are what the stats file held when last read (restored or saved), plus the calls
    counted since: `snapshot` folds what is pending and returns their sum as the documented dict;
    `restore` starts again from saved counts; `save` adds the calls since the last save to what
    the file holds now, under its lock, so processes sharing the file lose no count.
    """

    def __init__(self, recent_limit: int) -> None:
        self._lock = threading.Lock()
        self._save_lock = threading.Lock()  # one save at a time: each adds what the last one left
        self.events: deque[CallEvent | str] = deque()
        self.latest_call: float | None = None  # time.time() of the latest call
        self.recent_limit = recent_limit
        self._saved: StatsSnapshot = _empty_stats()  # what the file held when last read or written
        self._unsaved: StatsSnapshot | None = None  # counted, taken by a save the disk refused
        self.home: Path | None = None  # the file `_saved` came from
        # The calls counted since the last save: the newest normalized ones are kept as events.
        self._recent: deque[CallEvent] = deque(maxlen=recent_limit)
        self._reset()

    def _reset(self) -> None:
        self._processed = 0
        self._normalized = 0
        self._last_updated: str | None = None
        self._by_tool: dict[str, ToolCounts] = {}
        self._by_rule: dict[str, RuleHits] = {}
        self._recent.clear()

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

    def _counted(self) -> StatsSnapshot:
        """The calls folded since the last save, as fresh dicts (under the lock)."""
        return {
            "total_processed": self._processed,
            "total_normalized": self._normalized,
            "last_updated": self._last_updated,
            "by_tool": {tool: {**counts} for tool, counts in self._by_tool.items()},
            "by_rule": {rule_id: {**hits, "tools": [*hits["tools"]]} for rule_id, hits in self._by_rule.items()},
            "recent_normalizations": [_recent_entry(entry) for entry in self._recent],
        }

    def snapshot(self) -> StatsSnapshot:
        """The counts now, as fresh dicts the caller may keep and change."""
        self.fold()
        with self._lock:
            total = self._saved
            if self._unsaved is not None:
                total = merge_stats(total, self._unsaved, self.recent_limit)
            return merge_stats(total, self._counted(), self.recent_limit)

    def restore(self, saved: StatsSnapshot, home: Path | None = None) -> None:
        """Replace the counts with ``saved`` (validated, and not used by the caller afterwards),
        read from ``home``, the file later saves add to."""
        self.fold()
        with self._lock:
            self._saved, self._unsaved, self.home = saved, None, home
            self._reset()
            self.latest_call = None

    def save(self, path: Path) -> None:
        """Add the calls counted since the last save to the stats file ``path``, under its lock.
        ``path`` becomes this counter's home.

        Raises ``OSError`` if the disk refuses, and `StatsFileError` if the file holds something
        other than stats (nothing is written over it); either way no count is lost, and the next
        save adds them.
        """
        with self._save_lock:
            self.fold()
            with self._lock:
                counted = self._counted()
                unsaved = counted if self._unsaved is None else merge_stats(self._unsaved, counted, self.recent_limit)
                self._unsaved = unsaved
                self._reset()
            with locked(path):
                current = load_stats(path) if os.path.lexists(path) else _empty_stats()
                merged = merge_stats(current, unsaved, self.recent_limit)
                write_json_atomically(path, merged)
            with self._lock:
                self._saved, self._unsaved, self.home = merged, None, path


def _empty_stats() -> StatsSnapshot:
    return {
        "total_processed": 0,
        "total_normalized": 0,
        "last_updated": None,
        "by_tool": {},
        "by_rule": {},
        "recent_normalizations": [],
    }


def _recent_entry(call: RecentEntry | CallEvent) -> RecentEntry:
    """A fresh ``recent_normalizations`` entry, for a call counted now or one restored from a file."""
    if isinstance(call, CallEvent):
        applied: list[Any] = [_without_values(change.as_dict()) for change in call.changes]
        return {"ts": timestamp(call.time), "tool": call.tool, "applied": applied}
    return {**call, "applied": [{**entry} for entry in call["applied"]]}


def _without_values(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` holding no value the client sent (the stats are saved, and shown on the
    dashboard): a ``dropped`` value and a coercion's ``from`` and ``to`` become their shape and
    size, and a conflict's ``note`` no longer quotes the value. `Normalizer.apply` still returns
    the values themselves to its caller."""
    if "dropped" in entry:
        entry["dropped"] = described(entry["dropped"])
        if entry.get("note", "").startswith("conflict: "):
            entry["note"] = f"conflict: kept {entry['to']}, dropped {entry['from']}"
    if entry["type"] == "type_coerce":
        entry["from"], entry["to"] = described(entry["from"]), described(entry["to"])
    return entry


def described(value: Any) -> str:
    """A value's shape and size, never the value: what the stats keep of a value a client sent.

    >>> described("sk-secret"), described([1, 2]), described({"a": 1}), described(True), described(7)
    ('string of 9 characters', 'array of 2 items', 'object of 1 members', 'boolean', 'integer')
    """
    kind = json_type(value, whole_floats_are_integers=False)  # 3.0 was sent as a number
    if kind == "string":
        return f"string of {len(value)} characters"
    if kind == "array":
        return f"array of {len(value)} items"
    if kind == "object":
        return f"object of {len(value)} members"
    return f"{type(value).__name__} value" if kind == "unknown" else kind
