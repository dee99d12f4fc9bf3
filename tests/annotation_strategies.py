"""Hypothesis strategies for annotations as people write them, as source text, with values around them.

An `Annotation` is the source of one tool parameter's annotation (and the classes it needs), how a
hand-written lenient form of it reads where one exists, and a strategy for the JSON values worth
sending it: native values, their string forms, JSON text, ``"null"``, and values at and past each
bound. Tests write it into a module (`module_source`) and import that module from a file, so the
codemod can rewrite the very source the annotation came from.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, NamedTuple

from hypothesis import strategies as st

# Every module the tests write starts with these imports; the names the annotations use.
MODULE_HEADER = """\
import dataclasses
import enum
from datetime import date
from decimal import Decimal
from typing import Annotated, Literal, Optional, Union

import annotated_types
from pydantic import BaseModel, Field, confloat, conint, constr
from typing_extensions import TypedDict

from pydantic_lenient import LenientDecimal, LenientFloat, LenientInt, StrictBoolish
"""


class Annotation(NamedTuple):
    source: str
    """The annotation as its author wrote it."""
    values: st.SearchStrategy[Any]
    """JSON values worth sending it."""
    classes: tuple[str, ...] = ()
    """Source of the classes it refers to, innermost first."""
    hand_written: str | None = None
    """The same annotation written with the lenient types, where such a form exists (scalars,
    optionals and unions of them)."""
    bare: str | None = None
    """For a constrained scalar: the scalar without its constraints, which can then be written
    outside an ``Optional`` (``Annotated[Optional[int], Field(ge=1)]``) or in ``Field(None, ...)``."""
    hand_bare: str | None = None
    constraints: str | None = None
    """The constraints as ``Field`` keyword arguments (``ge=1, le=500``)."""


class Parameter(NamedTuple):
    """A tool's one parameter: ``value: annotation [= default]``."""

    annotation: Annotation
    written: str
    """``annotation`` or ``annotation = Field(None, ...)``, as the parameter is written."""
    hand_written: str | None


def _text_forms(value: Any) -> st.SearchStrategy[Any]:
    """A value, its string form and its JSON text: the wrong-typed forms hosts send."""
    forms: list[Any] = [value, json.dumps(value)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        forms += [str(value), f" {value}", float(value) if isinstance(value, int) else value]
    return st.sampled_from(forms)


def _forms_of(natives: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return natives.flatmap(_text_forms)


def _edges(low: float | None, high: float | None, step: float) -> list[float]:
    edges: list[float] = [0, 1, -1]
    for bound in (low, high):
        if bound is not None:
            edges += [bound - step, bound, bound + step]
    return edges


def _keywords(pairs: list[tuple[str, Any]]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in pairs)


@st.composite
def _number(draw: st.DrawFn, kind: str) -> Annotation:
    """``int`` or ``float`` with any of the bounds pydantic accepts, written any of the ways people write them."""
    integral = kind == "int"
    low = draw(st.none() | (st.integers(-5, 5) if integral else st.sampled_from([0, 0.5, -1.5])))
    span = draw(st.none() | (st.integers(0, 600) if integral else st.sampled_from([1.0, 100.0])))
    high = None if span is None else (low or 0) + span
    pairs: list[tuple[str, Any]] = []
    if low is not None:
        pairs.append((draw(st.sampled_from(["ge", "gt"])), low))
    if high is not None:
        pairs.append((draw(st.sampled_from(["le", "lt"])), high))
    if (draw(st.booleans()) and not pairs) or draw(st.integers(0, 4)) == 0:
        pairs.append(("multiple_of", 2 if integral else 0.5))
    step = 1 if integral else 0.5
    natives = st.sampled_from(_edges(low, high, step)).map(lambda edge: int(edge) if integral else float(edge))
    # Numbers as models write them, to six decimals: pydantic checks a float's multiple_of within
    # machine epsilon, where JSON Schema validators are exact (docs/contract.md lists it), so a
    # value a hair from a multiple (1e-308 for 0.5) is pydantic's own mismatch, not ours.
    floats = st.floats(-1e3, 1e3, allow_nan=False).map(lambda number: round(number, 6))
    natives = natives | (st.integers(-1000, 1000) if integral else floats)
    values = _forms_of(natives) | st.sampled_from([True, False, None, "null", "", "1.5", "1e3", "0x10"])
    lenient = "LenientInt" if integral else "LenientFloat"
    if not pairs:
        return Annotation(kind, values, hand_written=lenient)
    keywords = _keywords(pairs)
    style = draw(st.sampled_from(["Field", "annotated_types", "con"]))
    if style == "Field":
        source = f"Annotated[{kind}, Field({keywords})]"
    elif style == "annotated_types":
        markers = {"ge": "Ge", "gt": "Gt", "le": "Le", "lt": "Lt", "multiple_of": "MultipleOf"}
        source = f"Annotated[{kind}, " + ", ".join(f"annotated_types.{markers[n]}({v!r})" for n, v in pairs) + "]"
    else:
        source = f"con{kind}({keywords})"
    hand = f"Annotated[{lenient}, Field({keywords})]"
    return Annotation(source, values, hand_written=hand, bare=kind, hand_bare=lenient, constraints=keywords)


_DECIMAL_VALUES = st.sampled_from(
    [0, 1, -1, 7, 99, 100, 101, 1.5, "1.5", "0.10", "-0", "100", "99.9999999999999999999"]
)
_DECIMAL_VALUES |= st.sampled_from([" 1", "+1", "1_0", "1e2", "NaN", "Infinity", "\u0663", True, None, "null", "", []])


@st.composite
def _decimal(draw: st.DrawFn) -> Annotation:
    """``Decimal``, bare or with exact bounds, written with ``Field`` or annotated-types."""
    pairs = draw(st.sampled_from([[], [("ge", 0), ("lt", 100)], [("gt", -1)], [("le", 100)], [("multiple_of", 1)]]))
    if not pairs:
        return Annotation("Decimal", _DECIMAL_VALUES, hand_written="LenientDecimal")
    keywords = _keywords(pairs)
    markers = {"ge": "Ge", "gt": "Gt", "le": "Le", "lt": "Lt", "multiple_of": "MultipleOf"}
    source = draw(
        st.sampled_from(
            [
                f"Annotated[Decimal, Field({keywords})]",
                "Annotated[Decimal, " + ", ".join(f"annotated_types.{markers[n]}({v!r})" for n, v in pairs) + "]",
            ]
        )
    )
    hand = f"Annotated[LenientDecimal, Field({keywords})]"
    return Annotation(
        source, _DECIMAL_VALUES, hand_written=hand, bare="Decimal", hand_bare="LenientDecimal", constraints=keywords
    )


@st.composite
def _string(draw: st.DrawFn) -> Annotation:
    pairs: list[tuple[str, Any]] = []
    low = draw(st.none() | st.integers(0, 3))
    high = draw(st.none() | st.integers(3, 6))
    if low is not None:
        pairs.append(("min_length", low))
    if high is not None:
        pairs.append(("max_length", high))
    if draw(st.booleans()):
        pairs.append(("pattern", "^[a-z]+$"))
    values = st.text("ab1 Z", max_size=8) | st.sampled_from([1, None, "null", True, "a" * 7])
    if not pairs:
        return Annotation("str", values, hand_written="str")
    keywords = _keywords(pairs)
    source = draw(st.sampled_from([f"Annotated[str, Field({keywords})]", f"constr({keywords})"]))
    return Annotation(
        source,
        values,
        hand_written=f"Annotated[str, Field({keywords})]",
        bare="str",
        hand_bare="str",
        constraints=keywords,
    )


_BOOLEAN_VALUES = st.sampled_from([True, False, "true", "FALSE", "tRuE", "yes", 0, 1, "1", None, "null", "false "])
_INT_LITERAL_VALUES = st.sampled_from([1, 2, 3, 4, "2", " 2", 2.0, True, None, "null", "two"])
_STR_LITERAL_VALUES = st.sampled_from(["a", "b", "c", "A", 1, None, "null", '"a"'])


@st.composite
def _leaf(draw: st.DrawFn, counter: itertools.count[int]) -> Annotation:
    kind = draw(
        st.sampled_from(
            ["int", "int", "float", "decimal", "bool", "str", "int_literal", "str_literal", "enum", "int_enum"]
        )
    )
    if kind in ("int", "float"):
        return draw(_number(kind))
    if kind == "decimal":
        return draw(_decimal())
    if kind == "str":
        return draw(_string())
    if kind == "bool":
        return Annotation("bool", _BOOLEAN_VALUES, hand_written="StrictBoolish")
    if kind == "int_literal":
        return Annotation("Literal[1, 2, 3]", _INT_LITERAL_VALUES)  # no hand-written lenient form
    if kind == "str_literal":
        return Annotation('Literal["a", "b"]', _STR_LITERAL_VALUES, hand_written='Literal["a", "b"]')
    name = f"Choice{next(counter)}"
    if kind == "enum":
        source = f'class {name}(enum.Enum):\n    A = "a"\n    B = "b"\n'
        return Annotation(name, _STR_LITERAL_VALUES, (source,), hand_written=name)
    source = f"class {name}(enum.IntEnum):\n    ONE = 1\n    TWO = 2\n"
    return Annotation(name, _INT_LITERAL_VALUES, (source,))  # no hand-written lenient form


def _is_lenient_scalar(hand_written: str | None) -> bool:
    """A hand-written lenient number or boolean: a union of those is written as is (a union with
    a member that takes text stays strict in the mapping, so it has no hand-written lenient form)."""
    return hand_written is not None and hand_written.startswith(("Lenient", "Annotated[Lenient", "StrictBoolish"))


def _optional(member: Annotation, written: str, outside: bool) -> Annotation:
    """``member`` or None, with the member's constraints inside or outside the optional."""
    hand: str | None
    if outside and member.constraints is not None:
        source = f"Annotated[{written.format(member.bare)}, Field({member.constraints})]"
        hand = f"Annotated[{written.format(member.hand_bare)}, Field({member.constraints})]"
    else:
        source = written.format(member.source)
        hand = None if member.hand_written is None else written.format(member.hand_written)
    values = member.values | st.sampled_from([None, "null"])
    return Annotation(source, values, member.classes, hand_written=hand)


@st.composite
def _field_list(draw: st.DrawFn, counter: itertools.count[int], depth: int) -> tuple[list[Annotation], list[str]]:
    members = draw(st.lists(annotations_with(counter, depth - 1), min_size=1, max_size=2))
    return members, [f"f{index}" for index in range(len(members))]


def _record_values(names: list[str], members: list[Annotation]) -> st.SearchStrategy[Any]:
    records = st.fixed_dictionaries({}, optional=dict(zip(names, (m.values for m in members), strict=True)))
    return records | records.map(json.dumps) | st.sampled_from([None, "null", [], "{}", '{"f0": '])


def annotations_with(counter: itertools.count[int], depth: int) -> st.SearchStrategy[Annotation]:
    """Annotations nested at most ``depth`` deep; ``counter`` numbers the classes they define."""
    if depth <= 0:
        return _leaf(counter)
    return st.one_of(_leaf(counter), _composite(counter, depth))


@st.composite
def _composite(draw: st.DrawFn, counter: itertools.count[int], depth: int) -> Annotation:
    kind = draw(
        st.sampled_from(
            ["optional", "optional", "union", "list", "dict", "tuple", "set", "model", "typeddict", "dataclass"]
        )
    )
    if kind == "optional":
        member = draw(annotations_with(counter, depth - 1))
        written = draw(st.sampled_from(["Optional[{}]", "Union[{}, None]", "{} | None"]))
        return _optional(member, written, outside=draw(st.booleans()))
    if kind == "union":
        first, second = draw(st.lists(_leaf(counter), min_size=2, max_size=2))
        hand = None
        if all(_is_lenient_scalar(member.hand_written) for member in (first, second)):
            hand = f"Union[{first.hand_written}, {second.hand_written}]"
        return Annotation(
            f"Union[{first.source}, {second.source}]",
            first.values | second.values,
            first.classes + second.classes,
            hand_written=hand,
        )
    if kind in ("list", "tuple", "set"):
        member = draw(_leaf(counter) if kind == "set" else annotations_with(counter, depth - 1))
        container = {"list": "list[{}]", "tuple": "tuple[{}, ...]", "set": "set[{}]"}[kind].format(member.source)
        lengths = draw(st.sampled_from([None, "min_length=1", "max_length=2", "min_length=1, max_length=3"]))
        source = container if lengths is None else f"Annotated[{container}, Field({lengths})]"
        items = st.lists(member.values, max_size=4)
        return Annotation(source, items | items.map(json.dumps) | st.sampled_from(["[", None, {}]), member.classes)
    if kind == "dict":
        member = draw(annotations_with(counter, depth - 1))
        mapping = st.dictionaries(st.sampled_from(["a", "b", "c"]), member.values, max_size=3)
        return Annotation(f"dict[str, {member.source}]", mapping | mapping.map(json.dumps), member.classes)
    members, names = draw(_field_list(counter, depth))
    name = f"{kind.capitalize()}{next(counter)}"
    fields = "".join(f"    {field}: {member.source}\n" for field, member in zip(names, members, strict=True))
    header = {
        "model": f"class {name}(BaseModel):\n",
        "typeddict": f"class {name}(TypedDict):\n",
        "dataclass": f"@dataclasses.dataclass\nclass {name}:\n",
    }[kind]
    classes = tuple(source for member in members for source in member.classes)
    return Annotation(name, _record_values(names, members), (*classes, header + fields))


@st.composite
def parameters(draw: st.DrawFn, depth: int = 2) -> Parameter:
    """One tool parameter: an annotation, sometimes with its constraints in its default:
    ``Field(None, ...)`` on an optional, ``Field(..., ...)`` on the bare type."""
    counter = itertools.count()
    annotation = draw(annotations_with(counter, depth))
    if annotation.constraints is not None and draw(st.booleans()):
        written = draw(st.sampled_from(["Optional[{}]", "{} | None", "{}"]))
        if written == "{}":
            # The hand-written form keeps its constraints in the annotation: after a lenient type,
            # a default's constraints come first to pydantic, and the type builds its schema without them.
            default = f" = Field(..., {annotation.constraints})"
            return Parameter(
                annotation._replace(source=str(annotation.bare)), f"{annotation.bare}{default}", annotation.hand_written
            )
        optional = _optional(annotation, written, outside=False)
        default = f" = Field(None, {annotation.constraints})"
        return Parameter(
            optional._replace(source=written.format(annotation.bare)),
            written.format(annotation.bare) + default,
            written.format(annotation.hand_bare) + default,
        )
    return Parameter(annotation, annotation.source, annotation.hand_written)


def module_source(parameter: Parameter, *, hand_written: bool = False) -> str:
    """A module with the parameter's classes, a tool function ``tool(value)`` and a model ``Tool``."""
    written = parameter.hand_written if hand_written else parameter.written
    assert written is not None
    classes = "\n\n".join(dict.fromkeys(parameter.annotation.classes))
    return (
        f"{MODULE_HEADER}\n\n{classes}\n\n"
        f'def tool(value: {written}) -> str:\n    """A tool."""\n    return "done"\n\n\n'
        f"class Tool(BaseModel):\n    value: {written}\n"
    )
