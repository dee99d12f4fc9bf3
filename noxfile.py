"""The test suite on the versions the README claims: the lowest pins, and the newest releases (`nox`).

`nox` runs all three sessions (CI does); each builds its own venv with pip and runs `pytest` with any
arguments given after `--`, on the fast hypothesis profile (the thorough one runs once, in CI's main
run). The MCP SDKs' lowest releases need a newer pydantic than the core's lowest (mcp 2.1.0
requires pydantic>=2.12.0), so the lowest pins are two sessions:

- `lowest`: Python 3.10 with pydantic 2.11.0, pydantic-core 2.33.0 and annotated-types 0.7.0, and
  every test dependency that installs beside them; the SDKs' tests skip, as on a core install.
- `lowest_sdks`: Python 3.10 with mcp 2.1.0, fastmcp 4.0.11 and httpx2 2.12.0, on the test modules
  that use them.
- `newest`: the newest Python with the newest release of everything.

Two more sessions, run by name, test the agent frameworks `[test]` leaves out (docs/frameworks.md):

- `frameworks`: the `frameworks` extra (LangChain's agents and MCP adapter, LlamaIndex, Google ADK,
  smolagents) beside `[test]`, on `tests/frameworks` and the adapters' doctests.
- `crewai`: CrewAI, which pins pydantic below the newest release, in a venv of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lowest", "lowest_sdks", "newest"]

LOWEST_PYTHON = "3.10"
NEWEST_PYTHON = "3.13"
LOWEST_CORE = ("pydantic==2.11.0", "pydantic-core==2.33.0", "annotated-types==0.7.0")
# The SDKs and frameworks whose releases need a newer pydantic than LOWEST_CORE.
NEEDS_NEWER_PYDANTIC = frozenset(
    {"mcp", "fastmcp", "pydantic-ai-slim", "openai-agents", "langchain-core", "google-genai", "anthropic"}
)
# The lowest releases that pass (bisected): mcp.Client takes StdioServerParameters from mcp 2.1.0; before
# 4.0.11 FastMCP wraps an optional parameter's schema in a second anyOf with null, which the styles keep.
# httpx2 for the proxy's --url: from 2.12.0 it decompresses a piece at a time (a gzip bomb stays bounded).
# pydantic as pip resolves it (mcp needs >=2.12.0).
LOWEST_SDKS = ("mcp==2.1.0", "fastmcp==4.0.11", "httpx2==2.12.0")
# The fast profile, whatever the caller's environment says; and the end-to-end trace test (Phoenix)
# runs once, in CI's main run, not again on every version.
FAST = {"HYPOTHESIS_PROFILE": "default", "PYDANTIC_LENIENT_REQUIRE_OTLP": "", "PYDANTIC_LENIENT_PHOENIX": ""}
# On the lowest pins some SDKs cannot install (the core's pydantic is too old for them, or they need
# Python 3.11): their tests skip there, even where CI requires the SDKs in its main run.
LOWEST_ENV = {**FAST, "PYDANTIC_LENIENT_REQUIRE_SDKS": ""}


def _test_requirements() -> list[str]:
    """The `[test]` extra's requirements, read from pyproject.toml."""
    project = nox.project.load_toml("pyproject.toml")["project"]
    requirements: list[str] = project["optional-dependencies"]["test"]
    return requirements


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[;\s]", requirement, maxsplit=1)[0].lower()


@nox.session(python=LOWEST_PYTHON)
def lowest(session: nox.Session) -> None:
    """Python 3.10 with the lowest pydantic, pydantic-core and annotated-types the README claims."""
    # `[all]` brings the SDKs, and `[proxy]` httpx2 (Python 3.11+): the extras that install beside the
    # lowest core, and the rest of `[test]`.
    beside_core = [r for r in _test_requirements() if _name(r) not in {*NEEDS_NEWER_PYDANTIC, "pydantic-lenient"}]
    session.install("-e", ".[testing,repair,codemod,otel]", *beside_core, *LOWEST_CORE)
    session.run("python", "-m", "pip", "freeze")
    session.run("python", "-m", "pytest", *session.posargs, env=LOWEST_ENV)


@nox.session(python=LOWEST_PYTHON)
def lowest_sdks(session: nox.Session) -> None:
    """Python 3.10 with the lowest mcp, fastmcp and httpx2 the extras claim, on the tests that use
    them (`lowest` runs the rest on Python 3.10)."""
    session.install("-e", ".[test]", *LOWEST_SDKS)
    session.run("python", "-m", "pip", "freeze")
    session.run("python", "-m", "pytest", *(session.posargs or _sdk_test_files()), env=LOWEST_ENV)


# How a test module names an SDK: `require("mcp...")` (tests/sdks.py), or an import of one.
_USES_AN_SDK = re.compile(
    r'require\("(?:mcp|fastmcp|httpx2)|^\s*(?:import|from) (?:mcp|fastmcp|httpx2)\b', re.MULTILINE
)


def _sdk_test_files() -> list[str]:
    """The test modules that use the MCP SDK, FastMCP or httpx2 (the proxy's remote transport)."""
    return sorted(
        str(path) for path in Path("tests").rglob("test_*.py") if _USES_AN_SDK.search(path.read_text(encoding="utf-8"))
    )


@nox.session(python=NEWEST_PYTHON)
def newest(session: nox.Session) -> None:
    """The newest Python with the newest release of every dependency."""
    session.install("--upgrade", "--upgrade-strategy", "eager", "-e", ".[test]")
    session.run("python", "-m", "pip", "freeze")
    session.run("python", "-m", "pytest", *session.posargs, env=FAST)


@nox.session(python="3.11")
def frameworks(session: nox.Session) -> None:
    """The agent frameworks of the `frameworks` extra, through their own schema builders and call paths."""
    # Not `[test]`: google-adk pins google-genai below the release `[test]` takes for the Gemini target.
    session.install(
        "-e", ".[testing,mcp,fastmcp,frameworks]", "pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6.100", "numpy>=1.26"
    )
    session.run("python", "-m", "pip", "freeze")
    paths = ("tests/frameworks", "src/pydantic_lenient/adapters", "src/pydantic_lenient/types/tools.py")
    session.run(
        "python", "-m", "pytest", *paths, *session.posargs, env={**FAST, "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS": "1"}
    )


@nox.session(python="3.11")
def crewai(session: nox.Session) -> None:
    """CrewAI, whose pydantic pin keeps it out of `[test]`: its tool decorator and ``run``."""
    session.install("-e", ".[testing,crewai]", "pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6.100")
    session.run("python", "-m", "pip", "freeze")
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/frameworks/test_crewai.py",
        *session.posargs,
        env={**FAST, "PYDANTIC_LENIENT_REQUIRE_CREWAI": "1"},
    )
