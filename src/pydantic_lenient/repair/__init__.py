"""Schema-driven argument repair for any tool schema, as a host's JSON Schema validator reads it."""

try:
    import jsonschema_rs  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "repair needs jsonschema-rs and regress: pip install 'pydantic-lenient[repair]'"
        " (in a clone: pip install -e '.[repair]')"
    ) from error

from .engine import Repairer, RepairResult, repair_arguments
from .reader import SchemaReader
from .scopes import Draft
from .validation import Reason

__all__ = (
    "Draft",
    "Reason",
    "RepairResult",
    "Repairer",
    "SchemaReader",
    "repair_arguments",
)
