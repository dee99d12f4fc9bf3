"""Observability: call outcomes and the suggestions drawn from them, the audit log, the dashboard and
OpenTelemetry.

One module per job, from the bottom up:

* `shapes`: what a client's value looks like (`value_shape`), and its names made safe to keep;
* `failures`: a validation error read as the refused fields of a call (`field_failures`);
* `outcomes`: a call's `Status`, its `CallOutcome` record and the `OutcomeSink` that receives them;
* `logdir`, `stats_file`: a log directory's files, and ``outcomes.json``'s records (`load_outcomes`);
* `audit_text`, `auditlog`: an audit line's text, and the rotated audit log that holds them;
* `counts`: the bounded counts and error patterns the recorder folds outcomes into;
* `saving`: adding the counts to a shared ``outcomes.json`` and saving it (`SharedOutcomesFile`);
* `recorder`: `OutcomeRecorder`, its queue and its flusher thread;
* `suggestions`: the rules the recorded failures support (`suggest`, `rules_document`);
* `otel`, `dashboard`: the outcomes as OpenTelemetry metrics, and a web page over a log directory.
"""

from .auditlog import (
    AUDIT_FILE,
    AuditEntry,
    AuditError,
    AuditLog,
    read_audit_log,
)
from .failures import NORMALIZATION_CONFLICT, FieldFailure, field_failures
from .logdir import LogDirError
from .outcomes import STATUSES, CallOutcome, OutcomeSink, Status
from .recorder import OutcomeRecorder, adapter_recorder
from .shapes import value_shape
from .stats_file import (
    AliasEvidence,
    ErrorPattern,
    FieldAnnotation,
    HourCalls,
    HourCount,
    OutcomeStats,
    ToolCalls,
    load_outcomes,
)
from .suggestions import Suggestion, rules_document, suggest

__all__ = (
    "AUDIT_FILE",
    "NORMALIZATION_CONFLICT",
    "STATUSES",
    "AliasEvidence",
    "AuditEntry",
    "AuditError",
    "AuditLog",
    "CallOutcome",
    "ErrorPattern",
    "FieldAnnotation",
    "FieldFailure",
    "HourCalls",
    "HourCount",
    "LogDirError",
    "OutcomeRecorder",
    "OutcomeSink",
    "OutcomeStats",
    "Status",
    "Suggestion",
    "ToolCalls",
    "adapter_recorder",
    "field_failures",
    "load_outcomes",
    "read_audit_log",
    "rules_document",
    "suggest",
    "value_shape",
)
