"""The strictness audit: every tool input field that a host's wrong-typed argument would break.

* **error**: a field whose canonical type is integer, number or boolean and that is not lenient,
  at any depth (inside lists, dicts, tuples, models, TypedDicts and dataclasses).
* **note**: a top-level array or object field that does not accept its JSON text.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel

from pydantic_lenient.types.annotations import ARRAYS, is_lenient, is_structured, is_typeddict, split_annotated
from pydantic_lenient.types.json_values import AcceptJsonText
from pydantic_lenient.types.mapping import lenient_form
from pydantic_lenient.types.rendering import render_annotation

from .catalog import tool_specs

__all__ = ("Finding", "audit", "format_findings")

Level = Literal["error", "note"]
_UNION_TYPES = (typing.Union, types.UnionType)
_ANNOTATED: Any = Annotated  # subscripted with run-time values below


@dataclass(frozen=True)
class Finding:
    """One field to change: where it is, what it is now, and what to write instead.

    >>> from pydantic_lenient import audit
    >>> def move(uids: list[int]) -> None: ...
    >>> [(finding.level, finding.path, finding.suggestion) for finding in audit([move])]
    [('note', 'move.uids', 'LenientJson[list[LenientInt]]'), ('error', 'move.uids[]', 'LenientInt')]
    """

    level: Level
    path: str
    annotation: str
    suggestion: str
    reason: str | None = None
    """Set when the field stays as it is: why it cannot be made lenient (``suggestion`` is then empty)."""

    def __str__(self) -> str:
        if self.reason is not None:
            return f"{self.level}: {self.path}: {self.annotation} stays as it is: {self.reason}"
        why = "is not lenient" if self.level == "error" else "does not accept JSON text"
        return f"{self.level}: {self.path}: {self.annotation} {why}; use {self.suggestion}"


def audit(tools: Any) -> list[Finding]:
    """Audit every tool in ``tools`` (anything `tool_catalog` accepts), errors and notes in field order.

    >>> from typing import Optional
    >>> from pydantic_lenient import LenientUInt, audit
    >>> def search(folder: str, limit: Optional[int] = None, offset: LenientUInt = 0) -> None: ...
    >>> for finding in audit([search]):
    ...     print(finding)
    error: search.limit: Optional[int] is not lenient; use Lenient[Optional[LenientInt]]
    """
    findings: list[Finding] = []
    for spec in tool_specs(tools):
        findings.extend(_audit_model(spec.input_model, spec.name, top_level=True, seen=set()))
    return findings


def format_findings(findings: list[Finding]) -> str:
    """A readable report: one line per finding, then a count.

    >>> from pydantic_lenient.schema.audit import audit, format_findings
    >>> def fetch(uid: int, mark_read: bool = False) -> None: ...
    >>> print(format_findings(audit([fetch])))
    error: fetch.uid: int is not lenient; use LenientInt
    error: fetch.mark_read: bool is not lenient; use StrictBoolish
    2 error(s), 0 note(s)
    """
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
            field.annotation,
            f"{path}.{field.alias or name}",  # the name a client sends
            top_level=top_level,
            seen=seen,
            outer=tuple(field.metadata),
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
    parts = (base, *metadata)
    whole = _ANNOTATED[parts] if metadata else base
    form = lenient_form(whole)
    members = typing.get_args(base) if typing.get_origin(base) in _UNION_TYPES else (whole,)
    here = {id(whole), *map(id, members)}
    kept = [entry for entry in form.kept if id(entry.annotation) in here]
    current = render_annotation(whole)
    for entry in kept:
        yield Finding("note", path, current, "", reason=entry.reason)
    scalars = [member for member in members if _is_strict_scalar(member)]
    structures = [member for member in members if is_structured(split_annotated(member)[0])]
    if scalars and not kept:
        yield Finding("error", path, current, render_annotation(form.annotation))
    without_text = [
        member
        for member in structures
        if not any(isinstance(marker, AcceptJsonText) for marker in (*split_annotated(member)[1], *metadata))
    ]
    if without_text and top_level and not scalars and form.annotation is not whole:
        yield Finding("note", path, current, render_annotation(form.annotation))
    for member in structures:
        member_base, _ = split_annotated(member)
        for child, child_path in _children(member_base, path):
            yield from _audit_structure(child, child_path, seen)


def _is_strict_scalar(member: Any) -> bool:
    member_base, member_metadata = split_annotated(member)
    return member_base in (int, float, bool) and not is_lenient(member_metadata)


def _audit_structure(annotation: Any, path: str, seen: set[type]) -> Iterator[Finding]:
    base, _ = split_annotated(annotation)
    if isinstance(base, type) and issubclass(base, BaseModel):
        yield from _audit_model(base, path, top_level=False, seen=seen)
    else:
        yield from _audit(annotation, path, top_level=False, seen=seen)


def _children(base: Any, path: str) -> Iterator[tuple[Any, str]]:
    """The annotations one level inside a type `is_structured` admits, with their paths."""
    origin = typing.get_origin(base) or base
    arguments = typing.get_args(base)
    if origin in ARRAYS:
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
    elif is_typeddict(base):
        for name, hint in typing.get_type_hints(base, include_extras=True).items():
            yield hint, f"{path}.{name}"
    elif dataclasses.is_dataclass(base) and isinstance(base, type):
        hints = typing.get_type_hints(base, include_extras=True)
        for field in dataclasses.fields(base):
            yield hints.get(field.name, Any), f"{path}.{field.name}"
