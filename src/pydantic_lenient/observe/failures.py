"""The refused fields of a call, read from its validation error: parameter, error type and value shape.

    field_failures(error, arguments, known={"limit", "query"})  # what a refused call records

Each is a `FieldFailure`; the raw value is kept only as a short sample, and only when asked.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .shapes import clean_name, value_shape

__all__ = ("NORMALIZATION_CONFLICT", "FieldFailure", "field_failures")


class FieldFailure(NamedTuple):
    """One refused field of a call: its parameter path (``limit``, ``steps[].id``), the error type
    (pydantic's, ``missing``, or ``unknown_parameter``), the value's shape, and a sample only when
    samples are kept."""

    param: str
    error_type: str
    shape: str
    sample: str | None = None


# An alias whose two names both arrived with different values: the adapters refuse such a call
# before validation, and record it as this.
NORMALIZATION_CONFLICT = FieldFailure("(arguments)", "normalization_conflict", "two names for one parameter")

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
        for name in arguments:
            if name not in known:
                param = clean_name(str(name))
                failures.setdefault(
                    (param, "unknown_parameter"),
                    FieldFailure(param, "unknown_parameter", f"unknown parameter `{param}`"),
                )
    return tuple(failures.values())


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
