"""The annotation is the authority for any Python value: what the lenient scalars take from Python.

Every lenient scalar decides by the value's exact type, so the same value gets the same verdict, and
the same result, with ``strict=`` None, True or False and under ``ConfigDict(strict=True)``, alone,
Optional and inside a user's union. Objects JSON cannot carry (``Fraction``, ``numpy.bool_``, objects
with ``__index__`` or ``__float__``) are refused with the type's error, never rounded.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib.util
import typing
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional, Union

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ConfigDict, TypeAdapter, ValidationError, create_model
from pydantic_core import SchemaValidator, core_schema

import pydantic_lenient as pl
from pydantic_lenient.types.family import LenientScalar
from tests.contract import SCALAR_TYPES
from tests.strategies import any_input


def _error_type(annotation: Any) -> str:
    """The one error type of the lenient scalar in ``annotation``: its marker says it."""
    return next(marker.error_type for marker in typing.get_args(annotation)[1:] if isinstance(marker, LenientScalar))


class Index:
    """An object with ``__index__`` (as ``operator.index`` reads it), worth more than a double holds."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Index({self.value})"


class AsFloat:
    def __float__(self) -> float:
        return 7.0

    def __repr__(self) -> str:
        return "AsFloat()"


class Priority(enum.IntEnum):
    HIGH = 7


class Word(str, enum.Enum):
    TRUE = "true"


class Digits(str):
    pass


# Values JSON cannot carry, each refused by every lenient scalar whatever the strictness.
REFUSED_EVERYWHERE: list[Any] = [
    Fraction(7, 1),
    Fraction(1, 2),
    Index(7),
    Index(2**53 + 1),
    AsFloat(),
    Priority.HIGH,
    Word.TRUE,
    Digits("7"),
    b"7",
    bytearray(b"7"),
    object(),
    complex(7, 0),
]
if importlib.util.find_spec("numpy") is not None:
    import numpy

    REFUSED_EVERYWHERE += [numpy.bool_(True), numpy.int64(2**53 + 1), numpy.int64(2**63 - 1), numpy.float32(7.0)]


python_values = st.one_of(
    any_input,
    st.sampled_from(REFUSED_EVERYWHERE),
    st.integers().map(Index),
    st.fractions(),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.floats(),
    st.sampled_from([Decimal("7"), Decimal("7.0"), Decimal("-0"), Decimal("sNaN"), Decimal("1E+999999999")]),
    st.integers(min_value=2**53, max_value=2**70).map(Decimal),
)


@functools.cache
def _adapters(name: str, wrapping: str) -> dict[str, TypeAdapter[Any]]:
    annotation = SCALAR_TYPES[name][0]
    wrapped = {"alone": annotation, "Optional": Optional[annotation], "Union[T, None]": Union[annotation, None]}[
        wrapping
    ]
    strict_config = create_model("StrictConfig", __config__=ConfigDict(strict=True), value=(wrapped, ...))
    return {"plain": TypeAdapter(wrapped), "config": TypeAdapter(strict_config)}


def _outcome(validate: Any) -> tuple[str, Any]:
    try:
        result = validate()
    except ValidationError as error:
        return "refused", [detail["type"] for detail in error.errors()]
    result = getattr(result, "value", result)
    return "taken", (type(result), repr(result))


@pytest.mark.parametrize("wrapping", ["alone", "Optional", "Union[T, None]"])
@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@given(value=python_values)
def test_any_python_value_gets_one_verdict_under_every_strictness(name: str, wrapping: str, value: Any) -> None:
    adapters = _adapters(name, wrapping)
    outcomes: dict[str, tuple[str, Any]] = {
        f"strict={strict}": _outcome(lambda strict=strict: adapters["plain"].validate_python(value, strict=strict))
        for strict in (None, True, False)
    }
    outcomes["config"] = _outcome(lambda: adapters["config"].validate_python({"value": value}))
    assert len({repr(outcome) for outcome in outcomes.values()}) == 1, (value, outcomes)


def _value_id(value: Any) -> str:
    """The value's repr, without an address: pytest-xdist needs the same ids in every worker."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("name", list(SCALAR_TYPES))
@pytest.mark.parametrize("value", REFUSED_EVERYWHERE, ids=_value_id)
def test_objects_json_cannot_carry_are_refused_with_the_types_error(name: str, value: Any) -> None:
    annotation, _ = SCALAR_TYPES[name]
    for strict in (None, True, False):
        with pytest.raises(ValidationError) as raised:
            TypeAdapter(annotation).validate_python(value, strict=strict)
        assert [error["type"] for error in raised.value.errors()] == [_error_type(annotation)]


@pytest.mark.parametrize("strict", [None, True, False])
def test_big_integers_are_never_rounded_through_a_float(strict: bool | None) -> None:
    adapter = TypeAdapter(pl.LenientInt)
    assert adapter.validate_python(2**53 + 1, strict=strict) == 2**53 + 1
    assert adapter.validate_python(Decimal(2**53 + 1), strict=strict) == 2**53 + 1
    assert adapter.validate_python(str(2**63 - 1), strict=strict) == 2**63 - 1
    assert TypeAdapter(pl.LenientI64).validate_python(2**63 - 1, strict=strict) == 2**63 - 1
    for refused in (Decimal("7.5"), Decimal("NaN"), Decimal("Infinity"), Decimal("1E+999999999")):
        with pytest.raises(ValidationError, match="lenient_int"):
            adapter.validate_python(refused, strict=strict)


@pytest.mark.parametrize("strict", [None, True, False])
def test_inside_a_users_union_the_lenient_member_keeps_its_rules(strict: bool | None) -> None:
    """The issue's two cases: strict=False reached the lenient type's inner lax conversion."""
    with pytest.raises(ValidationError):
        TypeAdapter(Union[pl.StrictBoolish, int]).validate_python("yes", strict=strict)
    with pytest.raises(ValidationError):
        TypeAdapter(Union[pl.LenientInt, str]).validate_python(True, strict=strict)
    assert TypeAdapter(Union[pl.StrictBoolish, int]).validate_python("FALSE", strict=strict) is False
    assert TypeAdapter(Union[pl.LenientInt, list[int]]).validate_python("7", strict=strict) == 7


@pytest.mark.parametrize("strict", [None, True, False])
def test_json_input_is_decided_the_same_way(strict: bool | None) -> None:
    adapter = TypeAdapter(Optional[pl.LenientU64])
    assert adapter.validate_json('"18446744073709551615"', strict=strict) == 2**64 - 1
    assert adapter.validate_json("7.0", strict=strict) == 7
    assert adapter.validate_json("null", strict=strict) is None
    for refused in ("true", '"7.0"', '" 7"', "[7]"):
        with pytest.raises(ValidationError, match="lenient_int"):
            adapter.validate_json(refused, strict=strict)


# Any str at all, lone surrogates included (hypothesis leaves out category Cs unless asked).
any_text = st.text(st.characters(codec=None, categories=["Cs", "Nd", "Lu", "Ll", "Po", "Zs", "Cc", "Sm"]))
ALL_LENIENT_TYPES: dict[str, Any] = {
    **{name: annotation for name, (annotation, _) in SCALAR_TYPES.items()},
    "LenientJson[list[str]]": pl.LenientJson[list[str]],
    "LenientJson[dict[str, LenientUInt]]": pl.LenientJson[dict[str, pl.LenientUInt]],
    "JsonText": pl.JsonText,
    "JsonText[list[LenientInt]]": pl.JsonText[list[pl.LenientInt]],
}
nested = st.recursive(
    python_values | any_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(any_text, children, max_size=3),
    max_leaves=6,
)


@pytest.mark.parametrize("name", list(ALL_LENIENT_TYPES))
@given(value=st.one_of(any_text, any_text.map(lambda text: f'["{text}"]'), nested))
def test_nothing_but_validation_error_escapes(name: str, value: Any) -> None:
    adapter = TypeAdapter(ALL_LENIENT_TYPES[name])
    for strict in (None, True, False):
        with contextlib.suppress(ValidationError):
            adapter.validate_python(value, strict=strict)


@pytest.mark.parametrize("raw", [[float("nan")], {"a": float("inf")}, [[1.0, -float("inf")]]], ids=repr)
def test_json_text_never_writes_nan_or_infinity(raw: Any) -> None:
    for annotation in (pl.JsonText, pl.JsonText[Any]):
        with pytest.raises(ValidationError, match="NaN or Infinity"):
            TypeAdapter(annotation).validate_python(raw)


@pytest.mark.parametrize("text", ['["\ud800"]', "\udfff", '{"\ud800": 1}'])
def test_text_with_a_lone_surrogate_is_a_validation_error(text: str) -> None:
    for annotation in (pl.JsonText, pl.LenientJson[list[str]], pl.JsonText[list[str]]):
        with pytest.raises(ValidationError, match="lenient_json"):
            TypeAdapter(annotation).validate_python(text)


def test_pydantics_json_parser_refuses_integers_of_more_than_4300_digits() -> None:
    """README, "The contract", exception 7: pinned, so a change in pydantic is noticed."""
    adapter = TypeAdapter(pl.LenientInt)
    huge = 10**4300  # 4,301 digits, built without a str conversion
    assert adapter.validate_python(huge) == huge
    with pytest.raises(ValidationError):
        adapter.validate_json(b"1" + b"0" * 4300)
    assert adapter.validate_json(b"9" * 4300) == int("9" * 4300)


def test_pydantic_core_lets_an_explicit_strict_false_reach_every_native_check() -> None:
    """Why the scalars dispatch on ``type(value)`` (a callable discriminator) rather than on a native
    union of strict schemas behind ``lax_or_strict``, which would be about 15 ns per field faster
    (`benchmarks/bench_dispatch.py`). Pinned, so a pydantic-core that changes this is noticed.

    Under ``strict=False`` at validation time every native check turns lax, and inside a smart union
    ``lax_or_strict`` still tries its strict branch first, in lax mode: a strict ``int`` there takes
    ``True`` as 1. No native schema tells ``True`` from ``1`` in lax mode.
    """
    strict_int = core_schema.int_schema(strict=True)
    assert SchemaValidator(strict_int).validate_python(True, strict=False) == 1
    routed = core_schema.lax_or_strict_schema(
        lax_schema=core_schema.none_schema(), strict_schema=strict_int, strict=True
    )
    in_a_union = SchemaValidator(core_schema.union_schema([routed, core_schema.str_schema()]))
    assert in_a_union.validate_python(True, strict=False) == 1  # the strict branch, run lax
    with pytest.raises(ValidationError):
        SchemaValidator(routed).validate_python(True, strict=False)  # alone: the lax branch
    # The lenient types keep their verdict in the same place.
    with pytest.raises(ValidationError):
        TypeAdapter(Union[pl.LenientInt, str]).validate_python(True, strict=False)
