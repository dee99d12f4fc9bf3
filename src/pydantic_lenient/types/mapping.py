"""The lenient form of any annotation, without editing it: `lenient_annotation`, ``Lenient[T]``,
`lenient_model` and the `lenient_tool` decorator all come from one mapping.

* ``int`` becomes `LenientInt` (`LenientUInt`, `LenientPositiveInt` or a sized form when the
  bounds are exactly that type's), ``float`` `LenientFloat`, ``bool`` `StrictBoolish`; bounds and
  other metadata (``Field(...)``, annotated-types, ``conint``) are kept after the marker.
* Arrays and objects (``list``, ``tuple``, ``set``, ``frozenset``, ``dict``, models, TypedDicts,
  dataclasses) also take their JSON text, and their members are mapped the same way. A model,
  TypedDict or dataclass with a member to change becomes a subclass with lenient fields.
* ``Optional`` and unions are mapped member by member, unless another member takes strings too
  (``int | str``): then "1" could mean either, and the union stays as it is.
* ``str``, ``bytes``, ``Literal``, enums, dates, UUIDs and everything else stay exactly as they are.

What the mapping leaves strict although a wrong-typed argument would break it is recorded with the
reason (`lenient_form`), which the audit reports. `render_annotation` writes an annotation as
source text, for suggestions and the codemod.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import threading
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import annotated_types
from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler, create_model
from pydantic.dataclasses import is_pydantic_dataclass
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema
from typing_extensions import NotRequired, Required
from typing_extensions import TypedDict as TypedDictType

from . import integers
from .annotations import ARRAYS, is_structured, is_typeddict, split_annotated
from .booleans import StrictBoolish, _StrictBoolish
from .constraints import float_marker, int_marker, is_strict, split_constraints
from .floats import LenientFloat, _LenientFloat
from .integers import LenientInt, _LenientInt
from .json_values import AcceptJsonText, JsonTextOf

__all__ = (
    "KeptAsIs",
    "Lenient",
    "LenientForm",
    "NullText",
    "lenient_annotation",
    "lenient_form",
    "lenient_model",
    "lenient_tool",
    "pattern_with_null",
    "render_annotation",
)

_F = TypeVar("_F", bound=Callable[..., Any])
_M = TypeVar("_M", bound=type)
_ANNOTATED: Any = Annotated  # subscripted with run-time values below
_UNION_TYPES = (typing.Union, types.UnionType)
_SCALAR_MARKERS = (_LenientInt, _LenientFloat, _StrictBoolish, JsonTextOf)
_BOUNDS = (annotated_types.Ge, annotated_types.Gt, annotated_types.Le, annotated_types.Lt)

# Integer aliases by their inclusive bounds (a field whose only metadata is exactly these bounds
# becomes the named type), and every scalar alias's name by its marker, for rendering.
_NAMED_INTEGERS: dict[tuple[int | None, int | None], Any] = {}
_ALIAS_NAMES: dict[Any, str] = {_LenientFloat(): "LenientFloat", _StrictBoolish(): "StrictBoolish"}
for _name in integers.__all__:
    if typing.get_origin(getattr(integers, _name)) is not Annotated:  # the module's functions
        continue
    _marker = typing.get_args(getattr(integers, _name))[1]
    _NAMED_INTEGERS[_marker.ge, _marker.le] = getattr(integers, _name)
    _ALIAS_NAMES[_marker] = _name


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
    'LenientJson[dict[str, Optional[int | str]]]'
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
    >>> input_schema(LenientSearch)["properties"]["limit"]
    {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'default': 10, 'title': 'Limit'}
    """
    mapper = _Mapper()
    result: _M = mapper.structure(model)
    return result


def lenient_tool(function: _F) -> _F:
    """Decorator: ``function`` with every parameter annotation replaced by its lenient form.

    Frameworks that build a tool's input from the signature (the MCP SDK, FastMCP, pydantic-ai,
    the OpenAI Agents SDK, LangChain) then see lenient parameters; the source keeps ``int``. The
    wrapper keeps the name, docstring and ``__wrapped__``, is a coroutine function when
    ``function`` is one, and has the rewritten ``__signature__`` and ``__annotations__``.

    >>> from pydantic_lenient import lenient_tool, tool_catalog
    >>> @lenient_tool
    ... def move_messages(uids: list[int], dry_run: bool = True) -> str:
    ...     return f"{'would move' if dry_run else 'moved'} {uids}"
    >>> tool_catalog([move_messages])["tools"][0]["inputSchema"]["properties"]["dry_run"]["type"]
    ['boolean', 'string']
    >>> move_messages([1, 2], dry_run=False)  # the function itself runs unchanged
    'moved [1, 2]'
    """
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as error:  # an annotation that does not resolve
        raise TypeError(f"cannot read the annotations of {function!r}: {error}") from None
    signature = inspect.signature(function)
    annotations: dict[str, Any] = dict(hints)
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.name in hints:
            hint, default = _constraints_from_default(hints[parameter.name], parameter.default)
            annotations[parameter.name] = lenient_annotation(hint)
            parameter = parameter.replace(annotation=annotations[parameter.name], default=default)
        parameters.append(parameter)
    returned = hints.get("return", signature.return_annotation)

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await function(*args, **kwargs)

    else:

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

    # functools.wraps shares the original's dict; the wrapper gets its own.
    wrapper.__annotations__ = annotations
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=returned
    )
    return typing.cast(_F, wrapper)


def _constraints_from_default(hint: Any, default: Any) -> tuple[Any, Any]:
    """A ``Field(None, ge=1)`` default's constraints moved into the annotation, where the mapping
    puts them in the lenient marker (pydantic would apply them after it, or to an Optional's member,
    as Python after-validators whose JSON schema uses pydantic's own names)."""
    if not isinstance(default, FieldInfo):
        return hint, default
    split = split_constraints((default,))
    if not (split.numeric or split.lengths):
        return hint, default
    rest = split.rest[0] if split.rest else inspect.Parameter.empty
    return _with_metadata(hint, (*split.numeric, *split.lengths)), rest


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


def _null_text_to_none(value: Any) -> Any:
    return None if value == "null" else value


@dataclass(frozen=True, slots=True)
class NullText:
    """Marker for a nullable field none of whose other forms is a string: the string ``"null"``
    (as some hosts send for ``anyOf [integer, null]``) is taken as None, and the advertised
    schema admits it. The mapping adds it to ``Optional[...]`` whose other members are lenient
    numbers, booleans or JSON-text structures; ``Optional[str]`` never gets it.

    >>> from typing import Annotated, Optional
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, NullText
    >>> class Search(BaseModel):
    ...     limit: Annotated[Optional[LenientUInt], NullText()] = 10
    >>> Search.model_validate({"limit": "null"})
    Search(limit=None)
    >>> class Note(BaseModel):
    ...     text: Annotated[Optional[str], NullText()]
    Traceback (most recent call last):
      ...
    TypeError: NullText() on Optional[str] is refused: ...
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        base, _ = split_annotated(source)
        members = typing.get_args(base) if typing.get_origin(base) in _UNION_TYPES else (base,)
        others = [member for member in members if member is not type(None)]
        if len(others) == len(members) or any(_takes_strings(member) for member in others):
            raise TypeError(
                f"NullText() on {render_annotation(source)} is refused: it needs an Optional whose other "
                "members never take a string (lenient numbers, booleans, JSON-text structures); "
                'otherwise the string "null" could be meant as itself'
            )
        return core_schema.no_info_before_validator_function(_null_text_to_none, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _admit_null_text(handler(schema))


def pattern_with_null(pattern: str) -> str:
    """An ECMA-262 ``pattern`` that also matches exactly ``null`` (what `NullText` advertises)."""
    core = pattern[1:] if pattern.startswith("^") else f".*(?:{pattern})"
    core = core[:-1] if core.endswith("$") else f"{core}.*"
    return f"^(?:{core}|null)$"


def _admit_null_text(schema: JsonSchemaValue) -> JsonSchemaValue:
    """``schema`` with each string form of a lenient scalar (a pattern-checked string branch, at
    any depth of ``anyOf``) widened to also match ``null``. JSON-text branches admit any string
    already, so they already admit it."""
    if not isinstance(schema, dict):
        return schema
    widened = dict(schema)
    if widened.get("type") == "string" and isinstance(widened.get("pattern"), str):
        widened["pattern"] = pattern_with_null(widened["pattern"])
    if isinstance(widened.get("anyOf"), list):
        widened["anyOf"] = [_admit_null_text(branch) for branch in widened["anyOf"]]
    return widened


# Generated lenient classes, by the class they were made from, and back (for rendering).
_LENIENT_CLASSES: dict[type, type] = {}
_ORIGINALS: dict[type, type] = {}
_CLASSES_LOCK = threading.RLock()


class _Mapper:
    """One walk of the mapping; ``kept`` collects what it had to leave strict."""

    def __init__(self) -> None:
        self.kept: list[KeptAsIs] = []
        self.in_progress: set[type] = set()

    def map(self, annotation: Any, *, text: bool = True) -> Any:
        """The lenient form of ``annotation``. ``text``: arrays and objects also take their JSON text."""
        base, metadata = split_annotated(annotation)
        if any(isinstance(marker, _SCALAR_MARKERS) for marker in metadata):
            return _with_bounds_in_marker(annotation, base, metadata)
        if base is bool or base is float or base is int:
            return self.scalar(annotation, base, metadata)
        origin = typing.get_origin(base)
        if origin in _UNION_TYPES:
            return self.union(annotation, base, metadata)
        if is_structured(base):
            return self.structured(annotation, base, metadata, text=text)
        self.note_strict_lookalike(annotation, base)
        return annotation

    def scalar(self, annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
        kept = tuple(marker for marker in metadata if marker is not None and not is_strict(marker))
        if base is bool:
            return _with_metadata(StrictBoolish, kept)
        if base is float and any(getattr(marker, "allow_inf_nan", False) for marker in _expand(kept, fields=True)):
            self.kept.append(KeptAsIs(annotation, "it allows NaN and Infinity, which LenientFloat refuses"))
            return annotation
        if all(isinstance(marker, _BOUNDS) for marker in _expand(kept)):
            bounds = _inclusive_bounds(_expand(kept))
            if base is int and bounds in _NAMED_INTEGERS:
                return _NAMED_INTEGERS[bounds]
        return _with_bounds_in_marker(_with_metadata(base, kept), base, kept)

    def union(self, annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
        members = typing.get_args(base)
        others = [member for member in members if member is not type(None)]
        split = split_constraints(metadata)
        if len(others) == 1 and (split.numeric or split.lengths):
            # pydantic applies constraints on an Optional to its one other member: so does the
            # mapping, where they can ride in that member's marker and be advertised on it.
            inner = _with_metadata(others[0], (*split.numeric, *split.lengths))
            return self.map(_with_metadata(typing.Optional[inner], split.rest))
        takes_strings = [member for member in members if _takes_strings(member)]
        mapped = [
            member if takes_strings and _is_scalar(member) else self.map(member, text=not takes_strings)
            for member in members
        ]
        if takes_strings and any(_is_scalar(member) for member in members):
            self.kept.append(
                KeptAsIs(
                    annotation,
                    f"{render_annotation(takes_strings[0])} already takes any string, "
                    "so a string such as '1' could be meant for either member",
                )
            )
        null_text = type(None) in members and not takes_strings and not any(isinstance(m, NullText) for m in metadata)
        if all(new is old for new, old in zip(mapped, members, strict=True)) and not null_text:
            return annotation
        union: Any = typing.Union[tuple(mapped)]
        # No other member takes a string, so the string "null" can only mean None.
        return _with_metadata(union, (*metadata, NullText()) if null_text else metadata)

    def structured(self, annotation: Any, base: Any, metadata: tuple[Any, ...], *, text: bool) -> Any:
        new_base = self.structure(base)
        takes_text = any(isinstance(marker, AcceptJsonText) for marker in metadata)
        if takes_text or not text:
            return annotation if new_base is base else _with_metadata(new_base, metadata)
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
        with _CLASSES_LOCK:
            if base in _LENIENT_CLASSES:
                return _LENIENT_CLASSES[base]
            if base in _ORIGINALS:  # already lenient
                return base
            if base in self.in_progress:
                self.kept.append(KeptAsIs(base, f"{base.__name__} refers to itself; the inner reference keeps it"))
                return base
            self.in_progress.add(base)
            try:
                made = self.lenient_class(base)
            finally:
                self.in_progress.discard(base)
            if made is not base:
                _LENIENT_CLASSES[base] = made
                _ORIGINALS[made] = base
            return made

    def lenient_class(self, base: type) -> type:
        if issubclass(base, BaseModel):
            return self.lenient_pydantic_model(base)
        if is_typeddict(base):
            return self.lenient_typeddict(base)
        if dataclasses.is_dataclass(base):
            return self.lenient_dataclass(base)
        return base

    def lenient_pydantic_model(self, model: type[BaseModel]) -> type[BaseModel]:
        if not model.__pydantic_complete__:
            model.model_rebuild()
        changed: dict[str, Any] = {}
        for name, field in model.model_fields.items():
            metadata = tuple(field.metadata)
            new = self.map(_with_metadata(field.annotation, metadata))
            if new is not field.annotation and split_annotated(new) != (field.annotation, metadata):
                # The field's metadata now lives in the annotation, after the lenient marker.
                info = copy.copy(field)
                info.metadata = []
                changed[name] = (new, info)
        if not changed:
            return model
        lenient: type[BaseModel] = create_model(model.__name__, __base__=model, __module__=model.__module__, **changed)
        lenient.__qualname__ = model.__qualname__
        return lenient

    def lenient_typeddict(self, typed_dict: type) -> type:
        hints = typing.get_type_hints(typed_dict, include_extras=True)
        fields: dict[str, Any] = {}
        changed = False
        for name, hint in hints.items():
            # Written as the hint says, as pydantic reads it (__required_keys__ misses string annotations).
            required = _requiredness(hint, default=name in getattr(typed_dict, "__required_keys__", hints))
            hint = _strip_requiredness(hint)
            new = self.map(hint)
            changed = changed or new is not hint
            fields[name] = Required[new] if required else NotRequired[new]
        if not changed:
            return typed_dict
        make_typed_dict: Any = TypedDictType
        lenient: type = make_typed_dict(typed_dict.__name__, fields)
        lenient.__module__ = typed_dict.__module__
        lenient.__qualname__ = typed_dict.__qualname__
        return lenient

    def lenient_dataclass(self, data_class: type) -> type:
        hints = typing.get_type_hints(data_class, include_extras=True)
        changed: list[tuple[str, Any, Any]] = []
        for field in dataclasses.fields(data_class):
            hint = hints.get(field.name, Any)
            new = self.map(hint)
            if new is not hint:
                options: dict[str, Any] = {"init": field.init, "repr": field.repr, "compare": field.compare}
                if field.default is not dataclasses.MISSING:
                    options["default"] = field.default
                if field.default_factory is not dataclasses.MISSING:
                    options["default_factory"] = field.default_factory
                changed.append((field.name, new, dataclasses.field(**options)))
        if not changed:
            return data_class
        lenient: type = dataclasses.make_dataclass(data_class.__name__, changed, bases=(data_class,))
        lenient.__module__ = data_class.__module__
        if is_pydantic_dataclass(data_class):
            import pydantic.dataclasses

            lenient = pydantic.dataclasses.dataclass(lenient, config=data_class.__pydantic_config__)
        lenient.__qualname__ = data_class.__qualname__
        return lenient

    def note_strict_lookalike(self, annotation: Any, base: Any) -> None:
        """Record a number or boolean that the mapping leaves alone, so the audit can say why."""
        if isinstance(base, type) and issubclass(base, (int, float)) and not _is_enum(base):
            family = "bool" if issubclass(base, bool) else "int" if issubclass(base, int) else "float"
            self.kept.append(
                KeptAsIs(
                    annotation, f"{base.__name__} is a subclass of {family}; a lenient form would give a plain {family}"
                )
            )
        elif hasattr(base, "__supertype__"):  # typing.NewType
            self.kept.append(KeptAsIs(annotation, f"{base.__name__} is a NewType; write its lenient form by hand"))


def _with_bounds_in_marker(annotation: Any, base: Any, metadata: tuple[Any, ...]) -> Any:
    """``annotation`` (a lenient int or float) with the numeric bounds written after its marker moved
    into it: checked natively rather than by pydantic's Python after-validators, and advertised by
    the marker as standard JSON Schema on the branches they apply to."""
    split = split_constraints(metadata)
    markers = [marker for marker in split.rest if isinstance(marker, (_LenientInt, _LenientFloat))]
    others = tuple(marker for marker in split.rest if not isinstance(marker, (_LenientInt, _LenientFloat)))
    if len(markers) > 1 or (not markers and base not in (int, float)) or isinstance(base, bool):
        return annotation
    own = markers[0] if markers else None
    if base is int and (own is None or isinstance(own, _LenientInt)):
        marker: Any = int_marker(split.numeric, own)
    elif base is float and (own is None or own == _LenientFloat()):
        marker = float_marker(split.numeric)
    else:
        return annotation
    if marker is None:  # a bound the marker cannot hold: pydantic keeps checking it after the marker
        return _with_metadata(LenientInt if base is int else LenientFloat, metadata) if own is None else annotation
    if not split.numeric and own is not None:
        return annotation
    return _with_metadata(base, (marker, *split.lengths, *others))


def _with_metadata(base: Any, metadata: tuple[Any, ...]) -> Any:
    if not metadata:
        return base
    parts = (base, *metadata)
    return _ANNOTATED[parts]


def _expand(metadata: tuple[Any, ...], *, fields: bool = False) -> tuple[Any, ...]:
    """Metadata with ``Interval`` and other grouped markers spread out (and ``Field(...)``'s with ``fields``)."""
    expanded: list[Any] = []
    for marker in metadata:
        if fields and isinstance(marker, FieldInfo):
            expanded.extend(marker.metadata)
        elif isinstance(marker, annotated_types.GroupedMetadata):
            expanded.extend(part for part in marker if part is not None)
        elif marker is not None:
            expanded.append(marker)
    return tuple(expanded)


def _is_strict(marker: Any) -> bool:
    # pydantic's Strict and annotated-types' style markers: the lenient marker decides strictness.
    return type(marker).__name__ == "Strict" and hasattr(marker, "strict")


def _inclusive_bounds(bounds: tuple[Any, ...]) -> tuple[int | None, int | None] | None:
    lower: int | None = None
    upper: int | None = None
    for bound in bounds:
        value = _bound_value(bound)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        if isinstance(bound, annotated_types.Ge):
            lower = value if lower is None else max(lower, value)
        elif isinstance(bound, annotated_types.Gt):
            lower = value + 1 if lower is None else max(lower, value + 1)
        elif isinstance(bound, annotated_types.Le):
            upper = value if upper is None else min(upper, value)
        else:
            upper = value - 1 if upper is None else min(upper, value - 1)
    return lower, upper


def _bound_value(bound: Any) -> Any:
    for name in ("ge", "gt", "le", "lt"):
        if hasattr(bound, name):
            return getattr(bound, name)
    return None


def _is_scalar(member: Any) -> bool:
    return split_annotated(member)[0] in (int, float, bool)


def _is_enum(base: type) -> bool:
    return issubclass(base, enum.Enum)


def _takes_strings(member: Any) -> bool:
    """Whether a union member may accept a string argument as it is: anything not a number, a
    boolean, None, an array or an object (or already lenient, whose strings are never text)."""
    base, metadata = split_annotated(member)
    if any(isinstance(marker, JsonTextOf) for marker in metadata):
        return True
    if any(isinstance(marker, (*_SCALAR_MARKERS, AcceptJsonText)) for marker in metadata):
        return False
    if base in (int, float, bool, type(None)) or is_structured(base):
        return False
    return not (
        typing.get_origin(base) is Literal and not any(isinstance(value, str) for value in typing.get_args(base))
    )


def _requiredness(hint: Any, *, default: bool) -> bool:
    origin = typing.get_origin(hint)
    if origin in (Required,):
        return True
    if origin in (NotRequired,):
        return False
    return default


def _strip_requiredness(hint: Any) -> Any:
    while typing.get_origin(hint) in (Required, NotRequired):
        hint = typing.get_args(hint)[0]
    return hint


# Rendering: an annotation as it would be written in source.

_FIELD_ATTRIBUTES = ("alias", "title", "description", "examples", "pattern")


def render_annotation(annotation: Any) -> str:
    """``annotation`` as source text, with lenient markers written as the names users import.

    ``render_annotation(lenient_annotation(Optional[Annotated[int, Field(ge=1, le=500)]]))`` is
    ``"Optional[Annotated[LenientInt, Field(ge=1, le=500)]]"``; a generated lenient model is written as
    ``Lenient[Model]``. Annotated-types constraints are written as one ``Field(...)``.

    >>> from typing import Annotated, Optional
    >>> from pydantic import Field
    >>> from pydantic_lenient import lenient_annotation, render_annotation
    >>> render_annotation(lenient_annotation(Optional[Annotated[int, Field(ge=1, le=500)]]))
    'Optional[Annotated[LenientInt, Field(ge=1, le=500)]]'
    """
    base, metadata = split_annotated(annotation)
    if metadata:
        return _render_annotated(base, metadata)
    origin = typing.get_origin(base)
    arguments = typing.get_args(base)
    if origin in _UNION_TYPES:
        members = [member for member in arguments if member is not type(None)]
        inner = " | ".join(render_annotation(member) for member in members)
        return f"Optional[{inner}]" if len(members) < len(arguments) else inner
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, arguments))}]"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join('...' if part is Ellipsis else render_annotation(part) for part in arguments)}]"
    if base is Any:
        return "Any"
    if base is type(None):
        return "None"
    if isinstance(base, type) and base in _ORIGINALS:
        return f"Lenient[{_ORIGINALS[base].__name__}]"
    return getattr(base, "__name__", repr(base))


def _render_annotated(base: Any, metadata: tuple[Any, ...]) -> str:
    rest = [marker for marker in metadata if not isinstance(marker, NullText)]  # only Lenient[...] adds it
    if rest and isinstance(rest[0], (_LenientInt, _LenientFloat)) and rest[0] not in _ALIAS_NAMES:
        # Bounds the mapping moved into the marker: written as they would be by hand.
        marker = rest.pop(0)
        head = "LenientInt" if isinstance(marker, _LenientInt) else "LenientFloat"
        keywords = [
            f"{bound.name}={getattr(marker, bound.name)!r}"
            for bound in dataclasses.fields(marker)
            if getattr(marker, bound.name) is not None
        ]
        if rest and isinstance(rest[0], FieldInfo):
            keywords.append(_render_marker(rest.pop(0))[len("Field(") : -1])
        parts = [f"Field({', '.join(keyword for keyword in keywords if keyword)})", *_render_metadata(tuple(rest))]
        return f"Annotated[{head}, {', '.join(parts)}]"
    if rest and isinstance(rest[0], (_LenientInt, _LenientFloat, _StrictBoolish)) and rest[0] in _ALIAS_NAMES:
        head = _ALIAS_NAMES[rest.pop(0)]
    elif rest and rest[-1] == AcceptJsonText():
        rest.pop()
        inner = _with_metadata(base, tuple(rest))
        if not rest and isinstance(base, type) and base in _ORIGINALS:
            return f"Lenient[{_ORIGINALS[base].__name__}]"
        return f"LenientJson[{render_annotation(inner)}]"
    else:
        head = render_annotation(base)
    if not rest:
        return head
    return f"Annotated[{head}, {', '.join(_render_metadata(tuple(rest)))}]"


def _render_metadata(metadata: tuple[Any, ...]) -> Iterator[str]:
    constraints: list[str] = []
    for marker in metadata:
        if marker is None:  # conint() leaves Nones in its Annotated
            continue
        keywords = _constraint_keywords(marker)
        if keywords is not None:
            constraints.extend(keywords)
            continue
        if constraints:
            yield f"Field({', '.join(constraints)})"
            constraints = []
        yield _render_marker(marker)
    if constraints:
        yield f"Field({', '.join(constraints)})"


def _constraint_keywords(marker: Any) -> list[str] | None:
    """``["ge=1"]`` for an annotated-types constraint (or ``Interval``), None for anything else."""
    if isinstance(marker, annotated_types.GroupedMetadata) and not isinstance(marker, FieldInfo):
        return [keyword for part in marker if part is not None for keyword in _constraint_keywords(part) or []]
    is_constraint = isinstance(marker, annotated_types.BaseMetadata) or type(marker).__module__.startswith("pydantic.")
    if not is_constraint or isinstance(marker, FieldInfo):
        return None
    if dataclasses.is_dataclass(marker):
        values = {field.name: getattr(marker, field.name) for field in dataclasses.fields(marker)}
    else:  # pydantic's grouped general metadata (pattern=, max_digits=) keeps its values as attributes
        values = dict(getattr(marker, "__dict__", {}))
    return [f"{name}={value!r}" for name, value in values.items() if value is not None]


def _render_marker(marker: Any) -> str:
    if isinstance(marker, FieldInfo):
        keywords = [keyword for part in marker.metadata for keyword in (_constraint_keywords(part) or [])]
        keywords += [
            f"{name}={getattr(marker, name)!r}" for name in _FIELD_ATTRIBUTES if getattr(marker, name, None) is not None
        ]
        return f"Field({', '.join(keywords)})"
    return repr(marker)
