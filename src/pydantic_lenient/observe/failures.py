"""The refused fields of a call, read from its validation error: parameter, error type and value shape.

    field_failures(error, arguments, known={"limit", "query"})  # what a refused call records
    unknown_parameters(arguments, known={"limit", "query"})       # what any other call records

Each is a `FieldFailure`; the raw value is kept only as a short sample, and only when asked. An
argument name the tool does not declare is an ``unknown_parameter`` failure whether the call
succeeds or not (the SDKs may ignore it, and the call then means something else than was asked),
carrying the declared name it is `near` when there is one: the evidence for an alias rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic_core import (
    ErrorDetails,
    ValidationError,  # what pydantic exports as its own
)

from .shapes import clean_name, value_shape

__all__ = ("NORMALIZATION_CONFLICT", "FieldFailure", "field_failures", "near", "unknown_parameters")


class FieldFailure(NamedTuple):
    """One refused field of a call: its parameter path (``limit``, ``steps[].id``), the error type
    (pydantic's, ``missing``, or ``unknown_parameter``), the value's shape, and a sample only when
    samples are kept. An unknown parameter's ``near`` is the declared name it seems meant for
    (`near`), when the call did not send that one too."""

    param: str
    error_type: str
    shape: str
    sample: str | None = None
    near: str | None = None


# An alias whose two names both arrived with different values: the adapters refuse such a call
# before validation, and record it as this.
NORMALIZATION_CONFLICT = FieldFailure("(arguments)", "normalization_conflict", "two names for one parameter")

_UNKNOWN_PER_CALL = 10  # unknown names recorded from one call, at most: a client's names cannot pile up
# Last words that name one thing (``old_str`` is ``old_text``), compared in lower case.
_SAME_WORDS = (
    frozenset({"str", "string", "text", "txt"}),
    frozenset({"num", "number", "count"}),
    frozenset({"msg", "message"}),
    frozenset({"dir", "directory", "folder"}),
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# What pydantic's validate_call (FastMCP validates arguments with it) calls a model's "missing" and
# "extra_forbidden", so that both SDKs' refusals form the same patterns.
_CALL_ERROR_TYPES = {"missing_argument": "missing", "unexpected_keyword_argument": "extra_forbidden"}


def field_failures(
    error: ValidationError | Iterable[ErrorDetails],
    arguments: Mapping[str, Any] | None = None,
    *,
    known: Collection[str] = (),
    sample_chars: int = 0,
) -> tuple[FieldFailure, ...]:
    """The refused fields of a call, one per parameter and error type.

    ``error`` is pydantic's, or error details in its shape from elsewhere (a JSON Schema
    validator's: `pydantic_lenient.repair.engine.Repairer.error_details`). With ``known`` (the tool's
    parameter names), argument names outside it are reported as ``unknown_parameter`` too: the SDKs
    ignore extra arguments, but an unknown name next to a missing one is how a misnamed parameter shows.
    """
    failures: dict[tuple[str, str], FieldFailure] = {}
    details = error.errors(include_url=False, include_context=False) if isinstance(error, ValidationError) else error
    for detail in details:
        param, error_type = clean_name(_param_path(detail["loc"])), detail["type"]
        error_type = _CALL_ERROR_TYPES.get(error_type, error_type)
        if error_type == "missing":
            shape, sample = f"missing parameter `{param}`", None
        elif error_type == "extra_forbidden":
            error_type = "unknown_parameter"
            shape, sample = f"unknown parameter `{param}`", None
        else:
            value = detail["input"]
            shape, sample = value_shape(value), _sample(value, sample_chars) if sample_chars > 0 else None
        failures.setdefault((param, error_type), FieldFailure(param, error_type, shape, sample))
    if known and arguments:
        for failure in unknown_parameters(arguments, known):
            key = (failure.param, "unknown_parameter")
            # The validator's own report of the name (a tool that forbids extras) gains its near name.
            failures[key] = failure if key not in failures else failures[key]._replace(near=failure.near)
    return tuple(failures.values())


def unknown_parameters(arguments: Mapping[str, Any], known: Collection[str]) -> tuple[FieldFailure, ...]:
    """An ``unknown_parameter`` failure for each argument name outside ``known`` (the tool's
    parameter names), at most ten: names only, cleaned and cut, never a value.

    >>> unknown_parameters({"path": "a", "old_str": "x", "new_text": "y"}, {"path", "old_text", "new_text"})
    (FieldFailure(param='old_str', error_type='unknown_parameter', shape='unknown parameter `old_str`', \
sample=None, near='old_text'),)
    """
    failures: dict[str, FieldFailure] = {}
    for name in arguments:
        if name in known or not isinstance(name, str):
            continue
        param = clean_name(name)
        meant = near(name, [declared for declared in known if declared not in arguments])
        shape = f"unknown parameter `{param}`"
        failures.setdefault(param, FieldFailure(param, "unknown_parameter", shape, None, meant))
        if len(failures) >= _UNKNOWN_PER_CALL:
            break
    return tuple(failures.values())


def near(name: str, declared: Iterable[str]) -> str | None:
    """The one declared name that ``name`` seems meant for, or None (none, or more than one).

    Near means the same words in another letter case or case convention (``oldText``, ``OLD_TEXT``),
    a last word that names the same thing (``old_str`` for ``old_text``), or a plural for a singular.

    >>> near("oldText", ["old_text", "new_text"]), near("old_str", ["old_text"]), near("uid", ["uids"])
    ('old_text', 'old_text', 'uids')
    >>> near("max", ["limit"]) is None, near("Text", ["text", "TEXT"]) is None
    (True, True)
    """
    words = _words(name)
    if not words:
        return None
    found = [candidate for candidate in declared if _near_words(words, _words(candidate))]
    return clean_name(found[0]) if len(found) == 1 else None


def _words(name: str) -> tuple[str, ...]:
    return tuple(word.lower() for word in _WORD.findall(name[:200]))


def _near_words(words: tuple[str, ...], declared: tuple[str, ...]) -> bool:
    if words == declared:
        return True
    if len(words) != len(declared) or words[:-1] != declared[:-1]:
        return False
    last, other = words[-1], declared[-1]
    return last + "s" == other or other + "s" == last or any({last, other} <= same for same in _SAME_WORDS)


def _param_path(location: Sequence[int | str]) -> str:
    """A location as a parameter path without item numbers, so ``steps.3.id`` and ``steps.4.id``
    are one pattern: ``steps[].id``."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += "[]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(arguments)"


def _sample(value: Any, chars: int) -> str:
    """The first ``chars`` characters of ``value``'s text (its JSON if it is not a string), ``…`` if cut."""
    if isinstance(value, str):
        text = value[: chars + 1]
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)[: chars + 1]
        except (ValueError, TypeError, RecursionError):
            text = "<not JSON>"
    return clean_name(text if len(text) <= chars else text[:chars] + "…", chars + 1)
