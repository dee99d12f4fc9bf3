"""A fleet's log directories read as one: what the dashboard and ``suggest`` show.

Every process writes its own log directory: no file is written by two processes. The gateway puts
each replica's under the server's ``logDir`` (``HOST-PID-ERA``), and a team may copy the directories
of many machines side by side. Given such a parent, the readers here add up every replica's
``outcomes.json`` (`pydantic_lenient.observe.counts.add_outcomes`, as one recorder would have
counted all the calls) and interleave their audit logs by time. Given one process's own directory,
they read it alone.

    from pydantic_lenient.observe.fleet import fleet_audit_log, fleet_outcomes
    stats = fleet_outcomes("logs/mail")          # every replica under logs/mail, added up
"""

from __future__ import annotations

import os
from pathlib import Path

from .auditlog import AuditEntry, read_audit_log
from .counts import DEFAULT_MAX_HOURS, DEFAULT_MAX_PATTERNS, add_outcomes
from .logdir import AUDIT_FILE, OUTCOMES_FILE, LogDirError
from .stats_file import OutcomeStats, load_outcomes

__all__ = ("MAX_REPLICAS", "fleet_audit_log", "fleet_outcomes", "replica_dirs")

MAX_REPLICAS = 1000
"""Replica directories read at most (the most recently written): a parent of millions is refused
nothing, but read in bounded time."""
_RECORDER_FILES = (OUTCOMES_FILE, AUDIT_FILE)


def replica_dirs(log_dir: str | os.PathLike[str]) -> list[Path]:
    """``log_dir`` itself when a recorder wrote there, else each subdirectory a recorder wrote,
    by name (the most recently written `MAX_REPLICAS`). Symbolic links are not followed.

    Raises `LogDirError` if ``log_dir`` is not a directory.
    """
    directory = Path(log_dir)
    if not directory.is_dir():
        raise LogDirError(f"{directory}: not a directory")
    if _written_by_a_recorder(directory):
        return [directory]
    try:
        children = [child for child in directory.iterdir() if not child.is_symlink() and child.is_dir()]
    except OSError as error:
        raise LogDirError(f"{directory}: cannot be listed: {error.strerror}") from None
    replicas = [child for child in children if _written_by_a_recorder(child)]
    if len(replicas) > MAX_REPLICAS:
        replicas = sorted(replicas, key=_last_written)[-MAX_REPLICAS:]
    return sorted(replicas) or [directory]


def fleet_outcomes(log_dir: str | os.PathLike[str]) -> OutcomeStats:
    """The outcomes of every replica under ``log_dir`` added up (`replica_dirs`).

    Raises `LogDirError`, naming the file, for one that cannot be read as saved outcomes.
    """
    parts = [load_outcomes(directory) for directory in replica_dirs(log_dir)]
    if len(parts) == 1:
        return parts[0]
    return add_outcomes(parts, max_patterns=DEFAULT_MAX_PATTERNS, max_hours=DEFAULT_MAX_HOURS)  # as one recorder


def fleet_audit_log(log_dir: str | os.PathLike[str], *, limit: int = 200) -> list[AuditEntry]:
    """The latest ``limit`` audit entries of every replica under ``log_dir``, oldest first."""
    entries: list[AuditEntry] = []
    for directory in replica_dirs(log_dir):
        entries.extend(read_audit_log(directory, limit=limit))
    entries.sort(key=lambda entry: entry.ts)  # one format everywhere (ISO 8601, UTC): text order is time order
    return entries[-limit:] if limit > 0 else []


def _written_by_a_recorder(directory: Path) -> bool:
    return any((directory / name).is_file() for name in _RECORDER_FILES)


def _last_written(directory: Path) -> float:
    return max((_modified(directory / name) for name in _RECORDER_FILES), default=0.0)


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # gone since it was listed
        return 0.0
