"""Pydantic v2 types for LLM tool inputs: a widened schema and an exact validator that agree."""

from ._version import __version__ as __version__
from .normalizer.engine import (
    NormalizationConflict,
    Normalizer,
    NormalizeResult,
    Rule,
    RuleError,
    StatsFileError,
    rules_from_model,
)
from .schema.audit import Finding, audit
from .schema.catalog import ToolSpec, tool_catalog, tool_specs
from .schema.styles import STYLES, LenientJsonSchema, Style, apply_style, generator_for
from .schema.targets import TARGETS, Target, TargetSchema, input_schema, target_schema, to_target
from .types.booleans import StrictBoolish
from .types.exact_leaves import DigitText, ExactNumber, FromText
from .types.floats import LenientFloat
from .types.integers import (
    LenientI8,
    LenientI16,
    LenientI32,
    LenientI64,
    LenientInt,
    LenientPositiveInt,
    LenientU8,
    LenientU16,
    LenientU32,
    LenientU64,
    LenientUInt,
)
from .types.json_values import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LENGTH,
    AcceptJsonText,
    JsonText,
    JsonTextOf,
    LenientJson,
)
from .types.mapping import (
    KeptAsIs,
    Lenient,
    LenientForm,
    lenient_annotation,
    lenient_form,
    lenient_model,
    lenient_tool,
)
from .types.null_text import NullText
from .types.rendering import render_annotation

__all__ = (
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LENGTH",
    "STYLES",
    "TARGETS",
    "AcceptJsonText",
    "DigitText",
    "ExactNumber",
    "Finding",
    "FromText",
    "JsonText",
    "JsonTextOf",
    "KeptAsIs",
    "Lenient",
    "LenientFloat",
    "LenientForm",
    "LenientI8",
    "LenientI16",
    "LenientI32",
    "LenientI64",
    "LenientInt",
    "LenientJson",
    "LenientJsonSchema",
    "LenientPositiveInt",
    "LenientU8",
    "LenientU16",
    "LenientU32",
    "LenientU64",
    "LenientUInt",
    "NormalizationConflict",
    "NormalizeResult",
    "Normalizer",
    "NullText",
    "Rule",
    "RuleError",
    "StatsFileError",
    "StrictBoolish",
    "Style",
    "Target",
    "TargetSchema",
    "ToolSpec",
    "apply_style",
    "audit",
    "generator_for",
    "input_schema",
    "lenient_annotation",
    "lenient_form",
    "lenient_model",
    "lenient_tool",
    "render_annotation",
    "rules_from_model",
    "target_schema",
    "to_target",
    "tool_catalog",
    "tool_specs",
)
