"""The codemod behind ``pydantic-lenient fix PATH``: the annotations the audit flags, rewritten in place.

The file is imported (as ``catalog`` does) to find its tools: functions, models, and the tools of
an MCP server object. Each tool parameter and model field whose annotation `lenient_annotation`
changes is rewritten in the concrete syntax tree (LibCST), so formatting, comments and the
arguments of ``Field(...)`` stay exactly as written: ``int`` becomes ``LenientInt``,
``list[Step]`` becomes ``LenientJson[list[Lenient[Step]]]``. Where the names alone cannot write the
lenient form exactly, the annotation as written goes inside ``Lenient[...]``: ``Optional[int]``
becomes ``Lenient[Optional[int]]`` (which, like every way in, takes the string ``"null"``), and
``Annotated[int, Field(ge=1)]`` becomes ``Lenient[Annotated[int, Field(ge=1)]]`` (bounds checked in
the marker, natively). The names it uses are imported from ``pydantic_lenient``.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import difflib
import inspect
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from pydantic import BaseModel

from pydantic_lenient.schema.catalog import is_fastmcp_server, is_official_sdk_server, is_tool_object, run_sync
from pydantic_lenient.schema.loading import load_target
from pydantic_lenient.types.annotations import UNION_TYPES, function_hints, split_annotated, with_metadata
from pydantic_lenient.types.booleans import _StrictBoolish
from pydantic_lenient.types.floats import _LenientFloat
from pydantic_lenient.types.integers import _LenientInt
from pydantic_lenient.types.json_values import AcceptJsonText
from pydantic_lenient.types.lenient_classes import ORIGINALS
from pydantic_lenient.types.mapping import lenient_annotation
from pydantic_lenient.types.null_text import NullText
from pydantic_lenient.types.rendering import ALIAS_NAMES, render_annotation

__all__ = ("FixResult", "fix_file", "fix_source")

# Where each name a rewrite may write comes from.
_IMPORTS = {
    "Annotated": "typing",
    "Optional": "typing",
    "Literal": "typing",
    "Any": "typing",
    "Field": "pydantic",
}
_LENIENT_NAMES = frozenset(
    {*ALIAS_NAMES.values(), "Lenient", "LenientJson", "DigitText", "ExactNumber", "FromText", "NullText"}
)


@dataclass
class FixResult:
    """What `fix_file` did: the source before and after, and one line per rewritten annotation."""

    path: str
    original: str
    fixed: str
    changes: list[str] = field(default_factory=list)

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.original.splitlines(keepends=True),
                self.fixed.splitlines(keepends=True),
                fromfile=f"a/{self.path.lstrip('/')}",
                tofile=f"b/{self.path.lstrip('/')}",
            )
        )


def fix_file(path: str | Path, *, write: bool = True) -> FixResult:
    """Rewrite the tools in the file at ``path`` (written back unless ``write`` is False)."""
    location = Path(path)
    original = location.read_text(encoding="utf-8")
    tools = load_target(str(location))
    result = fix_source(original, tools, filename=str(location))
    if write and result.fixed != original:
        location.write_text(result.fixed, encoding="utf-8")
    return result


def fix_source(source: str, tools: Any, *, filename: str = "<source>") -> FixResult:
    """``source`` with the annotations of ``tools`` (functions and models defined in it) made lenient."""
    functions: dict[str, Any] = {}
    models: dict[str, type] = {}
    for tool in _tool_sources(tools):
        if isinstance(tool, type):
            models[tool.__qualname__] = tool
        else:
            functions[tool.__qualname__] = tool
    module = cst.parse_module(source)
    context = CodemodContext()
    rewriter = _Rewriter(functions, models, context)
    fixed_module = module.visit(rewriter)
    if rewriter.changes:
        fixed_module = AddImportsVisitor(context).transform_module(fixed_module)
    return FixResult(filename, source, fixed_module.code, rewriter.changes)


def _tool_sources(tools: Any) -> Iterator[Any]:
    """The functions and model classes behind ``tools`` (anything `tool_catalog` accepts)."""
    if isinstance(tools, type) and issubclass(tools, BaseModel):
        yield tools
    elif isinstance(tools, tuple) and len(tools) == 2 and isinstance(tools[0], str):
        yield from _tool_sources(tools[1])
    elif isinstance(tools, dict):
        for tool in tools.values():
            yield from _tool_sources(tool)
    elif is_official_sdk_server(tools):
        for tool in tools._tool_manager.list_tools():
            yield inspect.unwrap(tool.fn)
    elif is_fastmcp_server(tools):
        for tool in run_sync(tools.list_tools(run_middleware=False)):
            if getattr(tool, "fn", None) is not None:
                yield inspect.unwrap(tool.fn)
    elif is_tool_object(tools):
        yield tools.input_model
    elif inspect.isfunction(tools) or inspect.ismethod(tools):
        yield inspect.unwrap(tools)
    elif isinstance(tools, (list, tuple, set)):
        for tool in tools:
            yield from _tool_sources(tool)


class _Rewriter(cst.CSTTransformer):
    def __init__(self, functions: dict[str, Any], models: dict[str, type], context: CodemodContext) -> None:
        super().__init__()
        self.functions = functions
        self.models = models
        self.context = context
        self.scope: list[str] = []
        self.changes: list[str] = []

    def _qualname(self, name: str) -> str:
        return ".".join([*self.scope, name])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        model = self.models.get(qualname)
        if model is None:
            return updated
        hints = typing.get_type_hints(model, include_extras=True)
        body = []
        for statement in updated.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                parts = []
                for part in statement.body:
                    if isinstance(part, cst.AnnAssign) and isinstance(part.target, cst.Name):
                        name = part.target.value
                        if name in hints and name in getattr(model, "model_fields", {}):
                            annotation = self._fixed(part.annotation, hints[name], f"{qualname}.{name}")
                            part = part.with_changes(annotation=annotation)
                    parts.append(part)
                statement = statement.with_changes(body=parts)
            body.append(statement)
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        function = self.functions.get(qualname)
        if function is None:
            return updated
        hints = function_hints(function)

        def fix_parameter(parameter: cst.Param) -> cst.Param:
            name = parameter.name.value
            if parameter.annotation is None or name not in hints:
                return parameter
            annotation = self._fixed(parameter.annotation, hints[name], f"{qualname}.{name}")
            return parameter.with_changes(annotation=annotation)

        parameters = updated.params
        return updated.with_changes(
            params=parameters.with_changes(
                params=[fix_parameter(p) for p in parameters.params],
                kwonly_params=[fix_parameter(p) for p in parameters.kwonly_params],
                posonly_params=[fix_parameter(p) for p in parameters.posonly_params],
            )
        )

    def _fixed(self, annotation: cst.Annotation, hint: Any, where: str) -> cst.Annotation:
        lenient = lenient_annotation(hint)
        if lenient is hint or isinstance(annotation.annotation, cst.SimpleString):
            return annotation
        if _is_lenient_as_written(hint, lenient):
            return annotation  # already lenient: the mapping only moves its bounds into the marker
        expression = self._rewrite(annotation.annotation, hint, lenient)
        before = cst.Module([]).code_for_node(annotation.annotation)
        after = cst.Module([]).code_for_node(expression)
        if after != before:
            self.changes.append(f"{where}: {before} -> {after}")
        return annotation.with_changes(annotation=expression)

    # The syntax tree and the run-time annotation are walked together; where they cannot be
    # matched up, the lenient annotation is written out as `render_annotation` gives it.
    def _rewrite(self, node: cst.BaseExpression, hint: Any, lenient: Any) -> cst.BaseExpression:
        base, metadata = split_annotated(hint)
        new_base, new_metadata = split_annotated(lenient)
        if lenient is hint or lenient == hint:
            return node
        if _only_lenient_says(metadata, new_metadata):
            return self._subscript("Lenient", node)
        if new_metadata and new_metadata[-1] == AcceptJsonText() and AcceptJsonText() not in metadata:
            inner = with_metadata(new_base, new_metadata[:-1])
            if not new_metadata[:-1] and new_base in ORIGINALS and new_base is not base:
                return self._subscript("Lenient", node)
            return self._subscript("LenientJson", self._rewrite(node, hint, inner))
        if new_metadata and isinstance(new_metadata[0], (_LenientInt, _LenientFloat, _StrictBoolish)):
            alias = ALIAS_NAMES.get(new_metadata[0])
            if alias is not None and new_metadata[1:] == metadata:
                if not metadata:
                    return self._name(alias)
                annotated = self._annotated_parts(node)
                if annotated is not None:
                    return self._with_first_element(node, self._name(alias))
            if alias is not None and len(new_metadata) == 1:
                return self._name(alias)  # a named type that carries the bounds itself
        if metadata and metadata == new_metadata and self._annotated_parts(node) is not None:
            first = self._annotated_parts(node)
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

    def _annotated_parts(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
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

    def _name(self, name: str) -> cst.Name:
        AddImportsVisitor.add_needed_import(self.context, "pydantic_lenient", name)
        return cst.Name(name)

    def _subscript(self, name: str, inner: cst.BaseExpression) -> cst.Subscript:
        return cst.Subscript(value=self._name(name), slice=[cst.SubscriptElement(slice=cst.Index(value=inner))])

    def _rendered(self, lenient: Any) -> cst.BaseExpression:
        text = render_annotation(lenient)
        for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)):
            if word in _LENIENT_NAMES:
                AddImportsVisitor.add_needed_import(self.context, "pydantic_lenient", word)
            elif word in _IMPORTS:
                AddImportsVisitor.add_needed_import(self.context, _IMPORTS[word], word)
        return cst.parse_expression(text)


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


def _is_lenient_as_written(hint: Any, lenient: Any) -> bool:
    """Whether ``hint`` already is the lenient annotation, written with its bounds after the marker."""
    return render_annotation(hint) == render_annotation(lenient)


def _only_lenient_says(metadata: tuple[Any, ...], new_metadata: tuple[Any, ...]) -> bool:
    """Whether the lenient form has a part that the names alone cannot write exactly, so that fix
    writes ``Lenient[...]`` around the annotation as it is: the `NullText` of an ``Optional`` (a
    hand-written ``Optional[LenientInt]`` refuses the string ``"null"``), or bounds the mapping moved
    into a new marker (after a hand-written ``LenientInt`` pydantic checks them in Python, ~2x slower)."""
    if any(isinstance(marker, NullText) for marker in new_metadata) and NullText() not in metadata:
        return True
    if any(isinstance(marker, (_LenientInt, _LenientFloat)) for marker in metadata):
        return False  # a marker written by hand is kept as written
    return (
        bool(new_metadata)
        and isinstance(new_metadata[0], (_LenientInt, _LenientFloat))
        and (new_metadata[0] not in ALIAS_NAMES)
    )
