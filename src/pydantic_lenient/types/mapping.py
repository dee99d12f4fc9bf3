"""The lenient form of any annotation, without editing it: `lenient_annotation`, ``Lenient[T]``,
and `lenient_model` come from one mapping, and so does the `lenient_tool` decorator (`tools.py`).

* A plain scalar becomes the lenient type the family registers for it (`types.family`): ``int``
  `LenientInt` (`LenientUInt`, `LenientPositiveInt` or a sized form when the bounds are exactly
  that type's), ``float`` `LenientFloat`, ``bool`` `StrictBoolish`, ``Decimal`` `LenientDecimal`;
  bounds move into the marker, other metadata (``Field(...)``, annotated-types) is kept after it.
* Arrays and objects (``list``, ``tuple``, ``set``, ``frozenset``, ``dict``, models, TypedDicts,
  dataclasses) also take their JSON text, and their members are mapped the same way. A model,
  TypedDict or dataclass with a member to change becomes a subclass with lenient fields.
* ``Optional`` and unions are mapped member by member, unless another member takes strings too
  (``int | str``): then "1" could mean either, and the union stays as it is.
  An ``Optional`` none of whose other members takes the very string ``"null"`` as itself gets
  `NullText` (the one ``"null"`` policy, docs/types.md#the-string-null): a ``Literal`` or enum too.
* ``str``, ``bytes``, ``Literal``, enums, dates, UUIDs and everything else stay exactly as they are.
* What a lenient form could not rebuild to take every value it took with the same result stays
  exactly as written, recorded with the reason: ``Json[...]``, ``Field(strict=True)``, a
  discriminated union whose tags are not all strings, and a model with a ``before`` or ``wrap``
  model validator (it may take a string, which the lenient form would read as JSON text first).

What the mapping leaves strict although a wrong-typed argument would break it is recorded with the
reason (`lenient_form`), which the audit reports. `render_annotation` writes an annotation as
source text, for suggestions and the codemod.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Discriminator, Json
from pydantic.fields import FieldInfo

from .annotations import (
    ARRAYS,
    UNION_TYPES,
    is_lenient,
    is_structured,
    lenient_scalar_class,
    split_annotated,
    with_metadata,
)
from .constraints import is_strict, split_constraints, with_bounds_in_marker
from .exact_leaves import ExactNumber, exact_leaf
from .family import LenientScalar, named_aliases, scalar_marker_class
from .json_values import AcceptJsonText
from .lenient_classes import CLASSES_LOCK, LENIENT_CLASSES, ORIGINALS, lenient_class
from .null_text import NullText, takes_null_text, takes_strings
from .rendering import render_annotation

__all__ = ("KeptAsIs", "Lenient", "LenientForm", "lenient_annotation", "lenient_form", "lenient_model")

_M = TypeVar("_M", bound=type)
_ANNOTATED: Any = Annotated  # subscripted with run-time values below
_JSON: Any = Json  # the class pydantic's ``Json[T]`` puts in the metadata


@dataclass(frozen=True)
class KeptAsIs:
    """A part of an annotation that a wrong-typed argument would break, left strict, and why.

    >>> from pydantic_lenient import lenient_form
    >>> lenient_form(int | str).kept
    (KeptAsIs(annotation=int | str, reason=...),)
    """

    annotation: Any
    reason: str


@dataclass(frozen=True)
class LenientForm:
    """What `lenient_form` returns: the lenient annotation, and the parts it had to leave as they were.

    >>> from pydantic_lenient import LenientInt, lenient_form
    >>> form = lenient_form(list[int])
    >>> form.kept
    ()
    >>> form.annotation
    typing.Annotated[list[typing.Annotated[int, _LenientInt(ge=None, le=None, multiple_of=None)]], AcceptJsonText(...)]
    """

    annotation: Any
    kept: tuple[KeptAsIs, ...]


def lenient_annotation(annotation: Any) -> Any:
    """The lenient form of ``annotation`` (see the module docs); itself when nothing changes.

    ``lenient_annotation(int) is LenientInt``, and
    ``lenient_annotation(Annotated[int, Field(ge=1, le=500)])`` is
    ``Annotated[LenientInt, Field(ge=1, le=500)]``: the very types written by hand, so they
    validate as fast.

    >>> from typing import Optional
    >>> from pydantic import TypeAdapter
    >>> from pydantic_lenient import LenientInt, lenient_annotation
    >>> lenient_annotation(int) is LenientInt
    True
    >>> adapter = TypeAdapter(lenient_annotation(Optional[bool]))
    >>> adapter.validate_python("TRUE"), adapter.validate_python(None)
    (True, None)
    >>> adapter.validate_python("yes")
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ...
      Input should be a boolean, or the string 'true' or 'false' in any letter case
      [type=lenient_bool, input_value='yes', input_type=str]
    >>> lenient_annotation(str) is str
    True
    """
    return lenient_form(annotation).annotation


def lenient_form(annotation: Any) -> LenientForm:
    """`lenient_annotation`, with the parts kept strict (a union with ``str``, an ``int`` subclass...).

    >>> from typing import Optional
    >>> from pydantic_lenient import lenient_form, render_annotation
    >>> form = lenient_form(dict[str, Optional[int | str]])
    >>> render_annotation(form.annotation)
    'LenientJson[dict[str, Optional[Annotated[int, ExactNumber()] | str]]]'
    >>> [kept.reason for kept in form.kept]
    ["str already takes any string, so a string such as '1' could be meant for either member"]
    """
    mapper = _Mapper()
    return LenientForm(mapper.map(annotation), tuple(mapper.kept))


def lenient_model(model: _M) -> _M:
    """A subclass of ``model`` (a pydantic model, TypedDict or dataclass) whose fields are lenient.

    The same class for the same ``model`` each time; ``model`` itself when no field changes. The
    subclass keeps the name, config, validators and field settings (defaults, aliases,
    descriptions). A field that refers back to a model being made lenient keeps that model.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import input_schema, lenient_model
    >>> class Search(BaseModel):
    ...     folder: str
    ...     limit: int = 10
    >>> LenientSearch = lenient_model(Search)
    >>> LenientSearch.model_validate({"folder": "Dev", "limit": "100"})
    Search(folder='Dev', limit=100)
    >>> LenientSearch.model_validate({"folder": "Dev", "limit": "ten"})
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Search
    limit
      Input should be an integer, or a string of ASCII digits with an optional leading '-'
      [type=lenient_int, input_value='ten', input_type=str]
    >>> input_schema(LenientSearch, style="type-array")["properties"]["limit"]
    {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'default': 10, 'title': 'Limit'}
    """
    mapper = _Mapper()
    result: _M = mapper.structure(model)
    return result


if TYPE_CHECKING:
    from typing_extensions import TypeVar as _DefaultTypeVar

    _T = _DefaultTypeVar("_T", default=Any)
    Lenient = Annotated[_T, ...]
else:

    class Lenient:
        """``Lenient[T]``: the lenient form of ``T`` (`lenient_annotation`); type checkers see ``T``.

        ``Lenient[Optional[int]]`` is ``Optional[LenientInt]``; ``Lenient[SearchInput]`` is the
        model with lenient fields, which also takes its JSON text.

        >>> from pydantic import BaseModel
        >>> from pydantic_lenient import Lenient
        >>> class Move(BaseModel):
        ...     uids: Lenient[list[int]]
        ...     dry_run: Lenient[bool] = True
        >>> Move.model_validate({"uids": '["17", 18]', "dry_run": "false"})
        Move(uids=[17, 18], dry_run=False)
        >>> Move.model_validate({"uids": [17], "dry_run": "0"})
        Traceback (most recent call last):
          ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for Move
        dry_run
          Input should be a boolean, or the string 'true' or 'false' in any letter case
          [type=lenient_bool, input_value='0', input_type=str]
        """

        def __class_getitem__(cls, item: Any) -> Any:
            return lenient_annotation(item)


class _Mapper:
    """One walk of the mapping; ``kept`` collects what it had to leave strict."""

    def __init__(self) -> None:
        self.kept: list[KeptAsIs] = []
        self.in_progress: set[type] = set()

    def map(self, annotation: Any, *, text: bool = True) -> Any:
        """The lenient form of ``annotation``. ``text``: arrays and objects also take their JSON text."""
        base, metadata = split_annotated(annotation)
        if is_lenient(metadata):
            return with_bounds_in_marker(annotation, base, metadata)
        unfaithful = _cannot_rebuild(base, metadata)
        if unfaithful is not None:  # a lenient form would refuse or misread what this takes: kept whole
            self.kept.append(KeptAsIs(annotation, unfaithful))
            return annotation
        marker_class = scalar_marker_class(base)
        if marker_class is not None:
            return self.scalar(annotation, base, metadata, marker_class)
        origin = typing.get_origin(base)
        if origin in UNION_TYPES:
            return self.union(annotation, base, metadata)
        if is_structured(base):
            return self.structured(annotation, base, metadata, text=text)
        leaf = exact_leaf(base)
        if leaf is not None and not any(isinstance(marker, type(leaf)) for marker in metadata):
            return with_metadata(base, (*metadata, leaf))
        self.note_strict_lookalike(annotation, base)
        return annotation

    def scalar(self, annotation: Any, base: Any, metadata: tuple[Any, ...], marker_class: type[LenientScalar]) -> Any:
        kept = tuple(marker for marker in metadata if marker is not None and not is_strict(marker))
        reason = marker_class.kept_reason(kept)
        if reason is not None:
            self.kept.append(KeptAsIs(annotation, reason))
            return annotation
        made = with_bounds_in_marker(with_metadata(base, kept), base, kept)
        _, made_metadata = split_annotated(made)
        if len(made_metadata) == 1 and made_metadata[0] in named_aliases():
            return named_aliases()[made_metadata[0]][1]  # the very public alias (`LenientUInt`)
        return made

    def union(self, annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
        members = typing.get_args(base)
        others = [member for member in members if member is not type(None)]
        split = split_constraints(metadata)
        if len(others) == 1 and (split.numeric or split.lengths):
            # pydantic applies constraints on an Optional to its one other member: so does the
            # mapping, where they can ride in that member's marker and be advertised on it.
            inner = with_metadata(others[0], (*split.numeric, *split.lengths))
            return self.map(with_metadata(typing.Optional[inner], split.rest))
        string_members = [member for member in members if takes_strings(member)]
        mapped = [
            _exact_number(member)
            if string_members and _is_scalar(member)
            else self.map(member, text=not string_members)
            for member in members
        ]
        if string_members and any(_is_scalar(member) for member in members):
            self.kept.append(
                KeptAsIs(
                    annotation,
                    f"{render_annotation(string_members[0])} already takes any string, "
                    "so a string such as '1' could be meant for either member",
                )
            )
        null_text = (
            type(None) in members
            and not any(takes_null_text(member) for member in members)
            and not any(isinstance(marker, NullText) for marker in metadata)
        )
        if all(new is old for new, old in zip(mapped, members, strict=True)) and not null_text:
            return annotation
        union: Any = typing.Union[tuple(mapped)]
        # No other member takes the string "null" as itself, so it can only mean None (`NULL_TEXT`).
        return with_metadata(union, (*metadata, NullText()) if null_text else metadata)

    def structured(self, annotation: Any, base: Any, metadata: tuple[Any, ...], *, text: bool) -> Any:
        new_base = self.structure(base)
        takes_text = any(isinstance(marker, AcceptJsonText) for marker in metadata)
        if takes_text or not text:
            return annotation if new_base is base else with_metadata(new_base, metadata)
        # After the other metadata, so that constraints (min_length) apply to both forms.
        parts = (new_base, *metadata, AcceptJsonText())
        return _ANNOTATED[parts]

    def structure(self, base: Any) -> Any:
        """``base`` with its members lenient (not taking JSON text itself)."""
        origin = typing.get_origin(base)
        arguments = typing.get_args(base)
        if origin in ARRAYS:
            if not arguments:
                return base
            mapped = tuple(argument if argument is Ellipsis else self.map(argument) for argument in arguments)
            return base if mapped == arguments else origin[mapped if len(mapped) > 1 else mapped[0]]
        if origin is dict:
            if len(arguments) != 2:
                return base
            value = self.map(arguments[1])
            return base if value is arguments[1] else dict[arguments[0], value]  # type: ignore[valid-type]
        if not isinstance(base, type):
            return base
        with CLASSES_LOCK:
            if base in LENIENT_CLASSES:
                return LENIENT_CLASSES[base]
            if base in ORIGINALS:  # already lenient
                return base
            if base in self.in_progress:
                self.kept.append(KeptAsIs(base, f"{base.__name__} refers to itself; the inner reference keeps it"))
                return base
            self.in_progress.add(base)
            try:
                made = lenient_class(base, self.map)
            finally:
                self.in_progress.discard(base)
            if made is not base:
                LENIENT_CLASSES[base] = made
                ORIGINALS[made] = base
            return made

    def note_strict_lookalike(self, annotation: Any, base: Any) -> None:
        """Record a number or boolean that the mapping leaves alone, so the audit can say why."""
        marker_class = lenient_scalar_class(base)
        if marker_class is not None:
            family = marker_class.python_type.__name__
            self.kept.append(
                KeptAsIs(
                    annotation, f"{base.__name__} is a subclass of {family}; a lenient form would give a plain {family}"
                )
            )
        elif hasattr(base, "__supertype__"):  # typing.NewType
            self.kept.append(KeptAsIs(annotation, f"{base.__name__} is a NewType; write its lenient form by hand"))


def _cannot_rebuild(base: Any, metadata: tuple[Any, ...]) -> str | None:
    """Why the mapping cannot rebuild ``Annotated[base, *metadata]`` so that it takes every value it
    took with the same result (so it is left exactly as written), or None."""
    for marker in metadata:
        if isinstance(marker, _JSON):
            return "Json[...] parses the string itself; a lenient form would read it as something else"
        if isinstance(marker, FieldInfo) and any(is_strict(inner) and inner.strict for inner in marker.metadata):
            return "Field(strict=True) asks for the exact type, and a Field cannot be rebuilt without it"
        discriminator = marker.discriminator if isinstance(marker, (FieldInfo, Discriminator)) else None
        if discriminator is not None and not _string_tags(base, discriminator):
            return "a discriminated union needs Literal tags, which its lenient members would not keep"
    if isinstance(base, type):
        decorators = getattr(base, "__pydantic_decorators__", None)
        model_validators = decorators.model_validators.values() if decorators is not None else ()
        if any(validator.info.mode in ("before", "wrap") for validator in model_validators):
            return (
                f"{base.__name__} has a model validator that runs before its fields and may take a string;"
                " a lenient form would read a string as JSON text first"
            )
    return None


def _string_tags(union: Any, discriminator: Any) -> bool:
    """Whether every member of ``union`` is a model whose ``discriminator`` field is a ``Literal`` of
    strings (which its lenient subclass keeps as they are)."""
    if not isinstance(discriminator, str):
        discriminator = getattr(discriminator, "discriminator", None)
    if not isinstance(discriminator, str):
        return False  # a function picks the member: it may look at what a lenient form would change
    for member in typing.get_args(union):
        fields = getattr(member, "model_fields", None)
        tag = fields.get(discriminator) if isinstance(fields, dict) else None
        if tag is None or typing.get_origin(tag.annotation) is not Literal:
            return False
        if not all(isinstance(value, str) for value in typing.get_args(tag.annotation)):
            return False
    return True


def _exact_number(member: Any) -> Any:
    """A number or boolean kept beside ``str``, taking only its own JSON type (never ``true`` as 1)."""
    base, metadata = split_annotated(member)
    if is_lenient(metadata) or any(isinstance(marker, ExactNumber) for marker in metadata):
        return member
    return with_metadata(base, (*metadata, ExactNumber()))


def _is_scalar(member: Any) -> bool:
    return scalar_marker_class(split_annotated(member)[0]) is not None
