"""The commands' inputs: a FIFO or a device where a file is expected, and text no output can carry,
are one clear error (exit 2) or faithful output, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jsonschema_rs")  # `repair` needs the repair extra; in dev, so CI has it

COMMAND = [sys.executable, "-m", "pydantic_lenient"]


def _run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command in its own process (a hang is a timeout, a traceback is on stderr)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    return subprocess.run(
        [*COMMAND, *arguments], capture_output=True, text=True, timeout=60, cwd=cwd, env=environment, check=False
    )


def _one_error_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize(
    ("arguments", "what"),
    [
        (["repair", "--schema", "{path}", "{{}}"], "schema"),
        (["stats", "{path}"], "stats file"),
        (["normalize", "--rules", "{path}", "--tool", "t", "{{}}"], "rules file"),
    ],
)
def test_a_fifo_or_a_device_is_refused_not_read(tmp_path: Path, arguments: list[str], what: str) -> None:
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), os.devnull, "/dev/zero"):
        if not os.path.exists(path):
            continue
        result = _run([argument.format(path=path) for argument in arguments], tmp_path)
        _one_error_line(result, "not a regular file")
        assert path in result.stderr


def test_a_lone_surrogate_in_the_arguments_is_printed_escaped(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "string"}}}), encoding="utf-8")
    result = _run(["repair", "--schema", str(schema), '{"a": "\\ud800", "b": "caf\u00e9"}'], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert '"\\ud800"' in result.stdout
    assert json.loads(result.stdout)["arguments"] == {"a": "\ud800", "b": "caf\u00e9"}


def test_arguments_on_stdin_from_a_device_are_capped(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}', encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run(
            [*COMMAND, "repair", "--schema", str(schema), "-"],
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
            check=False,
        )
    _one_error_line(result, "ARGUMENTS on stdin are longer than")
