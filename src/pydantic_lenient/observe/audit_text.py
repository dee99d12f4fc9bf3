"""An audit log line's text, written without `json.dumps`: one call, one line, as fast as it is read.

    audit_line_text(1780000000.5, "search", "ok", 1.25, ("id-rule",), "")
    # '{"ts":"2026-05-28T20:26:40.500Z","tool":"search","status":"ok","duration_ms":1.25,...}'

Each line is what ``json.dumps(entry, ensure_ascii=False, separators=(",", ":"))`` writes, byte
for byte, without building the dict and an encoder per line: strings through json's own string
encoder, numbers as their repr (as json writes a finite number); only NEL, LS and PS, which JSON
leaves raw but some readers break lines at, are written as escapes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence

from pydantic_lenient.normalizer.stats import timestamp

from .clients import Client
from .shapes import clean_name

__all__ = ("LAST_SECOND", "audit_error_text", "audit_line_text", "audit_timestamp")

LAST_SECOND = 253_402_300_800
"""10000-01-01 in Unix seconds: from it on, a time is not written in four-digit years."""

_json_text: Callable[[str], str] = json.encoder.encode_basestring
# Characters that JSON leaves raw but str.splitlines (and some JSON Lines readers) break lines at;
# they only occur inside the line's strings, where their escapes mean the same.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})
_MILLISECONDS = tuple(f".{millisecond:03d}Z" for millisecond in range(1000))


def audit_error_text(param: str, error_type: str, shape: str, sample: str | None) -> str:
    """One refused field as an item of the line's ``errors``.

    >>> audit_error_text("limit", "int_parsing", "string", None)
    '{"param":"limit","type":"int_parsing","shape":"string"}'
    """
    text = f'{{"param":{_json_text(param)},"type":{_json_text(error_type)},"shape":{_json_text(shape)}'
    return f'{text},"sample":{_json_text(sample)}}}' if sample is not None else f"{text}}}"


def audit_line_text(
    ts: float,
    tool: str,
    status: str,
    duration_ms: float,
    norms: Sequence[str],
    errors: str,
    client: Client | None = None,
) -> str:
    """A call's audit line: ``tool`` as cleaned for its counts, ``norms`` as applied (cleaned here),
    ``errors`` the `audit_error_text` items joined by commas, and the ``client`` that sent the call
    (already cleaned, `pydantic_lenient.observe.clients`) last, when it named itself.

    >>> audit_line_text(1780000000.5, "search", "ok", 1.25, ("id-rule",), "")
    '{"ts":"2026-05-28T20:26:40.500Z","tool":"search","status":"ok","duration_ms":1.25,"norms":["id-rule"],"errors":[]}'
    >>> audit_line_text(1780000000.5, "search", "ok", 1.25, (), "", Client("cursor-vscode", "1.2"))[-62:]
    '"errors":[],"client":{"name":"cursor-vscode","version":"1.2"}}'
    """
    duration_ms = round(duration_ms, 3)
    norms_text = ",".join([_json_text(clean_name(norm)) for norm in norms]) if norms else ""
    line = (
        f'{{"ts":"{audit_timestamp(ts)}","tool":{_json_text(tool)},"status":"{status}",'
        f'"duration_ms":{duration_ms!r},"norms":[{norms_text}],"errors":[{errors}]'
    )
    if client is None:
        line += "}"
    else:
        name, version = _json_text(client.name), _json_text(client.version)
        line += f',"client":{{"name":{name},"version":{version}}}}}'
    return line if line.isascii() else line.translate(_LINE_BREAKS)


def audit_timestamp(seconds: float) -> str:
    """`timestamp`, with the whole second's text kept: the microseconds rounded half to even, as
    ``datetime.fromtimestamp`` rounds them, and cut to milliseconds, as ``isoformat`` cuts them.

    >>> audit_timestamp(1780000000.0004999), audit_timestamp(1780000000.9999995)
    ('2026-05-28T20:26:40.000Z', '2026-05-28T20:26:41.000Z')
    """
    if not 0 <= seconds < LAST_SECOND - 1:
        return timestamp(seconds)
    whole = int(seconds)
    microseconds = round((seconds - whole) * 1e6)  # the subtraction is exact, as modf's is
    if microseconds >= 1_000_000:
        whole, microseconds = whole + 1, microseconds - 1_000_000
    return _second(whole) + _MILLISECONDS[microseconds // 1000]


@functools.lru_cache(maxsize=16)
def _second(whole: int) -> str:
    return timestamp(whole).removesuffix(".000Z")
