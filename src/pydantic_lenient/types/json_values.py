"""Structured values that arrive as JSON text, and JSON text that arrives as structure.

* ``LenientJson[T]``: a ``T`` (array- or object-shaped) that may also arrive as the JSON text of one.
* ``JsonText`` / ``JsonText[T]``: a ``str`` of JSON text that may also arrive as a raw array or object.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema, from_json, to_json

from .family import LenientMarker
from .forms import split_annotations
from .json_kinds import json_type
from .portable_rules import portable_node, rendering, structure_rendering
from .scalar import canonical_part, effective_marker, read_inner, render_scalar, with_inner

__all__ = (
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LENGTH",
    "AcceptJsonText",
    "JsonText",
    "JsonTextOf",
    "LenientJson",
)

DEFAULT_MAX_LENGTH = 1_000_000
"""Longest JSON text accepted, in characters."""

DEFAULT_MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in JSON text (or a raw value turned into text)."""

ERROR_TYPE = "lenient_json"
_JSON_TEXT = {"type": "string", "contentMediaType": "application/json"}

# Core schema types whose JSON form is an array or an object, and how they are named in messages.
_ARRAY_SCHEMAS = frozenset({"list", "tuple", "set", "frozenset", "generator"})
_OBJECT_SCHEMAS = frozenset({"dict", "model", "model-fields", "typed-dict", "dataclass", "dataclass-args"})
_WRAPPING_SCHEMAS = frozenset({"function-before", "function-after", "function-wrap", "default", "definitions"})
_SHAPE_NAMES = {"array": "a list", "object": "an object"}
_SHAPE_OF_TYPE: dict[type, str] = {list: "array", dict: "object"}
_KIND_NAMES = {"array": "a list", "object": "an object", "string": "a string", "boolean": "a boolean", "null": "null"}


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, not {value!r}")


def _first_problem(value: Any, limit: int) -> str | None:
    """``"too deep"`` if arrays and objects in ``value`` nest deeper than ``limit``, ``"not finite"``
    if it holds a NaN or an infinity (which JSON cannot write), else None. Iterative: no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, tuple)):
            children: Iterable[Any] = node
        elif isinstance(node, dict):
            children = node.values()
        else:
            if isinstance(node, float) and not math.isfinite(node):
                return "not finite"
            continue
        if depth > limit:
            return "too deep"
        stack.extend((child, depth + 1) for child in children)
    return None


def _too_long(max_length: int) -> PydanticCustomError:
    return PydanticCustomError(
        ERROR_TYPE, "JSON text should have at most {max_length} characters", {"max_length": max_length}
    )


def _too_deep(max_depth: int) -> PydanticCustomError:
    return PydanticCustomError(
        ERROR_TYPE, "JSON text should nest at most {max_depth} levels deep", {"max_depth": max_depth}
    )


def _parse_json_text(text: str, max_length: int, max_depth: int, not_json: PydanticCustomError) -> Any:
    """Parse JSON text within the limits, or raise one `lenient_json` error saying what was wrong."""
    if len(text) > max_length:
        raise _too_long(max_length)
    try:
        parsed = from_json(text, allow_inf_nan=False)
    except ValueError as error:
        if "recursion limit" in str(error):  # jiter stops at about 200 levels, before any stack risk
            raise _too_deep(max_depth) from None
        raise not_json from None
    except TypeError:  # a str that is not valid Unicode (a lone surrogate) cannot be UTF-8 encoded
        raise not_json from None
    # Each level needs an opening and a closing bracket, so short text cannot be too deep; beyond
    # that, counting brackets is a fast upper bound, and the value is walked only when it fails.
    if (
        len(text) > 2 * max_depth
        and text.count("[") + text.count("{") > max_depth
        and _first_problem(parsed, max_depth) == "too deep"
    ):
        raise _too_deep(max_depth)
    return parsed


def _json_shapes(schema: CoreSchema, handler: GetCoreSchemaHandler) -> set[str]:
    """The JSON types a core schema can accept, as far as array/object-ness goes.

    Anything that is not clearly array- or object-shaped comes back as ``"other"``, and so does a
    schema this walk cannot see into (a plain validator function): refusing is safer than guessing.
    """
    kind = schema["type"]
    if kind in _ARRAY_SCHEMAS:
        return {"array"}
    if kind in _OBJECT_SCHEMAS:
        return {"object"}
    if kind == "definition-ref":
        try:
            return _json_shapes(handler.resolve_ref_schema(schema), handler)
        except LookupError:  # a model that refers to itself, still being built
            return {"object"}
    if kind in _WRAPPING_SCHEMAS:
        return _json_shapes(schema["schema"], handler)
    if kind == "union":
        choices = [choice[0] if isinstance(choice, tuple) else choice for choice in schema["choices"]]
        return set().union(*(_json_shapes(choice, handler) for choice in choices))
    if kind == "tagged-union":
        return set().union(*(_json_shapes(choice, handler) for choice in schema["choices"].values()))
    if kind == "lax-or-strict":
        return _json_shapes(schema["lax_schema"], handler) | _json_shapes(schema["strict_schema"], handler)
    if kind == "json-or-python":
        return _json_shapes(schema["json_schema"], handler)
    if kind == "chain":
        return _json_shapes(schema["steps"][0], handler)
    return {"other"}


def _expected(shapes: set[str]) -> str:
    return " or ".join(_SHAPE_NAMES[shape] for shape in sorted(shapes))


def _kind_of(value: Any) -> str:
    return _KIND_NAMES.get(json_type(value), "a number")


@dataclass(frozen=True, slots=True)
class AcceptJsonText(LenientMarker):
    """Marker: a structured value may also arrive as its JSON text. ``LenientJson[T]`` uses the defaults.

    ``Annotated[list[int], AcceptJsonText(max_length=10_000, max_depth=8)]`` sets the limits.
    The text is parsed and then validated as ``T``, so lenient fields inside ``T`` stay lenient.

    >>> from typing import Annotated
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import AcceptJsonText
    >>> class Plot(BaseModel):
    ...     points: Annotated[list[list[int]], AcceptJsonText(max_depth=2)]
    >>> Plot.model_validate({"points": "[[1, 2], [3, 4]]"})
    Plot(points=[[1, 2], [3, 4]])
    >>> Plot.model_validate({"points": "[[[1]]]"})
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Plot
    points
      JSON text should nest at most 2 levels deep [type=lenient_json, input_value='[[[1]]]', input_type=str]
    """

    strings_as_text = False  # a string is the structure's JSON text, never a value itself
    keeps_meaning = True

    max_length: int = DEFAULT_MAX_LENGTH
    max_depth: int = DEFAULT_MAX_DEPTH

    def __post_init__(self) -> None:
        _check_positive("max_length", self.max_length)
        _check_positive("max_depth", self.max_depth)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        inner = handler(source)
        shapes = _json_shapes(inner, handler)
        if not shapes or not shapes <= {"array", "object"}:
            name = _type_name(source)
            raise TypeError(
                f"LenientJson[{name}] is refused: {name} does not only take arrays or objects, "
                "so a string argument could be the value itself or its JSON text. "
                "LenientJson needs a T whose JSON form is an array or an object (list, tuple, set, dict, "
                "a model, a TypedDict or a dataclass); use Optional[LenientJson[T]] for null."
            )
        expected = _expected(shapes)
        max_length, max_depth = self.max_length, self.max_depth
        not_json = PydanticCustomError(
            ERROR_TYPE, "Input should be {expected} or the JSON text of {expected}", {"expected": expected}
        )

        def decode_json_text(value: Any) -> Any:
            if not isinstance(value, str):
                return value
            parsed = _parse_json_text(value, max_length, max_depth, not_json)
            if _SHAPE_OF_TYPE.get(type(parsed), "other") not in shapes:
                raise PydanticCustomError(
                    ERROR_TYPE,
                    "Input should be {expected} or the JSON text of {expected}, not the JSON text of {found}",
                    {"expected": expected, "found": _kind_of(parsed)},
                )
            return parsed

        # One isinstance check in Python: a native union of T and a JSON-text branch would report
        # both branches' errors for one bad field, or hide T's detailed errors behind one message.
        return core_schema.no_info_before_validator_function(decode_json_text, inner)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # T's schema, with constraints added outside this marker; a description or title given with
        # it (Field(description=...) inside Annotated, as FastMCP reads signatures) describes the
        # whole field, so it goes to the top rather than into one branch.
        with rendering(structure_rendering(schema, handler)):
            structured, annotations = split_annotations(handler(schema))
        structured = portable_node(structured, canonical_part)
        text_form = {**_JSON_TEXT, "contentSchema": structured}
        return render_scalar(handler, structured, text_form, annotations)


def _type_name(source: Any) -> str:
    return source.__name__ if isinstance(source, type) else repr(source).replace("typing.", "")


if TYPE_CHECKING:
    from typing import Generic

    from typing_extensions import TypeVar

    # A default, so that a bare `JsonText` type-checks as `JsonText[Any]`.
    _T = TypeVar("_T", default=Any)
    LenientJson = Annotated[_T, ...]
else:

    class LenientJson:
        """``LenientJson[T]``: a ``T`` that may also arrive as the JSON text of one.

        ``T`` must be array- or object-shaped (``list``, ``tuple``, ``set``, ``dict``, a model, a
        ``TypedDict``, a dataclass); a ``T`` that also takes strings is refused when the model is
        defined. Type checkers see ``T``.

        >>> from pydantic import BaseModel
        >>> from pydantic_lenient import LenientJson, input_schema
        >>> class Fetch(BaseModel):
        ...     urls: LenientJson[list[str]]
        >>> Fetch.model_validate({"urls": '["https://example.com"]'})
        Fetch(urls=['https://example.com'])
        >>> Fetch.model_validate({"urls": "https://example.com"})
        Traceback (most recent call last):
          ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for Fetch
        urls
          Input should be a list or the JSON text of a list
          [type=lenient_json, input_value='https://example.com', input_type=str]
        >>> input_schema(Fetch, style="type-array")["properties"]["urls"]
        {'type': ['array', 'string'], 'items': {'type': 'string'}, 'contentMediaType': 'application/json',
         'contentSchema': {'items': {'type': 'string'}, 'type': 'array'}, 'title': 'Urls'}
        >>> class Ambiguous(BaseModel):
        ...     value: LenientJson[str | list[str]]
        Traceback (most recent call last):
          ...
        TypeError: LenientJson[str | list[str]] is refused: str | list[str] does not only take arrays or objects, ...
        """

        def __class_getitem__(cls, item: Any) -> Any:
            return Annotated[item, AcceptJsonText()]


# The constraints pydantic puts in a str schema that `JsonTextOf` checks on the text it gives.
_TEXT_LENGTHS = frozenset({"min_length", "max_length"})


@dataclass(frozen=True, slots=True)
class _TextLengths:
    """The lengths of a `JsonTextOf`'s text written before it, for its JSON schema."""

    min_length: int | None = None
    max_length: int | None = None

    def keywords(self) -> dict[str, int]:
        named = {"minLength": self.min_length, "maxLength": self.max_length}
        return {key: value for key, value in named.items() if value is not None}


_NO_LENGTHS = _TextLengths()


def _tighter_max(own: int, written: int | None) -> int | None:
    return None if written is None else min(own, written)


def _check_min_length(text: str, min_length: int | None) -> None:
    if min_length is not None and len(text) < min_length:
        raise PydanticCustomError(
            ERROR_TYPE, "JSON text should have at least {min_length} characters", {"min_length": min_length}
        )


@dataclass(frozen=True, slots=True)
class JsonTextOf(LenientMarker):
    """Marker: a ``str`` of JSON text, which may also arrive as a raw array or object.

    A string must be well-formed JSON (of ``content``, when given) and is kept as sent. A raw array
    or object (validated against ``content``, when given) is turned into compact JSON text, in the
    key order it came in. ``JsonText`` and ``JsonText[T]`` use the default limits.

    >>> from typing import Annotated
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import JsonTextOf
    >>> class Batch(BaseModel):
    ...     operations: Annotated[str, JsonTextOf(list[dict[str, str]], max_length=1_000)]
    >>> Batch.model_validate({"operations": [{"op": "delete", "path": "/tmp/a"}]})
    Batch(operations='[{"op":"delete","path":"/tmp/a"}]')
    >>> Batch.model_validate({"operations": "x" * 1_001})
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Batch
    operations
      JSON text should have at most 1000 characters [type=lenient_json, input_value='xxx...xxx', input_type=str]
    """

    makes_lenient = True
    strings_as_text = True  # the field is text: a string argument is kept as sent
    keeps_meaning = True

    content: Any = None
    max_length: int = DEFAULT_MAX_LENGTH
    max_depth: int = DEFAULT_MAX_DEPTH

    def __post_init__(self) -> None:
        _check_positive("max_length", self.max_length)
        _check_positive("max_depth", self.max_depth)

    def _content_adapter(self) -> TypeAdapter[Any] | None:
        return None if self.content is None else TypeAdapter(self.content)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # The lengths written before this marker (a `Field(...)` default's) bound the text it gives,
        # as they bound a plain str: it checks them itself, and whatever else pydantic built from
        # that metadata (a pattern, a validator) checks the text afterwards.
        inner = read_inner(handler(source), "str", _TEXT_LENGTHS)
        lengths = _TextLengths(
            inner.constraints.get("min_length"), _tighter_max(self.max_length, inner.constraints.get("max_length"))
        )
        effective = lengths if inner.constraints else None
        return with_inner(self._core_schema(lengths), inner.rest, inner.json_metadata, effective)

    def _core_schema(self, lengths: _TextLengths | None = None) -> CoreSchema:
        content = self._content_adapter()
        max_depth = self.max_depth
        min_length = None if lengths is None else lengths.min_length
        max_length = self.max_length if lengths is None or lengths.max_length is None else lengths.max_length
        not_json = PydanticCustomError(
            ERROR_TYPE,
            "Input should be well-formed JSON text, or an array or an object to write as JSON text",
        )

        def to_json_text(value: Any) -> str:
            if isinstance(value, str):
                _check_min_length(value, min_length)
                parsed = _parse_json_text(value, max_length, max_depth, not_json)
                if content is not None:
                    content.validate_python(parsed)
                return value
            if not isinstance(value, (list, dict)):
                raise not_json
            problem = _first_problem(value, max_depth)
            if problem == "too deep":
                raise _too_deep(max_depth)
            if problem == "not finite":  # JSON has no NaN or Infinity: never write text we would refuse
                raise PydanticCustomError(ERROR_TYPE, "JSON text cannot hold NaN or Infinity")
            if content is not None:
                content.validate_python(value)
            try:
                text = to_json(value).decode()
            except ValueError:  # a lone surrogate, or an object JSON cannot write
                raise not_json from None
            if len(text) > max_length:
                raise _too_long(max_length)
            _check_min_length(text, min_length)
            return text

        return core_schema.no_info_plain_validator_function(
            to_json_text, serialization=core_schema.simple_ser_schema("str")
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        content = self._content_adapter()
        # What annotations outside this marker add (a description, a title) describes the field.
        _, annotations = split_annotations(handler(core_schema.str_schema()))
        # Lengths written before the marker bound the text form (a raw structure's text is unseen).
        lengths = effective_marker(schema, _NO_LENGTHS).keywords()
        if content is None:
            text_form: dict[str, Any] = {**_JSON_TEXT, **lengths}
            structured: Mapping[str, Any] = {"anyOf": [{"type": "array"}, {"type": "object"}]}
        else:
            # Rendered by this generator, so a model in T lands in the same $defs as the rest.
            with rendering(structure_rendering(content.core_schema, handler)):
                content_schema, _ = split_annotations(handler(content.core_schema))
            content_schema = portable_node(content_schema, canonical_part)
            text_form = {**_JSON_TEXT, **lengths, "contentSchema": content_schema}
            structured = content_schema
        return render_scalar(handler, text_form, structured, annotations)


if TYPE_CHECKING:

    class JsonText(str, Generic[_T]):
        """A ``str`` of JSON text (``JsonText[T]``: whose content validates as ``T``)."""

else:

    class JsonText:
        """``JsonText``: a ``str`` of JSON text that may also arrive as a raw array or object.

        ``JsonText[T]`` also validates the content against ``T``. The value is always ``str``.

        >>> from pydantic import BaseModel
        >>> from pydantic_lenient import JsonText, input_schema
        >>> class Query(BaseModel):
        ...     filters: JsonText
        >>> Query.model_validate({"filters": {"from": "ana", "unread": True}})
        Query(filters='{"from":"ana","unread":true}')
        >>> Query.model_validate({"filters": "{from: ana}"})
        Traceback (most recent call last):
          ...
        pydantic_core._pydantic_core.ValidationError: 1 validation error for Query
        filters
          Input should be well-formed JSON text, or an array or an object to write as JSON text
          [type=lenient_json, input_value='{from: ana}', input_type=str]
        >>> input_schema(Query, style="type-array")["properties"]["filters"]
        {'type': ['string', 'array', 'object'], 'contentMediaType': 'application/json', 'title': 'Filters'}
        """

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
            # The class itself is its source, so nothing is written before it (`handler(source)`
            # would come back here); a `Field(...)` default's lengths are applied after it.
            return JsonTextOf()._core_schema()

        @classmethod
        def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
            return JsonTextOf().__get_pydantic_json_schema__(schema, handler)

        def __class_getitem__(cls, item: Any) -> Any:
            return Annotated[str, JsonTextOf(item)]
