"""The codemod behind ``pydantic-lenient fix PATH``: the annotations the audit flags, rewritten in place.

The file is imported (as ``catalog`` does) to find its tools: functions, models, and the tools of
an MCP server object. Each tool parameter and model field whose annotation `lenient_annotation`
changes is rewritten in the concrete syntax tree (LibCST), so formatting and comments stay exactly
as written: ``int`` becomes ``LenientInt``, ``list[Step]`` becomes
``LenientJson[list[Lenient[Step]]]``. Where the names alone cannot write the lenient form exactly,
the annotation as written goes inside ``Lenient[...]``: ``Optional[int]`` becomes
``Lenient[Optional[int]]`` (which, like every way in, takes the string ``"null"``), and
``Annotated[int, Field(ge=1)]`` becomes ``Lenient[Annotated[int, Field(ge=1)]]`` (bounds checked in
the marker, natively). The constraints of a ``Field(...)`` default move into the annotation, the
rest of the call staying as written (``int | None = Field(default=None, ge=1)`` becomes
``Lenient[Annotated[int | None, Field(ge=1)]] = Field(default=None)``): after a lenient marker,
pydantic would advertise them as words JSON Schema does not know and check them in Python, or,
before it, drop them. The names it uses are imported from ``pydantic_lenient``, ``typing`` and
``pydantic``; a name the module binds to anything else, anywhere, is imported under an alias no code
in the module uses (``from pydantic import Field as _lenient_Field``), so a later
``from sqlmodel import Field`` cannot change what a rewritten annotation means
(`pydantic_lenient.codemod._imports`).

Only what it can identify in the source is rewritten: a function whose ``def`` is on the line its
code object names (two ``def tool`` in the branches of an ``if`` are told apart), a model whose class
is defined once under its name, and only when either was defined in this file. The file's bytes are
kept: its line endings, its declared encoding and a UTF-8 BOM. A symlink is refused unless
``follow_symlinks`` asks for it, and the file is replaced atomically.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
import stat
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import annotated_types
import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import BuiltinScope, GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider
from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

from pydantic_lenient.schema.catalog import (
    is_fastmcp_server,
    is_official_sdk_server,
    is_tool_object,
    model_from_function,
    run_sync,
)
from pydantic_lenient.schema.loading import load_target
from pydantic_lenient.types.annotations import UNION_TYPES, function_hints, split_annotated, with_metadata
from pydantic_lenient.types.family import LenientMarker, LenientScalar
from pydantic_lenient.types.json_values import AcceptJsonText
from pydantic_lenient.types.lenient_classes import ORIGINALS
from pydantic_lenient.types.mapping import lenient_annotation
from pydantic_lenient.types.null_text import NullText
from pydantic_lenient.types.rendering import ALIAS_NAMES, render_annotation

from ._imports import ImportedNames, Imports

__all__ = ("FixError", "FixResult", "fix_file", "fix_source")


class FixError(Exception):
    """A file `fix_file` will not rewrite (a symlink it was not asked to follow), in one line."""


@dataclass
class FixResult:
    """What `fix_file` did: the source before and after, one line per rewritten annotation, one
    line per tool left alone because its definition could not be identified in the source, and one
    line per parameter or field left as written because the constraints in its ``Field(...)``
    default could not be moved into its annotation."""

    path: str
    original: str
    fixed: str
    changes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.original.splitlines(keepends=True),
                self.fixed.splitlines(keepends=True),
                fromfile=f"a/{self.path.lstrip('/')}",
                tofile=f"b/{self.path.lstrip('/')}",
            )
        )


def fix_file(path: str | Path, *, write: bool = True, follow_symlinks: bool = False) -> FixResult:
    """Rewrite the tools in the file at ``path`` (written back unless ``write`` is False).

    The file is read and written as bytes in its own encoding (a coding cookie, a UTF-8 BOM) with
    its line endings, and replaced atomically. A symlink is refused unless ``follow_symlinks``, and
    then the file it points to is rewritten (the link stays a link).
    """
    location = Path(path)
    if location.is_symlink():
        if not follow_symlinks:
            raise FixError(f"{location} is a symlink: fix the file it points to, or ask to follow symlinks")
        location = location.resolve()
    if not location.is_file():
        raise FixError(f"{location} is not a regular file")
    source = location.read_bytes()
    tools = load_target(str(location))
    module = cst.parse_module(source)
    fixed_module, result = _fix_module(module, tools, filename=str(location))
    if write and result.fixed != result.original:
        _replace_atomically(location, fixed_module.bytes)
    return result


def fix_source(source: str | bytes, tools: Any, *, filename: str = "<source>") -> FixResult:
    """``source`` with the annotations of ``tools`` (functions and models defined in it) made lenient.

    With a real ``filename``, only tools defined in that file are rewritten.
    """
    return _fix_module(cst.parse_module(source), tools, filename=filename)[1]


def _fix_module(module: cst.Module, tools: Any, *, filename: str) -> tuple[cst.Module, FixResult]:
    functions: dict[str, list[Any]] = {}
    models: dict[str, list[type]] = {}
    for tool in _tool_sources(tools):
        if not _defined_in(tool, filename):
            continue
        if isinstance(tool, type):
            models.setdefault(tool.__qualname__, []).append(tool)
        else:
            functions.setdefault(tool.__qualname__, []).append(tool)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    context = CodemodContext()
    rewriter = _Rewriter(functions, models, context, Imports(wrapper))
    fixed_module = wrapper.visit(rewriter)
    if rewriter.changes:
        fixed_module = AddImportsVisitor(context).transform_module(fixed_module)
    found = [tool for group in (*functions.values(), *models.values()) for tool in group]
    skipped = sorted({tool.__qualname__ for tool in found if id(tool) not in rewriter.matched})
    result = FixResult(filename, module.code, fixed_module.code, rewriter.changes, skipped, rewriter.kept)
    return fixed_module, result


def _defined_in(tool: Any, filename: str) -> bool:
    """Whether ``tool`` was defined in ``filename`` (always, for a source with no file)."""
    if not os.path.isfile(filename):
        return True
    if isinstance(tool, type):
        defined = getattr(sys.modules.get(tool.__module__), "__file__", None)
    else:
        defined = getattr(getattr(tool, "__code__", None), "co_filename", None)
    return defined is not None and os.path.isfile(defined) and os.path.samefile(defined, filename)


def _replace_atomically(location: Path, data: bytes) -> None:
    """Write ``data`` to a new file beside ``location`` and rename it over it, keeping its mode."""
    mode = stat.S_IMODE(location.stat().st_mode)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{location.name}.", suffix=".tmp", dir=location.parent)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, location)
    except BaseException:
        os.unlink(temporary)
        raise


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
    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider)

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
        self.context = context
        self.imports = imports
        self.scope: list[str] = []
        self.changes: list[str] = []
        self.kept: list[str] = []
        self.matched: set[int] = set()
        self._class_counts: dict[str, int] = {}

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

    def _qualname(self, name: str) -> str:
        return ".".join([*self.scope, name])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        model = self._model_at(qualname, original)
        if model is None:
            return updated
        hints = typing.get_type_hints(model, include_extras=True)
        fields = getattr(model, "model_fields", {})
        body = []
        for statement, original_statement in zip(updated.body.body, original.body.body, strict=True):
            if isinstance(statement, cst.SimpleStatementLine):
                assert isinstance(original_statement, cst.SimpleStatementLine)
                parts = []
                for part, original_part in zip(statement.body, original_statement.body, strict=True):
                    if isinstance(part, cst.AnnAssign) and isinstance(part.target, cst.Name):
                        assert isinstance(original_part, cst.AnnAssign)
                        name = part.target.value
                        if name in hints and name in fields:
                            annotation, default = self._fixed(
                                part.annotation,
                                _Default(part.value, original_part.value, functools.partial(fields.get, name)),
                                hints[name],
                                f"{qualname}.{name}",
                            )
                            part = part.with_changes(annotation=annotation, value=default)
                    parts.append(part)
                statement = statement.with_changes(body=parts)
            body.append(statement)
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        qualname = ".".join(self.scope)
        self.scope.pop()
        function = self._function_at(qualname, original)
        if function is None:
            return updated
        hints = function_hints(function)

        def fix_parameter(parameter: cst.Param, original_parameter: cst.Param) -> cst.Param:
            name = parameter.name.value
            if parameter.annotation is None or name not in hints:
                return parameter
            annotation, default = self._fixed(
                parameter.annotation,
                _Default(parameter.default, original_parameter.default, lambda: _parameter_field(function, name)),
                hints[name],
                f"{qualname}.{name}",
            )
            return parameter.with_changes(annotation=annotation, default=default)

        parameters, originals = updated.params, original.params
        return updated.with_changes(
            params=parameters.with_changes(
                params=[fix_parameter(*pair) for pair in zip(parameters.params, originals.params, strict=True)],
                kwonly_params=[
                    fix_parameter(*pair) for pair in zip(parameters.kwonly_params, originals.kwonly_params, strict=True)
                ],
                posonly_params=[
                    fix_parameter(*pair)
                    for pair in zip(parameters.posonly_params, originals.posonly_params, strict=True)
                ],
            )
        )

    def _fixed(
        self, annotation: cst.Annotation, written: _Default, hint: Any, where: str
    ) -> tuple[cst.Annotation, cst.BaseExpression | None]:
        """The annotation made lenient, and the default with the constraints moved out of it."""
        default = written.node
        lenient = lenient_annotation(hint)
        if lenient is hint or isinstance(annotation.annotation, cst.SimpleString):
            return annotation, default
        if _is_lenient_as_written(hint, lenient):
            return annotation, default  # already lenient: the mapping only moves its bounds into the marker
        built = written.field_info()
        own = FieldInfo.from_annotation(hint).metadata
        before = cst.Module([]).code_for_node(annotation.annotation)
        if built is not None and list(built.metadata) != list(own):
            # The default adds constraints. Left after a lenient marker, pydantic would advertise them
            # beside it (inside an Optional's anyOf, as keywords JSON Schema does not know) and check
            # them in Python, or, before a marker, drop them; so they move into the annotation.
            moved = self._moved_into_annotation(annotation.annotation, written, hint, built, own)
            if moved is None:
                self.kept.append(f"{where}: left as written: its default's constraints cannot be moved into it")
                return annotation, default
            expression, default, keywords = moved
            after = cst.Module([]).code_for_node(expression)
            self.changes.append(f"{where}: {before} -> {after} ({', '.join(keywords)} moved out of its default)")
            return annotation.with_changes(annotation=expression), default
        rewritten = self._rewritten(annotation.annotation, hint, lenient)
        # None: the annotation as written, inside `Lenient[...]`, which means the same at run time.
        expression = rewritten if rewritten is not None else self._subscript("Lenient", annotation.annotation)
        after = cst.Module([]).code_for_node(expression)
        if after != before:
            self.changes.append(f"{where}: {before} -> {after}")
        return annotation.with_changes(annotation=expression), default

    def _moved_into_annotation(
        self, node: cst.BaseExpression, written: _Default, hint: Any, built: FieldInfo, own: list[Any]
    ) -> tuple[cst.BaseExpression, cst.BaseExpression, list[str]] | None:
        """The lenient annotation with the constraint arguments of the default ``Field(...)`` call
        inside it, the call without them, and their names; None unless the move means exactly what
        the parameter meant: the call is pydantic's ``Field``, its constraint values read only the
        module's top-level names (an annotation may be evaluated later, or elsewhere, than a
        default), and pydantic builds the same checks from the result."""
        default = written.node
        if not isinstance(default, cst.Call) or not self.imports.refers_to(default.func, "pydantic", "Field"):
            return None
        arguments = [argument for argument in default.args if _is_constraint_argument(argument)]
        if not arguments or any(argument.star for argument in default.args) or _transforms_values(hint):
            return None
        if not isinstance(written.original, cst.Call) or not all(
            self._reads_module_names(argument.value)
            for argument in written.original.args
            if _is_constraint_argument(argument)
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
        if lenient is new_hint or _is_lenient_as_written(new_hint, lenient):
            return None
        rewritten = self._rewritten(new_node, new_hint, lenient)
        if rewritten is None:
            return None
        expression = rewritten.visit(_Placeholders(self._name))
        assert isinstance(expression, cst.BaseExpression)  # renaming names keeps an expression one
        names = [argument.keyword.value for argument in arguments if argument.keyword is not None]
        return expression, _without(default, arguments), names

    def _reads_module_names(self, node: cst.BaseExpression) -> bool:
        """Whether every name ``node`` (in the source as parsed) reads is bound at the module's top
        level or is a builtin, seen from where it is."""
        for name in _read_names(node):
            scope = self.get_metadata(ScopeProvider, name, None)
            if scope is None:
                return False
            assignments = scope[name.value]
            if not assignments or any(
                not isinstance(found.scope, (GlobalScope, BuiltinScope)) for found in assignments
            ):
                return False
        return True

    def _with_constraints(
        self, node: cst.BaseExpression, hint: Any, call: cst.Call, constraints: FieldInfo
    ) -> tuple[cst.BaseExpression, Any] | None:
        """``node`` with ``call`` in an ``Annotated``, and the annotation it then means: first among
        the metadata of an ``Annotated[...]`` written in the source (where pydantic puts a default's
        constraints), else in a new ``Annotated[node, call]``."""
        element = cst.SubscriptElement(slice=cst.Index(value=call))
        base, metadata = split_annotated(hint)
        if self._annotated_parts(node) is not None and metadata:
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

    def _rewritten(self, node: cst.BaseExpression, hint: Any, lenient: Any) -> cst.BaseExpression | None:
        """`_rewrite`, or None when the lenient form holds something `render_annotation` cannot write
        as source (a validator's function): nothing is written then, so nothing is imported for it."""
        needed = list(self.context.scratch.get(AddImportsVisitor.CONTEXT_KEY, []))
        try:
            return self._rewrite(node, hint, lenient)
        except cst.ParserSyntaxError:
            self.context.scratch[AddImportsVisitor.CONTEXT_KEY] = needed
            return None

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
        if new_metadata and isinstance(new_metadata[0], LenientScalar):
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

    def _name(self, name: str, module: str = "pydantic_lenient") -> cst.Name:
        local = self.imports.local_name(module, name)
        AddImportsVisitor.add_needed_import(self.context, module, name, None if local == name else local)
        return cst.Name(local)

    def _subscript(self, name: str, inner: cst.BaseExpression) -> cst.Subscript:
        return cst.Subscript(value=self._name(name), slice=[cst.SubscriptElement(slice=cst.Index(value=inner))])

    def _rendered(self, lenient: Any) -> cst.BaseExpression:
        expression = cst.parse_expression(render_annotation(lenient)).visit(ImportedNames(self._name))
        assert isinstance(expression, cst.BaseExpression)  # renaming names keeps an expression one
        return expression


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


def _parameter_field(function: Any, name: str) -> FieldInfo | None:
    """The field pydantic builds for a parameter whose default is a ``FieldInfo`` (as the MCP SDKs
    build it), or None."""
    parameter = inspect.signature(function).parameters.get(name)
    if parameter is None or not isinstance(parameter.default, FieldInfo):
        return None
    fields = list(model_from_function(function, keep=[name]).model_fields.values())
    return fields[0] if len(fields) == 1 else None


def _is_constraint_argument(argument: cst.Arg) -> bool:
    return argument.keyword is not None and argument.keyword.value in _CONSTRAINT_KEYWORDS


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


@dataclass(frozen=True)
class _Default:
    """A parameter's or field's default: as being rewritten, as parsed (where scopes are known), and
    the field pydantic builds from it with the annotation (None when it is no ``FieldInfo``)."""

    node: cst.BaseExpression | None
    original: cst.BaseExpression | None
    field_info: Callable[[], FieldInfo | None]


def _read_names(node: cst.CSTNode) -> Iterator[cst.Name]:
    """The names an expression reads (not attribute names, not keyword argument names)."""
    if isinstance(node, cst.Name):
        yield node
    elif isinstance(node, (cst.Attribute, cst.Arg)):
        yield from _read_names(node.value)
    else:
        for child in node.children:
            yield from _read_names(child)


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
    return isinstance(marker, LenientMarker) and marker.keeps_meaning


def _holds_bounds(marker: Any) -> bool:
    return isinstance(marker, LenientScalar) and bool(marker.bound_names)


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
    if any(_holds_bounds(marker) for marker in metadata):
        return False  # a marker written by hand is kept as written
    return bool(new_metadata) and _holds_bounds(new_metadata[0]) and (new_metadata[0] not in ALIAS_NAMES)
