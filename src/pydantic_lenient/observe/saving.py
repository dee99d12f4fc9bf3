"""Saving a recorder's counts to ``outcomes.json``, a file recorders in several processes may share.

    counts = OutcomeCounts(max_patterns=1000, max_hours=168)  # what the recorder folds calls into
    outcomes_file = SharedOutcomesFile(Path("logs/"), counts, threading.RLock())
    outcomes_file.save(recorder.flush, normalizer)             # what `OutcomeRecorder.save` does
    outcomes_file.total(normalizer)                            # what `OutcomeRecorder.snapshot` returns

The counts are kept in three parts: what ``outcomes.json`` held when last read or written, the
calls a save took but the disk refused, and the calls folded since. A save adds the last two to
what the file holds *now*, under the file's lock, so that no other process's count is lost and
none is counted twice; a save the disk refuses keeps what it took for the next one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_lenient._files import locked, write_json_atomically

from .counts import OutcomeCounts, add_outcomes
from .logdir import NORMALIZER_STATS_FILE, OUTCOMES_FILE, LogDirError
from .stats_file import OutcomeStats, load_outcomes

__all__ = ("SharedOutcomesFile",)


class SharedOutcomesFile:
    """A log directory's ``outcomes.json`` as one recorder reads, adds to and saves it (with no
    ``log_dir``, only the adding up).

    ``counts`` are the calls the recorder folds under ``lock``; a save takes them (`OutcomeCounts.take`)
    under that lock. A ``normalizer`` passed to `save` is saved beside ``outcomes.json`` as
    ``normalizer_stats.json``, and its `stats` go into ``outcomes.json``.
    A corrupt ``outcomes.json`` raises `LogDirError` here, before anything is written.

    >>> counts = OutcomeCounts(max_patterns=10, max_hours=24)
    >>> SharedOutcomesFile(None, counts, threading.RLock()).total().tools
    []
    """

    def __init__(self, log_dir: Path | None, counts: OutcomeCounts, lock: threading.RLock) -> None:
        self.log_dir = log_dir
        self._counts = counts  # the calls folded since the last save
        self._lock = lock
        self._save_lock = threading.Lock()  # one save at a time: each adds what the last one left
        self._saved = OutcomeStats()  # what outcomes.json held when last read or written
        self._unsaved: OutcomeStats | None = None  # the calls a save took but the disk refused
        if log_dir is not None and log_dir.is_dir():
            self._saved = self._added(load_outcomes(log_dir))

    def total(self, normalizer: Any = None) -> OutcomeStats:
        """The three parts added up, with the ``normalizer``'s stats: everything recorded."""
        with self._lock:
            normalizer_stats = normalizer.stats() if normalizer is not None else None
            parts = [self._saved, self._unsaved, self._counts.stats()]
            return self._added(*parts, saved_at=time.time(), normalizer=normalizer_stats)

    def save(self, flush: Callable[[], None], normalizer: Any = None) -> None:
        """Run ``flush`` (so that the counts hold every call recorded until now), then add what was
        counted since the last save to what ``outcomes.json`` holds now and write it atomically.

        Raises `OSError` when the disk refuses, `ValueError` (`LogDirError`) when the file is not a
        saved outcomes file: nothing is written over it, and what was taken waits for the next save.
        """
        if self.log_dir is None:
            raise ValueError("the recorder has no log_dir to save to")
        with self._save_lock:
            flush()
            with self._lock:
                unsaved = self._added(self._unsaved, self._counts.take())
                self._unsaved = unsaved
            path = self.log_dir / OUTCOMES_FILE
            normalizer_stats = None
            if normalizer is not None:
                normalizer.save(self.log_dir / NORMALIZER_STATS_FILE)
                normalizer_stats = normalizer.stats()
            with locked(path):
                saved = self._added(
                    load_outcomes(self.log_dir), unsaved, saved_at=time.time(), normalizer=normalizer_stats
                )
                write_json_atomically(path, saved.model_dump(mode="json"))
            with self._lock:
                self._saved, self._unsaved = saved, None

    def restore_normalizer(self, normalizer: Any) -> None:
        """Restore ``normalizer``'s stats from the log directory's ``normalizer_stats.json``, unless
        it has a ``stats_file`` of its own; a file that cannot be restored raises `LogDirError`."""
        if self.log_dir is None or normalizer is None or getattr(normalizer, "stats_file", None) is not None:
            return
        path = self.log_dir / NORMALIZER_STATS_FILE
        if not path.exists():
            return
        try:
            normalizer.restore_stats(path)
        except (OSError, ValueError) as error:
            raise LogDirError(f"{path}: cannot be restored: {error}; it was left as it is") from None

    def _added(
        self,
        *parts: OutcomeStats | None,
        saved_at: float | None = None,
        normalizer: dict[str, Any] | None = None,
    ) -> OutcomeStats:
        """``parts`` added up within the counts' bounds."""
        return add_outcomes(
            [part for part in parts if part is not None],
            max_patterns=self._counts.max_patterns,
            max_hours=self._counts.max_hours,
            saved_at=saved_at,
            normalizer=normalizer,
        )
