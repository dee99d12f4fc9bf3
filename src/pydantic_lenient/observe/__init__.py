"""Observability: call outcomes and the suggestions drawn from them, the audit log, the dashboard and
OpenTelemetry.

One module per job, from the bottom up:

* `shapes`: what a client's value looks like (`value_shape`), and its names made safe to keep;
* `clients`: which client sent a call (`Client`, from its ``clientInfo``), and its host profile;
* `failures`: a validation error read as the refused fields of a call (`field_failures`);
* `outcomes`: a call's `Status`, its `CallOutcome` record and the `OutcomeSink` that receives them;
* `logdir`, `stats_file`: a log directory's files, and ``outcomes.json``'s records (`load_outcomes`);
* `fleet`: many replicas' log directories read as one (`fleet_outcomes`, `fleet_audit_log`);
* `audit_text`, `auditlog`: an audit line's text, and the rotated audit log that holds them;
* `counts`: the bounded counts and error patterns the recorder folds outcomes into;
* `saving`: adding the counts to a shared ``outcomes.json`` and saving it (`SharedOutcomesFile`);
* `recorder`: `OutcomeRecorder`, its queue and its flusher thread;
* `suggestions`: the rules the recorded failures support (`suggest`, `rules_document`);
* `otel`, `dashboard`: the outcomes as OpenTelemetry metrics, and a web page over a log directory.

The names load on first use (PEP 562): the proxy and the commands load only the modules they use.
"""

import typing

from pydantic_lenient._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from .auditlog import (
        AUDIT_FILE,
        AuditEntry,
        AuditError,
        AuditLog,
        read_audit_log,
    )
    from .clients import Client, client_from_info
    from .failures import NORMALIZATION_CONFLICT, FieldFailure, field_failures
    from .fleet import fleet_audit_log, fleet_outcomes
    from .logdir import LogDirError
    from .outcomes import STATUSES, CallOutcome, OutcomeSink, Status
    from .recorder import OutcomeRecorder, adapter_recorder
    from .shapes import value_shape
    from .stats_file import (
        AliasEvidence,
        ClientCalls,
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
    "Client",
    "ClientCalls",
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
    "client_from_info",
    "field_failures",
    "fleet_audit_log",
    "fleet_outcomes",
    "load_outcomes",
    "read_audit_log",
    "rules_document",
    "suggest",
    "value_shape",
)

# Each public name, and the module (in this package) that defines it.
_MODULE_OF: dict[str, str] = {
    "AUDIT_FILE": "auditlog",
    "AuditEntry": "auditlog",
    "AuditError": "auditlog",
    "AuditLog": "auditlog",
    "read_audit_log": "auditlog",
    "Client": "clients",
    "client_from_info": "clients",
    "NORMALIZATION_CONFLICT": "failures",
    "FieldFailure": "failures",
    "field_failures": "failures",
    "fleet_audit_log": "fleet",
    "fleet_outcomes": "fleet",
    "LogDirError": "logdir",
    "STATUSES": "outcomes",
    "CallOutcome": "outcomes",
    "OutcomeSink": "outcomes",
    "Status": "outcomes",
    "OutcomeRecorder": "recorder",
    "adapter_recorder": "recorder",
    "value_shape": "shapes",
    "AliasEvidence": "stats_file",
    "ClientCalls": "stats_file",
    "ErrorPattern": "stats_file",
    "FieldAnnotation": "stats_file",
    "HourCalls": "stats_file",
    "HourCount": "stats_file",
    "OutcomeStats": "stats_file",
    "ToolCalls": "stats_file",
    "load_outcomes": "stats_file",
    "Suggestion": "suggestions",
    "rules_document": "suggestions",
    "suggest": "suggestions",
}
__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
