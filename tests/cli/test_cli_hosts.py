"""`pydantic-lenient catalog TARGET --check --host HOST,...`: each shape a named host refuses or
corrupts, with the fix (issue 33, item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pydantic_lenient.hosts import PROFILES

ROOT = Path(__file__).resolve().parents[2]

SEARCH = '''\
from typing import Optional
from pydantic_lenient import LenientInt


def search(query: str, limit: Optional[LenientInt] = None) -> str:
    """Search."""
    return query


def page(size: LenientInt) -> str:
    """A page."""
    return str(size)


TOOLS = [search, page]
'''


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("hosts") / "search_tools.py"
    path.write_text(SEARCH, encoding="utf-8")
    return str(path)


def test_a_type_array_is_flagged_for_cursor_with_the_fix(tools: str) -> None:
    completed = run("catalog", tools, "--check", "--host", "cursor", "--style", "type-array")
    assert completed.returncode == 1
    assert json.loads(completed.stdout)["tools"]  # the catalog is still printed
    assert (
        "error: page: cursor refuses a type array at properties.size (the native value: the host: Parameter 'size'"
        ' must be of type integer,string, got number); use the portable shape (style="portable")'
    ) in completed.stderr
    assert "search: cursor refuses a type array at properties.limit" in completed.stderr
    assert completed.stderr.strip().endswith("on cursor")


def test_gemini_hosts_refuse_the_tool_and_vs_code_corrupts_null(tools: str) -> None:
    completed = run("catalog", tools, "--check", "--host", "gemini-cli,vscode", "--style", "any-of")
    assert completed.returncode == 1
    stderr = completed.stderr
    # The any-of style lists on Gemini, but VS Code's Ajv (coerceTypes) turns null into 0.
    assert "gemini-cli refuses" not in stderr
    assert (
        "error: search: vscode corrupts an anyOf with a null branch at properties.limit (the null value: the model"
        " sent None, the host sent 0, the tool got 0); use the portable shape"
    ) in stderr
    type_array = run("catalog", tools, "--check", "--host", "gemini-cli", "--style", "type-array").stderr
    assert "error: search: gemini-cli refuses the tool (parameters.properties.limit: a type array" in type_array


def test_the_portable_style_leaves_only_what_no_shape_fixes(tools: str) -> None:
    completed = run("catalog", tools, "--check", "--host", "all", "--style", "portable")
    lines = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    # Cursor sends "" for the unset nullable integer (cursor/cursor#3614): no listing can change that.
    assert lines == [
        "error: search: cursor refuses a parameter left out at properties.limit (left out: the host sent '';"
        " the server: limit: Input should be an integer, or a string of ASCII digits with an optional leading"
        " '-'); the portable shape does not fix it"
    ]
    assert completed.returncode == 1
    assert completed.stderr.strip().endswith(f"1 finding(s) on {', '.join(PROFILES)}")


def test_a_tool_that_works_everywhere_passes(tmp_path: Path) -> None:
    path = tmp_path / "page_tools.py"
    path.write_text(SEARCH.replace("TOOLS = [search, page]", "TOOLS = [page]"), encoding="utf-8")
    completed = run("catalog", str(path), "--check", "--host", "all", "--style", "portable")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.strip().endswith(f"0 finding(s) on {', '.join(PROFILES)}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check", "--host", "netscape"], "--host: unknown host 'netscape'; known: all, claude-code"),
        (["--check", "--host", ","], "--host: unknown host (none)"),
        (["--host", "cursor"], "--host checks the tools on hosts: give --check with it"),
        (["--check", "--host", "cursor", "--target", "openai"], "--host checks what MCP hosts list"),
    ],
)
def test_bad_host_options_are_one_line_and_exit_2(tools: str, args: list[str], message: str) -> None:
    completed = run("catalog", tools, *args)
    assert completed.returncode == 2
    assert message in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1
