"""Doctests over the package (``--doctest-modules`` in pyproject.toml), for pytest only.

Two additions to pytest's own doctest collection:

- The docstrings of module-level names (``LenientInt = Annotated[...]`` followed by a string, the
  form pydantic's ``types.py`` uses) run too: Python keeps no ``__doc__`` for them, so doctest
  alone would never see their examples.
- A module that needs an optional extra is not collected when that extra is missing, except
  where CI requires the SDKs (``PYDANTIC_LENIENT_REQUIRE_SDKS``), so a missing SDK fails there.

This file lives beside the package, not in it: it is not part of the wheel.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "pydantic_lenient"
PACKAGE_DIR = Path(__file__).parent / PACKAGE
# Modules that need an optional extra (paths inside the package), and the package that extra brings.
NEEDS_EXTRA = {
    "adapters/mcp.py": "mcp",
    "adapters/fastmcp.py": "fastmcp",
    "proxy/remote.py": "httpx2",
    "proxy/http_answers.py": "httpx2",
    "proxy/http_logs.py": "httpx2",
    "adapters/pydantic_ai.py": "pydantic_ai",
    "adapters/openai_agents.py": "agents",
    "adapters/langchain.py": "langchain_core",
    "gateway/app.py": "starlette",
    "gateway/event_stream.py": "starlette",
    "gateway/security.py": "starlette",
}
# Modules for a framework of the `frameworks` extra (not in `[test]`): required only where
# PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS says so (the `frameworks` nox session).
NEEDS_FRAMEWORK = {"adapters/google_adk.py": "google.adk", "adapters/llama_index.py": "llama_index.core"}


@pytest.fixture(autouse=True)
def _examples_without_postponed_annotations(doctest_namespace: dict[str, Any]) -> None:
    """Docstring examples run in their module's namespace, whose ``from __future__ import
    annotations`` would make a model defined in an example look its annotations up in the module
    instead; doctest takes future flags from the namespace, so this hides that one."""
    doctest_namespace["annotations"] = None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    place = _inside_package(collection_path) or ""
    framework = NEEDS_FRAMEWORK.get(place)
    if framework is not None:
        return None if os.environ.get("PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS") or _installed(framework) else True
    extra = NEEDS_EXTRA.get(place)
    if extra is None or os.environ.get("PYDANTIC_LENIENT_REQUIRE_SDKS"):
        return None
    return None if _installed(extra) else True


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # its parent package is missing
        return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".py" and _inside_package(file_path) is not None and file_path.name != "__main__.py":
        collector: pytest.Collector = AttributeDocstrings.from_parent(parent, path=file_path)
        return collector
    return None


def _inside_package(path: Path) -> str | None:
    """The path's place inside the package (``schema/styles.py``), or None outside it."""
    try:
        return path.resolve().relative_to(PACKAGE_DIR.resolve()).as_posix()
    except ValueError:
        return None


def _module_name(path: Path) -> str:
    parts = [PACKAGE, *Path(_inside_package(path) or path.name).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _attribute_docstrings(tree: ast.Module) -> Iterator[tuple[str, ast.Constant]]:
    """(name, docstring node) for each module-level ``NAME = ...`` followed by a string."""
    for statement, following in zip(tree.body, tree.body[1:], strict=False):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target: ast.expr = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign):
            target = statement.target
        else:
            continue
        if (
            isinstance(target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            yield target.id, following.value


class AttributeDocstrings(pytest.File):
    """The doctests in one module's attribute docstrings."""

    def collect(self) -> Iterator[pytest.Item]:
        module = importlib.import_module(_module_name(self.path))
        parser = doctest.DocTestParser()
        for name, docstring in _attribute_docstrings(ast.parse(self.path.read_text(encoding="utf-8"))):
            assert isinstance(docstring.value, str)
            # A fresh namespace: the examples import what they use, as a reader's session would.
            namespace = {"__name__": module.__name__}
            test = parser.get_doctest(
                docstring.value, namespace, f"{module.__name__}.{name}", str(self.path), docstring.lineno - 1
            )
            if test.examples:
                yield AttributeDoctest.from_parent(self, name=f"{module.__name__}.{name}", test=test)


class AttributeDoctest(pytest.Item):
    def __init__(self, *, test: doctest.DocTest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test = test

    def runtest(self) -> None:
        flags = 0
        for name in self.config.getini("doctest_optionflags"):
            flags |= doctest.OPTIONFLAGS_BY_NAME[name]
        report: list[str] = []
        results = doctest.DocTestRunner(optionflags=flags).run(self.test, out=report.append)
        if results.failed:
            raise DoctestFailed("".join(report))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, DoctestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.test.lineno or 0, f"[doctest] {self.name}"


class DoctestFailed(Exception):
    """A failed example, with doctest's report of what was expected and what came."""
