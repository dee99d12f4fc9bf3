"""The audit log: one JSON line per tool call in ``LOG_DIR/audit.jsonl``, rotated by size.

A line is ``{"ts", "tool", "status", "duration_ms", "norms", "errors"}``: ``norms`` lists the ids
of the normalizer rules that changed the call, ``errors`` holds one ``{"param", "type", "shape"}``
per refused field (plus a truncated ``sample`` of the value only when the recorder keeps samples).

When the file would grow past ``max_bytes`` it becomes ``audit.jsonl.1`` (the older ones move up
to ``audit.jsonl.<backups>``; the oldest is dropped). The recorder writes in batches; a batch that
fails (a full or read-only disk) raises ``OSError`` here and is kept by the recorder to retry.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .logdir import AUDIT_FILE, LogDirError, first_problem

__all__ = ("AUDIT_FILE", "AuditEntry", "AuditError", "AuditLog", "LogDirError", "read_audit_log")

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


class AuditEntry(BaseModel):
    """One line of the audit log."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: str
    tool: str
    status: Literal["ok", "refused", "error"]
    duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    norms: list[str]
    errors: list[AuditError]


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
        """Append ``lines`` (JSON text, no newline); raises ``OSError`` if the disk refuses them."""
        if not lines:
            return
        data = "".join(f"{line}\n" for line in lines).encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        size = self.path.stat().st_size if self.path.exists() else 0
        if not self._checked_tail and size:
            # A line cut short by a crash stays where it is, ending its file; new lines start a new one.
            with self.path.open("rb") as file:
                file.seek(-1, os.SEEK_END)
                if file.read(1) != b"\n":
                    size = self.max_bytes
        self._checked_tail = True
        if size and size + len(data) > self.max_bytes:
            self._rotate()
        with self.path.open("ab") as file:
            file.write(data)

    def _rotate(self) -> None:
        for number in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{AUDIT_FILE}.{number}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{AUDIT_FILE}.{number + 1}"))
        os.replace(self.path, self.path.with_name(f"{AUDIT_FILE}.1"))


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
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            start = max(0, size - _TAIL_BYTES)
            file.seek(start)
            data = file.read()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise LogDirError(f"{path}: cannot be read: {error.strerror}") from None
    lines = data.split(b"\n")
    lines.pop()  # empty after a final newline; a line still being written otherwise
    if start:
        lines = lines[1:]  # the first line read from the middle of the file is a fragment
    return [_entry(path, text) for text in (lines[-limit:] if limit else [])]


def _entry(path: Path, text: bytes) -> AuditEntry:
    try:
        return AuditEntry.model_validate_json(text)
    except ValidationError as error:
        raise LogDirError(
            f"{path}: a line is not an audit entry ({first_problem(error)}): {text[:80].decode('utf-8', 'replace')!r}"
        ) from None
