from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# pytester runs the pydantic-lenient pytest plugin in a separate test session.
pytest_plugins = ["pytester"]

settings.register_profile("default", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=400, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

AJV_DIR = Path(__file__).parent / "ajv"

AjvRunner = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@pytest.fixture(scope="session")
def ajv() -> AjvRunner:
    """Run Ajv 8 (node) over a batch of {schema, values, draft, options} cases.

    Skipped when node or tests/ajv/node_modules is missing, unless PYDANTIC_LENIENT_REQUIRE_AJV is
    set (CI sets it), in which case the test fails instead.
    """
    node = shutil.which("node")
    if node is None or not (AJV_DIR / "node_modules" / "ajv").is_dir():
        message = "Ajv not installed: run `npm ci --prefix tests/ajv` (needs node)"
        if os.environ.get("PYDANTIC_LENIENT_REQUIRE_AJV"):
            pytest.fail(message)
        pytest.skip(message)

    def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        completed = subprocess.run(
            [node, str(AJV_DIR / "check.mjs")],
            input=json.dumps({"cases": cases}),
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        results: list[dict[str, Any]] = json.loads(completed.stdout)["results"]
        return results

    return run
