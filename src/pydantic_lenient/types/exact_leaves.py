"""Leaves the mapping does not widen, validated so that they take nothing their schema refuses.

pydantic's lax mode takes values a leaf's JSON Schema refuses: ``true`` as 1 for an ``int`` kept
beside ``str``, a Unix time for a ``datetime`` (``"type": "string"``), ``"2"`` for an ``IntEnum``
(``"type": "integer"``). The mapping puts one of these markers on such a leaf:

* `DigitText` on an integer ``Literal`` or an ``IntEnum``: its members, and their digit strings
  (the commonest wrong-typed form), both advertised; never a boolean.
* `ExactNumber` on an ``int``, ``float`` or ``bool`` kept as it is beside ``str``: only its own
  JSON type (an integral float for ``int``, as JSON Schema's ``"integer"`` admits).
* `FromText` on a date, time, duration or UUID: only its string form (or, from Python, an instance).
"""

from __future__ import annotations

import datetime
import enum
import typing
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .annotations import split_annotated
from .family import LenientMarker, scalar_marker_class
from .forms import ANNOTATION_KEYWORDS, members_digit_pattern
from .integers import LenientInt
from .scalar import render_scalar

__all__ = ("DigitText", "ExactNumber", "FromText", "exact_leaf", "integer_choices")

# Leaves whose JSON Schema is ``"type": "string"`` but whose lax validation also takes numbers.
_TEXT_LEAVES = (datetime.datetime, datetime.date, datetime.time, datetime.timedelta, uuid.UUID)


def integer_choices(base: Any) -> tuple[int, ...] | None:
    """The values of an integer ``Literal`` or an ``IntEnum`` (None for anything else)."""
    if typing.get_origin(base) is Literal:
        values = typing.get_args(base)
    elif isinstance(base, type) and issubclass(base, enum.Enum) and issubclass(base, int):
        values = tuple(member.value for member in base)
    else:
        return None
    if not values or not all(type(value) is int for value in values):
        return None
    return tuple(values)


def exact_leaf(base: Any) -> Any:
    """The marker that makes ``base`` exact, or None when lax validation already matches its schema."""
    if integer_choices(base) is not None:
        return DigitText()
    if isinstance(base, type) and issubclass(base, _TEXT_LEAVES):
        return FromText()
    return None


@dataclass(frozen=True, slots=True)
class DigitText(LenientMarker):
    """Marker for an integer ``Literal`` or ``IntEnum`` that also takes its members' digit strings.

    >>> from typing import Annotated, Literal
    >>> from pydantic import TypeAdapter
    >>> from pydantic_lenient import DigitText
    >>> adapter = TypeAdapter(Annotated[Literal[1, 2, 3], DigitText()])
    >>> adapter.validate_python("2"), adapter.validate_json("3")
    (2, 3)
    >>> adapter.json_schema()  # the portable shape: the Gemini API takes only string enums
    {'anyOf': [{'maximum': 3, 'minimum': 1, 'type': 'number'}, {'pattern': '^(?:0*1|0*2|0*3)$', 'type': 'string'}]}
    >>> adapter.validate_python(True)
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
    """

    strings_as_text = False  # its strings are its members' digits

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        base, _ = split_annotated(source)
        if integer_choices(base) is None:
            raise TypeError(f"DigitText() needs an integer Literal or an IntEnum, not {source!r}")
        exact = handler(source)
        as_integer = core_schema.chain_schema([handler.generate_schema(LenientInt), exact])
        if isinstance(base, type):  # an IntEnum: its members themselves, from Python
            return core_schema.union_schema([core_schema.is_instance_schema(base), as_integer], mode="left_to_right")
        return as_integer

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        rendered = handler(schema)
        annotations = {key: value for key, value in rendered.items() if key in ANNOTATION_KEYWORDS}
        values = _choices_of(schema)
        return render_scalar(
            handler,
            {"type": "integer", "enum": list(values)},
            {"type": "string", "pattern": members_digit_pattern(values)},
            annotations,
        )


def _choices_of(schema: CoreSchema) -> tuple[int, ...]:
    """The integer values the last step of ``schema`` (a literal or enum schema) takes."""
    inner: Any = schema
    while True:
        if inner["type"] == "union":
            inner = inner["choices"][-1]
        elif inner["type"] == "chain":
            inner = inner["steps"][-1]
        elif inner["type"] in ("definitions", "definition-ref") and "schema" in inner:
            inner = inner["schema"]
        else:
            break
    if inner["type"] == "literal":
        return tuple(inner["expected"])
    if inner["type"] == "enum":
        return tuple(member.value for member in inner["members"])
    raise TypeError(f"DigitText() cannot read the choices of a {inner['type']} schema")


@dataclass(frozen=True, slots=True)
class ExactNumber(LenientMarker):
    """Marker for an ``int``, ``float`` or ``bool`` kept as it is beside ``str`` in a union: only its
    own JSON type, so ``true`` is never 1 and 1 never ``true`` (its strings go to ``str``).

    >>> from typing import Annotated, Union
    >>> from pydantic import TypeAdapter
    >>> from pydantic_lenient import ExactNumber
    >>> adapter = TypeAdapter(Union[Annotated[int, ExactNumber()], str])
    >>> adapter.validate_json("true")
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 2 validation errors for ...
    >>> adapter.validate_json("7"), adapter.validate_json('"7"')
    (7, '7')
    """

    strings_as_text = False  # its strings go to the union's ``str``

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        base, _ = split_annotated(source)
        # pydantic's own schema of the source, with what was written before this marker (bounds, a
        # validator): checked after the exact form, so nothing is lost (and skipped when it is plain).
        own = handler(source)
        bounds = None if _is_plain(own) else own
        marker_class = scalar_marker_class(base)
        if marker_class is not None:
            exact: CoreSchema = marker_class.exact_form(bounds)
            return exact
        raise TypeError(f"ExactNumber() needs a plain number or boolean type (int, float, bool...), not {source!r}")

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        if schema["type"] == "bool":
            return {"type": "boolean"}
        if schema["type"] == "chain":  # what is checked after the exact form says the type too
            return _without_text_branch(handler(schema["steps"][-1]))
        return {"type": "integer" if schema.get("serialization", {}).get("type") == "int" else "number"}


def _without_text_branch(rendered: JsonSchemaValue) -> JsonSchemaValue:
    """pydantic's schema of a bounded number, less the string form it advertises for a Decimal: the
    exact form takes the number only (its strings go to the union's ``str``)."""
    branches = rendered.get("anyOf")
    if not isinstance(branches, list):
        return rendered
    numbers = [branch for branch in branches if not (isinstance(branch, dict) and branch.get("type") == "string")]
    rest = {key: value for key, value in rendered.items() if key != "anyOf"}
    return {**rest, **numbers[0]} if len(numbers) == 1 else {**rest, "anyOf": numbers}


def _is_plain(schema: CoreSchema) -> bool:
    """Whether ``schema`` is a bare scalar schema (``int``, ``decimal``...), a description aside: no
    constraint to check after the exact form."""
    return set(schema) <= {"type", "metadata"}


@dataclass(frozen=True, slots=True)
class FromText(LenientMarker):
    """Marker for a date, time, duration or UUID: only its string form (or, from Python, an
    instance), as its schema (``"type": "string"``) says; never a Unix time or a number of seconds.

    >>> import datetime
    >>> from typing import Annotated
    >>> from pydantic import TypeAdapter
    >>> from pydantic_lenient import FromText
    >>> adapter = TypeAdapter(Annotated[datetime.date, FromText()])
    >>> adapter.validate_json('"2024-05-01"')
    datetime.date(2024, 5, 1)
    >>> adapter.validate_json("0")
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        exact = handler(source)
        instance = {**exact, "strict": True}
        text = core_schema.chain_schema([core_schema.str_schema(strict=True), exact])
        either = core_schema.union_schema([instance, text], mode="left_to_right")
        return core_schema.custom_error_schema(
            {**either, "serialization": exact.get("serialization")} if "serialization" in exact else either,
            custom_error_type=f"exact_{exact['type']}",
            custom_error_message=f"Input should be a valid {exact['type']} string",
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        inner: Any = schema
        while inner["type"] in ("custom-error", "union"):
            inner = inner["schema"] if inner["type"] == "custom-error" else inner["choices"][0]
        return handler(inner)
