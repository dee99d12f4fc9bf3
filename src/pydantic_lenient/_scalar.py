"""Machinery shared by the lenient scalar markers (integers, floats, booleans).

Each marker builds two things from one description of what it accepts:

* a pydantic-core schema: a native fast path, plus a Python fallback used only when the caller
  passes an explicit ``strict=`` at validation time (see `strictness_proof`);
* the JSON schema it advertises: the canonical type widened with a pattern-constrained string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

__all__ = (
    "JSON_NUMBER_TEXT",
    "MAX_DIGIT_STRING_LENGTH",
    "form_error",
    "form_union",
    "lenient_scalar_schema",
    "render_scalar",
    "split_annotations",
    "strictness_proof",
    "user_bounds",
)

MAX_DIGIT_STRING_LENGTH = 4300
"""Longest digit string an integer type converts: Python's default int/str conversion limit."""

JSON_NUMBER_TEXT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
"""The grammar of a JSON number (RFC 8259), unanchored; every string-to-number rule uses it."""

# pydantic's own names for numeric constraints, as they reach a marker's JSON schema when they were
# applied after it (`Annotated[LenientInt, Field(ge=1)]`), and the standard keywords they stand for.
_PYDANTIC_BOUND_KEYS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
_STANDARD_BOUND_KEYS = frozenset(_PYDANTIC_BOUND_KEYS.values())


def strictness_proof(
    fast: CoreSchema,
    fallback: Callable[[Any], Any],
    serialization: core_schema.SerSchema | None = None,
) -> CoreSchema:
    """Make the annotation, not the caller's ``strict=``, decide what is accepted.

    pydantic-core lets an explicit ``strict=True`` or ``strict=False`` passed at validation time
    override the ``strict`` flag of every sub-schema. ``fast`` relies on its own flags (strict type
    checks, a lax int/float/bool conversion of an already pattern-checked string), which hold only
    when the caller passes no ``strict``. Either explicit value is routed to ``fallback``: a plain
    function that checks exact Python types and so cannot be loosened or tightened.
    """
    slow = core_schema.no_info_plain_validator_function(fallback)
    # Outer node (strict=True): no runtime strict -> its strict branch; runtime strict=False -> slow.
    # Inner node (strict=False): no runtime strict -> fast; runtime strict=True -> slow.
    return core_schema.lax_or_strict_schema(
        lax_schema=slow,
        strict_schema=core_schema.lax_or_strict_schema(lax_schema=fast, strict_schema=slow, strict=False),
        strict=True,
        serialization=serialization,
    )


def form_union(
    choices: list[CoreSchema | tuple[CoreSchema, str]], error_type: str, message: str
) -> core_schema.UnionSchema:
    """Try each accepted form in order; a value no form takes gets one error of ``error_type``."""
    union = core_schema.union_schema(
        choices,
        mode="left_to_right",
        custom_error_type=error_type,
        custom_error_message=message,
    )
    # Without this, ConfigDict(strict=True) would make the union force strictness on its choices.
    union["strict"] = False
    return union


def lenient_scalar_schema(
    *,
    native: CoreSchema,
    pattern: str,
    convert: CoreSchema,
    error_type: str,
    message: str,
    fallback: Callable[[Any], Any],
    serialization: core_schema.ExpectedSerializationTypes,
    max_length: int | None = None,
    extra_forms: tuple[CoreSchema, ...] = (),
    bounds: CoreSchema | None = None,
) -> CoreSchema:
    """The core schema of a lenient scalar.

    The fast path tries, in order: the value itself (``native``, a strict schema, so booleans are
    not integers and no string is coerced), then a string that fully matches ``pattern`` and is
    handed to ``convert``, then any ``extra_forms``. A value none of them takes gets one error of
    ``error_type``. ``fallback`` must accept exactly the same forms (see `strictness_proof`);
    ``bounds``, checked after either, give pydantic's usual range errors.
    """
    string_form = core_schema.chain_schema(
        [core_schema.str_schema(strict=True, pattern=pattern, max_length=max_length), convert]
    )
    as_canonical = core_schema.simple_ser_schema(serialization)
    form_choices: list[CoreSchema | tuple[CoreSchema, str]] = [native, string_form, *extra_forms]
    fast = form_union(form_choices, error_type, message)
    if bounds is None:
        return strictness_proof(fast, fallback, as_canonical)
    # The bounds step sees an exact int or float, which strict and lax checks treat alike, so it is
    # shared by both paths and reports the same error, with the converted value as its input.
    return core_schema.chain_schema([strictness_proof(fast, fallback), bounds], serialization=as_canonical)


def form_error(error_type: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(error_type, message)


def user_bounds(handler: GetJsonSchemaHandler, schema: CoreSchema) -> tuple[dict[str, Any], JsonSchemaValue]:
    """Split what annotations applied after a marker add to its JSON schema.

    pydantic wraps a constraint it cannot push into a custom schema (``Field(ge=1)`` after a marker)
    in an after-validator whose JSON schema update is its own ``ge``/``le`` name; each wrapper adds
    its update on top of what it wraps. Rendering the marker's full schema therefore yields all of
    them at the top level, beside the marker's own (internal, discarded) rendering.

    Returns ``(bounds, annotations)``: bounds keyed by standard JSON Schema keywords, and everything
    else the outer annotations add (title, description, examples, ...).
    """
    rendered = {key: value for key, value in handler(schema).items() if key not in _INTERNAL_RENDERING}
    bounds: dict[str, Any] = {}
    for key in list(rendered):
        if key in _PYDANTIC_BOUND_KEYS:
            bounds[_PYDANTIC_BOUND_KEYS[key]] = rendered.pop(key)
        elif key in _STANDARD_BOUND_KEYS:
            bounds[key] = rendered.pop(key)
    return bounds, rendered


# Keywords that describe a value without constraining it; a marker hoists them out of its branches.
ANNOTATION_KEYWORDS = frozenset(
    {"title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly", "$comment"}
)


def split_annotations(schema: JsonSchemaValue) -> tuple[JsonSchemaValue, JsonSchemaValue]:
    """``(schema without annotation keywords, those keywords)``."""
    kept = {key: value for key, value in schema.items() if key not in ANNOTATION_KEYWORDS}
    return kept, {key: value for key, value in schema.items() if key in ANNOTATION_KEYWORDS}


# What pydantic's generator writes for a marker's own core schema (its fast path's union).
_INTERNAL_RENDERING = frozenset({"anyOf", "type", "pattern", "maxLength"})


def render_scalar(
    handler: GetJsonSchemaHandler,
    canonical: Mapping[str, Any],
    alternative: Mapping[str, Any],
    annotations: Mapping[str, Any],
) -> JsonSchemaValue:
    """The schema a lenient type advertises, for the generator and mode in use.

    Validation mode advertises ``anyOf`` of the canonical schema, *first*, and the alternative form
    (a string pattern, or JSON text), which every JSON Schema validator reads the same way. The
    style stage (`pydantic_lenient.apply_style`) relies on that order to restyle any schema holding
    this shape, whichever generator wrote it. Serialization mode advertises the canonical schema.
    """
    if handler.mode == "serialization":
        return {**canonical, **annotations}
    return {"anyOf": [dict(canonical), dict(alternative)], **annotations}
