from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, settings

# pytester runs the pydantic-lenient pytest plugin in a separate test session.
pytest_plugins = ["pytester"]
# Servers the tests start as processes, not test modules: --doctest-modules would import them, and
# they need the MCP SDK or FastMCP, which the lowest pins cannot install.
collect_ignore = [
    "era_server.py",
    "gateway/stdio_server.py",
    "proxy/hostile_http.py",
    "leaky_server.py",
    "otlp_upstream.py",
    "remote_server.py",
]

# The default profile keeps a contributor's `pytest` within minutes; CI (HYPOTHESIS_PROFILE=ci) runs
# sixteen times the examples, derandomized so a failure there reproduces.
settings.register_profile("default", deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=400, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

AJV_DIR = Path(__file__).parent / "ajv"
EVERYTHING_DIR = Path(__file__).parent / "upstream" / "node_modules" / "@modelcontextprotocol" / "server-everything"

AjvRunner = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class External(NamedTuple):
    """A program pip cannot install that some tests need, through one fixture."""

    fixture: str
    # Set in CI: a test that needs the program fails without it instead of skipping.
    required_by: str
    reason: str
    is_installed: Callable[[], bool]


AJV = External(
    "ajv",
    "PYDANTIC_LENIENT_REQUIRE_AJV",
    "Ajv not installed: run `npm ci --prefix tests/ajv` (needs node)",
    lambda: shutil.which("node") is not None and (AJV_DIR / "node_modules" / "ajv").is_dir(),
)
SERVER_EVERYTHING = External(
    "everything",
    "PYDANTIC_LENIENT_REQUIRE_UPSTREAM",
    "server-everything not installed: run `npm ci --prefix tests/upstream` (needs node)",
    lambda: shutil.which("node") is not None and (EVERYTHING_DIR / "dist" / "index.js").is_file(),
)
CHROMIUM = External(
    "chromium",
    "PYDANTIC_LENIENT_REQUIRE_CHROMIUM",
    "Chromium not installed: apt-get install chromium",
    lambda: shutil.which("chromium") is not None or shutil.which("chromium-browser") is not None,
)


def require_external(external: External) -> None:
    """Skip the test without the program, or fail it when CI requires the program."""
    if not external.is_installed():
        if os.environ.get(external.required_by):
            pytest.fail(external.reason)
        pytest.skip(external.reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip at collection every test whose program is missing, so `pytest -ra` counts and names them.

    Where CI requires a program, nothing is skipped here: the fixture fails the test instead.
    """
    missing = [
        external
        for external in (AJV, SERVER_EVERYTHING, CHROMIUM)
        if not os.environ.get(external.required_by) and not external.is_installed()
    ]
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for external in missing:
            if external.fixture in fixtures:
                item.add_marker(pytest.mark.skip(reason=external.reason))


@pytest.fixture(scope="session")
def ajv() -> AjvRunner:
    """Run Ajv 8 (node) over a batch of {schema, values, draft, options} cases.

    Skipped when node or tests/ajv/node_modules is missing, unless PYDANTIC_LENIENT_REQUIRE_AJV is
    set (CI sets it), in which case the test fails instead.
    """
    require_external(AJV)
    return node_runner(AJV_DIR / "check.mjs")


def node_runner(script: Path) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Run a node ``script`` over a batch of cases: ``{"cases": [...]}`` on its stdin, its
    ``{"results": [...]}`` read from its stdout, one per case."""
    node = shutil.which("node")
    assert node is not None

    def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        completed = subprocess.run(
            [node, str(script)],
            input=json.dumps({"cases": cases}),
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        results: list[dict[str, Any]] = json.loads(completed.stdout)["results"]
        return results

    return run
