"""Lenient classes: the subclass of a pydantic model, TypedDict or dataclass whose fields are mapped to
their lenient forms, and the registry of those made so far (one class per original, and back)."""

from __future__ import annotations

import copy
import dataclasses
import threading
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Discriminator, create_model
from pydantic.dataclasses import is_pydantic_dataclass
from typing_extensions import NotRequired, Required
from typing_extensions import TypedDict as TypedDictType

from .annotations import is_typeddict, split_annotated, with_metadata

__all__ = ("CLASSES_LOCK", "LENIENT_CLASSES", "ORIGINALS", "lenient_class")

_MapMember = Callable[[Any], Any]

# Generated lenient classes, by the class they were made from, and back (for rendering).
LENIENT_CLASSES: dict[type, type] = {}
ORIGINALS: dict[type, type] = {}
CLASSES_LOCK = threading.RLock()


def lenient_class(base: type, map_member: _MapMember) -> type:
    if issubclass(base, BaseModel):
        return _lenient_pydantic_model(base, map_member)
    if is_typeddict(base):
        return _lenient_typeddict(base, map_member)
    if dataclasses.is_dataclass(base):
        return _lenient_dataclass(base, map_member)
    return base


def _lenient_pydantic_model(model: type[BaseModel], map_member: _MapMember) -> type[BaseModel]:
    if not model.__pydantic_complete__:
        model.model_rebuild()
    changed: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        metadata = tuple(field.metadata)
        if field.discriminator is not None:
            # The field's own discriminator applies to its union: the mapping decides with it seen.
            own = field.discriminator
            tagged = with_metadata(
                field.annotation, (*metadata, own if isinstance(own, Discriminator) else Discriminator(own))
            )
            if map_member(tagged) is tagged:
                continue
        new = map_member(with_metadata(field.annotation, metadata))
        if new is not field.annotation and split_annotated(new) != (field.annotation, metadata):
            # The field's metadata now lives in the annotation, after the lenient marker.
            info = copy.copy(field)
            info.metadata = []
            changed[name] = (new, info)
    if not changed:
        return model
    lenient: type[BaseModel] = create_model(
        model.__name__, __base__=model, __module__=model.__module__, __doc__=model.__doc__, **changed
    )
    lenient.__qualname__ = model.__qualname__
    return lenient


def _lenient_typeddict(typed_dict: type, map_member: _MapMember) -> type:
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    fields: dict[str, Any] = {}
    changed = False
    for name, hint in hints.items():
        # Written as the hint says, as pydantic reads it (__required_keys__ misses string annotations).
        required = _requiredness(hint, default=name in getattr(typed_dict, "__required_keys__", hints))
        hint = _strip_requiredness(hint)
        new = map_member(hint)
        changed = changed or new is not hint
        fields[name] = Required[new] if required else NotRequired[new]
    if not changed:
        return typed_dict
    make_typed_dict: Any = TypedDictType
    lenient: type = make_typed_dict(typed_dict.__name__, fields)
    lenient.__module__ = typed_dict.__module__
    lenient.__qualname__ = typed_dict.__qualname__
    lenient.__doc__ = typed_dict.__doc__  # the description a schema shows
    return lenient


def _lenient_dataclass(data_class: type, map_member: _MapMember) -> type:
    hints = typing.get_type_hints(data_class, include_extras=True)
    changed: list[tuple[str, Any, Any]] = []
    for field in dataclasses.fields(data_class):
        hint = hints.get(field.name, Any)
        new = map_member(hint)
        if new is not hint:
            options: dict[str, Any] = {"init": field.init, "repr": field.repr, "compare": field.compare}
            if field.default is not dataclasses.MISSING:
                options["default"] = field.default
            if field.default_factory is not dataclasses.MISSING:
                options["default_factory"] = field.default_factory
            if field.kw_only is not dataclasses.MISSING:
                options["kw_only"] = field.kw_only
            changed.append((field.name, new, dataclasses.field(**options)))
    if not changed:
        return data_class
    # A frozen dataclass's subclass must be frozen too (and a non-frozen one's must not).
    frozen = data_class.__dataclass_params__.frozen  # type: ignore[attr-defined]
    namespace = {"__doc__": data_class.__doc__}
    lenient: type = dataclasses.make_dataclass(
        data_class.__name__, changed, bases=(data_class,), frozen=frozen, namespace=namespace
    )
    lenient.__module__ = data_class.__module__
    if is_pydantic_dataclass(data_class):
        import pydantic.dataclasses

        # Made again by pydantic, which reads each default from the class: a factory has none there.
        for name, _, declared in changed:
            if declared.default_factory is not dataclasses.MISSING:
                setattr(lenient, name, declared)

        lenient = pydantic.dataclasses.dataclass(lenient, config=data_class.__pydantic_config__)
    lenient.__qualname__ = data_class.__qualname__
    return lenient


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
