"""The constraints of a ``Field(...)`` default moved into the annotation it is the default of.

After a lenient marker, pydantic would advertise a default's constraints as words JSON Schema does
not know and check them in Python, or, before it, drop them; so ``fix`` moves them into the
annotation (``int | None = Field(default=None, ge=1)`` becomes
``Lenient[Annotated[int | None, Field(ge=1)]] = Field(default=None)``), the rest of the call
staying as written, and only where the move means exactly what the parameter meant.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import annotated_types
import libcst as cst
from pydantic import Field
from pydantic.fields import FieldInfo

from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.types.annotations import split_annotated, with_metadata
from pydantic_lenient.types.family import LenientMarker
from pydantic_lenient.types.mapping import lenient_annotation

from ._writer import AnnotationWriter, is_lenient_as_written

__all__ = ("ConstraintMover", "Default", "parameter_field")


@dataclass(frozen=True)
class Default:
    """A parameter's or field's default: as being rewritten, as parsed (where scopes are known), and
    the field pydantic builds from it with the annotation (None when it is no ``FieldInfo``)."""

    node: cst.BaseExpression | None
    original: cst.BaseExpression | None
    field_info: Callable[[], FieldInfo | None]


def parameter_field(function: Any, name: str) -> FieldInfo | None:
    """The field pydantic builds for a parameter whose default is a ``FieldInfo`` (as the MCP SDKs
    build it), or None."""
    parameter = inspect.signature(function).parameters.get(name)
    if parameter is None or not isinstance(parameter.default, FieldInfo):
        return None
    fields = list(model_from_function(function, keep=[name]).model_fields.values())
    return fields[0] if len(fields) == 1 else None


class ConstraintMover:
    """Moves a default's constraints into its annotation, written by ``writer``."""

    def __init__(self, writer: AnnotationWriter) -> None:
        self.writer = writer

    def moved_into_annotation(
        self, node: cst.BaseExpression, written: Default, hint: Any, built: FieldInfo, own: list[Any]
    ) -> tuple[cst.BaseExpression, cst.BaseExpression, list[str]] | None:
        """The lenient annotation with the constraint arguments of the default ``Field(...)`` call
        inside it, the call without them, and their names; None unless the move means exactly what
        the parameter meant: the call is pydantic's ``Field``, its constraint values are literals (an
        annotation may be evaluated later than a default, under ``from __future__ import
        annotations`` after the module has bound a name again), and pydantic builds the same checks
        from the result."""
        default = written.node
        if not isinstance(default, cst.Call) or not self.writer.imports.refers_to(default.func, "pydantic", "Field"):
            return None
        arguments = [argument for argument in default.args if _is_constraint_argument(argument)]
        if not arguments or any(argument.star for argument in default.args) or _transforms_values(hint):
            return None
        if not isinstance(written.original, cst.Call) or not all(
            _is_literal(argument.value) for argument in written.original.args if _is_constraint_argument(argument)
        ):
            return None
        # pydantic puts the default's constraints before the annotation's own metadata.
        count = len(built.metadata) - len(own)
        if count <= 0 or list(built.metadata[count:]) != list(own):
            return None
        keywords = _as_keywords(built.metadata[:count])
        named = {argument.keyword.value for argument in arguments if argument.keyword and not _is_none(argument.value)}
        if keywords is None or set(keywords) != named:
            return None
        call = cst.Call(
            func=_FIELD,
            args=[
                cst.Arg(value=argument.value, keyword=argument.keyword, equal=argument.equal) for argument in arguments
            ],
        )
        constrained = self._with_constraints(node, hint, call, Field(**keywords))
        if constrained is None:
            return None
        new_node, new_hint = constrained
        # pydantic 2.11 writes into the FieldInfo of an annotation it reads: it reads its own copy.
        copied = self._with_constraints(node, hint, call, Field(**keywords))
        assert copied is not None
        if not _same_checks(FieldInfo.from_annotation(copied[1]).metadata, built.metadata):
            return None
        lenient = lenient_annotation(new_hint)
        if lenient is new_hint or is_lenient_as_written(new_hint, lenient):
            return None
        rewritten = self.writer.rewritten(new_node, new_hint, lenient)
        if rewritten is None:
            return None
        expression = rewritten.visit(_Placeholders(self.writer.name))
        assert isinstance(expression, cst.BaseExpression)  # renaming names keeps an expression one
        names = [argument.keyword.value for argument in arguments if argument.keyword is not None]
        return expression, _without(default, arguments), names

    def _with_constraints(
        self, node: cst.BaseExpression, hint: Any, call: cst.Call, constraints: FieldInfo
    ) -> tuple[cst.BaseExpression, Any] | None:
        """``node`` with ``call`` in an ``Annotated``, and the annotation it then means: first among
        the metadata of an ``Annotated[...]`` written in the source (where pydantic puts a default's
        constraints), else in a new ``Annotated[node, call]``."""
        element = cst.SubscriptElement(slice=cst.Index(value=call))
        base, metadata = split_annotated(hint)
        if self.writer.annotated_parts(node) is not None and metadata:
            assert isinstance(node, cst.Subscript)
            written = len(node.slice) - 1
            if len(metadata) < written or any(
                not isinstance(part.slice, cst.Index) or part.slice.star is not None for part in node.slice
            ):
                return None
            split = len(metadata) - written
            new_hint = with_metadata(base, (*metadata[:split], constraints, *metadata[split:]))
            return node.with_changes(slice=[node.slice[0], element, *node.slice[1:]]), new_hint
        wrapped = cst.Subscript(
            value=_ANNOTATED_NAME, slice=[cst.SubscriptElement(slice=cst.Index(value=node)), element]
        )
        return wrapped, _ANNOTATED[hint, constraints]


# Placeholders for the names a moved constraint is written with, until the rewrite is done and
# each is written as the module imports it (`_Placeholders`).
_ANNOTATED_NAME = cst.Name("Annotated")
_FIELD = cst.Name("Field")
_ANNOTATED: Any = Annotated  # subscripted with run-time values
# The keyword arguments of ``Field(...)`` that pydantic turns into constraint metadata, each with the
# metadata class it makes, or None for those it gathers into one general marker (``pattern``).
_CONSTRAINT_KEYWORDS = FieldInfo.metadata_lookup
_KEYWORD_OF = {marker: keyword for keyword, marker in _CONSTRAINT_KEYWORDS.items() if marker is not None}
_GENERAL_KEYWORDS = frozenset(keyword for keyword, marker in _CONSTRAINT_KEYWORDS.items() if marker is None)
_GENERAL_METADATA = type(Field(pattern="").metadata[0])


class _Placeholders(cst.CSTTransformer):
    """The placeholder names written as the module imports them (``_lenient_Field`` where the
    module binds ``Field`` to something else)."""

    def __init__(self, imported: Callable[[str, str], cst.Name]) -> None:
        super().__init__()
        self._imported = imported

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original is _ANNOTATED_NAME:
            return self._imported("Annotated", "typing")
        if original is _FIELD:
            return self._imported("Field", "pydantic")
        return updated


def _is_constraint_argument(argument: cst.Arg) -> bool:
    return argument.keyword is not None and argument.keyword.value in _CONSTRAINT_KEYWORDS


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _is_literal(node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a value written out (a number, a string, a signed number, ``True``,
    ``False`` or ``None``), which means the same wherever and whenever it is read."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.ConcatenatedString):
        return _is_literal(node.left) and _is_literal(node.right)
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def _as_keywords(metadata: list[Any]) -> dict[str, Any] | None:
    """The ``Field(...)`` keyword arguments that make exactly ``metadata``, or None if some of it
    is not a constraint ``Field`` makes."""
    keywords: dict[str, Any] = {}
    for marker in metadata:
        if type(marker) is _GENERAL_METADATA:
            found = dict(vars(marker))
            if not found.keys() <= _GENERAL_KEYWORDS:
                return None
        elif type(marker) in _KEYWORD_OF:
            keyword = _KEYWORD_OF[type(marker)]
            found = {keyword: getattr(marker, keyword)}
        else:
            return None
        if found.keys() & keywords.keys():
            return None
        keywords.update(found)
    return keywords


def _same_checks(metadata: list[Any], expected: list[Any]) -> bool:
    """Whether pydantic builds the same validation from both: the same metadata, where constraints
    (which pydantic checks to the same effect in any order) may change places among themselves but
    never pass anything else (a validator, a type that builds its own schema)."""
    runs, expected_runs = _constraint_runs(metadata), _constraint_runs(expected)
    return len(runs) == len(expected_runs) and all(
        _same_run(run, other) for run, other in zip(runs, expected_runs, strict=True)
    )


def _same_run(run: Any, other: Any) -> bool:
    """The same marker, or the same constraints in any order."""
    if isinstance(run, list) != isinstance(other, list):
        return False
    if not isinstance(run, list):
        return _is_same(run, other)
    return len(run) == len(other) and all(
        sum(_is_same(marker, item) for item in run) == sum(_is_same(marker, item) for item in other) for marker in run
    )


def _is_same(marker: Any, other: Any) -> bool:
    return marker is other or bool(marker == other)


def _constraint_runs(metadata: list[Any]) -> list[Any]:
    """``metadata`` with each stretch of consecutive constraints gathered into a list."""
    runs: list[Any] = [[]]
    for marker in metadata:
        if _is_plain_constraint(marker):
            runs[-1].append(marker)
        else:
            runs += [marker, []]
    return runs


def _is_plain_constraint(marker: Any) -> bool:
    """An annotated-types or pydantic constraint: a check on the value, not a schema of its own."""
    return marker is None or (
        isinstance(marker, (annotated_types.BaseMetadata, annotated_types.GroupedMetadata))
        and not isinstance(marker, FieldInfo)
        and not hasattr(marker, "__get_pydantic_core_schema__")
    )


def _transforms_values(hint: Any) -> bool:
    """Whether ``hint`` holds, at any depth, metadata other than constraints and lenient markers (a
    validator): pydantic checks a default's constraints after it, and the mapping would fold them
    into the marker, before it."""
    base, metadata = split_annotated(hint)
    for marker in metadata:
        parts = marker.metadata if isinstance(marker, FieldInfo) else [marker]
        if not all(_is_plain_constraint(part) or _keeps_meaning(part) for part in parts):
            return True
    return any(_transforms_values(argument) for argument in typing.get_args(base))


def _keeps_meaning(marker: Any) -> bool:
    """A lenient marker that takes more forms of the same value (not one that changes it)."""
    return isinstance(marker, LenientMarker) and marker.keeps_meaning


def _without(call: cst.Call, removed: list[cst.Arg]) -> cst.Call:
    """``call`` without the ``removed`` arguments, its last argument ending as its last one did
    (a trailing comma, the line break before the parenthesis), with its own comment."""
    kept = [argument for argument in call.args if not any(argument is other for other in removed)]
    if not kept or kept[-1] is call.args[-1]:
        return call.with_changes(args=kept)
    last, own = call.args[-1], kept[-1]
    comma = last.comma
    if isinstance(comma, cst.Comma) and isinstance(own.comma, cst.Comma):
        mine, theirs = own.comma.whitespace_after, comma.whitespace_after
        if isinstance(mine, cst.ParenthesizedWhitespace) and isinstance(theirs, cst.ParenthesizedWhitespace):
            comma = comma.with_changes(whitespace_after=theirs.with_changes(first_line=mine.first_line))
    kept[-1] = own.with_changes(comma=comma, whitespace_after_arg=last.whitespace_after_arg)
    return call.with_changes(args=kept)
