"""``outcomes.json``: the records a recorder saves (calls, error patterns, alias evidence,
annotations), and `load_outcomes`, which reads them back.

    stats = load_outcomes("logs/")   # OutcomeStats; empty if nothing was saved yet
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pydantic_lenient._files import read_regular_file

from .logdir import OUTCOMES_FILE, LogDirError, first_problem
from .shapes import NAME_LIMIT

__all__ = (
    "CLIENTS_PER_PATTERN",
    "MAX_OUTCOMES_BYTES",
    "AliasEvidence",
    "ClientCalls",
    "ErrorPattern",
    "FieldAnnotation",
    "HourCalls",
    "HourCount",
    "OutcomeStats",
    "ToolCalls",
    "load_outcomes",
)

CLIENTS_PER_PATTERN = 20
"""Client names an error pattern counts apart; the others count together as ``_OTHER``."""

MAX_OUTCOMES_BYTES = 16 * 1024 * 1024
"""An ``outcomes.json`` larger than this is refused unread. The default bounds (1,000 patterns of
168 hours) save about 6 MB at most."""

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
    clients: dict[Name, Count] = {}
    """The refusals by client name (at most `CLIENTS_PER_PATTERN`, then ``_OTHER``)."""


class AliasEvidence(_Record):
    """Calls that sent the unknown name ``unknown`` and lacked the required ``missing``."""

    tool: Name
    unknown: Name
    missing: Name
    count: Count
    first_seen: Seconds
    last_seen: Seconds
    clients: dict[Name, Count] = {}
    """The calls by client name (at most `CLIENTS_PER_PATTERN`, then ``_OTHER``)."""


class ToolCalls(_Record):
    """One tool's calls by status, and their total duration."""

    tool: Name
    ok: Count = 0
    refused: Count = 0
    error: Count = 0
    duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0


class ClientCalls(_Record):
    """One client's calls by status, and how many the normalizer or repair changed: ``client`` as it
    named itself (cleaned), its latest ``version``, and ``host``, the profile its name belongs to
    (``_OTHER`` for none)."""

    client: Name
    version: Name = ""
    host: Name = "_OTHER"
    ok: Count = 0
    refused: Count = 0
    error: Count = 0
    changed: Count = 0


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
    clients: list[ClientCalls] = []
    hourly: list[HourCalls] = []
    patterns: list[ErrorPattern] = []
    aliases: list[AliasEvidence] = []
    annotations: list[FieldAnnotation] = []
    normalizer: dict[str, Any] | None = None
    audit_lines_dropped: Count = 0


def load_outcomes(log_dir: str | os.PathLike[str]) -> OutcomeStats:
    """What a recorder saved in ``log_dir`` (empty stats if it saved nothing yet).

    Raises `LogDirError`, naming the file, if ``log_dir`` is not a directory or ``outcomes.json``
    cannot be read as saved stats (corrupt, cut short, or of another shape), or is not a regular
    file of at most `MAX_OUTCOMES_BYTES` bytes (a FIFO, a device, a symlink).
    """
    directory = Path(log_dir)
    if not directory.is_dir():
        raise LogDirError(f"{directory}: not a directory")
    path = directory / OUTCOMES_FILE
    try:
        data = read_regular_file(path, MAX_OUTCOMES_BYTES)
    except FileNotFoundError:
        return OutcomeStats()
    except OSError as error:
        raise LogDirError(f"{path}: cannot be read: {error.strerror}") from None
    except ValueError as error:
        raise LogDirError(f"{path}: {error}") from None
    try:
        return OutcomeStats.model_validate_json(data)
    except ValidationError as error:
        raise LogDirError(f"{path}: not a saved outcomes file ({first_problem(error)}); it was left as it is") from None
