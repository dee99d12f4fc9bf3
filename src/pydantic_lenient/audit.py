"""The strictness audit: every tool input field that a host's wrong-typed argument would break.

* **error**: a field whose canonical type is integer, number or boolean and that is not lenient,
  at any depth (inside lists, dicts, tuples, models, TypedDicts and dataclasses).
* **note**: a top-level array or object field that does not accept its JSON text.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ._annotations import is_lenient, lenient_scalar, split_annotated
from .catalog import tool_specs
from .json_values import AcceptJsonText

__all__ = ("Finding", "audit", "format_findings")

Level = Literal["error", "note"]
_SEQUENCES = frozenset({list, set, frozenset, tuple})
_UNION_TYPES = (typing.Union, types.UnionType)


@dataclass(frozen=True)
class Finding:
    """One field to change: where it is, what it is now, and what to write instead."""

    level: Level
    path: str
    annotation: str
    suggestion: str

    def __str__(self) -> str:
        why = "is not lenient" if self.level == "error" else "does not accept JSON text"
        return f"{self.level}: {self.path}: {self.annotation} {why}; use {self.suggestion}"


def audit(tools: Any) -> list[Finding]:
    """Audit every tool in ``tools`` (anything `tool_catalog` accepts), errors and notes in field order."""
    findings: list[Finding] = []
    for spec in tool_specs(tools):
        findings.extend(_audit_model(spec.input_model, spec.name, top_level=True, seen=set()))
    return findings


def format_findings(findings: list[Finding]) -> str:
    """A readable report: one line per finding, then a count."""
    errors = sum(finding.level == "error" for finding in findings)
    lines = [str(finding) for finding in findings]
    lines.append(f"{errors} error(s), {len(findings) - errors} note(s)")
    return "\n".join(lines)


def _audit_model(model: type[BaseModel], path: str, *, top_level: bool, seen: set[type]) -> Iterator[Finding]:
    if model in seen:
        return
    seen = seen | {model}
    for name, field in model.model_fields.items():
        # pydantic keeps a field's Annotated metadata apart from its annotation.
        yield from _audit(
            field.annotation, f"{path}.{name}", top_level=top_level, seen=seen, outer=tuple(field.metadata)
        )


def _audit(
    annotation: Any, path: str, *, top_level: bool, seen: set[type], outer: tuple[Any, ...] = ()
) -> Iterator[Finding]:
    """Findings for one annotation. ``top_level`` is true for a tool's own arguments; ``outer`` is
    metadata that applies to the whole annotation (a model field's, kept apart by pydantic)."""
    base, inner = split_annotated(annotation)
    metadata = outer + inner
    if is_lenient(metadata):
        return
    members = typing.get_args(base) if typing.get_origin(base) in _UNION_TYPES else (annotation,)
    # A union with str already takes any string argument, so its numbers are not at risk.
    takes_any_string = any(split_annotated(member)[0] is str for member in members)
    scalars: dict[int, str] = {}
    structures: dict[int, str] = {}
    inside: list[tuple[Any, str]] = []
    for member in members:
        member_base, member_metadata = split_annotated(member)
        if is_lenient(member_metadata):
            continue
        lenient = lenient_scalar(member_base, member_metadata + metadata)
        if lenient is not None:
            if not takes_any_string:
                scalars[id(member_base)] = lenient
        elif _is_structured(member_base):
            if not any(isinstance(marker, AcceptJsonText) for marker in member_metadata + metadata):
                structures[id(member_base)] = f"LenientJson[{_render(member_base)}]"
            inside.extend(_children(member_base, path))
    if scalars:
        yield Finding("error", path, _render(annotation), _render(annotation, scalars))
    if structures and top_level:
        yield Finding("note", path, _render(annotation), _render(annotation, structures))
    for child, child_path in inside:
        yield from _audit_structure(child, child_path, seen)


def _audit_structure(annotation: Any, path: str, seen: set[type]) -> Iterator[Finding]:
    base, _ = split_annotated(annotation)
    if isinstance(base, type) and issubclass(base, BaseModel):
        yield from _audit_model(base, path, top_level=False, seen=seen)
    else:
        yield from _audit(annotation, path, top_level=False, seen=seen)


def _children(base: Any, path: str) -> Iterator[tuple[Any, str]]:
    """The annotations one level inside a type `_is_structured` admits, with their paths."""
    origin = typing.get_origin(base) or base
    arguments = typing.get_args(base)
    if origin in _SEQUENCES:
        for index, item in enumerate(arguments):
            if item is not Ellipsis:
                yield (
                    item,
                    f"{path}[{index}]" if origin is tuple and Ellipsis not in arguments else f"{path}[]",
                )
    elif origin is dict:
        if len(arguments) == 2:
            yield arguments[1], f"{path}{{}}"
    elif isinstance(base, type) and issubclass(base, BaseModel):
        yield base, path
    elif _is_typeddict(base):
        for name, hint in typing.get_type_hints(base, include_extras=True).items():
            yield hint, f"{path}.{name}"
    elif dataclasses.is_dataclass(base) and isinstance(base, type):
        hints = typing.get_type_hints(base, include_extras=True)
        for field in dataclasses.fields(base):
            yield hints.get(field.name, Any), f"{path}.{field.name}"


def _is_structured(base: Any) -> bool:
    origin = typing.get_origin(base) or base
    return (
        origin in _SEQUENCES
        or origin is dict
        or (isinstance(base, type) and issubclass(base, BaseModel))
        or _is_typeddict(base)
        or (dataclasses.is_dataclass(base) and isinstance(base, type))
    )


def _is_typeddict(base: Any) -> bool:
    # typing.is_typeddict misses typing_extensions.TypedDict on older Pythons; both have these.
    return isinstance(base, type) and issubclass(base, dict) and hasattr(base, "__total__")


def _render(annotation: Any, replacements: dict[int, str] | None = None) -> str:
    """An annotation as it would be written, with ``Annotated`` metadata left out and any part
    whose ``id`` is in ``replacements`` written as its replacement."""
    base, _ = split_annotated(annotation)
    if replacements and id(base) in replacements:
        return replacements[id(base)]
    render: Callable[[Any], str] = lambda part: _render(part, replacements)  # noqa: E731
    origin = typing.get_origin(base)
    arguments = typing.get_args(base)
    if origin in _UNION_TYPES:
        members = [member for member in arguments if member is not type(None)]
        inner = " | ".join(render(member) for member in members)
        return f"Optional[{inner}]" if len(members) < len(arguments) else inner
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, arguments))}]"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join('...' if part is Ellipsis else render(part) for part in arguments)}]"
    if base is Any:
        return "Any"
    return getattr(base, "__name__", repr(base))
