"""Access to the optional MCP SDKs: skipped where they are not installed, required where CI says so."""

from __future__ import annotations

import importlib
import os
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
