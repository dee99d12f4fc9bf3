"""A boolean type that also takes the strings "true" and "false", and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .boolean_text import BOOLEAN_WORDS, TRUE_OR_FALSE
from .family import LenientScalar
from .scalar import exact_conversion, lenient_scalar_schema, read_inner, render_scalar, user_bounds, with_inner

__all__ = ("StrictBoolish",)

ERROR_TYPE = "lenient_bool"

_MESSAGE = "Input should be a boolean, or the string 'true' or 'false' in any letter case"


# Lax bool parsing would also take 'yes', 'on', '1'; the pattern has already refused them.
_TRUE_OR_FALSE_TEXT = core_schema.chain_schema(
    [
        core_schema.str_schema(pattern=TRUE_OR_FALSE),
        exact_conversion(
            core_schema.bool_schema(strict=False),
            core_schema.no_info_plain_validator_function(BOOLEAN_WORDS.__getitem__),
        ),
    ]
)


@dataclass(frozen=True, slots=True)
class _StrictBoolish(LenientScalar):
    """Marker for a bool that may also arrive as the string 'true' or 'false'."""

    python_type = bool
    json_type = "boolean"
    alias_name = "StrictBoolish"
    error_type = ERROR_TYPE
    string_pattern = TRUE_OR_FALSE
    coerce_to = "bool"

    @classmethod
    def exact_form(cls, bounds: CoreSchema | None) -> CoreSchema:
        exact = core_schema.bool_schema(strict=True)
        return exact if bounds is None else core_schema.chain_schema([exact, bounds])

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        own = lenient_scalar_schema(
            forms={bool: core_schema.bool_schema(), str: _TRUE_OR_FALSE_TEXT},
            error_type=ERROR_TYPE,
            message=_MESSAGE,
            serialization="bool",
        )
        # What pydantic built from the metadata written before this marker (a validator, `Strict()`)
        # checks the result afterwards; a bool has no constraint to take in.
        inner = read_inner(handler(source), "bool", frozenset())
        return with_inner(own, inner.rest, inner.json_metadata, None)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        _, annotations = user_bounds(handler, schema)
        string_form = {"type": "string", "pattern": TRUE_OR_FALSE}
        return render_scalar(handler, {"type": "boolean"}, string_form, annotations)


StrictBoolish = Annotated[bool, _StrictBoolish()]
"""A ``bool`` that also accepts the strings ``"true"`` and ``"false"`` in any ASCII letter case.

Nothing else: not ``"yes"``, ``"on"``, ``"1"``, ``1`` or ``""``. No truthiness anywhere, so
``"false"`` is always False.

>>> from pydantic import BaseModel
>>> from pydantic_lenient import StrictBoolish, input_schema
>>> class Move(BaseModel):
...     dry_run: StrictBoolish = True
>>> Move.model_validate({"dry_run": "FALSE"})
Move(dry_run=False)
>>> Move.model_validate({"dry_run": "no"})
Traceback (most recent call last):
  ...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Move
dry_run
  Input should be a boolean, or the string 'true' or 'false' in any letter case
  [type=lenient_bool, input_value='no', input_type=str]
>>> input_schema(Move, style="type-array")["properties"]["dry_run"]
{'type': ['boolean', 'string'], 'pattern': '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$', 'default': True,
 'title': 'Dry Run'}
"""
