"""Machinery shared by the lenient scalar markers (integers, floats, booleans).

Each marker builds two things from one description of what it accepts:

* a pydantic-core schema: native forms chosen by the value's exact type, which no ``strict=``
  can loosen or tighten (see `lenient_scalar_schema`);
* the JSON schema it advertises: the canonical type widened with a pattern-constrained string.

Every marker (the JSON-text ones too) also reads what pydantic applied before it (`read_inner`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar, cast

import annotated_types
from pydantic import GetJsonSchemaHandler
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from .bounds import BOUND_KEYWORDS, PYDANTIC_BOUND_KEYWORDS
from .forms import NULL_TEXT
from .portable_rules import (
    Rendering,
    current_rendering,
    inlined_branch,
    portable_branches,
    portable_node,
)

__all__ = (
    "Inner",
    "allows_inf_nan",
    "canonical_part",
    "effective_marker",
    "exact_conversion",
    "form_error",
    "lenient_scalar_schema",
    "python_function",
    "read_inner",
    "render_scalar",
    "resolver",
    "user_bounds",
    "with_inner",
    "with_null_text",
)

_M = TypeVar("_M")


def allows_inf_nan(metadata: tuple[Any, ...]) -> bool:
    """Whether ``metadata`` (annotated-types markers, ``Field(...)``, grouped ones) allows NaN and
    Infinity, which a lenient number refuses."""
    for marker in metadata:
        parts = getattr(marker, "metadata", None) if isinstance(marker, FieldInfo) else None
        if parts is not None and allows_inf_nan(tuple(parts)):
            return True
        if isinstance(marker, annotated_types.GroupedMetadata) and not isinstance(marker, FieldInfo):
            if allows_inf_nan(tuple(part for part in marker if part is not None)):
                return True
        elif getattr(marker, "allow_inf_nan", False):
            return True
    return False


def exact_conversion(lax: CoreSchema, exact: CoreSchema) -> CoreSchema:
    """Convert a pattern-checked string: ``lax`` (pydantic-core's lax conversion, the fast one) when
    the caller passes no ``strict=``, else ``exact`` (a builtin such as ``int``, which ``strict=True``
    cannot refuse). For a string the pattern has checked, both give the same value."""
    return core_schema.lax_or_strict_schema(lax_schema=lax, strict_schema=exact, strict=False)


def lenient_scalar_schema(
    *,
    forms: Mapping[type, CoreSchema],
    error_type: str,
    message: str,
    serialization: core_schema.ExpectedSerializationTypes | None,
    bounds: CoreSchema | None = None,
) -> CoreSchema:
    """The core schema of a lenient scalar: its accepted ``forms``, chosen by the value's exact type.

    The value's type (``type(value)``: ``bool`` is not ``int``, an ``IntEnum`` member or a
    ``numpy.int64`` is neither) picks one form, a native schema; any other type, or a value its
    form refuses, gets one error of ``error_type``. Each form sees a value of exactly its type,
    which pydantic-core's strict and lax checks treat alike, so an explicit ``strict=True`` or
    ``strict=False`` at validation time (which overrides every sub-schema's own flag, also inside a
    user's union), or ``ConfigDict(strict=True)``, changes nothing: the annotation decides.
    ``bounds``, checked after, give pydantic's usual range errors. ``serialization``: the canonical
    type a value is written as (None: as its own type says, as pydantic writes a ``Decimal``).
    """
    by_type = core_schema.tagged_union_schema(choices=dict(forms), discriminator=type)
    one_error = core_schema.custom_error_schema(by_type, custom_error_type=error_type, custom_error_message=message)
    if serialization is None:
        return one_error if bounds is None else core_schema.chain_schema([one_error, bounds])
    as_canonical = core_schema.simple_ser_schema(serialization)
    if bounds is None:
        return {**one_error, "serialization": as_canonical}
    return core_schema.chain_schema([one_error, bounds], serialization=as_canonical)


def python_function(function: Callable[[Any], Any]) -> CoreSchema:
    """A form checked by a Python function (rare forms only; it renders as no JSON schema)."""
    return core_schema.no_info_plain_validator_function(function, json_schema_input_schema=core_schema.any_schema())


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
        if key in PYDANTIC_BOUND_KEYWORDS:  # applied after the marker (`Annotated[LenientInt, Field(ge=1)]`)
            bounds[PYDANTIC_BOUND_KEYWORDS[key]] = rendered.pop(key)
        elif key in BOUND_KEYWORDS:
            bounds[key] = rendered.pop(key)
    return bounds, rendered


# What pydantic's generator writes for a marker's own core schema (its fast path's union).
_INTERNAL_RENDERING = frozenset({"anyOf", "oneOf", "type", "pattern", "maxLength"})


def render_scalar(
    handler: GetJsonSchemaHandler,
    canonical: Mapping[str, Any],
    alternative: Mapping[str, Any],
    annotations: Mapping[str, Any],
) -> JsonSchemaValue:
    """The schema a lenient type advertises, for the generator and mode in use.

    Serialization mode advertises the canonical schema. Validation mode writes, by
    `current_rendering`:

    * under the library's generator (`Rendering.RESTYLED`), ``anyOf`` of the canonical schema,
      *first*, and the alternative form (a string pattern, or JSON text), which every JSON Schema
      validator reads the same way. The style stage (`pydantic_lenient.apply_style`) relies on that
      order to restyle any schema holding this shape, whichever generator wrote it;
    * under pydantic's own generator (`Rendering.PORTABLE`: a hand-written type that an SDK lists
      with ``model_json_schema()``), the same ``anyOf`` in the portable shape, which every profiled
      host lists and reads right (`pydantic_lenient.types.portable_rules`);
    * inside a portable array's ``items`` (`Rendering.CANONICAL`), the canonical schema alone.
    """
    if handler.mode == "serialization":
        return {**canonical, **annotations}
    mode = current_rendering()
    if mode is Rendering.RESTYLED:
        return {"anyOf": [dict(canonical), dict(alternative)], **annotations}
    own = portable_node(canonical, canonical_part)
    if mode is Rendering.CANONICAL:
        return {**own, **annotations}
    return {"anyOf": portable_branches([inlined_branch(own, resolver(handler)), dict(alternative)]), **annotations}


def resolver(handler: GetJsonSchemaHandler) -> Callable[[str], Any]:
    """How ``handler``'s generator looks up a ``$ref`` it wrote (`inlined_branch`)."""

    def resolve(reference: str) -> Any:
        try:
            return handler.resolve_ref_schema({"$ref": reference})
        except LookupError:  # not rendered yet (a model that holds itself)
            return None

    return resolve


def canonical_part(position: Any) -> Any:
    """A tuple position's canonical part, for the ``items`` its positions share (`portable_node`):
    rendered portable, a lenient scalar is ``anyOf`` of its canonical branch and string forms."""
    branches = position.get("anyOf") if isinstance(position, dict) else None
    if not isinstance(branches, list):
        return position
    kinds = [b for b in branches if isinstance(b, dict) and b.get("type") not in ("string", "null")]
    return kinds[0] if len(kinds) == 1 else position


# What a marker reads from metadata written before it -------------------------------------------
#
# pydantic applies the metadata written before a marker first (a `Field(...)` default's constraints
# come before the annotation's own metadata, pydantic/pydantic#10507) and hands the result to the
# marker as ``handler(source)``. A marker takes it into account: the constraints it can hold move
# into it (checked natively, advertised), and anything else validates the marker's result afterwards.

# The JSON Schema a core schema's metadata adds (a description, examples), kept on the marker's schema.
_JSON_METADATA = ("pydantic_js_updates", "pydantic_js_extra")
# Where a marker leaves, for its JSON schema, what it took in (its hook is given only the final schema).
_EFFECTIVE = "pydantic_lenient_effective"
_WRAPPERS = frozenset({"function-after", "function-before", "function-wrap"})
# Bounds and lengths, under pydantic's names and JSON Schema's.
_ANY_BOUND_KEY = frozenset(
    {*PYDANTIC_BOUND_KEYWORDS, *BOUND_KEYWORDS, "min_length", "max_length", "minLength", "maxLength"}
    | {"minItems", "maxItems", "minProperties", "maxProperties"}
)


class Inner(NamedTuple):
    """The core schema pydantic built from the metadata before a marker, read apart."""

    constraints: dict[str, Any]
    """The base type's constraints that check the marker's result itself (reached only through
    after-validators, which run on what it checked), by their core schema names."""
    rest: CoreSchema | None
    """The whole inner schema, when it holds more than the constraints: the marker's result is
    validated through it afterwards. None when the constraints are all of it."""
    schema: CoreSchema
    """The whole inner schema."""
    json_metadata: dict[str, Any]
    """Its JSON Schema annotations (a description), without bounds no host could check exactly."""


def read_inner(inner: CoreSchema, base_type: str, native: frozenset[str]) -> Inner:
    """``inner`` (``handler(source)``) read as the metadata before a marker built it, for a marker
    whose base type's core schema is ``base_type`` and that holds the constraints ``native``."""
    metadata: dict[str, Any] = dict(inner.get("metadata") or {})
    leaf: Any = inner
    while leaf["type"] == "function-after":  # a validator after the constraints: they see the value first
        leaf = leaf["schema"]
    constraints = {key: leaf[key] for key in native if key in leaf} if leaf["type"] == base_type else {}
    plain = leaf is inner and set(inner) <= {"type", "metadata", *native} and set(metadata) <= set(_JSON_METADATA)
    json_metadata = {key: metadata[key] for key in _JSON_METADATA if key in metadata}
    updates = json_metadata.get("pydantic_js_updates")
    if isinstance(updates, dict):
        # A bound in the updates was applied after a validator, to what it returned: not to the argument.
        json_metadata["pydantic_js_updates"] = {
            key: value for key, value in updates.items() if key not in _ANY_BOUND_KEY
        }
    return Inner(constraints, None if plain else inner, inner, json_metadata)


def with_inner(
    own: CoreSchema, rest: CoreSchema | None, json_metadata: Mapping[str, Any], effective: Any
) -> CoreSchema:
    """A marker's schema ``own``, then ``rest`` (the inner schema it could not take in) on its result;
    carrying the inner schema's JSON annotations, and ``effective`` (unless None) for its JSON schema."""
    schema = own if rest is None else core_schema.chain_schema([own, rest])
    added: dict[str, Any] = dict(json_metadata)
    if effective is not None:
        added[_EFFECTIVE] = effective
    if not added:
        return schema
    marked: dict[str, Any] = dict(schema)
    marked["metadata"] = {**(schema.get("metadata") or {}), **added}
    return cast(CoreSchema, marked)


def effective_marker(schema: CoreSchema, default: _M) -> _M:
    """What the marker left in ``schema`` (its own, possibly wrapped by validators written after it)
    for its JSON schema: a marker of ``default``'s type, or ``default`` itself."""
    node: Any = schema
    while True:
        found = (node.get("metadata") or {}).get(_EFFECTIVE)
        if isinstance(found, type(default)):
            return found
        if node["type"] not in _WRAPPERS or "schema" not in node:
            return default
        node = node["schema"]


# The string "null" as None, natively: exactly that string, read as the JSON it is.
_NULL_TEXT_AS_NONE = core_schema.chain_schema(
    [core_schema.literal_schema([NULL_TEXT]), core_schema.json_schema(core_schema.none_schema())]
)


def with_null_text(schema: CoreSchema) -> CoreSchema | None:
    """``schema``, a lenient scalar's as `lenient_scalar_schema` built it (a marker's own core schema),
    also taking the string ``"null"`` as None, natively: its string form tries the null text after
    its own, inside the one error, and its bounds let None through. None when ``schema`` is not one
    (a validator written after the marker wraps it): the caller then converts the text itself.

    A value of any other type never meets the null text, so the hot path stays as fast as the
    marker's own (docs/benchmarks.md)."""
    if schema["type"] == "custom-error":
        forms = _with_null_text_form(schema)
        return None if forms is None else cast(CoreSchema, forms)
    if schema["type"] != "chain" or len(schema["steps"]) != 2 or schema["steps"][1]["type"] not in _BOUNDS_TYPES:
        return None
    first, bounds = schema["steps"]
    forms = _with_null_text_form(first) if first["type"] == "custom-error" else None
    if forms is None:
        return None
    chained: dict[str, Any] = dict(schema)
    chained["steps"] = [forms, core_schema.nullable_schema(bounds)]
    return cast(CoreSchema, chained)


# The schema types `lenient_scalar_schema` checks bounds with.
_BOUNDS_TYPES = frozenset({"int", "float", "decimal"})


def _with_null_text_form(one_error: Any) -> dict[str, Any] | None:
    by_type = one_error["schema"]
    choices = by_type.get("choices") if by_type["type"] == "tagged-union" else None
    if not isinstance(choices, dict) or by_type.get("discriminator") is not type or str not in choices:
        return None
    text_forms = core_schema.union_schema([choices[str], _NULL_TEXT_AS_NONE], mode="left_to_right")
    widened: dict[str, Any] = dict(one_error)
    widened["schema"] = {**by_type, "choices": {**choices, str: text_forms}}
    return widened
