"""What a tool advertises: schema styles, provider targets, widening any JSON Schema, the tool
catalog and the strictness audit.

The names load on first use (PEP 562): the proxy needs `widen` alone, not the catalog and the audit.
"""

import typing

from pydantic_lenient._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from .audit import Finding, audit, format_findings
    from .catalog import (
        ToolSpec,
        model_from_function,
        tool_catalog,
        tool_specs,
    )
    from .generator import LenientJsonSchema, generator_for
    from .loading import TargetError, load_target
    from .styles import (
        STYLES,
        Style,
        apply_style,
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

# Each public name, and the module (in this package) that defines it. `audit` is both: the name
# stays the function once its module has loaded (`exports` keeps it so).
_MODULE_OF: dict[str, str] = {
    "Finding": "audit",
    "audit": "audit",
    "format_findings": "audit",
    "ToolSpec": "catalog",
    "model_from_function": "catalog",
    "tool_catalog": "catalog",
    "tool_specs": "catalog",
    "TargetError": "loading",
    "load_target": "loading",
    "STYLES": "styles",
    "LenientJsonSchema": "generator",
    "Style": "styles",
    "apply_style": "styles",
    "generator_for": "generator",
    "DRAFT_07": "targets",
    "TARGETS": "targets",
    "Loss": "targets",
    "Target": "targets",
    "TargetSchema": "targets",
    "input_schema": "targets",
    "target_schema": "targets",
    "to_target": "targets",
    "widen_schema": "widen",
}
__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
