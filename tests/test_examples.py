"""The examples run as tests: each must do what its docstring says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_replay_handles_every_mangled_call_as_expected() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "replay.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "FAIL" not in completed.stdout
    assert completed.stdout.rstrip().endswith("19 as expected, 0 not")
    assert "refused: limit: Input should be an integer or a string of ASCII digits [lenient_int]" in completed.stdout


def test_replay_fails_when_a_call_goes_the_wrong_way(tmp_path: Path) -> None:
    """The replay's own check can fail: flip one expectation and it must exit 1."""
    (tmp_path / "replay.py").write_text((EXAMPLES / "replay.py").read_text())
    tools = (EXAMPLES / "mail_tools.py").read_text()
    flipped = tools.replace('{"folder": "Dev", "limit": "abc"}, False', '{"folder": "Dev", "limit": "abc"}, True')
    assert flipped != tools
    (tmp_path / "mail_tools.py").write_text(flipped)
    completed = subprocess.run(
        [sys.executable, str(tmp_path / "replay.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 1
    assert "FAIL search" in completed.stdout
