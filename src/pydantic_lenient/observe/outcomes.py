"""What one tool call's outcome is: its `Status`, the `CallOutcome` record, and the `OutcomeSink`
that receives them (`pydantic_lenient.observe.recorder.OutcomeRecorder` records them).

A call is ``ok``, ``refused`` by validation (each refused field with its error type and the *shape*
of its value, `pydantic_lenient.observe.failures`), or an ``error`` in the tool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .failures import FieldFailure

__all__ = ("STATUSES", "CallOutcome", "OutcomeSink", "Status")

Status = Literal["ok", "refused", "error"]
STATUSES: tuple[Status, ...] = ("ok", "refused", "error")


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call: how it ended, how long it took (ms), its refused fields and the ids of the
    normalizer rules that changed it."""

    tool: str
    status: Status
    duration_ms: float
    failures: tuple[FieldFailure, ...] = ()
    norms: tuple[str, ...] = ()
    ts: float = field(default_factory=time.time)


class OutcomeSink(Protocol):
    """Something that also receives every outcome, such as `pydantic_lenient.observe.otel.OtelMetrics`."""

    def record(self, outcome: CallOutcome) -> None: ...
