"""What the outcome recorder, the audit log and the dashboard share about a log directory."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

OUTCOMES_FILE = "outcomes.json"
NORMALIZER_STATS_FILE = "normalizer_stats.json"
AUDIT_FILE = "audit.jsonl"


class LogDirError(ValueError):
    """A file in a log directory that cannot be read as what it should be; the message names it.

    Nothing is written over such a file: fix or move it, and nothing saved is lost.
    """


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it over ``target``, so a
    reader (or a crash) sees the old file or the new one, never half of one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def iso_time(seconds: float) -> str:
    """A UTC timestamp as ISO 8601 text with milliseconds and a ``Z``."""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
