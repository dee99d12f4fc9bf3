"""The ``normalize`` and ``stats`` commands on hostile input: one line on stderr and exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient.cli.main import main
from tests.normalizer.test_normalizer_stats import CORRUPT

ROOT = Path(__file__).resolve().parents[2]
RULES = str(ROOT / "examples" / "fs_rules.json")


def _fails_in_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("pydantic-lenient: error: ")
    assert message in lines[0]


def _rules_file(tmp_path: Path, content: bytes) -> str:
    path = tmp_path / "rules.json"
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff", "rules.json: rules are not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "rules.json: rules are nested too deeply"),
        (
            b'[{"id": "x", "tools": ["t"], "type": "type_coerce", "from": "a", "coerce_to": ["bool"]}]',
            "rules.json: rule 'x': coerce_to must be one of bool, float, int",
        ),
        (
            b'[{"id": "x", "tools": ["t"], "type": "param_alias", "from": "a", "to": "a"}]',
            "rule 'x': from and to are the same name",
        ),
    ],
    ids=["binary", "deep", "coerce_to-list", "alias-to-itself"],
)
def test_normalize_with_a_bad_rules_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    _fails_in_one_line(capsys, ["normalize", "--rules", _rules_file(tmp_path, content), "--tool", "t", "{}"], message)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "ARGUMENTS is nested too deeply"),
        ('{"a": ' + "[" * 500 + "]" * 500 + "}", "ARGUMENTS is nested deeper than 100 levels"),
        ('{"old_str": "\\ud800"}', "ARGUMENTS holds a lone surrogate (\\ud800)"),
        ('{"\\udfff": 1}', "ARGUMENTS holds a lone surrogate (\\udfff)"),
        ('{"a": 1' + "0" * 5000 + "}", "ARGUMENTS is not valid JSON"),
        ("[1]", "ARGUMENTS must be a JSON object"),
    ],
    ids=["deeper-than-the-parser", "deep", "surrogate-value", "surrogate-key", "huge-number", "not-an-object"],
)
def test_normalize_with_bad_arguments(capsys: pytest.CaptureFixture[str], arguments: str, message: str) -> None:
    _fails_in_one_line(capsys, ["normalize", "--rules", RULES, "--tool", "edit_file", arguments], message)


def test_normalize_a_result_that_cannot_be_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = _rules_file(
        tmp_path, b'[{"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": "\\ud800"}]'
    )
    _fails_in_one_line(
        capsys, ["normalize", "--rules", rules, "--tool", "t", "{}"], "the result holds a lone surrogate"
    )


def test_normalize_prints_arguments_and_applied(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["normalize", "--rules", RULES, "--tool", "edit_file", '{"old_str": "é", "force": "true"}']) == 0
    assert json.loads(capsys.readouterr().out) == {
        "arguments": {"old_text": "é", "force": True},
        "applied": [
            {"rule_id": "edit-old_str", "type": "param_alias", "param": "old_str", "from": "old_str", "to": "old_text"},
            {"rule_id": "force-bool-coerce", "type": "type_coerce", "param": "force", "from": "true", "to": True},
        ],
    }


@pytest.mark.parametrize(("content", "message"), CORRUPT, ids=lambda value: f"{value!r:.40}")
def test_stats_on_an_oddly_shaped_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "stats.json"
    path.write_text(content)
    _fails_in_one_line(capsys, ["stats", str(path)], message)


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00", b"", b"   "],
    ids=["binary", "empty", "blank"],
)
def test_stats_on_a_file_that_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    path = tmp_path / "stats.json"
    path.write_bytes(content)
    _fails_in_one_line(capsys, ["stats", str(path)], str(path))


def test_stats_on_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails_in_one_line(capsys, ["stats", str(tmp_path)], "cannot read stats file")


def test_stats_shows_a_lone_surrogate_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stats: dict[str, Any] = {
        "total_processed": 1,
        "total_normalized": 0,
        "last_updated": None,
        "by_tool": {"\ud800": {"processed": 1, "normalized": 0}},
        "by_rule": {},
        "recent_normalizations": [],
    }
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(stats))
    assert main(["stats", str(path)]) == 0
    assert any(line.split() == ["\\ud800", "1", "0"] for line in capsys.readouterr().out.splitlines())


def test_the_real_process_prints_no_traceback(tmp_path: Path) -> None:
    """The installed entry point, on a deep argument and a binary rules file."""
    rules = _rules_file(tmp_path, b"\x00\xff" * 100)
    for argv in (
        ["normalize", "--rules", RULES, "--tool", "t", "[" * 50_000],
        ["normalize", "--rules", rules, "--tool", "t", "{}"],
    ):
        completed = subprocess.run(
            [sys.executable, "-m", "pydantic_lenient", *argv], capture_output=True, text=True, timeout=120
        )
        assert completed.returncode == 2
        assert "Traceback" not in completed.stderr
        assert len(completed.stderr.splitlines()) == 1
