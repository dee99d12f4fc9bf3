"""The strictness audit: every tool input field that a host's wrong-typed argument would break.

* **error**: a field whose canonical type is integer, number or boolean and that is not lenient,
  at any depth (inside lists, dicts, tuples, models, TypedDicts and dataclasses).
* **error**: a field whose advertised schema hides a bound from hosts, read from the JSON itself:
  for a server, the schema the server lists; for functions and models, pydantic's own JSON schema
  of them, which a plain framework lists. A bound under a name no host reads or beside a form it
  does not constrain (`pydantic_lenient.schema.hidden_bounds`, pydantic/pydantic#11576).
* **note**: a top-level array or object field that does not accept its JSON text.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic.fields import FieldInfo

from pydantic_lenient.types.annotations import (
    ARRAYS,
    is_lenient,
    is_structured,
    is_typeddict,
    split_annotated,
    with_metadata,
)
from pydantic_lenient.types.constraints import split_constraints
from pydantic_lenient.types.family import scalar_marker_class
from pydantic_lenient.types.forms import NULL_TEXT
from pydantic_lenient.types.json_values import AcceptJsonText
from pydantic_lenient.types.mapping import lenient_form
from pydantic_lenient.types.null_text import NullText
from pydantic_lenient.types.rendering import render_annotation

from .catalog import ToolSpec, tool_specs
from .hidden_bounds import HiddenBound, hidden_bounds
from .styles import apply_style

__all__ = ("Finding", "audit", "format_findings")

Level = Literal["error", "note"]
_UNION_TYPES = (typing.Union, types.UnionType)
_ANNOTATED: Any = Annotated  # subscripted with run-time values below
_UNION: Any = typing.Union
# For pydantic's JSON schema of an annotation, as the tool models allow any type.
_ANY_TYPES = ConfigDict(arbitrary_types_allowed=True)
_INSIDE_THE_OPTIONAL = (
    "the bound inside the Optional, on the type it bounds (Optional[Annotated[LenientInt, Field(ge=1)]])"
)


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
    advertised: str | None = None
    """Set when the field's advertised schema hides a bound from hosts: what it advertises, and why
    hosts cannot check it (``suggestion`` is then the annotation that advertises the bound, or
    empty where there is none to write in its place)."""
    refuses: str | None = None
    """Set when the field, lenient as written, refuses a form its lenient form takes: the string
    ``"null"`` of a hand-written ``Optional[LenientInt]``, which pydantic builds without telling the
    type that it is optional (docs/types.md, "The string null")."""

    def __str__(self) -> str:
        if self.advertised is not None:
            where = f"{self.path}: {self.annotation}" if self.annotation else self.path
            return f"{self.level}: {where} {self.advertised}; use {self.suggestion or _INSIDE_THE_OPTIONAL}"
        if self.reason is not None:
            return f"{self.level}: {self.path}: {self.annotation} stays as it is: {self.reason}"
        if self.refuses is not None:
            return f"{self.level}: {self.path}: {self.annotation} refuses {self.refuses}; use {self.suggestion}"
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
    >>> from pydantic import Field
    >>> def page(size: Optional[LenientUInt] = Field(None, le=500)) -> None: ...
    >>> [(finding.path, finding.suggestion) for finding in audit([page])]  # pydantic advertises le=500 as "le"
    [('page.size', 'Optional[Annotated[LenientUInt, Field(le=500)]]')]
    """
    findings: list[Finding] = []
    for spec in tool_specs(tools):
        found = [*_audit_model(spec.input_model, spec.name, top_level=True, seen=set()), *_hidden_bounds(spec)]
        order = {
            field.alias or name: index for index, (name, field) in enumerate(spec.input_model.model_fields.items())
        }
        # Field order; a field's findings about its annotation before those about its schema.
        findings.extend(sorted(found, key=lambda finding: order.get(_argument(finding.path, spec.name), len(order))))
    return findings


def _argument(path: str, tool: str) -> str:
    """The tool argument a finding's path starts with (``limit`` in ``search.limit[]``)."""
    rest = path.removeprefix(f"{tool}.")
    cut = min((index for index in map(rest.find, ".[{") if index >= 0), default=len(rest))
    return rest[:cut]


def _hidden_bounds(spec: ToolSpec) -> Iterator[Finding]:
    """An error for each field whose advertised schema hides a bound from hosts: in what the server
    lists, or for functions and models in pydantic's own JSON schema (what a plain framework lists)."""
    if spec.advertised is not None:
        schema: Any = spec.advertised
    else:
        try:
            schema = spec.input_model.model_json_schema()
        except PydanticInvalidForJsonSchema:  # a type no framework could list either
            return
    found = hidden_bounds(schema, spec.name)
    # The adapters' style stage rewrites pydantic's bound names into the bounds they mean; which of
    # these it repairs is read off its output, not assumed.
    unrepaired = (
        {bound.path for bound in hidden_bounds(apply_style(schema, "type-array"), spec.name)} if found else set()
    )
    fields = dict(_model_fields(spec.input_model, spec.name, seen=frozenset()))
    for bound in found:
        adapter = bool(bound.names) and bound.path not in unrepaired
        yield _hidden_bound_finding(bound, fields.get(bound.path), adapter=adapter)


def _hidden_bound_finding(bound: HiddenBound, field: FieldInfo | None, *, adapter: bool) -> Finding:
    described = bound.describe(adapters_repair=adapter)
    if field is None:  # an item of a list or a dict: no annotation of its own to rewrite
        return Finding("error", bound.path, "", "", advertised=described)
    metadata = tuple(field.metadata)
    inside = _bounds_inside(field.annotation, metadata)
    return Finding(
        "error",
        bound.path,
        render_annotation(with_metadata(field.annotation, metadata)),
        "" if inside is None else render_annotation(inside),
        advertised=described,
    )


def _model_fields(model: type[BaseModel], path: str, *, seen: frozenset[type]) -> Iterator[tuple[str, FieldInfo]]:
    """Every field of ``model`` and of the models its fields hold (through ``Optional``), by the
    path a client sends it under."""
    if model in seen:
        return
    for name, field in model.model_fields.items():
        here = f"{path}.{field.alias or name}"
        yield here, field
        nested = _model_in(field.annotation)
        if nested is not None:
            yield from _model_fields(nested, here, seen=seen | {model})


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds, through ``Annotated`` and an ``Optional``."""
    base, _ = split_annotated(annotation)
    if typing.get_origin(base) in _UNION_TYPES:
        members = [member for member in typing.get_args(base) if member is not type(None)]
        base = split_annotated(members[0])[0] if len(members) == 1 else None
    return base if isinstance(base, type) and issubclass(base, BaseModel) else None


def _bounds_inside(annotation: Any, outer: tuple[Any, ...]) -> Any:
    """``annotation`` (with ``outer`` metadata) with the bounds written outside its ``Optional``
    moved inside it, onto each member, where pydantic advertises them as JSON Schema; None when it
    is no such ``Optional``, or when pydantic's schema of the result still hides a bound."""
    base, inner = split_annotated(annotation)
    members = typing.get_args(base)
    if typing.get_origin(base) not in _UNION_TYPES or type(None) not in members:
        return None
    split = split_constraints((*outer, *inner))
    moved = (*split.numeric, *split.lengths)
    if not moved:
        return None
    union = _UNION[tuple(member if member is type(None) else _bounded(member, moved) for member in members)]
    candidate = with_metadata(union, split.rest)
    schema = _json_schema(candidate)
    return None if schema is None or hidden_bounds(schema) else candidate


def _bounded(member: Any, bounds: tuple[Any, ...]) -> Any:
    """``Annotated[member, *bounds]``; for a ``LenientJson[T]``, ``LenientJson[Annotated[T, *bounds]]``,
    which bounds the same value and is written with public names."""
    base, metadata = split_annotated(member)
    if metadata and isinstance(metadata[-1], AcceptJsonText):
        return with_metadata(base, (*metadata[:-1], *bounds, metadata[-1]))
    return with_metadata(base, (*metadata, *bounds))


def _json_schema(annotation: Any) -> dict[str, Any] | None:
    """pydantic's JSON schema of ``annotation``; None for one it cannot build (``ge`` on a ``str``)."""
    try:
        return TypeAdapter(annotation, config=_ANY_TYPES).json_schema()
    except Exception:
        return None


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
    elif not kept and _only_adds_null_text(form.annotation, whole):
        yield Finding("note", path, current, render_annotation(form.annotation), refuses=_NULL_TEXT_REFUSED)
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


_NULL_TEXT_REFUSED = f'the string "{NULL_TEXT}"'


def _only_adds_null_text(lenient: Any, written: Any) -> bool:
    """Whether the lenient form is the annotation as written plus `NullText` (it takes ``"null"``
    as None where the annotation as written, lenient already, does not)."""
    base, metadata = split_annotated(lenient)
    markers = [marker for marker in metadata if not isinstance(marker, NullText)]
    if len(markers) == len(metadata):
        return False
    parts = (base, *markers)
    return bool((_ANNOTATED[parts] if markers else base) == written)


def _is_strict_scalar(member: Any) -> bool:
    member_base, member_metadata = split_annotated(member)
    return scalar_marker_class(member_base) is not None and not is_lenient(member_metadata)


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
