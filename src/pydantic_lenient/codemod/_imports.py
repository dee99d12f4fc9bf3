"""The names ``pydantic-lenient fix`` writes, and the local name it imports each one under.

A rewritten annotation uses names from ``pydantic_lenient``, ``typing`` and ``pydantic``. Each is
imported as itself only when every binding of that name in the module, in every scope, is that
same import; otherwise under an alias no identifier in the module is spelled as
(``from pydantic import Field as _lenient_Field``), so that no other binding, now or added later,
changes what a rewritten annotation means.

Needs the ``codemod`` extra (LibCST).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from pydantic_lenient.types.rendering import ALIAS_NAMES

__all__ = ("ImportedNames", "Imports")

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


class Imports:
    """The names a rewrite may import, each under a name nothing else in the module binds.

    A name is imported as itself only when every binding of it in the module, in every scope, is
    ``from <its module> import <name>``; otherwise (another import, an assignment, a class
    attribute, a ``*`` import) under ``_lenient_<name>``, suffixed until no identifier in the
    module is spelled that way.

    >>> wrapper = MetadataWrapper(cst.parse_module("from sqlmodel import Field\\nField()\\n"))
    >>> imports = Imports(wrapper)
    >>> imports.local_name("pydantic", "Field"), imports.local_name("typing", "Annotated")
    ('_lenient_Field', 'Annotated')
    """

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._bindings: dict[str, list[Any]] = {}
        for scope in set(wrapper.resolve(ScopeProvider).values()):
            if scope is None:
                continue
            for assignment in scope.assignments:
                self._bindings.setdefault(assignment.name, []).append(getattr(assignment, "node", None))
        self._identifiers = {node.value for node in _walk_names(wrapper.module)}
        self._star_import = any(
            isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar)
            for node in _walk(wrapper.module)
        )
        self._chosen: dict[tuple[str, str], str] = {}

    def local_name(self, module: str, name: str) -> str:
        """The name ``name`` from ``module`` is written as in this module (the same on every call)."""
        key = (module, name)
        if key not in self._chosen:
            self._chosen[key] = name if self._only_imported_from(module, name) else self._fresh_alias(name)
        return self._chosen[key]

    def refers_to(self, node: cst.BaseExpression, module: str, name: str) -> bool:
        """Whether ``node`` can only mean ``name`` from ``module``: a name every binding of which
        imports it (``from pydantic import Field as PydanticField``), or ``pydantic.Field`` where
        every binding of ``pydantic`` imports that module.

        >>> wrapper = MetadataWrapper(cst.parse_module("import pydantic\\nfrom pydantic import Field as F\\n"))
        >>> imports = Imports(wrapper)
        >>> written = ("F", "pydantic.Field", "Field")
        >>> [imports.refers_to(cst.parse_expression(text), "pydantic", "Field") for text in written]
        [True, True, False]
        """
        if self._star_import:
            return False
        if isinstance(node, cst.Name):
            bindings = self._bindings.get(node.value, [])
            return bool(bindings) and all(_imports_as(binding, module, name, node.value) for binding in bindings)
        if isinstance(node, cst.Attribute) and node.attr.value == name and isinstance(node.value, cst.Name):
            bindings = self._bindings.get(node.value.value, [])
            return bool(bindings) and all(_imports_module_as(binding, module, node.value.value) for binding in bindings)
        return False

    def _only_imported_from(self, module: str, name: str) -> bool:
        if self._star_import:
            return False
        return all(_imports_itself(node, module, name) for node in self._bindings.get(name, []))

    def _fresh_alias(self, name: str) -> str:
        alias, suffix = f"_lenient_{name}", 1
        while alias in self._identifiers or alias in self._chosen.values():
            suffix += 1
            alias = f"_lenient_{name}_{suffix}"
        return alias


class ImportedNames(cst.CSTTransformer):
    """A rendered annotation with each name it imports written as the module will bind it (keyword
    names, attributes and strings are not names); ``imported(name, module)`` gives that name and
    notes the import the module then needs.

    >>> rendered = cst.parse_expression("Annotated[int, Field(ge=1)]")
    >>> imported = lambda name, module: cst.Name(f"_lenient_{name}")
    >>> cst.Module([]).code_for_node(rendered.visit(ImportedNames(imported)))
    '_lenient_Annotated[int, _lenient_Field(ge=1)]'
    """

    def __init__(self, imported: Callable[[str, str], cst.Name]) -> None:
        super().__init__()
        self._imported = imported

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value in _LENIENT_NAMES:
            return self._imported(original.value, "pydantic_lenient")
        if original.value in _IMPORTS:
            return self._imported(original.value, _IMPORTS[original.value])
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)


def _imports_itself(node: Any, module: str, name: str) -> bool:
    """Whether ``node`` is ``from module import name`` with ``name`` bound as itself."""
    if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
        return False
    if cst.Module([]).code_for_node(node.module) != module or isinstance(node.names, cst.ImportStar):
        return False
    return any(
        alias.asname is None and isinstance(alias.name, cst.Name) and alias.name.value == name for alias in node.names
    )


def _imports_as(node: Any, module: str, name: str, bound: str) -> bool:
    """Whether ``node`` is ``from module import name as bound`` (or without ``as``, when the two are one)."""
    if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
        return False
    if cst.Module([]).code_for_node(node.module) != module or isinstance(node.names, cst.ImportStar):
        return False
    return any(
        isinstance(alias.name, cst.Name) and alias.name.value == name and _bound_name(alias) == bound
        for alias in node.names
    )


def _imports_module_as(node: Any, module: str, bound: str) -> bool:
    """Whether ``node`` is ``import module`` (or ``import module as bound``) binding ``bound``."""
    if not isinstance(node, cst.Import):
        return False
    return any(
        cst.Module([]).code_for_node(alias.name) == module and _bound_name(alias) == bound for alias in node.names
    )


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return cst.Module([]).code_for_node(alias.name).split(".")[0]


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.children)


def _walk_names(node: cst.CSTNode) -> Iterator[cst.Name]:
    return (child for child in _walk(node) if isinstance(child, cst.Name))
