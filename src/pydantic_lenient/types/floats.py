"""A float type that also takes its value as a string in JSON number syntax."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .bounds import PYDANTIC_BOUND_KEYWORDS, is_finite_number
from .family import LenientScalar
from .forms import JSON_NUMBER
from .scalar import (
    allows_inf_nan,
    effective_marker,
    exact_conversion,
    lenient_scalar_schema,
    read_inner,
    render_scalar,
    user_bounds,
    with_inner,
)

__all__ = ("LenientFloat",)

ERROR_TYPE = "lenient_float"


_MESSAGE = "Input should be a finite number, or a string holding one in JSON number syntax"


_FINITE = core_schema.float_schema(allow_inf_nan=False)
# An integer is read as one first: pydantic-core 2.33 refuses a JSON integer beyond 64 bits (10**21)
# as a float, though it takes the same int from Python.
_INTEGER = core_schema.chain_schema([core_schema.int_schema(strict=True), _FINITE])
# '1e999' matches the pattern and overflows to inf, which allow_inf_nan=False refuses.
_NUMBER_TEXT = core_schema.chain_schema(
    [
        core_schema.str_schema(pattern=JSON_NUMBER),
        exact_conversion(
            core_schema.float_schema(strict=False, allow_inf_nan=False),
            core_schema.chain_schema([core_schema.no_info_plain_validator_function(float), _FINITE]),
        ),
    ]
)


# The constraints pydantic puts in a float schema that the marker holds (it is finite already).
_FLOAT_CONSTRAINTS = frozenset({*PYDANTIC_BOUND_KEYWORDS, "allow_inf_nan"})
_LOWER = frozenset({"ge", "gt"})


@dataclass(frozen=True, slots=True)
class _LenientFloat(LenientScalar):
    """Marker for a finite float that may also arrive as the text of a JSON number.

    Bounds given here are checked natively after the value is read (the mapping puts
    ``Field(ge=...)`` here); the string form is not narrowed by them (README, exception 1).
    """

    python_type = float
    json_type = "number"
    alias_name = "LenientFloat"
    error_type = ERROR_TYPE
    string_pattern = JSON_NUMBER
    coerce_to = "float"
    bound_names = tuple(PYDANTIC_BOUND_KEYWORDS)

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    multiple_of: float | None = None

    def __post_init__(self) -> None:
        for name in PYDANTIC_BOUND_KEYWORDS:
            bound = getattr(self, name)
            if bound is not None and (not isinstance(bound, (int, float)) or isinstance(bound, bool)):
                raise TypeError(f"{name} must be a number or None, not {bound!r}")

    def _bounds(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in PYDANTIC_BOUND_KEYWORDS if getattr(self, name) is not None}

    def tightened(self, bounds: Iterable[tuple[str, Any]]) -> tuple[_LenientFloat, bool]:
        """This marker with ``bounds`` (``("gt", 0)``, ``("allow_inf_nan", False)``...) added, the
        tighter of two bounds of one kind winning; and whether it holds them all. It cannot hold a
        bound that is not a finite number, a second step, or ``allow_inf_nan=True``: those are left out."""
        held = self._bounds()
        whole = True
        for name, value in bounds:
            if name == "allow_inf_nan":
                whole = whole and not value  # False is what the marker does anyway
            elif not is_finite_number(value):
                whole = False
            elif name == "multiple_of":
                if held.get(name, value) != value:  # two steps do not combine exactly in floats
                    whole = False
                else:
                    held[name] = value
            elif name in held:
                held[name] = (max if name in _LOWER else min)(held[name], value)
            else:
                held[name] = value
        return _LenientFloat(**held), whole

    @classmethod
    def kept_reason(cls, metadata: tuple[Any, ...]) -> str | None:
        if allows_inf_nan(metadata):
            return "it allows NaN and Infinity, which LenientFloat refuses"
        return None

    @classmethod
    def exact_form(cls, bounds: CoreSchema | None) -> CoreSchema:
        # An int is read as one first: pydantic-core 2.33 takes no JSON integer beyond 64 bits as a float.
        as_float = core_schema.chain_schema([core_schema.int_schema(strict=True), core_schema.float_schema()])
        return lenient_scalar_schema(
            forms={int: as_float, float: core_schema.float_schema()},
            error_type="exact_float",
            message="Input should be a number",
            serialization="float",
            bounds=bounds,
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # The bounds written before this marker (a `Field(...)` default's) move into it, as they do
        # through the mapping; whatever else pydantic built from them checks the result afterwards.
        inner = read_inner(handler(source), "float", _FLOAT_CONSTRAINTS)
        marker, whole = self.tightened(inner.constraints.items())
        rest = inner.rest if whole else inner.schema
        return with_inner(marker._core_schema(), rest, inner.json_metadata, None if marker == self else marker)

    def _core_schema(self) -> CoreSchema:
        bounds = self._bounds()
        return lenient_scalar_schema(
            # pydantic-core's strict float also takes Decimal; an int too large for a double is refused.
            forms={float: _FINITE, int: _INTEGER, Decimal: _FINITE, str: _NUMBER_TEXT},
            bounds=core_schema.float_schema(strict=True, **bounds) if bounds else None,  # type: ignore[arg-type]
            error_type=ERROR_TYPE,
            message=_MESSAGE,
            serialization="float",
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # The marker as it took in the bounds written before it, if any.
        return effective_marker(schema, self)._json_schema(schema, handler)

    def _json_schema(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        added, annotations = user_bounds(handler, schema)
        own = {PYDANTIC_BOUND_KEYWORDS[name]: value for name, value in self._bounds().items()}
        canonical = {"type": "number", **own, **added}
        string_form = {"type": "string", "pattern": JSON_NUMBER}
        return render_scalar(handler, canonical, string_form, annotations)


LenientFloat = Annotated[float, _LenientFloat()]
"""A finite ``float`` that also accepts a string in JSON number syntax (``-1.5``, ``2e3``, ``10``).

Refuses booleans, NaN and Infinity in any spelling (as numbers or as strings), and strings with
whitespace, ``+``, leading zeros, a bare ``.``, ``_`` or non-ASCII digits.

>>> from pydantic import BaseModel
>>> from pydantic_lenient import LenientFloat, input_schema
>>> class Zoom(BaseModel):
...     factor: LenientFloat
>>> Zoom.model_validate({"factor": "2.5e-1"})
Zoom(factor=0.25)
>>> Zoom.model_validate({"factor": "NaN"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Zoom
factor
  Input should be a finite number, or a string holding one in JSON number syntax
  [type=lenient_float, input_value='NaN', input_type=str]
>>> input_schema(Zoom, style="type-array")["properties"]["factor"]
{'type': ['number', 'string'],
 'pattern': '^-?(?:0|[1-9][0-9]*)(?:\\\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$', 'title': 'Factor'}
"""
