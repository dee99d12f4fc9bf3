"""What one tool call's outcome is: its `Status`, the `CallOutcome` record, and the `OutcomeSink`
that receives them (`pydantic_lenient.observe.recorder.OutcomeRecorder` records them).

A call is ``ok``, ``refused`` by validation (each refused field with its error type and the *shape*
of its value, `pydantic_lenient.observe.failures`), or an ``error`` in the tool.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .clients import Client
from .failures import FieldFailure

__all__ = ("STATUSES", "CallOutcome", "CallTelemetry", "OutcomeSink", "Status")

Status = Literal["ok", "refused", "error"]
STATUSES: tuple[Status, ...] = ("ok", "refused", "error")


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call: how it ended, how long it took (ms), its refused fields, the ids of the
    normalizer rules that changed it, and the client that sent it (None when it never said)."""

    tool: str
    status: Status
    duration_ms: float
    failures: tuple[FieldFailure, ...] = ()
    norms: tuple[str, ...] = ()
    ts: float = field(default_factory=time.time)
    client: Client | None = None


class OutcomeSink(Protocol):
    """Something that also receives every outcome, off the call path (in batches, every flush)."""

    def record(self, outcome: CallOutcome) -> None: ...


class CallTelemetry(Protocol):
    """Told of each call as it ends, on the call's own thread and context, such as
    `pydantic_lenient.observe.otel.LenientTelemetry`; ``error`` is a refused call's validation error."""

    def call_ended(
        self,
        outcome: CallOutcome,
        *,
        known_tool: bool = True,
        error: Any = None,
        arguments: Mapping[str, Any] | None = None,
        known: Collection[str] = (),
        rule_params: Mapping[str, tuple[str, str]] | None = None,
    ) -> None: ...
