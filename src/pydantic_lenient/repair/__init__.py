"""Schema-driven argument repair for any tool schema, as a host's JSON Schema validator reads it."""

from .engine import (
    Draft,
    Reason,
    Repairer,
    RepairResult,
    repair_arguments,
)

__all__ = (
    "Draft",
    "Reason",
    "RepairResult",
    "Repairer",
    "repair_arguments",
)
