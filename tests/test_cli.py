from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pydantic_lenient.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pydantic_lenient", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_catalog_of_the_example_passes_the_check() -> None:
    completed = run("catalog", "examples/mail_tools.py", "--check")
    assert completed.returncode == 0, completed.stderr
    catalog = json.loads(completed.stdout)
    assert [tool["name"] for tool in catalog["tools"]] == ["search", "fetch_message", "move_messages"]
    assert completed.stderr.strip() == "0 error(s), 0 note(s)"
    assert completed.stdout == (EXAMPLES / "mail_tools.catalog.json").read_text(encoding="utf-8")


def test_check_fails_on_strict_fields_and_still_prints_the_catalog() -> None:
    completed = run("catalog", "examples/legacy_tools.py", "--check")
    assert completed.returncode == 1
    assert json.loads(completed.stdout)["tools"]
    assert "error: search.limit: Optional[int] is not lenient; use Optional[LenientInt]" in completed.stderr
    assert completed.stderr.strip().endswith("6 error(s), 1 note(s)")


@pytest.mark.parametrize(
    ("target", "style", "expected"),
    [
        ("examples.mail_tools:TOOLS", "any-of", {"anyOf"}),
        ("examples.mail_tools", "strict", {"type"}),
        ("examples/mail_tools.py:fetch_message", "type-array", {"type"}),
    ],
)
def test_targets_and_styles(target: str, style: str, expected: set[str]) -> None:
    completed = run("catalog", target, "--style", style)
    assert completed.returncode == 0, completed.stderr
    uid = json.loads(completed.stdout)["tools"][-1 if "fetch" not in target else 0]["inputSchema"]["properties"]
    assert expected <= set(next(iter(uid.values())))


def test_output_file(tmp_path: Path) -> None:
    output = tmp_path / "catalog.json"
    assert main(["catalog", str(EXAMPLES / "mail_tools.py"), "--output", str(output)]) == 0
    assert json.loads(output.read_text())["tools"][0]["name"] == "search"


BAD_MODULE = "import nonexistent_module_for_the_test\n"
NO_TOOLS = "VALUE = 1\n"
NOT_TOOLS = "TOOLS = [1, 2]\n"
BROKEN_TOOL = "def tool(x: 'Undefined') -> None: ...\nTOOLS = [tool]\n"
SYNTAX = "def (:\n"


@pytest.mark.parametrize(
    ("source", "suffix", "message"),
    [
        (BAD_MODULE, "", "cannot import"),
        (NO_TOOLS, "", "nothing tool-like found"),
        (NO_TOOLS, ":MISSING", "has no attribute 'MISSING'"),
        (NOT_TOOLS, "", "not a tool"),
        (BROKEN_TOOL, "", "NameError"),
        (SYNTAX, "", "SyntaxError"),
    ],
    ids=["import-fails", "no-tools", "missing-attribute", "not-tools", "unresolvable-annotation", "syntax-error"],
)
def test_bad_targets_are_one_line_and_exit_2(tmp_path: Path, source: str, suffix: str, message: str) -> None:
    module = tmp_path / "tools_under_test.py"
    module.write_text(source)
    completed = run("catalog", f"{module}{suffix}")
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert completed.stderr.startswith("pydantic-lenient: error: ")
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_missing_file_and_missing_module_exit_2() -> None:
    assert run("catalog", "no/such/file.py").returncode == 2
    assert run("catalog", "no_such_module_anywhere").returncode == 2


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "pydantic-lenient"
    completed = subprocess.run(
        [str(script), "catalog", "examples/mail_tools.py"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert completed.returncode == 0, completed.stderr


def test_normalize_prints_arguments_and_applied() -> None:
    completed = run(
        "normalize", "--rules", "examples/fs_rules.json", "--tool", "edit_file", '{"old_str": "a", "force": "true"}'
    )
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    assert output["arguments"] == {"old_text": "a", "force": True}
    assert [entry["rule_id"] for entry in output["applied"]] == ["edit-old_str", "force-bool-coerce"]


def test_normalize_reads_arguments_from_stdin() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pydantic_lenient",
            "normalize",
            "--rules",
            "examples/fs_rules.json",
            "--tool",
            "edit_file",
            "-",
        ],
        input='{"new_str": "b"}',
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert json.loads(completed.stdout)["arguments"] == {"new_text": "b"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tool", "t", "{not json"], "ARGUMENTS is not valid JSON"),
        (["--tool", "t", "[1]"], "ARGUMENTS must be a JSON object"),
        (["--rules", "no/such/rules.json", "--tool", "t", "{}"], "cannot read rules"),
        (
            ["--rules", "examples/fs_rules.json", "--tool", "edit_file", '{"old_str": 1, "old_text": 2}'],
            "refusing to drop either",
        ),
    ],
)
def test_normalize_bad_input_is_one_line(args: list[str], message: str) -> None:
    completed = run("normalize", *args)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert message in completed.stderr


def test_stats_prints_tables(tmp_path: Path) -> None:
    from pydantic_lenient.normalizer import Normalizer

    normalizer = Normalizer.from_file(EXAMPLES / "fs_rules.json", stats_file=tmp_path / "stats.json")
    normalizer.apply("edit_file", {"old_str": "a"})
    normalizer.apply("edit_file", {"old_text": "a"})
    normalizer.close()
    completed = run("stats", str(tmp_path / "stats.json"))
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "calls processed: 2, normalized: 1 (50.0%)"
    assert any(line.split() == ["edit_file", "2", "1"] for line in lines)
    assert any(line.split()[:3] == ["edit-old_str", "param_alias", "1"] for line in lines)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read"), ("{", "not valid JSON"), ('{"a": 1}', "not a normalizer stats file")],
)
def test_stats_bad_file_is_one_line(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "stats.json"
    if content is not None:
        path.write_text(content)
    completed = run("stats", str(path))
    assert completed.returncode == 2
    assert message in completed.stderr


def test_repair_against_a_plain_schema_and_a_catalog(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    completed = run("repair", "--schema", str(schema), '{"n": "3"}')
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    assert output == {
        "arguments": {"n": 3},
        "repairs": [{"path": "/n", "from": "3", "to": 3, "kind": "string_to_number"}],
        "valid": True,
    }
    completed = run("repair", "--schema", "examples/mail_tools.catalog.json", "--tool", "fetch_message", '{"uid": "x"}')
    assert completed.returncode == 1  # the schema takes strings there, so repair leaves it, still invalid
    assert json.loads(completed.stdout) == {"arguments": {"uid": "x"}, "repairs": [], "valid": False}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--schema", "examples/mail_tools.catalog.json", "{}"], "name the tool with --tool"),
        (["--schema", "examples/mail_tools.catalog.json", "--tool", "nope", "{}"], "no tool named 'nope'"),
        (["--schema", "examples/fs_rules.json", "--tool", "x", "{}"], "is a plain schema"),
        (["--schema", "missing.json", "{}"], "cannot read"),
        (["--schema", "examples/mail_tools.catalog.json", "--tool", "search", "{"], "not valid JSON"),
    ],
)
def test_repair_bad_input_is_one_line(args: list[str], message: str) -> None:
    completed = run("repair", *args)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert message in completed.stderr
