"""The lenient type family is declared once (issue 32, item 1): every scalar marker registers itself
for its plain type and says what it is, and each consumer's answer follows from that alone."""

from __future__ import annotations

import typing
from decimal import Decimal
from typing import Annotated, Optional, Union

import pytest
from pydantic import Field, TypeAdapter

import pydantic_lenient
from pydantic_lenient import lenient_annotation, render_annotation
from pydantic_lenient.schema.styles import apply_style
from pydantic_lenient.types.annotations import is_lenient, lenient_scalar
from pydantic_lenient.types.exact_leaves import ExactNumber
from pydantic_lenient.types.family import LenientScalar, named_aliases, scalar_marker_class
from pydantic_lenient.types.forms import SCALAR_STRING_FORMS
from pydantic_lenient.types.null_text import takes_strings
from pydantic_lenient.types.portable_rules import Rendering, rendering

PLAIN_TYPES = [int, float, bool, Decimal]


def _marker_class(plain: type) -> type[LenientScalar]:
    marker_class = scalar_marker_class(plain)
    assert marker_class is not None, plain
    return marker_class


@pytest.mark.parametrize("plain", PLAIN_TYPES, ids=lambda plain: plain.__name__)
def test_each_plain_scalar_has_one_marker_that_says_what_it_is(plain: type) -> None:
    marker_class = _marker_class(plain)
    assert marker_class.python_type is plain
    alias = getattr(pydantic_lenient, marker_class.alias_name)  # exported under the name it gives
    assert typing.get_args(alias)[0] is plain
    assert named_aliases()[marker_class()] == (marker_class.alias_name, alias)
    assert lenient_annotation(plain) is alias
    assert lenient_scalar(plain, ()) == marker_class.alias_name
    assert render_annotation(alias) == marker_class.alias_name
    # Its canonical JSON type is the one it says, first in its anyOf, and the style stage knows its string form.
    with rendering(Rendering.RESTYLED):
        schema = TypeAdapter(alias).json_schema()
    assert schema["anyOf"][0]["type"] == marker_class.json_type
    assert schema["anyOf"][1] == {"type": "string", "pattern": marker_class.string_pattern}
    assert SCALAR_STRING_FORMS[marker_class.string_pattern] == marker_class.json_type
    assert apply_style(schema, "type-array")["type"] == [marker_class.json_type, "string"]


@pytest.mark.parametrize("plain", PLAIN_TYPES, ids=lambda plain: plain.__name__)
def test_the_consumers_ask_the_marker(plain: type) -> None:
    alias = getattr(pydantic_lenient, _marker_class(plain).alias_name)
    assert is_lenient(typing.get_args(alias)[1:])
    assert not takes_strings(plain)  # a plain scalar's strings mean a value of it: "null" may be None
    assert not takes_strings(alias)
    # Beside str, a scalar takes only its own JSON type.
    assert lenient_annotation(Union[plain, str]) == Union[Annotated[plain, ExactNumber()], str]
    # Optional: the lenient form, and the string "null" (NullText) as None.
    optional = TypeAdapter(lenient_annotation(Optional[plain]))
    assert optional.validate_python("null") is None


def test_a_subclass_is_no_member_and_an_unregistered_type_is_none() -> None:
    class Money(Decimal):
        pass

    assert scalar_marker_class(Money) is None
    assert scalar_marker_class(str) is None
    assert scalar_marker_class("int") is None
    assert lenient_annotation(Money) is Money  # a lenient form would give a plain Decimal
    assert lenient_scalar(Money, ()) == "LenientDecimal"  # the audit still names the family


def test_rendering_writes_held_bounds_as_written_by_hand() -> None:
    for plain in (int, float, Decimal):
        made = lenient_annotation(Annotated[plain, Field(ge=1, le=5)])
        name = _marker_class(plain).alias_name
        assert render_annotation(made) == f"Annotated[{name}, Field(ge=1, le=5)]"
