"""Every public type and function teaches by example: its docstring has a doctest.

The examples themselves run under ``--doctest-modules`` (pyproject.toml); module-level names such
as ``LenientInt = Annotated[...]`` keep their docstring in the source, which ``src/conftest.py``
collects. Constants need a docstring, not an example.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

import pydantic_lenient
from tests.sdks import require

# Public modules whose names are not all re-exported by the package, and the extra each needs.
MODULES = {
    "repair": None,
    "testing": None,
    "adapters.clients": None,
    "adapters.mcp": "mcp",
    "adapters.fastmcp": "fastmcp",
    "adapters.pydantic_ai": "pydantic_ai",
    "adapters.openai_agents": "agents",
    "adapters.langchain": "langchain_core",
}


def attribute_docstrings(path: Path) -> dict[str, str]:
    """Docstrings written under module-level assignments (``NAME = ...`` then a string)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for statement, following in zip(tree.body, tree.body[1:], strict=False):
        target = statement.targets[0] if isinstance(statement, ast.Assign) else getattr(statement, "target", None)
        value = getattr(following, "value", None)
        if isinstance(target, ast.Name) and isinstance(following, ast.Expr) and isinstance(value, ast.Constant):
            found[target.id] = str(value.value)
    return found


PACKAGE_DIR = Path(pydantic_lenient.__file__).parent
ATTRIBUTE_DOCSTRINGS = {
    name: text for path in sorted(PACKAGE_DIR.rglob("*.py")) for name, text in attribute_docstrings(path).items()
}


def documentation(module_name: str, name: str) -> str:
    value: Any = getattr(importlib.import_module(module_name), name)
    if inspect.isclass(value) or inspect.isfunction(value):
        return inspect.getdoc(value) or ""
    return ATTRIBUTE_DOCSTRINGS.get(name, "")


def public_names() -> list[tuple[str, str]]:
    names = [("pydantic_lenient", name) for name in pydantic_lenient.__all__]
    for module in MODULES:
        names += [(f"pydantic_lenient.{module}", name) for name in _module_all(module)]
    return names


def _module_all(module: str) -> tuple[str, ...]:
    try:
        return tuple(importlib.import_module(f"pydantic_lenient.{module}").__all__)
    except ImportError:
        return ("*needs its extra*",)


@pytest.mark.parametrize(("module", "name"), public_names(), ids=lambda value: value.rpartition(".")[2])
def test_every_public_name_has_an_example(module: str, name: str) -> None:
    extra = MODULES.get(module.removeprefix("pydantic_lenient."))
    if extra:
        require(extra)
    text = documentation(module, name)
    assert text.strip(), f"{module}.{name} has no docstring"
    if not name.isupper():  # constants need no example
        assert ">>> " in text, f"{module}.{name}: its docstring needs an example (a doctest)"


def test_attribute_docstrings_are_found() -> None:
    """The collector's own rule finds the docstrings of aliases, so the test above can fail."""
    docs = attribute_docstrings(PACKAGE_DIR / "types" / "integers.py")
    assert ">>> " in docs["LenientInt"]
    assert "LenientFloat" not in docs
    assert documentation("pydantic_lenient", "LenientFloat").startswith("A finite ``float``")
