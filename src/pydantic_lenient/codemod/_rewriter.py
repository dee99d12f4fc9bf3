"""The walk over a module's syntax tree that finds each tool's definition and rewrites its annotations.

A function is identified by its qualified name and the line its code object names (two ``def tool``
in the branches of an ``if`` are told apart), a model by its qualified name defined once (or, where
Python records it, its line). Each parameter or field is then made lenient (`Rewriter.fixed`): its
annotation rewritten by `AnnotationWriter`, or its default's constraints moved into it by
`ConstraintMover`.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator, Sequence
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import PositionProvider
from pydantic.fields import FieldInfo

from pydantic_lenient.types.annotations import function_hints
from pydantic_lenient.types.mapping import lenient_annotation

from ._constraints import ConstraintMover, Default, parameter_field
from ._imports import Imports
from ._writer import AnnotationWriter, is_lenient_as_written

__all__ = ("Rewriter",)


class Rewriter(cst.CSTTransformer):
    """Rewrites the annotations of ``functions`` and ``models`` (by qualified name) where their
    definitions are found; ``changes``, ``kept`` and ``matched`` say what it did."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(
        self,
        functions: dict[str, list[Any]],
        models: dict[str, list[type]],
        context: CodemodContext,
        imports: Imports,
    ) -> None:
        super().__init__()
        self.functions = functions
        self.models = models
        self.writer = AnnotationWriter(context, imports)
        self.mover = ConstraintMover(self.writer)
        self.scope: list[str] = []
        self.changes: list[str] = []
        self.kept: list[str] = []
        self.matched: set[int] = set()
        self._class_counts: dict[str, int] = {}

    # Finding the definitions.

    def visit_Module(self, node: cst.Module) -> None:
        scope: list[str] = []
        for child in _walk_scoped(node, scope):
            if isinstance(child, cst.ClassDef):
                qualname = ".".join(scope)
                self._class_counts[qualname] = self._class_counts.get(qualname, 0) + 1

    def _function_at(self, qualname: str, node: cst.FunctionDef) -> Any:
        """The tool function ``node`` defines: its qualified name matches, and so does its line."""
        candidates = self.functions.get(qualname, [])
        lines = {self.get_metadata(PositionProvider, node).start.line}
        if node.decorators:
            lines.add(self.get_metadata(PositionProvider, node.decorators[0]).start.line)
        found = [function for function in candidates if function.__code__.co_firstlineno in lines]
        if len(found) != 1:
            return None
        self.matched.add(id(found[0]))
        return found[0]

    def _model_at(self, qualname: str, node: cst.ClassDef) -> type | None:
        """The tool model ``node`` defines: its qualified name matches, and the name is defined once
        (or, where Python records it, on this line)."""
        candidates = self.models.get(qualname, [])
        line = self.get_metadata(PositionProvider, node).start.line
        first_lines = {line}
        if node.decorators:
            first_lines.add(self.get_metadata(PositionProvider, node.decorators[0]).start.line)
        found = [
            model
            for model in candidates
            if getattr(model, "__firstlineno__", None) in first_lines
            or (not hasattr(model, "__firstlineno__") and self._class_counts.get(qualname) == 1)
        ]
        if len(found) != 1:
            return None
        self.matched.add(id(found[0]))
        return found[0]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    # Rewriting a model's fields.

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        model = self._model_at(qualname, original)
        if model is None:
            return updated
        hints = typing.get_type_hints(model, include_extras=True)
        fields = getattr(model, "model_fields", {})
        body = [
            self._fixed_statement(statement, original_statement, qualname, hints, fields)
            for statement, original_statement in zip(updated.body.body, original.body.body, strict=True)
        ]
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def _fixed_statement(
        self,
        statement: cst.CSTNode,
        original: cst.CSTNode,
        qualname: str,
        hints: dict[str, Any],
        fields: dict[str, FieldInfo],
    ) -> cst.CSTNode:
        """A statement of a model's body with each annotated field in it made lenient."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return statement
        assert isinstance(original, cst.SimpleStatementLine)
        parts = []
        for part, original_part in zip(statement.body, original.body, strict=True):
            if isinstance(part, cst.AnnAssign) and isinstance(part.target, cst.Name):
                assert isinstance(original_part, cst.AnnAssign)
                name = part.target.value
                if name in hints and name in fields:
                    annotation, default = self.fixed(
                        part.annotation,
                        Default(part.value, original_part.value, functools.partial(fields.get, name)),
                        hints[name],
                        f"{qualname}.{name}",
                    )
                    part = part.with_changes(annotation=annotation, value=default)
            parts.append(part)
        return statement.with_changes(body=parts)

    # Rewriting a function's parameters.

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        function = self._function_at(qualname, original)
        if function is None:
            return updated
        hints = function_hints(function)

        def fix_parameters(parameters: Sequence[cst.Param], originals: Sequence[cst.Param]) -> list[cst.Param]:
            return [
                self._fixed_parameter(parameter, original_parameter, function, qualname, hints)
                for parameter, original_parameter in zip(parameters, originals, strict=True)
            ]

        parameters, originals = updated.params, original.params
        return updated.with_changes(
            params=parameters.with_changes(
                params=fix_parameters(parameters.params, originals.params),
                kwonly_params=fix_parameters(parameters.kwonly_params, originals.kwonly_params),
                posonly_params=fix_parameters(parameters.posonly_params, originals.posonly_params),
            )
        )

    def _fixed_parameter(
        self, parameter: cst.Param, original: cst.Param, function: Any, qualname: str, hints: dict[str, Any]
    ) -> cst.Param:
        name = parameter.name.value
        if parameter.annotation is None or name not in hints:
            return parameter
        annotation, default = self.fixed(
            parameter.annotation,
            Default(parameter.default, original.default, lambda: parameter_field(function, name)),
            hints[name],
            f"{qualname}.{name}",
        )
        return parameter.with_changes(annotation=annotation, default=default)

    # One annotation.

    def fixed(
        self, annotation: cst.Annotation, written: Default, hint: Any, where: str
    ) -> tuple[cst.Annotation, cst.BaseExpression | None]:
        """The annotation made lenient, and the default with the constraints moved out of it."""
        default = written.node
        lenient = lenient_annotation(hint)
        if lenient is hint or isinstance(annotation.annotation, cst.SimpleString):
            return annotation, default
        if is_lenient_as_written(hint, lenient):
            return annotation, default  # already lenient: the mapping only moves its bounds into the marker
        built = written.field_info()
        own = FieldInfo.from_annotation(hint).metadata
        before = cst.Module([]).code_for_node(annotation.annotation)
        if built is not None and list(built.metadata) != list(own):
            # The default adds constraints. Left after a lenient marker, pydantic would advertise them
            # beside it (inside an Optional's anyOf, as keywords JSON Schema does not know) and check
            # them in Python, or, before a marker, drop them; so they move into the annotation.
            moved = self.mover.moved_into_annotation(annotation.annotation, written, hint, built, own)
            if moved is None:
                self.kept.append(f"{where}: left as written: its default's constraints cannot be moved into it")
                return annotation, default
            expression, default, keywords = moved
            after = cst.Module([]).code_for_node(expression)
            self.changes.append(f"{where}: {before} -> {after} ({', '.join(keywords)} moved out of its default)")
            return annotation.with_changes(annotation=expression), default
        rewritten = self.writer.rewritten(annotation.annotation, hint, lenient)
        # None: the annotation as written, inside `Lenient[...]`, which means the same at run time.
        expression = rewritten if rewritten is not None else self.writer.subscript("Lenient", annotation.annotation)
        after = cst.Module([]).code_for_node(expression)
        if after != before:
            self.changes.append(f"{where}: {before} -> {after}")
        return annotation.with_changes(annotation=expression), default


def _walk_scoped(node: cst.CSTNode, scope: list[str]) -> Iterator[cst.CSTNode]:
    """Each node under ``node``, with ``scope`` holding the qualified name it is defined under
    (the class's own name included, for a class)."""
    for child in node.children:
        named = isinstance(child, (cst.ClassDef, cst.FunctionDef))
        if isinstance(child, (cst.ClassDef, cst.FunctionDef)):
            scope.append(child.name.value)
        yield child
        yield from _walk_scoped(child, scope)
        if named:
            scope.pop()
