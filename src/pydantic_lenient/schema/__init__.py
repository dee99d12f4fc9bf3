"""What a tool advertises: schema styles, provider targets, widening any JSON Schema, the tool
catalog and the strictness audit.
"""

from .audit import Finding, audit, format_findings
from .catalog import (
    ToolSpec,
    model_from_function,
    tool_catalog,
    tool_specs,
)
from .loading import TargetError, load_target
from .styles import (
    STYLES,
    LenientJsonSchema,
    Style,
    apply_style,
    generator_for,
)
from .targets import (
    DRAFT_07,
    TARGETS,
    Loss,
    Target,
    TargetSchema,
    input_schema,
    target_schema,
    to_target,
)
from .widen import widen_schema

__all__ = (
    "DRAFT_07",
    "STYLES",
    "TARGETS",
    "Finding",
    "LenientJsonSchema",
    "Loss",
    "Style",
    "Target",
    "TargetError",
    "TargetSchema",
    "ToolSpec",
    "apply_style",
    "audit",
    "format_findings",
    "generator_for",
    "input_schema",
    "load_target",
    "model_from_function",
    "target_schema",
    "to_target",
    "tool_catalog",
    "tool_specs",
    "widen_schema",
)
