"""A tool annotation as written in the source, rewritten into its lenient form.

The syntax tree and the run-time annotation are walked together, so that the names and the layout
the author wrote stay (``Optional[int]`` keeps its ``Optional``, ``int | None`` its ``|``); where
the two cannot be matched up, the lenient annotation is written out as `render_annotation` gives
it. Every name a rewrite writes is imported as `Imports` chooses.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from pydantic_lenient.types.annotations import UNION_TYPES, split_annotated, with_metadata
from pydantic_lenient.types.family import LenientScalar
from pydantic_lenient.types.json_values import AcceptJsonText
from pydantic_lenient.types.lenient_classes import ORIGINALS
from pydantic_lenient.types.null_text import NullText
from pydantic_lenient.types.rendering import ALIAS_NAMES, render_annotation

from ._imports import ImportedNames, Imports

__all__ = ("AnnotationWriter", "is_lenient_as_written")


class AnnotationWriter:
    """Writes lenient annotations into one module: each name it writes is imported (noted in
    ``context`` for `AddImportsVisitor`) under the local name ``imports`` chooses."""

    def __init__(self, context: CodemodContext, imports: Imports) -> None:
        self.context = context
        self.imports = imports

    def rewritten(self, node: cst.BaseExpression, hint: Any, lenient: Any) -> cst.BaseExpression | None:
        """`_rewrite`, or None when the lenient form holds something `render_annotation` cannot write
        as source (a validator's function): nothing is written then, so nothing is imported for it."""
        needed = list(self.context.scratch.get(AddImportsVisitor.CONTEXT_KEY, []))
        try:
            return self._rewrite(node, hint, lenient)
        except cst.ParserSyntaxError:
            self.context.scratch[AddImportsVisitor.CONTEXT_KEY] = needed
            return None

    def _rewrite(self, node: cst.BaseExpression, hint: Any, lenient: Any) -> cst.BaseExpression:
        """``node`` (which means ``hint``) written as ``lenient``, keeping what the source wrote."""
        base, metadata = split_annotated(hint)
        new_base, new_metadata = split_annotated(lenient)
        if lenient is hint or lenient == hint:
            return node
        if _only_lenient_says(metadata, new_metadata):
            return self.subscript("Lenient", node)
        if new_metadata and new_metadata[-1] == AcceptJsonText() and AcceptJsonText() not in metadata:
            inner = with_metadata(new_base, new_metadata[:-1])
            if not new_metadata[:-1] and new_base in ORIGINALS and new_base is not base:
                return self.subscript("Lenient", node)
            return self.subscript("LenientJson", self._rewrite(node, hint, inner))
        if new_metadata and isinstance(new_metadata[0], LenientScalar):
            alias = ALIAS_NAMES.get(new_metadata[0])
            if alias is not None and new_metadata[1:] == metadata:
                if not metadata:
                    return self.name(alias)
                annotated = self.annotated_parts(node)
                if annotated is not None:
                    return self._with_first_element(node, self.name(alias))
            if alias is not None and len(new_metadata) == 1:
                return self.name(alias)  # a named type that carries the bounds itself
        if metadata and metadata == new_metadata and self.annotated_parts(node) is not None:
            first = self.annotated_parts(node)
            assert first is not None
            return self._with_first_element(node, self._rewrite(first, base, new_base))
        if not metadata and not new_metadata:
            rewritten = self._rewrite_structure(node, base, new_base)
            if rewritten is not None:
                return rewritten
        return self._rendered(lenient)

    def _rewrite_structure(self, node: cst.BaseExpression, hint: Any, lenient: Any) -> cst.BaseExpression | None:
        origin, new_origin = typing.get_origin(hint), typing.get_origin(lenient)
        arguments, new_arguments = typing.get_args(hint), typing.get_args(lenient)
        if origin in UNION_TYPES and new_origin in UNION_TYPES:
            return self._rewrite_union(node, arguments, new_arguments)
        if origin is None or origin is not new_origin or len(arguments) != len(new_arguments):
            return None
        if not isinstance(node, cst.Subscript) or len(node.slice) != len(arguments):
            return None
        return self._rewrite_elements(node, list(zip(arguments, new_arguments, strict=True)))

    def _rewrite_union(
        self, node: cst.BaseExpression, arguments: tuple[Any, ...], new_arguments: tuple[Any, ...]
    ) -> cst.BaseExpression | None:
        if len(arguments) != len(new_arguments):
            return None
        lenient_of = dict(zip(arguments, new_arguments, strict=True))
        if isinstance(node, cst.Subscript) and _name_of(node.value) == "Optional" and len(node.slice) == 1:
            members = [argument for argument in arguments if argument is not type(None)]
            if len(members) != 1:
                return None
            return self._rewrite_elements(node, [(members[0], lenient_of[members[0]])])
        if isinstance(node, cst.Subscript) and _name_of(node.value) == "Union":
            if len(node.slice) != len(arguments):
                return None
            return self._rewrite_elements(node, [(argument, lenient_of[argument]) for argument in arguments])
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            operands = _bit_or_operands(node)
            if len(operands) != len(arguments):
                return None
            rewritten = [
                self._rewrite(operand, argument, lenient_of[argument])
                for operand, argument in zip(operands, arguments, strict=True)
            ]
            replaced: cst.BaseExpression = _replace_bit_or_operands(node, iter(rewritten))
            return replaced
        return None

    def _rewrite_elements(self, node: cst.Subscript, pairs: list[tuple[Any, Any]]) -> cst.BaseExpression | None:
        """``node[...]`` with each element rewritten from its (annotation, lenient annotation) pair."""
        elements = []
        for element, (argument, new_argument) in zip(node.slice, pairs, strict=True):
            if not isinstance(element.slice, cst.Index):
                return None
            value = self._rewrite(element.slice.value, argument, new_argument)
            elements.append(element.with_changes(slice=element.slice.with_changes(value=value)))
        return node.with_changes(slice=elements)

    def annotated_parts(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The first element of ``Annotated[X, ...]`` written in the source, or None."""
        if isinstance(node, cst.Subscript) and _name_of(node.value) == "Annotated" and len(node.slice) >= 2:
            first = node.slice[0].slice
            if isinstance(first, cst.Index):
                return first.value
        return None

    def _with_first_element(self, node: cst.BaseExpression, value: cst.BaseExpression) -> cst.BaseExpression:
        assert isinstance(node, cst.Subscript)
        first = node.slice[0]
        assert isinstance(first.slice, cst.Index)
        return node.with_changes(
            slice=[first.with_changes(slice=first.slice.with_changes(value=value)), *node.slice[1:]]
        )

    def name(self, name: str, module: str = "pydantic_lenient") -> cst.Name:
        local = self.imports.local_name(module, name)
        AddImportsVisitor.add_needed_import(self.context, module, name, None if local == name else local)
        return cst.Name(local)

    def subscript(self, name: str, inner: cst.BaseExpression) -> cst.Subscript:
        return cst.Subscript(value=self.name(name), slice=[cst.SubscriptElement(slice=cst.Index(value=inner))])

    def _rendered(self, lenient: Any) -> cst.BaseExpression:
        expression = cst.parse_expression(render_annotation(lenient)).visit(ImportedNames(self.name))
        assert isinstance(expression, cst.BaseExpression)  # renaming names keeps an expression one
        return expression


def _name_of(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _bit_or_operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return [*_bit_or_operands(node.left), *_bit_or_operands(node.right)]
    return [node]


def _replace_bit_or_operands(node: cst.BaseExpression, replacements: Iterator[cst.BaseExpression]) -> Any:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        left = _replace_bit_or_operands(node.left, replacements)
        return node.with_changes(left=left, right=_replace_bit_or_operands(node.right, replacements))
    return next(replacements)


def is_lenient_as_written(hint: Any, lenient: Any) -> bool:
    """Whether ``hint`` already is the lenient annotation, written with its bounds after the marker."""
    return render_annotation(hint) == render_annotation(lenient)


def _only_lenient_says(metadata: tuple[Any, ...], new_metadata: tuple[Any, ...]) -> bool:
    """Whether the lenient form has a part that the names alone cannot write exactly, so that fix
    writes ``Lenient[...]`` around the annotation as it is: the `NullText` of an ``Optional`` (a
    hand-written ``Optional[LenientInt]`` refuses the string ``"null"``), or bounds the mapping moved
    into a new marker (after a hand-written ``LenientInt`` pydantic checks them in Python, ~2x slower)."""
    if any(isinstance(marker, NullText) for marker in new_metadata) and NullText() not in metadata:
        return True
    if any(_holds_bounds(marker) for marker in metadata):
        return False  # a marker written by hand is kept as written
    return bool(new_metadata) and _holds_bounds(new_metadata[0]) and (new_metadata[0] not in ALIAS_NAMES)


def _holds_bounds(marker: Any) -> bool:
    return isinstance(marker, LenientScalar) and bool(marker.bound_names)
