"""The declarative request normalizer: rules for wrong names, missing fields and wrong shapes, and
their stats.
"""

from .engine import (
    BUILTIN_RULES,
    MAX_RULES_FILE_BYTES,
    OTHER_TOOLS,
    RULE_TYPES,
    NormalizationConflict,
    Normalizer,
    NormalizeResult,
    Rule,
    RuleError,
    StatsFileError,
    rules_from_model,
)

__all__ = (
    "BUILTIN_RULES",
    "MAX_RULES_FILE_BYTES",
    "OTHER_TOOLS",
    "RULE_TYPES",
    "NormalizationConflict",
    "NormalizeResult",
    "Normalizer",
    "Rule",
    "RuleError",
    "StatsFileError",
    "rules_from_model",
)
