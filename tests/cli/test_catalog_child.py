"""`pydantic-lenient catalog` imports its target in a child process: whatever the target's code does
to the process, the command succeeds only when the import completed and found tools."""

from __future__ import annotations

import json
import os
import time
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


# ---- a target that leaves helper processes behind (issue 36, item 11)

HELPERS = {
    "a daemon multiprocessing.Process": (
        "import multiprocessing, os, sys, time\n"
        "def _helper(path):\n"
        "    open(path, 'w').write(str(os.getpid()))\n"
        "    time.sleep(600)\n"
        "if __name__ != '__mp_main__':\n"
        "    _process = multiprocessing.get_context('fork').Process(target=_helper, args=(PID_FILE,), daemon=True)\n"
        "    _process.start()\n"
        "    while not os.path.getsize(PID_FILE) if os.path.exists(PID_FILE) else True:\n"
        "        time.sleep(0.01)\n"
    ),
    "a subprocess.Popen(['sleep', '600'])": (
        "import subprocess\n_helper = subprocess.Popen(['sleep', '600'])\nopen(PID_FILE, 'w').write(str(_helper.pid))\n"
    ),
    "a fork that sleeps": (
        "import os, time\n"
        "_pid = os.fork()\n"
        "if _pid == 0:\n"
        "    time.sleep(600)\n"
        "    os._exit(0)\n"
        "open(PID_FILE, 'w').write(str(_pid))\n"
    ),
}


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{pid}/stat")
        if status.exists() and status.read_text().split(")")[-1].split()[0] == "Z":
            return True  # ended, waiting for its parent (this test's process, or init) to reap it
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks and process groups (POSIX)")
@pytest.mark.parametrize("helper", list(HELPERS))
def test_catalog_returns_when_the_import_is_done_and_ends_the_helpers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], helper: str
) -> None:
    pid_file = tmp_path / "helper.pid"
    path = tmp_path / "helpers.py"
    path.write_text(f"PID_FILE = {str(pid_file)!r}\n" + HELPERS[helper] + TOOL, encoding="utf-8")
    started = time.monotonic()
    assert main(["catalog", str(path)]) == 0
    assert time.monotonic() - started < 60  # the helper sleeps for 600 s holding what it inherited
    assert [tool["name"] for tool in json.loads(capsys.readouterr().out)["tools"]] == ["tool"]
    assert _gone(int(pid_file.read_text()))


def test_an_import_that_never_ends_is_ended_at_the_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slow.py"
    path.write_text("import time\ntime.sleep(600)\n" + TOOL, encoding="utf-8")
    started = time.monotonic()
    assert main(["catalog", str(path), "--check", "--timeout", "2"]) == 2
    assert time.monotonic() - started < 60
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "the import did not complete within 2 s (see --timeout)" in captured.err
    assert captured.err.count("\n") == 1
