"""The lenient types: scalars that also take their string forms, JSON values that also take their
JSON text, and the mapping behind `Lenient[T]` that makes a plain annotation lenient.
"""

from .booleans import StrictBoolish
from .exact_leaves import DigitText, ExactNumber, FromText
from .floats import LenientFloat
from .integers import (
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
from .json_values import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LENGTH,
    AcceptJsonText,
    JsonText,
    JsonTextOf,
    LenientJson,
)
from .mapping import KeptAsIs, Lenient, LenientForm, lenient_annotation, lenient_form, lenient_model, lenient_tool
from .null_text import NullText
from .rendering import render_annotation

__all__ = (
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LENGTH",
    "AcceptJsonText",
    "DigitText",
    "ExactNumber",
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
    "LenientPositiveInt",
    "LenientU8",
    "LenientU16",
    "LenientU32",
    "LenientU64",
    "LenientUInt",
    "NullText",
    "StrictBoolish",
    "lenient_annotation",
    "lenient_form",
    "lenient_model",
    "lenient_tool",
    "render_annotation",
)
