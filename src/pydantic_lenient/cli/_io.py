"""What the commands share: reading their JSON inputs, writing their output, and the error that
reports a problem with what a command was given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = (
    "MAX_JSON_FILE_BYTES",
    "PROGRAM",
    "CommandError",
    "check_printable",
    "json_text",
    "one_line",
    "print_json",
    "read_arguments",
    "read_json_file",
    "write",
)

PROGRAM = "pydantic-lenient"


class CommandError(Exception):
    """A problem with what the command was given, reported as one line and exit code 2."""


def write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot write {output}: {error.strerror}") from None


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise CommandError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:
        raise CommandError(f"{what} is nested too deeply") from None


def read_arguments(text: str) -> dict[str, Any]:
    """A call's ARGUMENTS_JSON (or ``-``: stdin), which must be a JSON object."""
    try:
        source = sys.stdin.read(MAX_JSON_FILE_BYTES + 1) if text == "-" else text
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read ARGUMENTS from stdin: {error}") from None
    if len(source) > MAX_JSON_FILE_BYTES:  # stdin from /dev/zero, or a runaway producer
        raise CommandError(f"ARGUMENTS on stdin are longer than {MAX_JSON_FILE_BYTES:,} characters")
    call = _parse_json(source, "ARGUMENTS")
    if not isinstance(call, dict):
        raise CommandError(f"ARGUMENTS must be a JSON object, not {type(call).__name__}")
    return call


# Deeper arguments are refused: no tool takes them, and printing them back would overflow the stack.
_MAX_ARGUMENT_DEPTH = 100


def check_printable(value: Any, what: str) -> None:
    """Refuse a value nested deeper than `_MAX_ARGUMENT_DEPTH`, or holding a lone surrogate (which
    JSON text can escape, and no output encoding can carry)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > _MAX_ARGUMENT_DEPTH:
            raise CommandError(f"{what} is nested deeper than {_MAX_ARGUMENT_DEPTH} levels")
        if isinstance(item, dict):
            pending.extend((key, depth) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and not _encodable(item):
            raise CommandError(f"{what} holds a lone surrogate ({_first_surrogate(item)}), which is not text")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _first_surrogate(text: str) -> str:
    return next(f"\\u{ord(char):04x}" for char in text if "\ud800" <= char <= "\udfff")


def print_json(document: Any) -> None:
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    except (RecursionError, ValueError) as error:
        raise CommandError(f"cannot print the result as JSON: {type(error).__name__}") from None
    if not _encodable(text):
        raise CommandError(f"the result holds a lone surrogate ({_first_surrogate(text)}), which is not text")
    write(text, None)


MAX_JSON_FILE_BYTES = 64 * 1024 * 1024
"""A JSON file a command reads (``repair --schema``) larger than this is refused unread."""


def read_json_file(path: str) -> Any:
    """The JSON document in the file the user named: a regular file (a symlink to one is
    followed) of at most `MAX_JSON_FILE_BYTES`; a FIFO, a device or a directory is refused
    unread, so nothing hangs or fills memory."""
    from pydantic_lenient._files import read_regular_file

    try:
        text = read_regular_file(path, MAX_JSON_FILE_BYTES, follow_symlinks=True).decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{path} is not UTF-8 text: {error}") from None
    except ValueError as error:  # not a regular file, or too large
        raise CommandError(f"cannot read {path}: {error}") from None
    return _parse_json(text, path)


def json_text(document: Any) -> str:
    """``document`` as indented JSON text that any output can carry: non-ASCII text as it is, unless
    the document holds a lone surrogate (JSON can escape one, no encoding can write it), which is
    then escaped with the rest."""
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if not _encodable(text):
            text = json.dumps(document, indent=2, ensure_ascii=True) + "\n"
    except (RecursionError, ValueError) as error:
        raise CommandError(f"cannot print the result as JSON: {type(error).__name__}") from None
    return text


def one_line(text: str) -> str:
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())
