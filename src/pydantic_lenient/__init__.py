"""Pydantic v2 types for LLM tool inputs: a widened schema and an exact validator that agree.

The public names load on first use (PEP 562, as pydantic's own root does), so `import pydantic_lenient`
costs little more than `import pydantic`, and a program that uses only the types never imports the
normalizer, the catalog or asyncio.
"""

import typing

from ._lazy import exports as _exports
from ._version import __version__ as __version__

if typing.TYPE_CHECKING:
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
    from .schema.generator import LenientJsonSchema, generator_for
    from .schema.styles import STYLES, Style, apply_style
    from .schema.targets import TARGETS, Target, TargetSchema, input_schema, target_schema, to_target
    from .types.booleans import StrictBoolish
    from .types.decimals import LenientDecimal
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
    )
    from .types.null_text import NullText
    from .types.rendering import render_annotation
    from .types.tools import lenient_tool

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
    "LenientDecimal",
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

# Each public name, and the module (under this package) that defines it.
_MODULE_OF: dict[str, str] = {
    "NormalizationConflict": "normalizer.engine",
    "Normalizer": "normalizer.engine",
    "NormalizeResult": "normalizer.engine",
    "Rule": "normalizer.engine",
    "RuleError": "normalizer.engine",
    "StatsFileError": "normalizer.engine",
    "rules_from_model": "normalizer.engine",
    "Finding": "schema.audit",
    "audit": "schema.audit",
    "ToolSpec": "schema.catalog",
    "tool_catalog": "schema.catalog",
    "tool_specs": "schema.catalog",
    "STYLES": "schema.styles",
    "LenientJsonSchema": "schema.generator",
    "Style": "schema.styles",
    "apply_style": "schema.styles",
    "generator_for": "schema.generator",
    "TARGETS": "schema.targets",
    "Target": "schema.targets",
    "TargetSchema": "schema.targets",
    "input_schema": "schema.targets",
    "target_schema": "schema.targets",
    "to_target": "schema.targets",
    "StrictBoolish": "types.booleans",
    "DigitText": "types.exact_leaves",
    "ExactNumber": "types.exact_leaves",
    "FromText": "types.exact_leaves",
    "LenientDecimal": "types.decimals",
    "LenientFloat": "types.floats",
    "LenientI8": "types.integers",
    "LenientI16": "types.integers",
    "LenientI32": "types.integers",
    "LenientI64": "types.integers",
    "LenientInt": "types.integers",
    "LenientPositiveInt": "types.integers",
    "LenientU8": "types.integers",
    "LenientU16": "types.integers",
    "LenientU32": "types.integers",
    "LenientU64": "types.integers",
    "LenientUInt": "types.integers",
    "DEFAULT_MAX_DEPTH": "types.json_values",
    "DEFAULT_MAX_LENGTH": "types.json_values",
    "AcceptJsonText": "types.json_values",
    "JsonText": "types.json_values",
    "JsonTextOf": "types.json_values",
    "LenientJson": "types.json_values",
    "KeptAsIs": "types.mapping",
    "Lenient": "types.mapping",
    "LenientForm": "types.mapping",
    "lenient_annotation": "types.mapping",
    "lenient_form": "types.mapping",
    "lenient_model": "types.mapping",
    "lenient_tool": "types.tools",
    "NullText": "types.null_text",
    "render_annotation": "types.rendering",
}

__getattr__, __dir__ = _exports(__name__, _MODULE_OF)
