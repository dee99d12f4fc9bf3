"""The log directory is safe to share and to fill: writes follow no symlink, readers refuse what is
not a regular file or is too large, and an audit batch is written whole or not at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient import Normalizer
from pydantic_lenient._files import write_json_atomically
from pydantic_lenient.cli.main import main
from pydantic_lenient.normalizer.stats import StatsFileError, load_stats
from pydantic_lenient.observe.auditlog import AuditLog, read_audit_log
from pydantic_lenient.observe.logdir import LogDirError
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import MAX_OUTCOMES_BYTES, load_outcomes

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, devices and rlimits are POSIX")


def _within(seconds: float, call: Callable[[], Any]) -> BaseException | None:
    """The exception ``call`` raised, failing the test if it did not return within ``seconds``."""
    raised: list[BaseException | None] = [None]

    def run() -> None:
        try:
            call()
        except BaseException as error:
            raised[0] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "it hung"
    return raised[0]


@POSIX
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_readers_refuse_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    for name in ("outcomes.json", "audit.jsonl", "normalizer_stats.json"):
        path = tmp_path / name
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        else:
            path.symlink_to("/dev/zero")
    for read, error_type in (
        (lambda: load_outcomes(tmp_path), LogDirError),
        (lambda: read_audit_log(tmp_path), LogDirError),
        (lambda: load_stats(tmp_path / "normalizer_stats.json"), StatsFileError),
    ):
        error = _within(10, read)
        assert isinstance(error, error_type), error
        assert tmp_path.name in str(error)


@POSIX
@pytest.mark.parametrize("command", ["dashboard", "suggest"])
def test_the_commands_refuse_an_outcomes_file_on_dev_zero_or_a_fifo(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "outcomes.json").symlink_to("/dev/zero")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "outcomes.json")
    html = ["--html", str(tmp_path / "page.html")] if command == "dashboard" else []
    for directory in ("zero", "fifo"):
        codes: list[int] = []
        arguments = [command, str(tmp_path / directory), *html]
        assert _within(20, lambda: codes.append(main(arguments))) is None  # noqa: B023 - called at once
        assert codes == [2]
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert "outcomes.json" in error


def test_an_outcomes_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    with (tmp_path / "outcomes.json").open("wb") as file:
        file.truncate(MAX_OUTCOMES_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(LogDirError, match="larger than"):
        load_outcomes(tmp_path)


@POSIX
def test_no_write_follows_a_symlink(tmp_path: Path) -> None:
    logs, victim = tmp_path / "logs", tmp_path / "victim.txt"
    logs.mkdir()
    victim.write_text("keep me\n", "utf-8")
    (logs / "audit.jsonl").symlink_to(victim)
    # Temporary names a writer could have predicted from its pid.
    for name in ("outcomes.json", "normalizer_stats.json"):
        (logs / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
        (logs / f"{name}.tmp").symlink_to(victim)
    recorder = OutcomeRecorder(logs, normalizer=Normalizer([]), flush_every=3600)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    assert victim.read_text("utf-8") == "keep me\n"
    assert (logs / "audit.jsonl").is_symlink()  # refused, not replaced: the recorder retries and logs it
    assert load_outcomes(logs).tools[0].ok == 1
    with pytest.raises(OSError):
        AuditLog(logs).write(["{}"])
    (logs / "outcomes.json").unlink()
    (logs / "outcomes.json").symlink_to(victim)
    write_json_atomically(logs / "outcomes.json", {})  # replaces the link, never writes through it
    assert not (logs / "outcomes.json").is_symlink()
    assert victim.read_text("utf-8") == "keep me\n"


_FULL_DISK = """
import json, resource, signal, sys
from pathlib import Path
from pydantic_lenient.observe.recorder import OutcomeRecorder
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
logs = Path(sys.argv[1])
recorder = OutcomeRecorder(logs, flush_every=3600, save_every=3600)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (1500, hard))  # the disk fills in the middle of a line
for number in range(40):
    recorder.record(f"tool{number}", "ok", 1.0)
recorder.flush()
refused = (logs / "audit.jsonl").read_bytes()
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
recorder.flush()  # the retry
recorder.close()
print(json.dumps({"while_full": refused.decode(), "after": (logs / "audit.jsonl").read_text()}))
"""


@POSIX
def test_an_audit_batch_is_written_whole_or_not_at_all_and_never_twice(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    result = json.loads(completed.stdout.splitlines()[-1])
    assert result["while_full"] == ""  # nothing of a batch the disk could not take whole
    lines = result["after"].splitlines()
    assert result["after"].endswith("\n")
    assert [json.loads(line)["tool"] for line in lines] == [f"tool{number}" for number in range(40)]
    assert len(read_audit_log(tmp_path / "logs")) == 40
