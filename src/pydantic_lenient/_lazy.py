"""Public names that load on first use (PEP 562), for the package root and the subpackages.

A package lists each of its names with the module that defines it; `import` of the package then
costs nothing more, and the first use of a name imports its module. The proxy relies on it: it
starts its upstream before it loads pydantic and the validators.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping

__all__ = ("exports",)


def exports(package: str, module_of: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names are ``module_of``'s keys,
    each defined in the submodule its value names."""
    module = sys.modules[package]
    namespace = vars(module)
    # A name that is also its module's name (`schema.audit`, the function, in `schema/audit.py`):
    # the import system sets the package's attribute to a submodule once it loads, which would hide
    # the function. The package keeps the public name instead, as an eager `from .audit import audit`
    # would have.
    shadowed = frozenset(name for name, defined_in in module_of.items() if name == defined_in)
    if shadowed:

        class _Package(types.ModuleType):
            def __setattr__(self, name: str, value: object) -> None:
                if name in shadowed and isinstance(value, types.ModuleType):
                    return
                super().__setattr__(name, value)

        module.__class__ = _Package

    def __getattr__(name: str) -> object:
        try:
            module = module_of[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return [*namespace, *module_of]

    return __getattr__, __dir__
