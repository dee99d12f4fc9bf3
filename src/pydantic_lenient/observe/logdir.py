"""What the outcome recorder, the audit log and the dashboard share about a log directory."""

from __future__ import annotations

from pydantic_core import ValidationError  # what pydantic exports as its own

OUTCOMES_FILE = "outcomes.json"
NORMALIZER_STATS_FILE = "normalizer_stats.json"
AUDIT_FILE = "audit.jsonl"


__all__ = ("AUDIT_FILE", "NORMALIZER_STATS_FILE", "OUTCOMES_FILE", "LogDirError", "first_problem")


class LogDirError(ValueError):
    """A file in a log directory that cannot be read as what it should be; the message names it.

    Nothing is written over such a file: fix or move it, and nothing saved is lost.
    """


def first_problem(error: ValidationError) -> str:
    """The first error of a file's validation, as ``where: what``, for a one-line message."""
    detail = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in detail["loc"])
    return f"{where}: {detail['msg']}" if where else detail["msg"]
