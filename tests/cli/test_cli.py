from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient import __version__
from pydantic_lenient.cli.main import EXIT_CODES, _parser, main

ROOT = Path(__file__).resolve().parents[2]
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
    assert "error: search.limit: Optional[int] is not lenient; use Lenient[Optional[LenientInt]]" in completed.stderr
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
        (BAD_MODULE, "", "ModuleNotFoundError: No module named 'nonexistent_module_for_the_test'"),
        (NO_TOOLS, "", "nothing tool-like found"),
        (NO_TOOLS, ":MISSING", "has no attribute 'MISSING'"),
        (NOT_TOOLS, "", "not a tool"),
        (BROKEN_TOOL, "", "NameError"),
        (SYNTAX, "", "SyntaxError"),
    ],
    ids=[
        "import-fails",
        "import-fails-says-why",
        "no-tools",
        "missing-attribute",
        "not-tools",
        "unresolvable-annotation",
        "syntax-error",
    ],
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
    from pydantic_lenient.normalizer.engine import Normalizer

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
        "reasons": [],
    }
    assert completed.stderr == "pydantic-lenient: valid after 1 repair(s)\n"
    completed = run("repair", "--schema", "examples/mail_tools.catalog.json", "--tool", "fetch_message", '{"uid": "x"}')
    assert completed.returncode == 1  # the schema takes strings there, so repair leaves it, still invalid
    output = json.loads(completed.stdout)
    assert (output["arguments"], output["repairs"], output["valid"]) == ({"uid": "x"}, [], False)
    assert [reason["path"] for reason in output["reasons"]] == ["/uid"]
    (line,) = completed.stderr.splitlines()
    assert line.startswith("pydantic-lenient: still invalid after 0 repair(s): /uid: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--schema", "examples/mail_tools.catalog.json", "{}"], "name the tool with --tool"),
        (["--schema", "examples/mail_tools.catalog.json", "--tool", "nope", "{}"], "no tool named 'nope'"),
        (["--schema", "examples/fs_rules.json", "--tool", "x", "{}"], "is a plain schema"),
        (["--schema", "missing.json", "{}"], "cannot read"),
        (["--schema", "examples/mail_tools.catalog.json", "--tool", "search", "{"], "not valid JSON"),
        (["--schema", "examples/mail_tools.catalog.json", "--tool", "search", "[1]"], "must be a JSON object"),
        (["--schema", "@schema", "{}"], "the schema cannot be used: [] is not of type"),
        (["--schema", "@pattern", '{"a": "x"}'], "is not an ECMA-262 regular expression"),
        (["--schema", "@remote", '{"a": 1}'], "nothing is fetched"),
    ],
)
def test_repair_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    files = {
        "schema": {"properties": []},
        "pattern": {"properties": {"a": {"pattern": "("}}},
        "remote": {"properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}},
    }
    for name, document in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    paths = {f"@{name}": str(tmp_path / f"{name}.json") for name in files}
    completed = run("repair", *[paths.get(arg, arg) for arg in args])
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert message in completed.stderr


def _commands() -> dict[str, argparse.ArgumentParser]:
    subparsers = next(action for action in _parser()._actions if isinstance(action, argparse._SubParsersAction))
    commands: dict[str, argparse.ArgumentParser] = subparsers.choices
    return commands


def _helps() -> dict[str, str | None]:
    subparsers = next(action for action in _parser()._actions if isinstance(action, argparse._SubParsersAction))
    return {action.dest: action.help for action in subparsers._choices_actions}


def test_version() -> None:
    completed = run("--version")
    assert completed.returncode == 0
    assert completed.stdout.strip() == f"pydantic-lenient {__version__}"


def test_help_documents_the_exit_codes() -> None:
    completed = run("--help")
    assert completed.returncode == 0
    assert EXIT_CODES == "exit codes: 0 ok, 1 a check or repair failed, 2 bad usage or input"
    assert EXIT_CODES in completed.stdout
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "0 ok, 1 a check or repair failed, 2 bad usage or input" in readme


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_explains_itself(command: str) -> None:
    """Structural: a command added later without help, description or exit codes fails here."""
    parser = _commands()[command]
    assert _helps()[command], f"{command} has no help line in `pydantic-lenient --help`"
    assert parser.description, f"{command} has no description in `pydantic-lenient {command} --help`"
    completed = run(command, "--help")
    assert completed.returncode == 0
    assert parser.description.split()[0] in completed.stdout
    assert EXIT_CODES in completed.stdout


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_reports_bad_usage_in_one_line(command: str) -> None:
    completed = run(command, "--no-such-option")
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert "--no-such-option" in completed.stderr or "required" in completed.stderr


def test_no_command_is_one_line_exit_2() -> None:
    completed = run()
    assert completed.returncode == 2
    assert completed.stderr.strip() == (
        "pydantic-lenient: error: the following arguments are required: COMMAND (see pydantic-lenient --help)"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("examples", "examples is a folder: name a Python file in it, e.g. examples/"),
        ("examples/", "is a folder"),
        ("examples/mail_rules.json", "examples/mail_rules.json is not a Python file"),
        ("pyproject.toml:TOOLS", "pyproject.toml is not a Python file"),
    ],
)
def test_a_folder_or_a_non_python_file_is_named_as_such(target: str, message: str) -> None:
    completed = run("catalog", target)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert message in completed.stderr


# Duck-typed like the official SDK's MCPServer, which is what the loader recognises.
TWO_SERVERS = """
class _Manager:
    def list_tools(self): return []

class Server:
    def __init__(self): self._tool_manager = _Manager()
    async def list_tools(self): return []

mail = Server()
files = Server()
also_mail = mail
"""


def test_several_servers_in_one_file_say_how_to_pick_one(tmp_path: Path) -> None:
    module = tmp_path / "servers.py"
    module.write_text(TWO_SERVERS)
    completed = run("catalog", str(module))
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert f"{module} defines 2 server objects (files, mail): pick one with {module}:files" in completed.stderr
    picked = run("catalog", f"{module}:mail")
    assert picked.returncode == 0, picked.stderr
    assert json.loads(picked.stdout) == {"tools": []}


def test_one_server_under_two_names_is_one_server(tmp_path: Path) -> None:
    module = tmp_path / "servers.py"
    module.write_text(TWO_SERVERS.replace("files = Server()\n", ""))
    completed = run("catalog", str(module))
    assert completed.returncode == 0, completed.stderr


def test_an_imported_module_named_like_a_server_is_not_the_target(tmp_path: Path) -> None:
    module = tmp_path / "tools_under_test.py"
    module.write_text("import json as server\n")
    completed = run("catalog", str(module))
    assert completed.returncode == 2
    assert "nothing tool-like found" in completed.stderr


@pytest.mark.parametrize("command", ["normalize", "repair"])
@pytest.mark.parametrize(("arguments", "kind"), [("[1]", "list"), ('"x"', "str"), ("null", "NoneType")])
def test_arguments_must_be_an_object(tmp_path: Path, command: str, arguments: str, kind: str) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    options = ["--tool", "t"] if command == "normalize" else ["--schema", str(schema)]
    completed = run(command, *options, arguments)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.strip() == f"pydantic-lenient: error: ARGUMENTS must be a JSON object, not {kind}"


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert _in_process(["normalize", "--tool", "t", deep]) == (
        2,
        "pydantic-lenient: error: ARGUMENTS is nested too deeply\n",
    )
    schema = tmp_path / "schema.json"
    schema.write_text(deep)
    assert _in_process(["repair", "--schema", str(schema), "{}"]) == (
        2,
        f"pydantic-lenient: error: {schema} is nested too deeply\n",
    )


def test_a_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    stats.write_bytes(b'{"total_processed": "\xff"}')
    completed = run("stats", str(stats))
    assert completed.returncode == 2
    assert f"{stats} is not UTF-8 text" in completed.stderr


def _in_process(argv: list[str]) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own exits
            code = exit_.code if isinstance(exit_.code, int) else 2
    return code, stderr.getvalue()


@given(st.text(max_size=50) | st.from_regex(r"\A[\[\]{}\"0-9a-z:, ]{0,30}\Z"))
def test_any_arguments_text_is_an_answer_or_one_line(text: str) -> None:
    for argv in (
        ["normalize", "--rules", str(EXAMPLES / "fs_rules.json"), "--tool", "edit_file", text],
        ["repair", "--schema", str(EXAMPLES / "mail_tools.catalog.json"), "--tool", "search", text],
    ):
        code, stderr = _in_process(argv)
        assert code in (0, 1, 2)
        if code == 2:
            assert len(stderr.strip().splitlines()) == 1, stderr
            assert stderr.startswith("pydantic-lenient")


def test_suggest_prints_suggestions_and_writes_the_rules_file(tmp_path: Path) -> None:
    from pydantic_lenient.normalizer.engine import Normalizer
    from pydantic_lenient.observe.failures import FieldFailure
    from pydantic_lenient.observe.recorder import OutcomeRecorder

    recorder = OutcomeRecorder(tmp_path / "logs", flush_every=3600)
    for _ in range(3):
        recorder.record(
            "edit_file",
            "refused",
            1.0,
            failures=(
                FieldFailure("old_str", "unknown_parameter", "unknown parameter `old_str`"),
                FieldFailure("old_text", "missing", "missing parameter `old_text`"),
                FieldFailure("dry_run", "bool_type", "boolean text"),
            ),
        )
    recorder.close()
    rules_file = tmp_path / "suggested.json"
    completed = run("suggest", str(tmp_path / "logs"), "--rules-out", str(rules_file))
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('rule {"id": "edit_file-old_str"')
    assert "3 calls sent `old_str`" in lines[0]
    normalizer = Normalizer.from_file(rules_file)
    assert normalizer.apply("edit_file", {"old_str": "a", "dry_run": "TRUE"}).arguments == {
        "old_text": "a",
        "dry_run": True,
    }
    quiet = run("suggest", str(tmp_path / "logs"), "--min-count", "4")
    assert (quiet.returncode, quiet.stdout) == (0, "")
    assert "no suggestions" in quiet.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["suggest", "no-such-dir"], "not a directory"),
        (["suggest", "LOGS", "--min-count", "0"], "at least 1"),
        (["suggest", "LOGS", "--min-count", "٣"], "at least 1"),
        (["dashboard", "LOGS", "--port", "70000"], "port number"),
        (["suggest", "LOGS"], "outcomes.json"),
    ],
)
def test_suggest_and_dashboard_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "outcomes.json").write_text("[1, 2", encoding="utf-8")
    completed = run(*(str(tmp_path) if arg == "LOGS" else arg for arg in args))
    assert completed.returncode == 2
    assert message in completed.stderr
    assert len([line for line in completed.stderr.splitlines() if "error" in line]) == 1


def test_proxy_url_without_httpx2_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A remote upstream needs httpx2 (the `proxy` extra); a stdio upstream does not."""
    monkeypatch.setitem(sys.modules, "httpx2", None)  # `import httpx2` raises ImportError
    monkeypatch.delitem(sys.modules, "pydantic_lenient.proxy.remote", raising=False)
    assert main(["proxy", "--url", "http://127.0.0.1:9/mcp"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "a remote upstream (--url) needs httpx2: pip install 'pydantic-lenient[proxy]'" in error
    from pydantic_lenient.proxy.stdio import serve
    from pydantic_lenient.proxy.transports import UpstreamSpec

    with pytest.raises(ImportError, match=r"needs httpx2"):
        asyncio.run(serve(UpstreamSpec(url="http://127.0.0.1:9/mcp")))


def test_the_commands_offer_every_style_and_target() -> None:
    """The parser writes the choices out (importing them would load pydantic before the proxy starts)."""
    from pydantic_lenient import STYLES, TARGETS

    cli_main = importlib.import_module("pydantic_lenient.cli.main")

    assert cli_main.STYLES == STYLES
    assert cli_main.TARGETS == TARGETS
