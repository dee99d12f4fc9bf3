"""Access to the optional MCP SDKs: skipped where they are not installed, required where CI says so."""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType

import pytest


def require(module: str) -> ModuleType:
    """Import an SDK module, or skip the test (fail it when PYDANTIC_LENIENT_REQUIRE_SDKS is set)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed: pip install -e '.[test]' (every Python dependency of the tests)"
        if os.environ.get("PYDANTIC_LENIENT_REQUIRE_SDKS"):
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)  # some test modules require an SDK at import


def require_framework(module: str, *, required_by: str = "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS") -> ModuleType:
    """Import a framework of the `frameworks` extra, or skip the test (fail it where ``required_by``
    is set: PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS in the `frameworks` nox session, and
    PYDANTIC_LENIENT_REQUIRE_CREWAI in the `crewai` one)."""
    try:
        with warnings.catch_warnings():  # crewai's import warns (ImportWarning) about its own modules
            warnings.simplefilter("ignore", ImportWarning)
            return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed: run nox -s frameworks (CrewAI: nox -s crewai)"
        if os.environ.get(required_by):
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)
