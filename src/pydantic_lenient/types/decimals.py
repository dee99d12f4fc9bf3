"""A decimal type that also takes its value as a string in JSON number syntax, exactly."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .family import LenientScalar
from .forms import JSON_NUMBER
from .scalar import (
    allows_inf_nan,
    effective_marker,
    exact_conversion,
    form_error,
    lenient_scalar_schema,
    python_function,
    read_inner,
    render_scalar,
    user_bounds,
    with_inner,
)

__all__ = ("LenientDecimal",)

ERROR_TYPE = "lenient_decimal"

_MESSAGE = "Input should be a finite number, or a string holding one in JSON number syntax"

_FINITE = core_schema.decimal_schema(allow_inf_nan=False)


def _to_decimal(value: int | float | str) -> Decimal:
    """A value as the decimal it spells (a float by its shortest text, as pydantic-core reads it)."""
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:  # an exponent beyond a Decimal's limits
        raise form_error(ERROR_TYPE, _MESSAGE) from None


# pydantic-core's lax conversion (the fast one) unless the caller passes strict=True, which would
# make it refuse anything but a Decimal; both give the same value.
_CONVERTED = exact_conversion(
    core_schema.decimal_schema(allow_inf_nan=False, strict=False),  # not made strict by a strict config
    core_schema.chain_schema([python_function(_to_decimal), _FINITE]),
)
# Plain pydantic's Decimal from an int or a float: refused in a strict pass (from Python), as plain.
_AS_PLAIN = core_schema.decimal_schema(allow_inf_nan=False)
# The pattern has refused whitespace, '+', '_', NaN, Infinity and non-ASCII digits, all of which
# Decimal() would read; what is left converts exactly, never through a float.
_NUMBER_TEXT = core_schema.chain_schema([core_schema.str_schema(pattern=JSON_NUMBER), _CONVERTED])

_BOUND_KEYWORDS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
_DIGIT_LIMITS = ("max_digits", "decimal_places")
# The constraints pydantic puts in a decimal schema that the marker holds (it is finite already).
_DECIMAL_CONSTRAINTS = frozenset({*_BOUND_KEYWORDS, *_DIGIT_LIMITS, "allow_inf_nan"})
_LOWER = frozenset({"ge", "gt"})


def _exact(bound: int | float | Decimal) -> Decimal:
    """A bound as the decimal a reader of its JSON means: a float by its shortest repr (0.1 is 0.1)."""
    return Decimal(repr(bound)) if isinstance(bound, float) else Decimal(bound)


def _is_finite_number(value: Any) -> bool:
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _json_number(bound: Decimal) -> int | float:
    """A bound as a JSON number: an int when integral, else the nearest double."""
    return int(bound) if bound == bound.to_integral_value() else float(bound)


def _advertised_bound(keyword: str, bound: Decimal) -> tuple[str, int | float]:
    """``(keyword, value)`` a host checks for the bound ``keyword=bound``: itself when a host holds it
    exactly (an integer, or the shortest text of a double: every number a host holds is a double, and
    a float is read by that text); else loosened to the nearest double on the safe side, inclusive,
    so that a host may accept a number the server refuses, never the reverse."""
    number = _json_number(bound)
    if isinstance(number, int) or Decimal(repr(number)) == bound:
        return keyword, number
    lower = keyword in ("minimum", "exclusiveMinimum")
    if lower and Decimal(repr(number)) > bound:
        number = math.nextafter(number, -math.inf)
    elif not lower and Decimal(repr(number)) < bound:
        number = math.nextafter(number, math.inf)
    return ("minimum" if lower else "maximum"), number


@dataclass(frozen=True, slots=True)
class _LenientDecimal(LenientScalar):
    """Marker for a finite ``Decimal`` that may also arrive as the text of a JSON number, read exactly.

    Bounds (``ge``...) are checked natively and advertised on the number branch; ``max_digits`` and
    ``decimal_places`` are checked natively and advertised nowhere (docs/guarantees.md, exceptions).
    """

    python_type = Decimal
    json_type = "number"
    alias_name = "LenientDecimal"
    error_type = ERROR_TYPE
    string_pattern = JSON_NUMBER
    # No normalizer coercion: its result must stay JSON (the proxy forwards it), and no JSON number
    # Python writes holds a decimal exactly; the string form is the exact one.
    coerce_to = None
    bound_names = (*_BOUND_KEYWORDS, *_DIGIT_LIMITS)

    ge: Decimal | None = None
    gt: Decimal | None = None
    le: Decimal | None = None
    lt: Decimal | None = None
    multiple_of: Decimal | None = None
    max_digits: int | None = None
    decimal_places: int | None = None

    def __post_init__(self) -> None:
        for name in _BOUND_KEYWORDS:
            bound = getattr(self, name)
            if bound is not None and not _is_finite_number(bound):
                raise TypeError(f"{name} must be a finite number or None, not {bound!r}")
        for name in _DIGIT_LIMITS:
            limit = getattr(self, name)
            if limit is not None and (type(limit) is not int or limit < 0):
                raise TypeError(f"{name} must be a non-negative int or None, not {limit!r}")

    @classmethod
    def kept_reason(cls, metadata: tuple[Any, ...]) -> str | None:
        if allows_inf_nan(metadata):
            return "it allows NaN and Infinity, which LenientDecimal refuses"
        return None

    @classmethod
    def exact_form(cls, bounds: CoreSchema | None) -> CoreSchema:
        # A union member: an int or a float is a Decimal as plain pydantic's decides, in the union's lax
        # pass only (`_AS_PLAIN`), so the member plain pydantic gives it (an IntEnum's, for 2) takes it first.
        return lenient_scalar_schema(
            forms={int: _AS_PLAIN, float: _AS_PLAIN, Decimal: _FINITE},
            error_type="exact_decimal",
            message="Input should be a number",
            serialization=None,
            bounds=bounds,
        )

    def tightened(self, bounds: Iterable[tuple[str, Any]]) -> tuple[_LenientDecimal, bool]:
        """This marker with ``bounds`` (``("gt", 0)``, ``("max_digits", 5)``...) added, the tighter of
        two of one kind winning; and whether it holds them all. It cannot hold a bound that is not a
        finite number, a second step, or ``allow_inf_nan=True``: those are left out."""
        held: dict[str, Any] = self.held_bounds()
        whole = True
        for name, value in bounds:
            if name == "allow_inf_nan":
                whole = whole and not value  # False is what the marker does anyway
            elif name in _DIGIT_LIMITS:
                if type(value) is int and value >= 0:
                    held[name] = min(held.get(name, value), value)
                else:
                    whole = False
            elif name not in _BOUND_KEYWORDS or not _is_finite_number(value):
                whole = False
            elif name == "multiple_of":
                if name in held and _exact(held[name]) != _exact(value):
                    whole = False  # two steps: pydantic checks the second
                else:
                    held[name] = value
            elif name in held:
                tighter = max if name in _LOWER else min
                held[name] = tighter(held[name], value, key=_exact)
            else:
                held[name] = value
        return _LenientDecimal(**held), whole

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # The bounds written before this marker (a `Field(...)` default's) move into it, as they do
        # through the mapping; whatever else pydantic built from them checks the result afterwards.
        inner = read_inner(handler(source), "decimal", _DECIMAL_CONSTRAINTS)
        marker, whole = self.tightened(inner.constraints.items())
        rest = inner.rest if whole else inner.schema
        return with_inner(marker._core_schema(), rest, inner.json_metadata, None if marker == self else marker)

    def _core_schema(self) -> CoreSchema:
        held = self.held_bounds()
        checks: dict[str, Any] = {
            name: (_exact(value) if name in _BOUND_KEYWORDS else value) for name, value in held.items()
        }
        return lenient_scalar_schema(
            # pydantic-core reads an int exactly and a float by its shortest repr; a bool is neither.
            forms={Decimal: _FINITE, int: _CONVERTED, float: _CONVERTED, str: _NUMBER_TEXT},
            bounds=core_schema.decimal_schema(**checks) if checks else None,
            error_type=ERROR_TYPE,
            message=_MESSAGE,
            serialization=None,  # as pydantic writes a Decimal: a string in JSON, nothing rounded
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # The marker as it took in the bounds written before it, if any.
        return effective_marker(schema, self)._json_schema(schema, handler)

    def _json_schema(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        added, annotations = user_bounds(handler, schema)
        for name in _DIGIT_LIMITS:  # pydantic's names, which no host reads: checked, not advertised
            annotations.pop(name, None)
        if handler.mode == "serialization":
            return {"type": "string", **annotations}  # pydantic writes a Decimal as its text
        held = {
            _BOUND_KEYWORDS[name]: _exact(value)
            for name, value in self.held_bounds().items()
            if name in _BOUND_KEYWORDS
        }
        # pydantic writes a Decimal bound applied after the marker as its text.
        outside = {key: Decimal(value) if isinstance(value, str) else value for key, value in added.items()}
        canonical: dict[str, Any] = {"type": "number"}
        for keyword, value in {**held, **outside}.items():
            if keyword == "multipleOf":
                step = _exact(value) if _is_finite_number(value) else None
                if step is not None and step == step.to_integral_value():
                    canonical[keyword] = int(step)
                # A fractional step is checked, not advertised: hosts divide in doubles, where 0.07
                # is no multiple of 0.01, and would refuse what the server takes.
            elif not isinstance(value, Decimal):
                canonical[keyword] = value
            else:
                advertised, number = _advertised_bound(keyword, value)
                canonical[advertised] = number
        string_form = {"type": "string", "pattern": JSON_NUMBER}
        return render_scalar(handler, canonical, string_form, annotations)


LenientDecimal = Annotated[Decimal, _LenientDecimal()]
"""A finite ``Decimal`` that also accepts a string in JSON number syntax (``"100.5"``, ``"-2e3"``),
converted exactly: ``"0.1"`` is ``Decimal("0.1")``, never the float nearest to it.

Refuses booleans, NaN and Infinity in any spelling, and strings with whitespace, ``+``, leading
zeros, a bare ``.``, ``_`` or non-ASCII digits.

>>> from pydantic import BaseModel
>>> from pydantic_lenient import LenientDecimal, input_schema
>>> class Invoice(BaseModel):
...     amount: LenientDecimal
>>> Invoice.model_validate({"amount": "100.10"})
Invoice(amount=Decimal('100.10'))
>>> Invoice.model_validate({"amount": "1_000"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Invoice
amount
  Input should be a finite number, or a string holding one in JSON number syntax
  [type=lenient_decimal, input_value='1_000', input_type=str]
>>> input_schema(Invoice, style="type-array")["properties"]["amount"]
{'type': ['number', 'string'],
 'pattern': '^-?(?:0|[1-9][0-9]*)(?:\\\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$', 'title': 'Amount'}
"""
