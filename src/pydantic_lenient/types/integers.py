"""Integer types that also take their value as a string of ASCII digits."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

import annotated_types
from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .bounds import PYDANTIC_BOUND_KEYWORDS, integer_range
from .family import LenientScalar
from .forms import (
    MAX_DIGIT_STRING_LENGTH,
    NONNEGATIVE_OF_SIGNED,
    POSITIVE_DIGITS,
    SIGNED_DIGITS,
    UNSIGNED_DIGITS,
    narrowed_digit_pattern,
)
from .scalar import (
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

__all__ = (
    "LenientI8",
    "LenientI16",
    "LenientI32",
    "LenientI64",
    "LenientInt",
    "LenientPositiveInt",
    "LenientU8",
    "LenientU16",
    "LenientU32",
    "LenientU64",
    "LenientUInt",
)

ERROR_TYPE = "lenient_int"

# The constraints pydantic puts in an int schema, all of which the marker holds.
_INT_CONSTRAINTS = frozenset(PYDANTIC_BOUND_KEYWORDS)

_MESSAGES = {
    SIGNED_DIGITS: "Input should be an integer, or a string of ASCII digits with an optional leading '-'",
    UNSIGNED_DIGITS: "Input should be an integer or a string of ASCII digits",
}


def _integral_float_to_int(value: float) -> int:
    # JSON Schema's "integer" admits any number with no fractional part, such as 100.0 or 1e20.
    if value.is_integer():
        return int(value)
    raise form_error(ERROR_TYPE, "Input should have no fractional part")


# The most digits a Decimal may have before its point: as many as a digit string may (a Decimal
# such as 1E+999999999 would otherwise become an integer of a billion digits).
_MAX_DECIMAL_EXPONENT = MAX_DIGIT_STRING_LENGTH - 1


def _integral_decimal_to_int(value: Decimal) -> int:
    """A finite, integral Decimal as its exact int (never through a float, which would round it)."""
    if not value.is_finite() or value.adjusted() > _MAX_DECIMAL_EXPONENT or value != value.to_integral_value():
        raise form_error(ERROR_TYPE, "Input should be a finite integral number")
    return int(value)


# A digit string to its int: lax int parsing is the fast way; under strict=True, JSON parsing (which
# takes canonical digits) or else the builtin (leading zeros).
_DIGITS_TO_INT = exact_conversion(
    core_schema.int_schema(strict=False),
    core_schema.union_schema(
        [core_schema.json_schema(core_schema.int_schema()), core_schema.no_info_plain_validator_function(int)],
        mode="left_to_right",
    ),
)
_INTEGRAL_FLOAT = core_schema.no_info_after_validator_function(
    _integral_float_to_int, core_schema.float_schema(allow_inf_nan=False)
)


@dataclass(frozen=True, slots=True)
class _LenientInt(LenientScalar):
    """Marker for an integer that may also arrive as a string of ASCII digits.

    The string form follows from the lower bound: a sign is allowed only where negative values are.
    Leading zeros are allowed everywhere (``"007"`` is 7); a bound refuses the value, never its
    spelling (``"0"`` for a type starting at 1 is a range error, as ``0`` is).
    """

    python_type = int
    json_type = "integer"
    alias_name = "LenientInt"
    error_type = ERROR_TYPE
    string_pattern = SIGNED_DIGITS
    coerce_to = "int"
    bound_names = ("ge", "le", "multiple_of")

    ge: int | None = None
    le: int | None = None
    multiple_of: int | None = None

    def __post_init__(self) -> None:
        for name in ("ge", "le", "multiple_of"):
            bound = getattr(self, name)
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
                raise TypeError(f"{name} must be an int or None, not {bound!r}")
        if self.ge is not None and self.le is not None and self.ge > self.le:
            raise ValueError(f"ge ({self.ge}) must not be greater than le ({self.le})")
        if self.multiple_of is not None and self.multiple_of <= 0:
            raise ValueError(f"multiple_of must be positive, not {self.multiple_of}")

    @property
    def pattern(self) -> str:
        """The string form the validator checks before converting (and then the bounds)."""
        return SIGNED_DIGITS if self.ge is None or self.ge < 0 else UNSIGNED_DIGITS

    def tightened(self, bounds: Iterable[tuple[str, Any]]) -> tuple[_LenientInt, bool]:
        """This marker with ``bounds`` (``("ge", 1)``, ``("lt", 10)``, ``("multiple_of", 3)``...) added
        as inclusive integer bounds, the tighter one winning (steps combined by their lcm); and
        whether it holds them all. It cannot hold a bound that is not a finite number (a
        ``Decimal``), a step that is not a positive int, or bounds no integer meets: those are left
        out (an empty range leaves this marker as it is)."""
        step, whole = self.multiple_of, True
        others: list[tuple[str, Any]] = []
        for name, value in bounds:
            if name != "multiple_of":
                others.append((name, value))
            elif isinstance(value, int) and not isinstance(value, bool) and value > 0:
                step = value if step is None else math.lcm(step, value)
            else:
                whole = False
        lower, upper, unread = integer_range(others, self.ge, self.le)
        whole = whole and not unread
        if lower is not None and upper is not None and lower > upper:
            return self, False
        return _LenientInt(ge=lower, le=upper, multiple_of=step), whole

    @classmethod
    def suggested_name(cls, metadata: tuple[Any, ...]) -> str:
        lower = _lower_bound(metadata)
        if lower is not None and lower >= 1:
            return "LenientPositiveInt"
        return "LenientUInt" if lower is not None and lower >= 0 else "LenientInt"

    @classmethod
    def exact_form(cls, bounds: CoreSchema | None) -> CoreSchema:
        return lenient_scalar_schema(
            forms={
                int: core_schema.int_schema(),
                float: _INTEGRAL_FLOAT,
                Decimal: python_function(_integral_decimal_to_int),
            },
            error_type="exact_int",
            message="Input should be an integer",
            serialization="int",
            bounds=bounds,
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # The bounds written before this marker (a `Field(...)` default's) move into it, as they do
        # through the mapping; whatever else pydantic built from them checks the result afterwards.
        inner = read_inner(handler(source), "int", _INT_CONSTRAINTS)
        marker, whole = self.tightened(inner.constraints.items())
        rest = inner.rest if whole else inner.schema
        return with_inner(marker._core_schema(), rest, inner.json_metadata, None if marker == self else marker)

    def _core_schema(self) -> CoreSchema:
        bounded = self.ge is not None or self.le is not None or self.multiple_of is not None
        digits = core_schema.str_schema(pattern=self.pattern, max_length=MAX_DIGIT_STRING_LENGTH)
        return lenient_scalar_schema(
            forms={
                int: core_schema.int_schema(),
                # The pattern has already refused everything lax int parsing would also forgive
                # (whitespace, '_', '+', '1.0', non-ASCII digits); what is left is plain conversion.
                str: core_schema.chain_schema([digits, _DIGITS_TO_INT]),
                float: _INTEGRAL_FLOAT,  # JSON's 100.0 and 1e20, which JSON Schema's "integer" admits
                Decimal: python_function(_integral_decimal_to_int),  # exactly, never through a float
            },
            bounds=(
                core_schema.int_schema(strict=True, ge=self.ge, le=self.le, multiple_of=self.multiple_of)
                if bounded
                else None
            ),
            error_type=ERROR_TYPE,
            message=_MESSAGES[self.pattern],
            serialization="int",
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # The marker as it took in the bounds written before it, if any.
        return effective_marker(schema, self)._json_schema(schema, handler)

    def _json_schema(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        added, annotations = user_bounds(handler, schema)
        if self.multiple_of is not None:
            outside = added.get("multipleOf")
            if isinstance(outside, int) and not isinstance(outside, bool):
                added["multipleOf"] = math.lcm(self.multiple_of, outside)
            else:
                added["multipleOf"] = self.multiple_of
        lower, upper, others = integer_range(added.items(), self.ge, self.le)
        canonical: dict[str, Any] = {"type": "integer"}
        if lower is not None:
            canonical["minimum"] = lower
        if upper is not None:
            canonical["maximum"] = upper
        canonical.update(others)
        string_form = {"type": "string", "pattern": self._advertised_pattern(lower, upper)}
        return render_scalar(handler, canonical, string_form, annotations)

    def _advertised_pattern(self, lower: int | None, upper: int | None) -> str:
        """The marker's own pattern, narrowed to the strings whose value is in bounds: exactly where
        that stays short (`exact_digit_pattern`), else by the lower bound alone."""
        exact = narrowed_digit_pattern(self.pattern, lower, upper)
        if exact != self.pattern or upper is not None or lower is None:
            return exact
        if lower >= 1:
            return POSITIVE_DIGITS
        if lower == 0 and self.pattern == SIGNED_DIGITS:
            return NONNEGATIVE_OF_SIGNED
        return self.pattern


def _lower_bound(metadata: tuple[Any, ...]) -> float | None:
    for marker in metadata:
        if isinstance(marker, annotated_types.Ge):
            return float(marker.ge)  # type: ignore[arg-type]
        if isinstance(marker, annotated_types.Gt):
            return float(marker.gt) + 1  # type: ignore[arg-type]
    return None


LenientInt = Annotated[int, _LenientInt()]
"""An ``int`` that also accepts a string matching ``^-?[0-9]+$``.

Takes JSON integers and numbers with no fractional part (``100.0``); refuses booleans, fractions,
whitespace, ``+``, ``_``, non-ASCII digits, hex and exponents in strings.

>>> from pydantic import BaseModel
>>> from pydantic_lenient import LenientInt, input_schema
>>> class Scroll(BaseModel):
...     lines: LenientInt
>>> Scroll.model_validate({"lines": "-42"})
Scroll(lines=-42)
>>> Scroll.model_validate({"lines": "+42"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Scroll
lines
  Input should be an integer, or a string of ASCII digits with an optional leading '-'
  [type=lenient_int, input_value='+42', input_type=str]
>>> input_schema(Scroll, style="type-array")["properties"]["lines"]
{'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'title': 'Lines'}
"""

LenientUInt = Annotated[int, _LenientInt(ge=0)]
"""A non-negative ``int`` that also accepts a string matching ``^[0-9]+$``.

>>> from typing import Optional
>>> from pydantic import BaseModel
>>> from pydantic_lenient import LenientUInt, input_schema
>>> class Search(BaseModel):
...     limit: Optional[LenientUInt] = None
>>> Search.model_validate({"limit": "100"})
Search(limit=100)
>>> Search.model_validate({"limit": "-1"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Search
limit
  Input should be an integer or a string of ASCII digits [type=lenient_int, input_value='-1', input_type=str]
>>> input_schema(Search, style="type-array")["properties"]["limit"]
{'type': ['integer', 'string', 'null'], 'minimum': 0, 'pattern': '^[0-9]+$', 'default': None, 'title': 'Limit'}
"""

LenientPositiveInt = Annotated[int, _LenientInt(ge=1)]
"""An ``int`` of at least 1 that also accepts a string matching ``^0*[1-9][0-9]*$`` (``"007"`` is 7).

>>> from pydantic import BaseModel
>>> from pydantic_lenient import LenientPositiveInt, input_schema
>>> class Page(BaseModel):
...     number: LenientPositiveInt
>>> Page.model_validate({"number": "3"})
Page(number=3)
>>> Page.model_validate({"number": "0"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Page
number
  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0, input_type=int]
    For further information visit https://errors.pydantic.dev/.../v/greater_than_equal
>>> input_schema(Page, style="type-array")["properties"]["number"]
{'type': ['integer', 'string'], 'minimum': 1, 'pattern': '^0*[1-9][0-9]*$', 'title': 'Number'}
"""

LenientU8 = Annotated[int, _LenientInt(ge=0, le=2**8 - 1)]
"""An ``int`` from 0 to 255, or its digits as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientU8
>>> TypeAdapter(LenientU8).validate_python("255")
255
>>> TypeAdapter(LenientU8).validate_python("256")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be less than or equal to 255 [type=less_than_equal, input_value=256, input_type=int]
    For further information visit https://errors.pydantic.dev/.../v/less_than_equal
>>> TypeAdapter(LenientU8).json_schema()
{'anyOf': [{'maximum': 255, 'minimum': 0, 'type': 'number'},
           {'pattern': '^0*(?:0|[1-9][0-9]?|1[0-9]{2}|2(?:[0-4][0-9]|5[0-5]))$', 'type': 'string'}]}
"""

LenientU16 = Annotated[int, _LenientInt(ge=0, le=2**16 - 1)]
"""An ``int`` from 0 to 65535, or its digits as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientU16
>>> TypeAdapter(LenientU16).validate_python("65535")
65535
>>> TypeAdapter(LenientU16).validate_python(65536)
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be less than or equal to 65535 [type=less_than_equal, input_value=65536, input_type=int]
...
"""

LenientU32 = Annotated[int, _LenientInt(ge=0, le=2**32 - 1)]
"""An ``int`` from 0 to 4294967295, or its digits as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientU32
>>> TypeAdapter(LenientU32).validate_python("4294967295")
4294967295
>>> TypeAdapter(LenientU32).validate_python("4294967296")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be less than or equal to 4294967295 [type=less_than_equal, input_value=4294967296, input_type=int]
    For further information visit https://errors.pydantic.dev/.../v/less_than_equal
"""

LenientU64 = Annotated[int, _LenientInt(ge=0, le=2**64 - 1)]
"""An ``int`` from 0 to 18446744073709551615, or its digits as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientU64
>>> TypeAdapter(LenientU64).validate_python("18446744073709551615")
18446744073709551615
>>> TypeAdapter(LenientU64).validate_python("1e3")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be an integer or a string of ASCII digits [type=lenient_int, input_value='1e3', input_type=str]
"""

LenientI8 = Annotated[int, _LenientInt(ge=-(2**7), le=2**7 - 1)]
"""An ``int`` from -128 to 127, or its digits (with an optional ``-``) as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientI8
>>> TypeAdapter(LenientI8).validate_python("-128")
-128
>>> TypeAdapter(LenientI8).validate_python("-129")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be greater than or equal to -128 [type=greater_than_equal, input_value=-129, input_type=int]
    For further information visit https://errors.pydantic.dev/.../v/greater_than_equal
>>> TypeAdapter(LenientI8).json_schema()
{'anyOf': [{'maximum': 127, 'minimum': -128, 'type': 'number'},
           {'pattern': '^(?:0*(?:0|[1-9][0-9]?|1(?:[0-1][0-9]|2[0-7]))|-0*(?:[1-9][0-9]?|1(?:[0-1][0-9]|2[0-8]))|-0+)$',
            'type': 'string'}]}
"""

LenientI16 = Annotated[int, _LenientInt(ge=-(2**15), le=2**15 - 1)]
"""An ``int`` from -32768 to 32767, or its digits (with an optional ``-``) as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientI16
>>> TypeAdapter(LenientI16).validate_python("-32768")
-32768
>>> TypeAdapter(LenientI16).validate_python(True)
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be an integer, or a string of ASCII digits with an optional leading '-'
  [type=lenient_int, input_value=True, input_type=bool]
"""

LenientI32 = Annotated[int, _LenientInt(ge=-(2**31), le=2**31 - 1)]
"""An ``int`` from -2147483648 to 2147483647, or its digits (with an optional ``-``) as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientI32
>>> TypeAdapter(LenientI32).validate_python("2147483647")
2147483647
>>> TypeAdapter(LenientI32).validate_python("2_147")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be an integer, or a string of ASCII digits with an optional leading '-'
  [type=lenient_int, input_value='2_147', input_type=str]
"""

LenientI64 = Annotated[int, _LenientInt(ge=-(2**63), le=2**63 - 1)]
"""An ``int`` from -2**63 to 2**63 - 1, or its digits (with an optional ``-``) as a string.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import LenientI64
>>> TypeAdapter(LenientI64).validate_python("-9223372036854775808")
-9223372036854775808
>>> TypeAdapter(LenientI64).validate_python("9223372036854775808")
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
  Input should be less than or equal to 9223372036854775807
  [type=less_than_equal, input_value=9223372036854775808, input_type=int]
    For further information visit https://errors.pydantic.dev/.../v/less_than_equal
"""
