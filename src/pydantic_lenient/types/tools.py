"""`lenient_tool`: a function whose parameters the model writes take their wrong-typed forms, in
whatever framework reads its signature, and the function itself only ever receives converted values.

Which parameters are the model's is one rule (`written_by_the_model`): a framework fills its own
parameters (a run context, a config, a runtime, an injected state) with Python objects, and those
are exactly the parameters that no JSON value could stand for. They are left exactly as written, so
the framework still recognises them by their annotation and still leaves them out of the schema.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import annotated_types
from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo
from typing_extensions import NotRequired, TypedDict

from .annotations import UNION_TYPES, function_hints, is_typeddict, split_annotated, with_metadata
from .constraints import split_constraints
from .lenient_classes import LENIENT_CLASSES
from .mapping import _Mapper

__all__ = ("lenient_arguments", "lenient_tool", "written_by_the_model")

_F = TypeVar("_F", bound=Callable[..., Any])
_MapAnnotation = Callable[[Any], Any]
_MapClass = Callable[[type], type]
_CHECK = "__pydantic_lenient_check__"
_METADATA_CLASSES = (annotated_types.BaseMetadata, annotated_types.GroupedMetadata, FieldInfo)


def written_by_the_model(annotation: Any) -> bool:
    """Whether a parameter annotated ``annotation`` is one the model writes (its tool-call arguments),
    rather than one a framework fills with its own objects.

    A framework's parameter is any of:

    * one no JSON value could stand for: pydantic has no JSON schema for it (an arbitrary class, a
      callable, a name that does not resolve), as for pydantic-ai's ``RunContext``, the OpenAI
      Agents SDK's ``ToolContext``, Google ADK's ``ToolContext``, LangChain's ``ToolRuntime``;
    * one marked for someone other than pydantic: ``Annotated`` metadata that pydantic does not read
      and that is not a description (LangChain's ``InjectedToolArg``, ``InjectedState``,
      ``InjectedToolCallId``);
    * a class that holds any Python object at all: a model, dataclass or TypedDict with a field typed
      ``Any`` or by an open type variable. Such a class carries a program's objects (dependencies,
      callbacks, state), which a model cannot write: the OpenAI Agents SDK's ``RunContextWrapper``,
      LangChain's ``RunnableConfig``.

    >>> from typing import Annotated, Any
    >>> from pydantic import BaseModel
    >>> from pydantic_lenient.types.tools import written_by_the_model
    >>> class Session:  # an arbitrary class
    ...     pass
    >>> class Holder(BaseModel):
    ...     dependencies: Any
    >>> written_by_the_model(int), written_by_the_model(list[int]), written_by_the_model(Annotated[int, "a limit"])
    (True, True, True)
    >>> written_by_the_model(Session), written_by_the_model(Holder), written_by_the_model(Annotated[str, Session])
    (False, False, False)
    """
    base, metadata = split_annotated(annotation)
    if any(_is_foreign_marker(marker) for marker in metadata):
        return False
    if _holds_any_object(base):
        return False
    try:
        TypeAdapter(annotation).json_schema()
    except Exception:  # pydantic's schema errors, a name that does not resolve, an arbitrary class
        return False
    return True


def lenient_tool(function: _F, *, keep_model_class: bool = False) -> _F:
    """Decorator: ``function`` with every parameter the model writes taking its lenient form.

    Frameworks that build a tool's input from the signature (the MCP SDK, FastMCP, pydantic-ai, the
    OpenAI Agents SDK, LangChain, CrewAI, LlamaIndex, Google ADK) then advertise and accept lenient
    parameters; the source keeps ``int``. The wrapper validates its arguments as the advertised
    schema says before calling ``function`` (as pydantic's ``validate_call`` does), so a framework
    that never validates, or a direct call, gives ``function`` converted values or raises one
    pydantic ``ValidationError``: ``"false"`` never arrives as a (truthy) string.

    A framework's own parameters (`written_by_the_model`) are left exactly as written and passed
    through. A parameter that is a model takes its JSON text too, as with every way in: an MCP host
    may send an object behind a ``$ref`` as text. ``keep_model_class=True`` keeps the one model that
    stands for all the arguments (the only parameter the model writes, annotated with a pydantic
    model, dataclass or TypedDict class itself) annotated with a class, the lenient one, without that
    JSON-text form: pydantic-ai then advertises its fields at the top level, as for the undecorated
    tool (``lenient_tool(book, keep_model_class=True)``; `LenientToolset` does the same for a whole
    toolset), and the other frameworks still nest it under its name.
    Async functions, methods, ``staticmethod``/``classmethod``, ``*args`` and ``**kwargs`` are
    covered; the wrapper keeps the name, docstring and ``__wrapped__``, and has the rewritten
    ``__signature__`` and ``__annotations__``.

    >>> from pydantic_lenient import lenient_tool, tool_catalog
    >>> @lenient_tool
    ... def move_messages(uids: list[int], dry_run: bool = True) -> str:
    ...     return f"{'would move' if dry_run else 'moved'} {uids}"
    >>> dry_run = tool_catalog([move_messages])["tools"][0]["inputSchema"]["properties"]["dry_run"]
    >>> [branch["type"] for branch in dry_run["anyOf"]]
    ['boolean', 'string']
    >>> move_messages([1, 2], dry_run=False)
    'moved [1, 2]'
    >>> move_messages('["1", 2]', dry_run="false")  # what a framework that never validates passes
    'moved [1, 2]'
    >>> move_messages([1], dry_run="no")
    Traceback (most recent call last):
      ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for move_messages
    dry_run
      Input should be a boolean, or the string 'true' or 'false' in any letter case
      [type=lenient_bool, input_value='no', input_type=str]
    """
    if isinstance(function, (staticmethod, classmethod)):
        wrapped: Any = type(function)(lenient_tool(function.__func__, keep_model_class=keep_model_class))
        return typing.cast(_F, wrapped)
    try:
        hints = function_hints(function)
    except Exception as error:  # an annotation that does not resolve
        raise TypeError(f"cannot read the annotations of {function!r}: {error}") from None
    signature = inspect.signature(function)
    mapper = _Mapper()
    models = {name for name in signature.parameters if name in hints and written_by_the_model(hints[name])}
    whole_arguments = _whole_arguments_model(signature, hints, models) if keep_model_class else None
    annotations: dict[str, Any] = dict(hints)
    validated: dict[str, Any] = {}
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.name not in hints:
            parameters.append(parameter)
            continue
        hint = hints[parameter.name]
        if parameter.name in models:
            hint, default = _constraints_from_default(hint, parameter.default)
            # The arguments' own model stays a class: no JSON-text form (the arguments are an object).
            lenient = mapper.map(hint, text=parameter.name != whole_arguments)
            if lenient is not hints[parameter.name] or default is not parameter.default:
                annotations[parameter.name] = hint = lenient
                parameter = parameter.replace(default=default)
                validated[parameter.name] = _as_received(lenient, parameter.kind)
        parameters.append(parameter.replace(annotation=hint))
    returned = hints.get("return", signature.return_annotation)
    check = _ArgumentCheck(function, signature, validated)
    wrapper = _async_wrapper(function, check) if inspect.iscoroutinefunction(function) else _wrapper(function, check)
    setattr(wrapper, _CHECK, check)  # for lenient_arguments
    # functools.wraps shares the original's annotations; the wrapper gets its own.
    wrapper.__annotations__ = annotations
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=returned
    )
    return typing.cast(_F, wrapper)


def lenient_arguments(tool: Callable[..., Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` (by name, as a model sends them) validated as the `lenient_tool` ``tool`` validates
    them when called: the parameters the model writes converted, the others as given. For a framework
    that validates before it calls the function, and reports the errors to the model its own way.

    >>> from pydantic_lenient import lenient_tool
    >>> from pydantic_lenient.types.tools import lenient_arguments
    >>> @lenient_tool
    ... def search(folder: str, limit: int = 10) -> str:
    ...     return folder
    >>> lenient_arguments(search, {"folder": "Dev", "limit": "100"})
    {'folder': 'Dev', 'limit': 100}
    """
    check: _ArgumentCheck | None = getattr(tool, _CHECK, None)
    if check is None:
        raise TypeError(f"{tool!r} is not a lenient_tool")
    return check.validate(dict(arguments))


def _wrapper(function: Callable[..., Any], check: _ArgumentCheck) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        positional, keywords = check.arguments(args, kwargs)
        return function(*positional, **keywords)

    return wrapper


def _async_wrapper(function: Callable[..., Any], check: _ArgumentCheck) -> Callable[..., Any]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        positional, keywords = check.arguments(args, kwargs)
        return await function(*positional, **keywords)

    return wrapper


class _ArgumentCheck:
    """The arguments of one call, bound to the function's signature, with the model's parameters
    validated by their lenient annotations (one `ValidationError` naming every bad one)."""

    def __init__(self, function: Callable[..., Any], signature: inspect.Signature, validated: dict[str, Any]) -> None:
        self.signature = signature
        self.field_defaults = {
            name: parameter.default
            for name, parameter in signature.parameters.items()
            if isinstance(parameter.default, FieldInfo)
        }
        self.names = tuple(validated)
        parameters = signature.parameters.values()
        self.positional = tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        # Arguments can be matched to names without binding: no *args, **kwargs, or a Field(...)
        # default that could only be passed by position.
        self.simple = not any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            or (p.kind is p.POSITIONAL_ONLY and isinstance(p.default, FieldInfo))
            for p in parameters
        )
        self.adapter: TypeAdapter[dict[str, Any]] | None = None
        self.validator: Any = None  # pydantic-core's, called directly on the hot path
        if validated:
            fields = {name: NotRequired[annotation] for name, annotation in validated.items()}
            make_typed_dict: Any = TypedDict
            arguments: Any = make_typed_dict(getattr(function, "__name__", "arguments"), fields)
            self.adapter = TypeAdapter(arguments)
            self.validator = self.adapter.validator

    def arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.simple and len(args) <= len(self.positional) and kwargs.keys().isdisjoint(self.positional[: len(args)]):
            return self._arguments_by_name(args, kwargs)
        bound = self.signature.bind(*args, **kwargs)
        for name, default in self.field_defaults.items():
            if name not in bound.arguments:  # as pydantic fills a Field(...) default
                bound.arguments[name] = default.get_default(call_default_factory=True)
        bound.arguments.update(self.validate(bound.arguments))
        return bound.args, bound.kwargs

    def _arguments_by_name(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """`arguments` without ``Signature.bind`` (most of a call's cost), for a signature with no
        ``*args``/``**kwargs``: a missing or unknown argument reaches the function as given, which
        raises the ``TypeError`` it would have raised undecorated."""
        arguments = dict(zip(self.positional, args, strict=False))
        keywords = [*kwargs]
        arguments.update(kwargs)
        for name, default in self.field_defaults.items():
            if name not in arguments:  # as pydantic fills a Field(...) default
                arguments[name] = default.get_default(call_default_factory=True)
                keywords.append(name)
        if self.validator is not None:
            given = {name: _as_data(arguments[name]) for name in self.names if name in arguments}
            arguments.update(self.validator.validate_python(given, from_attributes=True))
        return tuple(arguments[name] for name in self.positional[: len(args)]), {
            name: arguments[name] for name in keywords
        }

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.validator is None:
            return arguments
        given = {name: _as_data(arguments[name]) for name in self.names if name in arguments}
        # An instance of the model a lenient model was made from (a direct call, a framework that
        # validated with the original) is read by its attributes.
        return {**arguments, **self.validator.validate_python(given, from_attributes=True)}


def _whole_arguments_model(signature: inspect.Signature, hints: dict[str, Any], models: set[str]) -> str | None:
    """The parameter that can stand for all of a tool's arguments, if any: the only one the model
    writes (every other parameter annotated as a framework's), annotated with a model class itself
    (a pydantic model, dataclass or TypedDict). A framework may advertise that class's fields as the
    tool's own (pydantic-ai does), and recognises the parameter by its annotation being the class:
    its lenient form is therefore the lenient class, never wrapped in ``Annotated``."""
    if len(models) != 1:
        return None
    [name] = models
    parameter = signature.parameters[name]
    if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
        return None
    if any(other not in hints for other in signature.parameters):  # an unannotated one is the model's too
        return None
    return name if _is_model_class(hints[name]) else None


def _is_model_class(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not None or not isinstance(annotation, type):
        return False
    return issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation) or is_typeddict(annotation)


def _as_data(value: Any) -> Any:
    """An instance of a dataclass that has a lenient subclass, as its fields: pydantic takes only
    instances of the subclass itself (a model's instance is read by its attributes instead)."""
    if type(value) in LENIENT_CLASSES and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _as_received(annotation: Any, kind: inspect._ParameterKind) -> Any:
    """What the wrapper validates for a parameter: each of ``*args``, each value of ``**kwargs``."""
    if kind is inspect.Parameter.VAR_POSITIONAL:
        return tuple[annotation, ...]
    if kind is inspect.Parameter.VAR_KEYWORD:
        return dict[str, annotation]
    return annotation


def _is_foreign_marker(marker: Any) -> bool:
    """Metadata that pydantic does not read and that is not a description: another library's marker."""
    if marker is None:  # what conint(strict=None) leaves
        return False
    if isinstance(marker, str) or isinstance(getattr(marker, "documentation", None), str):  # text, PEP 727's Doc
        return False
    if isinstance(marker, _METADATA_CLASSES):
        return False
    return not (hasattr(marker, "__get_pydantic_core_schema__") or hasattr(marker, "__get_pydantic_json_schema__"))


def _holds_any_object(base: Any) -> bool:
    """Whether ``base`` (or, for a union, one of its members) is a class with a field of any object."""
    origin = typing.get_origin(base)
    if origin in UNION_TYPES:
        return any(_holds_any_object(member) for member in typing.get_args(base))
    cls = origin if isinstance(origin, type) else base
    if not isinstance(cls, type):
        return False
    if issubclass(cls, BaseModel):
        field_types = [field.annotation for field in cls.model_fields.values()]
    elif is_typeddict(cls) or dataclasses.is_dataclass(cls):
        try:
            field_types = list(typing.get_type_hints(cls).values())
        except Exception:  # a name that does not resolve: pydantic's schema will say so
            return False
    else:
        return False
    return any(_is_any_object(field_type) for field_type in field_types)


def _is_any_object(annotation: Any) -> bool:
    base = split_annotated(annotation)[0]
    if base is Any or isinstance(base, TypeVar):
        return True
    return typing.get_origin(base) in UNION_TYPES and any(_is_any_object(member) for member in typing.get_args(base))


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
    return with_metadata(hint, (*split.numeric, *split.lengths)), rest
