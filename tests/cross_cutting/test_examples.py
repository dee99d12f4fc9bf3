"""The examples run as tests: each must do what its docstring says."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def test_walkthrough_converts_the_legacy_tools_step_by_step() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "walkthrough.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "FAIL" not in completed.stdout
    assert completed.stdout.rstrip().endswith("all steps hold")
    steps = [line for line in completed.stdout.splitlines() if line[:2] in {f"{n}." for n in range(5)}]
    assert len(steps) == 5
    if importlib.util.find_spec("libcst") is not None or os.environ.get("PYDANTIC_LENIENT_REQUIRE_SDKS"):
        assert "skipped" not in completed.stdout  # the codemod step ran
        assert "+def move_messages(uids: LenientJson[list[LenientInt]]" in completed.stdout


def test_walkthrough_fails_when_a_step_does_not_hold(tmp_path: Path) -> None:
    """The walkthrough's checks can fail: a legacy file with one tool already lenient breaks step 0."""
    (tmp_path / "walkthrough.py").write_text((EXAMPLES / "walkthrough.py").read_text())
    (tmp_path / "mail_rules.json").write_text((EXAMPLES / "mail_rules.json").read_text())
    legacy = (EXAMPLES / "legacy_tools.py").read_text()
    changed = legacy.replace("dry_run: bool = True", "dry_run: str = 'true'")
    assert changed != legacy
    (tmp_path / "legacy_tools.py").write_text(changed)
    completed = subprocess.run(
        [sys.executable, str(tmp_path / "walkthrough.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert completed.returncode == 1
    assert "FAIL the audit finds 5 fields to change" in completed.stdout
