"""`pydantic-lenient catalog` imports its target in a child process: whatever the target's code does
to the process, the command succeeds only when the import completed and found tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pydantic_lenient.cli.main import main

TOOL = "def tool(count: int) -> None:\n    pass\n\n\nTOOLS = [tool]\n"


@pytest.mark.parametrize(
    ("ending", "expected"),
    [
        ("import os\nos._exit(0)\n", "the import did not complete: the target's code ended the process (exit code 0)"),
        ("import os\nos._exit(3)\n", "the import did not complete: the target's code ended the process (exit code 3)"),
        ("raise SystemExit(0)\n", "cannot import"),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "(signal 9)"),
    ],
)
def test_an_interrupted_import_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ending: str, expected: str
) -> None:
    path = tmp_path / "ends.py"
    path.write_text(TOOL + ending, encoding="utf-8")
    for check in ([], ["--check"]):
        assert main(["catalog", str(path), *check]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert expected in captured.err
        assert captured.err.count("\n") == 1
        assert "Traceback" not in captured.err


def test_check_fails_when_no_tools_are_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.py"
    path.write_text("TOOLS = []\n", encoding="utf-8")
    assert main(["catalog", str(path), "--check"]) == 1
    assert "no tools found" in capsys.readouterr().err
    assert main(["catalog", str(path)]) == 0  # without --check, an empty catalog is what there is
    assert json.loads(capsys.readouterr().out) == {"tools": []}


def test_the_targets_own_output_goes_to_stderr_and_the_catalog_is_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chatty.py"
    path.write_text("print('hello from the target')\n" + TOOL, encoding="utf-8")
    assert main(["catalog", str(path), "--check"]) == 1  # `count: int` is not lenient
    captured = capsys.readouterr()
    assert [tool["name"] for tool in json.loads(captured.out)["tools"]] == ["tool"]
    assert "hello from the target" in captured.err
    assert "error: tool.count: int is not lenient" in captured.err


def test_the_help_says_the_target_is_executed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["catalog", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "its code runs as the current user" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "runs the module's code" in " ".join(capsys.readouterr().out.split())
