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
``follow_symlinks`` asks for it, and so is a read-only file. Before the file is replaced (atomically),
the rewritten module is imported in a child process beside the original (`_check_child`): it is
written only if its tools build and take every value the original's take, with the same result.
A constraint moves out of a ``Field(...)`` default only when its value is a literal: a name may be
bound again later in the module, and an annotation may be read later than the default.

This module reads and writes the file and finds its tools; `_rewriter` walks the syntax tree to
their definitions, `_writer` writes one annotation in its lenient form, `_constraints` moves a
default's constraints into it, and `_imports` chooses the names the rewrite imports.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

import difflib
import inspect
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper
from pydantic import BaseModel

from pydantic_lenient._files import write_atomically
from pydantic_lenient.schema.catalog import (
    is_fastmcp_server,
    is_official_sdk_server,
    is_tool_object,
    run_sync,
)
from pydantic_lenient.schema.loading import load_target, run_isolated

from ._imports import Imports
from ._rewriter import Rewriter

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
    mode = stat.S_IMODE(location.stat().st_mode)
    if write and (not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(location, os.W_OK)):
        raise FixError(f"{location} is read-only: fix does not rewrite it (make it writable first)")
    source = location.read_bytes()
    tools = load_target(str(location))
    module = cst.parse_module(source)
    fixed_module, result = _fix_module(module, tools, filename=str(location))
    if write and result.fixed != result.original:
        problems = _rewritten_problems(location, fixed_module.bytes)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise FixError(f"{location}: not written, the rewrite would change what it means: {problems[0]}{more}")
        write_atomically(location, fixed_module.bytes, mode=mode)  # keeps its mode
    return result


def _rewritten_problems(location: Path, fixed: bytes) -> list[str]:
    """Why the rewritten module does not mean what ``location`` means (`_check_child`, run in a
    child as ``catalog`` runs its import), or none."""
    with tempfile.TemporaryDirectory(prefix="pydantic-lenient-fix-") as directory:
        rewritten = Path(directory, f"{location.stem}_lenient_rewritten.py")
        rewritten.write_bytes(fixed)
        result_path = Path(directory, "result.json")
        child = run_isolated("pydantic_lenient.codemod._check_child", [str(location), str(rewritten), str(result_path)])
        try:
            found: list[str] = json.loads(result_path.read_text(encoding="utf-8"))["problems"]
        except (OSError, ValueError, KeyError):
            ending = "it did not end in time" if child.returncode is None else f"exit code {child.returncode}"
            return [f"the rewritten module could not be checked ({ending})"]
    return found


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
    rewriter = Rewriter(functions, models, context, Imports(wrapper))
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
