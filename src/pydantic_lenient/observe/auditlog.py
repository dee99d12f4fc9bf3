"""The audit log: one JSON line per tool call in ``LOG_DIR/audit.jsonl``, rotated by size.

A line is ``{"ts", "tool", "status", "duration_ms", "norms", "errors", "client"}``: ``norms`` lists
the ids of the normalizer rules that changed the call, ``errors`` holds one ``{"param", "type",
"shape"}`` per refused field (plus a truncated ``sample`` of the value only when the recorder keeps
samples), and ``client`` the ``{"name", "version"}`` the client sent as its ``clientInfo`` (absent
when it sent none, and in lines written before it was recorded).

When the file would grow past ``max_bytes`` it becomes ``audit.jsonl.1`` (the older ones move up
to ``audit.jsonl.<backups>``; the oldest is dropped). The recorder writes in batches; a batch that
fails (a full or read-only disk) raises ``OSError`` here and is kept by the recorder to retry.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .logdir import AUDIT_FILE, LogDirError, first_problem

if sys.platform != "win32":
    import fcntl

__all__ = ("AUDIT_FILE", "AuditClient", "AuditEntry", "AuditError", "AuditLog", "LogDirError", "read_audit_log")

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_BACKUPS = 5
# How far back a reader looks for the latest lines: enough for hundreds of entries.
_TAIL_BYTES = 1024 * 1024


class AuditError(BaseModel):
    """One refused field of a call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    param: str
    type: str
    shape: str
    sample: str | None = None


class AuditClient(BaseModel):
    """The client that sent a call, as its ``clientInfo`` named it (cut and cleaned)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str = ""


class AuditEntry(BaseModel):
    """One line of the audit log."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: str
    tool: str
    status: Literal["ok", "refused", "error"]
    duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    norms: list[str]
    errors: list[AuditError]
    client: AuditClient | None = None


class AuditLog:
    """Appends lines to ``directory/audit.jsonl``, rotating it by size."""

    def __init__(
        self, directory: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS
    ) -> None:
        if max_bytes < 1 or backups < 1:
            raise ValueError("max_bytes and backups must be at least 1")
        self.path = Path(directory) / AUDIT_FILE
        self.max_bytes = max_bytes
        self.backups = backups
        self._checked_tail = False

    def write(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (JSON text, no newline), all or none: if the disk refuses part of them
        (full, read-only), the file is cut back to where it was and ``OSError`` is raised, so a
        retry never duplicates a line. Several processes may append to one file (under a lock)."""
        if not lines:
            return
        data = "".join(f"{line}\n" for line in lines).encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self._open_locked()
        try:
            size = os.fstat(handle).st_size
            # A line cut short by a crash stays where it is, ending its file; new lines start a new one.
            if not self._checked_tail and size and _last_byte(handle, size) != b"\n":
                size = self.max_bytes
            self._checked_tail = True
            if size and size + len(data) > self.max_bytes:
                self._rotate()
                os.close(handle)
                handle = self._open_locked()
                size = os.fstat(handle).st_size
            _append_all_or_nothing(handle, data, size)
        finally:
            os.close(handle)  # and with it the lock

    def _open_locked(self) -> int:
        """The file, opened to append through no symlink, locked against other writers, and still
        the one at ``path`` (another process may have rotated it while this one waited)."""
        while True:
            handle = os.open(self.path, _APPEND_FLAGS, 0o600)
            try:
                status = os.fstat(handle)
                if not stat.S_ISREG(status.st_mode):
                    raise OSError(errno.EINVAL, "not a regular file", str(self.path))
                _lock(handle)
                if os.stat(self.path, follow_symlinks=False).st_ino == status.st_ino:
                    return handle
            except FileNotFoundError:
                pass  # rotated away meanwhile: open the new one
            except BaseException:
                os.close(handle)
                raise
            os.close(handle)

    def _rotate(self) -> None:
        for number in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{AUDIT_FILE}.{number}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{AUDIT_FILE}.{number + 1}"))
        os.replace(self.path, self.path.with_name(f"{AUDIT_FILE}.1"))


_APPEND_FLAGS = (
    os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
) | getattr(os, "O_CLOEXEC", 0)


def _lock(handle: int) -> None:
    """Hold an exclusive lock on the open file until it is closed (none where there is no flock)."""
    if sys.platform != "win32":
        fcntl.flock(handle, fcntl.LOCK_EX)


def _last_byte(handle: int, size: int) -> bytes:
    os.lseek(handle, size - 1, os.SEEK_SET)  # reading only: O_APPEND writes at the end anyway
    return os.read(handle, 1)


def _append_all_or_nothing(handle: int, data: bytes, size: int) -> None:
    """Write ``data`` at the end of the file, which is ``size`` bytes long; on failure, cut what
    was written of it away again (shrinking a file needs no free space)."""
    written = 0
    try:
        while written < len(data):
            written += os.write(handle, data[written:])
    except BaseException:
        os.ftruncate(handle, size)
        raise


def read_audit_log(directory: str | os.PathLike[str], *, limit: int = 200) -> list[AuditEntry]:
    """The latest ``limit`` entries, oldest first, from ``audit.jsonl`` (and ``audit.jsonl.1``
    when the current file holds fewer).

    A last line with no newline is being written (or was cut short by a crash) and is skipped; any
    other line that is not an entry raises `LogDirError` naming the file.
    """
    entries: list[AuditEntry] = []
    for name in (AUDIT_FILE, f"{AUDIT_FILE}.1"):
        if len(entries) >= limit:
            break
        path = Path(directory) / name
        entries = _read_tail(path, limit - len(entries)) + entries
    return entries


def _read_tail(path: Path, limit: int) -> list[AuditEntry]:
    try:
        handle = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return []
    except OSError as error:
        raise LogDirError(f"{path}: cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise LogDirError(f"{path}: not a regular file (a FIFO, a device or a directory); it was not read")
    with os.fdopen(handle, "rb") as file:
        size = file.seek(0, os.SEEK_END)
        start = max(0, size - _TAIL_BYTES)
        file.seek(start)
        data = file.read(_TAIL_BYTES)  # no more, even if the file grows meanwhile
    lines = data.split(b"\n")
    lines.pop()  # empty after a final newline; a line still being written otherwise
    if start:
        lines = lines[1:]  # the first line read from the middle of the file is a fragment
    return [_entry(path, text) for text in (lines[-limit:] if limit else [])]


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _entry(path: Path, text: bytes) -> AuditEntry:
    try:
        return AuditEntry.model_validate_json(text)
    except ValidationError as error:
        raise LogDirError(
            f"{path}: a line is not an audit entry ({first_problem(error)}): {text[:80].decode('utf-8', 'replace')!r}"
        ) from None
